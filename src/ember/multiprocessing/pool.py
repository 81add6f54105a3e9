"""``torch.multiprocessing.pool``: the standard library's machinery serves ember tensors
(NumPy arrays pickle by value), so this module re-exports it."""

from multiprocessing.pool import *  # noqa: F403
