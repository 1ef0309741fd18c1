"""Tests for lib/text/md_blocks.py: the Markdown rules shared by the format parser, the chunker and the answers."""
from lib.text import md_blocks as md


def test_heading_levels_indent_and_closing_sequence():
    assert md.heading("## Kernwerte & Fristen") == "Kernwerte & Fristen"
    assert md.heading("## Kernwerte ##", 2) == "Kernwerte"
    assert md.heading("## C# und F#", 2) == "C# und F#"          # a "#" inside the text stays
    assert md.heading("### Teil", 2) is None and md.heading("### Teil", 3) == "Teil"
    assert md.heading("##Kein Abstand") is None and md.heading("####### sieben") is None
    # the KB format writes headings at the line start; rendered Markdown also shows indented ones
    assert md.heading("  ## eingerückt") is None
    assert md.heading("  ## eingerückt", indented=True) == "eingerückt"
    assert md.heading("    ## Code", indented=True) is None     # four spaces: an indented code line


def test_fences_open_and_close_per_commonmark():
    assert md.FENCE_RE.match("```python").group(1) == "```"
    assert md.closes_fence("```", "```") and md.closes_fence("  ````  ", "```")
    assert not md.closes_fence("``` python", "```") and not md.closes_fence("~~~", "```")


def test_table_rows_separators_and_cells():
    assert md.is_table_row("  | a | b |") and not md.is_table_row("a | b")
    assert md.is_table_separator("|---|:---:|") and not md.is_table_separator("| - | x |")
    assert md.cells("| **Satz** | `28,5 %` |") == ["Satz", "28,5 %"]


def test_blocks_keep_tables_code_and_paragraphs_apart():
    text = "Satz eins.\nNoch einer.\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\n| kein | Tisch |\n\n```\nEnde."
    assert [kind for kind, _ in md.blocks(text)] == [md.PROSE, md.TABLE, md.CODE, md.PROSE]
    assert md.blocks(text)[2][1] == "```\n| kein | Tisch |\n\n```"
    assert md.paragraphs("a\nb\n\n\nc\r\n") == [["a", "b"], ["c"]]


def test_sentences_and_clause_ends():
    assert md.split_sentences("Der 13. und 14. Bezug sind begünstigt. Sonstige Bezüge, z. B. Prämien, "
                              "zählen gem. Abs. 2 mit. Fertig!") == [
        "Der 13. und 14. Bezug sind begünstigt.",
        "Sonstige Bezüge, z. B. Prämien, zählen gem. Abs. 2 mit.", "Fertig!"]
    assert md.CLAUSE_END_RE.split("Erstens; zweitens: drittens.") == ["Erstens;", "zweitens:", "drittens."]


def test_lines_with_headings_skip_fenced_code_and_indented_lines():
    text = "# Titel\n## Zwei\n```\n## kein Titel\n```\n  ## eingerückt\n### Drei ###\nText"
    assert [(level, title) for _line, level, title in md.lines_with_headings(text)] == [
        (1, "Titel"), (2, "Zwei"), (0, ""), (0, ""), (0, ""), (0, ""), (3, "Drei"), (0, "")]


def test_sentences_and_their_neighbouring_pairs():
    from lib.text.md_blocks import sentences_and_pairs
    single, pairs = sentences_and_pairs("Die Grenze gilt monatlich.\nFür 2025 beträgt sie € 551,10 im Monat. "
                                        "Der 14. Bezug zählt nicht.")
    assert single == ["Die Grenze gilt monatlich.", "Für 2025 beträgt sie € 551,10 im Monat.",
                      "Der 14. Bezug zählt nicht."]
    assert pairs == ["Die Grenze gilt monatlich. Für 2025 beträgt sie € 551,10 im Monat.",
                     "Für 2025 beträgt sie € 551,10 im Monat. Der 14. Bezug zählt nicht."]
    assert sentences_and_pairs("") == ([], [])
