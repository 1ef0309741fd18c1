from . import controllers
from . import models
from . import wizards
