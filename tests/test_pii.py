"""The personal-data gate in Odoo: what reaches the model, the question log and the conversation."""
import json
from unittest.mock import patch

from odoo.tests import HttpCase, new_test_user, tagged
from odoo.tools import mute_logger

from odoo.addons.pv_kb.lib.pii import gate as pii

from .common import StandInCase, batch_files
from .test_agent import agent_entries

QUESTION = ("Herr Novak, SV-Nr. 1237 010180, hat Urlaubszuschuss und Weihnachtsremuneration bekommen: wie hoch ist "
            "der Freibetrag für Sonderzahlungen?")
SECRETS = ("Novak", "1237", "010180")


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_pii", "pv_kb_http")
class TestPiiGate(StandInCase, HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env["pv.kb.importer"]._run(batch_files(agent_entries()), source_name="pii")
        cls.env["pv.kb.chunk"]._embed_pending()
        # a known person of this database (hr is not a dependency: a contact that is a person)
        cls.env["res.partner"].create({"name": "Josef Novak", "is_company": False})
        cls.agent = cls.env["pv.kb.agent"]
        cls.kb_user = new_test_user(cls.env, "kb_pii_user", groups="pv_kb.group_pv_kb_user")

    def sent_texts(self):
        """Everything the model server received (chat messages and embedding inputs), per request."""
        return [(r["path"], "\n".join(t or "" for t in r.get("texts", []))) for r in self.standin.requests_log]

    def assert_nothing_leaked(self, secrets=SECRETS):
        sent = self.sent_texts()
        self.assertTrue(any(p == "/api/embed" for p, _ in sent), "the query was embedded")
        self.assertTrue(any(p == "/api/chat" for p, _ in sent), "the model was asked")
        for path, text in sent:
            for secret in secrets:
                self.assertNotIn(secret, text, f"{secret!r} sent to {path}")

    def test_known_name_and_svnr_never_reach_the_model_or_the_log(self):
        conversation = self.env["pv.kb.conversation"].create({"name": "neu"})
        result = self.agent._ask(QUESTION, conversation)
        self.assert_nothing_leaked()
        # the answer as before: grounded, cited
        self.assertEqual(result.status, "beantwortet", result.answer)
        self.assertIn("lb-sz-01", result.cited_ids)
        self.assertEqual(result.pii_count, 2)
        self.assertEqual([p for p, _v in result.pii_mapping["items"]], ["[PERSON_1]", "[SVNR_1]"])
        query = result.query
        self.assertIn("[PERSON_1]", query.question)
        self.assertIn("[SVNR_1]", query.question)
        self.assertEqual(query.pii_count, 2)
        stored = " ".join([query.question, query.standalone_query or "", query.answer or "", query.retrieved_json,
                           conversation.name])
        for secret in SECRETS:
            self.assertNotIn(secret, stored)
        chat = [t for p, t in self.sent_texts() if p == "/api/chat"][0]
        self.assertIn("Herr [PERSON_1], SV-Nr. [SVNR_1]", chat, "the prompt holds the masked question")

    def test_follow_up_keeps_placeholders_and_masks_history_of_before_the_gate(self):
        conversation = self.env["pv.kb.conversation"].create({"name": "alt"})
        # a turn logged before the gate existed, with a name in clear text
        self.env["pv.kb.query"].create({"question": "Hat Josef Novak Anspruch auf Sonderzahlungen?",
                                        "answer": "Ja [lb-sz-01].", "status": "beantwortet",
                                        "conversation_id": conversation.id})
        first = self.agent._ask(QUESTION, conversation)
        self.standin.reset()
        follow = self.agent._ask("Und gilt das auch für Novak im Dezember?", conversation,
                                pii_mapping=first.pii_mapping)
        self.assert_nothing_leaked()
        # the old turn's "Josef Novak" came first ([PERSON_1]); "Novak" of the question got the next one,
        # and keeps it in the follow-up
        mapping = dict(first.pii_mapping["items"])
        self.assertEqual(mapping, {"[PERSON_1]": "Josef Novak", "[PERSON_2]": "Novak", "[SVNR_1]": "1237 010180"})
        self.assertEqual(follow.query.question, "Und gilt das auch für [PERSON_2] im Dezember?")
        self.assertNotIn("Novak", follow.query.standalone_query)

    def test_fail_closed_sends_and_stores_nothing(self):
        before = self.env["pv.kb.query"].search_count([])
        with patch.object(pii, "gate_request", side_effect=RuntimeError("kaputt")), \
                mute_logger("odoo.addons.pv_kb.models.pv_kb_agent"):
            result = self.agent._ask(QUESTION)
        self.assertEqual(result.status, "fehler")
        self.assertIn("personal data", result.answer)
        self.assertEqual(self.standin.requests_log, [], "no request left the addon")
        self.assertEqual(self.env["pv.kb.query"].search_count([]), before, "nothing of the question stored")
        # a broken known-name source fails closed the same way
        with patch.object(type(self.env["pv.kb.settings"]), "_pii_known_names", side_effect=ValueError("db")), \
                mute_logger("odoo.addons.pv_kb.models.pv_kb_agent"):
            self.assertEqual(self.agent._ask(QUESTION).status, "fehler")
        self.assertEqual(self.standin.requests_log, [])

    def test_client_refuses_a_prompt_that_carries_a_masked_value(self):
        from odoo.addons.pv_kb.lib.answer import prompt
        real = prompt.build_messages

        def leaky(*args, **kw):
            # a bug that puts the clear name back into the prompt
            messages = real(*args, **kw)
            messages[-1]["content"] += "\n(Frage von Novak)"
            return messages
        with patch.object(prompt, "build_messages", leaky), \
                mute_logger("odoo.addons.pv_kb.models.pv_kb_agent"):
            result = self.agent._ask(QUESTION)
        self.assertEqual(result.status, "fehler")
        self.assertIn("personal data", result.answer)
        self.assertEqual([r["path"] for r in self.standin.requests_log], ["/api/embed"], "no chat request was sent")
        self.assertNotIn("Novak", result.query.question)

    def test_settings_switch_detectors_allow_list_and_no_override_from_the_context(self):
        settings = self.env["res.config.settings"].create({})
        self.assertTrue(settings.pv_kb_pii_gate, "on by default")
        settings.write({"pv_kb_pii_detectors": "svnr", "pv_kb_pii_allow_list": "Novak Bau GmbH"})
        settings.execute()
        gated = self.env["pv.kb.settings"]._pii_gate("Frau Novak von der Novak Bau GmbH, SV 1237 010180")
        self.assertEqual(gated.question, "Frau Novak von der Novak Bau GmbH, SV [SVNR_1]")
        settings = self.env["res.config.settings"].create({})
        settings.write({"pv_kb_pii_detectors": "", "pv_kb_pii_allow_list": "Novak Bau GmbH"})
        settings.execute()
        gated = self.env["pv.kb.settings"]._pii_gate("Frau Novak von der Novak Bau GmbH, SV 1237 010180")
        self.assertEqual(gated.question, "Frau [PERSON_1] von der Novak Bau GmbH, SV [SVNR_1]")
        # a caller cannot switch the gate off through the context
        overridden = self.env["pv.kb.settings"].with_context(pv_kb_overrides={"pii_gate": "off"})
        self.assertEqual(overridden._pii_gate("Frau Novak").question, "Frau [PERSON_1]")
        with self.assertRaises(Exception):
            settings.write({"pv_kb_pii_detectors": "svnr, gibtsnicht"})
            settings.execute()
        self.env["ir.config_parameter"].sudo().set_param("pv_kb.pii_gate", "off")
        self.assertEqual(self.env["pv.kb.settings"]._pii_gate("Frau Novak").question, "Frau Novak")

    def test_known_names_follow_the_contacts(self):
        Settings = self.env["pv.kb.settings"]
        self.assertEqual(Settings._pii_gate("Was gilt für Berta Kaltenbrunner?").count, 0)
        partner = self.env["res.partner"].create({"name": "Berta Kaltenbrunner"})
        self.env["res.partner"].create({"name": "Kaltenbrunner Holding", "is_company": True})
        self.env["res.partner"].create({"name": "Lohnbüro"})
        self.assertEqual(Settings._pii_gate("Was gilt für Berta Kaltenbrunner?").question,
                         "Was gilt für [PERSON_1]?", "a new contact is known at once")
        self.assertEqual(Settings._pii_gate("Frage vom Lohnbüro").count, 0, "one-word contacts are functions")
        partner.action_archive()
        self.assertEqual(Settings._pii_gate("Was gilt für Berta Kaltenbrunner?").count, 0,
                         "an archived contact is no longer a known name")

    def test_feedback_comment_is_stored_masked(self):
        result = self.agent._ask("Wie hoch ist der Freibetrag für Sonderzahlungen?")
        result.query._set_feedback("down", "Für Herrn Novak (Tel. 0664 1234567) stimmt das nicht")
        self.assertEqual(result.query.feedback_comment, "Für Herrn [PERSON_1] (Tel. [PHONE_1]) stimmt das nicht")

    def test_stream_route_returns_count_and_mapping_and_names_the_conversation_masked(self):
        self.authenticate("kb_pii_user", "kb_pii_user")
        page = self.url_open("/odoo", timeout=30).text
        token = page.split('csrf_token: "', 1)[1].split('"', 1)[0]
        body = {"question": QUESTION, "conversation_id": None, "csrf_token": token}
        response = self.url_open("/pv_kb/ask/stream", data=json.dumps(body),
                                 headers={"Content-Type": "application/json"}, timeout=60)
        final = [json.loads(line) for line in response.text.splitlines() if line.strip()][-1]
        self.assertEqual(final["type"], "final", final)
        self.assertEqual(final["pii"]["count"], 2)
        self.assertEqual(final["pii"]["mapping"]["items"][0], ["[PERSON_1]", "Novak"])
        conversation = self.env["pv.kb.conversation"].browse(final["conversation_id"])
        self.assertTrue(conversation.name.startswith("Herr [PERSON_1]"), conversation.name)
        self.assert_nothing_leaked()
        # the follow-up sends the mapping back: same placeholder
        body = {"question": "Und für Novak im Dezember?", "conversation_id": conversation.id,
                "pii_mapping": final["pii"]["mapping"], "csrf_token": token}
        response = self.url_open("/pv_kb/ask/stream", data=json.dumps(body),
                                 headers={"Content-Type": "application/json"}, timeout=60)
        final = [json.loads(line) for line in response.text.splitlines() if line.strip()][-1]
        self.assertEqual(self.env["pv.kb.query"].browse(final["query_id"]).question, "Und für [PERSON_1] im Dezember?")
