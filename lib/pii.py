"""The personal-data gate: find personal data in user text and replace it by stable placeholders.

Pure Python, no Odoo.  Every text a user typed passes through :func:`neutralise` before
it reaches a model (chat or embedding), the question log or a prompt.  Detectors cover
what payroll accountants type into a question about Austrian/German payroll law:

========== ======== ==========================================================================
detector   token    how it is recognised
========== ======== ==========================================================================
svnr       SVNR     10 digits (``1234 150372``): serial, check digit (weights 3 7 9 · 5 8 4 2 1 6,
                    mod 11), birth date DDMMYY; in context ("SV-Nr.", "SV") the shape suffices
iban       IBAN     country + 2 check digits + BBAN, length by country, mod 97 = 1; in context
                    ("IBAN") the shape suffices
bic        BIC      8/11 characters with a known country; in context ("BIC", "SWIFT") or, out of
                    context, only with a digit / "XXX" branch / typical location code
email      EMAIL    the usual address shape
phone      PHONE    +43 / 0043 / 0 prefixes, groups split by spaces, "/" or "-"; enough digits,
                    never a date, a month/year or a number with "," or "."
dob        DOB      a date after "geb.", "geboren am", "Geburtsdatum" (dates of periods pass)
taxnr      TAXNR    Austrian Steuernummer "12-345/6789" (strict shape or in context); German
                    Steuer-ID (11 digits) in context
persnr     PERSNR   an identifier after "Pers.-Nr.", "Personalnummer", "MA-Nr." …
name       PERSON   a name from the supplied list of known people (Odoo: hr.employee, res.partner),
                    exact and folded (case, umlauts: Müller = Mueller = muller)
title_name PERSON   a capitalised name after "Frau", "Herr", "Hr.", "Fr." with optional academic
                    titles (Mag.(FH), Dr., DI, Ing., MSc …)
========== ======== ==========================================================================

Placeholders are stable per conversation: a :class:`Mapping` remembers value → placeholder;
it is serialised to the client and passed back with the next question of the conversation,
so the same person keeps ``[PERSON_1]``.  The server never stores it.

The gate fails closed: any error inside it raises :class:`PiiGateError`, and callers must
then send nothing.  Its result for a request is a :class:`Gated` object; the Ollama client
refuses requests with user text that do not carry one (see ``lib/ollama.py``).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Iterable

__all__ = [
    "DETECTORS", "TOKENS", "PiiGateError", "Finding", "Mapping", "KnownNames", "Gated",
    "neutralise", "gate_request", "fold", "svnr_valid", "iban_valid",
]

# detector → placeholder token, in priority order (earlier wins when spans overlap)
TOKENS = {
    "email": "EMAIL",
    "iban": "IBAN",
    "svnr": "SVNR",
    "taxnr": "TAXNR",
    "dob": "DOB",
    "persnr": "PERSNR",
    "phone": "PHONE",
    "bic": "BIC",
    "name": "PERSON",
    "title_name": "PERSON",
    "known": "",          # values of the conversation's mapping (follow-ups); token from the mapping
}
DETECTORS = tuple(k for k in TOKENS if k != "known")
_PRIORITY = {name: i for i, name in enumerate(TOKENS)}

MAX_TEXT = 20000          # characters; longer input is refused (the agent caps questions far below)
MAX_MAPPING_ITEMS = 200


class PiiGateError(Exception):
    """The gate could not decide; nothing may be sent (fail closed)."""


# --- folding --------------------------------------------------------------------------------
_FOLD_PAIRS = (("ae", "a"), ("oe", "o"), ("ue", "u"))
# letters NFKD does not decompose (Turkish, Polish, Croatian, Nordic names)
_FOLD_TABLE = str.maketrans({"ı": "i", "ł": "l", "đ": "d", "ø": "o", "æ": "ae", "œ": "oe", "ð": "d", "þ": "th"})


def fold(text: str) -> str:
    """Case- and umlaut-folded form: 'Müller', 'Mueller', 'MULLER' and 'muller' fold alike."""
    text = text.casefold().replace("ß", "ss").translate(_FOLD_TABLE)
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    for two, one in _FOLD_PAIRS:
        text = text.replace(two, one)
    return text


# --- validations ----------------------------------------------------------------------------
_SVNR_WEIGHTS = (3, 7, 9, None, 5, 8, 4, 2, 1, 6)


def svnr_check_digit(digits: str) -> int | None:
    """Check digit of an Austrian Versicherungsnummer (position 4); None when the sum gives 10."""
    total = sum(int(d) * w for d, w in zip(digits, _SVNR_WEIGHTS) if w is not None)
    rest = total % 11
    return None if rest == 10 else rest


def _svnr_date_ok(digits: str) -> bool:
    day, month = int(digits[4:6]), int(digits[6:8])
    # unknown birth dates are coded with day 00 or months 13-15 (Sozialversicherung's convention)
    return 0 <= day <= 31 and 1 <= month <= 15


def svnr_valid(text: str) -> bool:
    digits = re.sub(r"\D", "", text)
    if len(digits) != 10 or digits[0] == "0" or not _svnr_date_ok(digits):
        return False
    return svnr_check_digit(digits) == int(digits[3])


# IBAN lengths by country (ISO 13616 registry, the countries in use)
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
    "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
    "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
    "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
    "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
    "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29,
    "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}
# countries a BIC may name (IBAN countries plus common non-IBAN ones)
_BIC_COUNTRIES = set(IBAN_LENGTHS) | {"US", "CA", "AU", "JP", "CN", "IN", "RU", "SG", "HK", "NZ", "ZA", "MX"}


def iban_valid(text: str) -> bool:
    iban = re.sub(r"[\s-]", "", text).upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]+", iban) or IBAN_LENGTHS.get(iban[:2]) != len(iban):
        return False
    moved = iban[4:] + iban[:4]
    number = "".join(str(int(c, 36)) for c in moved)
    return int(number) % 97 == 1


# --- findings and mapping -------------------------------------------------------------------
@dataclass
class Finding:
    detector: str
    start: int
    end: int
    text: str
    placeholder: str = ""
    token: str = ""

    def as_dict(self) -> dict:
        # never the value itself: findings go to logs and the client's notice
        return {"detector": self.detector, "placeholder": self.placeholder}


def _value_key(token: str, value: str) -> str:
    if token in ("SVNR", "IBAN", "PHONE", "TAXNR", "PERSNR", "BIC"):
        return token + ":" + re.sub(r"[\s/\-.()+]", "", value).upper()
    if token == "PERSON":
        return token + ":" + " ".join(_TITLE_WORD.sub("", fold(value)).split())
    return token + ":" + fold(value).strip()


_PLACEHOLDER = re.compile(r"\[([A-Z]+)_(\d{1,4})\]")


class Mapping:
    """Value → placeholder for one conversation; lives in the request and in the user's browser only."""

    def __init__(self):
        self._by_key: dict[str, str] = {}
        self._values: dict[str, str] = {}      # placeholder → value as typed first
        self._counts: dict[str, int] = {}

    def placeholder(self, token: str, value: str) -> str:
        key = _value_key(token, value)
        found = self._by_key.get(key)
        if found:
            return found
        if len(self._values) >= MAX_MAPPING_ITEMS:
            raise PiiGateError("too many personal values in one conversation")
        number = self._counts.get(token, 0) + 1
        self._counts[token] = number
        found = f"[{token}_{number}]"
        self._by_key[key] = found
        self._values[found] = value
        return found

    def items(self) -> list[tuple[str, str]]:
        """(placeholder, value) pairs in the order they were given."""
        return list(self._values.items())

    def __len__(self):
        return len(self._values)

    def to_dict(self) -> dict:
        return {"v": 1, "items": [[p, v] for p, v in self._values.items()]}

    @classmethod
    def from_dict(cls, data) -> "Mapping":
        """Rebuild what the client sent back; anything malformed gives an empty mapping (placeholders
        restart, nothing leaks: the values are only used to recognise the same value again)."""
        mapping = cls()
        if not isinstance(data, dict) or data.get("v") != 1 or not isinstance(data.get("items"), list):
            return mapping
        for item in data["items"][:MAX_MAPPING_ITEMS]:
            if not (isinstance(item, (list, tuple)) and len(item) == 2
                    and all(isinstance(x, str) for x in item)):
                continue
            placeholder, value = item
            match = _PLACEHOLDER.fullmatch(placeholder)
            value = value.strip()
            if not match or not value or len(value) > 200 or match.group(1) not in set(TOKENS.values()):
                continue
            token, number = match.group(1), int(match.group(2))
            key = _value_key(token, value)
            if key in mapping._by_key or placeholder in mapping._values:
                continue
            mapping._by_key[key] = placeholder
            mapping._values[placeholder] = value
            mapping._counts[token] = max(mapping._counts.get(token, 0), number)
        return mapping


# --- known names ----------------------------------------------------------------------------
# Surnames/first names that are also everyday German words: alone they are masked only after a
# title ("Frau Lang") or next to another part of the known name ("Sabine Lang").
COMMON_WORDS = frozenset(fold(w) for w in """
    Lang Kurz Klein Groß Gross Alt Jung Neu Neumann Braun Weiß Weiss Schwarz Roth Rot Grün Gruen Wolf Fuchs Hahn
    Vogel Adler Bär Baer Winter Sommer Frühling Herbst Frank Ernst Kaiser König Koenig Richter Meister Koch Bauer
    Fischer Jäger Jaeger Schmied Maurer Zimmermann
    Gärtner Bäcker Fleischer Hofer Berg Stein Wald Bach See Feld Haas Hase Strauß Mark Will Haben Sein Ehre
    Freitag Montag Sonntag Mai Juni Juli August Recht Gut Frei Fröhlich Heil Glück Kind Mann Frau Herr Link
    Post Stock Stark Kraft Macht Wein Brot Salz Zucker Rose Nadel Engel Teufel Graf Fürst Ritter Burg
    Dorf Haus Busch Baum Ast Blatt Holz Eisen Silber Gold Kupfer Schäfer Schaefer
    Christ Heiden Ober Vater Sohn Tochter Mutter Anger Mayer Meier Maier Pfarrer Lehner Lehrer
""".split())


@dataclass
class KnownNames:
    """Index of known people's names (folded words → the name parts); built once, extended with :meth:`add`."""
    names: tuple[str, ...] = ()
    _words: dict = field(default_factory=dict, repr=False)   # folded word → set of name-ids
    _parts: list = field(default_factory=list, repr=False)   # name-id → list of folded words

    @classmethod
    def build(cls, names: Iterable[str]) -> "KnownNames":
        index = cls()
        index.add(names)
        return index

    def add(self, names: Iterable[str]) -> None:
        """Index more names (a contact created or renamed since the last build)."""
        added = []
        for name in names:
            if not isinstance(name, str) or not name.strip():
                continue
            added.append(name)
            words = [fold(w) for w in re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)?", name)]
            words = [w for w in words if len(w) >= 2 and not _TITLE_WORD.fullmatch(w)]
            if not words:
                continue
            nid = len(self._parts)
            self._parts.append(words)
            for w in words:
                self._words.setdefault(w, set()).add(nid)
            # double names count as one word too ("Gruber-Lang")
            for dbl in re.findall(r"[^\W\d_]+(?:-[^\W\d_]+)+", name):
                self._words.setdefault(fold(dbl), set()).add(nid)
        self.names = self.names + tuple(added)

    def __bool__(self):
        return bool(self._parts)


_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


# a known first name before these words is part of a holiday, not a person ("Mariä Himmelfahrt")
_NOT_PERSON_AFTER = frozenset({"himmelfahrt", "empfangnis", "lichtmess", "geburt", "heimsuchung"})


def _find_known_names(text: str, known: KnownNames, titled_starts: set[int]) -> list[Finding]:
    """Known names, whole or in parts; a part that is an everyday word needs another part or a title."""
    if not known:
        return []
    words = [(m.start(), m.end(), fold(m.group(0))) for m in _WORD.finditer(text)]
    hits: list[Finding] = []
    i = 0
    while i < len(words):
        start, end, folded = words[i]
        ids = known._words.get(folded)
        if not ids:
            i += 1
            continue
        # extend over following words of the same person ("Maria Huber", "Huber Maria", "Huber, Maria")
        j, span_end = i, end
        while j + 1 < len(words):
            nstart, nend, nfolded = words[j + 1]
            nids = known._words.get(nfolded)
            if not (nids and ids & nids and re.fullmatch(r"[ \t]{1,2}|,[ \t]?", text[span_end:nstart])):
                break
            ids &= nids
            j, span_end = j + 1, nend
        after = words[j + 1][2] if j + 1 < len(words) else ""
        if j > i or ((folded not in COMMON_WORDS or start in titled_starts) and after not in _NOT_PERSON_AFTER):
            hits.append(Finding("name", start, span_end, text[start:span_end]))
        i = j + 1
    return hits


# --- detectors ------------------------------------------------------------------------------
_NB = r"(?<![\w.,/-])"            # no digit/word/decimal part directly before
_NA = r"(?![\w]|[.,/-]\d)"         # none directly after (a trailing full stop is fine)

_SVNR_CTX = re.compile(r"(?:\bSV(?:NR)?\b|\bVSNR\b|\bSV-?\s?(?:Nr|Nummer)\b\.?|Sozialversicherungs-?\s?(?:nummer|nr\.?)|"
                       r"Versicherungs-?\s?(?:nummer|nr\.?)|\bVers\.-?\s?Nr\.?)\s*[:.]?\s*$", re.I)
_SVNR_RE = re.compile(_NB + r"(\d{4})(?:[ \u00a0]?[-/]?[ \u00a0]?)(\d{2})[ \u00a0.]?(\d{2})[ \u00a0.]?(\d{2})" + _NA)


def _ctx_before(text: str, start: int, pattern: re.Pattern, width: int = 40) -> bool:
    return bool(pattern.search(text[max(0, start - width):start]))


def _find_svnr(text: str) -> list[Finding]:
    out = []
    for m in _SVNR_RE.finditer(text):
        digits = "".join(m.groups())
        # validated, or labelled as one (then a mistyped check digit or date is still an SV number)
        if svnr_valid(digits) or _ctx_before(text, m.start(), _SVNR_CTX):
            out.append(Finding("svnr", m.start(), m.end(), m.group(0)))
    return out


_IBAN_RE = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{2}\d{2}(?:[ \u00a0]?[A-Z0-9]{4}){2,7}(?:[ \u00a0]?[A-Z0-9]{1,4})?)(?![A-Za-z0-9])")
_IBAN_CTX = re.compile(r"\bIBAN\b\s*[:.]?\s*$", re.I)


def _find_iban(text: str) -> list[Finding]:
    out = []
    for m in _IBAN_RE.finditer(text):
        value = m.group(1)
        # a shorter valid prefix (the IBAN followed by another group of digits) is found too
        compact = re.sub(r"\s", "", value)
        length = IBAN_LENGTHS.get(compact[:2].upper())
        if length and len(compact) > length:
            # cut to the country's length, keeping the typed spacing
            count, cut = 0, 0
            for cut, ch in enumerate(value, 1):
                if not ch.isspace():
                    count += 1
                if count == length:
                    break
            value = value[:cut]
            compact = compact[:length]
        if iban_valid(value) or (_ctx_before(text, m.start(), _IBAN_CTX) and length and len(compact) == length):
            out.append(Finding("iban", m.start(), m.start() + len(value), value))
    return out


_BIC_RE = re.compile(r"(?<![\w-])([A-Z]{4}([A-Z]{2})([A-Z0-9]{2})([A-Z0-9]{3})?)(?![\w-])")
_BIC_CTX = re.compile(r"(?:\bBIC\b|\bSWIFT\b|SWIFT-?Code|BIC-?Code)\s*[:.]?\s*$", re.I)
_BIC_LOCATIONS = {"WW", "FF", "MM", "HH", "XX", "22", "2X", "33", "2S", "SS", "KK", "LL", "VV", "BB"}


def _find_bic(text: str) -> list[Finding]:
    out = []
    for m in _BIC_RE.finditer(text):
        code, country, location, branch = m.groups()
        if country not in _BIC_COUNTRIES:
            continue
        in_ctx = _ctx_before(text, m.start(), _BIC_CTX, 25)
        shaped = (any(c.isdigit() for c in location + (branch or "")) or branch == "XXX"
                  or location in _BIC_LOCATIONS)
        if in_ctx or shaped:
            out.append(Finding("bic", m.start(), m.end(), code))
    return out


_EMAIL_RE = re.compile(r"(?<![\w.+-])[A-Za-z0-9][\w.+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
                       r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![\w-])")


def _find_email(text: str) -> list[Finding]:
    return [Finding("email", m.start(), m.end(), m.group(0)) for m in _EMAIL_RE.finditer(text)]


_PHONE_RE = re.compile(
    r"(?<![\w+/.,-])(?:(?:\+|00)[1-9]\d{0,2}[ \u00a0/-]?(?:\(0\)[ \u00a0]?)?|\(?0\)?)[1-9]\d{0,4}\)?"
    r"(?:[ \u00a0]?[/-][ \u00a0]?|[ \u00a0])?\d{2,}(?:(?:[ \u00a0]?[/-][ \u00a0]?|[ \u00a0])\d{1,})*(?![\w]|[.,]\d)")
_PHONE_CTX = re.compile(r"(?:\bTel(?:efon)?\b\.?|\bTelefonnummer|\bHandy(?:nummer)?|\bMobil(?:nummer|telefon)?|"
                        r"\bFax\b|\bRufnummer|\berreichbar\s+(?:unter|auf)|\banrufen\s+unter|\bDurchwahl)"
                        r"\s*[:.]?\s*(?:\S+\s*){0,2}$", re.I)
_MONTH_YEAR = re.compile(r"(?<!\d)(?:0?[1-9]|1[0-2])\s?[/-]\s?(?:19|20)\d\d(?!\d)")
_DASH_DATE = re.compile(r"^\d{1,2}\s?[/-]\s?\d{1,2}\s?[/-]\s?\d{2,4}$")


def _find_phone(text: str) -> list[Finding]:
    out = []
    for m in _PHONE_RE.finditer(text):
        value = m.group(0).rstrip()
        start = m.start()
        if value.startswith("(") and ")" not in value:
            value, start = value[1:], start + 1      # the bracket of the sentence, not of an area code
        # a number followed by a unit or amount word is not a phone number ("040 Stunden" never occurs,
        # but "0 2025" and dates do)
        digits = re.sub(r"\D", "", value)
        international = value.startswith(("+", "00"))
        in_ctx = _ctx_before(text, start, _PHONE_CTX, 30)
        if _MONTH_YEAR.search(value) or _DASH_DATE.match(value):
            continue
        if not (in_ctx and len(digits) >= 6) and not (len(digits) >= (10 if international else 8)):
            continue
        if len(digits) > 15:
            continue
        after = text[start + len(value):start + len(value) + 3]
        if re.match(r"\s?(?:%|€|EUR|Std|h\b)", after):
            continue
        out.append(Finding("phone", start, start + len(value), value))
    return out


_MONTHS = (r"(?:Jänner|Jaenner|Januar|Feber|Februar|März|Maerz|April|Mai|Juni|Juli|August|September|Oktober|"
           r"November|Dezember|Jän\.?|Jan\.?|Feb\.?|Mär\.?|Apr\.?|Jun\.?|Jul\.?|Aug\.?|Sep\.?|Sept\.?|Okt\.?|"
           r"Nov\.?|Dez\.?)")
_DATE = (r"(?:\d{1,2}\.\s?\d{1,2}\.\s?(?:19|20)?\d{2}(?!\d)|\d{1,2}\.\s?" + _MONTHS + r"\s?(?:19|20)\d{2}"
         r"|(?:19|20)\d{2}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/(?:19|20)?\d{2}(?!\d))")
_DOB_RE = re.compile(r"(?:\bgeb\.|\bgeboren(?:\s+am)?|\bGeburtsdatum|\bGeb\.-?\s?Datum|\bGeburtstag|\bGeb\.?-?Dat\.?"
                     r"|\bgeb\.\s*am)\s*(?:am\s+|:\s*|\(\s*)?(" + _DATE + r")", re.I)


def _find_dob(text: str) -> list[Finding]:
    return [Finding("dob", m.start(1), m.end(1), m.group(1)) for m in _DOB_RE.finditer(text)]


_TAX_STRICT = re.compile(_NB + r"\d{2}-\d{3}/\d{4}" + _NA)
_TAX_CTX = re.compile(r"(?:\bSteuer-?\s?(?:nummer|nr\.?)|\bSt\.?-?\s?Nr\.?|\bStNr\.?|\bSteuer-?\s?Id(?:Nr\.?|-?Nummer)?|"
                      r"\bSteueridentifikationsnummer|\bIdNr\.?|\bTIN\b)\s*[:.]?\s*$", re.I)
_TAX_LOOSE = re.compile(_NB + r"(?:\d{2}[ -]?\d{3}/?\d{4}|\d{2}[ ]?\d{3}[ ]?\d{3}[ ]?\d{3})" + _NA)


def _find_taxnr(text: str) -> list[Finding]:
    out = {(m.start(), m.end()) for m in _TAX_STRICT.finditer(text)}
    for m in _TAX_LOOSE.finditer(text):
        if _ctx_before(text, m.start(), _TAX_CTX, 30):
            out.add((m.start(), m.end()))
    return [Finding("taxnr", s, e, text[s:e]) for s, e in sorted(out)]


_PERSNR_RE = re.compile(
    r"(?:\bPers(?:onal)?\.?\s?-?\s?Nr\.?|\bPersonal-?\s?nummer|\bPNr\.?|\bP-Nr\.?|\bMA-?\s?Nr\.?|\bMitarbeiter-?\s?(?:nummer|nr\.?)"
    r"|\bDienstnehmer-?\s?(?:nummer|nr\.?)|\bDN-?\s?Nr\.?|\bArbeitnehmer-?\s?(?:nummer|nr\.?)|\bAN-?\s?Nr\.?)"
    r"\s*(?:[:#]\s*|Nr\.\s*)?((?:[A-Z]{1,4}[-/]?)?\d[\d/-]{0,11}\d(?:[-/][A-Z0-9]{1,4})?|\d)(?![\w]|[.,]\d)", re.I)


def _find_persnr(text: str) -> list[Finding]:
    return [Finding("persnr", m.start(1), m.end(1), m.group(1)) for m in _PERSNR_RE.finditer(text)]


_SALUTATION = r"(?:Frau|Herrn?|Hr\.|Fr\.|Hrn\.|Fräulein|Frl\.)"
_TITLES = (r"(?:(?:Mag|Dr|Dipl\.-Ing|Dipl\.-Kfm|Ing|Prof|Univ\.-Prof|Bakk|DDr|Priv\.-Doz|Dkfm|KR|Kommerzialrat)\.?"
           r"(?:\s?\((?:FH|Uni)\))?(?:\s?(?:rer\.\s?nat|med|iur|jur|phil|techn|rer\.\s?soc\.\s?oec)\.)?"
           r"|DI(?:\s?\(FH\))?|MSc|BSc|MBA|MA|BA|LL\.M\.|PhD)")
_TITLE_WORD = re.compile(r"\b(?:mag|dr|dipl|ing|prof|univ|bakk|ddr|priv|doz|dkfm|kr|di|msc|bsc|mba|ma|ba|llm|phd|fh|"
                         r"med|iur|jur|phil|techn|rer|nat|soc|oec)\b\.?")
_NAME_WORD = r"[A-ZÄÖÜ][a-zäöüßéèáàíóúćčšžđłńśźżğışçñ]+(?:-[A-ZÄÖÜ][a-zäöüßéèáàíóúćčšžđłńśźżğışçñ]+)?"
_TITLED_RE = re.compile(
    r"(?P<pre>\b\w+\s+)?\b" + _SALUTATION + r"\s+(?P<name>(?:" + _TITLES + r"\s+)*" + _NAME_WORD
    + r"(?:\s+" + _NAME_WORD + r")?)(?:,?\s+(?:" + _TITLES + r"))*")
# an academic title alone also introduces a name ("Mag. Huber", "Dr. Gruber-Lang"); only titles with a full
# stop, never "DI" (Dienstag), "MA" (Magistratsabteilung) or "BA" without a salutation
_ACADEMIC_RE = re.compile(
    r"(?<![\w.-])(?P<pre>)(?P<name>(?:(?:Mag|Dr|DDr|Dipl\.-Ing|Ing|Prof|Univ\.-Prof|Dkfm)\.(?:\s?\((?:FH|Uni)\))?\s+)+"
    + _NAME_WORD + r"(?:\s+" + _NAME_WORD + r")?)(?:,?\s+(?:" + _TITLES + r"))*")
# capitalised words after "Frau"/"Herr" that are not names (nouns in questions, forms of address)
_NOT_NAMES = frozenset(fold(w) for w in """
    Kollege Kollegin Kollegen Direktor Direktorin Doktor Präsident Präsidentin Vorsitzende Vorsitzender Chef Chefin
    Anspruch Ansprüche Urlaub Arbeit Arbeitnehmer Arbeitnehmerin Kind Kinder Karenz Mutterschutz Teilzeit Wochengeld
    Elternteilzeit Pflegefreistellung Abfertigung Lohn Gehalt Geld Zuschlag Anrecht Pension Rente Pflicht Überstunden
    Mehrstunden Sonderzahlung Sonderzahlungen Schwangerschaft Dienstgeber Dienstgeberin Dienstnehmer Dienstnehmerin
    Betriebsrat Betriebsrätin Lehrling Mitarbeiter Mitarbeiterin Angestellte Angestellter Arbeiterin Arbeiter Männer
    Frauen Mann Herren Damen Vater Mutter Eltern Familienbeihilfe Kinderbetreuungsgeld Gleichbehandlung Papamonat
    Geschäftsführer Geschäftsführerin Magister Ingenieur Ingenieurin Professor Professorin Bürgermeister
    Bürgermeisterin Minister Ministerin Abgeordnete Abgeordneter Rat Rätin Hofrat Hofrätin Kommerzialrat
    Im In Am An Auf Bei Mit Nach Von Vor Zum Zur Und Oder Aber Die Der Das Den Dem Des Sie Er Es Wir Ihr Ihre
    Ist Hat Wird Kann Soll Muss Darf Bekommt Erhält Arbeitet Geht War Wurde Hatte Möchte Will Braucht Fragt
    Allgemein Gemäß Laut Ab Bis Seit Während Wegen Für Über Unter Ohne Gegen Per
    Titel Grad Studium Abschluss Diplom
""".split())
_NOT_NAME_SUFFIX = re.compile(r"(?:ung|heit|keit|schaft|ion|ität|nis|tum|geld|zeit|recht|zulage|beihilfe|pflicht"
                              r"|anspruch|urlaub|karenz|stunden|zahlung|arbeit|lohn|gehalt|bezug|bezüge)$")
_ARTICLES_INDEF = frozenset({"eine", "einer", "einem", "keine", "keiner", "jede", "jeder", "jedem", "welche",
                             "welcher", "diese", "dieser", "jene", "jener", "ein", "kein", "jeden"})


def _find_titled(text: str) -> list[Finding]:
    out = []
    for m in list(_TITLED_RE.finditer(text)) + list(_ACADEMIC_RE.finditer(text)):
        pre = (m.group("pre") or "").strip().lower()
        if pre in _ARTICLES_INDEF:
            continue
        name = m.group("name")
        start = m.start("name")
        # drop trailing words that are not names ("Frau Huber Anspruch" → "Huber")
        words = list(re.finditer(_NAME_WORD, name))
        keep = []
        titles = 0
        for w in words:
            f = fold(w.group(0))
            if _TITLE_WORD.fullmatch(f) and not keep:
                titles += 1          # "Mag", "Dr", "Ing" before the name: part of the span, not a name
                continue
            if f in _NOT_NAMES or _NOT_NAME_SUFFIX.search(f):
                break
            keep.append(w)
        if not keep:
            continue
        end = start + keep[-1].end()
        if len(keep) + titles == len(words):
            end = m.end()          # trailing titles ("Frau Lackner MSc") belong to the name
        out.append(Finding("title_name", start, end, text[start:end]))
    return out


_DETECT = {
    "svnr": _find_svnr,
    "iban": _find_iban,
    "bic": _find_bic,
    "email": _find_email,
    "phone": _find_phone,
    "dob": _find_dob,
    "taxnr": _find_taxnr,
    "persnr": _find_persnr,
}


def _find_mapping_values(text: str, mapping: Mapping) -> list[Finding]:
    """Values the conversation masked before ("Novak" after "Herr Novak") are masked again."""
    out = []
    for placeholder, value in mapping.items():
        token = _PLACEHOLDER.fullmatch(placeholder).group(1)
        needles = {value}
        if token == "PERSON":
            needles |= {w for w in _WORD.findall(value) if len(w) >= 3 and w[:1].isupper()
                        and fold(w) not in COMMON_WORDS and not _TITLE_WORD.fullmatch(fold(w))}
        flags = re.I if token in ("PERSON", "EMAIL", "IBAN", "BIC") else 0
        for needle in needles:
            for m in re.finditer(r"(?<![\w])" + re.escape(needle) + r"(?![\w])", text, flags):
                out.append(Finding("known", m.start(), m.end(), m.group(0), token=token))
    return out


def _allowed_spans(text: str, allow_list: Iterable[str]) -> list[tuple[int, int]]:
    spans = []
    for phrase in allow_list or ():
        phrase = (phrase or "").strip()
        if len(phrase) < 2:
            continue
        for m in re.finditer(r"(?<![\w])" + re.escape(phrase) + r"(?![\w])", text, re.I):
            spans.append((m.start(), m.end()))
    return spans


def _resolve(findings: list[Finding]) -> list[Finding]:
    """Overlapping findings merge into one span; the detector of highest priority names it."""
    findings = sorted(findings, key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for f in findings:
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            best = min((last, f), key=lambda x: _PRIORITY[x.detector])
            start, end = last.start, max(last.end, f.end)
            merged[-1] = Finding(best.detector, start, end, "", token=best.token)
        else:
            merged.append(Finding(f.detector, f.start, f.end, f.text, token=f.token))
    return merged


def detect(text: str, *, known_names: KnownNames | Iterable[str] | None = None, allow_list: Iterable[str] = (),
           detectors: Iterable[str] | None = None, mapping: Mapping | None = None) -> list[Finding]:
    """The findings in ``text`` (merged, allow-listed ones dropped), without placeholders."""
    enabled = set(DETECTORS if detectors is None else detectors)
    unknown = enabled - set(DETECTORS)
    if unknown:
        raise PiiGateError(f"unknown detectors: {sorted(unknown)}")
    found: list[Finding] = []
    for name, func in _DETECT.items():
        if name in enabled:
            found.extend(func(text))
    titled = _find_titled(text) if ("title_name" in enabled or "name" in enabled) else []
    if "title_name" in enabled:
        found.extend(titled)
    if "name" in enabled and known_names is not None:
        known = known_names if isinstance(known_names, KnownNames) else KnownNames.build(known_names)
        titled_starts = set()
        for t in titled:
            for w in _WORD.finditer(t.text):
                titled_starts.add(t.start + w.start())
        found.extend(_find_known_names(text, known, titled_starts))
    if mapping is not None and len(mapping):
        found.extend(_find_mapping_values(text, mapping))
    found = _resolve(found)
    allowed = _allowed_spans(text, allow_list)
    result = []
    for f in found:
        if any(a <= f.start and f.end <= b for a, b in allowed):
            continue
        f.text = text[f.start:f.end]
        if not f.token:
            f.token = TOKENS[f.detector]
        result.append(f)
    return result


def neutralise(text: str, *, known_names: KnownNames | Iterable[str] | None = None, allow_list: Iterable[str] = (),
               detectors: Iterable[str] | None = None, mapping: Mapping | None = None
               ) -> tuple[str, Mapping, list[Finding]]:
    """Replace the personal data in ``text`` by placeholders.

    Returns ``(masked_text, mapping, findings)``; ``mapping`` is the one passed in (extended) or a
    new one.  Raises :class:`PiiGateError` for anything unexpected: the caller must send nothing.
    """
    try:
        if not isinstance(text, str):
            raise PiiGateError("text is not a string")
        if len(text) > MAX_TEXT:
            raise PiiGateError("text too long for the gate")
        mapping = mapping if mapping is not None else Mapping()
        findings = detect(text, known_names=known_names, allow_list=allow_list, detectors=detectors,
                          mapping=mapping)
        pieces, pos = [], 0
        for f in findings:
            f.placeholder = mapping.placeholder(f.token, f.text)
            pieces.append(text[pos:f.start])
            pieces.append(f.placeholder)
            pos = f.end
        pieces.append(text[pos:])
        return "".join(pieces), mapping, findings
    except PiiGateError:
        raise
    except Exception as exc:  # noqa: BLE001 - fail closed: any error means nothing is sent
        raise PiiGateError(f"{type(exc).__name__}: {exc}") from exc


# --- the seal for model requests ------------------------------------------------------------
_SEAL = object()


class Gated:
    """What the gate let through for one request: the masked question, standalone query and history.

    Only :func:`gate_request` makes one (the constructor wants a private seal); the Ollama client
    refuses chat and embedding requests with user text that do not carry it, and checks that the
    user text it sends is the masked text in here.
    """
    __slots__ = ("question", "query", "history", "mapping", "findings", "_texts")

    def __init__(self, seal, question: str, query: str, history: list[dict], mapping: Mapping,
                 findings: list[Finding]):
        if seal is not _SEAL:
            raise TypeError("Gated objects are made by lib.pii.gate_request only")
        self.question = question
        self.query = query
        self.history = history
        self.mapping = mapping
        self.findings = findings
        self._texts = frozenset([question, query] + [h.get("content", "") for h in history])

    def covers(self, text: str) -> bool:
        """True when ``text`` is one of the gated texts or ends with one (a prefixed query embedding)."""
        return text in self._texts or any(t and text.endswith(t) for t in (self.query, self.question))

    @property
    def count(self) -> int:
        return len(self.findings)


def gate_request(question: str, *, query: str | None = None, history: list[dict] | None = None,
                 known_names=None, allow_list: Iterable[str] = (), detectors: Iterable[str] | None = None,
                 mapping: Mapping | None = None) -> Gated:
    """Neutralise everything of one request that carries user text; fail closed (PiiGateError)."""
    try:
        if known_names is not None and not isinstance(known_names, KnownNames):
            known_names = KnownNames.build(known_names)
        mapping = mapping if mapping is not None else Mapping()
        # placeholders already in the conversation (its stored, masked turns) are not given out again, even when
        # the browser lost the mapping (a reload): a new value never reuses "[PERSON_1]" of an earlier turn
        for text in [t.get("content") for t in history or [] if isinstance(t, dict)] + [question]:
            for token, number in _PLACEHOLDER.findall(text if isinstance(text, str) else ""):
                if token in TOKENS.values():
                    mapping._counts[token] = max(mapping._counts.get(token, 0), int(number))
        kw = dict(known_names=known_names, allow_list=allow_list, detectors=detectors, mapping=mapping)
        masked_history = []
        for turn in history or []:
            if not isinstance(turn, dict) or not isinstance(turn.get("content"), str):
                raise PiiGateError("malformed history")
            content, _, _ = neutralise(turn["content"], **kw)
            masked_history.append(dict(turn, content=content))
        masked_q, _, findings = neutralise(question, **kw)
        masked_query = neutralise(query, **kw)[0] if query and query != question else masked_q
        return Gated(_SEAL, masked_q, masked_query, masked_history, mapping, findings)
    except PiiGateError:
        raise
    except Exception as exc:  # noqa: BLE001 - fail closed
        raise PiiGateError(f"{type(exc).__name__}: {exc}") from exc


# --- evaluation on a labelled set (data/pii_eval.yaml, tests/lib/data/pii_dev.yaml) ---------
def score_cases(data: dict, *, detectors: Iterable[str] | None = None) -> dict:
    """Precision and recall per detector and overall on a labelled set.

    A found span counts when an expected span of the same placeholder kind (PERSON for both name
    detectors) has exactly its text; per detector, recall is counted on the expected labels and
    precision on what the detector found.  Returns also the misses and false finds for reading.
    """
    known = KnownNames.build(data.get("known_names") or [])
    allow = data.get("allow_list") or []
    per = {d: {"tp_found": 0, "found": 0, "tp_expected": 0, "expected": 0} for d in DETECTORS}
    misses, extras = [], []
    for case in data["questions"]:
        text = case["text"]
        expected = [(d, t) for d, t in case.get("spans") or []]
        found = detect(text, known_names=known, allow_list=allow, detectors=detectors)
        pool = [(TOKENS[d], t) for d, t in expected]
        got = [(TOKENS[f.detector] if f.detector != "known" else f.token, f.text) for f in found]
        remaining = list(pool)
        for f, key in zip(found, got):
            det = f.detector if f.detector in per else "name"
            per[det]["found"] += 1
            if key in remaining:
                remaining.remove(key)
                per[det]["tp_found"] += 1
            else:
                extras.append((case["id"], f.detector, f.text))
        remaining_found = list(got)
        for d, t in expected:
            per[d]["expected"] += 1
            if (TOKENS[d], t) in remaining_found:
                remaining_found.remove((TOKENS[d], t))
                per[d]["tp_expected"] += 1
            else:
                misses.append((case["id"], d, t))
    rows = {}
    for d, c in per.items():
        rows[d] = {
            "expected": c["expected"], "found": c["found"],
            "recall": c["tp_expected"] / c["expected"] if c["expected"] else None,
            "precision": c["tp_found"] / c["found"] if c["found"] else None,
        }
    total_exp = sum(c["expected"] for c in per.values())
    total_found = sum(c["found"] for c in per.values())
    rows["overall"] = {
        "expected": total_exp, "found": total_found,
        "recall": sum(c["tp_expected"] for c in per.values()) / total_exp if total_exp else None,
        "precision": sum(c["tp_found"] for c in per.values()) / total_found if total_found else None,
    }
    clean = [c for c in data["questions"] if not c.get("spans")]
    return {"rows": rows, "misses": misses, "extras": extras, "questions": len(data["questions"]),
            "clean_questions": len(clean)}


# --- the check of the Ollama client -----------------------------------------------------------
class _KbText:
    """Marker for model requests without user text: passages of the knowledge base, probes of the code."""
    __slots__ = ()

    def __repr__(self):
        return "KB_TEXT"


KB_TEXT = _KbText()


class UngatedRequest(PiiGateError):
    """A model request without the gate's mark, or with a value the gate masked: refused, nothing sent."""


def check_request(origin, texts: list[str], *, embedding: bool) -> None:
    """Called by ``lib/ollama.py`` before every chat and embedding request (required ``origin``).

    ``origin`` is :data:`KB_TEXT` (no user text) or the :class:`Gated` of the request.  For a gated
    request no value the conversation's mapping holds may be in the texts (short digit-only values
    such as personnel numbers excepted: "1043" may well be an amount in the knowledge base), and an
    embedding text must be one of the gated texts (after a prefix such as ``query: ``).
    """
    if origin is KB_TEXT:
        return
    if not isinstance(origin, Gated):
        raise UngatedRequest("model request without the personal-data gate's mark")
    for text in texts:
        if not isinstance(text, str):
            raise UngatedRequest("model request with a non-text part")
        if embedding and not origin.covers(text):
            raise UngatedRequest("embedding request with text the gate did not pass")
    payload = "\n".join(texts)
    for _placeholder, value in origin.mapping.items():
        if len(value) < 3 or (len(value) < 6 and value.replace(" ", "").isdigit()) or fold(value) in COMMON_WORDS:
            continue    # may well stand in the knowledge base's own text ("1043", "Lang", "Bauer")
        if re.search(r"(?<!\w)" + re.escape(value) + r"(?!\w)", payload):
            raise UngatedRequest("model request contains a value the gate masked")
