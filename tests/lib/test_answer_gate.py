from lib.answer import gate
from lib.answer.types import REFUSAL_TEXT


def test_refuses_only_when_both_signals_are_empty():
    assert gate.decide(gate.Evidence(fts_hits=0, dense_best=0.5), dense_floor=0.7).refuse
    assert gate.decide(gate.Evidence(fts_hits=0, dense_best=None)).refuse


def test_any_full_text_match_passes_the_gate():
    verdict = gate.decide(gate.Evidence(fts_hits=1, dense_best=0.1))
    assert not verdict.refuse


def test_strong_dense_similarity_passes_without_text_match():
    assert not gate.decide(gate.Evidence(fts_hits=0, dense_best=0.85), dense_floor=0.84).refuse
    assert gate.decide(gate.Evidence(fts_hits=0, dense_best=0.83), dense_floor=0.84).refuse
    # the default floor never lets a dense hit count as empty
    assert not gate.decide(gate.Evidence(fts_hits=0, dense_best=0.01)).refuse


def test_floor_is_a_parameter():
    ev = gate.Evidence(fts_hits=0, dense_best=0.6)
    assert gate.decide(ev, dense_floor=0.5).refuse is False
    assert gate.decide(ev, dense_floor=0.65).refuse is True


def test_refusal_names_nearest_topics():
    verdict = gate.decide(gate.Evidence(fts_hits=0, dense_best=None, topics=["sachbezuege", "urlaub", "a", "b"]))
    text = gate.refusal_answer(verdict)
    assert text.startswith(REFUSAL_TEXT)
    assert "sachbezuege" in text and "urlaub" in text and ", b" not in text


def test_from_retrieval_reads_evidence_and_ignores_unknown_keys():
    class R:
        evidence = {"fts_hits": 3, "dense_best": 0.8, "unknown": 1}
    ev = gate.Evidence.from_retrieval(R())
    assert (ev.fts_hits, ev.dense_best) == (3, 0.8)


def test_a_question_on_another_countrys_law_that_no_passage_names():
    from lib.answer.gate import other_country
    austrian = ["Die Geringfügigkeitsgrenze beträgt 2025 € 551,10 monatlich.", "Kilometergeld: € 0,50 pro km"]
    assert other_country("Wie hoch ist die Minijob-Grenze in Deutschland?", austrian) == "Deutschland"
    assert other_country("Grenzgänger aus der Schweiz: wie hoch ist der AHV-Beitrag?", austrian) == "Schweiz"
    # the base speaks of the country itself (a foreign Taggeld): the passages answer
    assert other_country("Taggeld für eine Dienstreise nach Deutschland?",
                         austrian + ["Taggeld Ausland – Deutschland: € 35,30"]) is None
    # Austrian questions, and "deutsch" as a language, name no other state
    assert other_country("Wie hoch ist die Geringfügigkeitsgrenze 2025?", austrian) is None
    assert other_country("Gibt es das Merkblatt auch auf Deutsch und Englisch?", austrian) is None
