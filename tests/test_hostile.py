"""Hostile input against a running server: junk bodies and characters, floods, who may write the logs.

Each test names the attack it replays (docs/security.md, "Hostile inputs tried").
"""
import base64
import json
import os
from unittest.mock import patch

from odoo.exceptions import AccessError
from odoo.tests import HttpCase, TransactionCase, new_test_user, tagged
from odoo.tests.common import JsonRpcException
from odoo.tools import mute_logger

from .common import KbCase, StandInCase, batch_files, zip_bytes
from .test_agent import AgentCase, agent_entries

SECURITY_DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "security.md")
QUESTION = "Wie hoch ist der Freibetrag für Sonderzahlungen?"


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_http")
class TestJunkRequests(StandInCase, HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env["pv.kb.importer"]._run(batch_files(agent_entries()), source_name="hostile")
        cls.env["pv.kb.chunk"]._embed_pending()
        cls.kb_user = new_test_user(cls.env, "kb_junk_user", groups="pv_kb.group_pv_kb_user")

    def csrf_token(self):
        page = self.url_open("/odoo", timeout=30).text
        return page.split('csrf_token: "', 1)[1].split('"', 1)[0]

    def post(self, raw):
        return self.url_open("/pv_kb/ask/stream", data=raw, headers={"Content-Type": "application/json"},
                             timeout=60)

    def traces(self):
        Conversation = self.env["pv.kb.conversation"].sudo()
        return (self.env["pv.kb.query"].sudo().search_count([("user_id", "=", self.kb_user.id)]),
                Conversation.search_count([("user_id", "=", self.kb_user.id)]))

    def test_junk_bodies_are_400_never_500(self):
        self.authenticate("kb_junk_user", "kb_junk_user")
        bodies = {
            "deep array": b"[" * 100000 + b"]" * 100000,
            "deep object": b'{"a":' * 50000 + b"1" + b"}" * 50000,
            "deep question": b'{"question": ' + b"[" * 100000 + b"]" * 100000 + b"}",
            "not utf-8": b'{"question": "\xff\xfe"}',
            "not json": b"question=Freibetrag",
            "a list": b"[1, 2]",
            "too large": b'{"question": "' + b"a" * (400 * 1024) + b'"}',
        }
        for name, raw in bodies.items():
            with self.subTest(name), mute_logger("odoo.http"):
                response = self.post(raw)
                self.assertEqual(response.status_code, 400, response.text[:200])
                self.assertLess(len(response.content), 4096)
        self.assertEqual(self.traces(), (0, 0))
        # the JSON-RPC routes: Odoo parses their bodies; junk is an error answer, never a 500
        for raw in (b'{"params": ' + b"[" * 100000 + b"]" * 100000 + b"}", b"\xff\xfe", b"[1]"):
            with mute_logger("odoo.http"):
                response = self.url_open("/pv_kb/feedback", data=raw, headers={"Content-Type": "application/json"})
            self.assertLess(response.status_code, 500, response.text[:200])
            self.assertLess(len(response.content), 16384)

    def test_questions_with_characters_that_cannot_be_stored_are_refused_before_anything_is_written(self):
        self.authenticate("kb_junk_user", "kb_junk_user")
        token = self.csrf_token()
        # as JSON escapes (a raw control character is no valid JSON at all: 400 as well)
        for question in ("Freibetrag\\u0000?", "Freibetrag \\ud800?", "Freibetrag\\udfff", "Frei\ufffebetrag",
                         "Frei\\uffffbetrag", "x\\u001b[2J", "\\ufdd0", "\\u0085"):
            with self.subTest(question=question):
                raw = '{"question": "%s", "csrf_token": "%s"}' % (question, token)
                response = self.post(raw.encode("utf-8", "surrogatepass"))
                self.assertEqual(response.status_code, 400, response.text[:300])
                self.assertIn("not allowed", response.text)
        self.assertEqual(self.traces(), (0, 0), "no question logged, no conversation left behind")

    def test_a_failed_first_question_leaves_no_empty_conversation(self):
        self.authenticate("kb_junk_user", "kb_junk_user")
        token = self.csrf_token()
        with patch("odoo.addons.pv_kb.models.pv_kb_agent.PvKbAgent._log", side_effect=RuntimeError("boom")), \
                mute_logger("odoo.addons.pv_kb.controllers.main"):
            response = self.post(json.dumps({"question": QUESTION, "csrf_token": token}))
            events = [json.loads(line) for line in response.text.splitlines() if line.strip()]
        self.assertEqual(events[-1]["type"], "error")
        self.assertEqual(self.traces(), (0, 0))
        # a conversation that already holds questions stays when a later question fails
        response = self.post(json.dumps({"question": QUESTION, "csrf_token": token}))
        final = [json.loads(line) for line in response.text.splitlines() if line.strip()][-1]
        with patch("odoo.addons.pv_kb.models.pv_kb_agent.PvKbAgent._log", side_effect=RuntimeError("boom")), \
                mute_logger("odoo.addons.pv_kb.controllers.main"):
            self.post(json.dumps({"question": QUESTION, "csrf_token": token,
                                  "conversation_id": final["conversation_id"]}))
        self.assertEqual(self.traces(), (1, 1))

    def test_a_flood_of_questions_gets_429_with_a_message(self):
        self.set_settings(questions_per_minute=2)
        self.authenticate("kb_junk_user", "kb_junk_user")
        token = self.csrf_token()
        statuses = [self.post(json.dumps({"question": QUESTION, "csrf_token": token})).status_code for _ in range(2)]
        self.assertEqual(statuses, [200, 200])
        response = self.post(json.dumps({"question": QUESTION, "csrf_token": token}))
        self.assertEqual(response.status_code, 429)
        self.assertIn("last minute", response.json()["message"])
        self.assertEqual(self.traces()[0], 2)

    def test_feedback_with_a_nul_or_a_surrogate_is_refused(self):
        self.authenticate("kb_junk_user", "kb_junk_user")
        response = self.post(json.dumps({"question": QUESTION, "csrf_token": self.csrf_token()}))
        query_id = [json.loads(line) for line in response.text.splitlines() if line.strip()][-1]["query_id"]
        for comment in ("gut\x00", "gut\ud800"):
            with self.subTest(comment=comment), self.assertRaises(JsonRpcException) as caught:
                self.make_jsonrpc_request("/pv_kb/feedback", {"query_id": query_id, "rating": "down",
                                                               "comment": comment})
            self.assertIn("BadRequest", str(caught.exception))
        self.assertFalse(self.env["pv.kb.query"].browse(query_id).feedback)


# --------------------------------------------------------------------------- links in answers


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_agent")
class TestLinksInAnswers(AgentCase):

    def test_a_link_that_no_cited_block_holds_is_dropped_and_kept_in_the_log(self):
        self.standin.script_chat(["Der Freibetrag beträgt € 620 [lb-sz-01] (Stand 2025-01). Antrag: "
                                  "[hier klicken](https://evil.example/login) oder https://evil.example/x."])
        result = self.agent._ask("Wie hoch ist der Freibetrag für Sonderzahlungen?")
        self.assertNotIn("evil.example", result.answer)
        self.assertIn("hier klicken", result.answer)
        self.assertIn("https://evil.example/login", result.query.rejected_answer)
        self.assertIn("link_dropped (2)", result.violations)
        self.assertNotIn("evil", " ".join(result.violations))


# --------------------------------------------------------------------------- a flood of gap questions


@tagged("post_install", "-at_install", "pv_kb")
class TestGapBounds(StandInCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.load_entries(agent_entries(), "gaps")

    def embedded_texts(self):
        return sum(r.get("n_inputs") or 0 for r in self.standin.requests_log if r.get("path") == "/api/embed")

    def test_a_run_takes_a_window_and_a_cap_and_embeds_each_question_once(self):
        Query, Gap = self.env["pv.kb.query"], self.env["pv.kb.gap"]
        user = new_test_user(self.env, "gap_flooder", groups="pv_kb.group_pv_kb_user")
        words = ["Urlaub", "Dienstwagen", "Zulage", "Karenz", "Diäten", "Prämie", "Lehrling", "Homeoffice"]
        records = Query.create([{"question": f"Wie wird {w} im Fall {i} abgerechnet?", "status": "verweigert",
                                 "user_id": user.id} for i, w in enumerate(words * 3)])
        old = records[:4]
        self.env.cr.execute("UPDATE pv_kb_query SET create_date = create_date - interval '400 days' WHERE id = ANY(%s)",
                            [old.ids])
        self.set_settings(health_gap_days=90, health_gap_max_questions=12)
        opts = self.env["pv.kb.health.run"]._options()
        taken = Gap._gap_questions(opts)
        self.assertEqual(taken, records[-12:], "the latest 12 of the window, oldest first")
        self.assertFalse(taken & old)
        before = self.embedded_texts()
        self.assertEqual(Gap._refresh_gaps(opts), 12)
        first = self.embedded_texts() - before
        embed_calls = [r for r in self.standin.requests_log if r.get("path") == "/api/embed"]
        self.assertGreater(max(r.get("n_inputs") or 0 for r in embed_calls), 1, "questions go in batches")
        self.assertFalse(Gap.search([]).query_ids & old)
        again = self.embedded_texts()
        Gap._refresh_gaps(opts)
        # the second run embeds no question again (only the entries' profiles, which are the knowledge base)
        profiles = self.env["pv.kb.entry"].search_count([])
        self.assertEqual(self.embedded_texts() - again, profiles)
        self.assertGreaterEqual(first, 12)
        # a model server too slow for the run's embedding time: new questions wait, the run still ends
        from odoo.addons.pv_kb.models import pv_kb_gap
        Query.create([{"question": f"Neue Frage {i} zur Abfertigung?", "status": "verweigert", "user_id": user.id}
                      for i in range(3)])
        with patch.object(pv_kb_gap, "GAP_EMBED_SECONDS", -1.0):
            before = self.embedded_texts()
            self.assertEqual(Gap._refresh_gaps(opts), 12)
            self.assertEqual(self.embedded_texts() - before, profiles, "no question embedded")


# --------------------------------------------------------------------------- hostile batches


@tagged("post_install", "-at_install", "pv_kb")
class TestHostileImport(KbCase):

    def test_a_hostile_batch_is_refused_by_the_check_with_reasons_and_a_bounded_report(self):
        from odoo.addons.pv_kb.testing.hostile_kb import BODIES, hostile_batch

        files = hostile_batch({name: make(20_000)[:20_000] for name, make in BODIES.items()})
        bomb = ['a0: &a0 ["lol"]'] + [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
        files["dokumente/hx-bomb-01.md"] = ("---\nid: hx-bomb-01\n" + "\n".join(bomb) + "\ntitle: *a9\n---\n# T\n").encode()
        files["dokumente/hx-big-01.md"] = ("---\nid: hx-big-01\ntitle: T\nstand: 2026-01\ntopic: t\nsource: s\n---\n"
                                           + "Wort " * 50_000).encode()
        manager = new_test_user(self.env, "kb_hostile_mgr", groups="pv_kb.group_pv_kb_manager")
        wizard = self.env["pv.kb.import.wizard"].with_user(manager).create({
            "zip_file": base64.b64encode(zip_bytes(files)), "zip_filename": "hostile.zip"})
        wizard.action_check()
        self.assertFalse(wizard.can_apply)
        issues = {i.code for i in self.env["pv.kb.importer"]._run(files, dry_run=True, origin="wizard").plan.issues}
        self.assertTrue({"render_costly", "yaml_alias", "body_too_large"} <= issues, issues)
        self.assertIn("Anker", wizard.report)
        self.assertLess(len(wizard.report), 60_000)
        self.assertFalse(self.env["pv.kb.entry"].search([("kb_id", "like", "hx-")]))

    def test_the_apply_stores_the_html_the_check_rendered(self):
        from odoo.addons.pv_kb.testing.hostile_kb import hostile_batch

        files = hostile_batch({"a": "Ein **Satz** mit [Verweis](https://www.ams.at)."})
        result = self.env["pv.kb.importer"]._run(files, origin="wizard")
        self.assertTrue(result.applied)
        entry = self.env["pv.kb.entry"].search([("kb_id", "=", "hx-0-01")])
        self.assertIn("<strong>Satz</strong>", entry.body_html)


# --------------------------------------------------------------------------- who may write what


ROLES = ("user", "manager", "system administrator")
OPERATIONS = (("read", "r"), ("create", "c"), ("write", "w"), ("unlink", "d"))


def documented_table():
    """{model: {role: cell}} from the role table of docs/security.md."""
    with open(SECURITY_DOC, encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("## What each role may do", 1)[1].split("\n## ", 1)[0]
    table = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`pv.kb."):
            table[cells[0].strip("`")] = dict(zip(ROLES, cells[1:]))
    return table


@tagged("post_install", "-at_install", "pv_kb")
class TestRoleTable(TransactionCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.users = {
            "user": new_test_user(cls.env, "role_user", groups="base.group_user,pv_kb.group_pv_kb_user"),
            "manager": new_test_user(cls.env, "role_manager", groups="base.group_user,pv_kb.group_pv_kb_manager"),
            "system administrator": new_test_user(cls.env, "role_admin", groups="base.group_user,base.group_system"),
        }

    def cell(self, model, user):
        env = self.env(user=user)
        letters = []
        restricted = False
        for operation, letter in OPERATIONS:
            if env["ir.model.access"].check(model, operation, raise_exception=False):
                letters.append(letter)
                domain = env["ir.rule"]._compute_domain(model, operation)
                restricted |= not domain.is_true()
        if not letters:
            return "–"
        return " ".join(letters) + (" (own)" if restricted else "")

    def test_the_documented_role_table_is_what_the_server_enforces(self):
        models = sorted(name for name in self.env.registry
                        if name.startswith("pv.kb.") and not self.env[name]._abstract)
        actual = {model: {role: self.cell(model, user) for role, user in self.users.items()} for model in models}
        documented = documented_table()
        self.assertEqual(sorted(documented), models, "every pv.kb.* model with records has a row")
        for model in models:
            with self.subTest(model=model):
                self.assertEqual(documented[model], actual[model])

    def test_a_user_cannot_move_or_rename_a_conversation(self):
        user, manager = self.users["user"], self.users["manager"]
        own = self.env["pv.kb.conversation"].with_user(user)._start("Meine Frage")
        self.assertEqual(own.user_id, user)
        for vals in ({"user_id": manager.id}, {"name": "umbenannt"}):
            with self.subTest(vals=vals), self.assertRaises(AccessError):
                own.with_user(user).write(vals)
        with self.assertRaises(AccessError):
            self.env["pv.kb.conversation"].with_user(user).create({"name": "x", "user_id": manager.id})
        # fixed at creation, even for the service itself
        with self.assertRaises(AccessError):
            own.sudo().write({"user_id": manager.id})

    def test_managers_read_and_delete_but_never_write_the_question_log(self):
        user, manager = self.users["user"], self.users["manager"]
        conversation = self.env["pv.kb.conversation"].with_user(user)._start("Frage")
        query = self.env["pv.kb.query"].create({"question": "Frage?", "status": "beantwortet", "user_id": user.id,
                                               "conversation_id": conversation.id, "answer": "Antwort."})
        as_manager = query.with_user(manager)
        self.assertEqual(as_manager.answer, "Antwort.")
        for vals in ({"answer": "[Klick](https://evil.example)"}, {"question": "anders"},
                     {"user_id": manager.id}):
            with self.subTest(vals=vals), self.assertRaises(AccessError):
                as_manager.write(vals)
        with self.assertRaises(AccessError):
            self.env["pv.kb.query"].with_user(manager).create({"question": "gepflanzt", "status": "beantwortet",
                                                              "user_id": user.id,
                                                              "conversation_id": conversation.id})
        with self.assertRaises(AccessError):
            conversation.with_user(manager).write({"name": "x"})
        as_manager.unlink()
        conversation.with_user(manager).unlink()
        self.assertFalse(conversation.exists())

    def test_the_rate_counts_logged_questions_of_the_last_minute(self):
        user = self.users["user"]
        Query = self.env["pv.kb.query"]
        self.assertEqual(Query._asked_recently(user.id), 0)
        Query.create([{"question": f"F{i}", "status": "verweigert", "user_id": user.id} for i in range(3)])
        self.assertEqual(Query._asked_recently(user.id), 3)
        self.env.cr.execute("UPDATE pv_kb_query SET create_date = create_date - interval '2 minutes' "
                            "WHERE user_id = %s", [user.id])
        self.assertEqual(Query._asked_recently(user.id), 0)
