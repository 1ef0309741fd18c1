"""What a value measures, as a comparable key: folded, stemmed label words without qualifiers.

The label of a fact ("Geringfügigkeitsgrenze monatlich", "Ersatzquote Blockzeit", "Pkw") loses its years,
its basis (monatlich, täglich, jährlich, wöchentlich: a field of its own), its numbers (thresholds and
ranges: the variant) and generic words ("Wert", "Regel", "Betrag"); abbreviations of the synonym table are
written out ("DB" → Dienstgeberbeitrag). What is left is the concept key; the entry's title, tags and the
table's caption are the concept's context (its subject).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from ..text.german import ANSWER_STOPWORDS, fold_plain, light_stem, word_tokens
from .periods import strip_periods

# words that say nothing about what a value is (folded, stemmed)
GENERIC = frozenset(light_stem(fold_plain(w)) for w in """
wert werte regel regelung betrag beträge höhe angabe angaben inhalt element hinweis bedeutung beschreibung
details erläuterung information kennzahl größe daten punkt aspekt thema merkmal eintrag sachverhalt behandlung
stand zeitraum jahr jahre kalenderjahr variante fall satz sätze beginn ausmaß gesamt insgesamt je pro im ab bis seit über unter
mind mindestens max maximal plus höchstens ca rund und oder sowie bzw nach vor beim fach fache fachen
nächste nächsten nächster""".split())

# words that say what kind of quantity a value is, not of what: "Höchstbetrag", "Freibetrag", "Grenze", "Frist"
KIND_WORDS = frozenset(light_stem(fold_plain(w)) for w in """
höchstbetrag freibetrag freigrenze grenze grenzwert grenzbetrag obergrenze untergrenze mindestbetrag betrag satz
steuersatz prozentsatz beitrag beitragssatz pauschale pauschalbetrag zuschlag frist dauer anspruch ausmaß wert
fälligkeit termin stichtag summe gesamt""".split())

BASIS_WORDS = {
    "monatlich": "monatlich", "monat": "monatlich", "monate": "monatlich", "kalendermonat": "monatlich",
    "taeglich": "täglich", "tag": "täglich", "kalendertag": "täglich",
    "jaehrlich": "jährlich", "jahr": "jährlich", "kalenderjahr": "jährlich", "jahres": "jährlich",
    "woechentlich": "wöchentlich", "woche": "wöchentlich",
}
_BASIS_RE = re.compile(
    r"\b(?:monatlich|täglich|jährlich|wöchentlich|taeglich|jaehrlich|woechentlich)(?:e|er|es|en|em)?\b"
    r"|(?:\bpro\b|\bje\b|/)\s*(?:kalender|arbeits(?=tag))?(?:monat|tag|jahr|woche)\b"
    # ("im Jahr 2025" names a year, not a basis)
    r"|\bim\s+(?:kalender|arbeits(?=tag))?(?:monat|tag|jahr|woche)\b(?!\s*(?:19|20)\d{2}\b)"
    r"|\b(?:mtl|monatl|tgl|tägl|taegl|jährl|jaehrl|wöchentl|woechentl|wtl)\b\.?"
    r"|\b(?:jahres|monats|tages|wochen)betrag\b", re.I)
# the abbreviations of a basis ("HBGl mtl. 2025?")
_BASIS_ABBREVIATIONS = {"mtl": "monatlich", "monatl": "monatlich", "tgl": "täglich", "taegl": "täglich",
                        "jaehrl": "jährlich", "woechentl": "wöchentlich", "wtl": "wöchentlich"}


_SECOND_AMOUNT_RE = re.compile(r"\([^()]*\d[^()]*\)")


def basis_of(*texts: str) -> str:
    """"monatlich", "täglich", "jährlich", "wöchentlich" named by a label or cell, else "". A second amount in
    parentheses says its own basis, not the value's ("€ 2.000,16 (€ 166,68 monatlich)" is a yearly amount)."""
    for text in texts:
        match = _BASIS_RE.search(_SECOND_AMOUNT_RE.sub(" ", text or ""))
        if match:
            word = fold_plain(match.group(0)).replace("kalender", "").strip(". ")
            if word in _BASIS_ABBREVIATIONS:
                return _BASIS_ABBREVIATIONS[word]
            for key in ("monat", "taeglich", "tag", "jaehrlich", "jahr", "woche"):
                if key in word:
                    return {"monat": "monatlich", "taeglich": "täglich", "tag": "täglich", "jaehrlich": "jährlich",
                            "jahr": "jährlich", "woche": "wöchentlich"}[key]
    return ""


def bases_of(text: str) -> frozenset:
    """Every basis a text names ("HBGL monatlich und täglich?" → {"monatlich", "täglich"})."""
    cleaned = _SECOND_AMOUNT_RE.sub(" ", text or "")
    return frozenset(filter(None, (basis_of(m.group(0)) for m in _BASIS_RE.finditer(cleaned))))


_PER_UNIT_RE = re.compile(r"(?:\bpro\b|\bje\b|/)\s*(?:km|kilometer|m²|m2|stunde)\b", re.I)


@lru_cache(maxsize=20_000)
def strip_basis(text: str) -> str:
    """The label without its basis ("monatlich", "pro Jahr") and per-unit words ("je km")."""
    rest = " ".join(_PER_UNIT_RE.sub(" ", _BASIS_RE.sub(" ", text or "")).split())
    return re.sub(r"\s*\(\s*\)", "", rest).strip()


_MULTIPLIER_RE = re.compile(r"(?<![\w,.])\d+(?:[.,]\d+)?\s*-?\s*fach(?:e[nmrs]?)?\b", re.I)


def variant_of(text: str) -> str:
    """The numbers of a label (thresholds, ranges, counts: "über € 13.308 bis € 21.617" → "13308-21617";
    "ab dem 16. Dienstjahr" → "16"), years removed; "" when it names none."""
    # a multiplier says how a value is derived, not which row it is ("Grenze für die Dienstgeberabgabe (1,5-fach)")
    rest = _MULTIPLIER_RE.sub(" ", strip_periods(text or ""))
    numbers = re.findall(r"(?<![^\W\d_])\d+(?:[.,]\d+)*(?![^\W\d_])", rest)
    cleaned = []
    for number in numbers:
        if re.fullmatch(r"\d{1,3}(?:\.\d{3})+", number):
            number = number.replace(".", "")
        cleaned.append(number.replace(",", "."))
    return "-".join(cleaned)


def abbreviations(synonyms: Iterable[tuple[str, str]] | None) -> dict[str, tuple[str, ...]]:
    """Abbreviations of the synonym table (a term in capitals, e.g. "DB", "HBGL", "GFB") → the folded, stemmed
    words of their first expansion."""
    out: dict[str, tuple[str, ...]] = {}
    for term, expansions in synonyms or ():
        term = (term or "").strip()
        first = (expansions or "").split(";")[0].strip()
        if not first or not re.fullmatch(r"[A-ZÄÖÜ][A-ZÄÖÜ0-9]{1,6}", term):
            continue
        out.setdefault(term, tuple(stems(first)))
    return out


def synonym_links(synonyms: Iterable[tuple[str, str]] | None) -> frozenset:
    """Pairs of words the synonym table gives as one another's only expansion ("Übernachtungspauschale" →
    "Nächtigungsgeld", "Tagesgeld" → "Taggeld"), as frozensets of two folded, stemmed words."""
    out = set()
    for term, expansions in synonyms or ():
        parts = [e.strip() for e in (expansions or "").split(";") if e.strip()]
        a, b = stems(term or ""), stems(parts[0]) if len(parts) == 1 else ()
        if len(word_tokens(term or "")) == 1 and len(a) == 1 and len(b) == 1 and a != b:
            out.add(frozenset((a[0], b[0])))
    return frozenset(out)


@lru_cache(maxsize=20_000)
def stems(text: str) -> tuple[str, ...]:
    """Folded, lightly stemmed content words (no stopwords, no numbers); a tuple (cached)."""
    out = []
    for word in word_tokens(fold_plain(text)):
        if word.isdigit() or len(word) < 2 or word in ANSWER_STOPWORDS:
            continue
        out.append(light_stem(word))
    return tuple(out)


# a truncated compound coordinated with another ("Alleinverdiener-/Alleinerzieherabsetzbetrag", "Urlaubs- und
# Weihnachtsgeld"): the row's value holds for each, so a question naming one of them names the label
_JOINER = r"\s*(?:/|,|\bbzw\.|\bund\b|\boder\b|\bsowie\b)\s*"
_COORDINATED_RE = re.compile(rf"(?<![\w-])((?:[^\W\d_]{{3,}}-{_JOINER})+)([^\W\d_]{{4,}})", re.I)
_TRUNCATED_RE = re.compile(rf"([^\W\d_]{{3,}})-{_JOINER}", re.I)


def _coordinated(text: str) -> tuple[str, list[str]]:
    """``text`` without its truncated coordinations, and each coordination as one key word of alternatives
    ("alleinverdi|alleinerzieherabsetzbetrag"), matched by :func:`words_match` part by part."""
    found: list[str] = []

    def one(match: re.Match) -> str:
        parts = [stems(word) for word in _TRUNCATED_RE.findall(match.group(1))] + [stems(match.group(2))]
        if all(len(p) == 1 for p in parts):
            found.append("|".join(p[0] for p in parts))
            return " "
        return match.group(0)
    return _COORDINATED_RE.sub(one, text), found


def concept_key(label: str, abbrev: Mapping[str, tuple[str, ...]] | None = None) -> frozenset[str]:
    """The key of a label: its words without years, basis, numbers and generic words, abbreviations written
    out ("DB 2018–2022" → {dienstgeberbeitrag}; "Geringfügigkeitsgrenze monatlich" → {geringfuegigkeitsgrenz});
    a truncated coordination is one word of alternatives (:func:`_coordinated`)."""
    text, words = _coordinated(strip_basis(strip_periods(label or "")))
    for raw in word_tokens(text):
        if abbrev and raw in abbrev:
            words.extend(abbrev[raw])
        else:
            words.extend(stems(raw))
    return frozenset(w for w in words if w not in GENERIC and w not in BASIS_WORDS)


def subject_words(title: str, tags: Iterable[str], abbrev: Mapping[str, tuple[str, ...]] | None = None) -> frozenset[str]:
    """The entry's subject: the concept words of its title and tags."""
    words = set(concept_key(title, abbrev))
    for tag in tags or ():
        words |= concept_key(tag, abbrev)
    return frozenset(words)


_ACRONYM_RE = re.compile(r"(?<![\w-])([A-ZÄÖÜ]{3,6})(?![\w-])")


def spells(acronym: str, word: str, min_part: int = 2) -> bool:
    """The parts of the compound ``word`` start with the letters of ``acronym`` in order ("kmb" /
    "kindermehrbetrag": Kinder-mehr-Betrag; "avab" / "alleinverdienerabsetzbetrag"); both folded."""
    if not acronym:
        return not word
    if not word or word[0] != acronym[0]:
        return False
    if len(acronym) == 1:
        return len(word) >= min_part
    return any(word[k] == acronym[1] and spells(acronym[1:], word[k:], min_part)
               for k in range(min_part, len(word) - min_part * (len(acronym) - 1) + 1))


def acronyms(labels: Iterable[str], words: Iterable[str], abbrev: Mapping[str, tuple[str, ...]] | None = None) -> dict:
    """{folded acronym: word} for the capitals (3 to 6 letters) of an entry's labels that the synonym table does not
    know and exactly one of the entry's own subject words spells out ("KMB" in an entry tagged
    "Kindermehrbetrag")."""
    pool = sorted(set(words))
    out = {}
    for label in labels:
        for raw in _ACRONYM_RE.findall(label or ""):
            if abbrev and raw in abbrev:
                continue
            short = fold_plain(raw)
            found = [w for w in pool if len(w) >= 3 * len(short) and spells(short, w)]
            if len(found) == 1:
                out[short] = found[0]
    return out


@lru_cache(maxsize=50_000)
def words_match(word: str, other: str) -> bool:
    """Two stemmed words name the same thing, compounds allowed: equal, one the head or the start of the other
    ("hoechstgrenz" / "jahreshoechstgrenz", "blockzeit" / "blockzeitvariant"), or one word's forms
    ("beschaeftigung" / "beschaeftigt")."""
    if word == other:
        return True
    if "|" in word or "|" in other:      # alternatives of a coordination (concept_key)
        return any(words_match(x, y) for x in word.split("|") for y in other.split("|"))
    short, long_ = sorted((word, other), key=len)
    if len(short) >= 5 and long_.endswith(short) or len(short) >= 6 and long_.startswith(short):
        return True
    common = 0
    for x, y in zip(word, other):
        if x != y:
            break
        common += 1
    # forms of one word differ in their endings only ("beschaeftigung" / "beschaeftigt"), or the shorter is the
    # other's start with an inflection ending ("verjaehrt" / "verjaehrungsfrist"); "arbeitsunfall" and
    # "arbeitsunfaehigkeit" share eleven letters and are two things
    return common >= 8 and common >= 0.8 * len(short) and (len(long_) - common <= 5
                                                           or short[common:] in _INFLECTION_ENDINGS)


_INFLECTION_ENDINGS = frozenset({"", "e", "en", "er", "es", "em", "n", "s", "t", "st", "et", "te", "ten"})


def match_keys(word: str) -> list[tuple[str, str]]:
    """Keys under which :func:`words_match` partners meet: two words that match share one of their keys (the
    word itself, its first six letters, its last five), so an index by these keys finds every partner."""
    if "|" in word:
        return [key for part in word.split("|") for key in match_keys(part)]
    keys = [("=", word)]
    if len(word) >= 6:
        keys.append(("<", word[:6]))
    if len(word) >= 5:
        keys.append((">", word[-5:]))
    return keys


def word_in(word: str, words: Iterable[str], near_threshold: float = 1.01) -> bool:
    """``word`` matches one of ``words`` (:func:`words_match`, or trigram similarity ≥ ``near_threshold``)."""
    return any(words_match(word, other) or near_threshold <= 1 and word_similarity(word, other) >= near_threshold
               for other in words)


@lru_cache(maxsize=20_000)
def _word_trigrams(word: str) -> frozenset:
    padded = f"  {word} "
    return frozenset(padded[i:i + 3] for i in range(len(padded) - 2))


@lru_cache(maxsize=100_000)
def word_similarity(a: str, b: str) -> float:
    """Dice coefficient of the character trigrams of two words."""
    ta, tb = _word_trigrams(a), _word_trigrams(b)
    return 2 * len(ta & tb) / (len(ta) + len(tb)) if ta and tb else 0.0


def trigrams(words: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for word in words:
        padded = f"  {word} "
        out.update(padded[i:i + 3] for i in range(len(padded) - 2))
    return out


def near(a: Iterable[str], b: Iterable[str]) -> float:
    """Similarity of two word sets by character trigrams (Dice): "jahreshoechstgrenz" ~ "hoechstgrenz"."""
    ta, tb = trigrams(a), trigrams(b)
    if not ta or not tb:
        return 0.0
    return 2 * len(ta & tb) / (len(ta) + len(tb))
