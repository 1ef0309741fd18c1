"""Tests for lib.answer_outcome: the status rule after the checks."""
import pytest

from lib.answer import outcome as o
from lib.answer.types import Violation


@pytest.mark.parametrize("violations, status, show", [
    ([], "beantwortet", "answer"),
    (["conflict_side_missing: x", "conflict_unmarked: y"], "beantwortet", "answer"),
    ([Violation("missing_stand", "€ 620")], "unsicher", "answer"),
    (["unknown_id: lb-xx-01"], "unsicher", "fallback"),
    (["value_not_in_source: € 720"], "unsicher", "fallback"),
    (["uncited_number: Es sind € 5."], "unsicher", "fallback"),
    (["no_citation: ..."], "unsicher", "fallback"),
    (["missing_stand: a", "quote_not_found: b"], "unsicher", "fallback"),
    (["some_new_check: z"], "unsicher", "fallback"),
])
def test_status_rule(violations, status, show):
    outcome = o.decide(violations)
    assert (outcome.status, outcome.show) == (status, show)
    assert bool(outcome.reason) == (status == "unsicher")


def test_the_gravest_reason_is_named_and_no_blocks_means_refusal():
    outcome = o.decide(["uncited_number: x", "unknown_id: y"])
    assert outcome.reason.startswith("Die KI-Antwort nannte Quellen")
    none = o.decide(["value_not_in_source: x"], has_blocks=False)
    assert (none.status, none.show) == ("verweigert", "refusal") and "Werte" in none.reason


def test_refusal_stays_a_refusal_unless_it_cites_unknown_ids():
    assert o.decide(["no_citation: -"], refused=True) == o.Outcome("verweigert", "refusal")
    assert o.decide(["unknown_id: x"], refused=True).show == "fallback"


def test_fallback_answer_replaces_the_notbetrieb_header():
    extractive = "**Ohne KI-Antwort (Notbetrieb):** nicht erreichbar.\n\n**T** [a-1] (Stand 2026-01)\n> Zitat"
    text = o.fallback_answer(extractive, "Die KI-Antwort war nicht lesbar.")
    assert text.startswith("**Ohne KI-Antwort:** Die KI-Antwort war nicht lesbar.")
    assert text.endswith("**T** [a-1] (Stand 2026-01)\n> Zitat") and "nicht erreichbar" not in text
    assert o.fallback_answer("Dazu enthält die Wissensbasis keine Aussage.", "x") == \
        "Dazu enthält die Wissensbasis keine Aussage."
