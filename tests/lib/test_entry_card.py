"""Tests for lib.search.entry_card: which synonyms a card carries and how its text is laid out."""
from lib.search.entry_card import card_synonyms, card_text
from lib.search.fulltext import parse_synonyms

TABLE = parse_synonyms([
    ("Firmenauto", "Dienstwagen; Sachbezug; Kraftfahrzeug"),
    ("Weihnachtsgeld", "Sonderzahlung; Weihnachtsremuneration; sonstige Bezüge"),
    ("Dienstwagen", "Firmenauto"),
    ("AN", "Arbeitnehmer; Dienstnehmer"),
    ("DN", "Dienstnehmer; Arbeitnehmer"),
    ("Abfertigung alt", "Abfertigung; Angestelltengesetz"),
])


def test_synonyms_pointing_at_the_title_or_a_tag():
    assert card_synonyms(TABLE, "Dienstwagen – Sachbezug für die Privatnutzung", ["Sachbezug", "Fahrtenbuch"]) == \
        ["Firmenauto"]
    assert card_synonyms(TABLE, "Sonstige Bezüge – Freibetrag", ["Weihnachtsremuneration"]) == ["Weihnachtsgeld"]
    # the inflected form in a title still counts ("Dienstnehmer" from "Dienstnehmers" is not needed: plural -n)
    assert card_synonyms(TABLE, "Beitragssätze Dienstnehmer und Dienstgeber", []) == ["DN"]
    assert card_synonyms(TABLE, "Urlaub", ["Verjährung"]) == []
    assert card_synonyms(None, "Dienstwagen", []) == []


def test_a_term_already_in_the_title_or_tags_is_left_out():
    # "Abfertigung alt" is the entry's own tag: nothing new; "Dienstwagen" is in the title
    assert card_synonyms(TABLE, "Abfertigung alt – Anspruch und Höhe", ["Abfertigung alt", "Abfertigung"]) == []
    assert "Dienstwagen" not in card_synonyms(TABLE, "Dienstwagen und Firmenauto", [])


def test_case_sensitive_abbreviations_do_not_enter_cards():
    # "AN" folds to a stopword and only matches as typed: on a card it would be noise
    assert "AN" not in card_synonyms(TABLE, "Arbeitnehmer", [])


def test_card_text_layout_and_cut():
    text = card_text(tags=["Sachbezug", " ", "Dienstwagen"], synonyms=["Firmenauto"],
                     legal_bases=["§ 15 Abs. 2 EStG"], summary="Der  Sachbezug\nbeträgt 2 %.")
    assert text == ("Stichwörter: Sachbezug, Dienstwagen\nAuch genannt: Firmenauto\n"
                    "Rechtsgrundlagen: § 15 Abs. 2 EStG\nDer Sachbezug beträgt 2 %.")
    assert card_text() == ""
    long = card_text(tags=["A"], summary="wort " * 1000, max_chars=200)
    assert len(long) <= 200 and long.startswith("Stichwörter: A\n") and not long.endswith(" ")
