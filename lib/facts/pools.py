"""The words a fact answers with, and the narrowing of the candidates before :func:`lookup.find` compares them.

- :func:`fact_pool`: the words a fact accounts for a question's words with: its key, context (caption, header),
  subject (entry title and tags), the words of its value as written, its legal basis, and (``with_mentions``) the
  words of the sentences of its entry that state its value;
- :func:`stated_rate_facts`: the rows whose value is the rate a question states;
- :func:`not_borrowed`: the candidates without those that account for a word only through a sentence when that
  word is another row's whole label.
"""
from __future__ import annotations

import re

from .concepts import stems, word_in
from .extract import Fact
from .question import Question, threshold_noun


def stated_rate_facts(question: Question, pool: list[Fact]) -> list[Fact]:
    """The facts whose value is the rate the question states, in an entry that names one of the question's words
    (title, section, label): the rows whose labels hold the asked threshold (of every year: :func:`find` takes the
    asked one, or says that it is missing)."""
    out = []
    noun = threshold_noun(question.text)
    for fact in pool:
        value = fact.value
        if fact.is_reference or value.unit != "%" or value.amount != question.stated or value.amount_to is not None:
            continue
        own, pool = fact_pool(fact, with_mentions=False), fact_pool(fact)
        named = (int(bool(noun) and word_in(noun, own)),) + tuple(
            sum(1 for alternatives in question.words if any(word_in(a, p) for a in alternatives)) for p in (own, pool))
        if named[2]:
            out.append((named, fact))
    # the column whose own words name the asked sum ("Jahreseinkommen": the tariff's "Einkommen pro Jahr"), then
    # most of the question's words by its own words, then with its sentences ("lohnsteuerfrei", "Tarif": the
    # tariff's 0 %, not the 0 % of the AV-Anteil or of the first € 620 of a Sonderzahlung), when it is one
    best = max((named for named, _fact in out), default=(0, 0, 0))
    out = [fact for named, fact in out if named == best]
    return out if len({(f.column_header, f.entry_id) for f in out}) == 1 else []


def fact_pool(fact: Fact, with_mentions: bool = True) -> set[str]:
    """The words ``fact`` accounts for a question's words with (module docstring)."""
    pool = set(fact.key | fact.context | fact.subject) | value_words(fact.text)
    if with_mentions:
        pool |= fact.mentions
    for law in fact.legal:
        pool.update(law.split())
    return pool


# unit signs of a value and the words a question names them with ("€ 6,67 je m²": "pro Quadratmeter")
_UNIT_SIGNS = {"m²": "Quadratmeter", "m2": "Quadratmeter", "km": "Kilometer", "h": "Stunde", "kWh": "Kilowattstunde"}
_UNIT_SIGN_RE = re.compile(r"(?<![\w²])(m²|m2|km|h|kWh)(?![\w²])")


# a value with an upper bound ("2 % der Anschaffungskosten, max. € 960 monatlich") is a Höchstbetrag
_CAPPED_RE = re.compile(r"\b(?:max\.|maximal|höchstens|bis\s+zu)", re.I)
CAP_WORDS = "Höchstbetrag Deckel Obergrenze Maximum Höchstgrenze Maximalbetrag"


def value_words(text: str) -> frozenset:
    """The words of a value as written ("3 % der Bruttolohnsumme" → bruttolohnsumm): they tell what it is of; a
    unit sign counts as its word ("je m²" → quadratmet), an upper bound as "Höchstbetrag"."""
    text = text or ""
    named = " ".join(_UNIT_SIGNS[m] for m in _UNIT_SIGN_RE.findall(text))
    if _CAPPED_RE.search(text):
        named = f"{named} {CAP_WORDS}"
    return frozenset(stems(f"{text} {named}"))


def not_borrowed(question: Question, candidates: list[Fact], pool: list[Fact]) -> list[Fact]:
    """The candidates without those that account for a word of the question only through a sentence beside their
    value when that word is the whole label of another fact: "Wie viel Lohnausgleich …?" asks the row
    "Lohnausgleich", not the AMS's Ersatzquote, whose summary says it replaces the Lohnausgleich."""
    labels = {next(iter(f.key)) for f in pool if len(f.key) == 1}
    # (a word of the case told before the ask is the case's: "… mit seinem Pkw … Wie viel Taggeld …?")
    borrowed = [a for a in question.words if a & labels and not a & question.case]
    if not borrowed:
        return candidates

    def own(fact: Fact) -> bool:
        pool_words = fact_pool(fact, with_mentions=False)
        return all(any(word_in(w, pool_words) for w in alternatives) for alternatives in borrowed)
    return [f for f in candidates if own(f)]
