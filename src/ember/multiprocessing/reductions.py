"""``torch.multiprocessing.reductions``: the standard library's machinery serves ember tensors
(NumPy arrays pickle by value), so this module re-exports it."""

from multiprocessing.reduction import *  # noqa: F403
