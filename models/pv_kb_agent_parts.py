"""The agent's glue for a question that asks two things (lib/search/parts.py splits it, lib/answer/parts.py merges
the answers): the parts as prepared questions, the choice to answer the whole from the facts instead, and the
parts answered in turn. Used by ``pv_kb_agent.run``.
"""
import dataclasses
import logging
import time

from ..lib.answer import parts as answer_parts
from ..lib.answer.respond import respond
from ..lib.pii import gate as pii
from ..lib.search import parts as question_parts
from .pv_kb_settings import make_client

_logger = logging.getLogger(__name__)


def parts_of(prepared):
    """The parts of a question that asks two things, or [] (a follow-up, whose query is rewritten from the
    history, and a question the gate stopped stay whole)."""
    if prepared.pii_failed or prepared.error is not None or prepared.query != prepared.question or prepared.commanded:
        return []
    parts = question_parts.split(prepared.question)
    return parts if len(parts) > 1 else []


def whole_is_a_fact(steps, prepared, questions, filters, mode):
    """True when the facts answer every part of a split question with the same lines and the whole question as
    well: "Bis zu welchem Betrag bleiben seine SEG-Zulagen und Nachtzuschläge lohnsteuerfrei?" asks one joint
    Höchstbetrag, not one per noun. ``prepared`` (the whole) then holds the fact answer, and each part keeps its own
    for ``_prepare`` (looked up once). Not when the facts answer
    no part: the whole's answer may then hold one of two asked values ("… der Dienstnehmer-Anteil und der
    Dienstgeber-Anteil …")."""
    with steps.step() as env:
        agent = env["pv.kb.agent"]
        answers = [agent._facts_first(question, filters, mode=mode).fact_answer for question in questions]
        if not all(answers) or len({a.text for a in answers}) != 1:
            return False
        return agent._facts_first(prepared, filters, mode=mode).fact_answer is not None


def part_questions(steps, prepared, parts):
    """A PreparedQuestion per part. Each part is cut from the masked question and passes the personal-data gate
    again (its placeholders stay those of the question), so the search and the model get the part, sealed."""
    if not parts:
        return [prepared]
    subs = []
    with steps.step() as env:
        for part in parts:
            gated = prepared.gated
            try:
                gated = env["pv.kb.settings"]._pii_gate(part, query=part, history=gated.history,
                                                        mapping=gated.mapping)
            except pii.PiiGateError as exc:
                _logger.error("pv_kb: personal-data gate failed for a part, the question stays whole: %s", exc)
                return [prepared]
            subs.append(dataclasses.replace(prepared, question=gated.question, query=gated.query, gated=gated,
                                            asked="", timings={}, retrieval=None))
    return subs


def respond_parts(prepared, parts, subs, on_delta, deadline, cancel):
    """Each part answered in turn; the panel gets each part below its heading once it is complete."""
    answers, shown = [], ""
    for label, sub in zip(answer_parts.labels(parts), subs):
        answer = respond(sub, interactive_client, deadline=deadline, cancel=cancel)
        answer.retrieved_ids = sub.retrieval.entry_ids if sub.retrieval else []
        answers.append(answer)
        if on_delta:
            text = ("\n\n" if shown else "") + answer_parts.heading(label) + "\n" + (answer.answer or "").strip()
            on_delta(text)
            shown += text
        if cancel is not None and cancel.cancelled:
            break
    result = answer_parts.merge(parts[:len(answers)], answers)
    result.retrieval = prepared.retrieval
    result.retrieved_ids = prepared.retrieval.entry_ids if prepared.retrieval else []
    result.timings["total_ms"] = (time.perf_counter() - prepared.started) * 1000
    if prepared.gated is not None:
        result.pii_count = prepared.gated.count
        result.pii_mapping = prepared.gated.mapping.to_dict()
    return result


def interactive_client(settings):
    """The Ollama client of an answer: a user waits, so no retries (the answer degrades instead)."""
    return make_client(settings, interactive=True)
