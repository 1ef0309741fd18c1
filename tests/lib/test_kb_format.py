"""Tests for lib.kb.format: entry parser, section split and batch validation."""
import datetime
import json
import pathlib
import random

import pytest

from lib.kb import batch as kb_batch, format as kb_format

DEMO_KB = pathlib.Path(__file__).resolve().parents[2] / "data" / "demo_kb" / "wissensbasis"

BODY = """
# Altersteilzeit – Ersatzquote des AMS

## Zusammenfassung
Das AMS ersetzt dem Arbeitgeber einen Teil der Kosten. Siehe [lb-atz-09].

## Kernwerte & Fristen
| Wert | Betrag |
|------|--------|
| Ersatzquote | 28,5 % |
| Höchstbeitrag | € 551,10 |

## Rechtsgrundlagen
- § 27 AlVG
- § 28 AlVG

## Payroll-Relevanz (Odoo)
Lohnart 470 für den Lohnausgleich.

## Verweise
- [lb-atz-09] Antrag
"""


def entry_text(eid="lb-atz-07", *, title="Altersteilzeit – Ersatzquote des AMS", stand="2026-01",
               topic="altersteilzeit", source="Lexis Briefings Personalrecht", extra="", body=BODY,
               cross_refs="[lb-atz-09]"):
    lines = ["---", f"id: {eid}", f"title: {title}", f"stand: {stand}", f"topic: {topic}",
             f"source: {source}", "tags: [Altersteilzeit, AMS]", 'legal_bases: ["§ 27 AlVG", "§ 28 AlVG"]',
             f"cross_refs: {cross_refs}"]
    if extra:
        lines.append(extra)
    lines.append("---")
    return "\n".join(lines) + "\n" + body


def kb_json(ids, **overrides):
    entries = []
    for eid in ids:
        record = {"id": eid, "title": "Altersteilzeit – Ersatzquote des AMS", "stand": "2026-01",
                  "topic": "altersteilzeit", "source": "Lexis Briefings Personalrecht",
                  "file": f"dokumente/{eid}.md"}
        record.update(overrides.get(eid, {}))
        entries.append(record)
    return json.dumps({"generated": "2026-02-01", "count": len(entries), "entries": entries},
                      ensure_ascii=False).encode("utf-8")


def batch_files(ids=("lb-atz-07", "lb-atz-09")):
    files = {f"dokumente/{eid}.md": entry_text(eid).encode("utf-8") for eid in ids}
    files["kb.json"] = kb_json(ids)
    return files


def codes(issues, level=None):
    return sorted(i.code for i in issues if level is None or i.level == level)


# --------------------------------------------------------------------------- parse_entry


def test_valid_entry_fields_and_sections():
    entry, issues = kb_format.parse_entry(entry_text().encode("utf-8"), "dokumente/lb-atz-07.md")
    assert issues == []
    assert entry.id == "lb-atz-07"
    assert entry.title == "Altersteilzeit – Ersatzquote des AMS"
    assert entry.stand == "2026-01" and entry.stand_date == datetime.date(2026, 1, 1)
    assert entry.legal_bases == ["§ 27 AlVG", "§ 28 AlVG"]
    assert entry.cross_refs == ["lb-atz-09"]
    assert [s.key for s in entry.sections] == list(kb_format.SECTION_ORDER)
    assert [s.position for s in entry.sections] == [0, 1, 2, 3, 4]
    kern = entry.sections[1]
    assert kern.heading == "Kernwerte & Fristen"
    assert kern.text.startswith("| Wert | Betrag |") and kern.text.endswith("| € 551,10 |")
    assert entry.body == BODY
    assert entry.frontmatter["topic"] == "altersteilzeit"


def test_extra_frontmatter_keys_are_kept():
    entry, issues = kb_format.parse_entry(entry_text(extra="autor: M. Huber").encode(), "dokumente/lb-atz-07.md")
    assert issues == [] and entry.frontmatter["autor"] == "M. Huber"


def test_crlf_and_bom_give_same_entry_and_hash():
    plain = entry_text().encode("utf-8")
    crlf = plain.replace(b"\n", b"\r\n")
    bom = b"\xef\xbb\xbf" + plain
    e1, _ = kb_format.parse_entry(plain, "dokumente/lb-atz-07.md")
    e2, i2 = kb_format.parse_entry(crlf, "dokumente/lb-atz-07.md")
    e3, i3 = kb_format.parse_entry(bom, "dokumente/lb-atz-07.md")
    assert i2 == [] and i3 == []
    assert e2.body == e1.body and "\r" not in e2.body
    assert e2.content_hash == e1.content_hash
    assert e3.id == "lb-atz-07"
    changed, _ = kb_format.parse_entry(plain.replace(b"28,5", b"27,5"), "dokumente/lb-atz-07.md")
    assert changed.content_hash != e1.content_hash


def test_latin1_file_is_encoding_error_without_mojibake():
    raw = entry_text().encode("latin-1", errors="replace")
    entry, issues = kb_format.parse_entry(raw, "dokumente/lb-atz-07.md")
    assert entry is None
    assert codes(issues) == ["encoding"]
    assert issues[0].file == "dokumente/lb-atz-07.md" and "UTF-8" in issues[0].message


@pytest.mark.parametrize("raw", [b"", b"   \n\n\t  \n"])
def test_empty_file(raw):
    entry, issues = kb_format.parse_entry(raw, "dokumente/lb-atz-07.md")
    assert entry is None and codes(issues) == ["empty_file"]


def test_frontmatter_missing_and_unclosed():
    _, missing = kb_format.parse_entry(BODY.encode(), "dokumente/lb-atz-07.md")
    assert codes(missing) == ["frontmatter_missing"]
    unclosed = entry_text().replace("\n---\n", "\n", 1).encode()  # drop the closing line
    _, issues = kb_format.parse_entry(unclosed, "dokumente/lb-atz-07.md")
    assert codes(issues) == ["frontmatter_unclosed"]


@pytest.mark.parametrize("yaml_text", ["id: [unclosed\ntitle: x", "- just\n- a list", ""])
def test_yaml_invalid_or_not_mapping(yaml_text):
    raw = f"---\n{yaml_text}\n---\n# T\n".encode()
    entry, issues = kb_format.parse_entry(raw, "dokumente/lb-atz-07.md")
    assert entry is None and codes(issues) == ["yaml_invalid"]


def test_yaml_error_names_the_line():
    raw = "---\nid: lb-atz-07\ntitle: a: b: c\n---\n".encode()
    _, issues = kb_format.parse_entry(raw, "dokumente/lb-atz-07.md")
    assert codes(issues) == ["yaml_invalid"] and "Zeile 3" in issues[0].message


@pytest.mark.parametrize("key", ["title", "stand", "topic", "source"])
def test_required_key_missing_or_empty(key):
    text = entry_text()
    without = "\n".join(l for l in text.split("\n") if not l.startswith(f"{key}:"))
    _, issues = kb_format.parse_entry(without.encode(), "dokumente/lb-atz-07.md")
    assert codes(issues, "error") == ["key_missing"] and f"'{key}'" in issues[0].message
    empty = text.replace(f"\n{key}: ", f"\n{key}: ''\nx_{key}: ", 1)
    _, issues = kb_format.parse_entry(empty.encode(), "dokumente/lb-atz-07.md")
    assert codes(issues, "error") == ["key_missing"]


def test_id_missing_invalid_and_filename_mismatch():
    _, issues = kb_format.parse_entry(entry_text().replace("id: lb-atz-07\n", "").encode(),
                                      "dokumente/lb-atz-07.md")
    assert codes(issues, "error") == ["key_missing"]
    for bad in ("LB-ATZ-07", "lbatz07", "lb_atz_07", "lb--atz", "-lb-atz", "2026", "2026-01", "13-14-2"):
        _, issues = kb_format.parse_entry(entry_text(eid=bad).encode(), f"dokumente/{bad}.md")
        assert codes(issues, "error") == ["id_invalid"], bad
    entry, issues = kb_format.parse_entry(entry_text(eid="9x-atz-07").encode(), "dokumente/9x-atz-07.md")
    assert entry is not None and entry.id == "9x-atz-07" and not codes(issues, "error")   # a digit may lead
    entry, issues = kb_format.parse_entry(entry_text(eid="lb-atz-08").encode(), "dokumente/lb-atz-07.md")
    assert entry is None and codes(issues) == ["id_filename_mismatch"]
    assert "lb-atz-08.md" in issues[0].message


def test_non_text_scalar_is_refused():
    _, issues = kb_format.parse_entry(entry_text(topic="2026").encode(), "dokumente/lb-atz-07.md")
    assert codes(issues) == ["key_invalid"] and "'topic'" in issues[0].message


@pytest.mark.parametrize("stand,expected", [
    ("2026-01", ("2026-01", datetime.date(2026, 1, 1))),
    ("'2026-01'", ("2026-01", datetime.date(2026, 1, 1))),
    ("2026-01-15", ("2026-01-15", datetime.date(2026, 1, 15))),   # YAML gives a date object
    ("'2024-02-29'", ("2024-02-29", datetime.date(2024, 2, 29))),
])
def test_stand_valid_forms(stand, expected):
    entry, issues = kb_format.parse_entry(entry_text(stand=stand).encode(), "dokumente/lb-atz-07.md")
    assert issues == []
    assert (entry.stand, entry.stand_date) == expected


@pytest.mark.parametrize("stand", ["2026-13", "2026-00", "2025-02-29", "'2026-02-30'", "Jänner 2026", "2026",
                                   "2026-1", "2026-01-15 10:00:00"])
def test_stand_invalid(stand):
    entry, issues = kb_format.parse_entry(entry_text(stand=stand).encode(), "dokumente/lb-atz-07.md")
    assert entry is None and codes(issues) == ["stand_invalid"]


def test_list_fields():
    entry, issues = kb_format.parse_entry(entry_text(cross_refs="lb-atz-09").encode(), "dokumente/lb-atz-07.md")
    assert entry.cross_refs == ["lb-atz-09"] and codes(issues) == ["list_scalar"]
    assert [i.level for i in issues] == ["warning"]
    entry, issues = kb_format.parse_entry(entry_text(cross_refs="[]").encode(), "dokumente/lb-atz-07.md")
    assert entry.cross_refs == [] and issues == []
    for bad in ("{a: b}", "[[x]]", "[lb-atz-09, {a: b}]", "[lb-atz-09, true]"):
        entry, issues = kb_format.parse_entry(entry_text(cross_refs=bad).encode(), "dokumente/lb-atz-07.md")
        assert entry is None and codes(issues) == ["list_invalid"], bad
    # a year written as a tag is read by YAML as a number: it is kept as text, with a warning
    text = entry_text().replace("tags: [Altersteilzeit, AMS]", "tags: [Jahreswechsel, 2025, 1.5]")
    entry, issues = kb_format.parse_entry(text.encode(), "dokumente/lb-atz-07.md")
    assert entry.tags == ["Jahreswechsel", "2025", "1.5"] and codes(issues) == ["list_number", "list_number"]
    assert {i.level for i in issues} == {"warning"}
    text = entry_text().replace("tags: [Altersteilzeit, AMS]\n", "")
    entry, issues = kb_format.parse_entry(text.encode(), "dokumente/lb-atz-07.md")
    assert entry.tags == [] and issues == []


def test_section_key_is_tolerant():
    assert kb_format.section_key("Kernwerte & Fristen") == "kernwerte"
    assert kb_format.section_key("Kernwerte und Fristen") == "kernwerte"
    assert kb_format.section_key("KERNWERTE") == "kernwerte"
    assert kb_format.section_key("Payroll-Relevanz") == "payroll"
    assert kb_format.section_key("Payroll-Relevanz (Odoo)") == "payroll"
    assert kb_format.section_key("Rechtsgrundlage") == "rechtsgrundlagen"
    assert kb_format.section_key("Querverweise") == "verweise"
    assert kb_format.section_key("Zusammenfassung") == "zusammenfassung"
    assert kb_format.section_key("Beispiel zur Berechnung") == "other"
    assert kb_format.section_key("Übergangsrecht") == "other"
    assert kb_format.section_key("") == "other"


def test_intro_text_becomes_other_section_and_fences_are_respected():
    body = ("\n# Titel\n\nEinleitung vor dem ersten Abschnitt.\n\n## Zusammenfassung\nText\n"
            "```\n## kein Abschnitt\n```\n\n## Beispiel\nRechnung\n")
    entry, issues = kb_format.parse_entry(entry_text(body=body).encode(), "dokumente/lb-atz-07.md")
    assert issues == []
    assert [(s.key, s.heading) for s in entry.sections] == [
        ("other", ""), ("zusammenfassung", "Zusammenfassung"), ("other", "Beispiel")]
    assert entry.sections[0].text == "Einleitung vor dem ersten Abschnitt."
    assert "## kein Abschnitt" in entry.sections[1].text
    only_title, _ = kb_format.parse_entry(entry_text().encode(), "dokumente/lb-atz-07.md")
    assert only_title.sections[0].key == "zusammenfassung"  # the H1 alone gives no "other" section


def test_section_order_and_duplicate_are_warnings():
    body = "\n# T\n\n## Verweise\n- x\n\n## Zusammenfassung\nText\n\n## Verweise\n- y\n"
    entry, issues = kb_format.parse_entry(entry_text(body=body).encode(), "dokumente/lb-atz-07.md")
    assert entry is not None
    assert codes(issues) == ["section_duplicate", "section_order"]
    assert all(i.level == "warning" for i in issues)
    missing_some = "\n# T\n\n## Zusammenfassung\nA\n\n## Verweise\nB\n"
    _, issues = kb_format.parse_entry(entry_text(body=missing_some).encode(), "dokumente/lb-atz-07.md")
    assert issues == []


def test_parse_entry_never_raises_on_garbage():
    rng = random.Random(1234)
    good = entry_text().encode("utf-8")
    samples = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))) for _ in range(200)]
    for _ in range(300):
        data = bytearray(good)
        for _ in range(rng.randrange(1, 8)):
            pos = rng.randrange(len(data))
            data[pos:pos + rng.randrange(1, 4)] = bytes([rng.choice(b"-:\n[]{}'\"#|&*!%@` \xc3\xff")])
        samples.append(bytes(data))
    samples += [b"---\n" + b"[" * 5000 + b"\n---\n", b"---\n&a [*a]\n---\n", b"---\n!!python/object:os.system x\n---\n"]
    for raw in samples:
        entry, issues = kb_format.parse_entry(raw, "dokumente/lb-atz-07.md")
        assert (entry is None) == any(i.level == "error" for i in issues)
        assert all(i.file == "dokumente/lb-atz-07.md" and i.message for i in issues)


# --------------------------------------------------------------------------- load_batch


def test_clean_batch():
    files = batch_files()
    files["INDEX.md"] = b"# Index\n"
    batch = kb_batch.load_batch(files)
    assert batch.ok and batch.issues == []
    assert [e.id for e in batch.entries] == ["lb-atz-07", "lb-atz-09"]
    assert batch.files_seen == 2 and batch.kb_json["count"] == 2


def test_unexpected_file_is_warning():
    files = batch_files()
    files["notizen.txt"] = b"x"
    files["dokumente/sub/lb-atz-10.md"] = entry_text("lb-atz-10").encode()
    batch = kb_batch.load_batch(files)
    assert batch.ok
    assert [(i.file, i.code) for i in batch.issues] == [
        ("dokumente/sub/lb-atz-10.md", "unexpected_file"), ("notizen.txt", "unexpected_file")]


def test_entry_with_error_is_left_out_and_named():
    files = batch_files()
    files["dokumente/lb-atz-09.md"] = entry_text("lb-atz-09", stand="2026-13").encode()
    batch = kb_batch.load_batch(files)
    assert not batch.ok
    assert [e.id for e in batch.entries] == ["lb-atz-07"]
    assert [(i.file, i.code) for i in batch.errors] == [("dokumente/lb-atz-09.md", "stand_invalid")]


def test_duplicate_id_names_both_files():
    files = batch_files()
    files["dokumente/lb-atz-99.md"] = entry_text("lb-atz-07").encode()
    batch = kb_batch.load_batch(files)
    dup = [i for i in batch.issues if i.code == "id_duplicate"]
    assert sorted(i.file for i in dup) == ["dokumente/lb-atz-07.md", "dokumente/lb-atz-99.md"]
    assert "dokumente/lb-atz-99.md" in next(i for i in dup if i.file == "dokumente/lb-atz-07.md").message
    assert [e.id for e in batch.entries] == ["lb-atz-09"]


def test_kbjson_missing_and_invalid():
    files = batch_files()
    del files["kb.json"]
    batch = kb_batch.load_batch(files)
    assert [(i.file, i.code) for i in batch.errors] == [("kb.json", "kbjson_missing")]
    assert batch.kb_json is None
    for bad in (b"{not json", b'["a"]', b'{"count": 2}', "{\"count\": 2, \"entries\": []}".encode("utf-16")):
        files["kb.json"] = bad
        batch = kb_batch.load_batch(files)
        assert codes(batch.errors) == ["kbjson_invalid"], bad


def test_kbjson_count_mismatch():
    files = batch_files()
    data = json.loads(files["kb.json"])
    data["count"] = 3
    files["kb.json"] = json.dumps(data).encode()
    batch = kb_batch.load_batch(files)
    assert codes(batch.errors) == ["kbjson_count", "kbjson_count"]   # vs. its list and vs. the files
    data["count"] = "2"
    files["kb.json"] = json.dumps(data).encode()
    assert codes(kb_batch.load_batch(files).errors) == ["kbjson_invalid"]


def test_kbjson_ids_without_file_and_files_without_id_each_named():
    files = batch_files(("lb-atz-07", "lb-atz-09", "lb-atz-10"))
    files["kb.json"] = kb_json(["lb-atz-07", "lb-atz-11", "lb-atz-12"])
    batch = kb_batch.load_batch(files)
    missing = [i for i in batch.issues if i.code == "kbjson_missing_id"]
    extra = [i for i in batch.issues if i.code == "kbjson_extra_file"]
    assert sorted(i.message.split("'")[1] for i in missing) == ["lb-atz-11", "lb-atz-12"]
    assert all(i.file == "kb.json" and i.level == "error" for i in missing)
    assert sorted(i.file for i in extra) == ["dokumente/lb-atz-09.md", "dokumente/lb-atz-10.md"]
    assert [e.id for e in batch.entries] == ["lb-atz-07"]


def test_kbjson_field_mismatch_is_warning():
    files = batch_files()
    files["kb.json"] = kb_json(["lb-atz-07", "lb-atz-09"],
                               **{"lb-atz-09": {"title": "Anderer Titel", "stand": "2025-12"}})
    batch = kb_batch.load_batch(files)
    assert batch.ok
    mism = [i for i in batch.issues if i.code == "kbjson_mismatch"]
    assert len(mism) == 2 and {i.file for i in mism} == {"dokumente/lb-atz-09.md"}
    assert any("'title'" in i.message and "Anderer Titel" in i.message for i in mism)
    assert len(batch.entries) == 2


def test_no_entries_is_error():
    batch = kb_batch.load_batch({"kb.json": kb_json([])})
    assert codes(batch.errors) == ["no_entries"] and batch.errors[0].file == ""


def test_issues_sorted_by_file_then_level():
    files = batch_files()
    files["dokumente/lb-atz-09.md"] = entry_text("lb-atz-09", cross_refs="lb-atz-07", stand="2026-13").encode()
    files["zz.txt"] = b""
    batch = kb_batch.load_batch(files)
    keys = [(i.file, i.level) for i in batch.issues]
    assert keys == sorted(keys, key=lambda k: (k[0], k[1] != "error"))
    assert keys[0] == ("dokumente/lb-atz-09.md", "error") and ("dokumente/lb-atz-09.md", "warning") in keys


def test_cross_refs():
    files = batch_files(("lb-atz-07",))
    files["dokumente/lb-atz-07.md"] = entry_text(
        cross_refs="[lb-atz-09, lb-atz-12]", body=BODY + "\nSiehe auch [lb-sz-02] und [2026-01].\n").encode()
    batch = kb_batch.load_batch(files)
    assert batch.ok and batch.issues == []          # not checked without known_ids
    issues = kb_batch.check_cross_refs(batch.entries, {"lb-atz-12"})
    assert [(i.code, i.file) for i in issues] == [("crossref_dangling", "dokumente/lb-atz-07.md"),
                                                 ("bodyref_dangling", "dokumente/lb-atz-07.md")]
    assert "'lb-atz-09'" in issues[0].message and "lb-sz-02" in issues[1].message
    assert kb_batch.check_cross_refs(batch.entries, {"lb-atz-09", "lb-atz-12", "lb-sz-02"}) == []
    checked = kb_batch.load_batch(files, known_ids={"lb-atz-09"})
    assert sorted(i.code for i in checked.issues) == ["bodyref_dangling", "crossref_dangling"]


def test_batch_of_601_entries_is_fast():
    para = ("Der Arbeitgeber hat die Sonderzahlung nach § 67 EStG mit dem festen Steuersatz zu versteuern; "
            "das Jahressechstel beträgt 1/6 der laufenden Bezüge. ") * 10
    table = "| Wert | Betrag |\n|---|---|\n" + "".join(f"| Grenze {n} | € {n},10 |\n" for n in range(60))
    body = (f"\n# Titel\n\n## Zusammenfassung\n{para}\n\n{para}\n\n## Kernwerte & Fristen\n{table}\n"
            f"## Rechtsgrundlagen\n- § 67 EStG\n- § 49 ASVG\n\n## Payroll-Relevanz (Odoo)\n{para}\n\n"
            f"## Verweise\n- [lb-sz-01]\n")
    ids = [f"lb-sz-{n:03d}" for n in range(601)]
    files = {f"dokumente/{i}.md": entry_text(i, body=body, cross_refs="[lb-sz-001]").encode() for i in ids}
    files["kb.json"] = kb_json(ids)
    size = sum(len(b) for b in files.values())
    assert size > 4_000_000
    batch = kb_batch.load_batch(files, render_seconds=None)   # no total budget: a loaded test machine; speed: scripts/bench/bench_lib.py
    assert batch.ok and len(batch.entries) == 601


@pytest.mark.skipif(not (DEMO_KB / "kb.json").exists(), reason="demo KB not present")
def test_demo_kb_is_clean():
    files = {p.relative_to(DEMO_KB).as_posix(): p.read_bytes() for p in DEMO_KB.rglob("*") if p.is_file()}
    batch = kb_batch.load_batch(files, known_ids=set())
    assert batch.errors == []
    assert len(batch.entries) == batch.kb_json["count"]


def test_an_unexpected_parser_exception_is_an_error_of_that_file_only(monkeypatch):
    files = {str(p.relative_to(DEMO_KB)): p.read_bytes() for p in DEMO_KB.rglob("*") if p.is_file()}
    victim = "dokumente/lb-atz-02.md"
    real = kb_format._parse

    def flaky(raw, file):
        if file == victim:
            raise RuntimeError("kaputt")
        return real(raw, file)
    monkeypatch.setattr(kb_format, "_parse", flaky)
    batch = kb_batch.load_batch(files)
    internal = [i for i in batch.issues if i.code == "internal"]
    assert [(i.file, i.level) for i in internal] == [(victim, kb_format.ERROR)]
    assert "RuntimeError: kaputt" in internal[0].message
    assert "lb-atz-02" not in {e.id for e in batch.entries} and len(batch.entries) == sum(f.startswith("dokumente/") for f in files) - 1
    entry, issues = kb_format.parse_entry(files[victim], victim)
    assert entry is None and [i.code for i in issues] == ["internal"]
