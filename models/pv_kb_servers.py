"""Model servers in the settings (lib/llm/servers.py): the server type, the API key, the lists of further chat,
embedding and rerank servers, and the connection test of all of them."""
import logging

from odoo import _, api, fields, models
from odoo.exceptions import UserError, ValidationError

from ..lib.llm import client as ollama, errors as ollama_errors, servers as model_servers

_logger = logging.getLogger(__name__)

ROLES = (("chat", "ollama", model_servers.KINDS), ("embedding", "ollama", model_servers.KINDS),
         ("rerank", "openai", model_servers.RERANK_KINDS))


def server_lists(settings):
    """{"embedding", "chat", "rerank": [model_servers.Server]} of a settings dict: a role's own list when it has
    one, else the main server (URL and type above); a list that cannot be read counts as empty (saving the
    settings refuses it)."""
    main = model_servers.Server(settings.get("server_type") or "ollama", settings["ollama_url"])
    lists = {}
    for role, default, kinds in ROLES:
        try:
            extra = model_servers.parse_servers(settings.get(f"{role}_servers"), default, kinds)
        except ValueError as exc:
            _logger.warning("pv_kb: the %s server list cannot be read and is ignored: %s", role, exc)
            extra = []
        lists[role] = extra if extra or role == "rerank" else [main]
    return lists



class ResConfigSettings(models.TransientModel):
    _inherit = "res.config.settings"

    # model servers (lib/llm/servers.py); the lists are Text (no config_parameter fields: set in set_values)
    pv_kb_server_type = fields.Selection(
        [("ollama", "Ollama"), ("openai", "OpenAI-compatible (vLLM, llama.cpp server, LiteLLM, …)")],
        string="Server type", config_parameter="pv_kb.server_type", default="ollama",
        help="The API of the server at the URL above. OpenAI-compatible: the URL without /v1.")
    pv_kb_api_key = fields.Char(
        "New API key", groups="base.group_system",
        help="Sent as 'Authorization: Bearer …' to every model server. A stored key is never shown again: enter a "
             "new one to replace it. Only system administrators can set it.")
    pv_kb_api_key_clear = fields.Boolean("Remove the API key", groups="base.group_system")
    pv_kb_api_key_set = fields.Boolean("API key stored", compute="_compute_pv_kb_api_key_set")
    pv_kb_structured_output = fields.Selection(
        [("auto", "Automatic"), ("json_schema", "json_schema (vLLM, SGLang, llama.cpp server, LiteLLM)"),
         ("json_object", "json_object with schema (llama-cpp-python)"), ("none", "None (only the prompt asks for JSON)")],
        string="Structured output", config_parameter="pv_kb.structured_output",
        default="auto",
        help="How a JSON schema is sent to an OpenAI-compatible server. Automatic tries json_schema, then "
             "json_object, then none, and keeps what the server accepted.")
    pv_kb_chat_servers = fields.Text(
        "Chat servers",
        help="One server per line, 'openai http://host:8000' or 'ollama http://host:11434'; empty: the server above. "
             "Answers are spread over them; a server that fails is skipped for the cool-down.")
    pv_kb_embedding_servers = fields.Text(
        "Embedding servers",
        help="One server per line, as for chat; empty: the server above. All must serve the same embedding model: "
             "'Test connection' checks it, and the embedding job refuses a list whose servers give different "
             "vectors.")
    pv_kb_rerank_servers = fields.Text(
        "Rerank servers",
        help="One server per line: 'openai http://host:8000' (/v1/rerank of vLLM or llama.cpp server) or "
             "'tei http://host:8080' (/rerank of Text Embeddings Inference). Empty: no rerank endpoint (default).")
    pv_kb_rerank_model = fields.Char("Rerank model", config_parameter="pv_kb.rerank_model",
                                     help="e.g. BAAI/bge-reranker-v2-m3, as the rerank server names it.")
    pv_kb_failover_cooldown = fields.Float(
        "Cool-down after a failure (s)", config_parameter="pv_kb.failover_cooldown",
        default=model_servers.DEFAULT_COOLDOWN,
        help="A server that failed is tried last for this long.")

    @api.model
    def get_values(self):
        res = super().get_values()
        params = self.env["ir.config_parameter"].sudo()
        res.update({f"pv_kb_{role}_servers": params.get_param(f"pv_kb.{role}_servers") or "" for role, _d, _k in ROLES})
        return res

    def set_values(self):
        super().set_values()
        params = self.env["ir.config_parameter"].sudo()
        for role, default, kinds in ROLES:
            text = self[f"pv_kb_{role}_servers"] or ""
            try:
                model_servers.parse_servers(text, default, kinds)
            except ValueError as exc:
                raise UserError(_("The list '%(field)s' cannot be read: %(error)s",
                                  field=self._fields[f"pv_kb_{role}_servers"].get_description(self.env)["string"],
                                  error=exc)) from exc
            params.set_param(f"pv_kb.{role}_servers", text.strip())
        if self.env.user.has_group("base.group_system"):
            if self.pv_kb_api_key_clear:
                params.set_param("pv_kb.api_key", "")
            elif (self.pv_kb_api_key or "").strip():
                params.set_param("pv_kb.api_key", self.pv_kb_api_key.strip())

    @api.constrains("pv_kb_failover_cooldown")
    def _check_pv_kb_failover_cooldown(self):
        for settings in self:
            if not 0 <= settings.pv_kb_failover_cooldown <= 3600:
                raise ValidationError(_("The cool-down must be between 0 and 3600 seconds."))

    def _compute_pv_kb_api_key_set(self):
        stored = bool(self.env["ir.config_parameter"].sudo().get_param("pv_kb.api_key"))
        for settings in self:
            settings.pv_kb_api_key_set = stored

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
