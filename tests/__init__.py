from . import test_import
