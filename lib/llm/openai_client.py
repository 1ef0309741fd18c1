"""HTTP client for an OpenAI-compatible model server (vLLM, SGLang, llama.cpp's server, llama-cpp-python's
server, a LiteLLM gateway): the same calls and results as the Ollama client (lib/llm/client.py).

:class:`OpenAIClient` has the Ollama client's public methods (``describe``, ``tags``, ``has_model``,
``embedding_facts``, ``embed``, ``chat``, ``chat_stream``) with the same arguments and results, so prompts,
answer modes, checks, token accounting, deadlines and cancellation work unchanged; it adds ``rerank``.
It sends through the same transport (retries on connection errors and 5xx, deadlines, ``CancelToken``) and
raises the same errors, worded for "den Modellserver" (lib/llm/errors.py). Every chat, embedding and rerank
request names its ``origin`` and is checked by the personal-data gate before anything is sent, exactly as in
the Ollama client (``lib/pii.check_request``).

Endpoints: ``GET /v1/models``; ``POST /v1/embeddings`` (``encoding_format: float``; the vectors are put back in
input order by their ``index``); ``POST /v1/chat/completions`` blocking and streamed (server-sent events,
``data: {…}`` lines, closed by ``data: [DONE]``; ``stream_options.include_usage`` asks for the token counts);
``POST /v1/rerank`` (vLLM, llama.cpp's server: ``{"results": [{"index", "relevance_score"}]}``) or TEI's
``POST /rerank`` (``[{"index", "score"}]``).

Ollama's ``options`` are mapped: ``temperature``, ``top_p``, ``seed``, ``stop`` as they are, ``num_predict`` as
``max_tokens``; ``num_ctx`` cannot be sent (the server's context is fixed at its start) and only sizes the
truncation check. Token counts come from ``usage`` (``prompt_tokens``, ``completion_tokens``); a server that
reports none gives 0 and never a "truncated" verdict. These servers refuse a prompt longer than the context
(HTTP 400) instead of cutting it.

Structured output (``response_format`` = a JSON schema, or "json"), by ``config.structured``:
``json_schema`` sends OpenAI's ``{"type": "json_schema", "json_schema": {"name", "schema"}}`` (vLLM, SGLang,
llama.cpp's server, LiteLLM); ``json_object`` sends ``{"type": "json_object", "schema": …}`` (llama-cpp-python's
server); ``none`` sends nothing (the prompt still asks for JSON and the answer is checked as always); ``auto``
(default) tries them in this order and keeps, per server URL and process, the first the server accepted
(a refused style costs one HTTP 400/422, or a 500 that names ``response_format``: llama-cpp-python's server
answers its validation errors so). Pure Python (``requests`` only, no Odoo).
"""
from __future__ import annotations

import json
import logging
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Iterator

import requests

from ..pii import gate as pii
from .client import ChatChunk, ChatResult, EmbedResult, KB_TEXT, OllamaConfig, _as_int, tag_listed
from .errors import (OllamaBadResponse, OllamaError, bad_shape, cancelled, connection_dropped, error_in_body,
                     stream_incomplete, timed_out)
from .tokens import is_truncated, texts_over_context
from .transport import CancelToken, OllamaTransport, is_read_timeout

_LOGGER = logging.getLogger(__name__)

STYLES = ("json_schema", "json_object", "none")
#: {server URL: the structured-output style it accepted} (``structured: auto``)
_ACCEPTED_STYLE: dict[str, str] = {}
_STYLE_LOCK = threading.Lock()
#: Ollama option -> OpenAI request field
_OPTION_FIELDS = {"temperature": "temperature", "top_p": "top_p", "seed": "seed", "stop": "stop",
                  "num_predict": "max_tokens"}


@dataclass
class RerankResult:
    """Relevance scores in the order of the documents sent, plus cost figures."""

    scores: list[float]
    duration_s: float
    server: str = ""
    raw: object = field(default=None, repr=False)


def response_format_for(fmt, style: str) -> dict | None:
    """The ``response_format`` field for Ollama's ``format`` value (a schema dict or "json") in ``style``."""
    if not fmt or style == "none":
        return None
    schema = fmt if isinstance(fmt, dict) else None
    if style == "json_schema" and schema is not None:
        return {"type": "json_schema", "json_schema": {"name": "antwort", "schema": schema}}
    if schema is not None:
        return {"type": "json_object", "schema": schema}
    return {"type": "json_object"}


def forget_styles() -> None:
    """Forget which structured-output style each server accepted (tests, a changed server)."""
    with _STYLE_LOCK:
        _ACCEPTED_STYLE.clear()


class OpenAIClient(OllamaTransport):
    """Client of one OpenAI-compatible server, with the Ollama client's interface (module docstring)."""

    kind = "openai"

    def __init__(self, config: OllamaConfig, session: requests.Session | None = None,
                 logger: logging.Logger | None = None, rerank_api: str = "v1"):
        super().__init__(config, session, logger or _LOGGER)
        self.rerank_api = rerank_api   # "v1": /v1/rerank (vLLM, llama.cpp) | "tei": /rerank

    # -- metadata ---------------------------------------------------------------------

    def models(self) -> list[dict]:
        """The entries of GET /v1/models (each with at least an ``id``)."""
        data = self._json_call("GET", "/v1/models")
        items = data.get("data")
        if not isinstance(items, list) or not all(isinstance(i, dict) and isinstance(i.get("id"), str)
                                                  for i in items):
            raise bad_shape(self.shown_url, "/v1/models", None, "no 'data' list of models with ids", data,
                            self.kind)
        return items

    def version(self) -> str:
        """No version endpoint in this API: the owner of the first model (or "OpenAI-API")."""
        items = self.models()
        owner = items[0].get("owned_by") if items else None
        return str(owner) if isinstance(owner, str) and owner else "OpenAI-API"

    def describe(self) -> str:
        """One line for the connection test."""
        return f"OpenAI-kompatibler Server ({len(self.models())} Modelle)"

    def tags(self) -> list[str]:
        """Ids of the served models (GET /v1/models)."""
        return [item["id"] for item in self.models()]

    def has_model(self, model: str) -> bool:
        """Whether ``model`` is served: its id exactly, or as Ollama would match it (``name`` = ``name:latest``)."""
        served = self.tags()
        return model in served or tag_listed(model, served)

    def _context_of(self, model: str) -> int | None:
        """The model's context window as /v1/models reports it (vLLM: ``max_model_len``, llama.cpp: ``meta``)."""
        for item in self.models():
            if item["id"] != model:
                continue
            meta = item.get("meta") if isinstance(item.get("meta"), dict) else {}
            for value in (item.get("max_model_len"), meta.get("n_ctx_train"), meta.get("n_ctx")):
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
        return None

    def embedding_facts(self, model: str) -> tuple[int, int | None]:
        """(vector length, context window or None): one short text is embedded and measured."""
        dim = len(self.embed(model, ["Dimension"], batch_size=1, origin=KB_TEXT).vectors[0])
        return dim, self._context_of(model)

    def embedding_dim(self, model: str) -> int:
        return self.embedding_facts(model)[0]

    # -- embeddings ---------------------------------------------------------------------

    def embed(self, model: str, texts: list[str], batch_size: int | None = None,
              context_tokens: int | None = None, deadline: float | None = None, *, origin) -> EmbedResult:
        """Embed ``texts`` in batches (POST /v1/embeddings); as the Ollama client's ``embed``."""
        pii.check_request(origin, list(texts), embedding=True)
        size = batch_size or self.config.embed_batch_size
        if size < 1:
            raise ValueError("batch_size must be >= 1")
        started = time.monotonic()
        vectors: list[list[float]] = []
        truncated: list[int] = []
        tokens = calls = 0
        dim: int | None = None
        path = "/v1/embeddings"
        for start in range(0, len(texts), size):
            batch = list(texts[start:start + size])
            data = self._json_call("POST", path, {"model": model, "input": batch, "encoding_format": "float"},
                                   model=model, deadline=deadline)
            calls += 1
            batch_vectors = self._check_embeddings(data, len(batch), model)
            for vec in batch_vectors:
                dim = dim or len(vec)
                if len(vec) != dim:
                    raise bad_shape(self.shown_url, path, model, f"vector length {len(vec)} != {dim}", None,
                                    self.kind)
            vectors.extend(batch_vectors)
            usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
            batch_tokens = _as_int(usage.get("prompt_tokens"))
            tokens += batch_tokens
            truncated.extend(start + i for i in texts_over_context(batch, batch_tokens, context_tokens))
        if truncated:
            self.logger.info("Embedding model %s at %s: %d of %d texts reached its context of %d tokens and "
                             "were probably cut (server evaluated %d tokens)", model, self.shown_url,
                             len(truncated), len(texts), context_tokens, tokens)
        return EmbedResult(vectors, tokens, calls, time.monotonic() - started, truncated, server=self.shown_url)

    def _check_embeddings(self, data: dict, expected: int, model: str) -> list[list[float]]:
        path = "/v1/embeddings"
        items = data.get("data")
        if not isinstance(items, list):
            raise bad_shape(self.shown_url, path, model, "no 'data' list", data, self.kind)
        if len(items) != expected:
            raise bad_shape(self.shown_url, path, model, f"{len(items)} vectors for {expected} inputs", None,
                            self.kind)
        ordered: list = [None] * expected
        for pos, item in enumerate(items):
            index = item.get("index", pos) if isinstance(item, dict) else None
            vec = item.get("embedding") if isinstance(item, dict) else None
            if not isinstance(index, int) or not 0 <= index < expected or ordered[index] is not None:
                raise bad_shape(self.shown_url, path, model, "missing or repeated index", None, self.kind)
            if (not isinstance(vec, list) or not vec
                    or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vec)):
                raise bad_shape(self.shown_url, path, model, "vector is not a list of numbers", None, self.kind)
            if not all(math.isfinite(x) for x in vec):
                raise bad_shape(self.shown_url, path, model, "vector holds NaN or infinity", None, self.kind)
            ordered[index] = [float(x) for x in vec]
        return ordered

    # -- chat ---------------------------------------------------------------------------

    def chat(self, model: str, messages: list[dict], *, origin, options: dict | None = None,
             num_ctx: int | None = None, expected_prompt_tokens: int | None = None,
             response_format: dict | str | None = None, deadline: float | None = None) -> ChatResult:
        """One complete answer (POST /v1/chat/completions, ``stream: false``); as the Ollama client's ``chat``."""
        started = time.monotonic()
        path = "/v1/chat/completions"
        payload, ctx = self._chat_payload(model, messages, origin, options, num_ctx, stream=False)
        read_timeout = None
        if deadline is not None:
            if deadline <= started:
                raise timed_out(self.shown_url, path, model, 0, "deadline passed before the request", self.kind)
            read_timeout = max(0.05, min(self.config.read_timeout, deadline - started))
        resp = self._send_chat(payload, response_format, model, stream=False, read_timeout=read_timeout,
                               deadline=deadline)
        try:
            data = resp.json()
        except ValueError as exc:
            raise bad_shape(self.shown_url, path, model, f"invalid JSON: {exc}; body {resp.text[:200]!r}", None,
                            self.kind) from exc
        if not isinstance(data, dict):
            raise bad_shape(self.shown_url, path, model, "JSON is not an object", data, self.kind)
        if "error" in data:
            raise error_in_body(self.shown_url, path, model, data["error"], self.kind)
        choices = data.get("choices")
        message = choices[0].get("message") if isinstance(choices, list) and choices \
            and isinstance(choices[0], dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if content is None and isinstance(message, dict) and not message.get("tool_calls"):
            content = ""
        if not isinstance(content, str):
            raise bad_shape(self.shown_url, path, model, "no choices[0].message.content", data, self.kind)
        return self._chat_result(model, content, data.get("usage"), data, ctx, expected_prompt_tokens, started)

    def chat_stream(self, model: str, messages: list[dict], *, origin, options: dict | None = None,
                    num_ctx: int | None = None, expected_prompt_tokens: int | None = None,
                    deadline: float | None = None, response_format: dict | str | None = None,
                    cancel: CancelToken | None = None) -> Iterator[ChatChunk]:
        """Stream an answer (server-sent events) as ChatChunks; as the Ollama client's ``chat_stream``."""
        started = time.monotonic()
        path = "/v1/chat/completions"
        if cancel is not None and cancel.cancelled:
            raise cancelled(self.shown_url, model)
        payload, ctx = self._chat_payload(model, messages, origin, options, num_ctx, stream=True)
        read_timeout = self.config.read_timeout
        if deadline is not None:
            read_timeout = max(0.05, min(read_timeout, deadline - started))
        resp = self._send_chat(payload, response_format, model, stream=True, read_timeout=read_timeout,
                               deadline=deadline)
        if cancel is not None:
            cancel.attach(resp)
        parts: list[str] = []
        usage: dict | None = None
        finished = False
        last: dict = {}
        try:
            lines = resp.iter_lines()
            while True:
                if cancel is not None and cancel.cancelled:
                    raise cancelled(self.shown_url, model)
                if deadline is not None and time.monotonic() > deadline:
                    raise timed_out(self.shown_url, path, model, read_timeout, "deadline passed", self.kind)
                try:
                    line = next(lines)
                except StopIteration:
                    break
                except (requests.exceptions.ConnectionError,
                        requests.exceptions.ChunkedEncodingError) as exc:
                    if cancel is not None and cancel.cancelled:
                        raise cancelled(self.shown_url, model) from exc
                    if is_read_timeout(exc):
                        raise timed_out(self.shown_url, path, model, read_timeout, repr(exc), self.kind) from exc
                    raise connection_dropped(self.shown_url, model, repr(exc), self.kind) from exc
                if cancel is not None and cancel.cancelled:
                    raise cancelled(self.shown_url, model)
                text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
                if not text.startswith("data:"):
                    continue            # blank separators, ": ping" comments, "event:" lines
                body = text[5:].strip()
                if body == "[DONE]":
                    finished = True
                    break
                data = self._parse_event(body, model)
                if "error" in data:
                    raise error_in_body(self.shown_url, path, model, data["error"], self.kind)
                last = data
                if isinstance(data.get("usage"), dict):
                    usage = data["usage"]
                choices = data.get("choices") or []
                choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
                delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
                piece = delta.get("content") or ""
                if not isinstance(piece, str):
                    raise bad_shape(self.shown_url, path, model, "delta.content is not text", data, self.kind)
                if choice.get("finish_reason"):
                    finished = True
                if piece:
                    parts.append(piece)
                    yield ChatChunk(piece, False, None)
            if cancel is not None and cancel.cancelled:
                raise cancelled(self.shown_url, model)
            if not finished:
                raise stream_incomplete(self.shown_url, model, self.kind)
            if usage is None:
                usage = {"completion_tokens": len(parts)}   # no usage reported: one token per event
            result = self._chat_result(model, "".join(parts), usage, last, ctx, expected_prompt_tokens, started)
            yield ChatChunk("", True, result)
        finally:
            if cancel is not None:
                cancel.detach(resp)
            resp.close()

    # -- rerank ---------------------------------------------------------------------------

    def rerank(self, model: str, query: str, documents: list[str], *, origin,
               deadline: float | None = None) -> RerankResult:
        """Relevance of each document to ``query`` (``/v1/rerank`` or TEI's ``/rerank``), in document order.

        The query is user text: with a ``pii.Gated`` origin it must be one of the texts the gate passed; the
        documents are knowledge-base text and must not hold a value the gate masked."""
        pii.check_request(origin, [query], embedding=True)
        pii.check_request(origin, list(documents), embedding=False)
        started = time.monotonic()
        if not documents:
            return RerankResult([], 0.0, self.shown_url)
        if self.rerank_api == "tei":
            path, payload = "/rerank", {"query": query, "texts": list(documents), "raw_scores": False}
        else:
            path = "/v1/rerank"
            payload = {"model": model, "query": query, "documents": list(documents), "top_n": len(documents)}
        resp = self._send("POST", path, payload, model=model, deadline=deadline)
        try:
            data = resp.json()
        except ValueError as exc:
            raise bad_shape(self.shown_url, path, model, f"invalid JSON: {exc}", None, self.kind) from exc
        items = data.get("results") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise bad_shape(self.shown_url, path, model, "no 'results' list", data, self.kind)
        scores: list[float | None] = [None] * len(documents)
        for item in items:
            index = item.get("index") if isinstance(item, dict) else None
            score = item.get("relevance_score", item.get("score")) if isinstance(item, dict) else None
            if (not isinstance(index, int) or not 0 <= index < len(documents) or scores[index] is not None
                    or not isinstance(score, (int, float)) or isinstance(score, bool) or not math.isfinite(score)):
                raise bad_shape(self.shown_url, path, model, "result without a valid index and score", data,
                                self.kind)
            scores[index] = float(score)
        if any(s is None for s in scores):
            raise bad_shape(self.shown_url, path, model, f"{len(items)} scores for {len(documents)} documents",
                            None, self.kind)
        return RerankResult([float(s) for s in scores], time.monotonic() - started, self.shown_url, data)

    # -- request bodies and answers ---------------------------------------------

    def _chat_payload(self, model: str, messages: list[dict], origin, options: dict | None,
                      num_ctx: int | None, *, stream: bool) -> tuple[dict, int]:
        # the personal-data gate's mark (lib/pii/gate.py): user text only as the gate passed it
        pii.check_request(origin, [m.get("content") for m in messages], embedding=False)
        options = dict(options or {})
        ctx = int(num_ctx or options.get("num_ctx") or self.config.num_ctx)
        payload: dict = {"model": model, "messages": messages, "stream": stream}
        for key, name in _OPTION_FIELDS.items():
            if options.get(key) is not None:
                payload[name] = options[key]
        if stream:
            payload["stream_options"] = {"include_usage": True}
        return payload, ctx

    def _styles(self, response_format) -> list[str]:
        """The structured-output styles to try, in order (module docstring)."""
        if not response_format:
            return ["none"]
        wanted = self.config.structured if self.config.structured in STYLES + ("auto",) else "auto"
        if wanted != "auto":
            return [wanted]
        with _STYLE_LOCK:
            known = _ACCEPTED_STYLE.get(self.base_url)
        return [known] if known else list(STYLES)

    def _send_chat(self, payload: dict, response_format, model: str, *, stream: bool,
                   read_timeout: float | None, deadline: float | None) -> requests.Response:
        """POST /v1/chat/completions, trying the structured-output styles until the server accepts one."""
        styles = self._styles(response_format)
        for n, style in enumerate(styles):
            body = dict(payload)
            field_value = response_format_for(response_format, style)
            if field_value is not None:
                body["response_format"] = field_value
            try:
                resp = self._send("POST", "/v1/chat/completions", body, model=model, stream=stream,
                                  read_timeout=read_timeout, deadline=deadline)
            except OllamaBadResponse as exc:
                # a refused style: 400/422, or 500 naming response_format (llama-cpp-python reports its request
                # validation errors as HTTP 500)
                refused = exc.status in (400, 422) or (exc.status or 0) >= 500 and "response_format" in exc.detail
                if refused and n + 1 < len(styles):
                    self.logger.info("Server at %s refused response_format style %s (HTTP %s), trying %s",
                                     self.shown_url, style, exc.status, styles[n + 1])
                    continue
                raise
            if response_format and self.config.structured not in STYLES:
                with _STYLE_LOCK:
                    _ACCEPTED_STYLE[self.base_url] = style
            return resp
        raise AssertionError("unreachable")   # the loop returns or raises

    def _chat_result(self, model: str, content: str, usage, data: dict, num_ctx: int,
                     expected: int | None, started: float) -> ChatResult:
        usage = usage if isinstance(usage, dict) else {}
        prompt_tokens = _as_int(usage.get("prompt_tokens"))
        # a server that reports no prompt tokens gives no ground for a "truncated" verdict
        truncated = bool(prompt_tokens) and is_truncated(prompt_tokens, expected, num_ctx)
        if truncated:
            self.logger.warning(
                "Prompt for model %s at %s was probably truncated: server evaluated %d "
                "prompt tokens, about %d expected, num_ctx %d", model, self.shown_url,
                prompt_tokens, expected, num_ctx)
        return ChatResult(content=content, prompt_eval_count=prompt_tokens,
                          eval_count=_as_int(usage.get("completion_tokens")),
                          duration_s=time.monotonic() - started, truncated=truncated, raw=data,
                          server=self.shown_url)

    def _parse_event(self, body: str, model: str) -> dict:
        try:
            data = json.loads(body)
        except ValueError as exc:
            raise bad_shape(self.shown_url, "/v1/chat/completions", model,
                            f"stream event is not JSON: {body[:200]!r}", None, self.kind) from exc
        if not isinstance(data, dict):
            raise bad_shape(self.shown_url, "/v1/chat/completions", model, "stream event is not an object", data,
                            self.kind)
        return data


__all__ = ["OpenAIClient", "RerankResult", "response_format_for", "STYLES", "OllamaError"]
