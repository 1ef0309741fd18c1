import json
import time

from odoo.tests import HttpCase, new_test_user, tagged
from odoo.tests.common import JsonRpcException, release_test_lock

from .common import StandInCase, batch_files
from .test_agent import agent_entries


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_http")
class TestChatEndpoints(StandInCase, HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env["pv.kb.importer"]._run(batch_files(agent_entries()), source_name="http")
        cls.set_settings(fact_answers="False")   # the streams under test are the model's (value questions)
        cls.env["pv.kb.chunk"]._embed_pending()
        cls.kb_user = new_test_user(cls.env, "kb_http_user", groups="pv_kb.group_pv_kb_user")
        cls.outsider = new_test_user(cls.env, "kb_http_outsider", groups="base.group_user")

    def stream(self, question, conversation_id=None, csrf=True):
        body = {"question": question, "conversation_id": conversation_id}
        if csrf:
            body["csrf_token"] = self.csrf_token()
        response = self.url_open("/pv_kb/ask/stream", data=json.dumps(body),
                                 headers={"Content-Type": "application/json"}, timeout=60)
        if response.status_code != 200:
            return response, []
        events = [json.loads(line) for line in response.text.splitlines() if line.strip()]
        return response, [e for e in events if e["type"] != "ping"]

    def csrf_token(self):
        """The token the web client gets (odoo.csrf_token in the backend page)."""
        page = self.url_open("/odoo", timeout=30).text
        return page.split('csrf_token: "', 1)[1].split('"', 1)[0]

    def test_stream_meta_deltas_final_and_log(self):
        self.authenticate("kb_http_user", "kb_http_user")
        response, events = self.stream("Wie hoch ist der Freibetrag für Sonderzahlungen?")
        self.assertEqual(response.status_code, 200)
        self.assertTrue(response.headers["Content-Type"].startswith("application/x-ndjson"))
        kinds = [e["type"] for e in events]
        self.assertEqual(kinds[0], "meta")
        self.assertEqual(kinds[-1], "final")
        self.assertIn("delta", kinds)
        final = events[-1]
        streamed = "".join(e["text"] for e in events if e["type"] == "delta")
        self.assertEqual(streamed.strip(), final["answer"])
        self.assertEqual(final["status"], "beantwortet")
        cite = next(c for c in final["citations"] if c["kb_id"] == "lb-sz-01")
        entry = self.env["pv.kb.entry"].search([("kb_id", "=", "lb-sz-01")])
        self.assertEqual((cite["entry_id"], cite["stand"]), (entry.id, "2025-01"))
        query = self.env["pv.kb.query"].browse(final["query_id"])
        self.assertEqual(query.user_id, self.kb_user)
        self.assertEqual(query.conversation_id.id, final["conversation_id"])
        # the conversation continues and can be listed and reopened
        _response, events = self.stream("Und der Steuersatz?", final["conversation_id"])
        self.assertEqual(events[-1]["conversation_id"], final["conversation_id"])
        listed = self.make_jsonrpc_request("/pv_kb/conversations", {})
        self.assertEqual(listed[0]["id"], final["conversation_id"])
        history = self.make_jsonrpc_request("/pv_kb/conversation", {"conversation_id": final["conversation_id"]})
        self.assertEqual([t["question"] for t in history["turns"]],
                         ["Wie hoch ist der Freibetrag für Sonderzahlungen?", "Und der Steuersatz?"])
        self.assertEqual(self.make_jsonrpc_request("/pv_kb/feedback", {"query_id": final["query_id"],
                                                                        "rating": "up"}), {"ok": True})
        self.assertEqual(query.feedback, "up")

    def test_no_blocking_ask_route(self):
        """The blocking JSON route held a database connection for the whole model call: gone."""
        self.authenticate("kb_http_user", "kb_http_user")
        response = self.url_open("/pv_kb/ask", data=json.dumps({"params": {"question": "Freibetrag?"}}),
                                 headers={"Content-Type": "application/json"})
        self.assertEqual(response.status_code, 404)

    def test_empty_question_and_junk_ids_are_bad_requests(self):
        self.authenticate("kb_http_user", "kb_http_user")
        response, _events = self.stream("   ")
        self.assertEqual(response.status_code, 400)
        for junk in ("abc", "1e9", -3, 2**40, [1]):
            with self.subTest(junk=junk):
                response, _events = self.stream("Freibetrag?", junk)
                self.assertEqual(response.status_code, 400)
                with self.assertRaises(JsonRpcException) as caught:
                    self.make_jsonrpc_request("/pv_kb/conversation", {"conversation_id": junk})
                self.assertIn("BadRequest", str(caught.exception))

    def test_feedback_checks_rating_and_comment_length(self):
        self.authenticate("kb_http_user", "kb_http_user")
        _response, events = self.stream("Wie hoch ist der Freibetrag für Sonderzahlungen?")
        query_id = events[-1]["query_id"]
        for params in ({"rating": "meh"}, {"rating": "down", "comment": "x" * 2001}, {"rating": "down", "comment": 5}):
            with self.subTest(params=params), self.assertRaises(JsonRpcException):
                self.make_jsonrpc_request("/pv_kb/feedback", dict(params, query_id=query_id))
        self.make_jsonrpc_request("/pv_kb/feedback", {"query_id": query_id, "rating": "down", "comment": "x" * 2000})
        self.assertEqual(len(self.env["pv.kb.query"].browse(query_id).feedback_comment), 2000)

    def test_busy_when_the_users_limit_is_reached_and_slots_are_freed(self):
        self.set_settings(max_answers_per_user=1)
        self.authenticate("kb_http_user", "kb_http_user")
        Slot = self.env["pv.kb.answer.slot"].sudo()
        Slot._acquire(self.kb_user.id, self.env["pv.kb.settings"]._get())
        response, _events = self.stream("Wie hoch ist der Freibetrag für Sonderzahlungen?")
        self.assertEqual(response.status_code, 429)
        self.assertIn("busy", response.json()["message"])
        self.assertFalse(self.env["pv.kb.query"].search([("user_id", "=", self.kb_user.id)]), "nothing was asked")
        # a lease that has run out does not block (a process died while answering)
        self.env.cr.execute("UPDATE pv_kb_answer_slot SET expires_at = now() - interval '1 minute'")
        response, events = self.stream("Wie hoch ist der Freibetrag für Sonderzahlungen?")
        self.assertEqual((response.status_code, events[-1]["type"]), (200, "final"))
        self.env.cr.execute("SELECT count(*) FROM pv_kb_answer_slot")
        self.assertEqual(self.env.cr.fetchone()[0], 0, "the answer freed its slot")

    def test_a_stream_whose_client_left_is_cancelled_within_a_second(self):
        self.authenticate("kb_http_user", "kb_http_user")
        self.standin.set_chat_timing(first_token_ms=200, token_ms=150)
        body = {"question": "Wie hoch ist der Freibetrag für Sonderzahlungen?", "csrf_token": self.csrf_token()}
        response = self.opener.post(self.base_url() + "/pv_kb/ask/stream", data=json.dumps(body),
                                    headers={"Content-Type": "application/json"}, timeout=30, stream=True)
        lines = response.iter_lines()
        for line in lines:
            if json.loads(line)["type"] == "delta":
                break
        response.close()
        left = time.time()
        for _ in range(40):
            if self.standin.aborted_streams:
                break
            time.sleep(0.05)
        self.assertTrue(self.standin.aborted_streams, "the model request was closed")
        self.assertLess(self.standin.aborted_streams[0] - left, 1.0)
        # the worker logs the stopped answer and frees its slot (wait for it: it must not outlive this test);
        # it can open its cursors only while this thread lets go of the test lock
        for _ in range(300):
            with release_test_lock():
                time.sleep(0.05)
            self.env.cr.execute("SELECT count(*) FROM pv_kb_answer_slot")
            if not self.env.cr.fetchone()[0]:
                break
        query = self.env["pv.kb.query"].search([("user_id", "=", self.kb_user.id)])
        self.assertEqual(query.status, "abgebrochen")

    def test_stream_requires_csrf_token(self):
        self.authenticate("kb_http_user", "kb_http_user")
        response, _events = self.stream("Freibetrag?", csrf=False)
        self.assertEqual(response.status_code, 400)

    def test_stream_reports_a_failing_worker_with_the_agents_message(self):
        from unittest.mock import patch

        from odoo.tools import mute_logger

        self.authenticate("kb_http_user", "kb_http_user")
        with patch("odoo.addons.pv_kb.controllers.main._conversation", side_effect=RuntimeError("boom")), \
                mute_logger("odoo.addons.pv_kb.controllers.main"):
            _response, events = self.stream("Wie hoch ist der Freibetrag für Sonderzahlungen?")
        self.assertEqual(events, [{"type": "error", "message": (
            "The question could not be answered because of an internal error. Please try again later; "
            "if it happens again, tell your administrator.")}])

    def test_user_without_group_gets_access_errors(self):
        self.authenticate("kb_http_outsider", "kb_http_outsider")
        response, _events = self.stream("Freibetrag?")
        self.assertEqual(response.status_code, 403)
        with self.assertRaises(JsonRpcException) as caught:
            self.make_jsonrpc_request("/pv_kb/conversations", {})
        self.assertIn("Forbidden", str(caught.exception))

    def test_other_users_conversation_is_refused(self):
        other = self.env["pv.kb.conversation"].create({"name": "fremd", "user_id": self.outsider.id})
        self.authenticate("kb_http_user", "kb_http_user")
        response, _events = self.stream("Freibetrag?", other.id)
        self.assertEqual(response.status_code, 403)
        self.assertFalse(other.query_ids)
        with self.assertRaises(JsonRpcException):
            self.make_jsonrpc_request("/pv_kb/conversation", {"conversation_id": other.id})
