"""Health check of the whole base, timed, run in ``odoo-bin shell`` (changes rolled back).

    scripts/bench/run.sh health DB      (e.g. pv_kb_eval: 601 synthetic + the demo entries, e5 embeddings)
    BENCH_GAP_QUESTIONS=20000 BENCH_EMBED=hash scripts/bench/run.sh health

Runs the check five times in one process (the first opens the findings, the others update them) and
prints duration, the stages' timings and the process's peak memory after each run: memory must stay flat.
The gap grouping embeds the logged gap questions through the stand-in (real e5, cached; ``BENCH_EMBED=hash``:
the stand-in's hash embedder, which costs next to nothing, so the numbers are the addon's own work).
``BENCH_GAP_QUESTIONS=N`` first logs N refused questions (spread over the last 120 days, a scripted flood
of random word mixes), as one user asking for weeks would: the run must stay bounded (window and cap,
vectors stored once: the first run embeds at most the cap, the later ones nothing new).
"""
import json
import os
import random
import resource
import time

from odoo.addons.pv_kb.testing.standin import OllamaStandIn

env = env  # noqa: F821 - provided by `odoo-bin shell`


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def log_gap_questions(count):
    """``count`` refused questions of the admin, oldest first, over the last 120 days (plain SQL: fast)."""
    words = ("Urlaub Abfertigung Sachbezug Dienstwagen Überstunden Zulage Pendlerpauschale Kinderbetreuung "
             "Krankenstand Altersteilzeit Sonderzahlung Homeoffice Reisekosten Diäten Kündigungsfrist Lehrling "
             "Mutterschutz Karenz Bildungskarenz Kollektivvertrag Betriebsrat Prämie Provision Trinkgeld").split()
    rng = random.Random(7)
    rows = []
    for n in range(count):
        question = f"Wie wird {' und '.join(rng.sample(words, 3))} im Fall {n} abgerechnet?"
        rows.append((question, n))
    env.cr.execute("SELECT id FROM res_users WHERE login = 'admin'")
    uid = env.cr.fetchone()[0]
    for start in range(0, len(rows), 2000):
        part = rows[start:start + 2000]
        env.cr.execute(
            "INSERT INTO pv_kb_query (question, status, user_id, is_gap, create_uid, write_uid, create_date, write_date) "
            "SELECT q, 'verweigert', %s, true, %s, %s, now() AT TIME ZONE 'UTC' - make_interval(secs => (%s - n) * %s), "
            "now() AT TIME ZONE 'UTC' FROM unnest(%s::text[], %s::int[]) AS t(q, n)",
            [uid, uid, uid, count, 120 * 86400 / max(count, 1), [q for q, _ in part], [n for _, n in part]])


gap_questions = int(os.environ.get("BENCH_GAP_QUESTIONS", "0"))
backend = os.environ.get("BENCH_EMBED", "e5")
model = "multilingual-e5-small" if backend == "e5" else "bench-hash"
with OllamaStandIn(embed_models={model: "e5" if backend == "e5" else "hash:384"}, request_overhead_ms=0) as server:
    params = env["ir.config_parameter"].sudo()
    for key, value in {"ollama_url": server.url, "embedding_model": model,
                       "query_prefix": "query: ", "passage_prefix": "passage: "}.items():
        params.set_param(f"pv_kb.{key}", value)
    if gap_questions:
        log_gap_questions(gap_questions)
        env.cr.execute("SELECT count(*) FROM pv_kb_query WHERE is_gap")
        print(f"gap questions in the log: {env.cr.fetchone()[0]}")
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
              f"{run.count_resolved} resolved), gap questions {run.count_gap_questions} "
              f"(texts embedded so far {sum(r.get('n_inputs') or 0 for r in server.requests_log if r.get('path') == '/api/embed')}); "
              f"stages ms {json.loads(run.timings)}; peak memory {peak_mb():.0f} MB")
    print("open findings by kind:", kinds)
env.cr.rollback()
