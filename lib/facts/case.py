"""The case a question tells before it asks ("Eine Bereichsleiterin verdient 2025 € 8.000 brutto im Monat. Von
welchem Betrag …?"): which sentences tell it, and the notices, hires, payments, pays, sums and distances that make
them a case. Its words need no counterpart in the answering fact (lookup.py). Pure and fast.
"""
from __future__ import annotations

import re

from ..text.german import fold_plain, light_stem, word_tokens

# notice given by the employer, in the words of a case
EMPLOYER_NOTICE_WORD = re.compile(r"\b(?:Dienstgeber|DG|AG)-?[Kk]ündigung\b")
EMPLOYER_NOTICE = re.compile(r"\b(?:von\s+uns|vom\s+(?:Arbeit|Dienst)geber|durch\s+den\s+(?:Arbeit|Dienst)geber|seitens\s+"
                             r"des\s+(?:Arbeit|Dienst)gebers)\s+(?:\w+\s+){0,2}gekündigt\b|\bwir\s+kündigen\b"
                             r"|\b(?:Arbeit|Dienst)geber\s+kündigt\b"
                             r"|\bwir\s+(?:wollen|möchten|werden|müssen)\s+(?:[\w.,]+\s+){0,6}kündigen\b", re.I)
EMPLOYEE_NOTICE = re.compile(r"\b(?:kündigt|kündigen)\s+(?:\w+\s+)?selbst\b|\bselbst\s+kündig\w*|\bSelbstkündigung\b"
                             r"|\b(?:Arbeit|Dienst)nehmer(?:in)?\s+kündigt\b|\b(?:Arbeit|Dienst)nehmerkündigung\b"
                             r"|\b(?:will|möchte|wollen)?\s*von\s+sich\s+aus\s+(?:\w+\s+){0,2}(?:kündigen|aufhören|gehen)\b",
                             re.I)
# it selects the Arbeitgeberkündigung's row where there is one, and need not be named by any other value
NOTICE_WORDS = frozenset({light_stem(fold_plain("Arbeitgeberkündigung"))})
# a case told about a person before the ask ("Unser Portier arbeitet fast nur in der Nacht. Bis zu …?")
_TOLD_CASE = re.compile(r"^\s*(?:unser|unsere|ein|eine|der|die|mein|meine)\s+[A-ZÄÖÜ][\w-]+\s+(?:arbeitet|ist|hat|hatte|wohnt|"
                        r"fährt|pendelt|verdient|bekommt|erhält|war|wird|leistet|macht|kommt|kam|kehrt|möchte|will|"
                        r"wollte|geht|fängt|beginnt|wechselt)\b[^?]*?[.!]\s+\S", re.I)
# a hire told before the ask ("Neue Mitarbeiterin, war vorher nie bei uns beschäftigt: …", "Neueintritt am 1. März,
# keine Vordienstzeit – …"): who is hired and when needs no counterpart in the fact
_TOLD_HIRE = re.compile(r"\b(?:neue[rn]?\s+(?:Mitarbeiter\w*|Kolleg\w*|Dienstnehmer\w*|Angestellte\w*|Arbeiter\w*)"
                        r"|Neueintritt\w*|Neuaufnahme|(?:nie|erstmals)\s+(?:\w+\s+){0,3}beschäftigt|keine\s+Vordienstzeit\w*"
                        r"|\beingestellt\b|\b(?:stellen|nehmen)\s+(?:[\w€.,-]+\s+){0,6}(?:ein|auf)\b)", re.I)
# what the employer pays for, told before the ask ("Die Firma bezahlt einem Mitarbeiter die Stromtankstelle in seiner
# Garage. Bis zu welchem Betrag …?")
_TOLD_PAYMENT = re.compile(r"\b(?:wir|die\s+Firma|der\s+(?:Arbeit|Dienst)geber|das\s+Unternehmen)\s+(?:\w+\s+){0,2}"
                           r"(?:be)?zahl(?:t|en)\b|\bwir\s+(?:übernehmen|finanzieren)\b", re.I)
_SELECTING = frozenset({light_stem(fold_plain("überwiegend"))})
# "Bei uns schieben die Leute fast nur Nachtschicht.": a case told by what selects a row
_TOLD_MOSTLY = re.compile(r"\büberwiegend\b", re.I)
# a smaller sum a case tells ("zusammen knapp € 900 im Monat"); unlike a pay in thousands it says nothing of a ceiling
_STATED_SUM = re.compile(r"€\s*\d{3,}\b|\b\d{3,}\s*(?:€|Euro)")
# a distance the case tells ("wohnt 50 km von der Firma entfernt")
_STATED_DISTANCE = re.compile(r"\b\d{1,3}\s*(?:km|kilometer)\b", re.I)
STATED_PAY = re.compile(r"(?:€\s*\d{1,3}(?:\.\d{3})+|\d{1,3}(?:\.\d{3})+\s*(?:€|Euro))")


# the sentences before the asking one ("Eine Bereichsleiterin verdient 2025 € 8.000 brutto im Monat. Von welchem
# Betrag …?"): a case told with its pay; the person and the pay need no counterpart in the fact
_CASE_END = re.compile(r"[.:!](?=\s+[A-ZÄÖÜa-zäöü])")
_DASH = re.compile(r"\s[–—]\s")


def case_words(text: str) -> frozenset:
    """The words of the sentences before the ask when they tell a case (a pay, a sum, a distance, a person's work,
    a notice, a hire, a payment), less the words the ask repeats; else empty."""
    ends = [m.end() for m in _CASE_END.finditer(text)]
    preamble = text[:ends[-1]] if ends else ""
    dashes = [m.end() for m in _DASH.finditer(text)]
    if dashes and dashes[-1] > len(preamble) and _TOLD_HIRE.search(text[:dashes[-1]]):
        preamble = text[:dashes[-1]]    # "Neueintritt am 1. März, keine Vordienstzeit – ab wann …?"
    if not preamble or not (STATED_PAY.search(preamble) or _STATED_SUM.search(preamble)
                            or _STATED_DISTANCE.search(preamble)
                            or _TOLD_CASE.match(text) or _TOLD_MOSTLY.search(preamble)
                            or EMPLOYER_NOTICE.search(preamble) or _TOLD_HIRE.search(preamble)
                            or _TOLD_PAYMENT.search(preamble)):
        return frozenset()
    # a word the ask names too is the ask's; "überwiegend" selects a row wherever it is told
    asked = {light_stem(fold_plain(w)) for w in word_tokens(text[len(preamble):])} | _SELECTING
    return frozenset(light_stem(fold_plain(w)) for w in word_tokens(preamble) if not w.isdigit()) - asked
