"""Import of a knowledge base batch: the one code path behind the wizard and the command."""
import logging
import time
from dataclasses import dataclass

from odoo import api, fields, models
from odoo.exceptions import UserError

from ..lib.kb import chunking, import_plan, batch as kb_batch, format as kb_format, rendering, zip_guard

_logger = logging.getLogger(__name__)
IMPORT_LOCK_KEY = 0x70766B69   # "pvki": advisory lock of the import


@dataclass
class ImportResult:
    plan: import_plan.ImportPlan
    report: str
    batch: models.BaseModel | None    # pv.kb.batch, None for a dry run
    applied: bool

    @property
    def ok(self) -> bool:
        return self.plan.ok


class PvKbImporter(models.AbstractModel):
    _name = "pv.kb.importer"
    _description = "Knowledge base import"

    # --- reading -----------------------------------------------------------
    @api.model
    def _read_source(self, *, data: bytes | None = None, path: str | None = None) -> dict[str, bytes]:
        """Files of the batch (relative to the KB root) from zip bytes, a zip file or a folder."""
        try:
            if data is not None:
                files = zip_guard.read_zip(data)
            elif path and path.lower().endswith(".zip"):
                files = zip_guard.read_zip(path)
            elif path:
                files = zip_guard.read_folder(path)
            else:
                raise UserError("Bitte eine ZIP-Datei hochladen oder einen Ordner angeben.")
            return zip_guard.kb_root_files(files)
        except zip_guard.ZipGuardError as exc:
            raise UserError(str(exc)) from exc
        except FileNotFoundError as exc:
            raise UserError(f"Pfad nicht gefunden: {path}") from exc
        except OSError as exc:
            raise UserError(f"Der Pfad {path} kann nicht gelesen werden: {exc.strerror or exc}") from exc

    # --- planning ----------------------------------------------------------
    @api.model
    def _base_state(self):
        self.env["pv.kb.entry"].flush_model(["kb_id", "content_hash", "active"])
        self.env.cr.execute("SELECT kb_id, content_hash, active FROM pv_kb_entry")
        return {kb_id: import_plan.BaseState(h or "", active) for kb_id, h, active in self.env.cr.fetchall()}

    @api.model
    def _plan(self, files: dict[str, bytes], mode: str, origin: str = "cli"):
        # a batch from the browser: at most so many entries and table lines, rendered within a total budget
        # (lib/kb/batch.py, lib/kb/rendering.py); the command line, run by the server's operator, only within
        # the budget per entry
        browser = origin != "cli"
        batch = kb_batch.load_batch(files, render_seconds=rendering.BATCH_SECONDS if browser else None,
                                    limits=kb_batch.UploadLimits() if browser else None)
        base = self._base_state()
        if mode == "sync":
            known = {e.id for e in batch.entries}
        else:
            known = {kb_id for kb_id, st in base.items() if st.active} | {e.id for e in batch.entries}
        issues = list(batch.issues) + kb_batch.check_cross_refs(batch.entries, known)
        plan = import_plan.plan_import(batch.entries, issues, base, mode=mode, files_seen=batch.files_seen)
        return batch, plan

    # --- the one entry point -----------------------------------------------
    @api.model
    def _run(self, files: dict[str, bytes], *, mode: str = "add", dry_run: bool = False,
            source_name: str = "", origin: str = "cli", health_check: bool = True) -> ImportResult:
        """Check a batch and, unless ``dry_run``, apply it as a whole (or not at all).

        ``health_check=False`` leaves out the health check after the import (a parameter of this private method,
        never a context key: the context comes from the client). Only for code that imports fixtures and checks
        something else; every import of the product runs the check."""
        started = time.monotonic()
        if not dry_run:
            # one import at a time: a second one waits for nothing and says so (instead of a serialization
            # error after both did their work); the lock ends with the transaction
            self.env.cr.execute("SELECT pg_try_advisory_xact_lock(%s)", [IMPORT_LOCK_KEY])
            if not self.env.cr.fetchone()[0]:
                raise UserError(self.env._("Another import is running right now. Please try again when it has "
                                           "finished."))
        batch, plan = self._plan(files, mode, origin)
        if dry_run:
            report = import_plan.format_report(plan, source=source_name, dry_run=True)
            return ImportResult(plan, report, None, applied=False)
        state = "rejected"
        if plan.ok:
            try:
                with self.env.cr.savepoint():
                    self._apply(batch, plan)
                state = "done"
            except Exception as exc:
                _logger.exception("pv_kb: import of %s failed", source_name)
                plan.issues.append(kb_format.Issue("", "error", "apply_failed",
                                                   f"Der Import ist abgebrochen, es wurde nichts geändert: {exc}"))
                state = "failed"
        report = import_plan.format_report(plan, source=source_name, applied=(state == "done"))
        record = self._log_batch(plan, report, state, source_name, origin, time.monotonic() - started)
        if state == "done":
            touched = plan.new + plan.changed + plan.reactivated
            if touched:
                self.env["pv.kb.entry"].with_context(active_test=False).search(
                    [("kb_id", "in", touched)]).write({"batch_id": record.id})
            if health_check:
                self.env["pv.kb.health.run"]._after_import(record)
        return ImportResult(plan, report, record, applied=(state == "done"))

    # --- applying ----------------------------------------------------------
    def _apply(self, batch, plan):
        Entry = self.env["pv.kb.entry"].with_context(active_test=False)
        parsed = {e.id: e for e in batch.entries}
        tags = self._ensure_names("pv.kb.tag", {t for e in batch.entries for t in e.tags})
        bases = self._ensure_names("pv.kb.legal.basis", {b for e in batch.entries for b in e.legal_bases})

        new_entries = Entry.create([self._entry_vals(parsed[i], tags, bases) for i in plan.new])
        chunk_vals = []
        for entry in new_entries:
            chunk_vals += [self._chunk_vals(entry.id, c) for c in chunking.chunk_entry(parsed[entry.kb_id])]
        touched_chunk_ids = self.env["pv.kb.chunk"].create(chunk_vals).ids

        for entry in Entry.search([("kb_id", "in", plan.changed)]):
            entry.write(self._entry_vals(parsed[entry.kb_id], tags, bases))
            touched_chunk_ids += self._update_chunks(entry, chunking.chunk_entry(parsed[entry.kb_id]))
        if plan.reactivated:
            Entry.search([("kb_id", "in", plan.reactivated)]).write({"active": True})
            touched_chunk_ids += self.env["pv.kb.chunk"].search([("kb_id", "in", plan.reactivated)]).ids
        if plan.archived:
            Entry.search([("kb_id", "in", plan.archived)]).write({"active": False})

        # references: the batch's entries, and older entries that pointed at ids this batch brings
        refs_to_resolve = Entry.search(["|", ("kb_id", "in", plan.new + plan.changed + plan.reactivated),
                                        ("dangling_refs", "!=", False)])
        refs_to_resolve._resolve_cross_refs(refs_to_resolve)
        self.env["pv.kb.chunk"]._index_chunks(touched_chunk_ids)
        touched_entries = Entry.search([("kb_id", "in", plan.new + plan.changed + plan.reactivated)])
        self.env["pv.kb.chunk"]._sync_cards(touched_entries.ids)
        self.env["pv.kb.fact"]._rebuild()

    def _update_chunks(self, entry, new_chunks):
        """Re-chunk a changed entry: unchanged chunks (same hash) keep their embedding."""
        Chunk = self.env["pv.kb.chunk"]
        old = entry.chunk_ids.sorted("position")
        diff = import_plan.diff_chunks(old.mapped("content_hash"), [c.content_hash for c in new_chunks])
        keep_left = dict(diff.keep)
        to_drop = Chunk
        touched = []
        for chunk in old:
            if chunk.content_hash in keep_left:
                position = keep_left.pop(chunk.content_hash)
                if chunk.position != new_chunks[position].position:
                    chunk.write({"position": new_chunks[position].position})
                touched.append(chunk.id)   # entry metadata (title, tags) feeds the search vector
            else:
                to_drop |= chunk
        to_drop.unlink()
        created = Chunk.create([self._chunk_vals(entry.id, new_chunks[i]) for i in diff.create])
        return touched + created.ids

    @api.model
    def _ensure_names(self, model, names):
        Model = self.env[model]
        existing = {r.name: r.id for r in Model.search([("name", "in", list(names))])}
        missing = sorted(n for n in names if n not in existing)
        for record in Model.create([self._name_vals(model, n) for n in missing]):
            existing[record.name] = record.id
        return existing

    @staticmethod
    def _name_vals(model, name):
        vals = {"name": name}
        if model == "pv.kb.legal.basis":
            vals["law"] = name.split()[-1] if name.split() else False
        return vals

    @staticmethod
    def _entry_vals(entry, tags, bases):
        summary = next((s.text for s in entry.sections if s.key == "zusammenfassung"), "")
        return {
            "kb_id": entry.id,
            "name": entry.title,
            "stand": entry.stand,
            "stand_date": entry.stand_date,
            "topic": entry.topic,
            "source": entry.source,
            "tag_ids": [fields.Command.set([tags[t] for t in entry.tags])],
            "legal_basis_ids": [fields.Command.set([bases[b] for b in entry.legal_bases])],
            "cross_refs": ",".join(entry.cross_refs) or False,
            "body_md": entry.body,
            # rendered by the batch check, within its budget (lib/kb/rendering.py)
            "body_html": entry.html if entry.html is not None else rendering.render_within(entry.body)[0] or False,
            "summary": summary,
            "content_hash": entry.content_hash,
            "active": True,
        }

    @staticmethod
    def _chunk_vals(entry_db_id, chunk):
        return {
            "entry_id": entry_db_id,
            "section_key": chunk.section_key,
            "heading_path": chunk.heading_path,
            "text": chunk.text,
            "position": chunk.position,
            "token_estimate": chunk.token_estimate,
            "content_hash": chunk.content_hash,
        }

    def _log_batch(self, plan, report, state, source_name, origin, duration):
        counts = plan.counts()
        return self.env["pv.kb.batch"].create({
            "name": f"{fields.Datetime.now():%Y-%m-%d %H:%M} – {source_name or 'Import'}",
            "source_name": source_name,
            "mode": plan.mode,
            "state": state,
            "origin": origin,
            "count_files": plan.files_seen,
            "count_new": counts["new"] if state == "done" else 0,
            "count_changed": counts["changed"] if state == "done" else 0,
            "count_unchanged": counts["unchanged"] if state == "done" else 0,
            "count_archived": counts["archived"] if state == "done" else 0,
            "count_rejected": counts["rejected"],
            "count_warnings": counts["warnings"],
            "duration": duration,
            "report": report,
            "issue_ids": [fields.Command.create({"file": i.file, "level": i.level, "code": i.code,
                                                 "message": i.message}) for i in plan.issues],
        })
