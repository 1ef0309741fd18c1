"""The structured mode: JSON statements, each checked in code, the answer written by the server.

The schema, prompt and parsing are ``lib/answer/structured.py``, the checks of one statement
``structured_checks``, the rendering ``structured_render``.
"""
from __future__ import annotations

import time

from ...llm import errors as ollama_errors
from ...text.i18n import _lt
from .. import (citations, extractive, outcome, structured, structured_checks, structured_render, values)
from ..types import REFUSAL_TEXT, AgentAnswer
from . import AnswerMode, common, register


def _schema(prepared):
    """The enum holds the entries the model was shown (a small window shows fewer than were retrieved): an entry
    it never read cannot be cited, and the checks judge against the same blocks."""
    ids = list(dict.fromkeys(b.entry_id for b in prepared.blocks)) or prepared.retrieval.entry_ids
    return structured.answer_schema(ids)


def answer(prepared, client, on_delta, deadline, cancel, timings):
    """Structured mode (lib/answer/structured.py): JSON statements, each checked; the answer written in code.

    One regeneration at most: of the whole answer when the JSON is unreadable, else of only the failed
    statements. Statements that still fail are dropped (logged); none left → lib/answer/outcome.py decides.
    """
    question, retrieval = prepared.question, prepared.retrieval
    blocks, conflicts, messages = prepared.blocks, prepared.conflicts, prepared.messages
    # the enum holds the entries the model was shown (a small window shows fewer than were retrieved):
    # an entry it never read cannot be cited, and the checks judge against the same blocks
    schema = _schema(prepared)
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
            chat = common.generate(messages, prepared.settings, client, stream_handler(), deadline, cancel, prepared,
                             response_format=schema)
        except ollama_errors.OllamaCancelled:
            return common.stopped(timings, generate_ms, t0, conflicts, regenerations, mode="structured")
        except ollama_errors.OllamaError as exc:
            timings["generate_ms"] = generate_ms + (time.perf_counter() - t0) * 1000
            if on_delta:
                on_delta(None)
            if checked and any(c.ok for c in checked):
                break     # the regeneration failed: what passed before still stands
            return common.degraded(prepared, timings, exc, regenerations, mode="structured")
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
        note = structured_render.retry_note(failed) if not parsed.error else common.JSON_RETRY_NOTE
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


register(AnswerMode(
    key="structured", label=_lt("Structured"), title=_lt("Structured (JSON, checked per statement)"),
    system_prompt=structured.system_prompt, answer=answer, schema=_schema, schema_key="aussagen",
    # the structured mode's JSON is long
    reserve_tokens=900, bakeoff_default=True))
