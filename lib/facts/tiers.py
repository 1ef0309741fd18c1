"""Tiers: rows of a table that hold for a range of service years or kilometres, and the row a question falls into.

Many Kernwerte tables are staged by a count: "1. Dienstjahr", "ab dem 2. Dienstjahr", "ab dem 16. Dienstjahr (nach
15 Jahren)", "bis 15 Dienstjahre", "20 bis 40 km", "über 60 km"; or by an amount of income: "bis € 13.308",
"über € 13.308 bis € 21.617", "über € 1.000.000". A question names one number of that dimension ("im 4. Dienstjahr",
"seit 17 Jahren", "bei 25 km", "mit € 50.000 Jahreseinkommen"), and the row is the one whose range holds it.

Service years are counted as the ordinal year of service ("im 4. Dienstjahr" = 4). A count of completed years
("seit 3 Jahren", "nach 10 Jahren", "15 Dienstjahre") is the year after it — or, said loosely, that year itself;
a question whose readings fall into different rows is not clear (:func:`question_points` gives both readings, and
:func:`holds` asks that all of them fall into the row). Kilometres are read as written.

Nothing here imports Odoo.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from ..text.german import fold_plain

_NUM = r"(\d+(?:[.,]\d+)?)"
_YEARS = r"(?:dienst|arbeits|beschaeftigungs)?jahr(?:e|en|es|s|n)?\b"
_KM = r"(?:km|kilometer\w*)"
# the dimension of a tier: the word after its numbers
_UNIT_RES = (("jahr", re.compile(_YEARS)), ("km", re.compile(_KM)))


@dataclass(frozen=True)
class Tier:
    """A range of one dimension ("jahr": ordinal service year; "km"), bounds included; None: open."""

    unit: str       # "jahr", "km", "alter", "eur"
    low: Decimal | None
    high: Decimal | None

    def contains(self, point: Decimal) -> bool:
        return (self.low is None or point >= self.low) and (self.high is None or point <= self.high)


# a row of persons by age: "Kind unter 18", "Kind ab 18 mit Familienbeihilfe", "bis zum 18. Lebensjahr"
_AGE_LABEL_RE = re.compile(r"\b(?:kind|kinder|kindes|jugendliche\w*|lebensjahr\w*|geburtstag\w*|alter)\b"
                           r"[^()]*?\b(?:unter|ueber|ab|bis(?: zum)?|vor)\s+(?:dem\s+)?\d{1,2}\b(?![.,]\d)"
                           r"|\b(?:unter|ueber|ab|bis(?: zum)?|vor)\s+(?:dem\s+)?\d{1,2}\.?\s*(?:lebensjahr|geburtstag|jahre alt)")
# the words a question names an age with: "10-jährige Tochter", "zehnjähriges Kind", "12 Jahre alt", "Sohn (12)"
_PERSONS = r"(?:kind|kinder|kindes|tochter|sohn|enkel\w*|lehrling\w*|jugendliche\w*)"
_AGE_WORDS = {"ein": 1, "zwei": 2, "drei": 3, "vier": 4, "fuenf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9,
              "zehn": 10, "elf": 11, "zwoelf": 12, "dreizehn": 13, "vierzehn": 14, "fuenfzehn": 15, "sechzehn": 16,
              "siebzehn": 17, "achtzehn": 18, "neunzehn": 19, "zwanzig": 20}
_AGE_RES = (
    re.compile(r"(?<![\d.,])(\d{1,2}|" + "|".join(_AGE_WORDS) + r")\s*-?\s*jaehrige?[nmrs]?\s+(?:\w+\s+)?" + _PERSONS + r"\b"),
    re.compile(r"(?<![\d.,])(\d{1,2})\s+jahre?\s+alte?[nmrs]?\b"),
    re.compile(r"\b" + _PERSONS + r"\s*\((\d{1,2})\)"),
    re.compile(r"\b" + _PERSONS + r"\s+(unter|ueber|ab)\s+(\d{1,2})\b(?![.,]\d)(?:\s*jahre?n?\b)?"),
)
# the words of the age dimension in a question ("jaehrig", "zehnjaehrig", "tochter"), allowed when the row holds it
_AGE_DIMENSION_RE = re.compile(r"\w*jaehrig\w*|alt|alter|lebensjahr\w*|tochter|sohn|kind")


# a row of an income band names its bounds in euros; a share of a running sum ("die ersten € 620", "die nächsten
# € 24.380") is taxed by the sum before it, no band a single amount falls into; "€ 1 Mio." is left as written
_EUR_LABEL_RE = re.compile(r"^\s*(?:bis|ueber|mehr als|ab|unter)\s+€\s*\d")
_NOT_EUR_BAND_RE = re.compile(r"\b(?:ersten|naechsten|mio|million\w*)\b")
# an amount a question tells ("mit € 50.000 Jahreseinkommen", "rund 50.000 Euro", "€ 2.300 brutto")
_EUR_POINT_RE = re.compile(r"(?:€|\beur\b|\beuro\b)\s*(\d{1,3}(?:\.\d{3})+(?:,\d{1,2})?|\d+(?:,\d{1,2})?)(?![\d.,]*\s*(?:mio|million))"
                           r"|(?<![\d.,])(\d{1,3}(?:\.\d{3})+(?:,\d{1,2})?|\d+(?:,\d{1,2})?)\s*(?:€|euro\b|eur\b)")


_ABOVE_RE = re.compile(r"\b(?:ueber|mehr\s+als|oberhalb\s+von)\s*$")
_THOUSANDS_RE = re.compile(r"(?<![\d.,])\d{1,3}(?:\.\d{3})+(?![\d.])")


def _steps(unit: str) -> Decimal:
    """The smallest step of a dimension: "über 60 km" starts just above 60, "über € 13.308" a cent above it."""
    return {"km": Decimal("0.001"), "eur": Decimal("0.01")}.get(unit, Decimal(1))


def _unit(text: str) -> str:
    if _EUR_LABEL_RE.search(text) and not _NOT_EUR_BAND_RE.search(text):
        return "eur"
    for unit, pattern in _UNIT_RES:
        if pattern.search(text):
            return unit
    return ""


def _dec(text: str) -> Decimal:
    return Decimal(text.replace(".", "").replace(",", ".")) if "," in text else Decimal(text.replace(".", ""))


def tier_of(label: str) -> Tier | None:
    """The range a row label names, or None: "ab dem 3. Dienstjahr" → years ≥ 3; "bis 15 Dienstjahre" → ≤ 15;
    "nach 15 Jahren" → ≥ 16; "1. Dienstjahr" → 1; "2. bis 5. Dienstjahr" → 2…5; "20 bis 40 km" → 20…40;
    "über 60 km" → > 60 (as ≥ 60.001). Years named as calendar years (2024) are no tier."""
    text = fold_plain(label or "").lower()
    text = re.sub(r"\((?:nach|ab|bis)[^()]*\)", " ", text) if re.search(r"\d+\.\s*" + _YEARS, text) else text
    unit = "alter" if _AGE_LABEL_RE.search(text) and not re.search(r"(?:dienst|arbeits)jahr", text) else _unit(text)
    if unit == "eur":
        text = _THOUSANDS_RE.sub(lambda m: m.group(0).replace(".", ""), text.replace("€", " "))
    elif not unit or re.search(r"\b(?:19|20)\d{2}\b", text):
        return None
    # "über"/"nach" a number: the next year of service ("nach 15 Jahren" = from the 16th), just over the kilometres
    step = _steps(unit)
    m = re.search(r"(?:ueber|mehr als)\s+" + _NUM + r"\.?\s*(?:\w+\s+)?(?:bis(?: zu)?|–|-)\s*" + _NUM, text)
    if m:
        return Tier(unit, _dec(m.group(1)) + step, _dec(m.group(2)))
    m = re.search(_NUM + r"\.?\s*(?:" + _YEARS + r"\s+)?(?:bis(?: zum?)?|–|-)\s*" + _NUM, text)
    if m:
        return Tier(unit, _dec(m.group(1)), _dec(m.group(2)))
    m = re.search(r"(?:ab|nach|ueber|mehr als)\s+(?:dem\s+|den\s+)?" + _NUM, text)
    if m:
        low = _dec(m.group(1))
        if re.search(r"(?:nach|ueber|mehr als)\s", m.group(0)):
            low += step
        return Tier(unit, low, None)
    m = re.search(r"(?:bis|hoechstens)\s+(?:zum\s+|zu\s+)?" + _NUM, text)
    if m:
        return Tier(unit, None, _dec(m.group(1)))
    m = re.search(r"unter\s+" + _NUM, text)
    if m:
        return Tier(unit, None, _dec(m.group(1)) - step)
    m = re.fullmatch(r"\s*(?:im\s+)?" + _NUM + r"\.\s*" + _YEARS + r"\s*", text)
    if m:
        return Tier(unit, _dec(m.group(1)), _dec(m.group(1)))
    return None


def column_tiers(labels: list[str]) -> list[Tier | None]:
    """The tiers of the rows of one table column, by their labels (:func:`tier_of`, :func:`staged`); a column that
    shares out a running sum ("die ersten € 620", "die nächsten € 24.380") holds no income bands."""
    tiers = [tier_of(label) for label in labels]
    if any(_NOT_EUR_BAND_RE.search(fold_plain(label or "").lower()) for label in labels):
        tiers = [None if t is not None and t.unit == "eur" else t for t in tiers]
    return staged(tiers)


def staged(tiers: list[Tier | None]) -> list[Tier | None]:
    """The tiers of one column of a staged table with their open ends closed by the next row: "ab dem 2.
    Dienstjahr" beside "ab dem 16. Dienstjahr" holds for the 2nd to the 15th year. Income bands written with
    upper bounds only ("bis € 12.816", "bis € 20.818") start above the bound of the row below them."""
    out = []
    for tier in tiers:
        if tier is not None and tier.high is None and tier.low is not None:
            step = _steps(tier.unit)
            above = [t.low for t in tiers if t is not None and t.unit == tier.unit and t.low is not None
                     and t.low > tier.low]
            if above:
                tier = Tier(tier.unit, tier.low, min(above) - step)
        elif tier is not None and tier.unit == "eur" and tier.low is None and tier.high is not None:
            below = [t.high for t in tiers if t is not None and t.unit == "eur" and t.high is not None
                     and t.high < tier.high]
            if below:
                tier = Tier("eur", max(below) + _steps("eur"), tier.high)
        out.append(tier)
    return out


_ORDINAL_WORDS = {"ersten": 1, "zweiten": 2, "dritten": 3, "vierten": 4, "fuenften": 5, "sechsten": 6,
                  "siebten": 7, "achten": 8, "neunten": 9, "zehnten": 10}
_ORDINAL_RE = re.compile(r"\b(" + "|".join(_ORDINAL_WORDS) + r")\s+(?=" + _YEARS + r")")
# counts written as words before years or kilometres ("seit drei Jahren")
_CARDINAL_WORDS = {"einem": 1, "einen": 1, "zwei": 2, "drei": 3, "vier": 4, "fuenf": 5, "sechs": 6, "sieben": 7,
                   "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwoelf": 12, "fuenfzehn": 15, "zwanzig": 20,
                   "fuenfundzwanzig": 25, "dreissig": 30}
# … and halves ("seit sechseinhalb Jahren" → 6,5)
_HALF_WORDS = {"anderthalb": "1,5"} | {f"{word}einhalb": f"{n},5" for word, n in (
    ("ein", 1), ("zwei", 2), ("drei", 3), ("vier", 4), ("fuenf", 5), ("sechs", 6), ("sieben", 7), ("acht", 8),
    ("neun", 9), ("zehn", 10), ("elf", 11), ("zwoelf", 12))}
_CARDINAL_RE = re.compile(r"\b(" + "|".join([*_HALF_WORDS, *_CARDINAL_WORDS]) + r")\s+(?=(?:vollen\s+|ganzen\s+)?(?:"
                          + _YEARS + r"|" + _KM + r"))")
# a length of service in months ("seit 4 Monaten", "seit einem Monat")
# ("seit einem Monat krank" is no length of service: a word of employment must follow)
_MONTHS_RE = re.compile(r"\bseit\s+(\d{1,3}|" + "|".join(_CARDINAL_WORDS) + r")\s+monat(?:en|e)?\b"
                        r"(?=(?:\s+\w+){0,2}\s+(?:bei\s+(?:uns|ihnen|dir|euch)|im\s+(?:betrieb|unternehmen|haus)"
                        r"|in\s+der\s+firma|beschaeftigt|angestellt|dabei|taetig)\b)")
# a band the question names ("20-40 km", "20 bis 40 km"): its middle is the reading (the row "über 20 bis 40 km"
# holds it, the row "40 bis 60 km" does not)
_BAND_RE = re.compile(r"(?<![\d.,])" + _NUM + r"\s*(?:-|–|bis)\s*" + _NUM + r"\s*(" + _KM + r")\b")


_MONTH_NUMBERS = {"jaenner": 1, "januar": 1, "februar": 2, "feber": 2, "maerz": 3, "april": 4, "mai": 5, "juni": 6,
                  "juli": 7, "august": 8, "september": 9, "oktober": 10, "november": 11, "dezember": 12}
_MONTH_NAMES = "|".join(_MONTH_NUMBERS)
# the start of the employment told as a date ("mit Eintritt 2001", "Eintritt 1. 4. 2018", "seit März 2002 bei uns")
# ("seit 2023 gilt …" is no start of employment: after "seit" a word of employment must follow)
_ENTRY_RE = re.compile(r"\b(?P<word>eintritt|eingetreten|eintrittsdatum|seit)\s+(?:(?:am|im|mit|per)\s+)?"
                       r"(?:\d{1,2}\.\s*(?P<num>\d{1,2})\.\s*|(?:\d{1,2}\.\s*)?(?P<name>" + _MONTH_NAMES + r")\s+)?"
                       r"(?P<year>(?:19|20)\d{2})\b(?P<employed>(?:\s+\w+){0,2}\s+(?:bei\s+(?:uns|ihnen|euch)|im\s+"
                       r"(?:betrieb|unternehmen|haus)|in\s+der\s+firma|beschaeftigt|angestellt|dabei|taetig)\b)?")
# … or with the date before the verb ("ist am 1. März 2014 eingetreten", "hat im Mai 2000 bei uns angefangen")
_ENTERED_RE = re.compile(r"\b(?:am|im|per|mit)\s+(?:\d{1,2}\.\s*(?P<num>\d{1,2})\.\s*|(?:\d{1,2}\.\s*)?(?P<name>"
                         + _MONTH_NAMES + r")\s+)?(?P<year>(?:19|20)\d{2})\s+(?:\w+\s+){0,2}"
                         r"(?P<word>eingetreten|eingestellt|angefangen|begonnen)\b")
_DATED_YEAR_RE = re.compile(r"(?:\b(?P<name>" + _MONTH_NAMES + r")\s+|\d{1,2}\.\s*(?P<num>\d{1,2})\.\s*)?"
                            r"(?<![\d.,])(?P<year>(?:19|20)\d{2})\b")


def _month(match) -> int | None:
    if match.group("num"):
        return int(match.group("num")) if 1 <= int(match.group("num")) <= 12 else None
    return _MONTH_NUMBERS.get(match.group("name") or "")


def _service(text: str) -> tuple[int, tuple[Decimal, ...]] | None:
    text = fold_plain(text or "").lower()
    entry = next((m for m in _ENTRY_RE.finditer(text) if m.group("word") != "seit" or m.group("employed")), None)
    entry = entry or _ENTERED_RE.search(text)
    if not entry:
        return None
    start_year, start_month = int(entry.group("year")), _month(entry)
    later = [m for m in _DATED_YEAR_RE.finditer(text) if int(m.group("year")) > start_year]
    if not later:
        return None
    event = max(later, key=lambda m: int(m.group("year")))
    years, month = int(event.group("year")) - start_year, _month(event)
    if start_month and month:
        return start_year, (Decimal((years * 12 + month - start_month) // 12 + 1),)
    return start_year, (Decimal(years), Decimal(years + 1))


def service_years(text: str) -> tuple[Decimal, ...] | None:
    """The year of service a case falls into, from its start and a later year it tells ("Eintritt 1. 4. 2018, …
    im Oktober 2024 gekündigt" → the 7th; "Eintritt 2001 … 2024" → the 23rd or 24th); None without both."""
    service = _service(text)
    return service[1] if service else None


def service_start(text: str) -> int | None:
    """The calendar year the employment of such a case began (no year the question asks a value for)."""
    service = _service(text)
    return service[0] if service else None


def question_points(question: str) -> dict[str, tuple[Decimal, ...]]:
    """The numbers of a question by dimension, each with its readings: "im 4. Dienstjahr" → jahr (4,); "nach dem
    25. Dienstjahr" → (26,); "seit 17 Jahren" → (17, 18); "bei 25 km" → km (25,). A dimension named with two
    different numbers is left out (two cases in one question)."""
    text = _ORDINAL_RE.sub(lambda m: f"{_ORDINAL_WORDS[m.group(1)]}. ", fold_plain(question or "").lower())
    text = re.sub(r"\bdj\b", "dienstjahr", text)      # "ab dem 26. DJ"
    text = _CARDINAL_RE.sub(lambda m: f"{_HALF_WORDS.get(m.group(1)) or _CARDINAL_WORDS[m.group(1)]} ", text)
    found: dict[str, set] = {}
    text = _age_points(text, found)
    for m in _EUR_POINT_RE.finditer(text):
        amount = _dec(m.group(1) or m.group(2))
        if _ABOVE_RE.search(text[max(0, m.start() - 20):m.start()]):     # the words right before it only
            amount += Decimal("0.01")       # "über € 69.166": the band that begins there, not the one ending there
        found.setdefault("eur", set()).add((amount,))
    text = _EUR_POINT_RE.sub(" ", text)
    for m in _MONTHS_RE.finditer(text):      # "seit vier Monaten bei uns": within the first year of service
        months = int(m.group(1)) if m.group(1).isdigit() else _CARDINAL_WORDS[m.group(1)]
        found.setdefault("jahr", set()).add((Decimal(months // 12 + 1),))
    text = _MONTHS_RE.sub(" ", text)
    for m in _BAND_RE.finditer(text):
        found.setdefault("km", set()).add(((_dec(m.group(1)) + _dec(m.group(2))) / 2,))
    text = _BAND_RE.sub(" ", text)
    # a number starts where no digit stands before it: a long run of digits is read once, not from every digit on
    for m in re.finditer(r"(?:(nach|ab|ueber|mehr als)\s+(?:dem\s+)?)?(?<![\d.,])" + _NUM + r"(\.)?\s*(?:(?:vollen|ganzen|abgeschlossenen)\s+)?"
                         r"(" + _YEARS + r"|" + _KM + r")\b", text):
        before, number, dot, word = m.group(1), _dec(m.group(2)), m.group(3), m.group(4)
        unit = _unit(word)
        if re.fullmatch(r"(?:19|20)\d{2}", m.group(2)):
            continue        # a calendar year
        if unit == "km":
            points = (number + Decimal("0.001"),) if before in ("ueber", "mehr als") else (number,)
        elif before in ("ueber", "mehr als"):
            points = (number + 1,)
        elif dot:
            points = (number + 1,) if before == "nach" else (number,)
        else:
            points = (number, number + 1)     # completed years: that year, or (strictly) the one after it
        found.setdefault(unit, set()).add(points)
    if "jahr" not in found:
        service = service_years(text)
        if service:
            found["jahr"] = {service}
    return {unit: next(iter(readings)) for unit, readings in found.items() if len(readings) == 1}


def _age_points(text: str, found: dict) -> str:
    """The ages a (folded) question names, added to ``found`` under "alter"; the text without them, so that "12
    Jahre alt" is not read as years of service."""
    for pattern in _AGE_RES:
        for m in pattern.finditer(text):
            if m.lastindex == 2:        # "Kind unter 18": under 18 is 17, over 18 is 19
                age = int(m.group(2)) + {"unter": -1, "ueber": 1, "ab": 0}[m.group(1)]
            else:
                age = int(m.group(1)) if m.group(1).isdigit() else _AGE_WORDS[m.group(1)]
            found.setdefault("alter", set()).add((Decimal(age),))
        text = pattern.sub(" ", text)
    return text


def is_dimension_word(word: str) -> bool:
    """A (folded, stemmed) word that names a tier's dimension: "dienstjahr", "jahr", "km"; an age: "jaehrig",
    "tochter"."""
    return any(pattern.fullmatch(word) for _unit, pattern in _UNIT_RES) or bool(_AGE_DIMENSION_RE.fullmatch(word))


def holds(tier: Tier, points: dict[str, tuple[Decimal, ...]]) -> bool | None:
    """Does the question's number of the tier's dimension fall into it (every reading)? None: the question names
    no number of that dimension."""
    readings = points.get(tier.unit)
    if not readings:
        return None
    return all(tier.contains(p) for p in readings)
