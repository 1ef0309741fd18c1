"""Tests for lib.text_de: folding, compounds, index text, synonyms, queries."""
import re
from pathlib import Path

import pytest

from lib import text_de

REPO = Path(__file__).resolve().parents[2]
SYNONYM_CSV = REPO / "data" / "pv.kb.synonym.csv"
SAFE_TSQUERY = re.compile(r"[a-z0-9 |&():*]*")


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


# --------------------------------------------------------------------------- lexicon / compounds


def test_build_lexicon_counts_folded_words_of_min_length():
    lex = text_de.build_lexicon(["Der Urlaub, der Urlaub!", "URLAUB 2025 im Jahr", "Lohn"], min_len=4)
    assert lex["urlaub"] == 3
    assert lex["jahr"] == 1 and lex["lohn"] == 1
    assert "der" not in lex and "im" not in lex and "2025" not in lex


def _lex(**counts):
    return text_de.Lexicon(counts)


def test_split_compound_examples_from_the_brief():
    lex = _lex(ueberstunden=5, zuschlaege=3, urlaub=10, urlaubs=2, ersatzleistung=2, ersatz=4, leistung=9,
               ueber=80, stunden=7)
    assert text_de.split_compound("ueberstundenzuschlaege", lex) == ["ueberstunden", "zuschlaege"]
    # Fugen-s removed; the fewest parts win over urlaub|ersatz|leistung.
    assert text_de.split_compound("urlaubsersatzleistung", lex) == ["urlaub", "ersatzleistung"]
    # Raw spelling works too.
    assert text_de.split_compound("Überstundenzuschläge", lex) == ["ueberstunden", "zuschlaege"]


def test_split_compound_recurses_when_a_part_is_unknown():
    lex = _lex(urlaub=10, ersatz=4, leistung=9)
    assert text_de.split_compound("urlaubsersatzleistung", lex) == ["urlaub", "ersatz", "leistung"]


@pytest.mark.parametrize("word, counts, parts", [
    ("bundesgesetz", {"bund": 5, "gesetz": 5}, ["bund", "gesetz"]),          # -es
    ("wochenstunden", {"woche": 5, "stunden": 5}, ["woche", "stunden"]),     # -n
    ("kinderbetreuung", {"kind": 5, "betreuung": 5}, ["kind", "betreuung"]), # -er
    ("arbeitsrecht", {"arbeit": 5, "recht": 5}, ["arbeit", "recht"]),        # -s
    ("schulbuch", {"schule": 5, "buch": 5}, ["schule", "buch"]),             # dropped -e
    ("pensionskassen", {"pension": 5, "kasse": 5}, ["pension", "kasse"]),    # inflected last part
])
def test_split_compound_linking_elements(word, counts, parts):
    assert text_de.split_compound(word, text_de.Lexicon(counts)) == parts


def test_split_compound_refuses_unsure_splits():
    # No known first part.
    assert text_de.split_compound("sonderzahlung", _lex(zahlung=9)) == []
    # A stopword is never a part ("ueber" = "über").
    assert text_de.split_compound("ueberstunden", _lex(ueber=90, stunden=9)) == []
    # A short word seen once is more likely a fragment than a part.
    assert text_de.split_compound("lohnsteuer", _lex(lohn=1, steuer=5)) == []
    assert text_de.split_compound("lohnsteuer", _lex(lohn=2, steuer=5)) == ["lohn", "steuer"]
    # Too short for a word at all.
    assert text_de.split_compound("abc", _lex(abc=99)) == []


def test_split_compound_short_parts_need_a_high_count():
    low = text_de.Lexicon({"amt": 3, "arzt": 5})
    high = text_de.Lexicon({"amt": 60, "arzt": 5})
    assert text_de.split_compound("amtsarzt", low) == []
    assert text_de.split_compound("amtsarzt", high) == ["amt", "arzt"]


def test_split_compound_accepts_a_plain_dict_and_is_stable():
    counts = {"dienstgeber": 4, "beitrag": 6}
    assert text_de.split_compound("dienstgeberbeitrag", counts) == ["dienstgeber", "beitrag"]
    lex = text_de.Lexicon(counts)
    first = text_de.split_compound("dienstgeberbeitrag", lex)
    first.append("mutated")  # the caller's list must not leak into the cache
    assert text_de.split_compound("dienstgeberbeitrag", lex) == ["dienstgeber", "beitrag"]


# --------------------------------------------------------------------------- index_text


def test_index_text_writes_parts_next_to_the_compound_in_search_form():
    lex = _lex(ueberstunden=5, zuschlaege=3)
    out = text_de.index_text("Überstundenzuschläge für Teilzeit", lex).split()
    assert out == ["uberstundenzuschlage", "uberstunden", "zuschlage", "teilzeit"]


def test_index_text_drops_stopwords_in_umlaut_spelling_and_joins_hyphens():
    out = text_de.index_text("Dienstgeber-Beitrag über dem Wert nach § 41 FLAG", {}).split()
    assert "uber" not in out and "ueber" not in out and "dem" not in out
    assert out[:3] == ["dienstgeber", "beitrag", "dienstgeberbeitrag"]
    assert "p41flag" in out


# --------------------------------------------------------------------------- synonyms


def test_parse_synonyms_collects_problems_and_merges_repeated_terms():
    table = text_de.parse_synonyms([
        ("Firmenauto", "Dienstwagen; Sachbezug"),
        ("", "Sonderzahlung"),
        ("Weihnachtsgeld", " ; "),
        ("firmenauto", "Kraftfahrzeug;Dienstwagen"),
    ])
    assert len(table) == 1
    entry = table.entries[0]
    assert entry.expansion_labels == ("Dienstwagen", "Sachbezug", "Kraftfahrzeug")
    assert len(table.problems) == 2
    assert "Zeile 2" in table.problems[0] and "Begriff" in table.problems[0]
    assert "Weihnachtsgeld" in table.problems[1]


def test_load_synonyms_csv_reads_the_shipped_file():
    rows = text_de.load_synonyms_csv(str(SYNONYM_CSV))
    assert len(rows) >= 50
    table = text_de.parse_synonyms(rows)
    assert table.problems == []
    assert len(table) == len(rows)  # no term twice
    lines = SYNONYM_CSV.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "id,term,expansions"
    ids = [line.split(",", 1)[0] for line in lines[1:]]
    assert len(ids) == len(set(ids)) and all(re.fullmatch(r"syn_[a-z0-9_]+", i) for i in ids)
    terms = {syn.term: syn.expansion_labels for syn in table.entries}
    assert "Sonderzahlung" in terms["Weihnachtsgeld"]
    assert "Dienstwagen" in terms["Firmenauto"]


def test_load_synonyms_csv_rejects_a_wrong_header(tmp_path):
    path = tmp_path / "syn.csv"
    path.write_text("id,begriff,ersatz\nsyn_x,a,b\n", encoding="utf-8")
    with pytest.raises(ValueError, match="Kopfzeile id,term,expansions"):
        text_de.load_synonyms_csv(str(path))


# --------------------------------------------------------------------------- build_query


@pytest.fixture(scope="module")
def synonyms():
    return text_de.parse_synonyms([
        ("Firmenauto", "Dienstwagen;Sachbezug"),
        ("Weihnachtsgeld", "Sonderzahlung;sonstige Bezüge"),
        ("AN", "Arbeitnehmer"),
        ("FLAF", "Familienlastenausgleichsfonds"),
    ])


@pytest.mark.parametrize("question", [
    "", "   ", "§§", "😀😀", "'; DROP TABLE pv_kb_chunk; --", "a & b | !c", "(((", "::*", "\\'\"",
    "Wie ist das?", "wo",
])
def test_build_query_is_always_safe(question, synonyms):
    plan = text_de.build_query(question, {}, synonyms)
    assert SAFE_TSQUERY.fullmatch(plan.tsquery)
    assert plan.tsquery.count("(") == plan.tsquery.count(")")
    assert not plan.tsquery.startswith("|") and not plan.tsquery.endswith("|")


def test_build_query_empty_when_nothing_is_left(synonyms):
    for question in ("", "§§", "😀", "Wie ist das?", "Was gilt da?"):
        assert text_de.build_query(question, {}, synonyms).tsquery == ""
    assert text_de.build_query("'; DROP", {}, synonyms).tsquery == "drop"


def test_build_query_drops_question_words_and_adds_compound_parts():
    lex = _lex(urlaub=10, ersatzleistung=3)
    plan = text_de.build_query("Wie hoch ist die Urlaubsersatzleistung?", lex, None)
    atoms = plan.tsquery.split(" | ")
    assert atoms == ["urlaubsersatzleistung:*", "urlaub:*", "ersatzleistung:*"]
    assert plan.terms == ["urlaubsersatzleistung"] and plan.parts == ["urlaub", "ersatzleistung"]


def test_build_query_prefix_only_for_long_words():
    plan = text_de.build_query("FLAF Lohn Zuschläge", {}, None)
    assert plan.tsquery.split(" | ") == ["flaf", "lohn", "zuschlage:*"]
    assert "zuschlage:*" not in text_de.build_query("Zuschläge", {}, None, prefix_min=0).tsquery


def test_build_query_expands_synonyms_with_and_groups(synonyms):
    plan = text_de.build_query("Wird das Weihnachtsgeld versteuert?", {}, synonyms)
    assert "sonderzahlung:*" in plan.tsquery.split(" | ")
    assert "(sonstige:* & bezuge:*)" in plan.tsquery.split(" | ")
    assert plan.synonyms == ["Weihnachtsgeld"]
    # An inflected form matches as well.
    assert "dienstwagen:*" in text_de.build_query("Zwei Firmenautos", {}, synonyms).tsquery


def test_build_query_uppercase_stopword_terms_match_case_sensitively(synonyms):
    assert "arbeitnehmer:*" in text_de.build_query("Was bekommt der AN?", {}, synonyms).tsquery
    assert "arbeitnehmer" not in text_de.build_query("Ich gehe an die Arbeit", {}, synonyms).tsquery
    # Other abbreviations are matched in any case.
    assert "familienlastenausgleichsfonds:*" in text_de.build_query("flaf 2025", {}, synonyms).tsquery


def test_build_query_synonyms_match_compound_parts(synonyms):
    lex = _lex(weihnachtsgeld=4, anspruch=6)
    plan = text_de.build_query("Weihnachtsgeldanspruch", lex, synonyms)
    assert plan.parts == ["weihnachtsgeld", "anspruch"]
    assert "sonderzahlung:*" in plan.tsquery


def test_build_query_keeps_paragraph_tokens():
    plan = text_de.build_query("Was regelt § 67 Abs. 1 EStG?", {}, None)
    assert plan.tsquery.split(" | ") == ["67", "estg", "p67estg"]


def test_build_query_caps_the_number_of_atoms():
    question = " ".join(f"wort{i:03d}x" for i in range(100))
    plan = text_de.build_query(question, {}, None, max_atoms=10)
    assert len(plan.tsquery.split(" | ")) == 10


@pytest.mark.parametrize("question, expected", [
    ("Wie hoch ist die Geringfügigkeitsgrenze?", True),
    ("Wie viel Urlaub steht mir zu?", True),
    ("Bis wann ist der Lohnzettel zu übermitteln?", True),
    ("Welcher Beitragssatz gilt für die BV-Kasse?", True),
    ("Sind 28,5 % richtig?", True),
    ("Welche Frist gilt für die Kündigung?", True),
    ("Was ist eine Urlaubsersatzleistung?", False),
    ("Wer bekommt einen Dienstwagen?", False),
])
def test_build_query_detects_value_questions(question, expected):
    assert text_de.build_query(question, {}, None).is_value_question is expected


# --------------------------------------------------------------------------- performance


def test_prune_tsquery_drops_common_atoms_but_keeps_the_rarest():
    from lib.text_de import prune_tsquery, tsquery_atoms

    shares = {"arbeitnehm": 0.6, "freibetrag": 0.01, "sonderzahl": 0.05, "jahr": 0.5, "weihnacht": 0.002,
              "geld": 0.4}
    query = "arbeitnehm:* | freibetrag | sonderzahl:* | jahr | (weihnacht & geld)"
    pruned = prune_tsquery(query, lambda w, prefix: shares[w], max_ratio=0.15, keep_min=2)
    assert tsquery_atoms(pruned) == ["freibetrag", "sonderzahl:*", "(weihnacht & geld)"]
    # everything common: the keep_min rarest stay, in their original order
    pruned = prune_tsquery("arbeitnehm:* | jahr | geld", lambda w, p: shares[w], max_ratio=0.1, keep_min=2)
    assert tsquery_atoms(pruned) == ["jahr", "geld"]
    assert prune_tsquery("a | b", lambda w, p: 1.0, keep_min=3) == "a | b"
    # atoms that match nothing never take the place of common ones that do
    shares.update(ahv=0.0, schweiz=0.0, grenzgaenger=0.0)
    pruned = prune_tsquery("freibetrag | ahv | schweiz | grenzgaenger | jahr", lambda w, p: shares[w],
                           max_ratio=0.005, keep_min=1)
    assert tsquery_atoms(pruned) == ["freibetrag"]
    assert prune_tsquery("ahv | schweiz | grenzgaenger | x", lambda w, p: 0.0) == "ahv | schweiz | grenzgaenger | x"
    # the budget bounds the rows to rank: rarest first while the shares add up to at most the budget
    query = "arbeitnehm:* | freibetrag | sonderzahl:* | jahr | (weihnacht & geld)"
    pruned = prune_tsquery(query, lambda w, p: shares[w], max_ratio=0.5, keep_min=1, budget=0.02)
    assert tsquery_atoms(pruned) == ["freibetrag", "(weihnacht & geld)"]
