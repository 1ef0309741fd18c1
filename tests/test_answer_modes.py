"""The registry of answer modes drives every list of modes: a mode a test registers appears in the Selection
fields, the bake-off wizard and the command line's help (lib/answer/modes; that it answers:
tests/lib/test_answer_modes.py)."""
import importlib.util
import pathlib

from odoo.tests import TransactionCase, tagged

from odoo.addons.pv_kb.lib.answer import modes
from odoo.addons.pv_kb.lib.answer.types import AgentAnswer

CLI = pathlib.Path(__file__).resolve().parents[1] / "cli" / "pv_kb.py"


def _answer(prepared, client, on_delta, deadline, cancel, timings):
    return AgentAnswer(status="beantwortet", answer="Echo: " + prepared.question, answer_mode="echo")


@tagged("post_install", "-at_install", "pv_kb")
class TestAnswerModes(TransactionCase):

    def setUp(self):
        super().setUp()
        modes.register(modes.AnswerMode(key="echo", label="Echo", title="Echo (a test's mode)",
                                        system_prompt=lambda: "Antworte mit einem Echo.", answer=_answer,
                                        bakeoff_default=True))
        self.addCleanup(modes.unregister, "echo")

    def test_every_selection_of_answer_modes_lists_a_registered_mode(self):
        for model, field in (("pv.kb.query", "answer_mode"), ("pv.kb.eval.run", "answer_mode"),
                             ("pv.kb.eval.line", "answer_mode"), ("res.config.settings", "pv_kb_answer_mode"),
                             ("pv.kb.bakeoff.wizard.mode", "mode")):
            with self.subTest(model=model):
                values = dict(self.env[model]._fields[field]._description_selection(self.env))
                self.assertEqual(list(values)[:3], ["text", "structured", "selection"])
                self.assertIn("echo", values)
        self.env["res.lang"]._activate_lang("de_DE")
        german = self.env["pv.kb.query"].with_context(lang="de_DE")
        labels = dict(german._fields["answer_mode"]._description_selection(german.env))
        self.assertEqual(labels["text"], "Freitext", "the shipped modes' names in the user's language")

    def test_the_bakeoff_wizard_offers_every_registered_mode(self):
        wizard = self.env["pv.kb.bakeoff.wizard"].create({"chat_models": "standin-chat"})
        self.assertEqual(wizard.mode_line_ids.mapped("mode"), modes.keys())
        self.assertEqual(wizard.mode_line_ids.filtered("selected").mapped("mode"), ["text", "structured", "echo"])

    def test_the_command_line_offers_every_registered_mode(self):
        spec = importlib.util.spec_from_file_location("odoo.cli.pv_kb", CLI)   # a command lives in a module of its name
        cli = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(cli)
        parser = cli.build_parser()
        bakeoff = parser._subparsers._group_actions[0].choices["bakeoff"]
        self.assertIn("echo", bakeoff.format_help())
        self.assertEqual(bakeoff.parse_args(["--goldset", "g", "--chat-models", "m"]).answer_modes,
                         "text,structured,echo")
