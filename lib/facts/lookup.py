"""Value questions answered from the fact table: which facts a question asks for, when the match is clear.

A question asks for a value when it says so ("wie hoch", "wie viel", "Grenze", "Satz", …) or is short
("GFB 2025?", "HBGL täglich 2026", "Kilometergeld Pkw"). Its words (abbreviations and synonyms written out)
must name every word of a fact's concept, and the fact must account for every word of the question (by its
label, caption, entry title and tags, or legal basis); a basis the question names ("täglich") must be the
fact's. A fact with a variant (a threshold or count in its label) is taken only when the question names the
same numbers with the same bound ("über 60 km"). The match is clear when the facts left belong to one
concept; several concepts (or none) leave the question to the normal answer.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from ..search.fulltext import is_value_question
from ..text.numbers import CARDINALS, digits_for_words
from ..text.german import ANSWER_STOPWORDS, QUESTION_STOPWORDS, fold_plain, light_stem, word_tokens
from .compare import Pair, compare, same_concept, topic_common_words
from .concepts import GENERIC, basis_of, stems, strip_basis, word_in, words_match
from .extract import Fact
from .tiers import holds, is_dimension_word, question_points
from .periods import Period, find_period

MAX_WORDS_SHORT = 6        # a question this short (in words) counts as a value question when a fact matches it
MAX_PERIODS = 4            # without an asked year: the newest periods shown
_NOT_VALUE = re.compile(r"\b(?:warum|wieso|weshalb|erkl[äa]r\w*|unterschied\w*|berechn\w*|beispiel\w*|"
                        r"funktionier\w*|ablauf|muss|müssen|darf|dürfen|kann|können|soll)\b", re.I)
_ASK_WORDS = frozenset(light_stem(fold_plain(w)) for w in """
wie hoch viel viele wieviel wieviele welche welcher welches beträgt betragen gilt gelten galt aktuell
derzeit momentan heuer genau bitte nennen nenn sag sagen gibt geben steht bekomme bekommt zahlt zahlen
man ich wir den dem der die das des ein eine einen einem für fürs pro je im in ab bis seit nach von vom
zum zur bei beim mit und oder ist sind war wird werden liegt lag höhe betrag wert werte amtlich amtliche
gesetzlich offiziell amtl welchem welchen zu noch dauert dauern brauch brauche benötige
darf dürfen durfte auszahlen auszahlt ausgezahlt rechne rechnen rechnet trägt tragen anfällt anfallen fällt fallen
kassiert kassieren mutter vater mein meine meinen meinem meiner unser unsere unseren unserem unserer eigene eigenen eigener eigenes eigenem konkret jeweils überhaupt eigentlich""".split())
# what a percentage is taken of ("Wie viel Prozent DB fallen auf die Lohnsumme an?"): said by a question asking for a
# rate, but seldom in the rate's row
_RATE_BASES = frozenset(light_stem(fold_plain(w)) for w in """
lohnsumme lohnsummen bruttolohnsumme arbeitslöhne arbeitslohn bruttolohn bruttolöhne bruttobezug bruttobezüge
bemessungsgrundlage beitragsgrundlage entgelt entgelts bruttoentgelt""".split())
# question words that name a concept word in other words
_SAME_AS = {"start": "beginn", "startet": "beginn", "anfang": "beginn", "tochter": "kind", "sohn": "kind",
            "toechter": "kind", "soehne": "kind"}
# what the question asks for, by its wording: the unit kinds of a fact that answer it (used to choose between
# concepts of one entry that all fit the words, e.g. "Beitragssatz" 1,53 % and "Beitragspflicht" ab dem 2. Monat)
_AMOUNT_UNITS = frozenset({"€", "%", "Prozentpunkte"})
_DURATION_UNITS = frozenset({"Tage", "Werktage", "Arbeitstage", "Wochen", "Monate", "Jahre", "Dienstjahre", "Stunden",
                             "Überstunden", "Monatsentgelte"})
_ASKS = (
    # a rate word ends in -satz/-sätze ("Beitragssatz", "Steuersätze"); Ersatz, Einsatz, Zusatz, Absatz, Umsatz are
    # no rates, and "Ersatzleistung" asks for an amount
    (re.compile(r"\b(?:prozent\w*|%|(?!(?:er|ein|zu|ab|um|auf|an)s[äa]tz)\w*s[äa]tz(?:e|es|en)?\b|\w*quote)", re.I),
     frozenset({"%", "Prozentpunkte"})),
    (re.compile(r"\bwie\s+lange?\b|\bdauer\w*|\bwie\s+viele\s+(?:\w+\s+)?(?:tage|werktage|arbeitstage|wochen|monate|"
                r"jahre|stunden)\b", re.I), _DURATION_UNITS),
    # "ab welcher Summe … fällig": an amount, though "fällig" follows
    (re.compile(r"\bwelche[rmns]?\s+(?:\w+en\s+)?(?:summe|betrag|h[öo]he|einkommen|jahreseinkommen|entgelt\w*"
                r"|monatsbezug|bezug|lohnsumme)\b", re.I), _AMOUNT_UNITS),
    (re.compile(r"\b(?:bis|ab|seit)\s+wann\b|\bwann\b|\bf[äa]llig\w*|\btermin\w*|\bstichtag", re.I),
     frozenset({"Termin", "Datum"})),
    (re.compile(r"\bwie\s+(?:hoch|viel)\b(?!\s+(?:tage|wochen|monate|jahre|stunden))|\bbetrag\w*|\beuro\b|€|"
                r"\bh[öo]he\b", re.I), _AMOUNT_UNITS),
)
# two questions in one ("wie viele Stunden und welcher Höchstbetrag?"): left to the normal answer
_INTERROGATIVE = re.compile(r"\b(?:wie\s+(?:hoch|viel|viele|lange?)|wieviele?|welche[rsmn]?|bis\s+wann|ab\s+wann|"
                            r"bis\s+zu\s+welche[rmn]?)\b", re.I)
_SECOND_ASK = re.compile(r"\b(?:und|sowie)\s+(?:wie\s+(?:hoch|viel|viele|lange?)|wieviele?|welche[rsmn]?|bis\s+wann|ab\s+wann|"
                         r"seit\s+wann|wann|bis\s+zu\s+welche[rmn]?)\b", re.I)
# a hyphenated compound written apart ("Sonder-Zahlungen", "Höchst-Beitragsgrundlage") is one word; an
# abbreviation before the hyphen stays a word of its own ("BV-Beitrag", "SEG-Zulagen")
_HYPHEN_COMPOUND = re.compile(r"\b([A-Za-zÄÖÜäöüß][a-zäöüß]{2,})-([A-ZÄÖÜ][a-zäöüß]{3,})\b")
# words of a question that name the wanted unit, not the concept
_UNIT_WORDS = frozenset({"prozent", "prozentsatz", "euro", "eur"})
_BOUND_WORDS = {"ab": "ab", "nach": "ab", "über": "ab", "ueber": "ab", "mindestens": "ab", "bis": "bis",
                "unter": "bis", "höchstens": "bis", "hoechstens": "bis"}


@dataclass
class Question:
    """A value question, parsed: its words (each with its alternatives), the asked period and basis."""

    text: str
    words: list[frozenset] = field(default_factory=list)
    period: Period | None = None
    basis: str = ""
    bounds: frozenset = frozenset()
    asks: frozenset = frozenset()
    points: dict = field(default_factory=dict)     # numbers of a staged dimension (tiers.question_points)
    stated: Decimal | None = None   # a rate the question names to ask for its threshold ("ab welchem Einkommen 48 %?")
    implied: frozenset = frozenset()   # concept words its wording names without saying them ("bis zu welchem Betrag")

    @property
    def year(self) -> int | None:
        if self.period is None:
            return None
        return self.period.start if self.period.start is not None else self.period.end


@dataclass
class Match:
    """The facts a value question is answered with: ``facts`` (newest first, one line each), ``pairs`` the
    conflicts and outdated pairs among them and the concept's other facts, ``missing_year`` when the asked
    year has no value (``facts`` then hold the latest ones)."""

    question: Question
    facts: list[Fact]
    pairs: list[Pair]
    missing_year: int | None = None


def _bounds(text: str) -> frozenset:
    """(bound, number) pairs: "über 60 km" → {("ab", "60")}; "20 bis 40 km" → {("", "20"), ("bis", "40")}."""
    out = set()
    words = re.findall(r"[^\W\d_]+|\d+(?:[.,]\d+)*", text or "")
    for pos, word in enumerate(words):
        if word[0].isdigit() and not re.fullmatch(r"(?:19|20)\d{2}", word):
            before = [fold_plain(w) for w in words[max(0, pos - 2):pos] if not w[0].isdigit()]
            bound = next((_BOUND_WORDS[w] for w in reversed(before) if w in _BOUND_WORDS), "")
            out.add((bound, word.replace(".", "")))
    return frozenset(out)


# a count written as a word before a counted noun ("mit einem Kind", "für zwei Kinder"): the number of a row's variant
_COUNTED_RE = re.compile(r"\b(" + "|".join(sorted(CARDINALS, key=len, reverse=True)) + r")\s+(Kind(?:er|ern|es)?)\b",
                         re.I)


# "Ab welcher Lohnsumme fällt die DAG an?": the sum named is what a threshold is, the value asked
_ASKED_SUM = re.compile(r"\b(?:ab|bis\s+zu|bis)\s+welche[mrns]?\s+(?:[^\W\d_]+e[nrm]?\s+)?([^\W\d_]*summen?)\b",
                        re.I)
# "Bis zu welchem Betrag sind Überstundenzuschläge steuerfrei?", "bis wie viel": asks for a Höchstbetrag
_ASKS_CAP = re.compile(r"\bbis\s+(?:zu\s+)?(?:welche[mrn]?\s+(?:\w*betrag|summe|h[öo]he)\b|wie\s*viel)", re.I)
_CAP_KEY_WORDS = frozenset(light_stem(fold_plain(w)) for w in ("Höchstbetrag", "Obergrenze", "Höchstgrenze"))
# "pro vollem Tag", "für einen ganzen Tag": a day's rate ("Taggeld pro Tag")
_WHOLE_DAY = re.compile(r"\b(?:voll|ganz)(?:e|en|em|er)?\s+(?=Tag\b)", re.I)


def _counted(text: str) -> str:
    return _COUNTED_RE.sub(lambda m: f"{CARDINALS[m.group(1).lower()]} {m.group(2)}", text)


def parse_question(text: str, synonyms: Iterable[tuple[str, str]] = ()) -> Question | None:
    """The question's concept words with their alternatives, or None when it is no value question."""
    if not text or _NOT_VALUE.search(text):
        return None
    if len(_INTERROGATIVE.findall(text)) > 1 and re.search(r"\b(?:und|sowie)\b", text):
        return None
    if _SECOND_ASK.search(text):
        return None         # "Kündigungsfrist im 16. DJ und wie viele Wochen EFZ?": the first ask has no question word
    while _HYPHEN_COMPOUND.search(text):
        text = _HYPHEN_COMPOUND.sub(lambda m: m.group(1) + m.group(2).lower(), text)
    text = digits_for_words(_WHOLE_DAY.sub("", text))     # "im ersten Dienstjahr" → "im 1. Dienstjahr"
    text = _ASKED_SUM.sub(lambda m: m.group(0)[:m.start(1) - m.start(0)], text)
    raw_words = word_tokens(text)
    short = len(raw_words) <= MAX_WORDS_SHORT
    if not short and not is_value_question(text):
        return None
    table: dict[str, list[str]] = {}
    for term, expansions in synonyms or ():
        table.setdefault(fold_plain(term or "").strip(), []).extend(
            e.strip() for e in (expansions or "").split(";") if e.strip())
    words: list[frozenset] = []
    law = re.compile(r"§+\s*\d+[a-z]?(?:\s*(?:Abs\.?|Z\.?|lit\.?)\s*\d+[a-z]?)*\s*[A-ZÄÖÜ][A-Za-zÄÖÜäöü]*G\b")
    plain = _counted(law.sub(" ", text))
    for raw in word_tokens(strip_basis(plain)):
        if raw.isdigit() or len(raw) < 2:
            continue
        folded = fold_plain(raw)
        stem = light_stem(folded)
        if folded in QUESTION_STOPWORDS or folded in ANSWER_STOPWORDS or stem in _ASK_WORDS or stem in GENERIC \
                or folded in _UNIT_WORDS:
            continue
        if folded in _SAME_AS and light_stem(_SAME_AS[folded]) in GENERIC:
            continue
        alternatives = {stem}
        if folded.endswith("em") and len(folded) >= 6:      # "mit vollem Entgelt": the stem drops no -em
            alternatives.add(light_stem(folded[:-2]))
        if folded in _SAME_AS:
            alternatives.add(_SAME_AS[folded])
        for key in (folded, stem):
            for expansion in table.get(key, ()):
                alternatives.update(stems(expansion))
        words.append(frozenset(alternatives))
    basis = basis_of(text)
    words = [w for w in words if not (basis and w & {"monatlich", "taeglich", "jaehrlich", "woechentlich"})]
    if not words:
        return None
    return Question(text, words, find_period(text, "cell"), basis, _bounds(plain), asked_units(text),
                    question_points(text), _stated_rate(text), _CAP_KEY_WORDS if _ASKS_CAP.search(text) else frozenset())


# "Ab welchem Jahreseinkommen gilt der Steuersatz von 48 %?": the rate is given, the threshold (a row label) asked
_THRESHOLD_ASK = re.compile(r"\b(?:ab|bis\s+zu|bis)\s+welche[mrs]?\s+(?:\w+\s+)?(?:\w*einkommen|\w*betrag|\w*bezug|summe|"
                            r"lohnsumme|entgelt|gehalt|\w*grundlage|bgl|bmgl|grenze)\b", re.I)
_STATED_RATE = re.compile(r"(?<![\d.,])(\d{1,2}(?:,\d{1,2})?)\s*(?:%|Prozent\b)")


def _stated_rate(text: str) -> Decimal | None:
    rates = _STATED_RATE.findall(text or "")
    if len(rates) != 1 or not _THRESHOLD_ASK.search(text or ""):
        return None
    return Decimal(rates[0].replace(",", "."))


def stated_rate_facts(question: Question, pool: list[Fact]) -> list[Fact]:
    """The facts whose value is the rate the question states, of the asked year, in an entry that names one of the
    question's words (title, section, label): the rows whose labels hold the asked threshold."""
    out = []
    for fact in pool:
        value = fact.value
        if (fact.is_reference or value.unit != "%" or value.amount != question.stated or value.amount_to is not None
                or (question.year is not None and not fact.period.covers(question.year))):
            continue
        if any(word_in(a, _fact_pool(fact)) for alternatives in question.words for a in alternatives):
            out.append(fact)
    return out if len({(f.column_header, f.entry_id) for f in out}) == 1 else []


def asked_units(text: str) -> frozenset:
    """The units a value answering the question may have, by the first kind of ask the question names
    ("wie viel Prozent" → %, "wie lange" → durations, "bis wann" → dates), or empty (any)."""
    for pattern, units in _ASKS:
        if pattern.search(text):
            return units
    return frozenset()


def _fact_pool(fact: Fact, with_mentions: bool = True) -> set[str]:
    pool = set(fact.key | fact.context | fact.subject) | _value_words(fact.text)
    if with_mentions:
        pool |= fact.mentions
    for law in fact.legal:
        pool.update(law.split())
    return pool


# unit signs of a value and the words a question names them with ("€ 6,67 je m²": "pro Quadratmeter")
_UNIT_SIGNS = {"m²": "Quadratmeter", "m2": "Quadratmeter", "km": "Kilometer", "h": "Stunde", "kWh": "Kilowattstunde"}
_UNIT_SIGN_RE = re.compile(r"(?<![\w²])(m²|m2|km|h|kWh)(?![\w²])")


# a value with an upper bound ("2 % der Anschaffungskosten, max. € 960 monatlich") is a Höchstbetrag
_CAPPED_RE = re.compile(r"\b(?:max\.|maximal|höchstens|bis\s+zu)", re.I)
_CAP_WORDS = "Höchstbetrag Deckel Obergrenze Maximum Höchstgrenze Maximalbetrag"
# words of a label that say how values are taken together, not what: "Steuerfreier Höchstbetrag gemeinsam"
_SOFT_KEY_WORDS = frozenset({"gemeinsam", "zusamm", "jeweil"})


def _value_words(text: str) -> frozenset:
    """The words of a value as written ("3 % der Bruttolohnsumme" → bruttolohnsumm): they tell what it is of; a
    unit sign counts as its word ("je m²" → quadratmet), an upper bound as "Höchstbetrag"."""
    text = text or ""
    named = " ".join(_UNIT_SIGNS[m] for m in _UNIT_SIGN_RE.findall(text))
    if _CAPPED_RE.search(text):
        named = f"{named} {_CAP_WORDS}"
    return frozenset(stems(f"{text} {named}"))


def _rate_word_named(key_word: str, question: Question, fact: Fact) -> bool:
    """A rate compound of the concept ("steuersatz") is named by a question asking for a percentage with a word
    that ends in the rest of the compound and is the entry's own subject ("Wie viel Prozent Kommunalsteuer …" for
    the entry "Kommunalsteuer"; not "DB-Satz" for the "Beitragssatz" of another entry)."""
    if "%" not in question.asks or not key_word.endswith("satz") or len(key_word) < 8:
        return False
    base = light_stem(key_word[:-4])
    return any(w.endswith(base) and w in fact.subject for alternatives in question.words for w in alternatives
               if len(w) >= 4)


def required_key(fact: Fact) -> frozenset:
    """The words of a fact's concept key a question must name: all but those only in the parentheses of its column
    header, which say how it is counted ("Werktage (6-Tage-Woche)"). The parentheses of a row label stay required:
    letting a question leave out "(laufend)" of "Dienstgeberanteil gesamt (laufend)" answered "Wie viel Prozent DB
    zahlt der DG?" with the Dienstgeberanteil on questions nobody had tuned on (docs/facts.md)."""
    return fact.key - fact.optional - _SOFT_KEY_WORDS or fact.key


def _eligible(question: Question, fact: Fact) -> bool:
    if fact.is_reference or not fact.value.has_value or not fact.key:
        return False
    if question.basis and fact.basis and question.basis != fact.basis:
        return False
    inside = holds(fact.tier, question.points) if fact.tier is not None else None
    if inside is False:
        return False
    if inside is None and fact.variant and not _bounds(fact.label) <= question.bounds:
        return False
    # the row of a staged table the question's number falls into ("im 4. Dienstjahr" → "ab dem 3. Dienstjahr"):
    # the dimension's words ("Dienstjahr", "Jahren", "km") are named by that number on both sides
    dimension = (lambda word: inside and is_dimension_word(word))
    if not all(any(word_in(k, alternatives) for alternatives in question.words) or _rate_word_named(k, question, fact)
               or dimension(k) or k in question.implied for k in required_key(fact)):
        return False
    return _accounted(question, fact, inside)


def _accounted(question: Question, fact: Fact, inside: bool | None = None, with_mentions: bool = True) -> bool:
    """Every word of the question is accounted for by the fact (its words, its value's, its sentences' when
    ``with_mentions``; a staged row's dimension word; what a rate is taken of)."""
    if inside is None and fact.tier is not None:
        inside = holds(fact.tier, question.points)
    pool = _fact_pool(fact, with_mentions)
    of_rate = (lambda word: "%" in question.asks and fact.value.unit == "%" and word in _RATE_BASES)
    return all(any(word_in(a, pool) or (inside and is_dimension_word(a)) or of_rate(a) for a in alternatives)
               for alternatives in question.words)


def eligible_facts(question: Question, facts: Iterable[Fact]) -> list[Fact]:
    """The facts that may answer ``question``, before :func:`find` asks for a clear match among them."""
    return [f for f in facts if _eligible(question, f)]


def candidate_facts(question: Question, facts: Iterable[Fact]) -> list[Fact]:
    """The facts that may answer ``question``: the rows that hold the rate it states when it asks for their threshold
    (:func:`stated_rate_facts`), else those its words name (:func:`eligible_facts`)."""
    facts = list(facts)
    stated = stated_rate_facts(question, facts) if question.stated is not None else []
    return stated or eligible_facts(question, facts)


def _groups(facts: list[Fact], common: dict) -> list[list[Fact]]:
    groups: list[list[Fact]] = []
    for fact in facts:
        for group in groups:
            head = group[0]
            if (head.key == fact.key and head.basis == fact.basis and head.variant == fact.variant) or \
                    same_concept(head, fact, common):
                group.append(fact)
                break
        else:
            groups.append([fact])
    return groups


def _all_named(words: Iterable[str], question: Question) -> bool:
    return all(any(word_in(w, alternatives) for alternatives in question.words) for w in words)


def _specific(question: Question, fact: Fact) -> int:
    """How many question words the fact's own words (not its sentences) name at least as specifically: the same
    word or a longer one it is part of ("ueberstundenzuschlaeg" by itself, not by "zuschlaeg")."""
    pool = _fact_pool(fact, with_mentions=False)
    return sum(1 for alternatives in question.words
               if any(words_match(a, p) and len(p) >= len(a) for a in alternatives for p in pool))


def _key_names(key: frozenset, question: Question) -> tuple[int, int]:
    """(question words a concept key names, key words the question names): how directly a label fits."""
    asked = sum(1 for alternatives in question.words if any(word_in(a, key) for a in alternatives))
    told = sum(1 for k in key if any(word_in(k, alternatives) for alternatives in question.words))
    return asked, told


def _newest_first(facts: list[Fact], rank: Mapping[str, int]) -> list[Fact]:
    return sorted(facts, key=lambda f: (-f.period.newest, not f.period.explicit, rank.get(f.entry_id, 99), f.line))


def find(question: Question, facts: list[Fact], allowed: Iterable[str] | None = None, **near) -> Match | None:
    """The clear match of a value question among ``facts`` (only those of the ``allowed`` entries, in their
    order of preference), or None. ``near``: the comparison's near-match arguments (``embed``,
    ``embed_threshold``) for the ⚠ sides."""
    order = list(allowed) if allowed is not None else None
    rank = {entry_id: pos for pos, entry_id in enumerate(order or [])}
    pool = [f for f in facts if order is None or f.entry_id in rank]
    candidates = candidate_facts(question, pool)
    if not candidates:
        return None
    common = topic_common_words(facts)
    groups = _groups(candidates, common)
    if len(groups) > 1 and question.asks:
        # several concepts fit the words: the one whose values are of the asked kind (rate, duration, date)
        fitting = [g for g in groups if all(f.value.unit in question.asks for f in g)]
        if fitting:
            groups = fitting
    if len(groups) > 1:
        # "Sonderzahlungshöchstbeitragsgrundlage": the concept that names more of the question than every other
        # ("Höchstbeitragsgrundlage Sonderzahlungen" beside "Höchstbeitragsgrundlage täglich") is the one asked
        widest = [g for g in groups if all(g[0].key > o[0].key and _all_named(g[0].key - o[0].key, question)
                                           for o in groups if o is not g)]
        if len(widest) == 1:
            groups = widest
    if len(groups) > 1:
        # "Bis zu welchem Betrag sind Überstundenzuschläge steuerfrei?": the concept whose entry is about what the
        # question names, not one whose prose mentions it beside its value (the SEG-Zulagen' "… zusammenhängenden
        # Überstundenzuschläge sind gemeinsam bis € 360 steuerfrei")
        direct = [g for g in groups if _accounted(question, g[0], with_mentions=False)]
        if direct:
            groups = direct
    if len(groups) > 1:
        # … and whose own words are as specific as the question's: "Überstundenzuschläge" in the title, not only
        # the compound's head "Zuschläge"
        exact = {id(g): max(_specific(question, f) for f in g) for g in groups}
        best = max(exact.values())
        if sum(1 for g in groups if exact[id(g)] == best) < len(groups):
            groups = [g for g in groups if exact[id(g)] == best]
    if len(groups) > 1:
        # "Grenze für die Dienstgeberabgabe": the concept whose own label names more of the question, not one the
        # question reaches only through the entry's context or legal basis ("Dienstgeberabgabegesetz")
        named = {id(g): _key_names(g[0].key, question) for g in groups}
        most = max(named.values())
        if sum(1 for g in groups if named[id(g)] == most) == 1:
            groups = [g for g in groups if named[id(g)] == most]
    if len(groups) > 1:
        keys = {(g[0].key, g[0].basis, g[0].variant) for g in groups}
        if len(keys) > 1:
            return None
    group = [f for g in groups for f in g]
    # the ⚠ sides come from every retrieved entry's facts, not only those whose label fits the question: the
    # other side of a contradiction may name the same value in other words ("Ersatzquote Blockzeit")
    chosen_ids = {id(f) for f in group}
    others = [f for f in pool if id(f) not in chosen_ids and not f.is_reference and f.value.has_value]
    pairs = compare(group + others, common=common, **near)
    year = question.year
    if year is not None:
        chosen = [f for f in group if f.period.covers(year)]
        if not chosen:
            latest = _newest_first(group, rank)
            newest = latest[0].period.newest
            shown = [f for f in latest if f.period.newest == newest]
            return Match(question, shown, _touching(pairs, shown), missing_year=year)
        return Match(question, _dedupe(_newest_first(chosen, rank)), _touching(pairs, chosen))
    ordered = _dedupe(_newest_first(group, rank))
    periods: list[str] = []
    shown = []
    for fact in ordered:
        label = fact.period.label() + ("" if fact.period.explicit else "~")
        if label not in periods:
            if len(periods) >= MAX_PERIODS:
                continue
            periods.append(label)
        shown.append(fact)
    return Match(question, shown, _touching(pairs, shown))


def _dedupe(facts: list[Fact]) -> list[Fact]:
    seen, out = set(), []
    for fact in facts:
        key = (fact.entry_id, fact.period.label(), fact.text)
        if key not in seen:
            seen.add(key)
            out.append(fact)
    return out


def _touching(pairs: list[Pair], shown: list[Fact]) -> list[Pair]:
    """Pairs of which a shown fact is a side: a conflict always, an outdated pair when its older side states
    its value without a year of its own (it claims it still holds)."""
    ids = {id(f) for f in shown}
    out = []
    for pair in pairs:
        if not (id(pair.first) in ids or id(pair.second) in ids):
            continue
        if pair.kind == "outdated" and pair.first.period.explicit:
            continue
        out.append(pair)
    return out
