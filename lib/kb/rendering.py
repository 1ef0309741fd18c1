"""Markdown of an entry to HTML for the entry form (sanitised again by Odoo's Html field), within a budget.

Python-Markdown is superlinear on some inputs (quadratic on runs of ``[``, slow on deeply nested lists, raw
``<a `` runs, …). An entry comes from an uploaded batch, so its rendering is bounded three ways, and the
batch check (dry run) renders every entry with exactly this code, so that what the check accepts, the apply
can store (:mod:`.batch` keeps the HTML on the parsed entry; the importer writes it):

1. :data:`MAX_BODY_CHARS`: a longer body is refused (the format check, :mod:`.format`);
2. :func:`costly_structure`: a linear pass that names the structures known to be slow (bracket runs, deep
   nesting, very long lines or tables) before the renderer sees them;
3. :func:`render_within`: the renderer runs under a time budget; when the budget is spent the render is
   interrupted (an asynchronous exception in the rendering thread) and the entry is refused with a reason.
"""
from __future__ import annotations

import ctypes
import re
import threading
import time

import markdown

_TITLE_RE = re.compile(r"\A\s*#\s+[^\n]*\n")

MAX_BODY_CHARS = 200_000          # characters of an entry body (the largest real entries have ~30,000); format.py
MAX_LINE_CHARS = 20_000           # characters of one line (a paragraph line, a table row)
MAX_BRACKET_SCAN = 400_000        # characters Python-Markdown's link search would scan in one entry (~0.2 s)
MAX_NESTING = 16                  # list or quote levels
MAX_BLOCK_LINES = 1_000           # lines of one block (paragraph, list, table) without a blank line
MAX_INLINE_HTML = 500             # "<" that could open an inline tag in one block (quadratic: 1,500 take a second)
MAX_TABLE_CELLS = 200             # "|" in one line (a table of 10,000 columns takes a second)
ENTRY_SECONDS = 2.0               # rendering budget of one entry (wall clock)
BATCH_SECONDS = 12.0              # rendering budget of a whole batch uploaded in the browser (wall clock)


class RenderBudgetExceeded(Exception):
    """Raised inside a render that ran out of time (never escapes :func:`render_within`)."""


_local = threading.local()


def _renderer() -> markdown.Markdown:
    """One Markdown instance per thread, reset before each use (building one costs more than a small entry)."""
    md = getattr(_local, "md", None)
    if md is None:
        md = _local.md = markdown.Markdown(extensions=["tables", "sane_lists"], output_format="html")
    return md


def entry_html(body: str) -> str:
    """Render the entry body; the leading H1 is dropped since the form shows the title. No budget: callers
    outside a batch check go through :func:`render_within`."""
    text = _TITLE_RE.sub("", body or "", count=1)
    md = _renderer()
    try:
        html = md.reset().convert(text)
    except BaseException:
        _local.md = None     # interrupted halfway: never reuse its state
        raise
    # Kernwerte tables read better with the backend's table styles
    return html.replace("<table>", '<table class="table table-sm table-bordered w-auto">')


# --------------------------------------------------------------------------- the linear pre-check


def _blocks(body: str):
    """Blocks as Python-Markdown's inline processors see them: text between blank lines."""
    start = 0
    for match in re.finditer(r"\n[ \t]*\n", body):
        yield body[start:match.start()]
        start = match.end()
    yield body[start:]


def _bracket_scan(block: str) -> int:
    """Characters Python-Markdown's link search scans in a block: from each "[" to its matching "]", and from
    each "](" to its matching ")", or to the block's end when there is none (linear: one pass, two stacks)."""
    brackets: list[int] = []
    parens: list[tuple[int, bool]] = []
    cost = 0
    for match in re.finditer(r"\\.|[\[\]()]", block):
        char, at = match.group(0), match.start()
        if char == "[":
            brackets.append(at)
        elif char == "]":
            if brackets:
                cost += at - brackets.pop()
        elif char == "(":
            parens.append((at, at > 0 and block[at - 1] == "]"))
        elif char == ")" and parens:
            start, counted = parens.pop()
            if counted:
                cost += at - start
    end = len(block)
    cost += sum(end - position for position in brackets)
    cost += sum(end - position for position, counted in parens if counted)
    return cost


def costly_structure(body: str) -> str | None:
    """A German reason if ``body`` holds a structure that is slow to render, None if it is fine."""
    if len(body) > MAX_BODY_CHARS:
        return (f"Der Text ist mit {len(body):,} Zeichen zu lang (höchstens {MAX_BODY_CHARS:,}). Bitte den Eintrag "
                "aufteilen.").replace(",", ".")
    longest = max((len(line) for line in body.split("\n")), default=0)
    widest = max((line.count("|") for line in body.split("\n")), default=0)
    if widest > MAX_TABLE_CELLS:
        return f"Eine Tabellenzeile hat mehr als {MAX_TABLE_CELLS} Spalten. Bitte die Tabelle aufteilen."
    if longest > MAX_LINE_CHARS:
        return (f"Eine Zeile ist mit {longest:,} Zeichen zu lang (höchstens {MAX_LINE_CHARS:,}). Bitte Absätze "
                "umbrechen.").replace(",", ".")
    rows = 0
    for line in body.split("\n"):
        stripped = line.lstrip()
        rows = rows + 1 if stripped else 0
        if rows > MAX_BLOCK_LINES:
            return (f"Ein Absatz, eine Liste oder eine Tabelle hat mehr als {MAX_BLOCK_LINES} Zeilen ohne Leerzeile. "
                    "Bitte aufteilen.")
        indent = len(line) - len(stripped)
        quotes = len(stripped) - len(stripped.lstrip("> \t")) if stripped.startswith(">") else 0
        if indent // 2 > MAX_NESTING * 2 or stripped[:quotes].count(">") > MAX_NESTING:
            return (f"Der Text ist zu tief verschachtelt (Listen oder Zitate mit mehr als {MAX_NESTING} Ebenen). "
                    "Bitte flacher gliedern.")
    scanned = 0
    for block in _blocks(body):
        opened = block.count("[")
        unmatched = max(opened - block.count("]"), 0)
        if not opened or opened * len(block) <= MAX_BRACKET_SCAN // 4:
            scanned += opened * len(block)          # an upper bound, counted in C: most blocks end here
        elif scanned + unmatched * (unmatched + 1) // 2 <= MAX_BRACKET_SCAN:
            scanned += _bracket_scan(block)         # exact, one pass
        else:
            scanned += unmatched * (unmatched + 1) // 2   # a lower bound that is too much already
        if scanned > MAX_BRACKET_SCAN:
            return ("Der Text enthält sehr viele eckige Klammern ohne nahes Gegenstück ('[' ohne ']'). "
                    "Bitte die Klammern prüfen.")
        if block.count("<") > MAX_INLINE_HTML:
            return f"Ein Absatz enthält mehr als {MAX_INLINE_HTML} Zeichen '<'. Bitte den Text prüfen."
    return None


# --------------------------------------------------------------------------- the time budget


def _set_async_exc(thread_id: int, exc) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                               ctypes.py_object(exc) if exc is not None else ctypes.c_void_p(0))


REARM_SECONDS = 0.1               # the interruption is repeated this often until the render has ended


def _call_within(fn, seconds: float):
    """``fn()`` or :class:`RenderBudgetExceeded` after ``seconds``: a watchdog thread raises it asynchronously
    in this thread (checked between bytecodes: a single long C call ends first; the size limits keep those
    short). Python drops an asynchronous exception that lands in a garbage-collector callback or a
    ``__del__`` ("Exception ignored in …"), so the watchdog raises it again every :data:`REARM_SECONDS`
    until the call has ended."""
    thread_id = threading.get_ident()
    lock = threading.Lock()
    stop = threading.Event()
    state = {"done": False, "fired": False}

    def watch():
        if stop.wait(seconds):
            return
        while True:
            with lock:
                if state["done"]:
                    return
                state["fired"] = True
                _set_async_exc(thread_id, RenderBudgetExceeded)
            if stop.wait(REARM_SECONDS):
                return

    def end():
        # an interruption can land here too, before "done" is set: then the watchdog would go on raising into
        # this thread after the call, so the end is tried again until it is set (after that nothing is raised)
        while True:
            try:
                with lock:
                    state["done"] = True
                    if state["fired"]:
                        _set_async_exc(thread_id, None)   # not delivered yet: cleared, it must not hit later code
                break
            except RenderBudgetExceeded:
                continue
        stop.set()

    watchdog = threading.Thread(target=watch, name="pv_kb-render-budget", daemon=True)
    # the start is inside the try: on a loaded machine starting the thread can take longer than a short budget,
    # and an interruption landing in start() must still end the watchdog (else it raises into later code)
    try:
        watchdog.start()
        result = fn()
    finally:
        end()
    if state["fired"]:
        raise RenderBudgetExceeded()
    return result


def render_within(body: str, seconds: float = ENTRY_SECONDS) -> tuple[str | None, str | None]:
    """``(html, None)``, or ``(None, German reason)`` when the body is too costly to render."""
    def check_and_render():
        reason = costly_structure(body or "")
        return (None, reason) if reason else (entry_html(body), None)

    try:
        return _call_within(check_and_render, seconds)
    except RenderBudgetExceeded:
        return None, (f"Der Text lässt sich nicht innerhalb von {seconds:g} Sekunden darstellen (zu aufwendige "
                      "Auszeichnung). Bitte die Formatierung vereinfachen.")
    except RecursionError:
        return None, "Der Text ist zu tief verschachtelt. Bitte flacher gliedern."


class BatchRenderer:
    """Renders the entries of one batch within :data:`ENTRY_SECONDS` each and ``batch_seconds`` in all (wall
    clock); ``batch_seconds=None``: no total (the command line)."""

    def __init__(self, entry_seconds: float = ENTRY_SECONDS, batch_seconds: float | None = BATCH_SECONDS):
        self.entry_seconds = entry_seconds
        self.left = batch_seconds if batch_seconds is not None else float("inf")
        self.batch_seconds = batch_seconds

    @property
    def exhausted(self) -> bool:
        return self.left <= 0

    def render(self, body: str) -> tuple[str | None, str | None]:
        if self.exhausted:
            return None, (f"Der Stapel braucht zum Darstellen mehr als {self.batch_seconds:g} Sekunden. Bitte den "
                          "Stapel aufteilen oder die Formatierung vereinfachen.")
        started = time.monotonic()
        html, reason = render_within(body, min(self.entry_seconds, max(self.left, 0.05)))
        self.left -= time.monotonic() - started
        return html, reason
