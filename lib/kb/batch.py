"""A whole batch of the Wissensbasis: every entry file, ``kb.json`` and the cross references.

:func:`load_batch` parses every entry with :mod:`kb_format`, checks ``kb.json`` against the
entries (count, ids, the compared keys) and the cross references, and returns the valid
entries with every problem as an :class:`~kb_format.Issue` (the format: docs/kb-format.md).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable

from ..text import untrusted
from . import rendering
from ..text.untrusted import quote
from .format import (
    BODY_REF_RE,
    BOM,
    ERROR,
    INDEX,
    KBJSON,
    KBJSON_COMPARED_KEYS,
    LIST_KEYS,
    WARNING,
    Issue,
    ParsedEntry,
    id_of_file,
    is_entry_file,
    parse_checked,
    stand_text,
)


@dataclass
class Batch:
    """The result of reading a whole batch: valid entries plus every problem."""

    entries: list[ParsedEntry]
    issues: list[Issue]
    files_seen: int  # number of entry files ("dokumente/*.md") looked at
    kb_json: dict | None = None

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.level == ERROR]

    @property
    def warnings(self) -> list[Issue]:
        return [i for i in self.issues if i.level == WARNING]

    @property
    def ok(self) -> bool:
        return not self.errors


# --------------------------------------------------------------------------- cross references


def check_cross_refs(entries: Iterable[ParsedEntry], known_ids: set[str]) -> list[Issue]:
    """Warn about references to ids that are neither in ``known_ids`` nor in ``entries``.

    Checks the ``cross_refs`` list ("crossref_dangling") and bracketed ids such
    as ``[lb-atz-09]`` in the text ("bodyref_dangling").
    """
    entries = list(entries)
    known = set(known_ids) | {e.id for e in entries}
    issues: list[Issue] = []
    for entry in entries:
        for ref in entry.cross_refs:
            if ref not in known:
                issues.append(Issue(entry.file, WARNING, "crossref_dangling",
                                    f"Querverweis '{ref}' in cross_refs zeigt auf keinen vorhandenen Eintrag. "
                                    "Bitte die ID prüfen oder den Eintrag mitliefern."))
        listed = set(entry.cross_refs)
        reported: set[str] = set()
        for match in BODY_REF_RE.finditer(entry.body):
            ref = match.group(1)
            if ref in known or ref in listed or ref in reported:
                continue
            reported.add(ref)
            issues.append(Issue(entry.file, WARNING, "bodyref_dangling",
                                f"Verweis '[{ref}]' im Text zeigt auf keinen vorhandenen Eintrag. "
                                "Bitte die ID prüfen oder den Eintrag mitliefern."))
    return issues


# --------------------------------------------------------------------------- kb.json


def _load_kbjson(raw: bytes | None, issues: list[Issue]) -> dict | None:
    if raw is None:
        issues.append(Issue(KBJSON, ERROR, "kbjson_missing",
                            "Die Datei kb.json fehlt im Wurzelordner der Wissensbasis. Bitte kb.json "
                            "(das Verzeichnis aller Einträge) mitliefern."))
        return None
    try:
        data = json.loads((raw[len(BOM):] if raw.startswith(BOM) else raw).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        issues.append(Issue(KBJSON, ERROR, "kbjson_invalid",
                            f"kb.json ist kein gültiges UTF-8-JSON ({untrusted.cap(str(exc), 200)}). Bitte die Datei neu erzeugen."))
        return None
    except RecursionError:
        issues.append(Issue(KBJSON, ERROR, "kbjson_invalid",
                            "kb.json ist zu tief verschachtelt. Bitte die Datei neu erzeugen."))
        return None
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        issues.append(Issue(KBJSON, ERROR, "kbjson_invalid",
                            "kb.json muss ein Objekt mit einer Liste 'entries' sein. Bitte die Datei neu erzeugen."))
        return None
    return data


def _kbjson_records(data: dict, issues: list[Issue]) -> dict[str, dict]:
    records: dict[str, dict] = {}
    for index, record in enumerate(data["entries"]):
        rid = record.get("id") if isinstance(record, dict) else None
        if not isinstance(rid, str) or not rid.strip():
            issues.append(Issue(KBJSON, ERROR, "kbjson_invalid",
                                f"Eintrag Nr. {index + 1} in kb.json hat keine gültige 'id'. Bitte die Datei "
                                "neu erzeugen."))
            continue
        if rid in records:
            issues.append(Issue(KBJSON, ERROR, "kbjson_duplicate",
                                f"Die ID {quote(rid)} steht mehrfach in kb.json. Bitte die Datei neu erzeugen."))
            continue
        records[rid] = record
    return records


def _check_count(data: dict, n_files: int, issues: list[Issue]) -> None:
    count = data.get("count")
    listed = len(data["entries"])
    if not isinstance(count, int) or isinstance(count, bool):
        issues.append(Issue(KBJSON, ERROR, "kbjson_invalid",
                            f"Das Feld 'count' in kb.json fehlt oder ist keine Zahl ({quote(count)}). Bitte die "
                            "Datei neu erzeugen."))
        return
    if count != listed:
        issues.append(Issue(KBJSON, ERROR, "kbjson_count",
                            f"kb.json nennt count = {count}, listet aber {listed} Einträge. Bitte die Datei "
                            "neu erzeugen."))
    if count != n_files:
        issues.append(Issue(KBJSON, ERROR, "kbjson_count",
                            f"kb.json nennt count = {count}, im Ordner dokumente/ liegen aber {n_files} "
                            "Eintragsdateien. Bitte kb.json neu erzeugen oder die fehlenden Dateien ergänzen."))


def _compare_record(entry: ParsedEntry, record: dict) -> list[Issue]:
    issues: list[Issue] = []
    for key in KBJSON_COMPARED_KEYS:
        if key not in record:
            continue
        ours = entry.stand if key == "stand" else getattr(entry, key)
        theirs = stand_text(record[key]) if key == "stand" else record[key]
        if theirs != ours:
            issues.append(Issue(entry.file, WARNING, "kbjson_mismatch",
                                f"Feld '{key}' weicht von kb.json ab: Datei {quote(ours)}, kb.json {quote(theirs)}. "
                                "Bitte kb.json neu erzeugen."))
    for key in LIST_KEYS:
        theirs = record.get(key)
        if isinstance(theirs, list) and sorted(map(str, theirs)) != sorted(getattr(entry, key)):
            issues.append(Issue(entry.file, WARNING, "kbjson_mismatch",
                                f"Liste '{key}' weicht von kb.json ab. Bitte kb.json neu erzeugen."))
    rec_file = record.get("file")
    if isinstance(rec_file, str) and rec_file not in (entry.file, entry.file.rsplit("/", 1)[-1]):
        issues.append(Issue(entry.file, WARNING, "kbjson_mismatch",
                            f"kb.json nennt für '{entry.id}' die Datei {quote(rec_file)}. Bitte kb.json neu erzeugen."))
    return issues


# --------------------------------------------------------------------------- batch


_LEVEL_RANK = {ERROR: 0, WARNING: 1}


@dataclass(frozen=True)
class UploadLimits:
    """What one batch uploaded in the browser may hold, so that its check and apply stay short; the command
    line has none. The real base has ~600 entries and ~3,400 table lines."""

    max_entries: int = 800
    max_table_lines: int = 4000      # lines starting with "|" in all entries (each value cell becomes a fact)


def _upload_problem(files: dict[str, bytes], limits: UploadLimits) -> Issue | None:
    entries = [path for path in files if is_entry_file(path)]
    if len(entries) > limits.max_entries:
        return Issue("", ERROR, "batch_too_large",
                     f"Der Stapel enthält {len(entries)} Einträge; über den Browser sind höchstens "
                     f"{limits.max_entries} je Import möglich. Bitte den Stapel aufteilen oder über die "
                     "Kommandozeile importieren.")
    table_lines = sum(files[path].count(b"\n|") + files[path].count(b"\n |") for path in entries)
    if table_lines > limits.max_table_lines:
        return Issue("", ERROR, "batch_too_large",
                     f"Der Stapel enthält {table_lines} Tabellenzeilen; über den Browser sind höchstens "
                     f"{limits.max_table_lines} je Import möglich. Bitte den Stapel aufteilen oder über die "
                     "Kommandozeile importieren.")
    return None


def load_batch(files: dict[str, bytes], known_ids: Iterable[str] | None = None, *, render: bool = True,
               render_seconds: float | None = rendering.BATCH_SECONDS, limits: UploadLimits | None = None) -> Batch:
    """Parse and validate a whole batch (paths relative to the KB root, "/" separated).

    Entry files are ``dokumente/*.md``; ``kb.json`` is required; ``INDEX.md`` is
    ignored; any other file gives an "unexpected_file" warning. Only entries
    without errors are returned. Cross references are checked only if
    ``known_ids`` is given (ids of the base outside this batch; pass ``set()``
    to check against the batch alone); otherwise call :func:`check_cross_refs`.
    Every valid entry is rendered (:mod:`.rendering`, within its time budget; ``render_seconds``: seconds
    for the whole batch, None = no total) unless ``render`` is False; an entry too costly to render is an
    error ("render_costly"). With ``limits`` (a browser upload) a batch over them is refused whole, before
    any entry is parsed ("batch_too_large").
    """
    if limits is not None:
        problem = _upload_problem(files, limits)
        if problem is not None:
            return Batch(entries=[], issues=[problem], files_seen=sum(1 for p in files if is_entry_file(p)))
    issues: list[Issue] = []
    parsed: list[tuple[str, ParsedEntry | None, str | None, list[Issue]]] = []
    for path in sorted(files):
        if is_entry_file(path):
            entry, known_id, entry_issues = parse_checked(files[path], path)
            parsed.append((path, entry, known_id, entry_issues))
        elif path in (KBJSON, INDEX):
            continue
        else:
            issues.append(Issue(path, WARNING, "unexpected_file",
                                "Unerwartete Datei: Sie wird ignoriert. Einträge gehören als <id>.md in den "
                                "Ordner dokumente/."))

    if not parsed:
        issues.append(Issue("", ERROR, "no_entries",
                            "Der Stapel enthält keine Einträge (dokumente/*.md). Bitte den Ordner der "
                            "Wissensbasis oder ein ZIP davon wählen."))

    # ids by file: the frontmatter id if it could be read, otherwise the file name
    ids_by_file = {path: (known_id or id_of_file(path)) for path, _e, known_id, _i in parsed}
    files_by_id: dict[str, list[str]] = {}
    for path, file_id in ids_by_file.items():
        files_by_id.setdefault(file_id, []).append(path)
    extra: dict[str, list[Issue]] = {path: [] for path, *_ in parsed}
    for file_id, paths in files_by_id.items():
        if len(paths) > 1:
            for path in paths:
                others = ", ".join(p for p in paths if p != path)
                extra[path].append(Issue(path, ERROR, "id_duplicate",
                                         f"Die ID '{file_id}' kommt auch in {others} vor. Jede ID darf nur "
                                         "einmal vorkommen."))

    kb_json = _load_kbjson(files.get(KBJSON), issues)
    if kb_json is not None:
        _check_count(kb_json, len(parsed), issues)
        records = _kbjson_records(kb_json, issues)
        for rid in sorted(set(records) - set(files_by_id)):
            issues.append(Issue(KBJSON, ERROR, "kbjson_missing_id",
                                f"kb.json nennt {quote(rid)}, aber die Datei dokumente/{quote(rid, 60)[1:-1]}.md fehlt. Bitte die "
                                "Datei ergänzen oder kb.json neu erzeugen."))
        for path, entry, _known_id, _i in parsed:
            file_id = ids_by_file[path]
            if file_id not in records:
                extra[path].append(Issue(path, ERROR, "kbjson_extra_file",
                                         f"Der Eintrag '{file_id}' fehlt in kb.json. Bitte kb.json neu erzeugen."))
            elif entry is not None:
                extra[path].extend(_compare_record(entry, records[file_id]))

    entries: list[ParsedEntry] = []
    renderer = rendering.BatchRenderer(batch_seconds=render_seconds)
    for path, entry, _known_id, entry_issues in parsed:
        all_issues = entry_issues + extra[path]
        if entry is not None and not any(i.level == ERROR for i in all_issues) and render:
            # the check renders with the code and the budget of the apply, which stores this HTML
            entry.html, reason = renderer.render(entry.body)
            if reason:
                all_issues.append(Issue(path, ERROR, "render_costly", f"Der Eintrag wird nicht übernommen: {reason}"))
        issues.extend(all_issues)
        if entry is not None and not any(i.level == ERROR for i in all_issues):
            entries.append(entry)

    if known_ids is not None:
        issues.extend(check_cross_refs(entries, set(known_ids)))

    issues.sort(key=lambda i: (i.file, _LEVEL_RANK.get(i.level, 2)))
    return Batch(entries=entries, issues=issues, files_seen=len(parsed), kb_json=kb_json)
