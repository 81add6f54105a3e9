"""``torch._inductor``: torch.compile's code generator. ember.compile generates its own code;
``config`` keeps the settings programs write (``coordinate_descent_tuning``...) with no
effect, so that those programs run.

Example:
    >>> import ember
    >>> ember._inductor.config.coordinate_descent_tuning
    False
"""

from . import config

__all__ = ["config"]
