"""The free-text mode: the model writes Markdown, checked afterwards (citations, values, years, conflicts)."""
from __future__ import annotations

import time

from ...llm import errors as ollama_errors
from ...text.i18n import _lt
from .. import (citations, conflicts as conflict_rules, extractive, freetext, outcome, prompt, validation,
                values)
from ..types import REFUSAL_TEXT, AgentAnswer
from . import AnswerMode, common, register


def answer(prepared, client, on_delta, deadline, cancel, timings):
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
            chat = common.generate(messages, settings, client, on_delta, deadline, cancel, prepared)
        except ollama_errors.OllamaCancelled:
            return common.stopped(timings, generate_ms, t0, conflicts, regenerations)
        except ollama_errors.OllamaError as exc:
            timings["generate_ms"] = generate_ms + (time.perf_counter() - t0) * 1000
            if on_delta:
                on_delta(None)
            return common.degraded(prepared, timings, exc, regenerations)
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
        # every side of each conflict the answer touches, marked with ⚠ and with its value: added in code where the
        # model did not, and streamed after the model's text
        noted = conflict_rules.add_conflict_note(answer, conflicts, citations.extract_citations(answer))
        if on_delta and noted != answer and noted.startswith(answer):
            on_delta(noted[len(answer):])
        answer = noted
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


register(AnswerMode(
    key="text", label=_lt("Free text"), title=_lt("Free text"), system_prompt=prompt.system_prompt, answer=answer,
    reserve_tokens=700, bakeoff_default=True))
