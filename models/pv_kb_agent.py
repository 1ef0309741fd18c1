"""The grounded question-answering service: retrieve, gate, ground, generate, validate, log.

Rules and checks are pure functions in ``lib/answer/`` (see its docstring for the order) and
``lib/search/followup.py``; this model wires them to the retriever, the Ollama client and the question log.
"""
import json
import logging
import time

from odoo import api, models

from ..lib.search import followup
from ..lib.pii import gate as pii
from ..lib.answer import conflicts as conflict_rules, freetext, gate, modes as answer_modes, prompt, stages
from ..lib.answer.respond import PreparedQuestion, respond
from ..lib.answer.types import ContextBlock, EntryFacts
from .pv_kb_settings import make_client

_logger = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 2000
MAX_BLOCKS = 12


class PvKbAgent(models.AbstractModel):
    _name = "pv.kb.agent"
    _description = "Knowledge base assistant"

    # --- context ---------------------------------------------------------------
    @api.model
    def _blocks(self, retrieval, summaries, limit=MAX_BLOCKS * 2):
        """Context blocks: the retrieved chunks of each entry, plus its Kernwerte for value questions and the
        Kernwerte and summary of an entry added as an expansion; ``summaries``: those sections of the entries.
        ``limit`` None: the blocks of every entry (reranking cuts them after ordering, lib/answer/stages.py)."""
        chunks = dict(retrieval.chunks)
        value_question = bool(retrieval.plan and retrieval.plan.is_value_question)
        extra_keys = ["kernwerte"] if value_question else []
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
            matched = [chunks[cid]["section_key"] for cid in entry.chunk_ids if cid in chunks]
            for _cid, row in own:
                blocks.append(ContextBlock(
                    entry_id=entry.entry_id, title=info["title"], stand=info["stand"] or "", topic=info["topic"] or "",
                    source=info["source"] or "", heading_path=row["heading_path"] or "", text=row["text"] or "",
                    section_key=row["section_key"], score=entry.score - rank * 1e-6, expansion=entry.expansion,
                    rank_in_entry=prompt.section_rank(row["section_key"], matched, value_question)))
        return blocks if limit is None else blocks[:limit]

    @api.model
    def _entry_facts(self, retrieval, summaries):
        """What conflict detection needs of each retrieved entry (lib/answer/conflicts.py)."""
        kb_ids = [e.entry_id for e in retrieval.entries]
        kernwerte = {}
        for row in summaries.values():
            if row["section_key"] == "kernwerte":
                kernwerte[row["kb_id"]] = (kernwerte.get(row["kb_id"], "") + "\n" + (row["text"] or "")).strip()
        return [EntryFacts(entry_id=i, title=info["title"], stand=info["stand"] or "", topic=info["topic"] or "",
                           legal_bases=info["legal_bases"], kernwerte_text=kernwerte.get(i, ""))
                for i, info in retrieval.entry_info.items() if i in kb_ids]

    @api.model
    def _conflicts(self, retrieval, summaries):
        return conflict_rules.detect_conflicts(self._entry_facts(retrieval, summaries))

    # --- the three steps of an answer ------------------------------------------------
    @api.model
    def _ask(self, question, conversation=None, filters=None, *, on_delta=None, on_retrieved=None, deadline=None,
             log=True, mode="hybrid", settings=None, pii_mapping=None):
        """Answer ``question`` from the knowledge base only, in one transaction (command line, evaluation,
        tests). The chat panel's stream runs the same three steps with a connection only around the first
        and the last (controllers/main.py).

        ``on_delta(text)`` receives streamed answer text (``on_delta(None)`` = discard what was
        streamed, a regeneration follows); ``deadline`` is a ``time.monotonic()`` limit for the whole
        answer. Never raises for Ollama trouble: the answer degrades instead.

        Personal data: question, follow-up query and history pass the personal-data gate
        (``pv.kb.settings._pii_gate``) before anything else; from there on only the masked texts
        exist (retrieval, prompts, the question log). ``pii_mapping`` is the conversation's mapping as
        the user's browser holds it (placeholders stay stable); the result carries the extended one
        back. If the gate fails, nothing is sent and nothing of the question is stored.

        The optional model steps (settings ``query_rewrite``, ``rerank``; lib/answer/stages.py) run here
        inline, inside this one transaction: that is allowed for the command line, the evaluation and the
        tests only. The panel's stream worker calls the same steps with no cursor open.
        """
        settings = settings or self.env["pv.kb.settings"]._get()
        deadline = deadline or (time.monotonic() + settings["answer_time_limit"])
        prepared = self._gate_question(question, conversation, settings=settings, pii_mapping=pii_mapping)
        stages.rewrite_query(prepared, interactive_client, deadline=deadline)
        prepared = self._build(prepared, filters, mode=mode)
        stages.rerank_prepared(prepared, interactive_client, deadline=deadline)
        if on_retrieved and prepared.retrieval:
            on_retrieved(prepared.retrieval)
        result = respond(prepared, interactive_client, on_delta=on_delta, deadline=deadline)
        if log and not prepared.pii_failed:
            result.query = self._log(prepared, result, conversation)
        return result

    @api.model
    def _prepare(self, question, conversation=None, filters=None, *, settings=None, mode="hybrid", pii_mapping=None):
        """Step 1 (database): gate, retrieve, build the context and the prompt (:meth:`_gate_question`, then
        :meth:`_build`). No model call: query rewriting, when on, is the caller's step between the two
        (lib/answer/stages.rewrite_query); a pending rerank is done by :func:`respond`. Never raises."""
        prepared = self._gate_question(question, conversation, settings=settings, pii_mapping=pii_mapping)
        return self._build(prepared, filters, mode=mode)

    @api.model
    def _gate_question(self, question, conversation=None, *, settings=None, pii_mapping=None):
        """Step 1a (database): the history and the personal-data gate. Never raises: a failed gate is kept in
        ``pii_failed`` and answered by :func:`respond`."""
        started = time.perf_counter()
        settings = settings or self.env["pv.kb.settings"]._get()
        question = (question or "").strip()[:MAX_QUESTION_CHARS]
        history = conversation._history() if conversation else []
        query = followup.standalone_query(question, history) if history else question
        prepared = PreparedQuestion(question=question, query=query, history=history, settings=settings,
                                    texts=self._texts(), started=started)
        try:
            gated = self.env["pv.kb.settings"]._pii_gate(question, query=query, history=history, mapping=pii_mapping)
        except pii.PiiGateError as exc:
            # fail closed: no model request, no retrieval, nothing of the question stored
            _logger.error("pv_kb: personal-data gate failed, question not processed: %s", exc)
            prepared.pii_failed = True
            prepared.question = prepared.query = ""
            prepared.history = []
            return prepared
        prepared.gated = gated
        prepared.question, prepared.query, prepared.history = question, query, history = \
            gated.question, gated.query, gated.history
        if conversation and not conversation.query_ids:
            conversation._rename(question[:80])   # the masked question names a new conversation
        return prepared

    @api.model
    def _build(self, prepared, filters=None, *, mode="hybrid"):
        """Step 1b (database): retrieve (the rewrite, when there is one, else the query), gate the evidence,
        read the context. Reranking on: ``rerank_depth`` entries with all their blocks, the messages left to
        lib/answer/stages.rerank_prepared (``pending``); else the messages of the ``top_k`` entries. Never raises."""
        if prepared.pii_failed:
            return prepared
        settings, question, gated = prepared.settings, prepared.question, prepared.gated
        reranking = stages.reranking(settings)
        try:
            with self.env.cr.savepoint():
                search = gated
                if prepared.search_query:
                    # the model's rewrite passes the gate like any text that is sent (and gets its seal)
                    search = self.env["pv.kb.settings"]._pii_gate(gated.question, query=prepared.search_query,
                                                                  history=gated.history, mapping=gated.mapping)
                k = max(settings["top_k"], settings["rerank_depth"]) if reranking else settings["top_k"]
                retrieval = self.env["pv.kb.retriever"]._retrieve(question, query=search.query, mode=mode, k=k,
                                                                   filters=filters, settings=settings, gated=search)
                prepared.retrieval = retrieval
                verdict = gate.decide(gate.Evidence.from_retrieval(retrieval), dense_floor=settings["gate_dense_floor"])
                if verdict.refuse:
                    prepared.verdict = verdict
                    return prepared
                if settings.get("fact_answers"):
                    # a value question the facts of the retrieved entries answer: no context, no model needed
                    prepared.fact_answer = self.env["pv.kb.fact"]._answer(question, retrieval.entry_ids)
                    if prepared.fact_answer is not None and not settings.get("fact_explain"):
                        return prepared
                t0 = time.perf_counter()
                # Kernwerte and summaries of the retrieved entries, read once for the context and the conflict check
                summaries = self.env["pv.kb.retriever"]._chunk_rows(kb_ids=[e.entry_id for e in retrieval.entries],
                                                                    section_keys=["kernwerte", "zusammenfassung"])
                prepared.summaries = summaries
                prepared.all_blocks = self._blocks(retrieval, summaries, limit=None)
                prepared.entry_facts = self._entry_facts(retrieval, summaries)
                # the answer mode of the chat model, and a context sized to its window
                mode = answer_modes.mode_for(settings["chat_model"], settings["answer_modes"], settings["answer_mode"])
                system = answer_modes.get(mode).system_prompt()
                max_blocks, max_chars = freetext.context_budget(
                    settings["num_ctx"], len(system) + len(question) + 200,
                    reserve_tokens=answer_modes.get(mode).reserve_tokens)
                prepared.answer_mode = mode
                prepared.plan = {"system": system, "max_blocks": max_blocks, "max_chars": max_chars,
                                 "fact_conflicts": self.env["pv.kb.fact"]._conflicts(retrieval.entry_ids)}
                if reranking:
                    prepared.pending = True     # the model orders the entries in step 2, without a cursor
                else:
                    stages.finish_context(prepared)
                prepared.timings["prompt_ms"] = (time.perf_counter() - t0) * 1000
        except Exception as exc:  # noqa: BLE001 - the user gets a German message and the log an entry, never a traceback
            _logger.exception("pv_kb: answering failed")
            prepared.error = exc
        return prepared

    @api.model
    def _texts(self):
        """The agent's messages in the user's language, for :func:`respond` (which runs without an environment)."""
        return {
            "failed": self.env._("The question could not be answered because of an internal error. Please try "
                                 "again later; if it happens again, tell your administrator."),
            "degraded": self.env._("The AI service is not available (%(reason)s). Shown are the best matching "
                                   "passages of the knowledge base, without an AI answer."),
            "too_late": self.env._("The time limit for the answer was reached."),
            "no_result": self.env._("The answer stream ended without a result."),
            "dropped": self.env._("%(count)s statement(s) of the AI answer could not be verified in the cited "
                                  "entries and are not shown."),
            "pii_failed": self.env._(
                "The question was not processed: the check for personal data failed, so nothing was sent to the "
                "language model. Please try again; if it happens again, tell your administrator."),
        }

    # --- the question log ------------------------------------------------------------
    @api.model
    def _log(self, prepared, result, conversation):
        """Step 3 (database): the question log."""
        question, query, retrieval, settings = prepared.question, prepared.query, prepared.retrieval, prepared.settings
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
            "settings_json": json.dumps(self.env["pv.kb.settings"]._snapshot(settings)),
            "embedding_model": settings["embedding_model"],
            "chat_model": settings["chat_model"],
            "server": result.server or False,
            "time_embed_ms": t.get("embed_ms", 0.0),
            "time_retrieve_ms": t.get("retrieve_ms", 0.0),
            "time_generate_ms": t.get("generate_ms", 0.0),
            "time_prompt_ms": t.get("prompt_ms", 0.0),
            "time_validate_ms": t.get("validate_ms", 0.0),
            "time_rewrite_ms": t.get("rewrite_ms", 0.0),
            "time_rerank_ms": t.get("rerank_ms", 0.0),
            "rewritten_query": prepared.search_query or False,
            "model_steps": "; ".join(f"{name}: {step['status']}" + (f" ({step['reason']})" if step["reason"] else "")
                                     for name, step in result.steps.items()) or False,
            "time_total_ms": t.get("total_ms", 0.0),
            "prompt_tokens": result.prompt_tokens,
            "answer_tokens": result.answer_tokens,
            "regenerations": result.regenerations,
            "pii_count": result.pii_count,
            "answer_mode": result.answer_mode if result.answer_mode != "facts" else False,
            "from_facts": result.from_facts,
            "rejected_answer": result.rejected or False,
        })


def interactive_client(settings):
    """The Ollama client of an answer: a user waits, so no retries (the answer degrades instead)."""
    return make_client(settings, interactive=True)
