"""Pure-Python engine of pv_kb, in wings by stage (no module at this level).

Floors, each importing only from floors below: text (ground) < pii < llm < kb, search < facts <
answer; evaluation, cockpit and settings (the declaration of every setting) stand apart. Nothing here
imports Odoo: it is unit-tested with pytest (tests/lib) and called by the thin Odoo glue in models/.
Modules import each other relatively so that they work both as lib.<wing>.<module> (pytest) and
odoo.addons.pv_kb.lib.<wing>.<module> (Odoo).
"""
