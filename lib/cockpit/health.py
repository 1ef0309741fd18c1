"""Health check of the whole knowledge base: what a curator must look at.

Computed from plain data (no Odoo import). The kinds of findings are one table, :data:`FINDING_KINDS`: the
stored findings' selection, the cockpit's order and the documentation read it. Adding a kind: a row there, the
function that finds it (called by :func:`run_checks`), its German label in ``i18n/de.po`` and its line in
``docs/cockpit.md`` (a test checks the last three against the table).

Every finding carries a stable ``key``: a re-run finds the same key and updates the stored
finding instead of adding another one; a key no longer found means the finding is resolved.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..kb.entry_facts import EntryFacts


@dataclass(frozen=True)
class FindingKind:
    """One kind of finding: ``key`` (stored), ``label`` (English source of the selection's label; German in
    i18n/de.po) and what it means."""

    key: str
    label: str
    meaning: str


FINDING_KINDS = (
    FindingKind("conflict", "Conflict",
                "The same fact (concept, year or period, basis, variant) with different values in two entries (the "
                "fact comparison, lib/facts/compare.py, run over the whole base); each side's value, entry and Stand."),
    FindingKind("stale", "Outdated",
                "Stand older than a configurable age, or older than a newer entry that gives another value for "
                "a later period of the same fact, or the older side of a conflict; the values of both sides."),
    FindingKind("next_year", "Coming year missing",
                "From a configurable month of the fourth quarter on: a fact with values for last year and this "
                "year but none for the next."),
    FindingKind("no_year", "Value without year",
                "Amounts and rates of an entry whose text, table and title name no year or period (read as of "
                "the entry's Stand)."),
    FindingKind("dangling_ref", "Dangling reference", "A cross reference to an id that is not in the base."),
    FindingKind("oneway_ref", "One-way reference",
                "A cross reference the target does not return (a hint, not an error)."),
    FindingKind("near_duplicate", "Near-duplicate",
                "Two entries whose summaries are nearly the same by meaning and that do not reference each other "
                "(pairs come from the database's vector index)."),
    FindingKind("embedding", "Embedding",
                "Entries without any embedding, sections whose embedding failed or was cut at the model's context."),
    FindingKind("unretrieved", "Never retrieved",
                "Entries no logged question retrieved within the window (only once the log holds enough "
                "questions)."),
)
KINDS = tuple(kind.key for kind in FINDING_KINDS)
assert len(set(KINDS)) == len(KINDS), "a finding kind is declared twice"
SEVERITIES = ("high", "medium", "low", "info")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}

_STAND_RE = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")


@dataclass
class EmbeddingInfo:
    """Embedding state of one entry's sections."""

    entry_id: str
    sections: int = 0
    embedded: int = 0
    failed: list[str] = field(default_factory=list)   # headings of sections whose embedding failed
    cut: list[str] = field(default_factory=list)      # headings of sections cut at the model's context


MAX_KEY_CHARS = 240


@dataclass
class Finding:
    kind: str
    severity: str
    entry_ids: list[str]
    key: str
    message: str

    def __post_init__(self):
        assert self.kind in KINDS, self.kind
        assert self.severity in SEVERITIES, self.severity
        if len(self.key) > MAX_KEY_CHARS:
            # a conflict among hundreds of entries names them all: the stored key (a unique, indexed column;
            # PostgreSQL's btree takes at most ~2,700 bytes a row) keeps its head and a digest of the whole
            digest = hashlib.sha256(self.key.encode()).hexdigest()
            self.key = f"{self.key[:MAX_KEY_CHARS - len(digest) - 1]}#{digest}"


@dataclass
class Options:
    max_age_months: int = 36          # 0 = no age rule
    near_duplicate_threshold: float = 0.95
    unretrieved_min_questions: int = 50   # the rule waits for a log of at least this many questions
    today: dt.date | None = None


# --------------------------------------------------------------------------- helpers


def stand_month(stand: str) -> tuple[int, int] | None:
    match = _STAND_RE.match((stand or "").strip())
    if not match:
        return None
    return int(match.group(1)), int(match.group(2))


def months_between(stand: str, today: dt.date) -> int | None:
    month = stand_month(stand)
    if not month:
        return None
    return (today.year - month[0]) * 12 + (today.month - month[1])


def _fold_key(text: str) -> str:
    return " ".join(re.sub(r"[^\w%€]+", " ", (text or "").lower()).split())


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


# --------------------------------------------------------------------------- the fact comparison's pairs


@dataclass
class FactConflict:
    """A conflicting or outdated pair of the fact comparison as the rules below read it (like the answer
    engine's ``Conflict``); ``values`` hold each side's period and value, ``kind`` "conflict" or "outdated"
    (the first side is then the older one)."""

    key: str
    entry_ids: list[str]
    values: dict[str, str]
    stands: dict[str, str]
    kind: str = "conflict"


def _side_value(fact) -> str:
    when = fact.period.label() if fact.period.explicit else "ohne Jahresangabe"
    return f"{when}: {fact.text}"


def fact_conflicts(pairs: Iterable) -> list[FactConflict]:
    """One record per kind, entry pair and concept (lib/facts/compare.Pair), the newest value of the newer
    side for an outdated pair."""
    out: dict[tuple, FactConflict] = {}
    for pair in pairs:
        first, second = pair.first, pair.second
        concept = first.concept
        key = (pair.kind, first.entry_id, second.entry_id, _fold_key(concept))
        known = out.get(key)
        if known is not None and pair.kind == "outdated":
            if second.period.newest > int(known.values.get("_newest", "0")):
                known.values[second.entry_id] = _side_value(second)
                known.values["_newest"] = str(second.period.newest)
            continue
        if known is not None:
            continue
        values = {first.entry_id: _side_value(first), second.entry_id: _side_value(second),
                  "_newest": str(second.period.newest)}
        out[key] = FactConflict(concept, [first.entry_id, second.entry_id], values,
                                {first.entry_id: first.stand, second.entry_id: second.stand}, pair.kind)
    for record in out.values():
        record.values.pop("_newest", None)
    return list(out.values())


def next_year_findings(gaps: Iterable) -> list[Finding]:
    """"Value for the coming year missing" (lib/facts/coverage.missing_next_year)."""
    findings = []
    for gap in gaps:
        ids = gap.entry_ids
        have = "; ".join(f"[{f.entry_id}] {f.period.label()}: {f.text}" for f in gap.facts[:4])
        findings.append(Finding(
            "next_year", "medium", ids, f"next_year:{gap.year}:{_fold_key(gap.concept)}:{','.join(ids)}",
            f"Für „{gap.concept}“ fehlt der Wert für {gap.year} ({have}). Bitte den kundgemachten Wert "
            f"ergänzen."))
    return findings


def no_year_findings(by_entry: dict) -> list[Finding]:
    """One note per entry whose amounts and rates name no year (lib/facts/coverage.without_year)."""
    findings = []
    for entry_id in sorted(by_entry):
        facts = by_entry[entry_id]
        shown = ", ".join(f"„{f.concept}“ {f.text}" for f in facts[:3]) + (" …" if len(facts) > 3 else "")
        findings.append(Finding(
            "no_year", "info", [entry_id], f"no_year:{entry_id}",
            f"[{entry_id}] nennt {len(facts)} Wert(e) ohne Jahr ({shown}); sie gelten als Stand {facts[0].stand}. "
            "Ein Jahr in der Tabelle macht den Vergleich mit anderen Einträgen und Jahren sicher."))
    return findings


# --------------------------------------------------------------------------- finding kinds


def conflict_findings(entries: list[EntryFacts], detect: Callable) -> tuple[list[Finding], list]:
    """Conflicts across the whole base; ``detect`` is the answer engine's ``detect_conflicts``."""
    conflicts = detect(entries)
    findings = []
    for conflict in conflicts:
        if getattr(conflict, "kind", "conflict") != "conflict":
            continue      # an outdated pair of the fact comparison: the older side is stale (below)
        ids = sorted(conflict.entry_ids)
        sides = "; ".join(f"[{i}] (Stand {conflict.stands.get(i, '?')}): {conflict.values.get(i, '–')}"
                          for i in conflict.entry_ids)
        findings.append(Finding(
            "conflict", "high", ids, f"conflict:{','.join(ids)}:{_fold_key(conflict.key)}",
            f"Widerspruch bei „{conflict.key}“: {sides}. Bitte klären, welcher Wert gilt, und den anderen "
            "Eintrag korrigieren oder als Vorgeschichte kennzeichnen."))
    return findings, conflicts


def stale_findings(entries: list[EntryFacts], conflicts: Iterable, options: Options) -> list[Finding]:
    """One finding per stale entry: too old, or superseded by a newer conflicting entry."""
    today = options.today or dt.date.today()
    reasons: dict[str, list[str]] = {}
    superseded: set[str] = set()
    for conflict in conflicts:
        stands = {i: conflict.stands.get(i) or "" for i in conflict.entry_ids}
        newest = max(stands.values())
        newer = sorted(i for i, s in stands.items() if s == newest)
        current = {conflict.values.get(i) for i in newer}
        for entry_id, stand in stands.items():
            if stand < newest and conflict.values.get(entry_id) not in current:
                superseded.add(entry_id)
                text = (f"älter als {', '.join(f'[{n}]' for n in newer)} (Stand {newest}), das für "
                        f"„{conflict.key}“ einen anderen Wert nennt")
                if getattr(conflict, "kind", None):     # the fact comparison names the values of both sides
                    text += (f" ({', '.join(conflict.values.get(n, '') for n in newer)}; hier "
                             f"{conflict.values.get(entry_id, '–')})")
                if text not in reasons.setdefault(entry_id, []):
                    reasons[entry_id].append(text)
    if options.max_age_months:
        for entry in entries:
            age = months_between(entry.stand, today)
            if age is not None and age > options.max_age_months:
                reasons.setdefault(entry.entry_id, []).insert(
                    0, f"Stand {entry.stand} ist {age} Monate alt (Grenze {options.max_age_months} Monate)")
    findings = []
    for entry_id in sorted(reasons):
        findings.append(Finding(
            "stale", "medium" if entry_id in superseded else "low", [entry_id], f"stale:{entry_id}",
            f"[{entry_id}] ist möglicherweise veraltet: " + "; ".join(reasons[entry_id]) + "."))
    return findings


def reference_findings(entries: list[EntryFacts], known_ids: set[str] | None = None) -> list[Finding]:
    """Dangling references (to ids not in the base) and one-way references (not returned)."""
    refs = {e.entry_id: [r for r in e.cross_refs if r and r != e.entry_id] for e in entries}
    known = set(known_ids) if known_ids is not None else set(refs)
    findings = []
    for entry_id in sorted(refs):
        for ref in dict.fromkeys(refs[entry_id]):
            if ref not in known:
                findings.append(Finding(
                    "dangling_ref", "medium", [entry_id], f"dangling_ref:{entry_id}:{ref}",
                    f"[{entry_id}] verweist auf „{ref}“, das es in der Wissensbasis nicht (mehr) gibt. "
                    "Verweis korrigieren oder den Eintrag liefern."))
            elif ref in refs and entry_id not in refs[ref]:
                findings.append(Finding(
                    "oneway_ref", "info", [entry_id, ref], f"oneway_ref:{entry_id}:{ref}",
                    f"[{entry_id}] verweist auf [{ref}], aber [{ref}] nicht zurück. Prüfen, ob der Rückverweis "
                    "fehlt."))
    return findings


def near_duplicate_findings(entries: list[EntryFacts], pairs: Iterable[tuple[str, str, float]],
                            options: Options, conflicts: Iterable = ()) -> list[Finding]:
    """Pairs (a, b, cosine similarity) above the threshold without a cross reference either way.

    Two entries whose Kernwerte contradict are a conflict (and the older one stale), reported as
    such: they are not a duplicate as well.
    """
    refs = {e.entry_id: set(e.cross_refs) for e in entries}
    # which conflicts each entry is a side of: two entries contradict when they share one. (Not the set of
    # all side pairs: a conflict of 15,000 sides in a 20,000-entry benchmark base made that 10^8 pairs.)
    sides: dict[str, set[int]] = {}
    for number, conflict in enumerate(conflicts):
        for entry_id in conflict.entry_ids:
            sides.setdefault(entry_id, set()).add(number)
    best: dict[tuple[str, str], float] = {}
    for a, b, similarity in pairs:
        if a == b or a not in refs or b not in refs or similarity < options.near_duplicate_threshold:
            continue
        if b in refs[a] or a in refs[b] or sides.get(a, set()) & sides.get(b, set()):
            continue
        key = _pair(a, b)
        best[key] = max(best.get(key, 0.0), similarity)
    return [Finding("near_duplicate", "medium", [a, b], f"near_duplicate:{a}:{b}",
                    f"[{a}] und [{b}] sind inhaltlich fast gleich (Ähnlichkeit {sim:.3f}) und verweisen nicht "
                    "aufeinander. Zusammenführen oder gegenseitig verweisen.")
            for (a, b), sim in sorted(best.items())]


def embedding_findings(infos: Iterable[EmbeddingInfo]) -> list[Finding]:
    findings = []
    for info in sorted(infos, key=lambda i: i.entry_id):
        if info.sections and not info.embedded:
            findings.append(Finding(
                "embedding", "high", [info.entry_id], f"embedding:none:{info.entry_id}",
                f"[{info.entry_id}] hat keine einzige Einbettung ({info.sections} Abschnitte): die Suche nach "
                "Bedeutung findet den Eintrag nicht. Einbettung starten bzw. Fehler prüfen."))
            continue
        if info.failed:
            findings.append(Finding(
                "embedding", "medium", [info.entry_id], f"embedding:failed:{info.entry_id}",
                f"[{info.entry_id}]: Einbettung fehlgeschlagen für {len(info.failed)} Abschnitt(e): "
                + ", ".join(info.failed[:5]) + "."))
        if info.cut:
            findings.append(Finding(
                "embedding", "low", [info.entry_id], f"embedding:cut:{info.entry_id}",
                f"[{info.entry_id}]: {len(info.cut)} Abschnitt(e) länger als der Kontext des Einbettungsmodells, "
                "nur gekürzt eingebettet: " + ", ".join(info.cut[:5]) + "."))
    return findings


def unretrieved_findings(entries: list[EntryFacts], retrieved: set[str], questions: int, days: int,
                         options: Options) -> list[Finding]:
    """Entries no question retrieved in the last ``days`` days (when ``questions`` is large enough)."""
    if questions < max(1, options.unretrieved_min_questions):
        return []
    return [Finding("unretrieved", "info", [e.entry_id], f"unretrieved:{e.entry_id}",
                    f"[{e.entry_id}] wurde in den letzten {days} Tagen von keiner der {questions} Fragen gefunden. "
                    "Ist der Eintrag noch nötig, oder fehlen ihm die Begriffe, mit denen gefragt wird?")
            for e in sorted(entries, key=lambda e: e.entry_id) if e.entry_id not in retrieved]


# --------------------------------------------------------------------------- the whole check


def run_checks(entries: list[EntryFacts], *, detect: Callable, options: Options | None = None,
               known_ids: set[str] | None = None, duplicate_pairs: Iterable[tuple[str, str, float]] = (),
               embeddings: Iterable[EmbeddingInfo] = (), retrieved: set[str] | None = None,
               questions: int = 0, days: int = 90, extra: Iterable[Finding] = ()) -> list[Finding]:
    """All findings, most severe first, then by kind and key (deterministic); ``extra``: findings computed
    by the caller (the coming year's missing values, values without year)."""
    options = options or Options()
    conflicts_found, conflicts = conflict_findings(entries, detect)
    findings = conflicts_found
    findings += stale_findings(entries, conflicts, options)
    findings += reference_findings(entries, known_ids)
    findings += near_duplicate_findings(entries, duplicate_pairs, options, conflicts)
    findings += embedding_findings(embeddings)
    if retrieved is not None:
        findings += unretrieved_findings(entries, retrieved, questions, days, options)
    findings += list(extra)
    findings.sort(key=lambda f: (SEVERITY_RANK[f.severity], KINDS.index(f.kind), f.key))
    return findings


@dataclass
class Delta:
    opened: list[str]
    updated: list[str]
    resolved: list[str]


def reconcile(open_keys: Iterable[str], found_keys: Iterable[str]) -> Delta:
    """What a run changes: keys newly found, found again, and open keys no longer found."""
    open_set, found = set(open_keys), list(dict.fromkeys(found_keys))
    return Delta([k for k in found if k not in open_set], [k for k in found if k in open_set],
                 sorted(open_set - set(found)))
