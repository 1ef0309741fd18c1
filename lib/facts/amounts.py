"""The value of a fact: amount and unit (€, %, Tage, Wochen, Monate, Jahre, km, Stunden, …) out of a cell.

"€ 551,10", "27,5 %", "über € 1.000.000", "€ 1 Mio.", "40 % bis 60 %", "8 Wochen", "30.000 km", "126 g/km", "1/5 der …",
"15. des Folgemonats" (a day of the month: a deadline), "kein Sachbezug" (text, no amount).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from decimal import Decimal, InvalidOperation

from ..text.german import fold_plain
from ..text.numbers import digits_for_words
from .periods import find_period

_NUM = r"(?<![\d,.])(?:\d{1,3}(?:[.\u00a0\u202f]\d{3})+(?:,\d+)?|\d+(?:,\d+)?)(?![\d]|\.\d)"
_SCALE = r"(?:Mio\.?|Millionen|Million|Mrd\.?|Milliarden|Milliarde)"
# unit words after a number, folded, and the unit they stand for
_UNIT_WORDS = (
    ("werktag", "Werktage"), ("arbeitstag", "Arbeitstage"), ("kalendertag", "Tage"), ("tag", "Tage"),
    ("woche", "Wochen"), ("monatsentgelt", "Monatsentgelte"), ("monatsbezu", "Monatsentgelte"),
    ("monat", "Monate"), ("dienstjahr", "Dienstjahre"), ("jahr", "Jahre"), ("stunde", "Stunden"),
    ("std", "Stunden"), ("uberstunde", "Überstunden"), ("ueberstunde", "Überstunden"), ("kilometer", "km"),
    ("km", "km"), ("prozentpunkt", "Prozentpunkte"), ("kind", "Kinder"),
)
_DURATION_ENDINGS = (("jahre", "Jahre"), ("jahren", "Jahre"), ("monate", "Monate"), ("monaten", "Monate"),
                     ("wochen", "Wochen"))
UNITS = ("€", "%", "Tage", "Werktage", "Arbeitstage", "Wochen", "Monate", "Monatsentgelte", "Jahre", "Dienstjahre",
         "Stunden", "Überstunden", "km", "g/km", "Prozentpunkte", "Kinder", "Bruch", "Termin", "Datum", "Anzahl")
_VALUE_RE = re.compile(
    rf"(?<![\w/.,])(?P<frac>\d{{1,2}}/\d{{1,2}})(?![\d/])"
    rf"|(?P<pre>(?:€|\bEUR\b)\s?)(?P<n1>{_NUM})(?:\s?(?P<s1>{_SCALE}))?(?:,-{{1,2}})?"
    rf"|(?P<n2>{_NUM})(?:\s?(?P<s2>{_SCALE}))?(?:,-{{1,2}})?(?:\s?(?P<post>%|Prozent\b|€|EUR\b|Euro\b)"
    rf"|\s(?P<word>[^\W\d_]+\.?))?",
    re.I)
_DATE_RE = re.compile(r"\b\d{1,2}\.\s?\d{1,2}\.\s?(?:19|20)\d{2}\b|\b\d{1,2}\.\s?(?:jänner|januar|februar|märz|april|"
                      r"mai|juni|juli|august|september|oktober|november|dezember)\b(?:\s+(?:19|20)\d{2})?", re.I)
_DAY_OF_MONTH_RE = re.compile(r"\b(\d{1,2})\.\s+(?:des|eines|im|jedes)\b", re.I)
_YEAR_ONLY_RE = re.compile(r"^(?:19|20)\d{2}$")
_REFERENCE_RE = re.compile(r"^\W*(?:siehe|vgl\.?|s\.)\s*\[|^\W*(?:wie\s+oben|siehe\s+oben|siehe\s+dort|dto\.?|"
                           r"wie\s+vor|s\.\s*o\.)\W*$", re.I)
_BOUNDS = (("über", "über"), ("ueber", "über"), ("mehr als", "über"), ("ab", "ab"), ("mind.", "mindestens"),
           ("mindestens", "mindestens"), ("max.", "höchstens"), ("maximal", "höchstens"),
           ("höchstens", "höchstens"), ("hoechstens", "höchstens"), ("bis zu", "bis"), ("bis", "bis"),
           ("unter", "unter"), ("ca.", "ca."), ("rund", "ca."))


@dataclass(frozen=True)
class Amount:
    """The parsed value: ``amount`` (and ``amount_to`` for a range) in ``unit``; ``numbers`` every (unit, amount)
    the cell names, for comparing two cells; ``bound`` "über", "bis", "höchstens", … when the cell says so."""

    amount: Decimal | None
    unit: str
    text: str
    amount_to: Decimal | None = None
    bound: str = ""
    numbers: frozenset = frozenset()

    @property
    def has_value(self) -> bool:
        return bool(self.numbers)


def to_decimal(text: str) -> Decimal | None:
    raw = re.sub(r"[\s\u00a0\u202f]", "", text)
    if "," in raw:
        raw = raw.replace(".", "").replace(",", ".")
    elif re.fullmatch(r"\d{1,3}(?:\.\d{3})+", raw):
        raw = raw.replace(".", "")
    try:
        return Decimal(raw)
    except InvalidOperation:
        return None


@lru_cache(maxsize=5_000)
def unit_of_word(word: str) -> str:
    """The unit a word after a number names ("Wochen" → Wochen, "Werktage (6-Tage-Woche)" → Werktage), or ""."""
    folded = fold_plain(word or "").strip(". ")
    for stem, unit in _UNIT_WORDS:
        if folded.startswith(stem):
            return unit
    for ending, unit in _DURATION_ENDINGS:      # "Einzahlungsjahren", "Beitragsmonate"
        if folded.endswith(ending):
            return unit
    return ""


@lru_cache(maxsize=5_000)
def header_unit(header: str) -> str:
    """A unit named by a column header, for cells holding a bare number ("Abfertigung (Monatsentgelte)",
    "Wochen", "begünstigte Überstunden/Monat")."""
    inner = re.findall(r"\(([^)]*)\)", header or "")
    for part in inner + re.split(r"[\s/()]+", header or ""):
        unit = unit_of_word(part.strip())
        if unit:
            return unit
    return ""


# a figure given as an example, the rule being elsewhere: "im Beispiel 1/143, sonst laut KV", "z. B. € 20"
_EXAMPLE_RE = re.compile(r"\b(?:im|zum|als)\s+beispiel\b|(?<!\w)z\.\s?b\.|\bbeispielsweise\b"
                         r"|\bsonst\s+(?:laut|lt\.|nach|gem\.|gemäß)\s+(?:dem\s+)?(?:kv|kollektivvertrag)\b", re.I)


def is_reference(text: str) -> bool:
    """A cell that points elsewhere instead of holding a value ("siehe [lb-gfb-01]", "wie oben"), or that gives a
    figure only as an example ("im Beispiel 1/143, sonst laut KV"): no value of its own to answer or compare."""
    return bool(_REFERENCE_RE.search(text or "") or _EXAMPLE_RE.search(text or ""))


def _bound_before(text: str, start: int) -> str:
    before = fold_plain(text[max(0, start - 14):start]).strip().lower()
    for word, bound in _BOUNDS:
        if before.endswith(fold_plain(word)):
            return bound
    return ""


def _scrub(text: str) -> str:
    """The text with dates, entry ids and paragraph numbers blanked out (same length): they are no amounts."""
    scrubbed = _DATE_RE.sub(lambda m: " " * len(m.group(0)), text)
    scrubbed = re.sub(r"\[[^\]\n]{1,60}\]", lambda m: " " * len(m.group(0)), scrubbed)   # "[ta-fam-04]": an id
    # a year right before an amount ("bis 2024 € 3.000") is its period, not "2024 €"
    scrubbed = re.sub(r"\b(?:19|20)\d{2}(?=\s+(?:€|EUR\b)\s?\d)", lambda m: " " * len(m.group(0)), scrubbed)
    return re.sub(r"(?:§§?|Abs\.|Z\.|Art\.|lit\.)\s*\d+[a-z]?", lambda m: " " * len(m.group(0)), scrubbed)


def _values(scrubbed: str, default_unit: str = ""):
    """(match, unit, amount) of every value in a scrubbed text, in order; years alone are no values."""
    for match in _VALUE_RE.finditer(scrubbed):
        if match.group("frac"):
            a, b = match.group("frac").split("/")
            yield match, "Bruch", Decimal(a) / Decimal(b)
            continue
        raw = match.group("n1") or match.group("n2")
        if _YEAR_ONLY_RE.match(raw) and not match.group("pre") and not match.group("post"):
            continue
        value = to_decimal(raw)
        if value is None:
            continue
        scale = (match.group("s1") or match.group("s2") or "").lower()
        if scale:
            value *= Decimal(10) ** (9 if scale.startswith(("mrd", "milliard")) else 6)
        post = (match.group("post") or "").lower()
        if match.group("pre") or post in ("€", "eur", "euro"):
            unit = "€"
        elif post in ("%", "prozent"):
            unit = "%"
        elif (match.group("word") or "").lower() == "g" and scrubbed[match.end():match.end() + 3].lower() == "/km":
            unit = "g/km"      # a CO2 emission value
        else:
            unit = unit_of_word(match.group("word") or "")
            if not unit and re.match(r"\.\s", scrubbed[match.end("n2"):match.end("n2") + 2]):
                unit = "Termin"   # an ordinal: "15. des Folgemonats", "ab dem 2. Monat"
            if not unit:
                unit = default_unit or "Anzahl"
        yield match, unit, value


def value_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, unit) of every value of a text (a sentence), in order: "€ 551,10", "27,5 %", "8 Wochen";
    years, dates and paragraph numbers are none. A bare number's unit is "Anzahl", an ordinal's "Termin"."""
    out = []
    for match, unit, _ in _values(_scrub(text or "")):
        end = match.end()
        if unit in ("Anzahl", "Termin") and match.group("word"):
            end = match.end("n2")     # the word after a bare number is not part of the value
        out.append((match.start(), end, unit))
    return out


@lru_cache(maxsize=20_000)
def parse_amount(text: str, default_unit: str = "") -> Amount:
    """The value of a cell or bullet. A bare number takes ``default_unit`` (the column header's unit), else
    "Anzahl"; a cell that only gives a date is a "Datum", a day of the month ("15. des Folgemonats") a "Termin";
    years alone are no amounts."""
    text = " ".join((text or "").split())
    if is_reference(text):
        return Amount(None, "Verweis", text)
    numbers: list[tuple[str, Decimal]] = []
    first: tuple[Decimal, str, int, int] | None = None
    second: Decimal | None = None
    # "zwei Jahre ab Ende des Urlaubsjahres": a span written in words is read in digits, the text stays as written
    scrubbed = _scrub(digits_for_words(text))
    for match, unit, value in _values(scrubbed, default_unit):
        numbers.append((unit, value))
        if first is None:
            first = (value, unit, match.start(), match.end())
        elif second is None and unit == first[1] and re.match(r"\s*(?:bis|–|-)\s*(?:€\s?)?$",
                                                                 scrubbed[first[3]:match.start()]):
            second = value
        elif (second is None and first[1] in ("Anzahl", default_unit) and unit not in ("Anzahl", default_unit)
              and re.fullmatch(r"[\d.,]+\s*(?:bis|–|-)\s*", scrubbed[first[2]:match.start()])):
            # "1 bis 6 Monate": the range's unit, written once after its upper end, is the lower end's too
            first, second = (first[0], unit, first[2], first[3]), value
    if first is None:
        if _DATE_RE.search(text):
            return Amount(None, "Datum", text, numbers=frozenset({("Datum", _DATE_RE.search(text).group(0))}))
        day = _DAY_OF_MONTH_RE.search(text)
        if day:
            return Amount(Decimal(day.group(1)), "Termin", text, numbers=frozenset({("Termin", Decimal(day.group(1)))}))
        period = find_period(text)
        if period is not None:
            return Amount(None, "Datum", text, numbers=frozenset({("Datum", period.label())}))
        return Amount(None, "", text)
    value, unit, start, _ = first
    return Amount(value, unit, text, second, _bound_before(scrubbed, start), frozenset(numbers))


def format_amount(amount: Decimal | None, unit: str) -> str:
    """German spelling: "€ 551,10", "27,5 %", "8 Wochen", "30.000 km"."""
    if amount is None:
        return ""
    if unit == "€" and amount != amount.to_integral_value():
        number = f"{amount:,.2f}"
    elif amount == amount.to_integral_value():
        number = f"{int(amount):,}"
    else:
        number = f"{amount.normalize():f}"
        number = f"{int(amount):,}" + "," + number.split(".")[1] if "." in number else number
        return _unit_join(number.replace(",", "\0", number.count(",") - 1).replace("\0", "."), unit)
    number = number.replace(",", "\0").replace(".", ",").replace("\0", ".")
    return _unit_join(number, unit)


def _unit_join(number: str, unit: str) -> str:
    if unit == "€":
        return f"€ {number}"
    if unit in ("Anzahl", "", "Bruch", "Termin"):
        return number
    return f"{number} {unit}"
