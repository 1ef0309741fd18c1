"""Tests for lib.text.german: folding, tokens, search form."""
from lib.text import german as text_de


# --------------------------------------------------------------------------- fold / tokens


def test_fold_transliterates_umlauts_sharp_s_and_accents():
    assert text_de.fold("Überstundenzuschläge für Straße") == "ueberstundenzuschlaege fuer strasse"
    assert text_de.fold("Café Öl") == "cafe oel"
    # A decomposed umlaut (a + combining diaeresis) folds like the composed one.
    assert text_de.fold("Za\u0308hler") == "zaehler"
    assert text_de.fold("GROẞ") == "gross"


def test_fold_normalises_dashes_and_quotes():
    assert text_de.fold("Abfertigung neu \u2013 \u201eBMSVG\u201c \u2018x\u2019") == 'abfertigung neu - "bmsvg" \'x\''


def test_fold_turns_paragraph_reference_into_joined_token():
    assert text_de.fold("§ 67 EStG") == "67 estg p67estg"
    folded = text_de.fold("gemäß § 67 Abs. 1 EStG gilt")
    assert folded.split()[-2:] == ["p67estg", "gilt"]
    assert "§" not in folded


def test_fold_paragraph_variants():
    assert text_de.tokens("§§ 67 und 68 EStG")[-2:] == ["p67estg", "p68estg"]
    toks = text_de.tokens("§ 3 Abs. 1 Z 16b EStG")
    assert "p3estg" in toks and "p1estg" not in toks and "p16bestg" not in toks
    assert "p5bkuvg" in text_de.tokens("§ 5 B-KUVG")
    # Without a law abbreviation only the paragraph number is joined;
    # an ordinary capitalised word after it stays text.
    assert text_de.tokens("nach § 67 Der Arbeitgeber") == ["nach", "67", "p67", "der", "arbeitgeber"]
    assert text_de.tokens("§§") == []


def test_tokens_are_folded_words():
    assert text_de.tokens("Dienstgeber-Beitrag: 3,7 %!") == ["dienstgeber", "beitrag", "3", "7"]


def test_search_form_maps_transliterations_but_keeps_real_ue():
    assert text_de.search_form("zuschlaege") == "zuschlage"
    assert text_de.search_form("ueberstunden") == "uberstunden"
    assert text_de.search_form("hoehe") == "hohe"
    # "ue" after a vowel or q is not an umlaut.
    for word in ("steuer", "neue", "quelle", "dauer"):
        assert text_de.search_form(word) == word


def test_fold_name_treats_umlauts_and_their_spellings_alike():
    from lib.text.german import fold_name
    assert {fold_name(n) for n in ("Müller", "Mueller", "MULLER", "muller", "MÜLLER")} == {"muller"}
    assert fold_name("Łukasz Øster") == "lukasz oster"
    assert fold_name("Strauß") == "strauss"
    assert fold_name("O’Brien") == fold_name("O'Brien")
