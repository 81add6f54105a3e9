"""Resampling: ``interpolate`` (nearest, nearest-exact, linear, bilinear, bicubic,
trilinear, area) and its graph nodes.

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
from .._tensor import Tensor
from ._core import LINEAR, defop, record, require_tensor
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
            v = np.take(x, idx, axis=axis)
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
    and weights are computed as torch's CPU kernels compute them.

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
    if antialias or mode == "lanczos":
        raise NotImplementedError(
            "ember's interpolate has no anti-aliased modes (antialias=True, 'lanczos')"
        )
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
