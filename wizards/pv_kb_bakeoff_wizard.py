import base64
import os
import pathlib

from odoo import Command, fields, models
from odoo.exceptions import AccessError, UserError

from ..lib.answer import modes as answer_modes
from ..lib.evaluation import bakeoff, goldset as goldset_format
from ..models.pv_kb_settings import answer_mode_selection

DEMO_GOLDSET = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "demo_kb",
                            "goldset.yaml")


class PvKbBakeoffWizard(models.TransientModel):
    """Start a bake-off: the gold set answered by each chat model in each answer mode, stored as runs."""

    _name = "pv.kb.bakeoff.wizard"
    _description = "Start model bake-off"

    goldset_file = fields.Binary("Gold set (YAML)", attachment=False,
                                 help="Empty: the demo gold set shipped with the addon.")
    goldset_filename = fields.Char("File name")
    held_out_only = fields.Boolean("Held-out questions only", default=True,
                                   help="The test part of the gold set, held out from tuning (lib/eval_protocol).")
    chat_models = fields.Char("Chat models", required=True,
                              default=lambda self: self.env["pv.kb.settings"]._get()["chat_model"],
                              help="Comma-separated, e.g. qwen2.5-coder:1.5b, qwen2.5-coder:0.5b")
    mode_line_ids = fields.One2many(
        "pv.kb.bakeoff.wizard.mode", "wizard_id", "Answer modes",
        default=lambda self: [Command.create({"mode": mode.key, "selected": mode.bakeoff_default})
                              for mode in answer_modes.registered()],
        help="Every registered answer mode; each chosen one is run with each chat model.")

    def action_run(self):
        """Run the bake-off now (KB managers). A real model takes minutes per run: long bake-offs belong to
        the command line (``pv_kb bakeoff``)."""
        self.ensure_one()
        if not self.env.user.has_group("pv_kb.group_pv_kb_manager"):
            raise AccessError(self.env._("Only knowledge base managers can start a bake-off."))
        models_ = [m.strip() for m in (self.chat_models or "").split(",") if m.strip()]
        modes = [line.mode for line in self.mode_line_ids if line.selected and line.mode in answer_modes.keys()]
        if not models_ or not modes:
            raise UserError(self.env._("Please name at least one chat model and choose at least one answer mode."))
        # an upload is always the gold set itself (bytes), never a path: server paths are for the command line
        if self.goldset_file:
            source = base64.b64decode(self.goldset_file)
            name = (self.goldset_filename or "goldset.yaml")[:120]
        else:
            source = pathlib.Path(DEMO_GOLDSET)
            name = "demo goldset.yaml"
        try:
            goldset = goldset_format.read_goldset(source)
        except goldset_format.GoldsetError as exc:
            raise UserError(str(exc)) from None   # bounded: the first findings, each cut
        gold = goldset.questions
        if self.held_out_only:
            gold, name = bakeoff.held_out(gold, goldset.meta), name + " (held-out)"
        runs = self.env["pv.kb.eval.run"]._bakeoff(gold, models_, modes, goldset_name=name,
                                                   part="test" if self.held_out_only else "all")
        return {
            "type": "ir.actions.act_window", "res_model": "pv.kb.eval.run", "name": self.env._("Bake-off"),
            "view_mode": "list,form,graph,pivot", "domain": [("id", "in", runs.ids)],
        }


class PvKbBakeoffWizardMode(models.TransientModel):
    """One answer mode offered by the bake-off wizard (one line per registered mode)."""

    _name = "pv.kb.bakeoff.wizard.mode"
    _description = "Answer mode of a bake-off"

    wizard_id = fields.Many2one("pv.kb.bakeoff.wizard", "Bake-off", required=True, ondelete="cascade")
    mode = fields.Selection(answer_mode_selection, "Answer mode", required=True)
    selected = fields.Boolean("Run")
