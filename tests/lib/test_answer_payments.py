from lib.answer import gate, payments

# a small base: entries on the Wochengeld and the Pendlerpauschale, a Familienbonus row that names the
# Familienbeihilfe as its condition, and a passage that names the Kinderbetreuungsgeld in passing
_VALUED = payments.valued_words(
    ["Mutterschutz – Beschäftigungsverbote und Wochengeld", "Pendlerpauschale", "Kernwerte"],
    ["Familienbonus Plus, Kind ab 18 mit Familienbeihilfe", "Kilometergeld", "Pkw"])


def test_valued_words_take_titles_whole_and_labels_without_their_conditions():
    assert {"wochengeld", "pendlerpauschale", "familienbonus", "kilometergeld"} <= _VALUED
    assert "familienbeihilfe" not in _VALUED, "a word after 'mit' is a condition of the value, not what it values"


def test_the_amount_of_a_payment_the_base_does_not_value_is_unvalued():
    assert payments.unvalued_payment("Wie viel Kinderbetreuungsgeld bekommt sie pro Tag?", _VALUED) \
        == "Kinderbetreuungsgeld"
    assert payments.unvalued_payment("Wie hoch ist die Familienbeihilfe für ein zehnjähriges Kind?", _VALUED) \
        == "Familienbeihilfe"
    # hyphenated: joined ("AUVA-Zuschuss" is no payment of the base)
    assert payments.unvalued_payment("Wie hoch ist der AUVA-Zuschuss pro Tag?", _VALUED) == "AUVA-Zuschuss"


def test_a_valued_payment_or_another_name_of_one_is_no_refusal():
    assert payments.unvalued_payment("Wie hoch ist das Wochengeld?", _VALUED) is None
    # the same thing paid for, another kind of payment the base values
    assert payments.unvalued_payment("Wie viel Pendlergeld bekommt man bei 30 km?", _VALUED) is None
    # a synonym-table term, alone or as the last part of a hyphenated word
    assert payments.unvalued_payment("Wie viel Steuerbonus gibt es pro Kind?", _VALUED, frozenset({"steuerbonus"})) \
        is None
    assert payments.unvalued_payment("Wie viel bringt der Kinder-Steuerbonus?", _VALUED,
                                     frozenset({"steuerbonus"})) is None
    assert payments.unvalued_payment("Wie viel Steuerbonus gibt es pro Kind?", _VALUED) == "Steuerbonus"


def test_only_an_asked_amount_of_the_payment_itself_counts():
    # a condition of the ask, not what it asks
    assert payments.unvalued_payment(
        "Wie viel Familienbonus gibt es für ein Kind mit Familienbeihilfe?", _VALUED) is None
    # no amount asked: a span, a yes/no question
    assert payments.unvalued_payment("Wie lange bekommt man Kinderbetreuungsgeld?", _VALUED) is None
    assert payments.unvalued_payment("Zählt das Kinderbetreuungsgeld als Einkommen?", _VALUED) is None
    # too short to name a payment of its own
    assert payments.unvalued_payment("Wie viel Zuschuss gibt es?", _VALUED) is None


def test_the_gate_checks_each_clause_of_the_asking_sentence():
    asked = "Wie viel Krankengeld zahlt die ÖGK, wenn die Entgeltfortzahlung endet – wie viel Prozent sind das?"
    assert gate.unvalued_payment(asked, _VALUED) == "Krankengeld"
    # a told case that names the payment, and an ask of something else
    assert gate.unvalued_payment("Sie bezieht Kinderbetreuungsgeld – wie hoch ist das Wochengeld?", _VALUED) is None
    # an earlier sentence tells the case
    assert gate.unvalued_payment("Sie bezieht Krankengeld. Wie hoch ist die Pendlerpauschale?", _VALUED) is None


def test_the_refusal_names_the_payment_and_says_what_is_missing():
    text = gate.refusal_answer(gate.Verdict(True, "unvalued_payment", [], subject="Kinderbetreuungsgeld"))
    assert text == "Einen Betrag oder Satz für „Kinderbetreuungsgeld“ enthält die Wissensbasis nicht."
    assert gate.refusal_answer(gate.Verdict(True, "unknown_subject", [], subject="Kurzarbeit")) \
        == "Zu „Kurzarbeit“ enthält die Wissensbasis keine Aussage."


_UNITS = payments.label_units([("Grenze für die Dienstgeberabgabe (1,5-fach)", "€"), ("Kommunalsteuer", "%"),
                               ("Dienstgeberbeitrag", "%"), ("Dienstgeberbeitrag bis 2024", "€")])


def test_label_units_gather_every_unit_a_word_is_valued_in():
    assert _UNITS["dienstgeberabgabe"] == frozenset({"€"})
    assert _UNITS["dienstgeberbeitrag"] == frozenset({"%", "€"})


def test_the_rate_of_a_levy_valued_only_in_euro_is_unrated():
    asked = "Wie viel Prozent beträgt die pauschale Dienstgeberabgabe für geringfügig Beschäftigte?"
    assert payments.unrated_levy(asked, _UNITS) == "Dienstgeberabgabe"
    assert payments.unrated_levy("Mit welchem Prozentsatz wird die Dienstgeberabgabe berechnet?", _UNITS) \
        == "Dienstgeberabgabe"
    # a rate the base holds, an amount asked, a levy the base does not value at all: no decision here
    assert payments.unrated_levy("Wie viel Prozent beträgt die Kommunalsteuer?", _UNITS) is None
    assert payments.unrated_levy("Wie viel Prozent beträgt der Dienstgeberbeitrag?", _UNITS) is None
    assert payments.unrated_levy("Ab welcher Summe fällt die Dienstgeberabgabe an?", _UNITS) is None
    assert payments.unrated_levy("Wie viel Prozent beträgt die Werbeabgabe?", _UNITS) is None
    # a title names it: its units are unknown
    assert payments.unrated_levy(asked, _UNITS, frozenset({"dienstgeberabgabe"})) is None


def test_the_levy_must_be_what_the_rate_is_asked_of():
    asked = ("Fällt die Dienstgeberabgabe an, und müssen wir für sie auch in die Vorsorgekasse einzahlen – "
             "mit welchem Satz?")
    assert payments.unrated_levy(asked, _UNITS) is None
    assert gate.unrated_levy("Wir liegen darüber. Mit wie viel Prozent wird die Dienstgeberabgabe berechnet?",
                             _UNITS) == "Dienstgeberabgabe"
    text = gate.refusal_answer(gate.Verdict(True, "unrated_levy", [], subject="Dienstgeberabgabe"))
    assert text == "Einen Prozentsatz für „Dienstgeberabgabe“ enthält die Wissensbasis nicht."


def test_an_absetzbetrag_the_base_does_not_value_is_unvalued():
    valued = payments.valued_words(["Absetzbeträge in der Lohnverrechnung"], ["Verkehrsabsetzbetrag"])
    assert payments.unvalued_payment("Wieviel Kinderabsetzbetrag gibt es pro Kind und Monat?", valued) \
        == "Kinderabsetzbetrag"
    assert payments.unvalued_payment("Wie hoch ist der Verkehrsabsetzbetrag 2025?", valued) is None
