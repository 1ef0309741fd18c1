"""End-to-end latency of answers from the facts, run in ``odoo-bin shell``.

    scripts/bench/run.sh fact-answers [--distractors] [DB]
        (default: a fresh pv_kb_bench_facts with the demo base; --distractors: a fresh pv_kb_bench_facts_601 with
        the 601-entry synthetic base of the demo evaluation as well, seed 7, as TestDemoEval builds it)

Every question of the three demo gold sets is asked through the agent (retrieval with the stand-in's
multilingual-e5-small query embedding, the evidence gate, the fact lookup; the stand-in's chat model for the
others) after one warm-up question; reported: how many were answered from the facts and their latency
(median, p95, max), measured around ``pv.kb.agent._ask`` with the question log written and the turn made, and
where the time of a fact answer goes (median per stage). The base (import, embeddings) is committed so that a
second run on the same database measures at once; the questions are rolled back.

Environment: ``BENCH_DISTRACTORS`` (a synthetic base's folder, imported before the demo base when the database
is empty), ``BENCH_ROUNDS`` (the questions answered from the facts are asked that many times more, default 2),
``BENCH_EMBED_MS`` (every embedding request of the stand-in takes that long: a model server computing the query
embedding on a CPU), ``BENCH_COMPARE=1`` (every question's answer from the facts first compared with the answer
from the facts of the full search's entries, as before the facts came first).
"""
import collections
import functools
import os
import pathlib
import statistics
import time

from odoo.addons.pv_kb.lib.answer import fact_answer, gate as evidence_gate
from odoo.addons.pv_kb.lib.evaluation import goldset as goldset_format
from odoo.addons.pv_kb.lib.facts import lookup
from odoo.addons.pv_kb.models import pv_kb_fact
from odoo.addons.pv_kb.testing.standin import OllamaStandIn

env = env  # noqa: F821 - provided by `odoo-bin shell`
folder = os.path.join(os.path.dirname(goldset_format.__file__), "..", "..", "data", "demo_kb")
questions = []
for name in ("goldset.yaml", "goldset_abstimmung.yaml", "goldset_praxis.yaml"):
    questions += [q.question for q in goldset_format.load_goldset(pathlib.Path(folder) / name)]

# where the time goes: every stage of a question, summed per question (ms)
stage_ms = collections.defaultdict(float)


def timed(owner, name, label):
    original = getattr(owner, name, None)
    if original is None:        # a stage of another version of the pipeline
        return

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            stage_ms[label] += (time.perf_counter() - t0) * 1000

    setattr(owner, name, wrapper)


for model, method, label in [
        ("pv.kb.agent", "_gate_question", "personal-data gate, history"),
        ("pv.kb.agent", "_facts_first", "facts first (all)"),
        ("pv.kb.fact", "_shortlist", "  shortlist over the base"),
        ("pv.kb.retriever", "_retrieve_among", "  full text among the shortlist"),
        ("pv.kb.retriever", "_retrieve", "retrieval (all)"),
        ("pv.kb.retriever", "_query_vector", "  query embedding (stand-in)"),
        ("pv.kb.retriever", "_dense_lists", "  dense search"),
        ("pv.kb.retriever", "_fts_hits", "  full text"),
        ("pv.kb.retriever", "_entry_info", "  entry info"),
        ("pv.kb.retriever", "_chunk_rows", "  chunk rows"),
        ("pv.kb.fact", "_answer", "fact answer after retrieval (all)"),
        ("pv.kb.fact", "_base", "  cached facts (signature)"),
        ("pv.kb.fact", "_cached_facts", "  cached facts (signature)"),
        ("pv.kb.agent", "_log", "question log write"),
        ("pv.kb.query", "_turn", "turn (serialisation)")]:
    timed(type(env[model]), method, label)
timed(lookup, "parse_question", "  parse question")
timed(lookup, "find", "  fact match")
timed(pv_kb_fact, "compose", "  compose")
timed(evidence_gate, "decide", "evidence gate")
timed(fact_answer, "respond_with_facts", "respond")


def percentile(values, share):
    values = sorted(values)
    return values[max(0, min(len(values) - 1, round(share * len(values)) - 1))]


with OllamaStandIn(embed_models={"multilingual-e5-small": "e5"}, request_overhead_ms=0) as server:
    overrides = {"ollama_url": server.url, "embedding_model": "multilingual-e5-small", "chat_model": "standin-chat",
                 "query_prefix": "query: ", "passage_prefix": "passage: "}
    settings = env["pv.kb.settings"]._get(overrides)
    if not env["pv.kb.entry"].search_count([]):
        importer = env["pv.kb.importer"]
        if os.environ.get("BENCH_DISTRACTORS"):
            result = importer._run(importer._read_source(path=os.environ["BENCH_DISTRACTORS"]), source_name="synthetic")
            assert result.ok, result.report
        result = importer._run(importer._read_source(path=os.path.join(folder, "wissensbasis")), source_name="demo")
        assert result.ok, result.report
        for param, value in overrides.items():
            env["ir.config_parameter"].sudo().set_param(f"pv_kb.{param}", value)
        env["pv.kb.chunk"]._embed_pending()
        env.cr.commit()
    # a model server whose query embedding takes this long (e5 on this CPU: ~250 ms; docs/measurements.md)
    server.set_embed_timing(float(os.environ.get("BENCH_EMBED_MS") or 0))
    agent = env["pv.kb.agent"]
    agent._ask(questions[0], settings=settings)   # warm: the facts of the base are extracted once per process
    facts, others, profile, fact_questions = [], [], [], []

    def ask(question):
        stage_ms.clear()
        t0 = time.perf_counter()
        result = agent._ask(question, settings=settings)
        elapsed = (time.perf_counter() - t0) * 1000
        if result.from_facts:
            assert set(result.cited_ids) <= set(result.retrieved_ids), (question, result.cited_ids)
            facts.append(elapsed)
            profile.append(dict(stage_ms, total=elapsed))
        return result, elapsed

    for question in questions:
        result, elapsed = ask(question)
        if result.from_facts:
            fact_questions.append(question)
        else:
            others.append(elapsed)
    for _round in range(int(os.environ.get("BENCH_ROUNDS", "2"))):
        for question in fact_questions:
            ask(question)
    if os.environ.get("BENCH_COMPARE"):
        # the facts first against the facts of the full search's entries, question by question
        outcome = collections.Counter()
        for question in questions:
            prepared = agent._facts_first(agent._gate_question(question, settings=settings))
            first = prepared.fact_answer
            retrieval = env["pv.kb.retriever"]._retrieve(question, settings=settings, k=settings["top_k"])
            verdict = evidence_gate.decide(evidence_gate.Evidence.from_retrieval(retrieval),
                                           dense_floor=settings["gate_dense_floor"])
            full = None if verdict.refuse else env["pv.kb.fact"]._answer(question, retrieval.entry_ids)
            if first is None:
                outcome["no answer from the facts" if full is None else "the full search answers (fallback)"] += 1
            elif full is None:
                outcome["only the facts first answer"] += 1
                print("only the facts first answer:", question, "|", first.text, "| full search:", retrieval.entry_ids)
            elif first.text == full.text:
                outcome["the same answer"] += 1
            elif sorted(first.text.splitlines()) == sorted(full.text.splitlines()):
                outcome["the same lines, another order"] += 1
            else:
                outcome["another answer"] += 1
                print("another answer:", question, "|", first.text, "|", full.text)
        print("the facts first against the full search's facts:", dict(outcome))
facts.sort()
load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
print(f"entries: {env['pv.kb.entry'].search_count([])}; questions: {len(questions)}; answered from the facts: "
      f"{len(fact_questions)} ({len(facts)} timed answers); their latency end to end: median "
      f"{statistics.median(facts):.0f} ms, p95 {percentile(facts, 0.95):.0f} ms, max {facts[-1]:.0f} ms; other "
      f"answers (stand-in model): median {statistics.median(others):.0f} ms; load average {load}")
print("where the time of a fact answer goes (median per stage, ms):")
for label in sorted({k for row in profile for k in row}, key=lambda k: -statistics.median(r.get(k, 0) for r in profile)):
    print(f"  {label:32s} {statistics.median(r.get(label, 0.0) for r in profile):8.1f}")
env.cr.rollback()
