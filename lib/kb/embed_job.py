"""Rules of the embedding job that need no database: failure isolation, time budget, index type.

The scheduled action (``pv.kb.chunk._embed_pending``) embeds the base in batches. Three rules keep it
safe in a production Odoo:

- :func:`isolate_failures` — a batch the server rejects (one poisoned section makes Ollama answer
  HTTP 500, or it returns a NaN vector) is split in halves until the failing sections are alone; those
  are reported with their error, the rest is embedded. Without it one bad section blocks the job for good.
- :class:`TimeBudget` — the job stops before a batch that would not end within Odoo's limits
  (``limit_time_real`` / ``limit_time_real_cron`` and the cron's own time slice); Odoo runs it again.
- :func:`index_kind` — pgvector's HNSW index takes ``vector`` up to 2,000 dimensions and ``halfvec`` up
  to 4,000; above that no index fits.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

HNSW_MAX_VECTOR_DIM = 2000
HNSW_MAX_HALFVEC_DIM = 4000
# How the HNSW index is built (pgvector's defaults are m 16, ef_construction 64). Measured 2026-12-02 on the
# evaluation base (4,674 sections, e5-small), share of the exact top 8 at ef_search 100, on the 27 questions of
# the demo gold set's tuning part (on 60 praxis questions, held out, in brackets): m 16 / ef_construction 64
# 0.89 (0.89), m 16 / 200 0.98 (0.94), m 24 / 128 0.94 (0.965), m 32 / 200 0.95 (0.97); one build each (HNSW
# builds are randomised). e5's vectors lie close together and a graph built with a longer candidate list finds
# the true neighbours more often. A larger m costs at every query (m 32: hybrid p95 15.0–16.3 ms at ~3,600
# rows, over the 15 ms target); ef_construction only costs at the build. Hence m 16, ef_construction 200.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 200


def hnsw_options() -> str:
    """The index's storage options as PostgreSQL lists them in ``pg_class.reloptions`` (sorted)."""
    return ",".join(sorted((f"m={HNSW_M}", f"ef_construction={HNSW_EF_CONSTRUCTION}")))


def index_kind(dim: int) -> str | None:
    """``"vector"`` or ``"halfvec"``: the type the HNSW index is built on for ``dim``; None: none fits."""
    if dim <= HNSW_MAX_VECTOR_DIM:
        return "vector"
    if dim <= HNSW_MAX_HALFVEC_DIM:
        return "halfvec"
    return None


@dataclass
class Isolated:
    """Outcome of :func:`isolate_failures`: results in input order of the items that worked, and the
    failing items with the error message each raised when it was alone."""

    done: list = field(default_factory=list)       # [(item, result)]
    failed: list = field(default_factory=list)     # [(item, message)]
    pending: list = field(default_factory=list)    # items left for the next run (the time was up)
    calls: int = 0


def isolate_failures(items: Sequence[T], call: Callable[[Sequence[T]], Sequence[R]],
                     is_item_error: Callable[[Exception], bool],
                     probe: Callable[[], object] | None = None,
                     should_stop: Callable[[], bool] | None = None,
                     is_stop_error: Callable[[Exception], bool] | None = None) -> Isolated:
    """Run ``call`` on all ``items``; when it raises an error that may come from one item
    (``is_item_error``), split the items in halves and retry each half, down to single items.

    Errors that are not item errors (server down, timeout) propagate at once: splitting would only
    repeat them. When every item failed, ``probe`` (a request with a harmless input) tells a broken
    server from a batch of bad items: if the probe fails too, the first error is raised and nothing is
    marked. ``call`` returns one result per item, in order.

    The search can take many requests; when ``should_stop()`` says the time is up, or a call fails with
    an ``is_stop_error`` (a request that ran into the deadline), the items not yet decided are left in
    ``pending`` for the next run instead of being lost: every run keeps what it found.
    """
    out = Isolated()
    first_error: list[Exception] = []

    def run(part: Sequence[T]) -> None:
        if out.pending or (should_stop is not None and out.calls and should_stop()):
            out.pending.extend(part)
            return
        out.calls += 1
        try:
            results = call(part)
        except Exception as exc:  # noqa: BLE001 - classified right below
            if is_stop_error is not None and is_stop_error(exc):
                out.pending.extend(part)
                return
            if not is_item_error(exc):
                raise
            first_error.append(exc)
            if len(part) == 1:
                out.failed.append((part[0], _message(exc)))
                return
            middle = len(part) // 2
            run(part[:middle])
            run(part[middle:])
            return
        out.done.extend(zip(part, results))

    if items:
        run(list(items))
    if items and not out.done and not out.pending and probe is not None:
        try:
            probe()
        except Exception as exc:  # noqa: BLE001 - the server itself fails: report the original error
            raise first_error[0] from exc
    return out


def _message(exc: Exception) -> str:
    return (getattr(exc, "message", None) or str(exc) or type(exc).__name__)[:500]


class TimeBudget:
    """Wall-clock budget of one job run.

    ``deadline`` is a ``time.monotonic()`` value by which the run must have ended (None: no limit);
    ``margin`` seconds are kept free for the final commit and bookkeeping. Before each batch the job asks
    :meth:`allows` with the longest batch seen so far; :meth:`request_timeout` caps a single request so
    that even a server that stops answering cannot carry the run past the deadline.
    """

    def __init__(self, deadline: float | None, margin: float = 2.0, clock: Callable[[], float] = time.monotonic):
        self.deadline = deadline
        self.margin = margin
        self.clock = clock
        self.longest = 0.0

    def remaining(self) -> float:
        if self.deadline is None:
            return float("inf")
        return self.deadline - self.clock() - self.margin

    def allows(self, first: bool = False) -> bool:
        """Whether one more batch fits. The first batch of a run needs only a positive remainder (its
        duration is unknown; :meth:`request_timeout` bounds it); later ones need the longest seen."""
        left = self.remaining()
        return left > 0 and (first or left >= self.longest)

    def record(self, seconds: float) -> None:
        self.longest = max(self.longest, seconds)

    def hard_deadline(self) -> float | None:
        """The ``time.monotonic()`` every request must have ended by (deadline less the margin)."""
        return None if self.deadline is None else self.deadline - self.margin

    def request_timeout(self, configured: float) -> float:
        return max(0.5, min(configured, self.remaining()))


def run_deadline(now_monotonic: float, now_wall: float, *, limit_real: float | None,
                 thread_started_wall: float | None, job_started_monotonic: float | None) -> float | None:
    """The ``time.monotonic()`` by which a cron run must end.

    ``limit_real``: Odoo's real-time limit for the cron (``limit_time_real_cron`` when set, else
    ``limit_time_real``; None or <= 0: none). Odoo counts it from the start of the cron thread's current
    round (``thread.start_time``, threaded server) or, where that is not known (prefork cron workers), the
    job start is the best estimate. The cron's own time slice (``cron_end_time``) is no hard limit; the
    job honours it through ``_commit_progress``.
    """
    if not limit_real or limit_real <= 0:
        return None
    candidates = []
    if thread_started_wall:
        candidates.append(now_monotonic + (thread_started_wall + limit_real - now_wall))
    if job_started_monotonic is not None:
        candidates.append(job_started_monotonic + limit_real)
    if not candidates:
        candidates.append(now_monotonic + limit_real)
    return min(candidates)
