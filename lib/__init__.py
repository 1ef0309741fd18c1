"""Pure-Python engine of pv_kb.

Nothing in this package imports Odoo: it is unit-tested with pytest
(``tests/lib``) and called by the thin Odoo glue in ``models/``.
Modules import each other relatively so that they work both as
``lib.<module>`` (pytest) and ``odoo.addons.pv_kb.lib.<module>`` (Odoo).
"""
