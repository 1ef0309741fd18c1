"""Tests for lib/search/followup.py: follow-up questions become standalone retrieval queries."""
import pytest

from lib.search.followup import standalone_query


@pytest.mark.parametrize("followup, earlier, expected_term", [
    ("Und für Arbeiter?", "Wie hoch ist die Urlaubsersatzleistung für Angestellte?", "Urlaubsersatzleistung"),
    ("Was gilt da ab 2026?", "Wie hoch ist die Geringfügigkeitsgrenze?", "Geringfügigkeitsgrenze"),
    ("und wie hoch ist er?", "Wie wird der Urlaubszuschuss besteuert?", "Urlaubszuschuss"),
])
def test_standalone_query_enriches_followups(followup, earlier, expected_term):
    history = [{"role": "user", "content": earlier}, {"role": "assistant", "content": "Antwort [lb-x-01]."}]
    query = standalone_query(followup, history)
    assert query.startswith(followup)
    assert expected_term in query
    assert "Antwort" not in query  # assistant text is not mined


def test_standalone_query_leaves_standalone_questions_unchanged():
    history = [{"role": "user", "content": "Wie hoch ist die Ersatzquote des AMS?"}]
    for question in ("Wie hoch ist das Jahressechstel bei monatlich gleichem Bezug?",
                     "Gibt es eine Obergrenze für das Kilometergeld?"):
        assert standalone_query(question, history) == question
    assert standalone_query("Und für Arbeiter?", []) == "Und für Arbeiter?"


def test_standalone_query_is_bounded():
    long_question = " ".join(f"Begriff{i}" for i in range(60)) + "?"
    query = standalone_query("Und dafür?", [{"role": "user", "content": long_question}])
    assert len(query) <= len("Und dafür?") + 150
    assert len(query.split()) <= 2 + 6
