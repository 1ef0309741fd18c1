"""Grid over the fusion knobs on the demo gold set, run inside ``odoo-bin shell`` (DB with embeddings).

The candidate lists (dense, full text) are fetched once per question; every fusion variant is then
computed from them in Python, so the grid is cheap.  Used to choose the defaults in pv_kb_retriever.py.
"""
import itertools
import os

from odoo.addons.pv_kb.lib import evaluation, fusion

env = env  # noqa: F821
gold = evaluation.load_goldset(os.path.join(os.path.dirname(evaluation.__file__), "..", "data", "demo_kb",
                                            "goldset.yaml"))
R = env["pv.kb.retriever"]
overrides = {"ollama_url": os.environ["STANDIN_URL"], "embedding_model": "multilingual-e5-small",
             "query_prefix": "query: ", "passage_prefix": "passage: "}
R = R.with_context(pv_kb_overrides=overrides)
settings = env["pv.kb.settings"].with_context(pv_kb_overrides=overrides)._get()
cases = []
for q in gold:
    cand = R._candidates(q.question, "hybrid", None, settings)
    lists = cand.lists
    info = R._entry_info({h.entry_id for hits in lists.values() for h in hits})
    cases.append((q, lists, {i: v["stand_date"] for i, v in info.items()}, cand.plan.is_value_question))

rows = []
grid = itertools.product(["rrf", "convex"], [10, 30, 60], [0.2, 0.35, 0.5, 0.75, 1.0], [0.0, 0.2, 0.4],
                         [None, 20])
for method, k, w_fts, decay, depth in grid:
    if method == "convex" and k != 60:
        continue
    items = []
    for q, lists, dates, value_q in cases:
        res = fusion.fuse(lists, k=k, weights={"dense": 1.0, "fts": w_fts}, stand_dates=dates,
                          prefer_kernwerte=value_q, top_n=8, method=method, depth=depth, chunk_decay=decay)
        items.append((q, [r.entry_id for r in res]))
    m = evaluation.retrieval_metrics(items, k=8)["overall"]
    rows.append((m["recall@k"] + m["mrr"] + m["hit@1"], method, k, w_fts, decay, depth, m))
rows.sort(key=lambda r: -r[0])
for score, method, k, w, decay, depth, m in rows[:int(os.environ.get("TOP", "15"))]:
    print(f"{method:6s} k={k:<3} w_fts={w:<5} decay={decay:<4} depth={depth!s:<5} "
          f"R@8={m['recall@k']:.3f} MRR={m['mrr']:.3f} hit@1={m['hit@1']:.3f}")
for single in ("dense", "fts"):
    items = [(q, [r.entry_id for r in fusion.fuse({single: lists[single]}, top_n=8)]) for q, lists, _d, _v in cases]
    m = evaluation.retrieval_metrics(items, k=8)["overall"]
    print(f"{single}-only R@8={m['recall@k']:.3f} MRR={m['mrr']:.3f} hit@1={m['hit@1']:.3f}")
env.cr.rollback()
