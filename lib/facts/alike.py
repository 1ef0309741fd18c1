"""Alike: the pairwise rules of the fact comparison that look past how a value is written.

Two curators write one fact in different ways, and two facts may look alike without being one. The rules here
say, for two facts that :mod:`lib.facts.compare` already holds for one concept, whether their values can be
compared at all:

- durations in days (:func:`in_days`): "3 Jahre" and "36 Monate" are one value, "1 Monat" and "6 Wochen" two;
- one band of a staged table written otherwise (:func:`same_variant`): "ab 20 km" (next row "ab 40 km") and
  "20 bis 40 km";
- one amount on two bases (:func:`another_basis`): "€ 696" in a table of yearly amounts and "monatlich: € 58";
- values that name different circumstances (:func:`qualified_apart`): "bis 4 Monate nach der Geburt" and "bis 4
  Wochen nach Ende der Karenz";
- a value up to a year (:func:`named_years`): "bis 31.12.2024: € 518,44" speaks of 2024, not of 2023;
- two cells of two-dimensional tables (:func:`cells_apart`): the row "Summe" under "Lehrling" and the row "AV"
  under "Summe" share a word, not a fact;
- labels that name only the kind of a quantity (:func:`kind_only`): "Höchstbetrag", "Freibetrag" — an embedding of
  such a label says nothing of what is measured;
- two values too far apart for a slip (:func:`slip_apart`): a contradiction between curators is a typo, swapped
  digits or last year's value (€ 214 / € 241, € 960 / € 690, 0,39 % / 0,41 %); € 37 beside € 520 or € 518,44 beside
  € 777,66 under like labels are two quantities, not one written twice.

Nothing here imports Odoo.
"""
from __future__ import annotations

from decimal import Decimal

from .concepts import GENERIC, KIND_WORDS, concept_key, stems, word_in
from .extract import Fact, generic_header
from .periods import Period, is_period_only

# durations in days, so that "3 Jahre" and "36 Monate" are one value and "1 Monat" and "6 Wochen" two
_DAYS = {"Tage": Decimal(1), "Wochen": Decimal(7), "Monate": Decimal("30.4375"), "Jahre": Decimal("365.25"),
         "Dienstjahre": Decimal("365.25")}
# a yearly amount is 12 or 14 monthly ones (with the Sonderzahlungen), 365 daily ones, 52 weekly ones
_BASIS_FACTORS = (12, 14, 365, 52)
# two values of one quantity that a curator wrote differently by a slip differ by at most this factor, or their
# digits by one edit (docs/facts.md: chosen on the tuning bases)
SLIP_RATIO = Decimal("1.45")
_NOT_QUALIFIERS = frozenset(stems("""
tag tage woche wochen monat monate jahr jahre dienstjahr dienstjahre stunde stunden euro prozent monatlich jaehrlich
taeglich woechentlich je pro bis ab nach ueber unter mindestens hoechstens max mind ca rund bzw oder und jedenfalls
jeweils ohne mit""")) | GENERIC


def in_days(unit: str, value) -> tuple[str, Decimal] | None:
    """("dauer", days) of a duration, else None."""
    if unit in _DAYS and isinstance(value, Decimal):
        return "dauer", (value * _DAYS[unit]).quantize(Decimal("0.01"))
    return None


def same_variant(a: Fact, b: Fact) -> bool:
    """The same numbers in the labels, or the same band of a staged table written otherwise: "ab 20 km" (the
    next row "ab 40 km") and "20 bis 40 km" (lib/facts/tiers.py; the upper bounds may differ by one step)."""
    if a.variant == b.variant:
        return True
    ta, tb = a.tier, b.tier
    if ta is None or tb is None or ta.unit != tb.unit or ta.low != tb.low:
        return False
    if ta.high is None or tb.high is None:
        return ta.high is None and tb.high is None
    return abs(ta.high - tb.high) <= 1


def another_basis(a: Fact, b: Fact) -> bool:
    """One side names no basis and its amount is a whole multiple of the other's by a factor of the bases:
    "€ 696" in a table of yearly amounts beside "monatlich: € 58" is one value on two bases, not a contradiction."""
    if (a.basis and b.basis) or not (a.basis or b.basis):
        return False
    x, y = a.value.amount, b.value.amount
    if x is None or y is None or x <= 0 or y <= 0 or a.value.unit != b.value.unit or a.value.unit != "€":
        return False
    big, small = max(x, y), min(x, y)
    return any(abs(big - small * f) <= small * f * Decimal("0.005") for f in _BASIS_FACTORS)


def _value_words(fact: Fact) -> frozenset:
    return frozenset(w for w in stems(fact.text) if len(w) >= 4 and w not in _NOT_QUALIFIERS)


def qualified_apart(a: Fact, b: Fact) -> bool:
    """Both values name what they hold for in words, and each names something the other does not: "bis 4 Monate
    nach der Geburt" and "bis 4 Wochen nach Ende der Karenz" are two rules under one label, not two values of one."""
    wa, wb = _value_words(a), _value_words(b)
    return bool(wa and wb and not any(word_in(w, wb) for w in wa) and not any(word_in(w, wa) for w in wb))


def named_years(period: Period) -> Period:
    """A period as far as it states a value: "bis 2024" (or "bis 31.12.2024") says that the value held up to 2024,
    not since when; beside "2023: € 500,91" of another entry it is the older value, not a contradiction. Likewise
    "ab 2025" states the value of 2025."""
    if period.start is None and period.end is not None:
        return Period(period.end, period.end, period.text, period.source)
    if period.end is None and period.start is not None:
        # "ab 2025" says what held from 2025, not that nothing changed after: beside "2026: € 551,10" of another
        # entry it is the older value (outdated), not a contradiction
        return Period(period.start, period.start, period.text, period.source)
    return period


def _dimensions(fact: Fact) -> tuple[frozenset, frozenset] | None:
    """(row words, column words) of a cell of a two-dimensional table: a row label and a column header that
    says what is measured (not a year, not "Wert"); None for other facts."""
    if fact.origin != "table" or not fact.column_header or is_period_only(fact.column_header) \
            or generic_header(fact.column_header):
        return None
    row, column = concept_key(fact.label), concept_key(fact.column_header)
    if not row or not column:
        return None
    return row, column


def _named(words: frozenset, other: frozenset) -> bool:
    return all(word_in(w, other) for w in words) or all(word_in(w, words) for w in other)


def cells_apart(a: Fact, b: Fact) -> bool:
    """Both are cells of two-dimensional tables and neither the rows and columns nor (a table written the other
    way round) rows and columns crosswise name each other: the row "Summe" under "Lehrling" and the row "AV" under
    "Summe" share a word, not a fact."""
    da, db = _dimensions(a), _dimensions(b)
    if da is None or db is None:
        return False
    straight = _named(da[0], db[0]) and _named(da[1], db[1])
    crosswise = _named(da[0], db[1]) and _named(da[1], db[0])
    return not (straight or crosswise)


def kind_only(fact: Fact) -> bool:
    """The label names only the kind of quantity ("Höchstbetrag monatlich", "Freibetrag"): its text says nothing
    of what is measured, so closeness of two such texts is closeness of the words "Höchstbetrag" and
    "Freibetrag", not of two concepts; the word rules and the entries' subjects decide such labels alone."""
    return fact.key - GENERIC <= KIND_WORDS


def _digits(value: Decimal) -> str:
    return "".join(ch for ch in format(value.normalize(), "f") if ch.isdigit()).lstrip("0") or "0"


def _one_edit(x: str, y: str) -> bool:
    """The digit strings differ by one typing slip: one digit changed, added, left out, or two neighbours swapped."""
    if x == y:
        return True
    if len(x) == len(y):
        diff = [i for i in range(len(x)) if x[i] != y[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and x[diff[0]] == y[diff[1]]
                                  and x[diff[1]] == y[diff[0]])
    if abs(len(x) - len(y)) != 1:
        return False
    long, short = (x, y) if len(x) > len(y) else (y, x)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def _single(fact: Fact) -> tuple[Decimal, Decimal] | None:
    """(the amount as written, the amount to compare: durations in days) of a fact with one amount, else None."""
    numbers = fact.value.numbers
    if len(numbers) != 1:
        return None
    unit, value = next(iter(numbers))
    if not isinstance(value, Decimal):
        return None
    days = in_days(unit, value)
    return value, days[1] if days else value


def slip_apart(a: Fact, b: Fact) -> bool:
    """Each fact holds one amount, and the two are further apart than a slip makes them: more than
    :data:`SLIP_RATIO` times, and their digits as written not one typing slip apart ("960" / "690", "2 Jahre" /
    "3 Jahre")."""
    sa, sb = _single(a), _single(b)
    if sa is None or sb is None:
        return False
    (wx, x), (wy, y) = sa, sb
    if x > 0 and y > 0 and max(x, y) / min(x, y) <= SLIP_RATIO:
        return False
    return not _one_edit(_digits(wx), _digits(wy))
