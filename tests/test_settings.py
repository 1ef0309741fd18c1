from odoo.tests import tagged
from odoo.tools import mute_logger

from .common import StandInCase


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_retrieval")
class TestSettings(StandInCase):

    def _test_connection(self, **values):
        settings = self.env["res.config.settings"].create({})
        for key, value in values.items():
            settings[f"pv_kb_{key}"] = value
        return settings.action_pv_kb_test_connection()["params"]

    def test_connection_reports_version_models_and_dimension(self):
        params = self._test_connection(ollama_url=self.standin.url, embedding_model="hash-embed",
                                       chat_model="standin-chat")
        self.assertEqual(params["type"], "success", params["message"])
        self.assertIn("0.12.0", params["message"])
        self.assertIn("hash-embed", params["message"])
        self.assertIn("1024", params["message"])
        self.assertIn("8192", params["message"], "the context of the embedding model")
        self.assertEqual(self.env["ir.config_parameter"].get_param("pv_kb.chat_model"), "standin-chat",
                         "the values on screen are saved and tested")

    def test_connection_names_a_missing_model(self):
        params = self._test_connection(ollama_url=self.standin.url, chat_model="qwen3:32b")
        self.assertEqual(params["type"], "warning")
        self.assertIn("qwen3:32b", params["message"])

    def test_connection_names_an_unreachable_server(self):
        with mute_logger("odoo.addons.pv_kb.lib.ollama"):
            params = self._test_connection(ollama_url="http://127.0.0.1:9")
        self.assertEqual(params["type"], "warning")
        self.assertIn("nicht erreichbar", params["message"])

    def test_overrides_win_over_stored_settings(self):
        Settings = self.env["pv.kb.settings"]
        self.assertEqual(Settings._get()["embedding_model"], "hash-embed")
        overridden = Settings.with_context(pv_kb_overrides={"embedding_model": "bge-m3", "top_k": "5"})._get()
        self.assertEqual((overridden["embedding_model"], overridden["top_k"]), ("bge-m3", 5))
        self.assertEqual(Settings._get()["embedding_model"], "hash-embed", "stored settings untouched")
