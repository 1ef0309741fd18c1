"""The shortlist of a value question over the whole demo base: the same candidate facts as the lookup's rules
over every fact, the other side of a contradiction found without a search, and the answer over the shortlisted
entries equal to the answer over the whole base's entries."""
import pytest

from facts_data import ABBREV, DEMO, REPO, SYNONYMS, sources
from lib.answer.fact_answer import compose
from lib.evaluation.goldset import load_goldset
from lib.facts import shortlist
from lib.facts.concepts import match_keys, words_match
from lib.facts.extract import Source, extract_all
from lib.facts.lookup import candidate_facts, find, parse_question

GOLDSETS = ("goldset.yaml", "goldset_abstimmung.yaml", "goldset_praxis.yaml")


@pytest.fixture(scope="module")
def facts():
    return extract_all(sources(DEMO), ABBREV)


@pytest.fixture(scope="module")
def questions():
    # the gold sets, and rates named by the entry's subject ("Kommunalsteuer" for its "Steuersatz")
    out = ["Kommunalsteuer wieviel Prozent?", "Wie viel Prozent Dienstgeberbeitrag?", "DB-Satz in Prozent 2025?",
           "Wie hoch ist der BV-Beitrag?"]
    for name in GOLDSETS:
        out += [q.question for q in load_goldset(REPO / "data" / "demo_kb" / name)]
    return out


@pytest.fixture(scope="module")
def index(facts):
    return shortlist.index(facts)


def test_the_candidates_are_the_facts_the_lookup_rules_allow(facts, index, questions):
    """Found through the key words the question names, decided by the lookup's rules: the same facts, in the
    same order, as those rules over every fact of the base (every question of the three demo gold sets)."""
    value_questions = 0
    for question in questions:
        parsed = parse_question(question, SYNONYMS)
        if parsed is None:
            continue
        value_questions += 1
        assert shortlist.candidates(parsed, index) == candidate_facts(parsed, facts), question
    assert value_questions > 150


def test_the_other_side_of_a_contradiction_is_a_partner(facts, index):
    """"§ 68 Abs 2 EStG Höchstbetrag": only lb-ust-02's facts fit the question; wiku-ust-01 states the older
    value under another label and must be added, lb-ust-02 itself is not its own partner."""
    parsed = parse_question("§ 68 Abs 2 EStG Höchstbetrag", SYNONYMS)
    chosen = shortlist.candidates(parsed, index)
    assert shortlist.entry_ids(chosen) == ["lb-ust-02"]
    partners = shortlist.partners(chosen, index)
    assert "wiku-ust-01" in partners and "lb-ust-02" not in partners
    with_partner = compose(find(parsed, facts, ["lb-ust-02", *partners]))
    alone = compose(find(parsed, facts, ["lb-ust-02"]))
    assert "⚠" in with_partner.text and "[wiku-ust-01]" in with_partner.text
    assert "⚠" not in alone.text


def test_kilometergeld_and_atz_conflicts_over_the_shortlist(facts, index):
    for question, sides in (("Wie hoch ist das amtliche Kilometergeld für den Privat-Pkw?", {"lb-rk-02", "wiku-rk-01"}),
                            ("Welche Ersatzquote gilt bei ATZ im Blockmodell mit Beginn 2026?",
                             {"lb-atz-02", "wiku-atz-01"})):
        parsed = parse_question(question, SYNONYMS)
        chosen = shortlist.candidates(parsed, index)
        entries = shortlist.entry_ids(chosen) + shortlist.partners(chosen, index)
        result = compose(find(parsed, facts, entries))
        assert "⚠" in result.text, question
        assert sides <= set(result.cited) <= set(entries), question


def test_the_answer_over_the_shortlist_is_the_answer_over_the_whole_base(facts, index, questions):
    """Over the demo base alone every entry is "retrieved" when the whole base is allowed: the shortlisted
    entries and their partners give the same answer, line for line, for every value question."""
    answered = 0
    for question in questions:
        parsed = parse_question(question, SYNONYMS)
        if parsed is None:
            continue
        whole = find(parsed, facts)
        chosen = shortlist.candidates(parsed, index)
        entries = shortlist.entry_ids(chosen) + shortlist.partners(chosen, index)
        short = find(parsed, facts, entries) if entries else None
        assert (whole is None) == (short is None), question
        if whole is not None:
            answered += 1
            assert sorted(compose(short).text.splitlines()) == sorted(compose(whole).text.splitlines()), question
    assert answered > 40


def test_words_that_match_share_a_match_key(index):
    """The shortlist finds a question's key words through concepts.match_keys: every pair of words that
    concepts.words_match accepts (all pairs of the demo base's key words) shares a key; most pairs share none."""
    words = sorted(index.by_word)
    matching = 0
    for n, word in enumerate(words):
        keys = set(match_keys(word))
        for other in words[n + 1:]:
            if words_match(word, other):
                matching += 1
                assert keys & set(match_keys(other)), (word, other)
    assert matching > 20
    assert not set(match_keys("hoechstgrenz")) & set(match_keys("kilometergeld"))
    assert set(match_keys("hoechstgrenz")) & set(match_keys("jahreshoechstgrenz"))


def _entry(kb_id, title, table):
    return Source(kb_id, title, "2026-01", "testthema", f"## Kernwerte & Fristen\n{table}\n", ["Überstunden"])


def test_a_near_match_is_a_partner_when_the_concept_texts_are_close():
    """"Begünstigte Überstunden pro Monat" 15 against "Überstunden/Monat" 10: the word rules do not pair them;
    with an embedder that puts the two concept texts close, the other entry is a partner (the comparison then
    decides), with one that puts them apart or has no vectors it is not."""
    facts = extract_all([
        _entry("t-1", "Überstunden 2026", "| Wert | 2026 |\n|---|---|\n| Begünstigte Überstunden pro Monat | 15 |\n"
                                           "| Testgrenze | € 100 |"),
        _entry("t-2", "Überstunden – Überblick", "| Wert | ab 2026 |\n|---|---|\n| Überstunden/Monat | 10 |\n"
                                                  "| Testgrenze | € 100 |")], ABBREV)
    index = shortlist.index(facts)
    chosen = [f for f in facts if f.entry_id == "t-1"]

    def embedder(vectors):
        return lambda texts: [vectors.get(t) for t in texts]

    assert shortlist.partners(chosen, index) == [], "the word rules alone; the equal Testgrenze is no partner"
    close = embedder({"Begünstigte Überstunden": [1.0, 0.1], "Überstunden": [1.0, 0.0]})
    assert shortlist.partners(chosen, index, close) == ["t-2"]
    assert shortlist.partners(chosen, index, embedder({"Begünstigte Überstunden": [1.0, 0.0],
                                                       "Überstunden": [0.0, 1.0]})) == []
    assert shortlist.partners(chosen, index, embedder({})) == []
