"""Every public method of every pv_kb model, called over Odoo's generic RPC by users without the group.

The methods are enumerated from the registry (Odoo's own rule for what `call_kw` may call), not listed
by hand: a method added later is covered without touching this test. Each call carries a context that
tries to point the Ollama client at a listener on 127.0.0.1; the listener must stay silent.
"""
import inspect
import json
import socket
import threading

from odoo.exceptions import AccessError
from odoo.service.model import get_public_method
from odoo.tests import HttpCase, new_test_user, tagged

from .common import batch_files, entry_md


def _is_pv_kb_class(cls):
    return cls.__module__.startswith("odoo.addons.pv_kb.")


def pv_kb_public_methods(env):
    """(model, method, is_model_method) for every method `call_kw` would accept on a model of this addon:
    every public method of the pv.kb.* models (the ORM's included), and the addon's own methods on the
    models it extends (res.config.settings)."""
    found = []
    for name in sorted(env.registry):
        model = env[name]
        classes = type(model).mro()
        own = name.startswith("pv.kb.")
        if not own and not any(_is_pv_kb_class(c) for c in classes):
            continue
        for attr in sorted(dir(type(model))):
            if attr.startswith("_"):
                continue
            try:
                method = get_public_method(model, attr)
            except (AccessError, AttributeError):
                continue
            if not own and not any(_is_pv_kb_class(c) and attr in vars(c) for c in classes):
                continue
            found.append((name, attr, getattr(method, "_api", None) in ("model", "model_create")))
    return found


class _Listener:
    """A TCP listener that counts connections (the SSRF target)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.hits = 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _run(self):
        while not self.stopped.is_set():
            try:
                conn, _addr = self.sock.accept()
            except OSError:
                continue
            self.hits += 1
            conn.close()

    def close(self):
        self.stopped.set()
        self.thread.join(2)
        self.sock.close()


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_access", "pv_kb_http")
class TestRpcAccess(HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env["pv.kb.importer"]._run(batch_files({"lb-acc-01": entry_md("lb-acc-01", cross_refs=["lb-acc-02"]),
                                                    "lb-acc-02": entry_md("lb-acc-02")}), source_name="access")
        cls.entry = cls.env["pv.kb.entry"].search([], limit=1)
        cls.internal = new_test_user(cls.env, "pv_kb_no_group", groups="base.group_user", password="pv_kb_no_group")
        cls.portal = new_test_user(cls.env, "pv_kb_portal", groups="base.group_portal", password="pv_kb_portal")
        cls.listener = _Listener()
        cls.addClassCleanup(cls.listener.close)
        cls.env["ir.config_parameter"].sudo().set_param("pv_kb.ollama_url", "http://127.0.0.1:9")

    def _record_id(self, model):
        Model = self.env[model]
        if Model._abstract or Model._transient:
            return 1
        record = Model.with_context(active_test=False).search([], limit=1)
        return record.id or 1

    def _call(self, model, method, is_model_method):
        func = getattr(type(self.env[model]), method)
        try:
            params = list(inspect.signature(func).parameters.values())[1:]
        except (TypeError, ValueError):
            params = []
        required = [p for p in params if p.default is p.empty
                    and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        args = [None] * len(required)
        if not is_model_method:
            args = [[self._record_id(model)], *args]
        context = {"pv_kb_overrides": {"ollama_url": self.listener.url}, "lang": "en_US"}
        response = self.url_open(
            f"/web/dataset/call_kw/{model}/{method}",
            data=json.dumps({"jsonrpc": "2.0", "method": "call", "id": 1, "params": {
                "model": model, "method": method, "args": args, "kwargs": {"context": context}}}),
            headers={"Content-Type": "application/json"})
        return response.json()

    def _assert_all_refused(self, login):
        self.authenticate(login, login)
        methods = pv_kb_public_methods(self.env)
        self.assertGreater(len(methods), 50, "the enumeration found the ORM and the addon's methods")
        names = {f"{m}.{a}" for m, a, _ in methods}
        for expected in ("pv.kb.chunk.action_embed_now", "pv.kb.entry.search_read", "pv.kb.agent.search_read",
                         "res.config.settings.action_pv_kb_test_connection", "pv.kb.import.wizard.action_apply"):
            self.assertIn(expected, names)
        not_refused = []
        for model, method, is_model_method in methods:
            result = self._call(model, method, is_model_method)
            error = (result.get("error") or {}).get("data", {})
            if error.get("name") != "odoo.exceptions.AccessError":
                not_refused.append((f"{model}.{method}", error.get("name") or result.get("result")))
        self.assertEqual(not_refused, [], f"{login}: methods that did not answer with an access error")
        self.assertEqual(self.listener.hits, 0, "the server called the address the request chose")

    def test_internal_user_without_group_is_refused_everywhere(self):
        self._assert_all_refused("pv_kb_no_group")

    def test_portal_user_is_refused_everywhere(self):
        self._assert_all_refused("pv_kb_portal")

    def test_enumeration_sees_private_methods_as_private(self):
        names = {f"{m}.{a}" for m, a, _ in pv_kb_public_methods(self.env)}
        for private in ("pv.kb.agent._ask", "pv.kb.retriever._retrieve", "pv.kb.importer._run",
                        "pv.kb.evaluator._run", "pv.kb.chunk._embed_pending"):
            self.assertNotIn(private, names)
