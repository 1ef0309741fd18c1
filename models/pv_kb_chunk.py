from odoo import api, fields, models
from odoo.exceptions import UserError
from odoo.tools import SQL

from ..lib.kb import chunking
from ..lib.search import entry_card

SECTION_KEYS = [
    ("zusammenfassung", "Summary"),
    ("kernwerte", "Key values & deadlines"),
    ("rechtsgrundlagen", "Legal bases"),
    ("payroll", "Payroll relevance"),
    ("verweise", "References"),
    ("other", "Other"),
    (entry_card.CARD_KEY, "Entry card"),   # one per entry, ranks entries; never a passage (lib/search/entry_card.py)
]


class PvKbChunk(models.Model):
    """A section (or part of one) of an entry: the unit of retrieval.

    Besides the ORM fields the table carries two columns managed in SQL:
    ``embedding vector(n)`` (pgvector, HNSW cosine index; ``pv_kb_chunk_embed.py``)
    and ``search_tsv tsvector`` (German full text, GIN index; ``pv_kb_chunk_index.py``).
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
        self._init_embedding_column()
        self._init_search_column()

    # --- entry cards ---------------------------------------------------------
    @api.model
    def _sync_cards(self, entry_ids=None):
        """Create or update the entry card (lib/search/entry_card.py) of the given entries (database ids; all active
        entries when None). A card whose text changed gets a new content hash, so the cron embeds it again.
        Returns the number of cards created or changed."""
        self.env.flush_all()
        table = self._synonyms()
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

    def _compute_has_embedding(self):
        if not self.ids:
            for chunk in self:
                chunk.has_embedding = False
            return
        self.env.cr.execute("SELECT id FROM pv_kb_chunk WHERE id = ANY(%s) AND embedding IS NOT NULL", [self.ids])
        done = {row[0] for row in self.env.cr.fetchall()}
        for chunk in self:
            chunk.has_embedding = chunk.id in done
