"""One entry-id pattern: the importer accepts exactly what the citation extractor and the panel cite."""
import pathlib
import re

import pytest

from lib.kb import format as kb_format
from lib.answer import citations

JS = pathlib.Path(__file__).resolve().parents[2] / "static" / "src" / "markdown.js"


def test_panel_uses_the_same_pattern():
    match = re.search(r'export const ENTRY_ID_PATTERN = "([^"]+)";', JS.read_text(encoding="utf-8"))
    assert match, "markdown.js exports ENTRY_ID_PATTERN"
    assert match.group(1) == kb_format.ENTRY_ID


@pytest.mark.parametrize("kb_id", ["lb-sz-01", "2024-lohn-01", "9a-b", "a1-2b-3c"])
def test_every_importable_id_can_be_cited(kb_id):
    assert kb_format.ID_RE.match(kb_id)
    assert citations.extract_citations(f"Der Wert gilt [{kb_id}].") == [kb_id]


def test_a_made_up_digit_first_id_is_stripped():
    text, removed = citations.strip_unknown_citations("Es gilt € 100 [2024-x-01] und € 5 [lb-a-01].", ["lb-a-01"])
    assert removed == ["2024-x-01"]
    assert "2024-x-01" not in text and "[lb-a-01]" in text


@pytest.mark.parametrize("not_an_id", ["Stand 2024-01", "2026-01", "nur-text mit Leerzeichen", "-a-b", "a--b"])
def test_text_in_brackets_that_is_no_id_is_not_a_citation(not_an_id):
    assert citations.extract_citations(f"siehe [{not_an_id}]") == []
