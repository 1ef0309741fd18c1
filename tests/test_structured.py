"""Structured answer mode through the agent, with the stand-in emitting (or violating) the JSON schema.

Documented behaviour (lib/answer/structured*.py, lib/answer/outcome.py): a statement that fails a check is
regenerated once and then dropped; the statements that pass are shown, rendered in code; when none is left
the user gets the extractive quotes with a one-line reason and the rejected text stays in the question log.
"""
import base64
import json
import os
import re
import socket

from odoo.tests import new_test_user, tagged
from odoo.exceptions import AccessError, UserError
from odoo.tools import mute_logger

from odoo.addons.pv_kb.lib.evaluation import bakeoff, goldset as goldset_format
from odoo.addons.pv_kb.lib.answer.types import REFUSAL_TEXT

from .common import StandInCase
from .test_agent import QUIET, AgentCase, agent_entries

QUESTION = "Wie hoch ist der Freibetrag für Sonderzahlungen?"


def reply(*statements, refused=False, reason=""):
    return json.dumps({"verweigert": refused, "grund": reason, "aussagen": list(statements)}, ensure_ascii=False)


def statement(text="Der Freibetrag für Sonderzahlungen beträgt € 620.", ids=("lb-sz-01",),
              quote="Die ersten € 620 sind steuerfrei", values=(("€ 620", "2025-01"),), conflict=None):
    item = {"quellen": list(ids), "zitat": quote, "text": text,
            "werte": [{"wert": w, "stand": s} for w, s in values]}
    if conflict:
        item["widerspruch"] = conflict
    return item


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_structured")
class TestStructuredAnswers(AgentCase):

    ANSWER_MODE = "structured"

    def test_default_structured_answer_is_rendered_in_code_with_quotes(self):
        result = self.agent._ask(QUESTION)
        self.assertEqual((result.status, result.answer_mode), ("beantwortet", "structured"), result.violations)
        self.assertTrue(all(r["format"] for r in self.chat_requests()), "the schema is sent as format")
        self.assertIn("[lb-sz-01] (Stand 2025-01)", result.answer)
        self.assertTrue(set(result.cited_ids) <= set(result.retrieved_ids))
        # each shown statement keeps the passage of its entry that its quote matched (for the citation chip)
        chunks = " ".join(self.env["pv.kb.chunk"].search([("kb_id", "=", "lb-sz-01")]).mapped("text"))
        passages = [q["passage"] for q in result.quotes if q["kb_id"] == "lb-sz-01"]
        self.assertTrue(passages and all(p in chunks for p in passages), result.quotes)
        self.assertEqual(result.query.answer_mode, "structured")

    def test_the_schema_offers_only_the_entries_shown_in_a_small_window(self):
        self.set_settings(num_ctx=2048)     # 4 blocks: fewer entries shown than retrieved
        result = self.agent._ask(QUESTION)
        request = self.chat_requests()[-1]
        enum = request["format_schema"]["properties"]["aussagen"]["items"]["properties"]["quellen"]["items"]["enum"]
        shown = re.findall(r"^### \[([^\]]+)\]", request["texts"][-1], re.M)
        self.assertEqual(set(enum), set(shown))
        self.assertLess(len(set(shown)), len(result.retrieved_ids), "the window must show fewer than retrieved")

    def test_per_model_setting_chooses_the_mode(self):
        self.set_settings(answer_mode="structured", answer_modes="standin-chat=text")
        try:
            result = self.agent._ask(QUESTION)
        finally:
            self.set_settings(answer_modes="")
        self.assertEqual(result.answer_mode, "text")
        self.assertFalse(any(r["format"] for r in self.chat_requests()))

    @mute_logger(*QUIET)
    def test_invalid_json_twice_gives_the_quotes_with_a_reason_never_the_text(self):
        self.standin.script_chat(["Der Freibetrag beträgt € 999 [lb-sz-01].", "{kaputt"])
        result = self.agent._ask(QUESTION)
        self.assertEqual(len(self.chat_requests()), 2, "one regeneration")
        self.assertEqual(result.status, "unsicher")
        self.assertTrue(result.answer.startswith("**Ohne KI-Antwort:** Die KI-Antwort war nicht lesbar."), result.answer)
        self.assertNotIn("999", result.answer)
        self.assertIn("lb-sz-01", result.cited_ids, "the quotes of the best entry, cited")
        self.assertIn("€ 999", result.query.rejected_answer, "the rejected text stays in the log for the curator")

    def test_invalid_json_then_valid_is_accepted(self):
        self.standin.script_chat(["kein JSON", reply(statement())])
        result = self.agent._ask(QUESTION)
        self.assertEqual((result.status, result.regenerations), ("beantwortet", 1))

    @mute_logger(*QUIET)
    def test_unknown_id_is_dropped_and_never_shown(self):
        bad = statement(ids=("lb-xx-99",))
        self.standin.script_chat([reply(bad), reply(bad)])
        result = self.agent._ask(QUESTION)
        self.assertEqual(result.status, "unsicher")
        self.assertNotIn("lb-xx-99", result.answer)
        self.assertTrue(any(v.startswith("dropped: unknown_id: lb-xx-99") for v in result.violations), result.violations)
        self.assertIn("Quellen, die nicht abgerufen wurden", result.answer)

    def test_value_not_in_block_drops_only_that_statement(self):
        good = statement()
        bad = statement(text="Der Steuersatz beträgt 12 %.", quote="Die ersten € 620 sind steuerfrei",
                        values=(("12 %", "2025-01"),))
        self.standin.script_chat([reply(good, bad), reply()])
        result = self.agent._ask(QUESTION)
        self.assertEqual(len(self.chat_requests()), 2, "only the failed statement is asked for again")
        self.assertEqual(result.status, "beantwortet")
        self.assertIn("€ 620", result.answer)
        self.assertNotIn("12 %", result.answer)
        self.assertTrue(any(v.startswith("dropped: value_not_in_source: 12 %") for v in result.violations))
        self.assertIn("not shown", result.notice or "")
        self.assertIn("12 %", result.query.rejected_answer)

    def test_missing_stand_is_written_from_the_entry(self):
        self.standin.script_chat([reply(statement(values=(("€ 620", ""),)))])
        result = self.agent._ask(QUESTION)
        self.assertEqual(result.status, "beantwortet")
        self.assertIn("€ 620. [lb-sz-01] (Stand 2025-01)", result.answer)
        self.assertIn("repaired: missing_stand: € 620", result.violations)

    def test_wrong_stand_fails_the_statement(self):
        wrong = statement(values=(("€ 620", "2019-01"),))
        self.standin.script_chat([reply(wrong), reply(wrong)])
        result = self.agent._ask(QUESTION)
        self.assertEqual(result.status, "unsicher")
        self.assertTrue(any(v.startswith("dropped: stand_mismatch") for v in result.violations))

    def test_refusal_with_reason(self):
        self.standin.script_chat([reply(refused=True, reason="Die Frage betrifft Deutschland.")])
        result = self.agent._ask(QUESTION)
        self.assertEqual(result.status, "verweigert")
        # the model's reason is a claim without a source: shown never, logged for the curator
        self.assertEqual(result.answer, REFUSAL_TEXT)
        self.assertEqual(result.cited_ids, [])
        self.assertIn("refusal_reason: Die Frage betrifft Deutschland.", result.query.violations or "")

    def test_conflict_sides_are_all_shown_with_the_warning_sign(self):
        side = statement(text="Die Ersatzquote bei Blockzeit beträgt 27,5 %.", ids=("lb-atz-01",),
                         quote="Ersatzquote Blockzeit | 27,5 %", values=(("27,5 %", "2025-01"),))
        self.standin.script_chat([reply(side)])
        result = self.agent._ask("Wie hoch ist die Ersatzquote bei Blockzeit in der Altersteilzeit?")
        self.assertEqual(result.status, "beantwortet", result.violations)
        self.assertTrue(result.answer.startswith("⚠ Widerspruch: Die Ersatzquote"), result.answer)
        self.assertIn("[wiku-atz-02]", result.answer, "the side the model left out, added in code")
        self.assertIn("28,5 %", result.answer)

    def test_streaming_shows_each_statement_when_it_is_complete(self):
        events = []
        result = self.agent._ask(QUESTION, on_delta=events.append)
        self.assertEqual(result.status, "beantwortet")
        shown = [e for e in events if e]
        self.assertTrue(shown, "statements are streamed")
        self.assertFalse(any(e.lstrip().startswith("{") or '"quellen"' in e for e in shown), "never raw JSON")
        self.assertIn(shown[0].strip(), result.answer)


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_structured")
class TestBakeoffRuns(StandInCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.load_entries(agent_entries(), "agent")

    @staticmethod
    def gold_text():
        return ("- id: q1\n  question: Wie hoch ist der Freibetrag für Sonderzahlungen?\n  kind: fact\n"
                "  expected_ids: [lb-sz-01]\n  answer_must_contain: ['€ 620']\n"
                "- id: q2\n  question: Wie ist das Wetter auf dem Mond?\n  kind: refuse\n  expected_ids: []\n"
                "- id: q3\n  question: Wie hoch ist der Steuersatz bis € 25.000?\n  kind: fact\n"
                "  expected_ids: [lb-sz-01]\n")

    def gold(self):
        return goldset_format.load_goldset(self.gold_text())

    def test_bakeoff_stores_one_run_per_model_and_mode_with_lines_and_a_recommendation(self):
        runs = self.env["pv.kb.eval.run"]._bakeoff(self.gold(), ["standin-chat"], ["text", "structured", "selection"],
                                                   goldset_name="mini", part="test")
        self.assertEqual(sorted(runs.mapped("answer_mode")), ["selection", "structured", "text"])
        self.assertEqual(set(runs.mapped("goldset_part")), {"test"})
        for run in runs:
            self.assertEqual(run.question_count, 3)
            self.assertEqual(len(run.line_ids), 3)
            self.assertEqual(run.citation_precision, 1.0)
            self.assertIn("standin-chat", run.settings_json)
            self.assertIn("entries", run.kb_version)
            self.assertIn("<table", str(run.kind_table))
            fact = run.line_ids.filtered(lambda l: l.question_id == "q1")
            self.assertEqual(fact.status, "beantwortet", fact.answer)
            self.assertIn("must_contain", json.loads(fact.checks_json))
        self.assertEqual(len(runs.filtered("recommended")), 1)
        self.assertTrue(runs[0].recommendation.startswith("Empfehlung: standin-chat"))
        # the recommendation follows lib.bakeoff.recommend over the stored numbers
        expected, _text = bakeoff.recommend([(r.name, {"citation_precision": r.citation_precision,
                                                       "answered_must_contain": r.answered_must_contain,
                                                       "refusal_accuracy": r.refusal_accuracy,
                                                       "latency_p50_ms": r.latency_p50_ms}) for r in runs])
        self.assertTrue(runs[expected].recommended)
        # failed questions first
        lines = runs[0].line_ids.sorted()
        self.assertEqual(lines.mapped("passed"), sorted(lines.mapped("passed")))

    def test_the_wizard_runs_the_chosen_modes_on_the_held_out_part(self):
        wizard = self.env["pv.kb.bakeoff.wizard"].create({
            "chat_models": "standin-chat",
            "goldset_file": base64.b64encode(self.gold_text().encode()), "goldset_filename": "mini.yaml"})
        self.assertEqual(wizard.mode_line_ids.filtered("selected").mapped("mode"), ["text", "structured"],
                         "the modes a bake-off runs unless told otherwise")
        for line in wizard.mode_line_ids:
            line.selected = line.mode == "selection"
        action = wizard.action_run()
        runs = self.env["pv.kb.eval.run"].search(action["domain"])
        self.assertEqual((runs.answer_mode, runs.goldset_part, runs.goldset_name),
                         ("selection", "test", "mini.yaml (held-out)"))
        # the held-out part of these two questions (lib/eval_protocol): fewer questions than the file holds
        self.assertEqual(runs.question_count, len(runs.line_ids))
        self.assertLess(runs.question_count, 3)

    def test_a_run_does_not_start_without_its_model_or_server(self):
        Run = self.env["pv.kb.eval.run"]
        before = Run.search_count([])
        with self.assertRaisesRegex(UserError, "no-such-model"):
            Run._bakeoff(self.gold(), ["no-such-model"], ["text"], goldset_name="mini")
        with socket.socket() as sock:    # a port nothing listens on
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        with self.assertRaisesRegex(UserError, str(port)):
            Run._bakeoff(self.gold(), ["standin-chat"], ["text"], goldset_name="mini",
                         overrides={"ollama_url": f"http://127.0.0.1:{port}"})
        self.assertEqual(Run.search_count([]), before)

    def test_an_uploaded_gold_set_naming_a_server_file_is_never_read(self):
        manager = new_test_user(self.env, "pvkb_bake_mgr", groups="pv_kb.group_pv_kb_manager")
        self.assertFalse(manager.has_group("base.group_system"))
        real = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "demo_kb",
                            "goldset.yaml")
        messages = []
        for text in (real, real + "-missing.yaml", "/etc/hostname", "/nonexistent/x.yml"):
            wizard = self.env["pv.kb.bakeoff.wizard"].with_user(manager).create({
                "chat_models": "standin-chat", "goldset_file": base64.b64encode(text.encode()),
                "goldset_filename": "g.yaml"})
            with self.assertRaises(UserError) as info:
                wizard.action_run()
            message = str(info.exception)
            self.assertNotIn("q-", message)          # no id of the demo gold set
            self.assertNotIn(text, message)
            messages.append(message)
        self.assertEqual(len(set(messages)), 1, "the message never tells whether a path exists")

    def test_an_alias_bomb_upload_gives_a_short_error(self):
        levels = ['a0: &a0 ["lol"]'] + [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
        text = "\n".join(levels) + "\nquestions:\n  - id: *a8\n    question: q\n    kind: fact\n"
        wizard = self.env["pv.kb.bakeoff.wizard"].create({
            "chat_models": "standin-chat", "goldset_file": base64.b64encode(text.encode()),
            "goldset_filename": "g.yaml"})
        with self.assertRaises(UserError) as info:
            wizard.action_run()
        self.assertLess(len(str(info.exception)), 2000)

    def test_only_managers_start_a_bakeoff(self):
        user = new_test_user(self.env, "pvkb_bake_user", groups="pv_kb.group_pv_kb_user")
        wizard = self.env["pv.kb.bakeoff.wizard"].create({"chat_models": "standin-chat"})
        with self.assertRaises(AccessError):
            wizard.with_user(user).action_run()
        with self.assertRaises(AccessError):
            self.env["pv.kb.eval.run"].with_user(user).search([])
