"""What every answer mode shares: the model call (:func:`generate`), the stopped and the Notbetrieb answer."""
from __future__ import annotations

import logging
import time

from ...llm import errors as ollama_errors, tokens as ollama_tokens
from .. import citations, extractive
from ..types import AgentAnswer

_logger = logging.getLogger(__name__)

# the note for the one regeneration of an answer that was not readable JSON (structured and selection mode)
JSON_RETRY_NOTE = ("Hinweis zur Wiederholung: Die vorige Antwort war kein gültiges JSON. Antworte nur mit JSON "
                   "im vorgegebenen Format.")


def stopped(timings, generate_ms, started, conflicts, regenerations, mode="text"):
    """The answer the user stopped (*Stop* in the panel) while the model generated."""
    timings["generate_ms"] = generate_ms + (time.perf_counter() - started) * 1000
    return AgentAnswer(status="abgebrochen", answer="", conflicts=conflicts, timings=timings,
                       regenerations=regenerations, answer_mode=mode)


def degraded(prepared, timings, exc, regenerations=0, mode="text"):
    _logger.warning("pv_kb: chat model unavailable, extractive answer: %s", exc)
    answer = extractive.extractive_answer(prepared.question, prepared.blocks, conflicts=prepared.conflicts)
    return AgentAnswer(
        status="notbetrieb", answer=answer,
        cited_ids=citations.extract_citations(answer), conflicts=prepared.conflicts, timings=timings,
        notice=prepared.texts["degraded"] % {"reason": exc.message}, regenerations=regenerations,
        answer_mode=mode)


def generate(messages, settings, client, on_delta, deadline, cancel, prepared, response_format=None,
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
