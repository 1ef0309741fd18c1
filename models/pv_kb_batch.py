from odoo import fields, models

BATCH_STATES = [
    ("done", "Applied"),
    ("rejected", "Rejected"),
    ("failed", "Failed"),
]


class PvKbBatch(models.Model):
    """One import of a knowledge base batch: who, when, what changed, the full report."""

    _name = "pv.kb.batch"
    _inherit = ["pv.kb.run.mixin"]
    _description = "Knowledge base import batch"

    name = fields.Char(required=True, readonly=True)
    user_id = fields.Many2one(string="Imported by")
    source_name = fields.Char("Source file", readonly=True)
    mode = fields.Selection([("add", "Add / update"), ("sync", "Full sync")], readonly=True, default="add")
    state = fields.Selection(BATCH_STATES, readonly=True, required=True, default="done")
    origin = fields.Selection([("wizard", "Wizard"), ("cli", "Command line")], readonly=True)
    count_files = fields.Integer("Files", readonly=True)
    count_new = fields.Integer("New", readonly=True)
    count_changed = fields.Integer("Changed", readonly=True)
    count_unchanged = fields.Integer("Unchanged", readonly=True)
    count_archived = fields.Integer("Archived", readonly=True)
    count_rejected = fields.Integer("Rejected", readonly=True)
    count_warnings = fields.Integer("Warnings", readonly=True)
    report = fields.Text(readonly=True)
    issue_ids = fields.One2many("pv.kb.batch.issue", "batch_id", "Problems", readonly=True)
    entry_ids = fields.One2many("pv.kb.entry", "batch_id", "Entries", readonly=True)


class PvKbBatchIssue(models.Model):
    _name = "pv.kb.batch.issue"
    _description = "Problem found in an import batch"
    _order = "batch_id, level, file, id"

    batch_id = fields.Many2one("pv.kb.batch", required=True, ondelete="cascade", index=True)
    file = fields.Char(readonly=True)
    level = fields.Selection([("error", "Error"), ("warning", "Warning")], readonly=True, required=True)
    code = fields.Char(readonly=True)
    message = fields.Char(readonly=True)
