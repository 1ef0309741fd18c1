"""Payments the base names without a value: an amount asked of them is declined, not guessed from a neighbour.

A payroll question often asks the amount of a benefit next to the base's own: "Wie viel Kinderbetreuungsgeld
bekommt sie pro Tag?", "Wie hoch ist das Weiterbildungsgeld?", "Wie viel Prozent ersetzt die AUVA?". The base
names some of them in passing ("… während des Kinderbetreuungsgeldbezugs …", "… bei der AUVA einen Zuschuss
beantragen …"), so the passages retrieved for them are close, and a model quotes the nearest value: the value
of another payment.

- :func:`valued_words`: the words the base gives values for: the titles and tags of its entries, the headings of
  their sections, and the row labels, column headers and captions of its facts. A word after "mit", "ohne",
  "bei" … in a label is a condition, not the thing valued ("Kind ab 18 mit Familienbeihilfe").
- :func:`unvalued_payment`: the payment the asking sentence asks an amount of that is none of those words, no
  synonym-table term, and no other name of a payment the base values ("Pendlergeld" beside the
  "Pendlerpauschale"): the gate declines it before any search result is quoted.
- :func:`unrated_levy`: the rate asked of a levy the base values only in other units ("Wie viel Prozent beträgt
  die Dienstgeberabgabe?" beside its Grenze in €).
- :func:`unvalued_institution`: the same for an institution named by its letters ("die AUVA"), checked on the
  passages an answer quotes.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from ..facts.question import asked_units
from ..search.known_words import forms as _forms
from ..text.german import fold_plain

# what a word of a payment ends with (folded): the benefit itself, not a rate or a limit of it
_PAYMENT_RE = re.compile(r"(?:geld|gelder|geldes|beihilfe|zuschuss|zuschuesse|pension|rente|entschaedigung|absetzbetrag|"
                         r"praemie|praemien|bonus)$")
# the kinds of payment the base may value a benefit under ("Pendlergeld" → "Pendlerpauschale"); a benefit of
# another name is another benefit ("Familienbeihilfe" is no "Familienbonus")
_VALUED_KIND_RE = re.compile(r"(?:pauschale|pauschalen|zulage|zulagen|zuschlag|zuschlaege|freibetrag|"
                             r"absetzbetrag|ersatz|ersatzleistung)$")
# a payment after these words is a condition of the ask, not what it asks ("für ein Kind mit Familienbeihilfe",
# "der Topf, aus dem die Familienbeihilfe finanziert wird")
_CONDITION_WORDS = frozenset("mit ohne bei beim noch für aus wegen trotz statt neben vom zum zur am nach".split())
_MIN_PAYMENT = 9       # "Geld", "Zuschuss", "Pension" alone name no payment of their own
_ASKS_AMOUNT_RE = re.compile(r"\bwie\s*(?:viel|hoch)\b|\bprozent\w*|\bbetrag\b|\bhöhe\b", re.I)
_AMOUNT_RE = re.compile(r"€|%|\bprozent\w*|\beuro\b", re.I)
_WORD_RE = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


def asks_amount(asking: str) -> bool:
    """Does the asking sentence ask an amount or a rate ("wie viel", "wie hoch", "Prozent"), not a span or a
    date ("Wie viel Zeit hab ich …")?"""
    if not _ASKS_AMOUNT_RE.search(asking):
        return False
    kinds = asked_units(asking)
    return not kinds or bool(kinds & {"€", "%"})


def valued_words(titles: Iterable[str], labels: Iterable[str]) -> frozenset:
    """The folded words the base gives values for: every word of ``titles`` (entry titles, tags, headings) and
    the words of ``labels`` (fact row labels, column headers, captions) that no condition word precedes."""
    words = {w for text in titles for w in re.findall(r"\w+", fold_plain(text or ""))}
    for text in labels:
        tokens = re.findall(r"\w+", fold_plain(text or ""))
        words.update(w for i, w in enumerate(tokens) if not (i and tokens[i - 1] in _CONDITION_WORDS))
    return frozenset(words)


def label_units(labels: Iterable[tuple[str, str]]) -> dict[str, frozenset]:
    """The units the base values each word in: ``labels`` are (label text, unit) pairs of its facts (row label,
    column header and caption, each with its value's unit); every folded word of a label gets the unit."""
    units: dict[str, set] = {}
    for text, unit in labels:
        for word in re.findall(r"\w+", fold_plain(text or "")):
            units.setdefault(word, set()).add(unit or "")
    return {word: frozenset(found) for word, found in units.items()}


# a levy whose rate is asked ("Wie viel Prozent beträgt die Dienstgeberabgabe?"), and the words that ask a rate
_LEVY_RE = re.compile(r"(?:abgabe|abgaben|umlage|beitrag|steuer)$")
_RATE_ASK_RE = re.compile(r"\b(?:[Pp]rozent\w*|Satz|Sätze|Beitragssatz)\b")


def unrated_levy(asking: str, label_units_of: dict, titled: frozenset = frozenset()) -> str | None:
    """The levy (as the question writes it) whose rate the asking sentence asks when the base values it, but
    only in other units: "Wie viel Prozent beträgt die Dienstgeberabgabe?" beside "Grenze für die
    Dienstgeberabgabe: € 777,66". ``label_units_of``: :func:`label_units` of the base; ``titled``: words of
    entry titles, tags and headings (their units are unknown: no decision). Else None."""
    if asked_units(asking) - {"%", "Prozentpunkte"} or "%" not in asked_units(asking):
        return None
    rate = _RATE_ASK_RE.search(asking)
    # the levy the rate is asked of comes after the ask ("Mit welchem Prozentsatz wird die Dienstgeberabgabe
    # …"); one named before it is another ask's ("Fällt die Dienstgeberabgabe an, und … – mit welchem Satz?")
    for raw in _WORD_RE.findall(asking[rate.end():] if rate else ""):
        word = fold_plain(raw.replace("-", ""))
        if not raw[:1].isupper() or len(word) < _MIN_PAYMENT or not _LEVY_RE.search(word):
            continue
        units = set().union(*(label_units_of.get(f, ()) for f in _forms(word)))
        if units and "%" not in units and not _forms(word) & titled:
            return raw
    return None


def _valued(word: str, valued: frozenset, synonym_terms: frozenset) -> bool:
    forms = _forms(word)
    if forms & valued or forms & synonym_terms:
        return True
    payment = _PAYMENT_RE.search(word)
    what = word[:payment.start()].rstrip("s") if payment else ""
    # the same thing paid for under a kind of payment the base values it as
    return len(what) >= 4 and any(v.startswith(what) and _VALUED_KIND_RE.search(v) for v in valued)


def unvalued_payment(asking: str, valued: frozenset, synonym_terms: frozenset = frozenset()) -> str | None:
    """The payment (as the question writes it) whose amount the asking sentence ``asking`` asks when the base
    gives no value for it (:func:`valued_words`), else None. Checked: capitalised words ending in a kind of
    payment, nine letters or more, hyphenated ones joined ("AUVA-Zuschuss"), each part of them counted
    ("Kinder-Steuerbonus": the "Steuerbonus" of the synonym table); not one after a condition word."""
    if not asks_amount(asking):
        return None
    tokens = _WORD_RE.findall(asking)
    for i, raw in enumerate(tokens):
        if not raw[:1].isupper():
            continue
        word = fold_plain(raw.replace("-", ""))
        if len(word) < _MIN_PAYMENT or not _PAYMENT_RE.search(word):
            continue
        if any(t.lower() in _CONDITION_WORDS for t in tokens[max(0, i - 3):i]):
            continue
        parts = [fold_plain(p) for p in raw.split("-")] if "-" in raw else []
        if _valued(word, valued, synonym_terms) or any(
                len(p) >= 6 and _valued(p, valued, synonym_terms) for p in parts[1:]):
            continue
        return raw
    return None


# an institution named by its letters after an article ("ersetzt die AUVA", "vom AMS"), not as the address of a
# payment ("Beiträge an die ÖGK"); not a law (ASVG, AZG, ABGB: their letters end in G or B) nor a currency
_ACRONYM_RE = re.compile(r"(?<!\ban\s)(?<!\bfür\s)\b(?:der|die|das|dem|den|vom|beim|zur|zum)\s+([A-ZÄÖÜ]{3,6})(?![\w-])")
_NOT_INSTITUTIONS = frozenset({"eur", "usd", "chf"})


def institutions(asking: str) -> list[str]:
    """The institutions the asking sentence names by their letters ("… mit Förderung vom AMS. Wie viel muss die
    Firma draufzahlen?" asks the firm's share, not the AMS's)."""
    return [a for a in _ACRONYM_RE.findall(asking)
            if not a.endswith(("G", "B")) and fold_plain(a) not in _NOT_INSTITUTIONS]


def unvalued_institution(asking: str, passages) -> tuple[str, list] | None:
    """(name, passages naming it) when the asking sentence asks an amount or a rate of an institution named by
    its letters ("Wie viel Prozent ersetzt die AUVA …") and the passages that name it hold no amount or rate
    ("… können bei der AUVA einen Zuschuss beantragen; Höhe und Wartezeiten sind … zu prüfen"): the base knows
    the payment, not its value. ``passages``: objects with a ``text`` (the passages of the entries an answer
    quotes); else None."""
    if not asks_amount(asking):
        return None
    for acronym in institutions(asking):
        pattern = re.compile(rf"\b{re.escape(acronym)}\b")
        naming = [p for p in passages if pattern.search(p.text)]
        if naming and not any(_AMOUNT_RE.search(p.text) for p in naming):
            return acronym, naming
    return None
