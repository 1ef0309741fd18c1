"""Hybrid retrieval: dense (pgvector: sections and entry cards) + German full text (tsvector), fused to entries.

The ranking logic lives in ``lib/search/fusion.py``, ``lib/search/fulltext.py`` and ``lib/search/compounds.py``, its constants in
``lib/search/ranking.py``; this model only runs the SQL queries (reads only) and feeds them the question. The index
it reads, and the caches derived from it (lexicon, synonyms, document frequencies), are written by
``models/pv_kb_chunk_index.py``.
"""
import bisect
import dataclasses
import logging
import time
from dataclasses import dataclass, field

from pgvector import Vector

from odoo import api, models
from odoo.tools import SQL

from ..lib.kb import embed_job
from ..lib.search import entry_card, fulltext, fusion
from ..lib.llm import errors as ollama_errors
from ..lib.search.ranking import (
    BROAD_RERANK,
    BROAD_ROWS,
    CANDIDATES,
    CARD_CANDIDATES,
    EF_SEARCH,
    FTS_RANK_NORMALIZATION,
    FTS_RANK_WEIGHTS,
    FTS_ROW_BUDGET,
    MAX_DF_RATIO,
    RECIPE,
)

_logger = logging.getLogger(__name__)

MODES = ("hybrid", "dense", "fts")


def _refs(raw):
    """The cross references of an entry as stored (comma-separated ids) as a list."""
    return [r for r in (raw or "").split(",") if r]
QUERY_EMBED_TIMEOUT = 15.0
FTS_PER_ENTRY = 20       # _retrieve_among: matching sections ranked per entry asked for
_STEMS = {}              # word -> german_stem (see PvKbRetriever._stems); cleared when it grows past:
_STEMS_MAX = 50_000


@dataclass
class Candidates:
    lists: dict                      # signal -> [fusion.ChunkHit]
    plan: object                     # fulltext.QueryPlan
    used: str                        # mode actually used
    degraded: str | None = None
    error: Exception | None = None
    timings: dict = field(default_factory=dict)
    light: dict = field(default_factory=dict)   # kb_id -> (stand_date, cross_refs) read with the lists


@dataclass
class RetrievalResult:
    question: str
    query: str                       # the text searched (standalone query)
    mode: str                        # mode actually used
    entries: list                    # fusion.EntryResult, best first (expansions marked)
    chunks: dict                     # chunk id -> dict(kb_id, section_key, heading_path, text, position)
    entry_info: dict                 # kb_id -> dict(id, title, stand, topic, source, cross_refs, legal_bases)
    plan: object = None              # fulltext.QueryPlan
    degraded: str | None = None      # German notice when a signal was unavailable
    ollama_error: Exception | None = None
    evidence: dict = field(default_factory=dict)   # for lib.answer.gate
    timings: dict = field(default_factory=dict)

    @property
    def entry_ids(self):
        return [e.entry_id for e in self.entries]


class PvKbRetriever(models.AbstractModel):
    _name = "pv.kb.retriever"
    _description = "Knowledge base retrieval"

    # --- the question's full-text query ---------------------------------------
    @api.model
    def _prune_query(self, tsquery):
        """Drop OR atoms that match a large share of the chunks (see lib.fulltext.prune_tsquery).

        Returns (query, broad): ``broad`` when even the rarest words of the question occur in so
        many chunks that ranking them all would be slow and tell little.
        """
        atoms = fulltext.tsquery_atoms(tsquery)
        if not atoms:
            return tsquery, False
        total, df, lexemes = self.env["pv.kb.chunk"]._lexeme_df()
        words = sorted({w for atom in atoms for w, _prefix in fulltext.atom_words(atom)})
        stems = self._stems(words)

        def ratio(word, prefix):
            stem = stems.get(word)
            if not stem:
                return 1.0   # a stopword: to_tsquery drops it anyway
            if not prefix:
                return df.get(stem, 0) / total
            start = bisect.bisect_left(lexemes, stem)
            count = 0
            for lexeme in lexemes[start:]:
                if not lexeme.startswith(stem):
                    break
                count += df[lexeme]   # an upper bound of the rows the prefix matches: safe for the budget
            return min(count / total, 1.0)

        pruned = fulltext.prune_tsquery(tsquery, ratio, max_ratio=MAX_DF_RATIO, budget=FTS_ROW_BUDGET / total)
        rows = total * sum(min((ratio(w, p) for w, p in fulltext.atom_words(a)), default=0.0)
                           for a in fulltext.tsquery_atoms(pruned))
        return pruned, rows > BROAD_ROWS

    @api.model
    def _stems(self, words):
        """{word: PostgreSQL's german_stem of it (None: a stopword)}; remembered per process, since the
        snowball dictionary is part of the server, not of the data (one round trip less per question)."""
        missing = [w for w in words if w not in _STEMS]
        if missing:
            self.env.cr.execute("SELECT w, ts_lexize('german_stem', w) FROM unnest(%s::text[]) w", [missing])
            if len(_STEMS) > _STEMS_MAX:
                _STEMS.clear()
            _STEMS.update((w, stem[0] if stem else None) for w, stem in self.env.cr.fetchall())
        return {w: _STEMS.get(w) for w in words}

    # --- the candidate lists ----------------------------------------------------
    @api.model
    def _filter_sql(self, filters):
        filters = filters or {}
        parts = [SQL("e.active")]
        if filters.get("topics"):
            parts.append(SQL("e.topic = ANY(%s)", list(filters["topics"])))
        if filters.get("source_kinds"):
            parts.append(SQL("e.source_kind = ANY(%s)", list(filters["source_kinds"])))
        if filters.get("stand_from"):
            parts.append(SQL("e.stand_date >= %s", filters["stand_from"]))
        if filters.get("stand_to"):
            parts.append(SQL("e.stand_date <= %s", filters["stand_to"]))
        if filters.get("kb_ids") is not None:     # the fast path of a value question: these entries only
            parts.append(SQL("e.kb_id = ANY(%s)", list(filters["kb_ids"])))
        return SQL(" AND ").join(parts)

    @api.model
    def _dense_hits(self, vector, filters=None, limit=CANDIDATES, model=None, cards=False, table=None):
        """Nearest sections (``cards``: entry cards) of ``vector``; see :meth:`_dense_lists`."""
        sections, card_hits = self._dense_lists(vector, filters, 0 if cards else limit, limit if cards else 0,
                                                model=model, table=table)
        return card_hits if cards else sections

    @api.model
    def _dense_lists(self, vector, filters=None, limit=CANDIDATES, card_limit=0, model=None, table=None, light=None):
        """(sections, cards): the ``limit`` nearest sections and the ``card_limit`` nearest entry cards, in one
        statement (the two ranked queries joined by UNION ALL: one round trip, one vector literal).

        Each ORDER BY distance runs on the chunk table alone, so that the HNSW index serves it (the cards
        have their own partial index); entry filters go into a semi-join that pgvector's iterative scan
        keeps filling (pgvector >= 0.8). Only vectors of the current model are comparable with the query's.
        Above 2,000 dimensions the index is on halfvec (lib.kb.embed_job), and the query orders by the same
        expression. ``table``: a scratch table of this session (an evaluation with another embedding model).
        ``light``: a dict that receives :meth:`_entry_light` of the entries found (read in the same statement).
        """
        if table:
            return (self._scratch_hits(vector, filters, limit, table) if limit else [],
                    self._scratch_hits(vector, filters, card_limit, table, cards=True) if card_limit else [])
        literal = Vector(vector).to_text()
        if embed_job.index_kind(len(vector)) == "halfvec":
            distance = SQL("c.embedding::halfvec(%s) <=> %s::halfvec(%s)", len(vector), literal, len(vector))
        else:
            distance = SQL("c.embedding <=> %s::vector", literal)
        branches = []
        for is_card, count in ((False, limit), (True, card_limit)):
            if not count:
                continue
            where = SQL("c.entry_active AND c.embedding IS NOT NULL AND c.section_key %s %s",
                        SQL("=") if is_card else SQL("<>"), entry_card.CARD_KEY)
            if model:
                where = SQL("%s AND c.embedding_model = %s", where, model)
            if filters:
                where = SQL("%s AND c.entry_id IN (SELECT e.id FROM pv_kb_entry e WHERE %s)", where,
                            self._filter_sql(filters))
            branches.append(SQL("""(SELECT %s AS card, c.id, c.kb_id, c.section_key, %s AS distance, c.entry_id
                                      FROM pv_kb_chunk c WHERE %s ORDER BY %s LIMIT %s)""",
                                is_card, distance, where, distance, count))
        if not branches:
            return [], []
        # both settings in one round trip (SET takes no bind parameters: the number is formatted as an int)
        self.env.cr.execute("SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = %d"
                            % int(max(limit, card_limit, EF_SEARCH)))
        # the entries' Stand and cross references come along (fusion reads them): one round trip less
        self.env.cr.execute(SQL("""SELECT u.card, u.id, u.kb_id, u.section_key, u.distance, e.stand_date, e.cross_refs
                                     FROM (%s) u JOIN pv_kb_entry e ON e.id = u.entry_id""",
                                SQL(" UNION ALL ").join(branches)))
        rows = sorted(self.env.cr.fetchall(), key=lambda r: (r[4], r[1]))
        if light is not None:
            light.update((kb_id, (date, _refs(refs))) for _card, _cid, kb_id, _key, _dist, date, refs in rows)
        return tuple(fusion.ranked((cid, kb_id, key, 1.0 - dist) for card, cid, kb_id, key, dist, _date, _refs_ in rows
                                   if card is wanted) for wanted in (False, True))

    @api.model
    def _scratch_hits(self, vector, filters, limit, table, cards=False):
        """Exact search in a scratch table (pv.kb.chunk._scratch_vectors) joined to the chunks."""
        where = SQL("c.entry_active AND c.section_key %s %s", SQL("=") if cards else SQL("<>"), entry_card.CARD_KEY)
        if filters:
            where = SQL("%s AND c.entry_id IN (SELECT e.id FROM pv_kb_entry e WHERE %s)", where,
                        self._filter_sql(filters))
        literal = Vector(vector).to_text()
        self.env.cr.execute(SQL("""
            SELECT c.id, c.kb_id, c.section_key, v.embedding <=> %s::vector AS distance
              FROM %s v JOIN pv_kb_chunk c ON c.id = v.chunk_id
             WHERE %s
             ORDER BY distance, c.id
             LIMIT %s""", literal, SQL.identifier(table), where, limit))
        return fusion.ranked((cid, kb_id, key, 1.0 - dist) for cid, kb_id, key, dist in self.env.cr.fetchall())

    @api.model
    def _fts_hits(self, tsquery, filters=None, limit=CANDIDATES, within=None, rank=None, light=None):
        """Full-text candidates; ``within`` (chunk ids) limits the ranking to those chunks.

        ``rank``: (field weights, normalisation) of ``ts_rank`` instead of lib/search/ranking.py's (the tuning bench
        compares them); ``light``: see :meth:`_dense_lists`."""
        weights, normalization = rank or (FTS_RANK_WEIGHTS, FTS_RANK_NORMALIZATION)
        if not tsquery:
            return []
        where = self._filter_sql(filters)
        if within is not None:
            where = SQL("%s AND c.id = ANY(%s)", where, list(within))
        # ts_rank with the field weights and the length normalisation of lib/search/ranking.py
        self.env.cr.execute(SQL("""
            SELECT c.id, e.kb_id, c.section_key, ts_rank(%s::float4[], c.search_tsv, q, %s) AS rank,
                   e.stand_date, e.cross_refs
              FROM pv_kb_chunk c JOIN pv_kb_entry e ON e.id = c.entry_id, to_tsquery('german', %s) q
             WHERE c.search_tsv @@ q AND %s
             ORDER BY rank DESC, c.id
             LIMIT %s""", list(weights), normalization, tsquery, where, limit))
        rows = self.env.cr.fetchall()
        if light is not None:
            light.update((kb_id, (date, _refs(refs))) for _cid, kb_id, _key, _rank, date, refs in rows)
        return fusion.ranked(row[:4] for row in rows)

    @api.model
    def _query_vector(self, text, settings, client=None, gated=None):
        # the query embedding is a model request with user text: only what the personal-data gate passed
        if gated is None:
            gated = self.env["pv.kb.settings"]._pii_gate(text)
            text = gated.question
        own = client is None
        # a query embedding is one short text: never wait as long as for a batch
        client = client or self.env["pv.kb.settings"]._client(dict(settings, read_timeout=min(
            settings["read_timeout"], QUERY_EMBED_TIMEOUT)), interactive=True)
        try:
            return client.embed(settings["embedding_model"], [settings["query_prefix"] + text], origin=gated).vectors[0]
        finally:
            if own:
                client.close()

    @api.model
    def _candidates(self, query, mode, filters, settings, client=None, gated=None, cards=None, fts_rank=None):
        """The candidate lists of each signal (before fusion), with the query plan and notices.

        ``cards``: fetch the entry-card list in hybrid mode (default: when :data:`RECIPE` uses it);
        ``fts_rank``: see :meth:`_fts_hits`."""
        cards = bool(dict(RECIPE.weights).get("card")) if cards is None else cards
        started = time.perf_counter()
        Chunk = self.env["pv.kb.chunk"]
        cand = Candidates(lists={}, plan=fulltext.build_query(query, Chunk._lexicon(), Chunk._synonyms()), used=mode)
        # a question without a telling word ("broad"): the text signal re-ranks the semantic candidates instead
        # of ranking a large part of the base, so the one dense query fetches that many
        tsquery, broad = self._prune_query(cand.plan.tsquery) if mode in ("hybrid", "fts") else ("", False)
        cand.timings["plan_ms"] = (time.perf_counter() - started) * 1000
        rerank_pool = []
        if mode in ("hybrid", "dense"):
            t0 = time.perf_counter()
            try:
                vector = self._query_vector(query, settings, client, gated)
                cand.timings["embed_ms"] = (time.perf_counter() - t0) * 1000
                t0 = time.perf_counter()
                if len(vector) != (settings.get("vector_dim") or Chunk._embedding_dim()):
                    # the model was switched and the cron has not rebuilt the column yet
                    cand.degraded = self.env._("The embeddings are being recomputed for the model %(model)s: "
                                               "results come from full-text search only.",
                                               model=settings["embedding_model"])
                    cand.used = "fts"
                else:
                    limit = BROAD_RERANK if broad and mode == "hybrid" else CANDIDATES
                    hits, card_hits = self._dense_lists(
                        vector, filters, limit=limit, card_limit=CARD_CANDIDATES if mode == "hybrid" and cards else 0,
                        model=settings["embedding_model"], table=settings.get("vector_table"), light=cand.light)
                    cand.lists["dense"] = hits[:CANDIDATES]
                    if mode == "hybrid" and cards:
                        cand.lists["card"] = card_hits
                    rerank_pool = [h.chunk_id for h in hits] if broad and mode == "hybrid" else []
                cand.timings["dense_ms"] = (time.perf_counter() - t0) * 1000
            except ollama_errors.OllamaError as exc:
                cand.error = exc
                cand.timings["embed_ms"] = (time.perf_counter() - t0) * 1000
                _logger.info("pv_kb: dense retrieval unavailable, full text only: %s", exc)
                cand.degraded = self.env._("Semantic search unavailable (%(reason)s): results come from "
                                           "full-text search only.", reason=exc.message)
                cand.used = "fts"
        if mode in ("hybrid", "fts") or cand.used == "fts":
            t0 = time.perf_counter()
            if mode == "dense":   # fell back to full text
                tsquery, broad = self._prune_query(cand.plan.tsquery)
            cand.lists["fts"] = self._fts_hits(tsquery, filters, within=rerank_pool or None, rank=fts_rank,
                                               light=cand.light)
            cand.timings["fts_ms"] = (time.perf_counter() - t0) * 1000
        return cand

    @api.model
    def _retrieve(self, question, *, mode="hybrid", k=None, filters=None, query=None, settings=None, client=None,
                  expand=True, gated=None):
        """Best entries for ``question`` (``query`` = text to search if it differs, e.g. a follow-up).

        ``gated``: the request's ``pii.Gated`` (the agent's); without it the question passes the
        personal-data gate here. Either way only the masked texts are searched and embedded.
        """
        if mode not in MODES:
            raise ValueError(f"unknown retrieval mode {mode!r}")
        settings = settings or self.env["pv.kb.settings"]._get()
        k = k or settings["top_k"]
        if gated is None:
            gated = self.env["pv.kb.settings"]._pii_gate(question, query=query)
        question, query = gated.question, gated.query
        started = time.perf_counter()
        cand = self._candidates(query, mode, filters, settings, client, gated)
        timings, lists, plan = cand.timings, cand.lists, cand.plan
        t0 = time.perf_counter()
        # fusion needs the Stand of every candidate entry; the full facts (legal bases, …) only the few kept,
        # read in one query with the entries their cross references name (the active ones may be added)
        light = dict(cand.light)
        missing = {h.entry_id for hits in lists.values() for h in hits} - set(light)
        if missing:   # a scratch table (evaluation) does not read them along
            light.update(self._entry_light(missing))
        entries = fusion.rank_entries(lists, dataclasses.replace(RECIPE, k=settings["rrf_k"]),
                                      value_question=plan.is_value_question, top_n=k,
                                      stand_dates={i: date for i, (date, _refs) in light.items()})
        cross = {e.entry_id: light[e.entry_id][1] for e in entries if e.entry_id in light} if expand else {}
        info = self._entry_info({e.entry_id for e in entries} | {r for refs in cross.values() for r in refs},
                                active=True)
        if expand and entries:
            entries = fusion.expand_cross_refs(entries, cross, known=set(info))
        kept = {e.entry_id for e in entries}
        info = {i: v for i, v in info.items() if i in kept}
        chunks = self._chunk_rows([cid for e in entries for cid in e.chunk_ids])
        timings["fuse_ms"] = (time.perf_counter() - t0) * 1000
        timings["retrieve_ms"] = (time.perf_counter() - started) * 1000 - timings.get("embed_ms", 0.0)
        evidence = {
            "fts_hits": len(lists.get("fts", [])),
            "dense_best": lists["dense"][0].score if lists.get("dense") else None,
            "has_terms": bool(plan.tsquery),
            "topics": list(dict.fromkeys(info[e.entry_id]["topic"] for e in entries if e.entry_id in info)),
        }
        return RetrievalResult(question=question, query=query, mode=cand.used, entries=entries, chunks=chunks,
                               entry_info=info, plan=plan, degraded=cand.degraded, ollama_error=cand.error,
                               evidence=evidence, timings=timings)

    @api.model
    def _retrieve_among(self, question, kb_ids, *, also=None, filters=None, gated=None):
        """Full-text retrieval among the entries ``kb_ids`` only: those with a section that matches the question,
        best first — the fast path of a value question (models/pv_kb_agent.py), where the facts of the base
        have named the entries. ``also(found ids)`` names entries added after them without a search (the other
        side of a contradiction); ``filters`` hold for both. No query embedding: the mode is "fts"."""
        if gated is None:
            gated = self.env["pv.kb.settings"]._pii_gate(question)
        started = time.perf_counter()
        Chunk = self.env["pv.kb.chunk"]
        plan = fulltext.build_query(gated.query, Chunk._lexicon(), Chunk._synonyms())
        tsquery, _broad = self._prune_query(plan.tsquery)
        timings = {"plan_ms": (time.perf_counter() - started) * 1000}
        t0 = time.perf_counter()
        light = {}
        hits = self._fts_hits(tsquery, dict(filters or {}, kb_ids=kb_ids), light=light,
                              limit=max(CANDIDATES, FTS_PER_ENTRY * len(kb_ids))) if kb_ids else []
        timings["fts_ms"] = (time.perf_counter() - t0) * 1000
        # the entries as the fusion ranks the full-text list alone (sections summed, Kernwerte preferred)
        entries = fusion.fuse({"fts": hits}, weights={"fts": 1.0}, method=RECIPE.method, k=RECIPE.k,
                              chunk_decay=RECIPE.chunk_decay, kernwerte_boost=RECIPE.kernwerte_boost,
                              prefer_kernwerte=plan.is_value_question, top_n=None,
                              stand_dates={i: date for i, (date, _refs) in light.items()})
        found = [e.entry_id for e in entries]
        extra = [i for i in dict.fromkeys(also(found) if also and found else []) if i not in found]
        if extra and filters:
            self.env.cr.execute(SQL("SELECT e.kb_id FROM pv_kb_entry e WHERE e.kb_id = ANY(%s) AND %s", extra,
                                    self._filter_sql(filters)))
            allowed = {row[0] for row in self.env.cr.fetchall()}
            extra = [i for i in extra if i in allowed]
        info = self._entry_info(found + extra, active=True)
        entries += [fusion.EntryResult(i, 0.0, [], "", {"facts": n}) for n, i in enumerate(extra, 1)]
        entries = [e for e in entries if e.entry_id in info]
        timings["retrieve_ms"] = (time.perf_counter() - started) * 1000
        evidence = {"fts_hits": len(hits), "dense_best": None, "has_terms": bool(plan.tsquery),
                    "topics": list(dict.fromkeys(info[e.entry_id]["topic"] for e in entries))}
        # no sections are read: the facts answer, no context is built
        return RetrievalResult(question=gated.question, query=gated.query, mode="fts", entries=entries, chunks={},
                               entry_info=info, plan=plan, evidence=evidence, timings=timings)

    @api.model
    def _entry_light(self, kb_ids):
        """{kb_id: (stand_date, cross_refs)} of the given entries: what fusion and expansion read."""
        if not kb_ids:
            return {}
        self.env.cr.execute("SELECT kb_id, stand_date, cross_refs FROM pv_kb_entry WHERE kb_id = ANY(%s)",
                            [list(kb_ids)])
        return {kb_id: (date, _refs(refs)) for kb_id, date, refs in self.env.cr.fetchall()}

    @api.model
    def _entry_info(self, kb_ids, active=False):
        """{kb_id: facts} of the given entries (``active``: of the active ones only)."""
        if not kb_ids:
            return {}
        self.env.cr.execute(SQL("""
            SELECT e.kb_id, e.id, e.name, e.stand, e.stand_date, e.topic, e.source, e.cross_refs,
                   (SELECT array_agg(b.name ORDER BY b.name) FROM pv_kb_entry_legal_basis_rel r
                      JOIN pv_kb_legal_basis b ON b.id = r.basis_id WHERE r.entry_id = e.id)
              FROM pv_kb_entry e WHERE e.kb_id = ANY(%s) AND (e.active OR NOT %s)""", list(kb_ids), active))
        return {
            kb_id: {"id": db_id, "title": name, "stand": stand, "stand_date": stand_date, "topic": topic,
                    "source": source, "cross_refs": _refs(refs),
                    "legal_bases": bases or []}
            for kb_id, db_id, name, stand, stand_date, topic, source, refs, bases in self.env.cr.fetchall()
        }

    @api.model
    def _chunk_rows(self, chunk_ids=None, *, kb_ids=None, section_keys=None):
        """{chunk id: row} of the given chunks, or of all chunks of the given entries (optionally only some
        sections: expansions, Kernwerte for conflict checks)."""
        if not chunk_ids and not kb_ids:
            return {}
        where = SQL("c.id = ANY(%s)", list(chunk_ids)) if chunk_ids else SQL("e.kb_id = ANY(%s)", list(kb_ids))
        where = SQL("%s AND c.section_key <> %s", where, entry_card.CARD_KEY)   # cards are never shown
        if section_keys:
            where = SQL("%s AND c.section_key = ANY(%s)", where, list(section_keys))
        self.env.cr.execute(SQL("""
            SELECT c.id, e.kb_id, c.section_key, c.heading_path, c.text, c.position
              FROM pv_kb_chunk c JOIN pv_kb_entry e ON e.id = c.entry_id
             WHERE %s ORDER BY e.kb_id, c.position""", where))
        return {cid: {"kb_id": kb_id, "section_key": key, "heading_path": heading, "text": text, "position": pos}
                for cid, kb_id, key, heading, text, pos in self.env.cr.fetchall()}
