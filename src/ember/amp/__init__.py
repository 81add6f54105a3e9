"""``torch.amp``: autocast regions and gradient scaling (see the two modules).

Example:
    >>> import ember
    >>> ember.amp.GradScaler("cpu").get_scale()
    65536.0
"""

from . import autocast_mode, grad_scaler
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = [
    "GradScaler",
    "autocast",
    "autocast_mode",
    "custom_bwd",
    "custom_fwd",
    "grad_scaler",
    "is_autocast_available",
]
