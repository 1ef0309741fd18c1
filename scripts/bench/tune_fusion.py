"""Choose how the retrieval lists are combined, honestly: cross-validated on the tuning part, reported held out.

Runs inside ``odoo-bin shell`` on a database with e5 embeddings (``scripts/bench/run.sh tune DB``).

* The gold sets (``BENCH_GOLDSET``, paths separated by ``:``; default the demo gold set and the tuning-only
  set ``goldset_abstimmung.yaml``) are split by ``lib/evaluation/protocol.py``; only their tuning parts, pooled, are
  used to choose anything. A gold set without a tuning part (``split: test``) is refused.
* The candidate lists (dense sections, full text, entry cards) are fetched once per question and full-text
  scoring (``ts_rank`` field weights and length normalisation, :data:`FTS_RANKS`); every recipe
  (``lib.fusion.Recipe``) is then computed in Python.
* For each family of recipes (weighted RRF, RRF with the card list, score-normalised convex combination with a
  weight per question type, full text as rescue only), each with every full-text scoring, and for every single
  knob of the chosen recipe, the k-fold cross-validated numbers on the tuning part (``BENCH_FOLDS``, default 5)
  say how the choice does on questions it was not made on.
* The recipe chosen on the whole tuning part is then reported on the test parts, next to dense and full text
  alone, overall and per kind, and on every further held-out gold set in ``BENCH_HELDOUT`` (paths separated by
  ``:``, e.g. ``data/demo_kb/goldset_praxis.yaml``), which are never used for choosing. ``BENCH_CHOOSE_ONLY=1``
  stops before those reports: the choice is made and written down before any held-out number is seen.
"""
import dataclasses
import itertools
import os
import pathlib

from odoo.addons.pv_kb.lib.evaluation import (
    protocol as eval_protocol,
    metrics as evaluation,
    goldset as goldset_format,
)
from odoo.addons.pv_kb.lib.search import fusion, ranking

env = env  # noqa: F821
DATA = os.path.join(os.path.dirname(evaluation.__file__), "..", "..", "data", "demo_kb")
goldsets = [goldset_format.read_goldset(pathlib.Path(p)) for p in (os.environ.get("BENCH_GOLDSET") or ":".join(
    os.path.join(DATA, name) for name in ("goldset.yaml", "goldset_abstimmung.yaml"))).split(":") if p]
tuning = [q for g in goldsets for q in eval_protocol.tuning_part(g)]   # refuses a gold set that is all test part
if len({q.id for q in tuning}) != len(tuning):
    raise SystemExit("question ids repeat across the tuning gold sets")
splits = [(g, eval_protocol.split_goldset(g.questions, g.meta)) for g in goldsets]
heldout_sets = [goldset_format.read_goldset(pathlib.Path(p)) for p in filter(None, os.environ.get("BENCH_HELDOUT", "").split(":"))]
k_folds = int(os.environ.get("BENCH_FOLDS", "5"))

overrides = {"ollama_url": os.environ["STANDIN_URL"], "embedding_model": "multilingual-e5-small",
             "query_prefix": "query: ", "passage_prefix": "passage: "}
R = env["pv.kb.retriever"]
settings = env["pv.kb.settings"]._get(overrides)
env["pv.kb.chunk"]._embed_pending(settings=settings)   # cards of a base made before them
env.cr.commit()


# full-text scoring: ts_rank's weights of the field classes (D text, C -, B heading, A id/title/tags/legal
# bases/topic) and its length normalisation; the first is the current one (lib/search/ranking.py)
FTS_RANKS = list(dict.fromkeys([(ranking.FTS_RANK_WEIGHTS, ranking.FTS_RANK_NORMALIZATION)] + [
    (w, n) for w in ((0.1, 0.2, 0.4, 1.0), (1.0, 1.0, 1.0, 1.0), (1.0, 1.0, 1.0, 0.5), (1.0, 1.0, 1.0, 0.25))
    for n in (1, 0)]))


def fetch(questions):
    """{full-text scoring: {question id: (lists, stand dates, value question)}}: the dense and card lists of the
    first fetch, the full-text list of each scoring."""
    cases = {v: {} for v in FTS_RANKS}
    for q in questions:
        for n, v in enumerate(FTS_RANKS):
            cand = R._candidates(q.question, "hybrid", None, settings, cards=True, fts_rank=v)
            if n:
                lists = dict(cases[FTS_RANKS[0]][q.id][0], fts=cand.lists.get("fts", []))
                cases[v][q.id] = (lists,) + cases[FTS_RANKS[0]][q.id][1:]
                continue
            info = R._entry_info({h.entry_id for hits in cand.lists.values() for h in hits})
            cases[v][q.id] = (cand.lists, {i: x["stand_date"] for i, x in info.items()}, cand.plan.is_value_question)
    return cases


def fts_label(v):
    return f"ts_rank{list(v[0])}/{v[1]}"


def rankings(setting, cases):
    """Ranked entry ids per question of a setting = (full-text scoring, recipe)."""
    v, recipe = setting
    return {qid: [r.entry_id for r in fusion.rank_entries(lists, recipe, value_question=value_q, stand_dates=dates)]
            for qid, (lists, dates, value_q) in cases[v].items()}


def label(setting):
    return f"{setting[1].label()} · {fts_label(setting[0])}"


def metrics(questions, ranked):
    return evaluation.retrieval_metrics([(q, ranked[q.id]) for q in questions], k=8)


def row(m):
    o = m["overall"]
    return f"n={o['n']:<3} R@8={o['recall@k']:.3f} MRR={o['mrr']:.3f} hit@1={o['hit@1']:.3f}"


every = list(tuning) + [q for _g, sp in splits for q in sp.test] + [q for g in heldout_sets for q in g.questions]
cases = fetch(list({q.id: q for q in every}.values()))
W = lambda **w: tuple((n, v) for n, v in w.items() if v)  # noqa: E731
current = dataclasses.replace(ranking.RECIPE, k=settings["rrf_k"])
dense_only = fusion.Recipe(weights=W(dense=1.0), depth=None)
fts_only = fusion.Recipe(weights=W(fts=1.0), depth=None)
families = {
    "rrf": [fusion.Recipe(k=k, weights=W(dense=1.0, fts=w), chunk_decay=d, depth=20)
            for k, w, d in itertools.product([10, 30, 60], [0.25, 0.5, 0.75, 1.0, 1.25, 1.5], [0.0, 0.4])],
    "rrf+card": [fusion.Recipe(k=k, weights=W(dense=1.0, fts=w, card=c), chunk_decay=0.4, depth=20)
                 for k, w, c in itertools.product([30, 60], [0.25, 0.5, 0.75], [0.5, 1.0, 1.5])],
    "convex": [fusion.Recipe(method="convex", weights=W(dense=1.0, fts=w, card=c),
                             value_weights=W(dense=1.0, fts=wv, card=c), chunk_decay=0.4, depth=depth)
               for w, wv, c, depth in itertools.product([0.5, 1.0, 1.5, 2.0, 3.0], [0.5, 1.0, 1.5, 2.0],
                                                        [0.0, 0.5, 1.0], [20, None])],
    "rescue": [fusion.Recipe(method="rescue", weights=W(dense=1.0, card=c), rescue_keep=keep, rescue_add=add,
                             chunk_decay=0.4, depth=20)
               for c, keep, add in itertools.product([0.0, 0.5, 1.0], [2, 3, 5], [1, 2, 3])],
}
# the current recipe heads the family of its kind (ties go to it); a grid recipe ranking alike is dropped
home = ("convex" if current.method == "convex" else "rescue" if current.method == "rescue"
        else "rrf+card" if dict(current.weights).get("card") else "rrf")
families = {name: [current] + [r for r in recipes if dataclasses.replace(r, k=current.k) != current]
            if name == home else recipes for name, recipes in families.items()}
# a setting is (full-text scoring, recipe); the current one is listed first (ties go to it)
families = {name: [(v, r) for r in recipes for v in FTS_RANKS] for name, recipes in families.items()}
now = (FTS_RANKS[0], current)
ranked = {st: rankings(st, cases) for settings_ in families.values() for st in settings_}
for st in [now] + [(v, r) for v in FTS_RANKS for r in (dense_only, fts_only)]:
    ranked.setdefault(st, rankings(st, cases))

print("Tuning gold sets: " + "; ".join(f"{g.name}: tuning part {len(sp.tuning)}, test part {len(sp.test)} "
                                       f"({sp.rule.describe()})" for g, sp in splits)
      + f"; {len(tuning)} tuning questions pooled; {k_folds}-fold cross-validation on them only")
print("\n== Families, cross-validated on the tuning part (choice made without the fold it is scored on)")
cv_by_family = {}
for name, settings_ in families.items():
    cv = eval_protocol.cross_validate(tuning, {st: ranked[st] for st in settings_}, k_folds=k_folds)
    cv_by_family[name] = cv
    print(f"{name:9s} CV {row(cv.metrics)}   chosen per fold: {len(set(cv.chosen))} different")
every_setting = {st: ranked[st] for settings_ in families.values() for st in settings_}
cv_all = eval_protocol.cross_validate(tuning, every_setting, k_folds=k_folds)
print(f"{'all':9s} CV {row(cv_all.metrics)}   (choosing family, knobs and full-text scoring together)")
for name, r in (("dense", dense_only), ("fts", fts_only), ("current", current)):
    print(f"{name:9s} on the tuning part, nothing chosen: {row(metrics(tuning, ranked[(FTS_RANKS[0], r)]))}")

best_family = max(cv_by_family, key=lambda n: eval_protocol.objective(cv_by_family[n].metrics["overall"]))
candidates = families[best_family]
chosen = max(candidates, key=lambda st: eval_protocol.objective(metrics(tuning, ranked[st])["overall"])
             - 1e-9 * candidates.index(st))
print(f"\nBest family by CV: {best_family}; chosen on the whole tuning part: {label(chosen)}")
print(f"  in-sample on the tuning part (optimistic): {row(metrics(tuning, ranked[chosen]))}")

print("\n== Each knob of the chosen setting, the others fixed: CV of choosing that knob alone")
knobs = {"k": [10, 30, 60], "chunk_decay": [0.0, 0.2, 0.4], "depth": [10, 20, None],
         "rescue_keep": [2, 3, 5], "rescue_add": [1, 2, 3]}
for name in dict(chosen[1].weights):
    knobs[f"weight:{name}"] = [0.0, 0.25, 0.5, 0.75, 1.0, 1.5]
knobs["fts_rank"] = FTS_RANKS
for knob, values in knobs.items():
    r0 = chosen[1]
    if knob.startswith("rescue") and r0.method != "rescue" or knob == "k" and r0.method == "convex":
        continue
    variants = []
    for v in values:
        if knob == "fts_rank":
            variants.append((fts_label(v), (v, r0)))
            continue
        if knob.startswith("weight:"):
            signal = knob.split(":", 1)[1]
            w = dict(r0.weights)
            w[signal] = v
            vw = dict(r0.value_weights) if r0.value_weights else None
            if vw is not None:
                vw[signal] = v if signal != "fts" else vw.get(signal, v)
            r = dataclasses.replace(r0, weights=W(**w), value_weights=W(**vw) if vw else None)
        else:
            r = dataclasses.replace(r0, **{knob: v})
        if not dict(r.weights):
            continue
        variants.append((v, (chosen[0], r)))
    for _, st in variants:
        ranked.setdefault(st, rankings(st, cases))
    cv = eval_protocol.cross_validate(tuning, {st: ranked[st] for _, st in variants}, k_folds=k_folds)
    picks = [next(v for v, st in variants if st == c) for c in cv.chosen]
    print(f"{knob:14s} CV {row(cv.metrics)}  values chosen per fold: {picks}")


def report(title, questions):
    print(f"\n== {title}: {len(questions)} questions, {sum(1 for q in questions if q.expected_ids)} with expected ids")
    results = {"hybrid (chosen)": metrics(questions, ranked[chosen]), "current": metrics(questions, ranked[now]),
               "dense": metrics(questions, ranked[(chosen[0], dense_only)]),
               "fts (chosen scoring)": metrics(questions, ranked[(chosen[0], fts_only)]),
               "fts (current scoring)": metrics(questions, ranked[(FTS_RANKS[0], fts_only)])}
    for name, m in results.items():
        print(f"  {name:22s} {row(m)}")
    kinds = sorted(results["dense"]["by_kind"])
    for kind in kinds:
        cells = "  ".join(f"{name.split()[0]}: {m['by_kind'][kind]['recall@k']:.2f}/{m['by_kind'][kind]['mrr']:.2f}/"
                          f"{m['by_kind'][kind]['hit@1']:.2f}" for name, m in list(results.items())[:4])
        print(f"    {kind:10s} n={results['dense']['by_kind'][kind]['n']:<3} (R@8/MRR/hit@1) {cells}")


if os.environ.get("BENCH_CHOOSE_ONLY"):      # choose first, look at held-out numbers in a second run
    splits, heldout_sets = [], []
for g, sp in splits:
    if sp.test:
        report(f"Test part of {g.name} (held out)", sp.test)
for g in heldout_sets:
    report(f"{g.name} (held out, never used for choosing)", eval_protocol.split_goldset(g.questions, g.meta).test)
env.cr.rollback()
