"""Markdown blocks of KB and answer text: headings, code fences, table rows, paragraphs, sentences.

The one owner of these rules for the format parser (``kb_format``), the chunker (``chunking``)
and the answer engine (``answer/``), so that a table row, a heading or a fence means the same
everywhere.
"""
from __future__ import annotations

import re
from typing import Iterator

from .german import fold_plain

PROSE, TABLE, CODE = "prose", "table", "code"

# ---------------------------------------------------------------------------- headings and fences

# An ATX heading: up to three spaces, 1-6 "#", a space or tab, the text, an optional closing "#" sequence.
_HEADING_RE = re.compile(r"^( {0,3})(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")   # opening/closing line of a fenced code block


def heading(line: str, level: int | None = None, indented: bool = False) -> str | None:
    """The text of a heading line, or None.

    ``level`` asks for that level only; the KB format writes headings at the line start, so an
    indented heading counts only with ``indented=True`` (what a Markdown renderer would show).
    """
    match = _HEADING_RE.match(line)
    if not match or (match.group(1) and not indented) or (level and len(match.group(2)) != level):
        return None
    return match.group(3).strip()


def closes_fence(line: str, fence: str) -> bool:
    """Whether ``line`` closes a fenced code block opened with ``fence``: the same character, at least as
    many of it, and nothing after it (CommonMark)."""
    match = FENCE_RE.match(line)
    if not match or match.group(1)[0] != fence[0] or len(match.group(1)) < len(fence):
        return False
    return not line.strip()[len(match.group(1)):].strip()


_MARKUP_START = frozenset("#`~ ")


def lines_with_headings(text: str) -> Iterator[tuple[str, int, str]]:
    """Each line of ``text`` with its heading level and title: (line, 0, "") for a line that is no heading.

    Headings count at the line start only, never inside a fenced code block.
    """
    fence: str | None = None
    for line in text.split("\n"):
        first = line[:1]
        if first not in _MARKUP_START or (first == " " and line.lstrip(" ")[:1] not in "`~"):
            yield line, 0, ""   # fast path: plain text is neither a heading nor a fence
            continue
        if fence is not None:
            if closes_fence(line, fence):
                fence = None
        else:
            match = FENCE_RE.match(line)
            if match:
                fence = match.group(1)
            else:
                found = _HEADING_RE.match(line)
                if found and not found.group(1):
                    yield line, len(found.group(2)), found.group(3).strip()
                    continue
        yield line, 0, ""


# ---------------------------------------------------------------------------- tables

TABLE_CELL_MARKUP_RE = re.compile(r"\*\*|__|`")


def is_table_row(line: str) -> bool:
    return line.lstrip().startswith("|")


def is_table_separator(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("|") and "-" in stripped and set(stripped) <= set("|:- \t")


def cell(text: str) -> str:
    """A table cell's text without emphasis or code markup, spaces collapsed."""
    return " ".join(TABLE_CELL_MARKUP_RE.sub("", text).split())


def cells(line: str) -> list[str]:
    return [cell(c) for c in line.strip().strip("|").split("|")]


# ---------------------------------------------------------------------------- blocks and paragraphs


def paragraphs(text: str) -> list[list[str]]:
    """Blank-line separated paragraphs, each a list of its non-empty lines."""
    found: list[list[str]] = []
    current: list[str] = []
    for line in (text or "").replace("\r\n", "\n").split("\n"):
        if line.strip():
            current.append(line)
        elif current:
            found.append(current)
            current = []
    if current:
        found.append(current)
    return found


def blocks(text: str) -> list[tuple[str, str]]:
    """Split Markdown text into (kind, text) blocks: prose paragraphs, tables, code fences."""
    found: list[tuple[str, str]] = []
    current: list[str] = []
    kind = PROSE
    fence: str | None = None

    def flush() -> None:
        nonlocal current
        joined = "\n".join(current).strip("\n")
        if joined.strip():
            found.append((kind, joined))
        current = []

    for line in text.split("\n"):
        if fence is not None:
            current.append(line)
            if closes_fence(line, fence):
                fence = None
                flush()
                kind = PROSE
            continue
        match = FENCE_RE.match(line)
        if match:
            flush()
            fence, kind = match.group(1), CODE
            current.append(line)
            continue
        if not line.strip():
            flush()
            kind = PROSE
            continue
        line_kind = TABLE if is_table_row(line) else PROSE
        if line_kind != kind and current:
            flush()
        kind = line_kind
        current.append(line)
    flush()
    return found


# ---------------------------------------------------------------------------- sentences

_SENTENCE_END_RE = re.compile(r"[.!?]\s+(?=[A-ZÄÖÜ„\"(*⚠])")
_ABBREVIATIONS = frozenset(
    "abs art bzw ca dh etc evtl gem ggf idf inkl insb ivm lit lt max mind nr rz sog usw vgl zb zt".split()
)
# Where the chunker may cut a too-long line: after any clause end (. ! ? ; :). Cheaper and coarser than
# split_sentences, and part of the chunk hashes, so it stays as it is.
CLAUSE_END_RE = re.compile(r"(?<=[.!?;:])\s+")


def split_sentences(text: str) -> list[str]:
    """Split prose at sentence ends, not after ordinals ("14. Bezug") or abbreviations ("z. B.", "Abs.")."""
    sentences = []
    start = 0
    for match in _SENTENCE_END_RE.finditer(text):
        if text[match.start()] == ".":
            words = text[start:match.start()].split()
            last = words[-1] if words else ""
            if last[-1:].isdigit() or len(last) == 1 or fold_plain(last).replace(".", "") in _ABBREVIATIONS:
                continue
        sentences.append(text[start:match.start() + 1].strip())
        start = match.end()
    sentences.append(text[start:].strip())
    return [s for s in sentences if s]


def sentences_and_pairs(prose: str) -> tuple[list[str], list[str]]:
    """The sentences of a prose block (lines joined) and each two neighbouring sentences joined, for a
    statement whose subject stands in the sentence before ("… die Geringfügigkeitsgrenze … Für 2025 beträgt
    sie € 551,10 …")."""
    sentences = [s for s in split_sentences(" ".join(prose.split())) if s.strip()]
    return sentences, [f"{a} {b}" for a, b in zip(sentences, sentences[1:])]
