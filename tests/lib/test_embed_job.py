import pytest

from lib.kb import embed_job
from lib.kb.embed_job import TimeBudget, index_kind, isolate_failures, run_deadline


class ItemError(Exception):
    pass


class ServerDown(Exception):
    pass


def embedder(poisoned, log):
    def call(items):
        log.append(list(items))
        if any(i in poisoned for i in items):
            raise ItemError(f"HTTP 500 for a batch with {sorted(set(items) & poisoned)}")
        return [f"v{i}" for i in items]
    return call


def test_isolate_failures_finds_each_poisoned_item_and_keeps_the_rest():
    log = []
    out = isolate_failures(list(range(16)), embedder({3, 11}, log), lambda e: isinstance(e, ItemError))
    assert [i for i, _ in out.failed] == [3, 11]
    assert all("HTTP 500" in msg for _i, msg in out.failed)
    assert sorted(i for i, _ in out.done) == [i for i in range(16) if i not in (3, 11)]
    assert all(v == f"v{i}" for i, v in out.done)
    # bisection, not one request per item: log2(16) levels for each of the two poisoned items
    assert out.calls == len(log) < 16


def test_isolate_failures_one_call_when_nothing_fails():
    log = []
    out = isolate_failures([1, 2, 3], embedder(set(), log), lambda e: isinstance(e, ItemError))
    assert out.calls == 1 and out.failed == [] and len(out.done) == 3


def test_isolate_failures_does_not_split_on_server_errors():
    def down(items):
        raise ServerDown("refused")
    with pytest.raises(ServerDown):
        isolate_failures([1, 2, 3, 4], down, lambda e: isinstance(e, ItemError))


def test_isolate_failures_raises_when_the_probe_fails_too():
    """A server that answers 500 to everything is broken, not the items: nothing is marked."""
    def broken(items):
        raise ItemError("HTTP 500")

    def probe():
        raise ItemError("HTTP 500 for the probe")
    with pytest.raises(ItemError, match="HTTP 500"):
        isolate_failures([1, 2, 3], broken, lambda e: isinstance(e, ItemError), probe=probe)


def test_isolate_failures_marks_all_when_the_probe_passes():
    probed = []
    out = isolate_failures([7], embedder({7}, []), lambda e: isinstance(e, ItemError),
                           probe=lambda: probed.append(True))
    assert [i for i, _ in out.failed] == [7] and probed == [True]


def test_isolate_failures_all_poisoned():
    out = isolate_failures([1, 2], embedder({1, 2}, []), lambda e: isinstance(e, ItemError))
    assert [i for i, _ in out.failed] == [1, 2] and out.done == []


class Clock:
    def __init__(self, now=100.0):
        self.now = now

    def __call__(self):
        return self.now


def test_time_budget_stops_before_a_batch_that_would_not_fit():
    clock = Clock()
    budget = TimeBudget(deadline=120.0, margin=2.0, clock=clock)
    assert budget.allows(first=True)
    budget.record(8.0)
    clock.now = 108.0            # 10 s left after the margin
    assert budget.allows()
    clock.now = 111.0            # 7 s left, the longest batch took 8 s
    assert not budget.allows()
    assert budget.request_timeout(120.0) == pytest.approx(7.0)
    clock.now = 119.0
    assert not budget.allows(first=True)
    assert budget.request_timeout(120.0) == 0.5


def test_time_budget_without_deadline():
    budget = TimeBudget(deadline=None)
    budget.record(1e6)
    assert budget.allows() and budget.request_timeout(30.0) == 30.0


def test_run_deadline_takes_the_earliest_known_start():
    # threaded server: the cron thread started its round 15 s ago (wall clock), the job 5 s ago
    d = run_deadline(1000.0, 5000.0, limit_real=20, thread_started_wall=4985.0, job_started_monotonic=995.0)
    assert d == pytest.approx(1005.0)
    # prefork: only the job start is known
    assert run_deadline(1000.0, 5000.0, limit_real=20, thread_started_wall=None,
                        job_started_monotonic=995.0) == pytest.approx(1015.0)
    assert run_deadline(1000.0, 5000.0, limit_real=0, thread_started_wall=4985.0,
                        job_started_monotonic=None) is None
    assert run_deadline(1000.0, 5000.0, limit_real=20, thread_started_wall=None,
                        job_started_monotonic=None) == pytest.approx(1020.0)


@pytest.mark.parametrize("dim, kind", [(384, "vector"), (2000, "vector"), (2001, "halfvec"), (3072, "halfvec"),
                                       (4000, "halfvec"), (4096, None)])
def test_index_kind(dim, kind):
    assert index_kind(dim) == kind
    assert embed_job.HNSW_MAX_VECTOR_DIM == 2000


def test_isolate_failures_keeps_what_it_found_when_the_time_is_up():
    """A long search stops at the deadline: items already decided are kept, the rest left pending."""
    log, budget = [], {"calls": 3}

    def should_stop():
        return len(log) >= budget["calls"]
    out = isolate_failures(list(range(8)), embedder({6}, log), lambda e: isinstance(e, ItemError),
                           should_stop=should_stop)
    # calls: [0..7] fails, [0..3] ok, [4..7] fails -> time up: 4..7 stay pending, nothing marked failed
    assert [i for i, _ in out.done] == [0, 1, 2, 3]
    assert out.failed == [] and out.pending == [4, 5, 6, 7]


def test_isolate_failures_a_request_that_ran_into_the_deadline_leaves_its_items_pending():
    class Deadline(Exception):
        pass
    calls = []

    def call(items):
        calls.append(list(items))
        if len(calls) == 1:
            raise ItemError("HTTP 500")
        if len(calls) == 2:
            return [f"v{i}" for i in items]
        raise Deadline("timeout")
    out = isolate_failures([1, 2, 3, 4], call, lambda e: isinstance(e, ItemError),
                           probe=lambda: (_ for _ in ()).throw(AssertionError("no probe while pending")),
                           is_stop_error=lambda e: isinstance(e, Deadline))
    assert [i for i, _ in out.done] == [1, 2] and out.pending == [3, 4] and out.failed == []


def test_hnsw_options_are_listed_as_postgresql_stores_them():
    from lib.kb import embed_job
    # pg_class.reloptions of an index built WITH (m = 16, ef_construction = 200), sorted
    assert embed_job.hnsw_options() == f"ef_construction={embed_job.HNSW_EF_CONSTRUCTION},m={embed_job.HNSW_M}"
    assert embed_job.HNSW_EF_CONSTRUCTION > 64, "a better graph than pgvector's default build"
