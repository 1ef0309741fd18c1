"""Value sentences: the shapes read (from the demo base's Zusammenfassung and Kernwerte), the shapes skipped, and
that a sentence never gives a value a year it does not state."""
from decimal import Decimal

import pytest

from facts_data import ABBREV, DEMO, sources
from lib.facts.extract import Source, extract_facts
from lib.facts.sentences import read_paragraph, sentences


def read(text):
    return [(v.subject, v.period.label() if v.period else "", v.value_text) for v in read_paragraph(text, [1], [text])]


@pytest.mark.parametrize("text,expected", [
    # the shapes of the demo base (lb-lnk-01, lb-lnk-02, lb-rk-01, lb-sb-01)
    ("Der Dienstgeberbeitrag zum Familienlastenausgleichsfonds (DB) beträgt ab 2025 3,7 % der Summe der "
     "Arbeitslöhne eines Kalendermonats.", [("Dienstgeberbeitrag zum Familienlastenausgleichsfonds (DB)", "ab 2025",
                                           "3,7 %")]),
    ("Die Kommunalsteuer beträgt 3 % der Bruttolohnsumme, die an die Dienstnehmer einer Betriebsstätte im "
     "Kalendermonat ausgezahlt wird.", [("Kommunalsteuer", "", "3 %")]),
    ("Das Nächtigungsgeld ohne Beleg beträgt ab 2025 € 17 (bis 2024: € 15); werden die tatsächlichen "
     "Nächtigungskosten belegt, können sie in voller Höhe ersetzt werden.",
     [("Nächtigungsgeld ohne Beleg", "ab 2025", "€ 17"), ("Nächtigungsgeld ohne Beleg", "bis 2024", "€ 15")]),
    ("Der Regelsatz beträgt 2 % der Anschaffungskosten pro Monat, höchstens € 960. Für Fahrzeuge mit niedrigem "
     "CO2-Emissionswert gilt ein begünstigter Satz von 1,5 %, höchstens € 720.", [("Regelsatz", "", "2 %")]),
    # the plain shapes: year and basis between verb and value, the year first, "liegt … bei", a continuation
    ("Die Geringfügigkeitsgrenze beträgt 2025 monatlich € 551,10.", [("Geringfügigkeitsgrenze", "2025", "€ 551,10")]),
    ("Der Beitragssatz zur Betrieblichen Vorsorge beträgt 1,53 %.",
     [("Beitragssatz zur Betrieblichen Vorsorge", "", "1,53 %")]),
    ("Für 2025 beträgt die Geringfügigkeitsgrenze € 551,10 pro Kalendermonat (2024: € 518,44).",
     [("Geringfügigkeitsgrenze", "2025", "€ 551,10 pro Kalendermonat"), ("Geringfügigkeitsgrenze", "2024", "€ 518,44")]),
    ("Die Höchstbeitragsgrundlage liegt 2025 bei € 6.450 monatlich.",
     [("Höchstbeitragsgrundlage", "2025", "€ 6.450 monatlich")]),
    ("Die Ersatzquote bei Blockzeit beträgt 2025 35 %. Ab 2026 sind es 27,5 %.",
     [("Ersatzquote bei Blockzeit", "2025", "35 %"), ("Ersatzquote bei Blockzeit", "ab 2026", "27,5 %")]),
    ("Das Urlaubsausmaß ab dem 26. Dienstjahr beträgt 36 Werktage.",
     [("Urlaubsausmaß ab dem 26. Dienstjahr", "", "36 Werktage")]),
    ("Die Geringfügigkeitsgrenze lag 2022 bei € 485,85 im Monat.", [("Geringfügigkeitsgrenze", "2022", "€ 485,85 im Monat")]),
])
def test_value_sentences_are_read(text, expected):
    assert read(text) == expected


@pytest.mark.parametrize("text", [
    # the demo base's sentences that state values in a shape not clear enough
    "Für 2025 beträgt sie € 551,10 pro Kalendermonat (2024: € 518,44).",            # "sie": no value sentence before
    "Bei der kontinuierlichen Variante beträgt sie 90 %.",                           # a pronoun after a condition
    "Die Ersatzquote für die Blockzeit sinkt stufenweise; für Altersteilzeiten mit Beginn 2026 beträgt sie 28,5 %.",
    "Für das Jahr 2022 lag diese Grenze bei € 485,85 im Monat.",                     # "diese": which one
    "Er war in den Jahren 2018 bis 2022 mit 3,9 % festgesetzt; 2023 und 2024 war eine Senkung auf 3,7 % möglich.",
    "Beträgt die Beitragsgrundlage im Monat nicht mehr als € 1.460, verringert sie sich um € 1.095.",   # a condition
    "Der Sachbezug beträgt (€ 20.000 − € 7.300) × 4,5 % = € 571,50 im Jahr, monatlich € 47,63.",        # a calculation
    "Er wird von der jeweiligen Landeskammer festgesetzt und liegt 2025 je nach Bundesland ungefähr zwischen 0,3 % "
    "und 0,42 % der DB-Bemessungsgrundlage.",
    "Bei einer Fünf-Tage-Woche wird in Arbeitstage umgerechnet: 25 bzw. 30 Arbeitstage.",
    "Ein Freibetrag von € 620 bleibt jedenfalls steuerfrei.",                        # indefinite: an example or a rule
    # shapes that would give a value the wrong concept or year
    "Die Grenze beträgt € 551,10.",                                                  # a generic word names nothing
    "Die Geringfügigkeitsgrenze lag bei € 485,85 im Monat.",                         # past, without its year
    "Die Freigrenze beträgt € 2.100, bis 2023 € 2.000.",                             # another year in the sentence
    "Der Urlaubsanspruch beträgt 30 Werktage, ab dem 26. Dienstjahr 36 Werktage.",   # a second value of the unit
    "Die Zuschläge sind bis € 360 monatlich lohnsteuerfrei.",                        # a bound of a property
    "Die Ersatzquote beträgt 35 %. Dann sind es 27,5 %.",                            # continuation without a year
    "Die Geringfügigkeitsgrenze beträgt monatlich € 551,10. Ab 2026 beträgt er € 560.",   # "er" is not "die …"
])
def test_unclear_sentences_are_skipped(text):
    values = read(text)
    assert all(subject in ("Ersatzquote", "Geringfügigkeitsgrenze") for subject, _, _ in values), values
    assert len(values) <= 1


def test_sentences_end_after_an_amount_but_not_after_an_ordinal():
    assert sentences("Der Regelsatz beträgt 2 %, höchstens € 960. Für Fahrzeuge gilt 1,5 %.") == [
        "Der Regelsatz beträgt 2 %, höchstens € 960.", "Für Fahrzeuge gilt 1,5 %."]
    assert len(sentences("Der Familienbonus gilt bis zum 18. Geburtstag des Kindes.")) == 1


def _demo(name):
    (source,) = sources(DEMO, f"{name}.md")
    return source


def test_a_sentence_fact_has_its_place_concept_and_period():
    source = _demo("lb-lnk-02")
    body = source.body.replace("| Kommunalsteuer", "| Satz der Steuer", 1).replace("| 3 %", "| 3,5 %", 1)
    facts = [f for f in extract_facts(Source(**{**source.__dict__, "body": body}), ABBREV) if f.origin == "sentence"]
    fact = next(f for f in facts if f.label == "Kommunalsteuer")
    assert (fact.value.amount, fact.value.unit, fact.section) == (Decimal(3), "%", "zusammenfassung")
    assert not fact.period.explicit and fact.period.start == 2025          # the Stand's year: "ohne Jahresangabe"
    assert body.split("\n")[fact.line - 1].startswith("Die Kommunalsteuer beträgt 3 %")
    assert fact.passage.startswith("Die Kommunalsteuer beträgt 3 % der Bruttolohnsumme") and fact.passage.endswith(".")


def test_sentences_that_repeat_a_table_value_are_no_facts_of_their_own():
    # lb-rk-01 states the Nächtigungsgeld in its summary and in its table: the table cells are the facts
    facts = extract_facts(_demo("lb-rk-01"), ABBREV)
    assert not [f for f in facts if f.origin == "sentence"]
    assert {f.text for f in facts if f.label.startswith("Nächtigungsgeld")} >= {"€ 17", "€ 15"}


def test_example_sections_give_no_facts():
    # lb-lst-01's "### Beispiel": "Die Tarifsteuer beträgt € 4.176,70; …" is a worked example
    facts = extract_facts(_demo("lb-lst-01"), ABBREV)
    assert not [f for f in facts if "Tarifsteuer" in f.concept]
    body = "## Zusammenfassung\nText.\n\n## Kernwerte & Fristen\n### Beispiel\nDie Tarifsteuer beträgt € 4.176,70.\n"
    source = Source("x-1", "Lohnsteuertarif", "2025-01", "lohnsteuer", body)
    assert not extract_facts(source, ABBREV)
    assert [f.text for f in extract_facts(Source("x-1", "Lohnsteuertarif", "2025-01", "lohnsteuer",
                                                 body.replace("### Beispiel\n", "")), ABBREV)] == ["€ 4.176,70"]
