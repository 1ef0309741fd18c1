"""Kernwerte conflicts between entries, and the visible ⚠ note when an answer dropped a side."""
from __future__ import annotations

import re
from typing import Iterable, NamedTuple

from ..text import md_blocks
from ..text.german import ANSWER_STOPWORDS, light_stem, fold_plain, word_tokens
from .citations import extract_citations
from .types import Conflict, EntryFacts
from .values import value_tokens

_BULLET_RE = re.compile(r"^\s*[-*+•]\s+([^:|]{2,80}?)\s*:\s+(.+)$")


# Column headers such as "Wert" or "Regel" say nothing about what a value is.
_GENERIC_HEADER_WORDS = frozenset(
    light_stem(fold_plain(w))
    for w in """wert werte regel regelung betrag beträge höhe angabe angaben inhalt element hinweis
    bedeutung beschreibung details erläuterung information kennzahl größe daten punkt aspekt thema
    merkmal eintrag""".split()
)


def _column_label(header: str) -> str:
    """A column header worth adding to a row key ("" for generic headers like "Wert")."""
    tokens = [t for t in word_tokens(fold_plain(header)) if t not in ANSWER_STOPWORDS]
    return header if any(light_stem(t) not in _GENERIC_HEADER_WORDS for t in tokens) else ""


def _kernwerte_rows(text: str) -> list[tuple[str, str]]:
    """(key, value) pairs from Kernwerte tables and "Key: value" bullets.

    A table row gives one pair per value cell; the key is the first cell plus
    the column header when that header is specific ("2026 – Blockzeit"), so
    that tables laid out differently still line up. Without a header row, the
    value is the rest of the row.
    """
    rows: list[tuple[str, str]] = []
    lines = (text or "").replace("\r\n", "\n").split("\n")
    headers: list[str] = []
    for pos, line in enumerate(lines):
        if not md_blocks.is_table_row(line):
            headers = []
            match = _BULLET_RE.match(md_blocks.TABLE_CELL_MARKUP_RE.sub("", line))
            if match:
                rows.append((md_blocks.cell(match.group(1)), md_blocks.cell(match.group(2))))
            continue
        if md_blocks.is_table_separator(line):
            continue
        cells = md_blocks.cells(line)
        if pos + 1 < len(lines) and md_blocks.is_table_separator(lines[pos + 1]):
            headers = cells
            continue
        if len(cells) < 2 or not cells[0]:
            continue
        if not headers:
            value = " | ".join(c for c in cells[1:] if c)
            if value:
                rows.append((cells[0], value))
            continue
        for column, value in enumerate(cells[1:], start=1):
            label = _column_label(headers[column]) if column < len(headers) else ""
            if value:
                rows.append((f"{cells[0]} – {label}" if label else cells[0], value))
    return rows


def _key_tokens(key: str) -> frozenset[str]:
    tokens = (light_stem(t) for t in word_tokens(fold_plain(key)) if t not in ANSWER_STOPWORDS and (len(t) > 1 or t.isdigit()))
    return frozenset(t for t in tokens if t not in _GENERIC_HEADER_WORDS)



def _keys_similar(a: frozenset[str], b: frozenset[str], strict: bool) -> bool:
    if not a or not b:
        return False
    if a == b:
        return True
    if strict:
        return False
    overlap = len(a & b) / len(a | b)
    if a < b or b < a:
        return overlap >= 0.5
    return overlap >= 0.7


def _values_conflict(a: frozenset, b: frozenset) -> bool:
    """Both hold numbers and neither set contains the other."""
    return bool(a) and bool(b) and not a <= b and not b <= a


def _legal_keys(bases: Iterable[str]) -> set[str]:
    return {"".join(word_tokens(fold_plain(b))) for b in bases or [] if b and b.strip()}


class _Row(NamedTuple):
    entry: int
    key: str
    value: str
    key_tokens: frozenset
    value_tokens: frozenset


MAX_BUCKET_ROWS = 100   # rows compared pairwise in one bucket; see _bounded


def _bounded(buckets, rows: list[_Row]):
    """The buckets to compare pairwise, none larger than :data:`MAX_BUCKET_ROWS`.

    A key token shared by more rows than that within one topic ("satz" in a base of 20,000 entries) tells
    nothing: such a bucket is compared by whole keys instead, and a whole key that common is left out. Without
    the bound the pairwise comparison grew quadratically (an 8,000-row bucket of a 20,000-entry benchmark base
    took 22 GB and was killed); a curated base of ~600 entries has buckets of a few dozen rows."""
    for bucket in buckets:
        if len(bucket) <= MAX_BUCKET_ROWS:
            yield bucket
            continue
        by_key: dict[tuple, list[int]] = {}
        for index in bucket:
            by_key.setdefault(rows[index].key_tokens, []).append(index)
        yield from (group for group in by_key.values() if 1 < len(group) <= MAX_BUCKET_ROWS)


def _conflict_edges(entries: list[EntryFacts], rows: list[_Row]) -> list[tuple[int, int]]:
    """Pairs of row indices that conflict.

    Rows are only compared inside a bucket: (topic, key token) for entries of
    one topic (fuzzy key match), (legal basis, whole key) across topics (exact
    key match), which keeps a 600-entry base fast. Two rows with similar keys
    and different numbers conflict unless the older entry itself also holds
    the newer value under a similar key. A newer entry that lists the older
    value as history does not settle it: the older entry still states it
    without that limit, so both sides are shown.
    """
    buckets: dict[tuple, list[int]] = {}
    topics = [fold_plain(e.topic).strip() for e in entries]
    legal = [_legal_keys(e.legal_bases) for e in entries]
    for index, row in enumerate(rows):
        if topics[row.entry]:
            for token in row.key_tokens:
                buckets.setdefault(("topic", topics[row.entry], token), []).append(index)
        for law in legal[row.entry]:
            buckets.setdefault(("law", law, row.key_tokens), []).append(index)
    similar: set[tuple[int, int]] = set()
    known: dict[tuple[int, int], set] = {}  # (row, other entry) -> values of its similar rows there
    for bucket in _bounded(buckets.values(), rows):
        for pos, first in enumerate(bucket):
            for second in bucket[pos + 1:]:
                a, b = rows[first], rows[second]
                if a.entry == b.entry or (first, second) in similar:
                    continue
                ea, eb = entries[a.entry], entries[b.entry]
                if (ea.stand or "")[:7] == (eb.stand or "")[:7]:
                    continue
                same_topic = bool(topics[a.entry]) and topics[a.entry] == topics[b.entry]
                if not same_topic and not legal[a.entry] & legal[b.entry]:
                    continue
                if not _keys_similar(a.key_tokens, b.key_tokens, strict=not same_topic):
                    continue
                similar.add((first, second))
                known.setdefault((first, b.entry), set()).update(b.value_tokens)
                known.setdefault((second, a.entry), set()).update(a.value_tokens)
    edges = []
    for first, second in sorted(similar):
        a, b = rows[first], rows[second]
        if not _values_conflict(a.value_tokens, b.value_tokens):
            continue
        if _superseded_within_one_entry(a, b, known[(first, b.entry)], known[(second, a.entry)], entries):
            continue
        edges.append((first, second))
    return edges


def _superseded_within_one_entry(a, b, known_in_b, known_in_a, entries) -> bool:
    """True when the *older* entry itself already lists the newer value (it is not contradicted).

    An older entry that states only its own (since outdated) value does contradict a newer entry
    that lists it as history ("bis 2024: € 0,42, ab 2025: € 0,50"): the customer's rule is to show
    both sides with their Stand and never settle it silently, so that stays a conflict.
    """
    older_is_a = (entries[a.entry].stand or "") < (entries[b.entry].stand or "")
    if older_is_a:
        return b.value_tokens <= known_in_a
    return a.value_tokens <= known_in_b


def detect_conflicts(entries: list[EntryFacts]) -> list[Conflict]:
    """Conflicting Kernwerte between entries.

    Two entries are compared when their stands differ and they share the topic
    or a legal basis. Rows of their Kernwerte (table cells or "Key: value"
    bullets) conflict when the keys match (same folded tokens, or enough token
    overlap; across topics only identical keys) and both values hold numbers
    while neither number set contains the other. Identical or merely extended
    values are no conflict. Linked rows form one :class:`Conflict` each.
    """
    rows: list[_Row] = []
    for pos, entry in enumerate(entries):
        for key, value in _kernwerte_rows(entry.kernwerte_text):
            row = _Row(pos, key, value, _key_tokens(key), value_tokens(value))
            if row.key_tokens and row.value_tokens:
                rows.append(row)

    parent = list(range(len(rows)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    linked: set[int] = set()
    for first, second in _conflict_edges(entries, rows):
        parent[find(second)] = find(first)
        linked.update((first, second))

    components: dict[int, list[int]] = {}
    for index in sorted(linked):
        components.setdefault(find(index), []).append(index)
    conflicts = []
    for members in components.values():
        members.sort(key=lambda i: (rows[i].entry, i))
        ids: list[str] = []
        values: dict[str, str] = {}
        stands: dict[str, str] = {}
        for i in members:
            entry = entries[rows[i].entry]
            if entry.entry_id not in values:
                ids.append(entry.entry_id)
                values[entry.entry_id] = rows[i].value
                stands[entry.entry_id] = entry.stand
        conflicts.append((rows[members[0]].entry, Conflict(rows[members[0]].key, ids, values, stands)))
    conflicts.sort(key=lambda item: (item[0], item[1].key))
    return [conflict for _, conflict in conflicts]


def add_conflict_note(answer: str, conflicts: list[Conflict], cited: list[str]) -> str:
    """Append a visible ⚠ paragraph for each conflict the answer touched but did not show fully.

    A conflict counts as touched when at least one side is cited; the note is
    added when a side is missing, no ⚠ paragraph cites all sides together, or the
    answer does not write a side's value (a ⚠ block quoting other rows of the two
    entries would name the contradiction without its values).
    """
    cited_set = {c.lower() for c in cited}
    notes = []
    for conflict in conflicts:
        sides = [i.lower() for i in conflict.entry_ids]
        if not any(s in cited_set for s in sides):
            continue
        if (all(s in cited_set for s in sides) and conflict_marked(answer, sides)
                and _values_shown(answer, conflict)):
            continue
        parts = []
        for pos, entry_id in enumerate(conflict.entry_ids):
            stand = conflict.stands.get(entry_id, "?")
            value = conflict.values.get(entry_id, "–")
            subject = f"für „{conflict.key}“ " if pos == 0 else ""
            parts.append(f"[{entry_id}] (Stand {stand}) nennt {subject}{value}")
        notes.append("⚠ Widerspruch in der Wissensbasis: " + ", ".join(parts) + ". Bitte prüfen.")
    if not notes:
        return answer
    return (answer or "").rstrip() + "\n\n" + "\n\n".join(notes)


def _values_shown(answer: str, conflict: Conflict) -> bool:
    """Does ``answer`` write every side's value of ``conflict`` (its figure, whitespace aside)? A side without a
    known value counts as shown."""
    flat = " ".join((answer or "").split())
    for value in conflict.values.values():
        figure = " ".join(str(value or "").split())
        if figure and figure not in ("–", "-") and figure not in flat:
            return False
    return True


def conflict_marked(answer: str, sides: list[str]) -> bool:
    """True when one paragraph holds a ⚠ mark and cites every side."""
    for paragraph in md_blocks.paragraphs(answer):
        text = "\n".join(paragraph)
        if "⚠" in text and set(sides) <= set(extract_citations(text)):
            return True
    return False
