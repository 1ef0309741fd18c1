"""The stand-in's OpenAI-compatible replies have the shape of a real server's: tests/lib/data/openai_shapes.json
holds one reply of each endpoint recorded from llama-cpp-python's own server (scripts/record_openai_shapes.py);
the same requests go to the stand-in and both replies are compared key by key, with the type of every value.

Known differences, asserted as such: llama-cpp-python ignores ``stream_options.include_usage`` (the stand-in, like
vLLM and llama.cpp's C++ server, sends a last event with ``usage`` and no choices), refuses ``json_schema``
(HTTP 500) where the stand-in accepts it, and answers request errors with HTTP 500 where the stand-in says 400;
its embeddings were recorded from a model without pooling (one vector per token), so only their envelope is
compared."""
import json
import pathlib

import pytest
import requests

from lib.llm.client import OllamaConfig
from lib.llm.openai_client import OpenAIClient

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "openai_shapes.json").read_text(encoding="utf-8"))
REPLIES = RECORDED["replies"]
SCHEMA = {"type": "object", "properties": {"antwort": {"type": "string"}}, "required": ["antwort"]}
MESSAGES = [{"role": "user", "content": "Antworte mit einem Wort: Wie heißt die Hauptstadt Österreichs?"}]


def shape(value):
    """Keys and value types, lists by their first item: what a client can rely on."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return "null" if value is None else type(value).__name__


def post(url, body, stream=False):
    resp = requests.post(url + "/v1/chat/completions", json=body, stream=stream, timeout=10)
    if not stream:
        return resp.status_code, resp.json()
    events = []
    for line in resp.iter_lines():
        text = line.decode("utf-8")
        if text.startswith("data:"):
            payload = text[5:].strip()
            events.append(payload if payload == "[DONE]" else json.loads(payload))
    return resp.status_code, {"content_type": resp.headers["Content-Type"], "events": events}


@pytest.fixture
def chat():
    return {"model": "standin-chat", "messages": MESSAGES, "max_tokens": 6, "temperature": 0}


def test_the_recording_is_from_the_real_server():
    assert RECORDED["server"].startswith("llama-cpp-python")
    assert {name: status for name, (status, _body) in REPLIES.items()} == {
        "models": 200, "chat": 200, "chat_stream": 200, "chat_json_schema": 500, "chat_json_object": 200,
        "refused": 500, "embeddings": 200}


def test_models(standin):
    real = REPLIES["models"][1]
    mine = requests.get(standin.url + "/v1/models", timeout=10).json()
    assert shape(mine) == shape(real)


@pytest.mark.parametrize("name,extra", [("chat", {}), ("chat_json_object", {
    "max_tokens": 16, "response_format": {"type": "json_object", "schema": SCHEMA}})])
def test_chat_completion(standin, chat, name, extra):
    status, mine = post(standin.url, dict(chat, **extra))
    assert status == 200
    assert shape(mine) == shape(REPLIES[name][1])


def test_streamed_chat_events(standin, chat):
    real = REPLIES["chat_stream"][1]
    status, mine = post(standin.url, dict(chat, stream=True, stream_options={"include_usage": True}), stream=True)
    assert status == 200 and mine["content_type"] == real["content_type"]
    assert mine["events"][-1] == real["events"][-1] == "[DONE]"
    real_events = [e for e in real["events"] if e != "[DONE]"]
    mine_events = [e for e in mine["events"] if e != "[DONE]" and e["choices"]]
    # the opening event (role), the content events and the closing one (finish_reason), in that order
    assert shape(mine_events[0]) == shape(real_events[0]) and "role" in mine_events[0]["choices"][0]["delta"]
    assert shape(mine_events[1]) == shape(real_events[1])
    assert shape(mine_events[-1]) == shape(real_events[-1]) and mine_events[-1]["choices"][0]["delta"] == {}
    assert [e["choices"][0]["finish_reason"] for e in mine_events][-1] == "stop"
    usage = [e for e in mine["events"] if e != "[DONE]" and not e["choices"]]
    assert len(usage) == 1 and set(usage[0]["usage"]) == set(REPLIES["chat"][1]["usage"])


def test_error_body(standin):
    status, mine = post(standin.url, {"model": "standin-chat", "messages": "kaputt"})
    assert status == 400
    assert shape(mine) == shape(REPLIES["refused"][1])


def test_embeddings_envelope(standin):
    real = REPLIES["embeddings"][1]
    mine = requests.post(standin.url + "/v1/embeddings", json={
        "model": "hash-embed", "input": ["passage: Abfertigung", "query: Urlaub"], "encoding_format": "float"},
        timeout=10).json()
    assert set(mine) == set(real)
    assert set(mine["usage"]) == set(real["usage"])
    assert [set(item) | {"embedding_length"} for item in mine["data"]] == [set(item) for item in real["data"]]
    assert [item["index"] for item in mine["data"]] == [item["index"] for item in real["data"]]


def test_the_client_reads_the_recorded_replies():
    """The real server's bodies, served as they were recorded, read by the client."""
    import http.server
    import threading

    class Replay(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self._send(200, REPLIES["models"][1])

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if not body.get("stream"):
                self._send(200, REPLIES["chat"][1])
                return
            data = b"".join(b"data: " + (e if e == "[DONE]" else json.dumps(e)).encode() + b"\r\n\r\n"
                            for e in REPLIES["chat_stream"][1]["events"])
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send(self, status, obj):
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Replay)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        from lib.llm.client import KB_TEXT
        client = OpenAIClient(OllamaConfig(url=f"http://127.0.0.1:{server.server_address[1]}", retries=0))
        assert client.has_model("qwen2.5-coder:1.5b")
        result = client.chat("qwen2.5-coder:1.5b", MESSAGES, origin=KB_TEXT)
        assert (result.content, result.prompt_eval_count, result.eval_count) == ("Vienna", 44, 2)
        chunks = list(client.chat_stream("qwen2.5-coder:1.5b", MESSAGES, origin=KB_TEXT))
        assert "".join(c.delta for c in chunks) == "Vienna" and chunks[-1].done
        assert chunks[-1].result.eval_count == 2, "no usage in the stream: one token per content event"
    finally:
        server.shutdown()
        server.server_close()
