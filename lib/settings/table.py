"""One declaration per setting: key, default, type, bounds, who may edit, snapshot, label and help.

Everything that deals with settings reads this table: ``pv.kb.settings._get`` (reading, with per-run
overrides), the fields, checks and storage of ``res.config.settings`` (``models/res_config_settings.py``),
the snapshot an answer log or an evaluation report records, and the settings table of the documentation
(:func:`rows`). A setting is stored as the ``ir.config_parameter`` ``pv_kb.<key>``; its form field, if it
has one, is ``pv_kb_<key>``. Labels and help are the English source strings of the fields; the German
texts the UI shows are their translations in ``i18n/de.po``.

Adding a setting: one ``Setting`` here, its field in the view (``views/res_config_settings_views.xml``,
when it has a form field) and the German label and help in ``i18n/de.po``.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from ..answer import modes as answer_modes
from ..facts.compare import EMBED_THRESHOLD
from ..llm.servers import DEFAULT_COOLDOWN, KINDS as SERVER_KINDS, RERANK_KINDS, parse_servers
from ..pii.gate import DETECTORS
from ..search.ranking import RRF_K

SYSTEM = "base.group_system"              # system administrators
MANAGER = "pv_kb.group_pv_kb_manager"     # knowledge base managers
EDITORS = {SYSTEM: "system administrators", MANAGER: "knowledge base managers"}

KINDS = ("char", "text", "integer", "float", "boolean", "selection", "csv")
_PYTHON = {"char": str, "text": str, "integer": int, "float": float, "boolean": bool, "selection": str, "csv": str}
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


@dataclasses.dataclass(frozen=True)
class Setting:
    """One setting. ``form``: it has a field in the settings form (else it is set by scripts or tests only).

    ``editor``: who may change it (``SYSTEM`` settings are also readable by system administrators only);
    ``bounds``: (low, high) checked on save; ``clamp``: values outside the bounds are also pulled into
    them when read; ``snapshot``: recorded with every answer log and evaluation report; ``choices``:
    (value, label) pairs of a selection, or the allowed items of a comma-separated list ("csv"); ``secret``:
    written, never read back into the form, never recorded (an API key); ``check``: a function that gives why a
    value cannot be stored, or None."""

    key: str
    default: object
    kind: str
    label: str
    help: str = ""
    bounds: tuple | None = None
    clamp: bool = False
    editor: str = MANAGER
    snapshot: bool = False
    form: bool = True
    digits: tuple | None = None
    choices: tuple | Callable[[], tuple] = ()
    secret: bool = False
    check: Callable | None = None

    def __post_init__(self):
        assert self.kind in KINDS, self.kind
        assert self.editor in EDITORS, self.editor
        assert not self.bounds or self.kind in ("integer", "float"), self.key
        assert not self.secret or (self.editor == SYSTEM and not self.snapshot), self.key

    @property
    def param(self) -> str:
        return f"pv_kb.{self.key}"

    @property
    def field(self) -> str:
        return f"pv_kb_{self.key}"

    @property
    def python_type(self) -> type:
        return _PYTHON[self.kind]

    def options(self) -> tuple:
        """The (value, label) pairs of a selection; the allowed items of a "csv" setting."""
        return tuple(self.choices() if callable(self.choices) else self.choices)

    def parse(self, raw):
        """A stored (or overriding) value as the setting's type; unusable values give the default."""
        if self.kind == "boolean":
            # stored as "True"/"False" (the personal-data gate in older databases: "on"/"off"); anything else is
            # the default, so that a garbled value never switches the gate off
            if raw is True or raw is False:
                return raw
            text = str(raw).strip().lower() if raw is not None else None
            return True if text in _TRUE else False if text in _FALSE else self.default
        if raw is None or raw is False or self.kind == "csv" and not csv_items(raw):
            return self.default
        try:
            value = self.python_type(raw)
        except (TypeError, ValueError):
            return self.default
        if self.clamp and self.bounds:
            value = min(max(value, self.bounds[0]), self.bounds[1])
        return value

    def serialise(self, value) -> str | bool:
        """What is stored for a value from the form: text, or False (the parameter is removed: default)."""
        if self.kind == "boolean":
            return "True" if value else "False"
        if self.kind in ("integer", "float"):
            return repr(self.python_type(value or 0))
        if self.kind == "csv":
            return ", ".join(csv_items(value)) or ", ".join(self.options())
        text = (value or "").strip() if self.kind != "text" else (value or "")
        return text or False

    def problem(self, value):
        """Why a value from the form cannot be stored: ("bounds", low, high), ("unknown", [items]),
        ("invalid", reason) or None."""
        if self.bounds and value is not None and value is not False and not self.bounds[0] <= value <= self.bounds[1]:
            return ("bounds", *self.bounds)
        if self.kind == "csv":
            unknown = sorted(set(csv_items(value)) - set(self.options()))
            if unknown:
                return ("unknown", unknown)
        if self.check is not None:
            reason = self.check(value)
            if reason:
                return ("invalid", reason)
        return None


def csv_items(value) -> list[str]:
    """"a, b\\nc" -> ["a", "b", "c"]."""
    return [item.strip() for item in (value or "").replace("\n", ",").split(",") if item.strip()]


def _answer_mode_choices() -> tuple:
    """The registered answer modes (lib/answer/modes), with their longer names."""
    return tuple((mode.key, mode.title) for mode in answer_modes.registered())


# role -> kind of a line without one, allowed kinds (lib/llm/servers.py)
SERVER_ROLES = (("chat", "ollama", SERVER_KINDS), ("embedding", "ollama", SERVER_KINDS),
                ("rerank", "openai", RERANK_KINDS))


def _server_list_check(default_kind, kinds):
    def check(value):
        try:
            parse_servers(value or "", default_kind, kinds)
        except ValueError as exc:
            return str(exc)
        return None
    return check


SETTINGS: tuple[Setting, ...] = (
    # --- the model server ---------------------------------------------------------------------------------
    Setting("ollama_url", "http://localhost:11434", "char", "Ollama URL", snapshot=True),
    Setting("embedding_model", "bge-m3", "char", "Embedding model", snapshot=True),
    Setting("chat_model", "qwen3:32b", "char", "Chat model", snapshot=True),
    Setting("query_prefix", "", "char", "Query prefix", "E5-style models need 'query: '.", snapshot=True),
    Setting("passage_prefix", "", "char", "Passage prefix", "E5-style models need 'passage: '.", snapshot=True),
    # --- retrieval ----------------------------------------------------------------------------------------
    Setting("top_k", 8, "integer", "Entries per answer (top k)", bounds=(1, 50), snapshot=True),
    Setting("rrf_k", RRF_K, "integer", "RRF k",   # chosen with the fusion recipe (lib/search/ranking.py)
            "Only used when the fusion recipe is reciprocal rank fusion; the current recipe combines normalised "
            "scores and has no k.", bounds=(1, 1000), snapshot=True),
    # --- timeouts and batches -----------------------------------------------------------------------------
    Setting("connect_timeout", 3.0, "float", "Connect timeout (s)", bounds=(0.5, 60.0)),
    Setting("read_timeout", 120.0, "float", "Read timeout (s)", bounds=(1.0, 3600.0)),
    Setting("embed_batch_size", 32, "integer", "Embedding batch size", bounds=(1, 512)),
    Setting("num_ctx", 8192, "integer", "Context window (num_ctx)", bounds=(512, 262144), snapshot=True),
    Setting("answer_time_limit", 90.0, "float", "Answer time limit (s)", bounds=(5.0, 3600.0)),
    Setting("keep_alive", "30m", "char", "Keep the model loaded",
            "How long the model server keeps a model in memory after a request (Ollama's keep_alive).",
            form=False),
    # --- answers ------------------------------------------------------------------------------------------
    Setting("gate_dense_floor", 0.0, "float", "Refusal gate: similarity floor",
            "A question with no full-text match and no dense hit above this similarity is refused without "
            "asking the model. Depends on the embedding model: calibrate it with the eval command "
            "(lowest similarity of an answerable gold question, minus a margin); 0 switches this part off.",
            bounds=(0.0, 1.0), digits=(3, 3)),
    Setting("answer_mode", "text", "selection", "Answer mode",
            "Free text: the model writes Markdown, checked afterwards. Structured: the model answers in JSON "
            "statements with sources and verbatim quotes; each is checked and the answer is written by the "
            "server, so an uncited sentence cannot occur. Selection: every sentence and table row of the context "
            "is numbered, the model only names the numbers that answer the question and the server quotes "
            "them word for word with source and Stand (for small models).",
            snapshot=True, choices=_answer_mode_choices),
    Setting("answer_modes", "", "char", "Answer mode per chat model",
            "Exceptions to the answer mode, e.g. 'qwen2.5-coder:1.5b=selection; qwen3=text' (a name without "
            "tag applies to all its tags).", snapshot=True),
    # --- load ---------------------------------------------------------------------------------------------
    Setting("max_concurrent_answers", 24, "integer", "Concurrent answers (all users)",
            "At most this many answers are generated at once; further questions get a 'busy' message.",
            bounds=(1, 1000)),
    Setting("max_answers_per_user", 2, "integer", "Concurrent answers per user", bounds=(1, 100)),
    Setting("questions_per_minute", 30, "integer", "Questions per user and minute",
            "A user who asks more questions within a minute is asked to wait (protects the nightly analysis "
            "of unanswered questions and the model server from scripted floods).", bounds=(1, 10000)),
    Setting("ollama_auth_header", "", "char", "Proxy header",
            "Optional header sent with every request to the Ollama server, e.g. 'Authorization: Bearer …' "
            "for a proxy in front of it. Only system administrators can read it.", editor=SYSTEM),
    # --- optional chat-model steps around retrieval (lib/search/rerank.py, lib/search/rewrite.py) -----------
    Setting("rerank", False, "boolean", "Rerank with the chat model",
            "The chat model orders the best matching entries by relevance (one extra request per question) before "
            "the best 'top k' go into the answer. Costs time: measure it with 'pv_kb eval --rerank' first.",
            snapshot=True),
    Setting("rerank_depth", 20, "integer", "Entries to rerank",
            "How many entries of the fused ranking the chat model orders (5 to 40).", bounds=(5, 40), clamp=True,
            snapshot=True),
    Setting("query_rewrite", False, "boolean", "Rewrite questions for the search",
            "The chat model restates a question (also a follow-up) in the terms of the knowledge base before the "
            "search (one extra request per question). The rewrite is only searched; the answer is given to the "
            "question as asked.", snapshot=True),
    # --- several model servers, OpenAI-compatible servers, a rerank endpoint (lib/llm/servers.py) -------------
    Setting("server_type", "ollama", "selection", "Server type",
            "The API of the server at the URL above. OpenAI-compatible: the URL without /v1.",
            choices=(("ollama", "Ollama"), ("openai", "OpenAI-compatible (vLLM, llama.cpp server, LiteLLM, …)"))),
    Setting("api_key", "", "char", "New API key",
            "Sent as 'Authorization: Bearer …' to every model server. A stored key is never shown again: enter a "
            "new one to replace it. Only system administrators can set it.", editor=SYSTEM, secret=True),
    Setting("structured_output", "auto", "selection", "Structured output",
            "How a JSON schema is sent to an OpenAI-compatible server. Automatic tries json_schema, then "
            "json_object, then none, and keeps what the server accepted.",
            choices=(("auto", "Automatic"), ("json_schema", "json_schema (vLLM, SGLang, llama.cpp server, LiteLLM)"),
                     ("json_object", "json_object with schema (llama-cpp-python)"),
                     ("none", "None (only the prompt asks for JSON)"))),
    Setting("chat_servers", "", "text", "Chat servers",
            "One server per line, 'openai http://host:8000' or 'ollama http://host:11434'; empty: the server above. "
            "Answers are spread over them; a server that fails is skipped for the cool-down.",
            check=_server_list_check("ollama", SERVER_KINDS)),
    Setting("embedding_servers", "", "text", "Embedding servers",
            "One server per line, as for chat; empty: the server above. All must serve the same embedding model: "
            "'Test connection' checks it, and the embedding job refuses a list whose servers give different "
            "vectors.", check=_server_list_check("ollama", SERVER_KINDS)),
    Setting("rerank_servers", "", "text", "Rerank servers",
            "One server per line: 'openai http://host:8000' (/v1/rerank of vLLM or llama.cpp server) or "
            "'tei http://host:8080' (/rerank of Text Embeddings Inference). Empty: no rerank endpoint (default).",
            check=_server_list_check("openai", RERANK_KINDS)),
    Setting("rerank_model", "", "char", "Rerank model", "e.g. BAAI/bge-reranker-v2-m3, as the rerank server names it."),
    Setting("failover_cooldown", DEFAULT_COOLDOWN, "float", "Cool-down after a failure (s)",
            "A server that failed is tried last for this long.", bounds=(0.0, 3600.0)),
    # --- personal data (read by models/pv_kb_pii_gate.py; never overridden per run) ----------------------
    Setting("pii_gate", True, "boolean", "Personal-data gate",
            "Personal data in questions (names, social security, tax and personnel numbers, IBAN, phone, e-mail, "
            "dates of birth) is replaced by placeholders before anything reaches the model or the question log."),
    Setting("pii_detectors", ", ".join(DETECTORS), "csv", "Detectors",
            "Comma-separated: " + ", ".join(DETECTORS) + ". Empty: all.", choices=DETECTORS),
    Setting("pii_allow_list", "", "text", "Never replace",
            "One phrase per line that is never replaced (e.g. the company's own name). The names of the "
            "companies in this database are always allowed."),
    # --- value answers from the fact table (lib/facts, lib/answer/fact_answer.py) ------------------------------
    Setting("fact_answers", True, "boolean", "Answer value questions from the facts",
            "A question for a value that the Kernwerte hold (e.g. \"GFB 2025?\") is answered at once from the "
            "fact table, with year, entry and Stand; the model is not asked."),
    Setting("fact_explain", False, "boolean", "Model explanation after the facts",
            "After an answer from the facts, the chat model adds an explanation below it (the facts stay first "
            "and unchanged)."),
    # --- the health check (models/pv_kb_health.py) ---------------------------------------------------------
    Setting("health_next_year_month", 10, "integer", "Coming year's values: check from month",
            "From the first day of this month on, concepts with values for last year and this year but none for "
            "the next are reported.", bounds=(1, 12)),
    Setting("health_max_age_months", 36, "integer", "Outdated after (months)", "0 switches the age rule off."),
    Setting("health_duplicate_threshold", 0.95, "float", "Near-duplicate similarity",
            "Cosine similarity of two summaries from which they count as near-duplicates (depends on the "
            "embedding model).", digits=(3, 3)),
    Setting("health_unretrieved_days", 90, "integer", "Never retrieved: days"),
    Setting("health_unretrieved_min_questions", 50, "integer", "Never retrieved: questions at least",
            "The never-retrieved rule waits until the question log holds this many questions of the period.",
            form=False),
    Setting("health_embedding_grace_minutes", 60, "integer", "Embedding: minutes of grace",
            "An entry changed less than this long ago is not reported as not embedded yet.", form=False),
    Setting("health_gap_days", 90, "integer", "Gaps: days of the question log",
            "Only questions of these last days are grouped into gaps.", bounds=(1, 3650)),
    Setting("health_gap_max_questions", 2000, "integer", "Gaps: questions per run",
            "At most this many of the latest gap questions are grouped per run (keeps the nightly run short).",
            bounds=(10, 5000)),
    Setting("health_gap_cluster_threshold", 0.8, "float", "Gap groups: similarity",
            "Similarity from which refused questions fall into one gap group.", form=False),
    Setting("health_concept_similarity", EMBED_THRESHOLD, "float", "Facts: similarity of differently labelled concepts",
            "Cosine similarity of two concept texts from which the fact comparison takes them for one concept "
            "where the words of their labels do not match (chosen for multilingual-e5-small; 0 switches it off).",
            form=False),
)

BY_KEY = {setting.key: setting for setting in SETTINGS}
assert len(BY_KEY) == len(SETTINGS), "a key is declared twice"

# the settings an answer log or an evaluation report records, so that numbers can be traced to them
SNAPSHOT_KEYS = tuple(s.key for s in SETTINGS if s.snapshot)


def defaults() -> dict:
    return {s.key: s.default for s in SETTINGS}


def read(stored: Callable[[str], object], overrides: dict | None = None) -> dict:
    """Every setting's value: the override if given, else ``stored(param)`` (None when nothing is stored)."""
    overrides = overrides or {}
    values = {}
    for setting in SETTINGS:
        raw = overrides.get(setting.key)
        values[setting.key] = setting.parse(stored(setting.param) if raw is None else raw)
    values["ollama_url"] = values["ollama_url"].rstrip("/")
    return values


def form_settings() -> tuple[Setting, ...]:
    """The settings with a field in the settings form, in the table's order."""
    return tuple(s for s in SETTINGS if s.form)


def rows(translate: Callable[[str], str] = str) -> list[dict]:
    """One row per setting for a documentation table; ``translate`` gives the UI's text of a label."""
    result = []
    for s in SETTINGS:
        result.append({
            "key": s.param, "label": translate(s.label), "type": s.kind, "default": s.default,
            "bounds": f"{s.bounds[0]}–{s.bounds[1]}" if s.bounds else "",
            "editor": EDITORS[s.editor], "snapshot": s.snapshot, "in_form": s.form,
        })
    return result
