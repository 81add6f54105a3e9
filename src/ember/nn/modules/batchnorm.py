"""``torch.nn.modules.batchnorm``: the batch-norm layers (defined with the other norms)."""

from .normalization import BatchNorm1d, BatchNorm2d  # noqa: F401

__all__ = ["BatchNorm1d", "BatchNorm2d"]
