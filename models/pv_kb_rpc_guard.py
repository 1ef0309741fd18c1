"""One gate for Odoo's generic RPC on every pv_kb model.

Any public method of any model is callable by every logged-in user through ``/web/dataset/call_kw``: the
addon's own methods, and the ORM's (``fields_get``, ``get_metadata``, ``web_resequence``, …), many of which
check no access before they act. Once the registry is loaded, every public method of every ``pv.kb.*`` model
is wrapped so that a caller without the Wissensbasis user group gets an AccessError before the method runs.
Superuser environments (``sudo()``, crons) and group members pass unchanged; access rights and record rules
still apply to them. The service models (agent, retriever, importer, evaluator, settings) have no public
methods of their own at all; button actions check the manager group themselves.

``tests/test_access.py`` calls every such method as an internal user without the group and as a portal user.
"""
import functools
import inspect

from odoo import api, models
from odoo.exceptions import AccessError
from odoo.service.model import get_public_method

USER_GROUP = "pv_kb.group_pv_kb_user"


def _guarded(method):
    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        if not self.env.su and not self.env.user.has_group(USER_GROUP):
            raise AccessError(self.env._("You have no access to the knowledge base."))
        return method(self, *args, **kwargs)
    guarded._pv_kb_guarded = True
    return guarded


def _model_access_guarded(method):
    """For a method pv_kb adds to a model of another module: the caller needs read access to that model."""
    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        if not self.env.su:
            self.browse().check_access("read")
        return method(self, *args, **kwargs)
    guarded._pv_kb_guarded = True
    return guarded


def _defined_by_pv_kb(cls, name):
    return any(klass.__module__.startswith("odoo.addons.pv_kb.") and name in vars(klass) for klass in cls.mro())


def guard_model_class(model, own=True):
    """Wrap the public methods of ``model``'s registry class (idempotent). Returns the names wrapped.

    ``own``: a pv.kb model (every public method, the group is required); else a model pv_kb extends (only
    the methods pv_kb adds to it, the model's own read access is required)."""
    cls = type(model)
    wrapped = []
    for name in dir(cls):
        if name.startswith("_") or (not own and not _defined_by_pv_kb(cls, name)):
            continue
        try:
            method = get_public_method(model, name)
        except (AccessError, AttributeError):
            continue
        if getattr(method, "_pv_kb_guarded", False):
            continue
        raw = inspect.getattr_static(cls, name)
        if isinstance(raw, (classmethod, staticmethod)):
            # no environment to check the user against: not callable over RPC at all (internal use unchanged)
            setattr(cls, name, type(raw)(api.private(_forward(raw.__func__))))
        else:
            setattr(cls, name, _guarded(method) if own else _model_access_guarded(method))
        wrapped.append(name)
    return wrapped


def _forward(func):
    @functools.wraps(func)
    def forward(*args, **kwargs):
        return func(*args, **kwargs)
    return forward


class PvKbRpcGuard(models.AbstractModel):
    _name = "pv.kb.rpc.guard"
    _description = "Knowledge base: access gate for RPC"

    def _register_hook(self):
        super()._register_hook()
        for name in self.env.registry:
            if name.startswith("pv.kb."):
                guard_model_class(self.env[name])
            elif any(klass.__module__.startswith("odoo.addons.pv_kb.") for klass in type(self.env[name]).mro()):
                guard_model_class(self.env[name], own=False)
