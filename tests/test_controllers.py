import json
import time
from unittest.mock import patch

from odoo.tests import HttpCase, new_test_user, tagged
from odoo.tests.common import JsonRpcException, release_test_lock

from odoo.addons.pv_kb.models import pv_kb_answer_job as answer_job

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

    def ask_polled(self, question):
        """The stream route as a prefork HTTP worker serves it: it starts the answer and returns at once."""
        body = {"question": question, "csrf_token": self.csrf_token()}
        with patch.object(answer_job, "how_served", return_value="polled"):
            response = self.url_open("/websocket/pv_kb/ask/stream", data=json.dumps(body),
                                     headers={"Content-Type": "application/json"}, timeout=60)
        self.assertEqual(response.status_code, 200)
        return [json.loads(line) for line in response.text.splitlines() if line.strip()]

    def poll(self, job_id, until, seconds=60):
        """Poll the answer until ``until(state)``; the answer's threads get the test cursor in between."""
        for _ in range(int(seconds / 0.05)):
            state = self.make_jsonrpc_request("/pv_kb/ask/poll", {"job_id": job_id})
            if until(state):
                return state
            with release_test_lock():
                time.sleep(0.05)
        self.fail(f"the polled answer never got there: {state}")

    def wait_for_free_slots(self):
        for _ in range(300):
            with release_test_lock():
                time.sleep(0.05)
            self.env.cr.execute("SELECT count(*) FROM pv_kb_answer_slot")
            if not self.env.cr.fetchone()[0]:
                return
        self.fail("the answer did not free its slot")

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

    def test_the_live_final_event_and_the_reloaded_conversation_show_the_same_turn(self):
        """One serialiser (pv.kb.query._turn) feeds the stream's last event and the history: quotes, timings
        and the answer mode included."""
        self.authenticate("kb_http_user", "kb_http_user")
        for answer_mode, facts in (("structured", False), ("text", False), ("text", True)):
            with self.subTest(answer_mode=answer_mode, facts=facts):
                self.set_settings(answer_mode=answer_mode, fact_answers=str(facts))
                _response, events = self.stream("Wie hoch ist der Freibetrag für Sonderzahlungen?")
                final = events[-1]
                self.assertEqual(final["type"], "final", final)
                # an answer from the facts has no model answer mode
                self.assertEqual((final["answer_mode"], final["from_facts"]),
                                 (None, True) if facts else (answer_mode, False), final)
                live = {k: v for k, v in final.items() if k not in ("type", "pii")}
                history = self.make_jsonrpc_request("/pv_kb/conversation",
                                                    {"conversation_id": final["conversation_id"]})
                self.assertEqual(history["turns"], [live])
                self.assertGreater(live["timings"]["total_ms"], 0)
                self.assertEqual(live["pii_count"], final["pii"]["count"])
                if answer_mode == "structured" or facts:
                    self.assertTrue(live["quotes"], "the passages the statements rest on")
        self.set_settings(fact_answers="False")

    def test_the_values_reach_the_client_before_the_models_first_token(self):
        """An answer from the facts with the model's explanation after the values: the fact lines are the first
        text of the stream and reach the client while the model has not written its first token (the stand-in
        holds it back); the explanation follows below them. Streamed, and polled from a job row."""
        self.authenticate("kb_http_user", "kb_http_user")
        self.set_settings(fact_answers="True", fact_explain="True")
        question = "Wie hoch ist der Freibetrag für Sonderzahlungen?"
        self.standin.set_chat_timing(first_token_ms=1500, token_ms=20)
        body = {"question": question, "csrf_token": self.csrf_token()}
        received = []   # (time the client read it, event)
        response = self.opener.post(self.base_url() + "/pv_kb/ask/stream", data=json.dumps(body),
                                    headers={"Content-Type": "application/json"}, timeout=60, stream=True)
        with release_test_lock():    # the answer's thread needs the test cursor for its last step meanwhile
            for line in response.iter_lines():
                if line.strip():
                    received.append((time.time(), json.loads(line)))
        events = [e for _t, e in received if e["type"] != "ping"]
        self.assertEqual((events[0]["type"], events[-1]["type"]), ("meta", "final"), events)
        deltas = [(t, e["text"]) for t, e in received if e["type"] == "delta"]
        facts_at, facts = deltas[0]
        final = events[-1]
        self.assertTrue(final["from_facts"], final)
        self.assertTrue(facts.startswith("Aus den Kernwerten der Wissensbasis:"), facts)
        self.assertIn("[lb-sz-01]", facts)
        first_tokens = self.standin.first_token_times
        self.assertEqual(len(first_tokens), 1, "the model wrote its explanation")
        self.assertLess(facts_at, first_tokens[0], "the values reached the client before the model's first token")
        # the explanation follows below the values, which stay the head of the answer
        self.assertGreater(len(deltas), 1, "the model's text came as deltas of its own")
        self.assertGreater(len(final["answer"]), len(facts))
        self.assertTrue(final["answer"].startswith(facts), final["answer"])
        self.wait_for_free_slots()

        # a prefork HTTP worker: the job row holds the values before the model's first token
        self.standin.reset()
        self.standin.set_chat_timing(first_token_ms=1500, token_ms=20)
        lines = self.ask_polled(question)
        state = self.poll(lines[0]["job_id"], lambda s: any(
            e["type"] == "snapshot" and e["text"].startswith("Aus den Kernwerten") for e in s["events"]))
        seen_at = time.time()
        self.assertNotIn("final", [e["type"] for e in state["events"]])
        done = self.poll(lines[0]["job_id"], lambda s: s["done"])
        self.assertEqual(done["events"][-1]["type"], "final")
        first_tokens = self.standin.first_token_times
        self.assertEqual(len(first_tokens), 1, "the model wrote its explanation")
        self.assertLess(seen_at, first_tokens[0], "the panel had the values before the model's first token")
        self.wait_for_free_slots()
        self.set_settings(fact_answers="False", fact_explain="False")

    def test_the_stream_route_under_websocket_streams_and_is_counted(self):
        """/websocket/…: the prefix Odoo's documented proxy configuration sends to the gevent worker; in the
        threaded server it streams as well."""
        self.authenticate("kb_http_user", "kb_http_user")
        body = {"question": "Wie hoch ist der Freibetrag für Sonderzahlungen?", "csrf_token": self.csrf_token()}
        response = self.url_open("/websocket/pv_kb/ask/stream", data=json.dumps(body),
                                 headers={"Content-Type": "application/json"}, timeout=60)
        events = [json.loads(line) for line in response.text.splitlines() if line.strip()]
        kinds = [e["type"] for e in events if e["type"] != "ping"]
        self.assertEqual((kinds[0], kinds[-1]), ("meta", "final"))
        self.assertIn("delta", kinds)
        self.assertEqual(self.env["pv.kb.query"].browse(events[-1]["query_id"]).served_by, "threaded")
        self.assertEqual(self.url_open("/websocket/pv_kb/served").json(), {"served": "threaded"})

    def test_an_answer_on_an_http_worker_is_polled_not_streamed(self):
        self.authenticate("kb_http_user", "kb_http_user")
        lines = self.ask_polled("Wie hoch ist der Freibetrag für Sonderzahlungen?")
        self.assertEqual([e["type"] for e in lines], ["poll"], "the request returns at once, nothing streamed")
        state = self.poll(lines[0]["job_id"], lambda state: state["done"])
        final = state["events"][-1]
        self.assertEqual((final["type"], final["status"]), ("final", "beantwortet"), state)
        kinds = [e["type"] for e in state["events"]]
        self.assertEqual(kinds, ["meta", "snapshot", "final"])
        self.assertEqual(state["events"][1]["text"].strip(), final["answer"], "the text so far, whole")
        query = self.env["pv.kb.query"].browse(final["query_id"])
        self.assertEqual(query.served_by, "polled")
        history = self.make_jsonrpc_request("/pv_kb/conversation", {"conversation_id": final["conversation_id"]})
        self.assertEqual(history["turns"], [{k: v for k, v in final.items() if k not in ("type", "pii")}])
        self.wait_for_free_slots()
        # the settings page warns, with the fix
        form = self.env["res.config.settings"].create({})
        self.assertIn("/websocket", form.pv_kb_serving_warning)
        self.assertIn("1 of", form.pv_kb_serving_warning)
        # and "Verbindung testen" reports it (a warning, not a success)
        params = form.action_pv_kb_test_connection()["params"]
        self.assertEqual(params["type"], "warning")
        self.assertIn(form.pv_kb_serving_warning, params["message"])
        # only its user may read or stop it
        self.authenticate("kb_http_outsider", "kb_http_outsider")
        for route in ("/pv_kb/ask/poll", "/pv_kb/ask/stop"):
            with self.subTest(route=route), self.assertRaises(JsonRpcException):
                self.make_jsonrpc_request(route, {"job_id": lines[0]["job_id"]})

    def test_stop_of_a_polled_answer_frees_the_model_request_within_a_second(self):
        self.authenticate("kb_http_user", "kb_http_user")
        self.standin.set_chat_timing(first_token_ms=200, token_ms=150)
        job_id = self.ask_polled("Wie hoch ist der Freibetrag für Sonderzahlungen?")[0]["job_id"]
        state = self.poll(job_id, lambda state: any(e.get("text") for e in state["events"]))
        self.assertFalse(state["done"])
        self.assertEqual(self.make_jsonrpc_request("/pv_kb/ask/stop", {"job_id": job_id}), {"ok": True})
        stopped = time.time()
        for _ in range(40):
            if self.standin.aborted_streams:
                break
            with release_test_lock():
                time.sleep(0.05)
        self.assertTrue(self.standin.aborted_streams, "the model request was closed")
        self.assertLess(self.standin.aborted_streams[0] - stopped, 1.0)
        state = self.poll(job_id, lambda state: state["done"])
        self.assertEqual(state["events"][-1]["status"], "abgebrochen")
        self.wait_for_free_slots()

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
        from odoo.addons.pv_kb.models.pv_kb_agent import PvKbAgent

        with patch.object(PvKbAgent, "_gate_question", side_effect=RuntimeError("boom")), \
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
