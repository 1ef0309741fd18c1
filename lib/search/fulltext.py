"""The full-text query of a question: synonyms, value questions, the tsquery and its pruning.

Question words are folded and stopword-filtered with :mod:`text_de`, compounds split with
:mod:`compounds`; the result only holds [a-z0-9] words in PostgreSQL's search form.
"""
from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from .compounds import INFLECTIONS, as_lexicon, split_compound
from ..text.german import QUESTION_STOPWORDS, STOPWORDS, WORD_GROUP_RE, WORD_RE, fold, search_form, tokens

# --------------------------------------------------------------------------- synonyms


@dataclass(frozen=True)
class Synonym:
    """One row of the synonym table, prepared for matching."""

    term: str                          # as written in the table
    words: tuple[str, ...]             # folded words of the term
    case_sensitive: bool               # "AN" must not match the preposition "an"
    expansions: tuple[tuple[str, ...], ...]  # folded words of each expansion
    expansion_labels: tuple[str, ...]  # expansions as written


@dataclass
class SynonymTable:
    """Synonyms by first folded word; ``problems`` lists skipped rows (German)."""

    entries: list[Synonym] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # positions of the entries by first folded word, and of the case-sensitive ones (built on first use; a
    # merge in parse_synonyms replaces an entry in place, keeping its first word)
    _by_first: dict[str, list[int]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _sensitive: list[int] = field(default_factory=list, init=False, repr=False, compare=False)
    _indexed: int = field(default=-1, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.entries)

    def _index(self) -> tuple[dict[str, list[int]], list[int]]:
        if self._indexed != len(self.entries):
            self._by_first, self._sensitive = {}, []
            for n, syn in enumerate(self.entries):
                if syn.case_sensitive:
                    self._sensitive.append(n)
                else:
                    self._by_first.setdefault(syn.words[0], []).append(n)
            self._indexed = len(self.entries)
        return self._by_first, self._sensitive

    def grounded_words(self, known: Callable[[str], bool]) -> frozenset[str]:
        """The folded words of the terms that lead into the base: one of their expansions is made of words the
        base names (``known`` tells a folded word of the base; words under four letters are not checked). A term
        whose expansions the base never names ("Jubiläumsgeld" → "Dienstjubiläum; Jubiläumszuwendung") leads
        nowhere, so its words are not vouched for."""
        def named(words: tuple[str, ...]) -> bool:
            return all(known(w) for w in words if len(w) >= 4 and w.isalpha())
        return frozenset(w for syn in self.entries if any(named(ws) for ws in syn.expansions) for w in syn.words)

    def matches(self, raw: str, words: list[str], extra: Iterable[str] = ()) -> list[Synonym]:
        """Rows whose term occurs in a question.

        ``raw`` is the question as typed, ``words`` its folded words in order,
        ``extra`` further single words (compound parts, joined hyphen words).
        A one-word term also matches an inflected form ("Firmenautos").
        """
        found: list[Synonym] = []
        extra_words = set(extra)
        by_first, sensitive = self._index()
        # only rows whose first word is a question word or its uninflected form can match (see _same_word)
        candidates = set(sensitive)
        for word in set(words) | extra_words:
            candidates.update(by_first.get(word, ()))
            for ending in INFLECTIONS:
                if word.endswith(ending) and len(word) - len(ending) >= 4:
                    candidates.update(by_first.get(word[:-len(ending)], ()))
        for syn in (self.entries[n] for n in sorted(candidates)):
            if syn.case_sensitive:
                if re.search(rf"(?<![^\W_]){re.escape(syn.term)}(?![^\W_])", raw):
                    found.append(syn)
            elif _contains_sequence(words, syn.words) or (
                len(syn.words) == 1 and any(_same_word(w, syn.words[0]) for w in extra_words)
            ):
                found.append(syn)
        return found


def _same_word(word: str, term: str) -> bool:
    if word == term:
        return True
    return len(term) >= 4 and word.startswith(term) and word[len(term):] in INFLECTIONS


def _contains_sequence(words: list[str], seq: tuple[str, ...]) -> bool:
    size = len(seq)
    for i in range(len(words) - size + 1):
        if all(words[i + j] == seq[j] for j in range(size - 1)) and _same_word(words[i + size - 1], seq[-1]):
            return True
    return False


def parse_synonyms(rows: Iterable[tuple[str, str]]) -> SynonymTable:
    """Build a :class:`SynonymTable` from (term, "expansion; expansion; …") rows.

    Terms and expansions stay human-readable in the table; they are folded
    here. A term whose folded form is a stopword ("AN") only matches as
    written, case-sensitively. Rows without a term or without an expansion
    are skipped and described in ``table.problems``; repeated terms merge.
    """
    table = SynonymTable()
    by_term: dict[tuple[str, ...], int] = {}
    for number, row in enumerate(rows, start=1):
        term, expansions = (list(row) + ["", ""])[:2]
        term = (term or "").strip()
        words = tuple(tokens(term))
        if not words:
            table.problems.append(
                f"Synonyme, Zeile {number}: Der Begriff ist leer. "
                "Bitte einen Begriff eintragen oder die Zeile löschen.")
            continue
        labels = [e.strip() for e in (expansions or "").split(";") if e.strip()]
        parsed = [(label, tuple(w for w in tokens(label) if w not in STOPWORDS)) for label in labels]
        parsed = [(label, ws) for label, ws in parsed if ws]
        if not parsed:
            table.problems.append(
                f"Synonyme, Zeile {number} ('{term}'): Es ist keine Erweiterung angegeben. "
                "Bitte Erweiterungen durch Strichpunkt getrennt eintragen.")
            continue
        case_sensitive = len(words) == 1 and words[0] in STOPWORDS | QUESTION_STOPWORDS
        key = words if not case_sensitive else (term,)
        if key in by_term:
            old = table.entries[by_term[key]]
            new_labels = [(lab, ws) for lab, ws in parsed if ws not in old.expansions]
            table.entries[by_term[key]] = Synonym(
                old.term, old.words, old.case_sensitive,
                old.expansions + tuple(ws for _, ws in new_labels),
                old.expansion_labels + tuple(lab for lab, _ in new_labels))
            continue
        by_term[key] = len(table.entries)
        table.entries.append(Synonym(term, words, case_sensitive,
                                     tuple(ws for _, ws in parsed), tuple(lab for lab, _ in parsed)))
    return table


def load_synonyms_csv(path: str) -> list[tuple[str, str]]:
    """Read (term, expansions) rows from an Odoo data CSV with header id,term,expansions."""
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"term", "expansions"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(
                f"Die Synonymdatei {path} hat keine Spalte(n) {', '.join(sorted(missing))}. "
                "Erwartet wird die Kopfzeile id,term,expansions.")
        return [(row["term"] or "", row["expansions"] or "") for row in reader]

# --------------------------------------------------------------------------- queries

_VALUE_PHRASES = (("wie", "hoch"), ("wie", "viel"), ("wie", "viele"), ("wie", "lange"), ("wie", "lang"),
                  ("wie", "oft"), ("bis", "wann"), ("ab", "wann"), ("seit", "wann"), ("in", "welcher", "hoehe"),
                  ("ab", "welcher"), ("ab", "welchem"), ("ab", "welchen"))
_VALUE_WORDS = frozenset("""
wieviel wieviele betrag betraege betraegt hoehe frist fristen prozent prozentsatz satz saetze grenze grenzen
wann stichtag termin faellig faelligkeit euro eur wert werte quote hoechstens mindestens maximal minimal
limit dauer dauert anzahl hoechstbetrag mindestbetrag freibetrag freigrenze
""".split())
_VALUE_SUFFIXES = ("grenze", "grenzen", "frist", "fristen", "satz", "saetze", "betrag", "betraege",
                   "quote", "wert", "werte", "hoehe", "dauer")


def is_value_question(question: str) -> bool:
    """Does the question ask for an amount, rate, limit, duration or deadline? (as :func:`build_query`)"""
    folded = fold(question or "")
    return _is_value_question(folded, WORD_RE.findall(folded))


def _is_value_question(raw: str, words: list[str]) -> bool:
    """Does the question ask for an amount, rate, limit, duration or deadline?"""
    if "%" in raw or "€" in raw:
        return True
    for i, word in enumerate(words):
        if word in _VALUE_WORDS:
            return True
        if word.endswith(_VALUE_SUFFIXES) and not word.endswith("ersatz"):
            return True
        for phrase in _VALUE_PHRASES:
            if tuple(words[i:i + len(phrase)]) == phrase:
                return True
    return False


@dataclass
class QueryPlan:
    """What :func:`build_query` made of a question.

    ``tsquery`` is safe for ``to_tsquery('german', %s)`` ("" = no full-text
    query). ``terms``, ``parts`` and ``expansions`` are folded words, shown
    for diagnostics; ``synonyms`` names the table terms that matched.
    """

    tsquery: str
    terms: list[str]
    parts: list[str]
    expansions: list[str]
    synonyms: list[str]
    is_value_question: bool


def _query_atom(word: str, prefix_min: int) -> str:
    form = search_form(word)
    if prefix_min and form.isalpha() and len(form) >= prefix_min:
        return form + ":*"
    return form


def _is_query_term(word: str) -> bool:
    if word in STOPWORDS or word in QUESTION_STOPWORDS or search_form(word) in STOPWORDS:
        return False
    return len(word) >= 2   # words and numbers alike: single letters and digits carry no meaning


def build_query(question: str, lexicon: Mapping[str, int] | None, synonyms: SynonymTable | None, *,
                prefix_min: int = 6, max_atoms: int = 40) -> QueryPlan:
    """Turn a question into an OR query for PostgreSQL's ``german`` configuration.

    Question words minus stopwords, the compound parts of each, joined
    hyphen words, and synonym expansions (a multi-word expansion is an AND
    group inside the OR). Words of at least ``prefix_min`` letters are
    prefix-matched (``:*``). The result only holds [a-z0-9] words, ``|``,
    ``&``, parentheses and ``:*``, so it never fails to parse; at most
    ``max_atoms`` words are used, in the order terms, parts, expansions.
    """
    raw = question or ""
    lex = as_lexicon(lexicon)
    folded = fold(raw)
    words = WORD_RE.findall(folded)
    terms: list[str] = []
    parts: list[str] = []
    joined: list[str] = []
    for group in WORD_GROUP_RE.findall(folded):
        pieces = [p for p in group.split("-") if p]
        if len(pieces) > 1 and "".join(pieces).isalpha():
            joined.append("".join(pieces))
        for piece in pieces:
            if _is_query_term(piece) and piece not in terms:
                terms.append(piece)
    for word in joined:
        if word not in terms:
            terms.append(word)
    for word in terms:
        if word.isalpha() and len(word) >= 2 * lex.min_part - 1:
            for part in split_compound(word, lex):
                if part not in terms and part not in parts:
                    parts.append(part)

    groups: list[tuple[str, ...]] = []
    matched: list[str] = []
    if synonyms is not None:
        for syn in synonyms.matches(raw, words, extra=[*terms, *parts]):
            matched.append(syn.term)
            for expansion in syn.expansions:
                if expansion not in groups:
                    groups.append(expansion)

    atoms: list[str] = []
    seen: set[str] = set()

    def add(atom: str) -> None:
        if atom not in seen and len(seen) < max_atoms:
            seen.add(atom)
            atoms.append(atom)

    for word in [*terms, *parts]:
        add(_query_atom(word, prefix_min))
    expansions: list[str] = []
    for group in groups:
        pieces = [_query_atom(w, prefix_min) for w in group]
        add(pieces[0] if len(pieces) == 1 else "(" + " & ".join(pieces) + ")")
        expansions.append(" ".join(group))

    return QueryPlan(
        tsquery=" | ".join(atoms),
        terms=terms,
        parts=parts,
        expansions=expansions,
        synonyms=matched,
        is_value_question=_is_value_question(raw, words),
    )


# --------------------------------------------------------------------------- pruning by document frequency

def tsquery_atoms(tsquery: str) -> list[str]:
    """The top-level OR atoms of a :func:`build_query` tsquery (a word, ``word:*`` or an AND group)."""
    return [atom.strip() for atom in (tsquery or "").split(" | ") if atom.strip()]


def atom_words(atom: str) -> list[tuple[str, bool]]:
    """(word, is_prefix) pairs of one atom."""
    return [(w.rstrip(":*"), w.endswith(":*")) for w in re.findall(r"[a-z0-9]+(?::\*)?", atom)]


def prune_tsquery(tsquery: str, df_ratio: Callable[[str, bool], float], *, max_ratio: float = 0.15,
                  keep_min: int = 2, budget: float = 1.0) -> str:
    """Keep the rare, telling OR atoms of a query; drop the common ones.

    An OR query over every question word matches most of the base through its
    common words; ranking all those rows is what makes full text slow at
    100,000 chunks, and the common words carry little evidence (the idea of
    IDF).  ``df_ratio(word, is_prefix)`` gives the share of chunks containing
    the word; an AND group counts with its rarest word.  Atoms are taken from
    the rarest up while each matches at most ``max_ratio`` of the chunks and
    their shares add up to at most ``budget`` (so the rows to rank stay
    bounded); the ``keep_min`` rarest atoms that match anything always stay.
    Atoms that match nothing are dropped (they add nothing).
    """
    atoms = tsquery_atoms(tsquery)
    if len(atoms) <= keep_min:
        return tsquery
    # a single word: its own share; an AND group matches at most as often as its rarest word
    ratios = [min((df_ratio(w, p) for w, p in atom_words(atom)), default=1.0) for atom in atoms]
    matching = sorted((i for i in range(len(atoms)) if ratios[i] > 0), key=lambda i: (ratios[i], i))
    if not matching:
        return tsquery
    kept: list[int] = []
    total = 0.0
    for i in matching:
        if len(kept) >= keep_min and (ratios[i] > max_ratio or total + ratios[i] > budget):
            break
        kept.append(i)
        total += ratios[i]
    return " | ".join(atoms[i] for i in sorted(kept))
