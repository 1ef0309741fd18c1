"""Validation of a model answer in code and the note for one regeneration (the status rule: ``outcome``)."""
from __future__ import annotations

import re
from typing import Sequence

from ..text import md_blocks
from ..text.german import fold_plain
from .citations import CITATION_RE, extract_citations, is_refusal
from .conflicts import conflict_marked
from .types import REFUSAL_TEXT, Conflict, ContextBlock, Validation, Violation, ordered_unique, short
from .values import find_values, source_index, value_in_source, value_in_year, value_of_other_year, years

_STAND_RE = re.compile(r"\bStand:?\s*\d{4}-\d{2}", re.I)
_YEAR_MONTH_RE = re.compile(r"\b\d{4}-\d{2}\b")


def _units(paragraph: list[str]) -> list[str]:
    """Sentences of prose lines and table rows (separator rows skipped)."""
    units = []
    for line in paragraph:
        if md_blocks.is_table_row(line):
            if not md_blocks.is_table_separator(line):
                units.append(line.strip())
        else:
            units.extend(md_blocks.split_sentences(line.strip()))
    return units


def _table_has_stand_column(paragraph: list[str]) -> bool:
    for pos, line in enumerate(paragraph[:-1]):
        if md_blocks.is_table_row(line) and md_blocks.is_table_separator(paragraph[pos + 1]):
            return "stand" in fold_plain(line)
    return False



def validate_answer(
    answer: str, blocks: list[ContextBlock], conflicts: Sequence[Conflict] = (), question_year: str | None = None
) -> Validation:
    """Check an answer against the retrieved blocks and the known conflicts.

    Codes: ``unknown_id`` (cited, not retrieved), ``no_citation`` (a non-refusal
    without any citation), ``uncited_number`` (a sentence or table row with a
    value and no citation in it or its paragraph; a table may also be covered by
    the paragraph right before or after it), ``value_wrong_year`` (a prose sentence naming one year states a value that its cited entries give
    only for another year; a prose sentence naming none is held to ``question_year``, the one year the question
    names, where its cited entries bind the value to other years), ``value_not_in_source`` (a value
    found in none of the blocks of the ids cited for it), ``conflict_side_missing``
    (some but not all sides of a conflict cited); warnings: ``missing_stand``
    (a value sentence without ``(Stand YYYY-MM)``; a table row or quoted line
    may take it from a "Stand" column or from its paragraph), ``conflict_unmarked`` (all sides
    cited but no ⚠ paragraph citing them together).
    """
    cited = extract_citations(answer)
    retrieved = {b.entry_id.lower() for b in blocks}
    refused = is_refusal(answer)
    violations = [Violation("unknown_id", cid) for cid in cited if cid not in retrieved]
    if not refused and not cited:
        violations.append(Violation("no_citation", short(answer)))

    sources: dict[str, list[str]] = {}
    for block in blocks:
        sources.setdefault(block.entry_id.lower(), []).extend([block.title, block.text])
    index_cache: dict[str, tuple[set, set]] = {}

    def entry_index(entry_id: str) -> tuple[set, set]:
        if entry_id not in index_cache:
            index_cache[entry_id] = source_index("\n".join(sources.get(entry_id, [])))
        return index_cache[entry_id]

    paragraphs = md_blocks.paragraphs(answer)
    para_text = ["\n".join(p) for p in paragraphs]
    para_cites = [extract_citations(t) for t in para_text]
    para_stand = [bool(_STAND_RE.search(t)) for t in para_text]
    for pos, paragraph in enumerate(paragraphs):
        is_table = any(md_blocks.is_table_row(line) for line in paragraph)
        near = [p for p in (pos - 1, pos + 1) if is_table and 0 <= p < len(paragraphs)]
        context_cites = para_cites[pos] or [c for p in near for c in para_cites[p]]
        context_stand = para_stand[pos] or any(para_stand[p] for p in near)
        stand_column = is_table and _table_has_stand_column(paragraph)
        for unit in _units(paragraph):
            values = find_values(CITATION_RE.sub(" ", unit))
            if not values:
                continue
            ids = extract_citations(unit) or context_cites
            if not ids:
                violations.append(Violation("uncited_number", short(unit)))
            known = [i for i in ids if i in retrieved]
            if known:
                indexes = [entry_index(i) for i in known]
                # a prose sentence about one year: its values must stand in a cited passage of that year
                named = set() if md_blocks.is_table_row(unit) else years(_STAND_RE.sub(" ", CITATION_RE.sub(" ", unit)))
                own = [b for b in blocks if b.entry_id.lower() in known]
                for value in values:
                    if not any(value_in_source(value, k, n) for k, n in indexes):
                        detail = f"{value.text} (zitiert: {', '.join(known)})"
                        violations.append(Violation("value_not_in_source", detail))
                    elif len(named) == 1 and not value_in_year(value, next(iter(named)), own):
                        detail = f"{value.text} ({next(iter(named))}, zitiert: {', '.join(known)})"
                        violations.append(Violation("value_wrong_year", detail))
                    elif (not named and question_year and not md_blocks.is_table_row(unit)
                          and value_of_other_year(value, question_year, own)):
                        detail = f"{value.text} (gefragt {question_year}, zitiert: {', '.join(known)})"
                        violations.append(Violation("value_wrong_year", detail))
            # prose: the sentence itself names the stand; a table row or a quoted
            # line may rely on a "Stand" column or on the stand given around it
            framed = md_blocks.is_table_row(unit) or unit.startswith(">")
            stand_ok = _STAND_RE.search(unit) or (
                framed and (context_stand or (stand_column and _YEAR_MONTH_RE.search(unit)))
            )
            if not stand_ok:
                violations.append(Violation("missing_stand", short(unit)))

    cited_set = set(cited)
    for conflict in conflicts:
        sides = ordered_unique(i.lower() for i in conflict.entry_ids)
        hit = [s for s in sides if s in cited_set]
        if not hit:
            continue
        missing = [s for s in sides if s not in cited_set]
        if missing:
            detail = f"{conflict.key}: {', '.join(sides)} (fehlt: {', '.join(missing)})"
            violations.append(Violation("conflict_side_missing", detail))
        elif not conflict_marked(answer, sides):
            violations.append(Violation("conflict_unmarked", f"{conflict.key}: {', '.join(sides)}"))

    unique = ordered_unique(f"{v.code}\x00{v.detail}" for v in violations)
    return Validation(cited, [Violation(*u.split("\x00", 1)) for u in unique], refused)


_STRICT_LINES = {
    "unknown_id": "Diese Kennungen stehen nicht in <wissensbasis> und dürfen nicht zitiert werden: {items}.",
    "no_citation": "Die Antwort enthält keine einzige Quellenangabe. Belegen Sie jede Aussage mit [id] "
    "oder antworten Sie wörtlich: „" + REFUSAL_TEXT + "“",
    "uncited_number": "Diese Aussagen enthalten Werte ohne Quellenangabe; setzen Sie die passende [id] "
    "dazu oder lassen Sie sie weg: {items}.",
    "value_not_in_source": "Diese Werte stehen in keinem der zitierten Einträge; übernehmen Sie Werte nur "
    "wörtlich aus dem zitierten Eintrag: {items}.",
    "value_wrong_year": "Diese Werte gelten laut zitiertem Eintrag für ein anderes Jahr als das genannte; "
    "nennen Sie den Wert des gefragten Jahres wörtlich aus dem Eintrag: {items}.",
    "conflict_side_missing": "Ein Widerspruch wurde nicht vollständig dargestellt; nennen Sie in einer Zeile "
    "„⚠ Widerspruch: …“ jede Seite mit Kennung, Wert und Stand: {items}.",
    "conflict_unmarked": "Markieren Sie den Widerspruch mit einer Zeile „⚠ Widerspruch: …“, die alle Seiten "
    "zitiert: {items}.",
    "missing_stand": "Geben Sie bei diesen Werten den Stand an, als (Stand JJJJ-MM): {items}.",
}


def strict_instruction(validation: Validation) -> str:
    """German note for one regeneration, naming every problem found ("" when none)."""
    if not validation.violations:
        return ""
    grouped: dict[str, list[str]] = {}
    for violation in validation.violations:
        grouped.setdefault(violation.code, []).append(violation.detail)
    lines = [
        "Hinweis zur Wiederholung: Die vorige Antwort hat die Regeln verletzt und wird nicht angezeigt. "
        "Schreiben Sie die Antwort neu, nur aus <wissensbasis>, und beheben Sie:"
    ]
    for code, template in _STRICT_LINES.items():
        if code in grouped:
            details = grouped[code]
            if code == "unknown_id":
                items = ", ".join(f"[{d}]" for d in details)
            else:
                items = "; ".join(f"„{short(d, 120)}“" for d in details[:5] if d)
            lines.append("- " + template.format(items=items or "–"))
    for code in grouped:
        if code not in _STRICT_LINES:
            lines.append(f"- Regelverstoß ({code}): " + "; ".join(short(d, 120) for d in grouped[code][:5]))
    return "\n".join(lines)
