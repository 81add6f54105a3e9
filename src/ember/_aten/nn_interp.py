"""Resampling: ``interpolate`` (nearest, nearest-exact, linear, bilinear, bicubic,
trilinear, area; anti-aliased bilinear, bicubic and lanczos) and its graph nodes.

Every mode but ``area`` is separable: along each resized dim, output ``i`` is a weighted sum
of a few input entries (1 for nearest, 2 for linear, 4 for cubic) at positions computed as
torch's CPU kernels compute them (same scale, same rounding, same clamping). A ``_Plan``
holds those taps per dim; the forward gathers and sums them one dim at a time (the last dim
first, the order torch's kernels nest their sums in), the backward scatters the gradient
back in reverse order. The op is linear: its forward mode is the op on the tangent, and its
composite (index_select and products with constant weights) gives exact higher orders.
``area`` is adaptive average pooling, as in torch.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._dtype import scalar_name
from .._overrides import warn as _warn
from .._tensor import Tensor
from ._core import LINEAR, defop, intp, is_raw, record, require_tensor, run
from .nn_conv import _quietly, _scatter_add, adaptive_avg_pool1d, adaptive_avg_pool2d

_wrap = Tensor._wrap


class _Plan:
    """The taps of one resampling: per resized dim (negative axis, input size, taps), each
    tap an ``(index, weight)`` pair of arrays over the output positions (weight None: 1)."""

    __slots__ = ("dims",)
    # Made from the sizes and the call's arguments alone and never changed: the compiler
    # may share it between calls.
    _immutable_param = True

    def __init__(self, dims: tuple) -> None:
        self.dims = dims

    def __repr__(self) -> str:
        sizes = [(n, len(taps[0][0])) for _a, n, taps in self.dims]
        return f"_Plan(sizes={sizes})"


def _resample_array(x: np.ndarray, plan: _Plan) -> np.ndarray:
    for axis, _n, taps in plan.dims:
        shape = (-1,) + (1,) * (-axis - 1)
        acc = None
        for idx, w in taps:
            v = np.take(x, intp(idx), axis=axis)
            if w is not None:
                v = v * w.astype(x.dtype, copy=False).reshape(shape)
            acc = v if acc is None else acc + v
        x = acc
    return x


def _resample_vjp(g: np.ndarray, plan: _Plan) -> np.ndarray:
    for axis, n, taps in reversed(plan.dims):
        shape = (-1,) + (1,) * (-axis - 1)
        acc = None
        for idx, w in taps:
            gw = g if w is None else g * w.astype(g.dtype, copy=False).reshape(shape)
            v = _scatter_add(gw, idx, n, axis % g.ndim)
            acc = v if acc is None else acc + v
        g = acc
    return g


def _resample_composite(self: Tensor, plan: _Plan) -> Tensor:
    dt = self._data.dtype
    for axis, _n, taps in plan.dims:
        shape = (-1,) + (1,) * (-axis - 1)
        acc = None
        for idx, w in taps:
            v = self.index_select(axis, _wrap(idx))
            if w is not None:
                v = v * _wrap(w.astype(dt).reshape(shape))
            acc = v if acc is None else acc + v
        self = acc
    return self


def _resample_node(name: str):
    return defop(
        name,
        params=("plan",),
        forward=_resample_array,
        vjp={"self": lambda g, plan: _resample_vjp(g, plan)},
        composite=_resample_composite,
        jvp=LINEAR,
    )


UpsampleNearest1DBackward0 = _resample_node("UpsampleNearest1DBackward0")
UpsampleNearest2DBackward0 = _resample_node("UpsampleNearest2DBackward0")
UpsampleNearest3DBackward0 = _resample_node("UpsampleNearest3DBackward0")
UpsampleNearestExact1DBackward0 = _resample_node("UpsampleNearestExact1DBackward0")
UpsampleNearestExact2DBackward0 = _resample_node("UpsampleNearestExact2DBackward0")
UpsampleNearestExact3DBackward0 = _resample_node("UpsampleNearestExact3DBackward0")
UpsampleLinear1DBackward0 = _resample_node("UpsampleLinear1DBackward0")
UpsampleBilinear2DBackward0 = _resample_node("UpsampleBilinear2DBackward0")
UpsampleTrilinear3DBackward0 = _resample_node("UpsampleTrilinear3DBackward0")
UpsampleBicubic2DBackward0 = _resample_node("UpsampleBicubic2DBackward0")

_NODES = {
    ("nearest", 1): UpsampleNearest1DBackward0,
    ("nearest", 2): UpsampleNearest2DBackward0,
    ("nearest", 3): UpsampleNearest3DBackward0,
    ("nearest-exact", 1): UpsampleNearestExact1DBackward0,
    ("nearest-exact", 2): UpsampleNearestExact2DBackward0,
    ("nearest-exact", 3): UpsampleNearestExact3DBackward0,
    ("linear", 1): UpsampleLinear1DBackward0,
    ("bilinear", 2): UpsampleBilinear2DBackward0,
    ("trilinear", 3): UpsampleTrilinear3DBackward0,
    ("bicubic", 2): UpsampleBicubic2DBackward0,
}


# -- source positions, as torch's CPU kernels compute them ---------------------------------


def _scale(n_in: int, n_out: int, align_corners: bool, scale, ft):
    """``area_pixel_compute_scale`` in the kernel's arithmetic type ``ft``."""
    if align_corners:
        return ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(n_in) / ft(n_out)


def _source(scale, n_out: int, align_corners: bool, cubic: bool, ft) -> np.ndarray:
    """``area_pixel_compute_source_index`` for every output position."""
    i = np.arange(n_out, dtype=ft)
    if align_corners:
        return scale * i
    src = scale * (i + ft(0.5)) - ft(0.5)
    return src if cubic else np.maximum(src, ft(0))


def _floor_index(real: np.ndarray, n_in: int) -> np.ndarray:
    return np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), n_in - 1)


def _nearest_taps(n_in, n_out, scale, exact: bool):
    s = _scale(n_in, n_out, False, scale, np.float32)
    i = np.arange(n_out, dtype=np.float32)
    real = (i + np.float32(0.5)) * s if exact else i * s
    idx = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
    return ((idx, None),)


def _linear_taps(n_in, n_out, scale, align_corners, ft):
    if n_in == n_out:
        return ((np.arange(n_out), None),)
    s = _scale(n_in, n_out, align_corners, scale, ft)
    real = _source(s, n_out, align_corners, False, ft)
    i0 = _floor_index(real, n_in)
    lam1 = np.clip(real - i0.astype(ft), ft(0), ft(1)).astype(ft)
    i1 = i0 + (i0 < n_in - 1)
    return ((i0, (ft(1) - lam1).astype(ft)), (i1, lam1))


def _cubic_taps(n_in, n_out, scale, align_corners, ft):
    s = _scale(n_in, n_out, align_corners, scale, ft)
    real = _source(s, n_out, align_corners, True, ft)
    i0 = _floor_index(real, n_in)
    t = np.clip(real - i0.astype(ft), ft(0), ft(1)).astype(ft)
    a = ft(-0.75)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    return tuple((np.clip(i0 - 1 + j, 0, n_in - 1), w.astype(ft)) for j, w in enumerate(weights))


def _plan(mode, in_sizes, out_sizes, scales, align_corners, ft) -> _Plan:
    nd = len(in_sizes)
    dims = []
    for j in reversed(range(nd)):  # the last dim first
        n_in, n_out, sc = in_sizes[j], out_sizes[j], scales[j]
        if mode in ("nearest", "nearest-exact"):
            taps = _nearest_taps(n_in, n_out, sc, mode == "nearest-exact")
        elif mode == "bicubic":
            taps = _cubic_taps(n_in, n_out, sc, align_corners, ft)
        else:
            taps = _linear_taps(n_in, n_out, sc, align_corners, ft)
        dims.append((j - nd, n_in, taps))
    return _Plan(tuple(dims))


# -- interpolate -------------------------------------------------------------------------------

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def _is_integer(x) -> bool:
    if isinstance(x, Tensor):
        return not x.dtype.is_floating_point and not x.dtype.is_complex and x.dim() == 0
    return isinstance(x, numbers.Integral)


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias: bool = False,
):
    """Resample ``input`` (N, C, *spatial) to ``size`` or by ``scale_factor``.

    ``mode`` is ``'nearest'``, ``'nearest-exact'``, ``'linear'`` (3-D input),
    ``'bilinear'``/``'bicubic'`` (4-D), ``'trilinear'`` (5-D) or ``'area'``; source positions
    and weights are computed as torch's CPU kernels compute them. ``antialias=True`` (4-D
    ``'bilinear'``/``'bicubic'``, and ``'lanczos'`` which requires it) widens the filter by
    the downsampling factor, as torch's (and PIL's) anti-aliased resampling does.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.interpolate(ember.tensor([[[1.0, 2.0]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
        >>> F.interpolate(ember.tensor([[[1.0, 2.0]]]), size=3, mode="linear", align_corners=True)
        tensor([[[1.0000, 1.5000, 2.0000]]])
    """
    require_tensor(input, "interpolate")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format."
                )
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}"
                )
            output_size = [int(x) for x in size]
        else:
            output_size = [int(size)] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(math.floor(input.shape[i + 2] * scale_factors[i])) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    if antialias and mode in ("bilinear", "bicubic"):
        return _resample_aa(input, mode, output_size, scale_factors, align_corners)
    if mode == "lanczos" and input.dim() == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        return _resample_aa(input, mode, output_size, scale_factors, align_corners)
    if mode == "area" and dim in (1, 2):
        pool = adaptive_avg_pool1d if dim == 1 else adaptive_avg_pool2d
        return pool(input, output_size)
    if mode == "area" and dim == 3:
        raise NotImplementedError("ember has no adaptive_avg_pool3d: mode='area' on 5-D input")
    known = mode in ("nearest", "nearest-exact") or mode in _DIMS
    if not known or dim not in (1, 2, 3) or (mode in _DIMS and _DIMS[mode] != dim):
        if mode in _DIMS and dim in (1, 2, 3):
            raise NotImplementedError(
                f"Got {input.dim()}D input, but {mode} mode needs {_DIMS[mode] + 2}D input"
            )
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
            f"the modes: {_MODES} (got {mode})"
        )
    return _resample(input, mode, output_size, scale_factors, align_corners)


def _resample(input: Tensor, mode, output_size, scale_factors, align_corners) -> Tensor:
    x = input._data
    dim = x.ndim - 2
    in_sizes = x.shape[2:]
    if output_size is None:
        output_size = [int(math.floor(float(n) * s)) for n, s in zip(in_sizes, scale_factors)]
        scales = list(scale_factors)
    else:
        scales = [None] * dim
    name = {"nearest": "upsample_nearest", "nearest-exact": "_upsample_nearest_exact"}.get(
        mode, "upsample_" + mode
    )
    if min(in_sizes) <= 0 or min(output_size) <= 0:
        axes = ("D", "H", "W")[3 - dim :]

        def show(sizes):
            return ", ".join(f"{a}: {n}" for a, n in zip(axes, sizes))

        sep = " and" if dim == 1 else ""
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input "
            f"({show(in_sizes)}){sep} output ({show(output_size)})"
        )
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{name}{dim}d\" not implemented for '{scalar_name(x.dtype)}'")
    ft = np.float64 if x.dtype == np.float64 else np.float32
    plan = _plan(mode, in_sizes, output_size, scales, align_corners, ft)
    out = _quietly(_resample_array, x, plan)
    return record(_NODES[mode, dim], out, (input,), (plan,))


# -- anti-aliased resampling (antialias=True) ------------------------------------------------
#
# torch's ``_upsample_{bilinear,bicubic,lanczos}2d_aa`` (PIL's resampling): along each resized
# dim, output ``i`` averages the inputs under a filter (triangle, Keys' cubic with a = -0.5,
# or Lanczos-3) centred at ``scale * (i + 0.5)`` and stretched by ``scale`` when
# downsampling, its weights normalised to sum 1 (uint8 input: torch's fixed-point weights).
# The last dim is resampled first, and a dim whose size does not change is skipped. torch's
# backward kernel does not skip such a dim: it computes that dim's weights anyway (the
# identity, except when a ``scale_factor`` gives the same size), and the gradient here is
# that kernel's.


def _aa_triangle(x: np.ndarray, ft) -> np.ndarray:
    x = np.abs(x)
    return np.where(x < 1, ft(1) - x, ft(0)).astype(ft)


def _aa_keys(x: np.ndarray, ft) -> np.ndarray:
    x = np.abs(x)
    a = ft(-0.5)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, ft(0))).astype(ft)


def _aa_lanczos(x: np.ndarray, ft) -> np.ndarray:
    pi = ft(math.pi)

    def sinc(v):
        v = v.astype(ft)
        safe = np.where(v == 0, ft(1), v)
        return np.where(v == 0, ft(1), np.sin(pi * safe) / (pi * safe)).astype(ft)

    inside = (x >= -3) & (x < 3)
    return np.where(inside, sinc(x) * sinc(x / ft(3)), ft(0)).astype(ft)


# mode: (filter, the filter's support at scale 1 (torch's interp_size))
_AA_FILTERS = {"bilinear": (_aa_triangle, 2), "bicubic": (_aa_keys, 4), "lanczos": (_aa_lanczos, 6)}


def _aa_weights(n_in, n_out, scale_arg, align_corners, mode: str, ft):
    """Per output position: the first input index, the number of inputs, and the normalised
    weights (n_out, k), in the arithmetic of torch's ``_compute_indices_min_size_weights_aa``
    (its scalars in ``ft``, a few sums in double)."""
    scale = _scale(n_in, n_out, align_corners, scale_arg, ft)
    filt, interp = _AA_FILTERS[mode]
    if scale >= 1.0:
        support = ft(interp * 0.5 * float(scale))
        invscale = ft(1.0 / float(scale))
    else:
        support = ft(interp * 0.5)
        invscale = ft(1.0)
    k = int(math.ceil(support)) * 2 + 1
    center = (float(scale) * (np.arange(n_out, dtype=np.float64) + 0.5)).astype(ft)
    lo = np.trunc((center - support).astype(np.float64) + 0.5).astype(np.int64)
    hi = np.trunc((center + support).astype(np.float64) + 0.5).astype(np.int64)
    xmin = np.maximum(lo, 0)
    xsize = np.clip(np.minimum(hi, n_in) - xmin, 0, k)
    j = np.arange(k)
    offset = (xmin[:, None] + j).astype(ft) - center[:, None]
    arg = ((offset.astype(np.float64) + 0.5) * float(invscale)).astype(ft)
    w = filt(arg, ft)
    mask = j < xsize[:, None]
    w = np.where(mask, w, ft(0)).astype(ft)
    total = np.zeros(n_out, ft)
    for c in range(k):  # torch's order of summation
        total = (total + w[:, c]).astype(ft)
    nz = total != 0
    w = np.where(nz[:, None], w / np.where(nz, total, ft(1))[:, None], w).astype(ft)
    return xmin, xsize, w, mask


def _aa_int16(w: np.ndarray) -> tuple:
    """torch's fixed-point weights for uint8 input: the precision (bits) that keeps the
    largest weight below 2**15, and the weights rounded half away from zero."""
    wt_max = float(w.max()) if w.size else 0.0
    prec = 0
    while prec < 22 and int(0.5 + wt_max * (1 << (prec + 1))) < (1 << 15):
        prec += 1
    v = w * float(1 << prec)
    return np.trunc(np.where(v < 0, v - 0.5, v + 0.5)).astype(np.int64), prec


class _AaPlan:
    """An anti-aliased resampling: ``dims``, per resized dim (last first) its negative axis,
    first input index, weights (n_out, k), validity mask (n_out, k) and fixed-point
    precision (uint8; else 0); ``grad``, the (n_out, n_in) weight matrices of torch's
    backward kernel for H and W (None for uint8)."""

    __slots__ = ("dims", "grad")
    # Made from the sizes and the call's arguments alone and never changed: the compiler
    # may share it between calls.
    _immutable_param = True

    def __init__(self, dims: tuple, grad) -> None:
        self.dims = dims
        self.grad = grad

    def __repr__(self) -> str:
        return f"_AaPlan(dims={[(a, w.shape) for a, _x, w, _m, _p in self.dims]})"


def _aa_dense(n_in: int, xmin, w, mask) -> np.ndarray:
    m = np.zeros((len(xmin), n_in), w.dtype)
    rows, cols = np.nonzero(mask)
    m[rows, xmin[rows] + cols] = w[rows, cols]
    return m


def _aa_plan(mode: str, in_sizes, out_sizes, scales, align_corners, dtype) -> _AaPlan:
    integer = dtype == np.uint8
    ft = np.float64 if integer or dtype == np.float64 else np.float32
    dims, grad = [], []
    for j in (1, 0):  # W first, then H
        n_in, n_out = in_sizes[j], out_sizes[j]
        xmin, _size, w, mask = _aa_weights(n_in, n_out, scales[j], align_corners, mode, ft)
        if not integer:
            grad.append(_aa_dense(n_in, xmin, w, mask))
        if n_in == n_out:
            continue
        prec = 0
        if integer:
            w, prec = _aa_int16(w)
        dims.append((j - 2, xmin, w, mask, prec))
    return _AaPlan(tuple(dims), None if integer else (grad[1], grad[0]))


def _aa_forward(x: np.ndarray, plan: _AaPlan) -> np.ndarray:
    integer = x.dtype == np.uint8
    for axis, xmin, w, mask, prec in plan.dims:
        n_in = x.shape[axis]
        shape = (-1,) + (1,) * (-axis - 1)
        src = x.astype(np.int64) if integer else x
        acc = np.full((), 1 << (prec - 1), np.int64) if integer else None
        for c in range(w.shape[1]):
            at = intp(np.minimum(xmin + c, n_in - 1))
            v = np.take(src, at, axis=axis) * w[:, c].reshape(shape)
            valid = mask[:, c]
            if acc is None:
                acc = v
            elif valid.all():
                acc = acc + v
            elif valid.any():
                acc = np.where(valid.reshape(shape), acc + v, acc)
        x = np.clip(acc >> prec, 0, 255).astype(np.uint8) if integer else acc
    return np.array(x, copy=True) if not plan.dims else x


def _aa_vjp(g, plan: _AaPlan):
    mh, mw = plan.grad
    dt = g.dtype if is_raw(g) else g._data.dtype
    ht, w = mh.T.astype(dt), mw.astype(dt)
    if is_raw(g):
        return np.matmul(ht, np.matmul(g, w))
    return _wrap(ht) @ (g @ _wrap(w))


def _aa_node(name: str):
    return defop(
        name,
        params=("plan",),
        forward=_aa_forward,
        vjp={"self": lambda g, plan: _aa_vjp(g, plan)},
        jvp=LINEAR,
    )


UpsampleBilinear2DAaBackward0 = _aa_node("UpsampleBilinear2DAaBackward0")
UpsampleBicubic2DAaBackward0 = _aa_node("UpsampleBicubic2DAaBackward0")
UpsampleLanczos2DAaBackward0 = _aa_node("UpsampleLanczos2DAaBackward0")
_AA_NODES = {
    "bilinear": UpsampleBilinear2DAaBackward0,
    "bicubic": UpsampleBicubic2DAaBackward0,
    "lanczos": UpsampleLanczos2DAaBackward0,
}


def _resample_aa(input: Tensor, mode: str, output_size, scale_factors, align_corners) -> Tensor:
    in_sizes = input._data.shape[2:]
    if output_size is None:
        output_size = [int(math.floor(float(n) * s)) for n, s in zip(in_sizes, scale_factors)]
        scales = list(scale_factors)
    else:
        scales = [None, None]
    return _apply_aa(input, mode, output_size, scales, align_corners)


def _apply_aa(input: Tensor, mode: str, output_size, scales, align_corners) -> Tensor:
    x = input._data
    in_sizes = x.shape[2:]
    if min(in_sizes) <= 0 or min(output_size) <= 0:
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input "
            f"(H: {in_sizes[0]}, W: {in_sizes[1]}) output "
            f"(H: {output_size[0]}, W: {output_size[1]})"
        )
    if x.dtype not in (np.float32, np.float64, np.uint8):
        raise NotImplementedError(
            f"\"compute_index_ranges_weights\" not implemented for '{scalar_name(x.dtype)}'"
        )
    plan = _aa_plan(mode, in_sizes, output_size, scales, bool(align_corners), x.dtype)
    return run(_AA_NODES[mode], (input,), (x,), (plan,))


def _aa_aten(mode: str):
    """``aten._upsample_<mode>2d_aa``: an explicit output size, and the scales (when given)
    that map output to input positions."""

    def op(self, output_size, align_corners, scales_h=None, scales_w=None):
        require_tensor(self, f"_upsample_{mode}2d_aa")
        size = [int(n) for n in output_size]
        if len(size) != 2:
            raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(size)}")
        if self.dim() != 4:
            raise RuntimeError(f"It is expected input_size equals to 4, but got size {self.dim()}")
        return _apply_aa(self, mode, size, [scales_h, scales_w], align_corners)

    op.__name__ = op.__qualname__ = f"_upsample_{mode}2d_aa"
    return op


_upsample_bilinear2d_aa = _aa_aten("bilinear")
_upsample_bicubic2d_aa = _aa_aten("bicubic")
_upsample_lanczos2d_aa = _aa_aten("lanczos")


# -- grid_sample and affine_grid ---------------------------------------------------------------
#
# grid_sample reads ``input`` (N, C, H, W) at the points of ``grid`` (N, Ho, Wo, 2), x then y
# in [-1, 1]. Each coordinate is mapped to pixel units and through the padding mode as
# torch's CPU kernel maps it; the map is piecewise affine, so it is kept as ``a * c + b``
# with constant ``a`` (its derivative) and ``b``, which the composite reuses on tensors.


def _unnormalize(c: np.ndarray, n: int, align: bool):
    """Pixel coordinate of ``c`` in [-1, 1] and its derivative (torch's
    ``grid_sampler_compute_source_index_set_grad``, before padding)."""
    if align:
        return (c + 1) / 2 * (n - 1), (n - 1) / 2
    return ((c + 1) * n - 1) / 2, n / 2


def _clip(x: np.ndarray, n: int):
    inside = (x > 0) & (x < n - 1)
    return np.clip(x, 0, n - 1), inside.astype(x.dtype)


def _reflect(x: np.ndarray, twice_low: int, twice_high: int):
    if twice_low == twice_high:
        return np.zeros_like(x), np.zeros_like(x)
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    sign = np.where(x < lo, -1.0, 1.0).astype(x.dtype)
    x = np.abs(x - lo)
    extra = np.fmod(x, span)
    flips = np.floor(x / span)
    even = flips % 2 == 0
    return np.where(even, extra + lo, span - extra + lo), np.where(even, sign, -sign)


def _gs_source(c: np.ndarray, n: int, padding: str, align: bool):
    """(pixel coordinate, its derivative with respect to ``c``) for one grid component."""
    x, d = _unnormalize(c, n, align)
    if padding == "border":
        x, m = _clip(x, n)
        return x, d * m
    if padding == "reflection":
        x, m = _reflect(x, 0, 2 * (n - 1)) if align else _reflect(x, -1, 2 * n - 1)
        x, m2 = _clip(x, n)
        return x, d * m * m2
    return x, np.full_like(x, d)


def _taps(ix: np.ndarray, iy: np.ndarray, h: int, w: int, mode: str):
    """Per corner: (flat index into H*W, in-bounds mask) and the bilinear weights."""
    if mode == "nearest":
        x0, y0 = np.rint(ix), np.rint(iy)  # torch's nearbyint: half to even
        corners = [(y0, x0)]
    else:
        x0, y0 = np.floor(ix), np.floor(iy)
        corners = [(y0, x0), (y0, x0 + 1), (y0 + 1, x0), (y0 + 1, x0 + 1)]
    out = []
    for yy, xx in corners:
        mask = (xx >= 0) & (xx <= w - 1) & (yy >= 0) & (yy <= h - 1)
        idx = np.where(mask, yy * w + xx, 0).astype(np.int64)
        out.append((idx, mask))
    return out, x0, y0


def _gs_plan(grid: np.ndarray, h: int, w: int, mode: str, padding: str, align: bool):
    ix, ax = _gs_source(grid[..., 0], w, padding, align)
    iy, ay = _gs_source(grid[..., 1], h, padding, align)
    return ix, iy, ax, ay


def _gather(flat: np.ndarray, idx: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """flat (N, C, HW), idx/mask (N, P): (N, C, P), zero where the tap is outside."""
    v = np.take_along_axis(flat, idx[:, None, :], axis=2)
    return v * mask[:, None, :].astype(flat.dtype)


def _grid_sample_forward(input, grid, mode, padding_mode, align_corners):
    if mode == "bicubic":
        return _bicubic_forward(input, grid, padding_mode, align_corners)
    n, c, h, w = input.shape
    out_hw = grid.shape[1:3]
    ix, iy, _, _ = _gs_plan(grid.reshape(n, -1, 2), h, w, mode, padding_mode, align_corners)
    taps, x0, y0 = _taps(ix, iy, h, w, mode)
    flat = input.reshape(n, c, h * w)
    if mode == "nearest":
        out = _gather(flat, *taps[0])
    else:
        wx1, wy1 = ix - x0, iy - y0
        wx0, wy0 = 1 - wx1, 1 - wy1
        ws = (wy0 * wx0, wy0 * wx1, wy1 * wx0, wy1 * wx1)
        out = sum(_gather(flat, i, m) * wt[:, None, :] for (i, m), wt in zip(taps, ws))
    return out.reshape(n, c, *out_hw).astype(input.dtype, copy=False)


def _scatter(vals: np.ndarray, idx: np.ndarray, n: int, c: int, hw: int) -> np.ndarray:
    """Sum (N, C, P) values into (N, C, HW) at ``idx`` (N, P)."""
    lin = (np.arange(n * c).reshape(n, c, 1) * hw + idx[:, None, :]).ravel()
    real = vals.real if vals.dtype.kind == "c" else vals
    return np.bincount(intp(lin), weights=real.ravel(), minlength=n * c * hw).reshape(n, c, hw)


def _grid_sample_vjp(g, input, grid, mode, padding_mode, align_corners, needs_input_grad):
    with np.errstate(all="ignore"):  # (non-finite grids: torch computes on silently)
        return _grid_sample_grads(
            g, input, grid, mode, padding_mode, align_corners, needs_input_grad
        )


def _grid_sample_grads(g, input, grid, mode, padding_mode, align_corners, needs_input_grad):
    if mode == "bicubic":
        return _bicubic_grads(g, input, grid, padding_mode, align_corners, needs_input_grad)
    n, c, h, w = input.shape
    gf = g.reshape(n, c, -1)
    ix, iy, ax, ay = _gs_plan(grid.reshape(n, -1, 2), h, w, mode, padding_mode, align_corners)
    taps, x0, y0 = _taps(ix, iy, h, w, mode)
    flat = input.reshape(n, c, h * w)
    gi = gg = None
    if mode == "nearest":
        if needs_input_grad[0]:
            idx, mask = taps[0]
            gi = _scatter(gf * mask[:, None, :], idx, n, c, h * w)
        if needs_input_grad[1]:
            gg = np.zeros_like(grid)
    else:
        wx1, wy1 = ix - x0, iy - y0
        wx0, wy0 = 1 - wx1, 1 - wy1
        ws = (wy0 * wx0, wy0 * wx1, wy1 * wx0, wy1 * wx1)
        if needs_input_grad[0]:
            gi = sum(
                _scatter(gf * (wt * m)[:, None, :], i, n, c, h * w) for (i, m), wt in zip(taps, ws)
            )
        if needs_input_grad[1]:
            v00, v01, v10, v11 = (_gather(flat, i, m) for i, m in taps)
            dx = wy0[:, None] * (v01 - v00) + wy1[:, None] * (v11 - v10)
            dy = wx0[:, None] * (v10 - v00) + wx1[:, None] * (v11 - v01)
            gx = (gf * dx).sum(axis=1) * ax
            gy = (gf * dy).sum(axis=1) * ay
            gg = np.stack([gx, gy], axis=-1).reshape(grid.shape).astype(grid.dtype)
    if gi is not None:
        gi = gi.reshape(input.shape).astype(input.dtype, copy=False)
    return gi, gg


def _grid_sample_composite(input, grid, mode, padding_mode, align_corners):
    """The op in ember's differentiable ops (for recorded backwards: higher orders)."""
    if mode == "bicubic":
        return _bicubic_composite(input, grid, padding_mode, align_corners)
    n, c, h, w = input.shape
    gd = grid._data.reshape(n, -1, 2)
    with np.errstate(all="ignore"):
        ix_c, iy_c, ax, ay = _gs_plan(gd, h, w, mode, padding_mode, align_corners)
        taps, x0, y0 = _taps(ix_c, iy_c, h, w, mode)
        bx, by = ix_c - ax * gd[..., 0] - x0, iy_c - ay * gd[..., 1] - y0
    flat = input.reshape(n, c, h * w)
    dt = input._data.dtype

    def gather(idx, mask):
        i = _wrap(np.broadcast_to(idx[:, None, :], (n, c, idx.shape[1])).copy())
        return flat.gather(2, i) * _wrap(mask[:, None, :].astype(dt))

    if mode == "nearest":
        out = gather(*taps[0]) + grid.sum() * 0  # (torch: a zero gradient for the grid)
    else:
        g2 = grid.reshape(n, -1, 2)
        # the coordinates as a * grid + b: their values, and their derivatives, exactly
        ix = g2[..., 0] * _wrap(ax.astype(dt)) + _wrap(bx.astype(dt))
        iy = g2[..., 1] * _wrap(ay.astype(dt)) + _wrap(by.astype(dt))
        wx1, wy1 = ix, iy  # (minus the floors, constant)
        wx0, wy0 = 1 - wx1, 1 - wy1
        ws = (wy0 * wx0, wy0 * wx1, wy1 * wx0, wy1 * wx1)
        out = None
        for (i, m), wt in zip(taps, ws):
            term = gather(i, m) * wt.unsqueeze(1)
            out = term if out is None else out + term
    return out.reshape(n, c, *grid.shape[1:3])


# Bicubic sampling (torch's A = -0.75 cubic convolution): the coordinate is only
# unnormalized; each of the 16 taps goes through the padding mode on its own, and the grid's
# gradient is the weights' derivative times the unnormalization's scale.
_A = -0.75


def _cubic_weights(t):
    """The 4 weights of taps ``floor - 1 .. floor + 2`` at fraction ``t`` (arrays or
    tensors alike)."""

    def near(x):
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x):
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _cubic_weights_grad(t):
    """The derivatives of ``_cubic_weights`` in ``t`` (torch's formulas, negated)."""
    x = -1 - t
    d0 = (-3 * _A * x - 10 * _A) * x - 8 * _A
    x = -t
    d1 = (-3 * (_A + 2) * x - 2 * (_A + 3)) * x
    x = 1 - t
    d2 = (3 * (_A + 2) * x - 2 * (_A + 3)) * x
    x = 2 - t
    d3 = (3 * _A * x - 10 * _A) * x + 8 * _A
    return -d0, -d1, -d2, -d3  # (torch's kernel subtracts these)


def _pad_coord(x: np.ndarray, n: int, padding: str, align: bool) -> np.ndarray:
    if padding == "border":
        return _clip(x, n)[0]
    if padding == "reflection":
        x = (_reflect(x, 0, 2 * (n - 1)) if align else _reflect(x, -1, 2 * n - 1))[0]
        return _clip(x, n)[0]
    return x


def _bicubic_plan(grid: np.ndarray, h: int, w: int, padding: str, align: bool):
    """(taps: per (j, i) the flat index and mask, tx, ty, x scale, y scale, x0, y0)."""
    ix, ax = _unnormalize(grid[..., 0], w, align)
    iy, ay = _unnormalize(grid[..., 1], h, align)
    x0, y0 = np.floor(ix), np.floor(iy)
    taps = []
    for j in range(4):
        yy = _pad_coord(y0 - 1 + j, h, padding, align)
        for i in range(4):
            xx = _pad_coord(x0 - 1 + i, w, padding, align)
            mask = (xx >= 0) & (xx <= w - 1) & (yy >= 0) & (yy <= h - 1)
            idx = np.where(mask, np.trunc(yy) * w + np.trunc(xx), 0).astype(np.int64)
            taps.append((idx, mask))
    return taps, ix - x0, iy - y0, ax, ay, ix, iy, x0, y0


def _bicubic_forward(input, grid, padding_mode, align_corners):
    n, c, h, w = input.shape
    taps, tx, ty, *_ = _bicubic_plan(grid.reshape(n, -1, 2), h, w, padding_mode, align_corners)
    flat = input.reshape(n, c, h * w)
    cx, cy = _cubic_weights(tx), _cubic_weights(ty)
    out = 0
    for k, (idx, mask) in enumerate(taps):
        j, i = divmod(k, 4)
        out = out + _gather(flat, idx, mask) * (cy[j] * cx[i])[:, None, :]
    return out.reshape(n, c, *grid.shape[1:3]).astype(input.dtype, copy=False)


def _bicubic_grads(g, input, grid, padding_mode, align_corners, needs_input_grad):
    n, c, h, w = input.shape
    plan = _bicubic_plan(grid.reshape(n, -1, 2), h, w, padding_mode, align_corners)
    taps, tx, ty, ax, ay = plan[:5]
    gf = g.reshape(n, c, -1)
    flat = input.reshape(n, c, h * w)
    cx, cy = _cubic_weights(tx), _cubic_weights(ty)
    gi = gg = None
    if needs_input_grad[0]:
        gi = sum(
            _scatter(gf * (cy[k // 4] * cx[k % 4] * m)[:, None, :], idx, n, c, h * w)
            for k, (idx, m) in enumerate(taps)
        )
        gi = gi.reshape(input.shape).astype(input.dtype, copy=False)
    if needs_input_grad[1]:
        dx, dy = _cubic_weights_grad(tx), _cubic_weights_grad(ty)
        gx = gy = 0
        for k, (idx, mask) in enumerate(taps):
            j, i = divmod(k, 4)
            v = (gf * _gather(flat, idx, mask)).sum(axis=1)
            gx = gx + v * cy[j] * dx[i]
            gy = gy + v * dy[j] * cx[i]
        gg = np.stack([gx * ax, gy * ay], axis=-1).reshape(grid.shape).astype(grid.dtype)
    return gi, gg


def _bicubic_composite(input, grid, padding_mode, align_corners):
    n, c, h, w = input.shape
    gd = grid._data.reshape(n, -1, 2)
    dt = input._data.dtype
    with np.errstate(all="ignore"):
        taps, tx, ty, ax, ay, ix, iy, x0, y0 = _bicubic_plan(gd, h, w, padding_mode, align_corners)
        bx, by = ix - ax * gd[..., 0] - x0, iy - ay * gd[..., 1] - y0
    g2 = grid.reshape(n, -1, 2)
    txt = g2[..., 0] * float(ax) + _wrap(bx.astype(dt))
    tyt = g2[..., 1] * float(ay) + _wrap(by.astype(dt))
    cx, cy = _cubic_weights(txt), _cubic_weights(tyt)
    flat = input.reshape(n, c, h * w)
    out = None
    for k, (idx, mask) in enumerate(taps):
        j, i = divmod(k, 4)
        i_t = _wrap(np.broadcast_to(idx[:, None, :], (n, c, idx.shape[1])).copy())
        term = (
            flat.gather(2, i_t) * _wrap(mask[:, None, :].astype(dt)) * (cy[j] * cx[i]).unsqueeze(1)
        )
        out = term if out is None else out + term
    return out.reshape(n, c, *grid.shape[1:3])


GridSampler2DBackward0 = defop(
    "GridSampler2DBackward0",
    inputs=("input", "grid"),
    params=("mode", "padding_mode", "align_corners"),
    forward=_grid_sample_forward,
    vjp=_grid_sample_vjp,
    composite=_grid_sample_composite,
    jvp=None,
)

# 5-D inputs (N, C, D, H, W) with grids (N, Do, Ho, Wo, 3): trilinear ("bilinear") and
# nearest sampling, written for any number of spatial dims (components x, y, z).


def _nd_plan(grid: np.ndarray, spatial: tuple, mode: str, padding: str, align: bool):
    """Per corner (flat index, mask, per-component offsets), the fractions and scales."""
    k = len(spatial)
    sizes = spatial[::-1]  # of components x, y, z
    strides = [int(np.prod(sizes[:c])) for c in range(k)]
    coords, scales = zip(*(_gs_source(grid[..., c], sizes[c], padding, align) for c in range(k)))
    base = [np.rint(x) if mode == "nearest" else np.floor(x) for x in coords]
    fracs = [x - b for x, b in zip(coords, base)]
    offsets = [(0,) * k] if mode == "nearest" else list(np.ndindex(*(2,) * k))
    corners = []
    for off in offsets:
        pos = [b + o for b, o in zip(base, off)]
        mask = np.logical_and.reduce([(p >= 0) & (p <= n - 1) for p, n in zip(pos, sizes)])
        flat = sum(p * st for p, st in zip(pos, strides))
        corners.append((np.where(mask, flat, 0).astype(np.int64), mask, off))
    return corners, fracs, scales, coords, base


def _corner_weight(fracs, off, skip=None):
    w = 1.0
    for c, (t, o) in enumerate(zip(fracs, off)):
        if c != skip:
            w = w * (t if o else 1 - t)
    return w


def _nd_forward(input, grid, mode, padding_mode, align_corners):
    n, ch = input.shape[:2]
    spatial = input.shape[2:]
    corners, fracs, *_ = _nd_plan(
        grid.reshape(n, -1, len(spatial)), spatial, mode, padding_mode, align_corners
    )
    flat = input.reshape(n, ch, -1)
    out = 0
    for idx, mask, off in corners:
        v = _gather(flat, idx, mask)
        out = out + (v if mode == "nearest" else v * _corner_weight(fracs, off)[:, None, :])
    return np.asarray(out).reshape(n, ch, *grid.shape[1:-1]).astype(input.dtype, copy=False)


def _nd_grads(g, input, grid, mode, padding_mode, align_corners, needs_input_grad):
    n, ch = input.shape[:2]
    spatial = input.shape[2:]
    k = len(spatial)
    corners, fracs, scales, *_ = _nd_plan(
        grid.reshape(n, -1, k), spatial, mode, padding_mode, align_corners
    )
    gf = g.reshape(n, ch, -1)
    flat = input.reshape(n, ch, -1)
    hw = flat.shape[2]
    gi = gg = None
    if needs_input_grad[0]:
        gi = 0
        for idx, mask, off in corners:
            w = mask if mode == "nearest" else _corner_weight(fracs, off) * mask
            gi = gi + _scatter(gf * w[:, None, :], idx, n, ch, hw)
        gi = gi.reshape(input.shape).astype(input.dtype, copy=False)
    if needs_input_grad[1]:
        if mode == "nearest":
            gg = np.zeros_like(grid)
        else:
            comps = [0.0] * k
            for idx, mask, off in corners:
                v = (gf * _gather(flat, idx, mask)).sum(axis=1)
                for c in range(k):
                    sign = 1.0 if off[c] else -1.0
                    comps[c] = comps[c] + sign * v * _corner_weight(fracs, off, skip=c)
            gg = np.stack([comps[c] * scales[c] for c in range(k)], axis=-1)
            gg = gg.reshape(grid.shape).astype(grid.dtype)
    return gi, gg


def _nd_composite(input, grid, mode, padding_mode, align_corners):
    n, ch = input.shape[:2]
    spatial = tuple(input.shape[2:])
    k = len(spatial)
    gd = grid._data.reshape(n, -1, k)
    dt = input._data.dtype
    with np.errstate(all="ignore"):
        corners, fracs, scales, coords, base = _nd_plan(
            gd, spatial, mode, padding_mode, align_corners
        )
    flat = input.reshape(n, ch, -1)
    g2 = grid.reshape(n, -1, k)
    if mode == "nearest":
        fr = None
    else:
        fr = []
        for c in range(k):
            with np.errstate(all="ignore"):
                shift = coords[c] - scales[c] * gd[..., c] - base[c]
            fr.append(
                g2[..., c] * _wrap(np.asarray(scales[c]).astype(dt)) + _wrap(shift.astype(dt))
            )
    out = None
    for idx, mask, off in corners:
        i_t = _wrap(np.broadcast_to(idx[:, None, :], (n, ch, idx.shape[1])).copy())
        term = flat.gather(2, i_t) * _wrap(mask[:, None, :].astype(dt))
        if fr is not None:
            term = term * _corner_weight(fr, off).unsqueeze(1)
        out = term if out is None else out + term
    if fr is None:
        out = out + grid.sum() * 0
    return out.reshape(n, ch, *grid.shape[1:-1])


def _nd_vjp(g, input, grid, mode, padding_mode, align_corners, needs_input_grad):
    with np.errstate(all="ignore"):  # (non-finite grids: torch computes on silently)
        return _nd_grads(g, input, grid, mode, padding_mode, align_corners, needs_input_grad)


GridSampler3DBackward0 = defop(
    "GridSampler3DBackward0",
    inputs=("input", "grid"),
    params=("mode", "padding_mode", "align_corners"),
    forward=_nd_forward,
    vjp=_nd_vjp,
    composite=_nd_composite,
    jvp=None,
)


_GS_MODES = ("bilinear", "nearest", "bicubic")
_GS_PADDINGS = ("zeros", "border", "reflection")
_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample ``input`` (N, C, H, W) at the points of ``grid`` (N, Ho, Wo, 2), whose last
    dim holds x and y normalized to [-1, 1]; ``mode`` 'bilinear', 'nearest' or 'bicubic',
    ``padding_mode`` 'zeros', 'border' or 'reflection'. Differentiable in both (the grid's
    gradient is zero for 'nearest'); 5-D input (N, C, D, H, W) with grid (N, Do, Ho, Wo, 3)
    is sampled trilinearly ('bilinear') or 'nearest'.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.arange(4.0).reshape(1, 1, 2, 2)
        >>> F.grid_sample(x, ember.zeros(1, 1, 1, 2), align_corners=True)
        tensor([[[[1.5000]]]])
    """
    require_tensor(input, "grid_sample")
    require_tensor(grid, "grid_sample", "grid", 2)
    if mode not in _GS_MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in _GS_PADDINGS:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        _warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    a, g = input._data, grid._data
    if a.dtype != g.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_name(a.dtype)} but found {scalar_name(g.dtype)}"
        )
    sizes = f"input with sizes {list(a.shape)} and grid with sizes {list(g.shape)}"
    if a.ndim not in (4, 5) or a.ndim != g.ndim:
        want = f"{a.ndim}D" if a.ndim in (4, 5) else "4D or 5D"
        raise RuntimeError(
            f"grid_sampler(): expected {want} input and grid with same number of dimensions, "
            f"but got {sizes}"
        )
    if a.shape[0] != g.shape[0]:
        raise RuntimeError(
            f"grid_sampler(): expected grid and input to have same batch size, but got {sizes}"
        )
    if g.shape[-1] != a.ndim - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {a.ndim - 2} in last dimension, but "
            f"got grid with sizes {list(g.shape)}"
        )
    params = (mode, padding_mode, bool(align_corners))
    if a.ndim == 5:
        if mode == "bicubic":
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        return run(GridSampler3DBackward0, (input, grid), (a, g), params)
    return run(GridSampler2DBackward0, (input, grid), (a, g), params)


def _base_grid(size: tuple, align: bool, dt) -> np.ndarray:
    """(prod(spatial), k + 1) rows (x, y[, z], 1) of the output pixels' normalized
    coordinates, x along the last dim."""

    def lin(n):
        if n <= 1:
            return np.zeros(max(n, 0), dt)
        r = np.linspace(-1, 1, n, dtype=np.float64)
        return (r if align else r * (n - 1) / n).astype(dt)

    spatial = size[2:]
    axes = np.meshgrid(*(lin(n) for n in spatial), indexing="ij")  # (z,) y, x
    cols = axes[::-1]
    return np.stack([*cols, np.ones_like(cols[0])], axis=-1).reshape(-1, len(spatial) + 1)


def _affine_grid_forward(theta, size, align_corners):
    base = _base_grid(size, align_corners, theta.dtype)
    out = base @ theta.swapaxes(-1, -2)  # (N, prod(spatial), k)
    return out.reshape(size[0], *size[2:], len(size) - 2)


def _affine_grid_vjp(g, size, align_corners):
    dt = g._data.dtype if isinstance(g, Tensor) else g.dtype
    base = _base_grid(size, align_corners, dt)
    if isinstance(g, Tensor):
        base = _wrap(base)
    return g.reshape(size[0], -1, len(size) - 2).swapaxes(-1, -2) @ base


AffineGridGeneratorBackward0 = defop(
    "AffineGridGeneratorBackward0",
    inputs=("theta",),
    params=("size", "align_corners"),
    forward=_affine_grid_forward,
    vjp={"theta": _affine_grid_vjp},
    jvp=LINEAR,
)


def affine_grid(theta: Tensor, size: list, align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, H, W, 2) of the 2-D affine maps ``theta`` (N, 2, 3) for an
    output of ``size`` (N, C, H, W), or (N, D, H, W, 3) of 3-D maps (N, 3, 4) for
    (N, C, D, H, W), for ``grid_sample``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> theta = ember.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        >>> F.affine_grid(theta, [1, 1, 1, 2], align_corners=True)
        tensor([[[[-1.,  0.],
                  [ 1.,  0.]]]])
    """
    require_tensor(theta, "affine_grid", "theta")
    if align_corners is None:
        _warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    t = theta._data
    if len(size) == 4:
        if t.ndim != 3 or t.shape[-2] != 2 or t.shape[-1] != 3:
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                f"{_size_repr(size)}. Got {theta.shape}."
            )
        spatial = size[-2:]
    elif len(size) == 5:
        if t.ndim != 3 or t.shape[-2] != 3 or t.shape[-1] != 4:
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                f"{_size_repr(size)}. Got {theta.shape}."
            )
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {_size_repr(size)}."
        )
    if align_corners and min(spatial) == 1:
        _warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            UserWarning,
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {_size_repr(size)}")
    if t.shape[0] != size[0]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, 3] "
            f"but got: [{t.shape[0]}, 3]."
        )
    return run(AffineGridGeneratorBackward0, (theta,), (t,), (size, bool(align_corners)))


def _size_repr(size: tuple) -> str:
    return str(list(size))
