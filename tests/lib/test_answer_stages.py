"""lib/answer/stages.py against the stand-in: the real client, the real gate, the stand-in's rerank and rewrite rules."""
import json
import time
from dataclasses import dataclass, field

from lib.llm import client as ollama, errors as ollama_errors
from lib.pii import gate as pii
from lib.answer import stages
from lib.answer.respond import PreparedQuestion
from lib.answer.types import ContextBlock
from lib.search.fusion import EntryResult
from testing.standin.responder import rerank_answer, rewrite_answer

INFO = {
    "lb-pp-01": ("Pendlerpauschale", "Die Pendlerpauschale steht bei weitem Arbeitsweg zu."),
    "lb-sz-01": ("Sonderzahlungen", "Urlaubszuschuss und Weihnachtsremuneration werden begünstigt besteuert."),
    "lb-dw-01": ("Dienstwagen", "Der Sachbezug für den Dienstwagen beträgt 2 % der Anschaffungskosten."),
}


@dataclass
class Retrieval:
    entries: list
    entry_info: dict
    ollama_error: object = None
    timings: dict = field(default_factory=dict)
    degraded: str | None = None

    @property
    def entry_ids(self):
        return [e.entry_id for e in self.entries]


def settings(url, **kw):
    return dict({"ollama_url": url, "chat_model": "standin-chat", "num_ctx": 8192, "top_k": 2, "rerank": True,
                 "query_rewrite": True, "rerank_depth": 20, "connect_timeout": 2.0, "read_timeout": 10.0,
                 "keep_alive": "1m", "embed_batch_size": 8, "answer_time_limit": 20.0}, **kw)


def make_client(s):
    return ollama.OllamaClient(ollama.OllamaConfig(url=s["ollama_url"], retries=0, read_timeout=s["read_timeout"]))


def prepared_for(url, question, **kw):
    gated = pii.gate_request(question)
    prepared = PreparedQuestion(question=gated.question, query=gated.query, history=[], settings=settings(url, **kw),
                                texts={}, started=time.perf_counter(), gated=gated)
    entries = [EntryResult(i, 1.0 - n / 10, [n], "zusammenfassung") for n, i in enumerate(INFO)]
    prepared.retrieval = Retrieval(entries=entries + [EntryResult("lb-x-09", 0.0, [], "", expansion=True)],
                                   entry_info={i: {"title": t, "legal_bases": ["§ 16 EStG"]} for i, (t, _s) in INFO.items()}
                                   | {"lb-x-09": {"title": "Verweis", "legal_bases": []}})
    prepared.summaries = {n: {"kb_id": i, "section_key": "zusammenfassung", "position": 1, "text": s}
                          for n, (i, (_t, s)) in enumerate(INFO.items())}
    prepared.all_blocks = [ContextBlock(entry_id=i, title=t, stand="2025-01", topic="", source="", heading_path="Z",
                                        text=s, section_key="zusammenfassung", score=1.0 - n / 10)
                           for n, (i, (t, s)) in enumerate(list(INFO.items()) + [("lb-x-09", ("Verweis", "Siehe."))])]
    prepared.plan = {"system": "SYSTEM", "max_blocks": 24, "max_chars": 24000}
    prepared.pending = True
    return prepared


def chats(standin):
    return [r for r in standin.requests_log if r["path"] == "/api/chat"]


def test_rerank_keeps_the_models_best_top_k_and_builds_the_context(standin):
    prepared = prepared_for(standin.url, "Wie hoch ist der Sachbezug für den Dienstwagen?")
    outcome = stages.rerank_prepared(prepared, make_client)
    [request] = chats(standin)
    assert request["format_schema"]["properties"]["reihenfolge"]["items"]["enum"] == list(INFO)
    assert "<kandidaten>" in request["texts"][-1] and all(f"[{i}]" in request["texts"][-1] for i in INFO)
    assert "[lb-x-09]" not in request["texts"][-1], "expansions are not reranked"
    assert outcome.order[0] == "lb-dw-01" and outcome.status == "ok"
    # the best two of the model's order, the expansion behind them; blocks and messages of those only
    assert prepared.retrieval.entry_ids == ["lb-dw-01", "lb-pp-01", "lb-x-09"]
    assert [b.entry_id for b in prepared.blocks] == ["lb-dw-01", "lb-pp-01", "lb-x-09"]
    user = prepared.messages[-1]["content"]
    assert user.index("[lb-dw-01]") < user.index("[lb-pp-01]") and "lb-sz-01" not in user
    assert prepared.messages[0] == {"role": "system", "content": "SYSTEM"}
    assert "<frage>\nWie hoch ist der Sachbezug für den Dienstwagen?\n</frage>" in user
    assert prepared.timings["rerank_ms"] > 0 and not prepared.pending
    assert stages.rerank_prepared(prepared, make_client) is None and len(chats(standin)) == 1, "done once"


def test_rerank_garbage_or_http_500_keeps_the_fused_order(standin):
    for fault in ("garbage", "500"):
        standin.reset()
        if fault == "garbage":
            standin.script_chat(["das ist kein JSON"])
        else:
            standin.set_fault("500", paths=["/api/chat"], times=1)
        prepared = prepared_for(standin.url, "Wie hoch ist der Sachbezug für den Dienstwagen?")
        outcome = stages.rerank_prepared(prepared, make_client)
        assert outcome.fell_back, fault
        assert prepared.retrieval.entry_ids == ["lb-pp-01", "lb-sz-01", "lb-x-09"], fault
        assert prepared.messages and "[lb-pp-01]" in prepared.messages[-1]["content"]


def test_rerank_is_skipped_when_the_server_failed_already():
    prepared = prepared_for("http://127.0.0.1:9", "Dienstwagen?")
    prepared.retrieval.ollama_error = ollama_errors.OllamaUnreachable("weg")

    def no_client(_s):
        raise AssertionError("no request to a server that is down")
    outcome = stages.rerank_prepared(prepared, no_client)
    assert (outcome.status, outcome.reason) == ("fallback", "server_unavailable")
    assert prepared.retrieval.entry_ids == ["lb-pp-01", "lb-sz-01", "lb-x-09"]


def test_rewrite_searches_the_rewrite_and_keeps_the_question(standin):
    prepared = prepared_for(standin.url, "Was kostet das Firmenauto privat?")
    outcome = stages.rewrite_query(prepared, make_client)
    assert outcome.status == "ok" and "Dienstwagen Sachbezug" in prepared.search_query
    assert prepared.question == prepared.query == "Was kostet das Firmenauto privat?"
    assert prepared.timings["rewrite_ms"] > 0
    [request] = chats(standin)
    assert request["format_schema"] == stages.query_rewrite.response_schema()


def test_rewrite_off_or_failing_leaves_the_query(standin):
    prepared = prepared_for(standin.url, "Was kostet das Firmenauto privat?", query_rewrite=False)
    assert stages.rewrite_query(prepared, make_client) is None and not chats(standin)
    standin.set_fault("down", paths=["/api/chat"])
    prepared = prepared_for(standin.url, "Was kostet das Firmenauto privat?")
    outcome = stages.rewrite_query(prepared, make_client)
    assert outcome.fell_back and prepared.search_query is None


def test_standin_rules_for_both_prompts():
    from lib.search import rewrite as query_rewrite, rerank
    cands = [rerank.Candidate("a-1", "Pendlerpauschale", "Arbeitsweg"),
             rerank.Candidate("b-2", "Dienstwagen", "Sachbezug Dienstwagen")]
    messages = rerank.build_messages("Sachbezug Dienstwagen?", cands)
    assert json.loads(rerank_answer(messages, rerank.response_schema(["a-1", "b-2"]))) == {"reihenfolge": ["b-2", "a-1"]}
    assert json.loads(rerank_answer(messages, rerank.response_schema(["a-1"]))) == {"reihenfolge": ["a-1"]}
    messages = query_rewrite.build_messages("Und mit 2 Kindern?", [{"role": "user", "content": "Pendlerpauschale"}])
    assert json.loads(rewrite_answer(messages, {}))["suchanfrage"] == "Und mit 2 Kindern Pendlerpauschale"
