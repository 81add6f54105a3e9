"""``torch.utils.hooks``: the handle a ``register_*hook`` call returns."""

from .._hooks import RemovableHandle  # noqa: F401

__all__ = ["RemovableHandle"]
