"""PyTorch-compatible ``repr`` formatting for tensors backed by NumPy arrays.

The output is meant to be character-for-character identical to what PyTorch 2.13 prints
for a dense CPU tensor with the same values, dtype and print options.  The algorithm
mirrors torch's: pick one formatting mode (integer-valued, fixed point or scientific) and
one column width per tensor from the elements that will actually be shown, then lay the
elements out in nested brackets, wrapping long rows at ``linewidth``.

This module deliberately depends on nothing but NumPy, the standard library and
``ember._meta`` (NumPy only) because it runs on every ``print`` of a tensor.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ._meta import MetaArray

__all__ = [
    "format_tensor",
    "get_default_numpy_dtype",
    "get_printoptions",
    "printoptions",
    "set_default_numpy_dtype",
    "set_printoptions",
]

# ---------------------------------------------------------------------------
# Print options
# ---------------------------------------------------------------------------

_PROFILES: dict[str, dict[str, Any]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}

# Key order matters: get_printoptions() must list the options in torch's order.
_options: dict[str, Any] = {**_PROFILES["default"], "sci_mode": None}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set the options used when printing tensors (same semantics as ``torch``).

    Args:
        precision: digits after the decimal point for floating point output (default 4).
        threshold: number of elements above which the output is summarised with ``...``
            (default 1000).
        edgeitems: number of leading and trailing items shown per dimension when
            summarising (default 3).
        linewidth: characters per line used to decide where rows wrap (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``; resets the four options above
            before any explicitly given option is applied.  Unknown names are ignored.
        sci_mode: ``True``/``False`` forces scientific notation on/off; ``None`` lets the
            formatter decide.  Like torch, this option is reset on *every* call.

    Example:
        >>> import ember
        >>> ember.set_printoptions(precision=2)
        >>> ember.tensor([1 / 3, 2.0])
        tensor([0.33, 2.00])
        >>> ember.set_printoptions(profile="default")
    """
    if profile is not None and profile in _PROFILES:
        _options.update(_PROFILES[profile])
    if precision is not None:
        _options["precision"] = precision
    if threshold is not None:
        _options["threshold"] = threshold
    if edgeitems is not None:
        _options["edgeitems"] = edgeitems
    if linewidth is not None:
        _options["linewidth"] = linewidth
    # torch assigns sci_mode unconditionally, so omitting it goes back to automatic mode.
    _options["sci_mode"] = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Return the current print options as a dict usable as ``set_printoptions(**opts)``."""
    return dict(_options)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Context manager that applies ``set_printoptions(**kwargs)`` temporarily."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# ---------------------------------------------------------------------------
# Default dtype hook (driven by ember's dtype module)
# ---------------------------------------------------------------------------

_default_dtype: list[np.dtype] = [np.dtype(np.float32)]


def set_default_numpy_dtype(dt: Any) -> None:
    """Record the default floating dtype; it decides when ``dtype=...`` is printed."""
    _default_dtype[0] = np.dtype(dt)


def get_default_numpy_dtype() -> np.dtype:
    """Return the default floating dtype as last given to :func:`set_default_numpy_dtype`."""
    return _default_dtype[0]


_TORCH_DTYPE_NAMES: dict[np.dtype, str] = {
    np.dtype(np.float16): "torch.float16",
    np.dtype(np.float32): "torch.float32",
    np.dtype(np.float64): "torch.float64",
    np.dtype(np.complex64): "torch.complex64",
    np.dtype(np.complex128): "torch.complex128",
    np.dtype(np.int8): "torch.int8",
    np.dtype(np.int16): "torch.int16",
    np.dtype(np.int32): "torch.int32",
    np.dtype(np.int64): "torch.int64",
    np.dtype(np.uint8): "torch.uint8",
    np.dtype(np.uint16): "torch.uint16",
    np.dtype(np.uint32): "torch.uint32",
    np.dtype(np.uint64): "torch.uint64",
    np.dtype(np.bool_): "torch.bool",
}


def _dtype_name(dt: np.dtype) -> str:
    name = _TORCH_DTYPE_NAMES.get(dt)
    if name is None:
        # Byte-swapped and other exotic arrays still get a readable name.
        name = _TORCH_DTYPE_NAMES.get(dt.newbyteorder("="), "torch." + dt.name)
    return name


_INT64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)


def _shows_dtype(dt: np.dtype) -> bool:
    """Whether torch appends ``dtype=`` for a non-empty tensor of this dtype."""
    default = _default_dtype[0]
    default_complex = np.dtype(np.complex128 if default == np.float64 else np.complex64)
    return dt not in (default, default_complex, _INT64, _BOOL)


# ---------------------------------------------------------------------------
# Element formatting
# ---------------------------------------------------------------------------


def _format_floats(
    values: np.ndarray, precision: int, sci_option: bool | None
) -> tuple[list[str], int]:
    """Format a flat real floating array the way torch's formatter does.

    Returns the cells and the formatter width.  The mode and width are decided from the
    non-zero finite values only, so cells for ``nan``, ``inf`` or ``-0.`` may come out
    wider than the width (torch does the same).
    """
    items = values.tolist()
    as_f64 = values.astype(np.float64, copy=False)
    usable = np.isfinite(as_f64) & (as_f64 != 0)
    if not usable.any():
        # Nothing to measure: torch falls back to integer style with width 1.
        return [_integral_cell(v) for v in items], 1

    magnitudes = np.abs(as_f64[usable])
    smallest = float(magnitudes.min())
    largest = float(magnitudes.max())
    if sci_option is None:
        sci = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
    else:
        sci = sci_option

    if sci:
        spec = f".{precision}e"
        cells = [format(v, spec) for v in items]
    elif np.all(np.ceil(magnitudes) == magnitudes):
        cells = [_integral_cell(v) for v in items]
    else:
        spec = f".{precision}f"
        cells = [format(v, spec) for v in items]

    width = max(len(c) for c, ok in zip(cells, usable.tolist()) if ok)
    return [c.rjust(width) for c in cells], width


def _integral_cell(value: float) -> str:
    # A trailing "." keeps integer-valued floats recognisable as floats.
    if math.isinf(value) or math.isnan(value):
        return format(value, ".0f")
    return format(value, ".0f") + "."


def _format_plain(values: np.ndarray) -> tuple[list[str], int]:
    """Format a flat integer or bool array into right-aligned cells plus their width."""
    cells = [str(v) for v in values.tolist()]
    width = max(len(c) for c in cells)
    return [c.rjust(width) for c in cells], width


def _format_cells(shown: np.ndarray) -> tuple[list[str], int]:
    """Return the formatted cells of ``shown`` (C order) and the per-element line length."""
    precision = _options["precision"]
    sci_option = _options["sci_mode"]
    flat = shown.reshape(-1)
    kind = flat.dtype.kind
    if kind == "V":  # ml_dtypes' bfloat16: every value is exact in float32
        flat, kind = flat.astype(np.float32), "f"
    if kind == "c":
        real_cells, real_width = _format_floats(flat.real, precision, sci_option)
        imag_cells, imag_width = _format_floats(flat.imag, precision, sci_option)
        cells = []
        for re_str, im_str in zip(real_cells, imag_cells):
            im_str = (im_str + "j").lstrip()
            # A signed imaginary part ("-1.0j", "+0.j") already carries its separator.
            cells.append(re_str + im_str if im_str[0] in "+-" else re_str + "+" + im_str)
        # Each complex element occupies both widths, the "j" and the ", " separator.
        return cells, real_width + imag_width + 3
    if kind == "f":
        cells, width = _format_floats(flat, precision, sci_option)
    else:
        cells, width = _format_plain(flat)
    return cells, width + 2


# ---------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------


def _layout(
    cells: list[str],
    shape: tuple[int, ...],
    cut: list[bool],
    edge: int,
    indent: int,
    element_length: int,
) -> str:
    """Nest ``cells`` into brackets, inserting ``...`` where a dimension was cut."""
    linewidth = _options["linewidth"]
    ndim = len(shape)
    strides = [1] * ndim
    for axis in range(ndim - 2, -1, -1):
        strides[axis] = strides[axis + 1] * shape[axis + 1]

    def build(offset: int, axis: int, depth_indent: int) -> str:
        count = shape[axis]
        if axis == ndim - 1:
            row = cells[offset : offset + count]
            if cut[axis]:
                row = row[:edge] + [" ..."] + row[edge:]
            per_line = max(1, math.floor((linewidth - depth_indent) / element_length))
            lines = [", ".join(row[i : i + per_line]) for i in range(0, len(row), per_line)]
            return "[" + (",\n" + " " * (depth_indent + 1)).join(lines) + "]"
        step = strides[axis]
        parts = [build(offset + k * step, axis + 1, depth_indent + 1) for k in range(count)]
        if cut[axis]:
            parts = parts[:edge] + ["..."] + parts[edge:]
        # One blank line per remaining inner dimension separates the blocks.
        sep = "," + "\n" * (ndim - axis - 1) + " " * (depth_indent + 1)
        return "[" + sep.join(parts) + "]"

    return build(0, 0, indent)


def _tensor_body(data: np.ndarray, indent: int) -> str:
    """Format the bracketed contents of a non-empty array."""
    summarize = data.size > _options["threshold"]
    edge = _options["edgeitems"]
    if data.ndim == 0:
        cells, _ = _format_cells(data)
        return cells[0]
    if summarize and not edge:
        return "[...]"

    # Only the elements that will be printed take part in choosing the format, exactly
    # like torch's summarised formatter, which also keeps huge tensors cheap to print.
    shown = data
    cut = [False] * data.ndim
    if summarize:
        for axis, count in enumerate(data.shape):
            if count > 2 * edge:
                keep = np.concatenate([np.arange(edge), np.arange(count - edge, count)])
                shown = shown.take(keep, axis=axis)
                cut[axis] = True
    cells, element_length = _format_cells(shown)
    return _layout(cells, shown.shape, cut, edge, indent, element_length)


def _add_suffixes(
    text: str, suffixes: Sequence[str], indent: int, force_newline: bool = False
) -> str:
    """Append ``, suffix`` items, moving one to a new line when it would overflow (the
    first one always, with ``force_newline``: sparse COO tensors)."""
    linewidth = _options["linewidth"]
    pieces = [text]
    # torch measures the last line with an off-by-two quirk; keep it for identical output.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
            force_newline = False
        else:
            pieces.append(", " + suffix)
            last_line_len += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


def format_tensor(data: np.ndarray, suffixes: list[str], name: str | None = None) -> str:
    """Return the PyTorch-style repr: 'tensor(<data>[, dtype=...][, <suffixes>...])'.

    Args:
        data: the tensor's values; any shape, bool, integer, floating or complex dtype.
        suffixes: already formatted items (e.g. ``"requires_grad=True"`` or
            ``"grad_fn=<AddBackward0>"``) appended after the ``size=``/``dtype=`` items
            that this function adds itself when torch would.
        name: the class name a Tensor subclass prints instead of ``tensor``.

    Returns:
        The string ``repr(torch_tensor)`` would produce for a CPU tensor with the same
        values under the current print options and default dtype.
    """
    prefix = f"{name or 'tensor'}("
    indent = len(prefix)
    extra: list[str] = []
    if isinstance(data, MetaArray):  # no values: torch prints the device, size and dtype
        extra.append("device='meta'")
        extra.append("size=" + str(tuple(data.shape)))
        if data.dtype != _default_dtype[0]:
            extra.append("dtype=" + _dtype_name(data.dtype))
        return _add_suffixes(prefix + "...", extra + list(suffixes), indent)
    data = np.asarray(data)
    if data.size == 0:
        # numpy-style: a 1-d empty shape is implied by "[]", any other shape is spelled out.
        if data.ndim != 1:
            extra.append("size=" + str(tuple(data.shape)))
        # No elements to infer the dtype from, so even int64/bool are named.
        if data.dtype != _default_dtype[0]:
            extra.append("dtype=" + _dtype_name(data.dtype))
        body = "[]"
    else:
        if not _options["edgeitems"]:
            extra.append("size=" + str(tuple(data.shape)))
        if _shows_dtype(data.dtype):
            extra.append("dtype=" + _dtype_name(data.dtype))
        body = _tensor_body(data, indent)
    return _add_suffixes(prefix + body, extra + list(suffixes), indent)


def format_sparse(parts: Sequence[tuple[str, np.ndarray]], suffixes: list[str], coo: bool) -> str:
    """torch's repr of a sparse tensor from its index and value arrays, e.g.
    ``tensor(indices=tensor([[0, 1]]),\n       values=tensor([1., 2.]),\n       size=(2,),
    nnz=2, layout=torch.sparse_coo)``.

    Args:
        parts: ``(label, array)`` pairs in torch's order (``indices``, ``values``, or
            ``crow_indices``, ``col_indices``, ``values``).
        suffixes: the items after the arrays (``size=``, ``nnz=``, ``dtype=``, ``layout=``...).
        coo: a COO tensor, whose suffixes always start on a new line.
    """
    indent = len("tensor(")
    pieces = []
    for label, arr in parts:
        prefix = f"{label}=tensor("
        arr = np.asarray(arr)
        if arr.size:
            body = _tensor_body(arr, indent + len(prefix))
        else:
            body = "[], size=" + str(tuple(arr.shape))
        pieces.append(prefix + body + ")")
    text = "tensor(" + (",\n" + " " * indent).join(pieces)
    return _add_suffixes(text, suffixes, indent, force_newline=coo)
