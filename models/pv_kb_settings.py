"""Reading the settings (declared once in ``lib/settings/table.py``), with per-run overrides passed by server code.

The form that edits them is ``models/res_config_settings.py``; the personal-data gate, which reads its own
settings, is ``models/pv_kb_pii_gate.py``.
"""
from odoo import _, api, models
from odoo.exceptions import AccessError

from ..lib.answer import modes as answer_modes
from ..lib.llm import client as ollama, errors as ollama_errors
from ..lib.settings import table

# seconds an answer needs besides the model call (retrieval, validation, log) and the stream's own grace
TIME_LIMIT_MARGIN = 20.0
MANAGER_GROUP = table.MANAGER


def auth_headers(line):
    """``"Authorization: Bearer x"`` -> {"Authorization": "Bearer x"}; empty or malformed -> {}."""
    name, sep, value = (line or "").partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not name or not value or any(c in name for c in " \r\n") or "\n" in value or "\r" in value:
        return {}
    return {name: value}


def make_client(settings, interactive=False):
    """Ollama client for a settings dict; ``interactive`` (a user waits): no retries, degrade at once instead."""
    return ollama.OllamaClient(ollama.OllamaConfig(
        url=settings["ollama_url"], connect_timeout=settings["connect_timeout"],
        read_timeout=settings["read_timeout"], keep_alive=settings["keep_alive"], num_ctx=settings["num_ctx"],
        embed_batch_size=settings["embed_batch_size"], retries=0 if interactive else 2,
        headers=auth_headers(settings.get("ollama_auth_header"))))


def answer_mode_selection(model):
    """(key, label) of every registered answer mode (lib/answer/modes) in the user's language: the selection of
    the question log's and the evaluation runs' ``answer_mode``."""
    return [(mode.key, model.env._(mode.label)) for mode in answer_modes.registered()]


def answer_time_limit_problem(limit, limit_time_real):
    """The highest answer time limit Odoo's ``limit_time_real`` allows when ``limit`` exceeds it, else None."""
    if limit_time_real and limit_time_real > 0 and limit + TIME_LIMIT_MARGIN > limit_time_real:
        return limit_time_real - TIME_LIMIT_MARGIN
    return None


class PvKbSettings(models.AbstractModel):
    """One place that reads the settings.

    Per-run overrides (the eval/ask commands, benchmarks) are passed as an argument by server-side code;
    they are never read from the context, which a request can set."""

    _name = "pv.kb.settings"
    _description = "Knowledge base settings"

    @api.model
    def _get(self, overrides=None):
        params = self.env["ir.config_parameter"].sudo()
        return table.read(lambda param: params.get_param(param, None), overrides)

    @api.model
    def _snapshot(self, settings):
        """The settings a log or report records: without credentials (URL user info, proxy header)."""
        snap = {key: settings[key] for key in table.SNAPSHOT_KEYS}
        snap["ollama_url"] = ollama_errors.redact_url(snap["ollama_url"])
        return snap

    @api.model
    def _client(self, settings=None, interactive=False):
        return make_client(settings or self._get(), interactive)

    @api.model
    def _check_manager(self):
        """Button actions callable over RPC check the group themselves."""
        if not self.env.su and not self.env.user.has_group(MANAGER_GROUP):
            raise AccessError(_("Only knowledge base managers may do this."))
