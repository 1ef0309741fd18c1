"""Is a word a word of the base? The test the subject gate (lib/answer/gate) puts to a question's subject.

:func:`known_word` counts a word as known when the base writes it (or it without an inflection ending), when it is
the first or last part of a word of the base (a part of six letters or more also inside one), a compound of such
parts, a synonym-table term, or one letter off a word of the base (a typo). The lexicon's words are searched joined
in one string (one C-speed search instead of a loop over them).
"""
from __future__ import annotations

import re

from ..text.german import light_stem
from . import compounds

_MIN_PART = 5          # a compound counts as known when it splits into known words of five letters or more


# what a thing costs is no part of what it is ("Gratiswohnung", "Gratis-Parkplatz" is one word after folding)
_PRICE_PREFIX_RE = re.compile(r"(?:gratis|kostenlos|kostenfrei|verbilligt|zinslos|zinsfrei)(?:e[nrms]?)?")


def known_word(word: str, lexicon, synonym_terms=frozenset()) -> bool:
    """Is ``word`` (folded) a word of the base: itself or without an inflection ending, the first or last part of
    one of its words ("pendler" of "pendlerpauschale"; of six letters or more, a part inside one: "deckel" of
    "gedeckelt"), a compound of such parts (each of five letters or more:
    "kleinverdiener", not "kurz|arbeit"), a synonym-table term, or one letter off a word of the base (a typo)?"""
    counts = getattr(lexicon, "counts", lexicon)
    price = _PRICE_PREFIX_RE.match(word)
    if price and len(word) - price.end() >= 4:
        word = word[price.end():]       # "Gratiswohnung": a Wohnung at no price
    found = forms(word)
    if any(f in synonym_terms for f in found) or any(_part_known(f, counts) for f in found):
        return True
    if any(_compound_known(f, counts) for f in found):
        return True
    # a typo: one letter off a word of the base or off its beginning ("widereingliederungs")
    return len(word) >= 8 and any(_one_letter_off(f, known[:n]) for f in found for known in counts
                                  if known[:2] == f[:2] and len(known) >= len(f) - 1
                                  for n in {len(f) - 1, len(f), len(f) + 1})


def forms(word: str) -> set[str]:
    return {word, light_stem(word)} | {word[: -len(e)] for e in compounds.INFLECTIONS
                                       if word.endswith(e) and len(word) - len(e) >= 4}


def _part_known(part: str, counts) -> bool:
    if part in counts:
        return True
    words = _joined(counts)             # one C-speed search instead of a loop over the lexicon
    if len(part) >= 6:                  # inside one of them ("deckel" in "gedeckelt")
        return part in words
    return len(part) >= 4 and (f"\n{part}" in words or f"{part}\n" in words)


_JOINED: list = []       # (lexicon, its words joined), the last few: the base's and an answer's entries


def _joined(counts) -> str:
    """The lexicon's words, one per line between newlines (built once per lexicon: the last four are kept)."""
    for owner, words in _JOINED:
        if owner is counts:
            return words
    words = "\n" + "\n".join(counts) + "\n"
    _JOINED.insert(0, (counts, words))
    del _JOINED[4:]
    return words


def _compound_known(word: str, counts, depth: int = 0) -> bool:
    for cut in range(_MIN_PART, len(word) - 3):
        head, tail = word[:cut], word[cut:]
        heads = {head} | ({head[:-1]} if head[-1] in "sn" and len(head) > _MIN_PART else set())
        if any(_part_known(h, counts) for h in heads) and (
                _part_known(tail, counts) or (depth < 1 and _compound_known(tail, counts, depth + 1))):
            return True
    return False


def _one_letter_off(a: str, b: str) -> bool:
    """One letter inserted, dropped or replaced."""
    if a == b or abs(len(a) - len(b)) > 1:
        return a == b
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return a[i + 1:] == b[i + 1:] or a[i:] == b[i + 1:] or a[i + 1:] == b[i:]
