"""German compounds: the corpus as the dictionary, compound splitting, and the text written to the index.

The corpus is its own dictionary. :func:`split_compound` finds the segmentation of a word into
the fewest known words (linking elements -s, -es, -n, -en, -er, -e allowed between them).
:func:`index_text` writes the parts right after each compound, and :func:`fulltext.build_query` ORs
the parts of every question word. Splitting on both sides covers both directions:
"Urlaubsersatzleistung" in the question finds "Ersatzleistung für Urlaub" (query side split) and
"Ersatzleistung für Urlaub" in the question finds an entry that only writes "Urlaubsersatzleistung"
(index side split). Nothing joins adjacent words on the index side; hyphenated words
("Dienstgeber-Beitrag") are additionally written joined. Words are folded with :mod:`text_de`.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping

from ..text.german import STOPWORDS, WORD_GROUP_RE, WORD_RE, fold, search_form, tokens

_FUGEN = ("s", "es", "n", "en", "er", "e")
_FUGE_LAST = frozenset(f[-1] for f in _FUGEN)
_MIN_PIECE = 3  # shortest raw substring tried as a part; Lexicon.is_part decides
INFLECTIONS = ("s", "es", "n", "en", "e", "er", "ern", "em")


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


def as_lexicon(lexicon: Mapping[str, int] | None) -> Lexicon:
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
    endings = [e for e in INFLECTIONS if word.endswith(e)]
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
    lex = as_lexicon(lexicon)
    cached = lex._split_cache.get(word)
    if cached is None:
        folded = word if WORD_RE.fullmatch(word) else "".join(tokens(word))
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
    lex = as_lexicon(lexicon)
    out: list[str] = []
    for group in WORD_GROUP_RE.findall(fold(text)):
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
