"""Writing the structured answer (the structured mode: lib/answer/structured.py) from the checked statements.

:func:`render_answer` writes the German Markdown answer from the statements that passed
(lib/answer/structured_checks.py): ``text [id] (Stand YYYY-MM)`` per statement, ⚠ for contradictions,
plus the conflict note of the code; :func:`retry_note` the note for one regeneration of the failed
statements. A refusal is the refusal sentence alone (lib/answer/respond.py): the model's reason is a claim
without a source and goes to the question log only. Nothing here imports Odoo.
"""
from __future__ import annotations

from .conflicts import add_conflict_note
from .structured import shown_text
from .structured_checks import FAILING, Checked, stand_month
from .types import Conflict, ContextBlock, short as _short


def _stands(blocks: list[ContextBlock]) -> dict[str, str]:
    out: dict[str, str] = {}
    for block in blocks:
        out.setdefault(block.entry_id.lower(), stand_month(block.stand) or block.stand)
    return out


def render_statement(checked: Checked, blocks: list[ContextBlock], conflicts: list[Conflict] = ()) -> str:
    """One statement as Markdown: ``text [id] (Stand YYYY-MM)``; ⚠ when it states a side of a conflict."""
    stands = _stands(blocks)
    cites = ", ".join(f"[{i}] (Stand {stands.get(i, '?')})" for i in checked.ids)
    sides = {i.lower() for c in conflicts for i in c.entry_ids}
    marked = [i for i in checked.statement.conflict_ids if i in stands]
    prefix = "⚠ Widerspruch: " if (len(marked) >= 2 or any(i in sides for i in checked.ids)) else ""
    return f"{prefix}{shown_text(checked.statement.text)} {cites}".strip()


def render_answer(checked: list[Checked], blocks: list[ContextBlock], conflicts: list[Conflict] = ()) -> str:
    """The answer from the statements that passed; the ⚠ note of the code for each touched conflict.

    Statements that state a side of a conflict come together after the others, so the sides stand in one
    paragraph block; every side the answer touched but did not show is added by ``add_conflict_note``.
    """
    good = [c for c in checked if c.ok]
    if not good:
        return ""
    sides = {i.lower() for c in conflicts for i in c.entry_ids}
    plain = [render_statement(c, blocks, conflicts) for c in good if not set(c.ids) & sides]
    conflicting = [render_statement(c, blocks, conflicts) for c in good if set(c.ids) & sides]
    parts = plain + (["\n".join(conflicting)] if conflicting else [])
    answer = "\n\n".join(parts)
    cited = [i for c in good for i in c.ids]
    return add_conflict_note(answer, list(conflicts), cited)


# --------------------------------------------------------------------------- regeneration

_REASONS = {
    "no_citation": "ohne Quelle",
    "unknown_id": "Kennung nicht in <wissensbasis>",
    "quote_missing": "ohne wörtliches Zitat",
    "quote_not_found": "das Zitat steht nicht im zitierten Eintrag",
    "value_not_in_source": "der Wert steht nicht im zitierten Eintrag",
    "value_wrong_year": "der Wert gilt laut Eintrag für ein anderes Jahr",
    "stand_mismatch": "der Stand passt nicht zum zitierten Eintrag",
    "echo": "enthält Anweisungstext",
    "empty": "leer",
}


def retry_note(failed: list[Checked]) -> str:
    """German note for one regeneration of only the failed statements."""
    lines = ["Hinweis zur Wiederholung: Diese Aussagen wurden verworfen. Gib dasselbe JSON zurück, aber nur "
             "mit Ersatz für sie – Zitat wörtlich aus dem zitierten Eintrag, Werte nur wörtlich aus ihm; "
             "belegt die Wissensbasis eine Aussage nicht, lass sie weg:"]
    for pos, item in enumerate(failed, 1):
        reasons = sorted({_REASONS.get(v.code, v.code) for v in item.violations if v.code in FAILING})
        lines.append(f"{pos}. „{_short(item.statement.text, 120)}“ – {', '.join(reasons)}")
    return "\n".join(lines)

