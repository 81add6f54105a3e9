"""Anomaly detection: fail at the backward node that produced NaN (torch's API)."""

from __future__ import annotations

import functools
import warnings


class _AnomalyState:
    enabled = False
    check_nan = True


state = _AnomalyState()


def is_anomaly_enabled() -> bool:
    """True while anomaly detection is on."""
    return state.enabled


def is_anomaly_check_nan_enabled() -> bool:
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
        state.enabled = bool(mode)
        state.check_nan = bool(check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        state.enabled, state.check_nan = self.prev


class detect_anomaly:
    """Context manager and decorator that enables anomaly detection for its block."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self.prev = (state.enabled, state.check_nan)
        state.enabled = True
        state.check_nan = self.check_nan

    def __exit__(self, *exc) -> None:
        state.enabled, state.check_nan = self.prev

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
