"""Tests for lib.search.fulltext: synonyms, the full-text query of a question, pruning."""
import re
from pathlib import Path

import pytest

from lib.search import compounds, fulltext

REPO = Path(__file__).resolve().parents[2]
SYNONYM_CSV = REPO / "data" / "pv.kb.synonym.csv"
SAFE_TSQUERY = re.compile(r"[a-z0-9 |&():*]*")


def _lex(**counts):
    return compounds.Lexicon(counts)


# --------------------------------------------------------------------------- synonyms


def test_parse_synonyms_collects_problems_and_merges_repeated_terms():
    table = fulltext.parse_synonyms([
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
    rows = fulltext.load_synonyms_csv(str(SYNONYM_CSV))
    assert len(rows) >= 50
    table = fulltext.parse_synonyms(rows)
    assert table.problems == []
    assert len(table) == len(rows)  # no term twice
    lines = SYNONYM_CSV.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "id,term,expansions"
    ids = [line.split(",", 1)[0] for line in lines[1:]]
    assert len(ids) == len(set(ids)) and all(re.fullmatch(r"syn_[a-z0-9_]+", i) for i in ids)
    terms = {syn.term: syn.expansion_labels for syn in table.entries}
    assert "Sonderzahlung" in terms["Weihnachtsgeld"]
    assert "Dienstwagen" in terms["Firmenauto"]
    # the abbreviations of the practice point at the base's long forms
    assert terms["FaBo"] == ("Familienbonus Plus",) and "Höchstbeitragsgrundlage" in terms["Beitragsdeckel"]
    assert "Kommunalsteuer" in terms["Gemeindesteuer"] and "Nächtigungsgeld" in terms["Übernachtungspauschale"]
    # Mehrstunden (part time, § 19d AZG) and Überstunden are different things: neither expands to the other
    assert not {"Mehrstunden", "Überstunden"} & {*terms["Überstunden"], *terms["Mehrstunden"]}


def test_load_synonyms_csv_rejects_a_wrong_header(tmp_path):
    path = tmp_path / "syn.csv"
    path.write_text("id,begriff,ersatz\nsyn_x,a,b\n", encoding="utf-8")
    with pytest.raises(ValueError, match="Kopfzeile id,term,expansions"):
        fulltext.load_synonyms_csv(str(path))


# --------------------------------------------------------------------------- build_query


@pytest.fixture(scope="module")
def synonyms():
    return fulltext.parse_synonyms([
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
    plan = fulltext.build_query(question, {}, synonyms)
    assert SAFE_TSQUERY.fullmatch(plan.tsquery)
    assert plan.tsquery.count("(") == plan.tsquery.count(")")
    assert not plan.tsquery.startswith("|") and not plan.tsquery.endswith("|")


def test_build_query_empty_when_nothing_is_left(synonyms):
    for question in ("", "§§", "😀", "Wie ist das?", "Was gilt da?"):
        assert fulltext.build_query(question, {}, synonyms).tsquery == ""
    assert fulltext.build_query("'; DROP", {}, synonyms).tsquery == "drop"


def test_build_query_drops_question_words_and_adds_compound_parts():
    lex = _lex(urlaub=10, ersatzleistung=3)
    plan = fulltext.build_query("Wie hoch ist die Urlaubsersatzleistung?", lex, None)
    atoms = plan.tsquery.split(" | ")
    assert atoms == ["urlaubsersatzleistung:*", "urlaub:*", "ersatzleistung:*"]
    assert plan.terms == ["urlaubsersatzleistung"] and plan.parts == ["urlaub", "ersatzleistung"]


def test_build_query_prefix_only_for_long_words():
    plan = fulltext.build_query("FLAF Lohn Zuschläge", {}, None)
    assert plan.tsquery.split(" | ") == ["flaf", "lohn", "zuschlage:*"]
    assert "zuschlage:*" not in fulltext.build_query("Zuschläge", {}, None, prefix_min=0).tsquery


def test_build_query_expands_synonyms_with_and_groups(synonyms):
    plan = fulltext.build_query("Wird das Weihnachtsgeld versteuert?", {}, synonyms)
    assert "sonderzahlung:*" in plan.tsquery.split(" | ")
    assert "(sonstige:* & bezuge:*)" in plan.tsquery.split(" | ")
    assert plan.synonyms == ["Weihnachtsgeld"]
    # An inflected form matches as well.
    assert "dienstwagen:*" in fulltext.build_query("Zwei Firmenautos", {}, synonyms).tsquery


def test_build_query_uppercase_stopword_terms_match_case_sensitively(synonyms):
    assert "arbeitnehmer:*" in fulltext.build_query("Was bekommt der AN?", {}, synonyms).tsquery
    assert "arbeitnehmer" not in fulltext.build_query("Ich gehe an die Arbeit", {}, synonyms).tsquery
    # Other abbreviations are matched in any case.
    assert "familienlastenausgleichsfonds:*" in fulltext.build_query("flaf 2025", {}, synonyms).tsquery


def test_build_query_synonyms_match_compound_parts(synonyms):
    lex = _lex(weihnachtsgeld=4, anspruch=6)
    plan = fulltext.build_query("Weihnachtsgeldanspruch", lex, synonyms)
    assert plan.parts == ["weihnachtsgeld", "anspruch"]
    assert "sonderzahlung:*" in plan.tsquery


def test_build_query_keeps_paragraph_tokens():
    plan = fulltext.build_query("Was regelt § 67 Abs. 1 EStG?", {}, None)
    assert plan.tsquery.split(" | ") == ["67", "estg", "p67estg"]


def test_build_query_caps_the_number_of_atoms():
    question = " ".join(f"wort{i:03d}x" for i in range(100))
    plan = fulltext.build_query(question, {}, None, max_atoms=10)
    assert len(plan.tsquery.split(" | ")) == 10


@pytest.mark.parametrize("question, expected", [
    ("Wie hoch ist die Geringfügigkeitsgrenze?", True),
    ("Wie viel Urlaub steht mir zu?", True),
    ("Bis wann ist der Lohnzettel zu übermitteln?", True),
    ("Welcher Beitragssatz gilt für die BV-Kasse?", True),
    ("Sind 28,5 % richtig?", True),
    ("Welche Frist gilt für die Kündigung?", True),
    ("Ab welcher Lohnsumme fällt die Abgabe an?", True),
    ("Ab welchem Monat zahlt der Dienstgeber ein?", True),
    ("Was ist eine Urlaubsersatzleistung?", False),
    ("Wer bekommt einen Dienstwagen?", False),
])
def test_build_query_detects_value_questions(question, expected):
    assert fulltext.build_query(question, {}, None).is_value_question is expected


# --------------------------------------------------------------------------- performance


def test_prune_tsquery_drops_common_atoms_but_keeps_the_rarest():
    from lib.search.fulltext import prune_tsquery, tsquery_atoms

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


def _linear_matches(table, raw, words, extra):
    """The definition the index must agree with: every row checked in table order."""
    found = []
    for syn in table.entries:
        if syn.case_sensitive:
            if re.search(rf"(?<![^\W_]){re.escape(syn.term)}(?![^\W_])", raw):
                found.append(syn)
        elif fulltext._contains_sequence(words, syn.words) or (
                len(syn.words) == 1 and any(fulltext._same_word(w, syn.words[0]) for w in extra)):
            found.append(syn)
    return found


def test_synonym_matching_by_first_word_finds_what_a_scan_of_every_row_finds():
    # the index by first word is a speed-up only: on every question of the three demo gold sets, and on
    # inflected and multi-word forms, it returns the same rows in the same order as checking every row
    from lib.evaluation.goldset import read_goldset
    from lib.text.german import WORD_RE, fold
    table = fulltext.parse_synonyms(fulltext.load_synonyms_csv(str(SYNONYM_CSV)))
    questions = [q.question for name in ("goldset.yaml", "goldset_praxis.yaml", "goldset_abstimmung.yaml")
                 for q in read_goldset(REPO / "data" / "demo_kb" / name).questions]
    questions += ["Firmenautos und Weihnachtsgelder", "Was gilt AN für den AN?", "Abfertigung alt und neu"]
    hits = 0
    for raw in questions:
        words = WORD_RE.findall(fold(raw))
        extra = [p for w in words for p in (w[:4], w + "en")]     # stand-ins for compound parts
        got = table.matches(raw, words, extra=extra)
        assert got == _linear_matches(table, raw, words, set(extra)), raw
        hits += bool(got)
    assert hits >= 50      # the comparison is not between two empty lists
    # a row added after the first match is found too (the index follows the table)
    table.entries.append(fulltext.Synonym("Zwickelgeld", ("zwickelgeld",), False, (("taschengeld",),), ("Taschengeld",)))
    assert [s.term for s in table.matches("Zwickelgeldes?", ["zwickelgeldes"])] == ["Zwickelgeld"]


def test_the_shipped_table_reaches_the_urlaub_verjaehrung_in_other_words():
    # "freie Tage … bevor der Anspruch erlischt / verloren geht" is the Verjährung of the Urlaub
    table = fulltext.parse_synonyms(fulltext.load_synonyms_csv(str(SYNONYM_CSV)))
    for question in ("Wie lange kann sie ihre nicht genommenen freien Tage nachholen, bevor der Anspruch erlischt?",
                     "Wie lang kann er nicht konsumierte Urlaubstage aufheben, bevor sie verloren gehen?"):
        atoms = fulltext.build_query(question, {}, table).tsquery.split(" | ")
        assert "verjahrung:*" in atoms and "urlaub:*" in atoms, atoms
    atoms = fulltext.build_query("Welcher Kilometersatz gilt für Fahrräder?", {}, table).tsquery.split(" | ")
    assert "kilometergeld:*" in atoms and "fahrrad:*" in atoms, atoms
