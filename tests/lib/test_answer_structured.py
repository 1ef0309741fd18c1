"""Tests for the structured mode (lib/answer/structured.py, structured_checks.py, structured_render.py): schema,
parsing, per-statement checks, rendering, streaming, modes."""
import json

import pytest

from lib.answer import structured as s, structured_checks as checks, structured_render as render
from lib.answer.types import REFUSAL_TEXT, Conflict, ContextBlock

SZ_TEXT = ("Sonstige Bezüge innerhalb des Jahressechstels sind nach Abzug der Sozialversicherung bis "
           "€ 620 steuerfrei. Darüber gilt ein fester Steuersatz von 6 % bis zur Freigrenze von € 2.100.")


def block(entry_id, text, stand="2026-01", title="Sonderzahlungen – Besteuerung"):
    return ContextBlock(entry_id=entry_id, title=title, stand=stand, topic="sonderzahlungen",
                        source="Lexis", heading_path=f"{title} > Kernwerte", text=text, section_key="kernwerte",
                        score=1.0)


@pytest.fixture
def blocks():
    return [block("lb-sz-01", SZ_TEXT),
            block("lb-rk-02", "Das amtliche Kilometergeld beträgt ab 2025 € 0,50 je Kilometer.", stand="2025-01",
                  title="Kilometergeld"),
            block("wiku-rk-01", "Das Kilometergeld beträgt € 0,42 je Kilometer.", stand="2024-01",
                  title="Kilometergeld alt")]


def good_statement(**kw):
    data = {"quellen": ["lb-sz-01"], "zitat": "bis € 620 steuerfrei",
            "text": "Der Freibetrag für sonstige Bezüge beträgt € 620.",
            "werte": [{"wert": "€ 620", "stand": "2026-01"}]}
    data.update(kw)
    return s.statement_from(data)


def codes(checked):
    return sorted({v.code for v in checked.violations})


def test_schema_lists_retrieved_ids_as_enum_and_requires_the_statement_fields():
    schema = s.answer_schema(["lb-sz-01", "lb-rk-02", "lb-sz-01"])
    item = schema["properties"]["aussagen"]["items"]
    assert item["properties"]["quellen"]["items"]["enum"] == ["lb-sz-01", "lb-rk-02"]
    assert set(item["required"]) == {"quellen", "zitat", "text", "werte"}
    # the verdict first (a grammar-constrained model writes in this order; see answer_schema)
    assert list(schema["properties"]) == schema["required"] == ["verweigert", "grund", "aussagen"]
    assert "enum" not in s.answer_schema([])["properties"]["aussagen"]["items"]["properties"]["quellen"]["items"]


def test_parse_response_reads_statements_refusals_and_rejects_garbage():
    raw = json.dumps({"verweigert": False, "grund": "", "aussagen": [
        {"quellen": ["LB-SZ-01"], "zitat": "q", "text": "t", "werte": [{"wert": "€ 620", "stand": "2026-01"}]}]})
    parsed = s.parse_response("```json\n" + raw + "\n```")
    assert not parsed.error and not parsed.refused
    assert parsed.statements[0].ids == ["lb-sz-01"] and parsed.statements[0].values == [("€ 620", "2026-01")]
    refusal = s.parse_response('{"verweigert": true, "grund": "Nicht enthalten.", "aussagen": []}')
    assert refusal.refused and refusal.reason == "Nicht enthalten."
    assert s.parse_response("Der Freibetrag beträgt € 620 [lb-sz-01].").error
    assert s.parse_response('{"verweigert": false, "aussagen": {"x": 1}}').error
    assert s.parse_response('{"foo": 1}').error
    # "verweigert": false and no statement says nothing: read as a refusal, not as an empty answer
    assert s.parse_response('{"verweigert": false, "grund": "", "aussagen": []}').refused
    # statements and a refusal in one answer (a server that ignores the schema's order): the verdict wins
    late = s.parse_response('{"aussagen": [{"quellen": ["lb-sz-01"], "zitat": "q", "text": "t", "werte": []}], '
                            '"verweigert": true, "grund": "Passt nicht."}')
    assert late.refused and late.statements == [] and late.reason == "Passt nicht."


def test_match_quote_accepts_small_changes_and_rejects_paraphrase():
    assert checks.match_quote("bis € 620 steuerfrei", SZ_TEXT) == "620 steuerfrei" or \
        "620 steuerfrei" in checks.match_quote("bis € 620 steuerfrei", SZ_TEXT)
    passage = checks.match_quote("nach Abzug der Sozialversicherungen bis 620 Euro steuerfrei", SZ_TEXT)
    assert passage and passage.startswith("nach Abzug") and "steuerfrei" in passage
    assert checks.match_quote("Weihnachtsgeld ist immer komplett steuerfrei", SZ_TEXT) is None
    assert checks.match_quote("steuerfrei", SZ_TEXT) is None            # one word is no quote
    long_quote = " ".join(["Sonstige Bezüge innerhalb des Jahressechstels"] * 8)
    assert checks.match_quote(long_quote, SZ_TEXT) is None              # only the first 25 words count


def test_a_correct_statement_passes_and_renders_with_id_and_stand(blocks):
    checked = checks.check_statement(good_statement(), blocks)
    assert checked.ok and codes(checked) == [] and checked.passage_id == "lb-sz-01"
    assert "620 steuerfrei" in checked.passage
    text = render.render_answer([checked], blocks)
    assert text == "Der Freibetrag für sonstige Bezüge beträgt € 620. [lb-sz-01] (Stand 2026-01)"


@pytest.mark.parametrize("change, code", [
    ({"quellen": ["lb-xx-99"]}, "unknown_id"),
    ({"quellen": []}, "no_citation"),
    # no single sentence of the entry holds both values: the statement rests on nothing the code can show
    ({"zitat": "", "text": "Bis € 2.100 bleibt der Freibetrag von € 620 steuerfrei."}, "quote_missing"),
    ({"zitat": "Der Freibetrag ist immer 900 Euro hoch", "text": "Bis € 2.100 bleibt der Freibetrag von € 620 "
      "steuerfrei."}, "quote_not_found"),
    # the value stands in the entry, but not in a sentence about the same thing
    ({"zitat": "Die Freigrenze ist 620", "text": "Die Freigrenze für Sonderzahlungen liegt bei € 620."},
     "quote_not_found"),
    ({"text": "Der Freibetrag beträgt € 720."}, "value_not_in_source"),
    ({"werte": [{"wert": "€ 720", "stand": "2026-01"}]}, "value_not_in_source"),
    ({"werte": [{"wert": "€ 620", "stand": "2019-01"}]}, "stand_mismatch"),
    ({"text": "Antwortformat: Jeder Satz mit [id], jeder Wert mit (Stand JJJJ-MM)."}, "echo"),
])
def test_each_failing_rule_fails_the_statement(blocks, change, code):
    checked = checks.check_statement(good_statement(**change), blocks)
    assert code in codes(checked)
    assert not checked.ok
    assert render.render_answer([checked], blocks) == ""


def test_a_loose_quote_is_replaced_by_the_sentence_that_carries_the_statement(blocks):
    for quote in ("", "Der Freibetrag für sonstige Bezüge ist € 620."):   # as a 1.5B model wrote it
        checked = checks.check_statement(good_statement(zitat=quote), blocks)
        assert checked.ok and codes(checked) == ["quote_by_code"]
        assert checked.passage.startswith("Sonstige Bezüge innerhalb des Jahressechstels")
        assert checked.passage.endswith("€ 620 steuerfrei.") and checked.passage_id == "lb-sz-01"
    # a statement without values needs most of its words in one sentence
    plain = checks.check_statement(good_statement(text="Darüber gilt ein fester Steuersatz bis zur Freigrenze.",
                                                  zitat="fester Satz", werte=[]), blocks)
    assert plain.ok and "Freigrenze von € 2.100" in plain.passage
    vague = checks.check_statement(good_statement(text="Sonderzahlungen werden begünstigt behandelt.",
                                                  zitat="begünstigt", werte=[]), blocks)
    assert codes(vague) == ["quote_not_found"]


def test_the_subject_may_stand_in_the_sentence_before():
    gfb = [block("lb-gfb-01", "Ein Dienstverhältnis ist geringfügig, wenn das Entgelt die Geringfügigkeitsgrenze "
                              "nicht übersteigt. Für 2025 beträgt sie € 551,10 pro Kalendermonat (2024: € 518,44).",
                 stand="2025-01")]
    checked = checks.check_statement(good_statement(
        quellen=["lb-gfb-01"], zitat="Die Geringfügigkeitsgrenze 2025 liegt bei € 551,10 pro Kalendermonat.",
        text="Die Geringfügigkeitsgrenze 2025 liegt bei € 551,10 pro Kalendermonat.", werte=[]), gfb)
    assert checked.ok and codes(checked) == ["quote_by_code"]
    assert checked.passage.startswith("Ein Dienstverhältnis") and checked.passage.endswith("€ 518,44).")


def test_a_cited_entry_without_the_statements_values_is_not_shown_as_its_source(blocks):
    checked = checks.check_statement(good_statement(quellen=["lb-rk-02", "lb-sz-01", "wiku-rk-01"]), blocks)
    assert checked.ok and checked.ids == ["lb-sz-01"]
    assert codes(checked) == ["citation_pruned"]
    assert render.render_answer([checked], blocks) == \
        "Der Freibetrag für sonstige Bezüge beträgt € 620. [lb-sz-01] (Stand 2026-01)"
    # none of them holds the value: nothing is pruned, the value fails
    wrong = checks.check_statement(good_statement(quellen=["lb-rk-02", "lb-sz-01"], text="Es sind € 999."), blocks)
    assert "value_not_in_source" in codes(wrong) and "citation_pruned" not in codes(wrong)


def test_missing_stand_is_repaired_with_the_entrys_own_stand(blocks):
    checked = checks.check_statement(good_statement(werte=[{"wert": "€ 620", "stand": ""}]), blocks)
    assert codes(checked) == ["missing_stand"] and checked.ok
    assert "[lb-sz-01] (Stand 2026-01)" in render.render_answer([checked], blocks)


def test_ids_and_stand_written_into_the_text_are_checked_and_not_shown_twice(blocks):
    checked = checks.check_statement(good_statement(text="Freibetrag € 620 [lb-sz-01] (Stand 2026-01)"), blocks)
    assert checked.ok
    assert render.render_answer([checked], blocks) == "Freibetrag € 620. [lb-sz-01] (Stand 2026-01)"
    sneaky = checks.check_statement(good_statement(text="Freibetrag € 620 [lb-zz-01]"), blocks)
    assert "unknown_id" in codes(sneaky)


def test_only_passing_statements_are_rendered_and_conflicts_get_both_sides(blocks):
    conflict = Conflict("Kilometergeld", ["lb-rk-02", "wiku-rk-01"], {"lb-rk-02": "€ 0,50", "wiku-rk-01": "€ 0,42"},
                        {"lb-rk-02": "2025-01", "wiku-rk-01": "2024-01"})
    km = checks.check_statement(s.statement_from({
        "quellen": ["lb-rk-02"], "zitat": "Das amtliche Kilometergeld beträgt ab 2025 € 0,50 je Kilometer",
        "text": "Das Kilometergeld beträgt € 0,50 je Kilometer.", "werte": [{"wert": "€ 0,50", "stand": "2025-01"}],
        "widerspruch": ["lb-rk-02", "wiku-rk-01"]}), blocks)
    bad = checks.check_statement(good_statement(text="Der Freibetrag beträgt € 999."), blocks)
    answer = render.render_answer([km, bad], blocks, [conflict])
    assert "999" not in answer
    assert answer.startswith("⚠ Widerspruch: Das Kilometergeld beträgt € 0,50 je Kilometer. [lb-rk-02] (Stand 2025-01)")
    assert "[wiku-rk-01] (Stand 2024-01)" in answer     # the side the model left out, added by the code




def test_retry_note_names_each_failed_statement_and_why(blocks):
    bad = checks.check_statement(good_statement(text="Der Freibetrag beträgt € 720."), blocks)
    note = render.retry_note([bad])
    assert "€ 720" in note and "steht nicht im zitierten Eintrag" in note


def test_statement_stream_yields_each_statement_when_its_object_closes():
    raw = json.dumps({"verweigert": False, "grund": "", "aussagen": [
        {"quellen": ["a-1"], "zitat": "x {y} \"z\"", "text": "eins", "werte": []},
        {"quellen": ["b-2"], "zitat": "w", "text": "zwei", "werte": [{"wert": "1", "stand": "2026-01"}]}]})
    stream = s.StatementStream()
    seen = []
    for pos in range(0, len(raw), 7):
        got = stream.feed(raw[pos:pos + 7])
        seen.extend((pos, g.text) for g in got)
    assert [t for _p, t in seen] == ["eins", "zwei"]
    first_end = raw.index('"werte": []}') + len('"werte": []}')
    assert seen[0][0] <= first_end < seen[1][0]      # the first one came before the second was written


def test_ids_written_into_the_quote_are_not_part_of_the_passage(blocks):
    quote = "lb-rk-02: Das amtliche Kilometergeld beträgt ab 2025 € 0,50 je Kilometer"
    assert checks.clean_quote(quote).startswith("Das amtliche")
    assert checks.clean_quote("[lb-rk-02] – Das amtliche Kilometergeld").strip() == "Das amtliche Kilometergeld"
    checked = checks.check_statement(good_statement(
        quellen=["lb-rk-02"], zitat=quote, text="Das Kilometergeld beträgt ab 2025 € 0,50 je Kilometer.",
        werte=[{"wert": "€ 0,50", "stand": "2025-01"}]), blocks)
    assert checked.ok and codes(checked) == []
    assert checked.passage.startswith("Das amtliche Kilometergeld")


def test_a_statement_citing_the_neighbour_of_its_entry_is_moved_to_the_one_entry_that_carries_it(blocks):
    # the model copied from lb-sz-01 but cited lb-rk-02 (with lb-rk-02's Stand)
    checked = checks.check_statement(good_statement(
        quellen=["lb-rk-02"], zitat="Sonstige Bezüge innerhalb des Jahressechstels",
        werte=[{"wert": "€ 620", "stand": "2025-01"}]), blocks)
    assert checked.ok and checked.ids == ["lb-sz-01"]
    assert "citation_moved" in codes(checked) and "stand_mismatch" not in codes(checked)
    assert render.render_answer([checked], blocks).endswith("[lb-sz-01] (Stand 2026-01)")


def test_no_move_when_two_entries_carry_the_value_or_the_id_was_not_retrieved(blocks):
    twice = blocks + [block("lb-sz-09", "Sonstige Bezüge: Freibetrag € 620 steuerfrei im Jahressechstel.")]
    ambiguous = checks.check_statement(good_statement(quellen=["lb-rk-02"], zitat="", werte=[]), twice)
    assert not ambiguous.ok and "citation_moved" not in codes(ambiguous)
    invented = checks.check_statement(good_statement(quellen=["lb-zz-01"], zitat="", werte=[]), blocks)
    assert not invented.ok and "unknown_id" in codes(invented) and "citation_moved" not in codes(invented)
    # a value no retrieved entry holds stays a failure
    nowhere = checks.check_statement(good_statement(quellen=["lb-rk-02"], text="Der Freibetrag beträgt € 777.",
                                                    zitat="", werte=[]), blocks)
    assert "value_not_in_source" in codes(nowhere) and not nowhere.ok


KM_TABLE = ("Seit 1. Jänner 2025 beträgt es € 0,50 pro Kilometer für Personenkraftwagen; der bisherige Satz von "
            "€ 0,42 gilt nur mehr für Fahrten bis Ende 2024.\n\n| Fahrzeug | bis 2024 | ab 2025 |\n|---|---|---|\n"
            "| Pkw | € 0,42 | € 0,50 |")


def test_a_value_of_another_year_than_the_statement_names_fails_it():
    km = [block("lb-rk-02", KM_TABLE, stand="2025-01", title="Kilometergeld ab 2025"),
          block("wiku-rk-01", "Pkw: € 0,42 pro km", stand="2023-05", title="Kilometergeld")]
    # as the 1.5B model wrote it: the 2024 figure as the 2025 one, citing both sides
    wrong = checks.check_statement(good_statement(
        quellen=["lb-rk-02", "wiku-rk-01"], zitat="Pkw: € 0,42 pro km",
        text="Das Kilometergeld für Pkw ab 2025 beträgt € 0,42 pro km.", werte=[{"wert": "€ 0,42", "stand": "2025-01"}]), km)
    assert "value_wrong_year" in codes(wrong) and not wrong.ok
    right = checks.check_statement(good_statement(
        quellen=["lb-rk-02"], zitat="Seit 1. Jänner 2025 beträgt es € 0,50 pro Kilometer",
        text="Das Kilometergeld für Pkw ab 2025 beträgt € 0,50 pro km.", werte=[{"wert": "€ 0,50", "stand": "2025-01"}]), km)
    assert right.ok and "value_wrong_year" not in codes(right)
    old = checks.check_statement(good_statement(
        quellen=["lb-rk-02"], zitat="der bisherige Satz von € 0,42 gilt nur mehr für Fahrten bis Ende 2024",
        text="Bis 2024 galten € 0,42 pro Kilometer.", werte=[{"wert": "€ 0,42", "stand": "2025-01"}]), km)
    assert old.ok
    # without a year the statement is not judged by year
    plain = checks.check_statement(good_statement(
        quellen=["wiku-rk-01"], zitat="Pkw: € 0,42 pro km", text="Das Kilometergeld für Pkw beträgt € 0,42 pro km.",
        werte=[{"wert": "€ 0,42", "stand": "2023-05"}]), km)
    assert plain.ok


def test_a_statement_without_a_year_is_held_to_the_year_the_question_asks_for():
    from lib.answer import structured_checks as sc, values
    kern = ContextBlock(entry_id="lb-sv-01", title="Höchstbeitragsgrundlage", stand="2025-01", topic="sv", source="s",
                        heading_path="Kernwerte", section_key="kernwerte",
                        text="| Wert | 2024 | 2025 |\n|---|---|---|\n| HBGl Sonderzahlungen jährlich | € 12.120 | € 12.900 |\n\n"
                             "Urlaub: 30 Werktage im Jahr.")
    old = s.Statement(text="Die Höchstbeitragsgrundlage für Sonderzahlungen ist € 12.120.", ids=["lb-sv-01"],
                      quote="HBGl Sonderzahlungen jährlich", values=[("€ 12.120", "2025-01")])
    asked = values.asked_year("Wie hoch ist die Höchstbeitragsgrundlage für Sonderzahlungen 2025?")
    assert asked == "2025" and values.asked_year("2024 oder 2025?") is None and values.asked_year("Wie hoch?") is None
    codes = [v.code for v in sc.check_statement(old, [kern], asked).violations]
    assert "value_wrong_year" in codes
    assert not sc.check_statement(old, [kern], None).violations      # without the question's year: as before
    right = s.Statement(text="Die Höchstbeitragsgrundlage für Sonderzahlungen ist € 12.900.", ids=["lb-sv-01"],
                        quote="HBGl Sonderzahlungen jährlich", values=[("€ 12.900", "2025-01")])
    assert sc.check_statement(right, [kern], asked).ok
    # a value in a passage without a year is timeless: it stands for any year asked
    days = s.Statement(text="Der Urlaub beträgt 30 Werktage.", ids=["lb-sv-01"], quote="Urlaub: 30 Werktage im Jahr",
                       values=[("30 Werktage", "2025-01")])
    assert sc.check_statement(days, [kern], "2023").ok


def test_a_value_since_an_earlier_year_and_a_value_in_millions_stand_for_the_year_asked():
    from lib.answer import structured_checks as sc, values
    tarif = ContextBlock(entry_id="lb-lst-01", title="Lohnsteuertarif 2025", stand="2025-01", topic="lst", source="s",
                         heading_path="Zusammenfassung", section_key="zusammenfassung",
                         text="Seit 2023 werden die Tarifgrenzen angepasst; die Grenze der obersten Stufe von 55 % "
                              "(€ 1 Mio.) ist davon ausgenommen.\n\n| Einkommen 2025 | Satz |\n|---|---|\n"
                              "| über € 1.000.000 | 55 % |\n\nBis 2022 galt ein Freibetrag von € 400.")
    assert values.find_values("€ 1 Mio.")[0].number == values.find_values("€ 1.000.000")[0].number
    top = s.Statement(text="Der Satz von 55 % gilt ab € 1 Mio. Einkommen.", ids=["lb-lst-01"],
                      quote="die Grenze der obersten Stufe von 55 %", values=[("€ 1 Mio.", "2025-01")])
    assert sc.check_statement(top, [tarif], "2025").ok
    old = s.Statement(text="Es gibt einen Freibetrag von € 400.", ids=["lb-lst-01"], quote="galt ein Freibetrag",
                      values=[("€ 400", "2025-01")])
    assert "value_wrong_year" in [v.code for v in sc.check_statement(old, [tarif], "2025").violations]
    assert sc.check_statement(old, [tarif], "2021").ok
