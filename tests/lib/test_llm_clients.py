"""Both model clients — Ollama (lib/llm/client.py) and OpenAI-compatible (lib/llm/openai_client.py) — against the
stand-in, through the same calls: what the rest of the addon relies on holds for each."""
import json
import logging
import socket
import threading
import time

import pytest

from lib.llm import client as ollama
from lib.llm.client import ChatResult, OllamaConfig
from lib.llm.errors import OllamaBadResponse, OllamaCancelled, OllamaModelMissing, OllamaTimeout, OllamaUnreachable
from lib.llm.openai_client import OpenAIClient, forget_styles, response_format_for
from lib.llm.servers import Server, make_one
from lib.llm.transport import CancelToken
from lib.pii import gate as pii

EMBED = "hash-embed"
CHAT = "standin-chat"
PATHS = {"ollama": {"embed": "/api/embed", "chat": "/api/chat"},
         "openai": {"embed": "/v1/embeddings", "chat": "/v1/chat/completions"}}
NAME = {"ollama": "Ollama", "openai": "Der Modellserver"}


@pytest.fixture(params=["ollama", "openai"])
def kind(request):
    return request.param


def make(kind, url, **overrides):
    settings = dict(url=url, connect_timeout=1.0, read_timeout=5.0, retries=2, backoff=0.01)
    settings.update(overrides)
    return make_one(Server(kind, url), OllamaConfig(**settings))


@pytest.fixture
def client(kind, standin):
    c = make(kind, standin.url)
    yield c
    c.close()


def calls(standin, kind, what):
    return [e for e in standin.requests_log if e["path"] == PATHS[kind][what]]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_models_are_listed_and_found(client):
    assert client.has_model(EMBED) and client.has_model(CHAT)
    assert not client.has_model("bge-m3")
    assert client.describe()


def test_embedding_facts_give_the_dimension(client):
    assert client.embedding_facts(EMBED)[0] == 256


@pytest.mark.parametrize("n,batch", [(10, 4), (1, 32), (5, 1)])
def test_embed_batches_and_keeps_order(client, standin, kind, n, batch):
    from testing.standin import hash_embed
    texts = [f"Text Nummer {i} über Abfertigung" for i in range(n)]
    result = client.embed(EMBED, texts, batch_size=batch, origin=ollama.KB_TEXT)
    assert result.requests == -(-n // batch)
    assert [len(v) for v in result.vectors] == [256] * n
    assert result.vectors == [pytest.approx(hash_embed(t, 256)) for t in texts]
    assert result.prompt_eval_count > 0 and result.server == standin.url
    assert [e["n_inputs"] for e in calls(standin, kind, "embed")] == [min(batch, n - i) for i in range(0, n, batch)]


def test_chat_returns_content_tokens_and_server(client, standin):
    standin.script_chat(["Antwort eins"])
    result = client.chat(CHAT, [{"role": "user", "content": "x" * 70}], origin=ollama.KB_TEXT,
                         options={"temperature": 0.1, "num_predict": 50})
    assert isinstance(result, ChatResult)
    assert result.content == "Antwort eins"
    assert result.prompt_eval_count == 20 and result.eval_count == 3
    assert result.truncated is False and result.server == standin.url


def test_chat_stream_yields_deltas_and_final_result(client, standin, kind):
    reply = "Das Jahressechstel beträgt 1/6 der Bezüge. [lb-sz-02] (Stand 2026-01)"
    standin.script_chat([reply])
    chunks = list(client.chat_stream(CHAT, [{"role": "user", "content": "Frage"}], origin=ollama.KB_TEXT))
    assert "".join(c.delta for c in chunks) == reply
    assert [c.done for c in chunks] == [False] * (len(chunks) - 1) + [True]
    final = chunks[-1].result
    assert final.content == reply and final.eval_count == 18 and final.prompt_eval_count == 2
    assert calls(standin, kind, "chat")[0]["stream"] is True


def test_structured_output_reaches_the_server_as_a_schema(client, standin, kind):
    schema = {"type": "object", "properties": {"aussagen": {"type": "array"}}, "required": ["aussagen"]}
    standin.script_chat(['{"aussagen": []}'])
    assert client.chat(CHAT, [{"role": "user", "content": "Frage"}], origin=ollama.KB_TEXT,
                       response_format=schema).content == '{"aussagen": []}'
    assert calls(standin, kind, "chat")[0]["format_schema"] == schema


def test_unreachable_server_is_named_in_the_message(kind):
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(OllamaUnreachable) as info:
        make(kind, url, retries=0).embed("bge-m3", ["x"], origin=ollama.KB_TEXT)
    assert info.value.message.startswith(f"{NAME[kind]} unter {url} nicht erreichbar")
    assert "bge-m3" in info.value.message


def test_http_500_is_retried_then_bad_response(client, standin, kind):
    standin.set_fault("500")
    with pytest.raises(OllamaBadResponse) as info:
        client.embed(EMBED, ["Text"], origin=ollama.KB_TEXT)
    assert "HTTP 500" in info.value.message and info.value.status == 500
    assert len(calls(standin, kind, "embed")) == 3


def test_unknown_model_is_model_missing(client, standin):
    with pytest.raises(OllamaModelMissing):
        client.chat("fehlt", [{"role": "user", "content": "Hallo"}], origin=ollama.KB_TEXT)
    with pytest.raises(OllamaModelMissing):
        list(client.chat_stream("fehlt", [{"role": "user", "content": "Hallo"}], origin=ollama.KB_TEXT))
    assert len(standin.requests_log) == 2


def test_hang_is_a_timeout_without_retry(standin, kind):
    standin.set_fault("hang", seconds=3)
    c = make(kind, standin.url, read_timeout=0.3)
    started = time.monotonic()
    with pytest.raises(OllamaTimeout) as info:
        c.chat(CHAT, [{"role": "user", "content": "Hallo"}], origin=ollama.KB_TEXT)
    assert time.monotonic() - started < 2.0
    assert "nicht innerhalb von 0,3 s geantwortet" in info.value.message
    assert len(calls(standin, kind, "chat")) == 1


def test_stream_deadline_stops_a_slow_stream(client, standin):
    standin.script_chat(["x" * 400])
    standin.set_chat_timing(first_token_ms=0, token_ms=30)
    received = []
    started = time.monotonic()
    with pytest.raises(OllamaTimeout):
        for chunk in client.chat_stream(CHAT, [{"role": "user", "content": "Frage"}], origin=ollama.KB_TEXT,
                                        deadline=time.monotonic() + 0.4):
            received.append(chunk)
    assert time.monotonic() - started < 2.0 and 0 < len(received) < 100


@pytest.mark.parametrize("fault", ["garbage", "error_line"])
def test_bad_stream_event_after_the_first_piece(client, standin, fault):
    standin.set_fault(fault)
    standin.script_chat(["Eine längere Antwort in mehreren Stücken"])
    stream = client.chat_stream(CHAT, [{"role": "user", "content": "Frage"}], origin=ollama.KB_TEXT)
    assert next(stream).delta == "Eine"
    with pytest.raises(OllamaBadResponse):
        next(stream)


def test_cancel_ends_a_stream_and_the_server_sees_the_client_leave(client, standin):
    standin.script_chat(["x" * 400])
    standin.set_chat_timing(first_token_ms=0, token_ms=100)
    token = CancelToken()
    stream = client.chat_stream(CHAT, [{"role": "user", "content": "Frage"}], origin=ollama.KB_TEXT, cancel=token)
    next(stream)
    threading.Timer(0.2, token.cancel).start()
    started = time.monotonic()
    with pytest.raises(OllamaCancelled):
        list(stream)
    assert time.monotonic() - started < 1.0
    deadline = time.monotonic() + 2
    while not standin.aborted_streams and time.monotonic() < deadline:
        time.sleep(0.05)
    assert standin.aborted_streams


def test_requests_without_the_gate_mark_send_nothing(client, standin):
    for origin in (None, "gated", True):
        with pytest.raises(ollama.UngatedRequest):
            client.chat(CHAT, [{"role": "user", "content": "Hallo"}], origin=origin)
        with pytest.raises(ollama.UngatedRequest):
            list(client.chat_stream(CHAT, [{"role": "user", "content": "Hallo"}], origin=origin))
        with pytest.raises(ollama.UngatedRequest):
            client.embed(EMBED, ["Hallo"], origin=origin)
    assert standin.requests_log == []


def test_gated_requests_carry_no_personal_span(client, standin):
    question = "Frau Huber, SV 1237 010180: Überstunden im Juni?"
    gated = pii.gate_request(question)
    client.embed(EMBED, ["query: " + gated.query], origin=gated)
    client.chat(CHAT, [{"role": "user", "content": gated.question}], origin=gated)
    with pytest.raises(ollama.UngatedRequest):
        client.chat(CHAT, [{"role": "user", "content": gated.question + " (Huber)"}], origin=gated)
    sent = json.dumps([e.get("texts") for e in standin.requests_log], ensure_ascii=False)
    assert "Huber" not in sent and "1237 010180" not in sent and "Überstunden" in sent


def test_api_key_goes_out_as_bearer_and_nowhere_else(standin, kind, caplog):
    secret = "sk-test-9f8e7d6c5b4a"
    c = make(kind, standin.url, api_key=secret, retries=1)
    assert c.session.headers["Authorization"] == f"Bearer {secret}"
    standin.set_fault("500")
    with caplog.at_level(logging.DEBUG), pytest.raises(OllamaBadResponse) as info:
        c.chat(CHAT, [{"role": "user", "content": "Hallo"}], origin=ollama.KB_TEXT)
    assert secret not in info.value.message + info.value.detail
    assert secret not in caplog.text


# -- the OpenAI client's own mapping -----------------------------------------------------------------

def test_options_are_mapped_to_openai_fields(standin):
    c = OpenAIClient(OllamaConfig(url=standin.url))
    seen = {}
    real = c.session.request

    def spy(method, url, json=None, **kw):
        seen.update(json or {})
        return real(method, url, json=json, **kw)

    c.session.request = spy
    c.chat(CHAT, [{"role": "user", "content": "Hallo"}], origin=ollama.KB_TEXT,
           options={"temperature": 0.1, "num_predict": 77, "stop": ["\n\n"], "num_ctx": 4096, "top_k": 3})
    assert {k: seen[k] for k in ("temperature", "max_tokens", "stop")} == {"temperature": 0.1, "max_tokens": 77,
                                                                        "stop": ["\n\n"]}
    assert "num_ctx" not in seen and "options" not in seen and "top_k" not in seen


@pytest.mark.parametrize("fmt,style,expected", [
    ({"type": "object"}, "json_schema", {"type": "json_schema", "json_schema": {"name": "antwort",
                                                                                 "schema": {"type": "object"}}}),
    ({"type": "object"}, "json_object", {"type": "json_object", "schema": {"type": "object"}}),
    ("json", "json_schema", {"type": "json_object"}),
    ({"type": "object"}, "none", None),
    (None, "json_schema", None),
])
def test_response_format_styles(fmt, style, expected):
    assert response_format_for(fmt, style) == expected


def test_auto_style_falls_back_when_the_server_refuses_json_schema(standin, monkeypatch):
    """llama-cpp-python's server knows only json_object with a schema: the first refusal is remembered."""
    from testing.standin import openai_api
    real = openai_api.OpenAIRoutes._v1_chat

    def strict(self, data, mode):   # as llama-cpp-python's server answers (tests/lib/data/openai_shapes.json)
        if (data.get("response_format") or {}).get("type") == "json_schema":
            self._oai_error(500, "1 validation error: ('body', 'response_format', 'type') Input should be 'text' "
                                 "or 'json_object'", "internal_server_error")
            return
        real(self, data, mode)

    monkeypatch.setattr(openai_api.OpenAIRoutes, "_v1_chat", strict)
    forget_styles()
    c = OpenAIClient(OllamaConfig(url=standin.url + "/", retries=0))
    for _ in range(2):
        standin.script_chat(['{"a": 1}'])
        assert c.chat(CHAT, [{"role": "user", "content": "x"}], origin=ollama.KB_TEXT,
                      response_format={"type": "object"}).content == '{"a": 1}'
    styles = [(e.get("response_format") or {}).get("type") for e in standin.requests_log]
    assert styles == ["json_schema", "json_object", "json_object"]


def test_rerank_scores_come_back_in_document_order(standin):
    docs = ["Urlaub und Feiertage", "Zuschlag für Überstunden", "Überstunden"]
    for api in ("v1", "tei"):
        c = OpenAIClient(OllamaConfig(url=standin.url), rerank_api=api)
        scores = c.rerank("standin-rerank", "Überstunden Zuschlag", docs, origin=ollama.KB_TEXT).scores
        assert scores[1] > scores[2] > scores[0] == 0.0
    assert [e["path"] for e in standin.requests_log] == ["/v1/rerank", "/rerank"]


def test_rerank_refuses_an_ungated_query(standin):
    c = OpenAIClient(OllamaConfig(url=standin.url))
    gated = pii.gate_request("Herr Mag. Gruber fragt: Überstunden?")
    with pytest.raises(ollama.UngatedRequest):
        c.rerank("standin-rerank", "Herr Mag. Gruber fragt: Überstunden?", ["x"], origin=gated)
    with pytest.raises(ollama.UngatedRequest):
        c.rerank("standin-rerank", gated.query, ["Auskunft von Mag. Gruber"], origin=gated)
    assert standin.requests_log == []
    c.rerank("standin-rerank", gated.query, ["Überstunden"], origin=gated)
    assert "Gruber" not in json.dumps(standin.requests_log[0]["texts"])
