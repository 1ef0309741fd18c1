"""Value questions answered from the fact table through the agent: at once, cited from retrieved entries only,
logged as such; the setting turns it off."""
from odoo.tests import tagged

from .common import DEMO_KB, StandInCase


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_facts")
class TestFactAnswers(StandInCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        files = cls.importer._read_source(path=DEMO_KB)
        cls.importer._run(files, source_name="demo")
        cls.env["pv.kb.chunk"]._embed_pending()

    def test_a_value_question_is_answered_from_the_facts_and_logged(self):
        streamed = []
        result = self.env["pv.kb.agent"]._ask("GFB 2025?", on_delta=streamed.append)
        self.assertTrue(result.from_facts)
        self.assertEqual(result.status, "beantwortet")
        self.assertIn("€ 551,10 [lb-gfb-01] (Stand 2025-01)", result.answer)
        self.assertNotIn("518,44", result.answer)
        self.assertTrue(set(result.cited_ids) <= set(result.retrieved_ids))
        self.assertEqual(streamed[0], result.answer)
        self.assertFalse(self.chat_requests(), "the model was not asked")
        self.assertTrue(result.query.from_facts)
        self.assertTrue(any("| Geringfügigkeitsgrenze monatlich |" in q["passage"] for q in result.quotes))

    def test_conflict_sides_with_values(self):
        result = self.env["pv.kb.agent"]._ask("Welche Ersatzquote gilt bei ATZ im Blockmodell mit Beginn 2026?")
        self.assertTrue(result.from_facts, result.retrieved_ids)
        self.assertIn("27,5 %", result.answer)
        self.assertIn("28,5 %", result.answer)
        self.assertIn("⚠", result.answer)
        self.assertEqual({i for c in result.conflicts for i in c.entry_ids}, {"lb-atz-02", "wiku-atz-01"})

    def test_the_setting_turns_it_off(self):
        settings = self.env["pv.kb.settings"]._get({"fact_answers": False})
        result = self.env["pv.kb.agent"]._ask("GFB 2025?", settings=settings)
        self.assertFalse(result.from_facts)
        self.assertFalse(result.query.from_facts)

    def test_other_questions_go_to_the_model(self):
        result = self.env["pv.kb.agent"]._ask("Warum gibt es eine Geringfügigkeitsgrenze?")
        self.assertFalse(result.from_facts)
