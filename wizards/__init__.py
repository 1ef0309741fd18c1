from . import pv_kb_import_wizard
