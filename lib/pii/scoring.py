"""How well the personal-data gate finds what it should: precision and recall on a labelled set.

The sets are ``data/pii_eval.yaml`` (held out) and ``tests/lib/data/pii_dev.yaml``; the benchmark
``scripts/bench/bench_pii.py`` and the acceptance test read them through :func:`score_cases`. Pure
Python, no Odoo.
"""
from __future__ import annotations

from typing import Iterable

from .gate import DETECTORS, TOKENS, detect
from .names import KnownNames


def score_cases(data: dict, *, detectors: Iterable[str] | None = None) -> dict:
    """Precision and recall per detector and overall on a labelled set.

    A found span counts when an expected span of the same placeholder kind (PERSON for both name
    detectors) has exactly its text; per detector, recall is counted on the expected labels and
    precision on what the detector found.  Returns also the misses and false finds for reading.
    """
    known = KnownNames.build(data.get("known_names") or [])
    allow = data.get("allow_list") or []
    per = {d: {"tp_found": 0, "found": 0, "tp_expected": 0, "expected": 0} for d in DETECTORS}
    misses, extras = [], []
    for case in data["questions"]:
        text = case["text"]
        expected = [(d, t) for d, t in case.get("spans") or []]
        found = detect(text, known_names=known, allow_list=allow, detectors=detectors)
        pool = [(TOKENS[d], t) for d, t in expected]
        got = [(TOKENS[f.detector] if f.detector != "known" else f.token, f.text) for f in found]
        remaining = list(pool)
        for f, key in zip(found, got):
            det = f.detector if f.detector in per else "name"
            per[det]["found"] += 1
            if key in remaining:
                remaining.remove(key)
                per[det]["tp_found"] += 1
            else:
                extras.append((case["id"], f.detector, f.text))
        remaining_found = list(got)
        for d, t in expected:
            per[d]["expected"] += 1
            if (TOKENS[d], t) in remaining_found:
                remaining_found.remove((TOKENS[d], t))
                per[d]["tp_expected"] += 1
            else:
                misses.append((case["id"], d, t))
    rows = {}
    for d, c in per.items():
        rows[d] = {
            "expected": c["expected"], "found": c["found"],
            "recall": c["tp_expected"] / c["expected"] if c["expected"] else None,
            "precision": c["tp_found"] / c["found"] if c["found"] else None,
        }
    total_exp = sum(c["expected"] for c in per.values())
    total_found = sum(c["found"] for c in per.values())
    rows["overall"] = {
        "expected": total_exp, "found": total_found,
        "recall": sum(c["tp_expected"] for c in per.values()) / total_exp if total_exp else None,
        "precision": sum(c["tp_found"] for c in per.values()) / total_found if total_found else None,
    }
    clean = [c for c in data["questions"] if not c.get("spans")]
    return {"rows": rows, "misses": misses, "extras": extras, "questions": len(data["questions"]),
            "clean_questions": len(clean)}

