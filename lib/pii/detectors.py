"""Detectors of the personal-data gate for numbers, codes and addresses (lib/pii/gate.py runs them).

Each ``_find_*`` function returns the :class:`Finding` objects of one detector in a text: SV numbers
(check digit and birth date, :func:`svnr_valid`), IBANs (mod 97, :func:`iban_valid`), BICs, e-mail
addresses, phone numbers, dates of birth, tax numbers and personnel numbers; :data:`FINDERS` names them
in the order the gate runs them. People's names have their own module, ``lib/pii/names.py``. Pure
Python, no Odoo.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass
class Finding:
    """One piece of personal data in a text: its detector and span; the gate fills in placeholder and token."""

    detector: str
    start: int
    end: int
    text: str
    placeholder: str = ""
    token: str = ""

    def as_dict(self) -> dict:
        # never the value itself: findings go to logs and the client's notice
        return {"detector": self.detector, "placeholder": self.placeholder}


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


# detector name → function, in the order the gate runs them (people's names: lib/pii/names.py)
FINDERS = {
    "svnr": _find_svnr,
    "iban": _find_iban,
    "bic": _find_bic,
    "email": _find_email,
    "phone": _find_phone,
    "dob": _find_dob,
    "taxnr": _find_taxnr,
    "persnr": _find_persnr,
}
