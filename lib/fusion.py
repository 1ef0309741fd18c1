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

:func:`expand_cross_refs` then appends entries named in the ``cross_refs``
of the top results, marked ``expansion=True``.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date

METHODS = ("rrf", "convex")


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
         kernwerte_boost: float = 1.25, tie_digits: int = 9) -> list[EntryResult]:
    """Fuse the signals' chunk lists into the ``top_n`` entries (all when ``top_n`` is None).

    See the module docstring for the steps and the knobs ``method``, ``k``,
    ``weights``, ``depth``, ``chunk_decay``, ``kernwerte_boost``.
    ``stand_dates`` maps entry ids to their stand; it only orders entries
    whose scores tie (newer first; an entry without a stand counts as oldest).
    """
    if method == "rrf":
        chunk_scores = rrf(lists, k, weights, depth=depth)
    elif method == "convex":
        chunk_scores = convex(lists, weights, depth=depth)
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

    by_entry: dict[str, list[tuple[float, int]]] = {}
    for chunk_id, score in chunk_scores.items():
        hit = meta[chunk_id]
        if prefer_kernwerte and is_kernwerte_section(hit.section_key):
            score *= kernwerte_boost
        by_entry.setdefault(hit.entry_id, []).append((score, chunk_id))

    results: list[EntryResult] = []
    for entry_id, chunks in by_entry.items():
        chunks.sort(key=lambda sc: (-sc[0], sc[1]))
        total = sum(score * chunk_decay ** i for i, (score, _) in enumerate(chunks))
        results.append(EntryResult(
            entry_id=entry_id,
            score=total,
            chunk_ids=[cid for _, cid in chunks],
            best_section=meta[chunks[0][1]].section_key,
            signals=dict(sorted(best_rank[entry_id].items())),
        ))

    def newest_first(entry_id: str) -> int:
        stand = (stand_dates or {}).get(entry_id)
        return -stand.toordinal() if stand else 0

    results.sort(key=lambda r: (-round(r.score, tie_digits), newest_first(r.entry_id), r.entry_id))
    return results if top_n is None else results[:max(top_n, 0)]


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
