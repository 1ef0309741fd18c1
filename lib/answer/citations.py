"""Citations in an answer: ``[id]`` extraction, refusal detection, removal of ids not retrieved."""
from __future__ import annotations

import re
from typing import Iterable

from ..kb.format import ENTRY_ID
from .types import ordered_unique

_ID_RE = re.compile(ENTRY_ID, re.I)
CITATION_RE = re.compile(rf"\[\s*({ENTRY_ID}(?:\s*(?:[,;/]|\bund\b)\s*{ENTRY_ID})*)\s*\]", re.I)


def extract_citations(answer: str) -> list[str]:
    """Cited entry ids in order of first appearance, unique, lower-cased."""
    found = []
    for match in CITATION_RE.finditer(answer or ""):
        found.extend(i.lower() for i in _ID_RE.findall(match.group(1)))
    return ordered_unique(found)


_REFUSAL_RE = re.compile(
    r"(?:enth(?:ä|ae)lt\s+die\s+wissensbasis|die\s+wissensbasis\s+enth(?:ä|ae)lt)\s+"
    r"(?:[\w-]+\s+){0,2}?keine\s+(?:aussage|angabe|information)",
    re.I,
)


def is_refusal(answer: str) -> bool:
    """True when the answer says the knowledge base holds nothing on the question.

    The refusal sentence (or a close variant) must appear; an answer that also
    cites entries counts as a refusal only when it opens with that sentence.
    """
    text = re.sub(r"[*_>`#]", "", answer or "").strip()
    match = _REFUSAL_RE.search(text)
    if not match:
        return False
    if not extract_citations(text):
        return True
    return not re.search(r"[.!?\n]", text[: match.start()])


def strip_unknown_citations(answer: str, allowed: Iterable[str]) -> tuple[str, list[str]]:
    """Remove cited ids that were not retrieved, so what is shown cites only retrieved entries.

    A bracket with several ids keeps the allowed ones; a bracket with none left
    becomes "[nicht belegt]".  Returns the text and the removed ids (in order).
    """
    allowed_set = {a.lower() for a in allowed}
    removed: list[str] = []

    def fix(match: re.Match) -> str:
        ids = [i.lower() for i in _ID_RE.findall(match.group(1))]
        keep = [i for i in ids if i in allowed_set]
        removed.extend(i for i in ids if i not in allowed_set and i not in removed)
        if len(keep) == len(ids):
            return match.group(0)
        return "[" + ", ".join(keep) + "]" if keep else "[nicht belegt]"

    return CITATION_RE.sub(fix, answer or ""), removed
