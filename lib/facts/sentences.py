"""Value sentences: facts out of prose that states a value.

"Die Geringfügigkeitsgrenze beträgt 2025 monatlich € 551,10.", "Der Beitragssatz zur Betrieblichen Vorsorge beträgt
1,53 %.", "Ab 2026 sind es 27,5 %." (the concept of the value sentence just before). A sentence (or a clause
between semicolons) is read only when its shape is clear:

- a value verb (beträgt, betragen, liegt bei, beläuft sich auf, ist, sind; past forms only with a year);
- its subject in front of the verb or right after it: a definite noun phrase ("Die Geringfügigkeitsgrenze",
  "Der Beitragssatz zur Betrieblichen Vorsorge (BV)"), or a pronoun (es, sie, er) that continues the value
  sentence right before it (same gender: "sie" continues "die …");
- between verb and value nothing but a period ("ab 2026", "für 2025"), a basis ("monatlich", "pro Jahr") and a
  bound ("bis zu", "höchstens");
- a value with a unit (€, %, Tage, Wochen, …), not part of a calculation or a list of alternatives ("25 bzw. 30");
- no other year anywhere in the sentence; a value "(2024: € 518,44)" in brackets right after the value is a
  second fact of the same concept.

Skipped: conditions ("Beträgt die Grundlage …, …"), examples (an indefinite or demonstrative subject, a heading
or paragraph "Beispiel"), a subject that names nothing more than a generic word ("Die Grenze"). The period is
the sentence's own, else the heading's, the title's, the Stand's — and a sentence in the past tense needs its own.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..text import md_blocks
from .amounts import parse_amount, value_spans
from .concepts import stems
from .periods import Period, find_period, period_spans, strip_periods

SENTENCE_UNITS = frozenset({"€", "%", "Tage", "Werktage", "Arbeitstage", "Wochen", "Monate", "Monatsentgelte",
                            "Jahre", "Dienstjahre", "Stunden", "Überstunden", "km", "g/km"})
_VERB_RE = re.compile(r"\b(?P<verb>beträgt|betragen|betrug|betrugen|liegt|liegen|lag|lagen|beläuft\s+sich"
                      r"|belaufen\s+sich|belief\s+sich|ist|sind|war|waren)\b")
_PAST = ("betrug", "lag", "belief", "war")
_COPULA = ("ist", "sind", "war", "waren")
# the word a verb needs right before its value ("liegt 2025 bei € …", "beläuft sich auf € …")
_NEEDS = {"liegt": "bei", "liegen": "bei", "lag": "bei", "lagen": "bei", "beläuft": "auf", "belaufen": "auf",
          "belief": "auf"}
_ARTICLES = {"der": "m", "die": "f", "das": "n"}
_PRONOUNS = {"er": "m", "sie": "f", "es": "n"}
# lower-case words a noun phrase may hold besides adjectives
_NP_WORDS = frozenset("""zur zum für des der die das dem den im in von vom ohne bei beim mit und pro je nach auf aus an
über unter bis ab gemäß laut""".split())
# words allowed between the verb (or the subject after it) and the value
_FILLERS = frozenset("""monatlich monatliche täglich tägliche jährlich jährliche wöchentlich pro je im jahr kalenderjahr
monat kalendermonat tag woche derzeit aktuell nun jeweils damit somit also heuer bis zu höchstens mindestens maximal
max. mind. rund ca. über unter ab seit für das dem jahre bei auf""".split())
_BOUND_WORDS = ("bis zu", "höchstens", "mindestens", "maximal", "max.", "mind.", "rund", "ca.", "über", "unter")
# a subject that says no more than one of these words does not name its concept clearly
VAGUE = frozenset(stems("Grenze Grenzen Beitrag Beiträge Steuer Frist Fristen Dauer Anspruch Summe Zuschlag "
                        "Zuschläge Teil Anteil Grundlage Quote Zahl Prozentsatz Betrag Beträge Wert Werte Satz Sätze"))
# a value verb and, not far after it, something with a unit: what a value sentence needs at least (a cheap test
# before the sentence is read; most prose fails it)
_LIKELY_RE = re.compile(r"\b(?:beträgt|betragen|betrug|betrugen|liegt|liegen|lag|lagen|beläuft|belaufen|belief|ist|sind|"
                        r"war|waren)\b[^;]{0,160}?(?:€|\d\s?%|\d\s?(?:Tage|Werktage|Arbeitstage|Wochen|Monate|Jahre|"
                        r"Dienstjahre|Stunden|Überstunden|Monatsentgelte|km|g/km)\b)")
_EXAMPLE_RE = re.compile(r"beispiel|berechnung|fallbeispiel|praxisfall", re.I)
_UNIT_TAIL_RE = re.compile(r"\s*(?:(?:pro|je|im|in\s+der|in\s+einem)\s+(?:Kalender)?(?:monat|jahr|tag|woche|kilometer|km|"
                           r"stunde|person|kind)\w*|monatlich|jährlich|täglich|wöchentlich)\b", re.I)
_RANGE_TAIL_RE = re.compile(r"\s*(?:bis|–|-)\s*(?:€\s?)?\d[\d.,]*(?:\s?(?:%|€|[^\W\d_]+))?")
_ALTERNATIVE_RE = re.compile(r"^\s*(?:bzw\.|oder|und|,|sowie)\s*(?:€\s?)?\d")
_OPERATOR_RE = re.compile(r"^\s*(?:[×*÷+−=/]|[-–]\s*(?:€\s?)?\d)")
_BRACKET_RE = re.compile(r"^\s*\((?P<inner>[^()]{3,60})\)")
_NOUN_RE = re.compile(r"^[(\"„]?[A-ZÄÖÜ][\w\-/ÄÖÜäöüß.]*[)\"“]?$")
_ADJECTIVE_RE = re.compile(r"^[a-zäöüß][\w\-äöüß]*(?:e|en|er|es|em|lich|ig)$")


@dataclass
class ValueSentence:
    """One value read from a sentence: the subject as written (without its article), the period, basis words
    and value text; ``line`` is the 1-based line of the body the sentence starts on, ``passage`` the sentence."""

    subject: str
    gender: str
    period: Period | None
    basis_text: str
    value_text: str
    line: int
    passage: str


def _np(text: str) -> tuple[str, str] | None:
    """(noun phrase without its article, gender) of a definite subject, or None when it is no clear one."""
    words = text.split()
    if not words or len(words) > 10 or any(c in text for c in ",;:[]\"„“"):
        return None
    gender = _ARTICLES.get(words[0].lower())
    if gender is None:
        return None
    rest = words[1:]
    nouns = 0
    for word in rest:
        bare = word.strip("()")
        if _NOUN_RE.match(word):
            nouns += 1
        elif bare.lower() in _NP_WORDS or _ADJECTIVE_RE.match(bare) or re.fullmatch(r"\d[\d.,]*|€|km|%", bare):
            continue
        else:
            return None
    if not nouns:
        return None
    return " ".join(rest), gender


def _pronoun(text: str) -> str | None:
    return _PRONOUNS.get(text.strip().lower())


def _only_fillers(text: str) -> bool:
    rest = re.sub(r"\s+", " ", text.lower()).strip()
    return all(word in _FILLERS for word in rest.split()) if rest else True


def _split_mid(mid: str) -> tuple[str, str]:
    """(noun phrase, fillers) of the words between the verb and the value of an inverted sentence ("beträgt die
    Geringfügigkeitsgrenze monatlich € …"): the fillers are the trailing words that may stand there."""
    words = mid.split()
    cut = len(words)
    while cut > 0 and words[cut - 1].lower() in _FILLERS:
        cut -= 1
    return " ".join(words[:cut]), " ".join(words[cut:])


def read_clause(clause: str, previous: ValueSentence | None, line: int, passage: str) -> list[ValueSentence]:
    """The value(s) one clause states, or [] when its shape is not clear."""
    if not _LIKELY_RE.search(clause):
        return []           # (most prose: no value verb with a value after it; cheaper than reading its periods)
    spans = period_spans(clause, "sentence")
    blank = list(clause)
    for start, end, _ in spans:
        blank[start:end] = " " * (end - start)
    blanked = "".join(blank)
    verb = _VERB_RE.search(blanked)
    if not verb or not clause[:verb.start()].strip():
        return []           # no value verb, or the verb first: a condition ("Beträgt die Grundlage …")
    pre, post = blanked[:verb.start()], blanked[verb.end():]
    values = [v for v in value_spans(post) if v[2] in SENTENCE_UNITS]
    if not values:
        return []
    start, end, _unit = values[0]
    value_at = verb.end() + start
    if post[:start].rstrip().endswith("("):
        return []
    periods = [p for s, _, p in spans if s < value_at]
    if len({(p.start, p.end) for p in periods}) > 1:
        return []
    period = periods[0] if periods else None
    if _only_fillers(pre):      # "Ab 2026 beträgt die Grenze …", "Für 2025 beträgt sie …", "Derzeit …"
        subject_text, fillers = _split_mid(post[:start])
    else:                       # "Die Grenze (2025) beträgt …"
        subject_text, fillers = pre, post[:start]
    word = verb.group("verb").split()[0]
    needed = _NEEDS.get(word)
    if not _only_fillers(fillers) or needed and needed not in fillers.lower().split():
        return []
    if word.startswith(_PAST) and period is None:
        return []           # a past value without its year
    gender = _pronoun(subject_text)
    if gender is not None:
        if previous is None or period is None or (gender != "n" and previous.gender != gender):
            return []
        subject, gender = previous.subject, previous.gender
    else:
        found = _np(subject_text)
        if found is None or not set(stems(found[0])) - VAGUE:
            return []
        subject, gender = found
    bound = next((b for b in _BOUND_WORDS if " ".join(fillers.lower().split()).endswith(b)), "")
    value_end = end
    rng = _RANGE_TAIL_RE.match(post, end)
    if rng and value_spans(rng.group(0)):
        value_end = rng.end()
    unit_tail = _UNIT_TAIL_RE.match(post, value_end)
    if unit_tail:
        value_end = unit_tail.end()
    tail = post[value_end:]
    if _OPERATOR_RE.match(post[end:]) or _ALTERNATIVE_RE.match(tail):
        return []
    unit_class = _unit_class(_unit)
    if any(_unit_class(u) == unit_class for _, _, u in value_spans(_BRACKET_RE.sub("", tail, count=1))):
        return []           # "30 Werktage, ab dem 26. Dienstjahr 36 Werktage": which value is the concept's is not clear
    original_tail = clause[verb.end() + value_end:]
    if word in _COPULA and not re.match(r"^\s*(?:\([^()]*\))?\s*[.!]?\s*$", original_tail):
        return []           # "… sind bis € 360 lohnsteuerfrei": a bound of a property, not the value itself
    value_text = " ".join(f"{bound} {post[start:value_end]}".split())
    if value_text.endswith(".") and not original_tail.strip():
        value_text = value_text[:-1]
    basis_text = f"{subject} {fillers} {unit_tail.group(0) if unit_tail else ''}"
    out = [ValueSentence(subject, gender, period, basis_text, value_text, line, passage)]
    bracket = _BRACKET_RE.match(original_tail)
    if bracket:
        original_tail = original_tail[bracket.end():]
        other = _bracket_value(bracket.group("inner"), subject, gender, basis_text, line, passage)
        if other is None and find_period(bracket.group("inner")):
            return []
        out += [other] if other else []
    if find_period(original_tail):
        return []           # another year elsewhere: which value holds when is not clear
    return out


def _unit_class(unit: str) -> str:
    return unit if unit in ("€", "%") else "count"


def _bracket_value(inner: str, subject, gender, basis_text, line, passage) -> ValueSentence | None:
    """"(2024: € 518,44)", "(bis 2024: € 15)" after a value: the same concept for another period."""
    head, sep, value = inner.partition(":")
    period = find_period(head, "sentence") if sep else None
    if period is None or strip_periods(head).strip() or not value_spans(value):
        return None
    if parse_amount(value.strip()).unit not in SENTENCE_UNITS:
        return None
    return ValueSentence(subject, gender, period, basis_text, value.strip(), line, passage)


# a sentence that ends on an amount or a year ("… höchstens € 960. Für …"; an ordinal "18. Geburtstag" does not end one)
_NUMBER_END_RE = re.compile(r"(?:(?:€\s?\d[\d.]*(?:,\d+)?|\d+,\d+|\d{3,}|\d{1,3}(?:\.\d{3})+)|\d+(?:,\d+)?\s?%)"
                            r"\.\s+(?=[A-ZÄÖÜ])")


def sentences(text: str) -> list[str]:
    """The sentences of a paragraph (:func:`md_blocks.split_sentences`, also cut after an amount or a year)."""
    out = []
    for sentence in md_blocks.split_sentences(text):
        start = 0
        for match in _NUMBER_END_RE.finditer(sentence):
            out.append(sentence[start:match.end()].strip())
            start = match.end()
        out.append(sentence[start:].strip())
    return [s for s in out if s]


def _clauses(sentence: str) -> list[str]:
    return [c.strip() for c in sentence.split(";") if c.strip()]


def paragraphs(numbered: list[tuple[int, str]], heading: str):
    """(heading above, text, line numbers, lines) of each prose paragraph and list item outside tables, example
    headings and example paragraphs; ``heading`` is the section's own."""
    current: list[tuple[int, str]] = []
    example = False
    caption = heading

    def flush():
        if current:
            text = " ".join(line.strip() for _, line in current)
            if not re.match(r"^\W*(?:Beispiel|Rechenbeispiel|Praxisbeispiel)\b", text):
                yield caption, text, [n for n, _ in current], [line.strip() for _, line in current]
            current.clear()

    for number, line in numbered:
        title = md_blocks.heading(line)
        if title is not None:
            yield from flush()
            caption = title
            example = bool(_EXAMPLE_RE.search(title))
            continue
        stripped = line.strip()
        if not stripped or md_blocks.is_table_row(line):
            yield from flush()
            continue
        if example:
            continue
        if re.match(r"^[-*+•]\s+", stripped):
            yield from flush()
            current.append((number, re.sub(r"^[-*+•]\s+", "", stripped)))
            continue
        current.append((number, line))
    yield from flush()


def read_paragraph(text: str, numbers: list[int], lines: list[str]) -> list[ValueSentence]:
    """The value sentences of one paragraph; each sentence's line is the body line it starts on (cached: an
    unchanged base is read again after every import)."""
    return list(_read_paragraph(text, tuple(numbers), tuple(lines)))


@lru_cache(maxsize=20_000)
def _read_paragraph(text: str, numbers: tuple, lines: tuple) -> tuple:
    out: list[ValueSentence] = []
    if not _LIKELY_RE.search(text):
        return ()
    starts = []
    offset = 0
    for number, line in zip(numbers, lines):
        starts.append((offset, number))
        offset += len(line) + 1
    cursor = 0
    previous: ValueSentence | None = None
    for sentence in sentences(text):
        at = text.find(sentence, cursor)
        at = cursor if at < 0 else at
        cursor = at + len(sentence)
        line = max((n for o, n in starts if o <= at), default=numbers[0])
        for clause in _clauses(sentence):
            found = read_clause(clause, previous, line, sentence)
            previous = found[0] if found else None
            out.extend(found)
    return tuple(out)
