"""lib.llm.client (with lib.llm.transport and lib.llm.errors) under production conditions: cancellation, secrets
in URLs, proxy headers, replies that are not Ollama's, non-finite vectors. A tiny HTTP server of its own per test
(no stand-in needed)."""
import http.server
import json
import threading
import time

import pytest

from lib.llm import client as ollama, errors as ollama_errors
from lib.llm.client import OllamaClient, OllamaConfig
from lib.llm.errors import OllamaBadResponse, OllamaCancelled
from lib.llm.transport import CancelToken


class _Server:
    """Answers every request with ``handler(request_handler)``; records path and headers."""

    def __init__(self, handler):
        self.requests = []
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                outer.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                handler(self)

            do_GET = do_POST

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def port(self):
        return self.httpd.server_address[1]


def _send(h, status, body, ctype="application/json"):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    h.send_response(status)
    h.send_header("Content-Type", ctype)
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)


def _slow_stream(h):
    """One token, then silence for 30 s (a model thinking), unless the client goes away."""
    h.send_response(200)
    h.send_header("Content-Type", "application/x-ndjson")
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()
    line = json.dumps({"message": {"content": "Erster "}, "done": False}).encode() + b"\n"
    h.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
    h.wfile.flush()
    time.sleep(30)


def client_for(url, **kw):
    return OllamaClient(OllamaConfig(url=url, connect_timeout=1.0, read_timeout=30.0, retries=0, **kw))


def test_cancel_ends_a_blocked_stream_within_a_second():
    with _Server(_slow_stream) as server:
        client = client_for(f"http://127.0.0.1:{server.port}")
        token = CancelToken()
        got, error = [], []

        def consume():
            try:
                for piece in client.chat_stream("m", [{"role": "user", "content": "x"}], cancel=token, origin=ollama.KB_TEXT):
                    got.append(piece.delta)
            except Exception as exc:  # noqa: BLE001 - the test inspects it
                error.append(exc)

        worker = threading.Thread(target=consume)
        worker.start()
        for _ in range(50):
            if got:
                break
            time.sleep(0.05)
        assert got == ["Erster "], "the first token arrives before the silence"
        started = time.monotonic()
        token.cancel()
        worker.join(5)
        assert not worker.is_alive()
        assert time.monotonic() - started < 1.0
        assert len(error) == 1 and isinstance(error[0], OllamaCancelled)
        client.close()


def test_cancelled_token_sends_nothing():
    with _Server(lambda h: _send(h, 200, {})) as server:
        client = client_for(f"http://127.0.0.1:{server.port}")
        token = CancelToken()
        token.cancel()
        with pytest.raises(OllamaCancelled):
            next(client.chat_stream("m", [{"role": "user", "content": "x"}], cancel=token, origin=ollama.KB_TEXT))
        assert server.requests == []


@pytest.mark.parametrize("url, shown", [
    ("https://user:geheim@proxy.example:8443/ollama", "https://proxy.example:8443/ollama"),
    ("http://geheim@127.0.0.1:11434", "http://127.0.0.1:11434"),
    ("http://127.0.0.1:11434", "http://127.0.0.1:11434"),
    ("", ""),
])
def test_redact_url(url, shown):
    assert ollama_errors.redact_url(url) == shown


def test_credentials_never_in_messages():
    with _Server(lambda h: _send(h, 500, {"error": "runner crashed"})) as server:
        client = client_for(f"http://admin:geheim@127.0.0.1:{server.port}")
        with pytest.raises(OllamaBadResponse) as info:
            client.embed("m", ["text"], origin=ollama.KB_TEXT)
        exc = info.value
        for text in (exc.message, exc.detail, exc.url, str(exc)):
            assert "geheim" not in text and "admin" not in text
        assert "runner crashed" in exc.message          # Ollama's own error text is shown
        # the credentials did reach the server (basic auth), only not the messages
        assert server.requests[0]["headers"].get("Authorization", "").startswith("Basic ")


def test_foreign_reply_is_not_echoed():
    """Whatever answers at the configured address, its body does not reach the user's message."""
    secret_page = b"<html>internal admin console: token=abc123</html>"
    with _Server(lambda h: _send(h, 403, secret_page, "text/html")) as server:
        client = client_for(f"http://127.0.0.1:{server.port}")
        with pytest.raises(OllamaBadResponse) as info:
            client.version()
        assert "abc123" not in info.value.message
        assert "HTTP 403" in info.value.message


def test_proxy_header_is_sent():
    with _Server(lambda h: _send(h, 200, {"version": "0.9.0"})) as server:
        client = client_for(f"http://127.0.0.1:{server.port}", headers={"Authorization": "Bearer t0ken"})
        assert client.version() == "0.9.0"
        assert server.requests[0]["headers"]["Authorization"] == "Bearer t0ken"


def test_nan_vector_is_a_bad_response():
    body = b'{"embeddings": [[0.1, NaN, 0.3]], "prompt_eval_count": 3}'
    with _Server(lambda h: _send(h, 200, body)) as server:
        client = client_for(f"http://127.0.0.1:{server.port}")
        with pytest.raises(OllamaBadResponse):
            client.embed("m", ["text"], origin=ollama.KB_TEXT)


def test_chat_deadline_caps_the_read_timeout():
    def slow(h):
        time.sleep(3)
        _send(h, 200, {"message": {"content": "spät"}, "done": True})
    with _Server(slow) as server:
        client = client_for(f"http://127.0.0.1:{server.port}")
        started = time.monotonic()
        with pytest.raises(ollama_errors.OllamaTimeout):
            client.chat("m", [{"role": "user", "content": "x"}], origin=ollama.KB_TEXT, deadline=time.monotonic() + 0.5)
        assert time.monotonic() - started < 2.0
        with pytest.raises(ollama_errors.OllamaTimeout):
            client.chat("m", [{"role": "user", "content": "x"}], origin=ollama.KB_TEXT, deadline=time.monotonic() - 1)
