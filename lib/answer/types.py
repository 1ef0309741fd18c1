"""The data the answer modules pass to each other, the refusal sentence and two small helpers.

A module of its own so that prompt, validation and conflicts do not import each other
in a circle (validation needs :class:`Conflict`, so does the prompt).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from ..kb.entry_facts import EntryFacts  # noqa: F401 - the one entry record, shared with the health check

REFUSAL_TEXT = "Dazu enthält die Wissensbasis keine Aussage."

# Violation codes that only warn: ``Validation.ok`` ignores them.
WARNING_CODES = frozenset({"missing_stand", "conflict_unmarked"})


# --------------------------------------------------------------------------- data


@dataclass
class ContextBlock:
    """One retrieved chunk of an entry, as shown to the model."""

    entry_id: str
    title: str
    stand: str
    topic: str
    source: str
    heading_path: str
    text: str
    section_key: str
    score: float = 0.0
    expansion: bool = False
    rank_in_entry: int = 0      # 0 = the entry's section that answers the question best (see prompt.pick_blocks)
    priority: int = 0           # set by prompt.pick_blocks when the window is small: lower is kept first


@dataclass
class Conflict:
    """Entries whose Kernwerte give different values for the same key."""

    key: str
    entry_ids: list[str]
    values: dict[str, str]
    stands: dict[str, str]


@dataclass
class Violation:
    """One broken rule in an answer; ``detail`` names the id, value or sentence."""

    code: str
    detail: str


@dataclass
class Validation:
    """Result of :func:`validate_answer`."""

    cited_ids: list[str]
    violations: list[Violation]
    refused: bool

    @property
    def ok(self) -> bool:
        """True when no violation other than a warning-level one was found."""
        return all(v.code in WARNING_CODES for v in self.violations)



def short(text: str, limit: int = 160) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def ordered_unique(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out

