"""``ember.testing``: ``assert_close`` and ``make_tensor``, as in ``torch.testing``.

``assert_close`` compares tensors, numbers, booleans, None and (nested) sequences and
mappings of them, with torch's default tolerances per dtype and torch's failure reports.

Example:
    >>> import ember
    >>> ember.testing.assert_close(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0 + 1e-7]))
"""

from __future__ import annotations

import collections.abc
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _creation, _dtype
from ._tensor import Tensor

__all__ = ["assert_close", "make_tensor"]

# torch's default (rtol, atol) per dtype; integers and bools compare exactly.
_DEFAULT_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


class _Mismatch(Exception):
    """A comparison failed: ``message`` is what ``assert_close`` reports."""

    def __init__(self, message: str, kind: type = AssertionError) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


def _tolerances(np_dtype, rtol, atol) -> tuple:
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}."
        )
    if rtol is not None:
        return rtol, atol
    return _DEFAULT_TOLERANCES.get(np.dtype(np_dtype).name, (0.0, 0.0))


def _fmt(x) -> str:
    return repr(float(x)) if isinstance(x, (float, np.floating)) else repr(x)


def _compare_tensors(actual: Tensor, expected: Tensor, rtol, atol, equal_nan, check_dtype):
    a, e = actual._data, expected._data
    if a.shape != e.shape:
        raise _Mismatch(
            f"The values for attribute 'shape' do not match: {actual.shape} != {expected.shape}."
        )
    if a.dtype != e.dtype:
        if check_dtype:
            raise _Mismatch(
                f"The values for attribute 'dtype' do not match: {actual.dtype} != "
                f"{expected.dtype}."
            )
        common = np.promote_types(a.dtype, e.dtype)
        a, e = a.astype(common), e.astype(common)
    rtol, atol = _tolerances(a.dtype, rtol, atol)
    if a.dtype == np.bool_:
        a, e = a.astype(np.uint8), e.astype(np.uint8)
    with np.errstate(all="ignore"):
        if a.dtype.kind in "fcV":
            close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
        else:
            close = np.abs(a.astype(np.int64) - e.astype(np.int64)) <= atol + rtol * np.abs(
                e.astype(np.int64)
            )
    if close.all():
        return
    raise _Mismatch(_tensor_report(a, e, close, rtol, atol))


def _tensor_report(a, e, close, rtol, atol) -> str:
    exact = rtol == 0 and atol == 0
    if a.ndim == 0:  # a 0-d tensor: torch reports it as scalars
        return _scalar_report(a.reshape(()).item(), e.reshape(()).item(), rtol, atol)
    total = close.size
    n_bad = int(total - close.sum())
    with np.errstate(all="ignore"):
        if a.dtype.kind in "fcV":
            diff = np.abs(a - e)
            rel = diff / np.abs(e)
        else:  # integers: the difference exactly, the relative one in the default float
            diff = np.abs(a.astype(np.int64) - e.astype(np.int64))
            rel = (diff / np.abs(e.astype(np.int64))).astype(_dtype._default[0].np)
    bad = ~close
    abs_at = _argmax_where(diff, bad)
    rel_at = _argmax_where(rel, bad)
    suffix_abs = "" if exact else f" (up to {atol} allowed)"
    suffix_rel = "" if exact else f" (up to {rtol} allowed)"
    title = "Tensor-likes are not equal!" if exact else "Tensor-likes are not close!"
    return (
        f"{title}\n\n"
        f"Mismatched elements: {n_bad} / {total} ({n_bad / total * 100:.1f}%)\n"
        f"Greatest absolute difference: {_item(diff[abs_at])} at index {abs_at}{suffix_abs}\n"
        f"Greatest relative difference: {_item(rel[rel_at])} at index {rel_at}{suffix_rel}"
    )


def _item(x) -> str:
    value = x.item()
    return repr(value)


def _argmax_where(values: np.ndarray, mask: np.ndarray) -> tuple:
    """The index of the largest masked value (NaN counts as largest), as torch reports it."""
    masked = np.where(mask, values, -np.inf).astype(np.float64)
    nan = mask & np.isnan(values.astype(np.float64))
    flat = int(np.flatnonzero(nan.ravel())[0]) if nan.any() else int(np.argmax(masked))
    return tuple(int(i) for i in np.unravel_index(flat, values.shape))


def _compare_numbers(actual, expected, rtol, atol, equal_nan):
    if type(actual) is not type(expected):
        raise _Mismatch(f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    dt = np.float64 if isinstance(actual, float) else np.int64
    if isinstance(actual, complex):
        dt = np.complex128
    rtol, atol = _tolerances(dt, rtol, atol)
    if math.isnan(abs(actual)) and math.isnan(abs(expected)) and equal_nan:
        return
    diff = abs(actual - expected)
    if diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(_scalar_report(actual, expected, rtol, atol))


def _scalar_report(actual, expected, rtol, atol) -> str:
    diff = abs(actual - expected)
    rel = diff / abs(expected) if expected else math.inf
    exact = rtol == 0 and atol == 0
    title = "Scalars are not equal!" if exact else "Scalars are not close!"
    abs_line = f"Absolute difference: {diff}" + ("" if exact else f" (up to {atol} allowed)")
    rel_line = f"Relative difference: {rel}" + ("" if exact else f" (up to {rtol} allowed)")
    return f"{title}\n\nExpected {expected} but got {actual}.\n{abs_line}\n{rel_line}"


def _compare(actual, expected, path: str, options: dict) -> None:
    rtol, atol = options["rtol"], options["atol"]
    equal_nan, check_dtype = options["equal_nan"], options["check_dtype"]
    try:
        if actual is None or expected is None:
            if actual is not expected:
                raise _Mismatch(f"None mismatch: {actual} is not {expected}")
        elif isinstance(actual, bool) or isinstance(expected, bool):
            if not (isinstance(actual, bool) and isinstance(expected, bool)):
                raise _no_pair(actual, expected)
            if actual is not expected:
                raise _Mismatch(f"Booleans mismatch: {actual} is not {expected}")
        elif isinstance(actual, Tensor) or isinstance(expected, Tensor):
            if not (isinstance(actual, Tensor) and isinstance(expected, Tensor)):
                raise _no_pair(actual, expected)
            _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype)
        elif isinstance(actual, (int, float, complex)) and isinstance(
            expected, (int, float, complex)
        ):
            _compare_numbers(actual, expected, rtol, atol, equal_nan)
        elif isinstance(actual, collections.abc.Mapping) and isinstance(
            expected, collections.abc.Mapping
        ):
            _compare_mappings(actual, expected, path, options)
            return
        elif _is_sequence(actual) and _is_sequence(expected):
            if len(actual) != len(expected):
                raise _Mismatch(
                    f"The length of the sequences mismatch: {len(actual)} != {len(expected)}"
                )
            for i, (x, y) in enumerate(zip(actual, expected)):
                _compare(x, y, f"{path}[{i}]", options)
            return
        else:
            raise _no_pair(actual, expected)
    except _Mismatch as m:
        if path and not hasattr(m, "located"):
            m.message += f"\n\nThe failure occurred for item {path}"
            m.located = True
        raise


def _compare_mappings(actual, expected, path: str, options: dict) -> None:
    a_keys, e_keys = set(actual), set(expected)
    if a_keys != e_keys:
        missing = sorted(e_keys - a_keys, key=repr)
        extra = sorted(a_keys - e_keys, key=repr)
        raise _Mismatch(
            "The keys of the mappings do not match:\n"
            f"Missing keys in the actual mapping: {missing}\n"
            f"Additional keys in the actual mapping: {extra}"
        )
    for key in expected:
        _compare(actual[key], expected[key], f"{path}[{key!r}]", options)


def _is_sequence(x) -> bool:
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _no_pair(actual, expected) -> _Mismatch:
    return _Mismatch(
        "No comparison pair was able to handle inputs of type "
        f"{_type_repr(actual)} and {_type_repr(expected)}.",
        TypeError,
    )


def _type_repr(x) -> str:
    # ember's Tensor stands for torch.Tensor in torch's message.
    return "<class 'torch.Tensor'>" if isinstance(x, Tensor) else repr(type(x))


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Assert that ``actual`` and ``expected`` are close: ``|a - e| <= atol + rtol * |e|``
    elementwise, with torch's default tolerances for the dtype when none are given.

    Example:
        >>> import ember
        >>> ember.testing.assert_close(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.5]))
        Traceback (most recent call last):
        ...
        AssertionError: Tensor-likes are not close!
        <BLANKLINE>
        Mismatched elements: 1 / 2 (50.0%)
        Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
        Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)
    """
    if (rtol is None) != (atol is None):
        _tolerances(np.float64, rtol, atol)  # raises torch's ValueError
    options = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan, "check_dtype": check_dtype}
    try:
        _compare(actual, expected, "", options)
    except _Mismatch as m:
        if m.kind is AssertionError and msg is not None:
            text = msg(m.message) if callable(msg) else msg
            raise AssertionError(text) from None
        raise m.kind(m.message) from None


def make_tensor(
    *shape,
    dtype,
    device=None,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format=None,
) -> Tensor:
    """A tensor of ``shape`` filled with values uniform on ``[low, high)`` (torch's defaults:
    ``[-9, 9)`` for floats and signed integers, ``[0, 10)`` for unsigned, ``{False, True}``
    for bools).

    Example:
        >>> import ember
        >>> t = ember.testing.make_tensor(2, 3, dtype=ember.float32, low=0, high=1)
        >>> t.shape, bool((t >= 0).all() and (t < 1).all())
        (torch.Size([2, 3]), True)
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    np_dtype = _dtype.to_numpy_dtype(dtype)
    rng = _creation._rng(None)
    if np_dtype == np.bool_:
        data = rng.random(shape) < 0.5
    else:
        kind = np_dtype.kind
        lo_default, hi_default = (0, 10) if kind == "u" else (-9, 9)
        lo = lo_default if low is None else low
        hi = hi_default if high is None else high
        if lo > hi:
            raise ValueError(f"low={lo} must not be greater than high={hi}")
        if kind in "iu":
            data = rng.integers(math.ceil(lo), math.ceil(hi) if hi > lo else lo + 1, size=shape)
        else:
            data = lo + (hi - lo) * rng.random(shape)
            if kind == "c":
                data = data + 1j * (lo + (hi - lo) * rng.random(shape))
        data = data.astype(np_dtype)
        if exclude_zero:
            tiny = np.finfo(np.float32 if kind == "V" else np_dtype).tiny if kind in "fcV" else 1
            data[data == 0] = tiny
    t = Tensor._wrap(np.ascontiguousarray(data))
    if noncontiguous and t._data.size > 1:
        doubled = np.repeat(t._data, 2, axis=-1)
        t = Tensor._wrap(doubled[..., ::2])
    if requires_grad:
        t.requires_grad_(True)
    return t
