"""Evaluation on a gold set: the same code for `odoo-bin … pv_kb eval` and the Odoo test."""
from odoo import api, models

from ..lib.evaluation import metrics as evaluation
from ..lib.search import rewrite as query_rewrite
from ..lib.answer import stages
from ..lib.facts import lookup as fact_lookup
from ..lib.facts.periods import find_period

STEP_LABELS = {"rewrite_ms": "Query-Rewriting (Chat-Modell)", "rerank_ms": "Reranking (Chat-Modell)",
               "rerank_server_ms": "Reranking (Rerank-Server)"}


class PvKbEvaluator(models.AbstractModel):
    _name = "pv.kb.evaluator"
    _description = "Knowledge base evaluation"

    @api.model
    def _run(self, gold, *, modes=("hybrid",), k=8, answers=False, progress=None, settings=None):
        """Retrieval metrics per mode (and answer metrics for the first mode when ``answers``).

        ``gold``: list of goldset_format.GoldQuestion.  Returns {"modes": {mode: metrics}, "answers": metrics|None,
        "settings": {...}, "misses": {mode: [(question id, expected, got)]}}.
        """
        settings = settings or self.env["pv.kb.settings"]._get()
        retriever = self.env["pv.kb.retriever"]
        client = self.env["pv.kb.settings"]._client(settings)
        out = {"modes": {}, "misses": {}, "answers": None, "answer_details": []}
        try:
            for mode in modes:
                items, embed_ms, retrieve_ms, degraded, evidence = [], [], [], set(), []
                step_ms, fallbacks = {key: [] for key in STEP_LABELS}, {}
                for n, q in enumerate(gold, 1):
                    result, steps = self._search(q.question, mode=mode, k=k, settings=settings, client=client)
                    for name, (ms, reason) in steps.items():
                        step_ms[name].append(ms)
                        if reason:
                            counts = fallbacks.setdefault(STEP_LABELS[name], {})
                            counts[reason] = counts.get(reason, 0) + 1
                    if result.degraded:
                        degraded.add(result.degraded)
                    items.append((q, result.entry_ids))
                    evidence.append((q, result.evidence))
                    embed_ms.append(result.timings.get("embed_ms", 0.0))
                    retrieve_ms.append(result.timings["retrieve_ms"])
                    if progress:
                        progress(f"{mode}: {n}/{len(gold)}")
                out["modes"][mode] = {
                    "retrieval": evaluation.retrieval_metrics(items, k=k),
                    "latency": {"Retrieval (ohne Embedding)": evaluation.latency_stats(retrieve_ms),
                                "Query-Embedding": evaluation.latency_stats(embed_ms),
                                **{STEP_LABELS[name]: evaluation.latency_stats(values)
                                   for name, values in step_ms.items() if values}},
                    "degraded": sorted(degraded),
                    # {label: {reason: questions}} whose rewrite / rerank fell back to the original query / the
                    # fused order ("echo": the model gave the question back unchanged)
                    "step_fallbacks": fallbacks,
                }
                if mode == "hybrid":
                    out["gate"] = self._gate_calibration(evidence)
                out["misses"][mode] = [(q.id, q.expected_ids, got[:k]) for q, got in items
                                       if q.expected_ids and not set(q.expected_ids) & set(got[:k])]
            if answers:
                out["answers"], out["answer_details"] = self._answers(gold, progress, settings)
                out["modes"][modes[0]]["answers"] = out["answers"]
        finally:
            client.close()
        out["settings"] = self.env["pv.kb.settings"]._snapshot(settings)
        out["settings"]["k"] = k
        return out

    @api.model
    def _search(self, question, *, mode, k, settings, client):
        """Retrieval of one gold question as the agent does it, with the optional model steps of ``settings``
        (``query_rewrite``, ``rerank``; lib/answer/stages.py). Returns (RetrievalResult with ``k`` entries,
        {"rewrite_ms"|"rerank_ms": (ms, reason of a fallback or "")}).

        The model calls run inline, inside the evaluation's transaction: it is a command-line run (or a test)
        where no user waits and no connection pool is shared, the one place besides ``pv.kb.agent._ask`` where
        that is allowed (the chat panel never does it, controllers/main.py)."""
        retriever = self.env["pv.kb.retriever"]
        gate = self.env["pv.kb.settings"]._pii_gate
        gated = search = gate(question)
        steps = {}
        if settings.get("query_rewrite"):
            chat = stages.chat_text(client, settings, gated, num_predict=query_rewrite.NUM_PREDICT)
            outcome = query_rewrite.rewrite(chat, gated.query)
            steps["rewrite_ms"] = (outcome.ms, outcome.reason if outcome.fell_back else "")
            if outcome.rewritten:
                search = gate(gated.question, query=outcome.rewritten, mapping=gated.mapping)
        reranking = stages.reranking(settings)
        depth = max(k, settings["rerank_depth"]) if reranking else k
        result = retriever._retrieve(question, mode=mode, k=depth, settings=settings, client=client, expand=False,
                                     gated=search)
        if reranking and result.entries and stages.uses_rerank_server(settings):
            sections = stages.best_sections_of_rows(result.entries, retriever._chunk_rows(kb_ids=result.entry_ids))
            result.entries, outcome = stages.rerank_by_server(client, settings, search, search.query, result.entries,
                                                              result.entry_info, sections, k)
            steps["rerank_server_ms"] = (outcome.ms, outcome.reason if outcome.fell_back else "")
        elif reranking and result.entries:
            summaries = retriever._chunk_rows(kb_ids=result.entry_ids, section_keys=["zusammenfassung"])
            chat = stages.chat_text(client, settings, gated, num_predict=stages.RERANK_PREDICT)
            result.entries, outcome = stages.rerank_entries(chat, gated.query, result.entries, result.entry_info,
                                                            summaries, k)
            steps["rerank_ms"] = (outcome.ms, outcome.reason if outcome.fell_back else "")
        return result, steps

    @api.model
    def _gate_calibration(self, evidence):
        """What the refusal gate sees: the lowest dense score of an answerable question, and per question
        without expected ids its score and full-text hits (a floor below the first, above the second
        where they have no text match, lets the gate refuse them without the model)."""
        answerable = [ev["dense_best"] for q, ev in evidence if q.expected_ids and ev["dense_best"] is not None]
        return {
            "min_dense_answerable": min(answerable) if answerable else None,
            "unanswerable": [{"id": q.id, "dense_best": ev["dense_best"], "fts_hits": ev["fts_hits"]}
                             for q, ev in evidence if not q.expected_ids],
        }

    @api.model
    def _answers(self, gold, progress=None, settings=None):
        agent = self.env["pv.kb.agent"]
        synonyms = self.env["pv.kb.synonym"].sudo()._rows()
        records, details = [], []
        for n, q in enumerate(gold, 1):
            result = agent._ask(q.question, log=False, settings=settings)
            conflict_ids = {i for c in result.conflicts for i in c.entry_ids} or None
            asked = fact_lookup.parse_question(q.question, synonyms)
            records.append(evaluation.AnswerRecord(
                gold=q, retrieved_ids=result.retrieved_ids, cited_ids=result.cited_ids, answer_text=result.answer,
                refused=result.status == "verweigert", conflict_ids_marked=conflict_ids,
                latency_retrieval_ms=result.timings.get("retrieve_ms", 0.0),
                latency_total_ms=result.timings.get("total_ms", 0.0), from_facts=result.from_facts,
                value_question=asked is not None,
                wrong_year=result.from_facts and asked is not None and _other_year(result.answer, asked.year)))
            details.append({"id": q.id, "status": result.status, "gate_refused": result.gate_refused,
                            "from_facts": result.from_facts,
                            "cited": result.cited_ids,
                            "retrieved": result.retrieved_ids, "violations": result.violations})
            if progress:
                progress(f"answers: {n}/{len(gold)}")
        return evaluation.answer_metrics(records), details


def _other_year(answer, year):
    """A fact line of the answer whose period does not cover the asked ``year`` (the note for a missing year
    names the latest values on purpose: not counted)."""
    if year is None or answer.startswith("Für "):
        return False
    for line in answer.splitlines():
        if line.startswith("- "):
            period = find_period(line.split(": ")[0])
            if period is not None and not period.covers(year):
                return True
    return False
