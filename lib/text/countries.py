"""The states other than Austria a question may name, as regular-expression parts (lower case, used with re.I):
the subject gate's "another state's law" (lib/answer/gate.py) and the facts' default Inland (lib/facts/phrasing.py)
read the same list. Pure; imports nothing of pv_kb.
"""
from __future__ import annotations

COUNTRIES = {
    "Deutschland": r"deutschland", "Schweiz": r"schweiz|schweizer\w*", "Italien": r"italien\w*",
    "Slowenien": r"slowenien", "Ungarn": r"ungarn", "Tschechien": r"tschechien", "Slowakei": r"slowakei",
    "Liechtenstein": r"liechtenstein", "Frankreich": r"frankreich", "Spanien": r"spanien", "Polen": r"polen",
    "Kroatien": r"kroatien", "Niederlande": r"niederlande\w*", "Belgien": r"belgien", "Luxemburg": r"luxemburg",
    "Großbritannien": r"gro(?:ß|ss)britannien|england", "USA": r"usa|vereinigten\s+staaten",
}
# any of them, for a search with word boundaries around it
ANY_COUNTRY = "|".join(COUNTRIES.values())
