"""The knowledge base's settings form: every field comes from the declaration in ``lib/settings/table.py``.

Fields, defaults, who may read them, bounds and storage are made from the table; this file adds what is not a
setting: the embedding status and the buttons (test the connection, embed now).
"""
import logging

from odoo import _, api, fields, models
from odoo.exceptions import ValidationError
from odoo.tools import config

from ..lib.llm import client as ollama, errors as ollama_errors, servers as model_servers
from ..lib.settings import table
from .pv_kb_settings import TIME_LIMIT_MARGIN, answer_time_limit_problem, server_lists

_logger = logging.getLogger(__name__)

_FIELD_TYPES = {"char": fields.Char, "csv": fields.Char, "text": fields.Text, "integer": fields.Integer,
                "float": fields.Float, "boolean": fields.Boolean, "selection": fields.Selection}


def _field(setting):
    """The form field of a setting. Not a ``config_parameter`` field: ``set_values`` stores it as the table
    says (Odoo's own storage would drop a 0 or an unchecked box, and the default would come back)."""
    kwargs = {"string": setting.label, "default": setting.default}
    if setting.help:
        kwargs["help"] = setting.help
    if setting.editor == table.SYSTEM:
        kwargs["groups"] = table.SYSTEM
    if setting.digits:
        kwargs["digits"] = setting.digits
    if setting.kind == "selection":
        # read when shown: a registered plug-in (an answer mode) is listed without a change here
        return fields.Selection(lambda model: [(value, model.env._(label)) for value, label in setting.options()],
                                **kwargs)
    return _FIELD_TYPES[setting.kind](**kwargs)


def _checked_fields():
    return [s.field for s in table.form_settings() if s.bounds or s.kind == "csv" or s.check]


class ResConfigSettings(models.TransientModel):
    _inherit = "res.config.settings"

    locals().update({setting.field: _field(setting) for setting in table.form_settings()})

    pv_kb_embedding_status = fields.Char("Embeddings", compute="_compute_pv_kb_embedding_status")
    # the API key is written only (a secret setting): whether one is stored, and a box to remove it
    pv_kb_api_key_stored = fields.Boolean("API key stored", compute="_compute_pv_kb_api_key_stored")
    pv_kb_api_key_clear = fields.Boolean("Remove the API key", groups=table.SYSTEM)

    def _pv_kb_may_edit(self, setting):
        return setting.editor != table.SYSTEM or self.env.su or self.env.user.has_group(table.SYSTEM)

    @api.model
    def get_values(self):
        res = super().get_values()
        stored = self.env["pv.kb.settings"]._get()
        res.update({s.field: stored[s.key] for s in table.form_settings() if self._pv_kb_may_edit(s) and not s.secret})
        return res

    def set_values(self):
        super().set_values()
        params = self.env["ir.config_parameter"].sudo()
        for setting in table.form_settings():
            if not self._pv_kb_may_edit(setting):
                continue
            if setting.secret:
                # never read back into the form: an empty field keeps the stored value, the box removes it
                if self.pv_kb_api_key_clear or (self[setting.field] or "").strip():
                    params.set_param(setting.param, False if self.pv_kb_api_key_clear
                                     else setting.serialise(self[setting.field]))
                continue
            value = setting.serialise(self[setting.field])
            if (params.get_param(setting.param) or False) != value:
                params.set_param(setting.param, value)

    @api.constrains(*_checked_fields())
    def _check_pv_kb_values(self):
        for settings in self:
            for setting in table.form_settings():
                problem = setting.problem(settings[setting.field])
                label = settings._fields[setting.field].get_description(self.env)["string"]
                if problem and problem[0] == "bounds":
                    raise ValidationError(_("%(field)s must be between %(low)s and %(high)s.",
                                            field=label, low=problem[1], high=problem[2]))
                if problem and problem[0] == "invalid":
                    raise ValidationError(_("%(field)s: %(error)s", field=label, error=problem[1]))
                if problem and problem[0] == "unknown":
                    raise ValidationError(_("Unknown detectors: %(names)s. Possible: %(all)s",
                                            names=", ".join(problem[1]), all=", ".join(setting.options())))
            upper = answer_time_limit_problem(settings.pv_kb_answer_time_limit, config.get("limit_time_real"))
            if upper is not None:
                raise ValidationError(_(
                    "The answer time limit must stay %(margin)s s below Odoo's limit_time_real (%(real)s s): at most "
                    "%(upper)s s.", margin=int(TIME_LIMIT_MARGIN), real=config.get("limit_time_real"), upper=upper))

    def _compute_pv_kb_api_key_stored(self):
        stored = bool(self.env["pv.kb.settings"]._get()["api_key"])
        for settings in self:
            settings.pv_kb_api_key_stored = stored

    def _compute_pv_kb_embedding_status(self):
        status = self.env["pv.kb.chunk"].sudo()._embedding_status()
        text = self.env._(
            "%(done)s of %(total)s sections embedded with %(model)s (vector(%(dim)s))",
            done=status["total"] - status["pending"] - status["failed"], total=status["total"],
            model=status["model"], dim=status["dim"])
        if status["failed"]:
            text += " · " + self.env._("%(failed)s sections rejected by the model (skipped, see Sections)",
                                       failed=status["failed"])
        if status["problem"]:
            text += " · " + status["problem"]
        for settings in self:
            settings.pv_kb_embedding_status = text

    def action_pv_kb_embed_now(self):
        self.env["pv.kb.settings"]._check_manager()
        self.execute()
        return self.env["pv.kb.chunk"].action_embed_now()

    def _pv_kb_form_settings(self):
        """The stored settings with what is in the form on top (unsaved values included)."""
        values = {s.key: self[s.field] for s in table.form_settings() if self._pv_kb_may_edit(s)
                  and not (s.secret and not (self[s.field] or "").strip())}   # empty secret: the stored one
        return self.env["pv.kb.settings"]._get({k: v for k, v in values.items() if v not in (None, False)})

    def action_pv_kb_test_connection(self):
        """Report, for each configured server, whether it answers and has its models, the embedding dimension,
        and whether all embedding servers serve the same model: of the values in the form, without saving them."""
        self.ensure_one()
        self.env["pv.kb.settings"]._check_manager()
        settings = self._pv_kb_form_settings()
        lines, ok = self._pv_kb_connection_report(settings)
        report = "\n".join(lines)
        _logger.info("pv_kb: connection test: %s", "ok" if ok else "problems")
        return {
            "type": "ir.actions.client",
            "tag": "display_notification",
            "params": {"title": _("Connection test"), "message": report, "sticky": True,
                       "type": "success" if ok else "warning"},
        }

    def _pv_kb_connection_report(self, settings):
        """(lines, ok) of the connection test: each server of each role, then the embedding facts."""
        lists = server_lists(settings)
        client = self.env["pv.kb.settings"]._client(settings)
        pool = client if isinstance(client, model_servers.ServerPool) else None
        lines, ok = [], True
        try:
            wanted = {"embedding": settings["embedding_model"], "chat": settings["chat_model"],
                      "rerank": settings.get("rerank_model") or ""}
            labels = {"embedding": _("Embedding model"), "chat": _("Chat model"), "rerank": _("Rerank model")}
            seen = {}
            for role in ("chat", "embedding", "rerank"):
                for server in lists[role]:
                    one = pool.client(server) if pool else client
                    try:
                        if role == "rerank":
                            one.rerank(wanted["rerank"], "Probe", ["Probe"], origin=ollama.KB_TEXT)
                            lines.append(_("Rerank server %(url)s answers (model %(model)s).", url=server.shown,
                                           model=wanted["rerank"] or "-"))
                            continue
                        if server not in seen:
                            seen[server] = one.describe()
                            lines.append(_("%(server)s reachable at %(url)s.", server=seen[server], url=server.shown))
                        present = one.has_model(wanted[role])
                    except ollama_errors.OllamaError as exc:
                        ok = False
                        lines.append(exc.message)
                        continue
                    ok = ok and present
                    lines.append(f"{labels[role]} {wanted[role]} ({server.shown}): "
                                 + (_("installed") if present else _("NOT installed")))
            # the servers' health as this Odoo process saw it (failover and cool-down, lib/llm/servers.py)
            for state in model_servers.health(list(dict.fromkeys(lists["chat"] + lists["embedding"] + lists["rerank"]))):
                if state["failures"]:
                    lines.append(_("%(url)s: %(failures)s failures and %(answers)s answers in this Odoo process; "
                                   "last failure: %(error)s", url=state["url"], failures=state["failures"],
                                   answers=state["answers"], error=state["error"]))
            if ok:
                # not named `context`: _() reads a local of that name as the translation context
                dim, window = client.embedding_facts(settings["embedding_model"])
                if len(lists["embedding"]) > 1:
                    lines.append(_("All %(count)s embedding servers serve the same model.",
                                   count=len(lists["embedding"])))
                current = self.env["pv.kb.chunk"]._embedding_dim()
                lines.append(_("Embedding dimension: %(dim)s (column: %(col)s)", dim=dim, col=current))
                if window:
                    lines.append(_("Context of the embedding model: %(tokens)s tokens (longer sections are cut)",
                                   tokens=window))
        except ollama_errors.OllamaError as exc:
            ok = False
            lines.append(exc.message)
        finally:
            client.close()
        return lines, ok
