"""``torch.cpu.amp.grad_scaler``."""

from . import GradScaler  # noqa: F401
