"""The evaluation protocol: which questions of a gold set may be tuned on, and honest numbers for tuned knobs.

Every gold set has a fixed **tuning part** and a **test part** (held out):

* The split is a function of the question ids alone: within each kind, the
  questions are ordered by ``sha256(salt + id)`` and the first
  ``floor(n * share)`` go to the tuning part (stratified by kind, so a
  small kind is not by chance all in one part). Nothing random, no file to
  keep in sync; adding a question moves at most one other question of its
  kind across the boundary.
* A gold set chooses its split in the metadata of the wrapped form
  (``{split: ..., questions: [...]}``, see ``lib.goldset_format.read_goldset``):

  - no ``split`` key: the default, ``tuning_share`` :data:`DEFAULT_TUNING_SHARE`
    with salt :data:`DEFAULT_SALT`;
  - ``split: test``: the whole set is held out (a gold set that was written
    to check generalisation; the tuning bench refuses it);
  - ``split: tuning``: the whole set is tuning material (a gold set written
    to choose knobs on; ``pv_kb eval`` then has no test part to report and
    says so);
  - ``split: {tuning_share: 0.4, salt: "..."}``: another share or salt.

* Knobs are chosen on the tuning part only. :func:`cross_validate` gives the
  k-fold cross-validated estimate of "choose the best setting, then use
  it": for every fold the setting is chosen on the other folds and scored
  on the fold, so the number does not reward fitting the questions it is
  measured on.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

from .metrics import retrieval_metrics
from .goldset import GoldQuestion, GoldsetError

DEFAULT_TUNING_SHARE = 0.5
DEFAULT_SALT = "pv_kb-split-1"
PARTS = ("test", "tuning", "all")


@dataclass(frozen=True)
class SplitRule:
    tuning_share: float
    salt: str

    def describe(self) -> str:
        if self.tuning_share == 0:
            return "ganz Testteil (split: test, nie zum Abstimmen)"
        if self.tuning_share == 1:
            return "ganz Tuning-Teil (split: tuning, nur zum Abstimmen; kein Testteil)"
        return (f"Tuning-Anteil {self.tuning_share:g} je Art, nach sha256('{self.salt}' + id); "
                "der Rest ist Testteil")


@dataclass
class Split:
    questions: list[GoldQuestion]      # the whole gold set, in its order
    tuning: list[GoldQuestion]
    test: list[GoldQuestion]
    rule: SplitRule

    def part(self, name: str) -> list[GoldQuestion]:
        """The questions of part ``name`` (one of :data:`PARTS`)."""
        if name not in PARTS:
            raise ValueError(f"unknown part {name!r}; use one of {', '.join(PARTS)}")
        return {"test": self.test, "tuning": self.tuning, "all": self.questions}[name]


def split_rule(meta: Mapping | None) -> SplitRule:
    """The split a gold set asks for in its metadata (see the module docstring)."""
    spec = (meta or {}).get("split")
    if spec is None:
        return SplitRule(DEFAULT_TUNING_SHARE, DEFAULT_SALT)
    if isinstance(spec, str) and spec.strip().lower() in ("test", "held-out", "heldout"):
        return SplitRule(0.0, DEFAULT_SALT)
    if isinstance(spec, str) and spec.strip().lower() in ("tuning", "abstimmung"):
        return SplitRule(1.0, DEFAULT_SALT)
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"tuning_share", "salt"}
        share = spec.get("tuning_share", DEFAULT_TUNING_SHARE)
        if not unknown and isinstance(share, (int, float)) and not isinstance(share, bool) and 0 <= share < 1:
            return SplitRule(float(share), str(spec.get("salt", DEFAULT_SALT)))
    raise GoldsetError(["'split' muss 'test' oder 'tuning' sein oder eine Zuordnung mit tuning_share (0 bis unter 1) "
                        "und optional salt, z. B. split: {tuning_share: 0.5}."])


def _hash(salt: str, qid: str) -> str:
    return hashlib.sha256(f"{salt}\x00{qid}".encode()).hexdigest()


def _by_kind(questions: Sequence[GoldQuestion], salt: str) -> dict[str, list[GoldQuestion]]:
    groups: dict[str, list[GoldQuestion]] = {}
    for q in questions:
        groups.setdefault(q.kind, []).append(q)
    return {kind: sorted(group, key=lambda q: _hash(salt, q.id)) for kind, group in sorted(groups.items())}


def split_goldset(questions: Sequence[GoldQuestion], meta: Mapping | None = None) -> Split:
    """Tuning and test part of a gold set (each in the gold set's order)."""
    rule = split_rule(meta)
    tuning_ids: set[str] = set()
    for group in _by_kind(questions, rule.salt).values():
        tuning_ids.update(q.id for q in group[:int(len(group) * rule.tuning_share)])
    return Split(list(questions), [q for q in questions if q.id in tuning_ids],
                 [q for q in questions if q.id not in tuning_ids], rule)


def tuning_part(goldset) -> list[GoldQuestion]:
    """The questions a tuning run may use (a ``lib.goldset_format.GoldSet``); refuses a set without a tuning part.

    Every script that chooses knobs takes its questions from here, so a gold set marked ``split: test``
    cannot be tuned on by accident.
    """
    split = split_goldset(goldset.questions, goldset.meta)
    if not split.tuning:
        raise GoldsetError([f"{goldset.name} hat keinen Tuning-Teil ({split.rule.describe()}): "
                            "an diesen Fragen wird nichts abgestimmt, sie dienen nur der Prüfung."])
    return split.tuning


def folds(questions: Sequence[GoldQuestion], k: int = 5, salt: str = DEFAULT_SALT) -> list[list[GoldQuestion]]:
    """``k`` folds, stratified by kind: within a kind, questions in hash order are dealt round-robin.

    The dealing continues across kinds, so small kinds do not all start in fold 0.
    """
    if k < 2:
        raise ValueError(f"k-fold needs k >= 2, got {k}")
    out: list[list[GoldQuestion]] = [[] for _ in range(k)]
    n = 0
    for group in _by_kind(questions, salt + "-folds").values():
        for q in group:
            out[n % k].append(q)
            n += 1
    return out


def objective(metrics_row: Mapping) -> float:
    """What tuning maximises: Recall@k + MRR + hit@1 (each in [0, 1]; 0 for an empty row)."""
    return sum(metrics_row.get(key) or 0.0 for key in ("recall@k", "mrr", "hit@1"))


@dataclass
class CrossValidation:
    metrics: dict                      # retrieval_metrics of the fold-wise chosen settings, over all questions
    chosen: list[Hashable]             # the setting chosen for each fold
    fold_sizes: list[int]


def cross_validate(questions: Sequence[GoldQuestion], rankings: Mapping[Hashable, Mapping[str, list[str]]],
                   *, k_folds: int = 5, k: int = 8, salt: str = DEFAULT_SALT,
                   score: Callable[[Mapping], float] = objective) -> CrossValidation:
    """k-fold cross-validated retrieval metrics of choosing a setting by ``score``.

    ``rankings[setting][question id]`` is the ranked entry id list the
    setting gives for a question (all settings rank all ``questions``). For
    each fold, the setting with the best ``score`` of its overall metrics on
    the other folds is chosen (ties: the first setting in ``rankings``
    order, so list the current default first) and its rankings of the
    fold's questions are kept. The metrics over the kept rankings estimate
    how the chosen setting does on questions it was not chosen on.
    """
    if not rankings:
        raise ValueError("no settings to choose from")
    parts = folds(questions, k_folds, salt)
    kept: list[tuple[GoldQuestion, list[str]]] = []
    chosen: list[Hashable] = []
    for n, fold in enumerate(parts):
        train = [q for m, other in enumerate(parts) if m != n for q in other]
        best, best_score = None, None
        for setting, ranked in rankings.items():
            value = score(retrieval_metrics([(q, ranked[q.id]) for q in train], k=k)["overall"])
            if best_score is None or value > best_score + 1e-12:
                best, best_score = setting, value
        chosen.append(best)
        kept.extend((q, rankings[best][q.id]) for q in fold)
    order = {q.id: n for n, q in enumerate(questions)}
    kept.sort(key=lambda item: order[item[0].id])
    return CrossValidation(retrieval_metrics(kept, k=k), chosen, [len(f) for f in parts])
