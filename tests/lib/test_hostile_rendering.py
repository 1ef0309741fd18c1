"""Pathological entry bodies: refused with a reason or rendered, by the check exactly as by the apply."""
import time

import pytest

from lib.kb import batch as kb_batch, format as kb_format, rendering
from testing.hostile_kb import BODIES, hostile_batch

SIZES = (5_000, 60_000)


@pytest.mark.parametrize("name", sorted(BODIES))
def test_every_pathological_body_is_refused_or_rendered_within_its_budget(name):
    for size in SIZES:
        body = BODIES[name](size)
        html, reason = rendering.render_within(body)
        assert (html is None) == bool(reason)
        if reason:
            assert len(reason) < 300


@pytest.mark.parametrize("name", ["bracket_run", "bracket_paren_run", "image_run", "nested_brackets",
                                  "nested_list", "nested_quote", "tag_opens", "setext_headers", "wide_table"])
def test_the_known_slow_structures_are_named_before_rendering(name):
    assert rendering.costly_structure(BODIES[name](60_000))


def test_the_budget_interrupts_a_render_that_runs_too_long():
    # below the pre-check's bracket limit, yet far slower than a budget of a few milliseconds
    body = "\n\n".join("[" * 600 for _ in range(2))
    assert rendering.costly_structure(body) is None
    started = time.perf_counter()
    html, reason = rendering.render_within(body, seconds=0.01)
    assert html is None and "Sekunden" in reason
    assert time.perf_counter() - started < 3.0      # far below the render's own time (generous: a loaded machine)
    # nothing of the interruption is left behind in this thread
    time.sleep(0.05)
    assert sum(range(1000)) == 499500
    # and the renderer of this thread starts clean
    assert rendering.entry_html("Ein **Satz**.") == "<p>Ein <strong>Satz</strong>.</p>"


def test_a_spent_batch_budget_refuses_the_rest():
    renderer = rendering.BatchRenderer(batch_seconds=0.0)
    html, reason = renderer.render("Text")
    assert html is None and "Stapel" in reason


def test_the_check_renders_and_the_entry_carries_the_html():
    batch = kb_batch.load_batch(hostile_batch({"ok": "Ein **Text** mit [Link](https://example.org).",
                                               "bad": BODIES["bracket_run"](60_000)}))
    assert [e.id for e in batch.entries] == ["hx-0-01"]
    assert "<strong>Text</strong>" in batch.entries[0].html
    assert [i.code for i in batch.errors] == ["render_costly"]
    assert batch.errors[0].file == "dokumente/hx-1-01.md"


def test_a_body_over_the_limit_is_refused_with_a_reason():
    body = "Text. " * (kb_format.MAX_BODY_CHARS // 6 + 100)
    entry, issues = kb_format.parse_entry(
        ("---\nid: hx-big-01\ntitle: T\nstand: 2026-01\ntopic: t\nsource: s\n---\n" + body).encode(),
        "dokumente/hx-big-01.md")
    assert entry is None and [i.code for i in issues] == ["body_too_large"]
    assert "200.000" in issues[0].message


def test_real_entries_pass_the_pre_check():
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[2] / "data" / "demo_kb" / "wissensbasis" / "dokumente"
    for path in root.glob("*.md"):
        assert rendering.costly_structure(path.read_text(encoding="utf-8")) is None, path.name


def test_a_browser_upload_is_refused_whole_beyond_its_limits():
    limits = kb_batch.UploadLimits(max_entries=5, max_table_lines=30)
    many = hostile_batch({str(i): "Text." for i in range(6)})
    batch = kb_batch.load_batch(many, limits=limits)
    assert not batch.entries and [i.code for i in batch.errors] == ["batch_too_large"]
    assert "6 Einträge" in batch.errors[0].message and "Kommandozeile" in batch.errors[0].message
    tables = hostile_batch({"t": "| a | b |\n|---|---|\n" + "| x | 1 |\n" * 40})
    assert [i.code for i in kb_batch.load_batch(tables, limits=limits).errors] == ["batch_too_large"]
    # within the limits (and without them) the same batches are read as usual
    assert len(kb_batch.load_batch(hostile_batch({str(i): "Text." for i in range(5)}), limits=limits).entries) == 5
    assert len(kb_batch.load_batch(many).entries) == 6


def test_the_demo_and_synthetic_bases_fit_a_browser_upload(tmp_path):
    import pathlib

    from lib.kb import zip_guard
    from testing import synthetic_kb
    demo = pathlib.Path(__file__).resolve().parents[2] / "data" / "demo_kb" / "wissensbasis"
    synthetic_kb.main([str(tmp_path), "--entries", "601", "--seed", "7"])
    for root in (demo, tmp_path / "wissensbasis"):
        batch = kb_batch.load_batch(zip_guard.read_folder(root), limits=kb_batch.UploadLimits(), render=False)
        assert "batch_too_large" not in {i.code for i in batch.issues}, root


def test_an_interruption_swallowed_by_a_gc_callback_is_raised_again():
    import gc

    swallowed = []

    def callback(phase, info):
        # a callback like Odoo's GC timing hook: an exception delivered here is dropped by Python
        try:
            time.sleep(0.001)
        except rendering.RenderBudgetExceeded:
            swallowed.append(1)

    def busy():
        end = time.perf_counter() + 10
        junk = []
        while time.perf_counter() < end:
            junk.append([object() for _ in range(50)])   # keeps the collector (and its callback) busy
            if len(junk) > 200:
                junk.clear()
        return "finished"

    gc.callbacks.append(callback)
    try:
        started = time.perf_counter()
        with pytest.raises(rendering.RenderBudgetExceeded):
            rendering._call_within(busy, 0.2)
        assert time.perf_counter() - started < 5.0      # interrupted, not run to its end (10 s)
    finally:
        gc.callbacks.remove(callback)


def test_an_interruption_landing_while_the_call_ends_stops_the_watchdog(monkeypatch):
    import threading
    import types

    main = threading.get_ident()
    landed = []

    class LockHitOnce:
        """A lock that raises the interruption the first time this thread takes it: as if the watchdog's
        exception landed in the code that ends the call, before it could say so."""

        def __init__(self):
            self.lock = threading.Lock()

        def __enter__(self):
            if threading.get_ident() == main and not landed:
                landed.append(1)
                raise rendering.RenderBudgetExceeded()
            return self.lock.__enter__()

        def __exit__(self, *exc):
            return self.lock.__exit__(*exc)

    events = []

    def event():
        events.append(threading.Event())
        return events[-1]

    fake = types.SimpleNamespace(Lock=LockHitOnce, Event=event, Thread=threading.Thread, get_ident=threading.get_ident)
    monkeypatch.setattr(rendering, "threading", fake)
    try:
        rendering._call_within(lambda: "done", 0.01)
    except rendering.RenderBudgetExceeded:
        pass                         # the call may end either way; what matters is what comes after it
    assert landed
    # the watchdog has stopped: nothing is raised into this thread afterwards (it would repeat every 0.1 s)
    try:
        assert _stray_interruptions() == 0
    finally:
        events[0].set()              # a watchdog still running ends here, not in the next tests
        rendering._set_async_exc(main, None)


def _stray_interruptions() -> int:
    """The interruptions that reach this thread over three re-arm periods after a call has ended."""
    stray = 0
    end = time.perf_counter() + 3 * rendering.REARM_SECONDS + 0.05
    while time.perf_counter() < end:
        try:
            sum(range(100))
        except rendering.RenderBudgetExceeded:
            stray += 1
    return stray


def test_an_interruption_landing_while_the_watchdog_starts_stops_the_watchdog(monkeypatch):
    import threading
    import types

    main = threading.get_ident()

    class SlowStart(threading.Thread):
        """A thread whose start returns late, as on a loaded machine: the budget is spent before the call runs."""

        def start(self):
            super().start()
            end = time.perf_counter() + 0.3
            while time.perf_counter() < end:      # bytecodes, so the interruption can land here
                sum(range(50))

    fake = types.SimpleNamespace(Lock=threading.Lock, Event=threading.Event, Thread=SlowStart,
                                 get_ident=threading.get_ident)
    monkeypatch.setattr(rendering, "threading", fake)
    with pytest.raises(rendering.RenderBudgetExceeded):
        rendering._call_within(lambda: "done", 0.01)
    try:
        assert _stray_interruptions() == 0
    finally:
        rendering._set_async_exc(main, None)
