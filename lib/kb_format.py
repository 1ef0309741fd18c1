"""Parser and validator for the Wissensbasis format (see docs/kb-format.md).

An entry is a Markdown file with YAML frontmatter; a batch is the set of files
below the KB root (``dokumente/*.md``, ``kb.json``, optional ``INDEX.md``).
Nothing here raises on bad input: every problem becomes an :class:`Issue`
with a stable ``code`` and a German ``message`` that names the problem and
says what to do.
"""
from __future__ import annotations

import datetime
import functools
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Iterable

import yaml

from . import md_blocks, text_de



class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe YAML loader (C-accelerated when available) that keeps impossible dates as text.

    PyYAML turns ``2026-01-15`` into a date but raises on ``2025-02-29``; here
    such a value stays a string so that the validator can name the field.
    """

    def construct_yaml_timestamp(self, node):  # noqa: D102 - PyYAML hook
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError:
            return self.construct_scalar(node)


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_yaml_timestamp)

ERROR = "error"
WARNING = "warning"

LIST_KEYS = ("tags", "legal_bases", "cross_refs")
KBJSON_COMPARED_KEYS = ("title", "stand", "topic", "source")
SECTION_ORDER = ("zusammenfassung", "kernwerte", "rechtsgrundlagen", "payroll", "verweise")
ENTRY_DIR = "dokumente/"
KBJSON = "kb.json"
INDEX = "INDEX.md"

# An entry id: lower-case letters and digits in at least two segments joined by "-", with at least one
# letter, so "9x-b-02" is an id and a date such as "2026-01" is not. The one pattern for the importer,
# cross references, the prompt and citations (lib/answer/citations.py, lib/answer/prompt.py); the chat
# panel's copy is static/src/markdown.js.
ENTRY_ID = r"(?=(?:[0-9]+-)*[0-9]*[a-z])[a-z0-9]+(?:-[a-z0-9]+)+"
ID_RE = re.compile(rf"^{ENTRY_ID}$")
_STAND_RE = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")
_BOM = b"\xef\xbb\xbf"
_MARKUP_START = frozenset("#`~ ")
# "[lb-atz-09]" in the text (a date such as "[2026-01]" is no id: it holds no letter)
_BODY_REF_RE = re.compile(rf"\[({ENTRY_ID})\]")

# first word stems of the H2 headings -> section key (checked on normalised words)
_SECTION_STEMS = (
    ("zusammenfassung", "zusammenfassung"),
    ("kurzfassung", "zusammenfassung"),
    ("kernwert", "kernwerte"),
    ("rechtsgrundlage", "rechtsgrundlagen"),
    ("payroll", "payroll"),
    ("querverweis", "verweise"),
    ("verweis", "verweise"),
)


@dataclass(frozen=True)
class Issue:
    """One problem found in a batch; ``file`` is relative to the KB root ("" = whole batch)."""

    file: str
    level: str
    code: str
    message: str


@dataclass
class Section:
    """One H2 section of an entry (or the text before the first H2, key "other")."""

    key: str
    heading: str
    text: str
    position: int


@dataclass
class ParsedEntry:
    """An entry that passed validation."""

    id: str
    title: str
    stand: str
    stand_date: datetime.date
    topic: str
    source: str
    tags: list[str]
    legal_bases: list[str]
    cross_refs: list[str]
    body: str
    sections: list[Section]
    content_hash: str
    file: str
    frontmatter: dict


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


# --------------------------------------------------------------------------- helpers


@functools.lru_cache(maxsize=1024)
def section_key(heading: str) -> str:
    """Map an H2 heading to its section key; unknown headings give "other".

    Tolerant of case, umlauts written as ae/oe/ue, punctuation and additions:
    "Kernwerte und Fristen", "Payroll-Relevanz (Odoo)", "RECHTSGRUNDLAGEN".
    """
    words = re.findall(r"[a-z0-9]+", text_de.fold_plain(heading))
    for word in words:
        for stem, key in _SECTION_STEMS:
            if word.startswith(stem):
                return key
    return "other"


def content_hash(raw: bytes) -> str:
    """sha256 hex of the file bytes after CRLF -> LF normalisation."""
    return hashlib.sha256(raw.replace(b"\r\n", b"\n")).hexdigest()


def parse_stand(value: Any) -> tuple[str, datetime.date] | None:
    """Return (stand text, date) for "YYYY-MM", "YYYY-MM-DD" or a date object; None if invalid."""
    if isinstance(value, datetime.datetime):
        return None
    if isinstance(value, datetime.date):
        return value.isoformat(), value
    if not isinstance(value, str):
        return None
    text = value.strip()
    match = _STAND_RE.match(text)
    if not match:
        return None
    year, month, day = int(match.group(1)), int(match.group(2)), int(match.group(3) or 1)
    try:
        return text, datetime.date(year, month, day)
    except ValueError:
        return None


def _stand_text(value: Any) -> str:
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return "" if value is None else str(value).strip()


def _id_of_file(file: str) -> str:
    name = file.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


def _is_entry_file(path: str) -> bool:
    if not path.startswith(ENTRY_DIR) or not path.endswith(".md"):
        return False
    rest = path[len(ENTRY_DIR):]
    return "/" not in rest and len(rest) > 3


# --------------------------------------------------------------------------- one entry


def _split_frontmatter(text: str, file: str, issues: list[Issue]) -> tuple[str, str] | None:
    """Return (yaml text, body) or None after recording why the frontmatter is unusable."""
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        issues.append(Issue(file, ERROR, "frontmatter_missing",
                            "Der Frontmatter fehlt: Die erste Zeile muss '---' sein, gefolgt von den "
                            "YAML-Feldern und einer schließenden Zeile '---'."))
        return None
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1:])
    issues.append(Issue(file, ERROR, "frontmatter_unclosed",
                        "Der Frontmatter ist nicht geschlossen: Nach den YAML-Feldern fehlt eine Zeile '---'."))
    return None


def _load_yaml(text: str, file: str, issues: list[Issue]) -> dict | None:
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (Zeile {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "unbekannter Fehler"
        issues.append(Issue(file, ERROR, "yaml_invalid",
                            f"Der Frontmatter ist kein gültiges YAML{where}: {problem}. Bitte die Syntax "
                            "prüfen, z. B. Doppelpunkte in Werten in Anführungszeichen setzen."))
        return None
    except Exception as exc:  # any other loader failure must not escape
        issues.append(Issue(file, ERROR, "yaml_invalid",
                            f"Der Frontmatter konnte nicht gelesen werden ({type(exc).__name__}). "
                            "Bitte die YAML-Syntax prüfen."))
        return None
    if not isinstance(data, dict):
        what = "leer" if data is None else "keine Zuordnung von Feldern"
        issues.append(Issue(file, ERROR, "yaml_invalid",
                            f"Der Frontmatter ist {what}: Er muss Felder der Form 'name: wert' enthalten "
                            "(id, title, stand, topic, source)."))
        return None
    return data


def _text_field(data: dict, key: str, file: str, issues: list[Issue]) -> str | None:
    value = data.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        issues.append(Issue(file, ERROR, "key_missing",
                            f"Pflichtfeld '{key}' fehlt oder ist leer. Bitte im Frontmatter ergänzen."))
        return None
    if not isinstance(value, str):
        issues.append(Issue(file, ERROR, "key_invalid",
                            f"Feld '{key}' muss Text sein, enthält aber {value!r}. Bitte den Wert in "
                            "Anführungszeichen setzen."))
        return None
    return value.strip()


def _list_field(data: dict, key: str, file: str, issues: list[Issue]) -> list[str] | None:
    value = data.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        issues.append(Issue(file, WARNING, "list_scalar",
                            f"Feld '{key}' ist ein einzelner Text statt einer Liste; er wird als Liste mit "
                            f"einem Element gelesen. Bitte als [\"...\"] schreiben."))
        value = [value]
    if not isinstance(value, list):
        issues.append(Issue(file, ERROR, "list_invalid",
                            f"Feld '{key}' muss eine Liste von Texten sein, z. B. [a, b]."))
        return None
    result: list[str] = []
    for item in value:
        if not isinstance(item, str):
            issues.append(Issue(file, ERROR, "list_invalid",
                                f"Feld '{key}' enthält den Wert {item!r}, der kein Text ist. Bitte alle "
                                "Listenelemente als Text schreiben (bei Bedarf in Anführungszeichen)."))
            return None
        if not item.strip():
            issues.append(Issue(file, WARNING, "list_blank_item",
                                f"Feld '{key}' enthält ein leeres Element; es wird ignoriert."))
            continue
        result.append(item.strip())
    return result


def split_sections(body: str) -> tuple[list[Section], str]:
    """Split an entry body into H2 sections.

    Returns the sections and the H1 title text ("" if none). Headings inside
    fenced code blocks are ignored. Text before the first H2 (without the H1
    line) becomes a section with key "other" and empty heading if non-empty.
    """
    h1 = ""
    preamble: list[str] = []
    current: tuple[str, list[str]] | None = None
    raw_sections: list[tuple[str, list[str]]] = []
    fence: str | None = None
    for line in body.split("\n"):
        first = line[:1]
        if first not in _MARKUP_START or (first == " " and line.lstrip(" ")[:1] not in "`~"):
            # fast path: plain text lines cannot be headings or fences
            (current[1] if current is not None else preamble).append(line)
            continue
        fence_match = md_blocks.FENCE_RE.match(line)
        if fence is not None:
            if md_blocks.closes_fence(line, fence):
                fence = None
        elif fence_match:
            fence = fence_match.group(1)
        else:
            h2 = md_blocks.heading(line, 2)
            if h2 is not None:
                current = (h2, [])
                raw_sections.append(current)
                continue
            if current is None and not h1:
                h1_match = md_blocks.heading(line, 1)
                if h1_match is not None:
                    h1 = h1_match
                    continue
        (current[1] if current is not None else preamble).append(line)
    sections: list[Section] = []
    intro = "\n".join(preamble).strip()
    if intro:
        sections.append(Section("other", "", intro, 0))
    for heading, lines in raw_sections:
        sections.append(Section(section_key(heading), heading, "\n".join(lines).strip(), len(sections)))
    return sections, h1


def _section_issues(sections: list[Section], file: str) -> list[Issue]:
    issues: list[Issue] = []
    seen: dict[str, str] = {}
    last_rank = -1
    last_heading = ""
    for section in sections:
        if section.key not in SECTION_ORDER:
            continue
        if section.key in seen:
            issues.append(Issue(file, WARNING, "section_duplicate",
                                f"Der Abschnitt '{section.heading}' kommt mehrfach vor "
                                f"(schon als '{seen[section.key]}'). Bitte zusammenführen."))
            continue
        seen[section.key] = section.heading
        rank = SECTION_ORDER.index(section.key)
        if rank < last_rank:
            issues.append(Issue(file, WARNING, "section_order",
                                f"Der Abschnitt '{section.heading}' steht nach '{last_heading}'. Bitte die "
                                "Reihenfolge Zusammenfassung, Kernwerte, Rechtsgrundlagen, Payroll-Relevanz, "
                                "Verweise einhalten."))
        else:
            last_rank, last_heading = rank, section.heading
    return issues


def _decode(raw: bytes, file: str, issues: list[Issue]) -> str | None:
    data = raw[len(_BOM):] if raw.startswith(_BOM) else raw
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        issues.append(Issue(file, ERROR, "encoding",
                            f"Die Datei ist nicht UTF-8-kodiert (ungültiges Byte 0x{data[exc.start]:02x} an "
                            f"Position {exc.start}). Bitte die Datei als UTF-8 speichern."))
        return None
    return text.replace("\r\n", "\n")


def _parse(raw: bytes, file: str) -> tuple[ParsedEntry | None, str | None, list[Issue]]:
    """Parse one entry; returns (entry or None, best known id, issues)."""
    issues: list[Issue] = []
    text = _decode(raw, file, issues)
    if text is None:
        return None, None, issues
    if not text.strip():
        issues.append(Issue(file, ERROR, "empty_file",
                            "Die Datei ist leer. Bitte den Eintrag ergänzen oder die Datei entfernen."))
        return None, None, issues
    parts = _split_frontmatter(text, file, issues)
    if parts is None:
        return None, None, issues
    yaml_text, body = parts
    data = _load_yaml(yaml_text, file, issues)
    if data is None:
        return None, None, issues

    known_id: str | None = None
    raw_id = data.get("id")
    if raw_id is None or (isinstance(raw_id, str) and not raw_id.strip()):
        issues.append(Issue(file, ERROR, "key_missing",
                            "Pflichtfeld 'id' fehlt oder ist leer. Bitte im Frontmatter ergänzen."))
    elif not isinstance(raw_id, str) or not ID_RE.match(raw_id.strip()):
        issues.append(Issue(file, ERROR, "id_invalid",
                            f"Die ID {raw_id!r} hat nicht das Format '<reihe>-<cluster>-<nr>' in "
                            "Kleinbuchstaben, Ziffern und Bindestrichen (z. B. 'lb-atz-07')."))
    else:
        known_id = raw_id.strip()
        if _id_of_file(file) != known_id or not file.endswith(".md"):
            issues.append(Issue(file, ERROR, "id_filename_mismatch",
                                f"Die ID '{known_id}' passt nicht zum Dateinamen; die Datei muss "
                                f"'{known_id}.md' heißen."))

    title = _text_field(data, "title", file, issues)
    topic = _text_field(data, "topic", file, issues)
    source = _text_field(data, "source", file, issues)

    stand = None
    if data.get("stand") is None or (isinstance(data.get("stand"), str) and not data["stand"].strip()):
        issues.append(Issue(file, ERROR, "key_missing",
                            "Pflichtfeld 'stand' fehlt. Bitte den Rechtsstand als JJJJ-MM angeben."))
    else:
        stand = parse_stand(data["stand"])
        if stand is None:
            issues.append(Issue(file, ERROR, "stand_invalid",
                                f"Der Stand {_stand_text(data['stand'])!r} ist kein gültiges Datum. "
                                "Bitte JJJJ-MM (z. B. 2026-01) oder JJJJ-MM-TT angeben."))

    lists = {key: _list_field(data, key, file, issues) for key in LIST_KEYS}

    sections, _h1 = split_sections(body)
    issues.extend(_section_issues(sections, file))

    if any(i.level == ERROR for i in issues):
        return None, known_id, issues
    assert known_id and title and topic and source and stand  # guaranteed by the checks above
    entry = ParsedEntry(
        id=known_id, title=title, stand=stand[0], stand_date=stand[1], topic=topic, source=source,
        tags=lists["tags"] or [], legal_bases=lists["legal_bases"] or [],
        cross_refs=lists["cross_refs"] or [], body=body, sections=sections,
        content_hash=content_hash(raw), file=file, frontmatter=data,
    )
    return entry, known_id, issues


def parse_entry(raw: bytes, file: str) -> tuple[ParsedEntry | None, list[Issue]]:
    """Parse and validate one entry file; the entry is None if any error was found.

    ``file`` is the path relative to the KB root, e.g. "dokumente/lb-atz-07.md".
    """
    entry, _known_id, issues = _parse_safely(raw, file)
    return entry, issues


def _parse_safely(raw: bytes, file: str) -> tuple[ParsedEntry | None, str | None, list[Issue]]:
    """:func:`_parse`, but an unexpected exception becomes an error issue of this file: bad input must never
    crash an import, nor one file break the batch."""
    try:
        return _parse(raw, file)
    except Exception as exc:  # noqa: BLE001 - the last line of defence, reported to the user
        return None, None, [Issue(file, ERROR, "internal",
                                  f"Die Datei konnte nicht gelesen werden ({type(exc).__name__}: {exc}). "
                                  "Bitte die Datei prüfen und den Fehler melden.")]


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
        for match in _BODY_REF_RE.finditer(entry.body):
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
        data = json.loads((raw[len(_BOM):] if raw.startswith(_BOM) else raw).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        issues.append(Issue(KBJSON, ERROR, "kbjson_invalid",
                            f"kb.json ist kein gültiges UTF-8-JSON ({exc}). Bitte die Datei neu erzeugen."))
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
                                f"Die ID '{rid}' steht mehrfach in kb.json. Bitte die Datei neu erzeugen."))
            continue
        records[rid] = record
    return records


def _check_count(data: dict, n_files: int, issues: list[Issue]) -> None:
    count = data.get("count")
    listed = len(data["entries"])
    if not isinstance(count, int) or isinstance(count, bool):
        issues.append(Issue(KBJSON, ERROR, "kbjson_invalid",
                            f"Das Feld 'count' in kb.json fehlt oder ist keine Zahl ({count!r}). Bitte die "
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
        theirs = _stand_text(record[key]) if key == "stand" else record[key]
        if theirs != ours:
            issues.append(Issue(entry.file, WARNING, "kbjson_mismatch",
                                f"Feld '{key}' weicht von kb.json ab: Datei {ours!r}, kb.json {theirs!r}. "
                                "Bitte kb.json neu erzeugen."))
    for key in LIST_KEYS:
        theirs = record.get(key)
        if isinstance(theirs, list) and sorted(map(str, theirs)) != sorted(getattr(entry, key)):
            issues.append(Issue(entry.file, WARNING, "kbjson_mismatch",
                                f"Liste '{key}' weicht von kb.json ab. Bitte kb.json neu erzeugen."))
    rec_file = record.get("file")
    if isinstance(rec_file, str) and rec_file not in (entry.file, entry.file.rsplit("/", 1)[-1]):
        issues.append(Issue(entry.file, WARNING, "kbjson_mismatch",
                            f"kb.json nennt für '{entry.id}' die Datei {rec_file!r}. Bitte kb.json neu erzeugen."))
    return issues


# --------------------------------------------------------------------------- batch


_LEVEL_RANK = {ERROR: 0, WARNING: 1}


def load_batch(files: dict[str, bytes], known_ids: Iterable[str] | None = None) -> Batch:
    """Parse and validate a whole batch (paths relative to the KB root, "/" separated).

    Entry files are ``dokumente/*.md``; ``kb.json`` is required; ``INDEX.md`` is
    ignored; any other file gives an "unexpected_file" warning. Only entries
    without errors are returned. Cross references are checked only if
    ``known_ids`` is given (ids of the base outside this batch; pass ``set()``
    to check against the batch alone); otherwise call :func:`check_cross_refs`.
    """
    issues: list[Issue] = []
    parsed: list[tuple[str, ParsedEntry | None, str | None, list[Issue]]] = []
    for path in sorted(files):
        if _is_entry_file(path):
            entry, known_id, entry_issues = _parse_safely(files[path], path)
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
    ids_by_file = {path: (known_id or _id_of_file(path)) for path, _e, known_id, _i in parsed}
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
                                f"kb.json nennt '{rid}', aber die Datei dokumente/{rid}.md fehlt. Bitte die "
                                "Datei ergänzen oder kb.json neu erzeugen."))
        for path, entry, _known_id, _i in parsed:
            file_id = ids_by_file[path]
            if file_id not in records:
                extra[path].append(Issue(path, ERROR, "kbjson_extra_file",
                                         f"Der Eintrag '{file_id}' fehlt in kb.json. Bitte kb.json neu erzeugen."))
            elif entry is not None:
                extra[path].extend(_compare_record(entry, records[file_id]))

    entries: list[ParsedEntry] = []
    for path, entry, _known_id, entry_issues in parsed:
        all_issues = entry_issues + extra[path]
        issues.extend(all_issues)
        if entry is not None and not any(i.level == ERROR for i in all_issues):
            entries.append(entry)

    if known_ids is not None:
        issues.extend(check_cross_refs(entries, set(known_ids)))

    issues.sort(key=lambda i: (i.file, _LEVEL_RANK.get(i.level, 2)))
    return Batch(entries=entries, issues=issues, files_seen=len(parsed), kb_json=kb_json)
