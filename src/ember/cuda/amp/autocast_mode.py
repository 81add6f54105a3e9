"""``torch.cuda.amp.autocast_mode``."""

from . import autocast, custom_bwd, custom_fwd  # noqa: F401
