from odoo import fields, models


class PvKbRunMixin(models.AbstractModel):
    """A logged run of a job (an import, a health check): when, started by whom, how long it took.

    The model that inherits it names ``user_id`` after its job and adds what the run counted.
    """

    _name = "pv.kb.run.mixin"
    _description = "Knowledge base run"
    _order = "id desc"

    date = fields.Datetime(readonly=True, default=fields.Datetime.now)
    user_id = fields.Many2one("res.users", "Started by", readonly=True, default=lambda self: self.env.user)
    duration = fields.Float("Duration (s)", readonly=True, digits=(16, 2))
