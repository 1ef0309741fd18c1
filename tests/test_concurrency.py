"""Two people at once: imports, and who sees the settings."""
from odoo import sql_db
from odoo.exceptions import UserError
from odoo.tests import new_test_user, tagged

from psycopg2 import errors as pg_errors

from odoo.addons.pv_kb.models.pv_kb_answer_slot import release_slot
from odoo.addons.pv_kb.models.pv_kb_importer import IMPORT_LOCK_KEY

from .common import KbCase, batch_files, entry_md


@tagged("post_install", "-at_install", "pv_kb")
class TestConcurrency(KbCase):

    def test_a_second_import_is_refused_with_a_clear_message(self):
        files = batch_files({"lb-par-01": entry_md("lb-par-01")})
        other = sql_db.db_connect(self.env.cr.dbname).cursor()
        try:
            # another import holds the lock (its transaction is still running)
            other.execute("SELECT pg_advisory_lock(%s)", [IMPORT_LOCK_KEY])
            with self.assertRaises(UserError) as info:
                self.run_import(files)
            self.assertIn("Another import is running", str(info.exception))
            self.assertFalse(self.Entry.search([("kb_id", "=", "lb-par-01")]), "nothing applied")
            # a check (dry run) changes nothing and may run meanwhile
            self.assertTrue(self.run_import(files, dry_run=True).ok)
            other.execute("SELECT pg_advisory_unlock(%s)", [IMPORT_LOCK_KEY])
        finally:
            other.close()
        self.assertTrue(self.run_import(files).applied)

    def test_settings_menu_only_for_those_who_may_open_the_settings(self):
        menu = self.env.ref("pv_kb.menu_pv_kb_settings")
        self.assertIn(self.env.ref("base.group_system"), menu.group_ids)
        manager = new_test_user(self.env, "pv_kb_conc_mgr", groups="base.group_user,pv_kb.group_pv_kb_manager")
        visible = self.env["ir.ui.menu"].with_user(manager)._visible_menu_ids()
        self.assertNotIn(menu.id, visible)
        self.assertIn(self.env.ref("pv_kb.menu_pv_kb_import").id, visible)

    def _committed(self, sql, params=()):
        """``sql`` in a transaction of its own, committed (outside the test's transaction)."""
        with sql_db.db_connect(self.env.cr.dbname).cursor() as cr:
            cr.execute(sql, params)
            return cr.fetchall() if cr.description else None

    def test_a_slot_is_freed_although_a_poll_wrote_it_meanwhile(self):
        (slot,), = self._committed(
            "INSERT INTO pv_kb_answer_slot (user_id, started_at, expires_at) "
            "VALUES (%s, now(), now() + interval '10 minutes') RETURNING id", [self.env.ref("base.user_admin").id])
        self.addCleanup(self._committed, "DELETE FROM pv_kb_answer_slot WHERE id = %s", [slot])
        opened = []

        def cursor():
            cr = sql_db.db_connect(self.env.cr.dbname).cursor()
            if not opened:
                # the releasing transaction takes its snapshot, then the panel's poll writes the row
                cr.execute("SELECT count(*) FROM pv_kb_answer_slot")
                self._committed("UPDATE pv_kb_answer_slot SET polled_at = now() WHERE id = %s", [slot])
            opened.append(cr)
            return cr

        self.assertEqual(release_slot(self.registry, self.env.uid, {}, slot, pause=0.001, cursor=cursor), 2,
                         "the first try meets the poll's update, the second frees the slot")
        self.assertEqual(self._committed("SELECT count(*) FROM pv_kb_answer_slot WHERE id = %s", [slot]), [(0,)])

    def test_a_slot_release_gives_up_after_its_tries(self):
        tries = []

        def cursor():
            tries.append(1)
            raise pg_errors.SerializationFailure("could not serialize access due to concurrent update")

        with self.assertRaises(pg_errors.SerializationFailure):
            release_slot(self.registry, self.env.uid, {}, 1, tries=3, pause=0.001, cursor=cursor)
        self.assertEqual(len(tries), 3)
