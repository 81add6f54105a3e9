"""Windowed ops: conv2d, max/avg pooling, unfold/fold (im2col/col2im) and pad.

Every window op works on a padded copy of the input whose size is exactly what the
windows cover, seen through one ``as_strided`` view of shape ``(N, C, kh, kw, oh, ow)``.
Forward passes are one matmul (conv) or a loop over the ``kh * kw`` kernel offsets
(pools); backward passes scatter back with the same offset loop (col2im). No loop ever
runs over pixels or batch elements.

Each op is a ``defop`` declaration: its forward and VJP on arrays, its ``composite`` (the op
written with unfold, the linear im2col op, and other ember ops) for exact higher orders, and
its forward mode: unfold, fold, average pooling and padding are linear (their tangent is the
op on the tangent); conv2d's tangent is conv2d of the tangents (product rule); max pooling's
is the tangent at each window's recorded maximum (the forward's choice among ties).
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._dtype import scalar_name
from .._tensor import Tensor
from ..ops._core import (
    LINEAR,
    QUIET,
    defop,
    is_raw,
    legacy_type_name,
    quiet_reset,
    quiet_set,
    record,
    require_tensor,
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
    """A read-only ``(N, C, kh, kw, oh, ow)`` view of the windows of ``xp`` (N, C, H, W)."""
    n, c = xp.shape[:2]
    st = xp.strides
    return as_strided(
        xp,
        (n, c, k[0], k[1], out[0], out[1]),
        (st[0], st[1], st[2] * d[0], st[3] * d[1], st[2] * s[0], st[3] * s[1]),
        writeable=False,
    )


def _offsets(k: tuple, s: tuple, d: tuple, out: tuple):
    """``(i, j, slice_h, slice_w)`` for each kernel offset: where that tap reads from."""
    for i in range(k[0]):
        sh = slice(i * d[0], i * d[0] + (out[0] - 1) * s[0] + 1, s[0])
        for j in range(k[1]):
            sw = slice(j * d[1], j * d[1] + (out[1] - 1) * s[1] + 1, s[1])
            yield i, j, sh, sw


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
    """``x`` (N, C, H, W) padded by ``pads`` = (top, left) to spatial ``size`` (cropping too)."""
    if pads == (0, 0) and x.shape[2:] == size:
        return x
    return _place(x, x.shape[:2] + size, (0, 0) + pads, fill)


def _unpad4(g: np.ndarray, pads: tuple, shape: tuple) -> np.ndarray:
    """The adjoint of ``_pad4``: the part of ``g`` that came from the input."""
    if pads == (0, 0) and g.shape == shape:
        return g
    return _place(g, shape, (0, 0, -pads[0], -pads[1]))


def _col2im(cols: np.ndarray, size: tuple, k, s, d, out, dtype) -> np.ndarray:
    """Sum window values ``cols`` (N, C, kh, kw, oh, ow) back into an (N, C, *size) array."""
    n, c = cols.shape[:2]
    res = np.zeros((n, c) + size, dtype=dtype)
    for i, j, sh, sw in _offsets(k, s, d, out):
        res[:, :, sh, sw] += cols[:, :, i, j]
    return res


class _Geometry:
    """Sizes of one window op: kernel, stride, dilation, output, top/left pads and the
    exact padded size the windows cover (pads on the bottom/right follow from it)."""

    __slots__ = ("k", "s", "d", "out", "pads", "size", "in_size")

    def __init__(self, in_size, k, s, d, out, pads) -> None:
        self.in_size = tuple(in_size)
        self.k, self.s, self.d, self.out = tuple(k), tuple(s), tuple(d), tuple(out)
        self.pads = tuple(pads)
        self.size = tuple(_span(o, kk, ss, dd) for o, kk, ss, dd in zip(out, k, s, d))

    def __repr__(self) -> str:
        return (
            f"_Geometry(kernel_size={self.k}, stride={self.s}, dilation={self.d}, "
            f"padding={self.pads}, input={self.in_size}, output={self.out})"
        )


def _batched(fn):
    """``fn`` on (N, C, H, W) arrays, also taking unbatched (C, H, W) ones, as torch's
    window kernels do: the result(s) then lose the batch dim again."""

    def run(x, *args):
        if x.ndim == 4:
            return fn(x, *args)
        res = fn(x[None], *args)
        return tuple(r[0] for r in res) if isinstance(res, tuple) else res[0]

    run.__name__ = run.__qualname__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run


def _unbatched(fn, input: Tensor, *args, **kwargs):
    out = fn(input.unsqueeze(0), *args, **kwargs)
    if isinstance(out, tuple):
        return tuple(o.squeeze(0) for o in out)
    return out.squeeze(0)


# -- unfold / fold ----------------------------------------------------------------------


def _unfold_array(x: np.ndarray, geo: _Geometry) -> np.ndarray:
    """im2col: (N, C, H, W) -> (N, C * kh * kw, L), or unbatched (C, H, W) -> (C * kh * kw, L)."""
    if x.ndim == 3:
        return _unfold_array(x[None], geo)[0]
    xp = _pad4(x, geo.pads, geo.size)
    win = _windows(xp, geo.k, geo.s, geo.d, geo.out)
    n, c = x.shape[:2]
    return win.reshape(n, c * geo.k[0] * geo.k[1], geo.out[0] * geo.out[1])


def _fold_array(cols: np.ndarray, geo: _Geometry) -> np.ndarray:
    """col2im, the adjoint of ``_unfold_array``: windows summed back into an image."""
    if cols.ndim == 2:
        return _fold_array(cols[None], geo)[0]
    n = cols.shape[0]
    c = cols.shape[1] // (geo.k[0] * geo.k[1])
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


# -- conv2d ---------------------------------------------------------------------------------


def _conv_forward(x: np.ndarray, w: np.ndarray, b, geo: _Geometry, groups: int):
    """The convolution and its im2col columns (N, G, C / G * kh * kw, L)."""
    n = x.shape[0]
    o = w.shape[0]
    kdim = w.shape[1] * w.shape[2] * w.shape[3]
    cols = _unfold_array(x, geo).reshape(n, groups, kdim, geo.out[0] * geo.out[1])
    out = np.matmul(w.reshape(groups, o // groups, kdim), cols)
    out = out.reshape(n, o, geo.out[0], geo.out[1])
    if b is not None:
        out += b.reshape(o, 1, 1)
    return out, cols


def _conv_vjp(g, input, weight, bias, cols, geo, groups, needs_input_grad):
    """All three gradients (they share the reshaped output gradient)."""
    n, o = g.shape[:2]
    og = o // groups
    p = geo.out[0] * geo.out[1]
    g4 = g.reshape(n, groups, og, p)
    gx = gw = gb = None
    if needs_input_grad[0]:
        gcols = np.matmul(weight.reshape(groups, og, -1).transpose(0, 2, 1), g4)  # (N, G, K, L)
        c6 = gcols.reshape((n, input.shape[1]) + geo.k + geo.out)
        gxp = _col2im(c6, geo.size, geo.k, geo.s, geo.d, geo.out, g.dtype)
        gx = _unpad4(gxp, geo.pads, input.shape)
    if needs_input_grad[1]:
        if cols is None:
            cols = _unfold_array(input, geo).reshape(n, groups, -1, p)
        gw = np.matmul(g4, cols.transpose(0, 1, 3, 2)).sum(0).reshape(weight.shape)
    if bias is not None and needs_input_grad[2]:
        gb = g.sum(axis=(0, 2, 3))
    return gx, gw, gb


def _conv(x: Tensor, w: Tensor, b, geo: _Geometry, groups: int) -> Tensor:
    """conv2d on validated (batched) operands, recorded."""
    b_data = None if b is None else b._data
    out, cols = _quietly(_conv_forward, x._data, w._data, b_data, geo, groups)
    keep = (cols,) if w._rg else _NO_COLS
    return record(ConvolutionBackward0, out, (x, w, b), (geo, groups), keep)


def _conv_composite(input, weight, bias, geo, groups):
    """The convolution written with unfold (im2col) and matmul."""
    n, o = input.shape[0], weight.shape[0]
    cols = _unfold(input, geo).reshape(n, groups, -1, geo.out[0] * geo.out[1])
    out = weight.reshape(groups, o // groups, -1).matmul(cols).reshape(n, o, *geo.out)
    if bias is not None:
        out = out + bias.reshape(1, o, 1, 1)
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
        term = t_bias.reshape(1, -1, 1, 1)
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
    require_tensor(input, "conv2d")
    require_tensor(weight, "conv2d", "weight", 2)
    if input.dim() not in (3, 4):
        raise RuntimeError(
            "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
            f"{list(input.shape)}"
        )
    nk = weight.dim() - 2
    s, d = _pair(stride, "stride", nk), _pair(dilation, "dilation", nk)
    if weight.dim() != 4:
        if not isinstance(padding, str):
            _pair(padding, "padding", nk)
        raise RuntimeError(
            f"weight should have at least three dimensions; conv2d expects 4-D weight, "
            f"got {weight.dim()}-D weight of size {list(weight.shape)}"
        )
    if input.dim() == 3:
        return _unbatched(conv2d, input, weight, bias, stride, padding, dilation, groups)
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
    if x.dtype.kind not in "fciu":
        raise NotImplementedError(
            f"\"slow_conv2d_cpu\" not implemented for '{scalar_name(x.dtype)}'"
        )
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if o % groups != 0:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size [{list(w.shape)}] instead"
        )
    if c != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(w.shape)}, expected input"
            f"{list(x.shape)} to have {cg * groups} channels, but got {c} channels instead"
        )
    if b is not None and (b.ndim != 1 or b.shape[0] != o):
        raise RuntimeError(
            f"Given weight of size {list(w.shape)}, expected bias to be 1-dimensional with "
            f"{o} elements, but got bias of size {list(b.shape)} instead"
        )
    if min(s) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(d) <= 0:
        raise RuntimeError("dilation should be greater than zero")
    k = (kh, kw)
    if isinstance(padding, str):
        if padding == "valid":
            tl, br = (0, 0), (0, 0)
        elif padding == "same":
            if s != (1, 1):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            totals = [dd * (kk - 1) for dd, kk in zip(d, k)]
            tl = tuple(t // 2 for t in totals)
            br = tuple(t - t // 2 for t in totals)
        else:
            raise RuntimeError(
                f"Invalid padding string: '{padding}', should be one of ['valid', 'same']"
            )
    else:
        tl = br = _pair(padding, "padding")
        if min(tl) < 0:
            raise RuntimeError("negative padding is not supported")
    padded = (h + tl[0] + br[0], wd + tl[1] + br[1])
    eff = (d[0] * (kh - 1) + 1, d[1] * (kw - 1) + 1)
    if padded[0] < eff[0] or padded[1] < eff[1]:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({padded[0]} x {padded[1]}). "
            f"Kernel size: ({eff[0]} x {eff[1]}). Kernel size can't be greater than actual "
            "input size"
        )
    geo = _conv_geometry((h, wd), k, s, d, tl, br)
    out, cols = _quietly(_conv_forward, x, w, b, geo, groups)
    # The im2col columns are kept for the weight's gradient (recomputed otherwise).
    keep = (cols,) if weight._rg else _NO_COLS
    return record(ConvolutionBackward0, out, (input, weight, bias), (geo, groups), keep)


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


@_batched
def _max_pool_array(x: np.ndarray, geo: _Geometry):
    """The window maxima and, per output, the kernel offset ``i * kw + j`` of the maximum."""
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp = _pad4(x, geo.pads, geo.size, lowest)
    win = _windows(xp, geo.k, geo.s, geo.d, geo.out)
    out = win[:, :, 0, 0].copy()
    kk = geo.k[0] * geo.k[1]
    arg = np.zeros(out.shape, dtype=np.int16 if kk < 32768 else np.int64)
    for i in range(geo.k[0]):
        for j in range(geo.k[1]):
            if i == 0 and j == 0:
                continue
            v = win[:, :, i, j]
            # torch's rule: a strictly larger value or a NaN takes over.
            m = ((v > out) | np.isnan(v)) if v.dtype.kind == "f" else v > out
            np.copyto(out, v, where=m)
            arg[m] = i * geo.k[1] + j
    return out, arg


@_batched
def _max_pool_vjp_array(g: np.ndarray, arg: np.ndarray, geo: _Geometry) -> np.ndarray:
    gxp = np.zeros(g.shape[:2] + geo.size, dtype=g.dtype)
    kw = geo.k[1]
    for i, j, sh, sw in _offsets(geo.k, geo.s, geo.d, geo.out):
        gxp[:, :, sh, sw] += np.where(arg == i * kw + j, g, 0)
    return _unpad4(gxp, geo.pads, g.shape[:2] + geo.in_size)


def _window_entries(x: Tensor, arg: np.ndarray, geo: _Geometry) -> Tensor:
    """The entry of ``x`` at each window's offset ``arg``: linear in ``x``, recorded."""
    if x.dim() == 3:
        return _window_entries(x.unsqueeze(0), arg[None], geo).squeeze(0)
    n, c = x.shape[:2]
    cols = _unfold(x, geo).reshape(n, c, geo.k[0] * geo.k[1], -1)
    idx = _wrap(arg.astype(np.int64).reshape(n, c, 1, -1))
    return cols.gather(2, idx).reshape(n, c, *geo.out)


def _max_pool_composite(self, geo):
    # The maxima are the input's entries at the forward's choice of offsets.
    return _window_entries(self, _max_pool_array(self._data, geo)[1], geo)


MaxPool2DWithIndicesBackward0 = defop(
    "MaxPool2DWithIndicesBackward0",
    params=("geo",),
    saves=("arg",),
    forward=_max_pool_array,
    vjp={"self": lambda g, arg, geo: _max_pool_vjp_array(g, arg, geo)},
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
    if x.dtype.kind not in "fiu":
        raise NotImplementedError(f"\"max_pool2d\" not implemented for '{scalar_name(x.dtype)}'")
    geo = _pool_setup(input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")
    out, arg = _max_pool_array(x, geo)
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
    if divisor_override is not None:
        return np.asarray(float(divisor_override))
    sizes = []
    for axis in range(2):
        n, k, s, p = geo.in_size[axis], geo.k[axis], geo.s[axis], geo.pads[axis]
        start = np.arange(geo.out[axis]) * s - p
        end = np.minimum(start + k, n + p)
        full = end - start
        clipped = np.minimum(end, n) - np.maximum(start, 0)
        sizes.append(full if count_include_pad else clipped)
    div = sizes[0].reshape(-1, 1) * sizes[1].reshape(1, -1)
    return np.maximum(div, 1)


@_batched
def _avg_pool_array(x: np.ndarray, geo: _Geometry, divisor: np.ndarray) -> np.ndarray:
    xp = _pad4(x, geo.pads, geo.size)
    win = _windows(xp, geo.k, geo.s, geo.d, geo.out)
    acc = np.zeros(x.shape[:2] + geo.out, dtype=x.dtype if x.dtype.kind == "f" else np.int64)
    for i in range(geo.k[0]):
        for j in range(geo.k[1]):
            acc += win[:, :, i, j]
    if x.dtype.kind == "f":
        return (acc / divisor).astype(x.dtype, copy=False)
    return np.trunc(acc / divisor).astype(x.dtype)  # integers: truncated, like torch's kernel


@_batched
def _avg_pool_vjp_array(g: np.ndarray, geo: _Geometry, divisor: np.ndarray) -> np.ndarray:
    gq = (g / divisor).astype(g.dtype, copy=False)
    gxp = np.zeros(g.shape[:2] + geo.size, dtype=g.dtype)
    for _i, _j, sh, sw in _offsets(geo.k, geo.s, geo.d, geo.out):
        gxp[:, :, sh, sw] += gq
    return _unpad4(gxp, geo.pads, g.shape[:2] + geo.in_size)


def _avg_pool_composite(self, geo, divisor):
    cols = _unfold(self, geo)
    lead = tuple(self.shape[:-2])
    summed = cols.reshape(*lead, geo.k[0] * geo.k[1], -1).sum(-2).reshape(*lead, *geo.out)
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
    if x.dtype.kind not in "fiu":
        raise NotImplementedError(f"\"avg_pool2d\" not implemented for '{scalar_name(x.dtype)}'")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    geo = _pool_setup(input, kernel_size, stride, padding, 1, ceil_mode, "avg_pool2d")
    divisor = _avg_divisor(geo, count_include_pad, divisor_override)
    out = _quietly(_avg_pool_array, x, geo, divisor)
    return record(AvgPool2DBackward0, out, (input,), (geo, divisor))


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
        a = np.take(a, idx, axis=axis)
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
    sums = np.add.reduceat(np.take(g, order, axis=axis), starts, axis=axis)
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
        index.append((d, idx.astype(np.int64), n))
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
