"""Tests for lib/answer/conflicts.py: Kernwerte conflicts and the ⚠ note."""

from lib.answer.citations import extract_citations
from lib.answer.conflicts import add_conflict_note, detect_conflicts
from lib.answer.validation import validate_answer
from lib.answer.types import EntryFacts
from answer_data import ATZ_CONFLICT, ATZ_TABLE, block, codes


def facts(entry_id, stand, kernwerte, topic="altersteilzeit", legal=()):
    return EntryFacts(entry_id, f"Titel {entry_id}", stand, topic, list(legal), kernwerte)


def test_detect_conflicts_finds_differing_values_for_similar_keys():
    a = facts("lb-atz-07", "2026-01", ATZ_TABLE)
    b = facts("lb-atz-09", "2025-01", "- **Ersatzquote des AMS:** 27,5 %\n- Antragsfrist: 6 Wochen")
    conflicts = detect_conflicts([a, b])
    assert len(conflicts) == 1
    conflict = conflicts[0]
    assert conflict.entry_ids == ["lb-atz-07", "lb-atz-09"]
    assert conflict.values == {"lb-atz-07": "28,5 %", "lb-atz-09": "27,5 %"}
    assert conflict.stands == {"lb-atz-07": "2026-01", "lb-atz-09": "2025-01"}
    assert "Ersatzquote" in conflict.key


def test_detect_conflicts_is_conservative():
    a = facts("lb-atz-07", "2026-01", ATZ_TABLE)
    same_value = facts("lb-atz-08", "2025-01", "| Wert | Regel |\n|---|---|\n| Ersatzquote AMS | 28,5 % |")
    same_stand = facts("lb-atz-10", "2026-01", "| Wert | Regel |\n|---|---|\n| Ersatzquote AMS | 27,5 % |")
    other_topic = facts("lb-url-01", "2025-01", "| Wert | Regel |\n|---|---|\n| Ersatzquote AMS | 27,5 % |",
                        topic="urlaub")
    other_key = facts("lb-atz-11", "2025-01", "| Wert | Regel |\n|---|---|\n| Blockzeit Dauer | 5 Jahre |")
    extended = facts("lb-atz-12", "2025-01", "| Wert | Regel |\n|---|---|\n| Ersatzquote AMS | 28,5 % bzw. 27,5 % |")
    header_only = facts("lb-atz-13", "2025-01", "| Ersatzquote AMS | Wert |\n|---|---|")
    for other in (same_value, same_stand, other_topic, other_key, extended, header_only):
        assert detect_conflicts([a, other]) == [], other.entry_id


def test_detect_conflicts_across_topics_needs_shared_legal_basis_and_same_key():
    a = facts("lb-atz-07", "2026-01", ATZ_TABLE, legal=["§ 27 AlVG"])
    b = facts("lb-al-02", "2025-01", "| Wert | Regel |\n|---|---|\n| Ersatzquote AMS | 27,5 % |",
              topic="arbeitslosenversicherung", legal=["§27 AlVG"])
    assert [c.entry_ids for c in detect_conflicts([a, b])] == [["lb-atz-07", "lb-al-02"]]
    loose_key = facts("lb-al-03", "2025-01", "| Wert | Regel |\n|---|---|\n| Ersatzquote AMS alt | 27,5 % |",
                      topic="arbeitslosenversicherung", legal=["§ 27 AlVG"])
    assert detect_conflicts([a, loose_key]) == []


def test_detect_conflicts_lines_up_table_columns_and_keeps_outdated_values_as_conflicts():
    by_year = facts("lb-atz-02", "2025-01",
                    "| Beginn | kontinuierlich | Blockzeit |\n|---|---|---|\n"
                    "| 2025 | 90 % | 35 % |\n| 2026 | 90 % | 27,5 % |")
    overview = facts("wiku-atz-01", "2023-06",
                     "| Beginn | Ersatzquote Blockzeit |\n|---|---|\n| 2025 | 35 % |\n| 2026 | 28,5 % |\n\n"
                     "- Kontinuierliche Variante: Ersatzquote 90 %")
    conflicts = detect_conflicts([by_year, overview])
    assert [(c.entry_ids, c.values) for c in conflicts] == [
        (["lb-atz-02", "wiku-atz-01"], {"lb-atz-02": "27,5 %", "wiku-atz-01": "28,5 %"})]
    assert "2026" in conflicts[0].key and "Blockzeit" in conflicts[0].key
    # an older entry that still states the outdated value is a conflict even when the newer one lists it
    # as history: both sides are shown with their Stand, never settled silently
    newer = facts("lb-rk-02", "2025-01", "| Fahrzeug | bis 2024 | ab 2025 |\n|---|---|---|\n| Pkw | € 0,42 | € 0,50 |",
                  topic="reisekosten")
    older = facts("wiku-rk-01", "2023-05", "- Pkw: € 0,42 pro km", topic="reisekosten")
    found = detect_conflicts([newer, older])
    assert [(c.key, sorted(c.entry_ids)) for c in found] == [("Pkw – ab 2025", ["lb-rk-02", "wiku-rk-01"])]
    assert found[0].values == {"lb-rk-02": "€ 0,50", "wiku-rk-01": "€ 0,42 pro km"}
    # an older entry that already names the newer value too is not contradicted
    aware = facts("wiku-rk-01", "2023-05", "- Pkw: € 0,42 pro km\n- Pkw ab 2025: € 0,50", topic="reisekosten")
    assert detect_conflicts([newer, aware]) == []


def test_detect_conflicts_merges_three_entries_into_one_conflict():
    a = facts("lb-atz-07", "2026-01", ATZ_TABLE)
    b = facts("lb-atz-09", "2025-01", "| Wert | Regel |\n|---|---|\n| Ersatzquote AMS | 27,5 % |")
    c = facts("lb-atz-12", "2024-01", "| Wert | Regel |\n|---|---|\n| Ersatzquote AMS | 28,5 % |")
    conflicts = detect_conflicts([a, b, c])
    assert len(conflicts) == 1
    assert conflicts[0].entry_ids == ["lb-atz-07", "lb-atz-09", "lb-atz-12"]


def test_add_conflict_note_appends_both_sides_when_one_was_dropped():
    answer = "Das AMS ersetzt 28,5 % [lb-atz-07] (Stand 2026-01)."
    noted = add_conflict_note(answer, [ATZ_CONFLICT], extract_citations(answer))
    assert noted.startswith(answer)
    note = noted[len(answer):].strip()
    assert note.startswith("⚠ Widerspruch in der Wissensbasis:")
    assert "[lb-atz-07] (Stand 2026-01)" in note and "28,5 %" in note
    assert "[lb-atz-09] (Stand 2025-01)" in note and "27,5 %" in note
    assert note.endswith("Bitte prüfen.")
    # the note itself satisfies the conflict rule
    blocks = [block("lb-atz-07", ATZ_TABLE), block("lb-atz-09", "Das AMS ersetzt 27,5 %.", stand="2025-01")]
    assert "conflict_side_missing" not in codes(validate_answer(noted, blocks, [ATZ_CONFLICT]))


def test_add_conflict_note_leaves_complete_or_unrelated_answers_alone():
    complete = ("Quote laut Einträgen:\n\n⚠ Widerspruch: [lb-atz-07] (Stand 2026-01) nennt 28,5 %, "
                "[lb-atz-09] (Stand 2025-01) nennt 27,5 %.")
    assert add_conflict_note(complete, [ATZ_CONFLICT], extract_citations(complete)) == complete
    unrelated = "Der Urlaub umfasst 30 Werktage [lb-url-01]."
    assert add_conflict_note(unrelated, [ATZ_CONFLICT], ["lb-url-01"]) == unrelated


def test_a_key_token_shared_by_thousands_of_rows_stays_bounded_and_small_buckets_still_conflict():
    import time
    from lib.answer import conflicts as c
    many = [EntryFacts(f"syn-x-{n:04d}", f"T{n}", f"20{10 + n % 15}-01", "sv", [],
                       f"| Wert | Betrag |\n|---|---|\n| Beitragssatz Variante {n} | {n % 97 + 1},5 % |")
            for n in range(3000)]
    pair = [EntryFacts("lb-a-01", "A", "2025-01", "lst", [], "| Wert | Betrag |\n|---|---|\n| Freibetrag | € 620 |"),
            EntryFacts("lb-b-01", "B", "2024-01", "lst", [], "| Wert | Betrag |\n|---|---|\n| Freibetrag | € 600 |")]
    started = time.monotonic()
    found = c.detect_conflicts(many + pair)
    assert time.monotonic() - started < 20
    assert any(set(x.entry_ids) == {"lb-a-01", "lb-b-01"} for x in found)
    # the 3,000 rows sharing "beitragssatz" are not compared pairwise (no conflict of thousands of sides)
    assert all(len(x.entry_ids) <= c.MAX_BUCKET_ROWS for x in found)


def test_add_conflict_note_names_the_values_a_marked_paragraph_left_out():
    # both sides cited under ⚠, but the quoted passages are other rows of the two entries: the values are missing
    marked = ("⚠ Widerspruch: 2025: 35 %. [lb-atz-07] (Stand 2026-01)\n"
              "⚠ Widerspruch: Bei der kontinuierlichen Variante beträgt sie 90 %. [lb-atz-09] (Stand 2025-01)")
    noted = add_conflict_note(marked, [ATZ_CONFLICT], extract_citations(marked))
    note = noted[len(marked):].strip()
    assert note.startswith("⚠ Widerspruch in der Wissensbasis:")
    assert "28,5 %" in note and "27,5 %" in note
    # with both values in the marked paragraph nothing is added
    shown = marked.replace("2025: 35 %", "2026: 28,5 %").replace("90 %", "27,5 %")
    assert add_conflict_note(shown, [ATZ_CONFLICT], extract_citations(shown)) == shown
