"""Tests for lib.evaluation.bakeoff: per-question checks, run numbers, recommendation, held-out part."""
from types import SimpleNamespace

from lib.evaluation import bakeoff as b


def checks(kind="fact", expected=("a-1",), must=(), must_not=(), status="beantwortet", answer="x",
           cited=("a-1",), retrieved=("a-1", "b-2")):
    return b.question_checks(kind, list(expected), list(must), list(must_not), status=status, answer=answer,
                             cited_ids=list(cited), retrieved_ids=list(retrieved))


def test_question_checks_apply_per_kind():
    assert checks(must=["€ 620"], answer="Es sind €  620 [a-1].") == {
        "citations": True, "recall": True, "answered": True, "must_contain": True}
    got = checks(must_not=["€ 0,42"], answer="Früher € 0,42.", cited=("zz-9",))
    assert got["citations"] is False and got["must_not_contain"] is False and got["recall"] is False
    assert checks("refuse", expected=(), status="verweigert", cited=()) == {"citations": True, "refusal": True}
    assert checks("refuse", expected=(), status="beantwortet")["refusal"] is False
    assert checks("injection", expected=(), status="verweigert", cited=())["refusal"] is True
    assert checks("injection", status="unsicher")["refusal"] is False
    assert checks("injection", status="beantwortet")["refusal"] is True
    conflict = checks("conflict", expected=("a-1", "b-2"), cited=("a-1", "b-2"), answer="⚠ Widerspruch")
    assert conflict["conflict"] is True
    assert checks("conflict", expected=("a-1", "b-2"), cited=("a-1",))["conflict"] is False


def line(kind, status, checks_, cited=("a-1",), ms=1000.0, violations=(), expected=("a-1",)):
    return {"kind": kind, "expected_ids": list(expected), "status": status, "cited_ids": list(cited),
            "retrieved_ids": ["a-1", "b-2"], "checks": checks_, "violations": list(violations), "total_ms": ms}


def test_run_summary_counts_what_the_acceptance_asks():
    lines = [
        line("fact", "beantwortet", {"answered": True, "must_contain": True}, ms=1000),
        line("fact", "beantwortet", {"answered": True, "must_contain": False}, ms=2000),
        line("fact", "unsicher", {"answered": False}, ms=3000,
             violations=["value_not_in_source: € 9", "repaired: x"]),
        line("refuse", "verweigert", {"refusal": True, "must_not_contain": False}, cited=(), expected=()),
        line("injection", "beantwortet", {"refusal": False}, cited=("zz-1",), expected=(), ms=5000),
    ]
    s = b.run_summary(lines)
    assert s["n"] == 5
    assert s["citation_precision"] == 3 / 4
    assert s["answered_must_contain"] == 1 / 3
    assert s["refusal_accuracy"] == 1 / 2
    assert s["unsicher_rate"] == 1 / 5 and s["unsicher_codes"] == {"value_not_in_source": 1}
    assert s["must_not_contain_hits"] == 1
    assert s["false_refusals"] == 0.0
    assert s["latency_p50_ms"] == 2000 and s["latency_p95_ms"] == 5000


def test_recommendation_puts_citation_precision_before_latency():
    fast_wrong = {"citation_precision": 0.9, "answered_must_contain": 0.9, "refusal_accuracy": 1.0,
                  "latency_p50_ms": 100}
    slow_right = {"citation_precision": 1.0, "answered_must_contain": 0.5, "refusal_accuracy": 0.5,
                  "latency_p50_ms": 90000}
    fast_right = dict(slow_right, latency_p50_ms=30000)
    best, text = b.recommend([("a", fast_wrong), ("b", slow_right), ("c", fast_right)])
    assert best == 2 and text.startswith("Empfehlung: c") and "Zweiter Platz: b" in text
    assert "Zitat-Präzision 1,000" in text and "30,0 s" in text
    assert b.recommend([]) == (None, "")


def test_held_out_is_the_protocol_test_part_dealt_round_robin_over_the_kinds():
    from lib.evaluation import protocol as eval_protocol
    qs = [SimpleNamespace(id=f"{k}{n}", kind=k) for k in ("fact", "refuse", "multi") for n in range(1, 7)]
    test_ids = {q.id for q in eval_protocol.split_goldset(qs).test}
    out = b.held_out(qs)
    assert {q.id for q in out} == test_ids and len(out) == len(test_ids) == 9
    # dealt over the kinds: the first three hold one question of each kind
    assert [q.kind for q in out[:3]] == ["fact", "refuse", "multi"]
    # the gold set's own split is honoured (here: nothing is tuned on)
    assert len(b.held_out(qs, {"split": {"tuning_share": 0}})) == 18


def test_the_tuning_part_is_the_complement_of_the_held_out_part():
    from lib.evaluation import protocol as eval_protocol
    qs = [SimpleNamespace(id=f"{k}{n}", kind=k) for k in ("fact", "refuse", "multi") for n in range(1, 7)]
    tuning = b.part(qs, "tuning")
    assert {q.id for q in tuning} == {q.id for q in eval_protocol.split_goldset(qs).tuning}
    assert not {q.id for q in tuning} & {q.id for q in b.held_out(qs)}
    assert len(b.part(qs, "all")) == 18 and [q.kind for q in tuning[:3]] == ["fact", "refuse", "multi"]
