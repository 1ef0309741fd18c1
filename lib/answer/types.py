"""The data the answer modules pass to each other (up to one prepared question and its answer), the refusal
sentence and two small helpers.

A module of its own so that prompt, validation and conflicts do not import each other
in a circle (validation needs :class:`Conflict`, so does the prompt).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from ..kb.entry_facts import EntryFacts  # noqa: F401 - the one entry record, shared with the health check

REFUSAL_TEXT = "Dazu enthält die Wissensbasis keine Aussage."


def missing_year_note(asked, latest: str) -> str:
    """The line above the latest values when the base holds none for the asked year (fact and selection answers);
    for a year before every value of the base, "noch" would say the wrong thing."""
    first = re.search(r"(?:19|20)\d{2}", str(latest))     # "2025", "ab 2025", "2025–2026"
    if str(asked).isdigit() and first and int(asked) < int(first.group(0)):
        return f"Für {asked} enthält die Wissensbasis keinen Wert; spätere Werte, etwa {latest}:"
    return f"Für {asked} enthält die Wissensbasis noch keinen Wert; zuletzt {latest}:"

def missing_scope_note(kind: str, name: str) -> str:
    """The line above the passages when they do not name the Bundesland, group of employees or unit the question
    asks for, or hold no percentage when it asks for one."""
    if kind in ("land", "group"):
        return f"Für {name} enthält die Wissensbasis keinen eigenen Wert; die passendsten Stellen nennen:"
    if kind == "rate":
        return "Einen Prozentsatz dazu enthält die Wissensbasis nicht; die passendsten Stellen nennen:"
    return f"Einen Wert je {name} enthält die Wissensbasis nicht; die passendsten Stellen nennen:"

# Violation codes that only warn: ``Validation.ok`` ignores them.
WARNING_CODES = frozenset({"missing_stand", "conflict_unmarked"})


# --------------------------------------------------------------------------- data


@dataclass
class ContextBlock:
    """One retrieved chunk of an entry, as shown to the model."""

    entry_id: str
    title: str
    stand: str
    topic: str
    source: str
    heading_path: str
    text: str
    section_key: str
    score: float = 0.0
    expansion: bool = False
    rank_in_entry: int = 0      # 0 = the entry's section that answers the question best (see prompt.pick_blocks)
    priority: int = 0           # set by prompt.pick_blocks when the window is small: lower is kept first


@dataclass
class Conflict:
    """Entries whose Kernwerte give different values for the same key."""

    key: str
    entry_ids: list[str]
    values: dict[str, str]
    stands: dict[str, str]
    outdated: bool = False      # the first entry's value is of an earlier year than the second's (not a conflict)


@dataclass
class Violation:
    """One broken rule in an answer; ``detail`` names the id, value or sentence."""

    code: str
    detail: str


@dataclass
class Validation:
    """Result of :func:`validate_answer`."""

    cited_ids: list[str]
    violations: list[Violation]
    refused: bool

    @property
    def ok(self) -> bool:
        """True when no violation other than a warning-level one was found."""
        return all(v.code in WARNING_CODES for v in self.violations)



def short(text: str, limit: int = 160) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def ordered_unique(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


# --------------------------------------------------------------------------- one answer


@dataclass
class AgentAnswer:
    status: str                       # beantwortet | verweigert | unsicher | notbetrieb | fehler | abgebrochen
    answer: str
    cited_ids: list = field(default_factory=list)
    retrieved_ids: list = field(default_factory=list)
    violations: list = field(default_factory=list)
    notice: str | None = None
    conflicts: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    regenerations: int = 0
    gate_refused: bool = False        # refused before generation (lib.answer.gate), no model call
    prompt_tokens: int = 0
    answer_tokens: int = 0
    query: object = None              # pv.kb.query record
    retrieval: object = None          # RetrievalResult
    pii_count: int = 0                # personal data replaced in the question (the panel's notice)
    pii_mapping: dict | None = None   # placeholder → value, for the user's own screen only (never stored)
    answer_mode: str = "text"         # text | structured | selection
    quotes: list = field(default_factory=list)   # [{"kb_id", "passage"}]: the passage each citation rests on
    rejected: str = ""                # model text that was not shown (kept in the question log)
    steps: dict = field(default_factory=dict)    # {"rerank"|"rewrite": {"status", "reason", …}} when they ran
    from_facts: bool = False          # composed from the fact table (lib/answer/fact_answer.py)
    server: str = ""                  # the (redacted) URL of the chat server that answered; "" when none did
    turn: dict | None = None          # what the panel shows of it (pv.kb.query._turn), set with the log row


@dataclass
class PreparedQuestion:
    """What step 1 (database) hands to step 2 (the model): plain data, no records."""
    question: str
    query: str                        # the text searched (standalone follow-up query)
    history: list
    settings: dict
    texts: dict                       # the agent's messages, translated
    started: float                    # time.perf_counter() at the start
    retrieval: object = None          # RetrievalResult
    blocks: list = field(default_factory=list)
    conflicts: list = field(default_factory=list)
    messages: list = field(default_factory=list)
    verdict: object = None            # the gate's verdict when it refused
    commanded: bool = False           # the question commands a statement (lib/search/instructions.commands_statement)
    error: Exception | None = None    # step 1 failed
    answer_mode: str = "text"         # text | structured (lib/answer/structured.py) | selection (…/selection.py)
    units: list = field(default_factory=list)        # selection mode: the numbered passages of the context
    gated: object = None              # pii.Gated: the masked question, query, history and the mapping
    pii_failed: bool = False          # the personal-data gate failed: nothing is sent, nothing stored
    timings: dict = field(default_factory=dict)
    # the optional model steps (lib/answer/stages.py)
    search_query: str | None = None   # the accepted rewrite: searched instead of ``query``, never shown
    answered_by: str = ""             # the chat server of the last model answer (ChatResult.server)
    rewrite: object = None            # lib.query_rewrite.Outcome when rewriting is on
    rerank: object = None             # lib.rerank.Outcome when reranking ran
    pending: bool = False             # reranking on: blocks and messages wait for the model's order
    all_blocks: list = field(default_factory=list)   # blocks of every retrieved entry (before the cut)
    entry_facts: list = field(default_factory=list)  # EntryFacts of every retrieved entry (conflicts)
    summaries: dict = field(default_factory=dict)    # {chunk id: row}: Kernwerte and summaries read in step 1
    plan: dict = field(default_factory=dict)         # system prompt, max_blocks, max_chars of the context
    fact_answer: object = None        # lib.answer.fact_answer.FactAnswer: the value question answered from facts
    asked: str = ""                   # the masked question as asked, when instructions were dropped from it
    synonyms: object = None           # lib.search.fulltext.SynonymTable of the base (lib/answer/gate)
    outdated: list = field(default_factory=list)     # Conflicts(outdated=True): an older year's value beside a newer
