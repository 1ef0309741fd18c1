"""Which years the facts cover: values for the coming year still missing (the work of every December), and
facts that name no year at all.

From a reference date in the fourth quarter on (the month and day are a setting, default 1 October), a
concept that has values for the last year and the current one but none that covers the next is reported:
"Geringfügigkeitsgrenze monatlich: 2025 und 2026 vorhanden, 2027 fehlt". A value "ab 2026" covers 2027 and
is not reported.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from .compare import same_concept, topic_common_words
from .extract import Fact


@dataclass
class Gap:
    """A concept (its facts, newest first) whose value for ``year`` is missing."""

    year: int
    facts: list[Fact]

    @property
    def entry_ids(self) -> list[str]:
        return sorted({f.entry_id for f in self.facts})

    @property
    def concept(self) -> str:
        return self.facts[0].concept


def _groups(facts: list[Fact]) -> list[list[Fact]]:
    """Facts of one concept (same entry and key/basis/variant, or the same concept in another entry). A fact joins
    the first group whose head it matches; only groups of its topic or of its key can match (``same_concept``
    needs one of them), so only those are tried."""
    common = topic_common_words(facts)
    groups: list[list[Fact]] = []
    by_topic: dict[str, list[int]] = {}
    by_key: dict[frozenset, list[int]] = {}
    for fact in facts:
        tried = sorted(set(by_topic.get(fact.topic, []) if fact.topic else []) | set(by_key.get(fact.key, [])))
        for index in tried:
            head = groups[index][0]
            if (head.entry_id == fact.entry_id and head.key == fact.key and head.basis == fact.basis
                    and head.variant == fact.variant) or same_concept(head, fact, common):
                groups[index].append(fact)
                break
        else:
            groups.append([fact])
            if fact.topic:
                by_topic.setdefault(fact.topic, []).append(len(groups) - 1)
            by_key.setdefault(fact.key, []).append(len(groups) - 1)
    return groups


def in_season(today: dt.date, month: int = 10, day: int = 1) -> bool:
    return (today.month, today.day) >= (month, day)


def missing_next_year(facts: list[Fact], today: dt.date, month: int = 10, day: int = 1) -> list[Gap]:
    """Concepts with explicit values for last year and this year and none covering the next (from the date
    ``month``/``day`` of the year on; before it: nothing)."""
    if not in_season(today, month, day):
        return []
    year = today.year
    dated = [f for f in facts if f.period.explicit and f.value.has_value and not f.is_reference]
    gaps = []
    for group in _groups(dated):
        if not all(any(f.period.covers(y) for f in group) for y in (year - 1, year)):
            continue
        if any(f.period.covers(year + 1) for f in group):
            continue
        gaps.append(Gap(year + 1, sorted(group, key=lambda f: -f.period.newest)))
    return gaps


def without_year(facts: list[Fact]) -> dict[str, list[Fact]]:
    """Per entry, its amounts and rates (€, %) whose text, table and title name no period."""
    out: dict[str, list[Fact]] = {}
    for fact in facts:
        if not fact.period.explicit and fact.value.unit in ("€", "%") and not fact.is_reference:
            out.setdefault(fact.entry_id, []).append(fact)
    return out
