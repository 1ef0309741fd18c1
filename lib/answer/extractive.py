"""The Notbetrieb answer: without a model, the best matching passages quoted with [id] (Stand)."""
from __future__ import annotations

from ..text import md_blocks
from ..kb.format import LINKS_SECTION
from ..search.instructions import speaks_to_assistant
from .citations import CITATION_RE, extract_citations
from .conflicts import add_conflict_note
from .focus import question_terms, term_hits
from .prompt import clean_block_text
from ..text.lines import one_line
from .types import REFUSAL_TEXT, Conflict, ContextBlock, short

def _quote_units(text: str) -> list[str]:
    """Table rows (as "cell | cell") and prose sentences of a block, in order; a passage written to assistants
    (lib/search/instructions.speaks_to_assistant) is never quoted."""
    units = []
    for paragraph in md_blocks.paragraphs(clean_block_text(text)):
        prose: list[str] = []
        for pos, line in enumerate(paragraph):
            if md_blocks.is_table_row(line):
                is_header = pos + 1 < len(paragraph) and md_blocks.is_table_separator(paragraph[pos + 1])
                if not md_blocks.is_table_separator(line) and not is_header:
                    cells = [md_blocks.cell(c) for c in line.strip().strip("|").split("|")]
                    units.append(" | ".join(c for c in cells if c))
            else:
                prose.append(line.strip())
        if prose:
            units.extend(md_blocks.split_sentences(" ".join(prose)))
    return [u for u in units if not speaks_to_assistant(u)]


def extractive_answer(question: str, blocks: list[ContextBlock], max_blocks: int = 3,
                      conflicts: list[Conflict] | None = None) -> str:
    """Degraded answer without a model: the best matching sections quoted with [id] (Stand X).

    Blocks are ranked by the number of question words they contain, then by
    retrieval score. The best matching section of each entry comes first, so
    that one entry's several sections do not crowd out another entry on the
    same question (e.g. an older and a newer value; of entries in a conflict the
    newest Stand comes first); further sections fill the remaining places. Of each block the sentences and table rows sharing words
    with the question are quoted (the first ones when none do). A ⚠ note names
    every side of each conflict a quoted entry is part of. Returns
    :data:`REFUSAL_TEXT` when there are no blocks.
    """
    if not blocks:
        return REFUSAL_TEXT
    terms = question_terms(question)
    matches = [term_hits(terms, f"{b.title} {b.heading_path} {b.text}") for b in blocks]
    # a "Verweise" section only lists other entries: quoted last, when nothing else is left
    ranked = sorted(range(len(blocks)),
                    key=lambda i: (blocks[i].section_key == LINKS_SECTION, -matches[i], -blocks[i].score, i))
    first_of_entry: list[int] = []
    entries_seen: set[str] = set()
    for index in ranked:
        if blocks[index].entry_id not in entries_seen and (matches[index] or not terms):
            entries_seen.add(blocks[index].entry_id)
            first_of_entry.append(index)
    # entries on either side of a conflict: the newest Stand takes the first of their places
    in_conflict = {i.lower() for c in conflicts or [] for i in c.entry_ids}
    slots = [n for n, i in enumerate(first_of_entry) if blocks[i].entry_id.lower() in in_conflict]
    newest_first = sorted((first_of_entry[n] for n in slots), key=lambda i: blocks[i].stand or "", reverse=True)
    for n, i in zip(slots, newest_first):
        first_of_entry[n] = i
    ranked = first_of_entry + [i for i in ranked if i not in first_of_entry]
    parts = [
        "**Ohne KI-Antwort (Notbetrieb):** Das Sprachmodell ist gerade nicht erreichbar. Die folgenden "
        "Abschnitte der Wissensbasis passen am besten zu Ihrer Frage; sie sind wörtlich zitiert, bitte "
        "prüfen Sie sie selbst."
    ]
    seen: set[tuple[str, str]] = set()
    for index in ranked:
        if len(seen) >= max_blocks:
            break
        block = blocks[index]
        key = (block.entry_id, block.section_key or block.heading_path)
        if key in seen:
            continue
        units = _quote_units(block.text)
        if not units:
            continue
        seen.add(key)
        chosen = [u for u in units if terms and term_hits(terms, u)] or units[:3]
        quoted: list[str] = []
        used = 0
        for unit in chosen[:6]:
            if quoted and used + len(unit) > 700:
                break
            # references to other entries inside the quote are not citations of this answer
            quoted.append(short(CITATION_RE.sub(lambda m: m.group(1), unit), 700))
            used += len(unit)
        section = block.heading_path.split(">")[-1].strip() if block.heading_path else ""
        label = f"{block.title} – {section}" if section and section != block.title else block.title
        header = f"**{one_line(label)}** [{block.entry_id}] (Stand {block.stand})"
        parts.append(header + "\n" + "\n".join("> " + q for q in quoted))
    if len(parts) == 1:
        return REFUSAL_TEXT
    answer = "\n\n".join(parts)
    return add_conflict_note(answer, conflicts or [], extract_citations(answer))
