"""Browser tests of the assistant panel: the hoot unit tests and the chat tour."""
from unittest.mock import patch

from odoo.tests import HttpCase, common as odoo_common, tagged

from .common import StandInCase


def hoot_job_id(full_name):
    """Id hoot gives a suite or test: a 32-bit rolling hash of its full name, as 8 hex digits."""
    value = 0
    for char in full_name:
        value = ((value << 5) - value + ord(char)) & 0xFFFFFFFF
    return f"{value:08x}"


class PatientRequests:
    """``requests`` as Odoo's browser helper uses it, with 15 s instead of 3 s for each devtools request: on a busy
    machine Chromium answers its first ``/json/version`` late, and Odoo gives up at the first read timeout
    (odoo.tests.common.ChromeBrowser._json_command). Everything else is the ``requests`` module itself."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        return getattr(self._module, name)

    def get(self, url, **kwargs):
        kwargs["timeout"] = max(kwargs.get("timeout") or 0, 15)
        return self._module.get(url, **kwargs)


def hoot_error_checker(message):
    """Every console error counts as a failure except hoot's own report lines."""
    return "[HOOT]" not in message


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_ui", "pv_kb_http")
class TestUi(StandInCase, HttpCase):
    """Runs with the Ollama stand-in so that the tour gets real, streamed answers."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # Odoo gives headless Chromium 10 s to open its devtools port and skips the test after that. The test
        # command runs this class beside two other Odoo processes and the end-to-end checks, where a start
        # can take longer on two cores: 30 s here, so that a slow start is waited for, not skipped.
        cls.startClassPatcher(patch.object(odoo_common, "CHECK_BROWSER_ITERATIONS", 300))
        # and each devtools request may take 15 s before the first read timeout skips the test (PatientRequests)
        cls.startClassPatcher(patch.object(odoo_common, "requests", PatientRequests(odoo_common.requests)))

    def test_hoot(self):
        """The suite @pv_kb (static/tests/*.test.js) in the headless browser."""
        url = (
            "/web/tests?headless&loglevel=2&preset=desktop&timeout=15000"
            f"&id={hoot_job_id('@pv_kb')}"
        )
        self.browser_js(
            url, "", "", login="admin", timeout=600,
            success_signal="[HOOT] Test suite succeeded", error_checker=hoot_error_checker,
        )

    def test_tour(self):
        """Ask about the demo KB, open a cited entry, come back, rate the answer."""
        self.import_demo()
        self.embed_all()
        self.start_tour("/odoo", "pv_kb_chat_tour", login="admin", timeout=180)
        query = self.env["pv.kb.query"].search([("user_id", "=", self.env.ref("base.user_admin").id)],
                                               order="id desc", limit=1)
        self.assertEqual(query.question, "Wie hoch ist der Freibetrag für Sonderzahlungen?")
        self.assertEqual(query.feedback, "up")

    def test_fact_tour(self):
        """A value question answered from the Kernwerte; the chip opens the entry at the value's row."""
        self.import_demo()
        self.embed_all()
        self.start_tour("/odoo", "pv_kb_fact_tour", login="admin", timeout=180)
        query = self.env["pv.kb.query"].search([("user_id", "=", self.env.ref("base.user_admin").id)],
                                               order="id desc", limit=1)
        self.assertEqual((query.question, query.from_facts), ("GFB 2025?", True))

    def test_cockpit_tour(self):
        """The overview, a health run from its button, the open conflicts, one finding, the gaps."""
        self.import_demo()
        self.embed_all()
        self.env["pv.kb.query"].create([
            {"question": "Kilometergeld für ein Elektrofahrrad?", "status": "verweigert"},
            {"question": "Kilometergeld bei Fahrgemeinschaften?", "status": "unsicher"},
        ])
        self.env["pv.kb.health.run"]._run_health_check()
        self.start_tour("/odoo/pv-kb-overview", "pv_kb_cockpit_tour", login="admin", timeout=180)
        runs = self.env["pv.kb.health.run"].search([("trigger", "=", "manual")])
        self.assertEqual(len(runs), 2, "the tour ran the check from the overview's button")
