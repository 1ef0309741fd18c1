"""HTTP client for an Ollama server: embeddings, chat (blocking and streamed).

Pure Python (``requests`` only, no Odoo). Every failure is raised as a subclass
of :class:`OllamaError` whose ``message`` is a German sentence for the user and
whose ``detail`` keeps the technical cause for the log.

Retries: connection errors and HTTP 5xx are retried ``config.retries`` times
with exponential backoff (``backoff``, ``2 * backoff``, ...). Read timeouts are
not retried (a server that is busy for ``read_timeout`` seconds would only make
the caller wait longer), and neither are 4xx answers (the request is wrong, a
repeat would fail the same way).

Truncation heuristic (see :func:`is_truncated`): Ollama silently cuts a prompt
that does not fit into ``num_ctx`` and only reports how many prompt tokens it
evaluated (``prompt_eval_count``). The caller passes its own estimate
(``expected_prompt_tokens``, e.g. from :func:`estimate_tokens`); when that
estimate is close to or above the window (>= 90 % of ``num_ctx``) and the server
evaluated clearly fewer tokens (< 80 % of the estimate), the prompt most likely
did not fit and :class:`ChatResult` carries ``truncated=True``. Known limit:
Ollama does not count prompt tokens served from its KV cache, so a repeated
long prompt can also look "short"; the 90 % gate keeps this to prompts that are
near the window anyway, where a warning is worth having.

Embeddings (see :func:`texts_over_context`): ``/api/embed`` cuts each input to
the model's context (``truncate: true``) and reports one ``prompt_eval_count``
for the whole batch. That count, spread over the batch's texts by length, gives
each text's size in the model's own tokens; a text at or above the model's
context length (``<arch>.context_length`` of ``/api/show``) was probably cut.
The indices are in :attr:`EmbedResult.truncated` (also logged at INFO).
"""
from __future__ import annotations

import json
import logging
import math
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterator
from urllib.parse import urlsplit, urlunsplit

import requests

from . import pii

_LOGGER = logging.getLogger(__name__)   # odoo.addons.pv_kb.lib.ollama inside Odoo: its log settings apply

#: German text averages about 3.5 characters per token for the tokenizers of
#: current open models (long compounds and umlauts cost more than English).
CHARS_PER_TOKEN = 3.5

#: Truncation gates, see the module docstring.
TRUNCATION_WINDOW_SHARE = 0.9
TRUNCATION_EVAL_SHARE = 0.8


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

#: ``origin`` of a request without user text (KB passages, probes); user text needs a ``pii.Gated``.
KB_TEXT = pii.KB_TEXT
UngatedRequest = pii.UngatedRequest

class OllamaError(Exception):
    """Base error: ``message`` is German for the user, ``detail`` technical."""

    def __init__(self, message: str, detail: str = "", *, url: str | None = None,
                 model: str | None = None, status: int | None = None):
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.url = url
        self.model = model
        self.status = status

    def __str__(self) -> str:
        return self.message


class OllamaUnreachable(OllamaError):
    """The server could not be reached (refused, DNS, connection dropped)."""


class OllamaTimeout(OllamaError):
    """The server did not answer within the read timeout or the deadline."""


class OllamaModelMissing(OllamaError):
    """The requested model is not installed on the server (HTTP 404)."""


class OllamaBadResponse(OllamaError):
    """Malformed JSON, unexpected shape, a 4xx answer or 5xx after retries."""


class OllamaCancelled(OllamaError):
    """The caller cancelled the request (the user pressed Stop or left)."""


class CancelToken:
    """Cancels a streamed request from another thread, within the time a socket shutdown takes.

    ``cancel()`` marks the token and shuts the socket of every response attached to it, so a read that
    is blocked waiting for the model's next token returns at once; the streaming loop then raises
    :class:`OllamaCancelled` and closes the response (Ollama stops generating when its client is gone).
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._responses: list = []

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        with self._lock:
            self._event.set()
            responses = list(self._responses)
        for resp in responses:
            _shutdown(resp)

    def attach(self, resp) -> None:
        with self._lock:
            self._responses.append(resp)
            cancelled = self._event.is_set()
        if cancelled:
            _shutdown(resp)

    def detach(self, resp) -> None:
        with self._lock:
            if resp in self._responses:
                self._responses.remove(resp)


def _shutdown(resp) -> None:
    """Shut the socket under a streamed response (a blocked read in another thread returns)."""
    conn = getattr(getattr(resp, "raw", None), "connection", None)
    sock = getattr(conn, "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


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


@dataclass
class EmbedResult:
    """Vectors in input order plus cost figures of the whole call."""

    vectors: list[list[float]]
    prompt_eval_count: int
    requests: int
    duration_s: float
    truncated: list[int] = field(default_factory=list)   # inputs probably cut to the context (see above)


@dataclass
class ChatResult:
    """Complete answer of a chat call."""

    content: str
    prompt_eval_count: int
    eval_count: int
    duration_s: float
    truncated: bool
    raw: dict = field(default_factory=dict)


@dataclass
class ChatChunk:
    """One piece of a streamed answer; the last one has ``done`` and ``result``."""

    delta: str
    done: bool
    result: ChatResult | None = None


# ---------------------------------------------------------------------------
# Pure helpers
# ---------------------------------------------------------------------------

def estimate_tokens(text: str) -> int:
    """Rough token count of ``text``: characters / 3.5, rounded up.

    Good enough for German prose to size a prompt against ``num_ctx``; it is
    an estimate, not the model's tokenizer.
    """
    if not text:
        return 0
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def is_truncated(prompt_eval_count: int, expected_prompt_tokens: int | None,
                 num_ctx: int) -> bool:
    """True when the server evaluated clearly fewer tokens than a prompt that
    was about as large as the context window (see module docstring)."""
    if not expected_prompt_tokens or num_ctx <= 0:
        return False
    if expected_prompt_tokens < TRUNCATION_WINDOW_SHARE * num_ctx:
        return False
    return prompt_eval_count < TRUNCATION_EVAL_SHARE * expected_prompt_tokens


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


def texts_over_context(texts: list[str], prompt_eval_count: int, context_tokens: int | None) -> list[int]:
    """Indices of ``texts`` that probably reached the model's context and were cut.

    The batch's ``prompt_eval_count`` is spread over its texts by length; a text
    whose share is at least ``context_tokens`` counts (a cut text was evaluated
    with exactly the context, so the share of a batch of one equals it).
    """
    total_chars = sum(len(t) for t in texts)
    if not context_tokens or context_tokens <= 0 or prompt_eval_count <= 0 or not total_chars:
        return []
    per_char = prompt_eval_count / total_chars
    return [i for i, text in enumerate(texts) if len(text) * per_char >= context_tokens]


def _is_read_timeout(exc: BaseException) -> bool:
    """Whether a requests error raised while reading a body was a timeout."""
    seen = 0
    cur: BaseException | None = exc
    while cur is not None and seen < 6:
        if type(cur).__name__ in ("ReadTimeoutError", "ReadTimeout", "TimeoutError"):
            return True
        if "timed out" in str(cur).lower():
            return True
        nested = [a for a in getattr(cur, "args", ()) if isinstance(a, BaseException)]
        cur = nested[0] if nested else cur.__context__
        seen += 1
    return False


# ---------------------------------------------------------------------------
# Client
# ---------------------------------------------------------------------------

class OllamaClient:
    """Small synchronous client for the endpoints pv_kb needs."""

    def __init__(self, config: OllamaConfig, session: requests.Session | None = None,
                 logger: logging.Logger | None = None):
        self.config = config
        self.session = session or requests.Session()
        if config.headers:
            self.session.headers.update(config.headers)
        self.logger = logger or _LOGGER
        self._sleep = time.sleep

    @property
    def base_url(self) -> str:
        """Server URL without a trailing slash (may carry credentials: never shown, see ``shown_url``)."""
        return self.config.url.rstrip("/")

    @property
    def shown_url(self) -> str:
        """The server URL as messages and logs show it: without user name and password."""
        return redact_url(self.base_url)

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        self.session.close()

    # -- public API -----------------------------------------------------------

    def version(self) -> str:
        """Version string of the server (GET /api/version)."""
        data = self._json_call("GET", "/api/version")
        version = data.get("version")
        if not isinstance(version, str):
            raise self._bad_shape("/api/version", None, "no 'version' string", data)
        return version

    def tags(self) -> list[str]:
        """Names of the installed models (GET /api/tags), e.g. ``bge-m3:latest``."""
        data = self._json_call("GET", "/api/tags")
        models = data.get("models")
        if not isinstance(models, list):
            raise self._bad_shape("/api/tags", None, "no 'models' list", data)
        names = []
        for item in models:
            name = item.get("name") or item.get("model") if isinstance(item, dict) else None
            if not isinstance(name, str):
                raise self._bad_shape("/api/tags", None, "model without name", data)
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
                    raise self._bad_shape("/api/embed", model,
                                          f"vector length {len(vec)} != {dim}", None)
            vectors.extend(batch_vectors)
            batch_tokens = _as_int(data.get("prompt_eval_count"))
            tokens += batch_tokens
            truncated.extend(start + i for i in texts_over_context(batch, batch_tokens, context_tokens))
        if truncated:
            # INFO: the result carries the indices, the caller words the warning (e.g. once per cron run)
            self.logger.info("Embedding model %s at %s: %d of %d texts reached its context of %d tokens and "
                             "were probably cut (server evaluated %d tokens)", model, self.shown_url,
                             len(truncated), len(texts), context_tokens, tokens)
        return EmbedResult(vectors, tokens, calls, time.monotonic() - started, truncated)

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
                raise self._timeout("/api/chat", model, 0, "deadline passed before the request")
            read_timeout = max(0.05, min(self.config.read_timeout, deadline - started))
        data = self._json_call("POST", "/api/chat", payload, model=model, read_timeout=read_timeout,
                               deadline=deadline)
        if "error" in data:
            raise self._server_error_in_body("/api/chat", model, data["error"])
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise self._bad_shape("/api/chat", model, "no message.content", data)
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
            raise self._cancelled(model)
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
                    raise self._cancelled(model)
                if deadline is not None and time.monotonic() > deadline:
                    raise self._timeout("/api/chat", model, read_timeout, "deadline passed")
                try:
                    line = next(lines)
                except StopIteration:
                    break
                except (requests.exceptions.ConnectionError,
                        requests.exceptions.ChunkedEncodingError) as exc:
                    if cancel is not None and cancel.cancelled:
                        raise self._cancelled(model) from exc
                    if _is_read_timeout(exc):
                        raise self._timeout("/api/chat", model, read_timeout, repr(exc)) from exc
                    raise OllamaBadResponse(
                        f"Die Verbindung zu Ollama unter {self.shown_url} ist während der "
                        f"Antwort von Modell {model} abgebrochen. Bitte erneut versuchen.",
                        repr(exc), url=self.shown_url, model=model) from exc
                if not line or not line.strip():
                    continue
                if cancel is not None and cancel.cancelled:
                    raise self._cancelled(model)
                data = self._parse_line(line, model)
                if "error" in data:
                    raise self._server_error_in_body("/api/chat", model, data["error"])
                message = data.get("message") or {}
                delta = message.get("content", "") if isinstance(message, dict) else ""
                if not isinstance(delta, str):
                    raise self._bad_shape("/api/chat", model, "message.content is not text", data)
                parts.append(delta)
                if data.get("done"):
                    result = self._chat_result(model, "".join(parts), data, ctx,
                                               expected_prompt_tokens, started)
                    yield ChatChunk(delta, True, result)
                    return
                yield ChatChunk(delta, False, None)
            if cancel is not None and cancel.cancelled:
                raise self._cancelled(model)
            raise OllamaBadResponse(
                f"Die Antwort von Modell {model} (Ollama unter {self.shown_url}) endete "
                "unvollständig. Bitte erneut versuchen.",
                "stream ended without a done=true line", url=self.shown_url, model=model)
        finally:
            if cancel is not None:
                cancel.detach(resp)
            resp.close()

    def _cancelled(self, model: str | None) -> OllamaCancelled:
        return OllamaCancelled("Die Antwort wurde abgebrochen.", "cancelled by the caller",
                               url=self.shown_url, model=model)

    # -- request core ---------------------------------------------------------

    def _json_call(self, method: str, path: str, payload: dict | None = None, *,
                   model: str | None = None, read_timeout: float | None = None,
                   deadline: float | None = None) -> dict:
        """Send a request and return the decoded JSON object."""
        resp = self._send(method, path, payload, model=model, read_timeout=read_timeout, deadline=deadline)
        try:
            data = resp.json()
        except ValueError as exc:
            raise self._bad_shape(path, model, f"invalid JSON: {exc}; body {resp.text[:200]!r}",
                                  None) from exc
        if not isinstance(data, dict):
            raise self._bad_shape(path, model, "JSON is not an object", data)
        return data

    def _send(self, method: str, path: str, payload: dict | None = None, *,
              model: str | None = None, stream: bool = False,
              read_timeout: float | None = None, deadline: float | None = None
              ) -> requests.Response:
        """Send with retries on connection errors and 5xx; map errors."""
        url = self.base_url + path
        attempts = max(0, self.config.retries) + 1
        failure: OllamaError | None = None
        for attempt in range(attempts):
            if attempt:
                pause = self.config.backoff * (2 ** (attempt - 1))
                if deadline is not None and time.monotonic() + pause > deadline:
                    break
                self._sleep(pause)
            timeout = (self.config.connect_timeout, read_timeout or self.config.read_timeout)
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self._timeout(path, model, 0, "deadline passed")
                # each attempt ends by the deadline, connecting included
                timeout = (min(timeout[0], max(0.05, left)), min(timeout[1], max(0.05, left)))
            try:
                resp = self.session.request(method, url, json=payload, timeout=timeout,
                                            stream=stream)
            except requests.exceptions.ConnectTimeout as exc:
                failure = self._unreachable(path, model, repr(exc))
            except requests.exceptions.Timeout as exc:
                raise self._timeout(path, model, timeout[1], repr(exc)) from exc
            except requests.exceptions.ConnectionError as exc:
                if _is_read_timeout(exc):
                    raise self._timeout(path, model, timeout[1], repr(exc)) from exc
                failure = self._unreachable(path, model, repr(exc))
            except requests.exceptions.RequestException as exc:
                raise OllamaBadResponse(
                    f"Die Anfrage an Ollama unter {self.shown_url} ist fehlgeschlagen "
                    f"({path}{_model_suffix(model)}).", repr(exc),
                    url=self.shown_url, model=model) from exc
            else:
                if resp.status_code < 400:
                    return resp
                if resp.status_code < 500:
                    raise self._client_error(resp, path, model)
                failure = self._server_error(resp, path, model)
                resp.close()
            if attempt + 1 < attempts:
                # a retry is routine; the final failure is raised and logged by the caller, once
                self.logger.info("Ollama %s %s failed (attempt %d/%d), retrying: %s", method, self.shown_url + path,
                                 attempt + 1, attempts, failure.detail)
        assert failure is not None
        raise failure

    def _chat_payload(self, model: str, messages: list[dict], origin, options: dict | None,
                      num_ctx: int | None, *, stream: bool,
                      response_format: dict | str | None = None) -> tuple[dict, int]:
        # the personal-data gate's mark (lib/pii.py): user text only as the gate passed it
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
                          truncated=truncated, raw=data)

    def _check_embeddings(self, data: dict, expected: int, model: str) -> list[list[float]]:
        vectors = data.get("embeddings")
        if not isinstance(vectors, list):
            raise self._bad_shape("/api/embed", model, "no 'embeddings' list", data)
        if len(vectors) != expected:
            raise self._bad_shape("/api/embed", model,
                                  f"{len(vectors)} vectors for {expected} inputs", None)
        checked = []
        for vec in vectors:
            if (not isinstance(vec, list) or not vec
                    or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                               for x in vec)):
                raise self._bad_shape("/api/embed", model, "vector is not a list of numbers",
                                      None)
            if not all(math.isfinite(x) for x in vec):
                raise self._bad_shape("/api/embed", model, "vector holds NaN or infinity", None)
            checked.append([float(x) for x in vec])
        return checked

    def _parse_line(self, line: bytes | str, model: str) -> dict:
        try:
            text = line.decode("utf-8") if isinstance(line, bytes) else line
            data = json.loads(text)
        except (UnicodeDecodeError, ValueError) as exc:
            raise self._bad_shape("/api/chat", model,
                                  f"stream line is not JSON: {line[:200]!r}", None) from exc
        if not isinstance(data, dict):
            raise self._bad_shape("/api/chat", model, "stream line is not an object", data)
        return data

    # -- error construction ---------------------------------------------------

    def _unreachable(self, path: str, model: str | None, detail: str) -> OllamaUnreachable:
        return OllamaUnreachable(
            f"Ollama unter {self.shown_url} nicht erreichbar ({path}{_model_suffix(model)}). "
            "Bitte prüfen, ob Ollama läuft und die URL in den Einstellungen stimmt.",
            detail, url=self.shown_url, model=model)

    def _timeout(self, path: str, model: str | None, seconds: float,
                 detail: str) -> OllamaTimeout:
        return OllamaTimeout(
            f"Ollama unter {self.shown_url} hat nicht innerhalb von {_de_number(seconds)} s geantwortet "
            f"({path}{_model_suffix(model)}). Bitte später erneut versuchen oder das "
            "Zeitlimit in den Einstellungen erhöhen.",
            detail, url=self.shown_url, model=model)

    def _client_error(self, resp: requests.Response, path: str,
                      model: str | None) -> OllamaError:
        error, raw = _error_text(resp)
        detail = f"HTTP {resp.status_code} from {redact_url(resp.url)}: {raw}"
        if resp.status_code == 404 and model and "not found" in error.lower() \
                and "model" in error.lower():
            return OllamaModelMissing(
                f"Modell {model} ist auf dem Ollama-Server nicht installiert "
                f"(ollama pull {model}). Server: {self.shown_url}.",
                detail, url=self.shown_url, model=model, status=404)
        if resp.status_code == 404:
            return OllamaBadResponse(
                f"Ollama unter {self.shown_url} kennt den Endpunkt {path} nicht. Bitte Ollama "
                "auf eine aktuelle Version aktualisieren.",
                detail, url=self.shown_url, model=model, status=404)
        return OllamaBadResponse(
            f"Ollama unter {self.shown_url} hat die Anfrage {path}{_model_suffix(model)} "
            f"abgelehnt (HTTP {resp.status_code}{': ' + error if error else ''}). Bitte Modell und Einstellungen "
            "prüfen.", detail, url=self.shown_url, model=model, status=resp.status_code)

    def _server_error(self, resp: requests.Response, path: str,
                      model: str | None) -> OllamaBadResponse:
        error, raw = _error_text(resp)
        return OllamaBadResponse(
            f"Ollama unter {self.shown_url} meldet einen Serverfehler (HTTP {resp.status_code}) "
            f"bei {path}{_model_suffix(model)}{': ' + error if error else ''}. Bitte das Ollama-Protokoll "
            "prüfen und später erneut versuchen.",
            f"HTTP {resp.status_code} from {redact_url(resp.url)}: {raw}",
            url=self.shown_url, model=model, status=resp.status_code)

    def _server_error_in_body(self, path: str, model: str | None, error: Any) -> OllamaBadResponse:
        return OllamaBadResponse(
            f"Ollama unter {self.shown_url} meldet einen Fehler bei {path}"
            f"{_model_suffix(model)}: {error}. Bitte erneut versuchen.",
            f"error in response body: {error!r}", url=self.shown_url, model=model)

    def _bad_shape(self, path: str, model: str | None, why: str, data: Any) -> OllamaBadResponse:
        snippet = json.dumps(data, ensure_ascii=False)[:200] if data is not None else ""
        return OllamaBadResponse(
            f"Ollama unter {self.shown_url} hat auf {path}{_model_suffix(model)} eine "
            "unerwartete Antwort geliefert. Bitte Ollama-Version und Modell prüfen.",
            f"{why} {snippet}".strip(), url=self.shown_url, model=model)


def _de_number(value: float) -> str:
    """``0.3`` -> ``0,3`` for German messages."""
    return f"{value:g}".replace(".", ",")


def _model_suffix(model: str | None) -> str:
    return f", Modell {model}" if model else ""


def _as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _error_text(resp: requests.Response) -> tuple[str, str]:
    """(shown, raw): Ollama's own ``error`` field for messages (short), and the start of the body for the
    technical detail. A body that is not Ollama's error JSON is never echoed into a message: whatever
    answered at the configured address (a proxy, another service) stays out of what users see."""
    raw = resp.text[:200].strip() or resp.reason or ""
    try:
        data = resp.json()
    except ValueError:
        return "", raw
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return data["error"][:200], raw
    return "", raw


def redact_url(url: str | None) -> str:
    """``https://user:secret@host/x`` -> ``https://host/x``: credentials never reach messages or logs."""
    if not url:
        return url or ""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
