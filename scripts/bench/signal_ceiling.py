"""What more the retrieval signals could give: learning to rank, dense feedback, and a ceiling.

Runs inside ``odoo-bin shell`` on a database with e5 embeddings (``scripts/bench/run.sh ceiling DB``), on the
same candidate lists the retriever fuses (dense sections, full text, entry cards; ``pv.kb.retriever._candidates``).

1. **Learning to rank over entry features** (cross-validated on the tuning pool only, as
   ``tune_fusion.py``): a linear score of the features in :data:`FEATURES` per candidate entry, fitted by
   coordinate ascent on Recall@8 + MRR + hit@1 (``eval_protocol.objective``), started from the current recipe.
2. **Dense pseudo-relevance feedback** (Rocchio) on the tuning pool: the question vector plus ``beta`` times the
   mean of the first ``m`` dense sections, the dense candidates scored again, then fused by the current recipe.
3. **Ceiling** (``BENCH_CEILING=1``): the same linear score fitted on each held-out set (``BENCH_HELDOUT``)
   *itself*. This is an upper-bound estimate of what any weighting of these features reaches there, never a
   result and never a choice; the script prints it last, labelled so.
"""
import os
import pathlib
import random

import numpy as np

from odoo.addons.pv_kb.lib.evaluation import (
    protocol as eval_protocol,
    metrics as evaluation,
    goldset as goldset_format,
)
from odoo.addons.pv_kb.lib.search import fusion, ranking
from odoo.addons.pv_kb.lib.text import german as text_de

env = env  # noqa: F821
DATA = os.path.join(os.path.dirname(evaluation.__file__), "..", "..", "data", "demo_kb")
goldsets = [goldset_format.read_goldset(pathlib.Path(p)) for p in (os.environ.get("BENCH_GOLDSET") or ":".join(
    os.path.join(DATA, name) for name in ("goldset.yaml", "goldset_abstimmung.yaml"))).split(":") if p]
tuning = [q for g in goldsets for q in eval_protocol.tuning_part(g) if q.expected_ids]
heldout = [(g.name, [q for q in eval_protocol.split_goldset(g.questions, g.meta).test if q.expected_ids])
           for g in map(lambda p: goldset_format.read_goldset(pathlib.Path(p)), filter(None, os.environ.get("BENCH_HELDOUT", "").split(":")))]
overrides = {"ollama_url": os.environ["STANDIN_URL"], "embedding_model": "multilingual-e5-small",
             "query_prefix": "query: ", "passage_prefix": "passage: "}
R = env["pv.kb.retriever"]
settings = env["pv.kb.settings"]._get(overrides)
env["pv.kb.chunk"]._embed_pending(settings=settings)
env.cr.commit()

FEATURES = ("d1", "d2", "f1", "f2", "f1v", "c1", "dr", "fr", "cr", "title", "dnc", "fnc", "draw", "craw")
# the current recipe in these terms: best and further chunks (decay 0.4), full text 1.5 (1.0 for value questions)
START = {"d1": 1.0, "d2": 0.4, "f1": 1.5, "f2": 0.6, "f1v": -0.5, "c1": 0.5}


def stems(text):
    return {text_de.light_stem(t) for t in text_de.content_words(text_de.tokens(text)) if len(t) > 2}


env.cr.execute("""
    SELECT e.kb_id, e.name, coalesce(e.topic, ''),
           (SELECT string_agg(t.name, ' ') FROM pv_kb_entry_tag_rel r JOIN pv_kb_tag t ON t.id = r.tag_id
             WHERE r.entry_id = e.id)
      FROM pv_kb_entry e WHERE e.active""")
ENTRY_STEMS = {kb_id: stems(f"{title} {topic} {tags or ''}") for kb_id, title, topic, tags in env.cr.fetchall()}


def minmax(hits):
    values = [h.score for h in hits]
    low, high = (min(values), max(values)) if values else (0, 0)
    return {h.chunk_id: 1.0 if high == low else (h.score - low) / (high - low) for h in hits}


def features(question, lists, value_question):
    """{entry id: {feature: value}} over every entry in the candidate lists."""
    out = {}
    for signal in ("dense", "fts", "card"):
        hits = lists.get(signal) or []
        norm = minmax(hits)
        for h in hits:
            f = out.setdefault(h.entry_id, dict.fromkeys(FEATURES, 0.0))
            v = norm[h.chunk_id]
            first, second, recip = {"dense": ("d1", "d2", "dr"), "fts": ("f1", "f2", "fr"),
                                    "card": ("c1", None, "cr")}[signal]
            if second and v > f[first]:
                f[second], f[first] = f[first], v
            elif second and v > f[second]:
                f[second] = v
            elif not second:
                f[first] = max(f[first], v)
            f[recip] = max(f[recip], 1 / (5 + h.rank))
            if signal == "dense":
                f["dnc"] += 0.1
                f["draw"] = max(f["draw"], h.score)
            elif signal == "fts":
                f["fnc"] += 0.1
            else:
                f["craw"] = max(f["craw"], h.score)
    words = stems(question)
    for entry_id, f in out.items():
        f["f1v"] = f["f1"] if value_question else 0.0
        f["title"] = len(words & ENTRY_STEMS.get(entry_id, set())) / max(len(words), 1)
    return out


def fetch(questions):
    cases = {}
    for q in questions:
        cand = R._candidates(q.question, "hybrid", None, settings, cards=True)
        light = R._entry_light({h.entry_id for hits in cand.lists.values() for h in hits})
        cases[q.id] = (cand.lists, cand.plan.is_value_question, features(q.question, cand.lists,
                                                                         cand.plan.is_value_question),
                       {kb_id: date for kb_id, (date, _refs) in light.items()})
    return cases


def linear(weights, cases, questions):
    ranked = {}
    for q in questions:
        feats = cases[q.id][2]
        score = {e: sum(w * f[k] for k, w in weights.items()) for e, f in feats.items()}
        ranked[q.id] = sorted(score, key=lambda e: (-score[e], e))
    return ranked


def objective(questions, ranked):
    return eval_protocol.objective(evaluation.retrieval_metrics([(q, ranked[q.id]) for q in questions])["overall"])


def ascend(questions, cases, weights=START, names=FEATURES, steps=(1.0, 0.5, 0.25, 0.1), rounds=4):
    """Coordinate ascent on the objective: each weight of ``names`` moved by each step while that helps."""
    weights = dict(weights)
    best = objective(questions, linear(weights, cases, questions))
    for _ in range(rounds):
        improved = False
        for name in names:
            for step in steps:
                for sign in (1, -1):
                    trial = dict(weights, **{name: round(weights.get(name, 0.0) + sign * step, 3)})
                    value = objective(questions, linear(trial, cases, questions))
                    if value > best + 1e-9:
                        weights, best, improved = trial, value, True
        if not improved:
            break
    return weights


def row(questions, ranked):
    o = evaluation.retrieval_metrics([(q, ranked[q.id]) for q in questions])["overall"]
    return f"n={o['n']:<3} R@8={o['recall@k']:.3f} MRR={o['mrr']:.3f} hit@1={o['hit@1']:.3f}"


def recipe_ranking(cases, questions, lists_of=None):
    return {q.id: [r.entry_id for r in fusion.rank_entries((lists_of or {}).get(q.id, cases[q.id][0]),
                                                            ranking.RECIPE, value_question=cases[q.id][1],
                                                            stand_dates=cases[q.id][3], top_n=None)]
            for q in questions}


cases = fetch(tuning)
print(f"Tuning pool: {len(tuning)} questions with expected ids; the current recipe: {row(tuning, recipe_ranking(cases, tuning))}")

print("\n== 1. Learning to rank, 5-fold cross-validated on the tuning pool")
folds = eval_protocol.folds(tuning, k=5)
for label, names in (("the recipe's six features", tuple(START)), (f"all {len(FEATURES)} features", FEATURES)):
    kept = {}
    for fold in folds:
        ids = {q.id for q in fold}
        train = [q for q in tuning if q.id not in ids]
        kept.update(linear(ascend(train, cases, names=names), cases, fold))
    print(f"  {label:26s} CV {row(tuning, kept)}")

print("\n== 2. Dense pseudo-relevance feedback on the tuning pool (fused by the current recipe)")
vectors = {}
ids = sorted({h.chunk_id for q in tuning for h in cases[q.id][0].get("dense", [])})
env.cr.execute("SELECT id, embedding::text FROM pv_kb_chunk WHERE id = ANY(%s)", [ids])
for chunk_id, text in env.cr.fetchall():
    vectors[chunk_id] = np.array(text.strip("[]").split(","), dtype=np.float32)
query_vectors = {q.id: np.array(R._query_vector(q.question, settings), dtype=np.float32) for q in tuning}
for beta in (0.2, 0.5, 1.0):
    for m in (1, 3, 5, 10):
        lists_of = {}
        for q in tuning:
            lists, hits = cases[q.id][0], cases[q.id][0].get("dense", [])
            if not hits:
                continue
            mat = np.array([vectors[h.chunk_id] for h in hits])
            mat /= np.linalg.norm(mat, axis=1, keepdims=True)
            qv = query_vectors[q.id] / np.linalg.norm(query_vectors[q.id]) + beta * mat[:m].mean(axis=0)
            scores = mat @ (qv / np.linalg.norm(qv))
            order = np.argsort(-scores, kind="stable")
            lists_of[q.id] = dict(lists, dense=fusion.ranked(
                (hits[i].chunk_id, hits[i].entry_id, hits[i].section_key, float(scores[i])) for i in order))
        print(f"  beta={beta:<4} m={m:<3} fused {row(tuning, recipe_ranking(cases, tuning, lists_of))}")

if os.environ.get("BENCH_CEILING"):
    print("\n== 3. CEILING: weights fitted on each held-out set itself (an upper-bound estimate, not a result)")
    random.seed(0)
    for name, questions in heldout:
        held = fetch(questions)
        within = sum(any(e in {h.entry_id for hits in held[q.id][0].values() for h in hits} for e in q.expected_ids)
                     for q in questions)
        w = ascend(questions, held, rounds=6)
        print(f"  {name}: recipe {row(questions, recipe_ranking(held, questions))}")
        print(f"  {name}: CEILING {row(questions, linear(w, held, questions))}; "
              f"an expected entry among the candidates: {within} of {len(questions)}")
env.cr.rollback()
