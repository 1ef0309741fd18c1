"""Optional reranking and query rewriting by the chat model, against the stand-in."""
import json
from unittest.mock import patch

from odoo.tests import HttpCase, new_test_user, tagged
from odoo.tests.common import _registry_test_lock
from odoo.tools import mute_logger

from odoo.addons.pv_kb.lib.answer import stages
from odoo.addons.pv_kb.models.pv_kb_agent import PvKbAgent

from .common import StandInCase
from .test_agent import QUIET, agent_entries

QUESTION = "Wie hoch ist der Freibetrag für Sonderzahlungen?"


class StepsCase(StandInCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.set_settings(fact_answers="False")   # the steps under test are the model's (value questions)
        cls.load_entries(agent_entries(), "steps")
        cls.agent = cls.env["pv.kb.agent"]

    def settings(self, **overrides):
        return self.env["pv.kb.settings"]._get(dict({"top_k": 2}, **overrides))

    def rerank_requests(self):
        return [r for r in self.chat_requests() if "reihenfolge" in (r.get("format_schema") or {}).get("properties", {})]


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_agent")
class TestRerank(StepsCase):

    def test_settings_are_off_by_default_and_bounded(self):
        settings = self.env["pv.kb.settings"]._get()
        self.assertEqual((settings["rerank"], settings["query_rewrite"], settings["rerank_depth"]), (False, False, 20))
        self.set_settings(rerank="True", rerank_depth=99)
        settings = self.env["pv.kb.settings"]._get()
        self.assertEqual((settings["rerank"], settings["rerank_depth"]), (True, 40))
        self.assertFalse(self.env["pv.kb.settings"]._get({"rerank": False})["rerank"])

    def test_rerank_off_sends_no_rerank_request(self):
        result = self.agent._ask(QUESTION, settings=self.settings())
        self.assertEqual(result.status, "beantwortet")
        self.assertEqual(len(self.chat_requests()), 1, "only the answer")
        self.assertFalse(any("<kandidaten>" in r["texts"][-1] for r in self.chat_requests()))
        self.assertNotIn("rerank_ms", result.timings)
        self.assertFalse(result.query.model_steps)

    def test_rerank_on_orders_the_entries_by_the_models_reply(self):
        fused = self.agent._ask(QUESTION, settings=self.settings(), log=False).retrieved_ids
        self.standin.reset()
        # the model puts the fourth entry first: the answer's entries follow its order, cut to top_k
        self.standin.script_chat([json.dumps({"reihenfolge": ["lb-efz-01", "lb-sz-01"]})])
        result = self.agent._ask(QUESTION, settings=self.settings(rerank=True))
        [request] = self.rerank_requests()
        enum = request["format_schema"]["properties"]["reihenfolge"]["items"]["enum"]
        self.assertEqual(set(enum), set(agent_entries()), "every retrieved entry is a candidate")
        self.assertTrue(all(f"[{i}]" in request["texts"][-1] for i in enum))
        self.assertEqual(result.retrieved_ids, ["lb-efz-01", "lb-sz-01"])
        self.assertNotEqual(fused[0], "lb-efz-01", "the reply changed the order")
        answer_prompt = self.chat_requests()[-1]["texts"][-1]
        self.assertLess(answer_prompt.index("[lb-efz-01]"), answer_prompt.index("[lb-sz-01]"))
        self.assertNotIn("[wiku-atz-02]", answer_prompt, "entries below top_k are not in the context")
        self.assertGreater(result.timings["rerank_ms"], 0)
        self.assertGreater(result.query.time_rerank_ms, 0)
        # two of four named: the other two follow in fused order (below top_k here)
        self.assertEqual(result.query.model_steps, "rerank: partial (missing 2)")
        self.assertEqual(len(self.chat_requests()), 2, "one rerank request, one answer")

    def test_rerank_with_the_standins_rule(self):
        result = self.agent._ask(QUESTION, settings=self.settings(rerank=True, rerank_depth=5))
        self.assertEqual(result.retrieved_ids[0], "lb-sz-01")
        self.assertEqual(result.status, "beantwortet")
        self.assertEqual(result.steps["rerank"]["status"], "ok")

    def test_garbage_or_http_500_keeps_the_fused_order_and_the_answer(self):
        fused = self.agent._ask(QUESTION, settings=self.settings(), log=False).retrieved_ids
        for fault in ("garbage", "500"):
            with self.subTest(fault=fault):
                self.standin.reset()
                if fault == "garbage":
                    self.standin.script_chat(["Die beste Quelle ist die erste."])
                else:
                    self.standin.set_fault("500", paths=["/api/chat"], times=1)
                with mute_logger("odoo.addons.pv_kb.lib.search.rerank", *QUIET):
                    result = self.agent._ask(QUESTION, settings=self.settings(rerank=True))
                self.assertEqual(result.retrieved_ids, fused)
                self.assertEqual(result.status, "beantwortet", result.answer)
                self.assertIn("lb-sz-01", result.cited_ids)
                self.assertEqual(result.steps["rerank"]["status"], "fallback")
                self.assertTrue(result.query.model_steps.startswith("rerank: fallback ("), result.query.model_steps)

    def test_evaluation_measures_with_rerank_and_rewrite(self):
        from odoo.addons.pv_kb.lib.evaluation.goldset import GoldQuestion
        gold = [GoldQuestion(id="q1", question=QUESTION, expected_ids=["lb-sz-01"], kind="fact"),
                GoldQuestion(id="q2", question="Was gilt beim Weihnachtsgeld?", expected_ids=["lb-sz-01"],
                             kind="paraphrase")]
        report = self.env["pv.kb.evaluator"]._run(gold, modes=("hybrid",), k=2,
                                                  settings=self.settings(rerank=True, query_rewrite=True))
        latency = report["modes"]["hybrid"]["latency"]
        self.assertEqual(latency["Reranking (Chat-Modell)"]["n"], 2)
        self.assertEqual(latency["Query-Rewriting (Chat-Modell)"]["n"], 2)
        self.assertEqual(len(self.rerank_requests()), 2)
        # the first question has no colloquial word: the stand-in gives it back, the original is searched
        self.assertEqual(report["modes"]["hybrid"]["step_fallbacks"], {"Query-Rewriting (Chat-Modell)": {"echo": 1}})
        self.assertEqual(report["settings"]["rerank"], True)
        self.assertEqual(report["modes"]["hybrid"]["retrieval"]["overall"]["hit@1"], 1.0)


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_agent")
class TestQueryRewrite(StepsCase):

    def test_retrieval_searches_the_rewrite_and_the_prompt_keeps_the_question(self):
        question = "Was gilt beim Weihnachtsgeld?"
        result = self.agent._ask(question, settings=self.settings(query_rewrite=True))
        rewrite = result.steps["rewrite"]["query"]
        self.assertEqual(rewrite, "Was gilt beim Weihnachtsremuneration Sonderzahlung")
        self.assertEqual(result.retrieval.query, rewrite)
        embedded = [r["texts"] for r in self.standin.requests_log if r["path"] == "/api/embed"]
        self.assertIn([rewrite], embedded, "the query embedding is of the rewrite")
        self.assertNotIn([question], embedded)
        self.assertEqual(result.retrieved_ids[0], "lb-sz-01")
        answer_prompt = self.chat_requests()[-1]["texts"][-1]
        self.assertIn(f"<frage>\n{question}\n</frage>", answer_prompt)
        self.assertNotIn("Weihnachtsremuneration Sonderzahlung\n</frage>", answer_prompt)
        self.assertEqual((result.query.question, result.query.rewritten_query), (question, rewrite))
        self.assertGreater(result.query.time_rewrite_ms, 0)

    def test_a_failing_rewrite_searches_the_original(self):
        self.standin.set_fault("500", paths=["/api/chat"], times=1)
        with mute_logger("odoo.addons.pv_kb.lib.search.rewrite", *QUIET):
            result = self.agent._ask(QUESTION, settings=self.settings(query_rewrite=True))
        self.assertEqual(result.retrieval.query, QUESTION)
        self.assertEqual(result.steps["rewrite"]["status"], "fallback")
        self.assertEqual(result.status, "beantwortet")
        self.assertFalse(result.query.rewritten_query)

    def test_rewrite_off_sends_no_rewrite_request(self):
        self.agent._ask(QUESTION, settings=self.settings())
        self.assertFalse([r for r in self.chat_requests() if "suchanfrage" in json.dumps(r.get("format_schema") or {})])


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_http")
class TestStepsInTheStream(StepsCase, HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        new_test_user(cls.env, "kb_steps_user", groups="pv_kb.group_pv_kb_user")

    def test_the_stream_holds_no_cursor_during_the_model_steps(self):
        """The worker's cursors take the registry's test lock (odoo.tests: TestCursor): owned by the worker thread
        while one is open. Recorded in the model calls of both steps, and in step 1 as the probe's control."""
        self.set_settings(rerank="True", query_rewrite="True", top_k=2)
        owned = {"steps": [], "build": []}
        real_chat_text, real_build = stages.chat_text, PvKbAgent._build

        def chat_text(*args, **kw):
            chat = real_chat_text(*args, **kw)

            def probe(messages, schema):
                owned["steps"].append((next(iter(schema["properties"])), _registry_test_lock._is_owned()))
                return chat(messages, schema)
            return probe

        def build(self_, *args, **kw):
            owned["build"].append(_registry_test_lock._is_owned())
            return real_build(self_, *args, **kw)

        self.authenticate("kb_steps_user", "kb_steps_user")
        page = self.url_open("/odoo", timeout=30).text
        csrf = page.split('csrf_token: "', 1)[1].split('"', 1)[0]
        with patch.object(stages, "chat_text", chat_text), patch.object(PvKbAgent, "_build", build):
            response = self.url_open("/pv_kb/ask/stream", data=json.dumps({"question": QUESTION, "csrf_token": csrf}),
                                     headers={"Content-Type": "application/json"}, timeout=60)
        events = [json.loads(line) for line in response.text.splitlines() if line.strip()]
        events = [e for e in events if e["type"] != "ping"]
        self.assertEqual(owned["build"], [True], "the probe sees the cursor of step 1")
        self.assertEqual(owned["steps"], [("suchanfrage", False), ("reihenfolge", False)])
        final = events[-1]
        self.assertEqual(final["type"], "final", events)
        self.assertEqual(final["status"], "beantwortet")
        self.assertIn("rerank_ms", final["timings"])
        self.assertIn("rewrite_ms", final["timings"])
        meta = next(e for e in events if e["type"] == "meta")
        self.assertEqual(len(meta["retrieved"]), 2, "the panel lists the reranked top_k, not the depth")
        self.assertEqual(meta["retrieved"][0]["kb_id"], "lb-sz-01")
