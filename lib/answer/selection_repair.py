"""What the code does with the passages the model chose in the selection mode (lib/answer/selection.py), before
the answer is written (docs/answers.md):

- :func:`related`: passages that share nothing with the question are a refusal;
- :func:`complete_value`, :func:`complete_focus`, :func:`complete_year`, :func:`complete_stage`,
  :func:`complete_subjects`: the passage with a value of the asked kind, the passage that fits the question better
  (of the chosen entries, and of the best-ranked entry the model left out), the row of the asked year, the row of a
  staged table the question's number falls into, the passage of a second subject the question names, each added
  beside the model's choice when it is missing (the code only ever adds a passage of the context);
- :func:`asked_year_missing`: passages that name only years before the asked one answer with the note for a
  missing year;
- the scope a question names (a Bundesland, a group of employees, a unit, a percentage) is lib/answer/scope.py.

Nothing here imports Odoo.
"""
from __future__ import annotations

import math
import re

from ..facts import extract
from ..facts.amounts import value_spans
from ..facts.lookup import asked_units
from ..facts.tiers import column_tiers, holds, question_points
from ..search.fulltext import is_value_question
from ..text.german import fold_plain, light_stem, plain_vowels, word_tokens
from ..text.numbers import CARDINALS, digits_for_words
from .focus import question_numbers, question_terms, term_hits
from .selection import Unit

_DIGIT_RE = re.compile(r"\d")
_DATE_KINDS = frozenset({"Termin", "Datum"})
_YEAR_RE = re.compile(r"(?<![\d.,])(?:19|20)\d{2}(?!\d|[.,]\d)")   # a calendar year, not part of an amount


def _matches(term: str, word: str) -> bool:
    """A question word found in a passage word: the same (an umlaut counts as its plain vowel: "Bezügen" and
    "Bezug"), one the beginning of the other (five letters or more), or one the end of a compound ("steuersatz" in
    "grenzsteuersatz", "termi" in "geburtstermi", five letters or more)."""
    term, word = plain_vowels(term), plain_vowels(word)
    if term == word:
        return True
    if len(term) >= 5 and len(word) >= 5 and (word.startswith(term) or term.startswith(word)):
        return True
    return (len(term) >= 5 and word.endswith(term)) or (len(word) >= 5 and term.endswith(word))


def _with_expansions(question: str, expansions=()) -> set[str]:
    """The question's content words and the words of the synonym table's expansions of them (at least 3 letters)."""
    return question_terms(question) | {light_stem(fold_plain(w)) for e in expansions for w in e.split() if len(w) >= 3}


def related(question: str, chosen: list[Unit], expansions=()) -> bool:
    """Do the chosen passages name anything the question asks about: one of its content words (or of the synonym
    table's expansions of them) in one of the passages, their entry's title or their table's header (a row "2025:
    € 551,10" under "Geringfügigkeitsgrenze monatlich")? A small model that answers "What is the FICA tax rate?"
    with the rows of an overtime table, or "Wie hoch ist das Existenzminimum?" with the Höchstbeitragsgrundlage,
    picked passages that share no word with the question: that is a refusal. A figure of the question other than a
    year in a passage also counts."""
    terms = _with_expansions(question, expansions)
    words = {light_stem(fold_plain(w)) for u in chosen for w in word_tokens(f"{u.text} {u.about}") if len(w) >= 3}
    if any(_matches(t, w) for t in terms for w in words):
        return True
    # a figure of the question ("Steuersatz von 55 %") in a passage; calendar years say nothing of the subject
    numbers = {n for n in question_numbers(question) if len(n) >= 2 and not _YEAR_RE.fullmatch(n)}
    return bool(numbers & {n for u in chosen for n in question_numbers(u.text)})


def holds_asked_value(text: str, asked: frozenset, worded: bool = False) -> bool:
    """Does a passage state a value of the asked kind (``asked``: lib/facts/lookup.asked_units; empty: any
    number)? A date or a day of the month counts for "bis wann". ``worded``: a span written in words ("rund acht
    Stunden") counts too."""
    text = digits_for_words(text or "") if worded else (text or "")
    if not _DIGIT_RE.search(text):
        return False
    if not asked or asked & _DATE_KINDS:
        return True
    return any(unit in asked for _start, _end, unit in value_spans(text))


_WORDED_RE = re.compile(r"\b(" + "|".join(CARDINALS) + r")\s+(Tage|Werktage|Arbeitstage|Wochen|Monate|Jahre|"
                        r"Stunden)\b", re.I)


def complete_value(question: str, chosen: list[Unit], units: list[Unit]) -> Unit | None:
    """The passage to add when the question asks for a value and no chosen passage states one of the asked kind.

    A small model often picks the sentence that introduces a topic ("Für Sonderzahlungen gilt eine eigene
    jährliche Höchstbeitragsgrundlage …") or a neighbouring sentence with another kind of figure ("multipliziert
    mit zwei" for "mit welchem Steuersatz") instead of the row with the figure. The kind asked is read from the
    question (a percentage for "Satz" or "Prozent" — "Steuersatz" too, which the retrieval's value words miss —, a
    duration for "wie lange", a date for "bis wann", an amount for "wie hoch"; lib/facts/lookup.asked_units). Then
    the passage with a value of that kind that shares the most words and numbers of the question (a number of the
    question counts twice, as in lib/answer/focus.py) is added: of the entries the model chose, else of the first
    entry of the context (the best-ranked one); none sharing anything → None. The code only ever adds a passage of
    the context."""
    asked = asked_units(question)
    if not chosen or not (is_value_question(question) or asked):
        return None
    if any(holds_asked_value(u.text, asked) for u in chosen):
        return None
    terms, numbers = _capped(question_terms(question)), question_numbers(question)
    # the chosen sentence writes the figure in words ("in den letzten acht Wochen"): the entry's row with it in
    # digits ("Schutzfrist vor der Geburt: 8 Wochen"), the first of its entry
    figures = {f"{CARDINALS[m.group(1).lower()]} {m.group(2)}" for u in chosen for m in _WORDED_RE.finditer(u.text)}
    chosen_entries = {u.entry_id for u in chosen}
    for unit in units:
        if unit.entry_id in chosen_entries and unit not in chosen and any(
                re.search(rf"(?<![\d.,]){re.escape(f)}\b", unit.text) for f in figures):
            return unit
    for entries in ({u.entry_id for u in chosen}, {units[0].entry_id} if units else set()):
        best, best_score = None, 0
        for unit in units:
            if unit.entry_id not in entries or unit in chosen or not holds_asked_value(unit.text, asked, worded=True):
                continue
            score = len(_hit_terms(terms, unit.text)) + 2 * len(numbers & question_numbers(unit.text))
            if score > best_score:
                best, best_score = unit, score
        if best is not None:
            return best
    return None


# an adjective in front of a title's noun ("Geringfügige Beschäftigung", "Steuerfreie Überstundenzuschläge")
_ADJECTIVE_RE = re.compile(r"(?:ig|lich|isch|frei|fach|bar|los|haft|sam)e$|^(?:ge|be)\w+te$")


def title_head(title: str) -> str:
    """The noun an entry's title is about, folded and stemmed: in the title's head (lib/facts/extract.title_head,
    "Geringfügige Beschäftigung – Grenze" → "Geringfügige Beschäftigung") the first word that is no adjective in
    front of another word (→ beschaeftigung; "Beitragssätze Dienstnehmer …" → beitragssaetz); "" when there is
    none."""
    head = extract.title_head(title)
    truncated = re.match(r"\s*([^\W\d_]{2,})-\s*$", head or "")
    if truncated:
        # "Tag- und Nächtigungsgelder …": the first word shares the end of the next one; "tag-naechtigungsgeld",
        # read by :func:`_names_head` ("Taggeld", "Tag-Geld" name it)
        other = re.search(r"-\s*(?:,\s*[^\W\d_]+-\s*)*(?:und|oder|bzw\.?)\s+([^\W\d_]{6,})", title or "")
        if other:
            return f"{fold_plain(truncated.group(1))}-{light_stem(fold_plain(other.group(1)))}"
    words = [w for w in word_tokens(head) if w.isalpha()]
    for pos, word in enumerate(words):
        if word[:1].islower() or (_ADJECTIVE_RE.search(word.lower()) and pos + 1 < len(words)):
            continue
        return light_stem(fold_plain(word)) if len(word) >= 4 else ""
    return ""


def _names_head(term: str, head: str) -> bool:
    """A question word names an entry's title head (:func:`title_head`); a truncated one ("tag-naechtigungsgeld")
    by its first part and an end of the second ("taggeld")."""
    if "-" not in head:
        return _matches(term, head)
    first, second = head.split("-", 1)
    rest = term[len(first):]
    return term.startswith(first) and len(rest) >= 4 and second.endswith(rest)


def complete_subjects(question: str, chosen: list[Unit], units: list[Unit], expansions=()) -> Unit | None:
    """The passage to add when the question names the subjects of two entries ("Wie viel Prozent machen DB und
    Kommunalsteuer zusammen aus?") and the model chose passages of only one of them: of the named entry it left
    out, the passage with a value of the asked kind that shares the most words (its abbreviations and expansions
    too) and numbers with the question (a number twice); none sharing anything → None. A subject is named when a
    word of the question, or of the synonym table's expansions of it, is the head noun of the entry's title
    (:func:`title_head`); each entry's title is read from its passages (``Unit.about`` begins with it)."""
    if not chosen:
        return None
    # a hyphenated compound is one word too ("Tag-Geld", "Kilometer-Geld")
    named_terms = _with_expansions(question, expansions) | {
        light_stem(fold_plain(a + b)) for a, b in re.findall(r"([^\W\d_]{2,})-([^\W\d_]{3,})", question or "")}
    heads: dict[str, str] = {}
    for unit in units:
        if unit.entry_id not in heads:
            heads[unit.entry_id] = title_head(unit.about)
    named = {entry: head for entry, head in heads.items() if head and any(_names_head(t, head) for t in named_terms)}
    chosen_heads = {named[u.entry_id] for u in chosen if u.entry_id in named}
    # two subjects, not two entries on one ("Geringfügige Beschäftigung", "Mehrfache geringfügige Beschäftigung")
    missing = {entry for entry, head in named.items() if head not in chosen_heads}
    if not chosen_heads or not missing:
        return None
    asked, numbers = asked_units(question), question_numbers(question)
    # the question's abbreviations ("DB") count as its words here: the row "DB: 3,7 %" names its subject so
    short = {fold_plain(w) for w in word_tokens(question) if len(w) >= 2 and w.isupper() and w.isalpha()}
    best, best_score = None, 0
    for unit in units:
        if unit.entry_id not in missing or not holds_asked_value(unit.text, asked):
            continue
        words = {fold_plain(w) for w in word_tokens(unit.text)}
        score = (term_hits(named_terms, unit.text) + len(short & words)
                 + 2 * len(numbers & question_numbers(unit.text)))
        if score > best_score:
            best, best_score = unit, score
    return best


def complete_year(question: str, chosen: list[Unit], units: list[Unit]) -> Unit | None:
    """The passage to add when the question names one calendar year and no chosen passage names it (itself or in
    a range: "2018 bis 2022" names 2020): the small model picks "Referenzzinssatz 2023: 1,0 %" for "… 2024 …".
    Then the passage of a chosen entry that names the asked year and shares the most words with the question (its
    own, its table header's and its entry title's; a row of the chosen row's table scores one more) is added; when
    no chosen entry names it, the row of another entry of the context with the same first cell that does
    ("Geringfügigkeitsgrenze monatlich: … 2025 € 551,10" beside an older entry's row). None naming it or sharing
    anything: None. The passage it chose stays: its year is written in it, so nothing wrong is shown."""
    years = set(_YEAR_RE.findall(question or ""))
    if len(years) != 1 or not chosen:
        return None
    year = int(years.pop())
    if any(_names_year(_dated(u), year) for u in chosen):
        return None
    terms = question_terms(question)
    entries = {u.entry_id for u in chosen}
    tables = {(u.entry_id, u.about) for u in chosen}
    best, best_score = None, 0
    for unit in units:
        if unit.entry_id not in entries or unit in chosen or not _names_year(_dated(unit), year):
            continue
        # a row of the chosen row's table ("2023: 132 g/km" under the header "Erstzulassung | CO2-Grenzwert")
        # shares the question's words through its header; it comes first
        score = term_hits(terms, f"{unit.text} {unit.about}") + (1 if (unit.entry_id, unit.about) in tables else 0)
        if score > best_score:
            best, best_score = unit, score
    if best is not None:
        return best
    labels = {_row_label(u.text).casefold() for u in chosen} - {""}
    return next((u for u in units if u.entry_id not in entries and _row_label(u.text).casefold() in labels
                 and _names_year(u.text, year)), None)


_YEAR_RANGE_RE = re.compile(r"(?<![\d.,])((?:19|20)\d{2})\s*(?:bis|–|-)\s*((?:19|20)\d{2})(?!\d)")


def _dated(unit: Unit) -> str:
    """A passage's text with what dates it: its own words when they name a year, else its entry's title or its
    table's caption ("bis € 12.816: 0 %" of the table "Einkommen pro Jahr 2024"); a Stand is no year of a value."""
    return _STAND_YEAR_RE.sub(" ", unit.text if _YEAR_RE.search(unit.text) else f"{unit.text} {unit.about}")


def _names_year(text: str, year: int) -> bool:
    """Does ``text`` name ``year``, itself or inside a range of years ("2018 bis 2022")?"""
    if re.search(rf"(?<![\d.,]){year}(?!\d|[.,]\d)", text or ""):
        return True
    return any(int(a) <= year <= int(b) for a, b in _YEAR_RANGE_RE.findall(text or ""))


def _row_label(text: str) -> str:
    """The first cell of a table row as the answer quotes it ("ab dem 26. Dienstjahr: 12 Wochen")."""
    label, sep, _rest = (text or "").partition(":")
    return label if sep and len(label) <= 60 else ""


def complete_stage(question: str, chosen: list[Unit], units: list[Unit]) -> Unit | None:
    """The row to add when the question names a number of service years or kilometres ("ab dem 26. DJ", "bei
    45 km") and the model chose a row of a staged table whose range does not hold it ("1. Dienstjahr: 6 Wochen"):
    the row of that table whose range holds it (lib/facts/tiers). The chosen row stays: its range is written in it."""
    points = question_points(question)
    if not points or not chosen:
        return None
    tables: dict[tuple, list[Unit]] = {}
    for unit in units:
        if _row_label(unit.text):
            tables.setdefault((unit.entry_id, unit.about), []).append(unit)
    ranges = {}
    for rows in tables.values():
        ranges.update(zip((id(u) for u in rows), column_tiers([_row_label(u.text) for u in rows])))
    fits = lambda u: ranges.get(id(u)) is not None and holds(ranges[id(u)], points)
    if any(fits(u) for u in chosen):
        return None
    # a chosen row whose range does not hold the number: the row of its table that does
    for pick in chosen:
        if ranges.get(id(pick)) is not None and holds(ranges[id(pick)], points) is False:
            found = next((r for r in tables[(pick.entry_id, pick.about)] if fits(r)), None)
            if found is not None:
                return found
    # no staged row chosen, only the prose of its entry ("in den ersten beiden Dienstjahren sechs Wochen, danach
    # …"): the row of a staged table of a chosen entry, when the question asks for a value
    if any(ranges.get(id(u)) is not None for u in chosen) or not is_value_question(question):
        return None
    entries, terms = {u.entry_id for u in chosen}, question_terms(question)
    candidates = [r for (entry, _about), rows in tables.items() if entry in entries for r in rows if fits(r)]
    return max(candidates, key=lambda r: term_hits(terms, f"{r.text} {r.about}"), default=None)


_STAND_YEAR_RE = re.compile(r"\(?Stand:?\s+(?:\d{4}-\d{2}|\d{4})\)?")
# ("nach dem 31. Dezember 2002 begonnen": open towards every later year too)
_OPEN_YEAR_RE = re.compile(r"\b(?:ab|seit|nach)\s+(?:dem\s+)?(?:\d{1,2}\.\s*(?:\d{1,2}\.|[^\W\d_]+)\s*)?"
                           r"((?:19|20)\d{2})\b", re.I)


_UNTIL_YEAR_RE = re.compile(r"\b(?:bis|vor)\s+(?:(?:ende|einschließlich|zum)\s+)?(?:\d{1,2}\.\s*\d{1,2}\.\s*)?"
                            r"((?:19|20)\d{2})\b|\b(?:19|20)\d{2}\s*(?:–|-|bis)\s*((?:19|20)\d{2})\b", re.I)
# a year that dates an event of the case: a participle near it ("gekauft 2024", "2024 … ohne Zinsen geborgt",
# "2019 erstmals zugelassen") or a start ("seit 2023", "Eintritt 2024")
_EVENT_WORDS = r"(?:ge[^\W\d_]{3,}(?:t|en)|[^\W\d_]+ge[^\W\d_]{3,}(?:t|en)|zugelassen|erworben|begonnen|erstzulassung|eintritt|beginn|seit|ab)"
_EVENT_YEAR_RE = re.compile(r"\b" + _EVENT_WORDS + r"\b\W+(?:\S+\s+){0,2}?(?:19|20)\d{2}\b"
                            r"|\b(?:19|20)\d{2}\s+(?:\S+\s+){0,4}?" + _EVENT_WORDS + r"\b", re.I)


def asked_year_missing(question: str, chosen: list[Unit]) -> tuple[str, str] | None:
    """(asked year, latest year named) when the question names one calendar year and the chosen passages name
    only earlier ones — none the asked year, none a period open towards it ("ab 2025", "seit 1. Jänner 2025"; a
    Stand is no period): the base holds no value for that year, the passages are last year's ("HBGl 2026?"
    answered with "2024 € 6.060, 2025 € 6.450"; "LSt-Tarif 2026?" with the rows of "Lohnsteuertarif 2025"). Else None."""
    years = set(_YEAR_RE.findall(question or ""))
    if len(years) != 1 or not chosen:
        return None
    asked = int(years.pop())
    # a passage that names no year is of the year its entry's title or its table's caption names
    # ("bis € 13.308: 0 %" of "Lohnsteuertarif 2025"); a Stand is no year of the value
    text = " ".join(_dated(u) for u in chosen)
    named = [int(y) for y in _YEAR_RE.findall(text)]
    if not named or asked in named:
        return None
    if min(named) > asked:
        # only later years ("Verkehrsabsetzbetrag 2024?" answered with the table of 2025): the asked year's value
        # is not in the passages, unless a period reaches back to it or the year is an event's, not the value's
        # ("2019 erstmals zugelassen", "gekauft 2024": the rule of today may well be asked)
        if _EVENT_YEAR_RE.search(question) or any(int(m.group(1) or m.group(2)) >= asked
                                                   for m in _UNTIL_YEAR_RE.finditer(text)):
            return None
        return str(asked), str(min(named))
    if max(named) >= asked:
        return None
    if any(int(y) <= asked for y in _OPEN_YEAR_RE.findall(text)):
        return None
    return str(asked), str(max(named))


def outdated_warnings(question: str, chosen: list[Unit], outdated) -> list[tuple[str, str]]:
    """(⚠ paragraph, newer entry) for each value of an earlier year (``outdated``: lib/answer/types.Conflict with
    ``outdated``, older entry first) that the chosen passages quote while they quote nothing of the entry that
    replaced it ("Geringfügigkeitsgrenze 2022: € 485,85" of an old entry, the base's newer entry holding 2025): the
    user learns the newer value. Not when the question names a year: then the older year may be the one asked."""
    if _YEAR_RE.search(question or ""):
        return []
    entries = {u.entry_id for u in chosen}
    quoted = " ".join(u.text for u in chosen)
    out = []
    for conflict in outdated:
        older, newer = conflict.entry_ids[:2]
        # the older value itself is quoted ("€ 485,85"), not only another passage of its entry
        figures = re.findall(r"\d[\d.,]*\d|\d", conflict.values.get(older, "").split(": ", 1)[-1])
        if (older in entries and newer not in entries and newer not in (n for _w, n in out)
                and any(re.search(rf"(?<![\d.,]){re.escape(f)}(?![\d,]|\.\d)", quoted) for f in figures)):
            out.append((f"⚠ Widerspruch in der Wissensbasis (veralteter Wert): [{older}] (Stand "
                        f"{conflict.stands.get(older, '?')}) nennt für „{conflict.key}“ {conflict.values.get(older, '–')}; "
                        f"neuer: [{newer}] (Stand {conflict.stands.get(newer, '?')}) nennt "
                        f"{conflict.values.get(newer, '–')}. Bitte prüfen.", newer))
    return out


# a question names a few dozen words; a pasted text of 2,000 characters must not cost seconds per answer
_MAX_TERMS = 40


def _capped(terms: set[str]) -> set[str]:
    """At most :data:`_MAX_TERMS` of ``terms``, the longest (the most specific) first."""
    return terms if len(terms) <= _MAX_TERMS else set(sorted(terms, key=lambda t: (-len(t), t))[:_MAX_TERMS])


def _hit_terms(terms: set[str], text: str) -> set[str]:
    """The question words ``text`` names (:func:`_matches`: an umlaut as its plain vowel, a beginning or the end of
    a compound), and the question's numbers it writes."""
    words = {light_stem(fold_plain(t)) for t in word_tokens(text) if len(t) >= 3}
    numbers = question_numbers(text)
    # a short word begins a longer one with its umlaut: "Woche" in "wöchentlich"
    plain = {plain_vowels(w) for w in words}
    return {t for t in terms if (t in numbers if t[:1].isdigit() else any(_matches(t, w) for w in words)
                                 or len(t) == 4 and any(w.startswith(plain_vowels(t)) for w in plain))}


def _own_text(unit: Unit, titles: dict[str, str]) -> str:
    """A passage as it speaks for itself: its text and, for a table row, its table's header ("2024: 129 g/km"
    under "Erstzulassung | CO2-Grenzwert"); the entry's title, the same for all its passages, left out."""
    title = titles.get(unit.entry_id, "")
    header = unit.about[len(title):] if title and unit.about.startswith(title) else ""
    return f"{unit.text} {header}".strip()


# "Wie lange hat er Zeit, …?", "bis wann muss er …?": the time allowed for something is what a row calls its Frist
# ("Frist für Verfügung: innerhalb von 6 Monaten"), a word such a question seldom says itself
_ASKS_TIME_ALLOWED = re.compile(r"\bwie\s+lange?\b|\bbis\s+wann\b|\bZeit\b", re.I)
_TIME_KINDS = frozenset({"Tage", "Werktage", "Arbeitstage", "Wochen", "Monate", "Jahre"}) | _DATE_KINDS


def _implied_terms(question: str, asked: frozenset) -> set[str]:
    """Words a question names by its ask rather than by itself: "frist" for the time allowed."""
    if asked & _TIME_KINDS and _ASKS_TIME_ALLOWED.search(question):
        return {"frist"}
    return set()


def complete_focus(question: str, chosen: list[Unit], units: list[Unit], expansions=(),
                   best_entry: bool = False) -> Unit | None:
    """The passage to add when another passage fits the question better than every chosen one.

    A small model that found the right entry often quotes its opening sentences ("Der Arbeitnehmer kann eine
    Auszahlung verlangen …") and not the one that answers ("Über sein Guthaben muss er innerhalb von 6 Monaten …
    verfügen"); or it quotes another entry than the one the search ranked first. Each passage scores the question's
    words (and the synonym table's expansions of them) and its numbers other than years that it names in its own
    text (a table row with its table's header; the entry's title, the same for all its passages, does not count),
    each weighed by how rare it is among the passages of the context: "Nächtigungsgeld" says more than
    "steuerfrei". Of the chosen entries, the best passage not chosen is added when it scores more than every chosen
    one; with ``best_entry``, of the best-ranked entry when the model chose none of its passages, the best passage
    that names a word of the question. For a value question a passage must state a value of the asked kind. The
    code only ever adds a passage of the context."""
    if not chosen or not units:
        return None
    asked = asked_units(question)
    terms = _capped(_with_expansions(question, expansions) | {
        n for n in question_numbers(question) if not _YEAR_RE.fullmatch(n)})
    titles: dict[str, str] = {}
    for unit in units:
        # a prose passage's "about" is its entry's title alone: the shortest of the entry's
        if unit.entry_id not in titles or len(unit.about) < len(titles[unit.entry_id]):
            titles[unit.entry_id] = unit.about
    hits = {id(u): _hit_terms(terms, _own_text(u, titles)) for u in units}
    for unit in chosen:
        hits.setdefault(id(unit), _hit_terms(terms, _own_text(unit, titles)))
    count = len(units)
    weight = {t: math.log(1 + count / max(1, sum(t in h for h in hits.values()))) for t in terms}

    def score(unit: Unit) -> float:
        return sum(weight[t] for t in hits[id(unit)])

    value_asked = is_value_question(question) or bool(asked)
    chosen_entries = {u.entry_id for u in chosen}
    entries = {units[0].entry_id} - chosen_entries if best_entry else chosen_entries

    def best_of(floor: float, kinds: frozenset, label_terms: set) -> Unit | None:
        best, best_score = None, floor
        for unit in units:
            if unit.entry_id not in entries or unit in chosen or not (hits[id(unit)] or label_terms):
                continue
            if label_terms and not label_terms <= _hit_terms(label_terms, _row_label(unit.text)):
                continue
            if value_asked and not holds_asked_value(unit.text, kinds, worded=True):
                continue
            if score(unit) > best_score + 1e-9:
                best, best_score = unit, score(unit)
        return best

    implied = _implied_terms(question, asked)
    if implied and not any(_hit_terms(implied, _own_text(u, titles)) for u in chosen):
        # the time allowed is asked and no chosen passage names a Frist: the best row labelled so of a chosen entry
        # (with ``best_entry``: of the best-ranked entry the model left out), whatever the chosen ones score ("Der
        # Arbeitnehmer kann eine Auszahlung verlangen, … drei Einzahlungsjahre" names more of "Wie lange hat der
        # Arbeitnehmer … Zeit, zu verfügen?" than the row "Frist für Verfügung: innerhalb von 6 Monaten"); a Frist
        # told as a span answers "bis wann" too. The floor below every score takes such a row even with no hit.
        found = best_of(-1.0, asked | _TIME_KINDS, implied)
        if found is not None:
            return found
    return best_of(0.0 if best_entry else max(score(u) for u in chosen), asked, set())
