"""Tests for lib/answer/citations.py: [id] extraction, refusal detection, removal of ids not retrieved."""
import pytest

from lib.answer.citations import CITATION_RE, extract_citations, is_refusal, strip_unknown_citations
from lib.answer.types import REFUSAL_TEXT


def test_extract_citations_handles_multi_id_brackets():
    answer = ("Die Quote [LB-ATZ-07] gilt [lb-atz-07, wiku-sv-03]; vgl. [lb-a-01; lb-b-02] "
              "und [1], [siehe oben], [Stand 2026-01].")
    assert extract_citations(answer) == ["lb-atz-07", "wiku-sv-03", "lb-a-01", "lb-b-02"]
    assert CITATION_RE.search("[wiku-sv-03]")
    assert not CITATION_RE.search("[Hinweis]")


@pytest.mark.parametrize("answer, expected", [
    (REFUSAL_TEXT, True),
    ("**Dazu enthält die Wissensbasis keine Aussage.** Verwandt ist das Thema Urlaub.", True),
    ("Die Wissensbasis enthält dazu leider keine Angaben.", True),
    ("Dazu enthält die Wissensbasis keine Aussage. Verwandt: [lb-url-01].", True),
    ("Die Quote beträgt 28,5 % [lb-atz-07]. Zu Lehrlingen enthält die Wissensbasis keine Aussage.", False),
    ("Die Quote beträgt 28,5 % [lb-atz-07] (Stand 2026-01).", False),
])
def test_is_refusal(answer, expected):
    assert is_refusal(answer) is expected


def test_strip_unknown_citations_keeps_only_retrieved_ids():
    text = "Satz eins [lb-a-01]. Satz zwei [lb-x-99]. Beide [lb-a-01, lb-y-02]."
    cleaned, removed = strip_unknown_citations(text, ["lb-a-01"])
    assert removed == ["lb-x-99", "lb-y-02"]
    assert set(extract_citations(cleaned)) == {"lb-a-01"}
    assert "[nicht belegt]" in cleaned
    assert strip_unknown_citations(text, ["lb-a-01", "lb-x-99", "lb-y-02"]) == (text, [])
