"""Value questions answered from the fact table: which facts a question asks for, when the match is clear.

A question asks for a value when it says so ("wie hoch", "wie viel", "Grenze", "Satz", …) or is short
("GFB 2025?", "HBGL täglich 2026", "Kilometergeld Pkw"). Its words (abbreviations and synonyms written out)
must name every word of a fact's concept, and the fact must account for every word of the question (by its
label, caption, entry title and tags, or legal basis); a basis the question names ("täglich") must be the
fact's. A fact with a variant (a threshold or count in its label) is taken only when the question names the
same numbers with the same bound ("über 60 km"). The match is clear when the facts left belong to one
concept; several concepts (or none) leave the question to the normal answer.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..text.german import fold_plain, light_stem
from .compare import Pair, compare, same_concept, topic_common_words
from .concepts import stems, word_in, words_match
from .extract import Fact
from .sides import on_the_side, other_party
from .tiers import holds, is_dimension_word
# the question's side, parsed (question.py); parse_question, asked_units and Question are part of the lookup's API
from .pools import (CAP_WORDS as _CAP_WORDS, fact_pool as _fact_pool, not_borrowed as _not_borrowed,  # noqa: F401
                    stated_rate_facts, value_words as _value_words)
from .question import (_CAP_KEY_WORDS, _CEILING_KEY_WORDS, _RATE_BASES, STAFF_WORDS, Question, _bounds,  # noqa: F401
                       asked_units, parse_question, threshold_noun)

MAX_PERIODS = 4            # without an asked year: the newest periods shown

@dataclass
class Match:
    """The facts a value question is answered with: ``facts`` (newest first, one line each), ``pairs`` the
    conflicts and outdated pairs among them and the concept's other facts, ``missing_year`` when the asked
    year has no value (``facts`` then hold the latest ones)."""

    question: Question
    facts: list[Fact]
    pairs: list[Pair]
    missing_year: int | None = None


# words of a label that say how values are taken together, not what: "Steuerfreier Höchstbetrag gemeinsam"
_SOFT_KEY_WORDS = frozenset({"gemeinsam", "zusamm", "jeweil"})
# words that describe the case, not the value asked ("Angestellter mit € 8.200 brutto, Abrechnung 2025: …"): they
# may stay unaccounted by a fact, yet still name a fact's key word where one has it ("Kündigungsfrist Angestellte")
_CASE_WORDS = frozenset(light_stem(fold_plain(w)) for w in """angestellter angestellte
brutto netto abrechnung abrechnen verdient verdienen teil fällig anstellen einstellen beschäftigen
student studentin studenten schüler schülerin aushilfe aushilfen aushilfskraft putzhilfe putzkraft
reinigungskraft""".split()) | {light_stem(w) for w in STAFF_WORDS}


def _rate_word_named(key_word: str, question: Question, fact: Fact) -> bool:
    """A rate compound of the concept ("steuersatz") is named by a question asking for a percentage with a word
    that ends in the rest of the compound and is the entry's own subject ("Wie viel Prozent Kommunalsteuer …" for
    the entry "Kommunalsteuer"; not "DB-Satz" for the "Beitragssatz" of another entry)."""
    if "%" not in question.asks or not key_word.endswith("satz") or len(key_word) < 8:
        return False
    base = light_stem(key_word[:-4])
    if any(w.endswith(base) and w in fact.subject for alternatives in question.words for w in alternatives
           if len(w) >= 4):
        return True
    # "Mit welchem (Prozent)Satz wird … besteuert?", "Wie viel Prozent … an die Vorsorgekasse abführen?": the verb
    # says what the rate is of
    return (base == "steu" and bool(_TAXED_RE.search(question.text))) or \
        (base == "beitrag" and bool(_PAID_IN_RE.search(question.text)))


_TAXED_RE = re.compile(r"\b(?:be|ver)steuert\b", re.I)
_PAID_IN_RE = re.compile(r"\b(?:abf[üu]hren|abzuf[üu]hren|abgef[üu]hrt|einzahlen|einzuzahlen|eingezahlt|entrichten)\b", re.I)


def required_key(fact: Fact) -> frozenset:
    """The words of a fact's concept key a question must name: all but those only in the parentheses of its column
    header, which say how it is counted ("Werktage (6-Tage-Woche)"). The parentheses of a row label stay required:
    letting a question leave out "(laufend)" of "Dienstgeberanteil gesamt (laufend)" answered "Wie viel Prozent DB
    zahlt der DG?" with the Dienstgeberanteil on questions nobody had tuned on (docs/facts.md)."""
    return fact.key - fact.optional - _SOFT_KEY_WORDS or fact.key


def _amounts_unheld(question: Question, fact: Fact) -> bool:
    """The question states amounts ("zwischen 69.166 und 103.072", "mit € 8.200 brutto") that the fact's label
    and value do not hold: they select a row of another table, or make a case the fact alone does not answer
    ("Welcher Steuersatz gilt zwischen 69.166 und 103.072?" is not the Kommunalsteuer's 3 %)."""
    amounts = {number for _bound, number in question.bounds if number.isdigit() and int(number) >= 1000}
    if question.implied & required_key(fact) & (_CAP_KEY_WORDS | _CEILING_KEY_WORDS):
        return False        # a ceiling asked for a stated pay ("mit € 8.200: bis zu welchem Betrag …?") is the case
    if not amounts:
        return False
    held = {number for _bound, number in _bounds(f"{fact.label} {fact.text}")}
    return not amounts <= held


# units whose values change from year to year: a value of them without a year is no answer for another year
_YEARLY_UNITS = frozenset({"€", "%", "Prozentpunkte", "", None})


def _names_the_ask(question: Question, fact: Fact) -> bool:
    """Every word of the ask (the case's words aside) is named by the fact's own words at least as specifically:
    "Überstundenzuschläge" by itself, not by the "Zuschläge" of a tag."""
    pool = _fact_pool(fact, with_mentions=False)
    return all(_named_as_specifically(alternatives, pool) or alternatives & (_CASE_WORDS | question.case)
               for alternatives in question.words)


def _stand_year(fact: Fact) -> int:
    """The year of a fact's Stand ("2024-01" → 2024); a fact without a readable Stand holds for no asked year."""
    head = (fact.stand or "")[:4]
    return int(head) if head.isdigit() else 10_000


def _bounds_named(label_bounds: frozenset, question: Question) -> bool:
    """Every bound of the row's label is in the question: the same number, with the same bound word or with none
    ("zwischen 69.166 und 103.072" names "über € 69.166 bis € 103.072")."""
    return all((bound, number) in question.bounds or ("", number) in question.bounds
               for bound, number in label_bounds)


def _eligible(question: Question, fact: Fact) -> bool:
    if fact.is_reference or not fact.value.has_value or not fact.key:
        return False
    if other_party(question, fact):
        return False
    if question.basis and fact.basis and question.basis != fact.basis:
        return False
    if question.bases and fact.basis not in question.bases:
        return False
    inside = holds(fact.tier, question.points) if fact.tier is not None else None
    if inside is False:
        return False
    # a variant tells rows of one concept apart ("1 Kind" / "2 Kinder"); the only row of its concept names a
    # condition ("Taggeld pro angefangener Stunde (ab 3 Stunden)") that a question need not repeat
    if inside is None and fact.variant and not fact.sole_variant and not _bounds_named(_bounds(fact.label), question):
        return False
    if not (inside and fact.tier.unit == "eur") and _amounts_unheld(question, fact):
        return False        # (an income the question tells that falls into the row's band is held by it)
    # the row of a staged table the question's number falls into ("im 4. Dienstjahr" → "ab dem 3. Dienstjahr"):
    # the dimension's words ("Dienstjahr", "Jahren", "km") are named by that number on both sides
    dimension = (lambda word: inside and is_dimension_word(word))
    if not all(any(word_in(k, alternatives) for alternatives in question.words) or _rate_word_named(k, question, fact)
               or dimension(k) or k in question.implied for k in required_key(fact)):
        return False
    if question.case and not _names_a_subject(question, fact) \
            and not question.implied & required_key(fact) & _CEILING_KEY_WORDS:
        return False        # (the contributions' ceiling asked for a stated pay names its subject by the ask)
    return _accounted(question, fact, inside)


# words that say how a value is asked, not what it is of ("Bis zu welchem Betrag … steuerfrei?")
_ASK_VOCABULARY = frozenset(light_stem(fold_plain(w)) for w in
                            "steuerfrei lohnsteuerfrei sachbezugsfrei abgabenfrei beitragsfrei".split())


def _names_a_subject(question: Question, fact: Fact) -> bool:
    """With a case told, the fact's own words name some word of the question beyond how it asks: "Die Firma zahlt
    ihm die Wallbox. Bis zu welchem Betrag passiert da nix?" is about the Wallbox, not any steuerfreie Höchstbetrag."""
    pool = _fact_pool(fact, with_mentions=False)
    return any(any(word_in(a, pool) for a in alternatives - _ASK_VOCABULARY - _CASE_WORDS - question.implied)
               for alternatives in question.words)


def _accounted(question: Question, fact: Fact, inside: bool | None = None, with_mentions: bool = True) -> bool:
    """Every word of the question is accounted for by the fact (its words, its value's, its sentences' when
    ``with_mentions``; a staged row's dimension word; what a rate is taken of)."""
    if inside is None and fact.tier is not None:
        inside = holds(fact.tier, question.points)
    pool = _fact_pool(fact, with_mentions)
    of_rate = (lambda word: "%" in question.asks and fact.value.unit == "%" and word in _RATE_BASES)
    return all(any(word_in(a, pool) or (inside and is_dimension_word(a)) or of_rate(a) for a in alternatives)
               or alternatives & (_CASE_WORDS | question.case) for alternatives in question.words)


def eligible_facts(question: Question, facts: Iterable[Fact]) -> list[Fact]:
    """The facts that may answer ``question``, before :func:`find` asks for a clear match among them."""
    facts = list(facts)
    owned = _subject_words(question, facts)
    return [f for f in facts if _eligible(question, f) and not _head_only(owned, f)]


def _subject_words(question: Question, facts: list[Fact]) -> list[frozenset]:
    """The question's words (with their alternatives) that name what an entry is about, by its title or tags
    ("Altersteilzeit"); not the words of the case."""
    subjects = {s for f in facts for s in f.subject}
    return [alternatives for alternatives in question.words
            if not alternatives & (_CASE_WORDS | question.case)
            and any(words_match(a, s) and len(s) >= len(a) for a in alternatives for s in subjects)]


def _head_only(owned: list[frozenset], fact: Fact) -> bool:
    """The fact names a subject the question asks about only by the subject's head, and nothing of its first part:
    "Teilzeit" (a tag of the Wiedereingliederungsteilzeit) for the "Altersteilzeit", which is an entry's subject of
    its own ("Zuschläge … Nachtarbeit" do name the "Nachtzuschläge")."""
    pool = _fact_pool(fact)

    def by_head(word: str, head: str) -> bool:
        first = word[:len(word) - len(head)]     # the compound's first part, named by no word of the pool
        return (len(head) < len(word) and word.endswith(head) and words_match(word, head)
                and not any(p.startswith(first) for p in pool))
    return any(not any(words_match(a, p) and len(p) >= len(a) for a in alternatives for p in pool)
               and any(by_head(a, p) for a in alternatives for p in pool) for alternatives in owned)


def candidate_facts(question: Question, facts: Iterable[Fact]) -> list[Fact]:
    """The facts that may answer ``question``: the rows that hold the rate it states when it asks for their threshold
    (:func:`stated_rate_facts`), else those its words name (:func:`eligible_facts`)."""
    facts = list(facts)
    stated = stated_rate_facts(question, facts) if question.stated is not None else []
    return stated or eligible_facts(question, facts)


def _groups(facts: list[Fact], common: dict) -> list[list[Fact]]:
    groups: list[list[Fact]] = []
    for fact in facts:
        for group in groups:
            head = group[0]
            if (head.key == fact.key and head.basis == fact.basis and head.variant == fact.variant) or \
                    same_concept(head, fact, common):
                group.append(fact)
                break
        else:
            groups.append([fact])
    return groups


def _all_named(words: Iterable[str], question: Question) -> bool:
    return all(any(word_in(w, alternatives) for alternatives in question.words) for w in words)


def _specific(question: Question, fact: Fact) -> int:
    """How many question words the fact's own words (not its sentences) name at least as specifically: the same
    word or a longer one it is part of ("ueberstundenzuschlaeg" by itself, not by "zuschlaeg")."""
    pool = _fact_pool(fact, with_mentions=False)
    return sum(1 for alternatives in question.words if _named_as_specifically(alternatives, pool))


def _named_as_specifically(alternatives: frozenset, pool: set[str]) -> bool:
    """A word of the pool names one of a question word's alternatives, as the same word or a longer one; or two
    words of the pool name its parts ("nachtzuschlaeg": "Zuschläge für Nachtarbeit" names "zuschlaeg" and a word
    that starts with "nacht")."""
    if any(words_match(a, p) and len(p) >= len(a) for a in alternatives for p in pool):
        return True
    return any(len(a) - len(head) >= 4 and a.endswith(head) and any(p != head and p.startswith(a[:len(a) - len(head)])
                                                                   for p in pool)
               for a in alternatives for head in pool if len(head) >= 5)


def _key_names(key: frozenset, question: Question) -> tuple[int, int]:
    """(question words a concept key names, key words the question names): how directly a label fits."""
    asked = sum(1 for alternatives in question.words if any(word_in(a, key) for a in alternatives))
    told = sum(1 for k in key if any(word_in(k, alternatives) for alternatives in question.words))
    return asked, told


# a count of days a case tells ("an 6 Tagen im Monat", "nur 9 Arbeitstage")
_TOLD_DAYS = re.compile(r"\b(\d{1,2})\s+(?:Arbeits|Fahr|Büro|Anwesenheits)?[Tt]agen?\b")
_DAY_ROW = re.compile(r"^\s*(?:(?:mindestens|ab)\s+(\d{1,2})|(\d{1,2})\s*(?:bis|–|-)\s*(\d{1,2}))\s*$", re.I)


def _scaled_by_days(group: list[Fact], pool: list[Fact], days: int) -> bool:
    """Another table of the answering facts' entries is counted in days ("Fahrtage im Monat | Anteil") and its row
    for ``days`` gives a share ("4 bis 7 | ein Drittel"), not the full value ("mindestens 11 | voll"); a count no
    row holds scales it too."""
    entries = {f.entry_id for f in group}
    chosen = {id(f) for f in group}
    rows = [f for f in pool if f.entry_id in entries and id(f) not in chosen and f.origin == "table"
            and any(w.endswith("tag") for w in f.context)]
    if not rows:
        return False
    for row in rows:
        m = _DAY_ROW.match(row.label)
        if m and (int(m.group(1)) <= days if m.group(1) else int(m.group(2)) <= days <= int(m.group(3))):
            return row.value.has_value      # "voll" names no share
    return True


def _newest_first(facts: list[Fact], rank: Mapping[str, int]) -> list[Fact]:
    return sorted(facts, key=lambda f: (-f.period.newest, not f.period.explicit, rank.get(f.entry_id, 99), f.line))


def find(question: Question, facts: list[Fact], allowed: Iterable[str] | None = None, **near) -> Match | None:
    """The clear match of a value question among ``facts`` (only those of the ``allowed`` entries, in their
    order of preference), or None. ``near``: the comparison's near-match arguments (``embed``,
    ``embed_threshold``) for the ⚠ sides."""
    order = list(allowed) if allowed is not None else None
    rank = {entry_id: pos for pos, entry_id in enumerate(order or [])}
    pool = [f for f in facts if order is None or f.entry_id in rank]
    stated = stated_rate_facts(question, pool) if question.stated is not None else []
    candidates = stated or eligible_facts(question, pool)
    if candidates and not stated:
        candidates = _not_borrowed(question, candidates, pool)
    if not candidates:
        return None
    if question.asks and not any(f.value.unit in question.asks for f in candidates):
        # "für wie viele Überstunden im Monat?" is no question for the Überstundenzuschlag's 50 %: a value of
        # another kind answers nothing, and must not report the asked year as missing either
        return None
    common = topic_common_words(facts)
    # the rows of one column that hold the stated rate are one answer, a row per year ("bis € 12.816" in 2024,
    # "bis € 13.308" in 2025)
    groups = [candidates] if stated else _groups(candidates, common)
    if len(groups) > 1 and question.asks:
        # several concepts fit the words: the one whose values are of the asked kind (rate, duration, date)
        fitting = [g for g in groups if all(f.value.unit in question.asks for f in g)]
        if fitting:
            groups = fitting
    if len(groups) > 1 and question.year is not None:
        # "CO2-Grenzwert 2024 für den begünstigten Sachbezug": the concept that holds a value for the asked year
        # (the Grenzwert by year), not one that names more of the words and has no such year (the 1,5 % of 2025)
        covering = [g for g in groups if any(f.period.covers(question.year) for f in g)]
        if covering:
            groups = covering
    if len(groups) > 1:
        # "Sonderzahlungshöchstbeitragsgrundlage": the concept that names more of the question than every other
        # ("Höchstbeitragsgrundlage Sonderzahlungen" beside "Höchstbeitragsgrundlage täglich") is the one asked
        widest = [g for g in groups if all(g[0].key > o[0].key and _all_named(g[0].key - o[0].key, question)
                                           for o in groups if o is not g)]
        if len(widest) == 1:
            groups = widest
    if len(groups) > 1:
        # "Bis zu welchem Betrag sind Überstundenzuschläge steuerfrei?": the concept whose entry is about what the
        # question names, not one whose prose mentions it beside its value (the SEG-Zulagen' "… zusammenhängenden
        # Überstundenzuschläge sind gemeinsam bis € 360 steuerfrei")
        direct = [g for g in groups if _accounted(question, g[0], with_mentions=False)]
        if direct:
            groups = direct
    if len(groups) > 1:
        # … and whose own words are as specific as the question's: "Überstundenzuschläge" in the title, not only
        # the compound's head "Zuschläge"
        exact = {id(g): max(_specific(question, f) for f in g) for g in groups}
        best = max(exact.values())
        if sum(1 for g in groups if exact[id(g)] == best) < len(groups):
            groups = [g for g in groups if exact[id(g)] == best]
    if len(groups) > 1:
        # "Grenze für die Dienstgeberabgabe": the concept whose own label names more of the question, not one the
        # question reaches only through the entry's context or legal basis ("Dienstgeberabgabegesetz")
        named = {id(g): _key_names(g[0].key, question) for g in groups}
        most = max(named.values())
        if sum(1 for g in groups if named[id(g)] == most) == 1:
            groups = [g for g in groups if named[id(g)] == most]
    if len(groups) > 1:
        # the bases a question names all at once ("monatlich und täglich") are one answer of several lines
        keys = {(g[0].key, "" if question.bases else g[0].basis, g[0].variant) for g in groups}
        if len(keys) > 1:
            return None
    group = on_the_side(question, [f for g in groups for f in g])
    days = _TOLD_DAYS.search(question.text)
    if days and _scaled_by_days(group, pool, int(days.group(1))):
        # "fährt nur an 6 Tagen im Monat": the entry's table of days (Fahrtage 4 bis 7: ein Drittel) scales the
        # value; the full Pauschale alone would be wrong, so the normal answer runs
        return None
    # the ⚠ sides come from every retrieved entry's facts, not only those whose label fits the question: the
    # other side of a contradiction may name the same value in other words ("Ersatzquote Blockzeit")
    chosen_ids = {id(f) for f in group}
    others = [f for f in pool if id(f) not in chosen_ids and not f.is_reference and f.value.has_value]
    pairs = compare(group + others, common=common, **near)
    year = question.year
    if year is not None:
        # a standing rule (no year in any of the concept's facts) holds for the asked year as well: a date, a
        # duration, a count ("Jahreserklärung: bis 31. März des Folgejahres") for any year; an amount or a rate
        # ("Steuerfreier Höchstbetrag bei überwiegender Nachtarbeit: € 540 monatlich", Stand 2024-01) from the
        # year of its Stand on — the rule as the entry states it then, shown with "ohne Jahresangabe" and its
        # Stand; before that year it may not have held. Such an amount must answer the question by its own words,
        # not by a sentence that mentions the asked word beside it (the € 540 of the SEG-Zulagen is no answer to
        # "Wie viel an Überstundenzuschlägen ist steuerfrei?", though its entry speaks of Überstundenzuschläge)
        standing = not any(f.period.explicit for f in group)
        chosen = [f for f in group if f.period.covers(year)
                  or (standing and (f.value.unit not in _YEARLY_UNITS
                                    or (_stand_year(f) <= year and _names_the_ask(question, f))))]
        if not chosen:
            latest = _newest_first(group, rank)
            newest = latest[0].period.newest
            shown = [f for f in latest if f.period.newest == newest]
            later = [f for f in group if f.period.explicit and f.period.start is not None and f.period.start > year]
            if later:
                # a year before some values: the nearest later one ("2023?" → the 2024 row, not the 2025 one)
                first = min(f.period.start for f in later)
                shown = _newest_first([f for f in later if f.period.start == first], rank)
            return Match(question, shown, _touching(pairs, shown), missing_year=year)
        return Match(question, _dedupe(_newest_first(chosen, rank)), _touching(pairs, chosen))
    ordered = _dedupe(_newest_first(group, rank))
    periods: list[str] = []
    shown = []
    for fact in ordered:
        label = fact.period.label() + ("" if fact.period.explicit else "~")
        if label not in periods:
            if len(periods) >= MAX_PERIODS:
                continue
            periods.append(label)
        shown.append(fact)
    return Match(question, shown, _touching(pairs, shown))


def _dedupe(facts: list[Fact]) -> list[Fact]:
    seen, out = set(), []
    for fact in facts:
        key = (fact.entry_id, fact.period.label(), fact.text)
        if key not in seen:
            seen.add(key)
            out.append(fact)
    return out


def _touching(pairs: list[Pair], shown: list[Fact]) -> list[Pair]:
    """Pairs of which a shown fact is a side: a conflict always, an outdated pair when its older side states
    its value without a year of its own (it claims it still holds)."""
    ids = {id(f) for f in shown}
    out = []
    for pair in pairs:
        if not (id(pair.first) in ids or id(pair.second) in ids):
            continue
        if pair.kind == "outdated" and pair.first.period.explicit:
            continue
        out.append(pair)
    return out
