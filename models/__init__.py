from . import pv_kb_tag
from . import pv_kb_batch
from . import pv_kb_entry
from . import pv_kb_chunk
from . import pv_kb_synonym
from . import pv_kb_importer
