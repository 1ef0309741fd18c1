"""Facts out of one entry: every value cell of its Kernwerte tables, its "Key: value" bullets and its value
sentences, each with concept, qualifiers (period, basis, variant), value and exact position.

Table shapes read (all from real entries): a value column per year ("| Wert | 2024 | 2025 |"), a row per year
or period ("| bis 2023 | 90 % | 50 % |"), a qualifier column ("| DB | 3,7 % | 2025 |" under "Stand"), a year in
the first header ("Einkommen pro Jahr 2025") or in the label ("Referenzzinssatz 2023"), thresholds as row labels
("über € 1.000.000"), plain "Punkt | Wert" tables. A period the cell's own text does not name comes from its row,
its column, the table's first header, the heading above the table, the entry's title, else the Stand.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..kb.format import split_sections
from ..text import md_blocks
from .amounts import Amount, header_unit, parse_amount
from .tiers import Tier, column_tiers, tier_of
from .concepts import (GENERIC, KIND_WORDS, acronyms, basis_of, concept_key, stems, strip_basis, subject_words, variant_of,
                       word_in)
from .periods import Period, find_period, implicit, is_period_only, strip_periods
from .sentences import paragraphs, read_paragraph

VALUE_SECTIONS = ("kernwerte", "zusammenfassung")
_KEEP_REPEATS = False
SENTENCE_SECTIONS = ("kernwerte", "zusammenfassung")   # sections whose value sentences are read (docs/facts.md)
_QUALIFIER_HEADERS = re.compile(r"^\s*(?:stand|zeitraum|jahr|gültig(?:\s+ab)?|gilt\s+ab|geltung\s+ab|periode)\s*$",
                                re.I)
_GENERIC_HEADER = re.compile(r"^\s*(?:wert|werte|regel|betrag|betrag\s*/\s*regel|höhe|angabe|inhalt|element|"
                             r"punkt|behandlung|sachverhalt|kennzahl)\s*$", re.I)
def generic_header(header: str) -> bool:
    """A column header that says nothing of what is measured ("Wert", "Betrag / Regel")."""
    return bool(_GENERIC_HEADER.match(header or ""))


_CAPTION_LINE = re.compile(r"^\s*(?:\*\*)?[^\s|*+\-•#][^|:]{1,70}:(?:\*\*)?\s*$")
_BULLET_RE = re.compile(r"^\s*[-*+•]\s+([^:|]{2,80}?)\s*:\s+(.+)$")
_EMPTY = {"", "–", "-", "—", "n/a", "k. a."}


@dataclass
class Source:
    """One entry as the fact extraction needs it."""

    entry_id: str
    title: str
    stand: str
    topic: str = ""
    body: str = ""
    tags: list[str] = field(default_factory=list)
    legal_bases: list[str] = field(default_factory=list)


@dataclass
class Fact:
    """One value of one entry.

    ``concept`` is the readable label ("Geringfügigkeitsgrenze", "Blockzeit (Beginn der Altersteilzeit)"),
    ``key`` its comparable words, ``context`` the words of the caption, first header and cell text around it,
    ``subject`` the entry's title and tag words. Position: ``section`` (key), ``line`` (1-based in the entry's
    body), ``table``/``row``/``column`` (0-based; -1 for bullets and sentences) and ``passage`` (the table row or
    sentence as written, for highlighting)."""

    entry_id: str
    stand: str
    topic: str
    concept: str
    label: str
    column_header: str
    caption: str
    key: frozenset
    context: frozenset
    subject: frozenset
    period: Period
    basis: str
    variant: str
    value: Amount
    origin: str
    section: str
    line: int
    table: int = -1
    row: int = -1
    column: int = -1
    passage: str = ""
    legal: frozenset = frozenset()
    name: str = ""          # the concept as the label says it, without the title's head in front
    optional: frozenset = frozenset()   # key words only in the column header's parentheses ("(6-Tage-Woche)")
    tier: Tier | None = None            # the range of service years or kilometres its row holds for (tiers.py)
    mentions: frozenset = frozenset()   # words of the entry's sentences that state its value as written
    sole_variant: bool = False          # its variant is the only one of its concept in the entry ("(ab 3 Stunden)")


    @property
    def text(self) -> str:
        return self.value.text

    @property
    def year_label(self) -> str:
        return self.period.label()

    @property
    def is_reference(self) -> bool:
        return self.value.unit == "Verweis"


_HEAD_SPLIT = re.compile(r"\s+(?:–|-|—|:|für|ab|bis|seit|bei|und|nach)\s+|\s+(?:19|20)\d{2}\b", re.I)


def title_head(title: str) -> str:
    """The head of a title: "Kilometergeld ab 2025" → "Kilometergeld"; "Altersteilzeit – Ersatzquote des AMS"
    → "Altersteilzeit"."""
    return _HEAD_SPLIT.split(title or "", maxsplit=1)[0].strip()


def display_concept(concept: str, key: frozenset, title: str, abbrev=None) -> str:
    """The concept as the answer and the list show it: with the title's head in front when the label alone
    (short words only) does not name it ("Pkw" in "Kilometergeld ab 2025" → "Kilometergeld – Pkw")."""
    head = title_head(title)
    head_words = concept_key(head, abbrev)
    if not head or not head_words or all(word_in(w, key) for w in head_words):
        return concept
    if key and max(len(w) for w in key) >= 10 and not key - GENERIC <= KIND_WORDS:
        return concept      # a word that long names the thing itself, unless it names only a kind ("Steuersatz")
    return f"{head} – {concept}"


def _title_period(title: str) -> Period | None:
    found = find_period(title, "title")
    return found


def _tables(lines: list[tuple[int, str]]):
    """Tables of a section: (first line number, header cells or None, [(line number, raw line, cells)])."""
    index = 0
    while index < len(lines):
        number, line = lines[index]
        if not md_blocks.is_table_row(line):
            index += 1
            continue
        block = []
        while index < len(lines) and md_blocks.is_table_row(lines[index][1]):
            block.append(lines[index])
            index += 1
        header = None
        rows = block
        if len(block) > 1 and md_blocks.is_table_separator(block[1][1]):
            header, rows = md_blocks.cells(block[0][1]), block[2:]
        rows = [(n, raw, md_blocks.cells(raw)) for n, raw in rows if not md_blocks.is_table_separator(raw)]
        yield number, header, rows


def _concept_label(label: str, column: str, row_periods: bool, column_period: bool, first_header: str) -> tuple[str, str]:
    """(readable concept, the text its key is made of) of a cell."""
    if row_periods:   # the rows are years: the column says what is measured, the first header is the dimension
        text = column if not _GENERIC_HEADER.match(column or "") else first_header
        readable = strip_periods(text)
        dimension = strip_periods(first_header)
        if dimension and text != first_header and not _QUALIFIER_HEADERS.match(first_header):
            readable = f"{readable} ({dimension})"
        return readable, text
    readable = strip_basis(strip_periods(label)) or strip_periods(label)
    if column and not column_period and not _GENERIC_HEADER.match(column) and not is_period_only(column):
        return f"{readable} – {strip_periods(column)}", f"{label} {column}"
    return readable, label


# a row label that only qualifies the row above ("Steuerfreier Höchstbetrag | € 360", "Bei überwiegender Nachtarbeit |
# € 540"): the row above says what its value is, so its words are the row's context
_CONTINUATION = re.compile(r"^\s*(?:bei|für|mit|ohne|wenn|falls|im\s+fall)\b", re.I)


def _facts_of_table(source: Source, section: str, caption: str, table_no: int, header, rows, base: dict) -> list[Fact]:
    facts: list[Fact] = []
    width = max((len(c) for _, _, c in rows), default=0)
    header = header or []
    first_header = header[0] if header else ""
    labels = [cells[0] if cells else "" for _, _, cells in rows]
    row_periods = bool(labels) and sum(is_period_only(label) for label in labels) * 2 > len(labels)
    qualifier_cols = set()
    for col in range(1, width):
        column_cells = [cells[col] for _, _, cells in rows if col < len(cells) and cells[col].strip()]
        head = header[col] if col < len(header) else ""
        if column_cells and (_QUALIFIER_HEADERS.match(head) or all(is_period_only(c) for c in column_cells)):
            qualifier_cols.add(col)
    table_period = find_period(first_header, "caption") if first_header and not row_periods else None
    governing = ""      # the last row a continuation row ("Bei überwiegender Nachtarbeit | € 540") qualifies
    for row_no, (number, raw, cells) in enumerate(rows):
        if len(cells) < 2:
            continue
        label = cells[0]
        continued = governing if not row_periods and _CONTINUATION.match(label) else ""
        if not continued:
            governing = label
        row_period = None
        if row_periods:
            row_period = find_period(label, "row")
        elif find_period(label):
            row_period = find_period(label, "row")
        qualifier = next((find_period(cells[c], "column") for c in sorted(qualifier_cols)
                          if c < len(cells) and find_period(cells[c])), None)
        for col in range(1, len(cells)):
            cell = cells[col]
            if col in qualifier_cols or cell.strip().lower() in _EMPTY:
                continue
            head = header[col] if col < len(header) else ""
            head_period = find_period(head, "column") if head else None
            column_is_period = bool(head) and is_period_only(head)
            # a bare number counts what its column says, else what its row label says ("Begünstigte Überstunden
            # pro Monat | 15"; the basis words are no unit)
            amount = parse_amount(cell, header_unit(head) or header_unit(first_header if row_periods else "")
                                  or ("" if row_periods else header_unit(strip_basis(label))))
            own = find_period(cell, "cell") if amount.unit not in ("Datum", "Verweis") else None
            period = (own or row_period or head_period or qualifier or table_period or base["caption_period"]
                      or base["title_period"] or base["implicit"])
            concept, key_text = _concept_label(label, head, row_periods, column_is_period, first_header)
            if continued and concept:
                concept = f"{strip_basis(strip_periods(continued)) or continued}, {concept[:1].lower()}{concept[1:]}"
            variant_source = label if not row_periods else ""
            context_text = " ".join([caption, first_header, strip_periods(cell), strip_periods(continued)])
            facts.append(Fact(
                source.entry_id, source.stand, source.topic, concept or label, label, head, caption,
                base["key"](key_text), base["key"](context_text), base["subject"], period,
                basis_of(label, head, cell, first_header), variant_of(variant_source) if not row_periods else "",
                amount, "table", section, number, table_no, row_no, col, raw.strip(), base["legal"]))
    if not row_periods:
        for col in {f.column for f in facts}:
            column = [f for f in facts if f.column == col]
            for fact, tier in zip(column, column_tiers([f.label for f in column])):
                fact.tier = tier
    return facts


# "bis 2024 € 3.000, ab 2025 € 1.000": a value and its successor in one cell, split before each period word
_SUCCESSOR_SPLIT = re.compile(r"\s*[,;]\s*(?=(?:ab|bis|seit|vor)\s+(?:\d{1,2}\.\s?\d{1,2}\.\s?)?(?:19|20)\d{2}\b)", re.I)


def successors(cell: str) -> list[str]:
    """The parts of a cell that name a value with its own period each ("bis 2024 € 3.000, ab 2025 € 1.000" → two);
    the cell itself when it is one value."""
    parts = [p for p in _SUCCESSOR_SPLIT.split(cell or "") if p.strip()]
    if len(parts) < 2 or not all(find_period(p, "cell") and parse_amount(p).has_value for p in parts):
        return [cell]
    return parts


def _bullet_facts(source: Source, section: str, caption: str, number: int, line: str, base: dict) -> list[Fact]:
    match = _BULLET_RE.match(md_blocks.TABLE_CELL_MARKUP_RE.sub("", line))
    if not match:
        return []
    label = md_blocks.cell(match.group(1))
    facts = [_bullet_fact(source, section, caption, number, line, base, label, part)
             for part in successors(md_blocks.cell(match.group(2)))]
    return [f for f in facts if f is not None]


def _bullet_fact(source: Source, section: str, caption: str, number: int, line: str, base: dict, label: str,
                 cell: str) -> Fact | None:
    amount = parse_amount(cell)
    if not amount.has_value and amount.unit != "Verweis":
        return None
    own = find_period(cell, "cell") if amount.unit != "Datum" else None
    period = (own or find_period(label, "row") or base["caption_period"] or base["title_period"]
              or base["implicit"])
    words = re.sub(r"[\d€%.,]+", " ", strip_periods(cell))
    return Fact(source.entry_id, source.stand, source.topic, strip_basis(strip_periods(label)) or label, label, "",
                caption, base["key"](label), base["key"](f"{caption} {words}"), base["subject"], period,
                basis_of(label, cell), variant_of(label), amount, "bullet", section, number, -1, -1, -1,
                line.strip(), base["legal"], tier=tier_of(label))


_PARENS_RE = re.compile(r"\([^()]*\)")
_KEY_CACHE: dict[tuple, dict[str, frozenset]] = {}   # concept keys per abbreviation table and label


def extract_facts(source: Source, abbrev: Mapping[str, tuple[str, ...]] | None = None) -> list[Fact]:
    """All facts of one entry, in the order of the text."""
    sections, _ = split_sections(source.body or "")
    body_lines = (source.body or "").split("\n")
    title_period = _title_period(source.title)
    table = tuple(sorted((abbrev or {}).items()))
    if len(_KEY_CACHE) > 8 or sum(map(len, _KEY_CACHE.values())) > 100_000:
        _KEY_CACHE.clear()
    keys = _KEY_CACHE.setdefault(table, {})

    def key(text: str) -> frozenset:
        found = keys.get(text)
        if found is None:
            found = keys[text] = concept_key(text, abbrev)
        return found

    base = {
        "key": key,
        "subject": subject_words(source.title, source.tags, abbrev),
        "title_period": title_period,
        "implicit": implicit(source.stand),
        "legal": frozenset(" ".join(fold_plain_words(b)) for b in source.legal_bases or [] if b),
    }
    facts: list[Fact] = []
    offset = 0
    for section in sections:
        start = _find_line(body_lines, section, offset)
        offset = start
        if section.key not in VALUE_SECTIONS:
            continue
        numbered = list(enumerate(section.text.split("\n"), start=start + 2))
        # the summary's tables hold values like the Kernwerte ("Zusammensetzung: KV 3,87 % …"); its bullets are
        # prose, read as sentences below
        facts.extend(_section_facts(source, section.key, section.heading, numbered, base,
                                    bullets=section.key == "kernwerte"))
        if section.key in SENTENCE_SECTIONS:
            facts.extend(_sentence_facts(source, section.key, section.heading, numbered, base))
    facts = facts if _KEEP_REPEATS else _without_repeated_sentences(facts)
    _add_mentions(facts, body_lines)
    variants: dict[frozenset, set] = {}
    for fact in facts:
        variants.setdefault(fact.key, set()).add(fact.variant)
    for fact in facts:
        fact.sole_variant = bool(fact.variant) and len(variants[fact.key]) == 1
    spelled = acronyms([f.label for f in facts] + [f.column_header for f in facts], base["subject"], abbrev)
    for fact in facts:
        if spelled and fact.key & spelled.keys():
            fact.key = frozenset(spelled.get(w, w) for w in fact.key)
        fact.name = fact.concept
        fact.concept = display_concept(fact.concept, fact.key, source.title, abbrev)
        if "(" in fact.column_header:
            outside = base["key"](f"{fact.label} {_PARENS_RE.sub(' ', fact.column_header)}")
            outside = frozenset(spelled.get(w, w) for w in outside) if spelled else outside
            fact.optional = frozenset(w for w in fact.key if not word_in(w, outside))
    return facts


def _add_mentions(facts: list[Fact], body_lines: list[str]) -> None:
    """Each fact's ``mentions``: the words of the prose sentences of its entry that state one of its concept's
    values as written ("Für laufende Bezüge gilt 2025 eine monatliche Höchstbeitragsgrundlage von € 6.450"), which
    say what the value is for where the table's row label is short. Values without a figure or of fewer than four characters
    ("3 %") are left alone: such strings stand in too many sentences."""
    wanted = {f.value.text.strip() for f in facts
              if len(f.value.text.strip()) >= 4 and any(c.isdigit() for c in f.value.text)}
    if not wanted:
        return
    prose = " ".join(line.strip() for line in body_lines
                     if line.strip() and not md_blocks.is_table_row(line) and not line.lstrip().startswith("#"))
    found: dict[str, set] = {}
    for sentence in md_blocks.split_sentences(" ".join(prose.split())):
        for text in wanted:
            if text in sentence:
                found.setdefault(text, set()).update(stems(sentence))
    # shared by the values of one concept (its other years): a word that tells what the 2025 value is for tells it
    # of the 2024 value too, or a question naming it would find only some years
    by_concept: dict[tuple, set] = {}
    for fact in facts:
        words = found.get(fact.value.text.strip())
        if words:
            by_concept.setdefault((fact.key, fact.basis, fact.variant), set()).update(words)
    for fact in facts:
        words = by_concept.get((fact.key, fact.basis, fact.variant))
        if words:
            fact.mentions = fact.mentions | frozenset(words)


def fold_plain_words(text: str) -> list[str]:
    from ..text.german import fold_plain, word_tokens
    return word_tokens(fold_plain(text))


def _find_line(lines: list[str], section, offset: int) -> int:
    """0-based index of the section's heading line in the body (searching from ``offset``)."""
    for index in range(offset, len(lines)):
        if md_blocks.heading(lines[index], 2) == section.heading:
            return index
    return offset


def _section_facts(source: Source, key: str, heading: str, numbered: list[tuple[int, str]], base: dict,
                   bullets: bool = True) -> list[Fact]:
    facts: list[Fact] = []
    caption = heading
    base = dict(base, caption_period=None)
    table_no = 0
    plain = [(n, line) for n, line in numbered]
    heading_at = {n: md_blocks.heading(line) for n, line in plain if md_blocks.heading(line)}
    tables = {first: (header, rows) for first, header, rows in _tables(plain)}
    in_table: set[int] = set()
    for first, (header, rows) in tables.items():
        in_table.update(range(first, (rows[-1][0] if rows else first) + 1))
    intro: list[str] = []          # the prose right before a table says what its rows are for
    for number, line in plain:
        if number in heading_at:
            caption = heading_at[number]
            base["caption_period"] = find_period(caption, "caption")
            intro = []
            continue
        if number in tables:
            header, rows = tables[number]
            table_facts = _facts_of_table(source, key, caption, table_no, header, rows, base)
            if intro:
                words = frozenset(stems(" ".join(intro)))
                for fact in table_facts:
                    fact.mentions = fact.mentions | words
            facts.extend(table_facts)
            table_no += 1
            intro = []
            continue
        if number in in_table:
            continue
        if _CAPTION_LINE.match(line) and not _BULLET_RE.match(line):
            # "UAB 2025 je Monat:" on a line of its own names the table below, like a heading
            caption = line.strip().rstrip(":").strip()
            base["caption_period"] = find_period(caption, "caption")
            intro = []          # the caption names the table itself
            continue
        if line.strip() and not _BULLET_RE.match(line):
            intro = (intro + [line.strip()])[-4:]
        if bullets:
            facts.extend(_bullet_facts(source, key, caption, number, line, base))
    return facts


def _sentence_facts(source: Source, key: str, heading: str, numbered: list[tuple[int, str]], base: dict) -> list[Fact]:
    facts = []
    for caption, text, numbers, lines in paragraphs(numbered, heading):
        caption_period = find_period(caption, "caption")
        for found in read_paragraph(text, numbers, lines):
            label = found.subject
            amount = parse_amount(found.value_text)
            words = re.sub(r"[\d€%.,]+", " ", strip_periods(found.value_text))
            period = found.period or caption_period or base["title_period"] or base["implicit"]
            facts.append(Fact(
                source.entry_id, source.stand, source.topic, strip_basis(strip_periods(label)) or label, label, "",
                caption, base["key"](label), base["key"](f"{caption} {words}"), base["subject"], period,
                basis_of(found.basis_text, found.value_text), variant_of(label), amount, "sentence", key,
                found.line, -1, -1, -1, found.passage, base["legal"]))
    return facts


def _without_repeated_sentences(facts: list[Fact]) -> list[Fact]:
    """A sentence that repeats a value of the entry's tables or bullets (same numbers, overlapping period) adds
    nothing: the table cell is the better place to cite."""
    cells = [f for f in facts if f.origin != "sentence"]
    out = []
    for fact in facts:
        if fact.origin == "sentence" and any(
                fact.value.numbers <= c.value.numbers and (c.period.overlaps(fact.period) or not c.period.explicit
                                                           or not fact.period.explicit) for c in cells):
            continue
        out.append(fact)
    return out


def extract_all(sources: Iterable[Source], abbrev: Mapping[str, tuple[str, ...]] | None = None) -> list[Fact]:
    out: list[Fact] = []
    for source in sources:
        out.extend(extract_facts(source, abbrev))
    return out
