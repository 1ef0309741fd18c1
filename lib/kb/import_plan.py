"""What an import batch would change, decided before anything is written.

The Odoo side gives the parsed batch and the state of the base (id -> content
hash and active flag); :func:`plan_import` says which entries are new, changed,
unchanged, reactivated or archived.  :func:`diff_chunks` decides, for one
changed entry, which chunks stay (same content hash, so their embeddings are
kept), which are new and which go.  :func:`format_report` renders the German
report shown in the wizard, stored on the batch and printed by the command.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

MODES = ("add", "sync")


@dataclass(frozen=True)
class BaseState:
    """One entry as it is in the database."""

    content_hash: str
    active: bool


@dataclass
class ImportPlan:
    mode: str
    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    reactivated: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    rejected_files: list[str] = field(default_factory=list)
    issues: list = field(default_factory=list)
    files_seen: int = 0

    @property
    def errors(self) -> list:
        return [i for i in self.issues if i.level == "error"]

    @property
    def warnings(self) -> list:
        return [i for i in self.issues if i.level == "warning"]

    @property
    def ok(self) -> bool:
        """A batch applies only as a whole: any error rejects it."""
        return not self.errors

    @property
    def changes_anything(self) -> bool:
        return bool(self.new or self.changed or self.reactivated or self.archived)

    def counts(self) -> dict[str, int]:
        return {
            "new": len(self.new),
            "changed": len(self.changed) + len(self.reactivated),
            "unchanged": len(self.unchanged),
            "archived": len(self.archived),
            "rejected": len(self.rejected_files),
            "warnings": len(self.warnings),
            "errors": len(self.errors),
        }


def plan_import(entries: Sequence, issues: Iterable, base: Mapping[str, BaseState],
                mode: str = "add", files_seen: int = 0) -> ImportPlan:
    """Compare a parsed batch with the base.

    ``entries`` are the error-free parsed entries (objects with ``id`` and
    ``content_hash``), ``issues`` every problem found while reading the batch.
    In ``sync`` mode the batch is the whole base: active entries absent from it
    are archived (never deleted).
    """
    if mode not in MODES:
        raise ValueError(f"unknown import mode {mode!r}")
    issues = list(issues)
    plan = ImportPlan(mode=mode, issues=issues, files_seen=files_seen)
    plan.rejected_files = sorted({i.file for i in issues if i.level == "error" and i.file})
    seen = set()
    for entry in entries:
        seen.add(entry.id)
        state = base.get(entry.id)
        if state is None:
            plan.new.append(entry.id)
        elif state.content_hash != entry.content_hash:
            plan.changed.append(entry.id)
        elif not state.active:
            plan.reactivated.append(entry.id)
        else:
            plan.unchanged.append(entry.id)
    if mode == "sync":
        plan.archived = sorted(kb_id for kb_id, state in base.items() if state.active and kb_id not in seen)
    for name in ("new", "changed", "unchanged", "reactivated"):
        getattr(plan, name).sort()
    return plan


@dataclass
class ChunkDiff:
    keep: dict[str, int]          # content hash -> new position (existing chunk stays, embedding kept)
    create: list[int]             # indexes into the new chunk list
    drop: list[str]               # content hashes of existing chunks to delete


def diff_chunks(existing_hashes: Sequence[str], new_hashes: Sequence[str]) -> ChunkDiff:
    """Match chunks by content hash so that only changed chunks are rewritten."""
    pool: dict[str, int] = {}
    for h in existing_hashes:
        pool[h] = pool.get(h, 0) + 1
    keep: dict[str, int] = {}
    create: list[int] = []
    for index, h in enumerate(new_hashes):
        if pool.get(h, 0) > 0 and h not in keep:
            keep[h] = index
            pool[h] -= 1
        else:
            create.append(index)
    drop = [h for h in existing_hashes if h not in keep]
    # a hash that exists twice in the old entry but once in the new one: drop the extra
    for h, left in pool.items():
        if h in keep and left > 0:
            drop.extend([h] * left)
    return ChunkDiff(keep=keep, create=create, drop=drop)


_LEVEL_DE = {"error": "Fehler", "warning": "Warnung"}


REPORT_MAX_ISSUES = 100     # problems listed in a report (all are kept as records of the import log)
REPORT_MAX_IDS = 50


def _some(ids: list[str]) -> str:
    shown = ", ".join(ids[:REPORT_MAX_IDS])
    return shown + (f" und {len(ids) - REPORT_MAX_IDS} weitere" if len(ids) > REPORT_MAX_IDS else "")


def format_report(plan: ImportPlan, *, source: str = "", dry_run: bool = False, applied: bool = False) -> str:
    """German plain-text report: verdict, counts, every problem with its file."""
    c = plan.counts()
    lines = []
    head = "Probelauf" if dry_run else "Import"
    lines.append(f"{head}: {source}" if source else head)
    lines.append(f"Modus: {'Vollabgleich (fehlende Einträge werden archiviert)' if plan.mode == 'sync' else 'Hinzufügen/Aktualisieren'}")
    if not plan.ok:
        verdict = "ABGELEHNT – der Stapel enthält Fehler; es wurde nichts geändert."
    elif dry_run:
        verdict = "Prüfung bestanden – der Stapel kann angewendet werden." if plan.changes_anything else \
            "Prüfung bestanden – der Stapel würde nichts ändern."
    elif applied:
        verdict = "Angewendet." if plan.changes_anything else "Keine Änderungen – alle Einträge sind unverändert."
    else:
        verdict = "Noch nicht angewendet."
    lines.append(f"Ergebnis: {verdict}")
    lines.append(
        f"Dateien: {plan.files_seen} · neu: {c['new']} · geändert: {c['changed']} · unverändert: {c['unchanged']}"
        f" · archiviert: {c['archived']} · abgelehnt: {c['rejected']}"
        f" · Fehler: {c['errors']} · Warnungen: {c['warnings']}")
    if plan.reactivated:
        lines.append("Wieder aktiviert: " + _some(plan.reactivated))
    if plan.archived:
        lines.append("Archiviert: " + _some(plan.archived))
    if plan.issues:
        lines.append("")
        lines.append("Probleme:")
        ordered = sorted(plan.issues, key=lambda i: (i.level != "error", i.file, i.code))
        for issue in ordered[:REPORT_MAX_ISSUES]:
            where = (issue.file or "Stapel")[:200]
            message = issue.message if len(issue.message) <= 500 else issue.message[:500] + " …"
            lines.append(f"- [{_LEVEL_DE.get(issue.level, issue.level)}] {where}: {message}")
        if len(ordered) > REPORT_MAX_ISSUES:
            lines.append(f"- … und {len(ordered) - REPORT_MAX_ISSUES} weitere (vollständig in den Problemen "
                         "des Importprotokolls)")
    return "\n".join(lines) + "\n"
