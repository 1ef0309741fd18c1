"""Settings of the knowledge base (ir.config_parameter), with per-run overrides passed by server code."""
import logging
import threading

from odoo import _, api, fields, models
from odoo.exceptions import AccessError, UserError, ValidationError
from odoo.tools import config

from ..lib.llm import client as ollama, errors as ollama_errors, servers as model_servers
from ..lib.pii import gate as pii, names as pii_names
from ..lib.search import ranking
from .pv_kb_servers import server_lists

_logger = logging.getLogger(__name__)

# known names per database and process: (signature of the source tables, pii_names.KnownNames)
_KNOWN_NAMES = {}
_KNOWN_NAMES_LOCK = threading.Lock()

# the settings an answer log or an evaluation report records, so that numbers can be traced to them
SNAPSHOT_KEYS = ("ollama_url", "embedding_model", "chat_model", "query_prefix", "passage_prefix", "top_k", "rrf_k",
                 "num_ctx", "answer_mode", "answer_modes", "rerank", "rerank_depth", "query_rewrite", "server_type",
                 "chat_servers", "embedding_servers", "rerank_servers", "rerank_model")
# never in a snapshot, a message or a log line: the API key and the proxy header (system administrators only)
SECRET_KEYS = ("api_key", "ollama_auth_header")

# key -> (default, type); keys are stored as "pv_kb.<key>"
DEFAULTS = {
    "ollama_url": ("http://localhost:11434", str),
    "embedding_model": ("bge-m3", str),
    "chat_model": ("qwen3:32b", str),
    "query_prefix": ("", str),
    "passage_prefix": ("", str),
    "top_k": (8, int),
    "rrf_k": (ranking.RRF_K, int),   # chosen with the fusion recipe (lib/search/ranking.py)
    "connect_timeout": (3.0, float),
    "read_timeout": (120.0, float),
    "embed_batch_size": (32, int),
    "num_ctx": (8192, int),
    "answer_time_limit": (90.0, float),
    "keep_alive": ("30m", str),
    "gate_dense_floor": (0.0, float),
    "answer_mode": ("text", str),     # text | structured (lib.answer.structured), unless answer_modes names the model
    "answer_modes": ("", str),        # "model=mode" items separated by ";" (lib.answer.structured.parse_modes)
    "max_concurrent_answers": (24, int),
    "max_answers_per_user": (2, int),
    "ollama_auth_header": ("", str),
    # optional chat-model steps around retrieval (lib/search/rerank.py, lib/search/rewrite.py): off unless measured worth it
    "rerank": (False, bool),
    "rerank_depth": (20, int),
    "query_rewrite": (False, bool),
    # model servers (lib/llm/servers.py): the type of the server at ollama_url, an API key for it and the lists,
    # further chat and embedding servers ("[ollama|openai] URL" a line, after the main server), rerank servers
    # ("[openai|tei] URL"; none: no rerank endpoint)
    "server_type": ("ollama", str),
    "api_key": ("", str),
    "structured_output": ("auto", str),
    "chat_servers": ("", str),
    "embedding_servers": ("", str),
    "rerank_servers": ("", str),
    "rerank_model": ("", str),
    "failover_cooldown": (model_servers.DEFAULT_COOLDOWN, float),
}
_TRUE = ("1", "true", "yes", "on")

# (low, high) of the numeric settings; checked when the settings are saved
BOUNDS = {
    "top_k": (1, 50),
    "rrf_k": (1, 1000),
    "connect_timeout": (0.5, 60.0),
    "read_timeout": (1.0, 3600.0),
    "embed_batch_size": (1, 512),
    "num_ctx": (512, 262144),
    "answer_time_limit": (5.0, 3600.0),
    "gate_dense_floor": (0.0, 1.0),
    "max_concurrent_answers": (1, 1000),
    "max_answers_per_user": (1, 100),
    "rerank_depth": (5, 40),
    "failover_cooldown": (0.0, 3600.0),
}
# seconds an answer needs besides the model call (retrieval, validation, log) and the stream's own grace
TIME_LIMIT_MARGIN = 20.0
MANAGER_GROUP = "pv_kb.group_pv_kb_manager"


def auth_headers(line):
    """``"Authorization: Bearer x"`` -> {"Authorization": "Bearer x"}; empty or malformed -> {}."""
    name, sep, value = (line or "").partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not name or not value or any(c in name for c in " \r\n") or "\n" in value or "\r" in value:
        return {}
    return {name: value}


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
        overrides = overrides or {}
        values = {}
        for key, (default, kind) in DEFAULTS.items():
            raw = overrides.get(key)
            if raw is None:
                raw = params.get_param(f"pv_kb.{key}", default)
            if kind is bool:
                # stored as "True" (Odoo's boolean config_parameter fields); bool("False") would be True
                values[key] = raw is True or str(raw).strip().lower() in _TRUE
                continue
            try:
                values[key] = kind(raw) if raw not in (None, False) else default
            except (TypeError, ValueError):
                values[key] = default
        values["ollama_url"] = values["ollama_url"].rstrip("/")
        low, high = BOUNDS["rerank_depth"]
        values["rerank_depth"] = min(max(values["rerank_depth"], low), high)
        return values

    @api.model
    def _snapshot(self, settings):
        """The settings a log or report records: without credentials (URL user info, proxy header)."""
        snap = {key: settings[key] for key in SNAPSHOT_KEYS}
        snap["ollama_url"] = ollama_errors.redact_url(snap["ollama_url"])
        for role, servers in server_lists(settings).items():
            snap[f"{role}_servers"] = [f"{s.kind} {s.shown}" for s in servers]
        return snap

    @api.model
    def _client(self, settings=None, interactive=False):
        return make_client(settings or self._get(), interactive)

    @api.model
    def _check_manager(self):
        """Button actions callable over RPC check the group themselves."""
        if not self.env.su and not self.env.user.has_group(MANAGER_GROUP):
            raise AccessError(_("Only knowledge base managers may do this."))

    # --- the personal-data gate (issue 13): the one place that makes a pii.Gated ---------------
    @api.model
    def _pii_config(self):
        """Gate settings, from the parameters only (never from the context: no caller may switch it off)."""
        params = self.env["ir.config_parameter"].sudo()
        enabled = params.get_param("pv_kb.pii_gate", "on") != "off"
        raw = params.get_param("pv_kb.pii_detectors") or ""
        detectors = [d.strip() for d in raw.replace("\n", ",").split(",") if d.strip()] or list(pii.DETECTORS)
        allow = [line.strip() for line in (params.get_param("pv_kb.pii_allow_list") or "").splitlines()
                 if line.strip()]
        return {"enabled": enabled, "detectors": detectors, "allow_list": allow}

    @api.model
    def _pii_known_names(self):
        """(known names, company names): employees (if ``hr`` is installed) and contacts that are persons.

        Cached per process; one query per question checks count and last write of the sources. New or
        changed contacts are added to the index (a renamed contact's old name stays masked until the next
        full rebuild, which happens when contacts were archived or deleted or a company changed). Names of
        one word are left out: a contact called "Lohnbüro" is a function, not a person. The companies' own
        names are never masked (allow-list).
        """
        has_hr = "hr.employee" in self.env
        self.env.flush_all()
        self.env.cr.execute("""
            SELECT (SELECT count(*) FROM res_partner WHERE active AND NOT COALESCE(is_company, false)
                                                      AND name IS NOT NULL),
                   (SELECT max(write_date) FROM res_partner),
                   (SELECT count(*) FROM res_company), (SELECT max(write_date) FROM res_company)""")
        p_count, p_last, c_count, c_last = self.env.cr.fetchone()
        e_count = e_last = None
        if has_hr:
            [(e_count, e_last)] = self.env["hr.employee"].sudo()._read_group(
                [], aggregates=["__count", "write_date:max"])
        signature = (p_count, p_last, c_count, c_last, e_count, e_last)
        key = self.env.cr.dbname
        cached = _KNOWN_NAMES.get(key)
        if cached and cached["signature"] == signature:
            return cached["known"], cached["companies"]

        def person_names(since=None):
            domain = [("is_company", "=", False), ("name", "!=", False)]
            names = self.env["res.partner"].sudo().search(domain + ([("write_date", ">=", since)] if since else []))
            names = set(names.mapped("name"))
            if has_hr:
                names |= set(self.env["hr.employee"].sudo().search(
                    [("write_date", ">=", since)] if since else []).mapped("name"))
            return sorted(n for n in names if n and len(n.split()) >= 2)

        old = cached["signature"] if cached else None
        grown = (old and old[2:4] == signature[2:4] and p_count >= old[0]
                 and (not has_hr or (old[4] is not None and e_count >= old[4]))
                 # names added again on every edit: rebuild once the index holds twice the people
                 and len(cached["known"].names) <= 2 * (p_count + (e_count or 0)) + 100)
        with _KNOWN_NAMES_LOCK:
            if grown:
                # only what was written since the last look (>=: rows of that same instant again, harmless)
                cached["known"].add(person_names(since=min((d for d in (old[1], old[5]) if d), default=None)))
                cached["signature"] = signature
            else:
                companies = tuple(n for n in self.env["res.company"].sudo().search([]).mapped("name") if n)
                known = pii_names.KnownNames.build(person_names())
                _KNOWN_NAMES[key] = cached = {"signature": signature, "known": known, "companies": companies}
        return cached["known"], cached["companies"]

    @api.model
    def _pii_gate(self, question, *, query=None, history=None, mapping=None):
        """Neutralise everything of a request that carries user text: question, standalone query, history.

        Returns a ``pii.Gated`` (what the Ollama client requires); with the gate switched off in the
        settings the texts pass unchanged (still marked). Raises ``pii.PiiGateError`` on any failure:
        the caller then sends nothing (fail closed).
        """
        try:
            config = self._pii_config()
            detectors = config["detectors"] if config["enabled"] else []
            known, companies = self._pii_known_names()
            if not isinstance(mapping, pii.Mapping):
                mapping = pii.Mapping.from_dict(mapping)
            return pii.gate_request(question, query=query, history=history,
                                    known_names=known if "name" in detectors else None,
                                    allow_list=config["allow_list"] + list(companies), detectors=detectors,
                                    mapping=mapping)
        except pii.PiiGateError:
            raise
        except Exception as exc:  # noqa: BLE001 - fail closed: whatever went wrong, nothing is sent
            raise pii.PiiGateError(f"{type(exc).__name__}: {exc}") from exc


class ResConfigSettings(models.TransientModel):
    _inherit = "res.config.settings"

    pv_kb_ollama_url = fields.Char("Ollama URL", config_parameter="pv_kb.ollama_url",
                                   default=DEFAULTS["ollama_url"][0])
    pv_kb_embedding_model = fields.Char("Embedding model", config_parameter="pv_kb.embedding_model",
                                        default=DEFAULTS["embedding_model"][0])
    pv_kb_chat_model = fields.Char("Chat model", config_parameter="pv_kb.chat_model",
                                   default=DEFAULTS["chat_model"][0])
    pv_kb_query_prefix = fields.Char("Query prefix", config_parameter="pv_kb.query_prefix",
                                     help="E5-style models need 'query: '.")
    pv_kb_passage_prefix = fields.Char("Passage prefix", config_parameter="pv_kb.passage_prefix",
                                       help="E5-style models need 'passage: '.")
    pv_kb_top_k = fields.Integer("Entries per answer (top k)", config_parameter="pv_kb.top_k",
                                 default=DEFAULTS["top_k"][0])
    pv_kb_rrf_k = fields.Integer("RRF k", config_parameter="pv_kb.rrf_k", default=DEFAULTS["rrf_k"][0],
                                 help="Only used when the fusion recipe is reciprocal rank fusion; the current "
                                      "recipe combines normalised scores and has no k.")
    pv_kb_connect_timeout = fields.Float("Connect timeout (s)", config_parameter="pv_kb.connect_timeout",
                                         default=DEFAULTS["connect_timeout"][0])
    pv_kb_read_timeout = fields.Float("Read timeout (s)", config_parameter="pv_kb.read_timeout",
                                      default=DEFAULTS["read_timeout"][0])
    pv_kb_embed_batch_size = fields.Integer("Embedding batch size", config_parameter="pv_kb.embed_batch_size",
                                            default=DEFAULTS["embed_batch_size"][0])
    pv_kb_num_ctx = fields.Integer("Context window (num_ctx)", config_parameter="pv_kb.num_ctx",
                                   default=DEFAULTS["num_ctx"][0])
    pv_kb_answer_time_limit = fields.Float("Answer time limit (s)", config_parameter="pv_kb.answer_time_limit",
                                           default=DEFAULTS["answer_time_limit"][0])
    pv_kb_gate_dense_floor = fields.Float(
        "Refusal gate: similarity floor", config_parameter="pv_kb.gate_dense_floor", digits=(3, 3),
        help="A question with no full-text match and no dense hit above this similarity is refused without "
             "asking the model. Depends on the embedding model: calibrate it with the eval command "
             "(lowest similarity of an answerable gold question, minus a margin); 0 switches this part off.")
    pv_kb_answer_mode = fields.Selection(
        [("text", "Free text"), ("structured", "Structured (JSON, checked per statement)"),
         ("selection", "Selection (the model picks passages, quoted word for word)")],
        string="Answer mode", config_parameter="pv_kb.answer_mode", default=DEFAULTS["answer_mode"][0],
        help="Free text: the model writes Markdown, checked afterwards. Structured: the model answers in JSON "
             "statements with sources and verbatim quotes; each is checked and the answer is written by the "
             "server, so an uncited sentence cannot occur. Selection: every sentence and table row of the context "
             "is numbered, the model only names the numbers that answer the question and the server quotes "
             "them word for word with source and Stand (for small models).")
    pv_kb_answer_modes = fields.Char(
        "Answer mode per chat model", config_parameter="pv_kb.answer_modes",
        help="Exceptions to the answer mode, e.g. 'qwen2.5-coder:1.5b=selection; qwen3=text' (a name without "
             "tag applies to all its tags).")
    pv_kb_max_concurrent_answers = fields.Integer(
        "Concurrent answers (all users)", config_parameter="pv_kb.max_concurrent_answers",
        default=DEFAULTS["max_concurrent_answers"][0],
        help="At most this many answers are generated at once; further questions get a 'busy' message.")
    pv_kb_max_answers_per_user = fields.Integer(
        "Concurrent answers per user", config_parameter="pv_kb.max_answers_per_user",
        default=DEFAULTS["max_answers_per_user"][0])
    pv_kb_ollama_auth_header = fields.Char(
        "Proxy header", config_parameter="pv_kb.ollama_auth_header", groups="base.group_system",
        help="Optional header sent with every request to the Ollama server, e.g. 'Authorization: Bearer …' "
             "for a proxy in front of it. Only system administrators can read it.")
    pv_kb_rerank = fields.Boolean(
        "Rerank with the chat model", config_parameter="pv_kb.rerank",
        help="The chat model orders the best matching entries by relevance (one extra request per question) before "
             "the best 'top k' go into the answer. Costs time: measure it with 'pv_kb eval --rerank' first.")
    pv_kb_rerank_depth = fields.Integer(
        "Entries to rerank", config_parameter="pv_kb.rerank_depth", default=DEFAULTS["rerank_depth"][0],
        help="How many entries of the fused ranking the chat model orders (5 to 40).")
    pv_kb_query_rewrite = fields.Boolean(
        "Rewrite questions for the search", config_parameter="pv_kb.query_rewrite",
        help="The chat model restates a question (also a follow-up) in the terms of the knowledge base before the "
             "search (one extra request per question). The rewrite is only searched; the answer is given to the "
             "question as asked.")
    pv_kb_embedding_status = fields.Char("Embeddings", compute="_compute_pv_kb_embedding_status")
    # personal-data gate (not config_parameter fields: an unchecked boolean would delete the parameter,
    # and the gate is on when nothing is stored)
    pv_kb_pii_gate = fields.Boolean(
        "Personal-data gate", default=True,
        help="Personal data in questions (names, social security, tax and personnel numbers, IBAN, phone, e-mail, "
             "dates of birth) is replaced by placeholders before anything reaches the model or the question log.")
    pv_kb_pii_detectors = fields.Char(
        "Detectors", default=", ".join(pii.DETECTORS),
        help="Comma-separated: " + ", ".join(pii.DETECTORS) + ". Empty: all.")
    pv_kb_pii_allow_list = fields.Text(
        "Never replace", help="One phrase per line that is never replaced (e.g. the company's own name). The names "
                               "of the companies in this database are always allowed.")

    @api.model
    def get_values(self):
        res = super().get_values()
        params = self.env["ir.config_parameter"].sudo()
        res.update(
            pv_kb_pii_gate=params.get_param("pv_kb.pii_gate", "on") != "off",
            pv_kb_pii_detectors=params.get_param("pv_kb.pii_detectors") or ", ".join(pii.DETECTORS),
            pv_kb_pii_allow_list=params.get_param("pv_kb.pii_allow_list") or "",
        )
        return res

    def set_values(self):
        super().set_values()
        detectors = [d.strip() for d in (self.pv_kb_pii_detectors or "").replace("\n", ",").split(",") if d.strip()]
        unknown = sorted(set(detectors) - set(pii.DETECTORS))
        if unknown:
            raise UserError(_("Unknown detectors: %(names)s. Possible: %(all)s",
                              names=", ".join(unknown), all=", ".join(pii.DETECTORS)))
        params = self.env["ir.config_parameter"].sudo()
        params.set_param("pv_kb.pii_gate", "on" if self.pv_kb_pii_gate else "off")
        params.set_param("pv_kb.pii_detectors", ", ".join(detectors) or ", ".join(pii.DETECTORS))
        params.set_param("pv_kb.pii_allow_list", self.pv_kb_pii_allow_list or "")

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

    @api.constrains("pv_kb_top_k", "pv_kb_rrf_k", "pv_kb_connect_timeout", "pv_kb_read_timeout",
                    "pv_kb_embed_batch_size", "pv_kb_num_ctx", "pv_kb_answer_time_limit", "pv_kb_gate_dense_floor",
                    "pv_kb_max_concurrent_answers", "pv_kb_max_answers_per_user", "pv_kb_rerank_depth")
    def _check_pv_kb_bounds(self):
        for settings in self:
            for key, (low, high) in BOUNDS.items():
                value = settings[f"pv_kb_{key}"]
                if not low <= value <= high:
                    raise ValidationError(_("%(field)s must be between %(low)s and %(high)s.",
                                            field=settings._fields[f"pv_kb_{key}"].get_description(self.env)["string"],
                                            low=low, high=high))
            upper = answer_time_limit_problem(settings.pv_kb_answer_time_limit, config.get("limit_time_real"))
            if upper is not None:
                raise ValidationError(_(
                    "The answer time limit must stay %(margin)s s below Odoo's limit_time_real (%(real)s s): at most "
                    "%(upper)s s.", margin=int(TIME_LIMIT_MARGIN), real=config.get("limit_time_real"), upper=upper))

    def action_pv_kb_embed_now(self):
        self.env["pv.kb.settings"]._check_manager()
        self.execute()
        return self.env["pv.kb.chunk"].action_embed_now()

    def _pv_kb_form_settings(self):
        """The stored settings with what is in the form on top (unsaved values included)."""
        system = self.env.user.has_group("base.group_system")
        values = {key: self[f"pv_kb_{key}"] for key in DEFAULTS if f"pv_kb_{key}" in self._fields
                  and (system or key not in SECRET_KEYS)}
        if not (values.get("api_key") or "").strip():
            values.pop("api_key", None)     # empty field: the stored key (never shown in the form)
        return self.env["pv.kb.settings"]._get({k: v for k, v in values.items() if v not in (None, False)})
