"""The health check's findings: what the curator should look at, stored by key so that a re-run updates them.

The checks themselves are ``lib/cockpit/health.py``; the run that calls them is ``models/pv_kb_health.py``.
"""
from odoo import api, fields, models
from odoo.exceptions import AccessError

from ..lib.cockpit import health

SEVERITIES = [("high", "High"), ("medium", "Medium"), ("low", "Low"), ("info", "Note")]
FINDING_STATES = [("open", "Open"), ("accepted", "Accepted"), ("resolved", "Resolved")]


def check_manager(env):
    """The cockpit's buttons are for KB managers (the health run, findings, gaps and an entry's findings)."""
    if not env.user.has_group("pv_kb.group_pv_kb_manager"):
        raise AccessError(env._("Only knowledge base managers can do this."))


class PvKbFinding(models.Model):
    """Something the curator should look at, found by the health check."""

    _name = "pv.kb.finding"
    _description = "Knowledge base finding"
    _order = "state_rank, severity_rank, kind, id"

    name = fields.Char(compute="_compute_name", store=True)
    key = fields.Char(required=True, readonly=True, index=True, help="Stable key: a re-run updates this finding.")
    kind = fields.Selection([(k.key, k.label) for k in health.FINDING_KINDS], required=True, readonly=True,
                            index=True)
    severity = fields.Selection(SEVERITIES, required=True, readonly=True, index=True)
    severity_rank = fields.Integer(compute="_compute_ranks", store=True)
    state_rank = fields.Integer(compute="_compute_ranks", store=True)
    entry_ids = fields.Many2many("pv.kb.entry", "pv_kb_finding_entry_rel", "finding_id", "entry_id", "Entries",
                                 readonly=True)
    entry_refs = fields.Char("Entry IDs", readonly=True, help="The ids as found (also when an entry is gone).")
    message = fields.Text("Explanation", readonly=True)
    state = fields.Selection(FINDING_STATES, required=True, readonly=True, default="open", index=True)
    first_seen = fields.Datetime("First seen", readonly=True)
    last_seen = fields.Datetime("Last seen", readonly=True)
    opened_batch_id = fields.Many2one("pv.kb.batch", "Opened by import", readonly=True, ondelete="set null")
    resolved_batch_id = fields.Many2one("pv.kb.batch", "Resolved by import", readonly=True, ondelete="set null")
    resolved_by = fields.Many2one("res.users", "Resolved by", readonly=True)
    resolved_at = fields.Datetime("Resolved at", readonly=True)
    accepted_by = fields.Many2one("res.users", "Accepted by", readonly=True)
    run_id = fields.Many2one("pv.kb.health.run", "Last run", readonly=True, ondelete="set null")
    note = fields.Text("Curator note")

    _key_uniq = models.Constraint("UNIQUE(key)", "A finding key is unique.")

    @api.depends("kind", "entry_refs")
    def _compute_name(self):
        labels = dict(self._fields["kind"]._description_selection(self.env))
        for finding in self:
            finding.name = f"{labels.get(finding.kind, finding.kind)}: {finding.entry_refs or ''}"

    @api.depends("severity", "state")
    def _compute_ranks(self):
        states = [s for s, _ in FINDING_STATES]
        for finding in self:
            finding.severity_rank = health.SEVERITY_RANK.get(finding.severity, 9)
            finding.state_rank = states.index(finding.state) if finding.state in states else 9

    @api.model
    def _store(self, found, db_ids, run, batch=None):
        """Create or update findings by key; open findings not found again are resolved. Returns
        (opened, resolved) counts."""
        now = fields.Datetime.now()
        existing = {f.key: f for f in self.search([("key", "in", [f.key for f in found])])}
        opened = 0
        creates = []
        for item in found:
            vals = {"kind": item.kind, "severity": item.severity, "message": item.message, "last_seen": now,
                    "run_id": run.id, "entry_refs": ", ".join(item.entry_ids),
                    "entry_ids": [fields.Command.set([db_ids[i] for i in item.entry_ids if i in db_ids])]}
            record = existing.get(item.key)
            if record is None:
                creates.append(dict(vals, key=item.key, state="open", first_seen=now,
                                    opened_batch_id=batch.id if batch else False))
                opened += 1
            elif record.state == "resolved":   # back again: reopened, by this import when there is one
                record.write(dict(vals, state="open", resolved_by=False, resolved_at=False, resolved_batch_id=False,
                                  opened_batch_id=batch.id if batch else False))
                opened += 1
            else:
                if record.kind != item.kind or record.message != item.message or record.severity != item.severity \
                        or record.entry_refs != vals["entry_refs"]:
                    record.write(vals)
                else:
                    record.write({"last_seen": now, "run_id": run.id})
        self.create(creates)
        gone = self.search([("state", "in", ("open", "accepted")), ("key", "not in", [f.key for f in found])])
        gone.write({"state": "resolved", "resolved_at": now, "resolved_by": self.env.user.id,
                    "resolved_batch_id": batch.id if batch else False})
        return opened, len(gone)

    def action_accept(self):
        check_manager(self.env)
        self.filtered(lambda f: f.state == "open").write({"state": "accepted", "accepted_by": self.env.user.id})
        return True

    def action_reopen(self):
        check_manager(self.env)
        self.filtered(lambda f: f.state == "accepted").write({"state": "open", "accepted_by": False})
        return True
