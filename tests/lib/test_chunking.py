"""Tests for lib.kb.chunking: section chunks, splitting, overlap and stable hashes."""
import math

from lib.kb import chunking, format as kb_format
from lib.text import md_blocks

FRONT = """---
id: lb-sz-02
title: Sonderzahlungen – Jahressechstel
stand: 2026-01
topic: sonderzahlungen
source: Lexis Briefings Personalrecht
---
"""

BODY = """
# Sonderzahlungen – Jahressechstel

## Zusammenfassung
Sonderzahlungen sind bis zum Jahressechstel begünstigt besteuert.

## Kernwerte & Fristen
| Wert | Betrag |
|------|--------|
| Freibetrag | € 620 |
| Freigrenze | € 2.100 |

## Rechtsgrundlagen
- § 67 EStG

## Payroll-Relevanz (Odoo)
Lohnart 300 für den Urlaubszuschuss.

## Verweise
- [lb-sz-01]
"""


def make_entry(body=BODY):
    entry, issues = kb_format.parse_entry((FRONT + body).encode("utf-8"), "dokumente/lb-sz-02.md")
    assert entry is not None, issues
    return entry


def sentence(n):
    return f"Satz Nummer {n} beschreibt die Regel zur Sonderzahlung im Detail und nennt den Wert {n},5 %."


def test_one_chunk_per_section():
    chunks = chunking.chunk_entry(make_entry())
    assert [c.section_key for c in chunks] == ["zusammenfassung", "kernwerte", "rechtsgrundlagen", "payroll",
                                               "verweise"]
    assert [c.position for c in chunks] == [0, 1, 2, 3, 4]
    assert chunks[1].heading_path == "Kernwerte & Fristen"
    assert chunks[1].text.startswith("| Wert | Betrag |") and "€ 2.100" in chunks[1].text
    assert chunks[0].token_estimate == math.ceil(len(chunks[0].text) / 3.5)
    assert len({c.content_hash for c in chunks}) == 5


def test_empty_section_gives_no_chunk():
    body = BODY.replace("- § 67 EStG\n", "\n")
    chunks = chunking.chunk_entry(make_entry(body))
    assert "rechtsgrundlagen" not in [c.section_key for c in chunks]
    assert [c.position for c in chunks] == [0, 1, 2, 3]


def test_changed_section_changes_only_its_chunk_hash():
    before = chunking.chunk_entry(make_entry())
    after = chunking.chunk_entry(make_entry(BODY.replace("€ 620", "€ 640")))
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a.content_hash != b.content_hash]
    assert changed == [1]
    # positions shift when a section is added, but the hashes of untouched sections stay
    inserted = chunking.chunk_entry(make_entry(BODY.replace("## Rechtsgrundlagen", "## Beispiel\nRechnung.\n\n"
                                                                                   "## Rechtsgrundlagen")))
    assert {c.content_hash for c in before} < {c.content_hash for c in inserted}
    assert len(inserted) == 6


def test_hash_includes_heading_and_key():
    a = chunking.chunk_hash("kernwerte", "Kernwerte", "x")
    assert a != chunking.chunk_hash("payroll", "Kernwerte", "x")
    assert a != chunking.chunk_hash("kernwerte", "Kernwerte > A", "x")
    assert chunking.chunk_hash("a|b", "c", "d") != chunking.chunk_hash("a", "b|c", "d")


def test_long_section_is_split_at_h3():
    part_a = "\n\n".join(sentence(n) for n in range(12))
    part_b = "\n\n".join(sentence(n) for n in range(12, 24))
    body = BODY.replace("Lohnart 300 für den Urlaubszuschuss.",
                        f"Einleitung.\n\n### Urlaubszuschuss\n{part_a}\n\n### Weihnachtsremuneration\n{part_b}")
    chunks = chunking.chunk_entry(make_entry(body), max_chars=1200, overlap_chars=100)
    payroll = [c for c in chunks if c.section_key == "payroll"]
    assert [c.heading_path for c in payroll] == [
        "Payroll-Relevanz (Odoo)", "Payroll-Relevanz (Odoo) > Urlaubszuschuss",
        "Payroll-Relevanz (Odoo) > Weihnachtsremuneration"]
    assert payroll[0].text == "Einleitung."
    assert "###" not in "".join(c.text for c in payroll)
    assert sentence(0) in payroll[1].text and sentence(12) in payroll[2].text
    assert [c.position for c in chunks] == list(range(len(chunks)))


def test_small_section_keeps_h3_in_one_chunk():
    body = BODY.replace("Lohnart 300 für den Urlaubszuschuss.", "### A\nkurz\n\n### B\nauch kurz")
    chunks = chunking.chunk_entry(make_entry(body))
    payroll = [c for c in chunks if c.section_key == "payroll"]
    assert len(payroll) == 1 and "### A" in payroll[0].text


def test_long_prose_is_split_at_paragraphs_with_overlap():
    paragraphs = [" ".join(sentence(n * 10 + k) for k in range(4)) for n in range(10)]
    body = BODY.replace("Sonderzahlungen sind bis zum Jahressechstel begünstigt besteuert.", "\n\n".join(paragraphs))
    chunks = [c for c in chunking.chunk_entry(make_entry(body), max_chars=1000, overlap_chars=150)
              if c.section_key == "zusammenfassung"]
    assert len(chunks) >= 3
    assert all(len(c.text) <= 1000 for c in chunks)
    for prev, nxt in zip(chunks, chunks[1:]):
        head = nxt.text.split("\n\n")[0]
        assert 0 < len(head) <= 150 and prev.text.endswith(head)   # overlap = tail of the previous part
    # every paragraph survives whole in some chunk (cuts only at paragraph boundaries)
    assert all(any(p in c.text for c in chunks) for p in paragraphs)


def test_single_huge_paragraph_is_cut_at_sentences():
    text = " ".join(sentence(n) for n in range(60))
    body = BODY.replace("Sonderzahlungen sind bis zum Jahressechstel begünstigt besteuert.", text)
    chunks = [c for c in chunking.chunk_entry(make_entry(body), max_chars=800, overlap_chars=100)
              if c.section_key == "zusammenfassung"]
    assert len(chunks) > 5 and all(len(c.text) <= 800 for c in chunks)
    for c in chunks:
        assert c.text.rstrip().endswith("%.")         # every cut falls after a sentence
    assert all(sentence(n) in "\n".join(c.text for c in chunks) for n in range(60))


def test_big_table_is_split_by_rows_with_header_repeated():
    header = "| Bezug | Grenze | Satz |\n|:------|-------:|-----:|"
    rows = [f"| Bezugsart {n} | € {n * 100},10 | {n % 30},5 % |" for n in range(120)]
    table = header + "\n" + "\n".join(rows)
    body = BODY.replace("| Wert | Betrag |\n|------|--------|\n| Freibetrag | € 620 |\n| Freigrenze | € 2.100 |",
                        "Vorbemerkung zur Tabelle.\n\n" + table)
    chunks = [c for c in chunking.chunk_entry(make_entry(body), max_chars=1000, overlap_chars=100)
              if c.section_key == "kernwerte"]
    table_chunks = [c for c in chunks if "| Bezugsart" in c.text]
    assert len(table_chunks) >= 4
    for c in table_chunks:
        assert len(c.text) <= 1000
        lines = c.text.split("\n")
        start = lines.index("| Bezug | Grenze | Satz |")
        assert lines[start + 1] == "|:------|-------:|-----:|"
        assert all(l.startswith("| Bezugsart") for l in lines[start + 2:])   # whole rows only, no overlap
    found = [l for c in table_chunks for l in c.text.split("\n") if l.startswith("| Bezugsart")]
    assert found == rows                                  # every row exactly once, in order
    assert "Vorbemerkung zur Tabelle." in chunks[0].text


def test_code_fence_is_not_split_at_blank_lines():
    code = "```\nzeile 1\n\nzeile 2\n```"
    filler = "\n\n".join(sentence(n) for n in range(25))
    body = BODY.replace("Lohnart 300 für den Urlaubszuschuss.", f"{filler}\n\n{code}")
    chunks = chunking.chunk_entry(make_entry(body), max_chars=900, overlap_chars=0)
    assert any(code in c.text for c in chunks)


def test_fence_with_text_after_it_does_not_close_the_block_in_sections_or_chunks():
    # "``` python" inside a fence is content (CommonMark); section and H3 splitting agree on it
    assert md_blocks.closes_fence("```", "```") and md_blocks.closes_fence("  ````  ", "```")
    assert not md_blocks.closes_fence("``` python", "```")
    assert not md_blocks.closes_fence("~~~", "```") and not md_blocks.closes_fence("``", "```")
    code = "```\n``` python\n### Keine Überschrift\n```"
    filler = "\n\n".join(sentence(n) for n in range(12))
    body = BODY.replace("Lohnart 300 für den Urlaubszuschuss.", f"{filler}\n\n{code}\n\n### Echte Überschrift\n\n{filler}")
    chunks = chunking.chunk_entry(make_entry(body), max_chars=900, overlap_chars=0)   # split at H3 headings
    assert any("Echte Überschrift" in c.heading_path for c in chunks)
    assert any(code in c.text for c in chunks)
    assert not any("Keine Überschrift" in c.heading_path for c in chunks)


def test_deterministic():
    body = BODY.replace("Lohnart 300 für den Urlaubszuschuss.", "\n\n".join(sentence(n) for n in range(40)))
    first = chunking.chunk_entry(make_entry(body), max_chars=700, overlap_chars=120)
    second = chunking.chunk_entry(make_entry(body), max_chars=700, overlap_chars=120)
    assert first == second and len(first) > 5


def test_intro_section_without_heading():
    body = "\n# Titel\n\nEinleitender Satz.\n" + BODY.split("\n", 2)[2]
    chunks = chunking.chunk_entry(make_entry(body))
    assert (chunks[0].section_key, chunks[0].heading_path, chunks[0].text) == ("other", "", "Einleitender Satz.")
    assert chunking.embed_text(chunks[0], "Sonderzahlungen", "lb-sz-02") == "Sonderzahlungen\nEinleitender Satz."


def test_embed_text_header():
    chunk = chunking.chunk_entry(make_entry())[1]
    text = chunking.embed_text(chunk, "Sonderzahlungen – Jahressechstel", "lb-sz-02")
    assert text.split("\n", 1) == ["Sonderzahlungen – Jahressechstel – Kernwerte & Fristen", chunk.text]
    assert chunking.embed_text(chunk, "", "lb-sz-02").startswith("lb-sz-02 – Kernwerte & Fristen\n")
