"""The selection mode: the model names numbered passages of its context, the server quotes them word for word.

Numbering, schema, prompt and the quoted answer are ``lib/answer/selection.py``; relatedness and the completions
of the model's choice ``lib/answer/selection_repair.py``.
"""
from __future__ import annotations

import functools
import time

from ...llm import errors as ollama_errors
from ...text.i18n import _lt
from .. import citations, extractive, gate, outcome, prompt, scope as scopes, selection, selection_repair
from ..types import REFUSAL_TEXT, AgentAnswer, missing_scope_note, missing_year_note
from . import AnswerMode, common, register


def _shape_context(prepared):
    """Every sentence and table row of the context numbered; the model answers with numbers."""
    content, prepared.units = selection.number_context(prepared.messages[-1]["content"])
    prepared.messages[-1] = dict(prepared.messages[-1], content=content)


def _schema(prepared):
    return selection.selection_schema([u.key for u in prepared.units])


def answer(prepared, client, on_delta, deadline, cancel, timings):
    """Selection mode (lib/answer/selection.py): the model names passage numbers, the code quotes them.

    One regeneration, only when the answer is not readable JSON; numbers that are not in the context are
    dropped (logged). Nothing the model writes is shown, so there is nothing else to check.
    """
    units, conflicts = prepared.units, prepared.conflicts
    schema = _schema(prepared)
    messages = prepared.messages
    generate_ms = 0.0
    prompt_tokens = answer_tokens = regenerations = 0
    raws, choice = [], None
    for attempt in range(2):
        t0 = time.perf_counter()
        try:
            # not streamed to the panel: the JSON is a few numbers, the answer is written when it is complete
            chat = common.generate(messages, prepared.settings, client, None, deadline, cancel, prepared,
                             response_format=schema, num_predict=80)
        except ollama_errors.OllamaCancelled:
            return common.stopped(timings, generate_ms, t0, conflicts, regenerations, mode="selection")
        except ollama_errors.OllamaError as exc:
            timings["generate_ms"] = generate_ms + (time.perf_counter() - t0) * 1000
            return common.degraded(prepared, timings, exc, regenerations, mode="selection")
        generate_ms += (time.perf_counter() - t0) * 1000
        prompt_tokens += chat.prompt_eval_count
        answer_tokens += chat.eval_count
        raws.append(chat.content)
        choice = selection.parse_choice(chat.content, units)
        if not choice.error or attempt or time.monotonic() >= deadline:
            break
        regenerations += 1
        messages = messages + [{"role": "assistant", "content": chat.content},
                               {"role": "user", "content": common.JSON_RETRY_NOTE}]
    violations = [f"dropped: unknown_passage: {n}" for n in choice.unknown]
    expansions = getattr(getattr(prepared.retrieval, "plan", None), "expansions", None) or ()
    if choice.units and not selection_repair.related(prepared.question, choice.units, expansions):
        violations.append("refused: unrelated_passages: " + ", ".join(u.key for u in choice.units))
        choice = selection.Choice(refused=True)
    if choice.refused and not choice.units and time.monotonic() < deadline:
        # the second look: the best entries alone, with a note on other words (only after a refusal)
        t0 = time.perf_counter()
        try:
            second, second_units, chat = _second_look(prepared, client, deadline, cancel)
        except ollama_errors.OllamaCancelled:
            return common.stopped(timings, generate_ms, t0, conflicts, regenerations, mode="selection")
        except ollama_errors.OllamaError:
            second = None       # the refusal stands
        else:
            prompt_tokens += chat.prompt_eval_count
            answer_tokens += chat.eval_count
            raws.append(chat.content)
        generate_ms += (time.perf_counter() - t0) * 1000
        if (second is not None and second.units
                and not selection_repair.related(prepared.question, second.units, expansions)):
            violations.append("second_look: unrelated_passages: " + ", ".join(u.key for u in second.units))
            second = None
        if second is not None and second.units:
            # the completions may still take a passage of an entry the second look left out (a second subject)
            seen = {(u.entry_id, u.text) for u in second_units}
            choice, units = second, second_units + [u for u in units if (u.entry_id, u.text) not in seen]
            violations.append("repaired: second_look: " + ", ".join(u.key for u in second.units))
        elif second is not None:
            violations.append("second_look: refused again")
    t0 = time.perf_counter()
    rejected = ""
    if choice.units:
        status = "beantwortet"
        subjects = functools.partial(selection_repair.complete_subjects, expansions=expansions)
        focus = functools.partial(selection_repair.complete_focus, expansions=expansions)
        best_entry = functools.partial(selection_repair.complete_focus, expansions=expansions, best_entry=True)
        for repair, name in ((selection_repair.complete_value, "value_passage_added"),
                             (focus, "focus_passage_added"),
                             (best_entry, "best_entry_passage_added"),
                             (selection_repair.complete_year, "year_passage_added"),
                             (selection_repair.complete_stage, "stage_row_added"),
                             (scopes.complete_land, "land_passage_added"),
                             (scopes.complete_unit, "unit_passage_added"),
                             (subjects, "subject_passage_added")):
            added = repair(prepared.question, choice.units, units)
            if added is not None:
                choice.units.append(added)
                violations.append(f"repaired: {name}: {added.key}")
        answer = selection.render_answer(choice.units, conflicts, order=units)
        missing = selection_repair.asked_year_missing(prepared.question, choice.units)
        unaddressed = _unaddressed(prepared, choice.units)
        unvalued = (None if unaddressed or prepared.asked else gate.unvalued_institution(
            prepared.question, [u for u in units if u.entry_id in {c.entry_id for c in choice.units}]))
        if unaddressed:
            # the subject asked about is not named by the entries quoted: their passages answer a neighbouring one
            status, answer = "verweigert", f"Zu „{unaddressed}“ enthält die Wissensbasis keine Aussage."
            violations.append(f"refused: unaddressed_subject: {unaddressed}")
            choice.units, missing = [], None
        elif unvalued:
            # the entries name the institution's payment, but no amount or rate of it: what they say, not a value
            name, naming = unvalued
            status = "verweigert"
            answer = (f"Einen Betrag oder Satz für „{name}“ enthält die Wissensbasis nicht; sie sagt dazu:\n\n"
                      + selection.render_answer(naming, conflicts, order=units))
            violations.append(f"refused: unvalued_institution: {name}")
            choice.units, missing = naming, None
        elif missing is not None:
            # the passages speak of earlier years only: not an answer for the asked one, as the facts say it
            status = "verweigert"
            answer = missing_year_note(*missing) + "\n\n" + answer
            violations.append(f"refused: asked_year_missing: {missing[0]}")
        for warning, newer in selection_repair.outdated_warnings(prepared.question, choice.units, prepared.outdated):
            # the passages quote a value a newer entry replaced: its value is shown beside it
            answer = answer.rstrip() + "\n\n" + warning
            violations.append(f"repaired: outdated_value_warned: {newer}")
        scope = (scopes.asked_scope_missing(prepared.question, choice.units)
                 if missing is None and choice.units and not unvalued else None)
        if scope is not None:
            # a Bundesland or a unit the passages do not name: not the asked value, though a neighbouring one
            status = "verweigert"
            answer = missing_scope_note(*scope) + "\n\n" + answer
            violations.append(f"refused: asked_scope_missing: {scope[0]}: {scope[1]}")
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


def _unaddressed(prepared, chosen) -> str | None:
    """The asked subject that no passage or title of the chosen entries names (lib/answer/gate.unaddressed_subject);
    not for a question whose instructions were dropped (``asked``): its core may be a fragment."""
    if prepared.asked:
        return None
    entries = {u.entry_id for u in chosen}
    texts = [f"{b.title} {b.heading_path} {b.text}" for b in prepared.all_blocks or prepared.blocks
             if b.entry_id in entries]
    return gate.unaddressed_subject(prepared.question, texts, prepared.synonyms)


def _second_look(prepared, client, deadline, cancel):
    """(choice, units, chat) of the model asked again over the blocks of the best entries only
    (lib/answer/selection.second_look_blocks), with a note that the question may use other words and the words of
    the base the synonym table gives for them (lib/answer/selection.glossary_note)."""
    blocks = selection.second_look_blocks(prepared.blocks)
    kept = {b.entry_id for b in blocks}
    conflicts = [c for c in prepared.conflicts if kept & set(c.entry_ids)]
    glossary = selection.glossary_note(getattr(getattr(prepared.retrieval, "plan", None), "synonyms", None),
                                       prepared.synonyms)
    note = selection.SECOND_LOOK_NOTE + ("\n" + glossary if glossary else "")
    messages = prompt.build_messages(prepared.question, blocks, conflicts, prepared.history,
                                     max_context_chars=prepared.plan["max_chars"], strict_note=note)
    messages[0] = prepared.messages[0]
    content, units = selection.number_context(messages[-1]["content"])
    messages[-1] = dict(messages[-1], content=content)
    chat = common.generate(messages, prepared.settings, client, None, deadline, cancel, prepared,
                           response_format=selection.selection_schema([u.key for u in units]), num_predict=80)
    return selection.parse_choice(chat.content, units), units, chat


register(AnswerMode(
    key="selection", label=_lt("Selection"),
    title=_lt("Selection (the model picks passages, quoted word for word)"),
    system_prompt=selection.system_prompt, answer=answer, shape_context=_shape_context, schema=_schema,
    # a selection's JSON is a few numbers, but the "[S12] " before every passage costs room too
    schema_key="saetze", reserve_tokens=800))
