"""Facts out of the Kernwerte: periods, amounts, table shapes, the demo base's cells, and the fact comparison on
the demo base and on the fact test base (tests/data/facts_kb, with its planted contradictions)."""
import re
from decimal import Decimal

import pytest
import yaml

from facts_data import ABBREV, BASE_A as BASE, BASE_B, DEMO, sources as _sources
from lib.facts.amounts import UNITS, parse_amount
from lib.facts.compare import compare
from lib.facts.concepts import variant_of
from lib.facts.extract import extract_all, extract_facts
from lib.facts.periods import find_period, is_period_only
from lib.text import md_blocks


@pytest.mark.parametrize("text,start,end", [
    ("2025", 2025, 2025), ("ab 2026", 2026, None), ("bis 31.12.2023", None, 2023), ("seit 2023", 2023, None),
    ("2024 und 2025", 2024, 2025), ("2018–2022", 2018, 2022), ("vor 2024", None, 2023),
    ("ab 2026 (Gesetzeslage Stand 2024-01)", 2026, None), ("Mai 2022 bis Juni 2023, ausgelaufen", 2022, 2023),
    ("Einkommen pro Jahr 2025", 2025, 2025),
])
def test_periods(text, start, end):
    period = find_period(text)
    assert (period.start, period.end) == (start, end)


def test_amounts_are_no_periods_and_period_cells_are_qualifiers():
    assert find_period("€ 2.100") is None and find_period("über € 1.000.000") is None
    assert is_period_only("bis 2023") and is_period_only("ab 2026 (Gesetzeslage Stand 2024-01)")
    assert not is_period_only("Referenzzinssatz 2023") and not is_period_only("€ 2.000")


def test_a_label_loses_its_period_and_keeps_tidy_brackets():
    from lib.facts.periods import strip_periods
    assert strip_periods("Richtwert Wien (Sachbezug 2024)") == "Richtwert Wien (Sachbezug)"
    assert strip_periods("Taggeld (ab 2025)") == "Taggeld"


@pytest.mark.parametrize("text,amount,unit,bound", [
    ("€ 551,10", "551.10", "€", ""), ("27,5 %", "27.5", "%", ""), ("über € 1.000.000", "1000000", "€", "über"),
    ("€ 1 Mio.", "1000000", "€", ""), ("8 Wochen", "8", "Wochen", ""), ("30.000 km", "30000", "km", ""),
    ("mind. 50 % des Entgeltunterschieds", "50", "%", "mindestens"), ("höchstens 1 Monat", "1", "Monate", "höchstens"),
    ("binnen 7 Tagen nach Ende", "7", "Tage", ""), ("12 Stunden pro Woche", "12", "Stunden", ""),
    # a span written in words is a value as well; its text stays as written
    ("zwei Jahre ab Ende des Urlaubsjahres", "2", "Jahre", ""), ("höchstens fünf Jahre", "5", "Jahre", "höchstens"),
])
def test_amounts(text, amount, unit, bound):
    value = parse_amount(text)
    assert (value.amount, value.unit, value.bound) == (Decimal(amount), unit, bound)


def test_ranges_references_and_text():
    assert parse_amount("auf 40 % bis 60 %").amount_to == Decimal(60)
    assert parse_amount("siehe [lb-gfb-01]").unit == "Verweis" and parse_amount("wie oben").unit == "Verweis"
    assert not parse_amount("kein Sachbezug").has_value
    assert parse_amount("10", "Überstunden").unit == "Überstunden"
    assert parse_amount("zwei Jahre ab Ende des Urlaubsjahres").text == "zwei Jahre ab Ende des Urlaubsjahres"
    assert not parse_amount("um die Dauer einer Elternkarenz").has_value
    # a range whose unit stands once, after its upper end
    months = parse_amount("1 bis 6 Monate, Verlängerung um bis zu 3 Monate")
    assert (months.amount, months.unit, months.amount_to) == (Decimal(1), "Monate", Decimal(6))
    assert parse_amount("über 2 bis 20 km").unit == "km"


# The year (or period) of every dated Kernwerte cell of the demo base, written out by hand from the tables:
# (entry, row label, column header) -> period label. Every other value cell is valid as of its Stand.
DATED = {
    ("lb-gfb-01", "Geringfügigkeitsgrenze monatlich", "2024"): "2024",
    ("lb-gfb-01", "Geringfügigkeitsgrenze monatlich", "2025"): "2025",
    ("lb-atz-02", "bis 2023", "Blockzeit"): "bis 2023", ("lb-atz-02", "2026", "Blockzeit"): "2026",
    ("lb-atz-02", "2024", "kontinuierlich"): "2024",
    ("wiku-atz-01", "2026", "Ersatzquote Blockzeit"): "2026", ("wiku-atz-01", "2025", "Ersatzquote Blockzeit"): "2025",
    ("lb-rk-02", "Pkw", "bis 2024"): "bis 2024", ("lb-rk-02", "Pkw", "ab 2025"): "ab 2025",
    ("lb-rk-02", "Jahreshöchstgrenze steuerfrei", "Wert"): "ab 2025",
    ("lb-rk-01", "Taggeld Inland pro Tag", "ab 2025"): "ab 2025",
    ("lb-ust-02", "bis 2023", "Höchstbetrag/Monat"): "bis 2023",
    ("lb-ust-02", "2024 und 2025", "begünstigte Überstunden/Monat"): "2024–2025",
    ("lb-ust-02", "ab 2026 (Gesetzeslage Stand 2024-01)", "Höchstbetrag/Monat"): "ab 2026",
    ("lb-lnk-01", "DB", "Regel"): "2025", ("lb-lnk-01", "DB 2018–2022", "Regel"): "2018–2022",
    ("lb-lst-01", "über € 1.000.000", "Grenzsteuersatz"): "2025",
    ("lb-lst-01", "bis € 1.000.000", "Grenzsteuersatz"): "2024",
    ("lb-sb-04", "Referenzzinssatz 2023", "Regel"): "2023", ("lb-sb-04", "Referenzzinssatz 2024", "Regel"): "2024",
    ("lb-sb-03", "Richtwert Wien (Sachbezug 2024)", "Regel"): "2024",
    ("lb-sv-01", "Höchstbeitragsgrundlage monatlich", "2025"): "2025",
    ("lb-sz-04", "Höchstbeitragsgrundlage Sonderzahlungen (jährlich)", "2024"): "2024",
    ("lb-lst-02", "Verkehrsabsetzbetrag", "2025"): "2025",
    ("wiku-gfb-01", "Geringfügigkeitsgrenze monatlich", "Betrag"): "2022",   # the title's year
    ("lb-sv-02", "BV-Beitrag zusätzlich", "Wert"): "2025",                    # the title's year
}


def _kernwerte_cells(source):
    """(row label, column header, cell, 1-based line of the body) of every Kernwerte table cell with a digit."""
    lines = source.body.split("\n")
    inside, header = False, None
    for number, line in enumerate(lines, start=1):
        if md_blocks.heading(line, 2):
            inside = md_blocks.heading(line, 2).startswith("Kernwerte")
            continue
        if not inside or not md_blocks.is_table_row(line):
            header = None if inside and not md_blocks.is_table_row(line) else header
            continue
        if md_blocks.is_table_separator(line):
            continue
        cells = md_blocks.cells(line)
        if number < len(lines) and md_blocks.is_table_separator(lines[number]):
            header = cells
            continue
        for col, cell in enumerate(cells[1:], start=1):
            if re.search(r"[0-9]", cell) and header[col] != "Stand":   # a "Stand" column qualifies its row
                yield cells[0], header[col], cell, number


def test_every_demo_kernwerte_cell_with_a_value_is_a_fact_with_year_and_unit():
    sources = _sources(DEMO)
    checked = dated = 0
    for source in sources:
        facts = extract_facts(source, ABBREV)
        by_place = {(f.line, f.column_header, f.text): f for f in facts if f.origin == "table"}
        for label, head, cell, line in _kernwerte_cells(source):
            fact = by_place.get((line, head, cell))
            assert fact is not None, (source.entry_id, label, head, cell)
            assert fact.label == label and fact.value.unit in UNITS, (source.entry_id, label, cell, fact.value.unit)
            assert source.body.split("\n")[line - 1].strip() == fact.passage
            expected = DATED.get((source.entry_id, label, head))
            if expected is not None:
                assert fact.year_label == expected, (source.entry_id, label, head, fact.year_label)
                dated += 1
            elif not fact.period.explicit:
                assert fact.period.start == int(source.stand[:4])
            checked += 1
    assert checked > 150 and dated == len(DATED)


def test_bullets_carry_their_values():
    (source,) = _sources(DEMO, "wiku-rk-01.md")
    facts = {f.label: f for f in extract_facts(source, ABBREV)}
    assert facts["Pkw"].value.amount == Decimal("0.42") and facts["Pkw"].value.unit == "€"
    assert facts["Pkw"].period.start == 2023 and not facts["Pkw"].period.explicit


def test_demo_conflicts_and_outdated_entries_come_from_the_fact_comparison():
    pairs = compare(extract_all(_sources(DEMO), ABBREV))
    conflicts = {frozenset(p.entry_ids) for p in pairs if p.kind == "conflict"}
    outdated = {p.first.entry_id: p.second.entry_id for p in pairs if p.kind == "outdated"}
    assert conflicts == {frozenset({"lb-atz-02", "wiku-atz-01"})}
    assert outdated == {"wiku-gfb-01": "lb-gfb-01", "wiku-rk-01": "lb-rk-02", "wiku-ust-01": "lb-ust-02"}
    atz = next(p for p in pairs if p.kind == "conflict")
    assert {atz.first.text, atz.second.text} == {"27,5 %", "28,5 %"} and atz.first.year_label == "2026"
    pkw = next(p for p in pairs if p.first.entry_id == "wiku-rk-01" and p.first.label == "Pkw")
    assert (pkw.first.text, pkw.second.text) == ("€ 0,42 pro km", "€ 0,50")


def _base_result(prefix):
    pairs = compare(extract_all(_sources(BASE / "dokumente", f"{prefix}-*.md"), ABBREV))
    return {frozenset(p.entry_ids) for p in pairs if p.kind == "conflict"}, pairs


def test_fact_base_tuning_part_finds_every_planted_conflict_and_nothing_else():
    expected = {frozenset(x) for x in yaml.safe_load((BASE / "expected.yaml").read_text())["conflicts"]["tuning"]}
    found, _ = _base_result("tf")
    assert found == expected


def test_fact_base_held_out_part_precision_and_recall():
    expected = {frozenset(x) for x in yaml.safe_load((BASE / "expected.yaml").read_text())["conflicts"]["test"]}
    found, _ = _base_result("hf")
    assert found and len(found & expected) / len(found) >= 0.9
    assert len(found & expected) / len(expected) >= 0.75


def test_no_conflict_for_references_other_concepts_other_years_and_successors():
    _, pairs = _base_result("hf")
    conflicted = {frozenset(p.entry_ids) for p in pairs if p.kind == "conflict"}
    assert frozenset({"hf-lnk-01", "hf-lnk-02"}) not in conflicted      # "Fälligkeit": DB vs Kommunalsteuer
    assert frozenset({"hf-ust-02", "hf-ust-03"}) not in conflicted      # "Steuerfreier Höchstbetrag": SEG vs Überstunden
    assert frozenset({"hf-sv-01", "hf-sv-02"}) not in conflicted        # 2025 table vs 2026 table
    assert not any(p.first.is_reference or p.second.is_reference for p in pairs)
    _, tuning = _base_result("tf")
    assert frozenset({"tf-rk-01", "tf-rk-02"}) not in {frozenset(p.entry_ids) for p in tuning}   # "siehe [tf-rk-01]"


def test_the_coming_years_grouping_tries_only_groups_that_can_match():
    """coverage._groups tries only the groups of a fact's topic or key; the groups are those of trying them all."""
    from lib.facts import compare as C
    from lib.facts import coverage

    def every_group(facts):
        common = C.topic_common_words(facts)
        groups = []
        for fact in facts:
            for group in groups:
                head = group[0]
                if (head.entry_id == fact.entry_id and head.key == fact.key and head.basis == fact.basis
                        and head.variant == fact.variant) or C.same_concept(head, fact, common):
                    group.append(fact)
                    break
            else:
                groups.append([fact])
        return groups

    facts = extract_all(_sources(DEMO) + _sources(BASE / "dokumente")
                        + _sources(BASE_B / "wissensbasis" / "dokumente"), ABBREV)
    dated = [f for f in facts if f.period.explicit and f.value.has_value and not f.is_reference]
    grouped = coverage._groups(dated)
    assert [[id(f) for f in g] for g in grouped] == [[id(f) for f in g] for g in every_group(dated)]
    assert any(len(g) > 2 for g in grouped) and len(grouped) < len(dated)


def test_a_table_of_the_summary_is_read_like_the_kernwerte_its_bullets_are_not():
    (source,) = _sources(DEMO, "lb-sv-02.md")
    facts = extract_facts(source, ABBREV)
    summary = [f for f in facts if f.section == "zusammenfassung" and f.origin == "table"]
    by_cell = {(f.label, f.column_header): f for f in summary}
    pension = by_cell[("Pensionsversicherung", "Dienstgeber")]
    assert pension.text == "12,55 %" and pension.value.unit == "%" and pension.year_label == "2025"
    assert source.body.split("\n")[pension.line - 1].strip() == pension.passage
    assert ("Krankenversicherung", "Dienstnehmer") in by_cell
    assert not [f for f in facts if f.section == "zusammenfassung" and f.origin == "bullet"]


@pytest.mark.parametrize("label, variant", [
    ("über € 13.308 bis € 21.617", "13308-21617"),
    ("ab dem 16. Dienstjahr", "16"),
    ("Grenze für die Dienstgeberabgabe (1,5-fach)", ""),
    ("1,5-fache Grenze (DAG) 2025", ""),
    ("Kind 3-fach, ab dem 3. Kind", "3"),
])
def test_a_multiplier_is_no_variant(label, variant):
    assert variant_of(label) == variant


def test_a_truncated_coordination_is_one_key_word_of_alternatives():
    from lib.facts.concepts import concept_key, word_in
    key = concept_key("Alleinverdiener-/Alleinerzieherabsetzbetrag, 1 Kind")
    assert "kind" in key and len(key) == 2
    (both,) = key - {"kind"}
    assert word_in("alleinerzieherabsetzbetrag", [both]) and word_in("alleinverdienerabsetzbetrag", [both])
    assert not word_in("familienbonu", [both])
    # "Urlaubs- und Weihnachtsgeld": either names it; a plain hyphen compound stays as it was
    assert any(word_in("weihnachtsgeld", [w]) for w in concept_key("Urlaubs- und Weihnachtsgeld"))
    (chain,) = [w for w in concept_key("Zuschläge für Sonntags-, Feiertags- und Nachtarbeit") if "|" in w]
    assert all(word_in(w, [chain]) for w in ("sonntagsarbeit", "feiertagsarbeit", "nachtarbeit"))
    assert concept_key("Dienstgeber-Beitrag") == concept_key("Dienstgeber-Beitrag")
    assert all("|" not in w for w in concept_key("Dienstgeber-Beitrag"))
