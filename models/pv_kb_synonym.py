from odoo import api, fields, models


class PvKbSynonym(models.Model):
    """Domain synonyms and abbreviations used to expand full-text queries."""

    _name = "pv.kb.synonym"
    _description = "Knowledge base synonym"
    _order = "term"

    term = fields.Char(required=True, index=True, help="Word or abbreviation as a user would type it.")
    expansions = fields.Char(required=True, help="Terms searched as well, separated by ';'.")
    active = fields.Boolean(default=True)

    _term_uniq = models.Constraint("UNIQUE(term)", "This term already has a synonym row.")

    # the entry cards carry the terms that point at their entry (lib/search/entry_card.py): keep them current
    @api.model_create_multi
    def create(self, vals_list):
        records = super().create(vals_list)
        self.env["pv.kb.chunk"].sudo()._sync_cards()
        return records

    def write(self, vals):
        keys = ("term", "expansions", "active")
        before = [tuple(r[k] for k in keys) for r in self]
        result = super().write(vals)
        # a module update rewrites the shipped rows with the same values: no card changes then
        if before != [tuple(r[k] for k in keys) for r in self]:
            self.env["pv.kb.chunk"].sudo()._sync_cards()
        return result

    def unlink(self):
        result = super().unlink()
        self.env["pv.kb.chunk"].sudo()._sync_cards()
        return result

    @api.model
    def _rows(self):
        """(term, expansions) pairs of the active rows, for lib.fulltext.parse_synonyms."""
        return [(r.term, r.expansions) for r in self.search([])]
