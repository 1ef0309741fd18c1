"""German text preparation for full-text retrieval with PostgreSQL.

Three spaces of text appear in this module:

* **raw**: the entry or question as written (umlauts, ß, §, en dashes).
* **folded** (:func:`fold`): lower case, ä→ae ö→oe ü→ue ß→ss, accents
  stripped, dashes and quotes plain ASCII, and every § reference followed
  by a joined token (below). Lexicon, compound splitting, stopwords and
  synonyms all work in this space, so "Überstunden" and a typed
  "Ueberstunden" are the same word.
* **search form** (:func:`search_form`): what is handed to PostgreSQL's
  ``german`` configuration. Its Snowball stemmer removes umlaut accents
  itself ("Zuschläge" and "Zuschlag" both become ``zuschlag``) but does
  not know the ae/oe/ue spelling (PostgreSQL 15: "zuschlaege" stays
  ``zuschlaeg``). So every folded word is mapped ae→a, oe→o, ue→u before
  it leaves this module, except "ue" after q or after a vowel ("Quelle",
  "Steuer", "neue"). Index and query go through the same mapping, so they
  always meet; singular and umlaut plural meet in the stemmer.

§ references become tokens: "§ 67 Abs. 1 EStG" folds to
"67 abs 1 estg p67estg", "§§ 67 und 68 EStG" adds ``p67estg p68estg``,
and a bare "§ 67" adds ``p67``. PostgreSQL's parser keeps such a
letters-and-digits word whole, so a question naming "§ 67 EStG" matches
exactly that paragraph, not every "67".

Compounds: the corpus is its own dictionary. :func:`split_compound` finds
the segmentation of a word into the fewest known words (linking elements
-s, -es, -n, -en, -er, -e allowed between them). :func:`index_text` writes
the parts right after each compound, and :func:`build_query` ORs the parts
of every question word. Splitting on both sides covers both directions:
"Urlaubsersatzleistung" in the question finds "Ersatzleistung für Urlaub"
(query side split) and "Ersatzleistung für Urlaub" in the question finds an
entry that only writes "Urlaubsersatzleistung" (index side split). Nothing
joins adjacent words on the index side; hyphenated words
("Dienstgeber-Beitrag") are additionally written joined.

Stopwords: PostgreSQL drops its German stopwords only in their umlaut
spelling ("für"), not in the search form ("fur"), so this module removes
them itself, plus question words ("wie", "hoch", "welche", ...) in queries.
"""
from __future__ import annotations

import csv
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

# --------------------------------------------------------------------------- folding

_UMLAUT_PAIRS = (("ä", "ae"), ("ö", "oe"), ("ü", "ue"), ("ß", "ss"))
_PUNCT = {
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    **dict.fromkeys("\u201e\u201c\u201d\u201f\u00ab\u00bb\u2033", '"'),
    **dict.fromkeys("\u201a\u2018\u2019\u201b\u2039\u203a\u2032\u00b4\u0060", "'"),
}
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    """One non-ASCII character: plain dash/quote, or the letter without its accent."""
    if ch in _PUNCT:
        return _PUNCT[ch]
    return "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))


_LAW_CHARS = r"A-Za-zÄÖÜäöüß"
_NUM = r"\d+[a-z]?(?![\w])"
_NUM_JOIN = r"\s*(?:,|und|u\.|bis|sowie|oder|bzw\.|-|–)\s*"
_QUALIFIER = (
    r"(?:Abs\.?|Absatz|Z\.?|Ziffer|Zif\.|lit\.?|litera|Satz|S\.|Nr\.?|Pkt\.?|Punkt|Tz\.?|TZ|sublit\.?)"
)
_QUAL_VALUE = r"(?:\d+[a-z]?|[a-z])(?![\w])"
_PARA_RE = re.compile(
    r"§§?\s*"
    rf"(?P<nums>{_NUM}(?:{_NUM_JOIN}{_NUM})*)"
    r"(?:\s*ff?\.)?"
    rf"(?:\s*,?\s*{_QUALIFIER}\s*{_QUAL_VALUE}(?:{_NUM_JOIN}{_QUAL_VALUE})*)*"
    rf"(?:\s+(?P<law>[A-ZÄÖÜ][{_LAW_CHARS}]*(?:-[{_LAW_CHARS}]+)*))?"
)
_NUM_FIND = re.compile(r"\d+[a-z]?")


def _is_law_abbreviation(word: str) -> bool:
    """"EStG", "ASVG", "AngG", "B-KUVG": short, at least two capitals."""
    letters = word.replace("-", "")
    return 2 <= len(letters) <= 12 and sum(ch.isupper() for ch in letters) >= 2


def _paragraph_tokens(nums: str, law: str | None) -> list[str]:
    suffix = ""
    if law and _is_law_abbreviation(law):
        suffix = fold_plain(law.replace("-", ""))
    return [f"p{num}{suffix}" for num in _NUM_FIND.findall(nums)]


def _expand_paragraphs(text: str) -> str:
    """Drop the § sign and append one joined token per paragraph number."""
    if "§" not in text:
        return text

    def replace(match: re.Match) -> str:
        body = match.group(0).lstrip("§").strip()
        law = match.group("law")
        if law and not _is_law_abbreviation(law):
            # The capitalised word after the number is ordinary text.
            body = body[: len(body) - len(law)].rstrip()
            extra = " " + law
        else:
            extra = ""
        joined = " ".join(_paragraph_tokens(match.group("nums"), law))
        start = match.start()
        lead = " " if start > 0 and text[start - 1].isalnum() else ""
        return f"{lead}{body} {joined}{extra}"

    return _PARA_RE.sub(replace, text).replace("§", " ")


def fold(text: str) -> str:
    """Normalise German text for matching.

    Lower case; ä→ae, ö→oe, ü→ue, ß→ss; other accents stripped (é→e);
    dashes become "-", typographic quotes become '"' or "'"; § references
    gain a joined token ("§ 67 EStG" -> "67 estg p67estg", see the module
    docstring). Punctuation otherwise stays; :func:`tokens` picks the words.
    """
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", text)
    return _fold_lower(_expand_paragraphs(text).lower())


def fold_plain(text: str) -> str:
    """:func:`fold` without the § tokens: for keys, headings and words compared as written."""
    if not text:
        return ""
    return _fold_lower(unicodedata.normalize("NFKC", text).lower())


def _fold_lower(text: str) -> str:
    """Umlauts spelled out, accents stripped, dashes and quotes plain, in NFKC lower-case text."""
    if text.isascii():
        return text
    for umlaut, plain in _UMLAUT_PAIRS:
        text = text.replace(umlaut, plain)
    return _NON_ASCII_RE.sub(lambda m: _fold_char(m.group(0)), text)


_WORD_RE = re.compile(r"[a-z0-9]+")
_GROUP_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def tokens(text: str) -> list[str]:
    """The words ([a-z0-9]+) of the folded text, in order."""
    return _WORD_RE.findall(fold(text))


@lru_cache(maxsize=200_000)
def search_form(word: str) -> str:
    """Map one folded word to the spelling handed to PostgreSQL.

    ae→a, oe→o, ue→u, except "ue" after q or after a vowel ("quelle",
    "steuer", "neue" stay). See the module docstring for why.
    """
    if "e" not in word:
        return word
    return _SEARCH_FORM_RE.sub(lambda m: m.group(0)[0], word)


_SEARCH_FORM_RE = re.compile(r"ae|oe|(?<![aeiouyq])ue")

# --------------------------------------------------------------------------- stopwords

# PostgreSQL's German stopwords, folded (it drops them only when spelled
# with umlauts, so "fuer"/"fur" would otherwise become lexemes).
PG_GERMAN_STOPWORDS = frozenset("""
aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes anderm andern
anderr anders auch auf aus bei bin bis bist da damit dann der den des dem die das dass derselbe derselben
denselben desselben demselben dieselbe dieselben dasselbe dazu dein deine deinem deinen deiner deines denn derer
dessen dich dir du dies diese diesem diesen dieser dieses doch dort durch ein eine einem einen einer eines einig
einige einigem einigen einiger einiges einmal er ihn ihm es etwas euer eure eurem euren eurer eures fuer gegen
gewesen hab habe haben hat hatte hatten hier hin hinter ich mich mir ihr ihre ihrem ihren ihrer ihres euch im in
indem ins ist jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt kann kein keine keinem keinen
keiner keines koennen koennte machen man manche manchem manchen mancher manches mein meine meinem meinen meiner
meines mit muss musste nach nicht nichts noch nun nur ob oder ohne sehr sein seine seinem seinen seiner seines
selbst sich sie ihnen sind so solche solchem solchen solcher solches soll sollte sondern sonst ueber um und uns
unse unsem unsen unser unses unter viel vom von vor waehrend war waren warst was weg weil weiter welche welchem
welchen welcher welches wenn werde werden wie wieder will wir wird wirst wo wollen wollte wuerde wuerden zu zum
zur zwar zwischen
""".split())

# Words of questions that say nothing about the topic (folded).
QUESTION_STOPWORDS = frozenset("""
ab beim bitte bzw ca darf duerfen dabei dafuer daran darauf davon derzeit eigentlich erklaere erklaeren
erhaelt erhalte erhalten bekomme bekommt bekommen etc genau geben gibt gilt gelten geregelt heute hoch hoehe
jemand jemandem kommt kommen lang lange momentan muessen oft passiert regelt richtig sag sage sagen sei seien
soll sollen steht stehen stimmt usw viele vielen wann warum weshalb wieso wieviel wieviele wofuer womit woran
worauf worden wozu wurde wurden zb zusteht zustehen aktuell aktuelle aktuellen betraegt betragen unterschied
beispiel abs absatz lit ziffer vgl
""".split())

STOPWORDS = PG_GERMAN_STOPWORDS  # dropped on both the index and the query side

# --------------------------------------------------------------------------- lexicon and compounds

_FUGEN = ("s", "es", "n", "en", "er", "e")
_FUGE_LAST = frozenset(f[-1] for f in _FUGEN)
_MIN_PIECE = 3  # shortest raw substring tried as a part; Lexicon.is_part decides
_INFLECTIONS = ("s", "es", "n", "en", "e", "er", "ern", "em")


class Lexicon(Mapping):
    """Word (folded) -> number of occurrences in the corpus.

    It is the dictionary for compound splitting. ``min_part`` is the
    shortest part accepted; a shorter one needs ``short_part_count``
    occurrences (only possible when built with ``min_len`` below 4).
    Split results are cached on the instance: treat it as read-only once
    built (make a new one when the corpus changes), and keep one instance
    per process (a plain dict works too, but is re-indexed on every call).
    """

    def __init__(self, counts: Mapping[str, int] | None = None, *, min_count: int = 1,
                 min_part: int = 4, short_part_count: int = 50):
        self.counts: dict[str, int] = dict(counts or {})
        self.min_count = min_count
        self.min_part = min_part
        self.short_part_count = short_part_count
        self._split_cache: dict[str, tuple[str, ...]] = {}
        self._index_cache: dict[str, tuple[str, ...]] = {}
        self._parts: frozenset[str] | None = None
        self._prefixes: frozenset[str] | None = None

    def __getitem__(self, word: str) -> int:
        return self.counts[word]

    def __iter__(self) -> Iterator[str]:
        return iter(self.counts)

    def __len__(self) -> int:
        return len(self.counts)

    def part_set(self) -> frozenset[str]:
        """All words that may stand as a compound part (computed once)."""
        if self._parts is None:
            self._parts = frozenset(w for w in self.counts if self.is_part(w))
        return self._parts

    def part_prefixes(self) -> frozenset[str]:
        """First four letters (or the whole word if shorter) of every part."""
        if self._prefixes is None:
            self._prefixes = frozenset(w[:4] for w in self.part_set())
        return self._prefixes

    def is_part(self, word: str) -> bool:
        """True when ``word`` may stand as one part of a compound."""
        count = self.counts.get(word, 0)
        if count < self.min_count or word in STOPWORDS:
            return False
        if len(word) <= 4 and count < 2 * self.min_count:
            return False  # a short word seen once is more likely a fragment than a part
        return len(word) >= self.min_part or (len(word) >= 3 and count >= self.short_part_count)


def build_lexicon(texts: Iterable[str], min_len: int = 4) -> Lexicon:
    """Count the alphabetic folded words of at least ``min_len`` letters."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(w for w in tokens(text) if len(w) >= min_len and w.isalpha())
    return Lexicon(counts)


def _as_lexicon(lexicon: Mapping[str, int] | None) -> Lexicon:
    if isinstance(lexicon, Lexicon):
        return lexicon
    return Lexicon(lexicon or {})


def _head_forms(head: str) -> list[str]:
    """The words a non-final part may stand for: itself, minus a linking element, plus "e"."""
    forms = [head]
    for fuge in _FUGEN:
        if head.endswith(fuge) and len(head) > len(fuge):
            forms.append(head[: -len(fuge)])
    if len(head) >= 4:
        forms.append(head + "e")  # "Schul|buch" from "Schule"
    return forms


def _segment(word: str, lex: Lexicon) -> tuple[str, ...]:
    """Fewest known parts covering ``word`` (at least two), most frequent on ties; () if none.

    Dynamic programming from the end: ``best[i]`` is the best segmentation of
    ``word[i:]`` as (number of parts, minus the sum of log counts, parts).
    """
    n = len(word)
    parts = lex.part_set()
    prefixes = lex.part_prefixes()
    counts = lex.counts
    endings = [e for e in _INFLECTIONS if word.endswith(e)]
    best: list[tuple[int, float, tuple[str, ...]] | None] = [None] * (n + 1)
    solvable: list[int] = []  # positions i > 0 with best[i], in ascending order
    for start in range(n - _MIN_PIECE, -1, -1):
        if word[start:start + 4] not in prefixes and word[start:start + 3] not in prefixes:
            continue  # no known word begins here
        result = None
        if start >= _MIN_PIECE:
            tail = word[start:]
            for form in [tail] + [tail[: -len(e)] for e in endings if len(tail) > len(e)]:
                if form in parts:
                    result = (1, -math.log(counts[form]), (form,))
                    break
        for end in solvable:
            if end - start < _MIN_PIECE:
                continue
            rest = best[end]
            if result is not None and rest[0] + 1 > result[0]:
                continue
            head = word[start:end]
            if head in parts and head[-1] not in _FUGE_LAST:
                form = head  # the common case, without building the alternatives
            else:
                known = [f for f in _head_forms(head) if f in parts]
                if not known:
                    continue
                # "urlaubs" and "urlaub" may both be known: take the more frequent.
                form = max(known, key=counts.__getitem__)
            candidate = (rest[0] + 1, rest[1] - math.log(counts[form]), (form,) + rest[2])
            if result is None or candidate < result:
                result = candidate
        if result is not None:
            best[start] = result
            if start >= _MIN_PIECE:
                solvable.insert(0, start)
    found = best[0]
    if found is None or found[0] < 2:
        return ()
    return found[2]


def split_compound(word: str, lexicon: Mapping[str, int]) -> list[str]:
    """Split a German compound into known words of the corpus.

    ``word`` may be raw or folded; parts are folded words as found in the
    lexicon, linking elements removed: "ueberstundenzuschlaege" ->
    ["ueberstunden", "zuschlaege"], "urlaubsersatzleistung" -> ["urlaub",
    "ersatzleistung"]. The segmentation uses the fewest parts; among
    equals the one whose parts are most frequent. Every part is a lexicon
    word (``Lexicon.is_part``: at least 4 letters, not a stopword), so a
    part missing from the lexicon is split further or the word is left
    whole. The compound itself need not be in the lexicon (questions).
    Returns [] when no such split exists. Deterministic; cached per lexicon.
    """
    lex = _as_lexicon(lexicon)
    cached = lex._split_cache.get(word)
    if cached is None:
        folded = word if _WORD_RE.fullmatch(word) else "".join(tokens(word))
        if not folded.isalpha() or len(folded) < 2 * _MIN_PIECE:
            cached = ()
        else:
            cached = _segment(folded, lex)
        lex._split_cache[word] = cached
    return list(cached)


def _index_forms(word: str, lex: Lexicon) -> tuple[str, ...]:
    """Search forms written for one folded word: itself, then its compound parts."""
    cached = lex._index_cache.get(word)
    if cached is None:
        if word in STOPWORDS or search_form(word) in STOPWORDS:
            cached = ()
        else:
            out = [search_form(word)]
            if len(word) >= 2 * lex.min_part - 1 and word.isalpha():
                for part in split_compound(word, lex):
                    form = search_form(part)
                    if form not in out:
                        out.append(form)
            cached = tuple(out)
        lex._index_cache[word] = cached
    return cached


def index_text(text: str, lexicon: Mapping[str, int]) -> str:
    """Text for ``to_tsvector('german', …)``: search forms, compound parts inline.

    Every word of the folded text in its search form (stopwords dropped),
    each compound followed by its parts ("ueberstundenzuschlaege" ->
    "uberstundenzuschlage uberstunden zuschlage"), each hyphenated word
    also written joined ("dienstgeber-beitrag" -> "dienstgeber beitrag
    dienstgeberbeitrag"). Parts stay next to their compound so that
    ts_rank_cd's proximity is not distorted.
    """
    lex = _as_lexicon(lexicon)
    out: list[str] = []
    for group in _GROUP_RE.findall(fold(text)):
        if "-" not in group:
            out.extend(_index_forms(group, lex))
            continue
        pieces = [p for p in group.split("-") if p]
        for piece in pieces:
            out.extend(_index_forms(piece, lex))
        joined = "".join(pieces)
        if joined.isalpha():
            out.extend(_index_forms(joined, lex))
    return " ".join(out)

# --------------------------------------------------------------------------- synonyms


@dataclass(frozen=True)
class Synonym:
    """One row of the synonym table, prepared for matching."""

    term: str                          # as written in the table
    words: tuple[str, ...]             # folded words of the term
    case_sensitive: bool               # "AN" must not match the preposition "an"
    expansions: tuple[tuple[str, ...], ...]  # folded words of each expansion
    expansion_labels: tuple[str, ...]  # expansions as written


@dataclass
class SynonymTable:
    """Synonyms by first folded word; ``problems`` lists skipped rows (German)."""

    entries: list[Synonym] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.entries)

    def matches(self, raw: str, words: list[str], extra: Iterable[str] = ()) -> list[Synonym]:
        """Rows whose term occurs in a question.

        ``raw`` is the question as typed, ``words`` its folded words in order,
        ``extra`` further single words (compound parts, joined hyphen words).
        A one-word term also matches an inflected form ("Firmenautos").
        """
        found: list[Synonym] = []
        extra_words = set(extra)
        for syn in self.entries:
            if syn.case_sensitive:
                if re.search(rf"(?<![^\W_]){re.escape(syn.term)}(?![^\W_])", raw):
                    found.append(syn)
            elif _contains_sequence(words, syn.words) or (
                len(syn.words) == 1 and any(_same_word(w, syn.words[0]) for w in extra_words)
            ):
                found.append(syn)
        return found


def _same_word(word: str, term: str) -> bool:
    if word == term:
        return True
    return len(term) >= 4 and word.startswith(term) and word[len(term):] in _INFLECTIONS


def _contains_sequence(words: list[str], seq: tuple[str, ...]) -> bool:
    size = len(seq)
    for i in range(len(words) - size + 1):
        if all(words[i + j] == seq[j] for j in range(size - 1)) and _same_word(words[i + size - 1], seq[-1]):
            return True
    return False


def parse_synonyms(rows: Iterable[tuple[str, str]]) -> SynonymTable:
    """Build a :class:`SynonymTable` from (term, "expansion; expansion; …") rows.

    Terms and expansions stay human-readable in the table; they are folded
    here. A term whose folded form is a stopword ("AN") only matches as
    written, case-sensitively. Rows without a term or without an expansion
    are skipped and described in ``table.problems``; repeated terms merge.
    """
    table = SynonymTable()
    by_term: dict[tuple[str, ...], int] = {}
    for number, row in enumerate(rows, start=1):
        term, expansions = (list(row) + ["", ""])[:2]
        term = (term or "").strip()
        words = tuple(tokens(term))
        if not words:
            table.problems.append(
                f"Synonyme, Zeile {number}: Der Begriff ist leer. "
                "Bitte einen Begriff eintragen oder die Zeile löschen.")
            continue
        labels = [e.strip() for e in (expansions or "").split(";") if e.strip()]
        parsed = [(label, tuple(w for w in tokens(label) if w not in STOPWORDS)) for label in labels]
        parsed = [(label, ws) for label, ws in parsed if ws]
        if not parsed:
            table.problems.append(
                f"Synonyme, Zeile {number} ('{term}'): Es ist keine Erweiterung angegeben. "
                "Bitte Erweiterungen durch Strichpunkt getrennt eintragen.")
            continue
        case_sensitive = len(words) == 1 and words[0] in STOPWORDS | QUESTION_STOPWORDS
        key = words if not case_sensitive else (term,)
        if key in by_term:
            old = table.entries[by_term[key]]
            new_labels = [(lab, ws) for lab, ws in parsed if ws not in old.expansions]
            table.entries[by_term[key]] = Synonym(
                old.term, old.words, old.case_sensitive,
                old.expansions + tuple(ws for _, ws in new_labels),
                old.expansion_labels + tuple(lab for lab, _ in new_labels))
            continue
        by_term[key] = len(table.entries)
        table.entries.append(Synonym(term, words, case_sensitive,
                                     tuple(ws for _, ws in parsed), tuple(lab for lab, _ in parsed)))
    return table


def load_synonyms_csv(path: str) -> list[tuple[str, str]]:
    """Read (term, expansions) rows from an Odoo data CSV with header id,term,expansions."""
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"term", "expansions"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(
                f"Die Synonymdatei {path} hat keine Spalte(n) {', '.join(sorted(missing))}. "
                "Erwartet wird die Kopfzeile id,term,expansions.")
        return [(row["term"] or "", row["expansions"] or "") for row in reader]

# --------------------------------------------------------------------------- queries

_VALUE_PHRASES = (("wie", "hoch"), ("wie", "viel"), ("wie", "viele"), ("wie", "lange"), ("wie", "lang"),
                  ("wie", "oft"), ("bis", "wann"), ("ab", "wann"), ("seit", "wann"), ("in", "welcher", "hoehe"))
_VALUE_WORDS = frozenset("""
wieviel wieviele betrag betraege betraegt hoehe frist fristen prozent prozentsatz satz saetze grenze grenzen
wann stichtag termin faellig faelligkeit euro eur wert werte quote hoechstens mindestens maximal minimal
limit dauer dauert anzahl hoechstbetrag mindestbetrag freibetrag freigrenze
""".split())
_VALUE_SUFFIXES = ("grenze", "grenzen", "frist", "fristen", "satz", "saetze", "betrag", "betraege",
                   "quote", "wert", "werte", "hoehe", "dauer")


def _is_value_question(raw: str, words: list[str]) -> bool:
    """Does the question ask for an amount, rate, limit, duration or deadline?"""
    if "%" in raw or "€" in raw:
        return True
    for i, word in enumerate(words):
        if word in _VALUE_WORDS:
            return True
        if word.endswith(_VALUE_SUFFIXES) and not word.endswith("ersatz"):
            return True
        for phrase in _VALUE_PHRASES:
            if tuple(words[i:i + len(phrase)]) == phrase:
                return True
    return False


@dataclass
class QueryPlan:
    """What :func:`build_query` made of a question.

    ``tsquery`` is safe for ``to_tsquery('german', %s)`` ("" = no full-text
    query). ``terms``, ``parts`` and ``expansions`` are folded words, shown
    for diagnostics; ``synonyms`` names the table terms that matched.
    """

    tsquery: str
    terms: list[str]
    parts: list[str]
    expansions: list[str]
    synonyms: list[str]
    is_value_question: bool


def _query_atom(word: str, prefix_min: int) -> str:
    form = search_form(word)
    if prefix_min and form.isalpha() and len(form) >= prefix_min:
        return form + ":*"
    return form


def _is_query_term(word: str) -> bool:
    if word in STOPWORDS or word in QUESTION_STOPWORDS or search_form(word) in STOPWORDS:
        return False
    return len(word) >= 2   # words and numbers alike: single letters and digits carry no meaning


def build_query(question: str, lexicon: Mapping[str, int] | None, synonyms: SynonymTable | None, *,
                prefix_min: int = 6, max_atoms: int = 40) -> QueryPlan:
    """Turn a question into an OR query for PostgreSQL's ``german`` configuration.

    Question words minus stopwords, the compound parts of each, joined
    hyphen words, and synonym expansions (a multi-word expansion is an AND
    group inside the OR). Words of at least ``prefix_min`` letters are
    prefix-matched (``:*``). The result only holds [a-z0-9] words, ``|``,
    ``&``, parentheses and ``:*``, so it never fails to parse; at most
    ``max_atoms`` words are used, in the order terms, parts, expansions.
    """
    raw = question or ""
    lex = _as_lexicon(lexicon)
    folded = fold(raw)
    words = _WORD_RE.findall(folded)
    terms: list[str] = []
    parts: list[str] = []
    joined: list[str] = []
    for group in _GROUP_RE.findall(folded):
        pieces = [p for p in group.split("-") if p]
        if len(pieces) > 1 and "".join(pieces).isalpha():
            joined.append("".join(pieces))
        for piece in pieces:
            if _is_query_term(piece) and piece not in terms:
                terms.append(piece)
    for word in joined:
        if word not in terms:
            terms.append(word)
    for word in terms:
        if word.isalpha() and len(word) >= 2 * lex.min_part - 1:
            for part in split_compound(word, lex):
                if part not in terms and part not in parts:
                    parts.append(part)

    groups: list[tuple[str, ...]] = []
    matched: list[str] = []
    if synonyms is not None:
        for syn in synonyms.matches(raw, words, extra=[*terms, *parts]):
            matched.append(syn.term)
            for expansion in syn.expansions:
                if expansion not in groups:
                    groups.append(expansion)

    atoms: list[str] = []
    seen: set[str] = set()

    def add(atom: str) -> None:
        if atom not in seen and len(seen) < max_atoms:
            seen.add(atom)
            atoms.append(atom)

    for word in [*terms, *parts]:
        add(_query_atom(word, prefix_min))
    expansions: list[str] = []
    for group in groups:
        pieces = [_query_atom(w, prefix_min) for w in group]
        add(pieces[0] if len(pieces) == 1 else "(" + " & ".join(pieces) + ")")
        expansions.append(" ".join(group))

    return QueryPlan(
        tsquery=" | ".join(atoms),
        terms=terms,
        parts=parts,
        expansions=expansions,
        synonyms=matched,
        is_value_question=_is_value_question(raw, words),
    )


# --------------------------------------------------------------------------- pruning by document frequency

def tsquery_atoms(tsquery: str) -> list[str]:
    """The top-level OR atoms of a :func:`build_query` tsquery (a word, ``word:*`` or an AND group)."""
    return [atom.strip() for atom in (tsquery or "").split(" | ") if atom.strip()]


def atom_words(atom: str) -> list[tuple[str, bool]]:
    """(word, is_prefix) pairs of one atom."""
    return [(w.rstrip(":*"), w.endswith(":*")) for w in re.findall(r"[a-z0-9]+(?::\*)?", atom)]


def prune_tsquery(tsquery: str, df_ratio: Callable[[str, bool], float], *, max_ratio: float = 0.15,
                  keep_min: int = 2, budget: float = 1.0) -> str:
    """Keep the rare, telling OR atoms of a query; drop the common ones.

    An OR query over every question word matches most of the base through its
    common words; ranking all those rows is what makes full text slow at
    100,000 chunks, and the common words carry little evidence (the idea of
    IDF).  ``df_ratio(word, is_prefix)`` gives the share of chunks containing
    the word; an AND group counts with its rarest word.  Atoms are taken from
    the rarest up while each matches at most ``max_ratio`` of the chunks and
    their shares add up to at most ``budget`` (so the rows to rank stay
    bounded); the ``keep_min`` rarest atoms that match anything always stay.
    Atoms that match nothing are dropped (they add nothing).
    """
    atoms = tsquery_atoms(tsquery)
    if len(atoms) <= keep_min:
        return tsquery
    # a single word: its own share; an AND group matches at most as often as its rarest word
    ratios = [min((df_ratio(w, p) for w, p in atom_words(atom)), default=1.0) for atom in atoms]
    matching = sorted((i for i in range(len(atoms)) if ratios[i] > 0), key=lambda i: (ratios[i], i))
    if not matching:
        return tsquery
    kept: list[int] = []
    total = 0.0
    for i in matching:
        if len(kept) >= keep_min and (ratios[i] > max_ratio or total + ratios[i] > budget):
            break
        kept.append(i)
        total += ratios[i]
    return " | ".join(atoms[i] for i in sorted(kept))


# --------------------------------------------------------------------------- words of the answer engine

# Conflict keys, Notbetrieb passages and follow-up questions compare words as written (fold_plain),
# lightly stemmed, without the question stopwords below.
_PLAIN_WORD_RE = re.compile(r"[^\W_]+")


def light_stem(token: str) -> str:
    """Very light German suffix stripping (at most two suffixes, keeps 4 chars)."""
    for _ in range(2):
        for suffix in ("en", "er", "es", "e", "n", "s"):
            if token.endswith(suffix) and len(token) - len(suffix) >= 4:
                token = token[: -len(suffix)]
                break
        else:
            break
    return token


# Function and question words the answer engine ignores (a superset of the question words, with umlauts).
ANSWER_STOPWORDS = frozenset(
    fold_plain(w)
    for w in """
    der die das des dem den ein eine einer eines einem einen und oder aber auch als
    am an auf aus bei bis durch für gegen im in ins mit nach ob ohne pro je seit um
    unter über von vom vor zu zum zur bzw sowie wenn dass daß so wie was wann wer wo
    welche welcher welches welchen welchem warum wieso weshalb woher wohin wieviel
    wieviele ist sind war waren wird werden wurde wurden sein kann können muss müssen
    darf dürfen soll sollen sollte gilt gelten galt gibt geben gab hat haben hatte
    beträgt betragen hoch viel viele lange genau bitte mir mich ich man wir uns sie
    es er ihn ihm ihr ihre sich nicht noch nur schon da dann dort hier dies diese
    dieser dieses diesem diesen dazu dafür dabei davon damit darauf darüber daran
    darin hierzu hierfür hierbei ebenso ebenfalls dasselbe derselbe dieselbe denn
    doch mal etwa ab zwischen alle allen aller jeweils einmal gleich gleichem neu
    """.split()
)


def word_tokens(text: str) -> list[str]:
    """Words as written (letters and digits, any script), in order."""
    return _PLAIN_WORD_RE.findall(text or "")


def content_words(tokens: list[str]) -> list[str]:
    """Tokens of at least three letters that are neither numbers nor :data:`ANSWER_STOPWORDS`."""
    return [t for t in tokens if len(t) >= 3 and not t.isdigit() and fold_plain(t) not in ANSWER_STOPWORDS]

