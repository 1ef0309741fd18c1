"""Tests for lib.evaluation.protocol: the fixed tuning/test split, folds and cross-validated knob choice."""
import pytest

from lib.evaluation.protocol import (
    DEFAULT_SALT,
    cross_validate,
    folds,
    objective,
    split_goldset,
    split_rule,
    tuning_part,
)
from lib.evaluation.metrics import retrieval_metrics
from lib.evaluation.goldset import GoldQuestion, GoldsetError, read_goldset


def gold(n_per_kind):
    out = []
    for kind, n in n_per_kind.items():
        out += [GoldQuestion(f"q-{kind}-{i:02d}", f"Frage {i}?", kind, [f"lb-{kind}-{i:02d}"]) for i in range(n)]
    return out


def test_split_is_stratified_by_kind_deterministic_and_covers_everything():
    questions = gold({"fact": 15, "paraphrase": 10, "conflict": 4, "refuse": 3})
    split = split_goldset(questions)
    assert sorted(q.id for q in split.tuning + split.test) == sorted(q.id for q in questions)
    assert not {q.id for q in split.tuning} & {q.id for q in split.test}
    count = lambda part, kind: sum(1 for q in part if q.kind == kind)  # noqa: E731
    assert [count(split.tuning, k) for k in ("fact", "paraphrase", "conflict", "refuse")] == [7, 5, 2, 1]
    again = split_goldset(list(reversed(questions)))
    assert {q.id for q in again.test} == {q.id for q in split.test}
    assert split.part("all") == questions and split.part("test") == split.test
    # the test part keeps the gold set's order
    assert split.test == [q for q in questions if q in split.test]
    with pytest.raises(ValueError):
        split.part("train")


def test_split_depends_on_the_salt_and_a_new_question_moves_at_most_one_other():
    questions = gold({"fact": 20})
    default = {q.id for q in split_goldset(questions).test}
    other = {q.id for q in split_goldset(questions, {"split": {"tuning_share": 0.5, "salt": "x"}}).test}
    assert default != other and len(default) == len(other) == 10
    grown = questions + [GoldQuestion("q-fact-new", "Neu?", "fact", ["lb-x"])]
    before = {q.id for q in split_goldset(questions).tuning}
    after = {q.id for q in split_goldset(grown).tuning} - {"q-fact-new"}
    assert len(before ^ after) <= 1


def test_a_held_out_gold_set_has_no_tuning_part():
    questions = gold({"fact": 6, "paraphrase": 6})
    split = split_goldset(questions, {"split": "test"})
    assert split.tuning == [] and split.test == questions
    assert "nie zum Abstimmen" in split.rule.describe()
    text = "split: test\nquestions:\n  - {id: a, question: 'A?', kind: fact, expected_ids: [x]}\n"
    goldset = read_goldset(text)
    assert split_goldset(goldset.questions, goldset.meta).tuning == []


def test_a_tuning_gold_set_is_all_tuning_part():
    questions = gold({"fact": 6, "paraphrase": 6})
    split = split_goldset(questions, {"split": "tuning"})
    assert split.tuning == questions and split.test == []
    assert "kein Testteil" in split.rule.describe()
    text = "split: tuning\nquestions:\n  - {id: a, question: 'A?', kind: fact, expected_ids: [x]}\n"
    goldset = read_goldset(text)
    assert [q.id for q in tuning_part(goldset)] == ["a"]


@pytest.mark.parametrize("spec", ["train", {"tuning_share": 1.0}, {"tuning_share": -0.1}, {"share": 0.5},
                                  {"tuning_share": "half"}])
def test_invalid_split_specs_are_rejected_in_german(spec):
    with pytest.raises(GoldsetError, match="tuning_share"):
        split_rule({"split": spec})


def test_folds_are_disjoint_stratified_and_cover_the_set():
    questions = gold({"fact": 10, "paraphrase": 5, "multi": 3})
    parts = folds(questions, 5)
    assert sorted(q.id for f in parts for q in f) == sorted(q.id for q in questions)
    assert [len(f) for f in parts] == [4, 4, 4, 3, 3]
    for f in parts:
        assert sum(1 for q in f if q.kind == "fact") == 2
    assert folds(questions, 5) == parts
    assert folds(questions, 5, salt=DEFAULT_SALT + "x") != parts
    with pytest.raises(ValueError):
        folds(questions, 1)


def test_cross_validation_scores_each_fold_with_a_setting_chosen_without_it():
    questions = gold({"fact": 10})
    right = {q.id: [q.expected_ids[0]] for q in questions}
    wrong = {q.id: ["lb-none"] for q in questions}
    # "good" ranks everything right; "lucky" only the questions of fold 0, perfectly
    parts = folds(questions, 5)
    fold0 = {q.id for q in parts[0]}
    lucky = {qid: (right[qid] if qid in fold0 else wrong[qid]) for qid in right}
    cv = cross_validate(questions, {"lucky": lucky, "good": right}, k_folds=5)
    assert cv.chosen == ["good"] * 5 and cv.metrics["overall"]["mrr"] == 1.0
    # a setting that is right exactly where it is measured never wins a fold it is not chosen on
    overfit = {qid: right[qid] for qid in right}
    cv2 = cross_validate(questions, {"wrong": wrong, "lucky": lucky}, k_folds=5)
    assert cv2.chosen[0] == "wrong" and cv2.chosen[1:] == ["lucky"] * 4
    assert cv2.metrics["overall"]["hit@1"] == 0.0     # in-sample "lucky" would claim 0.2
    assert retrieval_metrics([(q, lucky[q.id]) for q in questions])["overall"]["hit@1"] == pytest.approx(0.2)
    assert cross_validate(questions, {"a": overfit, "b": overfit}).chosen == ["a"] * 5   # ties: first listed
    with pytest.raises(ValueError):
        cross_validate(questions, {})


def test_objective_sums_recall_mrr_hit1():
    assert objective({"recall@k": 1.0, "mrr": 0.5, "hit@1": 0.25, "n": 4}) == 1.75
    assert objective({"recall@k": None, "mrr": None, "hit@1": None}) == 0.0
