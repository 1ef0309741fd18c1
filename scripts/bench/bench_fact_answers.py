"""End-to-end latency of answers from the facts, run in ``odoo-bin shell`` (rolled back).

    scripts/bench/run.sh fact-answers [DB]     (default: a fresh pv_kb_bench_facts with the demo base)

Every question of the three demo gold sets is asked through the agent (retrieval with the stand-in's
multilingual-e5-small query embedding, the evidence gate, the fact lookup; the stand-in's chat model for the
others) after one warm-up question; reported: how many were answered from the facts and their latency
(median, p95, max), measured around ``pv.kb.agent._ask`` with the question log written.
"""
import os
import pathlib
import statistics
import time

from odoo.addons.pv_kb.lib.evaluation import goldset as goldset_format
from odoo.addons.pv_kb.testing.standin import OllamaStandIn

env = env  # noqa: F821 - provided by `odoo-bin shell`
folder = os.path.join(os.path.dirname(goldset_format.__file__), "..", "..", "data", "demo_kb")
questions = []
for name in ("goldset.yaml", "goldset_abstimmung.yaml", "goldset_praxis.yaml"):
    questions += [q.question for q in goldset_format.load_goldset(pathlib.Path(folder) / name)]
with OllamaStandIn(embed_models={"multilingual-e5-small": "e5"}, request_overhead_ms=0) as server:
    overrides = {"ollama_url": server.url, "embedding_model": "multilingual-e5-small", "chat_model": "standin-chat",
                 "query_prefix": "query: ", "passage_prefix": "passage: "}
    settings = env["pv.kb.settings"]._get(overrides)
    if not env["pv.kb.entry"].search_count([]):
        importer = env["pv.kb.importer"]
        importer._run(importer._read_source(path=os.path.join(folder, "wissensbasis")), source_name="demo")
    for param, value in overrides.items():
        env["ir.config_parameter"].sudo().set_param(f"pv_kb.{param}", value)
    env["pv.kb.chunk"]._embed_pending()
    agent = env["pv.kb.agent"]
    agent._ask(questions[0], settings=settings)   # warm: the facts of the base are extracted once per process
    facts, others = [], []
    for question in questions:
        t0 = time.perf_counter()
        result = agent._ask(question, settings=settings)
        (facts if result.from_facts else others).append((time.perf_counter() - t0) * 1000)
facts.sort()
print(f"entries: {env['pv.kb.entry'].search_count([])}; questions: {len(questions)}; answered from the facts: "
      f"{len(facts)}; their latency end to end: median {statistics.median(facts):.0f} ms, "
      f"p95 {facts[int(0.95 * len(facts)) - 1]:.0f} ms, max {facts[-1]:.0f} ms; other answers (stand-in model): "
      f"median {statistics.median(others):.0f} ms")
env.cr.rollback()
