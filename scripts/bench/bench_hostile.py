"""Hostile batches through the import, as the browser upload gets them: check (dry run) and apply, timed.

    scripts/bench/run.sh hostile          (a fresh database with the demo base; every apply is rolled back)

Every batch is a ZIP under 1 MB built from testing/hostile_kb.py: each pathological body alone at the largest
size the format allows, the same bodies many times over, a batch of 4,999 tiny entries, a YAML alias bomb,
and the largest bodies the limits let through. For each: the ZIP size, the check's and the apply's wall time
(the apply includes the check, as in the wizard), the outcome (entries taken / refused), and the peak of
Python memory during the check (tracemalloc, a separate pass) with the process's peak RSS so far. The
acceptance: every batch under 1 MB checks or applies within 20 s and 1 GB.
"""
import resource
import time
import tracemalloc

from odoo.exceptions import UserError

from odoo.addons.pv_kb.lib.kb import rendering
from odoo.addons.pv_kb.testing.hostile_kb import BODIES, as_zip, entry, hostile_batch

env = env  # noqa: F821 - provided by `odoo-bin shell`
Importer = env["pv.kb.importer"]


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def alias_bomb_batch(levels=9):
    lines = ['a0: &a0 ["lol"]'] + [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    text = "---\nid: hx-bomb-01\n" + "\n".join(lines) + f"\ntitle: *a{levels}\n---\n# T\n"
    files = {"dokumente/hx-bomb-01.md": text.encode()}
    files["kb.json"] = b'{"count": 1, "entries": [{"id": "hx-bomb-01"}]}'
    return files


def batches():
    big = rendering.MAX_BODY_CHARS - 1000
    for name, make in sorted(BODIES.items()):
        yield f"{name} (one entry, {big // 1000}k chars)", hostile_batch({name: make(big)})
    # many entries each just under the pre-check's limits: the batch budget has to end it
    slow = "\n\n".join("[" * 500 for _ in range(40))
    yield "2,000 entries of bracket blocks under the limit", hostile_batch({str(i): slow for i in range(2000)})
    yield "every pathological body 50 times (15k chars)", hostile_batch(
        {f"{name}{i}": make(15_000) for i in range(50) for name, make in BODIES.items()})
    yield "4,999 tiny entries", hostile_batch({str(i): f"Text {i}." for i in range(4999)})
    normal = ("Der Arbeitgeber hat die Sonderzahlung nach § 67 EStG zu versteuern; das Jahressechstel beträgt "
              "1/6 der laufenden Bezüge [lb-sz-01].\n\n") * 1500
    yield "240 entries of 190k ordinary text (45 MB unpacked)", hostile_batch({str(i): normal for i in range(240)})
    yield "YAML alias bomb (9 levels)", alias_bomb_batch()
    yield "over-long entry (300k chars)", {"dokumente/hx-long-01.md": entry("hx-long-01", "Wort " * 60_000),
                                           "kb.json": b'{"count": 1, "entries": [{"id": "hx-long-01"}]}'}


print(f"{'batch':55s} {'zip KB':>7s} {'check s':>8s} {'apply s':>8s} {'taken':>6s} {'refused':>7s} "
      f"{'check MB':>8s} {'RSS MB':>7s}")
worst = (0.0, "")
for label, files in batches():
    data = as_zip(files)
    if len(data) >= 1024 * 1024:
        print(f"{label:55s} ZIP {len(data) / 1024:.0f} KB is not under 1 MB: skipped")
        continue
    started = time.perf_counter()
    try:
        read = Importer._read_source(data=data)
    except UserError as exc:
        print(f"{label[:55]:55s} {len(data) / 1024:7.0f} {time.perf_counter() - started:8.2f} refused by the ZIP "
              f"guard: {str(exc)[:60]}")
        continue
    checked = Importer._run(read, dry_run=True, source_name=label, origin="wizard")
    check_s = time.perf_counter() - started
    started = time.perf_counter()
    applied = Importer._run(Importer._read_source(data=data), dry_run=False, source_name=label, origin="wizard")
    apply_s = time.perf_counter() - started
    env.cr.rollback()
    tracemalloc.start()
    Importer._run(Importer._read_source(data=data), dry_run=True, source_name=label, origin="wizard")
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    counts = checked.plan.counts()
    taken = counts["new"] + counts["changed"] if applied.applied else 0
    print(f"{label[:55]:55s} {len(data) / 1024:7.0f} {check_s:8.2f} {apply_s:8.2f} {taken:6d} "
          f"{counts['rejected']:7d} {peak / 2**20:8.0f} {rss_mb():7.0f}", flush=True)
    worst = max(worst, (max(check_s, apply_s), label))
print(f"slowest: {worst[1]} in {worst[0]:.2f} s; process peak RSS {rss_mb():.0f} MB")
env.cr.rollback()
