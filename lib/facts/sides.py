"""Which side a question asks for: the party of an employment ("der Anteil des Dienstgebers") and the side of an
event ("vor der Geburt"), against the concept key and the row label of a fact. Pure; nothing here imports Odoo.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from ..text.german import fold_plain, light_stem
from .extract import Fact
from .question import Question

# the two parties of an employment: a question that names only one of them asks for that party's value
_PARTY_STEMS = (("dienstnehm", "arbeitnehm"), ("dienstgeb", "arbeitgeb"))


def _parties(words: Iterable[str]) -> set[int]:
    return {side for word in words for side, stems in enumerate(_PARTY_STEMS) if word.startswith(stems)}


def other_party(question: Question, fact: Fact) -> bool:
    """The question names one party ("der Anteil des Dienstgebers") and the fact's concept only the other
    ("Dienstnehmeranteil gesamt"): another value, though "Anteil" names the compound's head."""
    asked = set()
    for alternatives in question.words:
        asked |= _parties(alternatives)
    held = _parties(fact.key)
    return len(asked) == 1 and len(held) == 1 and not asked & held


# a row that says on which side of an event it holds ("Schutzfrist vor der Geburt" / "… nach der Geburt")
_SIDE_RE = re.compile(r"\b(vor|nach)\s+(?:der|dem|den)\s+(\w+)")


def _sides(text: str) -> set[tuple[str, str]]:
    return {(m.group(1), light_stem(m.group(2))) for m in _SIDE_RE.finditer(fold_plain(text or "").lower())}


def on_the_side(question: Question, group: list[Fact]) -> list[Fact]:
    """The rows of ``group`` on the side of the event the question names ("vor der Geburt"), when others name the
    other side: the stop words "vor" and "nach" fall out of the concept words that tell the rows apart."""
    asked = _sides(question.text)
    if not asked:
        return group
    kept = [f for f in group if not _sides(f.label) or _sides(f.label) & asked]
    return kept or group
