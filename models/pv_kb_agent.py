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
from ..lib.answer import citations, conflicts as conflict_rules, extractive, gate, prompt, validation
from ..lib.answer.types import ContextBlock, EntryFacts
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
        messages = prompt.build_messages(question, blocks, conflicts, history)
        timings["prompt_ms"] = (time.perf_counter() - t0) * 1000
        if isinstance(retrieval.ollama_error, (ollama.OllamaUnreachable, ollama.OllamaTimeout)):
            # the server failed already for the query embedding: do not wait for it a second time
            return self._degraded(question, blocks, conflicts, timings, retrieval.ollama_error)
        regenerations = 0
        prompt_tokens = answer_tokens = 0
        generate_ms = validate_ms = 0.0
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
            checked = validation.validate_answer(chat.content, blocks, conflicts)
            validate_ms += (time.perf_counter() - t0) * 1000
            if checked.ok or regenerations >= 1:
                break
            regenerations += 1
            if on_delta:
                on_delta(None)
            messages = prompt.build_messages(question, blocks, conflicts, history,
                                             strict_note=validation.strict_instruction(checked))
        t0 = time.perf_counter()
        # what is shown cites retrieved entries only (checked again here, whatever the model wrote)
        answer, unknown = citations.strip_unknown_citations(chat.content.strip(), retrieval.entry_ids)
        # every side of each conflict the answer touches, marked with ⚠: added in code where the model did not
        answer = conflict_rules.add_conflict_note(answer, conflicts, citations.extract_citations(answer))
        status = validation.answer_status(checked, unknown)
        validate_ms += (time.perf_counter() - t0) * 1000
        timings.update({"generate_ms": generate_ms, "validate_ms": validate_ms})
        return AgentAnswer(
            status=status, answer=answer,
            cited_ids=citations.extract_citations(answer),
            violations=[f"{v.code}: {v.detail}" for v in checked.violations],
            notice=retrieval.degraded, conflicts=conflicts, timings=timings, regenerations=regenerations,
            prompt_tokens=prompt_tokens, answer_tokens=answer_tokens)

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
    def _generate(self, messages, settings, client, on_delta, deadline, gated):
        options = {"temperature": 0.1}
        expected = sum(ollama.estimate_tokens(m["content"]) for m in messages)
        num_ctx = max(2048, min(settings["num_ctx"] * 4, int(expected * 1.3) + 1024))
        if on_delta is None:
            if time.monotonic() >= deadline:
                raise ollama.OllamaTimeout(self.env._("The time limit for the answer was reached."))
            return client.chat(settings["chat_model"], messages, origin=gated, options=options, num_ctx=num_ctx,
                               expected_prompt_tokens=expected)
        result = None
        for piece in client.chat_stream(settings["chat_model"], messages, origin=gated, options=options,
                                        num_ctx=num_ctx, expected_prompt_tokens=expected, deadline=deadline):
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
        })
