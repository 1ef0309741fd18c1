"""Reading the settings (declared once in ``lib/settings/table.py``), with per-run overrides passed by server code.

The form that edits them is ``models/res_config_settings.py``; the personal-data gate, which reads its own
settings, is ``models/pv_kb_pii_gate.py``.
"""
import logging

from odoo import _, api, models
from odoo.exceptions import AccessError

from ..lib.answer import modes as answer_modes
from ..lib.llm import client as ollama, errors as ollama_errors, servers as model_servers
from ..lib.settings import table

_logger = logging.getLogger(__name__)

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


def server_lists(settings):
    """{"embedding", "chat", "rerank": [model_servers.Server]} of a settings dict: a role's own list when it has
    one, else the main server (URL and type); a list that cannot be read counts as empty (saving refuses it)."""
    main = model_servers.Server(settings.get("server_type") or "ollama", settings["ollama_url"])
    lists = {}
    for role, default, kinds in table.SERVER_ROLES:
        try:
            extra = model_servers.parse_servers(settings.get(f"{role}_servers"), default, kinds)
        except ValueError as exc:
            _logger.warning("pv_kb: the %s server list cannot be read and is ignored: %s", role, exc)
            extra = []
        lists[role] = extra if extra or role == "rerank" else [main]
    return lists


def make_client(settings, interactive=False):
    """The model client for a settings dict: one server's client, or a pool of several (lib/llm/servers.py);
    ``interactive`` (a user waits): no retries, degrade at once instead."""
    config = ollama.OllamaConfig(
        url=settings["ollama_url"], connect_timeout=settings["connect_timeout"],
        read_timeout=settings["read_timeout"], keep_alive=settings["keep_alive"], num_ctx=settings["num_ctx"],
        embed_batch_size=settings["embed_batch_size"], retries=0 if interactive else 2,
        headers=auth_headers(settings.get("ollama_auth_header")), api_key=settings.get("api_key") or "",
        structured=settings.get("structured_output") or "auto")
    lists = server_lists(settings)
    return model_servers.single_or_pool(lists["embedding"], lists["chat"], config, rerank=lists["rerank"],
                                        cooldown=settings.get("failover_cooldown", model_servers.DEFAULT_COOLDOWN))


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
        # the model servers, when more than the one above or a rerank server is set (passwords removed; the API
        # key and the proxy header are never recorded)
        lists = server_lists(settings)
        if settings.get("server_type", "ollama") != "ollama" or any(
                settings.get(f"{role}_servers") for role, _d, _k in table.SERVER_ROLES):
            snap["server_type"] = settings.get("server_type")
            for role, servers in lists.items():
                snap[f"{role}_servers"] = [f"{s.kind} {s.shown}" for s in servers]
            snap["rerank_model"] = settings.get("rerank_model") or ""
        return snap

    @api.model
    def _client(self, settings=None, interactive=False):
        return make_client(settings or self._get(), interactive)

    @api.model
    def _check_manager(self):
        """Button actions callable over RPC check the group themselves."""
        if not self.env.su and not self.env.user.has_group(MANAGER_GROUP):
            raise AccessError(_("Only knowledge base managers may do this."))
