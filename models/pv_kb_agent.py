"""The grounded question-answering service: retrieve, gate, ground, generate, validate, log.

Rules and checks are pure functions in ``lib/answer/`` (see its docstring for the order) and
``lib/followup.py``; this model wires them to the retriever, the Ollama client and the question log.
"""
import json
import logging
import time
from dataclasses import dataclass, field

from odoo import api, models

from ..lib import followup, ollama, pii
from ..lib.answer import (
    citations, conflicts as conflict_rules, extractive, freetext, gate, outcome, prompt, structured, validation,
)
from ..lib.answer.types import REFUSAL_TEXT, ContextBlock, EntryFacts
from .pv_kb_settings import SNAPSHOT_KEYS

_logger = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 2000
MAX_BLOCKS = 12


@dataclass
class AgentAnswer:
    status: str                       # beantwortet | verweigert | unsicher | notbetrieb | fehler
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
    answer_mode: str = "text"         # text | structured
    quotes: list = field(default_factory=list)   # [{"kb_id", "passage"}]: the passage each citation rests on
    rejected: str = ""                # model text that was not shown (kept in the question log)


class PvKbAgent(models.AbstractModel):
    _name = "pv.kb.agent"
    _description = "Knowledge base assistant"

    # --- context ---------------------------------------------------------------
    @api.model
    def _blocks(self, retrieval, summaries):
        """Context blocks: the retrieved chunks of each entry, plus its Kernwerte for value questions and the
        Kernwerte and summary of an entry added as an expansion; ``summaries``: those sections of the entries."""
        chunks = dict(retrieval.chunks)
        extra_keys = ["kernwerte"] if retrieval.plan and retrieval.plan.is_value_question else []
        expansions = [e.entry_id for e in retrieval.entries if e.expansion or not e.chunk_ids]
        for cid, row in summaries.items():
            if row["section_key"] in extra_keys or row["kb_id"] in expansions:
                chunks.setdefault(cid, row)
        blocks = []
        for rank, entry in enumerate(retrieval.entries):
            info = retrieval.entry_info.get(entry.entry_id)
            if not info:
                continue
            own = sorted((c for c in chunks.items() if c[1]["kb_id"] == entry.entry_id), key=lambda c: c[1]["position"])
            for _cid, row in own:
                blocks.append(ContextBlock(
                    entry_id=entry.entry_id, title=info["title"], stand=info["stand"] or "", topic=info["topic"] or "",
                    source=info["source"] or "", heading_path=row["heading_path"] or "", text=row["text"] or "",
                    section_key=row["section_key"], score=entry.score - rank * 1e-6, expansion=entry.expansion))
        return blocks[: MAX_BLOCKS * 2]

    @api.model
    def _conflicts(self, retrieval, summaries):
        kb_ids = [e.entry_id for e in retrieval.entries]
        kernwerte = {}
        for row in summaries.values():
            if row["section_key"] == "kernwerte":
                kernwerte[row["kb_id"]] = (kernwerte.get(row["kb_id"], "") + "\n" + (row["text"] or "")).strip()
        facts = [EntryFacts(entry_id=i, title=info["title"], stand=info["stand"] or "",
                                      topic=info["topic"] or "", legal_bases=info["legal_bases"],
                                      kernwerte_text=kernwerte.get(i, ""))
                 for i, info in retrieval.entry_info.items() if i in kb_ids]
        return conflict_rules.detect_conflicts(facts)

    # --- the one entry point ------------------------------------------------------
    @api.model
    def ask(self, question, conversation=None, filters=None, *, on_delta=None, on_retrieved=None, deadline=None,
            log=True, mode="hybrid", pii_mapping=None):
        """Answer ``question`` from the knowledge base only.

        ``on_delta(text)`` receives streamed answer text (``on_delta(None)`` = discard what was
        streamed, a regeneration follows); ``deadline`` is a ``time.monotonic()`` limit for the
        model. Never raises for Ollama trouble: the answer degrades instead.

        Personal data: question, follow-up query and history pass the personal-data gate
        (``pv.kb.settings._pii_gate``) before anything else; from there on only the masked texts
        exist (retrieval, prompts, the question log). ``pii_mapping`` is the conversation's mapping as
        the user's browser holds it (placeholders stay stable); the result carries the extended one
        back. If the gate fails, nothing is sent and nothing of the question is stored.
        """
        started = time.perf_counter()
        settings = self.env["pv.kb.settings"]._get()
        question = (question or "").strip()[:MAX_QUESTION_CHARS]
        deadline = deadline or (time.monotonic() + settings["answer_time_limit"])
        history = conversation._history() if conversation else []
        query = followup.standalone_query(question, history) if history else question
        try:
            gated = self.env["pv.kb.settings"]._pii_gate(question, query=query, history=history, mapping=pii_mapping)
        except pii.PiiGateError as exc:
            # fail closed: no model request, no retrieval, nothing of the question stored
            _logger.error("pv_kb: personal-data gate failed, question not processed: %s", exc)
            result = AgentAnswer(status="fehler", answer=self._pii_refusal(), violations=["pii_gate_failed"])
            result.timings["total_ms"] = (time.perf_counter() - started) * 1000
            return result
        question, query, history = gated.question, gated.query, gated.history
        retrieval = None
        try:
            with self.env.cr.savepoint():
                retrieval = self.env["pv.kb.retriever"].retrieve(question, query=query, mode=mode, filters=filters,
                                                                  settings=settings, gated=gated)
                if on_retrieved:
                    on_retrieved(retrieval)
                # the model may take at most what is left of the answer time limit
                client = self.env["pv.kb.settings"]._client(dict(settings, read_timeout=max(
                    1.0, min(settings["read_timeout"], deadline - time.monotonic()))), interactive=True)
                try:
                    result = self._answer(question, retrieval, history, settings, client, on_delta, deadline, gated)
                finally:
                    client.close()
        except Exception as exc:  # noqa: BLE001 - the user gets a German message and the log an entry, never a traceback
            _logger.exception("pv_kb: answering failed")
            if on_delta:
                on_delta(None)
            result = AgentAnswer(
                status="fehler",
                answer=self._pii_refusal() if isinstance(exc, pii.PiiGateError) else self.env._(
                    "The question could not be answered because of an internal error. Please try again later; if it "
                    "happens again, tell your administrator."),
                violations=[f"{type(exc).__name__}: {exc}"])
        result.retrieval = retrieval
        result.retrieved_ids = retrieval.entry_ids if retrieval else []
        if retrieval:
            result.timings.update({k: v for k, v in retrieval.timings.items() if k in ("embed_ms", "retrieve_ms")})
        result.pii_count = gated.count
        result.pii_mapping = gated.mapping.to_dict()
        result.timings["total_ms"] = (time.perf_counter() - started) * 1000
        if conversation and not conversation.query_ids:
            conversation.name = question[:80]   # the masked question names a new conversation
        if log:
            result.query = self._log(question, query, conversation, retrieval, result, settings)
        return result

    def _pii_refusal(self):
        return self.env._("The question was not processed: the check for personal data failed, so nothing was sent "
                          "to the language model. Please try again; if it happens again, tell your administrator.")

    def _answer(self, question, retrieval, history, settings, client, on_delta, deadline, gated):
        timings = {}
        verdict = gate.decide(gate.Evidence.from_retrieval(retrieval), dense_floor=settings["gate_dense_floor"])
        if verdict.refuse:
            return AgentAnswer(status="verweigert", answer=gate.refusal_answer(verdict), timings=timings,
                               gate_refused=True)
        t0 = time.perf_counter()
        # Kernwerte and summaries of the retrieved entries, read once for the context and the conflict check
        summaries = self.env["pv.kb.retriever"]._chunk_rows(kb_ids=[e.entry_id for e in retrieval.entries],
                                                            section_keys=["kernwerte", "zusammenfassung"])
        blocks = self._blocks(retrieval, summaries)
        conflicts = self._conflicts(retrieval, summaries)
        mode = structured.mode_for(settings["chat_model"], settings["answer_modes"], settings["answer_mode"])
        system = structured.system_prompt() if mode == "structured" else prompt.system_prompt()
        max_blocks, max_chars = freetext.context_budget(settings["num_ctx"], len(system) + len(question) + 200,
                                                         reserve_tokens=900 if mode == "structured" else 700)
        blocks = self._budget_blocks(blocks, max_blocks)
        messages = prompt.build_messages(question, blocks, conflicts, history, max_context_chars=max_chars)
        messages[0] = {"role": "system", "content": system}
        timings["prompt_ms"] = (time.perf_counter() - t0) * 1000
        if isinstance(retrieval.ollama_error, (ollama.OllamaUnreachable, ollama.OllamaTimeout)):
            # the server failed already for the query embedding: do not wait for it a second time
            return self._degraded(question, blocks, conflicts, timings, retrieval.ollama_error)
        if mode == "structured":
            return self._answer_structured(question, retrieval, messages, blocks, conflicts, settings, client,
                                           on_delta, deadline, timings, gated)
        regenerations = 0
        prompt_tokens = answer_tokens = 0
        generate_ms = validate_ms = 0.0
        repairs = []
        while True:
            t0 = time.perf_counter()
            try:
                chat = self._generate(messages, settings, client, on_delta, deadline, gated)
            except ollama.OllamaError as exc:
                timings["generate_ms"] = generate_ms + (time.perf_counter() - t0) * 1000
                if on_delta:
                    on_delta(None)
                return self._degraded(question, blocks, conflicts, timings, exc, regenerations)
            generate_ms += (time.perf_counter() - t0) * 1000
            prompt_tokens += chat.prompt_eval_count
            answer_tokens += chat.eval_count
            t0 = time.perf_counter()
            # how real models write: echoed instructions and tag fragments out, a citation attached to a claim
            # whose values stand in exactly one retrieved entry (logged as repaired)
            content = freetext.strip_echo(chat.content)
            content, repairs = freetext.repair_citations(content, blocks)
            checks = validation.validate_answer(content, blocks, conflicts)
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

    @api.model
    def _budget_blocks(self, blocks, max_blocks):
        """The first ``max_blocks`` blocks (rank order), at least one per entry while room is left."""
        if len(blocks) <= max_blocks:
            return blocks
        firsts, rest, seen = [], [], set()
        for block in blocks:
            (rest if block.entry_id in seen else firsts).append(block)
            seen.add(block.entry_id)
        keep = set(map(id, (firsts + rest)[:max_blocks]))
        return [b for b in blocks if id(b) in keep]

    def _answer_structured(self, question, retrieval, messages, blocks, conflicts, settings, client, on_delta,
                           deadline, timings, gated):
        """Structured mode (lib/answer/structured.py): JSON statements, each checked; the answer written in code.

        One regeneration at most: of the whole answer when the JSON is unreadable, else of only the failed
        statements. Statements that still fail are dropped (logged); none left → lib/answer/outcome.py decides.
        """
        schema = structured.answer_schema(retrieval.entry_ids)
        generate_ms = validate_ms = 0.0
        prompt_tokens = answer_tokens = regenerations = 0
        checked, raws, parsed = [], [], None
        shown = set()

        def stream_handler():
            if not on_delta:
                return None
            stream = structured.StatementStream()

            def feed(piece):
                if piece is None:
                    return
                for statement in stream.feed(piece):
                    item = structured.check_statement(statement, blocks)
                    text = structured.render_statement(item, blocks, conflicts)
                    if item.ok and text not in shown:
                        shown.add(text)
                        on_delta(text + "\n\n")
            return feed

        for attempt in range(2):
            t0 = time.perf_counter()
            try:
                chat = self._generate(messages, settings, client, stream_handler(), deadline, gated,
                                      response_format=schema)
            except ollama.OllamaError as exc:
                timings["generate_ms"] = generate_ms + (time.perf_counter() - t0) * 1000
                if on_delta:
                    on_delta(None)
                if checked and any(c.ok for c in checked):
                    break     # the regeneration failed: what passed before still stands
                result = self._degraded(question, blocks, conflicts, timings, exc, regenerations)
                result.answer_mode = "structured"
                return result
            generate_ms += (time.perf_counter() - t0) * 1000
            prompt_tokens += chat.prompt_eval_count
            answer_tokens += chat.eval_count
            raws.append(chat.content)
            t0 = time.perf_counter()
            parsed = structured.parse_response(chat.content)
            new = [structured.check_statement(s, blocks) for s in parsed.statements]
            checked.extend(new)
            validate_ms += (time.perf_counter() - t0) * 1000
            failed = [c for c in new if not c.ok]
            if attempt or parsed.refused or not (parsed.error or failed) or time.monotonic() >= deadline:
                break
            regenerations += 1
            note = (structured.retry_note(failed) if not parsed.error else
                    "Hinweis zur Wiederholung: Die vorige Antwort war kein gültiges JSON. Antworte nur mit JSON "
                    "im vorgegebenen Format.")
            messages = messages + [{"role": "assistant", "content": chat.content}, {"role": "user", "content": note}]
        t0 = time.perf_counter()
        good, seen = [], set()
        for item in checked:
            text = structured.render_statement(item, blocks, conflicts)
            if item.ok and text not in seen:
                seen.add(text)
                good.append(item)
        dropped = [c for c in checked if not c.ok]
        violations = [f"dropped: {v.code}: {v.detail}" for c in dropped for v in c.violations
                      if v.code in structured.FAILING]
        violations += [f"repaired: {v.code}: {v.detail}" for c in good for v in c.violations]
        rejected, notice = "", retrieval.degraded
        if parsed is not None and parsed.refused and not good:
            status, answer = "verweigert", structured.render_refusal(parsed.reason)
        elif good:
            status, answer = "beantwortet", structured.render_answer(good, blocks, conflicts)
            if dropped:
                rejected = "\n\n".join(raws)
                notice = notice or self.env._("%(count)s statement(s) of the AI answer could not be verified in "
                                              "the cited entries and are not shown.", count=len(dropped))
        else:
            codes = [v.code for c in dropped for v in c.violations if v.code in structured.FAILING]
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

    def _degraded(self, question, blocks, conflicts, timings, exc, regenerations=0):
        _logger.warning("pv_kb: chat model unavailable, extractive answer: %s", exc)
        answer = extractive.extractive_answer(question, blocks, conflicts=conflicts)
        return AgentAnswer(
            status="notbetrieb", answer=answer,
            cited_ids=citations.extract_citations(answer), conflicts=conflicts, timings=timings,
            notice=self.env._("The AI service is not available (%(reason)s). Shown are the best matching "
                              "passages of the knowledge base, without an AI answer.", reason=exc.message),
            regenerations=regenerations)

    @api.model
    def _generate(self, messages, settings, client, on_delta, deadline, gated, response_format=None):
        options = {"temperature": 0.1}
        if response_format:
            options["num_predict"] = 500   # a JSON answer of a few statements; bounds a model that rambles
        expected = sum(ollama.estimate_tokens(m["content"]) for m in messages)
        num_ctx = max(2048, min(settings["num_ctx"] * 4, int(expected * 1.3) + 1024))
        if on_delta is None:
            if time.monotonic() >= deadline:
                raise ollama.OllamaTimeout(self.env._("The time limit for the answer was reached."))
            return client.chat(settings["chat_model"], messages, origin=gated, options=options, num_ctx=num_ctx,
                               expected_prompt_tokens=expected, response_format=response_format)
        result = None
        for piece in client.chat_stream(settings["chat_model"], messages, origin=gated, options=options,
                                        num_ctx=num_ctx, expected_prompt_tokens=expected, deadline=deadline,
                                        response_format=response_format):
            if piece.delta:
                on_delta(piece.delta)
            if piece.done:
                result = piece.result
        if result is None:
            raise ollama.OllamaBadResponse(self.env._("The answer stream ended without a result."))
        return result

    # --- the question log ------------------------------------------------------------
    @api.model
    def _log(self, question, query, conversation, retrieval, result, settings):
        entries = retrieval.entries if retrieval else []
        retrieved = [{"kb_id": e.entry_id, "score": round(e.score, 6), "signals": e.signals,
                      "section": e.best_section, "expansion": e.expansion} for e in entries]
        t = result.timings
        return self.env["pv.kb.query"].sudo().create({
            "question": question,
            "standalone_query": query,
            "conversation_id": conversation.id if conversation else False,
            "user_id": self.env.uid,
            "answer": result.answer,
            "status": result.status,
            "notice": result.notice or False,
            "mode": retrieval.mode if retrieval else False,
            "cited_ids": ", ".join(result.cited_ids) or False,
            "retrieved_ids": ", ".join(result.retrieved_ids) or False,
            "retrieved_json": json.dumps(retrieved, ensure_ascii=False),
            "violations": "\n".join(result.violations) or False,
            "settings_json": json.dumps({k: settings[k] for k in SNAPSHOT_KEYS}),
            "embedding_model": settings["embedding_model"],
            "chat_model": settings["chat_model"],
            "time_embed_ms": t.get("embed_ms", 0.0),
            "time_retrieve_ms": t.get("retrieve_ms", 0.0),
            "time_generate_ms": t.get("generate_ms", 0.0),
            "time_prompt_ms": t.get("prompt_ms", 0.0),
            "time_validate_ms": t.get("validate_ms", 0.0),
            "time_total_ms": t.get("total_ms", 0.0),
            "prompt_tokens": result.prompt_tokens,
            "answer_tokens": result.answer_tokens,
            "regenerations": result.regenerations,
            "pii_count": result.pii_count,
            "answer_mode": result.answer_mode,
            "rejected_answer": result.rejected or False,
        })
