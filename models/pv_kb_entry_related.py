"""An entry's neighbours for the curator: who references it, which share its legal basis, which are nearest
by meaning, and its open findings (managers only)."""
from odoo import api, fields, models

from .pv_kb_finding import check_manager


class PvKbEntry(models.Model):
    _inherit = "pv.kb.entry"

    referenced_by_ids = fields.Many2many("pv.kb.entry", compute="_compute_related", string="Referenced by")
    same_basis_ids = fields.Many2many("pv.kb.entry", compute="_compute_related", string="Same legal basis")
    nearest_ids = fields.Many2many("pv.kb.entry", compute="_compute_related", string="Nearest by meaning")
    # curator data: only managers read them (the form shows them to managers only)
    open_finding_ids = fields.Many2many("pv.kb.finding", compute="_compute_open_findings", string="Open findings",
                                        groups="pv_kb.group_pv_kb_manager")
    open_finding_count = fields.Integer(compute="_compute_open_findings", string="Findings",
                                        groups="pv_kb.group_pv_kb_manager")

    def _compute_open_findings(self):
        Finding = self.env["pv.kb.finding"]
        for entry in self:
            findings = Finding.search([("entry_ids", "in", entry.id), ("state", "=", "open")]) \
                if isinstance(entry.id, int) else Finding
            entry.open_finding_ids = findings
            entry.open_finding_count = len(findings)

    def _compute_related(self):
        for entry in self:
            if not entry.id or not isinstance(entry.id, int):
                entry.referenced_by_ids = entry.same_basis_ids = entry.nearest_ids = False
                continue
            entry.referenced_by_ids = self.search([("cross_ref_ids", "in", entry.id)])
            entry.same_basis_ids = self.search([("legal_basis_ids", "in", entry.legal_basis_ids.ids),
                                                ("id", "!=", entry.id)], limit=20) if entry.legal_basis_ids \
                else False
            entry.nearest_ids = self.browse(self._nearest_entry_ids(entry.id))

    @api.model
    def _nearest_entry_ids(self, entry_id, limit=5):
        """Entries whose sections are nearest to this entry's summary (HNSW index)."""
        cr = self.env.cr
        cr.execute("""SELECT embedding::text FROM pv_kb_chunk WHERE entry_id = %s AND embedding IS NOT NULL
                       ORDER BY (section_key = 'zusammenfassung') DESC, position LIMIT 1""", [entry_id])
        row = cr.fetchone()
        if not row:
            return []
        cr.execute("SET LOCAL hnsw.ef_search = 100")
        cr.execute("""SELECT entry_id FROM pv_kb_chunk WHERE embedding IS NOT NULL AND entry_active
                       ORDER BY embedding <=> %s::vector LIMIT 40""", [row[0]])
        found = []
        for (other,) in cr.fetchall():
            if other != entry_id and other not in found:
                found.append(other)
        return found[:limit]

    def action_open_findings(self):
        self.ensure_one()
        check_manager(self.env)
        title = self.env._("Findings")
        domain = [("entry_ids", "in", self.id)]
        return {"type": "ir.actions.act_window", "name": title, "res_model": "pv.kb.finding",
                "view_mode": "list,form", "domain": domain}
