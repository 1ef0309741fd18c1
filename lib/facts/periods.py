"""Years and periods a value is valid for: "2025", "ab 2026", "bis 31.12.2023", "seit 2023", "2024 und 2025".

A period is explicit when the text names it (a cell, a row or column header, a table's caption, the entry's
title); a fact whose text names none is valid "as of" its entry's Stand (implicit: the Stand year).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_Y = r"(?:19|20)\d{2}"
_MONTHS = (r"jänner|jaenner|januar|februar|feber|märz|maerz|april|mai|juni|juli|august|september|oktober"
           r"|november|dezember")
# an optional day/month in front of a year: "31.12.", "1. 10.", "1. Juli", "Juni"
_DAY = rf"(?:(?:\d{{1,2}}\.\s?)?(?:\d{{1,2}}\.\s?|(?:{_MONTHS})\s+))?"
_NOT_AMOUNT = r"(?<![\d.,€/-])(?<!€\s)"
_END = r"(?![\d]|[.,]\d|-\d{2})"
_RANGE_RE = re.compile(
    rf"(?:\b(?:von|vom|zwischen)\s+)?{_DAY}{_NOT_AMOUNT}(?P<a>{_Y}){_END}\s*(?:–|-|/|\bbis\b|\bund\b)\s*"
    rf"(?:\b(?:ende|einschließlich|inkl\.)\s+)?{_DAY}(?P<b>{_Y}){_END}", re.I)
_UNTIL_RE = re.compile(
    rf"\b(?P<w>bis|vor)\s+(?:(?:zum|ende|einschließlich|inkl\.|jahr|kalenderjahr)\s+)*{_DAY}(?P<b>{_Y}){_END}",
    re.I)
_FROM_RE = re.compile(
    rf"\b(?:ab|seit|nach|beginnend)\s+(?:(?:dem|jahr|kalenderjahr|1\.)\s+)*{_DAY}(?P<a>{_Y}){_END}", re.I)
_POINT_RE = re.compile(rf"{_DAY}{_NOT_AMOUNT}\b(?P<y>{_Y}){_END}", re.I)
# "Stand 2024-01" / "(Gesetzeslage Stand 2024-01)" says when it was written, not for when
_STAND_NOTE_RE = re.compile(r"\(?\s*(?:gesetzeslage\s+)?stand\s+\d{4}-\d{2}(?:-\d{2})?\s*\)?", re.I)
_HISTORIC_RE = re.compile(r"\bhistorisch\b", re.I)


@dataclass(frozen=True)
class Period:
    """Years ``start``..``end`` (None: open); ``source`` says where it was read (cell, row, column, caption,
    title, stand); ``text`` as written ("ab 2025")."""

    start: int | None
    end: int | None
    text: str = ""
    source: str = "stand"

    @property
    def explicit(self) -> bool:
        return self.source != "stand"

    def covers(self, year: int) -> bool:
        return (self.start is None or self.start <= year) and (self.end is None or year <= self.end)

    def overlaps(self, other: "Period") -> bool:
        lo = max(self.start if self.start is not None else -1, other.start if other.start is not None else -1)
        hi = min(self.end if self.end is not None else 10**4, other.end if other.end is not None else 10**4)
        return lo <= hi

    @property
    def newest(self) -> int:
        """The latest year the period names (its end, else its start): for sorting newest first."""
        return self.end if self.end is not None else (self.start if self.start is not None else 0)

    def label(self) -> str:
        """German wording: "2025", "ab 2025", "bis 2024", "2024–2025"."""
        if self.start is not None and self.end is not None:
            return str(self.start) if self.start == self.end else f"{self.start}–{self.end}"
        if self.start is not None:
            return f"ab {self.start}"
        if self.end is not None:
            return f"bis {self.end}"
        return ""

    def with_source(self, source: str) -> "Period":
        return Period(self.start, self.end, self.text, source)


def _candidates(text: str) -> list[tuple[int, int, str, re.Match]]:
    """(start, -length, kind, match) of every period expression of a text ("Stand" notes blanked out)."""
    text = _STAND_NOTE_RE.sub(lambda m: " " * len(m.group(0)), text or "")
    found = []
    for kind, regex in (("range", _RANGE_RE), ("until", _UNTIL_RE), ("from", _FROM_RE), ("point", _POINT_RE)):
        for match in regex.finditer(text):
            found.append((match.start(), -len(match.group(0)), kind, match))
    return sorted(found, key=lambda item: (item[0], item[1]))


def _period(kind: str, match: re.Match, source: str) -> Period:
    if kind == "range":
        start, end = sorted((int(match.group("a")), int(match.group("b"))))
    elif kind == "until":
        start, end = None, int(match.group("b")) - (1 if match.group("w").lower() == "vor" else 0)
    elif kind == "from":
        start, end = int(match.group("a")), None
    else:
        start = end = int(match.group("y"))
    return Period(start, end, " ".join(match.group(0).split()), source)


@lru_cache(maxsize=20_000)
def find_period(text: str, source: str = "cell") -> Period | None:
    """The first period the text names, or None. "Stand 2024-01" notes are no period."""
    found = _candidates(text)
    if not found:
        return None
    _, _, kind, match = found[0]
    return _period(kind, match, source)


def period_spans(text: str, source: str = "cell") -> list[tuple[int, int, Period]]:
    """(start, end, period) of every period a text names, in order, none overlapping another."""
    out: list[tuple[int, int, Period]] = []
    for start, _, kind, match in _candidates(text):
        if out and start < out[-1][1]:
            continue
        out.append((start, match.end(), _period(kind, match, source)))
    return out


@lru_cache(maxsize=20_000)
def strip_periods(text: str) -> str:
    """The text without its periods, "Stand" notes and "historisch": what is left of a label."""
    text = _STAND_NOTE_RE.sub(" ", text or "")
    for regex in (_RANGE_RE, _UNTIL_RE, _FROM_RE, _POINT_RE):
        text = regex.sub(" ", text)
    text = _HISTORIC_RE.sub(" ", text)
    text = " ".join(text.split()).strip(" ,;:–-")
    text = re.sub(r"\(\s*\)", "", text).strip()
    text = re.sub(r"\(\s+", "(", re.sub(r"\s+\)", ")", text))      # "(Sachbezug 2024)" → "(Sachbezug)"
    while text.count("(") > text.count(")") and text.endswith(("(", " ")):
        text = text[:-1].rstrip()
    if text.count("(") > text.count(")"):
        text += ")"
    return text.strip(" ,;:–-")


@lru_cache(maxsize=20_000)
def is_period_only(text: str) -> bool:
    """True for a cell that only names a period ("2024", "bis 2023", "ab 2026 (Gesetzeslage Stand 2024-01)",
    "historisch"): such a cell qualifies its row or column instead of holding a value."""
    if not (text or "").strip():
        return False
    if find_period(text) is None and not _HISTORIC_RE.search(text):
        return False
    rest = re.sub(r"\b(?:jahr|jahre|kalenderjahr|zeitraum|beginn|im|in|für|das|jahr)\b", " ", strip_periods(text),
                  flags=re.I)
    return not re.search(r"[^\W\d_]{2,}|\d", rest)


def stand_year(stand: str) -> int | None:
    match = re.match(r"\s*((?:19|20)\d{2})", stand or "")
    return int(match.group(1)) if match else None


def implicit(stand: str) -> Period:
    """The period of a value whose text names none: the year of its entry's Stand."""
    year = stand_year(stand)
    return Period(year, year, f"Stand {stand}" if stand else "", "stand")
