"""Retrieval latency per mode, run inside Odoo (``odoo-bin shell``) on a database with embeddings.

    scripts/bench/run.sh retrieval DB            (see docs/measurements.md, "Benchmark commands")

Questions: the demo gold set.  The query embedding is computed once per question up front and served
from memory during the timed runs, so the numbers exclude the embedding call (as the target says).
"""
import os
import pathlib
import statistics
import time
from unittest.mock import patch

from odoo.addons.pv_kb.lib.evaluation import goldset as goldset_format

env = env  # noqa: F821 - provided by `odoo-bin shell`
repeats = int(os.environ.get("BENCH_REPEATS", "5"))
gold_path = os.environ.get("BENCH_GOLDSET") or os.path.join(
    os.path.dirname(goldset_format.__file__), "..", "..", "data", "demo_kb", "goldset.yaml")
gold = goldset_format.load_goldset(pathlib.Path(gold_path))
overrides = {}
if os.environ.get("STANDIN_URL"):
    overrides = {"ollama_url": os.environ["STANDIN_URL"], "embedding_model": "multilingual-e5-small",
                 "query_prefix": "query: ", "passage_prefix": "passage: "}
Retriever = env["pv.kb.retriever"]
settings = env["pv.kb.settings"]._get(overrides)
status = env["pv.kb.chunk"]._embedding_status(settings["embedding_model"], settings["passage_prefix"])
env["pv.kb.chunk"]._lexicon()      # warm the per-process caches once
env["pv.kb.chunk"]._synonyms()
vectors = {}
dim = status["dim"]
if os.environ.get("BENCH_RANDOM_VECTORS"):
    import random
    rnd = random.Random(7)
    vectors = {q.question: [rnd.uniform(-1, 1) for _ in range(dim)] for q in gold}
else:
    client = env["pv.kb.settings"]._client(settings)
    for q in gold:
        vectors[q.question] = Retriever._query_vector(q.question, settings, client)


def cached_vector(self, text, settings, client=None, gated=None):
    return vectors[text]


def pct(values, p):
    values = sorted(values)
    return values[max(0, min(len(values) - 1, int(round(p / 100 * len(values) + 0.5)) - 1))]


# chunks the dense side can find: a vector of the configured model (the scale bases carry random ones)
env.cr.execute("SELECT count(*) FROM pv_kb_chunk WHERE entry_active AND embedding IS NOT NULL AND embedding_model = %s",
               [settings["embedding_model"]])
print(f"chunks={status['total']} with a vector={env.cr.fetchone()[0]} dim={dim} "
      f"questions={len(gold)} repeats={repeats}")
with patch.object(type(Retriever), "_query_vector", cached_vector):
    for mode in ("dense", "fts", "hybrid"):
        times = []
        for _ in range(repeats):
            for q in gold:
                t0 = time.perf_counter()
                Retriever._retrieve(q.question, mode=mode, settings=settings)
                times.append((time.perf_counter() - t0) * 1000)
        print(f"{mode:7s} p50 {statistics.median(times):6.1f} ms   p95 {pct(times, 95):6.1f} ms   "
              f"max {max(times):6.1f} ms   n={len(times)}")
    # the entry-card list alone (part of hybrid): its own query on the cards' partial HNSW index
    times = []
    for _ in range(repeats):
        for q in gold:
            t0 = time.perf_counter()
            Retriever._dense_hits(vectors[q.question], limit=20, model=settings["embedding_model"], cards=True)
            times.append((time.perf_counter() - t0) * 1000)
    print(f"{'cards':7s} p50 {statistics.median(times):6.1f} ms   p95 {pct(times, 95):6.1f} ms   "
          f"max {max(times):6.1f} ms   n={len(times)} (the card query alone, inside hybrid)")
env.cr.rollback()
