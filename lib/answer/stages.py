"""The optional model steps around retrieval — query rewriting before it, reranking after it — and the
context built from the final ranking. Pure Python, no Odoo, no database.

Why here: in the chat panel a model call must never run while a database cursor is held
(models/pv_kb_agent.py, ``ShortSteps``). Both steps therefore work on the plain data of a
:class:`~lib.answer.respond.PreparedQuestion`; the agent's pipeline (``run``) calls each of them once:

- :func:`rewrite_query` runs after the personal-data gate and before retrieval (for the panel between two
  short transactions; inline in one transaction for the command line, the evaluation and the tests). The rewrite is only searched (``prepared.search_query``); ``prepared.question`` — the ``<frage>``
  of the answer prompt — stays the user's (masked) question.
- :func:`rerank_prepared` runs after retrieval: the agent's first step retrieved ``rerank_depth`` entries and
  built all their blocks (``prepared.pending``); the model orders them, the best ``top_k`` are kept and
  :func:`finish_context` builds the messages from them. Without reranking the agent calls
  :func:`finish_context` itself, in the first step.

With a rerank server configured (setting ``rerank_servers``), reranking uses it instead of the chat model: the
question and each candidate's best section go to its ``/v1/rerank`` (or TEI's ``/rerank``) and the scores give the
order (lib/search/rerank.py, ``rerank_by_scores``).

A failing model never breaks an answer: the original query / the fused order is used and the outcome says so
(``prepared.rewrite``, ``prepared.rerank``; latencies in ``prepared.timings`` as ``rewrite_ms``, ``rerank_ms``).
"""
from __future__ import annotations

import dataclasses
import time

from ..llm import errors as ollama_errors, tokens as ollama_tokens
from ..search import rewrite as query_rewrite, rerank
from . import conflicts as conflict_rules, modes, prompt

STEP_SHARE = 0.4            # a step may use at most this share of the time left for the answer
RERANK_PREDICT = 400        # tokens: 40 ids of ~10 tokens
MAX_CONTEXT_BLOCKS = 24     # blocks handed to prompt.pick_blocks (as the agent's MAX_BLOCKS * 2)


def chat_text(client, settings, origin, *, deadline=None, cancel=None, num_predict=200):
    """``chat(messages, schema) -> text`` for lib/rerank and lib/query_rewrite: one streamed request (so that
    ``cancel`` ends it at once, like the answer) with ``format``, temperature 0, bounded by ``deadline``."""
    def chat(messages, schema):
        now = time.monotonic()
        if deadline is not None and deadline <= now:
            raise ollama_errors.OllamaTimeout("deadline passed before the request")
        step_deadline = None if deadline is None else now + max(0.5, (deadline - now) * STEP_SHARE)
        expected = sum(ollama_tokens.estimate_tokens(m["content"]) for m in messages)
        num_ctx = max(2048, min(int(settings["num_ctx"]), int(expected * 1.3) + num_predict + 256))
        parts = []
        for piece in client.chat_stream(settings["chat_model"], messages, origin=origin,
                                        options={"temperature": 0, "num_predict": num_predict}, num_ctx=num_ctx,
                                        expected_prompt_tokens=expected, deadline=step_deadline, cancel=cancel,
                                        response_format=schema):
            parts.append(piece.delta)
            if piece.done:
                return "".join(parts)
        raise ollama_errors.OllamaBadResponse("stream ended without a result")
    return chat


def rewrite_query(prepared, make_client, *, deadline=None, cancel=None):
    """Step between the gate and retrieval: ``prepared.search_query`` and ``prepared.rewrite``. Never raises."""
    if prepared.pii_failed or prepared.gated is None or not prepared.settings.get("query_rewrite"):
        return None
    gated = prepared.gated
    try:
        client = make_client(prepared.settings)
    except Exception as exc:  # noqa: BLE001 - as every model failure here: the original query is searched
        outcome = query_rewrite.Outcome(query=gated.query, status="fallback", reason=f"error: {type(exc).__name__}")
    else:
        try:
            chat = chat_text(client, prepared.settings, gated, deadline=deadline, cancel=cancel,
                             num_predict=query_rewrite.NUM_PREDICT)
            outcome = query_rewrite.rewrite(chat, gated.query, gated.history)
        finally:
            client.close()
    prepared.rewrite = outcome
    prepared.search_query = outcome.rewritten or None
    prepared.timings["rewrite_ms"] = outcome.ms
    return outcome


def reranking(settings):
    """Whether the fused entries are reranked: by the chat model (``rerank``) or by a rerank server."""
    return bool(settings.get("rerank")) or uses_rerank_server(settings)


def uses_rerank_server(settings):
    return bool((settings.get("rerank_servers") or "").strip())


def section_candidates(entries, entry_info, sections):
    """rerank.Candidates for a rerank server: title and the entry's best section text (``sections``:
    {entry id: text}; an entry without one is sent with its title only). Expansions are left out."""
    out = []
    for entry in entries:
        info = entry_info.get(entry.entry_id)
        if entry.expansion or not info:
            continue
        out.append(rerank.Candidate(entry_id=entry.entry_id, title=info["title"] or "",
                                    excerpt=sections.get(entry.entry_id, "")))
    return out


def best_sections_of_blocks(blocks):
    """{entry id: text of its best section} from the context blocks of every retrieved entry."""
    best = {}
    for block in sorted(blocks, key=lambda b: b.rank_in_entry):
        if not block.expansion:
            best.setdefault(block.entry_id, block.text)
    return best


def best_sections_of_rows(entries, rows):
    """{entry id: text of its best section} from chunk rows ({id: row}) of the entries (the evaluation)."""
    wanted = {e.entry_id: e.best_section for e in entries if not e.expansion}
    best = {}
    for row in sorted(rows.values(), key=lambda r: r["position"]):
        if wanted.get(row["kb_id"]) == row["section_key"]:
            best.setdefault(row["kb_id"], row["text"] or "")
    return best


def rerank_by_server(client, settings, origin, question, entries, entry_info, sections, top_k, deadline=None):
    """(reordered entries, rerank.Outcome) by the rerank server; the evaluation's and the agent's common step."""
    cands = section_candidates(entries, entry_info, sections)

    def score(query, documents):
        step_deadline = None
        if deadline is not None:
            now = time.monotonic()
            if deadline <= now:
                raise ollama_errors.OllamaTimeout("deadline passed before the request")
            step_deadline = now + max(0.5, (deadline - now) * STEP_SHARE)
        return client.rerank(settings.get("rerank_model") or "", query, documents, origin=origin,
                             deadline=step_deadline).scores

    outcome = rerank.rerank_by_scores(score, question, cands)
    fused = [c.entry_id for c in cands]
    return reorder_entries(entries, outcome.order if outcome.order else fused, top_k), outcome


def candidates(entries, entry_info, summaries):
    """rerank.Candidates of the fused entries (expansions left out): title, and as excerpt the entry's summary
    and legal bases; ``summaries``: {chunk id: row} with the entries' ``zusammenfassung`` rows."""
    summary = {}
    for row in sorted(summaries.values(), key=lambda r: r["position"]):
        if row["section_key"] == "zusammenfassung":
            summary.setdefault(row["kb_id"], row["text"] or "")
    out = []
    for entry in entries:
        info = entry_info.get(entry.entry_id)
        if entry.expansion or not info:
            continue
        bases = ", ".join(info.get("legal_bases") or [])
        text = summary.get(entry.entry_id, "") + (f" ({bases})" if bases else "")
        out.append(rerank.Candidate(entry_id=entry.entry_id, title=info["title"] or "", excerpt=text.strip()))
    return out


def reorder_entries(entries, order, top_k):
    """The fused ``entries`` in ``order`` (ids), cut to ``top_k``; expansions stay behind them, as fused."""
    by_id = {e.entry_id: e for e in entries if not e.expansion}
    ranked = [by_id[i] for i in order if i in by_id][:top_k]
    return ranked + [e for e in entries if e.expansion]


def rerank_entries(chat, question, entries, entry_info, summaries, top_k):
    """(reordered entries, rerank.Outcome) — the evaluation's and the agent's common step."""
    cands = candidates(entries, entry_info, summaries)
    outcome = rerank.rerank(chat, question, cands)
    fused = [c.entry_id for c in cands]
    return reorder_entries(entries, outcome.order if outcome.order else fused, top_k), outcome


def rerank_prepared(prepared, make_client, *, deadline=None, cancel=None):
    """Step after retrieval when ``prepared.pending`` (reranking on): order, keep ``top_k``, build the context.
    Never raises; without a pending rerank it does nothing."""
    if not prepared.pending:
        return None
    settings, retrieval = prepared.settings, prepared.retrieval
    client, reason = None, ""
    if isinstance(retrieval.ollama_error, (ollama_errors.OllamaUnreachable, ollama_errors.OllamaTimeout)):
        reason = "server_unavailable"   # failed already for the query embedding: do not wait for it again
    else:
        try:
            client = make_client(settings)
        except Exception as exc:  # noqa: BLE001 - the fused order stands
            reason = f"error: {type(exc).__name__}"
    if client is None:
        outcome = rerank.Outcome(order=retrieval.entry_ids, status="fallback", reason=reason)
        entries = reorder_entries(retrieval.entries, outcome.order, settings["top_k"])
    else:
        try:
            if uses_rerank_server(settings):
                entries, outcome = rerank_by_server(
                    client, settings, prepared.gated, prepared.gated.query, retrieval.entries, retrieval.entry_info,
                    best_sections_of_blocks(prepared.all_blocks), settings["top_k"], deadline)
            else:
                chat = chat_text(client, settings, prepared.gated, deadline=deadline, cancel=cancel,
                                 num_predict=RERANK_PREDICT)
                entries, outcome = rerank_entries(chat, prepared.query, retrieval.entries, retrieval.entry_info,
                                                  prepared.summaries, settings["top_k"])
        finally:
            client.close()
    prepared.rerank = outcome
    prepared.timings["rerank_ms"] = outcome.ms
    retrieval.entries = entries
    finish_context(prepared)
    return outcome


def _ordered_blocks(blocks, entries, rescore):
    """Blocks grouped by entry in the order of ``entries`` (those of other entries dropped); ``rescore``: a
    reranked order, whose blocks get scores by their new rank (the prompt fills its budget by score)."""
    rank = {e.entry_id: n for n, e in enumerate(entries)}
    kept = sorted((b for b in blocks if b.entry_id in rank), key=lambda b: rank[b.entry_id])
    if not rescore:
        return kept
    return [b if b.expansion else dataclasses.replace(b, score=1.0 - rank[b.entry_id] * 1e-3) for b in kept]


def finish_context(prepared):
    """The blocks, conflicts and messages of the final ranking (pure; ``prepared.plan`` from the agent)."""
    plan = prepared.plan
    entries = prepared.retrieval.entries
    blocks = _ordered_blocks(prepared.all_blocks, entries, prepared.rerank is not None)[:MAX_CONTEXT_BLOCKS]
    kept = {e.entry_id for e in entries}
    found = plan.get("fact_conflicts")      # the fact comparison's conflicts of the retrieved entries (the agent)
    found = [c for c in found if set(c.entry_ids) <= kept] if found is not None else None
    prepared.conflicts = ([c for c in found if not c.outdated] if found is not None else
                          conflict_rules.detect_conflicts([f for f in prepared.entry_facts if f.entry_id in kept]))
    prepared.outdated = [c for c in found or () if c.outdated]
    prepared.blocks = prompt.pick_blocks(blocks, plan["max_blocks"])
    prepared.messages = prompt.build_messages(prepared.question, prepared.blocks, prepared.conflicts,
                                              prepared.history, max_context_chars=plan["max_chars"])
    prepared.messages[0] = {"role": "system", "content": plan["system"]}
    shape = modes.get(prepared.answer_mode).shape_context
    if shape:
        shape(prepared)     # e.g. the selection mode numbers every sentence and table row
    prepared.pending = False
