from unittest.mock import patch

from odoo.exceptions import AccessError, ValidationError
from odoo.tests import new_test_user, tagged
from odoo.tools import config, mute_logger

from .common import StandInCase


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_retrieval")
class TestSettings(StandInCase):

    def _test_connection(self, **values):
        settings = self.env["res.config.settings"].create({})
        for key, value in values.items():
            settings[f"pv_kb_{key}"] = value
        return settings.action_pv_kb_test_connection()["params"]

    def test_connection_reports_version_models_and_dimension(self):
        self.set_settings(chat_model="stored-chat")
        params = self._test_connection(ollama_url=self.standin.url, embedding_model="hash-embed",
                                       chat_model="standin-chat")
        self.assertEqual(params["type"], "success", params["message"])
        self.assertIn("0.12.0", params["message"])
        self.assertIn("hash-embed", params["message"])
        self.assertIn("1024", params["message"])
        self.assertIn("8192", params["message"], "the context of the embedding model")
        self.assertEqual(self.env["ir.config_parameter"].get_param("pv_kb.chat_model"), "stored-chat",
                         "the values on screen are tested, not saved")

    def test_connection_names_a_missing_model(self):
        params = self._test_connection(ollama_url=self.standin.url, chat_model="qwen3:32b")
        self.assertEqual(params["type"], "warning")
        self.assertIn("qwen3:32b", params["message"])

    def test_connection_names_an_unreachable_server(self):
        with mute_logger("odoo.addons.pv_kb.lib.llm.client"):
            params = self._test_connection(ollama_url="http://127.0.0.1:9")
        self.assertEqual(params["type"], "warning")
        self.assertIn("nicht erreichbar", params["message"])

    def test_overrides_win_over_stored_settings(self):
        Settings = self.env["pv.kb.settings"]
        self.assertEqual(Settings._get()["embedding_model"], "hash-embed")
        overridden = Settings._get({"embedding_model": "bge-m3", "top_k": "5"})
        self.assertEqual((overridden["embedding_model"], overridden["top_k"]), ("bge-m3", 5))
        self.assertEqual(Settings._get()["embedding_model"], "hash-embed", "stored settings untouched")

    def test_context_cannot_override_settings(self):
        """A request's context is user input: the old context key must not reach the settings."""
        Settings = self.env["pv.kb.settings"].with_context(pv_kb_overrides={"ollama_url": "http://10.0.0.1:80"})
        self.assertEqual(Settings._get()["ollama_url"], self.standin.url)

    def test_bounds_are_checked_on_save(self):
        for field, value in (("pv_kb_top_k", 0), ("pv_kb_top_k", 500), ("pv_kb_embed_batch_size", 0),
                             ("pv_kb_gate_dense_floor", 1.5), ("pv_kb_read_timeout", -1),
                             ("pv_kb_max_concurrent_answers", 0)):
            with self.subTest(field=field, value=value), self.assertRaises(ValidationError):
                self.env["res.config.settings"].create({field: value})

    def test_answer_time_limit_must_fit_limit_time_real(self):
        with patch.dict(config.options, {"limit_time_real": 120}):
            self.env["res.config.settings"].create({"pv_kb_answer_time_limit": 90}).execute()
            with self.assertRaises(ValidationError) as info:
                self.env["res.config.settings"].create({"pv_kb_answer_time_limit": 110})
            self.assertIn("100", str(info.exception), "names the highest allowed value")
        with patch.dict(config.options, {"limit_time_real": 0}):
            self.env["res.config.settings"].create({"pv_kb_answer_time_limit": 600})

    def test_credentials_stay_out_of_snapshots_and_messages(self):
        port = self.standin.url.rsplit(":", 1)[1]
        url = f"http://admin:geheim@127.0.0.1:{port}"
        params = self._test_connection(ollama_url=url, embedding_model="hash-embed", chat_model="standin-chat")
        self.assertEqual(params["type"], "success", params["message"])
        self.assertNotIn("geheim", params["message"])
        snapshot = self.env["pv.kb.settings"]._snapshot(self.env["pv.kb.settings"]._get({"ollama_url": url}))
        self.assertEqual(snapshot["ollama_url"], f"http://127.0.0.1:{port}")

    def test_proxy_header_is_for_system_administrators_only(self):
        self.env["ir.config_parameter"].set_param("pv_kb.ollama_auth_header", "Authorization: Bearer s3cret")
        manager = new_test_user(self.env, "pv_kb_settings_mgr", groups="base.group_user,pv_kb.group_pv_kb_manager")
        field = self.env["res.config.settings"]._fields["pv_kb_ollama_auth_header"]
        self.assertEqual(field.groups, "base.group_system")
        with self.assertRaises(AccessError):
            self.env["res.config.settings"].with_user(manager).create({})
        client = self.env["pv.kb.settings"]._client()
        self.assertEqual(client.session.headers.get("Authorization"), "Bearer s3cret", "sent with every request")
        client.close()
        self.env["ir.config_parameter"].set_param("pv_kb.ollama_auth_header", "kein header")
        client = self.env["pv.kb.settings"]._client()
        self.assertNotIn("Authorization", client.session.headers, "a malformed line sends nothing")
        client.close()

    def test_the_form_fields_are_the_declared_settings(self):
        from odoo.addons.pv_kb.lib.settings import table

        Settings = self.env["res.config.settings"]
        declared = {s.field: s for s in table.form_settings()}
        ours = {name for name in Settings._fields if name.startswith("pv_kb_")}
        self.assertEqual(ours - declared.keys(), {"pv_kb_embedding_status", "pv_kb_api_key_stored",
                                                  "pv_kb_api_key_clear"}, "a field without a declaration")
        self.assertEqual(declared.keys() - ours, set(), "a declared form setting without a field")
        defaults = Settings.default_get(list(declared))
        for name, setting in declared.items():
            with self.subTest(setting=setting.key):
                field = Settings._fields[name]
                self.assertEqual(field.type, {"csv": "char"}.get(setting.kind, setting.kind))
                self.assertEqual((field.string, field.help or ""), (setting.label, setting.help))
                self.assertEqual(field.groups, table.SYSTEM if setting.editor == table.SYSTEM else None)
                self.assertFalse(getattr(field, "config_parameter", None), "stored by set_values from the table")
                stored = self.env["pv.kb.settings"]._get()[setting.key]
                if not setting.secret:   # a secret (the API key) is never read back into the form
                    self.assertEqual(defaults[name], stored, "the form opens with the stored value")

    def test_saving_stores_every_setting_as_declared(self):
        settings = self.env["res.config.settings"].create({
            "pv_kb_health_max_age_months": 0, "pv_kb_rerank": True, "pv_kb_pii_gate": False, "pv_kb_top_k": 5})
        settings.execute()
        stored = self.env["pv.kb.settings"]._get()
        self.assertEqual((stored["health_max_age_months"], stored["rerank"], stored["pii_gate"], stored["top_k"]),
                         (0, True, False, 5), "0 and unchecked boxes stay what was saved")
        self.assertEqual(self.env["pv.kb.health.run"]._options()["health_max_age_months"], 0)
        settings = self.env["res.config.settings"].create({"pv_kb_rerank": False, "pv_kb_pii_gate": True})
        settings.execute()
        stored = self.env["pv.kb.settings"]._get()
        self.assertEqual((stored["rerank"], stored["pii_gate"], stored["top_k"]), (False, True, 5))
