from . import models
from . import wizards
