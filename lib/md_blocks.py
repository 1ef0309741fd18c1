"""Markdown blocks of KB and answer text: paragraphs, table rows and cells, headings, sentences."""
from __future__ import annotations

import re

from .text_de import fold_plain

HEADING_RE = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$")
_SENTENCE_END_RE = re.compile(r"[.!?]\s+(?=[A-ZÄÖÜ„\"(*⚠])")
_ABBREVIATIONS = frozenset(
    "abs art bzw ca dh etc evtl gem ggf idf inkl insb ivm lit lt max mind nr rz sog usw vgl zb zt".split()
)


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


def paragraphs(text: str) -> list[list[str]]:
    """Blank-line separated paragraphs, each a list of its non-empty lines."""
    paragraphs: list[list[str]] = []
    current: list[str] = []
    for line in (text or "").replace("\r\n", "\n").split("\n"):
        if line.strip():
            current.append(line)
        elif current:
            paragraphs.append(current)
            current = []
    if current:
        paragraphs.append(current)
    return paragraphs



def is_table_row(line: str) -> bool:
    return line.lstrip().startswith("|")


def is_table_separator(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("|") and "-" in stripped and set(stripped) <= set("|:- \t")



TABLE_CELL_MARKUP_RE = re.compile(r"\*\*|__|`")


def cell(text: str) -> str:
    return " ".join(TABLE_CELL_MARKUP_RE.sub("", text).split())


def cells(line: str) -> list[str]:
    return [cell(c) for c in line.strip().strip("|").split("|")]

