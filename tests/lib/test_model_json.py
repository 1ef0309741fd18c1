"""Tests for lib/llm/model_json.py: JSON out of a model's reply."""
from lib.llm.model_json import loads_lenient


def test_plain_fenced_and_wrapped_json_are_read():
    assert loads_lenient('{"a": 1}') == {"a": 1}
    assert loads_lenient('```json\n{"a": [1, 2]}\n```') == {"a": [1, 2]}
    assert loads_lenient('Hier ist die Antwort: {"a": 2} – fertig.') == {"a": 2}


def test_lists_only_when_asked_for_and_garbage_is_none():
    assert loads_lenient('Reihenfolge: ["x", "y"]') is None
    assert loads_lenient('Reihenfolge: ["x", "y"]', "{[") == ["x", "y"]
    assert loads_lenient("kein JSON {") is None
    assert loads_lenient("") is None
