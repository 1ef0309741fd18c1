"""The checks of one structured statement in code (the structured mode: lib/answer/structured.py).

:func:`check_statement` validates a statement against the retrieved blocks — cited ids ⊆ retrieved ids,
the quote found (fuzzy, :func:`match_quote`) in a block of a cited entry, every value of the text and of
``werte`` present in a cited entry, each given Stand equal to a cited entry's Stand.

Violation codes of a statement (see :mod:`lib.answer.outcome` for what the user sees):
``no_citation``, ``unknown_id``, ``quote_missing``, ``quote_not_found``, ``value_not_in_source``,
``value_wrong_year`` (the statement names one year, the value stands in its cited entry only for another; a
statement naming no year is held to the one year its question names, where the entry binds the value to years),
``stand_mismatch``, ``echo``, ``empty`` make the statement fail (:data:`FAILING`); ``missing_stand`` is
repaired (the Stand shown is the cited entry's own). ``citation_moved`` (repaired): the cited entries do not carry
the statement, exactly one other retrieved entry does (:func:`check_statement`). Two repairs keep a statement that small models write
right but quote loosely, never one the base does not carry: ``quote_by_code`` — the quote is missing or not
verbatim, but one sentence (or table row, or two neighbouring sentences) of a cited entry holds every value of the statement and shares
its content words (:func:`supporting_sentence`); that sentence becomes the passage shown. ``citation_pruned``
— a cited entry that holds none of the statement's values is not shown as its source while another cited
entry holds them all. ``invalid_json`` is the code of a response that is
no such JSON. Nothing here imports Odoo.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from ..kb.format import ENTRY_ID
from ..text.md_blocks import TABLE, blocks as _md_blocks, sentences_and_pairs
from ..text.german import content_words, fold_plain as _fold, light_stem, word_tokens
from . import freetext
from .citations import CITATION_RE, extract_citations
from .structured import QUOTE_MAX_WORDS, Statement, shown_text
from .types import ContextBlock, Violation, short as _short
from .values import (find_values as _find_values, source_index as _source_index, value_in_source as _value_in_source,
                     value_in_year, value_of_other_year, years)

QUOTE_MIN_RATIO = 0.8      # difflib ratio of the quote's words against the best window of the block's words
SUPPORT_MIN_SHARE = 0.6    # a statement without values: share of its content words a supporting sentence holds
FAILING = frozenset({"no_citation", "unknown_id", "quote_missing", "quote_not_found", "value_not_in_source",
                     "value_wrong_year", "stand_mismatch", "echo", "empty"})

_STAND_FMT = re.compile(r"^\s*(\d{4})-(\d{2})")
_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> list[tuple[str, int, int]]:
    """Folded words of ``text`` with their character span."""
    return [(_fold(m.group(0)), m.start(), m.end()) for m in _WORD.finditer(text or "")]


_ID_LEAD = re.compile(rf"^\s*(?:\[?{ENTRY_ID}\]?\s*[:–-]\s*)+")


def clean_quote(quote: str) -> str:
    """The quote without the entry ids a model writes into it ("lb-rk-02: € 0,50 …", "[lb-rk-02] …"):
    an id is not part of the passage it copies."""
    quote = _ID_LEAD.sub("", quote or "")
    return CITATION_RE.sub(" ", quote)


def match_quote(quote: str, text: str) -> str | None:
    """The passage of ``text`` that ``quote`` copies, or None.

    Words are compared folded (case, umlauts, punctuation and Markdown ignored); the quote's first
    :data:`QUOTE_MAX_WORDS` words must match a window of the text with a difflib ratio of at least
    :data:`QUOTE_MIN_RATIO` (a changed ending or one missing word passes, a paraphrase does not). A quote
    of fewer than two words never matches. Returns the original text of the best window.
    """
    wanted = [w for w, _s, _e in _words(clean_quote(quote))][:QUOTE_MAX_WORDS]
    if len(wanted) < 2:
        return None
    words = _words(text)
    if not words:
        return None
    tokens = [w for w, _s, _e in words]
    vocabulary = set(wanted)
    best, span = 0.0, None
    n = len(wanted)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(wanted)
    for size in range(max(2, n - 2), n + 3):
        for start in range(0, max(1, len(tokens) - size + 1)):
            window = tokens[start:start + size]
            if window[0] not in vocabulary and window[-1] not in vocabulary:
                continue
            matcher.set_seq1(window)
            if matcher.real_quick_ratio() < QUOTE_MIN_RATIO or matcher.quick_ratio() < QUOTE_MIN_RATIO:
                continue
            ratio = matcher.ratio()
            if ratio > best:
                best, span = ratio, (start, min(start + size, len(tokens)) - 1)
    if span is None or best < QUOTE_MIN_RATIO:
        return None
    return text[words[span[0]][1]:words[span[1]][2]]


def _stems(text: str) -> set[str]:
    return {light_stem(_fold(w)) for w in content_words(word_tokens(text))}


def _passages(text: str) -> tuple[list[str], list[str]]:
    """(single, paired): the sentences of the prose and the rows of the tables of a block; and each two
    neighbouring sentences of a paragraph, for a statement whose subject stands in the sentence before
    ("… die Geringfügigkeitsgrenze … Für 2025 beträgt sie € 551,10 …")."""
    single, paired = [], []
    for kind, chunk in _md_blocks(text or ""):
        if kind == TABLE:
            single.extend(row for row in chunk.split("\n") if row.strip())
            continue
        sentences, pairs = sentences_and_pairs(chunk)
        single.extend(sentences)
        paired.extend(pairs)
    return single, paired


def supporting_sentence(text: str, blocks: list[ContextBlock]) -> tuple[str, str] | None:
    """(sentence, entry id) of the blocks that carries the statement ``text``, or None.

    The sentence must hold every value of the statement (amounts, rates, periods: lib/answer/values.py) and
    share its content words: at least two when the statement has values (one value-word alone, e.g. the
    number, is not enough), else :data:`SUPPORT_MIN_SHARE` of them. The sentence with most shared words wins;
    two neighbouring sentences of a paragraph are tried only when no single one qualifies.
    """
    plain = shown_text(CITATION_RE.sub(" ", text or ""))
    values = _find_values(plain)
    words = _stems(plain)
    if not words:
        return None
    need = min(2, len(words)) if values else max(2, int(len(words) * SUPPORT_MIN_SHARE + 0.999))
    split = [(block.entry_id.lower(), _passages(block.text)) for block in blocks]
    for pick in (0, 1):     # one sentence when one carries it, else two neighbouring ones
        best = None
        for entry_id, passages in split:
            for sentence in passages[pick]:
                if values:
                    index = _source_index(sentence)
                    if not all(_value_in_source(v, *index) for v in values):
                        continue
                shared = len(words & _stems(sentence))
                if shared >= need and (best is None or shared > best[0]):
                    best = (shared, sentence.strip(), entry_id)
        if best:
            return best[1], best[2]
    return None


def _holds_values(values, blocks: list[ContextBlock]) -> bool:
    index = _source_index("\n".join(f"{b.title}\n{b.text}" for b in blocks))
    return all(_value_in_source(v, *index) for v in values)


def stand_month(value: str) -> str:
    """``YYYY-MM`` of a Stand (``2026-01-15`` → ``2026-01``), "" when it does not start with one."""
    match = _STAND_FMT.match(value or "")
    return f"{match.group(1)}-{match.group(2)}" if match else ""


@dataclass
class Checked:
    """A statement after the checks: its violations, the passage its quote matched, ids in order."""

    statement: Statement
    violations: list[Violation]
    ids: list[str]
    passage: str = ""
    passage_id: str = ""

    @property
    def ok(self) -> bool:
        return not any(v.code in FAILING for v in self.violations)


MOVABLE = frozenset({"quote_missing", "quote_not_found", "value_not_in_source", "value_wrong_year"})


def _carrier(statement: Statement, values, blocks: list[ContextBlock], cited: list[str]) -> str | None:
    """The one retrieved entry other than ``cited`` that carries the statement — it holds every value and
    either the quote verbatim or a supporting sentence (:func:`supporting_sentence`) — or None when no entry
    or more than one does (the code never guesses between two)."""
    found = []
    for entry in dict.fromkeys(b.entry_id.lower() for b in blocks):
        if entry in cited:
            continue
        mine = [b for b in blocks if b.entry_id.lower() == entry]
        if values and not _holds_values(values, mine):
            continue
        quoted = bool(statement.quote) and any(match_quote(statement.quote, b.text) for b in mine)
        if quoted or supporting_sentence(statement.text, mine):
            found.append(entry)
    return found[0] if len(found) == 1 else None


def check_statement(statement: Statement, blocks: list[ContextBlock], question_year: str | None = None) -> Checked:
    """Validate one statement against the retrieved blocks (codes: module docstring); ``question_year``: the
    one year the question names (``values.asked_year``), for a statement that names none.

    A statement whose cited entries do not carry it (its quote or a value not found there) while exactly one
    other retrieved entry does is checked again with that entry as its source (``citation_moved``, repaired):
    small models cite the neighbour of the entry they copied from. An id that was not retrieved is never moved.
    """
    checked = _check(statement, blocks, question_year)
    codes = {v.code for v in checked.violations}
    if checked.ok or not codes & MOVABLE or "unknown_id" in codes or not checked.ids:
        return checked
    values = _find_values(CITATION_RE.sub(" ", statement.text))
    values += [v for wert, _stand in statement.values for v in _find_values(wert)]
    target = _carrier(statement, values, blocks, checked.ids)
    if not target:
        return checked
    # a Stand the model gave belongs to the entry it cited: the moved statement shows its new entry's own
    moved = Statement(text=CITATION_RE.sub(" ", statement.text), ids=[target], quote=statement.quote,
                      values=[(wert, "") for wert, _stand in statement.values], conflict_ids=statement.conflict_ids)
    again = _check(moved, blocks, question_year)
    if not again.ok:
        return checked
    again.statement = statement
    again.violations.insert(0, Violation("citation_moved", f"{', '.join(checked.ids)} → {target}"))
    return again


def _check(statement: Statement, blocks: list[ContextBlock], question_year: str | None = None) -> Checked:
    retrieved = {b.entry_id.lower() for b in blocks}
    text = statement.text
    ids = list(statement.ids)
    ids += [i for i in extract_citations(text) if i not in ids]   # ids the model wrote into the text
    violations = [Violation("unknown_id", i) for i in ids if i not in retrieved]
    known = [i for i in ids if i in retrieved]
    shown = shown_text(text)
    if freetext.echo_fragments(text):
        violations.append(Violation("echo", _short(text, 120)))
    elif not shown:
        violations.append(Violation("empty", "–"))
    if not ids:
        violations.append(Violation("no_citation", _short(shown, 120)))
    values = _find_values(CITATION_RE.sub(" ", text))
    if values and len(known) > 1:
        holding = [i for i in known if _holds_values(values, [b for b in blocks if b.entry_id.lower() == i])]
        if holding and len(holding) < len(known):
            violations += [Violation("citation_pruned", i) for i in known if i not in holding]
            known = holding
    own = [b for b in blocks if b.entry_id.lower() in known]
    passage, passage_id = "", ""
    for block in own if statement.quote else ():
        found = match_quote(statement.quote, block.text) or match_quote(statement.quote, block.title)
        if found and len(found) > len(passage):
            passage, passage_id = found, block.entry_id.lower()
    if known and not passage:
        support = supporting_sentence(text, own)
        if support:
            passage, passage_id = support
            violations.append(Violation("quote_by_code", _short(statement.quote or "–", 120)))
        elif not statement.quote:
            violations.append(Violation("quote_missing", _short(shown, 120)))
        else:
            violations.append(Violation("quote_not_found", _short(statement.quote, 120)))
    if own:
        index = _source_index("\n".join(f"{b.title}\n{b.text}" for b in own))
        folded_source = _fold(" ".join(b.text for b in own))
        seen = set()
        for value in values:
            if not _value_in_source(value, *index) and value.text not in seen:
                seen.add(value.text)
                violations.append(Violation("value_not_in_source", f"{value.text} (zitiert: {', '.join(known)})"))
        # a statement about one year: each value must stand in a cited passage of that year (the row's column,
        # the sentence's nearest year), not only somewhere in the entry ("ab 2025 € 0,42" out of "bis 2024")
        named = years(shown)
        typed = values + [v for wert, _stand in statement.values for v in _find_values(wert)]
        if len(named) == 1:
            year = next(iter(named))
            for value in {(v.kind, v.number): v for v in typed}.values():
                if value.text not in seen and _value_in_source(value, *index) and not value_in_year(value, year, own):
                    seen.add(value.text)
                    violations.append(Violation("value_wrong_year", f"{value.text} ({year}, zitiert: {', '.join(known)})"))
        elif not named and question_year:
            # a statement naming no year answers the question's year: "die Höchstbeitragsgrundlage für
            # Sonderzahlungen ist € 12.120" to "… 2025?" gives the 2024 column. Only a value the cited entry
            # binds to other years fails; a value of a passage without a year ("30 Werktage") stands
            for value in {(v.kind, v.number): v for v in typed}.values():
                if value.text not in seen and value_of_other_year(value, question_year, own):
                    seen.add(value.text)
                    violations.append(Violation("value_wrong_year",
                                                f"{value.text} (gefragt {question_year}, zitiert: {', '.join(known)})"))
        stands = {stand_month(b.stand) for b in own}
        for wert, stand in statement.values:
            typed = _find_values(wert)
            present = all(_value_in_source(v, *index) for v in typed) if typed else \
                " ".join(_fold(wert).split()) in " ".join(folded_source.split())
            if not present and wert not in seen:
                seen.add(wert)
                violations.append(Violation("value_not_in_source", f"{wert} (zitiert: {', '.join(known)})"))
            if not stand_month(stand):
                violations.append(Violation("missing_stand", wert))
            elif stand_month(stand) not in stands:
                violations.append(Violation("stand_mismatch", f"{wert}: Stand {stand} "
                                                              f"(zitiert: {', '.join(sorted(stands))})"))
    return Checked(statement, violations, known, passage, passage_id)

