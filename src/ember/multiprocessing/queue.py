"""``torch.multiprocessing.queue``: the standard library's machinery serves ember tensors
(NumPy arrays pickle by value), so this module re-exports it."""

from multiprocessing.queues import JoinableQueue, Queue, SimpleQueue  # noqa: F401
