"""The settings are declared once (lib/settings/table.py): the form view shows exactly the declared form settings,
nothing else extends the settings form, and reading, storing and checking follow the declaration."""
import pathlib
import re
import xml.etree.ElementTree as ET

import polib
import pytest

from lib.settings import table

REPO = pathlib.Path(__file__).resolve().parents[2]
VIEW = REPO / "views" / "res_config_settings_views.xml"
# shown in the form, never stored as settings: computed, or the box that removes the (write-only) API key
NOT_SETTINGS = {"pv_kb_embedding_status", "pv_kb_api_key_stored", "pv_kb_api_key_clear"}


def _view_fields():
    root = ET.parse(VIEW).getroot()
    return [f.get("name") for f in root.iter("field") if (f.get("name") or "").startswith("pv_kb_")]


def test_the_view_shows_each_form_setting_once_and_nothing_undeclared():
    shown = _view_fields()
    assert sorted(shown) == sorted({*shown}), "a field shown twice"
    declared = {s.field for s in table.form_settings()}
    assert set(shown) - NOT_SETTINGS == declared


def test_one_settings_form_one_settings_model_file():
    views = [p.name for p in (REPO / "views").glob("*.xml")
             if re.search(r'<field name="model">res\.config\.settings</field>', p.read_text(encoding="utf-8"))]
    assert views == ["res_config_settings_views.xml"]
    extensions = [str(p.relative_to(REPO)) for p in REPO.glob("*/**/*.py") if "testing" not in p.parts
                  and re.search(r'_inherit = "res\.config\.settings"', p.read_text(encoding="utf-8"))]
    assert extensions == ["models/res_config_settings.py"]
    # every parameter is read through the table: no field stores itself, no module reads a declared key itself
    for path in list((REPO / "models").glob("*.py")) + list((REPO / "wizards").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert "config_parameter=" not in source, path.name
        for setting in table.SETTINGS:
            assert f'"{setting.param}"' not in source, (path.name, setting.param)


def test_keys_are_unique_and_snapshot_keys_keep_their_order():
    assert len({s.key for s in table.SETTINGS}) == len(table.SETTINGS)
    # the order of the snapshot recorded by answer logs and reports since before the table
    assert table.SNAPSHOT_KEYS == ("ollama_url", "embedding_model", "chat_model", "query_prefix", "passage_prefix",
                                   "top_k", "rrf_k", "num_ctx", "answer_mode", "answer_modes", "rerank",
                                   "rerank_depth", "query_rewrite")


def test_reading_takes_overrides_then_stored_values_then_defaults():
    stored = {"pv_kb.top_k": "5", "pv_kb.ollama_url": "http://x:1/", "pv_kb.num_ctx": "viel"}
    values = table.read(stored.get, {"chat_model": "other"})
    assert (values["top_k"], values["ollama_url"], values["chat_model"]) == (5, "http://x:1", "other")
    assert values["num_ctx"] == table.BY_KEY["num_ctx"].default, "an unusable value gives the default"
    assert set(values) == set(table.BY_KEY)
    assert table.read({}.get)["rerank_depth"] == 20
    assert table.read({"pv_kb.rerank_depth": "400"}.get)["rerank_depth"] == 40, "clamped when read"
    assert table.read({"pv_kb.top_k": "400"}.get)["top_k"] == 400, "others are checked on save only"


@pytest.mark.parametrize("raw, expected", [(None, True), ("on", True), ("True", True), ("off", False),
                                           ("False", False), ("0", False), ("kaputt", True)])
def test_a_garbled_gate_value_never_switches_the_gate_off(raw, expected):
    assert table.BY_KEY["pii_gate"].parse(raw) is expected


def test_storing_keeps_zero_and_unchecked_boxes():
    assert table.BY_KEY["health_max_age_months"].serialise(0) == "0"
    assert table.BY_KEY["health_max_age_months"].parse("0") == 0, "0 switches the age rule off and stays 0"
    assert table.BY_KEY["pii_gate"].serialise(False) == "False"
    assert table.BY_KEY["query_prefix"].serialise("  ") is False, "an empty text removes the parameter"
    detectors = table.BY_KEY["pii_detectors"]
    assert detectors.serialise("svnr,\niban") == "svnr, iban"
    assert detectors.serialise("") == detectors.default
    assert detectors.parse("") == detectors.default


def test_checks_follow_the_declaration():
    assert table.BY_KEY["top_k"].problem(0) == ("bounds", 1, 50)
    assert table.BY_KEY["top_k"].problem(8) is None
    assert table.BY_KEY["pii_detectors"].problem("svnr, gibtsnicht") == ("unknown", ["gibtsnicht"])
    assert table.BY_KEY["chat_model"].problem("x") is None


def test_rows_give_one_line_per_setting_for_the_documentation():
    po = {e.msgid: e.msgstr for e in polib.pofile(str(REPO / "i18n" / "de.po")) if e.msgstr}
    rows = table.rows(lambda text: po.get(text, text))
    assert [r["key"] for r in rows] == [s.param for s in table.SETTINGS]
    by_key = {r["key"]: r for r in rows}
    assert by_key["pv_kb.top_k"]["label"] == "Einträge pro Antwort (Top k)"
    assert by_key["pv_kb.top_k"]["bounds"] == "1–50"
    assert by_key["pv_kb.ollama_auth_header"]["editor"] == "system administrators"


def test_every_form_label_and_help_has_a_german_translation():
    po = {e.msgid for e in polib.pofile(str(REPO / "i18n" / "de.po")) if e.msgstr and not e.obsolete}
    missing = [text for s in table.form_settings() for text in (s.label, s.help) if text and text not in po]
    assert not missing
