"""HTTP client for an Ollama server: the API calls pv_kb makes (embeddings, chat blocking and streamed).

:class:`OllamaClient` sends through :class:`~lib.ollama_transport.OllamaTransport` (session, retries,
deadlines, cancellation); every failure is raised as a subclass of ``OllamaError`` (lib/llm/errors.py)
whose ``message`` is a German sentence for the user and whose ``detail`` keeps the technical cause for
the log. Whether Ollama cut a prompt or an embedding input is judged by lib/llm/tokens.py
(``ChatResult.truncated``, ``EmbedResult.truncated``).

Every chat and embedding request names its ``origin``: :data:`KB_TEXT` for text of the knowledge base
or of the code, else the request's ``pii.Gated``; the personal-data gate checks it before anything is
sent (``lib/pii.check_request``). Pure Python (``requests`` only, no Odoo).
"""
from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

import requests

from ..pii import gate as pii
from .errors import bad_shape, cancelled, connection_dropped, error_in_body, stream_incomplete, timed_out
from .tokens import is_truncated, texts_over_context
from .transport import CancelToken, OllamaTransport, is_read_timeout

_LOGGER = logging.getLogger(__name__)   # odoo.addons.pv_kb.lib.llm.client inside Odoo: its log settings apply

#: ``origin`` of a request without user text (KB passages, probes); user text needs a ``pii.Gated``.
KB_TEXT = pii.KB_TEXT
UngatedRequest = pii.UngatedRequest


# ---------------------------------------------------------------------------
# Configuration and results
# ---------------------------------------------------------------------------

@dataclass
class OllamaConfig:
    """Connection and model settings of one Ollama server."""

    url: str = "http://localhost:11434"
    connect_timeout: float = 3.0
    read_timeout: float = 120.0
    retries: int = 2
    backoff: float = 0.5
    keep_alive: str = "30m"
    num_ctx: int = 8192
    embed_batch_size: int = 32
    headers: dict = field(default_factory=dict)   # e.g. {"Authorization": "Bearer …"} for a proxy
    api_key: str = ""            # sent as "Authorization: Bearer …" (OpenAI-compatible servers, gateways)
    structured: str = "auto"     # OpenAI-compatible only: json_schema | json_object | none | auto (lib/llm/openai_client.py)


@dataclass
class EmbedResult:
    """Vectors in input order plus cost figures of the whole call."""

    vectors: list[list[float]]
    prompt_eval_count: int
    requests: int
    duration_s: float
    truncated: list[int] = field(default_factory=list)   # inputs probably cut to the context (lib/llm/tokens.py)
    server: str = ""             # the (redacted) URL of the server that answered


@dataclass
class ChatResult:
    """Complete answer of a chat call."""

    content: str
    prompt_eval_count: int
    eval_count: int
    duration_s: float
    truncated: bool
    raw: dict = field(default_factory=dict)
    server: str = ""             # the (redacted) URL of the server that answered


@dataclass
class ChatChunk:
    """One piece of a streamed answer; the last one has ``done`` and ``result``."""

    delta: str
    done: bool
    result: ChatResult | None = None


def tag_listed(model: str, installed: list[str]) -> bool:
    """Whether ``model`` is among the ``installed`` names of /api/tags; a name without tag means ``:latest``."""
    wanted = model if ":" in model else model + ":latest"
    return any((n if ":" in n else n + ":latest") == wanted for n in installed)


def _model_info_int(info: dict, suffix: str) -> int | None:
    """A positive integer ``<architecture>.<suffix>`` (or any ``*.<suffix>``) of /api/show's model_info."""
    arch = info.get("general.architecture")
    keys = [f"{arch}.{suffix}"] if isinstance(arch, str) else []
    for key in keys + sorted(k for k in info if k.endswith("." + suffix)):
        value = info.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# ---------------------------------------------------------------------------
# Client
# ---------------------------------------------------------------------------

class OllamaClient(OllamaTransport):
    """Small synchronous client for the endpoints pv_kb needs."""

    def __init__(self, config: OllamaConfig, session: requests.Session | None = None,
                 logger: logging.Logger | None = None):
        super().__init__(config, session, logger or _LOGGER)

    # -- public API -----------------------------------------------------------

    def version(self) -> str:
        """Version string of the server (GET /api/version)."""
        data = self._json_call("GET", "/api/version")
        version = data.get("version")
        if not isinstance(version, str):
            raise bad_shape(self.shown_url, "/api/version", None, "no 'version' string", data)
        return version

    def describe(self) -> str:
        """One line for the connection test."""
        return f"Ollama {self.version()}"

    def tags(self) -> list[str]:
        """Names of the installed models (GET /api/tags), e.g. ``bge-m3:latest``."""
        data = self._json_call("GET", "/api/tags")
        models = data.get("models")
        if not isinstance(models, list):
            raise bad_shape(self.shown_url, "/api/tags", None, "no 'models' list", data)
        names = []
        for item in models:
            name = item.get("name") or item.get("model") if isinstance(item, dict) else None
            if not isinstance(name, str):
                raise bad_shape(self.shown_url, "/api/tags", None, "model without name", data)
            names.append(name)
        return names

    def has_model(self, model: str) -> bool:
        """Whether ``model`` is installed (see :func:`tag_listed`)."""
        return tag_listed(model, self.tags())

    def show(self, model: str) -> dict:
        """Model details (POST /api/show); OllamaModelMissing if not installed."""
        return self._json_call("POST", "/api/show", {"model": model}, model=model)

    def embedding_facts(self, model: str) -> tuple[int, int | None]:
        """(vector length, context window in tokens or None) of an embedding model, from one :meth:`show`.

        Read from ``model_info["<architecture>.embedding_length"]`` and ``….context_length``; when the
        server does not report the length, one short text is embedded and its vector measured.
        """
        info = self.show(model).get("model_info")
        info = info if isinstance(info, dict) else {}
        dim = _model_info_int(info, "embedding_length")
        if dim is None:
            dim = len(self.embed(model, ["Dimension"], batch_size=1, origin=KB_TEXT).vectors[0])
        return dim, _model_info_int(info, "context_length")

    def embedding_dim(self, model: str) -> int:
        """Vector length of an embedding model (see :meth:`embedding_facts`)."""
        return self.embedding_facts(model)[0]

    def embed(self, model: str, texts: list[str], batch_size: int | None = None,
              context_tokens: int | None = None, deadline: float | None = None, *, origin) -> EmbedResult:
        """Embed ``texts`` in batches of ``batch_size`` (POST /api/embed).

        Returns the vectors in input order. Raises OllamaBadResponse when the
        server returns a different number of vectors than inputs or vectors of
        different lengths. With the model's ``context_tokens`` the inputs it
        probably cut are listed in ``truncated`` and logged (module docstring). ``deadline``
        (``time.monotonic()``) bounds every request, retries included.
        ``origin``: :data:`KB_TEXT` or the request's ``pii.Gated`` (else UngatedRequest, nothing sent).
        """
        pii.check_request(origin, list(texts), embedding=True)
        size = batch_size or self.config.embed_batch_size
        if size < 1:
            raise ValueError("batch_size must be >= 1")
        started = time.monotonic()
        vectors: list[list[float]] = []
        truncated: list[int] = []
        tokens = 0
        calls = 0
        dim: int | None = None
        for start in range(0, len(texts), size):
            batch = list(texts[start:start + size])
            payload = {
                "model": model,
                "input": batch,
                "keep_alive": self.config.keep_alive,
                "truncate": True,
                "options": {"num_ctx": self.config.num_ctx},
            }
            data = self._json_call("POST", "/api/embed", payload, model=model, deadline=deadline)
            calls += 1
            batch_vectors = self._check_embeddings(data, len(batch), model)
            for vec in batch_vectors:
                if dim is None:
                    dim = len(vec)
                elif len(vec) != dim:
                    raise bad_shape(self.shown_url, "/api/embed", model, f"vector length {len(vec)} != {dim}", None)
            vectors.extend(batch_vectors)
            batch_tokens = _as_int(data.get("prompt_eval_count"))
            tokens += batch_tokens
            truncated.extend(start + i for i in texts_over_context(batch, batch_tokens, context_tokens))
        if truncated:
            # INFO: the result carries the indices, the caller words the warning (e.g. once per cron run)
            self.logger.info("Embedding model %s at %s: %d of %d texts reached its context of %d tokens and "
                             "were probably cut (server evaluated %d tokens)", model, self.shown_url,
                             len(truncated), len(texts), context_tokens, tokens)
        return EmbedResult(vectors, tokens, calls, time.monotonic() - started, truncated, server=self.shown_url)

    def chat(self, model: str, messages: list[dict], *, origin, options: dict | None = None,
             num_ctx: int | None = None, expected_prompt_tokens: int | None = None,
             response_format: dict | str | None = None, deadline: float | None = None) -> ChatResult:
        """One complete answer (POST /api/chat, ``stream: false``, no thinking); ``response_format`` is sent
        as Ollama's ``format`` (a JSON schema, or "json"); ``deadline`` (``time.monotonic()``) caps the read
        timeout to what is left of it."""
        started = time.monotonic()
        payload, ctx = self._chat_payload(model, messages, origin, options, num_ctx, stream=False,
                                          response_format=response_format)
        read_timeout = None
        if deadline is not None:
            if deadline <= started:
                raise timed_out(self.shown_url, "/api/chat", model, 0, "deadline passed before the request")
            read_timeout = max(0.05, min(self.config.read_timeout, deadline - started))
        data = self._json_call("POST", "/api/chat", payload, model=model, read_timeout=read_timeout,
                               deadline=deadline)
        if "error" in data:
            raise error_in_body(self.shown_url, "/api/chat", model, data["error"])
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise bad_shape(self.shown_url, "/api/chat", model, "no message.content", data)
        return self._chat_result(model, content, data, ctx, expected_prompt_tokens, started)

    def chat_stream(self, model: str, messages: list[dict], *, origin, options: dict | None = None,
                    num_ctx: int | None = None, expected_prompt_tokens: int | None = None,
                    deadline: float | None = None, response_format: dict | str | None = None,
                    cancel: CancelToken | None = None) -> Iterator[ChatChunk]:
        """Stream an answer (POST /api/chat, ``stream: true``) as ChatChunks.

        ``deadline`` is a ``time.monotonic()`` value; once it has passed the
        response is closed and OllamaTimeout raised. The last chunk has
        ``done=True`` and the complete :class:`ChatResult`. As with any
        generator, the request is sent when the first chunk is requested, so
        connection and model errors surface there. ``cancel`` (a :class:`CancelToken`) ends the request
        from another thread with :class:`OllamaCancelled`.
        """
        started = time.monotonic()
        if cancel is not None and cancel.cancelled:
            raise cancelled(self.shown_url, model)
        payload, ctx = self._chat_payload(model, messages, origin, options, num_ctx, stream=True,
                                          response_format=response_format)
        read_timeout = self.config.read_timeout
        if deadline is not None:
            read_timeout = max(0.05, min(read_timeout, deadline - started))
        resp = self._send("POST", "/api/chat", payload, model=model, stream=True,
                          read_timeout=read_timeout, deadline=deadline)
        if cancel is not None:
            cancel.attach(resp)
        parts: list[str] = []
        try:
            lines = resp.iter_lines()
            while True:
                if cancel is not None and cancel.cancelled:
                    raise cancelled(self.shown_url, model)
                if deadline is not None and time.monotonic() > deadline:
                    raise timed_out(self.shown_url, "/api/chat", model, read_timeout, "deadline passed")
                try:
                    line = next(lines)
                except StopIteration:
                    break
                except (requests.exceptions.ConnectionError,
                        requests.exceptions.ChunkedEncodingError) as exc:
                    if cancel is not None and cancel.cancelled:
                        raise cancelled(self.shown_url, model) from exc
                    if is_read_timeout(exc):
                        raise timed_out(self.shown_url, "/api/chat", model, read_timeout, repr(exc)) from exc
                    raise connection_dropped(self.shown_url, model, repr(exc)) from exc
                if not line or not line.strip():
                    continue
                if cancel is not None and cancel.cancelled:
                    raise cancelled(self.shown_url, model)
                data = self._parse_line(line, model)
                if "error" in data:
                    raise error_in_body(self.shown_url, "/api/chat", model, data["error"])
                message = data.get("message") or {}
                delta = message.get("content", "") if isinstance(message, dict) else ""
                if not isinstance(delta, str):
                    raise bad_shape(self.shown_url, "/api/chat", model, "message.content is not text", data)
                parts.append(delta)
                if data.get("done"):
                    result = self._chat_result(model, "".join(parts), data, ctx,
                                               expected_prompt_tokens, started)
                    yield ChatChunk(delta, True, result)
                    return
                yield ChatChunk(delta, False, None)
            if cancel is not None and cancel.cancelled:
                raise cancelled(self.shown_url, model)
            raise stream_incomplete(self.shown_url, model)
        finally:
            if cancel is not None:
                cancel.detach(resp)
            resp.close()

    # -- request bodies and answers ---------------------------------------------

    def _chat_payload(self, model: str, messages: list[dict], origin, options: dict | None,
                      num_ctx: int | None, *, stream: bool,
                      response_format: dict | str | None = None) -> tuple[dict, int]:
        # the personal-data gate's mark (lib/pii/gate.py): user text only as the gate passed it
        pii.check_request(origin, [m.get("content") for m in messages], embedding=False)
        merged = dict(options or {})
        ctx = int(num_ctx or merged.get("num_ctx") or self.config.num_ctx)
        merged["num_ctx"] = ctx
        payload = {
            "model": model,
            "messages": messages,
            "stream": stream,
            "think": False,
            "keep_alive": self.config.keep_alive,
            "options": merged,
        }
        if response_format:
            payload["format"] = response_format
        return payload, ctx

    def _chat_result(self, model: str, content: str, data: dict, num_ctx: int,
                     expected: int | None, started: float) -> ChatResult:
        prompt_tokens = _as_int(data.get("prompt_eval_count"))
        truncated = is_truncated(prompt_tokens, expected, num_ctx)
        if truncated:
            self.logger.warning(
                "Prompt for model %s at %s was probably truncated: server evaluated %d "
                "prompt tokens, about %d expected, num_ctx %d", model, self.shown_url,
                prompt_tokens, expected, num_ctx)
        return ChatResult(content=content, prompt_eval_count=prompt_tokens,
                          eval_count=_as_int(data.get("eval_count")),
                          duration_s=time.monotonic() - started,
                          truncated=truncated, raw=data, server=self.shown_url)

    def _check_embeddings(self, data: dict, expected: int, model: str) -> list[list[float]]:
        vectors = data.get("embeddings")
        if not isinstance(vectors, list):
            raise bad_shape(self.shown_url, "/api/embed", model, "no 'embeddings' list", data)
        if len(vectors) != expected:
            raise bad_shape(self.shown_url, "/api/embed", model, f"{len(vectors)} vectors for {expected} inputs",
                            None)
        checked = []
        for vec in vectors:
            if (not isinstance(vec, list) or not vec
                    or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                               for x in vec)):
                raise bad_shape(self.shown_url, "/api/embed", model, "vector is not a list of numbers", None)
            if not all(math.isfinite(x) for x in vec):
                raise bad_shape(self.shown_url, "/api/embed", model, "vector holds NaN or infinity", None)
            checked.append([float(x) for x in vec])
        return checked

    def _parse_line(self, line: bytes | str, model: str) -> dict:
        try:
            text = line.decode("utf-8") if isinstance(line, bytes) else line
            data = json.loads(text)
        except (UnicodeDecodeError, ValueError) as exc:
            raise bad_shape(self.shown_url, "/api/chat", model, f"stream line is not JSON: {line[:200]!r}",
                            None) from exc
        if not isinstance(data, dict):
            raise bad_shape(self.shown_url, "/api/chat", model, "stream line is not an object", data)
        return data

    # -- error construction ---------------------------------------------------
