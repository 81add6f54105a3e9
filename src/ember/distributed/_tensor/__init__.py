"""``torch.distributed._tensor``: the old name of ``torch.distributed.tensor``."""

from ..tensor import *  # noqa: F403
from ..tensor import __all__  # noqa: F401
