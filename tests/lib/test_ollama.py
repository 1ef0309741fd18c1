"""Tests of lib.llm.client against the local Ollama stand-in (hash backend only)."""
import json
import logging
import math
import socket
import time

import pytest
import requests

from lib.llm import client as ollama, tokens as ollama_tokens
from lib.llm.client import ChatResult, OllamaClient, OllamaConfig
from lib.llm.errors import OllamaBadResponse, OllamaModelMissing, OllamaTimeout, OllamaUnreachable
from testing.standin import SERVER_VERSION, OllamaStandIn, hash_embed

EMBED = "hash-embed"
CHAT = "standin-chat"




def make_client(url, **overrides):
    settings = dict(url=url, connect_timeout=1.0, read_timeout=5.0, retries=2, backoff=0.01)
    settings.update(overrides)
    return OllamaClient(OllamaConfig(**settings))


@pytest.fixture
def client(standin):
    c = make_client(standin.url)
    yield c
    c.close()


def calls(standin, path):
    return [e for e in standin.requests_log if e["path"] == path]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- fake session for shapes the stand-in never produces ------------------------

class RecordingSession:
    """Answers every request with one canned JSON body and records payloads."""

    def __init__(self, body, status=200):
        self.body = body
        self.status = status
        self.sent = []

    def request(self, method, url, json=None, timeout=None, stream=False):
        self.sent.append({"method": method, "url": url, "json": json, "timeout": timeout})
        resp = requests.Response()
        resp.status_code = self.status
        resp.url = url
        body = self.body(json) if callable(self.body) else self.body
        resp._content = body if isinstance(body, bytes) else _dumps(body)
        return resp

    def close(self):
        pass


def _dumps(obj):
    return json.dumps(obj).encode("utf-8")


# -- pure helpers -----------------------------------------------------------------

@pytest.mark.parametrize("text,tokens", [("", 0), ("a" * 7, 2), ("a" * 8, 3), ("ä" * 35, 10)])
def test_estimate_tokens_is_chars_over_3_5_rounded_up(text, tokens):
    assert ollama_tokens.estimate_tokens(text) == tokens


@pytest.mark.parametrize("evaluated,expected,num_ctx,flag", [
    (2048, 9000, 2048, True),    # far more than the window, server saw the window only
    (5000, 7400, 8192, True),    # >= 90 % of window and < 80 % evaluated
    (7300, 7400, 8192, False),   # evaluated almost all
    (1000, 4000, 8192, False),   # small prompt: cache hits must not raise the flag
    (100, None, 8192, False),    # no expectation given
])
def test_is_truncated_heuristic(evaluated, expected, num_ctx, flag):
    assert ollama_tokens.is_truncated(evaluated, expected, num_ctx) is flag


# -- metadata endpoints -------------------------------------------------------------

def test_version_tags_and_has_model(client):
    assert client.version() == SERVER_VERSION
    assert set(client.tags()) == {EMBED + ":latest", CHAT + ":latest"}
    assert client.has_model(EMBED) and client.has_model(CHAT + ":latest")
    assert not client.has_model("bge-m3")


def test_embedding_dim_from_model_info(client, standin):
    assert client.embedding_dim(EMBED) == 256
    assert calls(standin, "/api/embed") == []


def test_embedding_dim_falls_back_to_probe_embedding(client, standin, monkeypatch):
    monkeypatch.setattr(client, "show", lambda model: {"model_info": {}})
    assert client.embedding_dim(EMBED) == 256
    assert [e["n_inputs"] for e in calls(standin, "/api/embed")] == [1]


# -- errors ---------------------------------------------------------------------------

def test_refused_connection_is_unreachable_with_url_and_model():
    url = f"http://127.0.0.1:{free_port()}"
    c = make_client(url, retries=1)
    with pytest.raises(OllamaUnreachable) as info:
        c.embed("bge-m3", ["x"], origin=ollama.KB_TEXT)
    assert info.value.message.startswith(f"Ollama unter {url} nicht erreichbar")
    assert "bge-m3" in info.value.message
    assert info.value.detail  # technical cause kept for the log


def test_server_closing_connections_is_retried_then_unreachable(client, standin, caplog):
    standin.set_fault("down")
    with caplog.at_level(logging.INFO, logger=ollama._LOGGER.name), pytest.raises(OllamaUnreachable):
        client.version()
    assert len(calls(standin, "/api/version")) == 3
    # retries are logged as routine (INFO), the final failure only by whoever catches it: a cron that
    # finds no server every 15 minutes must not fill the log with warnings
    records = [r for r in caplog.records if r.name == ollama._LOGGER.name]
    assert [r.levelno for r in records] == [logging.INFO, logging.INFO]
    assert "(attempt 1/3), retrying" in records[0].getMessage()


def test_hang_raises_timeout_without_retry(standin):
    standin.set_fault("hang", seconds=3)
    c = make_client(standin.url, read_timeout=0.3)
    started = time.monotonic()
    with pytest.raises(OllamaTimeout) as info:
        c.chat(CHAT, [{"role": "user", "content": "Hallo"}], origin=ollama.KB_TEXT)
    assert time.monotonic() - started < 2.0
    assert "nicht innerhalb von 0,3 s geantwortet" in info.value.message
    assert CHAT in info.value.message
    assert len(calls(standin, "/api/chat")) == 1


@pytest.mark.parametrize("call", [
    lambda c: c.embed("bge-m3", ["Text"], origin=ollama.KB_TEXT),
    lambda c: c.show("bge-m3"),
    lambda c: c.chat("bge-m3", [{"role": "user", "content": "Hallo"}], origin=ollama.KB_TEXT),
])
def test_unknown_model_raises_model_missing_once(client, standin, call):
    with pytest.raises(OllamaModelMissing) as info:
        call(client)
    assert "Modell bge-m3 ist auf dem Ollama-Server nicht installiert (ollama pull bge-m3)." \
        in info.value.message
    assert info.value.status == 404
    assert len(standin.requests_log) == 1


def test_http_500_is_retried_then_bad_response(client, standin):
    standin.set_fault("500")
    with pytest.raises(OllamaBadResponse) as info:
        client.embed(EMBED, ["Text"], origin=ollama.KB_TEXT)
    assert "HTTP 500" in info.value.message and standin.url in info.value.message
    assert len(calls(standin, "/api/embed")) == 3  # 1 + retries


def test_http_500_once_then_success(client, standin):
    standin.set_fault("500", times=1)
    result = client.embed(EMBED, ["Text"], origin=ollama.KB_TEXT)
    assert len(result.vectors) == 1
    assert len(calls(standin, "/api/embed")) == 2


def test_http_4xx_is_not_retried(client, standin):
    with pytest.raises(OllamaBadResponse) as info:
        client.chat(EMBED, [{"role": "user", "content": "Hallo"}], origin=ollama.KB_TEXT)  # embedding-only model
    assert info.value.status == 400
    assert "does not support chat" in info.value.message
    assert len(calls(standin, "/api/chat")) == 1


@pytest.mark.parametrize("call", [
    lambda c: c.version(),
    lambda c: c.tags(),
    lambda c: c.show(EMBED),
    lambda c: c.embed(EMBED, ["Text"], origin=ollama.KB_TEXT),
    lambda c: c.chat(CHAT, [{"role": "user", "content": "Hallo"}], origin=ollama.KB_TEXT),
])
def test_malformed_json_is_bad_response(client, standin, call):
    standin.set_fault("garbage")
    with pytest.raises(OllamaBadResponse) as info:
        call(client)
    assert "unerwartete Antwort" in info.value.message
    assert "invalid JSON" in info.value.detail


@pytest.mark.parametrize("body,why", [
    ({"embeddings": [[0.1, 0.2]]}, "1 vectors for 2 inputs"),
    ({"embeddings": [[0.1, 0.2], [0.3]]}, "vector length 1 != 2"),
    ({"embeddings": [[0.1, "x"], [0.3, 0.4]]}, "not a list of numbers"),
    ({"vectors": []}, "no 'embeddings' list"),
])
def test_embed_checks_response_shape(body, why):
    c = OllamaClient(OllamaConfig(url="http://ollama.test"), session=RecordingSession(body))
    with pytest.raises(OllamaBadResponse) as info:
        c.embed("bge-m3", ["a", "b"], origin=ollama.KB_TEXT)
    assert why in info.value.detail
    assert "bge-m3" in info.value.message


def test_unknown_endpoint_404_is_not_model_missing():
    session = RecordingSession(b"404 page not found", status=404)
    c = OllamaClient(OllamaConfig(url="http://ollama.test"), session=session)
    with pytest.raises(OllamaBadResponse) as info:
        c.embed("bge-m3", ["a"], origin=ollama.KB_TEXT)
    assert not isinstance(info.value, OllamaModelMissing)
    assert "/api/embed" in info.value.message


# -- request payloads ------------------------------------------------------------------

def test_embed_payload_and_chat_options_merge():
    def answer(payload):
        if "input" in payload:
            return {"embeddings": [[1.0, 0.0]] * len(payload["input"]), "prompt_eval_count": 3}
        return {"message": {"role": "assistant", "content": "ok"}, "done": True,
                "prompt_eval_count": 5, "eval_count": 1}
    session = RecordingSession(answer)
    cfg = OllamaConfig(url="http://ollama.test/", keep_alive="10m", num_ctx=8192)
    c = OllamaClient(cfg, session=session)
    c.embed("bge-m3", ["a", "b"], origin=ollama.KB_TEXT)
    c.chat("qwen", [{"role": "user", "content": "x"}], options={"temperature": 0}, origin=ollama.KB_TEXT)
    c.chat("qwen", [{"role": "user", "content": "x"}], options={"num_ctx": 2048}, num_ctx=4096, origin=ollama.KB_TEXT)
    embed, chat1, chat2 = (s["json"] for s in session.sent)
    assert session.sent[0]["url"] == "http://ollama.test/api/embed"
    assert embed == {"model": "bge-m3", "input": ["a", "b"], "keep_alive": "10m",
                     "truncate": True, "options": {"num_ctx": 8192}}
    assert chat1["stream"] is False and chat1["think"] is False
    assert chat1["keep_alive"] == "10m"
    assert chat1["options"] == {"temperature": 0, "num_ctx": 8192}
    assert chat2["options"] == {"num_ctx": 4096}
    assert session.sent[0]["timeout"] == (cfg.connect_timeout, cfg.read_timeout)


# -- embedding -----------------------------------------------------------------------------

@pytest.mark.parametrize("n,batch", [(10, 4), (8, 4), (1, 32), (33, 32), (5, 1)])
def test_embed_batches_and_keeps_order(client, standin, n, batch):
    texts = [f"passage: Eintrag Nummer {i} über Sonderzahlungen" for i in range(n)]
    result = client.embed(EMBED, texts, batch_size=batch, origin=ollama.KB_TEXT)
    sizes = [e["n_inputs"] for e in calls(standin, "/api/embed")]
    assert result.requests == len(sizes) == math.ceil(n / batch)
    assert sum(sizes) == n and max(sizes) <= batch
    assert [pytest.approx(v, abs=1e-6) for v in result.vectors] == \
        [hash_embed(t) for t in texts]
    assert result.prompt_eval_count > 0 and result.duration_s >= 0


def test_embed_uses_configured_batch_size_and_skips_empty_input(standin):
    c = make_client(standin.url, embed_batch_size=3)
    assert c.embed(EMBED, [], origin=ollama.KB_TEXT).requests == 0
    assert c.embed(EMBED, ["a", "b", "c", "d"], origin=ollama.KB_TEXT).requests == 2
    assert [e["n_inputs"] for e in calls(standin, "/api/embed")] == [3, 1]


# -- chat --------------------------------------------------------------------------------

def test_chat_returns_scripted_content_and_counts(client, standin):
    standin.script_chat(["Antwort eins"])
    result = client.chat(CHAT, [{"role": "user", "content": "x" * 70}], origin=ollama.KB_TEXT)
    assert isinstance(result, ChatResult)
    assert result.content == "Antwort eins"
    assert result.prompt_eval_count == 20
    assert result.eval_count == math.ceil(len("Antwort eins") / 4)
    assert result.truncated is False
    assert result.raw["done"] is True


def test_texts_over_context_spreads_the_evaluated_tokens_by_length():
    texts = ["a" * 100, "b" * 1000, "c" * 100]
    # 1200 chars, 600 tokens evaluated: 0.5 tokens a char, the long text holds 500
    assert ollama_tokens.texts_over_context(texts, 600, 500) == [1]
    assert ollama_tokens.texts_over_context(texts, 600, 512) == []
    assert ollama_tokens.texts_over_context(texts, 600, None) == []
    assert ollama_tokens.texts_over_context(texts, 0, 500) == []
    # one text cut to the context: evaluated exactly the context
    assert ollama_tokens.texts_over_context(["x" * 5000], 512, 512) == [0]


def test_embed_flags_texts_cut_to_the_models_context(client, standin, caplog):
    dim, context = client.embedding_facts(EMBED)
    assert (dim, context) == (256, 8192)  # the stand-in's hash model reports both like Ollama's /api/show
    assert [e["path"] for e in standin.requests_log].count("/api/show") == 1, "one /api/show for both"
    long_text = "Wort " * 9000   # 9,002 tokens for the stand-in: cut to 8,192
    texts = ["kurz", "kurz", "kurz", long_text, "Abfertigung neu"]
    with caplog.at_level(logging.INFO, logger=ollama._LOGGER.name):
        result = client.embed(EMBED, texts, batch_size=2, context_tokens=context, origin=ollama.KB_TEXT)
    assert result.prompt_eval_count == 3 + 3 + 3 + 8192 + 4
    assert result.truncated == [3]
    assert any("1 of 5 texts reached its context of 8192 tokens" in r.getMessage() for r in caplog.records)
    assert client.embed(EMBED, texts, batch_size=1, context_tokens=context, origin=ollama.KB_TEXT).truncated == [3]
    assert client.embed(EMBED, texts, batch_size=2, origin=ollama.KB_TEXT).truncated == [], "no context given: nothing to judge"
    assert client.embed(EMBED, texts[:3], batch_size=2, context_tokens=context, origin=ollama.KB_TEXT).truncated == []


def test_chat_flags_truncated_prompt_and_logs_warning(client, caplog):
    text = "Wort " * 800  # 4000 chars, about 1143 tokens
    expected = ollama_tokens.estimate_tokens(text)
    with caplog.at_level(logging.WARNING, logger=ollama._LOGGER.name):
        result = client.chat(CHAT, [{"role": "user", "content": text}], num_ctx=512,
                             expected_prompt_tokens=expected, origin=ollama.KB_TEXT)
    assert result.prompt_eval_count == 512  # the stand-in caps like Ollama
    assert result.truncated is True
    assert any("truncated" in r.getMessage() for r in caplog.records)
    roomy = client.chat(CHAT, [{"role": "user", "content": text}], num_ctx=8192,
                        expected_prompt_tokens=expected, origin=ollama.KB_TEXT)
    assert roomy.truncated is False


# -- streaming ------------------------------------------------------------------------------

def test_chat_stream_yields_deltas_and_final_result(client, standin):
    reply = "Das Jahressechstel beträgt 1/6 der Bezüge. [lb-sz-02] (Stand 2026-01)"
    standin.script_chat([reply])
    chunks = list(client.chat_stream(CHAT, [{"role": "user", "content": "Frage"}], origin=ollama.KB_TEXT))
    assert "".join(c.delta for c in chunks) == reply
    assert [c.done for c in chunks] == [False] * (len(chunks) - 1) + [True]
    final = chunks[-1].result
    assert final is not None and final.content == reply
    assert final.eval_count == len(chunks) - 1 == math.ceil(len(reply) / 4)
    assert all(c.result is None for c in chunks[:-1])
    assert calls(standin, "/api/chat")[0]["stream"] is True


@pytest.mark.parametrize("fault,detail", [("garbage", "not JSON"), ("error_line", "runner")])
def test_chat_stream_bad_line_raises_after_first_chunk(client, standin, fault, detail):
    standin.set_fault(fault)
    standin.script_chat(["Eine längere Antwort in mehreren Stücken"])
    stream = client.chat_stream(CHAT, [{"role": "user", "content": "Frage"}], origin=ollama.KB_TEXT)
    first = next(stream)
    assert first.delta == "Eine" and not first.done
    with pytest.raises(OllamaBadResponse) as info:
        next(stream)
    assert detail in info.value.detail or detail in info.value.message


def test_chat_stream_deadline_stops_slow_stream(client, standin):
    standin.script_chat(["x" * 400])  # 100 tokens, 3 s in all
    standin.set_chat_timing(first_token_ms=0, token_ms=30)
    # 0.8 s: under the parallel suites of the test command the first token may take a few hundred ms
    started = time.monotonic()
    received = []
    with pytest.raises(OllamaTimeout):
        for chunk in client.chat_stream(CHAT, [{"role": "user", "content": "Frage"}],
                                        deadline=time.monotonic() + 0.8, origin=ollama.KB_TEXT):
            received.append(chunk)
    assert time.monotonic() - started < 2.0
    assert 0 < len(received) < 100


def test_chat_stream_deadline_when_server_hangs(client, standin):
    standin.set_fault("hang", seconds=3)
    started = time.monotonic()
    with pytest.raises(OllamaTimeout):
        list(client.chat_stream(CHAT, [{"role": "user", "content": "Frage"}],
                                deadline=time.monotonic() + 0.3, origin=ollama.KB_TEXT))
    assert time.monotonic() - started < 2.0


def test_chat_stream_model_missing(client):
    with pytest.raises(OllamaModelMissing):
        list(client.chat_stream("llama-fehlt", [{"role": "user", "content": "Frage"}], origin=ollama.KB_TEXT))


# --- the personal-data gate's mark (lib/pii/gate.py) -------------------------------------------------
def test_requests_without_the_gate_mark_are_refused_before_sending(standin):
    client = OllamaClient(OllamaConfig(url=standin.url))
    with pytest.raises(TypeError):
        client.chat(CHAT, [{"role": "user", "content": "Hallo"}])          # the mark is a required argument
    with pytest.raises(TypeError):
        client.embed(EMBED, ["Hallo"])
    for origin in (None, "gated", True):
        with pytest.raises(ollama.UngatedRequest):
            client.chat(CHAT, [{"role": "user", "content": "Hallo"}], origin=origin)
        with pytest.raises(ollama.UngatedRequest):
            list(client.chat_stream(CHAT, [{"role": "user", "content": "Hallo"}], origin=origin))
        with pytest.raises(ollama.UngatedRequest):
            client.embed(EMBED, ["Hallo"], origin=origin)
    assert standin.requests_log == [], "nothing was sent"


def test_gated_requests_carry_only_the_masked_text(standin):
    from lib.pii import gate as pii
    client = OllamaClient(OllamaConfig(url=standin.url))
    gated = pii.gate_request("Frau Huber, SV 1237 010180: Überstunden im Juni?")
    assert client.embed(EMBED, ["query: " + gated.query], origin=gated).requests == 1
    with pytest.raises(ollama.UngatedRequest):
        client.embed(EMBED, ["Frau Huber, SV 1237 010180: Überstunden im Juni?"], origin=gated)
    with pytest.raises(ollama.UngatedRequest):
        client.embed(EMBED, ["query: " + gated.query, "eine andere Frage"], origin=gated)
    messages = [{"role": "system", "content": "Regeln"}, {"role": "user", "content": gated.question}]
    assert client.chat(CHAT, messages, origin=gated).content
    leaked = [{"role": "system", "content": "Regeln"},
              {"role": "user", "content": gated.question + " (Huber)"}]
    with pytest.raises(ollama.UngatedRequest):
        client.chat(CHAT, leaked, origin=gated)
    assert [e["path"] for e in standin.requests_log] == ["/api/embed", "/api/chat"]
