"""Pinning tests: the demo KB's chunk hashes and detected conflicts stay what they were.

The expected values are written by ``scripts/write_pins.py`` from the code at the time
(``testing/data/demo_pins.json``). A refactor must leave them unchanged; a change that alters
them on purpose rewrites the file in the same commit and says why.
"""
import json

import pytest

from testing import pins


@pytest.fixture(scope="module")
def pinned():
    return json.loads(pins.PINS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def demo():
    return pins.demo_pins()


def test_demo_chunk_hashes_are_pinned(pinned, demo):
    # 41 entries + 2 planted for the health check (wiku-sz-01, wiku-gfb-01; README "Demo KB: planted problems")
    assert demo["entries"] == pinned["demo"]["entries"] == 43
    assert sorted(demo["chunks"]) == sorted(pinned["demo"]["chunks"])
    for entry_id, chunks in pinned["demo"]["chunks"].items():
        assert demo["chunks"][entry_id] == chunks, entry_id


def test_demo_conflicts_are_pinned(pinned, demo):
    assert demo["conflicts"] == pinned["demo"]["conflicts"]
    # the three planted conflicts of the demo KB (README, "Conflict detection") are among them
    sides = {tuple(c["entry_ids"]) for c in demo["conflicts"]}
    assert {("lb-atz-02", "wiku-atz-01"), ("lb-rk-02", "wiku-rk-01"), ("lb-ust-02", "wiku-ust-01")} <= sides
    # and the outdated Geringfügigkeitsgrenze planted for the health check
    assert ("lb-gfb-01", "wiku-gfb-01") in sides


def test_synthetic_base_chunks_and_conflicts_are_pinned(pinned):
    assert pins.synthetic_pins() == pinned["synthetic_601_seed7"]
