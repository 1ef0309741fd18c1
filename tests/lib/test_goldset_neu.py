"""The third gold set (data/demo_kb/goldset_neu.yaml): written without sight of the other gold sets and of the
answering code, held out as a whole; every required string stands in one of its question's expected entries."""
import pathlib

import pytest

from lib.evaluation.goldset import ANSWERABLE_KINDS, GoldsetError, read_goldset
from lib.evaluation.protocol import split_goldset, tuning_part

DEMO = pathlib.Path(__file__).resolve().parents[2] / "data" / "demo_kb"
ENTRIES = {p.stem: p.read_text(encoding="utf-8") for p in (DEMO / "wissensbasis" / "dokumente").glob("*.md")}


@pytest.fixture(scope="module")
def neu():
    return read_goldset(DEMO / "goldset_neu.yaml", known_ids=set(ENTRIES))


def test_it_is_held_out_and_never_tuned_on(neu):
    assert neu.warnings == [] and len(neu.questions) == 40
    split = split_goldset(neu.questions, neu.meta)
    assert split.tuning == [] and split.test == neu.questions
    with pytest.raises(GoldsetError):
        tuning_part(neu)


def test_required_strings_stand_in_an_expected_entry(neu):
    answerable = [q for q in neu.questions if q.kind in ANSWERABLE_KINDS]
    assert len(answerable) == 30 and all(q.expected_ids for q in answerable)
    for q in neu.questions:
        for needle in q.answer_must_contain or ():
            assert any(needle in ENTRIES[e] for e in q.expected_ids), (q.id, needle)
