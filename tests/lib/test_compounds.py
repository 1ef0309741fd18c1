"""Tests for lib.search.compounds: the corpus lexicon, compound splitting, the index text."""
import pytest

from lib.search import compounds


# --------------------------------------------------------------------------- lexicon / compounds


def test_build_lexicon_counts_folded_words_of_min_length():
    lex = compounds.build_lexicon(["Der Urlaub, der Urlaub!", "URLAUB 2025 im Jahr", "Lohn"], min_len=4)
    assert lex["urlaub"] == 3
    assert lex["jahr"] == 1 and lex["lohn"] == 1
    assert "der" not in lex and "im" not in lex and "2025" not in lex


def _lex(**counts):
    return compounds.Lexicon(counts)


def test_split_compound_examples_from_the_brief():
    lex = _lex(ueberstunden=5, zuschlaege=3, urlaub=10, urlaubs=2, ersatzleistung=2, ersatz=4, leistung=9,
               ueber=80, stunden=7)
    assert compounds.split_compound("ueberstundenzuschlaege", lex) == ["ueberstunden", "zuschlaege"]
    # Fugen-s removed; the fewest parts win over urlaub|ersatz|leistung.
    assert compounds.split_compound("urlaubsersatzleistung", lex) == ["urlaub", "ersatzleistung"]
    # Raw spelling works too.
    assert compounds.split_compound("Überstundenzuschläge", lex) == ["ueberstunden", "zuschlaege"]


def test_split_compound_recurses_when_a_part_is_unknown():
    lex = _lex(urlaub=10, ersatz=4, leistung=9)
    assert compounds.split_compound("urlaubsersatzleistung", lex) == ["urlaub", "ersatz", "leistung"]


@pytest.mark.parametrize("word, counts, parts", [
    ("bundesgesetz", {"bund": 5, "gesetz": 5}, ["bund", "gesetz"]),          # -es
    ("wochenstunden", {"woche": 5, "stunden": 5}, ["woche", "stunden"]),     # -n
    ("kinderbetreuung", {"kind": 5, "betreuung": 5}, ["kind", "betreuung"]), # -er
    ("arbeitsrecht", {"arbeit": 5, "recht": 5}, ["arbeit", "recht"]),        # -s
    ("schulbuch", {"schule": 5, "buch": 5}, ["schule", "buch"]),             # dropped -e
    ("pensionskassen", {"pension": 5, "kasse": 5}, ["pension", "kasse"]),    # inflected last part
])
def test_split_compound_linking_elements(word, counts, parts):
    assert compounds.split_compound(word, compounds.Lexicon(counts)) == parts


def test_split_compound_refuses_unsure_splits():
    # No known first part.
    assert compounds.split_compound("sonderzahlung", _lex(zahlung=9)) == []
    # A stopword is never a part ("ueber" = "über").
    assert compounds.split_compound("ueberstunden", _lex(ueber=90, stunden=9)) == []
    # A short word seen once is more likely a fragment than a part.
    assert compounds.split_compound("lohnsteuer", _lex(lohn=1, steuer=5)) == []
    assert compounds.split_compound("lohnsteuer", _lex(lohn=2, steuer=5)) == ["lohn", "steuer"]
    # Too short for a word at all.
    assert compounds.split_compound("abc", _lex(abc=99)) == []


def test_split_compound_short_parts_need_a_high_count():
    low = compounds.Lexicon({"amt": 3, "arzt": 5})
    high = compounds.Lexicon({"amt": 60, "arzt": 5})
    assert compounds.split_compound("amtsarzt", low) == []
    assert compounds.split_compound("amtsarzt", high) == ["amt", "arzt"]


def test_split_compound_accepts_a_plain_dict_and_is_stable():
    counts = {"dienstgeber": 4, "beitrag": 6}
    assert compounds.split_compound("dienstgeberbeitrag", counts) == ["dienstgeber", "beitrag"]
    lex = compounds.Lexicon(counts)
    first = compounds.split_compound("dienstgeberbeitrag", lex)
    first.append("mutated")  # the caller's list must not leak into the cache
    assert compounds.split_compound("dienstgeberbeitrag", lex) == ["dienstgeber", "beitrag"]


# --------------------------------------------------------------------------- index_text


def test_index_text_writes_parts_next_to_the_compound_in_search_form():
    lex = _lex(ueberstunden=5, zuschlaege=3)
    out = compounds.index_text("Überstundenzuschläge für Teilzeit", lex).split()
    assert out == ["uberstundenzuschlage", "uberstunden", "zuschlage", "teilzeit"]


def test_index_text_drops_stopwords_in_umlaut_spelling_and_joins_hyphens():
    out = compounds.index_text("Dienstgeber-Beitrag über dem Wert nach § 41 FLAG", {}).split()
    assert "uber" not in out and "ueber" not in out and "dem" not in out
    assert out[:3] == ["dienstgeber", "beitrag", "dienstgeberbeitrag"]
    assert "p41flag" in out
