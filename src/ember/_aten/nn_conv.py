"""Windowed ops: 1-, 2- and 3-d convolutions (plain and transposed), max/avg pooling (2-d,
and 1-d through it as torch does), adaptive pooling, unfold/fold (im2col/col2im) and pad.

Every window op works on a padded copy of the input whose size is exactly what the
windows cover, seen through one ``as_strided`` view of shape ``(N, C, *k, *out)``.
Forward passes are one matmul (conv) or a loop over the kernel offsets (pools); backward
passes scatter back with the same offset loop (col2im). A transposed convolution is the
adjoint of a plain one: its forward is col2im of ``W^T x``, its backward im2col. Adaptive
pooling gathers its variable windows (padded to the largest, masked). No Python loop runs
over pixels; a convolution of a large batch makes its columns (and GEMMs) a few images at
a time, so that they stay in the cache. Where a C compiler is present, 2-d im2col/col2im
and 2-d max pooling run the compiler's C loops (checked against the NumPy code first).

Each op is a ``defop`` declaration: its forward and VJP on arrays, its ``composite`` (the op
written with unfold/fold, the linear im2col/col2im ops, and other ember ops) for exact
higher orders, and its forward mode: unfold, fold, average pooling and padding are linear
(their tangent is the op on the tangent); a convolution's tangent is the product rule; max
pooling's is the tangent at each window's recorded maximum (the forward's choice among ties).
"""

from __future__ import annotations

import itertools
import math
import operator

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._dtype import scalar_name
from .._mode import autocast_active as _AUTOCAST
from .._mode import autocast_lower
from .._tensor import Tensor
from ..autograd.recording import shape_constant
from ._core import (
    LINEAR,
    QUIET,
    defop,
    intp,
    is_raw,
    legacy_type_name,
    quiet_reset,
    quiet_set,
    record,
    require_tensor,
    with_eager_kernel,
)

_wrap = Tensor._wrap
_NO_COLS = (None,)


def _quietly(fn, *args):
    """``fn(*args)`` with NumPy's floating-point warnings off (torch is silent on inf, nan)."""
    token = quiet_set(QUIET)
    try:
        return fn(*args)
    finally:
        quiet_reset(token)


# -- geometry helpers ------------------------------------------------------------------


def _pair(value, name: str, n: int = 2) -> tuple:
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return (int(value[0]),) * n
        if len(value) != n:
            raise RuntimeError(
                f"expected {name} to be a single integer value or a list of {n} values to "
                f"match the convolution dimensions, but got {name}={list(value)}"
            )
        return tuple(int(v) for v in value)
    return (int(value),) * n


def _span(out: int, k: int, s: int, d: int) -> int:
    """Input extent covered by ``out`` windows of size ``k`` (stride ``s``, dilation ``d``)."""
    return (out - 1) * s + d * (k - 1) + 1


def _windows(xp: np.ndarray, k: tuple, s: tuple, d: tuple, out: tuple) -> np.ndarray:
    """A read-only ``(N, C, *k, *out)`` view of the windows of ``xp`` (N, C, *spatial)."""
    st = xp.strides[2:]
    return as_strided(
        xp,
        xp.shape[:2] + tuple(k) + tuple(out),
        xp.strides[:2]
        + tuple(a * dd for a, dd in zip(st, d))
        + tuple(a * ss for a, ss in zip(st, s)),
        writeable=False,
    )


def _offsets(k: tuple, s: tuple, d: tuple, out: tuple):
    """``(tap, slices)`` for each kernel offset ``tap`` (a tuple): where that tap reads from."""
    for tap in itertools.product(*(range(kk) for kk in k)):
        yield (
            tap,
            tuple(
                slice(t * dd, t * dd + (o - 1) * ss + 1, ss) for t, ss, dd, o in zip(tap, s, d, out)
            ),
        )


def _place(src: np.ndarray, shape: tuple, offsets: tuple, fill=0) -> np.ndarray:
    """An array of ``shape`` filled with ``fill`` holding ``src`` shifted by ``offsets``
    (negative offsets and a smaller ``shape`` crop)."""
    if fill == 0:
        out = np.zeros(shape, dtype=src.dtype)
    else:
        out = np.full(shape, fill, dtype=src.dtype)
    dst_sl, src_sl = [], []
    for n_src, n_dst, off in zip(src.shape, shape, offsets):
        lo, hi = max(0, -off), min(n_src, n_dst - off)
        if hi <= lo:
            return out
        src_sl.append(slice(lo, hi))
        dst_sl.append(slice(lo + off, hi + off))
    out[tuple(dst_sl)] = src[tuple(src_sl)]
    return out


def _pad4(x: np.ndarray, pads: tuple, size: tuple, fill=0) -> np.ndarray:
    """``x`` (N, C, *spatial) padded by ``pads`` (the leading pads of each spatial dim) to
    spatial ``size`` (cropping too)."""
    if not any(pads) and x.shape[2:] == tuple(size):
        return x
    return _place(x, x.shape[:2] + tuple(size), (0, 0) + tuple(pads), fill)


def _unpad4(g: np.ndarray, pads: tuple, shape: tuple) -> np.ndarray:
    """The adjoint of ``_pad4``: the part of ``g`` that came from the input."""
    if not any(pads) and g.shape == tuple(shape):
        return g
    return _place(g, shape, (0, 0) + tuple(-p for p in pads))


def _col2im(cols: np.ndarray, size: tuple, k, s, d, out, dtype) -> np.ndarray:
    """Sum window values ``cols`` (N, C, kh, kw, oh, ow) back into an (N, C, *size) array."""
    n, c = cols.shape[:2]
    res = np.zeros((n, c) + tuple(size), dtype=dtype)
    lead = (slice(None), slice(None))
    for tap, sl in _offsets(k, s, d, out):
        res[lead + sl] += cols[lead + tap]
    return res


class _Geometry:
    """Sizes of one window op: kernel, stride, dilation, output, top/left pads and the
    exact padded size the windows cover (pads on the bottom/right follow from it)."""

    __slots__ = ("k", "s", "d", "out", "pads", "size", "in_size", "transposed")
    # Never changed after construction: the compiler may share it between calls.
    _immutable_param = True

    def __init__(self, in_size, k, s, d, out, pads, transposed=False) -> None:
        self.in_size = tuple(in_size)
        self.transposed = transposed
        self.k, self.s, self.d, self.out = tuple(k), tuple(s), tuple(d), tuple(out)
        self.pads = tuple(pads)
        self.size = tuple(_span(o, kk, ss, dd) for o, kk, ss, dd in zip(out, k, s, d))

    def __repr__(self) -> str:
        return (
            f"_Geometry(kernel_size={self.k}, stride={self.s}, dilation={self.d}, "
            f"padding={self.pads}, input={self.in_size}, output={self.out})"
        )


def _batched_nd(nd: int):
    """``fn`` on (N, C, *spatial) arrays with ``nd`` spatial dims, also taking unbatched
    (C, *spatial) ones, as torch's window kernels do: the result(s) then lose the batch dim."""

    def wrap(fn):
        def run(x, *args):
            if x.ndim == nd + 2:
                return fn(x, *args)
            res = fn(x[None], *args)
            return tuple(r[0] for r in res) if isinstance(res, tuple) else res[0]

        run.__name__ = run.__qualname__ = fn.__name__
        run.__doc__ = fn.__doc__
        return run

    return wrap


_batched = _batched_nd(2)


def _tap_index(tap: tuple, k: tuple) -> int:
    """The flat (row-major) index of kernel tap ``tap`` in a kernel of shape ``k``."""
    return int(np.ravel_multi_index(tap, k))


# -- unfold / fold ----------------------------------------------------------------------


def _unfold_array(x: np.ndarray, geo: _Geometry) -> np.ndarray:
    """im2col: (N, C, H, W) -> (N, C * kh * kw, L), or unbatched (C, H, W) -> (C * kh * kw, L).
    2-d windows of a float batch use the compiler's C loop where a C compiler is present (it
    checks the loop against the NumPy code, ``_unfold_numpy``, first), else the NumPy code."""
    if x.ndim == len(geo.k) + 1:
        return _unfold_array(x[None], geo)[0]
    return with_eager_kernel("im2col", _unfold_numpy, x, geo)


def _unfold_numpy(x: np.ndarray, geo: _Geometry) -> np.ndarray:
    """``_unfold_array`` of a batch in NumPy: the windows of a padded copy, copied out."""
    xp = _pad4(x, geo.pads, geo.size)
    win = _windows(xp, geo.k, geo.s, geo.d, geo.out)
    n, c = x.shape[:2]
    return win.reshape(n, c * math.prod(geo.k), math.prod(geo.out))


def _fold_array(cols: np.ndarray, geo: _Geometry) -> np.ndarray:
    """col2im, the adjoint of ``_unfold_array``: windows summed back into an image (the
    compiler's C loop for 2-d windows, as ``_unfold_array`` chooses its code)."""
    if cols.ndim == 2:
        return _fold_array(cols[None], geo)[0]
    return with_eager_kernel("col2im", _fold_numpy, cols, geo)


def _fold_numpy(cols: np.ndarray, geo: _Geometry) -> np.ndarray:
    """``_fold_array`` of a batch in NumPy: each tap's columns added into a padded image."""
    n = cols.shape[0]
    c = cols.shape[1] // math.prod(geo.k)
    c6 = cols.reshape((n, c) + geo.k + geo.out)
    xp = _col2im(c6, geo.size, geo.k, geo.s, geo.d, geo.out, cols.dtype)
    return _unpad4(xp, geo.pads, (n, c) + geo.in_size)


Im2ColBackward0 = defop(
    "Im2ColBackward0",
    params=("geo",),
    forward=_unfold_array,
    vjp={"self": lambda g, geo: _fold_array(g, geo) if is_raw(g) else _fold(g, geo)},
    jvp=LINEAR,
)

Col2ImBackward0 = defop(
    "Col2ImBackward0",
    params=("geo",),
    forward=_fold_array,
    vjp={"self": lambda g, geo: _unfold_array(g, geo) if is_raw(g) else _unfold(g, geo)},
    jvp=LINEAR,
)


def _unfold(x: Tensor, geo: _Geometry) -> Tensor:
    return record(Im2ColBackward0, _unfold_array(x._data, geo), (x,), (geo,))


def _fold(cols: Tensor, geo: _Geometry) -> Tensor:
    return record(Col2ImBackward0, _quietly(_fold_array, cols._data, geo), (cols,), (geo,))


def _conv_geometry(in_size, k, s, d, pads_tl, pads_br) -> _Geometry:
    out = []
    for n, kk, ss, dd, a, b in zip(in_size, k, s, d, pads_tl, pads_br):
        out.append((n + a + b - dd * (kk - 1) - 1) // ss + 1)
    return _Geometry(in_size, k, s, d, out, pads_tl)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Extract sliding local blocks: ``(N, C, H, W)`` -> ``(N, C * kh * kw, L)`` (im2col).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.unfold(ember.ones(1, 2, 3, 3), kernel_size=2).shape
        torch.Size([1, 8, 4])
    """
    require_tensor(input, "unfold")
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)"
        )
    k, d = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    p, s = _pair(padding, "padding"), _pair(stride, "stride")
    _check_positive(k, s, d, p)
    geo = _conv_geometry(input.shape[-2:], k, s, d, p, p)
    if min(geo.out) <= 0:
        raise RuntimeError(
            f"Given input with spatial size ({input.shape[-2]}, {input.shape[-1]}), "
            f"kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, "
            f"{p[1]}), calculated shape of the array of sliding blocks as ({geo.out[0]}, "
            f"{geo.out[1]}), but its components must be at least one."
        )
    return _unfold(input, geo)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum sliding local blocks into an image: the adjoint of ``unfold`` (col2im).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.fold(ember.ones(1, 4, 4), (3, 3), kernel_size=2)[0, 0]
        tensor([[1., 2., 1.],
                [2., 4., 2.],
                [1., 2., 1.]])
    """
    require_tensor(input, "fold")
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
            f"(got {input.dim()}D)"
        )
    size = _pair(output_size, "output_size")
    k, d = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    p, s = _pair(padding, "padding"), _pair(stride, "stride")
    _check_positive(k, s, d, p)
    geo = _conv_geometry(size, k, s, d, p, p)
    kk = k[0] * k[1]
    channels, blocks = input.shape[-2], input.shape[-1]
    if channels % kk != 0:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={channels} and "
            f"kernel_size=({k[0]}, {k[1]})"
        )
    if blocks != geo.out[0] * geo.out[1]:
        raise RuntimeError(
            f"Given output_size=({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
            f"expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {geo.out[0]} * {geo.out[1]} = {geo.out[0] * geo.out[1]}, but got "
            f"input.size(2)={blocks}."
        )
    return _fold(input, geo)


def _check_positive(k, s, d, p) -> None:
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_size={k}")
    if min(s) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(d) <= 0:
        raise RuntimeError("dilation should be greater than zero")
    if min(p) < 0:
        raise RuntimeError("negative padding is not supported")


# -- convolution (1-, 2- and 3-d, plain and transposed) -------------------------------------


# The im2col columns of a convolution are made (and multiplied) this many bytes at a time:
# a few images' worth stays in the cache between the copy and the GEMM, and the same
# buffer sizes recur (a whole batch's, tens of MB each, cost page faults at every step).
_CHUNK_BYTES = 1 << 20


def _chunk(n: int, per_image: int) -> int:
    """How many of ``n`` images make about ``_CHUNK_BYTES`` of columns (at least one)."""
    return max(1, min(n, _CHUNK_BYTES // max(per_image, 1)))


def _conv_forward(x: np.ndarray, w: np.ndarray, b, geo: _Geometry, groups: int):
    """The convolution and, for a plain one, its im2col columns (N, G, C / G * prod(k), L),
    or None when they were made a few images at a time (``_chunk``).

    A transposed convolution's ``geo`` describes the plain convolution it is the adjoint
    of: its input ``x`` has that convolution's output size ``geo.out``, its output the
    size ``geo.in_size``; the output is the columns ``W^T x`` summed back (col2im).
    """
    if x.dtype.kind == "V":  # bfloat16: computed in float32 (BLAS), rounded once
        f = np.float32
        out, cols = _conv_forward(
            x.astype(f), w.astype(f), b if b is None else b.astype(f), geo, groups
        )
        return out.astype(x.dtype), cols
    n = x.shape[0]
    nd = len(geo.k)
    lp = math.prod(geo.out)
    if geo.transposed:
        cin = x.shape[1]
        xg = x.reshape(n, groups, cin // groups, lp)
        wg = w.reshape(groups, cin // groups, -1)
        cols = np.matmul(wg.transpose(0, 2, 1), xg)  # (N, G, C_out / G * prod(k), L)
        out = _fold_array(cols.reshape(n, -1, lp), geo)
        o, cols = out.shape[1], None
    else:
        o = w.shape[0]
        kdim = math.prod(w.shape[1:])
        wg = w.reshape(groups, o // groups, kdim)
        step = _chunk(n, kdim * groups * lp * x.itemsize)
        if step < n:  # im2col a few images at a time: their columns stay in the cache
            out = np.empty((n, groups, o // groups, lp), np.result_type(x, w))
            bias = None if b is None else b.reshape(groups, o // groups, 1)
            for i in range(0, n, step):
                part = _unfold_array(x[i : i + step], geo).reshape(-1, groups, kdim, lp)
                chunk = out[i : i + step]
                np.matmul(wg, part, out=chunk)
                if bias is not None:  # (while the chunk is in the cache)
                    chunk += bias
            cols = b = None  # (the columns are recomputed for the weight's gradient)
        else:
            cols = _unfold_array(x, geo).reshape(n, groups, kdim, lp)
            out = np.matmul(wg, cols)
        out = out.reshape((n, o) + geo.out)
    if b is not None:
        out += b.reshape((o,) + (1,) * nd)
    return out, cols


def _conv_vjp(g, input, weight, bias, cols, geo, groups, needs_input_grad):
    """All three gradients (they share the reshaped output gradient)."""
    n = g.shape[0]
    lp = math.prod(geo.out)
    gx = gw = gb = None
    if geo.transposed:
        # The adjoint of col2im is im2col: the output gradient's columns.
        cin = input.shape[1]
        gcols = _unfold_array(g, geo).reshape(n, groups, -1, lp)
        if needs_input_grad[0]:
            wg = weight.reshape(groups, cin // groups, -1)
            gx = np.matmul(wg, gcols).reshape(input.shape)
        if needs_input_grad[1]:
            xg = input.reshape(n, groups, cin // groups, lp)
            gw = np.matmul(xg, gcols.transpose(0, 1, 3, 2)).sum(0).reshape(weight.shape)
    else:
        o = g.shape[1]
        g4 = g.reshape(n, groups, o // groups, lp)
        wt = weight.reshape(groups, o // groups, -1).transpose(0, 2, 1)
        step = _chunk(n, math.prod(weight.shape[1:]) * groups * lp * g.itemsize)
        if step < n:  # a few images at a time, as the forward: their columns stay in cache
            for i in range(0, n, step):
                part = g4[i : i + step]
                if needs_input_grad[0]:
                    gcols = np.matmul(wt, part)
                    res = _fold_array(gcols.reshape(len(part), -1, lp), geo)
                    if gx is None:
                        gx = np.empty((n,) + res.shape[1:], res.dtype)
                    gx[i : i + step] = res
                if needs_input_grad[1]:
                    cols = _unfold_array(input[i : i + step], geo)
                    cols = cols.reshape(len(part), groups, -1, lp).transpose(0, 1, 3, 2)
                    term = np.matmul(part, cols).sum(0)
                    gw = term if gw is None else gw + term
            if gw is not None:
                gw = gw.reshape(weight.shape)
        else:
            if needs_input_grad[0]:
                gcols = np.matmul(wt, g4)  # (N, G, C / G * prod(k), L)
                gx = _fold_array(gcols.reshape(n, -1, lp), geo)
            if needs_input_grad[1]:
                if cols is None:
                    cols = _unfold_array(input, geo).reshape(n, groups, -1, lp)
                gw = np.matmul(g4, cols.transpose(0, 1, 3, 2)).sum(0).reshape(weight.shape)
    if bias is not None and needs_input_grad[2]:
        gb = g.sum(axis=(0,) + tuple(range(2, g.ndim)))
    return gx, gw, gb


def _conv(x: Tensor, w: Tensor, b, geo: _Geometry, groups: int) -> Tensor:
    """A convolution of validated (batched) operands, recorded."""
    b_data = None if b is None else b._data
    out, cols = _quietly(_conv_forward, x._data, w._data, b_data, geo, groups)
    # The im2col columns are kept for the weight's gradient (recomputed otherwise).
    keep = (cols,) if w._rg and cols is not None else _NO_COLS
    return record(ConvolutionBackward0, out, (x, w, b), (geo, groups), keep)


def _conv_composite(input, weight, bias, geo, groups):
    """The convolution written with unfold (im2col), fold (col2im) and matmul."""
    n = input.shape[0]
    lp = math.prod(geo.out)
    if geo.transposed:
        cin = input.shape[1]
        xg = input.reshape(n, groups, cin // groups, lp)
        wt = weight.reshape(groups, cin // groups, -1).transpose(-1, -2)
        out = _fold(wt.matmul(xg).reshape(n, -1, lp), geo)
    else:
        o = weight.shape[0]
        cols = _unfold(input, geo).reshape(n, groups, -1, lp)
        out = weight.reshape(groups, o // groups, -1).matmul(cols).reshape(n, o, *geo.out)
    if bias is not None:
        out = out + bias.reshape(1, -1, *(1,) * len(geo.k))
    return out


def _conv_jvp(t_input, t_weight, t_bias, input, weight, bias, geo, groups):
    """The product rule: conv(t_x, w) + conv(x, t_w) + t_b."""
    res = None
    if t_input is not None:
        res = _conv(t_input, weight, None, geo, groups)
    if t_weight is not None:
        term = _conv(input, t_weight, None, geo, groups)
        res = term if res is None else res + term
    if t_bias is not None:
        term = t_bias.reshape(1, -1, *(1,) * len(geo.k))
        res = term if res is None else res + term
    return res


ConvolutionBackward0 = defop(
    "ConvolutionBackward0",
    inputs=("input", "weight", "bias"),
    params=("geo", "groups"),
    saves=("cols",),
    forward=_conv_forward,
    vjp=_conv_vjp,
    composite=_conv_composite,
    jvp=_conv_jvp,
)

_AXES = ("depth", "height", "width")


def _conv_operands(name, input, weight, bias, nd):
    """torch's dtype checks of a convolution's operands; their arrays."""
    x, w = input._data, weight._data
    b = None if bias is None else bias._data
    if x.dtype != w.dtype:
        raise RuntimeError(
            f"Input type ({legacy_type_name(x.dtype)}) and weight type "
            f"({legacy_type_name(w.dtype)}) should be the same or input should be a MKLDNN "
            "tensor and weight is a dense tensor"
        )
    if b is not None and b.dtype != x.dtype:
        raise RuntimeError(
            f"Input type ({legacy_type_name(x.dtype)}) and bias type "
            f"({legacy_type_name(b.dtype)}) should be the same"
        )
    if x.dtype.kind not in "fciuV":
        raise NotImplementedError(
            f"\"slow_conv{nd}d_cpu\" not implemented for '{scalar_name(x.dtype)}'"
        )
    return x, w, b


def _convolution(
    name, input, weight, bias, stride, padding, dilation, groups, nd, output_padding=None
):
    """Parse and check one ``conv{nd}d`` / ``conv_transpose{nd}d`` call (``output_padding``
    not None: transposed) and record it."""
    if _AUTOCAST[0]:  # CPU autocast: torch's lower-precision list
        input, weight, bias = autocast_lower(input, weight, bias)
    transposed = output_padding is not None
    require_tensor(input, name)
    require_tensor(weight, name, "weight", 2)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
            f"input of size: {list(input.shape)}"
        )
    if transposed and isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    s = _pair(stride, "stride", weight.dim() - 2)
    d = _pair(dilation, "dilation", weight.dim() - 2)
    if weight.dim() != nd + 2:
        if nd == 2 and not isinstance(padding, str):
            _pair(padding, "padding", weight.dim() - 2)
        raise RuntimeError(
            f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
            f"{list(weight.shape)}, but got {input.dim()}-dimensional input of size "
            f"{list(input.shape)} instead"
        )
    if input.dim() == nd + 1:
        args = (weight, bias, stride, padding, dilation, groups, nd, output_padding)
        return _convolution(name, input.unsqueeze(0), *args).squeeze(0)
    x, w, b = _conv_operands(name, input, weight, bias, nd)
    n, c = x.shape[:2]
    k = w.shape[2:]
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if w.shape[0] % groups != 0:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size [{list(w.shape)}] instead"
        )
    if transposed:
        expect_c, o, what = w.shape[0], w.shape[1] * groups, "transposed=1"
    else:
        expect_c, o, what = w.shape[1] * groups, w.shape[0], f"groups={groups}"
    if c != expect_c:
        raise RuntimeError(
            f"Given {what}, weight of size {list(w.shape)}, expected input{list(x.shape)} to "
            f"have {expect_c} channels, but got {c} channels instead"
        )
    if b is not None and (b.ndim != 1 or b.shape[0] != o):
        raise RuntimeError(
            f"Given {'transposed=1, ' if transposed else ''}weight of size {list(w.shape)}, "
            "expected bias to be 1-dimensional "
            f"with {o} elements, but got bias of size {list(b.shape)} instead"
        )
    if min(s) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(d) <= 0:
        raise RuntimeError("dilation should be greater than zero")
    spatial = x.shape[2:]
    if transposed:
        p = _pair(padding, "padding", nd)
        op = _pair(output_padding, "output_padding", nd)
        if min(p) < 0:
            raise RuntimeError("negative padding is not supported")
        if min(op) < 0:
            raise RuntimeError("negative output_padding is not supported")
        if any(a >= ss and a >= dd for a, ss, dd in zip(op, s, d)):
            # 1-d convolutions run as 2-d ones in torch: their message has a height.
            lead = (2 - nd) if nd < 2 else 0
            axes = _AXES[3 - nd - lead :]
            full = ((0,) * lead + op, (1,) * lead + s, (1,) * lead + d)
            parts = [
                f"{kind}_{axis}: {v}"
                for kind, vals in zip(("output_padding", "stride", "dilation"), full)
                for axis, v in zip(axes, vals)
            ]
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, but got "
                + " ".join(parts)
            )
        out_size = tuple(
            (i - 1) * ss - 2 * pp + dd * (kk - 1) + a + 1
            for i, ss, pp, dd, kk, a in zip(spatial, s, p, d, k, op)
        )
        if min(out_size) < 0:
            raise RuntimeError(
                f"Given input size per channel: {list(spatial)}. Calculated output size per "
                f"channel: {list(out_size)}. Output size is too small"
            )
        geo = _Geometry(out_size, k, s, d, spatial, p, transposed=True)
    else:
        if isinstance(padding, str):
            if padding == "valid":
                tl = br = (0,) * nd
            elif padding == "same":
                if any(ss != 1 for ss in s):
                    raise RuntimeError("padding='same' is not supported for strided convolutions")
                totals = [dd * (kk - 1) for dd, kk in zip(d, k)]
                tl = tuple(t // 2 for t in totals)
                br = tuple(t - t // 2 for t in totals)
            else:
                raise RuntimeError(
                    f"Invalid padding string: '{padding}', should be one of ['valid', 'same']"
                )
        else:
            tl = br = _pair(padding, "padding", nd)
            if min(tl) < 0:
                raise RuntimeError("negative padding is not supported")
        padded = tuple(i + a + z for i, a, z in zip(spatial, tl, br))
        eff = tuple(dd * (kk - 1) + 1 for dd, kk in zip(d, k))
        if any(pp < ee for pp, ee in zip(padded, eff)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, eff))}). Kernel size can't be greater "
                "than actual input size"
            )
        geo = _conv_geometry(spatial, k, s, d, tl, br)
    return _conv(input, weight, bias, geo, groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """1-D convolution (cross-correlation) of ``input`` (N, C, L) with ``weight``
    (O, C / groups, k): one im2col view and one matmul.

    ``padding`` is an int, ``'valid'`` or ``'same'`` (stride 1 only).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.conv1d(ember.arange(5.0).reshape(1, 1, 5), ember.ones(1, 1, 2))
        tensor([[[1., 3., 5., 7.]]])
    """
    return _convolution("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """2-D convolution (cross-correlation) of ``input`` (N, C, H, W) with ``weight``
    (O, C / groups, kh, kw): one im2col view and one matmul.

    ``padding`` is an int, a pair, ``'valid'`` or ``'same'`` (stride 1 only).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.ones(1, 1, 3, 3)
        >>> F.conv2d(x, ember.ones(1, 1, 2, 2))
        tensor([[[[4., 4.],
                  [4., 4.]]]])
    """
    return _convolution("conv2d", input, weight, bias, stride, padding, dilation, groups, 2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """3-D convolution (cross-correlation) of ``input`` (N, C, D, H, W) with ``weight``
    (O, C / groups, kd, kh, kw).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.conv3d(ember.ones(1, 1, 3, 3, 3), ember.ones(1, 1, 2, 2, 2)).shape
        torch.Size([1, 1, 2, 2, 2])
    """
    return _convolution("conv3d", input, weight, bias, stride, padding, dilation, groups, 3)


def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
) -> Tensor:
    """1-D transposed convolution of ``input`` (N, C_in, L) with ``weight``
    (C_in, C_out / groups, k): the adjoint of ``conv1d`` (columns summed back, col2im).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.conv_transpose1d(ember.ones(1, 1, 3), ember.ones(1, 1, 2))
        tensor([[[1., 2., 2., 1.]]])
    """
    return _convolution(
        "conv_transpose1d", input, weight, bias, stride, padding, dilation, groups, 1,
        output_padding,
    )  # fmt: skip


def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
) -> Tensor:
    """2-D transposed convolution of ``input`` (N, C_in, H, W) with ``weight``
    (C_in, C_out / groups, kh, kw): the adjoint of ``conv2d``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.conv_transpose2d(ember.ones(1, 1, 2, 2), ember.ones(1, 1, 2, 2), stride=2).shape
        torch.Size([1, 1, 4, 4])
    """
    return _convolution(
        "conv_transpose2d", input, weight, bias, stride, padding, dilation, groups, 2,
        output_padding,
    )  # fmt: skip


def conv_transpose3d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
) -> Tensor:
    """3-D transposed convolution of ``input`` (N, C_in, D, H, W) with ``weight``
    (C_in, C_out / groups, kd, kh, kw): the adjoint of ``conv3d``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.conv_transpose3d(ember.ones(1, 1, 2, 2, 2), ember.ones(1, 1, 2, 2, 2)).shape
        torch.Size([1, 1, 3, 3, 3])
    """
    return _convolution(
        "conv_transpose3d", input, weight, bias, stride, padding, dilation, groups, 3,
        output_padding,
    )  # fmt: skip


# -- pooling ----------------------------------------------------------------------------------


def _pool_out(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool_setup(input, kernel_size, stride, padding, dilation, ceil_mode, fname):
    k = _pair(kernel_size, "kernel_size")
    s = (
        k
        if stride is None or (isinstance(stride, (list, tuple)) and not stride)
        else _pair(stride, "stride")
    )
    p, d = _pair(padding, "padding"), _pair(dilation, "dilation")
    if min(k) <= 0:
        raise RuntimeError(
            f"{fname}: kernel_size must be greater than zero, but got kH: {k[0]} kW: {k[1]}"
        )
    if min(s) <= 0:
        raise RuntimeError(
            f"{fname}: stride must be greater than zero, but got dH: {s[0]} dW: {s[1]}"
        )
    if min(d) <= 0:
        raise RuntimeError(
            f"{fname}: dilation must be greater than zero, but got dilationH: {d[0]} "
            f"dilationW: {d[1]}"
        )
    for kk, pp, dd in zip(k, p, d):
        if pp < 0 or pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pp}, "
                f"kernel_size={kk} and dilation={dd}"
            )
    c, h, w = input.shape[-3:]
    out = tuple(
        _pool_out(size, kk, ss, pp, dd, ceil_mode)
        for size, kk, ss, pp, dd in zip((h, w), k, s, p, d)
    )
    if min(out) < 1:
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{out[0]}x{out[1]}). "
            "Output size is too small"
        )
    return _Geometry((h, w), k, s, d, out, p)


def _tiles(geo: _Geometry) -> bool:
    """Do the windows tile the input (stride = kernel, no padding or dilation)? Then tap
    ``t`` of every window is one strided view of the input, and windows never overlap."""
    return (
        geo.s == geo.k
        and not any(geo.pads)
        and all(d == 1 for d in geo.d)
        and all(o * k <= n for o, k, n in zip(geo.out, geo.k, geo.in_size))  # no ceil_mode tail
    )


def _tiles_exactly(geo: _Geometry) -> bool:
    """Do tiling windows cover every input element (no floor-mode tail)? Then a gradient
    written window by window needs no zeroed buffer."""
    return all(o * k == n for o, k, n in zip(geo.out, geo.k, geo.in_size))


def _tap_views(x: np.ndarray, geo: _Geometry) -> list:
    """Per kernel tap (row-major), the view of ``x`` holding that tap of every window."""
    lead = (slice(None), slice(None))
    return [
        x[lead + tuple(slice(t, t + o * k, k) for t, o, k in zip(tap, geo.out, geo.k))]
        for tap in itertools.product(*(range(kk) for kk in geo.k))
    ]


def _max_pool_tiled(x: np.ndarray, geo: _Geometry):
    """``_max_pool_taps`` for tiling windows without NaNs, in whole-array ufuncs: the maxima,
    then the first tap equal to it (torch's strictly-larger rule); None if there are NaNs."""
    views = _tap_views(x, geo)
    top = views[0]
    for v in views[1:]:
        top = np.maximum(top, v)
    if top.dtype.kind == "f" and np.isnan(top).any():
        return None  # torch's last NaN wins: the general loop
    dtype = np.int16 if len(views) < 32768 else np.int64
    arg = np.full(top.shape, len(views) - 1, dtype=dtype)
    for t in range(len(views) - 2, -1, -1):  # the earliest equal tap is written last
        arg = np.where(views[t] == top, dtype(t), arg)
    return top if top.base is None else top.copy(), arg


def _max_pool_taps(x: np.ndarray, geo: _Geometry):
    """The window maxima and, per output, the flat (row-major) kernel tap of the maximum,
    for any number of spatial dims (``_max_pool_array`` / ``_max_pool3d_array``)."""
    if _tiles(geo):
        tiled = _max_pool_tiled(x, geo)
        if tiled is not None:
            return tiled
    nd = len(geo.k)
    lowest = -np.inf if x.dtype.kind in "fV" else np.iinfo(x.dtype).min
    xp = _pad4(x, geo.pads, geo.size, lowest)
    win = _windows(xp, geo.k, geo.s, geo.d, geo.out)
    lead = (slice(None), slice(None))
    out = win[lead + (0,) * nd].copy()
    arg = np.zeros(out.shape, dtype=np.int16 if math.prod(geo.k) < 32768 else np.int64)
    for tap in itertools.product(*(range(kk) for kk in geo.k)):
        if not any(tap):
            continue
        v = win[lead + tap]
        # torch's rule: a strictly larger value or a NaN takes over.
        m = ((v > out) | np.isnan(v)) if v.dtype.kind in "fV" else v > out
        np.copyto(out, v, where=m)
        arg[m] = _tap_index(tap, geo.k)
    return out, arg


def _max_pool_taps_vjp(g: np.ndarray, arg: np.ndarray, geo: _Geometry) -> np.ndarray:
    if _tiles(geo):  # windows do not overlap: each tap's view is written once
        gx = (np.empty if _tiles_exactly(geo) else np.zeros)(g.shape[:2] + geo.in_size, g.dtype)
        hit = np.empty(arg.shape, dtype=bool)
        finite = g.dtype.kind != "f" or bool(np.isfinite(g).all())  # (inf * False is NaN)
        zero = np.zeros((), g.dtype)
        for t, view in enumerate(_tap_views(gx, geo)):
            np.equal(arg, t, out=hit)
            if finite:
                np.multiply(g, hit, out=view)
            else:
                view[...] = np.where(hit, g, zero)
        return gx
    gxp = np.zeros(g.shape[:2] + geo.size, dtype=g.dtype)
    for tap, sl in _offsets(geo.k, geo.s, geo.d, geo.out):
        gxp[(slice(None), slice(None)) + sl] += np.where(arg == _tap_index(tap, geo.k), g, 0)
    return _unpad4(gxp, geo.pads, g.shape[:2] + geo.in_size)


_max_pool_array = _batched(_max_pool_taps)
_max_pool_vjp_array = _batched(_max_pool_taps_vjp)


def _max_pool2d_eager(x: np.ndarray, geo: _Geometry):
    """2-d max pooling's maxima and taps: the compiler's C loop where it covers the windows
    and a C compiler is present (it checks the loop against this NumPy code first), else
    the NumPy code."""
    return with_eager_kernel("max_pool2d", _max_pool_array, x, geo)


def _max_pool2d_grad_eager(g: np.ndarray, arg: np.ndarray, geo: _Geometry) -> np.ndarray:
    """2-d max pooling's input gradient, as ``_max_pool2d_eager`` chooses its code."""
    return with_eager_kernel("max_pool2d_grad", _max_pool_vjp_array, g, arg, geo)


def _window_entries(x: Tensor, arg: np.ndarray, geo: _Geometry) -> Tensor:
    """The entry of ``x`` at each window's tap ``arg``: linear in ``x``, recorded."""
    nd = len(geo.k)
    if x.dim() == nd + 1:
        return _window_entries(x.unsqueeze(0), arg[None], geo).squeeze(0)
    n, c = x.shape[:2]
    cols = _unfold(x, geo).reshape(n, c, math.prod(geo.k), -1)
    idx = _wrap(arg.astype(np.int64).reshape(n, c, 1, -1))
    return cols.gather(2, idx).reshape(n, c, *geo.out)


def _max_pool_composite(self, geo):
    # The maxima are the input's entries at the forward's choice of offsets.
    arg = _batched_nd(len(geo.k))(_max_pool_taps)(self._data, geo)[1]
    return _window_entries(self, arg, geo)


MaxPool2DWithIndicesBackward0 = defop(
    "MaxPool2DWithIndicesBackward0",
    params=("geo",),
    saves=("arg",),
    forward=_max_pool2d_eager,
    vjp={"self": lambda g, arg, geo: _max_pool2d_grad_eager(g, arg, geo)},
    composite=_max_pool_composite,
    # The tangent at each window's recorded maximum: among tied maxima the one the forward
    # (and the gradient) chose, the first in row-major order.
    jvp=lambda t_self, arg, geo: _window_entries(t_self, arg, geo),
)


def _pool_input(input, fname):
    require_tensor(input, fname)
    if input.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")


def max_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode=False,
    return_indices=False,
):
    """2-D max pooling over ``input`` (N, C, H, W) or (C, H, W); padding counts as -inf.

    With ``return_indices=True`` also returns the flat ``h * W + w`` index of each maximum.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.arange(16.0).reshape(1, 1, 4, 4)
        >>> F.max_pool2d(x, 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    _pool_input(input, "max_pool2d")
    x = input._data
    if x.dtype.kind not in "fiuV":
        raise NotImplementedError(f"\"max_pool2d\" not implemented for '{scalar_name(x.dtype)}'")
    geo = _pool_setup(input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")
    out, arg = _max_pool2d_eager(x, geo)
    t = record(MaxPool2DWithIndicesBackward0, out, (input,), (geo,), (arg,))
    if not return_indices:
        return t
    kh_idx, kw_idx = np.divmod(arg.astype(np.int64), geo.k[1])
    rows = np.arange(geo.out[0]).reshape(-1, 1) * geo.s[0] - geo.pads[0]
    colz = np.arange(geo.out[1]).reshape(1, -1) * geo.s[1] - geo.pads[1]
    hh = rows + kh_idx * geo.d[0]
    ww = colz + kw_idx * geo.d[1]
    return t, _wrap(hh * x.shape[-1] + ww)


def _avg_divisor(geo: _Geometry, count_include_pad: bool, divisor_override) -> np.ndarray:
    """Each window's divisor, shaped like the output's spatial dims (any number of them)."""
    if divisor_override is not None:
        return np.asarray(float(divisor_override))
    nd = len(geo.k)
    div = np.ones((1,) * nd, dtype=np.int64)
    for axis in range(nd):
        n, k, s, p = geo.in_size[axis], geo.k[axis], geo.s[axis], geo.pads[axis]
        start = np.arange(geo.out[axis]) * s - p
        end = np.minimum(start + k, n + p)
        size = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        shape = [1] * nd
        shape[axis] = -1
        div = div * size.reshape(shape)
    return np.maximum(div, 1)


def _avg_pool_sums(x: np.ndarray, geo: _Geometry, divisor: np.ndarray) -> np.ndarray:
    xp = _pad4(x, geo.pads, geo.size)
    win = _windows(xp, geo.k, geo.s, geo.d, geo.out)
    acc = np.zeros(x.shape[:2] + geo.out, dtype=x.dtype if x.dtype.kind in "fV" else np.int64)
    for tap in itertools.product(*(range(kk) for kk in geo.k)):
        acc += win[(slice(None), slice(None)) + tap]
    if x.dtype.kind in "fV":
        return (acc / divisor).astype(x.dtype, copy=False)
    return np.trunc(acc / divisor).astype(x.dtype)  # integers: truncated, like torch's kernel


def _avg_pool_sums_vjp(g: np.ndarray, geo: _Geometry, divisor: np.ndarray) -> np.ndarray:
    gq = (g / divisor).astype(g.dtype, copy=False)
    gxp = np.zeros(g.shape[:2] + geo.size, dtype=g.dtype)
    for _tap, sl in _offsets(geo.k, geo.s, geo.d, geo.out):
        gxp[(slice(None), slice(None)) + sl] += gq
    return _unpad4(gxp, geo.pads, g.shape[:2] + geo.in_size)


_avg_pool_array = _batched(_avg_pool_sums)
_avg_pool_vjp_array = _batched(_avg_pool_sums_vjp)


def _avg_pool_composite(self, geo, divisor):
    nd = len(geo.k)
    cols = _unfold(self, geo)
    lead = tuple(self.shape[:-nd])
    summed = cols.reshape(*lead, math.prod(geo.k), -1).sum(-2).reshape(*lead, *geo.out)
    return summed / _wrap(divisor.astype(self._data.dtype))


AvgPool2DBackward0 = defop(
    "AvgPool2DBackward0",
    params=("geo", "divisor"),
    forward=_avg_pool_array,
    vjp={"self": lambda g, geo, divisor: _avg_pool_vjp_array(g, geo, divisor)},
    composite=_avg_pool_composite,
    jvp=LINEAR,
)


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """2-D average pooling over ``input`` (N, C, H, W) or (C, H, W).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.avg_pool2d(ember.arange(16.0).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 2.5000,  4.5000],
                  [10.5000, 12.5000]]]])
    """
    require_tensor(input, "avg_pool2d")
    if input.dim() == 0:
        raise IndexError("Dimension specified as -3 but tensor has no dimensions")
    if input.dim() < 3:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(input.dim(), 1)}, "
            f"{max(input.dim(), 1) - 1}], but got -3)"
        )
    if input.dim() > 4:
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got:{list(input.shape)}"
        )
    x = input._data
    if x.dtype.kind not in "fiuV":
        raise NotImplementedError(f"\"avg_pool2d\" not implemented for '{scalar_name(x.dtype)}'")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    geo = _pool_setup(input, kernel_size, stride, padding, 1, ceil_mode, "avg_pool2d")
    divisor = shape_constant(_avg_divisor(geo, count_include_pad, divisor_override))
    out = _quietly(_avg_pool_array, x, geo, divisor)
    return record(AvgPool2DBackward0, out, (input,), (geo, divisor))


# -- 1-d pooling (torch runs the 2-d kernels on an unsqueezed input) ---------------------------


def _single(value, name: str) -> int:
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise RuntimeError(
                f"max_pool1d() {name} must be either a single int, or a tuple of one int"
            )
        return int(value[0])
    return int(value)


def max_pool1d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode=False,
    return_indices=False,
):
    """1-D max pooling over ``input`` (N, C, L) or (C, L); padding counts as -inf.

    Recorded as torch records it: the 2-d pooling of ``input.unsqueeze(-2)``, squeezed.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.max_pool1d(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
        tensor([[[3., 2.]]])
    """
    require_tensor(input, "max_pool1d")
    if input.dim() not in (2, 3):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{list(input.shape)}"
        )
    k = _single(kernel_size, "kernel_size")
    no_stride = stride is None or (isinstance(stride, (list, tuple)) and not stride)
    s = k if no_stride else _single(stride, "stride")
    p, d = _single(padding, "padding"), _single(dilation, "dilation")
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(
            "max_pool1d() padding should be at most half of kernel size, but got "
            f"padding={p} and kernel_size={k}"
        )
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out = _pool_out(input.shape[-1], k, s, p, d, ceil_mode)
    if out < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    res = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices)
    if return_indices:
        return res[0].squeeze(-2), res[1].squeeze(-2)
    return res.squeeze(-2)


def _check_1d(input, fname: str) -> None:
    require_tensor(input, fname)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument "
            f"#1 'self' (while checking arguments for {fname})"
        )


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling over ``input`` (N, C, L) or (C, L).

    Recorded as torch records it: the 2-d pooling of ``input.unsqueeze(-2)``, squeezed.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.avg_pool1d(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
        tensor([[[2., 1.]]])
    """
    _check_1d(input, "avg_pool1d")
    k = _pair(kernel_size, "kernel_size", 1)[0]
    no_stride = stride is None or (isinstance(stride, (list, tuple)) and not stride)
    s = k if no_stride else _pair(stride, "stride", 1)[0]
    p = _pair(padding, "padding", 1)[0]
    out = avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad)
    return out.squeeze(-2)


# -- adaptive pooling ------------------------------------------------------------------------


def _adaptive_windows(n: int, o: int):
    """Window positions ``(o, kmax)`` (clipped), their validity mask and sizes: window ``i``
    covers ``[floor(i * n / o), ceil((i + 1) * n / o))``, as torch's kernels."""
    i = np.arange(o)
    start = (i * n) // o
    end = ((i + 1) * n + o - 1) // o
    kmax = int((end - start).max()) if o else 0
    pos = start[:, None] + np.arange(kmax)
    mask = pos < end[:, None]
    return np.minimum(pos, max(n - 1, 0)), mask, end - start


class _Adaptive:
    """The windows of one adaptive pooling along the last ``len(in_size)`` dims."""

    __slots__ = ("in_size", "out", "idx", "mask", "count")
    # Made from the sizes alone and never changed: the compiler may share it between calls.
    _immutable_param = True

    def __init__(self, in_size, out) -> None:
        self.in_size, self.out = tuple(in_size), tuple(out)
        wins = [_adaptive_windows(n, o) for n, o in zip(in_size, out)]
        self.idx = tuple(w[0] for w in wins)
        self.mask = tuple(w[1] for w in wins)
        nd = len(wins)
        self.count = np.ones((1,) * nd, dtype=np.int64)
        for axis, w in enumerate(wins):  # the window sizes' outer product
            self.count = self.count * w[2].reshape([-1 if a == axis else 1 for a in range(nd)])

    def __repr__(self) -> str:
        return f"_Adaptive(input={self.in_size}, output={self.out})"


def _window_sum(a, axis: int, idx: np.ndarray, mask: np.ndarray):
    """Sums of ``a`` over the windows ``idx`` (o, kmax) along the negative ``axis``."""
    v = np.take(a, intp(idx), axis=axis)  # axis -> (o, kmax)
    m = mask.reshape(mask.shape + (1,) * (-axis - 1))
    return np.where(m, v, 0).sum(axis=axis)  # the kmax axis, now at ``axis``


def _window_sum_adjoint(g, axis: int, idx: np.ndarray, mask: np.ndarray, n: int):
    rows, taps = np.nonzero(mask)
    return _scatter_add(np.take(g, intp(rows), axis=axis), idx[rows, taps], n, axis % g.ndim)


def _adaptive_avg_array(x: np.ndarray, ad: _Adaptive) -> np.ndarray:
    s = x
    for axis in range(-1, -len(ad.idx) - 1, -1):
        s = _window_sum(s, axis, ad.idx[axis], ad.mask[axis])
    if x.dtype.kind not in "fV":
        return np.trunc(s / ad.count).astype(x.dtype)
    return (s / ad.count).astype(x.dtype, copy=False)


def _adaptive_avg_vjp(g: np.ndarray, ad: _Adaptive) -> np.ndarray:
    g = (g / ad.count).astype(g.dtype, copy=False)
    for axis in range(-len(ad.idx), 0):
        g = _window_sum_adjoint(g, axis, ad.idx[axis], ad.mask[axis], ad.in_size[axis])
    return g


def _adaptive_avg_composite(self, ad):
    dt = self._data.dtype
    for axis in range(-1, -len(ad.idx) - 1, -1):
        idx, mask = ad.idx[axis], ad.mask[axis]
        shape = list(self.shape)
        shape[axis : (axis + 1) or None] = list(idx.shape)
        v = self.index_select(axis, _wrap(idx.reshape(-1))).reshape(shape)
        m = mask.reshape(mask.shape + (1,) * (-axis - 1)).astype(dt)
        self = (v * _wrap(m)).sum(axis)
    return self / _wrap(ad.count.astype(dt))


AdaptiveAvgPool2DBackward0 = defop(
    "AdaptiveAvgPool2DBackward0",
    params=("ad",),
    forward=_adaptive_avg_array,
    vjp={"self": lambda g, ad: _adaptive_avg_vjp(g, ad)},
    composite=_adaptive_avg_composite,
    jvp=LINEAR,
)


@_batched
def _adaptive_max_array(x: np.ndarray, ad: _Adaptive):
    """The window maxima and the flat ``h * W + w`` input index of each."""
    ih, iw = ad.idx
    mh, mw = ad.mask
    win = x[:, :, ih[:, :, None, None], iw[None, None, :, :]]  # (N, C, oh, kh, ow, kw)
    valid = mh[:, :, None, None] & mw[None, None, :, :]
    lowest = -np.inf if x.dtype.kind in "fV" else np.iinfo(x.dtype).min
    win = np.where(valid, win, np.asarray(lowest, dtype=x.dtype))
    n, c, oh, kh, ow, kw = win.shape
    flat = win.transpose(0, 1, 2, 4, 3, 5).reshape(n, c, oh, ow, kh * kw)
    arg = np.argmax(flat, axis=-1)  # the first maximum (a NaN wins), as torch's kernel
    out = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
    rows = np.take_along_axis(ih[None, None, :, None, :], (arg // kw)[..., None], -1)[..., 0]
    cols = np.take_along_axis(iw[None, None, None, :, :], (arg % kw)[..., None], -1)[..., 0]
    return out, (rows * x.shape[-1] + cols).astype(np.int64)


def _adaptive_max_vjp(g: np.ndarray, indices: np.ndarray, ad: _Adaptive) -> np.ndarray:
    lead = g.shape[:-2]
    hw = ad.in_size[0] * ad.in_size[1]
    gx = np.zeros((math.prod(lead), hw), dtype=g.dtype)
    rows = np.arange(gx.shape[0]).reshape(-1, 1)
    np.add.at(gx, (rows, indices.reshape(gx.shape[0], -1)), g.reshape(gx.shape[0], -1))
    return gx.reshape(lead + ad.in_size)


def _take_flat(x: Tensor, indices: np.ndarray) -> Tensor:
    """``x`` (..., H, W) at the flat ``h * W + w`` ``indices`` (..., oh, ow): linear in ``x``."""
    idx = _wrap(indices.reshape(indices.shape[:-2] + (-1,)))
    return x.flatten(-2).gather(-1, idx).reshape(indices.shape)


AdaptiveMaxPool2DBackward0 = defop(
    "AdaptiveMaxPool2DBackward0",
    params=("ad",),
    saves=("indices",),
    forward=_adaptive_max_array,
    vjp={"self": lambda g, indices, ad: _adaptive_max_vjp(g, indices, ad)},
    # The maxima are the input's entries at the forward's choice of indices.
    composite=lambda self, ad: _take_flat(self, _adaptive_max_array(self._data, ad)[1]),
    jvp=lambda t_self, indices, ad: _take_flat(t_self, indices),
)


def _adaptive_sizes(input, output_size, n: int, fname: str) -> tuple:
    if isinstance(output_size, Tensor):
        output_size = output_size.tolist()
    if isinstance(output_size, (tuple, list)):
        sizes = list(output_size)
    else:
        sizes = [output_size] * n
    if len(sizes) != n:
        if n == 1:
            raise RuntimeError(
                f"{fname}() argument 'output_size' should contain one int (got {len(sizes)})"
            )
        if fname == "adaptive_max_pool2d":
            raise RuntimeError(
                "adaptive_max_pool2d(): internal error: output_size.size() must be 2"
            )
        raise RuntimeError(f"{fname}: output_size must be 2")
    spatial = tuple(input.shape[-n:])
    out = tuple(int(spatial[i]) if v is None else int(v) for i, v in enumerate(sizes))
    if min(out) < 0:
        raise RuntimeError(f"{fname}: elements of output_size must be greater than or equal to 0")
    return out


def _adaptive_input(input, fname: str) -> None:
    require_tensor(input, fname)
    if input.dim() not in (3, 4):
        sep = ": " if fname == "adaptive_max_pool2d" else " "
        raise RuntimeError(f"{fname}(): Expected 3D or 4D tensor, but got{sep}{list(input.shape)}")
    for i in range(input.dim() - 2, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{fname}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {i} being empty"
            )


def adaptive_avg_pool2d(input, output_size):
    """2-D adaptive average pooling to ``output_size`` (int, pair; None keeps a size).

    Window ``i`` covers ``[floor(i * n / o), ceil((i + 1) * n / o))``; a (1, 1) output is
    ``input.mean((-1, -2), keepdim=True)`` as in torch.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.adaptive_avg_pool2d(ember.arange(16.0).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 2.5000,  4.5000],
                  [10.5000, 12.5000]]]])
    """
    _adaptive_input(input, "adaptive_avg_pool2d")
    out = _adaptive_sizes(input, output_size, 2, "adaptive_avg_pool2d")
    if out == (1, 1):
        return input.mean((-1, -2), keepdim=True)
    x = input._data
    if x.dtype.kind not in "fiuV":
        raise NotImplementedError(
            f"\"adaptive_avg_pool2d\" not implemented for '{scalar_name(x.dtype)}'"
        )
    ad = _Adaptive(x.shape[-2:], out)
    return record(AdaptiveAvgPool2DBackward0, _quietly(_adaptive_avg_array, x, ad), (input,), (ad,))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """2-D adaptive max pooling to ``output_size``; with ``return_indices`` also the flat
    ``h * W + w`` index of each maximum.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.adaptive_max_pool2d(ember.arange(16.0).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    _adaptive_input(input, "adaptive_max_pool2d")
    out = _adaptive_sizes(input, output_size, 2, "adaptive_max_pool2d")
    x = input._data
    if x.dtype.kind not in "fiuV":
        raise NotImplementedError(
            f"\"adaptive_max_pool2d\" not implemented for '{scalar_name(x.dtype)}'"
        )
    ad = _Adaptive(x.shape[-2:], out)
    values, indices = _adaptive_max_array(x, ad)
    t = record(AdaptiveMaxPool2DBackward0, values, (input,), (ad,), (indices,))
    return (t, _wrap(indices)) if return_indices else t


def adaptive_avg_pool1d(input, output_size):
    """1-D adaptive average pooling of ``input`` (N, C, L) or (C, L) to ``output_size``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.adaptive_avg_pool1d(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
        tensor([[[2., 1.]]])
    """
    _check_1d(input, "adaptive_avg_pool1d")
    (o,) = _adaptive_sizes(input, output_size, 1, "adaptive_avg_pool1d")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-D adaptive max pooling of ``input`` (N, C, L) or (C, L) to ``output_size``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.adaptive_max_pool1d(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
        tensor([[[3., 2.]]])
    """
    _check_1d(input, "adaptive_max_pool1d")
    (o,) = _adaptive_sizes(input, output_size, 1, "adaptive_max_pool1d")
    values, indices = adaptive_max_pool2d(input.unsqueeze(-2), (1, o), return_indices=True)
    if return_indices:
        return values.squeeze(-2), indices.squeeze(-2)
    return values.squeeze(-2)


# -- pad ----------------------------------------------------------------------------------------


def _pad_layout(shape: tuple, pad) -> tuple:
    """Per-dim (before, after) amounts from torch's last-dim-first ``pad`` sequence."""
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > len(shape):
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {len(shape)}"
        )
    amounts = [(0, 0)] * len(shape)
    for i in range(len(pad) // 2):
        amounts[len(shape) - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return tuple(amounts)


def _constant_pad_array(a: np.ndarray, amounts: tuple, value) -> np.ndarray:
    shape = tuple(n + lo + hi for n, (lo, hi) in zip(a.shape, amounts))
    for n_new, n, (lo, hi) in zip(shape, a.shape, amounts):
        if n_new < 0 or n + min(lo, 0) < 0 or n + min(hi, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    return _place(a, shape, tuple(lo for lo, _ in amounts), value)


def _unpad(g, amounts: tuple):
    """The adjoint of constant padding: the padding cut off (negative amounts)."""
    neg = tuple((-lo, -hi) for lo, hi in amounts)
    return _constant_pad_array(g, neg, 0) if is_raw(g) else _constant_pad(g, neg, 0)


ConstantPadNdBackward0 = defop(
    "ConstantPadNdBackward0",
    params=("pad", "value"),
    forward=_constant_pad_array,
    vjp={"self": lambda g, pad: _unpad(g, pad)},
    # The padding value is a constant: the tangent is padded with zeros.
    jvp=lambda t_self, pad: _constant_pad(t_self, pad, 0),
)


def _constant_pad(input: Tensor, amounts: tuple, value) -> Tensor:
    if value is None:
        value = 0
    out = _constant_pad_array(input._data, amounts, value)
    return record(ConstantPadNdBackward0, out, (input,), (amounts, value))


def _index_pad_array(a: np.ndarray, index: tuple) -> np.ndarray:
    """reflect / replicate padding: ``a`` indexed along each padded axis (``index`` holds
    (axis, positions, input size) per axis)."""
    for axis, idx, _n in index:
        a = np.take(a, intp(idx), axis=axis)
    return a


def _scatter_add(g: np.ndarray, idx: np.ndarray, n: int, axis: int) -> np.ndarray:
    """The adjoint of ``np.take(x, idx, axis)`` for ``x`` of size ``n`` along ``axis``."""
    shape = list(g.shape)
    shape[axis] = n
    res = np.zeros(shape, dtype=g.dtype)
    if idx.size == 0:
        return res
    order = np.argsort(idx, kind="stable")
    ordered = idx[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sums = np.add.reduceat(np.take(g, intp(order), axis=axis), starts, axis=axis)
    res[(slice(None),) * axis + (ordered[starts],)] = sums
    return res


def _index_pad_vjp(g: np.ndarray, index: tuple) -> np.ndarray:
    for axis, idx, n in reversed(index):
        g = _scatter_add(g, idx, n, axis)
    return g


def _index_pad_composite(self, index):
    for axis, idx, _n in index:
        self = self.index_select(axis, _wrap(idx))
    return self


def _index_pad_node(name: str):
    return defop(
        name,
        params=("index",),
        forward=_index_pad_array,
        vjp={"self": lambda g, index: _index_pad_vjp(g, index)},
        composite=_index_pad_composite,
        jvp=LINEAR,
    )


ReflectionPad1DBackward0 = _index_pad_node("ReflectionPad1DBackward0")
ReflectionPad2DBackward0 = _index_pad_node("ReflectionPad2DBackward0")
ReflectionPad3DBackward0 = _index_pad_node("ReflectionPad3DBackward0")
ReplicationPad1DBackward0 = _index_pad_node("ReplicationPad1DBackward0")
ReplicationPad2DBackward0 = _index_pad_node("ReplicationPad2DBackward0")
ReplicationPad3DBackward0 = _index_pad_node("ReplicationPad3DBackward0")
_INDEX_PADS = {
    ("reflect", 1): ReflectionPad1DBackward0,
    ("reflect", 2): ReflectionPad2DBackward0,
    ("reflect", 3): ReflectionPad3DBackward0,
    ("replicate", 1): ReplicationPad1DBackward0,
    ("replicate", 2): ReplicationPad2DBackward0,
    ("replicate", 3): ReplicationPad3DBackward0,
}


def _check_index_pad(shape: tuple, pad: tuple, mode: str) -> tuple:
    """torch's checks of reflect / replicate padding; the padded (dim, lo, hi, size, out)."""
    k = len(pad) // 2
    ndim = len(shape)
    dims = [(ndim - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(k)]  # W, H, D
    padded = [(d, lo, hi, shape[d], shape[d] + lo + hi) for d, lo, hi in dims]
    if mode == "reflect":
        for arg, (d, lo, hi, n, _o) in zip((4, 6, 8), padded):
            if lo >= n or hi >= n:
                raise RuntimeError(
                    f"Argument #{arg}: Padding size should be less than the corresponding input "
                    f"dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                    f"{list(shape)}"
                )
    sizes = [n for _d, _lo, _hi, n, _o in padded]
    outs = [o for _d, _lo, _hi, _n, o in padded]
    if max(outs) < 1:
        if k == 1:
            msg = f"input (W: {sizes[0]}) is too small. Calculated output W: {outs[0]}"
        elif k == 2:
            gap = " " if mode == "replicate" else ""
            msg = (
                f"input (H: {sizes[1]}, W: {sizes[0]}{gap}) is too small. Calculated output "
                f"H: {outs[1]} W: {outs[0]}"
            )
        else:
            msg = (
                f"input (D: {sizes[2]} H: {sizes[1]}, W: {sizes[0]}) is too small. Calculated "
                f"output D: {outs[2]} H: {outs[1]} W: {outs[0]}"
            )
        raise RuntimeError(msg)
    new_shape = list(shape)
    for d, _lo, _hi, _n, o in padded:
        new_shape[d] = o
    for o in new_shape:
        if o < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {o}: {list(new_shape)}"
            )
    return padded


def _index_pad(input: Tensor, pad: tuple, mode: str) -> Tensor:
    """reflect / replicate padding: one node gathering along each padded dim."""
    index = []
    for d, lo, hi, n, _o in reversed(_check_index_pad(tuple(input.shape), pad, mode)):
        pos = np.arange(-lo, n + hi)
        if mode == "reflect":
            period = 2 * (n - 1) if n > 1 else 1
            pos = np.abs(pos) % period
            idx = np.where(pos >= n, period - pos, pos)
        else:
            idx = np.clip(pos, 0, n - 1)
        index.append((d, shape_constant(idx.astype(np.int64)), n))
    index = tuple(index)
    cls = _INDEX_PADS[mode, len(pad) // 2]
    return record(cls, _index_pad_array(input._data, index), (input,), (index,))


def _circular_pad(input: Tensor, pad: tuple) -> Tensor:
    """circular padding, written as torch writes it: the input copied into the middle of a
    new tensor, then each padded dim's borders copied from the other side (so the graph is
    torch's chain of ``CopySlices``)."""
    in_shape = tuple(input.shape)
    k = len(pad) // 2
    lead = len(in_shape) - k
    out_shape = list(in_shape[:lead])
    for i in range(k):
        lo, hi = pad[2 * (k - i - 1)], pad[2 * (k - i - 1) + 1]
        size = in_shape[lead + i]
        out_shape.append(size + lo + hi)
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[-1] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = input.new_empty(out_shape)
    out_slice, in_slice = out, input
    for i in range(k):
        dim = k - i + lead - 1
        lo, hi = pad[2 * i], pad[2 * i + 1]
        start = max(lo, 0)
        out_slice = out_slice.narrow(dim, start, out_shape[dim] - max(hi, 0) - start)
        start = max(-lo, 0)
        in_slice = in_slice.narrow(dim, start, in_shape[dim] - max(-hi, 0) - start)
    out_slice.copy_(in_slice)
    for i in range(k):
        dim = k - i + lead - 1
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            out.narrow(dim, 0, lo).copy_(out.narrow(dim, out_shape[dim] - lo - max(hi, 0), lo))
        if hi > 0:
            out.narrow(dim, out_shape[dim] - hi, hi).copy_(out.narrow(dim, max(lo, 0), hi))
    return out


_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_ints(pad) -> tuple:
    out = []
    for i, p in enumerate(pad):
        try:
            out.append(operator.index(p))
        except TypeError:
            raise TypeError(
                "pad(): argument 'pad' (position 2) must be tuple of ints, but found element "
                f"of type {type(p).__name__} at pos {i}"
            ) from None
    return tuple(out)


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """Pad ``input``: ``pad`` lists (before, after) amounts starting from the last dim.

    ``mode`` is ``'constant'`` (negative amounts crop), ``'reflect'``, ``'replicate'`` or
    ``'circular'`` (these pad the last 1, 2 or 3 dims of a batched or unbatched input).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.pad(ember.ones(1, 2), (1, 2), value=0.5)
        tensor([[0.5000, 1.0000, 1.0000, 0.5000, 0.5000]])
    """
    require_tensor(input, "pad")
    pad = _pad_ints(pad)
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    amounts = _pad_layout(input.shape, pad)
    if mode == "constant":
        return _constant_pad(input, amounts, value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k, ndim = len(pad) // 2, input.dim()
    if k not in (1, 2, 3) or ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    if mode == "circular":
        return _circular_pad(input, pad)
    return _index_pad(input, pad, mode)


# -- 3-d pooling, max unpooling, Lp pooling, 3-d adaptive pooling ----------------------------
#
# The 2-d kernels above hard-code two spatial dims; these run on any number ``n`` of them
# (the windows view and the offsets loop are already n-d): a loop over kernel taps, never
# over pixels.


def _triple(value, fname: str, name: str, what: str) -> tuple:
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return (int(value[0]),) * 3
        if len(value) != 3:
            raise RuntimeError(f"{fname}: {name} {what}")
        return tuple(int(v) for v in value)
    return (int(value),) * 3


def _pool3d_setup(input, kernel_size, stride, padding, dilation, ceil_mode, fname) -> _Geometry:
    if fname == "max_pool3d":
        what = "must either be a single int, or a tuple of three ints"
    else:
        what = "must be a single int, or a tuple of three ints"
    k = _triple(kernel_size, fname, "kernel_size", what)
    no_stride = stride is None or (isinstance(stride, (list, tuple)) and not stride)
    s_what = what.replace("a single", "omitted, a single")
    s = k if no_stride else _triple(stride, fname, "stride", s_what)
    p = _triple(padding, fname, "padding", what)
    d = _triple(dilation, fname, "dilation", what)
    if input.dim() not in (4, 5) or 0 in input.shape[-4:]:
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if min(s) <= 0:
        raise RuntimeError("stride should not be zero")
    if min(k) <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kT: {k[0]} kH: {k[1]} kW: {k[2]}"
        )
    if min(d) <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationT: {d[0]} dilationH: {d[1]} "
            f"dilationW: {d[2]}"
        )
    for kk, pp, dd in zip(k, p, d):
        if pp < 0 or pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pp}, "
                f"kernel_size={kk} and dilation={dd}"
            )
    c = input.shape[-4]
    spatial = tuple(input.shape[-3:])
    if fname == "avg_pool3d" and any(n < kk for n, kk in zip(spatial, k)):
        t, h, w = spatial
        raise RuntimeError(
            f"input image (T: {t} H: {h} W: {w}) smaller than kernel size "
            f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})"
        )
    out = tuple(
        _pool_out(n, kk, ss, pp, dd, ceil_mode) for n, kk, ss, pp, dd in zip(spatial, k, s, p, d)
    )
    if min(out) < 1:
        sizes = "x".join(str(v) for v in (c,) + spatial)
        outs = "x".join(str(v) for v in (c,) + out)
        raise RuntimeError(
            f"Given input size: ({sizes}). Calculated output size: ({outs}). "
            "Output size is too small"
        )
    return _Geometry(spatial, k, s, d, out, p)


_max_pool3d_array = _batched_nd(3)(_max_pool_taps)
_max_pool3d_vjp_array = _batched_nd(3)(_max_pool_taps_vjp)


MaxPool3DWithIndicesBackward0 = defop(
    "MaxPool3DWithIndicesBackward0",
    params=("geo",),
    saves=("arg",),
    forward=_max_pool3d_array,
    vjp={"self": lambda g, arg, geo: _max_pool3d_vjp_array(g, arg, geo)},
    composite=_max_pool_composite,
    # The tangent at each window's recorded maximum (the forward's choice among ties).
    jvp=lambda t_self, arg, geo: _window_entries(t_self, arg, geo),
)


def _flat_indices(arg: np.ndarray, geo: _Geometry) -> np.ndarray:
    """The flat input index (over the spatial dims) of each window's tap ``arg``."""
    nd = len(geo.k)
    taps = np.unravel_index(arg, geo.k)
    flat = np.zeros(arg.shape, dtype=np.int64)
    for axis in range(nd):
        shape = [1] * nd
        shape[axis] = -1
        start = (np.arange(geo.out[axis]) * geo.s[axis] - geo.pads[axis]).reshape(shape)
        pos = start + taps[axis].astype(np.int64) * geo.d[axis]
        flat = flat * geo.in_size[axis] + pos
    return flat


def max_pool3d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode=False,
    return_indices=False,
):
    """3-D max pooling over ``input`` (N, C, D, H, W) or (C, D, H, W); padding counts as -inf.

    With ``return_indices=True`` also returns the flat ``(d * H + h) * W + w`` index of each
    maximum.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.max_pool3d(ember.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
        tensor([[[[[7.]]]]])
    """
    require_tensor(input, "max_pool3d")
    geo = _pool3d_setup(input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool3d")
    x = input._data
    if x.dtype.kind not in "fiuV":
        raise NotImplementedError(f"\"max_pool3d\" not implemented for '{scalar_name(x.dtype)}'")
    out, arg = _max_pool3d_array(x, geo)
    t = record(MaxPool3DWithIndicesBackward0, out, (input,), (geo,), (arg,))
    return (t, _wrap(_flat_indices(arg, geo))) if return_indices else t


_avg_pool3d_array = _batched_nd(3)(_avg_pool_sums)
_avg_pool3d_vjp_array = _batched_nd(3)(_avg_pool_sums_vjp)


AvgPool3DBackward0 = defop(
    "AvgPool3DBackward0",
    params=("geo", "divisor"),
    forward=_avg_pool3d_array,
    vjp={"self": lambda g, geo, divisor: _avg_pool3d_vjp_array(g, geo, divisor)},
    composite=_avg_pool_composite,  # recorded backwards differentiate it: every order exact
    jvp=LINEAR,
)


def avg_pool3d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """3-D average pooling over ``input`` (N, C, D, H, W) or (C, D, H, W).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.avg_pool3d(ember.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
        tensor([[[[[3.5000]]]]])
    """
    require_tensor(input, "avg_pool3d")
    geo = _pool3d_setup(input, kernel_size, stride, padding, 1, ceil_mode, "avg_pool3d")
    x = input._data
    if x.dtype.kind not in "fiuV":
        raise NotImplementedError(f"\"avg_pool3d\" not implemented for '{scalar_name(x.dtype)}'")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    divisor = shape_constant(_avg_divisor(geo, count_include_pad, divisor_override))
    out = _quietly(_avg_pool3d_array, x, geo, divisor)
    return record(AvgPool3DBackward0, out, (input,), (geo, divisor))


# -- max unpooling -------------------------------------------------------------------------------


def _unpool_array(x: np.ndarray, indices: np.ndarray, size: tuple) -> np.ndarray:
    """Scatter ``x`` (..., *in) into zeros (..., *size) at the flat spatial ``indices``."""
    nd = len(size)
    lead = x.shape[:-nd]
    m = math.prod(lead)
    out = np.zeros((m, math.prod(size)), dtype=x.dtype)
    rows = np.arange(m).reshape(-1, 1)
    out[rows, indices.reshape(m, -1)] = x.reshape(m, -1)
    return out.reshape(lead + tuple(size))


def _unpool_vjp(g, indices: np.ndarray, size: tuple):
    """The gradient at each input: ``g`` read at its index (a gather, linear in ``g``)."""
    nd = len(size)
    shape = indices.shape
    flat = indices.reshape(shape[: len(shape) - nd] + (-1,))
    if is_raw(g):
        gf = g.reshape(g.shape[:-nd] + (-1,))
        return np.take_along_axis(gf, flat, axis=-1).reshape(shape)
    return g.flatten(-nd).gather(-1, _wrap(flat)).reshape(shape)


def _unpool_node(name: str):
    return defop(
        name,
        params=("indices", "size"),
        forward=_unpool_array,
        vjp={"self": _unpool_vjp},
        jvp=LINEAR,
    )


MaxUnpool2DBackward0 = _unpool_node("MaxUnpool2DBackward0")
MaxUnpool3DBackward0 = _unpool_node("MaxUnpool3DBackward0")


def _unpool_output_size(input, k, s, p, output_size) -> tuple:
    nd = len(k)
    default = [(input.shape[-nd + i] - 1) * s[i] + k[i] - 2 * p[i] for i in range(nd)]
    if output_size is None:
        ret = default
    else:
        if isinstance(output_size, Tensor):
            output_size = output_size.tolist()
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError(
                "output_size should be a sequence containing "
                f"{nd} or {nd + 2} elements, but it has a length of '{len(output_size)}'"
            )
        for i in range(nd):
            lo, hi = default[i] - s[i], default[i] + s[i]
            if not (lo < output_size[i] < hi):
                raise ValueError(
                    f'invalid output_size "{output_size}" (dim {i} must be between {lo} and {hi})'
                )
        ret = output_size
    for i in range(nd):
        if ret[i] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial "
                f"dimensions, but got output_size[{i}]={ret[i]}"
            )
    return tuple(int(v) for v in ret)


def _max_unpool(input, indices, size: tuple, node) -> Tensor:
    nd = len(size)
    fname = f"max_unpooling{nd}d"
    require_tensor(input, fname)
    require_tensor(indices, fname)
    if indices._data.dtype != np.int64:
        raise RuntimeError(
            f"elements in indices should be type int64 but got: {scalar_name(indices._data.dtype)}"
        )
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Input to {fname} should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor with "
            f"{input.dim()} dimensions."
        )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}"
        )
    idx = indices._data
    total = math.prod(size)
    bad = (idx < 0) | (idx >= total)
    if bad.any():
        sizes = "x".join(str(v) for v in size)
        raise RuntimeError(
            f"Found an invalid max index: {int(idx[bad].flat[0])} (output volumes are of size "
            f"{sizes}"
            ")"
        )
    out = _unpool_array(input._data, idx, size)
    return record(node, out, (input,), (idx, size))


def _unpool_args(kernel_size, stride, padding, nd: int) -> tuple:
    k = _pair(kernel_size, "kernel_size", nd)
    s = k if stride is None else _pair(stride, "stride", nd)
    return k, s, _pair(padding, "padding", nd)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """A partial inverse of ``max_pool1d``: ``input`` scattered at ``indices``, zeros elsewhere.

    Recorded as torch records it: the 2-d unpooling of ``input.unsqueeze(-1)``, squeezed.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> out, idx = F.max_pool1d(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2, return_indices=True)
        >>> F.max_unpool1d(out, idx, 2)
        tensor([[[0., 3., 2., 0.]]])
    """
    k, s, p = _unpool_args(kernel_size, stride, padding, 1)
    size = _unpool_output_size(input, k, s, p, output_size) + (1,)
    return _max_unpool(
        input.unsqueeze(-1), indices.unsqueeze(-1), size, MaxUnpool2DBackward0
    ).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """A partial inverse of ``max_pool2d``: ``input`` scattered at ``indices``, zeros elsewhere.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> out, idx = F.max_pool2d(ember.arange(4.0).reshape(1, 1, 2, 2), 2, return_indices=True)
        >>> F.max_unpool2d(out, idx, 2)
        tensor([[[[0., 0.],
                  [0., 3.]]]])
    """
    k, s, p = _unpool_args(kernel_size, stride, padding, 2)
    size = _unpool_output_size(input, k, s, p, output_size)
    return _max_unpool(input, indices, size, MaxUnpool2DBackward0)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """A partial inverse of ``max_pool3d``: ``input`` scattered at ``indices``, zeros elsewhere.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.arange(8.0).reshape(1, 1, 2, 2, 2)
        >>> out, idx = F.max_pool3d(x, 2, return_indices=True)
        >>> F.max_unpool3d(out, idx, 2).flatten().tolist()
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0]
    """
    k, s, p = _unpool_args(kernel_size, stride, padding, 3)
    size = _unpool_output_size(input, k, s, p, output_size)
    return _max_unpool(input, indices, size, MaxUnpool3DBackward0)


# -- Lp pooling (composed as torch composes it) -------------------------------------------------


def _lp_finish(out: Tensor, norm_type, numel: int) -> Tensor:
    return (out.sign() * out.abs().relu()).mul(numel).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """1-D power-average pooling: ``(sum over each window of x**p) ** (1/p)``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.lp_pool1d(ember.tensor([[[3.0, 4.0, 0.0, 0.0]]]), 2, 2)
        tensor([[[5., 0.]]])
    """
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool1d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool1d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool1d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return _lp_finish(out, norm_type, kernel_size)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D power-average pooling: ``(sum over each window of x**p) ** (1/p)``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.lp_pool2d(ember.tensor([[[[3.0, 4.0], [0.0, 0.0]]]]), 2, 2)
        tensor([[[[5.]]]])
    """
    kw, kh = _pair(kernel_size, "kernel_size")
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool2d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool2d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool2d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return _lp_finish(out, norm_type, kw * kh)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling: ``(sum over each window of x**p) ** (1/p)``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.lp_pool3d(ember.ones(1, 1, 2, 2, 2), 1, 2)
        tensor([[[[[8.]]]]])
    """
    kd, kw, kh = _pair(kernel_size, "kernel_size", 3)
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool3d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool3d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool3d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return _lp_finish(out, norm_type, kd * kw * kh)


# -- 3-d adaptive pooling -----------------------------------------------------------------------


AdaptiveAvgPool3DBackward0 = defop(
    "AdaptiveAvgPool3DBackward0",
    params=("ad",),
    forward=_adaptive_avg_array,
    vjp={"self": lambda g, ad: _adaptive_avg_vjp(g, ad)},
    composite=_adaptive_avg_composite,
    jvp=LINEAR,
)


@_batched_nd(3)
def _adaptive_max3d_array(x: np.ndarray, ad: _Adaptive):
    """The window maxima and the flat ``(d * H + h) * W + w`` input index of each."""
    idd, ih, iw = ad.idx
    md, mh, mw = ad.mask
    win = x[
        :,
        :,
        idd[:, :, None, None, None, None],
        ih[None, None, :, :, None, None],
        iw[None, None, None, None, :, :],
    ]  # (N, C, od, kd, oh, kh, ow, kw)
    valid = md[:, :, None, None, None, None] & mh[None, None, :, :, None, None]
    valid = valid & mw[None, None, None, None, :, :]
    lowest = -np.inf if x.dtype.kind in "fV" else np.iinfo(x.dtype).min
    win = np.where(valid, win, np.asarray(lowest, dtype=x.dtype))
    n, c, od, kd, oh, kh, ow, kw = win.shape
    flat = win.transpose(0, 1, 2, 4, 6, 3, 5, 7).reshape(n, c, od, oh, ow, kd * kh * kw)
    arg = np.argmax(flat, axis=-1)  # the first maximum (a NaN wins), as torch's kernel
    out = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
    td, th, tw = np.unravel_index(arg, (kd, kh, kw))
    dd = np.take_along_axis(idd[None, None, :, None, None, :], td[..., None], -1)[..., 0]
    hh = np.take_along_axis(ih[None, None, None, :, None, :], th[..., None], -1)[..., 0]
    ww = np.take_along_axis(iw[None, None, None, None, :, :], tw[..., None], -1)[..., 0]
    _, _, h, w = x.shape[1:]
    return out, ((dd * h + hh) * w + ww).astype(np.int64)


def _take_flat3(x, indices: np.ndarray):
    """``x`` (..., D, H, W) at the flat ``indices`` (..., od, oh, ow): linear in ``x``."""
    flat = indices.reshape(indices.shape[:-3] + (-1,))
    if is_raw(x):
        return np.take_along_axis(x.reshape(x.shape[:-3] + (-1,)), flat, -1).reshape(indices.shape)
    return x.flatten(-3).gather(-1, _wrap(flat)).reshape(indices.shape)


def _adaptive_max3d_vjp(g: np.ndarray, indices: np.ndarray, ad: _Adaptive) -> np.ndarray:
    lead = g.shape[:-3]
    m = math.prod(lead)
    gx = np.zeros((m, math.prod(ad.in_size)), dtype=g.dtype)
    rows = np.arange(m).reshape(-1, 1)
    np.add.at(gx, (rows, indices.reshape(m, -1)), g.reshape(m, -1))
    return gx.reshape(lead + ad.in_size)


AdaptiveMaxPool3DBackward0 = defop(
    "AdaptiveMaxPool3DBackward0",
    params=("ad",),
    saves=("indices",),
    forward=_adaptive_max3d_array,
    vjp={"self": lambda g, indices, ad: _adaptive_max3d_vjp(g, indices, ad)},
    composite=lambda self, ad: _take_flat3(self, _adaptive_max3d_array(self._data, ad)[1]),
    jvp=lambda t_self, indices, ad: _take_flat3(t_self, indices),
)


def _adaptive3d_input(input, output_size, fname: str) -> tuple:
    require_tensor(input, fname)
    if input.dim() not in (4, 5):
        sep = ": " if fname == "adaptive_max_pool3d" else " "
        raise RuntimeError(f"{fname}(): Expected 4D or 5D tensor, but got{sep}{list(input.shape)}")
    for i in range(input.dim() - 3, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{fname}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {i} being empty"
            )
    if isinstance(output_size, Tensor):
        output_size = output_size.tolist()
    sizes = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size] * 3
    if len(sizes) != 3:
        if fname == "adaptive_max_pool3d":
            raise RuntimeError(
                "adaptive_max_pool3d(): internal error: output_size.size() must be 3"
            )
        raise RuntimeError(f"{fname}: output_size must be 3")
    spatial = tuple(input.shape[-3:])
    out = tuple(int(spatial[i]) if v is None else int(v) for i, v in enumerate(sizes))
    if min(out) < 0:
        if fname == "adaptive_max_pool3d":
            raise RuntimeError(
                "Trying to create tensor with negative dimension "
                f"{min(out)}: {list(input.shape[:-3]) + list(out)}"
            )
        raise RuntimeError(
            f"{fname}: elements of output_size must be greater than or equal to 0 but received "
            f"{{{out[0]}, {out[1]},{out[2]}}}"
        )
    x = input._data
    if x.dtype.kind not in "fiuV":
        raise NotImplementedError(f"\"{fname}\" not implemented for '{scalar_name(x.dtype)}'")
    return out


def adaptive_avg_pool3d(input, output_size):
    """3-D adaptive average pooling to ``output_size`` (int, triple; None keeps a size).

    A (1, 1, 1) output is ``input.mean((-1, -2, -3), keepdim=True)`` as in torch.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.adaptive_avg_pool3d(ember.arange(8.0).reshape(1, 1, 2, 2, 2), 1)
        tensor([[[[[3.5000]]]]])
    """
    out = _adaptive3d_input(input, output_size, "adaptive_avg_pool3d")
    if out == (1, 1, 1):
        return input.mean((-1, -2, -3), keepdim=True)
    x = input._data
    ad = _Adaptive(x.shape[-3:], out)
    res = _quietly(_adaptive_avg_array, x, ad)
    return record(AdaptiveAvgPool3DBackward0, res, (input,), (ad,))


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """3-D adaptive max pooling to ``output_size``; with ``return_indices`` also the flat
    ``(d * H + h) * W + w`` index of each maximum.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.adaptive_max_pool3d(ember.arange(8.0).reshape(1, 1, 2, 2, 2), 1)
        tensor([[[[[7.]]]]])
    """
    out = _adaptive3d_input(input, output_size, "adaptive_max_pool3d")
    x = input._data
    ad = _Adaptive(x.shape[-3:], out)
    values, indices = _adaptive_max3d_array(x, ad)
    t = record(AdaptiveMaxPool3DBackward0, values, (input,), (ad,), (indices,))
    return (t, _wrap(indices)) if return_indices else t
