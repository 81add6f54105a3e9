"""The thread-local modes that every layer consults: grad mode and inference mode.

They live at the bottom of the package (below ``_tensor`` and ``autograd``) because tensor
creation reads them too; ``ember.autograd.grad_mode`` holds the public context managers.
"""

from __future__ import annotations

import threading


class ModeState(threading.local):
    """Per-thread flags; the class attributes are the defaults every new thread sees."""

    enabled = True  # grad mode: operations on tensors that require grad are recorded
    inference = False  # inside inference_mode(): new tensors are inference tensors


state = ModeState()
