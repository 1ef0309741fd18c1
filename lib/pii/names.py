"""Detectors of the personal-data gate for people's names (lib/pii/gate.py runs them), and the name folding.

* known names (detector ``name``): the names of known people (Odoo: hr.employee, res.partner) indexed
  by :class:`KnownNames`, found whole or in parts by :func:`find_known_names`; a part that is also an
  everyday word (:data:`COMMON_WORDS`) needs another part or a title;
* titled names (detector ``title_name``): a capitalised name after "Frau", "Herr", "Hr.", "Fr." or an
  academic title, found by :func:`find_titled`.

Names are compared folded (``lib.text_de.fold_name``: case and umlauts, Müller = Mueller = muller). Pure Python, no
Odoo.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from .detectors import Finding
from ..text.german import fold_name as fold


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
            words = [w for w in words if len(w) >= 2 and not TITLE_WORD.fullmatch(w)]
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


WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


# a known first name before these words is part of a holiday, not a person ("Mariä Himmelfahrt")
_NOT_PERSON_AFTER = frozenset({"himmelfahrt", "empfangnis", "lichtmess", "geburt", "heimsuchung"})


def find_known_names(text: str, known: KnownNames, titled_starts: set[int]) -> list[Finding]:
    """Known names, whole or in parts; a part that is an everyday word needs another part or a title."""
    if not known:
        return []
    words = [(m.start(), m.end(), fold(m.group(0))) for m in WORD.finditer(text)]
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


# --- titled names ---------------------------------------------------------------------------
_SALUTATION = r"(?:Frau|Herrn?|Hr\.|Fr\.|Hrn\.|Fräulein|Frl\.)"
_TITLES = (r"(?:(?:Mag|Dr|Dipl\.-Ing|Dipl\.-Kfm|Ing|Prof|Univ\.-Prof|Bakk|DDr|Priv\.-Doz|Dkfm|KR|Kommerzialrat)\.?"
           r"(?:\s?\((?:FH|Uni)\))?(?:\s?(?:rer\.\s?nat|med|iur|jur|phil|techn|rer\.\s?soc\.\s?oec)\.)?"
           r"|DI(?:\s?\(FH\))?|MSc|BSc|MBA|MA|BA|LL\.M\.|PhD)")
TITLE_WORD = re.compile(r"\b(?:mag|dr|dipl|ing|prof|univ|bakk|ddr|priv|doz|dkfm|kr|di|msc|bsc|mba|ma|ba|llm|phd|fh|"
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


def find_titled(text: str) -> list[Finding]:
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
            if TITLE_WORD.fullmatch(f) and not keep:
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
