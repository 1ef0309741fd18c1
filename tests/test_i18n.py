import os

import polib

from odoo.tests import TransactionCase, tagged
from odoo.tools.translate import TranslationModuleReader

PO_FILE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "i18n", "de.po")


@tagged("post_install", "-at_install", "pv_kb")
class TestTranslations(TransactionCase):

    def test_every_term_of_the_addon_has_a_german_translation(self):
        self.maxDiff = None
        # what `odoo-bin i18n export pv_kb` would list: field labels and help, selections, views, menus, _()
        terms = {source for module, _type, _name, _res_id, source, _value, _comments
                 in TranslationModuleReader(self.env.cr, modules=["pv_kb"]) if module == "pv_kb" and source}
        self.assertGreater(len(terms), 200, "the reader found the addon's terms")
        translated = {e.msgid for e in polib.pofile(PO_FILE) if e.msgstr and not e.obsolete}
        self.assertEqual(sorted(terms - translated), [], "terms without a translation in i18n/de.po")

    def test_the_po_file_loads_into_odoo(self):
        # Odoo's reader needs "#. module: pv_kb" on every entry (a missing one stops loading German for the addon)
        from odoo.tools.translate import PoFileReader
        missing = [e.msgid for e in polib.pofile(PO_FILE) if not e.obsolete and "module: pv_kb" not in (e.comment or "")]
        self.assertEqual(missing, [], "entries without the module comment")
        self.assertGreater(len(list(PoFileReader(PO_FILE))), 200)
