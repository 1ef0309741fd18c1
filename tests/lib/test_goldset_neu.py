"""The third to twentieth gold sets (data/demo_kb/goldset_neu.yaml, goldset_neu2.yaml … goldset_neu13.yaml,
goldset_neu18.yaml … goldset_neu22.yaml): written
without sight of the other gold sets and of the answering code, held out as a whole; every required string stands in
one of its question's expected entries."""
import pathlib

import pytest

from lib.evaluation.goldset import ANSWERABLE_KINDS, GoldsetError, read_goldset
from lib.evaluation.protocol import split_goldset, tuning_part

DEMO = pathlib.Path(__file__).resolve().parents[2] / "data" / "demo_kb"
ENTRIES = {p.stem: p.read_text(encoding="utf-8") for p in (DEMO / "wissensbasis" / "dokumente").glob("*.md")}


SIZES = {"goldset_neu.yaml": (40, 30), "goldset_neu2.yaml": (30, 24), "goldset_neu3.yaml": (40, 28),
         "goldset_neu4.yaml": (44, 28), "goldset_neu5.yaml": (44, 28), "goldset_neu6.yaml": (44, 28),
         "goldset_neu7.yaml": (44, 28), "goldset_neu8.yaml": (44, 28),
         "goldset_neu9.yaml": (44, 28), "goldset_neu10.yaml": (44, 28),
         "goldset_neu11.yaml": (44, 28), "goldset_neu12.yaml": (44, 28), "goldset_neu13.yaml": (44, 28),
         "goldset_neu18.yaml": (44, 28), "goldset_neu19.yaml": (44, 28), "goldset_neu20.yaml": (44, 28),
         "goldset_neu21.yaml": (44, 28), "goldset_neu22.yaml": (44, 28), "goldset_neu23.yaml": (44, 28),
         "goldset_neu24.yaml": (44, 28), "goldset_neu25.yaml": (44, 28), "goldset_neu26.yaml": (44, 28),
         "goldset_neu27.yaml": (44, 28), "goldset_neu28.yaml": (44, 28), "goldset_neu29.yaml": (44, 28),
         "goldset_neu30.yaml": (44, 28), "goldset_neu31.yaml": (44, 28),
         "goldset_neu32.yaml": (44, 28), "goldset_neu33.yaml": (44, 28),
         "goldset_neu34.yaml": (44, 28), "goldset_neu35.yaml": (44, 28),
         "goldset_neu36.yaml": (44, 28), "goldset_neu37.yaml": (44, 28),
         "goldset_neu38.yaml": (44, 28), "goldset_neu39.yaml": (44, 28), "goldset_neu40.yaml": (44, 28),
         "goldset_neu41.yaml": (44, 28), "goldset_neu42.yaml": (44, 28), "goldset_neu43.yaml": (44, 28),
         "goldset_neu44.yaml": (44, 28), "goldset_neu45.yaml": (44, 28), "goldset_neu46.yaml": (44, 28),
         "goldset_neu47.yaml": (44, 28), "goldset_neu48.yaml": (44, 28), "goldset_neu49.yaml": (44, 28),
         "goldset_neu50.yaml": (44, 28), "goldset_neu51.yaml": (44, 28), "goldset_neu52.yaml": (44, 28),
         "goldset_neu53.yaml": (44, 28), "goldset_neu54.yaml": (44, 28), "goldset_neu55.yaml": (44, 28),
         "goldset_neu56.yaml": (44, 28), "goldset_neu57.yaml": (44, 28), "goldset_neu58.yaml": (44, 28),
         "goldset_neu59.yaml": (44, 28), "goldset_neu60.yaml": (44, 28), "goldset_neu61.yaml": (44, 28),
         "goldset_neu62.yaml": (44, 28), "goldset_neu63.yaml": (44, 28), "goldset_neu64.yaml": (44, 28),
         "goldset_neu65.yaml": (44, 28), "goldset_neu66.yaml": (44, 28)}


@pytest.fixture(scope="module", params=sorted(SIZES))
def neu(request):
    gold = read_goldset(DEMO / request.param, known_ids=set(ENTRIES))
    gold.sizes = SIZES[request.param]
    return gold


def test_it_is_held_out_and_never_tuned_on(neu):
    assert neu.warnings == [] and len(neu.questions) == neu.sizes[0]
    split = split_goldset(neu.questions, neu.meta)
    assert split.tuning == [] and split.test == neu.questions
    with pytest.raises(GoldsetError):
        tuning_part(neu)


def test_required_strings_stand_in_an_expected_entry(neu):
    answerable = [q for q in neu.questions if q.kind in ANSWERABLE_KINDS]
    assert len(answerable) == neu.sizes[1] and all(q.expected_ids for q in answerable)
    for q in neu.questions:
        for needle in q.answer_must_contain or ():
            assert any(needle in ENTRIES[e] for e in q.expected_ids), (q.id, needle)
