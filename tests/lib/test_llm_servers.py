"""Several model servers (lib/llm/servers.py): failover, time limit, cool-down, load spreading, the embedding
servers' consistency — with two stand-ins, Ollama and OpenAI-compatible mixed."""
import threading
import time

import pytest

from lib.llm import client as ollama, servers
from lib.llm.client import OllamaConfig
from lib.llm.errors import OllamaCancelled, OllamaModelMissing, OllamaUnreachable, OllamaBadResponse
from lib.llm.servers import InconsistentServers, Server, ServerPool, parse_servers
from lib.llm.transport import CancelToken
from testing.standin import OllamaStandIn

CHAT, EMBED = "standin-chat", "hash-embed"
PATH = {"ollama": "/api/chat", "openai": "/v1/chat/completions"}


@pytest.fixture
def second():
    standin = OllamaStandIn(embed_models={EMBED: "hash"}, request_overhead_ms=0).start()
    yield standin
    standin.stop()


@pytest.fixture(autouse=True)
def fresh_health():
    servers.reset_health()
    yield
    servers.reset_health()


def pool(first, second, kinds=("openai", "ollama"), **kw):
    config = OllamaConfig(url="unused", connect_timeout=1.0, read_timeout=10.0, retries=0)
    chat = [Server(kinds[0], first.url), Server(kinds[1], second.url)]
    return ServerPool(kw.pop("embedding", chat), chat, config, **kw)


def answer(p, deadline_s=6.0, cancel=None):
    chunks = list(p.chat_stream(CHAT, [{"role": "user", "content": "Frage"}], origin=ollama.KB_TEXT,
                                deadline=time.monotonic() + deadline_s, cancel=cancel))
    return "".join(c.delta for c in chunks), chunks[-1].result


def chats(standin):
    return [e for e in standin.requests_log if e["path"] in PATH.values()]


def test_parse_servers():
    assert parse_servers("openai http://a:8000/\n\n# note\nhttp://b:11434") == [
        Server("openai", "http://a:8000"), Server("ollama", "http://b:11434")]
    assert parse_servers("tei https://r", "openai", servers.RERANK_KINDS) == [Server("tei", "https://r")]
    for bad in ("vllm http://a", "openai a:8000", "openai http://a extra"):
        with pytest.raises(ValueError):
            parse_servers(bad)
    with pytest.raises(ValueError) as info:
        parse_servers("openai http://user:secret@a:8000 x")
    assert "secret" not in str(info.value)


@pytest.mark.parametrize("fault", ["down", "hang", "500"])
def test_the_answer_streams_from_the_second_server_when_the_first_fails(standin, second, fault):
    standin.set_fault(fault, seconds=30)
    second.script_chat(["Antwort vom zweiten Server [lb-sz-01]."])
    p = pool(standin, second)
    started = time.monotonic()
    text, result = answer(p, deadline_s=6.0)
    elapsed = time.monotonic() - started
    assert text == "Antwort vom zweiten Server [lb-sz-01]."
    assert result.server == second.url
    assert elapsed < 6.0, elapsed          # within the time limit: a hanging first server gets half of it
    assert len(chats(second)) == 1
    state = {s["url"]: s for s in p.health()["chat"]}
    assert not state[standin.url]["ok"] and state[second.url]["ok"] and state[second.url]["answers"] == 1
    # the failed server is tried last during its cool-down
    standin.set_fault(None)
    second.script_chat(["Wieder der zweite."])
    assert answer(p)[1].server == second.url
    p.close()


def test_all_servers_down_raises_the_failure_as_with_one_server(standin, second):
    standin.set_fault("down")
    second.set_fault("500")
    with pytest.raises((OllamaUnreachable, OllamaBadResponse)):
        answer(pool(standin, second))
    assert len(chats(standin)) == 1 and len(chats(second)) == 1


def test_chat_load_is_spread_over_healthy_servers(standin, second):
    p = pool(standin, second, kinds=("ollama", "ollama"))
    for _ in range(4):
        p.chat(CHAT, [{"role": "user", "content": "Frage"}], origin=ollama.KB_TEXT)
    assert (len(chats(standin)), len(chats(second))) == (2, 2)


def test_a_refused_request_is_not_moved(standin, second):
    p = pool(standin, second, kinds=("ollama", "ollama"))
    with pytest.raises(OllamaModelMissing):
        p.chat("fehlt", [{"role": "user", "content": "x"}], origin=ollama.KB_TEXT)
    with pytest.raises(ollama.UngatedRequest):
        p.chat(CHAT, [{"role": "user", "content": "x"}], origin=None)
    assert len(chats(standin)) + len(chats(second)) == 1


def test_a_failure_after_the_first_piece_is_not_moved(standin, second):
    standin.set_fault("error_line")
    second.set_fault("error_line")
    standin.script_chat(["Eine längere Antwort in Stücken"])
    second.script_chat(["Eine längere Antwort in Stücken"])
    with pytest.raises(OllamaBadResponse):
        answer(pool(standin, second))
    assert len(chats(standin)) + len(chats(second)) == 1


def test_the_callers_cancel_still_ends_the_stream(standin, second):
    standin.script_chat(["x" * 400])
    second.script_chat(["x" * 400])
    standin.set_chat_timing(token_ms=100)
    second.set_chat_timing(token_ms=100)
    token = CancelToken()
    threading.Timer(0.3, token.cancel).start()
    started = time.monotonic()
    with pytest.raises(OllamaCancelled):
        answer(pool(standin, second), cancel=token)
    assert time.monotonic() - started < 1.5


def test_embedding_fails_over_and_the_servers_must_agree(standin, second):
    p = pool(standin, second)
    standin.set_fault("500")
    result = p.embed(EMBED, ["query: Abfertigung"], origin=ollama.KB_TEXT)
    assert result.server == second.url
    standin.set_fault(None)
    assert p.embedding_facts(EMBED)[0] == 256
    p.close()


def test_embedding_servers_with_different_models_are_refused(standin):
    other = OllamaStandIn(embed_models={EMBED: "hash:128"}, request_overhead_ms=0).start()
    try:
        p = pool(standin, other, kinds=("ollama", "openai"))
        with pytest.raises(InconsistentServers) as info:
            p.embedding_facts(EMBED)
        assert "verschiedene Dimensionen" in info.value.message and other.url in info.value.message
    finally:
        other.stop()


def test_same_dimension_but_other_vectors_is_refused(standin, second, monkeypatch):
    p = pool(standin, second, kinds=("ollama", "ollama"))
    other = p.client(Server("ollama", second.url))
    real = other.embed

    def another_model(*args, **kw):   # same length, other vectors
        result = real(*args, **kw)
        result.vectors = [v[1:] + v[:1] for v in result.vectors]
        return result

    monkeypatch.setattr(other, "embed", another_model)
    with pytest.raises(InconsistentServers) as info:
        p.embedding_facts(EMBED)
    assert "verschiedene Vektoren" in info.value.message


def test_rerank_fails_over(standin, second):
    config = OllamaConfig(url="unused", retries=0)
    chat = [Server("ollama", standin.url)]
    p = ServerPool(chat, chat, config, rerank=[Server("openai", standin.url), Server("tei", second.url)])
    standin.set_fault("500", paths=["/v1/rerank"])
    result = p.rerank("standin-rerank", "Überstunden", ["Urlaub", "Überstunden"], origin=ollama.KB_TEXT)
    assert result.server == second.url and result.scores[1] > result.scores[0]


def test_has_model_looks_at_chat_and_embedding_servers(standin):
    other = OllamaStandIn(embed_models={"nur-embed": "hash"}, chat_models=("nur-chat",), request_overhead_ms=0).start()
    try:
        config = OllamaConfig(url="unused", retries=0)
        p = ServerPool([Server("openai", other.url)], [Server("ollama", standin.url)], config)
        assert p.has_model(CHAT) and p.has_model("nur-embed")
        assert not p.has_model("fehlt")
    finally:
        other.stop()
