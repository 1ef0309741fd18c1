"""The entry card: one short text per entry that says what the entry is about, embedded beside its sections.

A section vector knows one part of an entry; a question phrased in other words ("Firmenauto" for an entry on
"Dienstwagen") often matches the entry as a whole better than any of its parts. The card gathers what a curator
says about the entry as a whole: title (the embedding header adds it), Stichwörter (tags), the curator's
synonyms that point at it, legal bases and the summary. The retriever ranks the cards as a third list, at entry
level (lib.search.fusion: ``entry_lists``), so the synonym table reaches the dense side too.

A card is stored as a chunk row with section key :data:`CARD_KEY` (the embedding cron, the dimension switch
and the health counts handle it like any row); it is never a passage: not indexed for full text, not shown as
a section, not given to the model.
"""
from __future__ import annotations

from collections.abc import Iterable

from .fulltext import SynonymTable, _contains_sequence
from ..text.german import tokens

CARD_KEY = "card"
CARD_POSITION = 10_000        # after every section of the entry
MAX_CARD_CHARS = 1_600        # about 400 tokens: the summary is cut first (it comes last)


def card_synonyms(table: SynonymTable | None, title: str, tags: Iterable[str]) -> list[str]:
    """Terms of the synonym table whose expansion names the entry (in its title or one of its tags).

    "Firmenauto -> Dienstwagen; Sachbezug" gives "Firmenauto" to an entry titled "Dienstwagen – Sachbezug
    ...". Terms that are themselves in the title or tags add nothing and are left out. Table order.
    """
    if not table:
        return []
    fields = [tokens(title)] + [tokens(tag) for tag in tags]
    own = {" ".join(words) for words in fields}
    found: list[str] = []
    for syn in table.entries:
        if syn.case_sensitive or " ".join(syn.words) in own or any(
                _contains_sequence(words, syn.words) for words in fields):
            continue
        if any(_contains_sequence(words, expansion) for expansion in syn.expansions for words in fields):
            if syn.term not in found:
                found.append(syn.term)
    return found


def card_text(*, tags: Iterable[str] = (), synonyms: Iterable[str] = (), legal_bases: Iterable[str] = (),
              summary: str = "", max_chars: int = MAX_CARD_CHARS) -> str:
    """The card's text (the title is added by the embedding header): labelled lines, the summary last."""
    lines = []
    for label, values in (("Stichwörter", tags), ("Auch genannt", synonyms), ("Rechtsgrundlagen", legal_bases)):
        values = [v.strip() for v in values if v and v.strip()]
        if values:
            lines.append(f"{label}: {', '.join(values)}")
    summary = " ".join((summary or "").split())
    if summary:
        lines.append(summary)
    text = "\n".join(lines)
    if len(text) > max_chars:
        cut = text[:max_chars]
        text = cut[:cut.rfind(" ")] if " " in cut[max_chars // 2:] else cut
    return text
