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


def test_ids_the_importer_accepts_are_cited_dates_are_not():
    from lib.kb.format import ID_RE

    for entry_id in ("lb-atz-07", "9x-b-02", "2024a-lohn-1", "a-1"):
        assert ID_RE.match(entry_id), entry_id
        assert extract_citations(f"Wert [{entry_id}] (Stand 2025-01).") == [entry_id]
    for not_an_id in ("2026-01", "2025-01-31", "13-14"):
        assert not ID_RE.match(not_an_id)
        assert extract_citations(f"Stand [{not_an_id}].") == []
    text = "Beide [9x-b-02, lb-a-01], nicht [2026-01]."
    assert strip_unknown_citations(text, ["lb-a-01"]) == ("Beide [lb-a-01], nicht [2026-01].", ["9x-b-02"])


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
