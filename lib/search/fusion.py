"""Fuse ranked chunk lists (dense, full text, ...) into a ranking of entries.

Each retrieval signal delivers a list of :class:`ChunkHit` in rank order.
:func:`fuse` turns them into :class:`EntryResult` rows in four steps:

1. **chunk score** per signal, then summed over the signals:

   * ``method="rrf"`` (default): weighted reciprocal rank fusion,
     ``weights[s] / (k + rank)``. Only ranks count, so scores of different
     scales need no calibration. A smaller ``k`` favours the top ranks; a
     weight below 1 for a weaker signal (e.g. ``{"dense": 1.0, "fts": 0.5}``)
     keeps it from pulling good dense hits down, which plain RRF does when
     one signal is much weaker.
   * ``method="convex"``: ``weights[s] * minmax(score)`` within each list,
     a convex combination when the weights sum to 1. Uses the score
     values, so a clear winner in one signal stays ahead. ``ChunkHit.score``
     must then be "higher is better" (give pgvector's cosine distance ``d``
     as ``1 - d``).

   ``depth`` keeps only the first ``depth`` ranks of every list (a long,
   noisy full-text tail then adds nothing). A signal that is missing or
   empty simply contributes nothing (dense down -> full text alone).
2. **Kernwerte boost**: with ``prefer_kernwerte`` (value questions), chunks
   of the "Kernwerte & Fristen" section are multiplied by ``kernwerte_boost``.
3. **entry score**: the best chunk of an entry dominates; its further
   chunks add ``chunk_decay ** i`` times their score (i = 1, 2, ...), so an
   entry matching in several sections moves up a little.
4. **order**: by score; the newer ``stand`` only breaks ties (scores equal
   to ``tie_digits`` decimals), then the entry id. Fully deterministic.

Entry-level signals (``entry_lists``, e.g. the entry-card vectors: one per
entry) add their score to the entry directly: they rank entries, not
passages, so their rows never appear in ``chunk_ids`` (an entry found only
through them has no chunk of its own; the caller shows its summary).

:func:`rescue` is the other way to combine: one signal ranks, the other
may only add entries the first one missed, below its top ranks.
:class:`Recipe` names a complete combination and :func:`rank_entries`
applies it; the retriever and the tuning bench share both.

:func:`expand_cross_refs` then appends entries named in the ``cross_refs``
of the top results, marked ``expansion=True``.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date

METHODS = ("rrf", "convex")
RECIPE_METHODS = ("rrf", "convex", "rescue")


@dataclass
class ChunkHit:
    """One chunk in one signal's ranked list (rank is 1-based)."""

    chunk_id: int
    entry_id: str
    section_key: str
    rank: int
    score: float


@dataclass
class EntryResult:
    """One entry in the fused ranking."""

    entry_id: str
    score: float
    chunk_ids: list[int]                 # the entry's matching chunks, best first
    best_section: str                    # section key of the best chunk
    signals: dict[str, int] = field(default_factory=dict)  # signal -> best rank (1-based)
    expansion: bool = False              # added via cross_refs
    via: str | None = None               # for an expansion: the entry that referenced it


def ranked(rows: Iterable[tuple[int, str, str, float]]) -> list[ChunkHit]:
    """ChunkHits from (chunk_id, entry_id, section_key, score) rows already in rank order."""
    return [ChunkHit(cid, eid, key, rank, float(score))
            for rank, (cid, eid, key, score) in enumerate(rows, start=1)]


def is_kernwerte_section(section_key: str) -> bool:
    """True for the "Kernwerte & Fristen" section (key ``kernwerte``)."""
    return (section_key or "").lower().startswith("kernwert")


def _check(k: float, weights: Mapping[str, float] | None) -> None:
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    for name, weight in (weights or {}).items():
        if weight < 0:
            raise ValueError(f"weight of signal {name!r} must be >= 0, got {weight}")


def _best_hits(hits: Iterable[ChunkHit], depth: int | None) -> dict[int, ChunkHit]:
    """One hit per chunk (its best rank), only ranks <= depth."""
    best: dict[int, ChunkHit] = {}
    for hit in hits:
        if hit.rank < 1:
            raise ValueError(f"rank must be >= 1, got {hit.rank} for chunk {hit.chunk_id}")
        if depth is not None and hit.rank > depth:
            continue
        old = best.get(hit.chunk_id)
        if old is None or hit.rank < old.rank:
            best[hit.chunk_id] = hit
    return best


def rrf(lists: Mapping[str, list[ChunkHit]], k: int = 60,
        weights: Mapping[str, float] | None = None, *, depth: int | None = None) -> dict[int, float]:
    """Weighted reciprocal rank fusion: chunk_id -> sum over signals of weight / (k + rank).

    A signal without a weight counts 1.0; a chunk listed twice in one signal
    counts once, at its best rank.
    """
    _check(k, weights)
    scores: dict[int, float] = {}
    for name in sorted(lists):
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        for hit in _best_hits(lists[name] or [], depth).values():
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + weight / (k + hit.rank)
    return scores


def convex(lists: Mapping[str, list[ChunkHit]], weights: Mapping[str, float] | None = None, *,
           depth: int | None = None) -> dict[int, float]:
    """Score-aware fusion: chunk_id -> sum over signals of weight * min-max-normalised score.

    Within each list the best score maps to 1 and the worst to 0 (all equal:
    all 1). Scores must be "higher is better".
    """
    _check(0, weights)
    scores: dict[int, float] = {}
    for name in sorted(lists):
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        hits = _best_hits(lists[name] or [], depth)
        if not hits:
            continue
        values = [h.score for h in hits.values()]
        low, high = min(values), max(values)
        for hit in hits.values():
            norm = 1.0 if high == low else (hit.score - low) / (high - low)
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + weight * norm
    return scores


def fuse(lists: Mapping[str, list[ChunkHit]], *, k: int = 60, weights: Mapping[str, float] | None = None,
         stand_dates: Mapping[str, date] | None = None, prefer_kernwerte: bool = False, top_n: int | None = 8,
         method: str = "rrf", depth: int | None = None, chunk_decay: float = 0.2,
         kernwerte_boost: float = 1.25, tie_digits: int = 9,
         entry_lists: Mapping[str, list[ChunkHit]] | None = None) -> list[EntryResult]:
    """Fuse the signals' chunk lists into the ``top_n`` entries (all when ``top_n`` is None).

    See the module docstring for the steps and the knobs ``method``, ``k``,
    ``weights``, ``depth``, ``chunk_decay``, ``kernwerte_boost``.
    ``stand_dates`` maps entry ids to their stand; it only orders entries
    whose scores tie (newer first; an entry without a stand counts as oldest).
    ``entry_lists``: entry-level signals (one row per entry, weights from
    ``weights`` as well), scored like the chunk signals and added to the
    entry's total, never listed as its chunks.
    """
    if method == "rrf":
        chunk_scores = rrf(lists, k, weights, depth=depth)
        entry_scores = rrf(entry_lists or {}, k, weights, depth=depth)
    elif method == "convex":
        chunk_scores = convex(lists, weights, depth=depth)
        entry_scores = convex(entry_lists or {}, weights, depth=depth)
    else:
        raise ValueError(f"unknown fusion method {method!r}; use one of {', '.join(METHODS)}")
    if not 0 <= chunk_decay < 1:
        raise ValueError(f"chunk_decay must be in [0, 1), got {chunk_decay}")

    meta: dict[int, ChunkHit] = {}
    best_rank: dict[str, dict[str, int]] = {}
    for name in sorted(lists):
        for hit in _best_hits(lists[name] or [], depth).values():
            meta.setdefault(hit.chunk_id, hit)
            ranks = best_rank.setdefault(hit.entry_id, {})
            ranks[name] = min(ranks.get(name, hit.rank), hit.rank)

    bonus: dict[str, float] = {}
    for name in sorted(entry_lists or {}):
        for hit in _best_hits(entry_lists[name] or [], depth).values():
            ranks = best_rank.setdefault(hit.entry_id, {})
            ranks[name] = min(ranks.get(name, hit.rank), hit.rank)
            bonus[hit.entry_id] = bonus.get(hit.entry_id, 0.0) + entry_scores.get(hit.chunk_id, 0.0)

    by_entry: dict[str, list[tuple[float, int]]] = {entry_id: [] for entry_id in bonus}
    for chunk_id, score in chunk_scores.items():
        hit = meta[chunk_id]
        if prefer_kernwerte and is_kernwerte_section(hit.section_key):
            score *= kernwerte_boost
        by_entry.setdefault(hit.entry_id, []).append((score, chunk_id))

    results: list[EntryResult] = []
    for entry_id, chunks in by_entry.items():
        chunks.sort(key=lambda sc: (-sc[0], sc[1]))
        total = sum(score * chunk_decay ** i for i, (score, _) in enumerate(chunks)) + bonus.get(entry_id, 0.0)
        results.append(EntryResult(
            entry_id=entry_id,
            score=total,
            chunk_ids=[cid for _, cid in chunks],
            best_section=meta[chunks[0][1]].section_key if chunks else "",
            signals=dict(sorted(best_rank[entry_id].items())),
        ))

    def newest_first(entry_id: str) -> int:
        stand = (stand_dates or {}).get(entry_id)
        return -stand.toordinal() if stand else 0

    results.sort(key=lambda r: (-round(r.score, tie_digits), newest_first(r.entry_id), r.entry_id))
    return results if top_n is None else results[:max(top_n, 0)]


def rescue(primary: list[EntryResult], secondary: list[EntryResult], *, keep_top: int = 3, add: int = 2,
           top_n: int | None = 8) -> list[EntryResult]:
    """``primary``'s ranking, with up to ``add`` entries of ``secondary`` that ``primary`` missed.

    "Missed" means not among ``primary``'s first ``top_n`` entries. The rescued
    entries (in ``secondary``'s order, only from its first ``add + keep_top``)
    are placed right after ``primary``'s first ``keep_top`` entries, so they
    can never push ``primary``'s best answers down; an entry both found
    keeps ``primary``'s place and score. Returns new EntryResults (the
    rescued keep their chunks and signals).
    """
    shown = primary if top_n is None else primary[:max(top_n, 0)]
    have = {r.entry_id for r in shown}
    rescued = [r for r in secondary[:max(add + keep_top, 0)] if r.entry_id not in have][:max(add, 0)]
    merged = list(shown[:keep_top]) + rescued + list(shown[keep_top:])
    return merged if top_n is None else merged[:max(top_n, 0)]


@dataclass(frozen=True)
class Recipe:
    """A complete way to rank entries from the signals' lists (see :func:`rank_entries`).

    ``weights`` and ``value_weights`` are ``(signal, weight)`` pairs; the
    latter, when given, replace the former for value and § questions.
    Signals in ``entry_signals`` are entry-level (one row per entry).
    ``method="rescue"``: the signals other than ``rescue_signal`` are fused
    (RRF) into the ranking, ``rescue_signal`` only adds entries (:func:`rescue`).
    """

    method: str = "rrf"
    k: int = 60
    weights: tuple = (("dense", 1.0), ("fts", 0.75))
    value_weights: tuple | None = None
    depth: int | None = 20
    chunk_decay: float = 0.4
    kernwerte_boost: float = 1.25
    entry_signals: tuple = ("card",)
    rescue_signal: str = "fts"
    rescue_keep: int = 3
    rescue_add: int = 2

    def label(self) -> str:
        weights = ",".join(f"{n}={w:g}" for n, w in self.weights)
        text = f"{self.method} w[{weights}]"
        if self.value_weights:
            text += " wert[" + ",".join(f"{n}={w:g}" for n, w in self.value_weights) + "]"
        if self.method != "convex":
            text += f" k={self.k}"
        if self.method == "rescue":
            text += f" rescue={self.rescue_signal}:{self.rescue_keep}+{self.rescue_add}"
        return text + f" depth={self.depth} decay={self.chunk_decay:g}"


def rank_entries(lists: Mapping[str, list[ChunkHit]], recipe: Recipe, *, value_question: bool = False,
                 stand_dates: Mapping[str, date] | None = None, top_n: int | None = 8) -> list[EntryResult]:
    """The entries ``recipe`` ranks first from the signals' ``lists`` (chunk- and entry-level together)."""
    if recipe.method not in RECIPE_METHODS:
        raise ValueError(f"unknown recipe method {recipe.method!r}; use one of {', '.join(RECIPE_METHODS)}")
    weights = dict(recipe.value_weights if value_question and recipe.value_weights else recipe.weights)
    used = {name: hits for name, hits in lists.items() if weights.get(name, 0.0) > 0 or (
        recipe.method == "rescue" and name == recipe.rescue_signal)}
    chunk_lists = {n: h for n, h in used.items() if n not in recipe.entry_signals}
    entry_lists = {n: h for n, h in used.items() if n in recipe.entry_signals}
    common = dict(k=recipe.k, stand_dates=stand_dates, prefer_kernwerte=value_question, depth=recipe.depth,
                  chunk_decay=recipe.chunk_decay, kernwerte_boost=recipe.kernwerte_boost)
    if recipe.method != "rescue":
        return fuse(chunk_lists, entry_lists=entry_lists, weights=weights, method=recipe.method, top_n=top_n,
                    **common)
    side = recipe.rescue_signal
    main_chunks = {n: h for n, h in chunk_lists.items() if n != side}
    main_entries = {n: h for n, h in entry_lists.items() if n != side}
    if not main_chunks and not main_entries:   # the ranking side is missing (no embeddings): the other ranks
        return fuse({side: used.get(side) or []}, weights={side: 1.0}, top_n=top_n, **common)
    primary = fuse(main_chunks, entry_lists=main_entries, weights=weights, top_n=None, **common)
    secondary = fuse({side: used.get(side) or []}, weights={side: 1.0}, top_n=None, **common)
    return rescue(primary, secondary, keep_top=recipe.rescue_keep, add=recipe.rescue_add, top_n=top_n)


def expand_cross_refs(results: list[EntryResult], cross_refs: Mapping[str, Iterable[str]], *, from_top: int = 3,
                      max_added: int = 3, known: set[str] | None = None) -> list[EntryResult]:
    """Append up to ``max_added`` entries that the first ``from_top`` results name in their cross_refs.

    References are taken in result order, then in the order they are listed;
    ids already in the results, and ids outside ``known`` (when given), are
    skipped. Added entries carry ``expansion=True``, score 0 and ``via`` set
    to the referencing entry. Returns a new list; ``results`` is unchanged.
    """
    present = {r.entry_id for r in results}
    added: list[EntryResult] = []
    for result in [r for r in results if not r.expansion][:max(from_top, 0)]:
        for ref in cross_refs.get(result.entry_id, ()) or ():
            if len(added) >= max_added:
                break
            if ref in present or (known is not None and ref not in known):
                continue
            present.add(ref)
            added.append(EntryResult(ref, 0.0, [], "", {}, expansion=True, via=result.entry_id))
    return list(results) + added
