import logging

from odoo import api, fields, models
from odoo.exceptions import UserError
from odoo.tools import SQL

_logger = logging.getLogger(__name__)

SECTION_KEYS = [
    ("zusammenfassung", "Summary"),
    ("kernwerte", "Key values & deadlines"),
    ("rechtsgrundlagen", "Legal bases"),
    ("payroll", "Payroll relevance"),
    ("verweise", "References"),
    ("other", "Other"),
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
    embedded_hash = fields.Char(readonly=True, help="Content hash at the time of embedding.")
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
        cr.execute("""
            ALTER TABLE pv_kb_chunk ADD COLUMN IF NOT EXISTS search_tsv tsvector;
            CREATE INDEX IF NOT EXISTS pv_kb_chunk_search_tsv_idx ON pv_kb_chunk USING gin (search_tsv);
        """)

    def _create_embedding_index(self):
        # pgvector's HNSW defaults (m 16, ef_construction 64), cosine distance for `<=>`.
        self.env.cr.execute("""
            CREATE INDEX IF NOT EXISTS pv_kb_chunk_embedding_hnsw_idx ON pv_kb_chunk
             USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)
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

    @api.model
    def _refresh_search_vectors(self, chunk_ids=None):
        """(Re)compute ``search_tsv`` with German stemming and field weights.

        A = entry id, title, tags, legal bases, topic; B = heading; D = text.
        """
        self.flush_model()
        self.env["pv.kb.entry"].flush_model()
        where = SQL("c.id = ANY(%s)", list(chunk_ids)) if chunk_ids is not None else SQL("TRUE")
        self.env.cr.execute(SQL("""
            UPDATE pv_kb_chunk c SET search_tsv =
                   setweight(to_tsvector('german', concat_ws(' ', e.kb_id, e.name, e.topic,
                       (SELECT string_agg(t.name, ' ') FROM pv_kb_entry_tag_rel r JOIN pv_kb_tag t ON t.id = r.tag_id
                         WHERE r.entry_id = e.id),
                       (SELECT string_agg(b.name, ' ') FROM pv_kb_entry_legal_basis_rel r
                          JOIN pv_kb_legal_basis b ON b.id = r.basis_id WHERE r.entry_id = e.id))), 'A')
                || setweight(to_tsvector('german', coalesce(c.heading_path, '')), 'B')
                || setweight(to_tsvector('german', coalesce(c.text, '')), 'D')
              FROM pv_kb_entry e
             WHERE e.id = c.entry_id AND %s
        """, where))
