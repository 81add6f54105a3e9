"""``torch.cpu.amp.autocast_mode``."""

from . import autocast  # noqa: F401
