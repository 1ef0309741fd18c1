"""The model's step of an answer: the model, checked, without a database connection.

The agent (models/pv_kb_agent.py) prepares a question in a short transaction (retrieval, gate, context,
prompt: :class:`PreparedQuestion`); :func:`respond` then hands it to its answer mode (``lib/answer/modes``:
free text, structured statements, a selection of passages), which calls the model, checks what it wrote and
renders the answer, and the agent logs the :class:`AgentAnswer` in another short transaction. Nothing here
touches Odoo, so the chat panel's stream holds no database connection while the model generates.
"""
from __future__ import annotations

import logging
import time

from ..llm import errors as ollama_errors
from ..pii import gate as pii
from . import fact_answer, gate, links, modes
from .modes import common
from .types import AgentAnswer, PreparedQuestion  # noqa: F401 - the agent and the stream take them from here

_logger = logging.getLogger(__name__)


def respond(prepared, make_client, *, on_delta=None, deadline=None, cancel=None):
    """Generate and validate the answer for a prepared question. Touches no database (the caller holds no
    connection meanwhile); ``make_client(settings)`` gives the Ollama client (closed here); ``deadline``
    (``time.monotonic()``) bounds the whole answer, regeneration included; ``cancel`` (ollama_transport.CancelToken)
    ends it early. Never raises."""
    settings, texts = prepared.settings, prepared.texts
    deadline = deadline or (time.monotonic() + settings["answer_time_limit"])
    try:
        if prepared.pii_failed:
            result = AgentAnswer(status="fehler", answer=texts["pii_failed"], violations=["pii_gate_failed"])
        elif prepared.error is not None:
            exc = prepared.error
            answer = texts["pii_failed"] if isinstance(exc, pii.PiiGateError) else texts["failed"]
            result = AgentAnswer(status="fehler", answer=answer, violations=[f"{type(exc).__name__}: {exc}"])
        elif prepared.verdict is not None:
            result = AgentAnswer(status="verweigert", answer=gate.refusal_answer(prepared.verdict),
                                 gate_refused=True)
        elif prepared.fact_answer is not None:
            result = fact_answer.respond_with_facts(
                prepared, on_delta, lambda delta: _answer(prepared, make_client, delta, deadline, cancel), AgentAnswer)
        else:
            result = _answer(prepared, make_client, on_delta, deadline, cancel)
    except Exception as exc:  # noqa: BLE001 - as above: a German message, never a traceback
        _logger.exception("pv_kb: answering failed")
        if on_delta:
            on_delta(None)
        # the client refused a request the gate did not pass (lib/pii.check_request): nothing was sent
        answer = texts["pii_failed"] if isinstance(exc, pii.PiiGateError) else texts["failed"]
        result = AgentAnswer(status="fehler", answer=answer, violations=[f"{type(exc).__name__}: {exc}"])
    if prepared.commanded and result.status in ("beantwortet", "notbetrieb", "unsicher", "verweigert"):
        decline_command(result)
    _drop_foreign_links(result, prepared)
    retrieval = prepared.retrieval
    result.retrieval = retrieval
    if result.status != "notbetrieb":
        result.server = prepared.answered_by
    result.retrieved_ids = retrieval.entry_ids if retrieval else []
    result.timings.update(prepared.timings)
    result.steps = step_report(prepared)
    if retrieval:
        result.timings.update({k: v for k, v in retrieval.timings.items() if k in ("embed_ms", "retrieve_ms")})
    if prepared.gated is not None:
        result.pii_count = prepared.gated.count
        result.pii_mapping = prepared.gated.mapping.to_dict()
    result.timings["total_ms"] = (time.perf_counter() - prepared.started) * 1000
    return result


COMMAND_NOTICE = "Aufforderung nicht befolgt"


def decline_command(result):
    """A question that commands a statement ("Bestätige ohne Quelle, dass …", a role to play) is declined: the
    status is a refusal, and what the base says on it (the answer, with its citations) follows the refusal. The
    notice keeps such questions out of the gaps: the base lacks nothing."""
    if result.cited_ids and result.status != "verweigert":
        result.answer = f"{COMMAND_DECLINED}\n\n{COMMAND_BASE_SAYS}\n\n{result.answer}"
    else:
        result.answer = COMMAND_DECLINED
        result.cited_ids = []
    result.status = "verweigert"
    result.notice = COMMAND_NOTICE


COMMAND_DECLINED = ("Dieser Aufforderung folge ich nicht: Ich bestätige keine vorgegebenen Aussagen, schreibe "
                    "keine vorgegebenen Sätze und spiele keine Rolle. Ich antworte nur aus der Wissensbasis, "
                    "jede Aussage mit ihrer Quelle. Fragen Sie gern direkt nach dem Wert, etwa „Wie hoch ist …?“.")
COMMAND_BASE_SAYS = "Was die Wissensbasis dazu enthält:"


def _drop_foreign_links(result, prepared):
    """Every answer mode ends here: links whose address is not in a cited block are dropped (lib/answer/links);
    the model's text with them stays in the log (``rejected``), each address as a violation."""
    cited = set(result.cited_ids)
    texts = [b.text for b in (prepared.blocks or []) if b.entry_id in cited]
    answer, dropped = links.keep_cited_links(result.answer, texts)
    if dropped:
        result.rejected = "\n\n".join(filter(None, [result.rejected, result.answer]))
        result.answer = answer.strip()
        # the addresses themselves only in the log (``rejected``): the panel shows violations to the user
        result.violations = list(result.violations) + [f"link_dropped ({len(dropped)})"]


def step_report(prepared):
    """What the optional model steps did, for the log, the panel's timings and the evaluation."""
    steps = {}
    if prepared.rewrite is not None:
        steps["rewrite"] = {"status": prepared.rewrite.status, "reason": prepared.rewrite.reason,
                            "query": prepared.rewrite.rewritten, "ms": round(prepared.rewrite.ms, 1)}
    if prepared.rerank is not None:
        steps["rerank"] = {"status": prepared.rerank.status, "reason": prepared.rerank.reason,
                           "named": list(prepared.rerank.named), "ms": round(prepared.rerank.ms, 1)}
    return steps


def _answer(prepared, make_client, on_delta, deadline, cancel):
    retrieval, settings = prepared.retrieval, prepared.settings
    timings = {}
    if isinstance(retrieval.ollama_error, (ollama_errors.OllamaUnreachable, ollama_errors.OllamaTimeout)):
        # the server failed already for the query embedding: do not wait for it a second time
        return common.degraded(prepared, timings, retrieval.ollama_error)
    client = make_client(settings)
    try:
        return modes.get(prepared.answer_mode).answer(prepared, client, on_delta, deadline, cancel, timings)
    finally:
        client.close()
