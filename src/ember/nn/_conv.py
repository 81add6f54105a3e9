"""Windowed ops: conv2d, max/avg pooling, unfold/fold (im2col/col2im) and pad.

Every window op works on a padded copy of the input whose size is exactly what the
windows cover, seen through one ``as_strided`` view of shape ``(N, C, kh, kw, oh, ow)``.
Forward passes are one matmul (conv) or a loop over the ``kh * kw`` kernel offsets
(pools); backward passes scatter back with the same offset loop (col2im). No loop ever
runs over pixels or batch elements.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._tensor import Tensor, _legacy_type_name
from ..ops.reduction import _scalar_name
from ._node import NNNode, record_nn

_wrap = Tensor._wrap


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

    def torch_pad(self) -> tuple:
        """The ``F.pad`` argument (left, right, top, bottom) producing the padded input."""
        (h, w), (pt, pl) = self.in_size, self.pads
        return (pl, self.size[1] - w - pl, pt, self.size[0] - h - pt)


def _check_4d(x: Tensor, fname: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}"
        )


def _unbatched(fn, input: Tensor, *args, **kwargs):
    out = fn(input.unsqueeze(0), *args, **kwargs)
    if isinstance(out, tuple):
        return tuple(o.squeeze(0) for o in out)
    return out.squeeze(0)


# -- unfold / fold ----------------------------------------------------------------------


def _unfold_array(x: np.ndarray, geo: _Geometry) -> np.ndarray:
    xp = _pad4(x, geo.pads, geo.size)
    win = _windows(xp, geo.k, geo.s, geo.d, geo.out)
    n, c = x.shape[:2]
    return win.reshape(n, c * geo.k[0] * geo.k[1], geo.out[0] * geo.out[1])


def _fold_array(cols: np.ndarray, geo: _Geometry) -> np.ndarray:
    n = cols.shape[0]
    c = cols.shape[1] // (geo.k[0] * geo.k[1])
    c6 = cols.reshape((n, c) + geo.k + geo.out)
    xp = _col2im(c6, geo.size, geo.k, geo.s, geo.d, geo.out, cols.dtype)
    return _unpad4(xp, geo.pads, (n, c) + geo.in_size)


class Im2ColBackward0(NNNode):
    __slots__ = ("geo",)

    def backward(self, grad, *_saved):
        if isinstance(grad, Tensor):
            return _fold_tensor(grad, self.geo)
        return _fold_array(grad, self.geo)

    def jvp(self, tangents, inputs, *saved):
        return _unfold_tensor(tangents[0], self.geo)  # linear: the op on the tangent


class Col2ImBackward0(NNNode):
    __slots__ = ("geo",)

    def backward(self, grad, *_saved):
        if isinstance(grad, Tensor):
            return _unfold_tensor(grad, self.geo)
        return _unfold_array(grad, self.geo)

    def jvp(self, tangents, inputs, *saved):
        return _fold_tensor(tangents[0], self.geo)


def _unfold_tensor(x: Tensor, geo: _Geometry) -> Tensor:
    return record_nn(Im2ColBackward0, _unfold_array(x._data, geo), (x,), geo=geo)


def _fold_tensor(cols: Tensor, geo: _Geometry) -> Tensor:
    return record_nn(Col2ImBackward0, _fold_array(cols._data, geo), (cols,), geo=geo)


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
    _check_4d(input, "unfold")
    if input.dim() == 3:
        return _unbatched(unfold, input, kernel_size, dilation, padding, stride)
    if input.dim() != 4:
        raise RuntimeError(
            f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)"
        )
    k, d = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    p, s = _pair(padding, "padding"), _pair(stride, "stride")
    _check_positive(k, s, d, p)
    geo = _conv_geometry(input.shape[2:], k, s, d, p, p)
    if min(geo.out) <= 0:
        raise RuntimeError(
            f"Given input with spatial size ({input.shape[2]}, {input.shape[3]}), "
            f"kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, "
            f"{p[1]}), calculated shape of the array of sliding blocks as ({geo.out[0]}, "
            f"{geo.out[1]}), but its components must be at least one."
        )
    return _unfold_tensor(input, geo)


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
    _check_4d(input, "fold")
    if input.dim() == 2:
        return _unbatched(fold, input, output_size, kernel_size, dilation, padding, stride)
    if input.dim() != 3:
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
    if input.shape[1] % kk != 0:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={input.shape[1]} and "
            f"kernel_size=({k[0]}, {k[1]})"
        )
    if input.shape[2] != geo.out[0] * geo.out[1]:
        raise RuntimeError(
            f"Given output_size=({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
            f"expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {geo.out[0]} * {geo.out[1]} = {geo.out[0] * geo.out[1]}, but got "
            f"input.size(2)={input.shape[2]}."
        )
    return _fold_tensor(input, geo)


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


class ConvolutionBackward0(NNNode):
    __slots__ = ("geo", "groups", "cols")

    def vjp(self, g, x, w, b):
        geo, groups = self.geo, self.groups
        n, o = g.shape[:2]
        og = o // groups
        p = geo.out[0] * geo.out[1]
        g4 = g.reshape(n, groups, og, p)
        wm = w.reshape(groups, og, -1)
        gx = gw = gb = None
        if self.next_functions[0][0] is not None:
            gcols = np.matmul(wm.transpose(0, 2, 1), g4)  # (N, G, K, P)
            c6 = gcols.reshape((n, x.shape[1]) + geo.k + geo.out)
            gxp = _col2im(c6, geo.size, geo.k, geo.s, geo.d, geo.out, g.dtype)
            gx = _unpad4(gxp, geo.pads, x.shape)
        if self.next_functions[1][0] is not None:
            cols = self.cols
            if cols is None:
                cols = _unfold_array(x, geo).reshape(n, groups, -1, p)
            gw = np.matmul(g4, cols.transpose(0, 1, 3, 2)).sum(0).reshape(w.shape)
        if b is not None and self.next_functions[2][0] is not None:
            gb = g.sum(axis=(0, 2, 3))
        self.cols = None
        return gx, gw, gb

    def composite(self, x, w, b):
        from .functional import pad

        geo, groups = self.geo, self.groups
        n, o = x.shape[0], w.shape[0]
        xp = pad(x, geo.torch_pad())
        cols = _unfold_tensor(xp, _Geometry(geo.size, geo.k, geo.s, geo.d, geo.out, (0, 0)))
        cols = cols.reshape(n, groups, -1, geo.out[0] * geo.out[1])
        out = w.reshape(groups, o // groups, -1).matmul(cols).reshape(n, o, *geo.out)
        if b is not None:
            out = out + b.reshape(1, o, 1, 1)
        return out


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
    _check_4d(input, "conv2d")
    if not isinstance(weight, Tensor):
        raise TypeError(
            f"conv2d(): argument 'weight' (position 2) must be Tensor, not {type(weight).__name__}"
        )
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
            f"Input type ({_legacy_type_name(x.dtype)}) and weight type "
            f"({_legacy_type_name(w.dtype)}) should be the same or input should be a MKLDNN "
            "tensor and weight is a dense tensor"
        )
    if b is not None and b.dtype != x.dtype:
        raise RuntimeError(
            f"Input type ({_legacy_type_name(x.dtype)}) and bias type "
            f"({_legacy_type_name(b.dtype)}) should be the same"
        )
    if x.dtype.kind not in "fciu":
        raise NotImplementedError(
            f"\"slow_conv2d_cpu\" not implemented for '{_scalar_name(x.dtype)}'"
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
    p = geo.out[0] * geo.out[1]
    cols = _unfold_array(x, geo).reshape(n, groups, cg * kh * kw, p)
    out = np.matmul(w.reshape(groups, o // groups, cg * kh * kw), cols)
    out = out.reshape(n, o, geo.out[0], geo.out[1])
    if b is not None:
        out += b.reshape(o, 1, 1)
    keep = cols if (weight.requires_grad) else None
    return record_nn(
        ConvolutionBackward0, out, (input, weight, bias), geo=geo, groups=groups, cols=keep
    )


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
    n, c, h, w = input.shape
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


def _pool_input(input, fname):
    _check_4d(input, fname)
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"non-empty 3D or 4D (batch mode) tensor expected for input, but got: {input.dim()}D"
        )


class MaxPool2DWithIndicesBackward0(NNNode):
    __slots__ = ("geo", "arg")

    def vjp(self, g, x):
        geo = self.geo
        gxp = np.zeros(x.shape[:2] + geo.size, dtype=g.dtype)
        arg = self.arg
        kw = geo.k[1]
        for i, j, sh, sw in _offsets(geo.k, geo.s, geo.d, geo.out):
            gxp[:, :, sh, sw] += np.where(arg == i * kw + j, g, 0)
        return _unpad4(gxp, geo.pads, x.shape)

    def composite(self, x):
        from .functional import pad

        geo = self.geo
        n, c = x.shape[:2]
        xp = pad(x, geo.torch_pad(), value=-np.inf)
        cols = _unfold_tensor(xp, _Geometry(geo.size, geo.k, geo.s, geo.d, geo.out, (0, 0)))
        cols = cols.reshape(n, c, geo.k[0] * geo.k[1], -1)
        return cols.max(2)[0].reshape(n, c, *geo.out)

    def jvp(self, tangents, inputs, *saved):
        # The tangent at each window's recorded maximum (torch's tie-breaking).
        from .functional import pad

        geo, t = self.geo, tangents[0]
        n, c = t.shape[:2]
        tp = pad(t, geo.torch_pad())
        cols = _unfold_tensor(tp, _Geometry(geo.size, geo.k, geo.s, geo.d, geo.out, (0, 0)))
        cols = cols.reshape(n, c, geo.k[0] * geo.k[1], -1)
        idx = _wrap(self.arg.astype(np.int64).reshape(n, c, 1, -1))
        return cols.gather(2, idx).reshape(n, c, *geo.out)


def _max_pool_array(x: np.ndarray, geo: _Geometry):
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
    if input.dim() == 3:
        return _unbatched(
            max_pool2d, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
        )
    x = input._data
    if x.dtype.kind not in "fiu":
        raise NotImplementedError(f"\"max_pool2d\" not implemented for '{_scalar_name(x.dtype)}'")
    geo = _pool_setup(input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")
    out, arg = _max_pool_array(x, geo)
    t = record_nn(MaxPool2DWithIndicesBackward0, out, (input,), geo=geo, arg=arg)
    if not return_indices:
        return t
    kh_idx, kw_idx = np.divmod(arg.astype(np.int64), geo.k[1])
    rows = np.arange(geo.out[0]).reshape(-1, 1) * geo.s[0] - geo.pads[0]
    colz = np.arange(geo.out[1]).reshape(1, -1) * geo.s[1] - geo.pads[1]
    hh = rows + kh_idx * geo.d[0]
    ww = colz + kw_idx * geo.d[1]
    return t, _wrap(hh * x.shape[3] + ww)


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


class AvgPool2DBackward0(NNNode):
    __slots__ = ("geo", "divisor")

    def vjp(self, g, x):
        geo = self.geo
        gq = (g / self.divisor).astype(g.dtype, copy=False)
        gxp = np.zeros(x.shape[:2] + geo.size, dtype=g.dtype)
        for _i, _j, sh, sw in _offsets(geo.k, geo.s, geo.d, geo.out):
            gxp[:, :, sh, sw] += gq
        return _unpad4(gxp, geo.pads, x.shape)

    def composite(self, x):
        from .functional import pad

        geo = self.geo
        n, c = x.shape[:2]
        xp = pad(x, geo.torch_pad())
        cols = _unfold_tensor(xp, _Geometry(geo.size, geo.k, geo.s, geo.d, geo.out, (0, 0)))
        summed = cols.reshape(n, c, geo.k[0] * geo.k[1], -1).sum(2).reshape(n, c, *geo.out)
        return summed / _wrap(self.divisor.astype(x._data.dtype))


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
    _pool_input(input, "avg_pool2d")
    if input.dim() == 3:
        return _unbatched(
            avg_pool2d,
            input,
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad,
            divisor_override,
        )
    x = input._data
    if x.dtype.kind not in "fiu":
        raise NotImplementedError(f"\"avg_pool2d\" not implemented for '{_scalar_name(x.dtype)}'")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    geo = _pool_setup(input, kernel_size, stride, padding, 1, ceil_mode, "avg_pool2d")
    divisor = _avg_divisor(geo, count_include_pad, divisor_override)
    xp = _pad4(x, geo.pads, geo.size)
    win = _windows(xp, geo.k, geo.s, geo.d, geo.out)
    acc = np.zeros(x.shape[:2] + geo.out, dtype=x.dtype if x.dtype.kind == "f" else np.int64)
    for i in range(geo.k[0]):
        for j in range(geo.k[1]):
            acc += win[:, :, i, j]
    if x.dtype.kind == "f":
        out = (acc / divisor).astype(x.dtype, copy=False)
    else:  # integer division truncating toward zero, like torch's kernel
        out = np.trunc(acc / divisor).astype(x.dtype)
    return record_nn(AvgPool2DBackward0, out, (input,), geo=geo, divisor=divisor)


# -- pad ----------------------------------------------------------------------------------------


def _pad_layout(shape: tuple, pad) -> tuple:
    """Per-dim (before, after) amounts from torch's last-dim-first ``pad`` sequence."""
    pad = [int(p) for p in pad]
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


class ConstantPadNdBackward0(NNNode):
    __slots__ = ("amounts",)

    def backward(self, grad, *_saved):
        neg = tuple((-lo, -hi) for lo, hi in self.amounts)
        if isinstance(grad, Tensor):
            return _constant_pad(grad, neg, 0)
        return _constant_pad_array(grad, neg, 0)

    def jvp(self, tangents, inputs, *saved):
        return _constant_pad(tangents[0], self.amounts, 0)  # the padding value is constant


def _constant_pad(input: Tensor, amounts: tuple, value) -> Tensor:
    a = input._data
    if value is None:
        value = 0
    out = _constant_pad_array(a, amounts, value)
    return record_nn(ConstantPadNdBackward0, out, (input,), amounts=amounts)


def _index_pad(input: Tensor, amounts: tuple, mode: str) -> Tensor:
    """reflect / replicate / circular padding as index_select along each padded dim."""
    out = input
    for dim, (lo, hi) in enumerate(amounts):
        if lo == 0 and hi == 0:
            continue
        n = input.shape[dim]
        pos = np.arange(-lo, n + hi)
        if mode == "reflect":
            if lo >= n or hi >= n:
                raise RuntimeError(
                    f"Argument #4: Padding size should be less than the corresponding input "
                    f"dimension, but got: padding ({lo}, {hi}) at dimension {dim} of input "
                    f"{list(input.shape)}"
                )
            period = 2 * (n - 1) if n > 1 else 1
            pos = np.abs(pos) % period
            idx = np.where(pos >= n, period - pos, pos)
        elif mode == "replicate":
            idx = np.clip(pos, 0, n - 1)
        else:  # circular
            if lo > n or hi > n:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            idx = pos % n
        out = out.index_select(dim, _wrap(idx.astype(np.int64)))
    return out


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """Pad ``input``: ``pad`` lists (before, after) amounts starting from the last dim.

    ``mode`` is ``'constant'`` (negative amounts crop), ``'reflect'``, ``'replicate'`` or
    ``'circular'``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.pad(ember.ones(1, 2), (1, 2), value=0.5)
        tensor([[0.5000, 1.0000, 1.0000, 0.5000, 0.5000]])
    """
    if not isinstance(input, Tensor):
        raise TypeError(
            f"pad(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    amounts = _pad_layout(input.shape, pad)
    if mode == "constant":
        return _constant_pad(input, amounts, value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise ValueError(f'Padding mode "{mode}" doesn\'t take in value argument.')
    return _index_pad(input, amounts, mode)
