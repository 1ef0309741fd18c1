"""Question-focused cutting of a context block for small context windows.

A small model reads a window of ~2,000 tokens: four blocks of a few hundred characters each. Cut at its
head, a long section loses exactly the row or sentence the question asks about ("nach 25 Dienstjahren",
"über 60 km", the Höchstbeitragsgrundlage row of a Kernwerte table). :func:`focus_text` keeps instead the
lines and sentences that share words or numbers with the question, in their order, with the header of each
table they come from, and writes "…" where something was left out. Text that shares nothing with the
question is cut at its head as before.

Nothing here imports Odoo.
"""
from __future__ import annotations

import re

from ..text import md_blocks
from ..text.german import content_words, fold_plain, light_stem, word_tokens

GAP = "…"
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_LONG_PROSE = 160          # a prose line longer than this is split into its sentences


def question_terms(question: str) -> set[str]:
    """The question's content words, folded and lightly stemmed."""
    return {light_stem(fold_plain(t)) for t in content_words(word_tokens(question))}


def question_numbers(question: str) -> set[str]:
    """The numbers written in the question ("25", "60", "2025"), as written."""
    return set(_NUMBER_RE.findall(question or ""))


def term_hits(terms: set[str], text: str) -> int:
    """How many of ``terms`` occur in ``text`` (prefix match either way, at least 5 letters)."""
    words = {light_stem(fold_plain(t)) for t in word_tokens(text) if len(t) >= 3}
    hits = 0
    for term in terms:
        if term in words or (
            len(term) >= 5 and any(w.startswith(term) or (len(w) >= 5 and term.startswith(w)) for w in words)
        ):
            hits += 1
    return hits


def _units(text: str) -> list[tuple[str, int, bool]]:
    """(text, table id or -1, is a table header line) per line of ``text``; long prose lines become one unit
    per sentence. A table's header is its first row and the separator under it."""
    units: list[tuple[str, int, bool]] = []
    lines = text.split("\n")
    table = -1
    in_table = False
    for pos, line in enumerate(lines):
        if md_blocks.is_table_row(line):
            if not in_table:
                table, in_table = pos, True
            header = md_blocks.is_table_separator(line) or (
                pos + 1 < len(lines) and md_blocks.is_table_separator(lines[pos + 1]))
            units.append((line, table, header))
            continue
        in_table = False
        if len(line) > _LONG_PROSE:
            units.extend((s, -1, False) for s in md_blocks.split_sentences(line) if s.strip())
        else:
            units.append((line, -1, False))
    return units


def focus_text(text: str, question: str, room: int) -> str:
    """The parts of ``text`` that answer to ``question``, within ``room`` characters; "" when nothing is
    related to the question (the caller then cuts the text at its head).

    Each line (a long prose line: each sentence) scores the question's words and numbers it contains.
    The best lines are taken, best first, while they fit, each table row with its table's header; they are
    written in their original order, a prose sentence on a line of its own and a run of left-out lines as
    one "…" line.
    """
    terms, numbers = question_terms(question), question_numbers(question)
    if not (terms or numbers) or room <= 0:
        return ""
    units = _units(text)

    def score(unit: str) -> int:
        found = set(_NUMBER_RE.findall(unit))
        return term_hits(terms, unit) + 2 * len(numbers & found)

    scores = [0 if header else score(unit) for unit, _table, header in units]
    if not any(scores):
        return ""
    headers: dict[int, list[int]] = {}
    for index, (_unit, table, header) in enumerate(units):
        if header:
            headers.setdefault(table, []).append(index)
    chosen: set[int] = set()

    def render(indices: set[int]) -> str:
        out: list[str] = []
        previous = -1
        for index in sorted(indices):
            if index != previous + 1 and (out or index > 0):
                out.append(GAP)
            out.append(units[index][0].strip() if units[index][1] < 0 else units[index][0])
            previous = index
        if out and previous != len(units) - 1:
            out.append(GAP)
        return "\n".join(out)

    for index in sorted(range(len(units)), key=lambda i: (-scores[i], i)):
        if scores[index] <= 0:
            break
        trial = chosen | {index} | set(headers.get(units[index][1], []) if units[index][1] >= 0 else [])
        if len(render(trial)) <= room:
            chosen = trial
    return render(chosen) if chosen else ""

