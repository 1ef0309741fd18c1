from . import test_import
from . import test_retrieval
from . import test_agent
from . import test_controllers
from . import test_settings
from . import test_eval
from . import test_ui
from . import test_i18n
