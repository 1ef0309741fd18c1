"""Hostile batches through the import, as the browser upload gets them: check (dry run) and apply, timed.

    scripts/bench/run.sh hostile          (a fresh database with the demo base; every apply is rolled back)
    BENCH_ONLY=table,tiny scripts/bench/run.sh hostile     (only the batches whose label holds "table" or "tiny")

Every batch is a ZIP under 1 MB built from testing/hostile_kb.py: each pathological body alone at the largest
size the format allows, the same bodies many times over, a batch of 4,999 tiny entries, a YAML alias bomb,
and the largest bodies the limits let through. For each: the ZIP size, the check's and the apply's wall time
(the apply includes the check, as in the wizard), the outcome (entries taken / refused), and the peak of
Python memory during the check (tracemalloc, a separate pass) with the process's peak RSS so far. The
acceptance: every batch under 1 MB checks or applies within 20 s and 1 GB.
"""
import os
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
    yield "800 entries of bracket blocks under the limit", hostile_batch({str(i): slow for i in range(800)})
    yield "every pathological body 60 times (15k chars each)", hostile_batch(
        {f"{name}{i}": make(15_000)[:15_000] for i in range(60) for name, make in BODIES.items()})
    yield "every non-table body 30 times (15k chars each, 780 entries)", hostile_batch(
        {f"{name}{i}": make(15_000)[:15_000] for i in range(30) for name, make in BODIES.items() if "table" not in name})
    yield "3,900 tiny entries", hostile_batch({str(i): f"Text {i}." for i in range(3900)})
    table = "| Wert | 2024 | 2025 |\n|---|---|---|\n" + "".join(f"| Grenze {i} | € {i},10 | € {i},20 |\n"
                                                             for i in range(990))
    yield "40 entries with a 990-row Kernwerte table", hostile_batch({str(i): table for i in range(40)})
    yield "4 entries with a 990-row Kernwerte table (the most accepted)", hostile_batch({str(i): table for i in range(4)})
    small = "| Wert | Betrag |\n|---|---|\n| Grenze | € 1,10 |\n| Satz | 6 % |\n\nText mit **Fett** [lb-sz-01]."
    yield "800 entries with a 4-line table (the most accepted)", hostile_batch({str(i): small for i in range(800)})
    normal = ("Der Arbeitgeber hat die Sonderzahlung nach § 67 EStG zu versteuern; das Jahressechstel beträgt "
              "1/6 der laufenden Bezüge [lb-sz-01].\n\n") * 1500
    yield "240 entries of 190k ordinary text (45 MB unpacked)", hostile_batch({str(i): normal for i in range(240)})
    yield "YAML alias bomb (9 levels)", alias_bomb_batch()
    yield "over-long entry (300k chars)", {"dokumente/hx-long-01.md": entry("hx-long-01", "Wort " * 60_000),
                                           "kb.json": b'{"count": 1, "entries": [{"id": "hx-long-01"}]}'}


only = [part for part in os.environ.get("BENCH_ONLY", "").split(",") if part]
print(f"{'batch':55s} {'zip KB':>7s} {'check s':>8s} {'apply s':>8s} {'check MB':>8s} {'RSS MB':>7s}  outcome")
worst = (0.0, "")
for label, files in batches():
    if only and not any(part in label for part in only):
        continue
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
    if applied.applied:
        outcome = f"applied, {counts['new'] + counts['changed']} entries"
    else:
        codes = sorted({i.code for i in checked.plan.issues if i.level == "error"})
        outcome = f"refused ({counts['rejected']} entries): " + ", ".join(codes[:3])
    print(f"{label[:55]:55s} {len(data) / 1024:7.0f} {check_s:8.2f} {apply_s:8.2f} {peak / 2**20:8.0f} "
          f"{rss_mb():7.0f}  {outcome}", flush=True)
    worst = max(worst, (max(check_s, apply_s), label))
print(f"slowest: {worst[1]} in {worst[0]:.2f} s; process peak RSS {rss_mb():.0f} MB")
env.cr.rollback()
