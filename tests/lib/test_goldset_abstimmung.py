"""The tuning-only gold set (data/demo_kb/goldset_abstimmung.yaml): shape, and its distance to the held-out sets."""
import collections
import pathlib

from lib.evaluation.protocol import split_goldset, tuning_part
from lib.evaluation.goldset import ANSWERABLE_KINDS, read_goldset
from lib.text.german import tokens

DEMO = pathlib.Path(__file__).resolve().parents[2] / "data" / "demo_kb"
KB_IDS = {p.stem for p in (DEMO / "wissensbasis" / "dokumente").glob("*.md")}
HELD_OUT = ("goldset_praxis.yaml", "goldset.yaml")


def _words(question):
    return set(tokens(question.question))


def test_it_is_all_tuning_material_with_expected_ids_from_the_base():
    goldset = read_goldset(DEMO / "goldset_abstimmung.yaml", known_ids=KB_IDS)
    split = split_goldset(goldset.questions, goldset.meta)
    assert split.test == [] and tuning_part(goldset) == goldset.questions and goldset.warnings == []
    kinds = collections.Counter(q.kind for q in goldset.questions)
    assert len(goldset.questions) >= 140 and kinds["paraphrase"] * 3 >= len(goldset.questions), kinds
    assert all(q.expected_ids for q in goldset.questions if q.kind in ANSWERABLE_KINDS)
    assert all(not q.expected_ids for q in goldset.questions if q.kind == "refuse")


def test_no_question_is_near_a_held_out_question():
    # tuning on a question that is (almost) word for word a test question would leak the test into the choice:
    # word-set Jaccard below 0.5 to every question of the held-out sets (the demo set's tuning part included,
    # which is simpler than telling the parts apart and costs nothing)
    tuning = read_goldset(DEMO / "goldset_abstimmung.yaml").questions
    held = [q for name in HELD_OUT for q in read_goldset(DEMO / name).questions]
    near = []
    for q in tuning:
        words = _words(q)
        for h in held:
            other = _words(h)
            if len(words & other) / max(1, len(words | other)) >= 0.5:
                near.append((q.id, h.id))
    assert near == []
    assert not {q.id for q in tuning} & {h.id for h in held}
