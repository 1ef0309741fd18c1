"""Tests for lib/answer/validation.py: checks on a model answer and the regeneration note."""

from lib.answer.types import REFUSAL_TEXT, ContextBlock
from lib.answer.validation import strict_instruction, validate_answer
from answer_data import ATZ_CONFLICT, block, codes


GOOD = (
    "Das AMS ersetzt 28,5 % [lb-atz-07] (Stand 2026-01).\n\n"
    "| Wert | Betrag |\n|---|---|\n| Höchstbetrag Zuschuss | € 551,10 [lb-atz-07] (Stand 2026-01) |\n\n"
    "Der Urlaub umfasst 30 Werktage [lb-url-01] (Stand 2025-01)."
)


def test_validate_accepts_a_grounded_answer(blocks):
    result = validate_answer(GOOD, blocks)
    assert result.ok and result.violations == []
    assert result.cited_ids == ["lb-atz-07", "lb-url-01"]
    assert result.refused is False


def test_validate_flags_unknown_id(blocks):
    result = validate_answer(GOOD + " Siehe auch [lb-zz-99].", blocks)
    assert not result.ok
    assert ("unknown_id", "lb-zz-99") in [(v.code, v.detail) for v in result.violations]


def test_validate_flags_number_without_citation(blocks):
    answer = GOOD + "\n\nDie Antragsfrist beträgt 6 Wochen (Stand 2026-01)."
    result = validate_answer(answer, blocks)
    assert codes(result) == ["uncited_number"]
    assert "6 Wochen" in result.violations[0].detail
    # the same sentence is fine once its paragraph cites the entry
    assert validate_answer(answer.replace("(Stand 2026-01).", "(Stand 2026-01). [lb-atz-07]"), blocks).ok


def test_validate_flags_uncited_table_row(blocks):
    answer = "Kurz: siehe Tabelle.\n\n| Wert | Betrag |\n|---|---|\n| Quote | 28,5 % |\n\nEnde."
    result = validate_answer(answer, blocks)
    assert "uncited_number" in codes(result)
    covered = answer.replace("Kurz: siehe Tabelle.", "Werte laut [lb-atz-07] (Stand 2026-01):")
    assert validate_answer(covered, blocks).ok


def test_validate_flags_value_not_in_cited_block(blocks):
    result = validate_answer("Das AMS ersetzt 30 % [lb-atz-07] (Stand 2026-01).", blocks)
    assert codes(result) == ["value_not_in_source"]
    assert "30 %" in result.violations[0].detail
    # a value from another retrieved entry is still not in the cited one
    wrong_source = validate_answer("Der Urlaub umfasst 30 Werktage [lb-atz-07] (Stand 2026-01).", blocks)
    assert codes(wrong_source) == ["value_not_in_source"]
    # amounts match across notations: "551,10 €" in the answer, "€ 551,10" in the source
    assert validate_answer("Höchstens 551,10 € [lb-atz-07] (Stand 2026-01).", blocks).ok


def test_validate_ignores_years_and_legal_references(blocks):
    answer = "Seit 2026 gilt § 27 Abs. 2 AlVG unverändert [lb-atz-07]."
    assert validate_answer(answer, blocks).violations == []


def test_validate_flags_answer_without_citation(blocks):
    result = validate_answer("Die Altersteilzeit ist ein Modell zur Arbeitszeitverkürzung.", blocks)
    assert codes(result) == ["no_citation"] and not result.ok


def test_validate_refusal_needs_no_citation(blocks):
    result = validate_answer(REFUSAL_TEXT, blocks)
    assert result.refused and result.ok and result.cited_ids == []


def test_missing_stand_is_only_a_warning(blocks):
    result = validate_answer("Das AMS ersetzt 28,5 % [lb-atz-07].", blocks)
    assert codes(result) == ["missing_stand"]
    assert result.ok


def test_validate_flags_dropped_conflict_side(blocks):
    one_side = "Das AMS ersetzt 28,5 % [lb-atz-07] (Stand 2026-01)."
    result = validate_answer(one_side, blocks, [ATZ_CONFLICT])
    assert codes(result) == ["conflict_side_missing"]
    assert "lb-atz-09" in result.violations[0].detail
    both = one_side + ("\n\n⚠ Widerspruch: [lb-atz-07] (Stand 2026-01) nennt 28,5 %, "
                       "[lb-atz-09] (Stand 2025-01) nennt 27,5 %.")
    assert validate_answer(both, blocks, [ATZ_CONFLICT]).violations == []
    unmarked = one_side + " Laut [lb-atz-09] sind es 27,5 % (Stand 2025-01)."
    result = validate_answer(unmarked, blocks, [ATZ_CONFLICT])
    assert codes(result) == ["conflict_unmarked"] and result.ok
    # an answer about something else does not have to mention the conflict
    other = "Der Urlaub umfasst 30 Werktage [lb-url-01] (Stand 2025-01)."
    assert validate_answer(other, blocks, [ATZ_CONFLICT]).violations == []


def test_strict_instruction_names_the_problems(blocks):
    answer = "Das AMS ersetzt 30 % [lb-atz-07] (Stand 2026-01). Siehe [lb-zz-99]."
    note = strict_instruction(validate_answer(answer, blocks, [ATZ_CONFLICT]))
    assert "[lb-zz-99]" in note
    assert "30 %" in note
    assert "⚠ Widerspruch" in note and "lb-atz-09" in note
    assert strict_instruction(validate_answer(GOOD, blocks)) == ""


def test_a_value_is_read_with_the_year_of_its_column_or_its_nearest_year():
    from lib.answer.values import find_values, value_in_year, year_passages, years
    text = ("Seit 1. Jänner 2025 beträgt es € 0,50; der bisherige Satz von € 0,42 gilt bis Ende 2024.\n\n"
            "| Wert | 2024 | 2025 |\n|---|---|---|\n| HBGl monatlich | € 6.060 | € 6.450 |")
    assert "HBGl monatlich 2025 € 6.450" in year_passages(text)
    assert years("€ 2.100 im Jahr 2025 (Stand 2024-01), 25. Dienstjahr") == {"2025", "2024"}
    current = block("lb-x-01", text, stand="2025-01", title="Werte")
    value = lambda t: find_values(t)[0]
    assert value_in_year(value("€ 6.450"), "2025", [current]) and not value_in_year(value("€ 6.060"), "2025", [current])
    assert value_in_year(value("€ 0,50"), "2025", [current]) and not value_in_year(value("€ 0,42"), "2025", [current])
    # a passage without a year: the title's year, else the Stand (an older entry says nothing of a later year)
    timeless = block("lb-x-02", "Der Satz beträgt € 0,42.", stand="2023-05", title="Kilometergeld")
    assert value_in_year(value("€ 0,42"), "2023", [timeless]) and not value_in_year(value("€ 0,42"), "2025", [timeless])
    titled = block("lb-x-03", "Der Satz beträgt € 0,42.", stand="2025-01", title="Kilometergeld 2024")
    assert not value_in_year(value("€ 0,42"), "2025", [titled]) and value_in_year(value("€ 0,42"), "2024", [titled])


def test_free_text_stating_a_value_for_another_year_than_its_entry_gives_it_is_severe():
    km = [block("lb-rk-02", "Seit 1. Jänner 2025 beträgt es € 0,50 pro Kilometer; der bisherige Satz von € 0,42 "
                            "gilt nur mehr für Fahrten bis Ende 2024.", stand="2025-01", title="Kilometergeld ab 2025")]
    wrong = validate_answer("Ab 2025 beträgt das Kilometergeld € 0,42 [lb-rk-02] (Stand 2025-01).", km)
    assert "value_wrong_year" in codes(wrong)
    right = validate_answer("Ab 2025 beträgt das Kilometergeld € 0,50 [lb-rk-02] (Stand 2025-01).", km)
    assert "value_wrong_year" not in codes(right)
    # the Stand note alone names no year of the statement
    plain = validate_answer("Das Kilometergeld betrug € 0,42 [lb-rk-02] (Stand 2025-01).", km)
    assert "value_wrong_year" not in codes(plain)
    from lib.answer.outcome import SEVERE
    assert "value_wrong_year" in SEVERE


def test_a_sentence_without_a_year_is_held_to_the_year_of_the_question():
    kern = ContextBlock(entry_id="lb-rk-02", title="Kilometergeld", stand="2025-01", topic="rk", source="s",
                        heading_path="Kernwerte", section_key="kernwerte",
                        text="| Fahrzeug | bis 2024 | ab 2025 |\n|---|---|---|\n| Pkw | € 0,42 | € 0,50 |")
    answer = "Das Kilometergeld für den Pkw beträgt € 0,42 [lb-rk-02] (Stand 2025-01)."
    codes = [v.code for v in validate_answer(answer, [kern], question_year="2025").violations]
    assert "value_wrong_year" in codes
    assert "value_wrong_year" not in [v.code for v in validate_answer(answer, [kern]).violations]
    right = "Das Kilometergeld für den Pkw beträgt € 0,50 [lb-rk-02] (Stand 2025-01)."
    assert "value_wrong_year" not in [v.code for v in validate_answer(right, [kern], question_year="2025").violations]
