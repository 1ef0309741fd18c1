"""Step 2 of an answer: the model, checked, without a database connection.

The agent (models/pv_kb_agent.py) prepares a question in a short transaction (retrieval, gate, context,
prompt: :class:`PreparedQuestion`); :func:`respond` then calls the model and checks what it wrote — free
text (:mod:`.freetext`, :mod:`.validation`, :mod:`.outcome`) or structured statements (:mod:`.structured`,
:mod:`.structured_checks`, :mod:`.structured_render`) — and the agent logs the :class:`AgentAnswer` in
another short transaction. Nothing here touches Odoo, so the chat panel's stream holds no database
connection while the model generates.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from ..llm import errors as ollama_errors, tokens as ollama_tokens
from ..pii import gate as pii
from . import (citations, conflicts as conflict_rules, extractive, fact_answer, freetext, gate, links, outcome,
               selection, stages, structured, structured_checks, structured_render, validation, values)
from .types import REFUSAL_TEXT

_logger = logging.getLogger(__name__)

# the note for the one regeneration of an answer that was not readable JSON (structured and selection mode)
JSON_RETRY_NOTE = ("Hinweis zur Wiederholung: Die vorige Antwort war kein gültiges JSON. Antworte nur mit JSON "
                   "im vorgegebenen Format.")


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
            # reranking on and not yet done by the caller (the stream worker does it before its meta event)
            stages.rerank_prepared(prepared, make_client, deadline=deadline, cancel=cancel)
            result = _answer(prepared, make_client, on_delta, deadline, cancel)
    except Exception as exc:  # noqa: BLE001 - as above: a German message, never a traceback
        _logger.exception("pv_kb: answering failed")
        if on_delta:
            on_delta(None)
        # the client refused a request the gate did not pass (lib/pii.check_request): nothing was sent
        answer = texts["pii_failed"] if isinstance(exc, pii.PiiGateError) else texts["failed"]
        result = AgentAnswer(status="fehler", answer=answer, violations=[f"{type(exc).__name__}: {exc}"])
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
        return _degraded(prepared, timings, retrieval.ollama_error)
    client = make_client(settings)
    try:
        if prepared.answer_mode == "structured":
            return _answer_structured(prepared, client, on_delta, deadline, cancel, timings)
        if prepared.answer_mode == "selection":
            return _answer_selection(prepared, client, on_delta, deadline, cancel, timings)
        return _answer_text(prepared, client, on_delta, deadline, cancel, timings)
    finally:
        client.close()


def _answer_text(prepared, client, on_delta, deadline, cancel, timings):
    """Free-text mode: the model writes Markdown, checked afterwards; one regeneration with a stricter note."""
    question, retrieval, settings = prepared.question, prepared.retrieval, prepared.settings
    blocks, conflicts = prepared.blocks, prepared.conflicts
    messages = prepared.messages
    regenerations = 0
    prompt_tokens = answer_tokens = 0
    generate_ms = validate_ms = 0.0
    repairs = []
    while True:
        t0 = time.perf_counter()
        try:
            chat = _generate(messages, settings, client, on_delta, deadline, cancel, prepared)
        except ollama_errors.OllamaCancelled:
            return _stopped(timings, generate_ms, t0, conflicts, regenerations)
        except ollama_errors.OllamaError as exc:
            timings["generate_ms"] = generate_ms + (time.perf_counter() - t0) * 1000
            if on_delta:
                on_delta(None)
            return _degraded(prepared, timings, exc, regenerations)
        generate_ms += (time.perf_counter() - t0) * 1000
        prompt_tokens += chat.prompt_eval_count
        answer_tokens += chat.eval_count
        t0 = time.perf_counter()
        # how real models write: echoed instructions and tag fragments out, a citation attached to a claim
        # whose values stand in exactly one retrieved entry (logged as repaired)
        content = freetext.strip_echo(chat.content)
        content, repairs = freetext.repair_citations(content, blocks)
        checks = validation.validate_answer(content, blocks, conflicts, values.asked_year(question))
        validate_ms += (time.perf_counter() - t0) * 1000
        if checks.ok or regenerations >= 1:
            break
        regenerations += 1
        if on_delta:
            on_delta(None)
        messages = messages[:-1] + [dict(messages[-1], content=messages[-1]["content"] + "\n\n"
                                         + validation.strict_instruction(checks))]
    t0 = time.perf_counter()
    # what is shown cites retrieved entries only (checked again here, whatever the model wrote)
    answer, unknown = citations.strip_unknown_citations(content.strip(), retrieval.entry_ids)
    violations = [f"{v.code}: {v.detail}" for v in checks.violations]
    violations += [f"unknown_id: {i}" for i in unknown if f"unknown_id: {i}" not in violations]
    verdict = outcome.decide(violations, refused=checks.refused, has_blocks=bool(blocks))
    rejected = ""
    if verdict.show == "answer":
        # every side of each conflict the answer touches, marked with ⚠: added in code where the model did not
        answer = conflict_rules.add_conflict_note(answer, conflicts, citations.extract_citations(answer))
    elif verdict.show == "fallback":
        rejected = chat.content
        answer = outcome.fallback_answer(
            extractive.extractive_answer(question, blocks, conflicts=conflicts), verdict.reason)
    else:
        rejected = chat.content if not checks.refused else ""
        answer = REFUSAL_TEXT + (" " + verdict.reason if verdict.reason else "")
    if verdict.show != "answer" and on_delta:
        on_delta(None)
    validate_ms += (time.perf_counter() - t0) * 1000
    timings.update({"generate_ms": generate_ms, "validate_ms": validate_ms})
    return AgentAnswer(
        status=verdict.status, answer=answer,
        cited_ids=citations.extract_citations(answer),
        violations=violations + [str(r) for r in repairs],
        notice=retrieval.degraded or (verdict.reason if verdict.show == "answer" else None),
        conflicts=conflicts, timings=timings, regenerations=regenerations,
        prompt_tokens=prompt_tokens, answer_tokens=answer_tokens, rejected=rejected)


def _answer_structured(prepared, client, on_delta, deadline, cancel, timings):
    """Structured mode (lib/answer/structured.py): JSON statements, each checked; the answer written in code.

    One regeneration at most: of the whole answer when the JSON is unreadable, else of only the failed
    statements. Statements that still fail are dropped (logged); none left → lib/answer/outcome.py decides.
    """
    question, retrieval = prepared.question, prepared.retrieval
    blocks, conflicts, messages = prepared.blocks, prepared.conflicts, prepared.messages
    # the enum holds the entries the model was shown (a small window shows fewer than were retrieved):
    # an entry it never read cannot be cited, and the checks judge against the same blocks
    schema = structured.answer_schema(list(dict.fromkeys(b.entry_id for b in blocks)) or retrieval.entry_ids)
    generate_ms = validate_ms = 0.0
    prompt_tokens = answer_tokens = regenerations = 0
    checked, raws, parsed = [], [], None
    shown = set()
    asked = values.asked_year(question)

    def stream_handler():
        if not on_delta:
            return None
        stream = structured.StatementStream()

        def feed(piece):
            if piece is None:
                return
            for statement in stream.feed(piece):
                item = structured_checks.check_statement(statement, blocks, asked)
                text = structured_render.render_statement(item, blocks, conflicts)
                if item.ok and text not in shown:
                    shown.add(text)
                    on_delta(text + "\n\n")
        return feed

    for attempt in range(2):
        t0 = time.perf_counter()
        try:
            chat = _generate(messages, prepared.settings, client, stream_handler(), deadline, cancel, prepared,
                             response_format=schema)
        except ollama_errors.OllamaCancelled:
            return _stopped(timings, generate_ms, t0, conflicts, regenerations, mode="structured")
        except ollama_errors.OllamaError as exc:
            timings["generate_ms"] = generate_ms + (time.perf_counter() - t0) * 1000
            if on_delta:
                on_delta(None)
            if checked and any(c.ok for c in checked):
                break     # the regeneration failed: what passed before still stands
            return _degraded(prepared, timings, exc, regenerations, mode="structured")
        generate_ms += (time.perf_counter() - t0) * 1000
        prompt_tokens += chat.prompt_eval_count
        answer_tokens += chat.eval_count
        raws.append(chat.content)
        t0 = time.perf_counter()
        parsed = structured.parse_response(chat.content)
        new = [structured_checks.check_statement(s, blocks, asked) for s in parsed.statements]
        checked.extend(new)
        validate_ms += (time.perf_counter() - t0) * 1000
        failed = [c for c in new if not c.ok]
        if attempt or parsed.refused or not (parsed.error or failed) or time.monotonic() >= deadline:
            break
        regenerations += 1
        note = structured_render.retry_note(failed) if not parsed.error else JSON_RETRY_NOTE
        messages = messages + [{"role": "assistant", "content": chat.content}, {"role": "user", "content": note}]
    t0 = time.perf_counter()
    good, seen = [], set()
    for item in checked:
        text = structured_render.render_statement(item, blocks, conflicts)
        if item.ok and text not in seen:
            seen.add(text)
            good.append(item)
    dropped = [c for c in checked if not c.ok]
    violations = [f"dropped: {v.code}: {v.detail}" for c in dropped for v in c.violations
                  if v.code in structured_checks.FAILING]
    violations += [f"repaired: {v.code}: {v.detail}" for c in good for v in c.violations]
    rejected, notice = "", retrieval.degraded
    if parsed is not None and parsed.refused and not good:
        # the reason is not shown: a small model's reason states things without a source ("§ 49 ASVG gilt
        # nicht für …", "es gibt keinen Sachbezug …") or echoes the notes it was sent; the curator reads it in the log
        status, answer = "verweigert", REFUSAL_TEXT
        if parsed.reason.strip():
            violations.append(f"refusal_reason: {' '.join(parsed.reason.split())[:300]}")
    elif good:
        status, answer = "beantwortet", structured_render.render_answer(good, blocks, conflicts)
        if dropped:
            rejected = "\n\n".join(raws)
            notice = notice or prepared.texts["dropped"] % {"count": len(dropped)}
    else:
        codes = [v.code for c in dropped for v in c.violations if v.code in structured_checks.FAILING]
        if parsed is None or parsed.error:
            codes.append("invalid_json")
        verdict = outcome.decide(codes or ["no_statement"], has_blocks=bool(blocks))
        violations.append(f"{codes[0] if codes else 'no_statement'}: {verdict.reason}")
        rejected = "\n\n".join(raws)
        status = verdict.status
        answer = (outcome.fallback_answer(extractive.extractive_answer(question, blocks, conflicts=conflicts),
                                          verdict.reason)
                  if verdict.show == "fallback" else REFUSAL_TEXT + " " + verdict.reason)
        if on_delta:
            on_delta(None)
    validate_ms += (time.perf_counter() - t0) * 1000
    timings.update({"generate_ms": generate_ms, "validate_ms": validate_ms})
    quotes = [{"kb_id": c.passage_id, "passage": c.passage} for c in good if c.passage]
    return AgentAnswer(
        status=status, answer=answer, cited_ids=citations.extract_citations(answer), violations=violations,
        notice=notice, conflicts=conflicts, timings=timings, regenerations=regenerations,
        prompt_tokens=prompt_tokens, answer_tokens=answer_tokens, answer_mode="structured", quotes=quotes,
        rejected=rejected)


def _answer_selection(prepared, client, on_delta, deadline, cancel, timings):
    """Selection mode (lib/answer/selection.py): the model names passage numbers, the code quotes them.

    One regeneration, only when the answer is not readable JSON; numbers that are not in the context are
    dropped (logged). Nothing the model writes is shown, so there is nothing else to check.
    """
    units, conflicts = prepared.units, prepared.conflicts
    schema = selection.selection_schema([u.key for u in units])
    messages = prepared.messages
    generate_ms = 0.0
    prompt_tokens = answer_tokens = regenerations = 0
    raws, choice = [], None
    for attempt in range(2):
        t0 = time.perf_counter()
        try:
            # not streamed to the panel: the JSON is a few numbers, the answer is written when it is complete
            chat = _generate(messages, prepared.settings, client, None, deadline, cancel, prepared,
                             response_format=schema, num_predict=80)
        except ollama_errors.OllamaCancelled:
            return _stopped(timings, generate_ms, t0, conflicts, regenerations, mode="selection")
        except ollama_errors.OllamaError as exc:
            timings["generate_ms"] = generate_ms + (time.perf_counter() - t0) * 1000
            return _degraded(prepared, timings, exc, regenerations, mode="selection")
        generate_ms += (time.perf_counter() - t0) * 1000
        prompt_tokens += chat.prompt_eval_count
        answer_tokens += chat.eval_count
        raws.append(chat.content)
        choice = selection.parse_choice(chat.content, units)
        if not choice.error or attempt or time.monotonic() >= deadline:
            break
        regenerations += 1
        messages = messages + [{"role": "assistant", "content": chat.content},
                               {"role": "user", "content": JSON_RETRY_NOTE}]
    t0 = time.perf_counter()
    violations = [f"dropped: unknown_passage: {n}" for n in choice.unknown]
    rejected = ""
    if choice.units:
        status = "beantwortet"
        added = selection.complete_value(prepared.question, choice.units, units)
        if added is not None:
            choice.units.append(added)
            violations.append(f"repaired: value_passage_added: {added.key}")
        answer = selection.render_answer(choice.units, conflicts, order=units)
    elif choice.refused:
        status, answer = "verweigert", REFUSAL_TEXT
    else:
        verdict = outcome.decide(["invalid_json"], has_blocks=bool(prepared.blocks))
        violations.append(f"invalid_json: {verdict.reason}")
        rejected = "\n\n".join(raws)
        status = verdict.status
        answer = (outcome.fallback_answer(extractive.extractive_answer(prepared.question, prepared.blocks,
                                                                       conflicts=conflicts), verdict.reason)
                  if verdict.show == "fallback" else REFUSAL_TEXT + " " + verdict.reason)
    if on_delta:
        on_delta(answer)
    timings.update({"generate_ms": generate_ms, "validate_ms": (time.perf_counter() - t0) * 1000})
    quotes = [{"kb_id": u.entry_id, "passage": u.text} for u in choice.units]
    return AgentAnswer(
        status=status, answer=answer, cited_ids=citations.extract_citations(answer), violations=violations,
        notice=prepared.retrieval.degraded, conflicts=conflicts, timings=timings, regenerations=regenerations,
        prompt_tokens=prompt_tokens, answer_tokens=answer_tokens, answer_mode="selection", quotes=quotes,
        rejected=rejected)


def _stopped(timings, generate_ms, started, conflicts, regenerations, mode="text"):
    """The answer the user stopped (*Stop* in the panel) while the model generated."""
    timings["generate_ms"] = generate_ms + (time.perf_counter() - started) * 1000
    return AgentAnswer(status="abgebrochen", answer="", conflicts=conflicts, timings=timings,
                       regenerations=regenerations, answer_mode=mode)


def _degraded(prepared, timings, exc, regenerations=0, mode="text"):
    _logger.warning("pv_kb: chat model unavailable, extractive answer: %s", exc)
    answer = extractive.extractive_answer(prepared.question, prepared.blocks, conflicts=prepared.conflicts)
    return AgentAnswer(
        status="notbetrieb", answer=answer,
        cited_ids=citations.extract_citations(answer), conflicts=prepared.conflicts, timings=timings,
        notice=prepared.texts["degraded"] % {"reason": exc.message}, regenerations=regenerations,
        answer_mode=mode)


def _generate(messages, settings, client, on_delta, deadline, cancel, prepared, response_format=None,
              num_predict=500):
    texts, gated = prepared.texts, prepared.gated
    options = {"temperature": 0.1}
    if response_format:
        options["num_predict"] = num_predict   # a JSON answer of a few statements; bounds a model that rambles
    expected = sum(ollama_tokens.estimate_tokens(m["content"]) for m in messages)
    num_ctx = max(2048, min(settings["num_ctx"] * 4, int(expected * 1.3) + 1024))
    if time.monotonic() >= deadline:
        raise ollama_errors.OllamaTimeout(texts["too_late"])
    if on_delta is None:
        result = client.chat(settings["chat_model"], messages, origin=gated, options=options, num_ctx=num_ctx,
                             expected_prompt_tokens=expected, deadline=deadline, response_format=response_format)
        prepared.answered_by = getattr(result, "server", "")
        return result
    result = None
    for piece in client.chat_stream(settings["chat_model"], messages, origin=gated, options=options, num_ctx=num_ctx,
                                    expected_prompt_tokens=expected, deadline=deadline, cancel=cancel,
                                    response_format=response_format):
        if piece.delta:
            on_delta(piece.delta)
        if piece.done:
            result = piece.result
    if result is None:
        raise ollama_errors.OllamaBadResponse(texts["no_result"])
    prepared.answered_by = getattr(result, "server", "")
    return result
