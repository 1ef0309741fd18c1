"""The second gold set (data/demo_kb/goldset_praxis.yaml): shape, coverage, and that it is never tuned on."""
import collections
import pathlib

import pytest

from lib.evaluation.protocol import split_goldset, tuning_part
from lib.evaluation.goldset import ANSWERABLE_KINDS, GoldsetError, read_goldset

DEMO = pathlib.Path(__file__).resolve().parents[2] / "data" / "demo_kb"
KB_IDS = {p.stem for p in (DEMO / "wissensbasis" / "dokumente").glob("*.md")}


@pytest.fixture(scope="module")
def praxis():
    return read_goldset(DEMO / "goldset_praxis.yaml", known_ids=KB_IDS)


def test_size_kinds_and_expected_ids(praxis):
    questions = praxis.questions
    kinds = collections.Counter(q.kind for q in questions)
    assert len(questions) >= 150 and praxis.warnings == []
    assert kinds["paraphrase"] * 3 >= len(questions), kinds
    assert kinds["refuse"] >= 10 and all(not q.expected_ids for q in questions if q.kind == "refuse")
    assert all(q.expected_ids for q in questions if q.kind in ANSWERABLE_KINDS)
    assert all(len(q.expected_ids) >= 2 for q in questions if q.kind in ("multi", "conflict"))
    # it reaches most of the demo base, not a few favourite entries
    assert len({e for q in questions for e in q.expected_ids}) >= 38


def test_it_is_all_held_out_and_the_tuning_code_refuses_it(praxis):
    split = split_goldset(praxis.questions, praxis.meta)
    assert split.tuning == [] and split.test == praxis.questions
    with pytest.raises(GoldsetError, match="keinen Tuning-Teil"):
        tuning_part(praxis)
    # the demo gold set, by contrast, has one (and it is what the tuning bench uses)
    demo = read_goldset(DEMO / "goldset.yaml")
    assert 0 < len(tuning_part(demo)) < len(demo.questions)


def test_independent_of_the_demo_gold_set(praxis):
    def norm(text):
        return " ".join(text.casefold().split())
    demo = {norm(q.question) for q in read_goldset(DEMO / "goldset.yaml").questions}
    assert not [q.id for q in praxis.questions if norm(q.question) in demo]
    assert not {q.id for q in praxis.questions} & {q.id for q in read_goldset(DEMO / "goldset.yaml").questions}
