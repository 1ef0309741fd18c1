"""Figures written in words, shown in digits: "acht Wochen" → "8 Wochen", "ab dem sechsten Dienstjahr" → "ab dem
6. Dienstjahr", "ein Fünftel" → "1/5"; or, for quotes, beside the words as written: "ein Fünftel (1/5)".

Payroll answers are read for their figures, and entries write some of them in words. Only a number word directly
before a unit of time (or a fraction word) is changed, so "in den ersten beiden Jahren" and "eine Frist" stay as
written. Pure and linear.
"""
from __future__ import annotations

import re

CARDINALS = {"ein": 1, "eine": 1, "einen": 1, "einem": 1, "einer": 1, "eines": 1, "zwei": 2, "drei": 3, "vier": 4,
             "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12,
             "dreizehn": 13, "vierzehn": 14, "fünfzehn": 15, "sechzehn": 16, "siebzehn": 17, "achtzehn": 18,
             "neunzehn": 19, "zwanzig": 20, "dreißig": 30, "vierzig": 40, "fünfzig": 50, "sechzig": 60}
_ORDINAL_STEMS = {"erst": 1, "zweit": 2, "dritt": 3, "viert": 4, "fünft": 5, "sechst": 6, "siebt": 7, "siebent": 7,
                  "acht": 8, "neunt": 9, "zehnt": 10, "elft": 11, "zwölft": 12, "dreizehnt": 13, "vierzehnt": 14,
                  "fünfzehnt": 15, "sechzehnt": 16, "siebzehnt": 17, "achtzehnt": 18, "neunzehnt": 19,
                  "zwanzigst": 20, "einundzwanzigst": 21, "fünfundzwanzigst": 25, "sechsundzwanzigst": 26,
                  "dreißigst": 30}
_FRACTIONS = {"drittel": 3, "viertel": 4, "fünftel": 5, "sechstel": 6, "siebtel": 7, "achtel": 8,
              "zehntel": 10, "zwölftel": 12}
_TIME_UNITS = (r"(?:Kalender|Werk|Arbeits)?[Tt]ag(?:e|en)?|Wochen?|Monat(?:e|en)?|Jahr(?:e|en)?|"
               r"Dienstjahr(?:e|en)?|Arbeitsjahr(?:e|en)?|Lebensmonat(?:e|en)?|Stunden?|Quartal(?:e|en)?")
_ORDINAL_UNITS = (r"(?:Kalender|Werk|Arbeits)?[Tt]ag|Woche|Monat|Jahr|Dienstjahr|Arbeitsjahr|Lebensmonat|Lebensjahr|"
                  r"Geburtstag|Quartal|Stunde|Monatsersten|Monatsletzten")
_CARDINAL_RE = re.compile(r"\b(" + "|".join(sorted(CARDINALS, key=len, reverse=True)) + r")\s+(" + _TIME_UNITS
                          + r")\b", re.I)
_ORDINAL_RE = re.compile(r"\b(" + "|".join(sorted(_ORDINAL_STEMS, key=len, reverse=True)) + r")(?:e|en|er|em|es)\s+("
                         + _ORDINAL_UNITS + r")(?:e|en|es|s)?\b", re.I)
_CARDINAL_WORDS = "|".join(sorted(CARDINALS, key=len, reverse=True))
# "bei acht bis zehn Tagen": one range, "8 bis 10 Tagen" (not "zehn Tagen (10 Tagen)" after an "acht bis")
_RANGE_RE = re.compile(r"\b(" + _CARDINAL_WORDS + r")\s+(bis|oder|und)\s+(" + _CARDINAL_WORDS + r")\s+(" + _TIME_UNITS
                       + r")\b", re.I)
_FRACTION_RE = re.compile(r"\b(ein|einem|einen|eines|einer|zwei|drei|vier|fünf)\s+(" + "|".join(_FRACTIONS) + r")\b",
                          re.I)


def digits_for_words(text: str, beside: bool = False) -> str:
    """``text`` with the figures of time spans, ordinals before a unit and fractions in digits. ``beside``: the
    words stay as written and the digits follow in brackets ("zwei Jahren (2 Jahren)"), so a quote reads as its
    source and its figure at a glance."""
    if not text:
        return text

    def put(m, digits):
        return f"{m.group(0)} ({digits})" if beside else digits

    def cardinal(m):
        if m.string.startswith(" (", m.end()):
            return m.group(0)        # the end of a range already given in digits
        return put(m, f"{CARDINALS[m.group(1).lower()]} {m.group(2)}")

    def span(m):
        low, high = CARDINALS[m.group(1).lower()], CARDINALS[m.group(3).lower()]
        return put(m, f"{low} {m.group(2)} {high} {m.group(4)}")

    def ordinal(m):
        whole = m.group(0)
        unit_start = whole.lower().rfind(m.group(2).lower())
        return put(m, f"{_ORDINAL_STEMS[m.group(1).lower()]}. {whole[unit_start:]}")

    def fraction(m):
        count = CARDINALS.get(m.group(1).lower(), 1)
        return put(m, f"{count}/{_FRACTIONS[m.group(2).lower()]}")

    text = _RANGE_RE.sub(span, text)
    text = _FRACTION_RE.sub(fraction, text)
    text = _ORDINAL_RE.sub(ordinal, text)
    return _CARDINAL_RE.sub(cardinal, text)
