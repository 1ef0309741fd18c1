import base64
import io
import stat
import zipfile
from unittest.mock import patch

from odoo.exceptions import AccessError, UserError
from odoo.tests import new_test_user, tagged
from odoo.tools import mute_logger

from .common import DEMO_KB, KbCase, batch_files, entry_md, zip_bytes


def three_entries(**overrides):
    entries = {
        "lb-tst-01": entry_md("lb-tst-01", cross_refs=["lb-tst-02"]),
        "lb-tst-02": entry_md("lb-tst-02", stand="2025-01", tags=("Test", "Sonderzahlung")),
        "wiku-tst-03": entry_md("wiku-tst-03", source="WIKU", legal_bases=("§ 67 EStG",)),
    }
    entries.update(overrides)
    return entries


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_import")
class TestImport(KbCase):

    def test_new_batch_creates_entries_chunks_and_links(self):
        result = self.run_import(batch_files(three_entries()))
        self.assertTrue(result.ok, result.report)
        self.assertEqual(result.batch.state, "done")
        self.assertEqual((result.batch.count_new, result.batch.count_changed), (3, 0))
        entry = self.Entry.search([("kb_id", "=", "lb-tst-01")])
        self.assertEqual(entry.name, "Testeintrag lb-tst-01")
        self.assertEqual(str(entry.stand_date), "2026-01-01")
        self.assertEqual(entry.cross_ref_ids.kb_id, "lb-tst-02")
        self.assertEqual(entry.batch_id, result.batch)
        self.assertIn("<table", entry.body_html)
        self.assertEqual(self.Entry.search([("kb_id", "=", "wiku-tst-03")]).source_kind, "wiku")
        self.assertEqual(set(entry.chunk_ids.mapped("section_key")),
                         {"zusammenfassung", "kernwerte", "rechtsgrundlagen", "payroll", "verweise"})
        self.env.flush_all()
        self.env.cr.execute("SELECT section_key, count(*) FROM pv_kb_chunk WHERE search_tsv IS NULL GROUP BY 1")
        # every section is indexed for full text; the entry cards (one per entry) are no passages and are not
        self.assertEqual(dict(self.env.cr.fetchall()), {"card": self.Entry.search_count([])})
        self.env.cr.execute("SELECT count(*) FROM pv_kb_chunk WHERE search_tsv @@ to_tsquery('german', 'jahressechstel')")
        self.assertGreaterEqual(self.env.cr.fetchone()[0], 3)

    def test_unchanged_reimport_is_a_noop(self):
        files = batch_files(three_entries())
        self.run_import(files)
        before = self.snapshot()
        result = self.run_import(files)
        self.assertTrue(result.ok)
        self.assertEqual((result.batch.count_new, result.batch.count_changed, result.batch.count_unchanged), (0, 0, 3))
        self.assertFalse(result.plan.changes_anything)
        self.assertEqual(self.snapshot(), before)

    def test_changed_entry_rechunks_only_changed_sections(self):
        self.run_import(batch_files(three_entries()))
        entry = self.Entry.search([("kb_id", "=", "lb-tst-02")])
        old = {c.section_key: c.id for c in entry.chunk_ids}
        other_before = self.Entry.search([("kb_id", "=", "lb-tst-01")]).chunk_ids.ids
        # pretend the summary was embedded already: its embedding must survive
        self.env.cr.execute("UPDATE pv_kb_chunk SET embedding = array_fill(0.1, ARRAY[1024])::vector WHERE id = %s",
                            [old["zusammenfassung"]])
        changed = three_entries(**{"lb-tst-02": entry_md(
            "lb-tst-02", stand="2025-01", tags=("Test", "Sonderzahlung"),
            kernwerte="| Wert | Betrag |\n|---|---|\n| Freigrenze | € 2.100 |")})
        result = self.run_import(batch_files(changed))
        self.assertEqual((result.batch.count_changed, result.batch.count_unchanged), (1, 2))
        entry.invalidate_recordset()
        new = {c.section_key: c.id for c in entry.chunk_ids}
        self.assertNotEqual(new["kernwerte"], old["kernwerte"], "the changed section gets a new chunk")
        self.assertEqual(set(new), set(old))
        for key in set(old) - {"kernwerte"}:
            self.assertEqual(new[key], old[key], f"unchanged section {key} keeps its chunk")
        self.assertFalse(self.Chunk.browse(old["kernwerte"]).exists())
        self.assertIn("2.100", self.Chunk.browse(new["kernwerte"]).text)
        self.env.cr.execute("SELECT embedding IS NOT NULL FROM pv_kb_chunk WHERE id = %s", [old["zusammenfassung"]])
        self.assertTrue(self.env.cr.fetchone()[0])
        self.assertEqual(self.Entry.search([("kb_id", "=", "lb-tst-01")]).chunk_ids.ids, other_before)

    def test_sync_archives_missing_entries_and_readd_reactivates(self):
        self.run_import(batch_files(three_entries()))
        entries = three_entries()
        del entries["wiku-tst-03"]
        result = self.run_import(batch_files(entries), mode="sync")
        self.assertEqual(result.batch.count_archived, 1)
        gone = self.Entry.search([("kb_id", "=", "wiku-tst-03")])
        self.assertTrue(gone, "archived, never deleted")
        self.assertFalse(gone.active)
        self.assertTrue(gone.chunk_ids, "chunks of an archived entry are kept")
        # the default mode never archives
        result = self.run_import(batch_files({"lb-tst-01": three_entries()["lb-tst-01"],
                                              "lb-tst-02": three_entries()["lb-tst-02"]}))
        self.assertEqual(result.batch.count_archived, 0)
        result = self.run_import(batch_files(three_entries()))
        self.assertEqual(result.plan.reactivated, ["wiku-tst-03"])
        self.assertTrue(gone.active)

    def test_dangling_reference_is_a_warning_and_resolves_later(self):
        entries = {"lb-tst-01": entry_md("lb-tst-01", cross_refs=["lb-tst-09"])}
        result = self.run_import(batch_files(entries))
        self.assertTrue(result.ok)
        self.assertIn("crossref_dangling", result.batch.issue_ids.mapped("code"))
        self.assertIn("lb-tst-09", result.report)
        entry = self.Entry.search([("kb_id", "=", "lb-tst-01")])
        self.assertEqual(entry.dangling_refs, "lb-tst-09")
        self.run_import(batch_files({"lb-tst-09": entry_md("lb-tst-09")}))
        self.assertFalse(entry.dangling_refs)
        self.assertEqual(entry.cross_ref_ids.kb_id, "lb-tst-09")

    def test_every_check_rejects_the_whole_batch_and_changes_nothing(self):
        self.run_import(batch_files(three_entries()))
        good = three_entries(**{"lb-tst-04": entry_md("lb-tst-04")})
        latin1 = entry_md("lb-tst-05", title="Überstunden – Zuschläge für Mehrarbeit").encode("latin-1",
                                                                                            errors="replace")
        cases = {
            # name: (files, expected code, file named in the report)
            "frontmatter missing": (batch_files(good, raw={"dokumente/lb-tst-04.md": b"# Nur Text\n\n## Zusammenfassung\nx\n"}),
                                    "frontmatter_missing", "dokumente/lb-tst-04.md"),
            "frontmatter unclosed": (batch_files(good, raw={"dokumente/lb-tst-04.md": entry_md("lb-tst-04").replace("---\n\n#", "\n\n#").encode()}),
                                     "frontmatter_unclosed", "dokumente/lb-tst-04.md"),
            "required key": (batch_files(good, raw={"dokumente/lb-tst-04.md": entry_md("lb-tst-04").replace("topic: testthema\n", "").encode()}),
                             "key_missing", "dokumente/lb-tst-04.md"),
            "id vs file name": (batch_files(good, raw={"dokumente/lb-tst-04.md": entry_md("lb-tst-44").encode()}),
                                "id_filename_mismatch", "dokumente/lb-tst-04.md"),
            "duplicate id": (batch_files(good, raw={"dokumente/lb-tst-06.md": entry_md("lb-tst-04").encode()}),
                             "id_duplicate", "dokumente/lb-tst-06.md"),
            "stand invalid": (batch_files(good, raw={"dokumente/lb-tst-04.md": entry_md("lb-tst-04", stand="2026-13").encode()}),
                              "stand_invalid", "dokumente/lb-tst-04.md"),
            "latin-1": (batch_files(good, raw={"dokumente/lb-tst-04.md": latin1}), "encoding", "dokumente/lb-tst-04.md"),
            "empty file": (batch_files(good, raw={"dokumente/lb-tst-04.md": b"  \n"}), "empty_file", "dokumente/lb-tst-04.md"),
            "kb.json missing": (batch_files(good, kbjson=False), "kbjson_missing", "kb.json"),
            "kb.json id without file": (batch_files(good, raw={"dokumente/lb-tst-04.md": None}), "kbjson_missing_id", "kb.json"),
            "file not in kb.json": (batch_files(good, raw={"dokumente/lb-tst-07.md": entry_md("lb-tst-07").encode()}),
                                    "kbjson_extra_file", "dokumente/lb-tst-07.md"),
        }
        before = self.snapshot()
        for name, (files, code, file) in cases.items():
            with self.subTest(name):
                files = {k: v for k, v in files.items() if v is not None}
                result = self.run_import(files)
                self.assertFalse(result.ok, f"{name}: the batch must be rejected")
                self.assertEqual(result.batch.state, "rejected")
                issues = result.batch.issue_ids.filtered(lambda i: i.code == code)
                self.assertTrue(issues, f"{name}: expected an issue {code}, got {result.batch.issue_ids.mapped('code')}")
                self.assertIn(file, issues.mapped("file"))
                self.assertIn(file, result.report)
                self.assertIn("ABGELEHNT", result.report)
                self.assertEqual(self.snapshot(), before, f"{name}: the database must be unchanged")
        self.assertFalse(self.Entry.search([("kb_id", "=", "lb-tst-04")]), "a valid entry of a bad batch is not applied")
        self.env.cr.execute("SELECT count(*) FROM pv_kb_entry WHERE name LIKE '%%Ã%%'")
        self.assertEqual(self.env.cr.fetchone()[0], 0, "never mojibake in the database")

    def test_failure_while_applying_rolls_back_everything(self):
        self.run_import(batch_files(three_entries()))
        before = self.snapshot()
        entries = three_entries(**{"lb-tst-04": entry_md("lb-tst-04")})
        entries["lb-tst-01"] = entry_md("lb-tst-01", title="Geänderter Titel")
        Chunk = type(self.env["pv.kb.chunk"])
        original = Chunk.create

        def create_then_fail(self_, vals_list):
            original(self_, vals_list)
            raise RuntimeError("Platte voll")

        with patch.object(Chunk, "create", create_then_fail), \
                mute_logger("odoo.addons.pv_kb.models.pv_kb_importer"):
            result = self.run_import(batch_files(entries))
        self.assertEqual(result.batch.state, "failed")
        self.assertIn("Platte voll", result.report)
        self.assertEqual(self.snapshot(), before)

    def test_dry_run_changes_nothing(self):
        before = self.snapshot()
        batches = self.env["pv.kb.batch"].search_count([])
        result = self.run_import(batch_files(three_entries()), dry_run=True)
        self.assertTrue(result.ok)
        self.assertEqual(result.plan.counts()["new"], 3)
        self.assertIn("Probelauf", result.report)
        self.assertIsNone(result.batch)
        self.assertEqual(self.snapshot(), before)
        self.assertEqual(self.env["pv.kb.batch"].search_count([]), batches)

    def test_demo_kb_imports_cleanly(self):
        files = self.importer._read_source(path=DEMO_KB)
        result = self.run_import(files)
        self.assertTrue(result.ok, result.report)
        self.assertGreaterEqual(result.batch.count_new, 30)
        self.assertEqual(result.batch.issue_ids.filtered(lambda i: i.level == "error"), self.env["pv.kb.batch.issue"])
        entries = self.Entry.search([])
        self.assertGreaterEqual(len(set(entries.mapped("topic"))), 8)
        # one reference is planted dangling for the health check (a withdrawn sheet, README)
        self.assertEqual({e.kb_id: e.dangling_refs for e in entries.filtered("dangling_refs")},
                         {"wiku-gfb-01": "wiku-gfb-02"})


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_import")
class TestZipGuard(KbCase):

    def _zip(self, build):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            build(zf)
        return buf.getvalue()

    def test_zip_attacks_are_refused(self):
        good = batch_files(three_entries())

        def with_member(name, data=b"x"):
            def build(zf):
                for path, content in good.items():
                    zf.writestr("wissensbasis/" + path, content)
                zf.writestr(name, data)
            return build

        def symlink(zf):
            for path, content in good.items():
                zf.writestr("wissensbasis/" + path, content)
            info = zipfile.ZipInfo("wissensbasis/dokumente/link.md")
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")

        def bomb(zf):
            for path, content in good.items():
                zf.writestr("wissensbasis/" + path, content)
            with zf.open("wissensbasis/dokumente/bomb.md", "w") as member:
                block = b"\0" * (1024 * 1024)
                for _ in range(200):
                    member.write(block)

        def many(zf):
            for i in range(5001):
                zf.writestr(f"wissensbasis/x/{i}.txt", b"")

        attacks = {
            "absolute path": with_member("/etc/cron.d/evil"),
            "dot dot": with_member("wissensbasis/../../evil.md"),
            "symlink": symlink,
            "200 MB member": bomb,
            "too many members": many,
        }
        before = self.snapshot()
        for name, build in attacks.items():
            with self.subTest(name):
                data = self._zip(build)
                with self.assertRaises(UserError):
                    self.importer._read_source(data=data)
                self.assertEqual(self.snapshot(), before)

    def test_unreadable_sources_are_clear_errors(self):
        for path in ("/nonexistent/wissensbasis", "/etc/hostname"):
            with self.subTest(path), self.assertRaises(UserError):
                self.importer._read_source(path=path)
        two_roots = zip_bytes({"a/kb.json": b"{}", "b/kb.json": b"{}"}, prefix="")
        with self.assertRaises(UserError):
            self.importer._read_source(data=two_roots)

    def test_clean_zip_reads_like_the_folder(self):
        files = batch_files(three_entries())
        read = self.importer._read_source(data=zip_bytes(files))
        self.assertEqual(read, files)


@tagged("post_install", "-at_install", "pv_kb", "pv_kb_import")
class TestImportWizard(KbCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.manager = new_test_user(cls.env, "kb_manager", groups="pv_kb.group_pv_kb_manager")
        cls.kb_user = new_test_user(cls.env, "kb_user", groups="pv_kb.group_pv_kb_user")
        cls.outsider = new_test_user(cls.env, "kb_outsider", groups="base.group_user")

    def _wizard(self, files, user=None, **vals):
        Wizard = self.env["pv.kb.import.wizard"].with_user(user or self.manager)
        return Wizard.create({"zip_file": base64.b64encode(zip_bytes(files)), "zip_filename": "batch.zip", **vals})

    def test_check_then_apply(self):
        wizard = self._wizard(batch_files(three_entries()))
        wizard.action_check()
        self.assertEqual(wizard.state, "preview")
        self.assertTrue(wizard.can_apply)
        self.assertEqual(wizard.count_new, 3)
        self.assertFalse(self.Entry.search([("kb_id", "like", "tst")]), "checking changes nothing")
        action = wizard.action_apply()
        batch = self.env["pv.kb.batch"].browse(action["res_id"])
        self.assertEqual((batch.state, batch.count_new, batch.origin), ("done", 3, "wizard"))
        self.assertEqual(batch.user_id, self.manager)
        self.assertEqual(len(self.Entry.search([("kb_id", "like", "tst")])), 3)
        # the health check after the import runs as the service (a manager only reads runs and findings)
        self.assertTrue(self.env["pv.kb.health.run"].search([("batch_id", "=", batch.id), ("trigger", "=", "import")]))

    def test_bad_batch_cannot_be_applied(self):
        files = batch_files(three_entries(), kbjson=False)
        wizard = self._wizard(files)
        wizard.action_check()
        self.assertFalse(wizard.can_apply)
        self.assertEqual(wizard.count_errors, 1)
        self.assertIn("kb.json", wizard.report)

    def test_server_path_is_for_administrators_only(self):
        with self.assertRaises(AccessError):
            self._wizard(batch_files(three_entries()), server_path=DEMO_KB)
        admin_wizard = self.env["pv.kb.import.wizard"].create({"server_path": DEMO_KB})
        admin_wizard.action_check()
        self.assertTrue(admin_wizard.can_apply, admin_wizard.report)

    def test_access_rights(self):
        self.run_import(batch_files(three_entries()))
        self.assertTrue(self.env["pv.kb.entry"].with_user(self.kb_user).search([]))
        with self.assertRaises(AccessError):
            self.env["pv.kb.entry"].with_user(self.outsider).search([])
        with self.assertRaises(AccessError):
            self.env["pv.kb.batch"].with_user(self.kb_user).search([])
        with self.assertRaises(AccessError):
            self.env["pv.kb.import.wizard"].with_user(self.kb_user).create({})
        with self.assertRaises(AccessError):
            self.env["pv.kb.entry"].with_user(self.kb_user).search([], limit=1).write({"name": "x"})


@tagged("post_install", "-at_install", "pv_kb")
class TestSchema(KbCase):

    def test_vector_column_and_indexes(self):
        cr = self.env.cr
        cr.execute("""SELECT format_type(atttypid, atttypmod) FROM pg_attribute
                       WHERE attrelid = 'pv_kb_chunk'::regclass AND attname = 'embedding'""")
        self.assertEqual(cr.fetchone()[0], "vector(1024)")
        self.assertEqual(self.Chunk._embedding_dim(), 1024)
        cr.execute("SELECT indexdef FROM pg_indexes WHERE tablename = 'pv_kb_chunk'")
        defs = " ".join(r[0] for r in cr.fetchall())
        self.assertIn("hnsw (embedding vector_cosine_ops)", defs)
        self.assertIn("gin (search_tsv)", defs)
