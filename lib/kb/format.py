"""Parser and validator of one Wissensbasis entry (the format: docs/kb-format.md).

An entry is a Markdown file with YAML frontmatter; a batch is the set of files
below the KB root (``dokumente/*.md``, ``kb.json``, optional ``INDEX.md``), read by
:mod:`kb_batch`.
Nothing here raises on bad input: every problem becomes an :class:`Issue`
with a stable ``code`` and a German ``message`` that names the problem and
says what to do.
"""
from __future__ import annotations

import datetime
import functools
import hashlib
import re
from dataclasses import dataclass
from typing import Any

import yaml

from ..text import md_blocks, german as text_de, untrusted
from ..text.untrusted import quote




ERROR = "error"
WARNING = "warning"

LIST_KEYS = ("tags", "legal_bases", "cross_refs")
KBJSON_COMPARED_KEYS = ("title", "stand", "topic", "source")
SECTION_ORDER = ("zusammenfassung", "kernwerte", "rechtsgrundlagen", "payroll", "verweise")
LINKS_SECTION = "verweise"   # lists other entries only: no fact to answer from (context and Notbetrieb rank it last)
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
BOM = b"\xef\xbb\xbf"
MAX_BODY_CHARS = 200_000   # characters of an entry's text (the largest real entries have ~30,000); rendering.py
# "[lb-atz-09]" in the text (a date such as "[2026-01]" is no id: it holds no letter)
BODY_REF_RE = re.compile(rf"\[({ENTRY_ID})\]")

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

    def __post_init__(self):
        # every message is bounded, whatever a check quoted into it
        if len(self.message) > untrusted.MESSAGE_LIMIT:
            object.__setattr__(self, "message", untrusted.cap(self.message))


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
    html: str | None = None     # the rendered body, set by the batch check (lib/kb/batch.py) for the apply


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


def stand_text(value: Any) -> str:
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return "" if value is None else str(value).strip()


def id_of_file(file: str) -> str:
    name = file.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


def is_entry_file(path: str) -> bool:
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
        data = untrusted.load_yaml(text)
    except untrusted.YamlRefused as exc:
        issues.append(Issue(file, ERROR, "yaml_alias", f"Der Frontmatter wird nicht gelesen: {exc}"))
        return None
    except yaml.YAMLError as exc:
        problem = str(getattr(exc, "problem", None) or "unbekannter Fehler")
        issues.append(Issue(file, ERROR, "yaml_invalid",
                            f"Der Frontmatter ist kein gültiges YAML{untrusted.yaml_line(exc, 2)}: "
                            f"{untrusted.cap(problem, 200)}. Bitte die Syntax "
                            "prüfen, z. B. Doppelpunkte in Werten in Anführungszeichen setzen."))
        return None
    except (Exception, RecursionError) as exc:  # any other loader failure must not escape
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
                            f"Feld '{key}' muss Text sein, enthält aber {quote(value)}. Bitte den Wert in "
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
        if isinstance(item, (int, float, datetime.date)) and not isinstance(item, bool):
            # "tags: [Jahreswechsel, 2025]": YAML reads the year as a number; it is meant as the text
            issues.append(Issue(file, WARNING, "list_number",
                                f"Feld '{key}' enthält {quote(item)} ohne Anführungszeichen; es wird als Text "
                                f"gelesen. Bitte als \"{item}\" schreiben."))
            item = str(item)
        if not isinstance(item, str):
            issues.append(Issue(file, ERROR, "list_invalid",
                                f"Feld '{key}' enthält den Wert {quote(item)}, der kein Text ist. Bitte alle "
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
    for line, level, title in md_blocks.lines_with_headings(body):
        if level == 2:
            current = (title, [])
            raw_sections.append(current)
        elif level == 1 and current is None and not h1:
            h1 = title
        else:
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
    data = raw[len(BOM):] if raw.startswith(BOM) else raw
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
                            f"Die ID {quote(raw_id)} hat nicht das Format '<reihe>-<cluster>-<nr>' in "
                            "Kleinbuchstaben, Ziffern und Bindestrichen (z. B. 'lb-atz-07')."))
    else:
        known_id = raw_id.strip()
        if id_of_file(file) != known_id or not file.endswith(".md"):
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
                                f"Der Stand {quote(stand_text(data['stand']))} ist kein gültiges Datum. "
                                "Bitte JJJJ-MM (z. B. 2026-01) oder JJJJ-MM-TT angeben."))

    lists = {key: _list_field(data, key, file, issues) for key in LIST_KEYS}

    if len(body) > MAX_BODY_CHARS:
        issues.append(Issue(file, ERROR, "body_too_large",
                            f"Der Text des Eintrags ist mit {len(body):,} Zeichen zu lang (höchstens "
                            f"{MAX_BODY_CHARS:,}). Bitte den Eintrag aufteilen.".replace(",", ".")))
        return None, known_id, issues
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
    entry, _known_id, issues = parse_checked(raw, file)
    return entry, issues


def parse_checked(raw: bytes, file: str) -> tuple[ParsedEntry | None, str | None, list[Issue]]:
    """:func:`_parse`, but an unexpected exception becomes an error issue of this file: bad input must never
    crash an import, nor one file break the batch."""
    try:
        return _parse(raw, file)
    except Exception as exc:  # noqa: BLE001 - the last line of defence, reported to the user
        return None, None, [Issue(file, ERROR, "internal",
                                  f"Die Datei konnte nicht gelesen werden ({type(exc).__name__}: {untrusted.cap(str(exc), 200)}). "
                                  "Bitte die Datei prüfen und den Fehler melden.")]
