import base64

from odoo import api, fields, models
from odoo.exceptions import AccessError, UserError


class PvKbImportWizard(models.TransientModel):
    """Two steps: check (dry run, every problem listed) then apply (all or nothing)."""

    _name = "pv.kb.import.wizard"
    _description = "Import knowledge base batch"

    state = fields.Selection([("upload", "Upload"), ("preview", "Preview")], default="upload", required=True)
    zip_file = fields.Binary("ZIP file", attachment=False)
    zip_filename = fields.Char("File name")
    server_path = fields.Char("Server folder or ZIP", groups="base.group_system",
                              help="Path on the Odoo server to a wissensbasis/ folder or a ZIP (administrators only).")
    mode = fields.Selection([("add", "Add / update"), ("sync", "Full sync (archive entries missing from the batch)")],
                            default="add", required=True)
    report = fields.Text(readonly=True)
    can_apply = fields.Boolean(readonly=True)
    count_new = fields.Integer(readonly=True)
    count_changed = fields.Integer(readonly=True)
    count_unchanged = fields.Integer(readonly=True)
    count_archived = fields.Integer(readonly=True)
    count_errors = fields.Integer(readonly=True)
    count_warnings = fields.Integer(readonly=True)

    @api.onchange("zip_file", "server_path", "mode")
    def _onchange_source(self):
        self.state = "upload"
        self.can_apply = False

    def _source(self):
        self.ensure_one()
        path = self.sudo().server_path if self.env.user.has_group("base.group_system") else False
        if path:
            return self.env["pv.kb.importer"]._read_source(path=path), path
        if not self.zip_file:
            raise UserError("Bitte eine ZIP-Datei mit dem Ordner wissensbasis/ hochladen.")
        return self.env["pv.kb.importer"]._read_source(data=base64.b64decode(self.zip_file)), \
            self.zip_filename or "upload.zip"

    def _check_access_server_path(self, vals):
        if vals.get("server_path") and not self.env.user.has_group("base.group_system"):
            raise AccessError("Nur Administratoren dürfen einen Serverpfad angeben.")

    @api.model_create_multi
    def create(self, vals_list):
        for vals in vals_list:
            self._check_access_server_path(vals)
        return super().create(vals_list)

    def write(self, vals):
        self._check_access_server_path(vals)
        return super().write(vals)

    def action_check(self):
        self.env["pv.kb.settings"]._check_manager()
        files, name = self._source()
        result = self.env["pv.kb.importer"]._run(files, mode=self.mode, dry_run=True, source_name=name,
                                                origin="wizard")
        counts = result.plan.counts()
        self.write({
            "state": "preview",
            "report": result.report,
            "can_apply": result.ok and result.plan.changes_anything,
            "count_new": counts["new"],
            "count_changed": counts["changed"],
            "count_unchanged": counts["unchanged"],
            "count_archived": counts["archived"],
            "count_errors": counts["errors"],
            "count_warnings": counts["warnings"],
        })
        return self._reopen()

    def action_apply(self):
        self.env["pv.kb.settings"]._check_manager()
        files, name = self._source()
        result = self.env["pv.kb.importer"]._run(files, mode=self.mode, dry_run=False, source_name=name,
                                                origin="wizard")
        return {
            "type": "ir.actions.act_window",
            "res_model": "pv.kb.batch",
            "res_id": result.batch.id,
            "view_mode": "form",
            "target": "current",
        }

    def action_back(self):
        self.env["pv.kb.settings"]._check_manager()
        self.state = "upload"
        return self._reopen()

    def _reopen(self):
        return {
            "type": "ir.actions.act_window",
            "res_model": self._name,
            "res_id": self.id,
            "view_mode": "form",
            "target": "new",
            "name": self.env._("Import knowledge base"),
        }
