from . import request_input
from . import main
