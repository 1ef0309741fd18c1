from odoo import api, fields, models

SOURCE_KINDS = [
    ("lexis", "Lexis Briefings"),
    ("wiku", "WIKU"),
    ("other", "Other"),
]


def source_kind(source: str) -> str:
    folded = (source or "").lower()
    if "lexis" in folded:
        return "lexis"
    if "wiku" in folded:
        return "wiku"
    return "other"


class PvKbEntry(models.Model):
    """One curated entry of the knowledge base (one Markdown file)."""

    _name = "pv.kb.entry"
    _description = "Knowledge base entry"
    _order = "topic, kb_id"
    _rec_name = "name"
    _rec_names_search = ["kb_id", "name"]

    kb_id = fields.Char("Entry ID", required=True, index=True, readonly=True,
                        help="Stable id of the entry, e.g. lb-atz-07; equals the file name.")
    name = fields.Char("Title", required=True, readonly=True)
    stand = fields.Char("Stand", readonly=True, help="Legal state described, as written (YYYY-MM or YYYY-MM-DD).")
    stand_date = fields.Date("Stand (date)", index=True, readonly=True)
    topic = fields.Char("Topic", index=True, readonly=True, help="Cluster key; INDEX.md groups by it.")
    source = fields.Char("Source", readonly=True)
    source_kind = fields.Selection(SOURCE_KINDS, "Source type", compute="_compute_source_kind", store=True)
    tag_ids = fields.Many2many("pv.kb.tag", "pv_kb_entry_tag_rel", "entry_id", "tag_id", "Tags", readonly=True)
    legal_basis_ids = fields.Many2many("pv.kb.legal.basis", "pv_kb_entry_legal_basis_rel", "entry_id", "basis_id",
                                       "Legal bases", readonly=True)
    cross_refs = fields.Char("Cross references (as written)", readonly=True)
    cross_ref_ids = fields.Many2many("pv.kb.entry", "pv_kb_entry_cross_ref_rel", "entry_id", "ref_id",
                                     "Cross references", readonly=True)
    dangling_refs = fields.Char("Unresolved references", readonly=True,
                                help="Referenced ids that do not exist in the knowledge base.")
    body_md = fields.Text("Markdown", readonly=True)
    body_html = fields.Html("Text", readonly=True, sanitize=True, sanitize_style=True)
    summary = fields.Text("Summary", readonly=True)
    content_hash = fields.Char(readonly=True, index=True)
    batch_id = fields.Many2one("pv.kb.batch", "Last import", readonly=True, ondelete="set null")
    active = fields.Boolean(default=True, readonly=True)
    # the sections; the entry card (a chunk row of its own kind, lib/search/entry_card.py) is not one
    chunk_ids = fields.One2many("pv.kb.chunk", "entry_id", "Sections", readonly=True,
                                domain=[("section_key", "!=", "card")])
    chunk_count = fields.Integer(compute="_compute_chunk_count")

    _kb_id_uniq = models.Constraint("UNIQUE(kb_id)", "The entry id must be unique in the knowledge base.")

    @api.depends("source")
    def _compute_source_kind(self):
        for entry in self:
            entry.source_kind = source_kind(entry.source)

    @api.depends("chunk_ids")
    def _compute_chunk_count(self):
        groups = self.env["pv.kb.chunk"]._read_group([("entry_id", "in", self.ids), ("section_key", "!=", "card")],
                                                     ["entry_id"], ["__count"])
        counts = {entry.id: count for entry, count in groups}
        for entry in self:
            entry.chunk_count = counts.get(entry.id, 0)

    @api.depends("kb_id", "name")
    def _compute_display_name(self):
        for entry in self:
            entry.display_name = f"[{entry.kb_id}] {entry.name}" if entry.kb_id else entry.name

    def action_open_chunks(self):
        self.ensure_one()
        self.check_access("read")
        return {
            "type": "ir.actions.act_window",
            "name": self.display_name,
            "res_model": "pv.kb.chunk",
            "view_mode": "list,form",
            "domain": [("entry_id", "=", self.id), ("section_key", "!=", "card")],
        }

    @api.model
    def _resolve_cross_refs(self, entries=None):
        """Link ``cross_refs`` to entries; unknown ids stay as text in ``dangling_refs``.

        Returns {kb_id: [missing ids]} for the report.  Without ``entries``, every
        entry whose references mention a listed id is re-resolved as well.
        """
        entries = entries if entries is not None else self.with_context(active_test=False).search([])
        wanted = {ref for e in entries for ref in (e.cross_refs or "").split(",") if ref}
        by_id = {e.kb_id: e.id for e in self.with_context(active_test=False).search([("kb_id", "in", list(wanted))])}
        missing = {}
        for entry in entries:
            refs = [r for r in (entry.cross_refs or "").split(",") if r]
            found = [by_id[r] for r in refs if r in by_id]
            lost = [r for r in refs if r not in by_id]
            vals = {"cross_ref_ids": [fields.Command.set(found)], "dangling_refs": ", ".join(lost) or False}
            entry.write(vals)
            if lost:
                missing[entry.kb_id] = lost
        return missing
