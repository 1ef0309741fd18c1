"""Pipeline overhead beyond the model calls (retrieve + prompt + validate + log), run in ``odoo-bin shell``.

    scripts/bench/run.sh pipeline DB      (DB embedded with multilingual-e5-small, e.g. pv_kb_eval)

The chat model is the stand-in's rule-following responder with no artificial delay; the query embedding
is served from the stand-in's cache.  Overhead = total − query embedding − generation.
"""
import os
import pathlib
import statistics
import time

from odoo.addons.pv_kb.lib.evaluation import goldset as goldset_format
from odoo.addons.pv_kb.testing.standin import OllamaStandIn

env = env  # noqa: F821 - provided by `odoo-bin shell`
gold = goldset_format.load_goldset(pathlib.Path(goldset_format.__file__).parents[2] / "data" / "demo_kb" /
                                   "goldset.yaml")
with OllamaStandIn(embed_models={"multilingual-e5-small": "e5"}, request_overhead_ms=0) as server:
    overrides = {"ollama_url": server.url, "embedding_model": "multilingual-e5-small",
                 "chat_model": "standin-chat", "query_prefix": "query: ", "passage_prefix": "passage: "}
    agent = env["pv.kb.agent"]
    settings = env["pv.kb.settings"]._get(overrides)
    agent._ask(gold[0].question, settings=settings)   # warm caches
    rows = []
    for q in gold:
        t0 = time.perf_counter()
        result = agent._ask(q.question, settings=settings)
        total = (time.perf_counter() - t0) * 1000
        t = result.timings
        rows.append((total, t.get("embed_ms", 0.0), t.get("generate_ms", 0.0), result.status))
overhead = [total - emb - gen for total, emb, gen, _status in rows]
print(f"questions={len(rows)}  overhead beyond model calls: median {statistics.median(overhead):.1f} ms, "
      f"p95 {sorted(overhead)[int(0.95 * len(overhead)) - 1]:.1f} ms, max {max(overhead):.1f} ms")
print(f"end to end with the stand-in: median {statistics.median(r[0] for r in rows):.1f} ms")
statuses = {}
for *_x, status in rows:
    statuses[status] = statuses.get(status, 0) + 1
print("statuses:", statuses)
env.cr.rollback()

# Ollama gone (nothing listens on the port): the degraded answer with citations
degraded = env["pv.kb.settings"]._get(dict(overrides, ollama_url="http://127.0.0.1:9"))
times, statuses = [], set()
for q in gold[:20]:
    t0 = time.perf_counter()
    result = env["pv.kb.agent"]._ask(q.question, settings=degraded)
    times.append((time.perf_counter() - t0) * 1000)
    statuses.add(result.status)
print(f"Ollama down: median {statistics.median(times):.0f} ms, max {max(times):.0f} ms, statuses {statuses}")
env.cr.rollback()
