"""Anomaly detection: fail at the backward node that produced NaN (torch's API).

While it is on, every node the graph records keeps the Python stack of the forward call
that created it (``node.metadata["traceback_"]``, as torch), and an error raised while
running a node in backward is preceded by torch's warning quoting that stack::

    UserWarning: Error detected in SqrtBackward0. Traceback of forward call that caused the error:
      File "train.py", line 4, in <module>
        y = torch.sqrt(x)

The recording path pays for this only while the mode is on: ``recording._observe`` is
non-empty exactly then (one truth test per recorded node otherwise).
"""

from __future__ import annotations

import functools
import os
import traceback

from .._overrides import warn as _warn
from . import recording


class _AnomalyState:
    enabled = False
    check_nan = True


state = _AnomalyState()

# Frames from files under this directory are ember's own, not the user's forward call.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _capture_stack(node) -> None:
    """``recording._observe`` callback: keep the user's stack that created ``node``."""
    if not state.enabled:
        return
    frames = traceback.extract_stack()
    # Drop ember's frames at the top of the stack (the op, record), keep the caller's.
    while frames and frames[-1].filename.startswith(_PACKAGE_DIR):
        frames.pop()
    node.metadata["traceback_"] = traceback.format_list(frames)


def _set(enabled: bool, check_nan: bool) -> None:
    state.enabled = enabled
    state.check_nan = check_nan
    if enabled and _capture_stack not in recording._observe:
        recording._observe.append(_capture_stack)
    elif not enabled and _capture_stack in recording._observe:
        recording._observe.remove(_capture_stack)


def print_stack(node) -> None:
    """Warn with the forward traceback of ``node`` (torch's message for a failing node)."""
    stack = node.__dict__.get("_metadata", {}).get("traceback_")
    if not stack:
        _warn(
            f"Error detected in {node.name()}. No forward pass information available. "
            "Enable detect anomaly during forward pass for more information.",
            UserWarning,
            stacklevel=2,
        )
        return
    _warn(
        f"Error detected in {node.name()}. Traceback of forward call that caused the "
        "error:\n" + "".join(stack).rstrip("\n"),
        UserWarning,
        stacklevel=2,
    )


def is_anomaly_enabled() -> bool:
    """True while anomaly detection is on.

    Example:
        >>> import ember
        >>> with ember.autograd.set_detect_anomaly(True):
        ...     ember.is_anomaly_enabled()
        True
    """
    return state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks backward results for NaN (its ``check_nan``).

    Example:
        >>> import ember
        >>> with ember.autograd.set_detect_anomaly(True, check_nan=False):
        ...     ember.is_anomaly_check_nan_enabled()
        False
    """
    return state.check_nan


class set_detect_anomaly:
    """Turn anomaly detection on or off; usable as a call or a context manager.

    With it on, a backward node whose gradient contains NaN raises torch's error naming
    the node, instead of letting NaN flow silently into ``.grad``.

    Example:
        >>> import ember
        >>> x = ember.tensor([0.0], requires_grad=True)
        >>> with ember.autograd.set_detect_anomaly(True):
        ...     (x.sqrt() * 0).sum().backward()
        Traceback (most recent call last):
        ...
        RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (state.enabled, state.check_nan)
        _set(bool(mode), bool(check_nan))

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _set(*self.prev)


class detect_anomaly:
    """Context manager and decorator that enables anomaly detection for its block.

    It warns that it is on (as torch), and a NaN gradient raises naming the node.

    Example:
        >>> import ember
        >>> x = ember.tensor([0.0], requires_grad=True)
        >>> with ember.autograd.detect_anomaly():
        ...     (x.sqrt() * 0).sum().backward()
        Traceback (most recent call last):
        ...
        RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        _warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self.prev = (state.enabled, state.check_nan)
        _set(True, bool(self.check_nan))

    def __exit__(self, *exc) -> None:
        _set(*self.prev)

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return func(*args, **kwargs)

        return wrapper


def check_results(node, results) -> None:
    """Raise torch's error if a node's input gradients contain NaN."""
    import numpy as np

    for i, g in enumerate(results):
        if g is None:
            continue
        data = getattr(g, "_data", g)
        if np.isnan(np.asarray(data)).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
