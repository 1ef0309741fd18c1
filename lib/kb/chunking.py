"""Section-aware chunks of an entry, with stable content hashes.

One chunk per H2 section. A section longer than ``max_chars`` is split at its
H3 headings first, then at block boundaries (paragraphs, lists, tables, code
fences). A table that alone is too long is split by rows, each part repeating
the header and separator rows; a paragraph that alone is too long is split at
lines, then sentences, then words. Consecutive parts of plain prose share an
overlap of at most ``overlap_chars``.

The hash of a chunk depends only on its section key, heading path and text,
not on its position, so editing one section leaves the hashes of the other
chunks unchanged (the import re-embeds only what changed).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from . import format as kb_format
from ..text import md_blocks
from ..llm.tokens import estimate_tokens

PROSE, TABLE, CODE = md_blocks.PROSE, md_blocks.TABLE, md_blocks.CODE


@dataclass
class Chunk:
    """A retrievable piece of one entry."""

    section_key: str
    heading_path: str
    text: str
    position: int
    token_estimate: int  # ollama_tokens.estimate_tokens: characters / 3.5, the one estimate of the addon
    content_hash: str


def chunk_hash(section_key: str, heading_path: str, text: str) -> str:
    """sha256 hex over (section key, heading path, text), unambiguously encoded."""
    payload = json.dumps([section_key, heading_path, text], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- blocks


def _hard_split(text: str, limit: int, separator_re: re.Pattern | None) -> list[str]:
    """Cut text into pieces <= limit at separator matches (or anywhere as last resort)."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = -1
        if separator_re is not None:
            for match in separator_re.finditer(rest, 0, limit + 1):
                if 0 < match.start() <= limit:
                    cut = match.start()
        if cut <= 0:
            cut = limit
            pieces.append(rest[:cut])
            rest = rest[cut:]
        else:
            pieces.append(rest[:cut].rstrip())
            rest = rest[cut:].lstrip()
    if rest.strip():
        pieces.append(rest)
    return pieces


def _split_prose(text: str, limit: int) -> list[str]:
    """Split a too-long paragraph at lines, then sentences, then words."""
    out: list[str] = []
    for line_piece in _pack([l for l in text.split("\n") if l.strip()], limit, "\n"):
        if len(line_piece) <= limit:
            out.append(line_piece)
            continue
        sentences = md_blocks.CLAUSE_END_RE.split(line_piece)
        for piece in _pack(sentences, limit, " "):
            out.extend([piece] if len(piece) <= limit else _hard_split(piece, limit, re.compile(r"\s+")))
    return out


def _pack(parts: list[str], limit: int, joiner: str) -> list[str]:
    """Greedily join parts with joiner while the result stays <= limit."""
    packed: list[str] = []
    current = ""
    for part in parts:
        candidate = f"{current}{joiner}{part}" if current else part
        if current and len(candidate) > limit:
            packed.append(current)
            current = part
        else:
            current = candidate
    if current:
        packed.append(current)
    return packed


def _split_table(text: str, limit: int) -> list[str]:
    """Split a table by rows; every part repeats the header row and separator row."""
    lines = text.split("\n")
    if len(lines) >= 2 and md_blocks.is_table_separator(lines[1]):
        head, rows = lines[:2], lines[2:]
    else:
        head, rows = [], lines
    head_text = "\n".join(head)
    budget = max(1, limit - len(head_text) - 1) if head else limit
    parts = []
    for group in _pack(rows, budget, "\n"):
        parts.append(f"{head_text}\n{group}" if head else group)
    return parts


def _split_code(text: str, limit: int) -> list[str]:
    """Split a fenced code block by lines, re-opening and closing the fence on every part."""
    lines = text.split("\n")
    opening = lines[0]
    closing = lines[-1] if len(lines) > 1 and md_blocks.FENCE_RE.match(lines[-1]) else ""
    inner = lines[1:-1] if closing else lines[1:]
    fence_len = len(opening) + len(closing) + 2
    groups = _pack(inner, max(1, limit - fence_len), "\n")
    return [f"{opening}\n{group}\n{closing or md_blocks.FENCE_RE.match(opening).group(1)}" for group in groups]


def _units(text: str, limit: int, prose_limit: int) -> list[tuple[str, str]]:
    """Blocks of text, each cut so that it fits into limit (except single oversize table rows).

    A paragraph that must be cut is cut into pieces <= prose_limit, leaving room
    for the overlap that the next part starts with.
    """
    units: list[tuple[str, str]] = []
    for kind, block in md_blocks.blocks(text):
        if len(block) <= limit:
            units.append((kind, block))
        elif kind == TABLE:
            units.extend((TABLE, part) for part in _split_table(block, limit))
        elif kind == CODE:
            units.extend((CODE, part) for part in _split_code(block, limit))
        else:
            units.extend((PROSE, part) for part in _split_prose(block, prose_limit))
    return units


def _tail(text: str, size: int) -> str:
    """The last <= size characters of text, starting at a sentence or word boundary."""
    if size <= 0 or not text:
        return ""
    if len(text) <= size:
        return text
    window = text[-size:]
    sentence = md_blocks.CLAUSE_END_RE.search(window)
    if sentence and sentence.end() < len(window):
        return window[sentence.end():].strip()
    space = re.search(r"\s+", window)
    return window[space.end():].strip() if space and space.end() < len(window) else ""


def _split_text(text: str, max_chars: int, overlap_chars: int) -> list[str]:
    """Pack blocks into parts <= max_chars; prose->prose part boundaries carry an overlap."""
    parts: list[str] = []
    current: list[tuple[str, str]] = []
    current_len = 0
    prose_limit = max_chars - overlap_chars - 2 if overlap_chars > 0 else max_chars
    for kind, unit in _units(text, max_chars, prose_limit):
        added = len(unit) + (2 if current else 0)
        if current and current_len + added > max_chars:
            parts.append("\n\n".join(u for _k, u in current))
            last_kind, last_text = current[-1]
            current, current_len = [], 0
            if last_kind == PROSE and kind == PROSE:
                overlap = _tail(last_text, overlap_chars)
                if overlap and len(overlap) + 2 + len(unit) <= max_chars:
                    current, current_len = [(PROSE, overlap)], len(overlap)
            added = len(unit) + (2 if current else 0)
        current.append((kind, unit))
        current_len += added
    if current:
        parts.append("\n\n".join(u for _k, u in current))
    return parts


# --------------------------------------------------------------------------- entry


def _h3_blocks(text: str) -> list[tuple[str, str]]:
    """Split section text at H3 headings: [(h3 heading or "", body)], fences respected."""
    blocks: list[tuple[str, list[str]]] = [("", [])]
    for line, level, title in md_blocks.lines_with_headings(text):
        if level == 3:
            blocks.append((title, []))
        else:
            blocks[-1][1].append(line)
    return [(heading, "\n".join(lines).strip()) for heading, lines in blocks]


def chunk_entry(entry: kb_format.ParsedEntry, max_chars: int = 2400, overlap_chars: int = 200) -> list[Chunk]:
    """Cut an entry into chunks: one per H2 section, long sections split (see module doc).

    ``max_chars`` is raised to at least 200 and ``overlap_chars`` kept within
    0..max_chars/2. Empty sections give no chunk. The H3 heading of a split part moves into
    ``heading_path`` ("H2 > H3") and is not repeated in the text.
    Deterministic: the same entry always gives the same chunks.
    """
    max_chars = max(int(max_chars), 200)
    overlap_chars = max(0, min(int(overlap_chars), max_chars // 2))
    pieces: list[tuple[str, str, str]] = []  # (section key, heading path, text)
    for section in entry.sections:
        text = section.text.strip()
        if not text:
            continue
        heading = section.heading
        if len(text) <= max_chars:
            pieces.append((section.key, heading, text))
            continue
        for h3, body in _h3_blocks(text):
            if not body:
                continue
            path = f"{heading} > {h3}" if h3 and heading else (h3 or heading)
            for part in _split_text(body, max_chars, overlap_chars):
                pieces.append((section.key, path, part))
    return [
        Chunk(section_key=key, heading_path=path, text=text, position=index,
              token_estimate=estimate_tokens(text), content_hash=chunk_hash(key, path, text))
        for index, (key, path, text) in enumerate(pieces)
    ]


# Part of every chunk's embedding signature: raise it when embed_text() changes what it produces, and every
# chunk is embedded again (models/pv_kb_chunk.py).
EMBED_FORMAT = "1"


def embed_text(chunk: Chunk, entry_title: str, entry_id: str) -> str:
    """Text to embed: header "<title> – <heading_path>", a newline, the chunk text.

    The id stands in for the title if the title is empty; an empty heading path
    leaves the header as the title alone.
    """
    title = (entry_title or "").strip() or entry_id
    header = f"{title} – {chunk.heading_path}" if chunk.heading_path else title
    return f"{header}\n{chunk.text}"
