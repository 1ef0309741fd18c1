"""The shortlist of a value question over the whole base, before any search: the entries whose facts may answer
it, and the entries whose facts of the same concept state another value (the other side of a ⚠).

The agent answers a value question from the facts first (models/pv_kb_agent.py): :func:`candidates` names the
entries with a fact that passes the lookup's rules for the question (lib/facts/lookup.eligible_facts), a
full-text search among those entries confirms them, and :func:`partners` adds the entries that contradict the
confirmed facts or state an older value, found in the buckets the fact comparison uses (lib/facts/compare).
The answer itself is then lib/facts/lookup.find over the facts of these entries, the same function as after
the full search; when it finds no clear match the full search runs.

:func:`index` prepares the facts of the whole base once per change of the base (per process,
models/pv_kb_fact.py): the topics' shared words and the comparison buckets.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .compare import (EMBED_THRESHOLD, Embedder, bucket_keys, near_candidate, near_group, relation, same_concept,
                      similarities, topic_common_words)
from .concepts import match_keys, word_in
from .extract import Fact
from .lookup import Question, eligible_facts, required_key, stated_rate_facts
from .tiers import is_dimension_word


@dataclass
class FactIndex:
    """The facts of the whole base with what a shortlist needs of them."""

    facts: list[Fact]
    common: dict = field(default_factory=dict)          # lib/facts/compare.topic_common_words of the base
    buckets: dict[tuple, list[Fact]] = field(default_factory=dict)   # compare.bucket_keys -> facts
    by_word: dict[str, list[int]] = field(default_factory=dict)      # a concept key word -> positions in facts
    by_match_key: dict[tuple, set[str]] = field(default_factory=dict)  # concepts.match_keys -> key words
    near: dict[tuple, list[Fact]] = field(default_factory=dict)       # compare.near_group -> facts


def index(facts: list[Fact]) -> FactIndex:
    """The index of the base's ``facts``."""
    buckets: dict[tuple, list[Fact]] = {}
    by_word: dict[str, list[int]] = {}
    for position, fact in enumerate(facts):
        for key in bucket_keys(fact):
            buckets.setdefault(key, []).append(fact)
        for word in fact.key:
            by_word.setdefault(word, []).append(position)
    by_match_key: dict[tuple, set[str]] = {}
    for word in by_word:
        for key in match_keys(word):
            by_match_key.setdefault(key, set()).add(word)
    near: dict[tuple, list[Fact]] = {}
    for fact in facts:
        group = near_group(fact)
        if group is not None:
            near.setdefault(group, []).append(fact)
    return FactIndex(facts, topic_common_words(facts), buckets, by_word, by_match_key, near)


def candidates(question: Question, fact_index: FactIndex) -> list[Fact]:
    """The facts of the whole base that may answer ``question``, in the base's order. A fact may only when the
    question names every word of its concept key (the lookup's first rule): those facts are found through the
    key words the question names (met under their match keys), and the lookup's rules decide on them."""
    near = {word for alternatives in question.words for alternative in alternatives
            for key in match_keys(alternative) for word in fact_index.by_match_key.get(key, ())}
    named = {word for word in near if any(word_in(word, alternatives) for alternatives in question.words)}
    if "%" in question.asks:      # a rate compound ("steuersatz") may be named by the entry's subject (lookup)
        named |= {word for word in fact_index.by_word if word.endswith("satz")}
    # a staged row's dimension ("dienstjahr", "km") is named by the question's number of it (lookup)
    named |= {word for word in fact_index.by_word if question.points and is_dimension_word(word)}
    named |= {word for word in question.implied if word in fact_index.by_word}   # "bis zu welchem Betrag" (lookup)
    positions = sorted({p for word in named for p in fact_index.by_word[word]})
    if question.stated is not None:
        # "ab welchem Einkommen 48 %?": the row holding the stated rate comes first (lookup.candidate_facts)
        stated = stated_rate_facts(question, fact_index.facts)
        if stated:
            return stated
    return eligible_facts(question, [fact_index.facts[p] for p in positions
                                     if required_key(fact_index.facts[p]) <= named])


def entry_ids(facts: Iterable[Fact]) -> list[str]:
    """The entries of ``facts``, each once, in their order."""
    return list(dict.fromkeys(f.entry_id for f in facts))


def partners(chosen: Iterable[Fact], fact_index: FactIndex, embed: Embedder | None = None,
             embed_threshold: float = EMBED_THRESHOLD) -> list[str]:
    """Entries (other than those of ``chosen``) with a fact of the same concept as one of ``chosen`` and
    another value: a conflict or an outdated pair, as lib/facts/compare.compare pairs them by the word rules,
    and with ``embed`` a conflict whose concept texts are close (a near match; whether it is one, the comparison
    decides over both entries' facts)."""
    chosen = list(chosen)
    own = {f.entry_id for f in chosen}
    out: list[str] = []
    near_pairs: list[tuple[Fact, Fact]] = []
    for fact in chosen:
        for key in bucket_keys(fact):
            for other in fact_index.buckets.get(key, ()):
                if other.entry_id in own or other.entry_id in out:
                    continue
                if relation(fact, other) and same_concept(fact, other, fact_index.common):
                    out.append(other.entry_id)
        group = near_group(fact) if embed is not None else None
        for other in fact_index.near.get(group, ()) if group else ():
            if (other.entry_id not in own and relation(fact, other) == "conflict"
                    and near_candidate(fact, other, fact_index.common)):
                near_pairs.append((fact, other))
    if near_pairs:
        facts = list({id(f): f for pair in near_pairs for f in pair}.values())
        position = {id(f): n for n, f in enumerate(facts)}
        scores = similarities(facts, [(position[id(a)], position[id(b)]) for a, b in near_pairs], embed)
        for (_i, j), score in scores.items():
            if score >= embed_threshold and facts[j].entry_id not in out:
                out.append(facts[j].entry_id)
    return out
