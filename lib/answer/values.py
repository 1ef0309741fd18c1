"""German values in text: amounts, percentages, fractions, counts with a unit.

Used by validation (is a value of the answer in the cited source?) and by conflict
detection (do two Kernwerte cells hold different numbers?).
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import NamedTuple

from ..text import md_blocks
from ..text.german import fold_plain

_SPACES = "\u00a0\u202f"
_NUM = r"(?<![\d,.])(?:\d{1,3}(?:[.\u00a0\u202f]\d{3})+(?:,\d+)?|\d+(?:[,.]\d+)?)(?!\d)"
_UNITS = (
    r"werktag|arbeitstag|kalendertag|urlaubstag|dienstjahr|tag|woche|monat|jahr|stunde|std\.|"
    r"minute|quartal|gehalt|gehält|bezug|bezüg|kilometer|km"
)
_GAP = rf"[ {_SPACES}]?"
# "€ 1 Mio.", "1,5 Millionen Euro": the amount in full (€ 1.000.000), so that it equals the table's figure
_SCALE = r"(?:Mio\.|Millionen\b|Million\b|Mrd\.|Milliarden\b|Milliarde\b)"
_SCALES = {"mio": Decimal(10) ** 6, "mil": Decimal(10) ** 6, "mrd": Decimal(10) ** 9}
VALUE_RE = re.compile(
    rf"(?:€|\bEUR\b){_GAP}(?P<n1>{_NUM})(?:{_GAP}(?P<s1>{_SCALE}))?(?:,-{{1,2}})?"
    rf"|(?P<n2>{_NUM})(?:{_GAP}(?P<s2>{_SCALE})(?={_GAP}(?:€|EUR\b|Euro\b)))?(?:,-{{1,2}})?{_GAP}"
    rf"(?:(?P<pct>%|‰|Prozent\b)|(?P<eur>€|EUR\b|Euro\b)|(?P<unit>{_UNITS})\w*)"
    rf"|(?<![\w/.,])(?P<frac>\d{{1,2}}/\d{{1,2}})(?![\d/])",
    re.I,
)
BARE_NUM_RE = re.compile(_NUM)
_UNIT_CANON = {"std.": "stunde", "km": "kilometer", "gehaelt": "gehalt", "bezueg": "bezug"}


class Value(NamedTuple):
    kind: str
    number: object  # Decimal, or "a/b" for fractions
    text: str


def to_decimal(text: str) -> Decimal | None:
    raw = text.translate({ord(c): None for c in _SPACES})
    if "," in raw:
        raw = raw.replace(".", "").replace(",", ".")
    elif re.fullmatch(r"\d{1,3}(?:\.\d{3})+", raw):
        raw = raw.replace(".", "")
    try:
        return Decimal(raw)
    except InvalidOperation:
        return None


def find_values(text: str) -> list[Value]:
    """Amounts, percentages, fractions and counts with a unit; years alone are no values."""
    values = []
    for match in VALUE_RE.finditer(text or ""):
        if match.group("frac"):
            values.append(Value("frac", match.group("frac"), match.group(0)))
            continue
        number = to_decimal(match.group("n1") or match.group("n2"))
        if number is None:
            continue
        scale = match.group("s1") or match.group("s2")
        if scale:
            word = scale.lower()
            number *= _SCALES["mrd" if word.startswith(("mrd", "milliard")) else "mio"]
        if match.group("n1") or match.group("eur"):
            kind = "eur"
        elif match.group("pct"):
            kind = "pct" if match.group("pct") != "‰" else "permille"
        else:
            unit = fold_plain(match.group("unit"))
            unit = "tag" if unit.endswith("tag") else _UNIT_CANON.get(unit, unit)
            kind = "count:" + unit
        values.append(Value(kind, number, match.group(0).strip()))
    return values


def source_index(text: str) -> tuple[set[tuple[str, object]], set[Decimal]]:
    """(kind, number) pairs of the values in ``text`` and every number in it."""
    keys = {(v.kind, v.number) for v in find_values(text)}
    numbers = set()
    for match in BARE_NUM_RE.finditer(text or ""):
        number = to_decimal(match.group(0))
        if number is not None:
            numbers.add(number)
    return keys, numbers


def value_in_source(value: Value, keys: set, numbers: set[Decimal]) -> bool:
    if (value.kind, value.number) in keys:
        return True
    if value.kind == "frac" or not isinstance(value.number, Decimal):
        return False
    distinctive = value.number != value.number.to_integral_value() or abs(value.number) >= 100
    return distinctive and value.number in numbers



_LEGAL_REF_RE = re.compile(
    r"(?:§§?|\bAbs\.?|\bArt\.?|\bZ\.?|\blit\.?|\bNr\.?|\bZiffer|\bAbsatz|\bRz\.?)\s*\d+[a-z]?"
    r"(?:\s*(?:,|und|bis|-|–)\s*\d+[a-z]?)*",
    re.I,
)
_DATE_RE = re.compile(r"\b\d{1,2}\.\s?\d{1,2}\.\s?\d{2,4}\b|\b\d{4}-\d{2}(?:-\d{2})?\b|\b\d{1,2}/\d{4}\b")
_YEAR_RE = re.compile(r"\b(?:19|20)\d{2}\b")


def value_tokens(value: str) -> frozenset[tuple[str, object]]:
    """Comparable numbers of a value cell: typed values plus bare numbers (no years, refs, dates)."""
    tokens = {(v.kind, v.number) for v in find_values(value)}
    rest = VALUE_RE.sub(" ", value)
    rest = _LEGAL_REF_RE.sub(" ", rest)
    rest = _DATE_RE.sub(" ", rest)
    rest = _YEAR_RE.sub(" ", rest)
    for match in BARE_NUM_RE.finditer(rest):
        number = to_decimal(match.group(0))
        if number is not None:
            tokens.add(("num", number))
    return frozenset(tokens)



# --------------------------------------------------------------------------- a value and its year

YEAR_RE = re.compile(r"(?<![\d.,/-])(?:19|20)\d{2}(?![\d]|[.,]\d)")


def years(text: str) -> set[str]:
    """The four-digit years (1900–2099) named in ``text``; amounts such as € 2.100 are none."""
    return set(YEAR_RE.findall(text or ""))


def year_passages(text: str) -> list[str]:
    """The places of a block a value can be read from with its year: each sentence, each two neighbouring
    sentences, and each table cell together with its row's first cell and its column header
    ("Pkw ab 2025 € 0,50" out of ``| Pkw | € 0,42 | € 0,50 |`` under ``| Fahrzeug | bis 2024 | ab 2025 |``),
    so that the value of one column is never read with the year of another."""
    out: list[str] = []
    for kind, chunk in md_blocks.blocks(text or ""):
        if kind == md_blocks.TABLE:
            rows = [r for r in chunk.split("\n") if r.strip()]
            header = md_blocks.cells(rows[0]) if rows else []
            for row in rows[1:]:
                cells = md_blocks.cells(row)
                if all(set(c) <= set("-: ") for c in cells):
                    continue        # the |---| line
                for pos, value in enumerate(cells[1:], 1):
                    head = header[pos] if pos < len(header) else ""
                    out.append(f"{cells[0]} {head} {value}")
            continue
        sentences, pairs = md_blocks.sentences_and_pairs(chunk)
        out.extend(sentences + pairs)
    return out


def _nearest_mark(value: Value, passage: str) -> tuple[int, str] | None:
    """(position, year) of the year standing closest to ``value`` in ``passage``."""
    spots = [m.start() for m in VALUE_RE.finditer(passage)
             if any((v.kind, v.number) == (value.kind, value.number) for v in find_values(m.group(0)))]
    marks = [(m.start(), m.group(0)) for m in YEAR_RE.finditer(passage)]
    if not spots or not marks:
        return None
    return min(((abs(y - v), (y, text)) for v in spots for y, text in marks))[1]


def _nearest_year(value: Value, passage: str) -> str | None:
    """The year standing closest to ``value`` in ``passage`` ("€ 0,50 seit 2025; bisher € 0,42 bis 2024")."""
    mark = _nearest_mark(value, passage)
    return mark[1] if mark else None


_FROM_RE = re.compile(r"(?:seit|ab|nach)\s+(?:dem\s+|(?:1\.\s*)?(?:jänner|januar)\s+)?$", re.I)
_UNTIL_RE = re.compile(r"(?:bis|vor)\s+(?:(?:zum|ende)\s+)?$", re.I)


def _year_covers(passage: str, position: int, mark: str, year: str) -> bool:
    """Whether the year ``mark`` at ``position`` covers ``year``: "seit 2023"/"ab 2023" every later year too,
    "bis 2029" every earlier one, a bare year only itself."""
    before = passage[max(0, position - 20):position]
    if _FROM_RE.search(before):
        return year >= mark
    if _UNTIL_RE.search(before):
        return year <= mark
    return year == mark


def value_in_year(value: Value, year: str, blocks) -> bool:
    """True when a block holds ``value`` in a passage (:func:`year_passages`) that names ``year`` — the year
    nearest to the value where a passage names several —; a passage naming no year takes the block title's
    years, and with none there the block's Stand: an entry whose Stand year is before ``year`` cannot state a
    value for it."""
    for block in blocks:
        fallback = years(block.title) or ({year} if (block.stand or "")[:4] >= year else set())
        for passage in [block.title] + year_passages(block.text):
            if not value_in_source(value, *source_index(passage)):
                continue
            named = years(passage)
            if len(named) > 1:
                if _nearest_year(value, passage) == year:
                    return True
            elif year in (named or fallback):
                return True
    return False


def asked_year(question: str) -> str | None:
    """The one year a question names ("Wie hoch ist die HBGl 2025?"), else None (none, or several)."""
    named = years(question)
    return next(iter(named)) if len(named) == 1 else None


def value_of_other_year(value: Value, year: str, blocks) -> bool:
    """True when the blocks hold ``value`` only in passages bound to years other than ``year``: every passage
    holding it names years and the year nearest the value (:func:`year_passages`) does not cover ``year``
    ("seit 2023" covers 2025, "bis 2029" too, a bare "2024" only itself). A value in a passage naming no
    year is timeless ("30 Werktage") and never of another year; a value the blocks do not hold is for the
    source check."""
    found = False
    for block in blocks:
        for passage in [block.title] + year_passages(block.text):
            if not value_in_source(value, *source_index(passage)):
                continue
            if not years(passage):
                return False
            found = True
            mark = _nearest_mark(value, passage)
            if mark is None:     # the value stands in the title only: its year is the title's
                mark = next((m.start(), m.group(0)) for m in YEAR_RE.finditer(passage))
            if _year_covers(passage, *mark, year):
                return False
    return found
