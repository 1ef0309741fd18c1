"""What the personal-data gate adds to a question inside Odoo, run in ``odoo-bin shell`` (rolled back).

    scripts/bench/run.sh pii-odoo [DB]      (default: a fresh database pv_kb_bench_pii with the addon)

Creates 2,000 contacts that are persons (rolled back at the end), then times
``pv.kb.settings._pii_gate`` — settings read, known-name cache check (two aggregate queries),
neutralisation of question, follow-up query and a two-turn history — over the questions of
data/pii_eval.yaml, five rounds.  The first call after a change of the contacts rebuilds the
name index; it is timed separately.
"""
import os
import random
import statistics
import time

import yaml

from odoo.addons.pv_kb.lib.pii import gate as pii

env = env  # noqa: F821 - provided by `odoo-bin shell`
root = os.path.join(os.path.dirname(pii.__file__), "..")
data = yaml.safe_load(open(os.path.join(root, "data", "pii_eval.yaml"), encoding="utf-8"))
rng = random.Random(13)
first = ["Anna", "Lena", "Sophie", "Lukas", "David", "Paul", "Jakob", "Felix", "Sarah", "Laura", "Emre", "Vesna"]
last = ["Gruber", "Wagner", "Bauer", "Pichler", "Steiner", "Moser", "Mayer", "Hofer", "Leitner", "Berger", "Eder",
        "Fischer", "Schmid", "Winkler", "Weber", "Maier", "Reiter", "Wimmer", "Egger", "Brunner", "Auer", "Binder"]
Settings = env["pv.kb.settings"]
try:
    names = data["known_names"] + [f"{rng.choice(first)} {rng.choice(last)}" for _ in range(2000)]
    env["res.partner"].create([{"name": n, "is_company": False} for n in names])
    env.flush_all()
    t0 = time.perf_counter()
    Settings._pii_gate("Wie hoch ist der Freibetrag?")
    cold = (time.perf_counter() - t0) * 1000
    history = [{"role": "user", "content": "Wie hoch ist der Freibetrag für Sonderzahlungen?"},
               {"role": "assistant", "content": "Der Freibetrag beträgt € 620 pro Jahr [lb-sz-01] (Stand 2025-01)."}]
    times = []
    for _ in range(5):
        for case in data["questions"]:
            query = case["text"] + " Sonderzahlungen Freibetrag"
            t0 = time.perf_counter()
            Settings._pii_gate(case["text"], query=query, history=history)
            times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    count = env["res.partner"].search_count([("is_company", "=", False)])
    print(f"_pii_gate in Odoo ({count} person contacts, question + follow-up query + 2 history turns): "
          f"median {statistics.median(times):.2f} ms, p95 {times[int(len(times) * 0.95) - 1]:.2f} ms, "
          f"max {times[-1]:.2f} ms over {len(times)} calls; first call after a change (index rebuilt) {cold:.0f} ms")
finally:
    env.cr.rollback()
