import logging

from pgvector import Vector

from odoo import api, fields, models
from odoo.exceptions import UserError
from odoo.tools import SQL

from ..lib import chunking, entry_card, ollama

_logger = logging.getLogger(__name__)

SECTION_KEYS = [
    ("zusammenfassung", "Summary"),
    ("kernwerte", "Key values & deadlines"),
    ("rechtsgrundlagen", "Legal bases"),
    ("payroll", "Payroll relevance"),
    ("verweise", "References"),
    ("other", "Other"),
    (entry_card.CARD_KEY, "Entry card"),   # one per entry, ranks entries; never a passage (lib/entry_card.py)
]
DEFAULT_EMBEDDING_DIM = 1024   # bge-m3; changed when another embedding model is configured


class PvKbChunk(models.Model):
    """A section (or part of one) of an entry: the unit of retrieval.

    Besides the ORM fields the table carries two columns managed in SQL by
    this class: ``embedding vector(n)`` (pgvector, HNSW cosine index) and
    ``search_tsv tsvector`` (German full text, GIN index).
    """

    _name = "pv.kb.chunk"
    _description = "Knowledge base chunk"
    _order = "entry_id, position"

    entry_id = fields.Many2one("pv.kb.entry", required=True, ondelete="cascade", index=True, readonly=True)
    kb_id = fields.Char(related="entry_id.kb_id", store=True, index=True, string="Entry ID")
    entry_active = fields.Boolean(related="entry_id.active", store=True, index=True)
    section_key = fields.Selection(SECTION_KEYS, "Section", required=True, readonly=True)
    heading_path = fields.Char("Heading", readonly=True)
    text = fields.Text(readonly=True)
    position = fields.Integer(readonly=True)
    token_estimate = fields.Integer("Tokens (estimate)", readonly=True)
    content_hash = fields.Char(readonly=True, index=True)
    embedding_model = fields.Char(readonly=True, help="Model that computed the stored embedding.")
    embedded_hash = fields.Char(readonly=True, help="Signature of what was embedded: text format, passage "
                                "prefix, entry id and title, content hash.")
    has_embedding = fields.Boolean(compute="_compute_has_embedding")

    def init(self):
        cr = self.env.cr
        cr.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
        if not cr.fetchone():
            try:
                with cr.savepoint():
                    cr.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except Exception as exc:  # noqa: BLE001 - any failure means the same thing for the user
                raise UserError(
                    "Die PostgreSQL-Erweiterung 'vector' (pgvector) fehlt in dieser Datenbank und kann nicht angelegt "
                    "werden. Bitte als Superuser 'CREATE EXTENSION vector;' in der Datenbank (oder in template1) "
                    f"ausführen und das Modul erneut installieren. Technisch: {exc}") from exc
        cr.execute("""
            SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
             WHERE a.attrelid = 'pv_kb_chunk'::regclass AND a.attname = 'embedding' AND NOT a.attisdropped
        """)
        if not cr.fetchone():
            cr.execute(SQL("ALTER TABLE pv_kb_chunk ADD COLUMN embedding vector(%s)", DEFAULT_EMBEDDING_DIM))
            self._create_embedding_index()
        # vectors inline in the heap row (pgvector's advice): no TOAST round trip per row, and the planner
        # sees their real size when it weighs the HNSW index against a sequential scan
        cr.execute("ALTER TABLE pv_kb_chunk ALTER COLUMN embedding SET STORAGE PLAIN")
        self._create_embedding_index()   # IF NOT EXISTS: adds the card index to databases made before it
        cr.execute("""
            ALTER TABLE pv_kb_chunk ADD COLUMN IF NOT EXISTS search_tsv tsvector;
            CREATE INDEX IF NOT EXISTS pv_kb_chunk_search_tsv_idx ON pv_kb_chunk USING gin (search_tsv);
        """)

    def _create_embedding_index(self):
        # pgvector's HNSW defaults (m 16, ef_construction 64), cosine distance for `<=>`. The entry cards get a
        # partial index of their own: the card query then searches only cards, and the section query (which
        # excludes them) loses nothing by a filter.
        self.env.cr.execute("""
            CREATE INDEX IF NOT EXISTS pv_kb_chunk_embedding_hnsw_idx ON pv_kb_chunk
             USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
            CREATE INDEX IF NOT EXISTS pv_kb_chunk_card_hnsw_idx ON pv_kb_chunk
             USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)
             WHERE section_key = 'card'
        """)

    @api.model
    def _embedding_dim(self):
        """Dimension of the typed embedding column."""
        self.env.cr.execute("""
            SELECT a.atttypmod FROM pg_attribute a
             WHERE a.attrelid = 'pv_kb_chunk'::regclass AND a.attname = 'embedding' AND NOT a.attisdropped
        """)
        row = self.env.cr.fetchone()
        return row[0] if row and row[0] > 0 else None

    def _compute_has_embedding(self):
        if not self.ids:
            for chunk in self:
                chunk.has_embedding = False
            return
        self.env.cr.execute("SELECT id FROM pv_kb_chunk WHERE id = ANY(%s) AND embedding IS NOT NULL", [self.ids])
        done = {row[0] for row in self.env.cr.fetchall()}
        for chunk in self:
            chunk.has_embedding = chunk.id in done

    # --- entry cards ---------------------------------------------------------
    @api.model
    def _sync_cards(self, entry_ids=None):
        """Create or update the entry card (lib/entry_card.py) of the given entries (database ids; all active
        entries when None). A card whose text changed gets a new content hash, so the cron embeds it again.
        Returns the number of cards created or changed."""
        self.env.flush_all()
        table = self.env["pv.kb.retriever"]._synonyms()
        where = SQL("e.active")
        if entry_ids is not None:
            if not entry_ids:
                return 0
            where = SQL("%s AND e.id = ANY(%s)", where, list(entry_ids))
        self.env.cr.execute(SQL("""
            SELECT e.id, e.name, e.summary,
                   (SELECT array_agg(t.name ORDER BY t.name) FROM pv_kb_entry_tag_rel r
                      JOIN pv_kb_tag t ON t.id = r.tag_id WHERE r.entry_id = e.id),
                   (SELECT array_agg(b.name ORDER BY b.name) FROM pv_kb_entry_legal_basis_rel r
                      JOIN pv_kb_legal_basis b ON b.id = r.basis_id WHERE r.entry_id = e.id),
                   c.id, c.content_hash
              FROM pv_kb_entry e
              LEFT JOIN pv_kb_chunk c ON c.entry_id = e.id AND c.section_key = %s
             WHERE %s ORDER BY e.id""", entry_card.CARD_KEY, where))
        create, changed = [], 0
        for entry_id, title, summary, tags, bases, card_id, old_hash in self.env.cr.fetchall():
            text = entry_card.card_text(tags=tags or [], synonyms=entry_card.card_synonyms(table, title, tags or []),
                                        legal_bases=bases or [], summary=summary or "")
            vals = {"text": text, "content_hash": chunking.chunk_hash(entry_card.CARD_KEY, "", text),
                    "token_estimate": chunking.estimate_tokens(text)}
            if card_id is None:
                create.append(dict(vals, entry_id=entry_id, section_key=entry_card.CARD_KEY, heading_path="",
                                   position=entry_card.CARD_POSITION))
            elif vals["content_hash"] != old_hash:
                self.browse(card_id).write(vals)
                changed += 1
        if create:
            self.create(create)
        return len(create) + changed

    @api.model
    def _cards_missing(self):
        self.env.cr.execute("""
            SELECT 1 FROM pv_kb_entry e WHERE e.active AND NOT EXISTS (
                SELECT 1 FROM pv_kb_chunk c WHERE c.entry_id = e.id AND c.section_key = %s) LIMIT 1""",
                            [entry_card.CARD_KEY])
        return bool(self.env.cr.fetchone())

    # --- embeddings ----------------------------------------------------------
    @api.model
    def _embed_signature_sql(self, prefix):
        """SQL for a chunk's embedding signature (chunk ``c``, entry ``e``): a hash over everything the text
        sent to the model is made of (see :func:`chunking.embed_text`), so a changed title or passage
        prefix makes the chunk pending just as changed content does."""
        return SQL("""encode(sha256(convert_to(concat_ws(chr(31), %s, %s, e.kb_id, coalesce(e.name, ''),
                                                      coalesce(c.content_hash, '')), 'UTF8')), 'hex')""",
                   chunking.EMBED_FORMAT, prefix or "")

    @api.model
    def _flush_embedding_inputs(self):
        """Write pending ORM changes the SQL below reads: chunks, and the entries' id, title and state."""
        self.flush_model()
        self.env["pv.kb.entry"].flush_model(["kb_id", "name", "active"])

    @api.model
    def _pending_domain_sql(self, model, prefix):
        return SQL("""
            FROM pv_kb_chunk c JOIN pv_kb_entry e ON e.id = c.entry_id
           WHERE e.active AND (c.embedding IS NULL OR c.embedding_model IS DISTINCT FROM %(model)s
                               OR c.embedded_hash IS DISTINCT FROM %(signature)s)
        """, model=model, signature=self._embed_signature_sql(prefix))

    @api.model
    def _embedding_status(self, model=None, prefix=None):
        settings = self.env["pv.kb.settings"]._get()
        model = model or settings["embedding_model"]
        prefix = settings["passage_prefix"] if prefix is None else prefix
        self._flush_embedding_inputs()
        self.env.cr.execute(SQL("SELECT count(*) %s", self._pending_domain_sql(model, prefix)))
        pending = self.env.cr.fetchone()[0]
        self.env.cr.execute("SELECT count(*) FROM pv_kb_chunk c JOIN pv_kb_entry e ON e.id = c.entry_id WHERE e.active")
        return {"model": model, "pending": pending, "total": self.env.cr.fetchone()[0], "dim": self._embedding_dim()}

    @api.model
    def _ensure_embedding_dim(self, dim):
        """Retype the embedding column when the model's dimension differs; embeddings are then recomputed."""
        current = self._embedding_dim()
        if current == dim:
            return False
        _logger.info("pv_kb: embedding column vector(%s) -> vector(%s), all chunks will be re-embedded", current, dim)
        self.env.cr.execute(SQL("""
            DROP INDEX IF EXISTS pv_kb_chunk_embedding_hnsw_idx;
            DROP INDEX IF EXISTS pv_kb_chunk_card_hnsw_idx;
            ALTER TABLE pv_kb_chunk DROP COLUMN IF EXISTS embedding;
            ALTER TABLE pv_kb_chunk ADD COLUMN embedding vector(%s);
            ALTER TABLE pv_kb_chunk ALTER COLUMN embedding SET STORAGE PLAIN;
            UPDATE pv_kb_chunk SET embedding_model = NULL, embedded_hash = NULL;
        """, dim))
        self._create_embedding_index()
        self.invalidate_model(["embedding_model", "embedded_hash"])
        return True

    @api.model
    def _embed_pending(self, client=None, settings=None, max_batches=None, commit=False, progress=None):
        """Embed every chunk whose text or model differs from what was embedded.

        One Ollama request per batch, each batch written in its own savepoint
        (and committed when ``commit``), so an outage or a crash loses at most
        the batch in flight and the next run resumes where this one stopped.
        Returns {"done": n, "remaining": m, "batches": b}.
        """
        settings = settings or self.env["pv.kb.settings"]._get()
        own_client = client is None
        client = client or self.env["pv.kb.settings"]._client(settings)
        model, size = settings["embedding_model"], max(1, settings["embed_batch_size"])
        prefix = settings["passage_prefix"] or ""
        done = batches = 0
        cut: list[str] = []
        window = None   # the model's context in tokens
        try:
            if self._cards_missing():   # a base imported before entry cards existed gets them now
                self._sync_cards()
            dim, window = client.embedding_facts(model)
            self._ensure_embedding_dim(dim)
            # counted once: the progress of the cron needs no full count per batch
            pending = self._embedding_status(model, prefix)["pending"] if commit else 0
            while max_batches is None or batches < max_batches:
                self._flush_embedding_inputs()
                self.env.cr.execute(SQL("""
                    SELECT c.id, c.heading_path, c.text, c.content_hash, e.name, e.kb_id, %s %s
                     ORDER BY c.id LIMIT %s""", self._embed_signature_sql(prefix),
                                        self._pending_domain_sql(model, prefix), size))
                rows = self.env.cr.fetchall()
                if not rows:
                    break
                texts = [prefix + chunking.embed_text(
                    chunking.Chunk(section_key="", heading_path=heading or "", text=text or "", position=0,
                                   token_estimate=0, content_hash=h), title, kb_id)
                    for _id, heading, text, h, title, kb_id, _sig in rows]
                # passages of the knowledge base: no user text
                result = client.embed(model, texts, batch_size=size, context_tokens=window, origin=ollama.KB_TEXT)
                cut += [f"{rows[i][5]} ({rows[i][1] or ''})" for i in result.truncated]
                with self.env.cr.savepoint():
                    for (chunk_id, _h, _t, _c, _n, _k, signature), vector in zip(rows, result.vectors):
                        self.env.cr.execute(
                            "UPDATE pv_kb_chunk SET embedding = %s::vector, embedding_model = %s, embedded_hash = %s"
                            " WHERE id = %s", [Vector(vector).to_text(), model, signature, chunk_id])
                done += len(rows)
                batches += 1
                if progress:
                    progress(done)
                if commit:
                    self.env["ir.cron"]._commit_progress(len(rows), remaining=max(0, pending - done))
        finally:
            if own_client:
                client.close()
            self.invalidate_model(["embedding_model", "embedded_hash"])
            if cut:
                _logger.warning("pv_kb: %d sections reached the context of embedding model %s (%s tokens) and were "
                                "embedded cut short, e.g. %s", len(cut), model, window, "; ".join(cut[:5]))
        return {"done": done, "remaining": self._embedding_status(model, prefix)["pending"], "batches": batches,
                "truncated": len(cut), "context": window}

    @api.model
    def _cron_embed(self):
        try:
            self._embed_pending(commit=True)
        except ollama.OllamaUnreachable as exc:
            # no server (yet): the product runs in full-text mode; the next run tries again
            _logger.info("pv_kb: embedding skipped, %s", exc)
        except ollama.OllamaError as exc:
            # the chunks embedded so far are committed; the next run resumes
            _logger.warning("pv_kb: embedding paused: %s", exc)

    @api.model
    def action_embed_now(self):
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
