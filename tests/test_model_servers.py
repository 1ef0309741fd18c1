"""Model servers end to end: each client type answers a question, several chat servers fail over, a rerank server
orders the entries, the API key stays secret and the personal-data gate holds for every endpoint."""
import json
import logging
import time

from odoo.tests import tagged
from odoo.tools import mute_logger

from odoo.addons.pv_kb.lib.llm import servers as model_servers

from .common import StandInCase
from .test_agent import QUIET, agent_entries

QUESTION = "Wie hoch ist der Freibetrag für Sonderzahlungen?"
CHAT_PATHS = ("/api/chat", "/v1/chat/completions")
QUIET_SERVERS = QUIET + ("odoo.addons.pv_kb.lib.llm.servers", "odoo.addons.pv_kb.lib.llm.openai_client",
                         "odoo.addons.pv_kb.lib.search.rerank", "odoo.addons.pv_kb.lib.answer.respond")


class ServersCase(StandInCase):
    server_type = "ollama"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.set_settings(server_type=cls.server_type)
        cls.load_entries(agent_entries(), "servers")
        cls.agent = cls.env["pv.kb.agent"]

    def setUp(self):
        super().setUp()
        model_servers.reset_health()

    def settings(self, **overrides):
        # value questions answered from the fact table never reach a model: these tests are about the model
        return self.env["pv.kb.settings"]._get(dict({"top_k": 2, "fact_answers": False}, **overrides))

    def chat_log(self, standin=None):
        return [r for r in (standin or self.standin).requests_log if r["path"] in CHAT_PATHS]

    def second_standin(self):
        from odoo.addons.pv_kb.testing.standin import OllamaStandIn
        other = OllamaStandIn(embed_models=dict(self.embed_models), request_overhead_ms=0).start()
        self.addCleanup(other.stop)
        return other


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_agent")
class TestOllamaServerEndToEnd(ServersCase):
    server_type = "ollama"
    paths = {"/api/embed", "/api/chat"}

    def test_a_question_is_answered_with_citations_through_this_client(self):
        result = self.agent._ask(QUESTION, settings=self.settings())
        self.assertEqual(result.status, "beantwortet", result.answer)
        self.assertIn("lb-sz-01", result.cited_ids)
        self.assertIn("€ 620", result.answer)
        self.assertEqual(result.query.server, self.standin.url, "the question log names the server")
        self.assertEqual({r["path"] for r in self.standin.requests_log}, self.paths)
        self.assertGreater(result.query.prompt_tokens, 0)

    def test_the_connection_test_works_for_this_server_type(self):
        settings = self.env["res.config.settings"].create({})
        params = settings.action_pv_kb_test_connection()["params"]
        self.assertEqual(params["type"], "success", params["message"])
        self.assertIn(self.standin.url, params["message"])
        self.assertIn("1024", params["message"])


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_agent")
class TestOpenAIServerEndToEnd(TestOllamaServerEndToEnd):
    server_type = "openai"
    paths = {"/v1/embeddings", "/v1/chat/completions"}

    def test_structured_answers_send_a_json_schema(self):
        result = self.agent._ask(QUESTION, settings=self.settings(answer_mode="structured"))
        self.assertEqual(result.status, "beantwortet", result.answer)
        [request] = self.chat_log()
        self.assertEqual(request["response_format"]["type"], "json_schema")
        self.assertIn("lb-sz-01", result.cited_ids)


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_agent")
class TestFailover(ServersCase):
    server_type = "openai"

    def test_the_second_chat_server_answers_when_the_first_is_down_hangs_or_fails(self):
        second = self.second_standin()
        settings = self.settings(chat_servers=f"openai {self.standin.url}\nollama {second.url}",
                                 answer_time_limit=12)
        for fault in ("down", "hang", "500"):
            with self.subTest(fault=fault):
                model_servers.reset_health()
                self.standin.reset()
                second.reset()
                self.standin.set_fault(fault, seconds=30, paths=["/v1/chat/completions"])
                chunks = []
                started = time.monotonic()
                with mute_logger(*QUIET_SERVERS):
                    result = self.agent._ask(QUESTION, settings=settings, on_delta=chunks.append)
                elapsed = time.monotonic() - started
                self.assertEqual(result.status, "beantwortet", result.answer)
                self.assertLess(elapsed, 12, "within the answer time limit")
                self.assertTrue(chunks, "the answer streamed")
                self.assertEqual(result.query.server, second.url)
                self.assertEqual(len(self.chat_log(second)), 1)
        # the connection test shows the failover state this process saw
        form = self.env["res.config.settings"].create(
            {"pv_kb_chat_servers": f"openai {self.standin.url}\nollama {second.url}"})
        params = form.action_pv_kb_test_connection()["params"]
        self.assertIn(f"{self.standin.url}: 1 failures and ", params["message"])

    def test_all_chat_servers_down_gives_the_emergency_answer(self):
        second = self.second_standin()
        self.standin.set_fault("down", paths=["/v1/chat/completions"])
        second.set_fault("500")
        with mute_logger(*QUIET_SERVERS):
            result = self.agent._ask(QUESTION, settings=self.settings(
                chat_servers=f"openai {self.standin.url}\nollama {second.url}"))
        self.assertEqual(result.status, "notbetrieb", result.answer)
        self.assertIn("lb-sz-01", result.answer)
        self.assertFalse(result.query.server)

    def test_the_connection_test_refuses_embedding_servers_of_different_models(self):
        from odoo.addons.pv_kb.testing.standin import OllamaStandIn
        other = OllamaStandIn(embed_models={"hash-embed": "hash:256"}, request_overhead_ms=0).start()
        self.addCleanup(other.stop)
        form = self.env["res.config.settings"].create(
            {"pv_kb_embedding_servers": f"openai {self.standin.url}\nollama {other.url}"})
        params = form.action_pv_kb_test_connection()["params"]
        self.assertEqual(params["type"], "warning", params["message"])
        self.assertIn("verschiedene Dimensionen", params["message"])
        same = self.second_standin()
        form = self.env["res.config.settings"].create(
            {"pv_kb_embedding_servers": f"openai {self.standin.url}\nollama {same.url}"})
        params = form.action_pv_kb_test_connection()["params"]
        self.assertEqual(params["type"], "success", params["message"])
        self.assertIn(same.url, params["message"])


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_agent")
class TestRerankServer(ServersCase):

    def rerank_settings(self, url=None, **overrides):
        return self.settings(rerank_servers=f"openai {url or self.standin.url}", rerank_model="standin-rerank",
                             rerank_depth=5, **overrides)

    def test_off_by_default(self):
        self.assertEqual(self.env["pv.kb.settings"]._get()["rerank_servers"], "")
        self.agent._ask(QUESTION, settings=self.settings())
        self.assertFalse([r for r in self.standin.requests_log if r["path"] == "/v1/rerank"])

    def test_the_order_follows_the_servers_scores(self):
        from odoo.addons.pv_kb.testing.standin.openai_api import rerank_score
        question = "Wie lange wird das Entgelt im Krankenstand fortgezahlt?"
        result = self.agent._ask(question, settings=self.rerank_settings())
        [request] = [r for r in self.standin.requests_log if r["path"] == "/v1/rerank"]
        query, documents = request["texts"][0], request["texts"][1:]
        self.assertEqual(query, question)
        scores = [rerank_score(query, d) for d in documents]
        titles = self._titles()
        ids = [next(kb_id for title, kb_id in titles.items() if d.startswith(title + ":")) for d in documents]
        expected = [ids[n] for n in sorted(range(len(ids)), key=lambda n: (-scores[n], n))]
        self.assertGreater(len(set(scores)), 1, "the scores tell the entries apart")
        self.assertEqual(result.retrieved_ids, expected[:2])
        self.assertEqual(result.retrieved_ids[0], "lb-efz-01")
        self.assertEqual(result.steps["rerank"]["status"], "ok")
        self.assertEqual(result.status, "beantwortet", result.answer)
        self.assertFalse(self._chat_rerank_requests(), "no chat model rerank when a rerank server is set")

    def _titles(self):
        return {e.name: e.kb_id for e in self.env["pv.kb.entry"].search([])}

    def _chat_rerank_requests(self):
        return [r for r in self.chat_log() if "<kandidaten>" in (r.get("texts") or [""])[-1]]

    def test_a_rerank_server_that_is_down_keeps_the_fused_order_and_says_so(self):
        fused = self.agent._ask(QUESTION, settings=self.settings(rerank_depth=5), log=False).retrieved_ids
        self.standin.set_fault("500", paths=["/v1/rerank"])
        with self.assertLogs("odoo.addons.pv_kb.lib.search.rerank", logging.WARNING) as logs, \
                mute_logger("odoo.addons.pv_kb.lib.llm.servers"):
            result = self.agent._ask(QUESTION, settings=self.rerank_settings())
        self.assertTrue(any("fused order kept" in line for line in logs.output))
        self.assertEqual(result.retrieved_ids, fused)
        self.assertEqual(result.status, "beantwortet", result.answer)
        self.assertTrue(result.query.model_steps.startswith("rerank: fallback (server"), result.query.model_steps)

    def test_the_evaluation_reports_latency_and_fallbacks(self):
        from odoo.addons.pv_kb.lib.evaluation.goldset import GoldQuestion
        gold = [GoldQuestion(id="q1", question=QUESTION, expected_ids=["lb-sz-01"], kind="fact")]
        report = self.env["pv.kb.evaluator"]._run(gold, modes=("hybrid",), k=2, settings=self.rerank_settings())
        self.assertEqual(report["modes"]["hybrid"]["latency"]["Reranking (Rerank-Server)"]["n"], 1)
        self.standin.set_fault("500", paths=["/v1/rerank"])
        with mute_logger(*QUIET_SERVERS):
            report = self.env["pv.kb.evaluator"]._run(gold, modes=("hybrid",), k=2, settings=self.rerank_settings())
        self.assertEqual(report["modes"]["hybrid"]["step_fallbacks"],
                         {"Reranking (Rerank-Server)": {"server: OllamaBadResponse": 1}})


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_agent")
class TestSecretsAndGate(ServersCase):
    server_type = "openai"
    SECRET = "sk-live-7a1c0ffee"

    def test_the_api_key_is_in_no_log_message_or_snapshot(self):
        self.set_settings(api_key=self.SECRET)
        form = self.env["res.config.settings"].create({})
        self.assertFalse(form.pv_kb_api_key, "a stored key is never shown")
        self.assertTrue(form.pv_kb_api_key_stored)
        self.standin.set_fault("500", paths=["/v1/chat/completions"])
        with self.assertLogs("odoo.addons.pv_kb", logging.DEBUG) as logs:
            params = form.action_pv_kb_test_connection()["params"]
            result = self.agent._ask(QUESTION, settings=self.settings())
        self.assertEqual(result.status, "notbetrieb")
        settings = self.env["pv.kb.settings"]._get()
        texts = ["\n".join(logs.output), params["message"], result.answer, result.notice or "",
                 result.query.settings_json, result.query.notice or "", "\n".join(result.violations),
                 json.dumps(self.env["pv.kb.settings"]._snapshot(settings))]
        for text in texts:
            self.assertNotIn(self.SECRET, text)
        self.assertTrue(all(r["authorization"] == "Bearer" for r in self.standin.requests_log),
                        "the key went out as a bearer token")

    def test_only_system_administrators_set_the_key(self):
        from odoo.tests import new_test_user
        manager = new_test_user(self.env, "kbmanager", groups="base.group_user,pv_kb.group_pv_kb_manager")
        self.assertNotIn("pv_kb_api_key", self.env["res.config.settings"].with_user(manager).fields_get())
        form = self.env["res.config.settings"].create({"pv_kb_api_key": self.SECRET})
        form.execute()
        self.assertEqual(self.env["ir.config_parameter"].sudo().get_param("pv_kb.api_key"), self.SECRET)
        self.env["res.config.settings"].create({"pv_kb_api_key_clear": True}).execute()
        self.assertFalse(self.env["ir.config_parameter"].sudo().get_param("pv_kb.api_key"))

    def test_no_endpoint_sees_a_personal_span(self):
        second = self.second_standin()
        both = f"openai {self.standin.url}\nollama {second.url}"
        settings = self.settings(chat_servers=both, embedding_servers=both,
                                 rerank_servers=f"tei {second.url}\nopenai {self.standin.url}",
                                 rerank_model="standin-rerank", rerank_depth=5)
        question = "Frau Mag. Huber (SV-Nr. 1237 010180, IBAN AT61 1904 3002 3457 3201) fragt: Freibetrag Sonderzahlungen?"
        for _round in range(2):       # the chat servers take turns
            with mute_logger(*QUIET_SERVERS):
                result = self.agent._ask(question, settings=settings)
            self.assertEqual(result.status, "beantwortet", result.answer)
        log = self.standin.requests_log + second.requests_log
        self.assertTrue({"/v1/embeddings", "/v1/chat/completions", "/api/chat", "/rerank"}
                        <= {r["path"] for r in log}, {r["path"] for r in log})
        sent = json.dumps([r.get("texts") for r in log], ensure_ascii=False)
        for span in ("Huber", "1237 010180", "AT61", "3457 3201"):
            self.assertNotIn(span, sent)
        self.assertIn("[PERSON_1]", sent)
