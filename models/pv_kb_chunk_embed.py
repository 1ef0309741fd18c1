"""The embedding job of pv.kb.chunk: the typed vector column, its HNSW index and the scheduled action.

Production rules (see lib/kb/embed_job.py for the pure parts):
- the job stops before a batch that would not end within Odoo's real-time limit and within the cron's
  time slice (``_commit_progress``); Odoo runs it again, so a long first embedding never triggers a
  server reload;
- a batch the server rejects is split until the failing sections are isolated; those are marked with
  their error and skipped (until the model or their text changes), the rest goes on;
- the column is retyped in a short transaction of its own (``lock_timeout``), committed before any
  request to the model server, so answers are never stalled behind a network call;
- one embedding run at a time (a PostgreSQL advisory lock): the command line and the cron never embed
  at once;
- models above 2,000 dimensions get their index on ``halfvec``; above 4,000 the job refuses with a message.
"""
import logging
import threading
import time

import psycopg2
from pgvector import Vector

from odoo import api, fields, models
from odoo.addons.base.models.ir_cron import MIN_TIME_PER_JOB
from odoo.tools import SQL, config

from ..lib.kb import chunking, embed_job
from ..lib.llm import client as ollama, errors as ollama_errors

_logger = logging.getLogger(__name__)

DEFAULT_EMBEDDING_DIM = 1024   # bge-m3; changed when another embedding model is configured
EMBED_LOCK_KEY = 0x70766B62    # "pvkb": advisory lock of the embedding job
DDL_LOCK_TIMEOUT = "3s"
PROBLEM_PARAM = "pv_kb.embedding_problem"
SCRATCH_TABLE = "pv_kb_scratch_embedding"   # temporary, per database session (evaluations)


class EmbeddingBusy(Exception):
    """Another embedding run holds the lock."""


class PvKbChunkEmbed(models.Model):
    _inherit = "pv.kb.chunk"

    embedding_error = fields.Char(readonly=True, help="Why the model server rejected this section (it is "
                                  "skipped until the model or its text changes).")
    embedding_error_key = fields.Char(readonly=True, help="Model and signature the error belongs to.")
    embedding_cut = fields.Boolean(readonly=True, help="The section reached the embedding model's context and "
                                   "was embedded cut short.")

    # --- the vector column ------------------------------------------------------
    def _init_embedding_column(self):
        cr = self.env.cr
        if self._embedding_dim() is None:
            cr.execute(SQL("ALTER TABLE pv_kb_chunk ADD COLUMN IF NOT EXISTS embedding vector(%s)",
                           DEFAULT_EMBEDDING_DIM))
        dim = self._embedding_dim()
        self._set_embedding_storage(dim)
        self._drop_outdated_indexes()
        self._create_embedding_index(dim)   # IF NOT EXISTS: adds the card index to databases made before it

    def _drop_outdated_indexes(self):
        """Drop an HNSW index built with other options than lib/embed_job's (``m``, ``ef_construction``), so
        that :meth:`_create_embedding_index` builds it anew: once, at the module update that changed them (at
        ~150,000 sections that build takes minutes)."""
        self.env.cr.execute("""
            SELECT c.relname, c.reloptions FROM pg_class c
             WHERE c.relname IN ('pv_kb_chunk_embedding_hnsw_idx', 'pv_kb_chunk_card_hnsw_idx')""")
        for name, options in self.env.cr.fetchall():
            if ",".join(sorted(options or [])) != embed_job.hnsw_options():
                _logger.info("pv_kb: HNSW index %s rebuilt with %s (was %s)", name, embed_job.hnsw_options(), options)
                self.env.cr.execute(SQL("DROP INDEX IF EXISTS %s", SQL.identifier(name)))

    def _set_embedding_storage(self, dim):
        """Vectors inline in the heap row (pgvector's advice): no TOAST round trip per row, and the planner sees
        their real size when it weighs the HNSW index against a sequential scan. A row holds at most 8 kB:
        above 2,000 dimensions the vectors go to TOAST (EXTERNAL, uncompressed)."""
        storage = "PLAIN" if embed_job.index_kind(dim) == "vector" else "EXTERNAL"
        self.env.cr.execute(f"ALTER TABLE pv_kb_chunk ALTER COLUMN embedding SET STORAGE {storage}")

    def _create_embedding_index(self, dim):
        """HNSW with lib/embed_job's ``m`` and ``ef_construction``, cosine distance for ``<=>``; on ``halfvec``
        (an expression index) above 2,000 dimensions. The entry cards get a partial index of their own: the
        card query then searches only cards, and the section query (which excludes them) loses nothing by a
        filter."""
        kind = embed_job.index_kind(dim)
        if kind == "vector":
            column = SQL("embedding vector_cosine_ops")
        elif kind == "halfvec":
            column = SQL("(embedding::halfvec(%s)) halfvec_cosine_ops", dim)
        else:
            return
        m, ef = embed_job.HNSW_M, embed_job.HNSW_EF_CONSTRUCTION
        self.env.cr.execute(SQL("""
            CREATE INDEX IF NOT EXISTS pv_kb_chunk_embedding_hnsw_idx ON pv_kb_chunk
             USING hnsw (%s) WITH (m = %s, ef_construction = %s);
            CREATE INDEX IF NOT EXISTS pv_kb_chunk_card_hnsw_idx ON pv_kb_chunk
             USING hnsw (%s) WITH (m = %s, ef_construction = %s) WHERE section_key = 'card'""",
                                column, m, ef, column, m, ef))

    @api.model
    def _embedding_dim(self):
        """Dimension of the typed embedding column."""
        self.env.cr.execute("""
            SELECT a.atttypmod FROM pg_attribute a
             WHERE a.attrelid = 'pv_kb_chunk'::regclass AND a.attname = 'embedding' AND NOT a.attisdropped
        """)
        row = self.env.cr.fetchone()
        return row[0] if row and row[0] > 0 else None

    @api.model
    def _unsupported_dim_message(self, model, dim):
        return self.env._("The embedding model %(model)s returns %(dim)s dimensions; pgvector can index at most "
                          "%(max)s (halfvec). Please choose another embedding model.",
                          model=model, dim=dim, max=embed_job.HNSW_MAX_HALFVEC_DIM)

    @api.model
    def _ensure_embedding_dim(self, dim, commit=False):
        """Retype the embedding column when the model's dimension differs; embeddings are then recomputed.

        Runs in a short transaction of its own with a ``lock_timeout`` (an answer reading the table makes
        it wait at most that long, and then the next run tries again), committed at once when ``commit``.
        Returns True when the column was retyped; raises psycopg2 LockNotAvailable on a lock timeout."""
        current = self._embedding_dim()
        if current == dim:
            return False
        _logger.info("pv_kb: embedding column vector(%s) -> vector(%s), all chunks will be re-embedded", current, dim)
        with self.env.cr.savepoint():
            self.env.cr.execute(SQL("SET LOCAL lock_timeout = %s", DDL_LOCK_TIMEOUT))
            self.env.cr.execute(SQL("""
                DROP INDEX IF EXISTS pv_kb_chunk_embedding_hnsw_idx;
                DROP INDEX IF EXISTS pv_kb_chunk_card_hnsw_idx;
                ALTER TABLE pv_kb_chunk DROP COLUMN IF EXISTS embedding;
                ALTER TABLE pv_kb_chunk ADD COLUMN embedding vector(%s);
                UPDATE pv_kb_chunk SET embedding_model = NULL, embedded_hash = NULL, embedding_error = NULL,
                       embedding_error_key = NULL;
            """, dim))
            self._set_embedding_storage(dim)
            self._create_embedding_index(dim)
        if commit:
            self.env.cr.commit()
        self.invalidate_model(["embedding_model", "embedded_hash", "embedding_error", "embedding_error_key"])
        return True

    # --- what is pending ---------------------------------------------------------
    @api.model
    def _embed_signature_sql(self, prefix):
        """SQL for a chunk's embedding signature (chunk ``c``, entry ``e``): a hash over everything the text
        sent to the model is made of (see :func:`chunking.embed_text`), so a changed title or passage
        prefix makes the chunk pending just as changed content does."""
        return SQL("""encode(sha256(convert_to(concat_ws(chr(31), %s, %s, e.kb_id, coalesce(e.name, ''),
                                                      coalesce(c.content_hash, '')), 'UTF8')), 'hex')""",
                   chunking.EMBED_FORMAT, prefix or "")

    @api.model
    def _error_key_sql(self, model, prefix):
        return SQL("(%s || '|' || %s)", model, self._embed_signature_sql(prefix))

    @api.model
    def _flush_embedding_inputs(self):
        """Write pending ORM changes the SQL below reads: chunks, and the entries' id, title and state."""
        self.flush_model()
        self.env["pv.kb.entry"].flush_model(["kb_id", "name", "active"])

    @api.model
    def _pending_domain_sql(self, model, prefix):
        """Chunks to embed: never embedded, or with another model or signature, and not failed for exactly
        this model and signature (a failed section is retried once either changes)."""
        return SQL("""
            FROM pv_kb_chunk c JOIN pv_kb_entry e ON e.id = c.entry_id
           WHERE e.active AND (c.embedding IS NULL OR c.embedding_model IS DISTINCT FROM %(model)s
                               OR c.embedded_hash IS DISTINCT FROM %(signature)s)
             AND c.embedding_error_key IS DISTINCT FROM %(error_key)s
        """, model=model, signature=self._embed_signature_sql(prefix), error_key=self._error_key_sql(model, prefix))

    @api.model
    def _embedding_status(self, model=None, prefix=None):
        settings = self.env["pv.kb.settings"]._get()
        model = model or settings["embedding_model"]
        prefix = settings["passage_prefix"] if prefix is None else prefix
        self._flush_embedding_inputs()
        self.env.cr.execute(SQL("SELECT count(*) %s", self._pending_domain_sql(model, prefix)))
        pending = self.env.cr.fetchone()[0]
        self.env.cr.execute(SQL("""
            SELECT count(*), count(*) FILTER (WHERE c.embedding_error_key = %s)
              FROM pv_kb_chunk c JOIN pv_kb_entry e ON e.id = c.entry_id WHERE e.active""",
                                self._error_key_sql(model, prefix)))
        total, failed = self.env.cr.fetchone()
        problem = self.env["ir.config_parameter"].sudo().get_param(PROBLEM_PARAM) or ""
        return {"model": model, "pending": pending, "total": total, "failed": failed, "dim": self._embedding_dim(),
                "problem": problem}

    # --- the job -----------------------------------------------------------------------
    @api.model
    def _run_deadline(self):
        """``time.monotonic()`` by which this cron run must end (None outside a cron or without limits)."""
        limit = config.get("limit_time_real_cron")
        if not limit or limit <= 0:
            limit = config.get("limit_time_real")
        slice_end = self.env.context.get("cron_end_time")
        return embed_job.run_deadline(
            time.monotonic(), time.time(), limit_real=limit,
            thread_started_wall=getattr(threading.current_thread(), "start_time", None),
            job_started_monotonic=(slice_end - MIN_TIME_PER_JOB) if slice_end else None)

    @api.model
    def _set_problem(self, text):
        params = self.env["ir.config_parameter"].sudo()
        if (params.get_param(PROBLEM_PARAM) or "") != (text or ""):
            params.set_param(PROBLEM_PARAM, text or False)

    @api.model
    def _embed_pending(self, client=None, settings=None, max_batches=None, commit=False, progress=None,
                       deadline=None):
        """Embed every chunk whose text or model differs from what was embedded.

        One Ollama request per batch (split only when the server rejects it), each batch written in its
        own savepoint and committed when ``commit``, so an outage or a crash loses at most the batch in
        flight and the next run resumes where this one stopped. ``deadline`` (``time.monotonic()``;
        default in a cron: from Odoo's limits) ends the run before a batch that would not fit.
        Returns {"done", "remaining", "batches", "failed", "truncated", "context", "stopped"}.
        Raises EmbeddingBusy when another run holds the lock.
        """
        settings = settings or self.env["pv.kb.settings"]._get()
        own_client = client is None
        client = client or self.env["pv.kb.settings"]._client(settings)
        model, size = settings["embedding_model"], max(1, settings["embed_batch_size"])
        prefix = settings["passage_prefix"] or ""
        budget = embed_job.TimeBudget(deadline if deadline is not None else (self._run_deadline() if commit else None))
        stats = {"done": 0, "batches": 0, "failed": 0, "cut": [], "stopped": None}
        window = None   # the model's context in tokens
        self.env.cr.execute("SELECT pg_try_advisory_lock(%s)", [EMBED_LOCK_KEY])
        if not self.env.cr.fetchone()[0]:
            if own_client:
                client.close()
            raise EmbeddingBusy()
        try:
            if self._cards_missing():   # a base imported before entry cards existed gets them now
                self._sync_cards()
            dim, window = client.embedding_facts(model)
            if embed_job.index_kind(dim) is None:
                message = self._unsupported_dim_message(model, dim)
                self._set_problem(message)
                raise ollama_errors.OllamaBadResponse(message, f"dimension {dim}", model=model)
            self._ensure_embedding_dim(dim, commit=commit)
            self._set_problem(False)
            # counted once: the progress of the cron needs no full count per batch
            pending = self._embedding_status(model, prefix)["pending"] if commit else 0
            while max_batches is None or stats["batches"] < max_batches:
                if not budget.allows(first=not stats["batches"]):
                    stats["stopped"] = "time"
                    break
                rows = self._pending_rows(model, prefix, size)
                if not rows:
                    break
                started = time.monotonic()
                self._embed_batch(client, model, prefix, window, rows, stats, budget)
                budget.record(time.monotonic() - started)
                stats["batches"] += 1
                if progress:
                    progress(stats["done"])
                if commit and stats["stopped"] != "time":
                    left = self.env["ir.cron"]._commit_progress(len(rows), remaining=max(0, pending - stats["done"]))
                    if left <= 0:
                        stats["stopped"] = "slice"
                        break
                elif commit:
                    self.env.cr.commit()   # what this batch found is kept; the time is up (reported below)
                if stats["stopped"] == "time":
                    break
            if commit and stats["stopped"] == "time":
                # work is left: Odoo reschedules a job with progress "partially done" at once
                self.env["ir.cron"]._commit_progress(0, remaining=max(1, pending - stats["done"]))
        finally:
            try:
                with self.env.cr.savepoint(flush=False):
                    self.env.cr.execute("SELECT pg_advisory_unlock(%s)", [EMBED_LOCK_KEY])
            except psycopg2.Error:
                # an aborted transaction: the lock ends with this database session at the latest
                _logger.warning("pv_kb: embedding lock not released", exc_info=True)
            if own_client:
                client.close()
            self.invalidate_model(["embedding_model", "embedded_hash", "embedding_error", "embedding_error_key"])
            if stats["cut"]:
                _logger.warning("pv_kb: %d sections reached the context of embedding model %s (%s tokens) and were "
                                "embedded cut short, e.g. %s", len(stats["cut"]), model, window,
                                "; ".join(stats["cut"][:5]))
        return {"done": stats["done"], "remaining": self._embedding_status(model, prefix)["pending"],
                "batches": stats["batches"], "failed": stats["failed"], "truncated": len(stats["cut"]),
                "context": window, "stopped": stats["stopped"]}

    @api.model
    def _pending_rows(self, model, prefix, size):
        self._flush_embedding_inputs()
        self.env.cr.execute(SQL("""
            SELECT c.id, c.heading_path, c.text, c.content_hash, e.name, e.kb_id, %s %s
             ORDER BY c.id LIMIT %s""", self._embed_signature_sql(prefix), self._pending_domain_sql(model, prefix),
                                size))
        return self.env.cr.fetchall()

    @staticmethod
    def _embed_input(row, prefix):
        _id, heading, text, content_hash, title, kb_id = row[:6]
        return prefix + chunking.embed_text(
            chunking.Chunk(section_key="", heading_path=heading or "", text=text or "", position=0,
                           token_estimate=0, content_hash=content_hash), title, kb_id)

    @api.model
    def _embed_batch(self, client, model, prefix, window, rows, stats, budget):
        """Embed one batch, isolating sections the server rejects; write vectors and errors. When the run's
        time is up meanwhile, what was found is written and the rest stays pending (``stats["stopped"]``)."""
        deadline = budget.hard_deadline()
        configured_retries = client.config.retries

        def call(part):
            # the whole batch may be retried (a passing server error); its halves are not: they only locate
            client.config.retries = configured_retries if len(part) == len(rows) else 0
            try:
                # passages of the knowledge base: no user text
                result = client.embed(model, [self._embed_input(r, prefix) for r in part], batch_size=len(part),
                                      context_tokens=window, deadline=deadline, origin=ollama.KB_TEXT)
            finally:
                client.config.retries = configured_retries
            cut = set(result.truncated)
            return [(vector, i in cut) for i, vector in enumerate(result.vectors)]

        out = embed_job.isolate_failures(
            rows, call, lambda exc: isinstance(exc, ollama_errors.OllamaBadResponse),
            probe=lambda: client.embed(model, [prefix + "Probe"], batch_size=1, deadline=deadline,
                                       origin=ollama.KB_TEXT),
            should_stop=lambda: not budget.allows(first=True),
            is_stop_error=lambda exc: deadline is not None and isinstance(exc, ollama_errors.OllamaTimeout)
            and budget.remaining() <= 0.5)
        if out.pending:
            stats["stopped"] = "time"
        with self.env.cr.savepoint():
            for row, (vector, was_cut) in out.done:
                self.env.cr.execute(
                    "UPDATE pv_kb_chunk SET embedding = %s::vector, embedding_model = %s, embedded_hash = %s,"
                    " embedding_error = NULL, embedding_error_key = NULL, embedding_cut = %s WHERE id = %s",
                    [Vector(vector).to_text(), model, row[6], bool(was_cut), row[0]])
                if was_cut:
                    stats["cut"].append(f"{row[5]} ({row[1] or ''})")
            for row, message in out.failed:
                self.env.cr.execute(
                    "UPDATE pv_kb_chunk SET embedding_error = %s, embedding_error_key = %s WHERE id = %s",
                    [message, f"{model}|{row[6]}", row[0]])
        if out.failed:
            _logger.warning("pv_kb: embedding model %s rejected %d sections, skipped until the model or the text "
                            "changes: %s", model, len(out.failed),
                            "; ".join(f"{row[5]} ({row[1] or ''}): {msg}" for row, msg in out.failed[:5]))
        stats["done"] += len(out.done)
        stats["failed"] += len(out.failed)

    # --- evaluation with another embedding model ---------------------------------------
    @api.model
    def _needs_scratch(self, settings):
        """Whether ``settings`` embed differently from the stored ones: their vectors must not touch the
        production column (another model, server or passage prefix)."""
        stored = self.env["pv.kb.settings"]._get()
        return any(settings[k] != stored[k] for k in ("ollama_url", "embedding_model", "passage_prefix"))

    @api.model
    def _scratch_vectors(self, settings, client=None, progress=None):
        """Embed every active section with ``settings`` into a temporary table of this database session
        (``SCRATCH_TABLE``; gone when the session ends) and return the settings that point the retriever
        at it. Production vectors, the column type and the stored model stay as they are."""
        own = client is None
        client = client or self.env["pv.kb.settings"]._client(settings)
        model, size = settings["embedding_model"], max(1, settings["embed_batch_size"])
        prefix = settings["passage_prefix"] or ""
        try:
            dim, window = client.embedding_facts(model)
            if embed_job.index_kind(dim) is None:
                raise ollama_errors.OllamaBadResponse(self._unsupported_dim_message(model, dim), f"dimension {dim}",
                                               model=model)
            self.env.cr.execute(SQL("DROP TABLE IF EXISTS %s", SQL.identifier(SCRATCH_TABLE)))
            self.env.cr.execute(SQL("CREATE TEMP TABLE %s (chunk_id integer PRIMARY KEY, embedding vector(%s))",
                                    SQL.identifier(SCRATCH_TABLE), dim))
            self._flush_embedding_inputs()
            self.env.cr.execute(SQL("""
                SELECT c.id, c.heading_path, c.text, c.content_hash, e.name, e.kb_id
                  FROM pv_kb_chunk c JOIN pv_kb_entry e ON e.id = c.entry_id WHERE e.active ORDER BY c.id"""))
            rows = self.env.cr.fetchall()
            for start in range(0, len(rows), size):
                part = rows[start:start + size]
                result = client.embed(model, [self._embed_input(r, prefix) for r in part], batch_size=size,
                                      context_tokens=window, origin=ollama.KB_TEXT)
                self.env.cr.execute(SQL("""
                    INSERT INTO %s (chunk_id, embedding)
                    SELECT id, v::vector FROM unnest(%s::int[], %s::text[]) AS u(id, v)""",
                                        SQL.identifier(SCRATCH_TABLE), [r[0] for r in part],
                                        [Vector(v).to_text() for v in result.vectors]))
                if progress:
                    progress(start + len(part))
        finally:
            if own:
                client.close()
        return dict(settings, vector_table=SCRATCH_TABLE, vector_dim=dim)

    @api.model
    def _cron_embed(self):
        try:
            result = self._embed_pending(commit=True)
            if result["stopped"] == "time":
                _logger.info("pv_kb: embedding paused before Odoo's time limit, %d sections left for the next run",
                             result["remaining"])
        except EmbeddingBusy:
            _logger.info("pv_kb: embedding skipped, another run is active")
        except psycopg2.errors.LockNotAvailable:
            self.env.cr.rollback()
            _logger.info("pv_kb: the embedding column is in use, retyping it on the next run")
        except ollama_errors.OllamaUnreachable as exc:
            # no server (yet): the product runs in full-text mode; the next run tries again
            _logger.info("pv_kb: embedding skipped, %s", exc)
        except ollama_errors.OllamaError as exc:
            # the chunks embedded so far are committed; the next run resumes
            _logger.warning("pv_kb: embedding paused: %s", exc)

    def action_embed_now(self):
        self.env["pv.kb.settings"]._check_manager()
        self.env.ref("pv_kb.ir_cron_pv_kb_embed")._trigger()
        status = self._embedding_status()
        return {
            "type": "ir.actions.client",
            "tag": "display_notification",
            "params": {
                "title": self.env._("Embedding started"),
                "message": self.env._("%(pending)s of %(total)s sections are being embedded in the background.",
                                      pending=status["pending"], total=status["total"]),
                "type": "info",
            },
        }
