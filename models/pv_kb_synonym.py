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

    @api.model
    def _rows(self):
        """(term, expansions) pairs of the active rows, for lib.fulltext.parse_synonyms."""
        return [(r.term, r.expansions) for r in self.search([])]
