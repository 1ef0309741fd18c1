"""Health check of the whole base, timed, run in ``odoo-bin shell`` (changes rolled back).

    scripts/bench/run.sh health DB      (e.g. pv_kb_eval: 601 synthetic + the demo entries, e5 embeddings)

Runs the check five times in one process (the first opens the findings, the others update them) and
prints duration, the stages' timings and the process's peak memory after each run: memory must stay flat.
The gap grouping embeds the logged gap questions through the stand-in (real e5, cached).
"""
import json
import resource
import time

from odoo.addons.pv_kb.testing.standin import OllamaStandIn

env = env  # noqa: F821 - provided by `odoo-bin shell`


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


with OllamaStandIn(embed_models={"multilingual-e5-small": "e5"}, request_overhead_ms=0) as server:
    params = env["ir.config_parameter"].sudo()
    for key, value in {"ollama_url": server.url, "embedding_model": "multilingual-e5-small",
                       "query_prefix": "query: ", "passage_prefix": "passage: "}.items():
        params.set_param(f"pv_kb.{key}", value)
    env.cr.execute("SELECT count(*) FROM pv_kb_entry WHERE active")
    entries = env.cr.fetchone()[0]
    env.cr.execute("SELECT count(*), count(embedding) FROM pv_kb_chunk")
    chunks, embedded = env.cr.fetchone()
    print(f"base: {entries} entries, {chunks} chunks ({embedded} embedded); peak memory before {peak_mb():.0f} MB")
    Run = env["pv.kb.health.run"]
    for round_ in range(1, 6):
        started = time.perf_counter()
        run = Run._run_health_check(trigger="manual")
        wall = time.perf_counter() - started
        env.cr.execute("SELECT kind, count(*) FROM pv_kb_finding WHERE state = 'open' GROUP BY 1 ORDER BY 1")
        kinds = dict(env.cr.fetchall())
        print(f"run {round_}: {wall:.2f} s wall, {run.count_open} open ({run.count_opened} new, "
              f"{run.count_resolved} resolved), gap questions {run.count_gap_questions}; "
              f"stages ms {json.loads(run.timings)}; peak memory {peak_mb():.0f} MB")
    print("open findings by kind:", kinds)
env.cr.rollback()
