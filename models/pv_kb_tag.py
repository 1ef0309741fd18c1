from odoo import fields, models


class PvKbTag(models.Model):
    _name = "pv.kb.tag"
    _description = "Knowledge base tag"
    _order = "name"

    name = fields.Char(required=True, index=True)
    color = fields.Integer()
    entry_ids = fields.Many2many("pv.kb.entry", "pv_kb_entry_tag_rel", "tag_id", "entry_id")

    _name_uniq = models.Constraint("UNIQUE(name)", "A tag with this name already exists.")


class PvKbLegalBasis(models.Model):
    _name = "pv.kb.legal.basis"
    _description = "Legal basis (paragraph of a law)"
    _order = "name"

    name = fields.Char(required=True, index=True)
    law = fields.Char(help="The law's abbreviation, e.g. EStG, ASVG.", index=True)
    entry_ids = fields.Many2many("pv.kb.entry", "pv_kb_entry_legal_basis_rel", "basis_id", "entry_id")

    _name_uniq = models.Constraint("UNIQUE(name)", "This legal basis already exists.")
