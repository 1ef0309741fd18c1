"""Choose how the retrieval lists are combined, honestly: cross-validated on the tuning part, reported held out.

Runs inside ``odoo-bin shell`` on a database with e5 embeddings (``scripts/bench/run.sh tune DB``).

* The gold set (``BENCH_GOLDSET``, default the demo gold set) is split by ``lib/eval_protocol.py``; only its
  tuning part is used to choose anything. A gold set without a tuning part (``split: test``) is refused.
* The candidate lists (dense sections, full text, entry cards) are fetched once per question; every recipe
  (``lib.fusion.Recipe``) is then computed in Python.
* For each family of recipes (weighted RRF, RRF with the card list, score-normalised convex combination with a
  weight per question type, full text as rescue only) and for every single knob of the chosen recipe, the
  k-fold cross-validated numbers on the tuning part (``BENCH_FOLDS``, default 5) say how the choice does on
  questions it was not made on.
* The recipe chosen on the whole tuning part is then reported on the test part, next to dense and full text
  alone, overall and per kind, and on every further held-out gold set in ``BENCH_HELDOUT`` (paths separated by
  ``:``, e.g. ``data/demo_kb/goldset_praxis.yaml``), which are never used for choosing.
"""
import dataclasses
import itertools
import os

from odoo.addons.pv_kb.lib import eval_protocol, evaluation, fusion, goldset_format, ranking

env = env  # noqa: F821
DATA = os.path.join(os.path.dirname(evaluation.__file__), "..", "data", "demo_kb")
goldset = goldset_format.read_goldset(os.environ.get("BENCH_GOLDSET") or os.path.join(DATA, "goldset.yaml"))
tuning = eval_protocol.tuning_part(goldset)          # refuses a gold set that is all test part
split = eval_protocol.split_goldset(goldset.questions, goldset.meta)
heldout_sets = [goldset_format.read_goldset(p) for p in filter(None, os.environ.get("BENCH_HELDOUT", "").split(":"))]
k_folds = int(os.environ.get("BENCH_FOLDS", "5"))

overrides = {"ollama_url": os.environ["STANDIN_URL"], "embedding_model": "multilingual-e5-small",
             "query_prefix": "query: ", "passage_prefix": "passage: "}
R = env["pv.kb.retriever"]
settings = env["pv.kb.settings"]._get(overrides)
env["pv.kb.chunk"]._embed_pending(settings=settings)   # cards of a base made before them
env.cr.commit()


def fetch(questions):
    cases = {}
    for q in questions:
        cand = R._candidates(q.question, "hybrid", None, settings, cards=True)
        info = R._entry_info({h.entry_id for hits in cand.lists.values() for h in hits})
        cases[q.id] = (cand.lists, {i: v["stand_date"] for i, v in info.items()}, cand.plan.is_value_question)
    return cases


def rankings(recipe, cases):
    return {qid: [r.entry_id for r in fusion.rank_entries(lists, recipe, value_question=value_q, stand_dates=dates)]
            for qid, (lists, dates, value_q) in cases.items()}


def metrics(questions, ranked):
    return evaluation.retrieval_metrics([(q, ranked[q.id]) for q in questions], k=8)


def row(m):
    o = m["overall"]
    return f"n={o['n']:<3} R@8={o['recall@k']:.3f} MRR={o['mrr']:.3f} hit@1={o['hit@1']:.3f}"


every = list(tuning) + list(split.test) + [q for g in heldout_sets for q in g.questions]
cases = fetch(list({q.id: q for q in every}.values()))
W = lambda **w: tuple((n, v) for n, v in w.items() if v)  # noqa: E731
current = dataclasses.replace(ranking.RECIPE, k=settings["rrf_k"])
dense_only = fusion.Recipe(weights=W(dense=1.0), depth=None)
fts_only = fusion.Recipe(weights=W(fts=1.0), depth=None)
families = {
    "rrf": [fusion.Recipe(k=k, weights=W(dense=1.0, fts=w), chunk_decay=d, depth=20)
            for k, w, d in itertools.product([10, 30, 60], [0.25, 0.5, 0.75, 1.0], [0.0, 0.4])],
    "rrf+card": [fusion.Recipe(k=k, weights=W(dense=1.0, fts=w, card=c), chunk_decay=0.4, depth=20)
                 for k, w, c in itertools.product([30, 60], [0.25, 0.5, 0.75], [0.5, 1.0, 1.5])],
    "convex": [fusion.Recipe(method="convex", weights=W(dense=1.0, fts=w, card=c),
                             value_weights=W(dense=1.0, fts=wv, card=c), chunk_decay=0.4, depth=20)
               for w, wv, c in itertools.product([0.1, 0.25, 0.5], [0.1, 0.25, 0.5, 0.75], [0.0, 0.5])],
    "rescue": [fusion.Recipe(method="rescue", weights=W(dense=1.0, card=c), rescue_keep=keep, rescue_add=add,
                             chunk_decay=0.4, depth=20)
               for c, keep, add in itertools.product([0.0, 0.5, 1.0], [2, 3, 5], [1, 2, 3])],
}
families = {name: [current] + [r for r in recipes if r != current] if name == "rrf" else recipes
            for name, recipes in families.items()}
ranked = {r: rankings(r, cases) for recipes in families.values() for r in recipes}
for r in (current, dense_only, fts_only):
    ranked.setdefault(r, rankings(r, cases))

print(f"Gold set {goldset.name}: tuning part {len(tuning)} questions, test part {len(split.test)} "
      f"({split.rule.describe()}); {k_folds}-fold cross-validation on the tuning part only")
print("\n== Families, cross-validated on the tuning part (choice made without the fold it is scored on)")
cv_by_family = {}
for name, recipes in families.items():
    cv = eval_protocol.cross_validate(tuning, {r: ranked[r] for r in recipes}, k_folds=k_folds)
    cv_by_family[name] = cv
    print(f"{name:9s} CV {row(cv.metrics)}   chosen per fold: {len(set(cv.chosen))} different")
every_recipe = {r: ranked[r] for recipes in families.values() for r in recipes}
cv_all = eval_protocol.cross_validate(tuning, every_recipe, k_folds=k_folds)
print(f"{'all':9s} CV {row(cv_all.metrics)}   (choosing family and knobs together)")
for name, r in (("dense", dense_only), ("fts", fts_only), ("current", current)):
    print(f"{name:9s} on the tuning part, nothing chosen: {row(metrics(tuning, ranked[r]))}")

best_family = max(cv_by_family, key=lambda n: eval_protocol.objective(cv_by_family[n].metrics["overall"]))
candidates = families[best_family]
chosen = max(candidates, key=lambda r: eval_protocol.objective(metrics(tuning, ranked[r])["overall"]) - 1e-9 * candidates.index(r))
print(f"\nBest family by CV: {best_family}; recipe chosen on the whole tuning part: {chosen.label()}")
print(f"  in-sample on the tuning part (optimistic): {row(metrics(tuning, ranked[chosen]))}")

print("\n== Each knob of the chosen recipe, the others fixed: CV of choosing that knob alone")
knobs = {"k": [10, 30, 60], "chunk_decay": [0.0, 0.2, 0.4], "depth": [10, 20, None],
         "rescue_keep": [2, 3, 5], "rescue_add": [1, 2, 3]}
for name in dict(chosen.weights):
    knobs[f"weight:{name}"] = [0.0, 0.25, 0.5, 0.75, 1.0, 1.5]
for knob, values in knobs.items():
    if knob.startswith("rescue") and chosen.method != "rescue" or knob == "k" and chosen.method == "convex":
        continue
    variants = []
    for v in values:
        if knob.startswith("weight:"):
            signal = knob.split(":", 1)[1]
            w = dict(chosen.weights)
            w[signal] = v
            vw = dict(chosen.value_weights) if chosen.value_weights else None
            if vw is not None:
                vw[signal] = v if signal != "fts" else vw.get(signal, v)
            r = dataclasses.replace(chosen, weights=W(**w), value_weights=W(**vw) if vw else None)
        else:
            r = dataclasses.replace(chosen, **{knob: v})
        if not dict(r.weights):
            continue
        variants.append((v, r))
    for _, r in variants:
        ranked.setdefault(r, rankings(r, cases))
    cv = eval_protocol.cross_validate(tuning, {r: ranked[r] for _, r in variants}, k_folds=k_folds)
    picks = [next(v for v, r in variants if r == c) for c in cv.chosen]
    print(f"{knob:14s} CV {row(cv.metrics)}  values chosen per fold: {picks}")


def report(label, questions):
    print(f"\n== {label}: {len(questions)} questions, {sum(1 for q in questions if q.expected_ids)} with expected ids")
    results = {"hybrid (chosen)": metrics(questions, ranked[chosen]), "current": metrics(questions, ranked[current]),
               "dense": metrics(questions, ranked[dense_only]), "fts": metrics(questions, ranked[fts_only])}
    for name, m in results.items():
        print(f"  {name:16s} {row(m)}")
    kinds = sorted(results["dense"]["by_kind"])
    for kind in kinds:
        cells = "  ".join(f"{name.split()[0]}: {m['by_kind'][kind]['recall@k']:.2f}/{m['by_kind'][kind]['mrr']:.2f}/"
                          f"{m['by_kind'][kind]['hit@1']:.2f}" for name, m in results.items())
        print(f"    {kind:10s} n={results['dense']['by_kind'][kind]['n']:<3} (R@8/MRR/hit@1) {cells}")


report(f"Test part of {goldset.name} (held out)", split.test)
for g in heldout_sets:
    report(f"{g.name} (held out, never used for choosing)", eval_protocol.split_goldset(g.questions, g.meta).test)
env.cr.rollback()
