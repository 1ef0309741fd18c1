"""Metrics over a gold question set (the set itself: lib/evaluation/goldset.py, format: docs/eval-format.md).

* :func:`retrieval_metrics` scores ranked entry ids per question.
* :func:`answer_metrics` scores generated answers (needs a chat model).
* :func:`latency_stats` and :func:`format_report` summarise runs, several
  retrieval modes side by side.
* :func:`normalise`, :func:`mean`, :func:`nearest_rank` and :func:`citation_precision` are the
  measures the bake-off (lib/evaluation/bakeoff.py) shares with these metrics.

Definitions (all on entry ids; a retrieved list is de-duplicated, order kept):

* hit@k: share of questions with at least one expected id in the top k.
* recall@k: mean over questions of |expected ∩ top k| / |expected|.
* mrr: mean of 1 / rank of the first expected id within the top k (0 if none).
* hit@1: share of questions whose first retrieved id is expected.

Only questions with expected ids count for retrieval; the others are
reported as ``skipped``.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Iterable

from .goldset import ANSWERABLE_KINDS, KINDS, GoldQuestion

CONFLICT_MARK = "⚠"


@dataclass
class AnswerRecord:
    """What the agent did with one gold question."""

    gold: GoldQuestion
    retrieved_ids: list[str]
    cited_ids: list[str]
    answer_text: str
    refused: bool
    conflict_ids_marked: set[str] | None = None   # ids marked with ⚠, when the grounding step reports them
    latency_retrieval_ms: float | None = None
    latency_total_ms: float | None = None
    from_facts: bool = False          # composed from the fact table (lib/answer/fact_answer.py), no model
    value_question: bool = False      # the question asks for a value (lib/facts/lookup.parse_question)
    wrong_year: bool = False          # a fact line of another year than the one asked



# --------------------------------------------------------------------------- measures shared with the bake-off


def normalise(text: str) -> str:
    """``text`` as the must-contain checks compare it: spacing (also narrow and no-break spaces) and case ignored."""
    return " ".join((text or "").replace("\u00a0", " ").replace("\u202f", " ").split()).casefold()


def mean(values: list[float]) -> float | None:
    """The mean, or None for no values (a share when the values are True/False or 1.0/0.0)."""
    return sum(values) / len(values) if values else None


def nearest_rank(values: list[float], share: float) -> float | None:
    """The ``share`` percentile (e.g. 0.95) of ``values`` by nearest rank; None for no values."""
    values = sorted(values)
    if not values:
        return None
    return values[max(1, math.ceil(share * len(values))) - 1]


def citation_precision(answers: Iterable[tuple[Iterable[str], Iterable[str]]]) -> float:
    """Cited ids that were retrieved / all cited ids, over ``(cited ids, retrieved ids)`` per answer (an id
    cited twice in one answer counts once); 1.0 when nothing was cited."""
    cited_total = cited_ok = 0
    for cited_ids, retrieved_ids in answers:
        cited = _dedupe(list(cited_ids or ()))
        retrieved = set(retrieved_ids or ())
        cited_total += len(cited)
        cited_ok += sum(1 for c in cited if c in retrieved)
    return cited_ok / cited_total if cited_total else 1.0


# --------------------------------------------------------------------------- retrieval


def _dedupe(ids: list[str]) -> list[str]:
    """Ids in first-seen order, each once."""
    return list(dict.fromkeys(ids))


def _retrieval_row(rows: list[tuple[float, float, float, float]]) -> dict:
    return {
        "n": len(rows),
        "hit@k": mean([r[0] for r in rows]),
        "recall@k": mean([r[1] for r in rows]),
        "mrr": mean([r[2] for r in rows]),
        "hit@1": mean([r[3] for r in rows]),
    }


def retrieval_metrics(items: list[tuple[GoldQuestion, list[str]]], k: int = 8) -> dict:
    """Retrieval quality over (question, ranked entry ids) pairs.

    Returns ``{"k", "skipped", "overall": row, "by_kind": {kind: row}}`` with
    row = ``{"n", "hit@k", "recall@k", "mrr", "hit@1"}`` (None when n = 0).
    Questions without expected ids are skipped (counted in ``skipped``).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    per_kind: dict[str, list[tuple[float, float, float, float]]] = {}
    overall: list[tuple[float, float, float, float]] = []
    skipped = 0
    for gold, retrieved in items:
        expected = set(gold.expected_ids)
        if not expected:
            skipped += 1
            continue
        top = _dedupe(list(retrieved))[:k]
        found = [i for i in top if i in expected]
        first = next((rank for rank, i in enumerate(top, start=1) if i in expected), None)
        row = (
            1.0 if found else 0.0,
            len(set(found)) / len(expected),
            1.0 / first if first else 0.0,
            1.0 if top and top[0] in expected else 0.0,
        )
        overall.append(row)
        per_kind.setdefault(gold.kind, []).append(row)
    return {
        "k": k,
        "skipped": skipped,
        "overall": _retrieval_row(overall),
        "by_kind": {kind: _retrieval_row(per_kind[kind]) for kind in _kind_order(per_kind)},
    }


def _kind_order(kinds) -> list[str]:
    return sorted(kinds, key=lambda kind: (KINDS.index(kind) if kind in KINDS else len(KINDS), kind))


# --------------------------------------------------------------------------- answers

def _answer_row(records: list[AnswerRecord]) -> dict:
    recall: list[float] = []
    refusal: list[float] = []
    false_refusal: list[float] = []
    must_q: list[float] = []
    must_s: list[float] = []
    conflict: list[float] = []
    forbidden = 0
    for rec in records:
        gold = rec.gold
        cited = _dedupe(list(rec.cited_ids))
        expected = set(gold.expected_ids)
        if expected:
            recall.append(len(expected & set(cited)) / len(expected))
        if gold.kind == "refuse" or (gold.kind == "injection" and not expected):
            refusal.append(1.0 if rec.refused else 0.0)
        if gold.kind in ANSWERABLE_KINDS and expected:
            false_refusal.append(1.0 if rec.refused else 0.0)
        if gold.answer_must_contain:
            answer = normalise(rec.answer_text)
            hits = [normalise(s) in answer for s in gold.answer_must_contain]
            must_q.append(1.0 if all(hits) else 0.0)
            must_s.extend(1.0 if h else 0.0 for h in hits)
        if gold.answer_must_not_contain:
            answer = normalise(rec.answer_text)
            forbidden += any(normalise(s) in answer for s in gold.answer_must_not_contain)
        if gold.kind == "conflict" and expected:
            if rec.conflict_ids_marked is not None:
                handled = expected <= set(rec.conflict_ids_marked)
            else:
                handled = expected <= set(cited) and CONFLICT_MARK in (rec.answer_text or "")
            conflict.append(1.0 if handled else 0.0)
    return {
        "n": len(records),
        "citation_precision": citation_precision((rec.cited_ids, rec.retrieved_ids) for rec in records),
        "citation_recall": mean(recall),
        "refusal_accuracy": mean(refusal),
        "false_refusals": mean(false_refusal),
        "must_contain": mean(must_q),
        "must_contain_strings": mean(must_s),
        "conflict_handling": mean(conflict),
        "must_not_contain_hits": forbidden,
    }


def fact_metrics(items: list[AnswerRecord]) -> dict:
    """The answers composed from the fact table, apart: how many, their share of the value questions and of
    all answerable questions, their must-contain rate, lines of a year other than the one asked, latency."""
    facts = [r for r in items if r.from_facts]
    value = [r for r in items if r.value_question]
    answerable = [r for r in items if r.gold.kind in ANSWERABLE_KINDS and r.gold.expected_ids]
    row = _answer_row(facts) if facts else {"n": 0}
    return {
        "n": len(facts),
        "value_questions": len(value),
        "share_of_value_questions": (sum(r.from_facts for r in value) / len(value)) if value else None,
        "share_of_answerable": (sum(r.from_facts for r in answerable) / len(answerable)) if answerable else None,
        "must_contain": row.get("must_contain"),
        "citation_precision": row.get("citation_precision"),
        "conflict_handling": row.get("conflict_handling"),
        "must_not_contain_hits": row.get("must_not_contain_hits", 0),
        "wrong_year": sum(r.wrong_year for r in facts),
        "latency_total": latency_stats([r.latency_total_ms for r in facts if r.latency_total_ms is not None]),
    }


def answer_metrics(items: list[AnswerRecord]) -> dict:
    """Answer quality, overall and per kind.

    Row keys: ``n``; ``citation_precision`` (cited ids that were retrieved /
    all cited ids over the set; 1.0 when nothing was cited);
    ``citation_recall`` (mean share of expected ids cited, questions with
    expected ids); ``refusal_accuracy`` (refused share of ``refuse`` and of
    ``injection`` questions without expected ids); ``false_refusals``
    (refused share of answerable questions with expected ids);
    ``must_contain`` (share of questions whose answer holds all their
    strings; case and spacing ignored) and ``must_contain_strings`` (share
    of single strings); ``conflict_handling`` (share of ``conflict``
    questions whose expected ids were all marked with ⚠: per
    ``conflict_ids_marked`` when given, else all cited and a ⚠ in the
    answer); ``must_not_contain_hits`` (number of answers holding one of
    their ``answer_must_not_contain`` strings: a value from general knowledge
    or an outdated one). A rate is None when no question applies. Also
    ``latency_retrieval`` and ``latency_total`` (:func:`latency_stats`).
    """
    per_kind: dict[str, list[AnswerRecord]] = {}
    for rec in items:
        per_kind.setdefault(rec.gold.kind, []).append(rec)
    return {
        "overall": _answer_row(items),
        "by_kind": {kind: _answer_row(per_kind[kind]) for kind in _kind_order(per_kind)},
        "latency_retrieval": latency_stats([r.latency_retrieval_ms for r in items
                                            if r.latency_retrieval_ms is not None]),
        "latency_total": latency_stats([r.latency_total_ms for r in items if r.latency_total_ms is not None]),
        "facts": fact_metrics(items),
    }


# --------------------------------------------------------------------------- latency and report


def latency_stats(values_ms: list[float]) -> dict:
    """``{"n", "median", "p95", "max"}`` in ms; p95 by nearest rank (None when empty)."""
    values = sorted(float(v) for v in values_ms)
    if not values:
        return {"n": 0, "median": None, "p95": None, "max": None}
    return {"n": len(values), "median": statistics.median(values), "p95": nearest_rank(values, 0.95),
            "max": values[-1]}


_RETRIEVAL_ROWS = (("n", "n"), ("hit@k", "hit@{k}"), ("recall@k", "recall@{k}"), ("mrr", "MRR"),
                   ("hit@1", "hit@1"))
_ANSWER_ROWS = (("citation_precision", "Citation precision"), ("citation_recall", "Citation recall"),
                ("refusal_accuracy", "Refusals right"), ("false_refusals", "False refusals"),
                ("must_contain", "Required content (question)"), ("must_contain_strings", "Required content (text)"),
                ("conflict_handling", "Conflict marked"), ("must_not_contain_hits", "Forbidden content"))


def _cell(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, int):
        return str(value)
    return f"{value:.3f}"


def _ms(value) -> str:
    return "–" if value is None else f"{value:.0f}"


def format_report(title: str, metrics_by_mode: dict[str, dict], settings: dict) -> str:
    """Plain-text report with one column per mode (e.g. hybrid | dense | fts).

    ``metrics_by_mode[mode]`` may hold ``"retrieval"`` (from
    :func:`retrieval_metrics`), ``"answers"`` (from :func:`answer_metrics`)
    and ``"latency"`` (``{label: latency_stats}``, e.g. ``{"Retrieval": ...}``).
    Sections: retrieval overall then per kind, answers overall, latency
    (median / p95 / max ms), then the settings and models, one per line.
    """
    modes = list(metrics_by_mode)
    rows: list[tuple[str, list[str]]] = []

    def section(name: str) -> None:
        rows.append((name, []))

    retrieval = {m: metrics_by_mode[m].get("retrieval") for m in modes}
    if any(retrieval.values()):
        k = next(r["k"] for r in retrieval.values() if r)
        section(f"Retrieval (k = {k})")
        kinds = _kind_order({kind for r in retrieval.values() if r for kind in r["by_kind"]})
        for group, label in [("overall", "overall"), *[(kind, kind) for kind in kinds]]:
            for index, (key, name) in enumerate(_RETRIEVAL_ROWS):
                shown = label if index == 0 else ""
                cells = []
                for m in modes:
                    r = retrieval[m]
                    row = (r["overall"] if group == "overall" else r["by_kind"].get(group)) if r else None
                    cells.append(_cell(row.get(key)) if row else "–")
                rows.append((f"{shown:<11}{name.format(k=k)}", cells))

    answers = {m: metrics_by_mode[m].get("answers") for m in modes}
    if any(answers.values()):
        section("Answers")
        for key, name in _ANSWER_ROWS:
            rows.append((name, [_cell(a["overall"].get(key)) if a else "–" for a in answers.values()]))

    facts = {m: (a or {}).get("facts") for m, a in answers.items()}
    if any(f and f["n"] for f in facts.values()):
        section("Answers from the Kernwerte")
        for key, name in (("n", "from Kernwerte"), ("share_of_value_questions", "Share of value questions"),
                          ("share_of_answerable", "Share of answerable"), ("must_contain", "must-contain"),
                          ("citation_precision", "Citation precision"), ("wrong_year", "Values of other years")):
            rows.append((name, [_cell(f.get(key)) if f else "–" for f in facts.values()]))

    latency: dict[str, dict[str, dict]] = {}
    for m in modes:
        for label, stats in (metrics_by_mode[m].get("latency") or {}).items():
            latency.setdefault(label, {})[m] = stats
        a = answers[m]
        if a:
            latency.setdefault("Retrieval", {}).setdefault(m, a["latency_retrieval"])
            latency.setdefault("Total", {}).setdefault(m, a["latency_total"])
            if (a.get("facts") or {}).get("n"):
                latency.setdefault("Total (Kernwerte)", {}).setdefault(m, a["facts"]["latency_total"])
    if latency:
        section("Latency in ms (median / p95 / max)")
        for label, per_mode in latency.items():
            cells = []
            for m in modes:
                s = per_mode.get(m)
                cells.append(f"{_ms(s['median'])} / {_ms(s['p95'])} / {_ms(s['max'])}" if s and s["n"] else "–")
            rows.append((label, cells))

    label_width = max([len(r[0]) for r in rows if r[1]] + [10]) + 2
    widths = [max([len(m)] + [len(r[1][i]) for r in rows if r[1]]) for i, m in enumerate(modes)]
    lines = [title, "=" * len(title)]
    header = " " * label_width + " | ".join(m.rjust(w) for m, w in zip(modes, widths))
    for name, cells in rows:
        if not cells:
            lines += ["", name, header, "-" * len(header)]
        else:
            lines.append(name.ljust(label_width) + " | ".join(c.rjust(w) for c, w in zip(cells, widths)))
    if settings:
        lines += ["", "Settings"]
        width = max(len(str(key)) for key in settings) + 2
        lines += [f"{str(key) + ':':<{width}}{value}" for key, value in settings.items()]
    return "\n".join(lines) + "\n"
