"""``torch.autograd.variable``: the legacy ``Variable`` (tensors are variables)."""

from .api import Variable  # noqa: F401
