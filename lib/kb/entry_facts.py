"""One entry's plain data as the checks need it: conflict detection (answers and health check) and the health rules."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EntryFacts:
    """What conflict detection and the health check know about one entry (read from the database by the glue)."""

    entry_id: str
    title: str = ""
    stand: str = ""
    topic: str = ""
    legal_bases: list[str] = field(default_factory=list)
    kernwerte_text: str = ""
    cross_refs: list[str] = field(default_factory=list)
