"""The fact comparison: which facts of different entries state the same thing, which of them contradict each
other, and which entries state a value that a newer entry has replaced.

Same fact: the concepts match (the labels share a word, and each label word is named by the other's label,
caption or subject, or is a word of the topic; words match as compounds or by character trigrams), the
entries' subjects agree (same topic and a shared title/tag word that not every entry of the topic has, or a
label word both name as their subject; across topics: a shared legal basis and the same key), the variant
(thresholds, counts of the label) and the basis (monatlich, täglich, …) agree.

Conflict: the same fact in two entries for an overlapping period with different numbers. A value without a
period of its own is read for the year of its entry's Stand. Not compared: references ("siehe [id]"), text
without numbers, two facts of one entry (a value and its successor).

Near matches by embedding (optional, ``embed``; conflicts only): labels the word rules do not match ("Begünstigte
Überstunden pro Monat" / "Überstunden/Monat", synonyms the synonym table lacks) count as one concept when their
concept texts' embeddings are close (cosine ≥ ``embed_threshold``), but only for two facts of one topic whose
subjects share a title/tag word, with the same unit (not a bare number), variant and bounds, no other basis and
a common year, whose labels are not two aspects of one thing, neither of which the word rules match with a fact
of the other entry; each must be the other's closest among such facts of its entry by ``embed_margin`` (a
concept has at most one counterpart in another entry), and the values must be of one order of size. A pair the
synonym table links comes first. Without an embedder, or for a text it has no vector for, the word rules alone.

Outdated: an entry whose value for a concept is older than another entry's different value for a later
period, and which names no later period itself (wiku-gfb-01 gives 2022 where lb-gfb-01 gives 2025; an entry
that gives the Kilometergeld without a year, as of 2023, where a newer one gives "ab 2025").
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from . import alike
from .concepts import GENERIC, KIND_WORDS, word_in as _word_in
from .extract import Fact
from .periods import strip_periods

NEAR_THRESHOLD = 0.75   # trigram Dice of two label words counted as one word (chosen on the tuning part, docs/facts.md)
MAX_BUCKET = 200
EMBED_THRESHOLD = 0.85  # cosine of two concept texts counted as one concept (multilingual-e5-small; docs/facts.md)
EMBED_MARGIN = 0.02     # ... and by so much closer than the runner-up on either side (docs/facts.md)
MAX_RATIO = 2.0         # two values one concept by meaning alone differ by a slip, not by more than this factor

# texts -> one vector per text (None where there is none): the embedding model, injected by the caller
Embedder = Callable[[list[str]], Sequence[Sequence[float] | None]]


@dataclass(frozen=True)
class Pair:
    """Two facts of different entries, ``kind`` "conflict" or "outdated" (``older`` is then ``first``)."""

    kind: str
    first: Fact
    second: Fact

    @property
    def entry_ids(self) -> tuple[str, str]:
        return self.first.entry_id, self.second.entry_id


def _unit_class(unit: str) -> str:
    return unit if unit in ("€", "%", "Datum", "Termin", "Bruch") else "count"


def numbers(fact: Fact) -> frozenset:
    """(kind, value) of every number of a fact; durations in days (lib/facts/alike.py)."""
    return frozenset(alike.in_days(unit, value) or (_unit_class(unit), value) for unit, value in fact.value.numbers)


def values_differ(a: Fact, b: Fact) -> bool:
    """Both hold numbers of a comparable kind and neither set contains the other."""
    na, nb = numbers(a), numbers(b)
    if not na or not nb or not {c for c, _ in na} & {c for c, _ in nb}:
        return False
    return not na <= nb and not nb <= na


def _explained(key: frozenset, other: Fact, topic_words: frozenset, threshold: float) -> bool:
    """Every word of ``key`` is named by the other fact's label, caption or subject, or is a word of the topic
    (one that several entries of the topic have in their title or tags: it describes the topic, not the value)."""
    pool = other.key | other.context | other.subject
    return all(_word_in(word, pool, threshold) or _word_in(word, topic_words) for word in key)


def topic_common_words(facts: Iterable[Fact]) -> dict[str, tuple[frozenset, frozenset]]:
    """Per topic: the subject words every entry of the topic has (they cannot tell two subjects apart), the
    words at least two of its entries have (they describe the topic rather than one value), and the number of
    its entries."""
    by_topic: dict[str, dict[str, frozenset]] = {}
    for fact in facts:
        by_topic.setdefault(fact.topic, {})[fact.entry_id] = fact.subject
    out = {}
    for topic, subjects in by_topic.items():
        sets = list(subjects.values())
        counts: dict[str, int] = {}
        for words in sets:
            for word in words:
                counts[word] = counts.get(word, 0) + 1
        every = frozenset.intersection(*sets) if len(sets) > 1 else frozenset()
        out[topic] = (every, frozenset(w for w, n in counts.items() if n >= 2), len(sets))
    return out


def same_concept(a: Fact, b: Fact, common: dict[str, frozenset] | None = None, threshold: float = NEAR_THRESHOLD) -> bool:
    if a.entry_id == b.entry_id or not a.key or not b.key:
        return False
    if not alike.same_variant(a, b) or (a.basis and b.basis and a.basis != b.basis) or alike.cells_apart(a, b):
        return False
    ca, cb = {c for c, _ in numbers(a)}, {c for c, _ in numbers(b)}
    if ca and cb and not ca & cb:     # a rate and a count are not one concept
        return False
    if not _subjects_agree(a, b, common):
        return False
    topic_words = (common or {}).get(a.topic, (frozenset(), frozenset()))[1] if a.topic == b.topic else frozenset()
    return (any(_word_in(w, b.key, threshold) for w in a.key) and _explained(a.key, b, topic_words, threshold)
            and _explained(b.key, a, topic_words, threshold))


SUBJECT_WORD_LENGTH = 12    # a label word this long is a compound that names a concept ("Höchstbeitragsgrundlage")


def _subjects_agree(a: Fact, b: Fact, common: dict[str, frozenset] | None) -> bool:
    """Same topic and either a shared subject word that not every entry of the topic has, or a label word
    that both entries name as their subject ("Geringfügigkeitsgrenze" in both titles or tags); across topics
    also a shared legal basis and the same key. "Fälligkeit" of the DB and of the Kommunalsteuer: no."""
    shared = a.subject & b.subject
    if a.topic and a.topic == b.topic:
        every = (common or {}).get(a.topic, (frozenset(), frozenset()))[0]
        own_b = b.subject - every
        if any(_word_in(word, own_b) for word in a.subject - every):     # "Altersteilzeit" / "Altersteilzeitgeld"
            return True
        if not (a.subject - every) and not (b.subject - every):
            return True      # neither title nor tags say more than the topic: one subject
        if any(_word_in(w, a.subject) and _word_in(w, b.subject) for w in a.key | b.key):
            return True
        # one label that names a concept of its own, the subject of one of the two entries ("Höchstbeitragsgrundlage
        # monatlich" in an entry on the Höchstbeitragsgrundlage and in one on the Beitragssätze): one concept of the
        # topic; a label of a kind only ("Fälligkeit", "Höchstbetrag") needs the entries' subjects to agree
        own = {w for w in (a.key & b.key) - GENERIC - KIND_WORDS if len(w) >= SUBJECT_WORD_LENGTH}
        return any(_word_in(w, a.subject - every) or _word_in(w, b.subject - every) for w in own)
    if not (a.legal & b.legal and a.key == b.key and shared):
        return False
    # across topics the topic itself qualifies a value ("Lehrlinge": the apprentices' rates, not the general ones):
    # the words every entry of each topic names must be named on the other side too
    for one, other in ((a, b), (b, a)):
        every = (common or {}).get(one.topic, (frozenset(),))[0]
        pool = other.subject | other.key | other.context
        if not all(_word_in(word, pool) for word in every):
            return False
    return True


def _covers_implicit(implicit_fact: Fact, other: Fact) -> bool:
    year = implicit_fact.period.start
    return year is not None and other.period.covers(year)


def periods_meet(a: Fact, b: Fact) -> bool:
    """The two facts speak of a common year (a value without a year: the year of its Stand)."""
    pa, pb = a.period, b.period
    if pa.explicit and pb.explicit:
        return alike.named_years(pa).overlaps(alike.named_years(pb))
    if not pa.explicit and not pb.explicit:
        return pa.start == pb.start
    return _covers_implicit(a, b) if not pa.explicit else _covers_implicit(b, a)


def relation(a: Fact, b: Fact) -> str:
    """"conflict", "outdated" (a is the older side), "outdated_rev" (b is), or "" for two facts of one concept."""
    if (a.is_reference or b.is_reference or not values_differ(a, b) or alike.another_basis(a, b)
            or alike.qualified_apart(a, b)):
        return ""
    if periods_meet(a, b):
        return "" if alike.slip_apart(a, b) else "conflict"
    pa, pb = a.period, b.period
    if pa.newest < pb.newest and (a.stand or "") <= (b.stand or ""):
        return "outdated"
    if pb.newest < pa.newest and (b.stand or "") <= (a.stand or ""):
        return "outdated_rev"
    return ""


def bucket_keys(fact: Fact) -> list[tuple]:
    """The buckets a fact is compared in: per topic and start of a label word, per legal basis and key. Only
    facts that share a bucket are compared; none for a reference or a value without numbers."""
    if fact.is_reference or not fact.value.numbers:
        return []
    return [(fact.topic, word[:6]) for word in fact.key] + [("law", law, fact.key) for law in fact.legal]


def _buckets(facts: list[Fact]):
    buckets: dict[tuple, list[int]] = {}
    for index, fact in enumerate(facts):
        for key in bucket_keys(fact):
            buckets.setdefault(key, []).append(index)
    for bucket in buckets.values():
        if 1 < len(bucket) <= MAX_BUCKET:
            yield bucket


def compare(facts: list[Fact], threshold: float = NEAR_THRESHOLD, common: dict | None = None,
            embed: Embedder | None = None, embed_threshold: float = EMBED_THRESHOLD,
            embed_margin: float = EMBED_MARGIN, links: frozenset = frozenset()) -> list[Pair]:
    """Every conflicting or outdated pair of facts (each pair once, in the order of the facts). ``common``: the
    topics' shared words of the whole base (:func:`topic_common_words`) when ``facts`` are a part of it;
    ``embed``: the embedding model for near matches the word rules miss (conflicts only); ``links``: word pairs of
    the synonym table (:func:`concepts.synonym_links`), which make a near match the first choice."""
    common = common if common is not None else topic_common_words(facts)
    seen: set[tuple[int, int]] = set()
    candidates: list[tuple[int, int]] = []
    for bucket in _buckets(facts):
        for pos, i in enumerate(bucket):
            for j in bucket[pos + 1:]:
                if (i, j) in seen or facts[i].entry_id == facts[j].entry_id:
                    continue
                seen.add((i, j))
                if same_concept(facts[i], facts[j], common, threshold):
                    candidates.append((i, j))
    candidates = _closest_counterparts(candidates, facts)
    # an entry that states a later period of the concept itself is not outdated by it
    newest: dict[tuple[str, int], int] = {}
    for i, j in candidates:
        for k in (i, j):
            newest[(facts[k].entry_id, min(i, j))] = max(newest.get((facts[k].entry_id, min(i, j)), 0),
                                                         facts[k].period.newest)
    pairs = []
    for i, j in sorted(candidates):
        kind = relation(facts[i], facts[j])
        if not kind:
            continue
        if kind == "conflict":
            pairs.append(Pair("conflict", facts[i], facts[j]))
            continue
        older, newer = (facts[i], facts[j]) if kind == "outdated" else (facts[j], facts[i])
        pairs.append(Pair("outdated", older, newer))
    if embed is not None:
        pairs += [Pair("conflict", facts[i], facts[j])
                  for i, j in embedded_matches(facts, candidates, common, embed, embed_threshold, embed_margin, links)
                  if relation(facts[i], facts[j]) == "conflict"]
    return _drop_settled(pairs, candidates, facts)


def _overlap(a: Fact, b: Fact) -> float:
    """How much of the two keys is shared (Jaccard over words, a word counting when the other key names it)."""
    shared = sum(1 for w in a.key if _word_in(w, b.key))
    return shared / (len(a.key) + len(b.key) - shared) if a.key and b.key else 0.0


def _closest_counterparts(candidates: list[tuple[int, int]], facts: list[Fact]) -> list[tuple[int, int]]:
    """Of the facts of one entry that pass for the same concept as a fact of another, only those whose labels are
    closest to it: beside "Grenze für die Dienstgeberabgabe" an entry's "1,5-fache Grenze (DAG)" is the
    counterpart, not its "Grenze monatlich"; the same label in several year columns stays."""
    best: dict[tuple[int, str], float] = {}
    for i, j in candidates:
        score = _overlap(facts[i], facts[j])
        for one, other in ((i, j), (j, i)):
            key = (one, facts[other].entry_id)
            best[key] = max(best.get(key, 0.0), score)
    kept = [(i, j) for i, j in candidates
            if _overlap(facts[i], facts[j]) >= best[(i, facts[j].entry_id)] - 1e-9
            and _overlap(facts[i], facts[j]) >= best[(j, facts[i].entry_id)] - 1e-9]
    # a fact that the other entry states alike (same period, same value) has its counterpart there: another fact of
    # that entry under a label as close ("1. Kind" of a second table) is not compared with it
    agreed: set[tuple[int, str]] = set()
    for i, j in kept:
        if periods_meet(facts[i], facts[j]) and not values_differ(facts[i], facts[j]):
            agreed.update({(i, facts[j].entry_id), (j, facts[i].entry_id)})
    return [(i, j) for i, j in kept
            if periods_meet(facts[i], facts[j]) is False or not values_differ(facts[i], facts[j])
            or ((i, facts[j].entry_id) not in agreed and (j, facts[i].entry_id) not in agreed)]


def _subjects_share(a: Fact, b: Fact, common: dict) -> bool:
    """The two entries name one subject in their titles or tags with the same word, one that not every entry of
    the topic has when it has more than these two, and their subjects agree as for the word rules (stricter
    than :func:`_subjects_agree` alone: the labels give no evidence here)."""
    every, _words, entries = (common or {}).get(a.topic, (frozenset(), frozenset(), 0))
    shared = a.subject & b.subject
    return bool(shared - every if entries > 2 else shared) and _subjects_agree(a, b, common)


def _same_order(a: Fact, b: Fact) -> bool:
    """The two values are of one order of size (within :data:`MAX_RATIO`): € 6.060 and € 777,66 are not one
    concept's values however close the labels' meaning."""
    x, y = a.value.amount, b.value.amount
    if x is None or y is None or x <= 0 or y <= 0:
        return x == y
    return max(x, y) / min(x, y) <= MAX_RATIO


def _aspects_differ(a: Fact, b: Fact) -> bool:
    """The labels share a word, and each names something more that the other side does not ("Kürzung
    Pendlerpauschale" / "Grenzbetrag Pendlerpauschale"; words of the topic count here too): two aspects of one
    thing, not one concept in other words."""
    if not any(_word_in(w, b.key) for w in a.key):
        return False
    return not _explained(a.key, b, frozenset(), NEAR_THRESHOLD) and not _explained(b.key, a, frozenset(), NEAR_THRESHOLD)


def embedding_candidates(facts: list[Fact], word_pairs: Iterable[tuple[int, int]], common: dict) -> list[tuple[int, int]]:
    """Pairs (i, j) of facts of two entries of one topic that share a subject word (:func:`_subjects_share`), with
    the same unit (not a bare number), variant and bounds, no other basis (as for the word rules) and a common
    year, whose labels are not two aspects of one thing (:func:`_aspects_differ`), neither of which the word rules
    pair with any fact of the other entry."""
    partnered = set()
    for i, j in word_pairs:
        partnered.update({(i, facts[j].entry_id), (j, facts[i].entry_id)})
    groups: dict[tuple, list[int]] = {}
    for index, fact in enumerate(facts):
        group = near_group(fact)
        if group is not None:
            groups.setdefault(group, []).append(index)
    out = []
    for members in groups.values():
        for pos, i in enumerate(members):
            a = facts[i]
            for j in members[pos + 1:]:
                b = facts[j]
                if (i, b.entry_id) in partnered or (j, a.entry_id) in partnered or not near_candidate(a, b, common):
                    continue
                out.append((i, j))
    return out


def near_group(fact: Fact) -> tuple | None:
    """The group a fact's near matches are sought in (topic, unit, variant), or None when it has none: a
    reference, a value without numbers or key, and a bare number, which says too little of what it counts to
    pair labels by their meaning."""
    if fact.is_reference or not fact.value.numbers or not fact.key or not fact.topic or fact.value.unit == "Anzahl":
        return None
    return fact.topic, fact.value.unit, fact.variant


def near_candidate(a: Fact, b: Fact, common: dict) -> bool:
    """Two facts of one :func:`near_group` may be a near match (before their embeddings are compared): of two
    entries, no other basis, a common year, bounds in the same directions, a shared subject word, and labels that
    are not two aspects of one thing."""
    return not (a.entry_id == b.entry_id or a.basis and b.basis and a.basis != b.basis or not periods_meet(a, b)
                or directions(a.label) != directions(b.label) or not _subjects_share(a, b, common)
                or _aspects_differ(a, b) or alike.kind_only(a) or alike.kind_only(b))


_DIRECTION_RE = re.compile(r"\b(?P<w>unter|bis(?:\s+zum|\s+zur)?|höchstens|max\.?|maximal|vor|über|ab(?:\s+dem|\s+der)?|nach|"
                           r"mindestens|mind\.?|seit|mehr\s+als)\s+(?:(?:dem|der|den|vollendeten|vollendetem|€)\s+)*"
                           r"(?P<n>\d+(?:[.,]\d+)*)", re.I)
_UPPER = ("unter", "bis", "höchstens", "max", "maximal", "vor")


def directions(label: str) -> frozenset:
    """The bounded numbers of a label with their direction: "unter 18" and "ab dem 18." are other groups although
    their variant is "18" alike; ("<", "18") / (">", "18"). Years are periods, not bounds."""
    out = set()
    for match in _DIRECTION_RE.finditer(strip_periods(label or "")):
        word = match.group("w").lower().split()[0].rstrip(".")
        out.add(("<" if word in _UPPER else ">", match.group("n")))
    return frozenset(out)


def _unit_vector(vector) -> list[float] | None:
    if vector is None:
        return None
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else None


def concept_text(fact: Fact) -> str:
    """What is embedded of a fact: its concept as the label says it ("Pkw", "Emissionsgrenze für angeschaffte
    Fahrzeuge"), without the entry title's head that the list puts in front (chosen on the tuning parts)."""
    return fact.name or fact.concept


def _linked(a: Fact, b: Fact, links: frozenset) -> bool:
    return any(frozenset((x, y)) in links for x in a.key for y in b.key)


def embedded_matches(facts: list[Fact], word_pairs, common: dict, embed: Embedder, threshold: float = EMBED_THRESHOLD,
                     margin: float = EMBED_MARGIN, links: frozenset = frozenset()) -> list[tuple[int, int]]:
    """The pairs of :func:`embedding_candidates` whose concept texts are close (cosine ≥ ``threshold``), each the
    other's closest among the candidates of its entry, by at least ``margin`` before the next closest of another
    concept (a text as close to two concepts names neither clearly), and whose values are of one order of size
    (:func:`_same_order`). A pair whose labels the synonym table links comes first: it is the closest whatever the
    others' cosine, and the margin counts against linked ones only."""
    candidates = embedding_candidates(facts, word_pairs, common)
    scored = similarities(facts, candidates, embed)
    ranked: dict[tuple[int, str], list[tuple[tuple[bool, float], str]]] = {}
    rank = {}
    for (i, j), score in scored.items():
        rank[(i, j)] = (_linked(facts[i], facts[j], links), score)
        for own, other in ((i, j), (j, i)):
            ranked.setdefault((own, facts[other].entry_id), []).append((rank[(i, j)], facts[other].concept))

    def clear(own: int, other_entry: str, mine: tuple, concept: str) -> bool:
        others = ranked[(own, other_entry)]
        runners = [r for r, c in others if c != concept and r[0] == mine[0]]
        return mine >= max(r for r, _ in others) and mine[1] - max((r[1] for r in runners), default=-1.0) >= margin

    return sorted((i, j) for (i, j), score in scored.items() if score >= threshold and _same_order(facts[i], facts[j])
                  and clear(i, facts[j].entry_id, rank[(i, j)], facts[j].concept)
                  and clear(j, facts[i].entry_id, rank[(i, j)], facts[i].concept))


def similarities(facts: list[Fact], pairs: list[tuple[int, int]], embed: Embedder) -> dict[tuple[int, int], float]:
    """Cosine of the concept texts of each pair (pairs whose texts have no vector are left out); each text is
    embedded once."""
    texts = sorted({concept_text(facts[k]) for pair in pairs for k in pair})
    if not texts:
        return {}
    vectors = dict(zip(texts, (_unit_vector(v) for v in embed(texts))))
    out = {}
    for i, j in pairs:
        va, vb = vectors.get(concept_text(facts[i])), vectors.get(concept_text(facts[j]))
        if va is not None and vb is not None:
            out[(i, j)] = sum(x * y for x, y in zip(va, vb))
    return out


def _drop_settled(pairs: list[Pair], candidates, facts) -> list[Pair]:
    """An outdated pair is dropped when the older entry also states a fact of the concept for the newer
    period (it knows the change), or when the two are also in conflict."""
    later: dict[tuple[str, str], int] = {}
    for i, j in candidates:
        a, b = facts[i], facts[j]
        for own, other in ((a, b), (b, a)):
            key = (own.entry_id, other.entry_id)
            later[key] = max(later.get(key, 0), own.period.newest)
    conflicted = {frozenset(p.entry_ids) for p in pairs if p.kind == "conflict"}
    out = []
    for pair in pairs:
        if pair.kind == "outdated":
            if later.get((pair.first.entry_id, pair.second.entry_id), 0) >= pair.second.period.newest:
                continue
            if frozenset(pair.entry_ids) in conflicted:
                continue
        out.append(pair)
    return out
