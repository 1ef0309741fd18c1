from . import pv_kb_import_wizard
from . import pv_kb_bakeoff_wizard
