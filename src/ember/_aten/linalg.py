"""Linear algebra ops: the matmul family, einsum, tensordot, kron, trace and cross, and
torch.linalg's (norms, inverse, determinants, solves, factorizations, svd: the last section).

Each product is one ``defop`` declaration whose rules are written once, with ``@``,
``.mT``, indexing and ``*``: the same line runs on arrays in a plain backward (a BLAS call
against a transposed view, no copies) and on Tensors in a recorded one, which gives every
higher order. The products are bilinear (einsum multilinear), so forward mode is the
product rule (``BILINEAR``); ``addmm``-style ops add a linear term and state their JVP.

Where torch's op is a composite (``matmul`` of batched operands, ``outer``, ``tensordot``,
``kron``), ember records the same steps torch does (reshapes, ``mm``/``bmm``, views), so
``grad_fn`` and its ``next_functions`` are torch's. Those steps are declared in this module
("torch's intermediate steps" below) with torch's node names. ``einsum`` is one node named
after torch's last step; its ``next_functions`` point straight at the operands.
"""

from __future__ import annotations

import math
import string
import warnings
from functools import lru_cache

import numpy as np

from .._dtype import cpp_name, scalar_name
from .._mode import autocast_active as _AUTOCAST
from .._mode import autocast_lower
from .._mode import state as _state
from .._overrides import warn as _warn
from .._tensor import Tensor, _legacy_type_name
from ..autograd.recording import _on as _forward_ad_on
from ..autograd.views import ViewBackward0, apply_inplace
from . import elementwise as _ew
from ._core import (
    BILINEAR,
    COMPOSITE,
    LINEAR,
    QUIET,
    broadcast_shapes,
    defop,
    is_raw,
    normalize_dim,
    promote_types,
    quiet,
    quiet_reset,
    quiet_set,
    record,
    record_multi,
    register,
    register_methods,
    require_tensor,
    run,
    write_out,
)
from .complex import re as _re
from .elementwise import where
from .reduction import SumBackward0, SumBackward1, _vector_norm, amax, amin, make_return_type
from .reduction import sum as _sum
from .shape import (
    CloneBackward0,
    ExpandBackward0,
    PermuteBackward0,
    ReshapeAliasBackward0,
    SqueezeBackward0,
    SqueezeBackward1,
    TBackward0,
    TransposeBackward0,
    UnsafeViewBackward0,
    UnsqueezeBackward0,
    cat,
)
from .special import nan_to_num

_wrap = Tensor._wrap

# torch's label order for einsum: 'A'-'Z' are labels 0-25, 'a'-'z' are 26-51.
_LABELS = string.ascii_uppercase + string.ascii_lowercase
_LABEL_SET = frozenset(_LABELS)


def _np_matmul(a, b, keep_float32: bool = False):
    """``np.matmul``; bfloat16 and float16 operands are multiplied in float32 (BLAS) and
    rounded once, as torch's CPU kernels do (ml_dtypes' own matmul loop is slow, NumPy's
    float16 one rounds differently)."""
    da, db = a.dtype, b.dtype
    if (da.itemsize > 2 and db.itemsize > 2) or da.kind not in "fV" or db.kind not in "fV":
        return np.matmul(a, b)
    res = np.matmul(a.astype(np.float32), b.astype(np.float32))
    return res if keep_float32 else res.astype(promote_types(da, db))


def _np_dot(a, b):
    da, db = a.dtype, b.dtype
    if (da.itemsize > 2 and db.itemsize > 2) or da.kind not in "fV" or db.kind not in "fV":
        return np.dot(a, b)
    res = np.dot(a.astype(np.float32), b.astype(np.float32))
    return np.asarray(res).astype(promote_types(a.dtype, b.dtype))


# -- shared helpers ----------------------------------------------------------------------


def _sname(dt) -> str:
    return scalar_name(dt)


def _cname(dt) -> str:
    return cpp_name(dt)


def _not_implemented_bool(kernel: str, dt) -> None:
    if dt == np.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _check_mm(n1, m1, n2, m2, dt1, dt2) -> None:
    """The checks of torch's mm kernel (shapes first, then dtypes, then Bool)."""
    if m1 != n2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n1}x{m1} and {n2}x{m2})")
    if dt1 != dt2:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_cname(dt1)} != {_cname(dt2)}"
        )
    _not_implemented_bool("addmm_impl_cpu_", dt1)


def _check_mv(n, m, k, dt_mat, dt_vec, input_size=None, dt_input=None) -> None:
    """torch's addmv checks; mv uses a result of size ``n`` with the vector's dtype."""
    if input_size is None:
        input_size = n
    if dt_input is None:
        dt_input = dt_vec
    if m != k or not (input_size == n or input_size == 1):
        raise RuntimeError(f"size mismatch, got input ({input_size}), mat ({n}x{m}), vec ({k})")
    if not (dt_input == dt_mat == dt_vec):
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{_sname(dt_input)}, {_sname(dt_mat)}, and {_sname(dt_vec)}"
        )
    _not_implemented_bool("addmv_impl_cpu", dt_mat)


def _check_bmm(b1_shape, b2_shape, dt1, dt2) -> None:
    bs, _, contraction = b1_shape
    if b2_shape[0] != bs or b2_shape[1] != contraction:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{bs}, {contraction}] but got: [{b2_shape[0]}, {b2_shape[1]}]."
        )
    if dt1 != dt2:
        raise RuntimeError(f"expected scalar type {_sname(dt1)} but found {_sname(dt2)}")
    _not_implemented_bool("bmm", dt1)


def _check_dot(a: np.ndarray, b: np.ndarray) -> None:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{_sname(a.dtype)} and {_sname(b.dtype)}"
        )
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] "
            "to have the same number of elements, but got "
            f"{a.shape[0]} and {b.shape[0]} elements respectively"
        )
    _not_implemented_bool("dot", a.dtype)


def _check_expand(t: Tensor, target: tuple) -> None:
    """torch's ``expand`` errors for broadcasting an addmm-style ``input`` to the result."""
    shape = t._data.shape
    if shape == target[len(target) - len(shape) :]:
        return  # the common case: same trailing sizes
    if len(shape) > len(target):
        raise RuntimeError(
            f"expand({_legacy_type_name(t._data.dtype)}{{{list(shape)}}}, size={list(target)}): "
            f"the number of sizes provided ({len(target)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({len(shape)})"
        )
    lead = len(target) - len(shape)
    for i in range(len(target) - 1, lead - 1, -1):
        s = shape[i - lead]
        if s != 1 and s != target[i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[i]}) must match the existing size "
                f"({s}) at non-singleton dimension {i}.  Target sizes: {list(target)}.  "
                f"Tensor sizes: {list(shape)}"
            )


def _int_scalar(x, dt):
    # Integer kernels convert alpha/beta to the integer type (torch's ``to<scalar_t>``).
    return int(x) if dt.kind in "biu" else x


def _cj(x):
    """The complex conjugate, for rules (real operands are returned as they are)."""
    if is_raw(x):
        return np.conjugate(x) if x.dtype.kind == "c" else x
    return x.conj() if x._data.dtype.kind == "c" else x


def _scale(x, factor):
    """``x * factor`` (torch's ``maybe_multiply``: nothing to do for a factor of 1)."""
    return x if factor == 1 else x * factor


def _graph_needed(x: Tensor, y: Tensor) -> bool:
    """Whether a composite op must record its steps (gradients or tangents may flow)."""
    return bool(_forward_ad_on) or (_state.enabled and (x._rg or y._rg))


def _broadcast(a: np.ndarray, shape: tuple) -> np.ndarray:
    """``a`` broadcast to ``shape`` (read-only); ``a`` itself when nothing is broadcast."""
    return a if a.shape == shape else np.broadcast_to(a, shape)


def _is_contiguous(a: np.ndarray) -> bool:
    """torch's ``is_contiguous`` (NumPy's flag also ignores size-1 dims and empty arrays)."""
    return a.flags.c_contiguous


def _viewable(a: np.ndarray, shape: tuple) -> bool:
    """torch's ``computeStride``: can ``a`` be seen with ``shape`` without a copy?"""
    old, new = a.shape, tuple(shape)
    if not old or a.size == 0:
        return True
    item = a.itemsize
    if any(s % item for s in a.strides):
        return False
    strides = [s // item for s in a.strides]
    view_d = len(new) - 1
    chunk_base = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old) - 1, -1, -1):
        tensor_numel *= old[d]
        if d == 0 or (old[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return False
            if d > 0:
                chunk_base = strides[d - 1]
                tensor_numel = view_numel = 1
    return view_d == -1


# -- torch's intermediate steps ----------------------------------------------------------------
# The shape steps torch's composite ops record (reshape is a view, an alias or a copy, as in
# torch's ``reshape``). They are declared here, with torch's names, so that those ops keep
# forward mode and torch's graph; their derivatives only move the gradient back.


def _sizes_back(g, self_sym_sizes):
    return g.reshape(self_sym_sizes)


def _spread(g, self_sym_sizes):
    """The gradient of a sum: ``g`` broadcast back over the summed dims (a read-only view)."""
    if is_raw(g):
        return np.broadcast_to(g, self_sym_sizes)
    return g.expand(self_sym_sizes)


def _permute_back(g, dims):
    inverse = tuple(np.argsort(dims))
    return g.transpose(inverse) if is_raw(g) else g.permute(inverse)


SqueezeBackward4 = defop(  # squeeze_(dim) of a result nobody else sees: not a view
    "SqueezeBackward4",
    params=("dim", "self_sym_sizes"),
    forward=lambda a, dim, self_sym_sizes: a.squeeze(dim),
    vjp={"self": _sizes_back},
    jvp=LINEAR,
)


def _reshape(t: Tensor, shape: tuple) -> Tensor:
    """torch's ``reshape``: a view when ``t`` is contiguous, an alias when its strides
    allow, else a contiguous copy seen with the new shape."""
    a = t._data
    if a.flags.c_contiguous:
        v = a if a.shape == shape else a.reshape(shape)
        return record(ViewBackward0, v, (t,), (a.shape, shape))
    if _viewable(a, shape):
        return record(ReshapeAliasBackward0, a.reshape(shape), (t,), (a.shape, shape))
    c = record(CloneBackward0, a.copy(), (t,))
    return record(UnsafeViewBackward0, c._data.reshape(shape), (c,), (a.shape, shape))


def _unsafe_view(t: Tensor, shape: tuple) -> Tensor:
    a = t._data
    v = a if a.shape == shape else a.reshape(shape)
    return record(UnsafeViewBackward0, v, (t,), (a.shape, shape))


def _transpose(t: Tensor, d0: int, d1: int) -> Tensor:
    return record(TransposeBackward0, t._data.swapaxes(d0, d1), (t,), (d0, d1))


def _contiguous(t: Tensor) -> Tensor:
    a = t._data
    return t if a.flags.c_contiguous else record(CloneBackward0, a.copy(), (t,))


def _permute(t: Tensor, dims: tuple) -> Tensor:
    return record(PermuteBackward0, t._data.transpose(dims), (t,), (dims,))


def _expand(t: Tensor, shape: tuple) -> Tensor:
    a = t._data
    return record(ExpandBackward0, _broadcast(a, shape), (t,), (a.shape, shape))


def _unsqueeze(t: Tensor, dim: int) -> Tensor:
    return record(UnsqueezeBackward0, np.expand_dims(t._data, dim), (t,), (dim,))


def _squeeze(t: Tensor, dim: int, cls=SqueezeBackward1) -> Tensor:
    a = t._data
    return record(cls, a.squeeze(dim), (t,), (dim, a.shape))


def _flatten(t: Tensor) -> Tensor:
    a = t._data
    if a.ndim == 1:
        return t  # torch's flatten returns a 1-D tensor itself
    return _reshape(t, (a.size,))


# -- dot, vdot -----------------------------------------------------------------------------
# Bilinear ops: the rule of each operand reads the other one, so only the operand another
# operand's gradient needs is saved (modifying the other in place is then allowed).

DotBackward0 = defop(
    "DotBackward0",
    batch=lambda a, b: (a * b).sum(-1),
    inputs=("self", "tensor"),
    forward=_np_dot,
    vjp={
        "self": lambda g, tensor: g * _cj(tensor),
        "tensor": lambda g, self: g * _cj(self),
    },
    jvp=BILINEAR,
)

VdotBackward0 = defop(
    "VdotBackward0",
    inputs=("self", "other"),
    forward=np.vdot,
    vjp={
        "self": lambda g, other: _cj(g) * other,
        "other": lambda g, self: g * self,
    },
    jvp=BILINEAR,
)


def _dot(x: Tensor, y: Tensor) -> Tensor:
    return record(DotBackward0, _np_dot(x._data, y._data), (x, y))


@register("dot", method=True)
def dot(input, tensor, *, out=None):
    """Inner product of two 1-D tensors of the same length and dtype.

    Example:
        >>> import ember
        >>> ember.dot(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
        tensor(11.)
    """
    require_tensor(input, "dot", "input", 1)
    require_tensor(tensor, "dot", "tensor", 2)
    _check_dot(input._data, tensor._data)
    return write_out("dot", run(DotBackward0, (input, tensor), (input._data, tensor._data)), out)


@register("vdot", method=True)
def vdot(input, other, *, out=None):
    """``sum(conj(input) * other)`` for 1-D tensors (``dot`` for real ones).

    Example:
        >>> import ember
        >>> ember.vdot(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
        tensor(11.)
    """
    require_tensor(input, "vdot", "input", 1)
    require_tensor(other, "vdot", "other", 2)
    a, b = input._data, other._data
    _check_dot(a, b)
    return write_out("vdot", run(VdotBackward0, (input, other), (a, b)), out)


# -- mm, mv, bmm -----------------------------------------------------------------------------

MmBackward0 = defop(
    "MmBackward0",
    batch=lambda a, b: a.matmul(b),
    inputs=("self", "mat2"),
    forward=_np_matmul,
    vjp={
        "self": lambda g, mat2: g @ _cj(mat2).mT,
        "mat2": lambda g, self: _cj(self).mT @ g,
    },
    jvp=BILINEAR,
)

MvBackward0 = defop(
    "MvBackward0",
    batch=lambda a, v: a.matmul(v.unsqueeze(-1)).squeeze(-1),
    inputs=("self", "vec"),
    forward=_np_matmul,
    vjp={
        "self": lambda g, vec: g[:, None] * _cj(vec),
        "vec": lambda g, self: _cj(self).mT @ g,
    },
    jvp=BILINEAR,
)

BmmBackward0 = defop(
    "BmmBackward0",
    batch=lambda a, b: a.matmul(b),
    inputs=("self", "mat2"),
    forward=_np_matmul,
    vjp={
        "self": lambda g, mat2: g @ _cj(mat2).mT,
        "mat2": lambda g, self: _cj(self).mT @ g,
    },
    jvp=BILINEAR,
)


def _mm(x: Tensor, y: Tensor) -> Tensor:
    return record(MmBackward0, _np_matmul(x._data, y._data), (x, y))


def _mv(x: Tensor, y: Tensor) -> Tensor:
    return record(MvBackward0, _np_matmul(x._data, y._data), (x, y))


def _bmm(x: Tensor, y: Tensor) -> Tensor:
    return record(BmmBackward0, _np_matmul(x._data, y._data), (x, y))


@register("mm", method=True)
def mm(input, mat2, *, out=None):
    """Matrix product of two 2-D tensors (no broadcasting).

    Example:
        >>> import ember
        >>> ember.mm(ember.ones(2, 3), ember.ones(3, 1))
        tensor([[3.],
                [3.]])
    """
    if _AUTOCAST[0]:  # CPU autocast: torch's lower-precision list
        input, mat2 = autocast_lower(input, mat2)
    require_tensor(input, "mm", "input", 1)
    require_tensor(mat2, "mm", "mat2", 2)
    a, b = input._data, mat2._data
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_mm(a.shape[0], a.shape[1], b.shape[0], b.shape[1], a.dtype, b.dtype)
    token = quiet_set(QUIET)
    try:
        res = _np_matmul(a, b)
    finally:
        quiet_reset(token)
    t = record(MmBackward0, res, (input, mat2))
    return write_out("mm", t, out)


@register("mv", method=True)
def mv(input, vec, *, out=None):
    """Matrix-vector product of a 2-D and a 1-D tensor.

    Example:
        >>> import ember
        >>> ember.mv(ember.ones(2, 3), ember.ones(3))
        tensor([3., 3.])
    """
    require_tensor(input, "mv", "input", 1)
    require_tensor(vec, "mv", "vec", 2)
    a, v = input._data, vec._data
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}")
    _check_mv(a.shape[0], a.shape[1], v.shape[0], a.dtype, v.dtype)
    return write_out("mv", run(MvBackward0, (input, vec), (a, v)), out)


@register("bmm", method=True)
def bmm(input, mat2, *, out=None):
    """Batched matrix product of two 3-D tensors with the same batch size (no broadcasting).

    Example:
        >>> import ember
        >>> ember.bmm(ember.ones(4, 2, 3), ember.ones(4, 3, 5)).shape
        torch.Size([4, 2, 5])
    """
    if _AUTOCAST[0]:  # CPU autocast: torch's lower-precision list
        input, mat2 = autocast_lower(input, mat2)
    require_tensor(input, "bmm", "input", 1)
    require_tensor(mat2, "bmm", "mat2", 2)
    a, b = input._data, mat2._data
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_bmm(a.shape, b.shape, a.dtype, b.dtype)
    return write_out("bmm", run(BmmBackward0, (input, mat2), (a, b)), out)


# -- matmul ----------------------------------------------------------------------------------
# torch's ``_matmul_impl`` (LinearAlgebra.cpp) picks one of these paths; each records the
# steps torch records, so the graph is torch's.

_DOT, _MV, _VM, _MM, _FOLD, _FOLD_T, _SQUEEZE, _BATCH = range(8)


def _should_fold(a: np.ndarray, b: np.ndarray, rga: bool, rgb: bool) -> bool:
    """torch's ``should_fold``: fold the larger operand into a matrix (mm/mv, not bmm)."""
    larger = a.ndim >= b.ndim
    dim_t1 = a.ndim if larger else b.ndim
    dim_t2 = b.ndim if larger else a.ndim
    if not (dim_t1 >= 3 and dim_t2 <= 2):
        return False
    if rgb if larger else rga:
        return True
    if a.ndim == 2:
        return False
    big = a if larger else b.swapaxes(-1, -2)
    if big.size == 0:
        return True
    item = big.itemsize
    strides = [s // item for s in big.strides]
    shape = big.shape
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(dim_t1 - 2))


def _matmul_plan(a: np.ndarray, b: np.ndarray, rga: bool, rgb: bool) -> tuple:
    """Run torch's checks for the path matmul takes and name the path: ``(kind, ...)``.
    ``rga``/``rgb``: the operands' ``requires_grad``."""
    da, db = a.ndim, b.ndim
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    if da == 1 and db == 1:
        _check_dot(a, b)
        return (_DOT,)
    if da == 2 and db == 1:
        _check_mv(a.shape[0], a.shape[1], b.shape[0], a.dtype, b.dtype)
        return (_MV,)
    if da == 1 and db == 2:
        _check_mm(1, a.shape[0], b.shape[0], b.shape[1], a.dtype, b.dtype)
        return (_VM,)
    if da == 2 and db == 2:
        _check_mm(a.shape[0], a.shape[1], b.shape[0], b.shape[1], a.dtype, b.dtype)
        return (_MM,)
    if _should_fold(a, b, rga, rgb):
        if da >= db:
            rows, cols = math.prod(a.shape[:-1]), a.shape[-1]
            if db == 2:
                _check_mm(rows, cols, b.shape[0], b.shape[1], a.dtype, b.dtype)
            else:
                _check_mv(rows, cols, b.shape[0], a.dtype, b.dtype)
            return (_FOLD,)
        # b is the larger one: torch folds b.mT and multiplies by a.t() (or a).
        rows, cols = math.prod(b.shape[:-2]) * b.shape[-1], b.shape[-2]
        if da == 2:
            _check_mm(rows, cols, a.shape[1], a.shape[0], b.dtype, a.dtype)
        else:
            _check_mv(rows, cols, a.shape[0], b.dtype, a.dtype)
        return (_FOLD_T,)
    if da == 3 and db == 3 and a.shape[0] != b.shape[0]:
        # A batch of one that requires grad is squeezed (and matmul starts over).
        if a.shape[0] == 1 and rga:
            return (_SQUEEZE, 0, _matmul_plan(a[0], b, rga, rgb))
        if b.shape[0] == 1 and rgb:
            return (_SQUEEZE, 1, _matmul_plan(a, b[0], rga, rgb))
    # Batched path: broadcast batch dims, then bmm.
    batch = broadcast_shapes(a.shape[: max(da - 2, 0)], b.shape[: max(db - 2, 0)])
    bs = math.prod(batch)
    n = a.shape[-2] if da > 1 else 1
    m1 = a.shape[-1]
    m2 = b.shape[-2] if db > 1 else b.shape[0]
    _check_bmm((bs, n, m1), (bs, m2), a.dtype, b.dtype)
    return (_BATCH, batch)


def _matmul_steps(x: Tensor, y: Tensor, plan: tuple) -> Tensor:
    """``matmul`` as torch records it, path ``plan``."""
    kind = plan[0]
    if kind == _DOT:
        return _dot(x, y)
    if kind == _MV:
        return _mv(x, y)
    if kind == _MM:
        return _mm(x, y)
    if kind == _VM:  # x.unsqueeze(0).mm(y).squeeze_(0)
        return _squeeze(_mm(_unsqueeze(x, 0), y), 0, SqueezeBackward4)
    if kind == _SQUEEZE:
        if plan[1] == 0:
            return _matmul_steps(_squeeze(x, 0), y, plan[2])
        return _matmul_steps(x, _squeeze(y, 0), plan[2])
    if kind == _BATCH:
        return _batched(x, y, plan[1])
    # Fold the larger operand's batch into the rows of one mm (or mv).
    transposed = kind == _FOLD_T
    if transposed:
        t1 = _transpose(y, -2, -1)
        t2 = record(TBackward0, x._data.T, (x,)) if x._data.ndim == 2 else x
    else:
        t1, t2 = x, y
    s1 = t1._data.shape
    shape = s1[:-1]
    folded = _reshape(t1, (math.prod(shape), s1[-1]))
    if t2._data.ndim == 1:
        return _unsafe_view(_mv(folded, t2), shape)
    out = _unsafe_view(_mm(folded, t2), shape + (t2._data.shape[1],))
    return _contiguous(_transpose(out, -2, -1)) if transposed else out


def _batched(x: Tensor, y: Tensor, batch: tuple) -> Tensor:
    """Broadcast the batch dims, fold them into one, ``bmm``, and view the result."""
    a, b = x._data, y._data
    n = a.shape[-2] if a.ndim > 1 else 1
    m1 = a.shape[-1]
    vector = b.ndim == 1
    m2 = b.shape[-2] if not vector else b.shape[0]
    p = b.shape[-1] if not vector else 1
    bs = math.prod(batch)
    x3 = _reshape(_expand(x, batch + (n, m1)), (bs, n, m1))
    if vector:
        y3 = _unsqueeze(_reshape(_expand(y, batch + (m2,)), (bs, m2)), 2)
    else:
        y3 = _reshape(_expand(y, batch + (m2, p)), (bs, m2, p))
    shape = batch + ((n,) if a.ndim > 1 else ()) + ((p,) if not vector else ())
    res = _bmm(x3, y3)
    if vector:
        res = _squeeze(res, -1)
    return _unsafe_view(res, shape)


def _matmul_value(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.ndim >= 3 and b.ndim <= 2 and a.flags.c_contiguous:
        # One (B*n, m) @ (m, p) BLAS call instead of a loop over the batch.
        res = _np_matmul(a.reshape(math.prod(a.shape[:-1]), a.shape[-1]), b)
        return res.reshape(a.shape[:-1] + b.shape[1:])
    return _np_matmul(a, b)


_SINGLE_NODE = {_DOT: DotBackward0, _MV: MvBackward0, _MM: MmBackward0}


@register("matmul", method=True)
def matmul(input, other, *, out=None):
    """Matrix product with NumPy/torch semantics for 1-D operands and broadcast batch dims.

    Example:
        >>> import ember
        >>> a = ember.ones(2, 3, requires_grad=True)
        >>> ember.matmul(a, ember.ones(3))
        tensor([3., 3.], grad_fn=<MvBackward0>)
    """
    if _AUTOCAST[0]:  # CPU autocast: torch's lower-precision list
        input, other = autocast_lower(input, other)
    require_tensor(input, "matmul", "input", 1)
    require_tensor(other, "matmul", "other", 2)
    a, b = input._data, other._data
    rga, rgb = input._rg, other._rg
    if out is not None and (rga or rgb or out._rg) and _state.enabled:
        raise RuntimeError(
            "matmul(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    da, db = a.ndim, b.ndim
    if da == 2 and db == 2:  # the common cases first
        _check_mm(a.shape[0], a.shape[1], b.shape[0], b.shape[1], a.dtype, b.dtype)
        plan = (_MM,)
    elif (
        da == db > 2
        and a.shape[:-2] == b.shape[:-2]
        and a.shape[-1] == b.shape[-2]
        and a.dtype == b.dtype != np.bool_
    ):
        plan = (_BATCH, a.shape[:-2])  # equal batches: what _matmul_plan finds, checked
    else:
        plan = _matmul_plan(a, b, rga, rgb)
    token = quiet_set(QUIET)
    try:
        cls = _SINGLE_NODE.get(plan[0])
        if cls is not None:  # one op: dot, mv, mm
            t = record(cls, _np_matmul(a, b), (input, other))
        elif out is None and _graph_needed(input, other):
            t = _matmul_steps(input, other, plan)
        else:  # nothing recorded: the product alone
            t = record(MmBackward0, _matmul_value(a, b), ())
    finally:
        quiet_reset(token)
    return write_out("matmul", t, out)


# -- outer, inner --------------------------------------------------------------------------


@register("outer", method=True)
def outer(input, vec2, *, out=None):
    """Outer product of two 1-D tensors (dtypes are promoted like ``*``): torch records
    ``input.reshape(-1, 1) * vec2``.

    Example:
        >>> import ember
        >>> ember.outer(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 10.0]))
        tensor([[ 1., 10.],
                [ 2., 20.]])
    """
    require_tensor(input, "outer", "input", 1)
    require_tensor(vec2, "outer", "vec2", 2)
    if input._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input._data.ndim}-D")
    if vec2._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2._data.ndim}-D")
    return _ew.mul(_reshape(input, (input._data.shape[0], 1)), vec2, out=out)


@register("ger", method=True)
def ger(input, vec2, *, out=None):
    """Alias of ``outer``.

    Example:
        >>> import ember
        >>> ember.ger(ember.tensor([1.0, 2.0]), ember.tensor([3.0]))
        tensor([[3.],
                [6.]])
    """
    require_tensor(input, "ger", "input", 1)
    require_tensor(vec2, "ger", "vec2", 2)
    return outer(input, vec2, out=out)


@register("inner", method=True)
def inner(input, other, *, out=None):
    """Sum of products over the last dimension (a product with a 0-d operand).

    Example:
        >>> import ember
        >>> ember.inner(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
        tensor(11.)
    """
    require_tensor(input, "inner", "input", 1)
    require_tensor(other, "inner", "other", 2)
    a, b = input._data, other._data
    if a.ndim == 0 or b.ndim == 0:
        return _ew.mul(input, other, out=out)
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(a.shape)} and {list(b.shape)}"
        )
    return _tensordot_out(_tensordot(input, other, [-1], [-1]), out)


# -- addmm, addmv, baddbmm -------------------------------------------------------------------
# ``beta * input + alpha * (mat1 (op) mat2)``: linear in ``input``, bilinear in the factors.


def _scaled_tangent(product, t_self, t_m1, t_m2, m1, m2, beta, alpha):
    """The tangent of ``beta * input + alpha * product(m1, m2)``."""
    res = None if t_self is None else _scale(t_self, beta)
    for part in (
        None if t_m1 is None else product(t_m1, m2),
        None if t_m2 is None else product(m1, t_m2),
    ):
        if part is not None:
            part = _scale(part, alpha)
            res = part if res is None else res + part
    return res


def _scaled_forward(x, m1, m2, beta, alpha):
    res = _np_matmul(m1, m2, keep_float32=True)
    if alpha != 1:
        res *= alpha
    if beta != 0:
        res += x if beta == 1 else x * beta
    if res.dtype != m1.dtype:  # bfloat16/float16: float32 throughout, one rounding
        res = res.astype(m1.dtype)
    return res


AddmmBackward0 = defop(
    "AddmmBackward0",
    batch=lambda s, m1, m2, beta, alpha: (
        s.reshape((s.shape[0],) + (1,) * (3 - s.dim()) + tuple(s.shape[1:])) * beta
        + m1.matmul(m2) * alpha
    ),
    inputs=("self", "mat1", "mat2"),
    params=("beta", "alpha"),
    forward=_scaled_forward,
    vjp={
        "self": lambda g, beta: _scale(g, beta),
        "mat1": lambda g, mat2, alpha: _scale(g @ _cj(mat2).mT, alpha),
        "mat2": lambda g, mat1, alpha: _scale(_cj(mat1).mT @ g, alpha),
    },
    jvp=lambda t_self, t_mat1, t_mat2, mat1, mat2, beta, alpha: _scaled_tangent(
        mm, t_self, t_mat1, t_mat2, mat1, mat2, beta, alpha
    ),
)

AddmvBackward0 = defop(
    "AddmvBackward0",
    inputs=("self", "mat", "vec"),
    params=("beta", "alpha"),
    forward=_scaled_forward,
    vjp={
        "self": lambda g, beta: _scale(g, beta),
        "mat": lambda g, vec, alpha: _scale(g[:, None] * _cj(vec), alpha),
        "vec": lambda g, mat, alpha: _scale(_cj(mat).mT @ g, alpha),
    },
    jvp=lambda t_self, t_mat, t_vec, mat, vec, beta, alpha: _scaled_tangent(
        mv, t_self, t_mat, t_vec, mat, vec, beta, alpha
    ),
)

BaddbmmBackward0 = defop(
    "BaddbmmBackward0",
    inputs=("self", "batch1", "batch2"),
    params=("beta", "alpha"),
    forward=_scaled_forward,
    vjp={
        "self": lambda g, beta: _scale(g, beta),
        "batch1": lambda g, batch2, alpha: _scale(g @ _cj(batch2).mT, alpha),
        "batch2": lambda g, batch1, alpha: _scale(_cj(batch1).mT @ g, alpha),
    },
    jvp=lambda t_self, t_batch1, t_batch2, batch1, batch2, beta, alpha: _scaled_tangent(
        bmm, t_self, t_batch1, t_batch2, batch1, batch2, beta, alpha
    ),
)


_UNSCALED = (1, 1)


def _scaled(cls, fname, input, m1, m2, beta, alpha, out):
    x, a, b = input._data, m1._data, m2._data
    dt = a.dtype
    params = (_int_scalar(beta, dt), _int_scalar(alpha, dt))
    token = quiet_set(QUIET)
    try:
        t = record(cls, cls.forward(x, a, b, *params), (input, m1, m2), params)
    finally:
        quiet_reset(token)
    return write_out(fname, t, out)


@register("addmm", method=True)
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to the result.

    Example:
        >>> import ember
        >>> ember.addmm(ember.ones(2), ember.ones(1, 3), ember.ones(3, 2), alpha=2)
        tensor([[7., 7.]])
    """
    if _AUTOCAST[0]:  # CPU autocast: torch's lower-precision list
        input, mat1, mat2 = autocast_lower(input, mat1, mat2)
    require_tensor(input, "addmm", "input", 1)
    require_tensor(mat1, "addmm", "mat1", 2)
    require_tensor(mat2, "addmm", "mat2", 3)
    x, a, b = input._data, mat1._data, mat2._data
    if x.dtype != b.dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {_sname(x.dtype)} and "
            f"{_sname(b.dtype)}"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {_sname(a.dtype)} and "
            f"{_sname(b.dtype)}"
        )
    if a.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {a.ndim}-D tensor")
    if b.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {b.ndim}-D tensor")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{b.shape[0]}x{b.shape[1]})"
        )
    _check_expand(input, (a.shape[0], b.shape[1]))
    dt = a.dtype
    _not_implemented_bool("addmm_impl_cpu_", dt)
    if dt.kind in "biu":
        beta, alpha = _int_scalar(beta, dt), _int_scalar(alpha, dt)
    # AddmmBackward0.forward, inlined: nn.Linear's op.
    token = quiet_set(QUIET)
    try:
        res = _np_matmul(a, b, keep_float32=True)
        if alpha != 1:
            res *= alpha
        if beta != 0:
            res += x if beta == 1 else x * beta
        if res.dtype != dt:  # bfloat16/float16: float32 throughout, one rounding
            res = res.astype(dt)
    finally:
        quiet_reset(token)
    params = _UNSCALED if beta == 1 and alpha == 1 else (beta, alpha)
    t = record(AddmmBackward0, res, (input, mat1, mat2), params)
    return write_out("addmm", t, out)


@register("addmv", method=True)
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``.

    Example:
        >>> import ember
        >>> ember.addmv(ember.ones(2), ember.ones(2, 3), ember.ones(3), beta=2)
        tensor([5., 5.])
    """
    require_tensor(input, "addmv", "input", 1)
    require_tensor(mat, "addmv", "mat", 2)
    require_tensor(vec, "addmv", "vec", 3)
    x, a, v = input._data, mat._data, vec._data
    if not (a.ndim == 2 and v.ndim == 1 and x.ndim <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {x.ndim}, {a.ndim}, {v.ndim}")
    if (a.shape[1] != v.shape[0] or not (x.size == a.shape[0] or x.size == 1)) and x.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    size = x.shape[0] if x.ndim else 1
    _check_mv(a.shape[0], a.shape[1], v.shape[0], a.dtype, v.dtype, size, x.dtype)
    return _scaled(AddmvBackward0, "addmv", input, mat, vec, beta, alpha, out)


@register("baddbmm", method=True)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``.

    Example:
        >>> import ember
        >>> ember.baddbmm(ember.ones(3), ember.ones(2, 1, 4), ember.ones(2, 4, 3)).shape
        torch.Size([2, 1, 3])
    """
    if _AUTOCAST[0]:  # CPU autocast: torch's lower-precision list
        input, batch1, batch2 = autocast_lower(input, batch1, batch2)
    require_tensor(input, "baddbmm", "input", 1)
    require_tensor(batch1, "baddbmm", "batch1", 2)
    require_tensor(batch2, "baddbmm", "batch2", 3)
    x, a, b = input._data, batch1._data, batch2._data
    if x.dtype != a.dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {_cname(x.dtype)}, batch1: "
            f"{_cname(a.dtype)}, batch2: {_cname(b.dtype)}"
        )
    target = (
        a.shape[normalize_dim(0, a.ndim)],
        a.shape[normalize_dim(1, a.ndim)],
        b.shape[normalize_dim(2, b.ndim)],
    )
    _check_expand(input, target)
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_bmm(a.shape, b.shape, a.dtype, b.dtype)
    return _scaled(BaddbmmBackward0, "baddbmm", input, batch1, batch2, beta, alpha, out)


def _register_inplace(op, doc: str) -> None:
    """``Tensor.<op>_``: the product written into ``self``, which must have the result's
    shape (torch's check, after the op's own); ``doc`` is its docstring."""

    def checked(self, *args, **kwargs):
        res = op(self, *args, **kwargs)
        if res._data.shape != self._data.shape:
            raise RuntimeError(
                f"Bad in-place call: input tensor size {list(self._data.shape)} and output "
                f"tensor size {list(res._data.shape)} should match"
            )
        return res

    def method(self, *args, **kwargs):
        return apply_inplace(self, checked, *args, **kwargs)

    method.__name__ = method.__qualname__ = op.__name__ + "_"
    method.__doc__ = doc
    register(method.__name__, function=False, method=True)(method)


_register_inplace(
    addmm,
    """In-place ``addmm``: ``self = beta * self + alpha * (mat1 @ mat2)``.

    Example:
        >>> import ember
        >>> m = ember.zeros(2, 2)
        >>> m.addmm_(ember.eye(2), ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor([[1., 2.],
                [3., 4.]])
    """,
)
_register_inplace(
    addmv,
    """In-place ``addmv``: ``self = beta * self + alpha * (mat @ vec)``.

    Example:
        >>> import ember
        >>> v = ember.ones(2)
        >>> v.addmv_(ember.tensor([[1.0, 2.0], [3.0, 4.0]]), ember.tensor([1.0, 1.0]))
        tensor([4., 8.])
    """,
)
_register_inplace(
    baddbmm,
    """In-place ``baddbmm``: ``self = beta * self + alpha * bmm(batch1, batch2)``.

    Example:
        >>> import ember
        >>> b = ember.zeros(1, 2, 2)
        >>> b.baddbmm_(ember.ones(1, 2, 3), ember.ones(1, 3, 2), alpha=0.5)
        tensor([[[1.5000, 1.5000],
                 [1.5000, 1.5000]]])
    """,
)


# -- einsum ----------------------------------------------------------------------------------

_ELL = "..."


@lru_cache(maxsize=512)
def _parse_einsum(equation: str, shapes: tuple) -> tuple:
    """Validate ``equation`` as torch does; return (terms, out_term) with explicit letters.

    Ellipses are replaced by unused letters, right-aligned per operand, so the result is
    an einsum NumPy evaluates with torch's semantics (including size-1 broadcasting).
    """
    num_ops = len(shapes)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels: list = [[] for _ in range(num_ops)]
    cur = 0
    ell = False
    i = 0
    while i < len(lhs):
        c = lhs[i]
        if c == " ":
            pass
        elif c == ".":
            if ell:
                raise RuntimeError(
                    f"einsum(): found '.' for operand {cur} for which an ellipsis was already found"
                )
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(
                    f"einsum(): found '.' for operand {cur} that is not part of any ellipsis"
                )
            i += 2
            op_labels[cur].append(_ELL)
            ell = True
        elif c == ",":
            cur += 1
            if cur >= num_ops:
                raise RuntimeError(
                    "einsum(): fewer operands were provided than specified in the equation"
                )
            ell = False
        else:
            if c not in _LABEL_SET:
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {i} in the equation string, "
                    "subscripts must be in [a-zA-Z]"
                )
            op_labels[cur].append(c)
        i += 1
    if cur != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")

    counts: dict = {}
    ell_num = 0
    for k, labels in enumerate(op_labels):
        nd = len(shapes[k])
        nl = sum(1 for lab in labels if lab is not _ELL)
        has_ell = len(labels) != nl
        if has_ell:
            ell_num = max(ell_num, nd - nl)
            if nl > nd:
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({nl}) is more than "
                    f"the number of dimensions ({nd}) for operand {k}"
                )
        elif nl != nd:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nl}) does not match the "
                f"number of dimensions ({nd}) for operand {k} and no ellipsis was given"
            )
        for lab in labels:
            if lab is not _ELL:
                counts[lab] = counts.get(lab, 0) + 1

    if arrow < 0:
        out_labels = [_ELL] + [lab for lab in _LABELS if counts.get(lab) == 1]
    else:
        out_labels = []
        seen_out: set = set()
        ell_out = False
        rhs = equation[arrow + 2 :]
        j = 0
        while j < len(rhs):
            c = rhs[j]
            if c == " ":
                pass
            elif c == ".":
                if ell_out:
                    raise RuntimeError(
                        "einsum(): found '.' for output but an ellipsis (...) was already found"
                    )
                if not (j + 2 < len(rhs) and rhs[j + 1] == "." and rhs[j + 2] == "."):
                    raise RuntimeError(
                        "einsum(): found '.' for output that is not part of any ellipsis (...)"
                    )
                j += 2
                out_labels.append(_ELL)
                ell_out = True
            else:
                if c not in _LABEL_SET:
                    raise RuntimeError(
                        f"einsum(): invalid subscript given at index {len(lhs) + 2 + j} in the "
                        "equation string, subscripts must be in [a-zA-Z]"
                    )
                if c in seen_out:
                    raise RuntimeError(
                        f"einsum(): output subscript {c} appears more than once in the output"
                    )
                if c not in counts:
                    raise RuntimeError(
                        f"einsum(): output subscript {c} does not appear in the equation for any "
                        "input operand"
                    )
                seen_out.add(c)
                out_labels.append(c)
            j += 1

    # Sizes: repeated labels within an operand must agree; across operands they broadcast.
    sizes: dict = {}
    ell_sizes = [1] * ell_num
    for k, labels in enumerate(op_labels):
        shape = shapes[k]
        nd = len(shape)
        first: dict = {}
        d = 0
        for lab in labels:
            if lab is _ELL:
                n_ell = nd - (len(labels) - 1)
                for e in range(n_ell):
                    s = shape[d + e]
                    pos = ell_num - n_ell + e
                    prev = ell_sizes[pos]
                    if s != 1 and prev != 1 and s != prev:
                        raise RuntimeError(
                            f"einsum(): dimension {d + e} covered by ellipsis in operand {k}"
                            f"has size {s} which does not broadcast with previously seen "
                            f"ellipsis with size {prev} for the respective dimension"
                        )
                    if prev == 1:
                        ell_sizes[pos] = s
                d += n_ell
                continue
            s = shape[d]
            if lab in first:
                if s != first[lab]:
                    raise RuntimeError(
                        f"einsum(): subscript {lab} is repeated for operand {k} but the sizes "
                        f"don't match, {s} != {first[lab]}"
                    )
            else:
                first[lab] = s
                prev = sizes.get(lab)
                if prev is not None and s != 1 and prev != 1 and s != prev:
                    raise RuntimeError(
                        f"einsum(): subscript {lab} has size {s} for operand {k} which does not "
                        f"broadcast with previously seen size {prev}"
                    )
                if prev is None or prev == 1:
                    sizes[lab] = s
            d += 1

    # Replace ellipses by fresh letters.
    free = [c for c in _LABELS if c not in counts]
    ell_letters = "".join(free[:ell_num])
    terms = []
    for k, labels in enumerate(op_labels):
        n_ell = len(shapes[k]) - (len(labels) - 1)
        terms.append(
            "".join(ell_letters[ell_num - n_ell :] if lab is _ELL else lab for lab in labels)
        )
    out_term = "".join(ell_letters if lab is _ELL else lab for lab in out_labels)
    return tuple(terms), out_term


def _np_einsum(terms, out_term, arrays):
    eq = ",".join(terms) + "->" + out_term
    optimize = len(arrays) > 2 or (len(arrays) == 2 and max(x.size for x in arrays) > 512)
    res = np.asarray(np.einsum(eq, *arrays, optimize="greedy" if optimize else False))
    # NumPy returns views for pure permutations/diagonals; torch-style ops return new data.
    for x in arrays:
        if np.may_share_memory(res, x):
            return res.copy()
    return res


def _einsum_forward(arrays, terms, out_term, shapes):
    res = _np_einsum(terms, out_term, arrays)
    if len(arrays) == 1 and arrays[0].dtype.kind in "biu" and set(terms[0]) - set(out_term):
        res = res.astype(np.int64)  # one operand's contraction is a ``sum``: ints -> int64
    return res


def _einsum_vjp(g, terms, out_term, ops, shapes, k):
    """Gradient for operand ``k`` of ``einsum(terms -> out_term)``: an einsum of ``g`` with
    the conjugated other operands (``ops[k]`` is not read). Labels repeated in operand ``k``
    get identity matrices; labels only operand ``k`` has (or has larger than everywhere
    else) get vectors of ones. Arrays give arrays; Tensors a recorded einsum.
    """
    tk = terms[k]
    shape_k = shapes[k]
    recorded = not is_raw(g)
    dt = g._data.dtype if recorded else g.dtype
    in_terms = [out_term]
    in_ops = [g]
    source_size: dict = {}
    for lab, s in zip(out_term, g.shape):
        source_size[lab] = max(source_size.get(lab, 1), s)
    for j, (t, x) in enumerate(zip(terms, ops)):
        if j == k:
            continue
        in_terms.append(t)
        in_ops.append(_cj(x))
        for lab, s in zip(t, shapes[j]):
            source_size[lab] = max(source_size.get(lab, 1), s)
    used = set("".join(terms) + out_term)
    fresh = iter([c for c in _LABELS if c not in used])
    const = []
    out = []
    seen: set = set()
    for lab, s in zip(tk, shape_k):
        if lab in seen:
            f = next(fresh)
            const.append((lab + f, np.eye(s, dtype=dt)))
            out.append(f)
            continue
        seen.add(lab)
        out.append(lab)
        if tk.count(lab) == 1 and (lab not in source_size or source_size[lab] < s):
            const.append((lab, np.ones(s, dtype=dt)))
    for t, c in const:
        in_terms.append(t)
        in_ops.append(_wrap(c) if recorded else c)
    out_k = "".join(out)
    if recorded:
        return einsum(",".join(in_terms) + "->" + out_k, *in_ops)
    return _np_einsum(in_terms, out_k, in_ops)


# One node per einsum, named after the step torch's einsum ends with: one operand is
# permuted (then summed if labels are contracted); several are multiplied pairwise (``mul``,
# or ``bmm`` and a final ``view`` when labels are contracted). Einsum is linear in each
# operand: forward mode is the product rule. Of one operand nothing is saved; of two, each
# operand's rule reads the other (only the operand the other's gradient needs is saved);
# more take a variable number of operands (all saved).

_EINSUM_PARAMS = ("terms", "out_term", "shapes")


def _einsum_one(name: str):
    return defop(
        name,
        params=_EINSUM_PARAMS,
        forward=lambda a, terms, out_term, shapes: _einsum_forward([a], terms, out_term, shapes),
        vjp={
            "self": lambda g, terms, out_term, shapes: _einsum_vjp(
                g, terms, out_term, (None,), shapes, 0
            )
        },
        jvp=LINEAR,
    )


def _einsum_two(name: str):
    return defop(
        name,
        inputs=("self", "other"),
        params=_EINSUM_PARAMS,
        forward=lambda a, b, terms, out_term, shapes: _einsum_forward(
            [a, b], terms, out_term, shapes
        ),
        vjp={
            "self": lambda g, other, terms, out_term, shapes: _einsum_vjp(
                g, terms, out_term, (None, other), shapes, 0
            ),
            "other": lambda g, self, terms, out_term, shapes: _einsum_vjp(
                g, terms, out_term, (self, None), shapes, 1
            ),
        },
        jvp=BILINEAR,
    )


def _einsum_many_vjp(g, tensors, needs_input_grad, terms, out_term, shapes):
    return tuple(
        _einsum_vjp(g, terms, out_term, tensors, shapes, k) if need else None
        for k, need in enumerate(needs_input_grad)
    )


def _einsum_many(name: str):
    return defop(
        name,
        inputs=("*tensors",),
        params=_EINSUM_PARAMS,
        forward=_einsum_forward,
        vjp=_einsum_many_vjp,
        jvp=BILINEAR,
    )


# (number of operands: 1, 2 or more; labels contracted) -> node class
_EINSUM_NODES = {
    (1, True): _einsum_one("SumBackward1"),
    (1, False): _einsum_one("PermuteBackward0"),
    (2, True): _einsum_two("ViewBackward0"),
    (2, False): _einsum_two("MulBackward0"),
    (3, True): _einsum_many("ViewBackward0"),
    (3, False): _einsum_many("MulBackward0"),
}


@lru_cache(maxsize=512)
def _einsum_plan(equation: str, shapes: tuple) -> tuple:
    """(node class, its parameters) of ``einsum(equation)`` on operands of ``shapes``."""
    terms, out_term = _parse_einsum(equation, shapes)
    contracted = bool(set("".join(terms)) - set(out_term))
    return _EINSUM_NODES[min(len(shapes), 3), contracted], (terms, out_term, shapes)


def _sublist_label(n) -> str:
    if n is Ellipsis:
        return "..."
    if isinstance(n, (int, np.integer)) and 0 <= n < 26:
        return chr(ord("A") + int(n))
    if isinstance(n, (int, np.integer)) and 26 <= n < 52:
        return chr(ord("a") + int(n) - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


@register("einsum")
def einsum(*args):
    """Einstein summation, in torch's string or sublist form, with broadcasting.

    Example:
        >>> import ember
        >>> a = ember.ones(2, 3)
        >>> ember.einsum("ij,jk->ik", a, ember.ones(3, 4)).shape
        torch.Size([2, 4])
    """
    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, or at least "
            "one operand and its subscripts list"
        )
    if isinstance(args[0], Tensor):
        equation = ",".join("".join(_sublist_label(s) for s in sub) for sub in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + "".join(_sublist_label(s) for s in args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum(equation, *operands[0])
    for i, x in enumerate(operands):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 1, but got {type(x).__name__}"
            )
    arrays = [x._data for x in operands]
    cls, params = _einsum_plan(equation, tuple(a.shape for a in arrays))
    dt0 = arrays[0].dtype
    for x in arrays[1:]:
        if x.dtype != dt0:
            raise RuntimeError(f"expected scalar type {_sname(dt0)} but found {_sname(x.dtype)}")
    token = quiet_set(QUIET)
    try:
        res = _einsum_forward(arrays, *params)
        return record(cls, res, tuple(operands), params)
    finally:
        quiet_reset(token)


# -- tensordot -------------------------------------------------------------------------------


def _dims_list(x, arg: str, pos: int) -> list:
    if isinstance(x, Tensor):
        x = x.tolist()
        if not isinstance(x, list):
            x = [x]
    if not isinstance(x, (list, tuple)) or not all(
        isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in x
    ):
        bad = (
            x
            if not isinstance(x, (list, tuple))
            else next(d for d in x if not isinstance(d, (int, np.integer)) or isinstance(d, bool))
        )
        raise TypeError(
            f"tensordot(): argument '{arg}' (position {pos}) must be tuple of ints, not "
            f"{type(bad).__name__}"
        )
    return [int(d) for d in x]


@register("tensordot")
def tensordot(a, b, dims=2, out=None):
    """Contract ``dims`` (an int, or two lists of dims) of ``a`` with those of ``b``.

    Example:
        >>> import ember
        >>> ember.tensordot(ember.ones(2, 3, 4), ember.ones(3, 4, 5), dims=2).shape
        torch.Size([2, 5])
    """
    require_tensor(a, "tensordot", "input", 1)
    require_tensor(b, "tensordot", "other", 2)
    if not isinstance(dims, (tuple, list, Tensor, int, np.integer)) or isinstance(dims, bool):
        raise RuntimeError(
            "tensordot expects dims to be int or tuple[list[int], list[int]] or "
            f"list[list[int]] containing two lists, but got dims={dims}"
        )
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    elif isinstance(dims, Tensor):
        if dims._data.size > 1:
            dims_a, dims_b = dims._data[0].tolist(), dims._data[1].tolist()
        else:
            n = int(dims._data.reshape(()))
            if n < 0:
                raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
            dims_a, dims_b = list(range(-n, 0)), list(range(n))
    else:
        n = int(dims)
        if n < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if n > min(a._data.ndim, b._data.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-n, 0)), list(range(n))
    dims_a = _dims_list(dims_a, "dims_self", 3)
    dims_b = _dims_list(dims_b, "dims_other", 4)
    return _tensordot_out(_tensordot(a, b, dims_a, dims_b), out)


def _tensordot_out(t: Tensor, out):
    """torch's ``tensordot_out``: the result is copied into ``out`` (a recorded copy)."""
    if out is None:
        return t
    if not isinstance(out, Tensor):
        raise TypeError(f"tensordot(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out._data.dtype != t._data.dtype:
        raise RuntimeError(
            f"tensordot: Expected the output tensor to have dtype {_sname(t._data.dtype)}, "
            f"but got an output tensor with dtype {_sname(out._data.dtype)}"
        )
    if out._data.shape != t._data.shape:
        if out._data.size:
            _warn(
                "An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(t._data.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You "
                "can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                "elements with t.resize_(0). (Triggered internally at "
                "/__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)",
                UserWarning,
                stacklevel=3,
            )
        out._data = np.empty(t._data.shape, out._data.dtype)
    return out.copy_(t)


def _tensordot(a: Tensor, b: Tensor, dims_a: list, dims_b: list) -> Tensor:
    """torch's ``tensordot``: broadcast dims summed, then the contracted dims permuted
    together and reshaped for one ``mm`` (``dot`` or ``mul`` and ``sum`` when everything is
    contracted), and the result reshaped."""
    x, y = a._data, b._data
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if x.dtype != y.dtype:
        raise RuntimeError("both inputs should have same dtype")
    na, nb = [], []
    sum_a, sum_b = [], []
    csize = 1
    for da, db in zip(dims_a, dims_b):
        ia, ib = normalize_dim(da, x.ndim), normalize_dim(db, y.ndim)
        s1, s2 = x.shape[ia], y.shape[ib]
        if s2 == 1:
            sum_a.append(ia)  # broadcast dimensions are summed right away
        elif s1 == 1:
            sum_b.append(ib)
        elif s1 != s2:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {s1} in dim {da} and "
                f"second has size {s2} in dim {db}"
            )
        else:
            csize *= s1
        na.append(ia)
        nb.append(ib)
    for nl in (na, nb):
        seen: set = set()
        for d in nl:
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
    token = quiet_set(QUIET)
    try:
        t1, t2 = a, b
        for d in sum_a:
            t1 = _sum_keepdim(t1, d)
        for d in sum_b:
            t2 = _sum_keepdim(t2, d)
        keep_a = [i for i in range(x.ndim) if i not in na]
        keep_b = [i for i in range(y.ndim) if i not in nb]
        size1 = math.prod(x.shape[i] for i in keep_a)
        size2 = math.prod(y.shape[i] for i in keep_b)
        rsizes = tuple(x.shape[i] for i in keep_a) + tuple(y.shape[i] for i in keep_b)
        t1 = _permute(t1, tuple(keep_a + na))
        t2 = _permute(t2, tuple(nb + keep_b))
        if size1 != 1 or size2 != 1:
            _not_implemented_bool("addmm_impl_cpu_", x.dtype)
            res = _mm(_reshape(t1, (size1, csize)), _reshape(t2, (csize, size2)))
        elif _is_contiguous(t1._data) and _is_contiguous(t2._data):
            _not_implemented_bool("dot", x.dtype)
            res = _dot(_flatten(t1), _flatten(t2))
        else:  # torch multiplies and sums rather than copying to contiguous
            prod = _ew.mul(_squeeze_all(t1), _squeeze_all(t2))
            p = prod._data
            res = record(SumBackward0, p.sum(dtype=p.dtype), (prod,), (p.shape,))
        return _reshape(res, rsizes)
    finally:
        quiet_reset(token)


def _sum_keepdim(t: Tensor, d: int) -> Tensor:
    a = t._data
    return record(SumBackward1, a.sum(d, dtype=a.dtype, keepdims=True), (t,), ((d,), True, a.shape))


def _squeeze_all(t: Tensor) -> Tensor:
    a = t._data
    return record(SqueezeBackward0, a.squeeze(), (t,), (a.shape,))


# -- kron -----------------------------------------------------------------------------------


@register("kron", method=True)
def kron(input, other, *, out=None):
    """Kronecker product; dims are matched from the right (missing ones count as 1). torch
    views the operands with interleaved size-1 dims, multiplies them and views the result.

    Example:
        >>> import ember
        >>> ember.kron(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 10.0]))
        tensor([ 1., 10.,  2., 20.])
    """
    require_tensor(input, "kron", "input", 1)
    require_tensor(other, "kron", "other", 2)
    sa, sb = input._data.shape, other._data.shape
    nd = max(len(sa), len(sb))
    pa = (1,) * (nd - len(sa)) + sa
    pb = (1,) * (nd - len(sb)) + sb
    va = tuple(s for d in pa for s in (d, 1))
    vb = tuple(s for d in pb for s in (1, d))
    prod = _ew.mul(_unsafe_view(input, va), _unsafe_view(other, vb))
    if out is not None:
        return write_out("mul", _unsafe_view(prod, tuple(x * y for x, y in zip(pa, pb))), out)
    return _unsafe_view(prod, tuple(x * y for x, y in zip(pa, pb)))


# -- trace ----------------------------------------------------------------------------------


def _trace(a: np.ndarray, self_sym_sizes: tuple) -> np.ndarray:
    return np.trace(a, dtype=np.dtype(np.int64) if a.dtype.kind in "iu" else a.dtype)


def _eye_of_shape(g, shape: tuple):
    """The identity of ``shape`` in ``g``'s dtype, as an array or a constant Tensor."""
    if is_raw(g):
        return np.eye(*shape, dtype=g.dtype)
    return _wrap(np.eye(*shape, dtype=g._data.dtype))


TraceBackward0 = defop(
    "TraceBackward0",
    params=("self_sym_sizes",),
    forward=_trace,
    vjp={"self": lambda g, self_sym_sizes: g * _eye_of_shape(g, self_sym_sizes)},
    jvp=LINEAR,
)


@register("trace", method=True)
def trace(input):
    """Sum of the main diagonal of a 2-D tensor (integers sum to int64).

    Example:
        >>> import ember
        >>> ember.trace(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor(5.)
    """
    require_tensor(input, "trace", "input", 1)
    a = input._data
    if a.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {a.ndim}")
    _not_implemented_bool("trace", a.dtype)
    return record(TraceBackward0, _trace(a, a.shape), (input,), (a.shape,))


# -- cross ----------------------------------------------------------------------------------

_CROSS_WARNED = [False]


def _cross(x, y, dim: int):
    if is_raw(x) and is_raw(y):
        return np.cross(x, y, axis=dim)
    return cross(x, y, dim=dim)


LinalgCrossBackward0 = defop(
    "LinalgCrossBackward0",
    inputs=("self", "other"),
    params=("dim",),
    forward=lambda a, b, dim: np.cross(a, b, axis=dim),
    vjp={
        "self": lambda g, other, dim: _cross(_cj(other), g, dim),
        "other": lambda g, self, dim: _cross(g, _cj(self), dim),
    },
    jvp=BILINEAR,
)


@register("cross", method=True)
def cross(input, other, dim=None, *, out=None):
    """Cross product of 3-vectors along ``dim`` (default: the first dim of size 3).

    Example:
        >>> import ember
        >>> ember.cross(ember.tensor([1.0, 0.0, 0.0]), ember.tensor([0.0, 1.0, 0.0]), dim=0)
        tensor([0., 0., 1.])
    """
    require_tensor(input, "cross", "input", 1)
    require_tensor(other, "cross", "other", 2)
    if dim is None:
        if not _CROSS_WARNED[0]:
            _CROSS_WARNED[0] = True
            _warn(
                "Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
                "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of "
                "dim will change to agree with that of linalg.cross in a future release. "
                "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/Cross.cpp:63.)",
                UserWarning,
                stacklevel=2,
            )
        dim = next((i for i, s in enumerate(input._data.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _linalg_cross(input, other, dim, out)


def _linalg_cross(input: Tensor, other: Tensor, dim: int, out):
    """``linalg.cross`` (``torch.cross`` with its dim): torch's checks, then one node."""
    a, b = input._data, other._data
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = normalize_dim(dim, a.ndim)
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
            f"{b.shape[d]}"
        )
    broadcast_shapes(a.shape, b.shape)
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_sname(a.dtype)} but found {_sname(b.dtype)}")
    t = run(LinalgCrossBackward0, (input, other), (a, b), (d,))
    return write_out("linalg_cross", t, out)


# == torch.linalg =============================================================================
#
# ``ember.linalg``'s functions (the namespace module re-exports what is registered under
# ``namespace="linalg"``): norms, inverse, determinants, solves, factorizations, svd.
#
# Forward passes are batched NumPy LAPACK calls over the leading dims. Each op is one
# ``defop`` declaration with torch 2.13's ``grad_fn`` name (``LinalgInvExBackward0`` ...) and
# the analytical derivative torch uses (inv: ``-A^-T G A^-T``; det: ``G det A^-T``; solve: a
# solve with ``A^T``), written once with ``@``, ``.mT``, indexing and the ``_inv``/``_solve``
# helpers, which run on arrays in a plain backward and on Tensors (this section's own ops) in
# a recorded one, so every higher order follows. Forward mode is each op's explicit JVP.


slogdet_type = make_return_type("slogdet", ("sign", "logabsdet"))
linalg_slogdet_type = make_return_type("linalg_slogdet", ("sign", "logabsdet"))
svd_type = make_return_type("linalg_svd", ("U", "S", "Vh"))


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a numerical failure (singular or non-PD input).

    Example:
        >>> import ember
        >>> try:
        ...     ember.linalg.inv(ember.zeros(2, 2))
        ... except ember.linalg.LinAlgError as e:
        ...     print(e)
        linalg.inv: The diagonal element 1 is zero, the inversion could not be completed
        because the input matrix is singular.
    """


LinAlgError.__name__ = "_LinAlgError"
LinAlgError.__qualname__ = "_LinAlgError"
LinAlgError.__module__ = "ember.linalg"  # torch.linalg.LinAlgError, raised from here


# -- helpers working on arrays and Tensors ----------------------------------------------------


def _inv(x):
    return np.linalg.inv(x) if is_raw(x) else inv(x)


def _solve(a, b):
    return np.linalg.solve(a, b) if is_raw(a) and is_raw(b) else solve(a, b)


def _tril(x, k=0):
    return np.tril(x, k) if is_raw(x) else x.tril(k)


def _eye_like(S):
    """The identity matrix of S's last size, as an array or a constant Tensor like S."""
    if is_raw(S):
        return np.eye(S.shape[-1], dtype=S.dtype)
    return _wrap(np.eye(S.shape[-1], dtype=S._data.dtype))


def _checks(A, fname: str, square: bool = True) -> np.ndarray:
    """``A``'s array: a (square) batch of float or complex matrices, else torch's error."""
    a = _matrices(A, fname, square)
    if a.dtype.kind not in "fc":
        raise RuntimeError(
            f"{fname}: Expected a floating point or complex tensor as input. Got "
            f"{scalar_name(a.dtype)}"
        )
    return a


def _matrices(A, fname: str, square: bool = True, arg: str = "A") -> np.ndarray:
    """``A``'s array, checked to be a Tensor of at least 2 dims (square matrices)."""
    if not isinstance(A, Tensor):
        raise TypeError(
            f"linalg_{fname.split('.')[-1]}(): argument '{arg}' (position 1) must be Tensor, "
            f"not {type(A).__name__}"
        )
    a = A._data
    if a.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"{fname}: A must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )
    return a


def _batch_prefix(a: np.ndarray, b: int) -> str:
    return f"(Batch element {b}): " if a.ndim > 2 else ""


def _first_zero_pivot(m: np.ndarray) -> int:
    """1-based index of the first zero pivot of LU with partial pivoting (LAPACK getrf's
    ``info``), or 0 if there is none."""
    m = np.array(m, dtype=np.result_type(m.dtype, np.float64))
    n = m.shape[0]
    first = 0
    for j in range(n):
        p = j + int(np.argmax(np.abs(m[j:, j])))
        if m[p, j] == 0:
            first = first or j + 1
            continue
        if p != j:
            m[[j, p]] = m[[p, j]]
        m[j + 1 :, j] /= m[j, j]
        m[j + 1 :, j + 1 :] -= np.outer(m[j + 1 :, j], m[j, j + 1 :])
    return first


def _singular_error(a: np.ndarray, fname: str, msg) -> LinAlgError:
    """torch's error for the first singular matrix of the batch ``a``."""
    mats = a.reshape((-1,) + a.shape[-2:])
    for b, m in enumerate(mats):
        info = _first_zero_pivot(m)
        if info:
            return LinAlgError(f"{fname}: {_batch_prefix(a, b)}{msg(info)}")
    return LinAlgError(f"{fname}: {_batch_prefix(a, 0)}{msg(1)}")


def _np_inv(a: np.ndarray, fname: str = "linalg.inv") -> np.ndarray:
    if a.size == 0:
        return np.empty_like(a)
    try:
        with quiet:
            return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise _singular_error(
            a,
            fname,
            lambda i: (
                f"The diagonal element {i} is zero, the inversion could not be "
                "completed because the input matrix is singular."
            ),
        ) from None


# -- inv --------------------------------------------------------------------------------------

LinalgInvExBackward0 = defop(
    "LinalgInvExBackward0",
    inputs=("A",),
    outputs=("inverse",),
    forward=np.linalg.inv,
    vjp={"A": lambda g, inverse: -(inverse.mT @ g @ inverse.mT)},
    jvp=lambda t_A, inverse: -(inverse @ t_A @ inverse),
)


@register("inv", namespace="linalg")
def inv(A, *, out=None):
    """The inverse of each square matrix in ``A`` (batched over leading dims).

    Example:
        >>> import ember
        >>> ember.linalg.inv(ember.tensor([[2.0, 0.0], [0.0, 4.0]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    a = _checks(A, "linalg.inv")
    res = _np_inv(a).astype(a.dtype, copy=False)
    # LAPACK's layout, as torch's: each matrix column-major (a reshape copies, as torch's).
    res = np.ascontiguousarray(res.swapaxes(-1, -2)).swapaxes(-1, -2)
    return write_out("linalg_inv_ex", record(LinalgInvExBackward0, res, (A,)), out)


def inverse(input, *, out=None):
    """``torch.inverse``: ``linalg.inv``.

    Example:
        >>> import ember
        >>> ember.inverse(ember.tensor([[2.0]]))
        tensor([[0.5000]])
    """
    return inv(input, out=out)


# -- det, slogdet, logdet ----------------------------------------------------------------------


def _lapack_svd(a: np.ndarray, full_matrices: bool = True, compute_uv: bool = True):
    """``np.linalg.svd`` with torch's answers for non-finite input, which LAPACK may never
    return from: NaN anywhere raises torch's error; a matrix holding infinities (no NaN)
    gives NaN results, as torch's."""
    finite = np.isfinite(a).all(axis=(-2, -1))
    if finite.all():
        return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    if np.isnan(a).any():
        raise LinAlgError(
            "linalg.svd: The algorithm failed to converge because the input matrix contained "
            "non-finite values."
        )
    bad = ~finite
    res = np.linalg.svd(np.where(bad[..., None, None], 0, a), full_matrices, compute_uv)
    for part in res if compute_uv else (res,):
        part[bad] = np.nan  # (``bad`` indexes the batch dims: whole matrices, vectors)
    return res


def _adjugate_T(a: np.ndarray) -> np.ndarray:
    """The cofactor matrix ``adj(A)^T`` (valid for singular A too), via the SVD."""
    if a.shape[-1] == 0:
        return np.zeros_like(a)
    u, s, vh = _lapack_svd(a)
    ones = np.ones(s.shape[:-1] + (1,), s.dtype)
    left = np.concatenate([ones, np.cumprod(s[..., :-1], -1)], -1)
    right = np.concatenate([np.flip(np.cumprod(np.flip(s[..., 1:], -1), -1), -1), ones], -1)
    adj_s = left * right
    sign = np.linalg.det(u) * np.linalg.det(vh)
    adj = (vh.swapaxes(-1, -2) * adj_s[..., None, :]) @ u.swapaxes(-1, -2)
    return (sign[..., None, None] * adj).swapaxes(-1, -2)


def _cofactors(A, det):
    """``d det(A) / dA``: ``det(A) A^-T``, or (at a singular A, and for arrays) the
    cofactor matrix from the SVD. Recorded through ``inv`` where A is invertible."""
    if is_raw(A):
        return _adjugate_T(A)
    if np.all(det._data != 0):
        return det[..., None, None] * _inv(A).mT
    return _wrap(_adjugate_T(A._data))


LinalgDetBackward0 = defop(
    "LinalgDetBackward0",
    inputs=("A",),
    forward=np.linalg.det,
    vjp={"A": lambda g, A, result: g[..., None, None] * _cofactors(A, result)},
    jvp=lambda t_A, A, result: (_cofactors(A, result) * t_A).sum((-2, -1)),
)


@register("det", namespace="linalg")
def det(A, *, out=None):
    """The determinant of each square matrix in ``A``.

    Example:
        >>> import ember
        >>> ember.linalg.det(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor(-2.)
    """
    a = _checks(A, "linalg.det")
    with quiet:
        res = np.asarray(np.linalg.det(a)).astype(a.dtype, copy=False)
    return write_out("_linalg_det", record(LinalgDetBackward0, res, (A,)), out)


def _inv_T(A):
    """``A^-T``: NaN where an array is singular (the gradient of log|det| is undefined
    there), recorded through ``inv`` for Tensors."""
    if not is_raw(A):
        return _inv(A).mT
    with np.errstate(all="ignore"):
        try:
            return np.linalg.inv(A).mT
        except np.linalg.LinAlgError:
            return np.full(A.shape, np.nan, A.dtype)


LinalgSlogdetBackward0 = defop(
    "LinalgSlogdetBackward0",
    inputs=("A",),
    outputs=("sign", "logabsdet"),
    forward=np.linalg.slogdet,
    # The sign of a real determinant is piecewise constant: only log|det| has a gradient.
    vjp={"A": lambda grads, A: None if grads[1] is None else grads[1][..., None, None] * _inv_T(A)},
    jvp=lambda t_A, A, sign: [sign * 0, (_inv_T(A) * t_A).sum((-2, -1))],
)


def _slogdet(A, fname: str, rtype):
    a = _checks(A, fname)
    with quiet:
        sign, logabs = np.linalg.slogdet(a)
    outs = [np.asarray(sign).astype(a.dtype), np.asarray(logabs).astype(a.dtype)]
    return rtype(tuple(record_multi(LinalgSlogdetBackward0, outs, (A,))))


@register("slogdet", namespace="linalg")
def slogdet(A, *, out=None):
    """``(sign, log|det|)`` of each square matrix (``torch.return_types.linalg_slogdet``).

    Example:
        >>> import ember
        >>> ember.linalg.slogdet(ember.tensor([[-2.0]])).logabsdet
        tensor(0.6931)
    """
    return _slogdet(A, "linalg.slogdet", linalg_slogdet_type)


def _top_slogdet(input, *, out=None):
    """``torch.slogdet`` (``torch.return_types.slogdet``).

    Example:
        >>> import ember
        >>> ember.slogdet(ember.tensor([[-2.0]])).sign
        tensor(-1.)
    """
    return _slogdet(input, "linalg.slogdet", slogdet_type)


def logdet(input):
    """``log det(A)`` (NaN for a negative determinant), as torch: ``where(sign < 0, nan,
    logabsdet)``.

    Example:
        >>> import ember
        >>> ember.logdet(ember.tensor([[2.0, 0.0], [0.0, 0.5]]))
        tensor(0.)
    """
    sign, logabs = _slogdet(input, "logdet", linalg_slogdet_type)
    return where(sign < 0, math.nan, logabs)


# -- solve --------------------------------------------------------------------------------------


def _solve_vjp(g, A, result, needs_input_grad, left, vector):
    """Gradients of ``X = A^-1 B`` (``left``) or ``X = B A^-1``: ``gB`` solves the adjoint
    system, ``gA = -gB X^H`` (``-X^H gB``)."""
    need_a, need_b = needs_input_grad
    if not left:
        gb = _mH(_solve(A, _mH(g)))
        return (-(_mH(result) @ gb) if need_a else None), (gb if need_b else None)
    if vector:
        g, result = g[..., None], result[..., None]
    gb = _solve(_mH(A), g)
    ga = -(gb @ _mH(result)) if need_a else None
    if vector:
        gb = gb[..., 0]
    return ga, (gb if need_b else None)


def _solve_jvp(t_A, t_B, A, result, left, vector):
    """``dX = A^-1 (dB - dA X)`` (``left``) or ``(dB - X dA) A^-1``."""
    x = result
    if not left:
        rhs = t_B
        if t_A is not None:
            rhs = -(x @ t_A) if rhs is None else rhs - x @ t_A
        return None if rhs is None else solve(A.mT, rhs.mT).mT
    if vector:
        x = x[..., None]
        t_B = None if t_B is None else t_B[..., None]
    rhs = t_B
    if t_A is not None:
        rhs = -(t_A @ x) if rhs is None else rhs - t_A @ x
    if rhs is None:
        return None
    res = solve(A, rhs)
    return res[..., 0] if vector else res


def _solve_forward(a, b, left, vector):
    bm = b[..., None] if vector else b
    if not left:  # X A = B  <=>  A^T X^T = B^T
        a, bm = a.swapaxes(-1, -2), bm.swapaxes(-1, -2)
    dt = np.result_type(a.dtype, b.dtype)
    x = np.linalg.solve(a.astype(dt, copy=False), bm.astype(dt, copy=False))
    if vector:
        x = x[..., 0]
    return x if left else x.swapaxes(-1, -2)


LinalgSolveExBackward0 = defop(
    "LinalgSolveExBackward0",
    inputs=("A", "B"),
    params=("left", "vector"),
    forward=_solve_forward,
    vjp=_solve_vjp,
    jvp=_solve_jvp,
)


@register("solve", namespace="linalg")
def solve(A, B, *, left=True, out=None):
    """The solution ``X`` of ``A X = B`` (``B`` a batch of vectors or matrices).

    Example:
        >>> import ember
        >>> ember.linalg.solve(ember.tensor([[2.0, 0.0], [0.0, 4.0]]), ember.tensor([2.0, 2.0]))
        tensor([1.0000, 0.5000])
    """
    a = _checks(A, "linalg.solve")
    if not isinstance(B, Tensor):
        raise TypeError(
            f"linalg_solve(): argument 'B' (position 2) must be Tensor, not {type(B).__name__}"
        )
    b = B._data
    vector = left and (b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]))
    am = a if left else a.swapaxes(-1, -2)
    bm = b[..., None] if vector else b
    if not left:
        bm = bm.swapaxes(-1, -2)
    if bm.shape[-2] != am.shape[-1]:
        raise RuntimeError(
            "linalg.solve: Incompatible shapes of A and B for the equation AX = B "
            f"({am.shape[-2]}x{am.shape[-1]} and {bm.shape[-2]}x{bm.shape[-1]})"
        )
    try:
        with quiet:
            x = _solve_forward(a, b, left, vector)
    except np.linalg.LinAlgError:
        raise _singular_error(
            am,
            "torch.linalg.solve",
            lambda i: "The solver failed because the input matrix is singular.",
        ) from None
    t = record(LinalgSolveExBackward0, x, (A, B), (bool(left), vector))
    return write_out("_linalg_solve_ex", t, out)


# -- cholesky -------------------------------------------------------------------------------------


def _cholesky_vjp(g, L, upper):
    if upper:
        L, g = L.mT, g.mT
    m = _tril(L.mT @ g)
    m = 0.5 * (m + _tril(m, -1).mT)
    linv = _inv(L)
    return linv.mT @ m @ linv


def _phi(x):
    """Lower triangle with the diagonal halved."""
    low = _tril(x, -1)
    return low + 0.5 * (_tril(x) - low)


def _cholesky_jvp(t_self, L, upper):
    if upper:
        L = L.mT
    linv = inv(L)
    dl = L @ _phi(linv @ t_self @ linv.mT)
    return dl.mT if upper else dl


def _cholesky_forward(a, upper):
    L = np.linalg.cholesky(a) if a.size else a.copy()
    if upper:
        L = L.swapaxes(-1, -2).copy()
    return L.astype(a.dtype, copy=False)


LinalgCholeskyExBackward0 = defop(
    "LinalgCholeskyExBackward0",
    outputs=("L",),
    params=("upper",),
    forward=_cholesky_forward,
    vjp={"self": _cholesky_vjp},
    jvp=_cholesky_jvp,
)


@register("cholesky", namespace="linalg")
def cholesky(A, *, upper=False, out=None):
    """The Cholesky factor ``L`` of each symmetric positive-definite matrix (``A = L L^T``).

    Example:
        >>> import ember
        >>> ember.linalg.cholesky(ember.tensor([[4.0, 2.0], [2.0, 5.0]]))
        tensor([[2., 0.],
                [1., 2.]])
    """
    a = _checks(A, "linalg.cholesky")
    L = _cholesky_factor(a, upper, "linalg.cholesky")
    t = record(LinalgCholeskyExBackward0, L, (A,), (bool(upper),))
    return write_out("linalg_cholesky_ex", t, out)


def _cholesky_factor(a: np.ndarray, upper: bool, fname: str) -> np.ndarray:
    """The Cholesky factors of the batch ``a``, or torch's error naming the first leading
    minor that is not positive-definite."""
    try:
        with quiet:
            return _cholesky_forward(a, upper)
    except np.linalg.LinAlgError:
        mats = a.reshape((-1,) + a.shape[-2:])
        for bi, m in enumerate(mats):
            for k in range(1, a.shape[-1] + 1):
                try:
                    np.linalg.cholesky(m[:k, :k])
                except np.linalg.LinAlgError:
                    raise LinAlgError(
                        f"{fname}: {_batch_prefix(a, bi)}The factorization could not be "
                        "completed because the input is not positive-definite (the leading "
                        f"minor of order {k} is not positive-definite)."
                    ) from None
        raise


# -- svd, svdvals (and the spectral and nuclear matrix norms) -----------------------------------


def _svd_gap(S):
    """``E[i, j] = S_j^2 - S_i^2`` with ones on the diagonal (divided into, never by 0 there)."""
    S2 = S * S
    return S2[..., None, :] - S2[..., :, None] + _eye_like(S)


def _as_output(t, k: int):
    """Saved output ``k`` of the SVD node, as output ``k`` of it. (Work-around: recording
    numbers a multi-output node's outputs after saving them, so saved outputs come back as
    output 0; renumbered here, a second derivative flows into the right output.)"""
    if is_raw(t) or t._output_nr == k:
        return t
    r = _wrap(t._data)
    r.grad_fn, r._rg, r._vc, r._output_nr = t.grad_fn, t._rg, t._vc, k
    return r


def _svd_vjp(grads, U, S, Vh, full_matrices):
    """torch's ``svd_backward``, with ``@``, ``.mT``, indexing and ``*`` only: a recorded
    backward differentiates through U, S and Vh (outputs of this same node), so second
    derivatives of the SVD, ``svdvals`` and the nuclear norm are exact."""
    gU, gS, gVh = grads
    U, S, Vh = (_as_output(x, k) for k, x in enumerate((U, S, Vh)))
    if full_matrices:
        # Only the first k = min(m, n) columns of U (rows of Vh) depend on A.
        k = S.shape[-1]
        U, Vh = U[..., :k], Vh[..., :k, :]
        gU = None if gU is None else gU[..., :k]
        gVh = None if gVh is None else gVh[..., :k, :]
    if gU is None and gVh is None:
        if gS is None:
            return None
        return (U * gS[..., None, :]) @ Vh
    m, n = U.shape[-2], Vh.shape[-1]
    E = _svd_gap(S)
    if gU is not None:
        UtgU = U.mT @ gU
        UhgU = UtgU - UtgU.mT
    if gVh is not None:
        VhgV = Vh @ gVh.mT
        VhgV = VhgV - VhgV.mT
    if gU is not None and gVh is not None:
        gA = (UhgU * S[..., None, :] + S[..., :, None] * VhgV) / E
    elif gU is not None:
        gA = UhgU * (S[..., None, :] / E)
    else:
        gA = VhgV * (S[..., :, None] / E)
    if gS is not None:
        gA = gA + gS[..., :, None] * _eye_like(S)
    if m > n and gU is not None:
        gA = U @ gA
        gUSinv = gU / S[..., None, :]
        gA = (gA + gUSinv - U @ (U.mT @ gUSinv)) @ Vh
    elif m < n and gVh is not None:
        gA = gA @ Vh
        SinvgVh = gVh / S[..., :, None]
        gA = U @ (gA + SinvgVh - (SinvgVh @ Vh.mT) @ Vh)
    else:
        gA = U @ (gA @ Vh)
    return gA


def _svd_jvp(t_A, U, S, Vh, full_matrices):
    """torch's ``linalg_svd_jvp`` (with ``full_matrices``, the tangents of the columns of U
    and rows of Vh that A does not determine are zero)."""
    k = S.shape[-1]
    Uk, Vhk = (U[..., :k], Vh[..., :k, :]) if full_matrices else (U, Vh)
    m, n = Uk.shape[-2], Vhk.shape[-1]
    V = Vhk.mT
    dP = Uk.mT @ (t_A @ V)
    dS = dP.diagonal(0, -2, -1)
    dP = dP - dS[..., :, None] * _eye_like(S)
    E = _svd_gap(S)
    X = dP * S[..., None, :]
    dU = Uk @ ((X + X.mT) / E)
    if m > n:
        dAVSinv = t_A @ (V / S[..., None, :])
        dU = dU + dAVSinv - Uk @ (Uk.mT @ dAVSinv)
    Y = S[..., :, None] * dP
    dVh = -(((Y + Y.mT) / E) @ Vhk)
    if m < n:
        UHdASinv = (Uk.mT / S[..., :, None]) @ t_A
        dVh = dVh + UHdASinv - (UHdASinv @ V) @ Vhk
    if full_matrices and U.shape[-1] > k:
        dU = cat([dU, _wrap(np.zeros(dU.shape[:-1] + (U.shape[-1] - k,), U._data.dtype))], -1)
    if full_matrices and Vh.shape[-2] > k:
        pad = np.zeros(dVh.shape[:-2] + (Vh.shape[-2] - k, n), Vh._data.dtype)
        dVh = cat([dVh, _wrap(pad)], -2)
    return [dU, dS, dVh]


def _svd_forward(a, full_matrices):
    u, s, vh = _lapack_svd(a, full_matrices=full_matrices)
    real = s.dtype if a.dtype.kind == "f" else np.dtype(a.real.dtype)
    return u.astype(a.dtype, copy=False), s.astype(real, copy=False), vh.astype(a.dtype, copy=False)


LinalgSvdBackward0 = defop(
    "LinalgSvdBackward0",
    inputs=("A",),
    outputs=("U", "S", "Vh"),
    params=("full_matrices",),
    forward=_svd_forward,
    vjp={"A": _svd_vjp},
    jvp=_svd_jvp,
)


def _svd(A, full_matrices: bool, fname: str):
    """(U, S, Vh) Tensors of one recorded SVD node."""
    a = _checks(A, fname, square=False)
    with quiet:
        outs = list(_svd_forward(a, bool(full_matrices)))
    return record_multi(LinalgSvdBackward0, outs, (A,), (bool(full_matrices),))


@register("svd", namespace="linalg")
def svd(A, full_matrices=True, *, driver=None, out=None):
    """``A = U diag(S) Vh`` with singular values S descending (``torch.linalg.svd``).

    Example:
        >>> import ember
        >>> U, S, Vh = ember.linalg.svd(ember.tensor([[3.0, 0.0], [0.0, -4.0]]))
        >>> S
        tensor([4., 3.])
    """
    return svd_type(tuple(_svd(A, full_matrices, "linalg.svd")))


@register("svdvals", namespace="linalg")
def svdvals(A, *, driver=None, out=None):
    """The singular values of each matrix in ``A``, descending.

    Example:
        >>> import ember
        >>> ember.linalg.svdvals(ember.tensor([[3.0, 0.0], [0.0, -4.0]]))
        tensor([4., 3.])
    """
    return _svd(A, False, "linalg.svd")[1]


# -- cross ---------------------------------------------------------------------------------------


@register("cross", namespace="linalg")
def linalg_cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along ``dim`` (default: the last), with broadcasting.

    Example:
        >>> import ember
        >>> ember.linalg.cross(ember.tensor([1.0, 0.0, 0.0]), ember.tensor([0.0, 1.0, 0.0]))
        tensor([0., 0., 1.])
    """
    for x, arg, pos in ((input, "input", 1), (other, "other", 2)):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"linalg_cross(): argument '{arg}' (position {pos}) must be Tensor, not "
                f"{type(x).__name__}"
            )
    return _linalg_cross(input, other, dim, out)


# -- norms -------------------------------------------------------------------------------------


@register("vector_norm", namespace="linalg")
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """The vector ``ord``-norm over ``dim`` (all elements by default).

    Example:
        >>> import ember
        >>> ember.linalg.vector_norm(ember.tensor([3.0, -4.0]))
        tensor(5.)
    """
    if isinstance(ord, str) or not isinstance(ord, (int, float)):
        raise TypeError(
            "linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
            f"{type(ord).__name__}"
        )
    return _vector_norm(x, ord, dim, keepdim, dtype=dtype)


@register("matrix_norm", namespace="linalg")
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """The matrix norm: ``'fro'``, ``'nuc'``, ``inf``, ``-inf``, ``1``, ``-1``, ``2``, ``-2``.

    Example:
        >>> import ember
        >>> ember.linalg.matrix_norm(ember.tensor([[1.0, -2.0], [3.0, 4.0]]), 1)
        tensor(6.)
    """
    if not isinstance(A, Tensor):
        raise TypeError(
            f"linalg_matrix_norm(): argument 'input' (position 1) must be Tensor, not "
            f"{type(A).__name__}"
        )
    if A.ndim < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    dim = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if len(dim) != 2:
        got = " ".join(str(d) for d in dim)  # torch lists the dims it was given
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {got}")
    d0, d1 = (normalize_dim(d, A.ndim) for d in dim)
    if ord == "fro":
        return _vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
    if isinstance(ord, str) and ord != "nuc":
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if not isinstance(ord, str) and ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if dtype is not None:
        A = A.to(dtype)
    with quiet:  # torch's sums overflow silently
        return _spectral_or_sum_norm(A, ord, d0, d1, keepdim)


def _spectral_or_sum_norm(A, ord, d0: int, d1: int, keepdim: bool):  # noqa: A002
    """The matrix norms other than Frobenius: of the singular values, or of the row or
    column sums of absolute values."""
    if ord in ("nuc", 2, -2):
        moved = A.movedim((d0, d1), (-2, -1))
        s = svdvals(moved)
        red = _sum if ord == "nuc" else (amax if ord == 2 else amin)
        if not keepdim:
            return red(s, -1)
        return red(s, -1, keepdim=True).unsqueeze(-1).movedim((-2, -1), (d0, d1))
    # 1/-1: max/min column sum (sum over rows, d0); inf/-inf: row sums (over d1).
    red, keep = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = _sum(A.abs(), red, keepdim=keepdim)
    if not keepdim and red < keep:
        keep -= 1
    return (amax if ord > 0 else amin)(sums, keep, keepdim=keepdim)


@register("norm", namespace="linalg")
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """``torch.linalg.norm``: a vector norm over one dim, a matrix norm over two.

    Example:
        >>> import ember
        >>> ember.linalg.norm(ember.tensor([[3.0, 0.0], [0.0, 4.0]]))
        tensor(5.)
    """
    if not isinstance(A, Tensor):
        raise TypeError(
            f"linalg_norm(): argument 'input' (position 1) must be Tensor, not {type(A).__name__}"
        )
    if dim is not None:
        dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
        if len(dims) not in (1, 2):
            raise RuntimeError(
                f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}"
            )
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        if isinstance(ord, str):
            got = " ".join(str(d) for d in dims)
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {got}")
        return _vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return _vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim not in (1, 2):
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
            f"Got {A.ndim}D."
        )
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    return _vector_norm(A, ord, None, keepdim, dtype=dtype)


# == decompositions and the rest of torch.linalg =================================================
# Forward passes are NumPy (batched) or SciPy (per matrix) LAPACK calls; derivatives are
# torch's, written with ``@``, ``.mT``, indexing and this module's ops, so that a recorded
# backward (``create_graph=True``) differentiates through them.

qr_type = make_return_type("linalg_qr", ("Q", "R"))
legacy_qr_type = make_return_type("qr", ("Q", "R"))
eigh_type = make_return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
lstsq_type = make_return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
lu_factor_type = make_return_type("linalg_lu_factor", ("LU", "pivots"))
lu_factor_ex_type = make_return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
lu_type = make_return_type("linalg_lu", ("P", "L", "U"))
legacy_svd_type = make_return_type("svd", ("U", "S", "V"))
inv_ex_type = make_return_type("linalg_inv_ex", ("inverse", "info"))
cholesky_ex_type = make_return_type("linalg_cholesky_ex", ("L", "info"))
solve_ex_type = make_return_type("linalg_solve_ex", ("result", "info"))


def _scipy_linalg():
    # SciPy is a runtime dependency imported on first use: ``import scipy.linalg`` is slow.
    import scipy.linalg

    return scipy.linalg


def _triu(x, k=0):
    return np.triu(x, k) if is_raw(x) else x.triu(k)


def _mH(x):
    """The conjugate transpose (the transpose of a real matrix)."""
    return _cj(x).mT


def _cat(xs, dim):
    if all(is_raw(x) for x in xs):
        return np.concatenate(xs, dim)
    return cat([x if not is_raw(x) else _wrap(x) for x in xs], dim)


def _tensors(*xs):
    """The operands as arrays when all are arrays, else all as Tensors."""
    if all(is_raw(x) for x in xs):
        return xs
    return tuple(_wrap(x) if is_raw(x) else x for x in xs)


# -- solve_triangular ---------------------------------------------------------------------------


def _tri_part(a, upper: bool, unit: bool):
    """The triangle of ``a`` the solve reads (the diagonal ones if ``unit``)."""
    t = np.triu(a) if upper else np.tril(a)
    if unit:
        t = t - t.diagonal(0, -2, -1)[..., None] * np.eye(a.shape[-1]) + np.eye(a.shape[-1])
    return t


def _np_solve_triangular(a, b, upper: bool, left: bool, unit: bool):
    """``A^-1 B`` (``left``) or ``B A^-1`` for triangular A, broadcasting batch dims; a
    singular A gives inf/nan like torch's ``trsm``."""
    if not left:
        return _np_solve_triangular(
            a.swapaxes(-1, -2), b.swapaxes(-1, -2), not upper, True, unit
        ).swapaxes(-1, -2)
    dt = np.result_type(a.dtype, b.dtype)
    t = _tri_part(a, upper, unit).astype(dt, copy=False)
    batch = np.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    t = np.broadcast_to(t, batch + t.shape[-2:])
    b = np.broadcast_to(b.astype(dt, copy=False), batch + b.shape[-2:])
    if t.size == 0 or b.size == 0:
        return np.zeros(batch + b.shape[-2:], dt)
    with quiet:
        try:
            return np.linalg.solve(t, b)
        except np.linalg.LinAlgError:
            pass
        # A zero on the diagonal: back substitution (BLAS trsm) as torch, giving inf/nan.
        trsm = _scipy_linalg().blas.get_blas_funcs("trsm", (t,))
        out = np.empty(batch + b.shape[-2:], dt)
        for i in np.ndindex(*batch):
            out[i] = trsm(1.0, t[i], b[i], lower=not upper, diag=int(unit))
        return out


def _solve_tri(A, B, upper: bool, left: bool = True, unit: bool = False):
    A, B = _tensors(A, B)
    if is_raw(A):
        return _np_solve_triangular(A, B, upper, left, unit)
    return solve_triangular(A, B, upper=upper, left=left, unitriangular=unit)


def _tri_mask(x, upper: bool, unit: bool):
    if upper:
        return _triu(x, 1 if unit else 0)
    return _tril(x, -1 if unit else 0)


def _solve_triangular_vjp(g, A, result, needs_input_grad, upper, left, unitriangular):
    need_a, need_b = needs_input_grad
    gb = _solve_tri(_mH(A), g, not upper, left, unitriangular)
    ga = None
    if need_a:
        ga = -(gb @ _mH(result)) if left else -(_mH(result) @ gb)
        ga = _tri_mask(ga, upper, unitriangular)
    return ga, (gb if need_b else None)


def _solve_triangular_jvp(t_A, t_B, A, result, upper, left, unitriangular):
    rhs = t_B
    if t_A is not None:
        dA = _tri_mask(t_A, upper, unitriangular)
        prod = dA @ result if left else result @ dA
        rhs = -prod if rhs is None else rhs - prod
    if rhs is None:
        return None
    return _solve_tri(A, rhs, upper, left, unitriangular)


def _solve_triangular_forward(a, b, upper, left, unitriangular):
    return _np_solve_triangular(a, b, upper, left, unitriangular).astype(a.dtype, copy=False)


LinalgSolveTriangularBackward0 = defop(
    "LinalgSolveTriangularBackward0",
    inputs=("A", "B"),
    params=("upper", "left", "unitriangular"),
    forward=_solve_triangular_forward,
    vjp=_solve_triangular_vjp,
    jvp=_solve_triangular_jvp,
)


@register("solve_triangular", namespace="linalg")
def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """The solution ``X`` of ``A X = B`` (``X A = B`` if not ``left``) for triangular A.

    Example:
        >>> import ember
        >>> A = ember.tensor([[2.0, 1.0], [0.0, 4.0]])
        >>> ember.linalg.solve_triangular(A, ember.tensor([[3.0], [4.0]]), upper=True)
        tensor([[1.],
                [1.]])
    """
    a = _checks(A, "linalg.solve_triangular")
    if not isinstance(B, Tensor):
        raise TypeError(
            "linalg_solve_triangular(): argument 'B' (position 2) must be Tensor, not "
            f"{type(B).__name__}"
        )
    b = B._data
    if b.ndim < 2:
        raise RuntimeError(
            "linalg.solve_triangular: The input tensor B must have at least 2 dimensions."
        )
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise RuntimeError(
            "linalg.solve_triangular: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({a.shape[-2]}x{a.shape[-1]} and "
            f"{b.shape[-2]}x{b.shape[-1]})"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            "linalg.solve_triangular: Expected A and B to have the same dtype, but found A of "
            f"type {scalar_name(a.dtype)} and B of type {scalar_name(b.dtype)} instead"
        )
    params = (bool(upper), bool(left), bool(unitriangular))
    x = _solve_triangular_forward(a, b, *params)
    t = record(LinalgSolveTriangularBackward0, x, (A, B), params)
    return write_out("linalg_solve_triangular", t, out)


# -- qr -------------------------------------------------------------------------------------------

_QR_R_MSG = (
    "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
    "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
)
_QR_COMPLETE_MSG = (
    "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
)


def _qr_tall_vjp(gQ, gR, Q, R):
    """``A = Q R`` with Q m x n (m >= n): ``gA = (gQ + Q copyltu(M)) R^-H`` with
    ``M = R gR^H - gQ^H Q`` (copyltu: the symmetric matrix of M's lower triangle)."""
    M = None
    if gR is not None:
        M = R @ _mH(gR)
    if gQ is not None:
        M = -(_mH(gQ) @ Q) if M is None else M - _mH(gQ) @ Q
    low = _tril(M, -1)
    gA = Q @ (low + _mH(low) + (_tril(M) - low))
    if gQ is not None:
        gA = gA + gQ
    return _solve_tri(_mH(R), gA, False, left=False)


def _qr_vjp(grads, Q, R, mode):
    gQ, gR = grads
    if mode == "r":
        raise RuntimeError(_QR_R_MSG)
    Q, R = _as_output(Q, 0), _as_output(R, 1)
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError(_QR_COMPLETE_MSG)
    if m >= n:
        return _qr_tall_vjp(gQ, gR, Q, R)
    # A = Q [X | Y] with X square: Y = Q^H A2 feeds back into Q and A2.
    X, Y = R[..., :m], R[..., m:]
    gX = None if gR is None else gR[..., :m]
    gY = None if gR is None else gR[..., m:]
    if gY is not None:
        extra = (Q @ Y) @ _mH(gY)
        gQ = extra if gQ is None else gQ + extra
    gA1 = _qr_tall_vjp(gQ, gX, Q, X)
    gA2 = Q @ gY if gY is not None else gA1[..., :1] * 0 * Y[..., :1, :]
    return _cat([gA1, gA2], -1)


def _qr_tall_jvp(dA, Q, R):
    C = _mH(Q) @ _solve_tri(R, dA, True, left=False)
    low = _tril(C, -1)
    upper = C - low + _mH(low)  # dR R^-1
    dR = upper @ R
    dQ = _solve_tri(R, dA, True, left=False) - Q @ upper
    return dQ, dR


def _qr_jvp(t_A, Q, R, mode):
    if mode == "r":
        raise RuntimeError(_QR_R_MSG)
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError(_QR_COMPLETE_MSG)
    if m >= n:
        return list(_qr_tall_jvp(t_A, Q, R))
    X, Y = R[..., :m], R[..., m:]
    dQ, dX = _qr_tall_jvp(t_A[..., :m], Q, X)
    dY = _mH(dQ) @ (Q @ Y) + _mH(Q) @ t_A[..., m:]
    return [dQ, cat([dX, dY], -1)]


def _qr_forward(a, mode):
    if a.size == 0:
        m, n = a.shape[-2:]
        k = m if mode == "complete" else min(m, n)
        q = np.zeros(a.shape[:-2] + (m, k), a.dtype)
        q[..., range(min(m, k)), range(min(m, k))] = 1
        r = np.zeros(a.shape[:-2] + (k, n), a.dtype)
    elif mode == "r":
        r = np.linalg.qr(a, mode="r")
    else:
        q, r = np.linalg.qr(a, mode=mode)
    if mode == "r":
        q = np.zeros((0,), a.dtype)
    return q.astype(a.dtype, copy=False), r.astype(a.dtype, copy=False)


LinalgQrBackward0 = defop(
    "LinalgQrBackward0",
    inputs=("A",),
    outputs=("Q", "R"),
    params=("mode",),
    forward=_qr_forward,
    vjp={"A": _qr_vjp},
    jvp=_qr_jvp,
)


def _qr(A, mode: str, fname: str = "linalg.qr"):
    a = _checks(A, fname, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
            "'r', or 'complete'"
        )
    with quiet:
        outs = list(_qr_forward(a, mode))
    return record_multi(LinalgQrBackward0, outs, (A,), (mode,))


@register("qr", namespace="linalg")
def qr(A, mode="reduced", *, out=None):
    """``A = Q R`` with orthonormal columns in Q and R upper triangular (``mode``: ``'reduced'``,
    ``'complete'``, or ``'r'``, which returns an empty Q).

    Example:
        >>> import ember
        >>> A = ember.tensor([[3.0, 1.0], [4.0, 2.0]])
        >>> Q, R = ember.linalg.qr(A)
        >>> ember.allclose(Q @ R, A)
        True
    """
    return qr_type(tuple(_qr(A, mode)))


@register("qr")
def _legacy_qr(input, some=True, *, out=None):
    """``torch.qr``: ``linalg.qr`` with ``some`` for the reduced mode.

    Example:
        >>> import ember
        >>> ember.qr(ember.tensor([[2.0, 0.0], [0.0, 3.0]])).R.abs()
        tensor([[2., 0.],
                [0., 3.]])
    """
    _warn(
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.",
        UserWarning,
        stacklevel=2,
    )
    return legacy_qr_type(tuple(_qr(input, "reduced" if some else "complete")))


# -- eigh, eigvalsh -----------------------------------------------------------------------------


def _eig_gap(L):
    """``E[i, j] = L_j - L_i`` with ones on the diagonal."""
    return L[..., None, :] - L[..., :, None] + _eye_like(L)


def _eigh_vjp(grads, eigenvalues, eigenvectors):
    """torch's ``linalg_eig_backward`` (hermitian): ``gA = V (diag(gL) + skew(V^H gV) / E) V^H``
    (inf/nan at repeated eigenvalues when gV depends on them, as in torch)."""
    gL, gV = grads
    L, V = _as_output(eigenvalues, 0), _as_output(eigenvectors, 1)
    if gV is None:
        if gL is None:
            return None
        return (V * gL[..., None, :]) @ _mH(V)
    VhgV = _mH(V) @ gV
    gA = (0.5 * (VhgV - _mH(VhgV))) / _eig_gap(L)
    if gL is not None:
        gA = gA + gL[..., :, None] * _eye_like(L)
    return V @ (gA @ _mH(V))


def _eigh_jvp(t_A, eigenvalues, eigenvectors):
    L, V = eigenvalues, eigenvectors
    dP = _mH(V) @ (t_A @ V)
    dL = dP.diagonal(0, -2, -1)
    dV = V @ ((dP - dL[..., :, None] * _eye_like(L)) / _eig_gap(L))
    return [dL, dV]


def _eigh_forward(a, UPLO):
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return w.astype(np.dtype(a.real.dtype), copy=False), v.astype(a.dtype, copy=False)


LinalgEighBackward0 = defop(
    "LinalgEighBackward0",
    inputs=("A",),
    outputs=("eigenvalues", "eigenvectors"),
    params=("_UPLO",),  # (read by the forward alone: torch's node saves no UPLO)
    forward=_eigh_forward,
    vjp={"A": _eigh_vjp},
    jvp=_eigh_jvp,
)


def _eigh(A, UPLO, fname: str):
    a = _checks(A, fname)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    with quiet:
        outs = list(_eigh_forward(a, UPLO))
    return record_multi(LinalgEighBackward0, outs, (A,), (UPLO,))


@register("eigh", namespace="linalg")
def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) and eigenvectors of each symmetric (Hermitian) matrix, read
    from its ``UPLO`` triangle.

    Example:
        >>> import ember
        >>> ember.linalg.eigh(ember.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
        tensor([1., 2.])
    """
    return eigh_type(tuple(_eigh(A, UPLO, "linalg.eigh")))


@register("eigvalsh", namespace="linalg")
def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues (ascending) of each symmetric (Hermitian) matrix.

    Example:
        >>> import ember
        >>> ember.linalg.eigvalsh(ember.tensor([[2.0, 1.0], [1.0, 2.0]]))
        tensor([1., 3.])
    """
    return write_out("linalg_eigvalsh", _eigh(A, UPLO, "linalg.eigvalsh")[0], out)


# -- eig, eigvals ---------------------------------------------------------------------------------

eig_type = make_return_type("linalg_eig", ("eigenvalues", "eigenvectors"))

_EIG_PHASE_MSG = (
    "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
    "multiplication by e^{i phi}. The specified loss function depends on this quantity, so it "
    "is ill-defined."
)


def _complex_dtype(dt: np.dtype) -> np.dtype:
    """The complex dtype of a floating (or complex) dtype: float32 -> complex64."""
    return np.dtype(dt) if np.dtype(dt).kind == "c" else np.result_type(dt, np.complex64)


def _to_complex(x, like):
    """``x`` (array or Tensor) cast to the complex dtype of ``like``."""
    if is_raw(x):
        return x.astype(like.dtype, copy=False)
    dt = like._data.dtype
    return x if x._data.dtype == dt else x.to(dt)


def _eig_vjp(grads, eigenvalues, eigenvectors, real_input):
    """torch's ``linalg_eig_backward`` (not hermitian), with ``E*[i, j] = conj(L_j - L_i)``:
    ``gA = V^-H (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV))) / E*) V^H``; the real part for a
    real input. Raises when the loss depends on the phases of the eigenvectors."""
    gL, gV = grads
    L, V = _as_output(eigenvalues, 0), _as_output(eigenvectors, 1)
    if gV is None:
        if gL is None:
            return None
        gA = _solve(_mH(V), gL[..., :, None] * _mH(V))
    else:
        VhgV = _mH(V) @ gV
        diag = VhgV.diagonal(0, -2, -1)
        im = np.imag(diag if is_raw(diag) else diag._data)
        if not np.allclose(im, 0, rtol=1e-2, atol=1e-2):
            raise RuntimeError(_EIG_PHASE_MSG)
        VhgV = VhgV - _mH(V) @ (V * _to_complex(_re(diag), V)[..., None, :])
        gA = VhgV / _eig_gap(_cj(L))
        if gL is not None:
            gA = gA + (gL - gA.diagonal(0, -2, -1))[..., :, None] * _eye_like(L)
        gA = _solve(_mH(V), gA @ _mH(V))
    return _re(gA) if real_input else gA


def _eig_jvp(t_A, eigenvalues, eigenvectors):
    """torch's ``linalg_eig_jvp``: ``dP = V^-1 dA V``, ``dL = diag(dP)``,
    ``dV = dX - V Re(diag(V^H dX))`` with ``dX = V (offdiag(dP) / E)``."""
    L, V = eigenvalues, eigenvectors
    dP = _solve(V, _to_complex(t_A, V) @ V)
    dL = dP.diagonal(0, -2, -1)
    dX = V @ ((dP - dL[..., :, None] * _eye_like(L)) / _eig_gap(L))
    dV = dX - V * _to_complex(_re((_mH(V) @ dX).diagonal(0, -2, -1)), V)[..., None, :]
    return [dL, dV]


LinalgEigBackward0 = defop(
    "LinalgEigBackward0",
    inputs=("A",),
    outputs=("eigenvalues", "eigenvectors"),
    params=("real_input",),
    vjp={"A": _eig_vjp},
    jvp=_eig_jvp,
)


def _eig_checks(A, fname: str) -> np.ndarray:
    a = _matrices(A, fname, arg="input")
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"Unknown Complex ScalarType for {scalar_name(a.dtype)}")
    if not np.isfinite(a).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    return a


def _eig(A, fname: str):
    """(eigenvalues, eigenvectors) Tensors of one recorded eig node (complex, as torch)."""
    a = _eig_checks(A, fname)
    cdt = _complex_dtype(a.dtype)
    if a.size == 0:
        w, v = np.zeros(a.shape[:-1], cdt), np.zeros(a.shape, cdt)
    else:
        with quiet:
            w, v = np.linalg.eig(a)
    outs = [w.astype(cdt, copy=False), v.astype(cdt, copy=False)]
    return record_multi(LinalgEigBackward0, outs, (A,), (a.dtype.kind == "f",))


@register("eig", namespace="linalg")
def eig(A: Tensor, *, out=None) -> tuple:
    """Eigenvalues and eigenvectors (unit norm columns) of each square matrix, as complex
    tensors (``complex64`` for ``float32`` input, ``complex128`` for ``float64``).

    Eigenvectors are defined up to a complex phase per column: differentiate only functions
    that do not depend on it (torch's backward raises otherwise).

    Example:
        >>> import ember
        >>> ember.linalg.eig(ember.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
        tensor([2.+0.j, 1.+0.j])
    """
    res = _eig(A, "linalg.eig")
    if out is not None:
        res = [write_out("linalg_eig", r, o) for r, o in zip(res, out)]
    return eig_type(tuple(res))


@register("eigvals", namespace="linalg")
def eigvals(A: Tensor, *, out=None) -> Tensor:
    """The (complex) eigenvalues of each square matrix, in ``linalg.eig``'s order.

    Example:
        >>> import ember
        >>> ember.linalg.eigvals(ember.tensor([[0.0, -1.0], [1.0, 0.0]]))
        tensor([0.+1.j, 0.-1.j])
    """
    return write_out("linalg_eigvals", _eig(A, "linalg.eigvals")[0], out)


# -- householder_product (orgqr) ----------------------------------------------------------------


def _reflectors(a: np.ndarray) -> np.ndarray:
    """The Householder vectors (columns) stored below the diagonal of ``a``, unit diagonal."""
    m, n = a.shape[-2:]
    return np.tril(a, -1) + np.eye(m, n, dtype=a.dtype)


def _apply_reflector(v, t, X):
    """``H X`` with ``H = I - t v v^H`` (``v`` a column, ``t`` a batch of scalars)."""
    return X - (t[..., None, None] * v) @ (np.conjugate(v).swapaxes(-1, -2) @ X)


def _householder_forward(input, tau):
    m, n = input.shape[-2:]
    V = _reflectors(input)
    Q = np.broadcast_to(np.eye(m, n, dtype=input.dtype), input.shape).copy()
    for i in reversed(range(tau.shape[-1])):
        Q = _apply_reflector(V[..., i : i + 1], tau[..., i], Q)
    return Q


def _householder_vjp(g, input, tau):
    """``Q = H_0 ... H_{k-1} I[:, :n]`` with ``H_i = I - tau_i v_i v_i^H``: with
    ``M_i = (H_0..H_{i-1})^H G (H_{i+1}..H_{k-1} I[:, :n])^H``, the gradient of ``H_i`` is
    ``M_i``, so ``g_tau_i = -v_i^H M_i v_i`` and ``g_v_i = -conj(tau_i) M_i v_i - tau_i M_i^H v_i``
    (only the entries below the diagonal of ``input`` are read, as in torch)."""
    m, n = input.shape[-2:]
    k = tau.shape[-1]
    V = _reflectors(input)
    suffix = [None] * k  # suffix[i] = H_{i+1} ... H_{k-1} I[:, :n]
    S = np.broadcast_to(np.eye(m, n, dtype=input.dtype), input.shape).copy()
    for i in reversed(range(k)):
        suffix[i] = S
        S = _apply_reflector(V[..., i : i + 1], tau[..., i], S)
    gP = g  # P_i^H G, with P_i = H_0 ... H_{i-1}
    g_input = np.zeros_like(input)
    g_tau = np.zeros_like(tau)
    for i in range(k):
        v = V[..., i : i + 1]
        vh = np.conjugate(v).swapaxes(-1, -2)
        t = tau[..., i, None, None]
        M = gP @ np.conjugate(suffix[i]).swapaxes(-1, -2)
        Mv = M @ v
        MHv = np.conjugate(M).swapaxes(-1, -2) @ v
        g_tau[..., i] = -(vh @ Mv)[..., 0, 0]
        gv = -np.conjugate(t) * Mv - t * MHv
        g_input[..., i + 1 :, i] = gv[..., i + 1 :, 0]
        # P_{i+1}^H G = H_i^H P_i^H G
        gP = _apply_reflector(v, np.conjugate(tau[..., i]), gP)
    return g_input, g_tau


def _householder_composite(input, tau):
    """The product with differentiable ops (for forward mode and higher derivatives)."""
    m, n = input.shape[-2:]
    eye = _wrap(np.eye(m, n, dtype=input._data.dtype))
    V = input.tril(-1) + eye
    Q = eye.expand(*input.shape)
    for i in reversed(range(tau.shape[-1])):
        v = V[..., i : i + 1]
        Q = Q - (tau[..., i, None, None] * v) @ (_mH(v) @ Q)
    return Q


LinalgHouseholderProductBackward0 = defop(
    "LinalgHouseholderProductBackward0",
    inputs=("input", "tau"),
    forward=_householder_forward,
    vjp=lambda g, input, tau: _householder_vjp(g, input, tau),
    composite=_householder_composite,
    jvp=COMPOSITE,
)


def _householder_checks(input, tau, fname: str) -> tuple:
    for name, pos, x in (("input", 1, input), ("tau", 2, tau)):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"linalg_householder_product(): argument '{name}' (position {pos}) must be "
                f"Tensor, not {type(x).__name__}"
            )
    a, t = input._data, tau._data
    pre = f"torch.{fname}"
    if a.ndim < 2:
        raise RuntimeError(f"{pre}: input must have at least 2 dimensions.")
    if a.shape[-2] < a.shape[-1]:
        raise RuntimeError(
            f"{pre}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if t.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if a.shape[-1] < t.shape[-1]:
        raise RuntimeError(f"{pre}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if a.ndim - t.ndim != 1:
        raise RuntimeError(
            f"{pre}: Expected tau to have one dimension less than input, but got tau.ndim equal "
            f"to {t.ndim} and input.ndim is equal to {a.ndim}"
        )
    if a.ndim > 2 and a.shape[:-2] != t.shape[:-1]:
        raise RuntimeError(
            f"{pre}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
            f"[{', '.join(str(s) for s in t.shape[:-1])}]"
        )
    if a.dtype != t.dtype:
        raise RuntimeError(
            f"{pre}: tau dtype {scalar_name(t.dtype)} does not match input dtype "
            f"{scalar_name(a.dtype)}"
        )
    if a.dtype.kind not in "fc":
        raise NotImplementedError(f"\"orgqr_cpu\" not implemented for '{scalar_name(a.dtype)}'")
    return a, t


@register("householder_product", namespace="linalg")
def householder_product(A: Tensor, tau: Tensor, *, out=None) -> Tensor:
    """The first ``n`` columns of ``H_0 H_1 ... H_{k-1}``, ``H_i = I - tau_i v_i v_i^H``, with
    ``v_i`` the ``i``-th column of ``A`` below the diagonal and a 1 on it (LAPACK's orgqr; the
    Q of ``geqrf``'s output).

    Example:
        >>> import ember
        >>> A = ember.tensor([[1.0, 0.0], [1.0, 1.0]])
        >>> ember.linalg.householder_product(A, ember.tensor([1.0]))
        tensor([[ 0., -1.],
                [-1.,  0.]])
    """
    a, t = _householder_checks(A, tau, "linalg.householder_product")
    with quiet:
        q = _householder_forward(a, t)
    res = record(LinalgHouseholderProductBackward0, q.astype(a.dtype, copy=False), (A, tau), ())
    return write_out("linalg_householder_product", res, out)


@register("orgqr")
def orgqr(input: Tensor, input2: Tensor) -> Tensor:
    """``torch.orgqr``: ``linalg.householder_product(input, input2)``.

    Example:
        >>> import ember
        >>> ember.orgqr(ember.eye(2), ember.tensor([0.0, 0.0]))
        tensor([[1., 0.],
                [0., 1.]])
    """
    return householder_product(input, input2)


# -- pinv, lstsq ---------------------------------------------------------------------------------


def _pinv_vjp(g, A, result):
    """The adjoint of ``d(A+) = -A+ dA A+ + A+ A+^H dA^H (I - A A+) + (I - A+ A) dA^H A+^H A+``
    (constant rank)."""
    P, Ph = result, _mH(result)
    gh = _mH(g)
    gA = -(Ph @ g @ Ph)
    left = gh - (A @ P) @ gh  # (I - A A+) g^H
    right = gh - gh @ (P @ A)  # g^H (I - A+ A)
    return gA + left @ (P @ Ph) + (Ph @ P) @ right


def _pinv_jvp(t_A, A, result):
    P, Ph = result, _mH(result)
    dAh = _mH(t_A)
    out = -(P @ t_A @ P)
    out = out + (P @ Ph) @ (dAh - (dAh @ A) @ P)
    return out + (dAh - (P @ A) @ dAh) @ (Ph @ P)


LinalgPinvBackward0 = defop(
    "LinalgPinvBackward0",
    inputs=("A",),
    params=("_atol", "_rtol", "_hermitian"),  # (the forward's: torch's node saves none)
    forward=lambda a, atol, rtol, hermitian: _pinv_array(a, atol, rtol, hermitian),
    vjp={"A": _pinv_vjp},
    jvp=_pinv_jvp,
)


def _tol_array(x, dt):
    if x is None:
        return None
    return np.asarray(x._data if isinstance(x, Tensor) else x, dtype=dt)


def _pinv_array(a, atol, rtol, hermitian: bool):
    real = np.dtype(a.real.dtype)
    m, n = a.shape[-2:]
    atol, rtol = _tol_array(atol, real), _tol_array(rtol, real)
    if rtol is None:
        rtol = (
            np.asarray(np.finfo(real).eps * max(m, n), real)
            if atol is None or np.all(atol <= 0)
            else np.zeros((), real)
        )
    if atol is None:
        atol = np.zeros((), real)
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (n, m), a.dtype)
    with quiet:
        if hermitian:
            w, u = np.linalg.eigh(a)
            s = np.abs(w)
            tol = np.maximum(atol[..., None], rtol[..., None] * s.max(-1, keepdims=True))
            inv_s = np.where(s > tol, 1 / np.where(w == 0, 1, w), 0)
            res = (u * inv_s[..., None, :]) @ np.conjugate(u).swapaxes(-1, -2)
        else:
            u, s, vh = _lapack_svd(a, full_matrices=False)
            tol = np.maximum(atol[..., None], rtol[..., None] * s[..., :1])
            inv_s = np.where(s > tol, 1 / np.where(s == 0, 1, s), 0)
            v = np.conjugate(vh).swapaxes(-1, -2)
            res = (v * inv_s[..., None, :]) @ np.conjugate(u).swapaxes(-1, -2)
    return res.astype(a.dtype, copy=False)


@register("pinv", namespace="linalg")
def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The Moore-Penrose pseudo-inverse: singular values at most ``max(atol, rtol * s_max)``
    are treated as zero (``rcond`` is torch's older name for ``rtol``).

    Example:
        >>> import ember
        >>> ember.linalg.pinv(ember.tensor([[2.0, 0.0], [0.0, 0.0]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.0000]])
    """
    a = _checks(A, "linalg.pinv", square=False)
    if rcond is not None:
        rtol = rcond
    params = (atol, rtol, bool(hermitian))
    res = _pinv_array(a, *params)
    return write_out("linalg_pinv", record(LinalgPinvBackward0, res, (A,), params), out)


@register("pinverse")
def pinverse(input, rcond=1e-15):
    """``torch.pinverse``: ``linalg.pinv`` with ``rtol=rcond``.

    Example:
        >>> import ember
        >>> ember.pinverse(ember.tensor([[4.0]]))
        tensor([[0.2500]])
    """
    return pinv(input, rtol=rcond)


def _lstsq_vjp(grads, A, B, solution, needs_input_grad, vector):
    """torch's ``linalg_lstsq_backward`` (through the pseudo-inverse), plus the squared
    residuals' gradient ``2 (A X - B)`` at the optimum."""
    gX, gR = grads[0], grads[1]
    need_a, need_b = needs_input_grad
    X, Bm = solution, B
    if vector:
        X, Bm = X[..., None], Bm[..., None]
        gX = None if gX is None else gX[..., None]
    ga = gb = None
    if gX is not None:
        P = pinv(A) if not is_raw(A) else _pinv_array(A, None, None, False)
        if need_a:
            ga = _pinv_vjp(gX @ _mH(Bm), A, P)
        if need_b:
            gb = _mH(P) @ gX
    if gR is not None and gR.shape[-1:] == X.shape[-1:] and gR.size != 0:
        res = A @ X - Bm
        w = 2 * res * gR[..., None, :]
        if need_a:
            ga = w @ _mH(X) if ga is None else ga + w @ _mH(X)
        if need_b:
            gb = -w if gb is None else gb - w
    if vector and gb is not None:
        gb = gb[..., 0]
    return ga, gb


LinalgLstsqBackward0 = defop(
    "LinalgLstsqBackward0",
    inputs=("A", "B"),
    outputs=("solution", "residuals", "rank", "singular_values"),
    differentiable=(True, True, False, False),
    params=("vector",),
    vjp=_lstsq_vjp,
)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@register("lstsq", namespace="linalg")
def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of ``A X = B`` (``torch.return_types.linalg_lstsq``: the
    residuals, rank and singular values are filled as torch's CPU drivers fill them).

    Example:
        >>> import ember
        >>> A = ember.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
        >>> ember.linalg.lstsq(A, ember.tensor([[1.0], [2.0], [3.0]])).solution
        tensor([[1.],
                [2.]])
    """
    a = _checks(A, "linalg.lstsq", square=False)
    if not isinstance(B, Tensor):
        raise TypeError(
            f"linalg_lstsq(): argument 'b' (position 2) must be Tensor, not {type(B).__name__}"
        )
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError(
            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    b = B._data
    vector = b.ndim == a.ndim - 1
    bm = b[..., None] if vector else b
    if a.shape[-2] != bm.shape[-2]:
        raise RuntimeError(
            "torch.linalg.lstsq: input.size(-2) should match other.size(-2)"
            if not vector
            else "torch.linalg.lstsq: input.size(-2) should match other.size(-1)"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            "torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
            f"input's dtype {cpp_name(a.dtype)} and other's dtype {cpp_name(b.dtype)}"
        )
    m, n = a.shape[-2:]
    real = np.dtype(a.real.dtype)
    if rcond is None:
        rcond = float(np.finfo(real).eps) * max(m, n)
    batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    ab = np.broadcast_to(a, batch + a.shape[-2:])
    bb = np.broadcast_to(bm, batch + bm.shape[-2:])
    k = bm.shape[-1]
    x = np.zeros(batch + (n, k), a.dtype)
    ranks = np.zeros(batch, np.int64)
    svals = np.zeros(batch + (min(m, n),), real)
    sl = _scipy_linalg()
    lapack = "gelsy" if driver == "gels" else driver
    with quiet:
        for i in np.ndindex(*batch):
            if ab[i].size == 0 or bb[i].size == 0:
                continue
            sol, _, rk, sv = sl.lstsq(
                ab[i], bb[i], cond=rcond, lapack_driver=lapack, check_finite=False
            )
            x[i], ranks[i] = sol, rk
            if sv is not None:
                svals[i] = sv
    full_rank = bool(np.all(ranks == min(m, n)))
    if driver != "gelsy" and m > n and full_rank:
        with quiet:
            residuals = (np.abs(ab @ x - bb) ** 2).sum(-2).astype(real)
    else:
        residuals = np.zeros((0,), real)
    if driver == "gels":
        ranks = np.zeros((0,), np.int64)
    if driver not in ("gelsd", "gelss"):
        svals = np.zeros((0,), real)
    if vector:
        x = x[..., 0]
    outs = [x, residuals.astype(a.dtype, copy=False), ranks, svals]
    return lstsq_type(tuple(record_multi(LinalgLstsqBackward0, outs, (A, B), (vector,))))


# -- lu_factor, lu, lu_solve ---------------------------------------------------------------------


def _np_lu(a):
    """``(P, L, U, pivots)`` of each matrix (``A = P L U``, pivots 1-based int32)."""
    sl = _scipy_linalg()
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    P = np.zeros(batch + (m, m), a.dtype)
    L = np.zeros(batch + (m, k), a.dtype)
    U = np.zeros(batch + (k, n), a.dtype)
    piv = np.zeros(batch + (k,), np.int32)
    with quiet, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy's LinAlgWarning: a zero pivot is ``info``
        for i in np.ndindex(*batch):
            if a[i].size == 0:
                continue
            lu_, p = sl.lu_factor(a[i], check_finite=False) if m == n else _rect_lu(a[i])
            piv[i] = p[:k] + 1
            L[i] = np.tril(lu_[:, :k], -1) + np.eye(m, k, dtype=a.dtype)
            U[i] = np.triu(lu_[:k])
            perm = np.arange(m)
            for j, pj in enumerate(p[:k]):
                perm[[j, pj]] = perm[[pj, j]]
            P[i][perm, np.arange(m)] = 1
    return P, L, U, piv


def _rect_lu(a):
    """LAPACK getrf on a rectangular matrix: the packed factors and 0-based pivots."""
    getrf = _scipy_linalg().lapack.get_lapack_funcs("getrf", (a,))
    lu_, p, _info = getrf(a)
    return lu_, p


def _lu_info(U):
    """getrf's ``info``: the 1-based index of the first zero on U's diagonal, else 0."""
    d = U.diagonal(0, -2, -1) == 0
    return np.where(d.any(-1), d.argmax(-1) + 1, 0).astype(np.int32)


def _lu_vjp(gL, gU, P, L, U):
    """torch's ``linalg_lu_backward`` (P fixed): ``gA = P L^-H (L^H gL o 1_L + gU U^H o 1_U)
    U^-H`` for square A, with the extra blocks of tall and wide factors."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        inner = None
        if gL is not None:
            inner = _tril(_mH(L) @ gL, -1)
        if gU is not None:
            t = _triu(gU @ _mH(U))
            inner = t if inner is None else inner + t
        gA = _solve_tri(_mH(U), inner, False, left=False)
        gA = _solve_tri(_mH(L), gA, True, left=True, unit=True)
        return P @ gA
    if m < n:  # wide: U = [U1 | U2] with U2 = L^-1 P^T A2
        U1 = U[..., :k]
        low = None if gL is None else _mH(L) @ gL
        inner = None
        if gU is not None:
            low2 = -(gU[..., k:] @ _mH(U[..., k:]))
            low = low2 if low is None else low + low2
            inner = _triu(gU[..., :k] @ _mH(U1))
        low = _tril(low, -1)
        inner = low if inner is None else inner + low
        gA1 = _solve_tri(_mH(U1), inner, False, left=False)
        gA2 = gU[..., k:] if gU is not None else U[..., k:] * 0
        gA = _cat([gA1, gA2], -1)
        return P @ _solve_tri(_mH(L), gA, True, left=True, unit=True)
    # tall: L = [L1; L2]
    L1 = L[..., :k, :]  # tall: L = [L1; L2] with L2 = A2 U^-1
    up = None if gU is None else gU @ _mH(U)
    inner = None
    if gL is not None:
        up2 = -(_mH(L[..., k:, :]) @ gL[..., k:, :])
        up = up2 if up is None else up + up2
        inner = _tril(_mH(L1) @ gL[..., :k, :], -1)
    up = _triu(up)
    inner = up if inner is None else inner + up
    gA1 = _solve_tri(_mH(L1), inner, True, left=True, unit=True)
    gA2 = gL[..., k:, :] if gL is not None else L[..., k:, :] * 0
    gA = _cat([gA1, gA2], -2)
    return P @ _solve_tri(_mH(U), gA, False, left=False)


def _lu_jvp_parts(dA, P, L, U):
    """Tangents of L and U (square, tall or wide)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    dA = P.mT @ dA
    if m >= n:
        L1, dA1 = L[..., :k, :], dA[..., :k, :]
    else:
        L1, dA1 = L, dA
    U1 = U[..., :k] if m < n else U
    C = _solve_tri(U1, _solve_tri(L1, dA1[..., :, :k], False, unit=True), True, left=False)
    dL1 = L1 @ _tril(C, -1)
    dU1 = _triu(C) @ U1
    if m == n:
        return dL1, dU1
    if m < n:  # dU2 = L^-1 (dA2 - dL U2)
        dU2 = _solve_tri(L1, dA1[..., k:] - dL1 @ U[..., k:], False, unit=True)
        return dL1, cat([dU1, dU2], -1)
    # tall: dL2 = (dA2 - L2 dU) U^-1
    dL2 = _solve_tri(U1, dA[..., k:, :] - L[..., k:, :] @ dU1, True, left=False)
    return cat([dL1, dL2], -2), dU1


def _lu_node_vjp(grads, P, L, U):
    P, L, U = (_as_output(x, i) for i, x in enumerate((P, L, U)))
    return _lu_vjp(grads[1], grads[2], P, L, U)


def _lu_node_jvp(t_A, P, L, U):
    dL, dU = _lu_jvp_parts(t_A, P, L, U)
    return [P * 0, dL, dU]


LinalgLuBackward0 = defop(
    "LinalgLuBackward0",
    inputs=("A",),
    outputs=("P", "L", "U"),
    differentiable=(False, True, True),
    vjp={"A": _lu_node_vjp},
    jvp=_lu_node_jvp,
)


def _unpack(LU, m: int, n: int):
    k = min(m, n)
    L = (
        _tril(LU[..., :, :k], -1) + _wrap(np.eye(m, k, dtype=LU._data.dtype))
        if not is_raw(LU)
        else np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=LU.dtype)
    )
    U = _triu(LU[..., :k, :])
    return L, U


def _lu_factor_vjp(grads, A, LU, pivots_perm):
    gLU = grads[0]
    LU = _as_output(LU, 0)
    m, n = LU.shape[-2:]
    k = min(m, n)
    L, U = _unpack(LU, m, n)
    P = pivots_perm if is_raw(LU) else _wrap(pivots_perm)
    return _lu_vjp(_tril(gLU[..., :, :k], -1), _triu(gLU[..., :k, :]), P, L, U)


def _lu_factor_jvp(t_A, LU, pivots_perm):
    m, n = LU.shape[-2:]
    L, U = _unpack(LU, m, n)
    dL, dU = _lu_jvp_parts(t_A, _wrap(pivots_perm), L, U)
    k = min(m, n)
    if m >= n:
        dLU = dL + dU if m == n else cat([dL[..., :k, :] + dU, dL[..., k:, :]], -2)
    else:
        dLU = cat([dL + dU[..., :k], dU[..., k:]], -1)
    return [dLU, None, None]


LinalgLuFactorExBackward0 = defop(
    "LinalgLuFactorExBackward0",
    inputs=("A",),
    outputs=("LU", "pivots", "info"),
    differentiable=(True, False, False),
    saves=("pivots_perm",),
    vjp={"A": _lu_factor_vjp},
    jvp=_lu_factor_jvp,
)


_LAPACK_DTYPES = frozenset(map(np.dtype, ("float32", "float64", "complex64", "complex128")))


def _lapack_dtype(a: np.ndarray, kernel: str) -> None:
    """torch's error for a dtype its LAPACK kernel ``kernel`` is not compiled for."""
    if a.dtype not in _LAPACK_DTYPES:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(a.dtype)}'")


def _lu_factor(A, pivot, fname):
    require_tensor(A, fname.replace(".", "_"), "A")
    a = A._data
    if a.ndim < 2:
        raise RuntimeError(
            "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(a.shape)} instead"
        )
    _lapack_dtype(a, "lu_cpu")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    P, L, U, piv = _np_lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    LU = np.zeros(a.shape, a.dtype)
    LU[..., :, :k] += np.tril(L, -1)
    LU[..., :k, :] += U
    info = _lu_info(U)
    outs = record_multi(LinalgLuFactorExBackward0, [LU, piv, info], (A,), (), (P,))
    return outs


@register("lu_factor_ex", namespace="linalg")
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """``lu_factor`` with ``info`` (the first zero pivot, 1-based; 0 if none) and no error.

    Example:
        >>> import ember
        >>> ember.linalg.lu_factor_ex(ember.tensor([[0.0, 1.0], [2.0, 3.0]])).pivots
        tensor([2, 2], dtype=torch.int32)
    """
    return lu_factor_ex_type(tuple(_lu_factor(A, pivot, "linalg.lu_factor_ex")))


@register("lu_factor", namespace="linalg")
def lu_factor(A, *, pivot=True, out=None):
    """The packed LU factorization with partial pivoting (``pivots`` 1-based, LAPACK's).

    Example:
        >>> import ember
        >>> ember.linalg.lu_factor(ember.tensor([[0.0, 1.0], [2.0, 3.0]])).LU
        tensor([[2., 3.],
                [0., 1.]])
    """
    LU, piv, info = _lu_factor(A, pivot, "linalg.lu_factor")
    bad = info._data.reshape(-1)
    for bi, i in enumerate(bad):
        if i:
            prefix = _batch_prefix(A._data, bi)
            raise RuntimeError(
                f"torch.linalg.lu_factor: {prefix}U[{i},{i}] is zero and using it on lu_solve "
                "would result in a division by zero. If you still want to perform the "
                "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
                "pivot)"
            )
    return lu_factor_type((LU, piv))


@register("lu", namespace="linalg")
def lu(A, *, pivot=True, out=None):
    """``A = P L U``: the permutation, unit lower- and upper-triangular factors.

    Example:
        >>> import ember
        >>> ember.linalg.lu(ember.tensor([[0.0, 1.0], [2.0, 3.0]])).P
        tensor([[0., 1.],
                [1., 0.]])
    """
    a = _checks(A, "linalg.lu", square=False)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    P, L, U, _ = _np_lu(a)
    return lu_type(tuple(record_multi(LinalgLuBackward0, [P, L, U], (A,))))


def _perm_from_pivots(piv: np.ndarray, m: int, dt) -> np.ndarray:
    batch = piv.shape[:-1]
    P = np.zeros(batch + (m, m), dt)
    for i in np.ndindex(*batch):
        perm = np.arange(m)
        for j, pj in enumerate(piv[i] - 1):
            perm[[j, pj]] = perm[[pj, j]]
        P[i][perm, np.arange(m)] = 1
    return P


def _lu_solve_vjp(g, LU, B, result, needs_input_grad, perm, left, adjoint):
    """``X = op(A)^-1 B`` with ``A = P L U`` (op: the identity or the adjoint; ``X B^...``
    when not ``left``): ``gB`` solves the adjoint system; ``gLU`` is ``gA`` pulled back to
    the packed factors."""
    need_lu, need_b = needs_input_grad
    P = perm if is_raw(LU) else _wrap(perm)
    n = LU.shape[-1]
    L, U = _unpack(LU, n, n)
    A = P @ L @ U
    Aop = _mH(A) if adjoint else A
    gb = _solve(_mH(Aop), g) if left else _solve(Aop, g.mT).mT
    ga_op = None
    if need_lu:
        ga_op = -(gb @ _mH(result)) if left else -(_mH(result) @ gb)
    gLU = None
    if ga_op is not None:
        gA = _mH(ga_op) if adjoint else ga_op
        gA = P.mT @ gA
        gLU = _tril(gA @ _mH(U), -1) + _triu(_mH(L) @ gA)
    return gLU, (gb if need_b else None)


LinalgLuSolveBackward0 = defop(
    "LinalgLuSolveBackward0",
    inputs=("LU", "B"),
    params=("left", "adjoint"),
    saves=("perm",),
    vjp=_lu_solve_vjp,
)


@register("lu_solve", namespace="linalg")
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """The solution of ``A X = B`` from ``lu_factor``'s ``(LU, pivots)`` (``X A = B`` if not
    ``left``; ``A^H`` for A if ``adjoint``).

    Example:
        >>> import ember
        >>> LU, piv = ember.linalg.lu_factor(ember.tensor([[2.0, 0.0], [0.0, 4.0]]))
        >>> ember.linalg.lu_solve(LU, piv, ember.tensor([[2.0], [4.0]]))
        tensor([[1.],
                [1.]])
    """
    lu_ = _checks(LU, "torch.linalg.lu_solve")
    require_tensor(pivots, "linalg_lu_solve", "pivots", 2)
    require_tensor(B, "linalg_lu_solve", "B", 3)
    b = B._data
    if lu_.dtype != b.dtype:
        raise RuntimeError(
            "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
            f"{scalar_name(lu_.dtype)} and B of type {scalar_name(b.dtype)} instead"
        )
    if b.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    n = lu_.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise RuntimeError(
            "linalg.lu_solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})"
        )
    piv = np.asarray(pivots._data)
    if piv.dtype != np.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    if piv.shape != lu_.shape[:-1]:
        if piv.ndim == lu_.ndim - 1 and piv.shape[:-1] == lu_.shape[:-2]:
            raise RuntimeError(
                "linalg.lu_solve: Number of pivots per batch should be same as the dimension "
                "of the matrix"
            )
        raise RuntimeError(
            "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got "
            f"pivots with shape {list(piv.shape)} instead"
        )
    P = _perm_from_pivots(piv, n, lu_.dtype)
    L = np.tril(lu_, -1) + np.eye(n, dtype=lu_.dtype)
    U = np.triu(lu_)
    with quiet:
        A = P @ L @ U
        if adjoint:
            A = np.conjugate(A).swapaxes(-1, -2)
        if left:
            x = (
                _np_solve_triangular(L, P.swapaxes(-1, -2) @ b, False, True, True)
                if not adjoint
                else np.linalg.solve(A, b)
            )
            if not adjoint:
                x = _np_solve_triangular(U, x, True, True, False)
        else:
            x = np.linalg.solve(A.swapaxes(-1, -2), b.swapaxes(-1, -2)).swapaxes(-1, -2)
    t = record(
        LinalgLuSolveBackward0,
        x.astype(lu_.dtype, copy=False),
        (LU, B),
        (bool(left), bool(adjoint)),
        (P,),
    )
    return write_out("linalg_lu_solve", t, out)


# -- matrix_exp ----------------------------------------------------------------------------------


def _expm_block(A, E):
    """The upper-right block of ``exp([[A, E], [0, A]])``: the Frechet derivative of exp at A
    in direction E (a recorded matrix_exp for Tensors)."""
    n = A.shape[-1]
    A, E = _tensors(A, E)
    zero = A * 0
    top = _cat([A, E], -1)
    bottom = _cat([zero, A], -1)
    big = _cat([top, bottom], -2)
    if is_raw(big):
        return _np_expm(big)[..., :n, n:]
    return matrix_exp(big)[..., :n, n:]


def _np_expm(a):
    if a.size == 0:
        return a.copy()
    with quiet:
        return _scipy_linalg().expm(a).astype(a.dtype, copy=False)


LinalgMatrixExpBackward0 = defop(
    "LinalgMatrixExpBackward0",
    forward=_np_expm,
    vjp={"self": lambda g, self: _expm_block(_mH(self), g)},
    jvp=lambda t_self, self: _expm_block(self, t_self),
)


@register("matrix_exp", namespace="linalg")
def matrix_exp(A):
    """The matrix exponential of each square matrix.

    Example:
        >>> import ember
        >>> ember.linalg.matrix_exp(ember.zeros(2, 2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    a = _checks(A, "linalg.matrix_exp")
    return record(LinalgMatrixExpBackward0, _np_expm(a), (A,))


@register("matrix_exp")
def _top_matrix_exp(input):
    """``torch.matrix_exp``: ``linalg.matrix_exp``.

    Example:
        >>> import ember
        >>> ember.matrix_exp(ember.zeros(1, 1))
        tensor([[1.]])
    """
    return matrix_exp(input)


# -- composites: matrix_power, matrix_rank, cond, multi_dot, vecdot, tensorinv, tensorsolve ---


@register("matrix_power", namespace="linalg")
def matrix_power(A, n, *, out=None):
    """``A^n`` by repeated squaring (``inv(A)^-n`` for negative n, the identity for 0).

    Example:
        >>> import ember
        >>> ember.linalg.matrix_power(ember.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
        tensor([[1., 3.],
                [0., 1.]])
    """
    if not isinstance(A, Tensor):
        raise TypeError(
            f"linalg_matrix_power(): argument 'input' (position 1) must be Tensor, not "
            f"{type(A).__name__}"
        )
    a = A._data
    if a.ndim < 2:
        raise RuntimeError(
            "linalg.matrix_power: The input tensor A must have at least 2 dimensions."
        )
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            "linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )
    if n == 0:
        eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape).copy()
        return write_out("linalg_matrix_power", _wrap(eye), out)
    if n < 0:
        A = inv(A)
        n = -n
    result = None
    base = A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return write_out("linalg_matrix_power", result, out)


@register("matrix_power")
def _top_matrix_power(input, n):
    """``torch.matrix_power``: ``linalg.matrix_power``.

    Example:
        >>> import ember
        >>> ember.matrix_power(ember.tensor([[2.0]]), 3)
        tensor([[8.]])
    """
    return matrix_power(input, n)


@register("matrix_rank", namespace="linalg")
def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values above ``max(atol, rtol * s_max)`` (int64).

    Example:
        >>> import ember
        >>> ember.linalg.matrix_rank(ember.tensor([[1.0, 2.0], [2.0, 4.0]]))
        tensor(1)
    """
    a = _checks(A, "linalg.matrix_rank", square=bool(hermitian))
    real = np.dtype(a.real.dtype)
    if tol is not None:
        atol, rtol = tol, 0.0
    m, n = a.shape[-2:]
    atol_a, rtol_a = _tol_array(atol, real), _tol_array(rtol, real)
    if rtol_a is None:
        rtol_a = (
            np.asarray(np.finfo(real).eps * max(m, n), real)
            if atol_a is None or np.all(atol_a <= 0)
            else np.zeros((), real)
        )
    if atol_a is None:
        atol_a = np.zeros((), real)
    if a.size == 0:
        return _wrap(np.zeros(a.shape[:-2], np.int64))
    with quiet:
        s = np.abs(np.linalg.eigvalsh(a)) if hermitian else _lapack_svd(a, compute_uv=False)
    smax = s.max(-1)
    tol_v = np.maximum(atol_a, rtol_a * smax)
    return write_out(
        "linalg_matrix_rank", _wrap((s > tol_v[..., None]).sum(-1).astype(np.int64)), out
    )


# torch.norm: the vector norm, or the nuclear matrix norm (here, beside the matrix norms).
@register("norm", method=True)
def _top_norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """The vector p-norm over ``dim`` (all elements by default); ``'fro'`` is the 2-norm.

    Example:
        >>> import ember
        >>> ember.norm(ember.tensor([3.0, 4.0]))
        tensor(5.)
        >>> ember.tensor([[1.0, -2.0]]).norm(p=1, dim=1)
        tensor([3.])
    """
    require_tensor(input, "norm")
    if p is None or p == "fro":
        p = 2
    elif p == "nuc":  # torch's: the matrix norm over ``dim`` (every dim by default)
        dims = tuple(range(input.ndim)) if dim is None else dim
        return write_out("norm", matrix_norm(input, "nuc", dims, keepdim, dtype=dtype), out)
    elif isinstance(p, str):
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    return write_out("norm", _vector_norm(input, p, dim, keepdim, dtype=dtype), out)


@register("cond", namespace="linalg")
def cond(A, p=None, *, out=None):
    """The condition number in the ``p``-norm (``None``/2: ``s_max / s_min``; -2 its inverse;
    otherwise ``norm(A, p) * norm(inv(A), p)``).

    Example:
        >>> import ember
        >>> ember.linalg.cond(ember.tensor([[2.0, 0.0], [0.0, 0.5]]))
        tensor(4.)
    """
    a = _checks(A, "linalg.cond", square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = svdvals(A)
        big, small = s[..., :1], s[..., -1:]
        r = (big / small if p != -2 else small / big).squeeze(-1)
        return write_out("linalg_cond", r, out)
    if p not in ("fro", "nuc", 1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    del a
    # torch: the product of the norms, NaN (a singular A) mapped to inf by nan_to_num_.
    r = matrix_norm(A, p) * matrix_norm(inv(A), p)
    return write_out("linalg_cond", nan_to_num(r, math.inf, math.inf, -math.inf), out)


@register("multi_dot", namespace="linalg")
def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (the first and last may be vectors), multiplied
    in the order that costs the fewest scalar multiplications.

    Example:
        >>> import ember
        >>> ember.linalg.multi_dot([ember.ones(2), ember.eye(2), ember.ones(2)])
        tensor(2.)
    """
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first_vec, last_vec = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = list(tensors)
    if first_vec:
        mats[0] = mats[0].unsqueeze(0)
    if last_vec:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i, t in enumerate(mats):
        if t.ndim != 2:
            raise RuntimeError(
                f"multi_dot(): tensor {i} must be 2D but got {tensors[i].ndim}D"
                if 0 < i < n - 1
                else f"multi_dot(): the {'first' if i == 0 else 'last'} tensor must be 1D or "
                f"2D but got {tensors[i].ndim}D"
            )
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {tuple(tensors[i].shape)} "
                f"and {tuple(tensors[i + 1].shape)} cannot be multiplied"
            )
    dims = [mats[0].shape[0]] + [t.shape[1] for t in mats]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def chain(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return chain(i, k) @ chain(k + 1, j)

    r = chain(0, n - 1)
    if first_vec or last_vec:  # torch views the 2-D product with the vectors' shape
        r = r.view(tuple(r.shape[1 if first_vec else 0 : 1 if last_vec else 2]))
    return write_out("linalg_multi_dot", r, out)


@register("vecdot", namespace="linalg")
def vecdot(x, y, *, dim=-1, out=None):
    """``sum(conj(x) * y, dim)`` with broadcasting.

    Example:
        >>> import ember
        >>> ember.linalg.vecdot(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
        tensor(11.)
    """
    xc = x.conj() if x._data.dtype.kind == "c" else x
    return write_out("linalg_vecdot", _sum(xc * y, dim), out)


@register("tensorinv", namespace="linalg")
def tensorinv(A, ind=2, *, out=None):
    """The inverse of ``A`` seen as a matrix with the first ``ind`` dims as rows.

    Example:
        >>> import ember
        >>> ember.linalg.tensorinv(ember.eye(4).reshape(4, 2, 2), ind=1).shape
        torch.Size([2, 2, 4])
    """
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A.shape)
    rows, cols = shape[:ind], shape[ind:]
    pr, pc = math.prod(rows), math.prod(cols)
    if pr != pc:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {pc} != {pr}"
        )
    return write_out("linalg_tensorinv", inv(A.reshape(pr, pc)).reshape(cols + rows), out)


@register("tensorsolve", namespace="linalg")
def tensorsolve(A, B, dims=None, *, out=None):
    """The ``X`` with ``tensordot(A, X, X.ndim) == B``.

    Example:
        >>> import ember
        >>> ember.linalg.tensorsolve(ember.eye(4).reshape(2, 2, 4), ember.ones(2, 2)).shape
        torch.Size([4])
    """
    if dims is not None:
        nd = A.ndim
        dims = [d % nd for d in dims]
        rest = [d for d in range(nd) if d not in dims]
        A = A.permute(*rest, *dims)
    res_shape = tuple(A.shape[B.ndim :])
    pb = math.prod(B.shape)
    pr = math.prod(res_shape)
    if pb != pr:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(result_shape) == prod(other.shape), "
            f"but got {pr} != {pb}"
        )
    x = solve(A.reshape(pb, pr), B.reshape(pb))
    return write_out("linalg_tensorsolve", x.reshape(res_shape), out)


# -- the _ex variants: an info tensor instead of an error ------------------------------------------


def _info_zero(a):
    return _wrap(np.zeros(a.shape[:-2], np.int32))


@register("inv_ex", namespace="linalg")
def inv_ex(A, *, check_errors=False, out=None):
    """``(inverse, info)``: info is the first zero pivot (1-based), 0 if A is invertible.

    Example:
        >>> import ember
        >>> ember.linalg.inv_ex(ember.tensor([[2.0]])).info
        tensor(0, dtype=torch.int32)
    """
    a = _checks(A, "linalg.inv_ex")
    if check_errors:
        return inv_ex_type((inv(A), _info_zero(a)))
    mats = a.reshape((-1,) + a.shape[-2:])
    with quiet:
        infos = np.array([_first_zero_pivot(m) for m in mats], np.int32).reshape(a.shape[:-2])
    if not infos.any():
        return inv_ex_type((inv(A), _wrap(infos)))
    with quiet:
        res = np.linalg.pinv(a) * np.nan  # torch's values are unspecified there
    return inv_ex_type((record(LinalgInvExBackward0, res.astype(a.dtype), (A,)), _wrap(infos)))


@register("cholesky_ex", namespace="linalg")
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``(L, info)``: info is the order of the first leading minor that is not positive
    definite, 0 if A is positive definite.

    Example:
        >>> import ember
        >>> ember.linalg.cholesky_ex(ember.tensor([[4.0]])).L
        tensor([[2.]])
    """
    a = _checks(A, "linalg.cholesky_ex")
    try:
        return cholesky_ex_type((cholesky(A, upper=upper), _info_zero(a)))
    except LinAlgError:
        if check_errors:
            raise
    mats = a.reshape((-1,) + a.shape[-2:])
    infos = np.zeros(len(mats), np.int32)
    for bi, m in enumerate(mats):
        for k in range(1, a.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:k, :k])
            except np.linalg.LinAlgError:
                infos[bi] = k
                break
    res = np.full(a.shape, np.nan, a.dtype)
    t = record(LinalgCholeskyExBackward0, res, (A,), (bool(upper),))
    return cholesky_ex_type((t, _wrap(infos.reshape(a.shape[:-2]))))


@register("solve_ex", namespace="linalg")
def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``(result, info)``: ``solve`` with the first zero pivot (0 if none) instead of an
    error.

    Example:
        >>> import ember
        >>> ember.linalg.solve_ex(ember.tensor([[2.0]]), ember.tensor([[4.0]])).result
        tensor([[2.]])
    """
    a = _checks(A, "linalg.solve_ex")
    try:
        return solve_ex_type((solve(A, B, left=left), _info_zero(a)))
    except LinAlgError:
        if check_errors:
            raise
    mats = a.reshape((-1,) + a.shape[-2:])
    infos = np.array([_first_zero_pivot(m) for m in mats], np.int32).reshape(a.shape[:-2])
    b = B._data
    vector = left and (b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]))
    res = np.full(
        np.broadcast_shapes(a.shape[:-2], b.shape[: -1 if vector else -2])
        + b.shape[-1 if vector else -2 :],
        np.nan,
        a.dtype,
    )
    t = record(LinalgSolveExBackward0, res, (A, B), (bool(left), vector))
    return solve_ex_type((t, _wrap(infos)))


# -- torch.svd (U, S, V) ---------------------------------------------------------------------------


@register("svd")
def _legacy_svd(input, some=True, compute_uv=True, *, out=None):
    """``torch.svd``: ``(U, S, V)`` with V (not Vh), reduced if ``some``; zero U and V when not
    ``compute_uv``.

    Example:
        >>> import ember
        >>> ember.svd(ember.tensor([[3.0, 0.0], [0.0, -4.0]])).S
        tensor([4., 3.])
    """
    if not compute_uv:
        s = svdvals(input)
        m, n = input.shape[-2:]
        dt = input._data.dtype
        U = _wrap(np.zeros(input.shape[:-2] + (m, m if some is False else min(m, n)), dt))
        V = _wrap(np.zeros(input.shape[:-2] + (n, n if some is False else min(m, n)), dt))
        return legacy_svd_type((U, s, V))
    U, S, Vh = _svd(input, not some, "linalg.svd")
    return legacy_svd_type((U, S, Vh.mT))


# == torch's legacy linear algebra: cholesky, cholesky_solve, cholesky_inverse, lu, lu_solve,
# lu_unpack, triangular_solve ====================================================================
#
# The deprecated functions warn once per process (torch's TORCH_WARN_ONCE, before any check)
# and otherwise run their torch.linalg counterparts' forward helpers. ``cholesky``,
# ``cholesky_solve``, ``cholesky_inverse``, ``triangular_solve`` and ``lu_unpack`` are ops of
# their own in torch (their own nodes and derivatives.yaml formulas, declared here); ``lu`` and
# ``lu_solve`` record ``linalg_lu_factor_ex`` and ``linalg_lu_solve`` as torch's do.
#
# Forward mode: torch 2.13's tangents of ``cholesky_inverse`` (``-X dF X F^H`` where
# ``-X dF F^H X`` is meant) and of ``triangular_solve`` with ``transpose=True`` (``dA X`` for
# ``dA^T X``) or ``unitriangular=True`` (the diagonal of ``dA`` kept) are not the derivative;
# ember's are, the adjoint of the reverse-mode rules.

triangular_solve_type = make_return_type("triangular_solve", ("solution", "cloned_coefficient"))
lu_unpack_type = make_return_type("lu_unpack", ("P", "L", "U"))

_WARNED: set = set()

_DEPRECATED = {
    "cholesky": (
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in "
        "a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
        "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\n"
        "should be replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
        "equivalent results for all valid (symmetric positive definite) inputs. (Triggered "
        "internally at /__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:1765.)"
    ),
    "lu": (
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n"
        "should be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
        "compute_pivots) (Triggered internally at "
        "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2073.)"
    ),
    "lu_solve": (
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
        "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
        "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
        "X = torch.linalg.lu_solve(LU, pivots, B) (Triggered internally at "
        "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2230.)"
    ),
    "triangular_solve": (
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will "
        "be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its "
        "arguments reversed and does not return a copy of one of the inputs.\n"
        "X = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
        "X = torch.linalg.solve_triangular(A, B). (Triggered internally at "
        "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2273.)"
    ),
}


def _deprecated(name: str) -> None:
    """torch's deprecation warning for ``torch.<name>``, once per process."""
    if name not in _WARNED:
        _WARNED.add(name)
        _warn(_DEPRECATED[name], UserWarning, stacklevel=3)


def _lapack_layout(x: np.ndarray) -> np.ndarray:
    """``x`` with each matrix column-major, as LAPACK leaves torch's results."""
    return np.ascontiguousarray(x.swapaxes(-1, -2)).swapaxes(-1, -2)


def _write_outs(fname: str, results, out, rtype=tuple):
    """torch's ``out=`` for a tuple of results (``out`` a tuple of Tensors)."""
    if out is None:
        return rtype(tuple(results))
    if not isinstance(out, (tuple, list)) or len(out) != len(results):
        raise TypeError(
            f"{fname}(): argument 'out' must be tuple of {len(results)} Tensors, not "
            f"{type(out).__name__}"
        )
    return rtype(tuple(write_out(fname, r, o) for r, o in zip(results, out)))


# -- cholesky (torch.cholesky: its own node, no forward mode in torch) --------------------------

CholeskyBackward0 = defop(
    "CholeskyBackward0",
    outputs=("L",),
    params=("upper",),
    forward=_cholesky_forward,
    vjp={"self": _cholesky_vjp},
    jvp=None,  # torch: "Trying to use forward AD with cholesky that does not support it"
)


@register("cholesky", method=True)
def _legacy_cholesky(input, upper=False, *, out=None):
    """``torch.cholesky`` (deprecated): the Cholesky factor, lower (``A = L L^H``) or upper
    (``A = U^H U``) if ``upper``.

    Example:
        >>> import ember
        >>> ember.cholesky(ember.tensor([[4.0, 2.0], [2.0, 5.0]]))
        tensor([[2., 0.],
                [1., 2.]])
    """
    _deprecated("cholesky")
    require_tensor(input, "cholesky")
    a = _matrices(input, "cholesky")
    _lapack_dtype(a, "cholesky_cpu")
    L = _cholesky_factor(a, upper, "cholesky")
    return write_out("cholesky", record(CholeskyBackward0, L, (input,), (bool(upper),)), out)


# -- cholesky_solve, cholesky_inverse --------------------------------------------------------


def _chol_solve(b, L, upper: bool):
    """``(L L^H)^-1 b`` (``(U^H U)^-1 b`` if ``upper``): two triangular solves, on arrays or
    recorded on Tensors."""
    b, L = _tensors(b, L)
    if upper:
        return _solve_tri(L, _solve_tri(_mH(L), b, False), True)
    return _solve_tri(_mH(L), _solve_tri(L, b, False), True)


def _cholesky_solve_vjp(g, input2, result, needs_input_grad, upper):
    """torch's ``cholesky_solve_backward``: ``gB = A^-1 g``, ``gL = -(C + C^H) L`` (``-U (C +
    C^H)``) with ``C = gB X^H``."""
    need_b, need_l = needs_input_grad
    gb = _chol_solve(g, input2, upper)
    gl = None
    if need_l:
        c = gb @ _mH(result)
        c = c + _mH(c)
        gl = -(input2 @ c) if upper else -(c @ input2)
    return (gb if need_b else None), gl


def _cholesky_solve_jvp(t_self, t_input2, input2, result, upper):
    """torch's ``cholesky_solve_jvp``: ``dX = A^-1 (dB - dA X)``, ``dA = dK + dK^H`` with
    ``dK = dL L^H`` (``dU^H U``)."""
    rhs = t_self
    if t_input2 is not None:
        dk = _mH(t_input2) @ input2 if upper else t_input2 @ _mH(input2)
        prod = (dk + _mH(dk)) @ result
        rhs = -prod if rhs is None else rhs - prod
    return None if rhs is None else _chol_solve(rhs, input2, upper)


def _cholesky_solve_forward(b, a, upper):
    return _chol_solve(b, a, upper).astype(a.dtype, copy=False)


CholeskySolveBackward0 = defop(
    "CholeskySolveBackward0",
    inputs=("self", "input2"),
    params=("upper",),
    forward=_cholesky_solve_forward,
    vjp=_cholesky_solve_vjp,
    jvp=_cholesky_solve_jvp,
)


def _check_b_and_A(fname: str, b: np.ndarray, a: np.ndarray, kernel: str) -> None:
    """The checks ``cholesky_solve`` and ``triangular_solve`` share (torch's
    ``linearSolveCheckInputs``)."""
    if b.dtype != a.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type {scalar_name(b.dtype)} "
            f"and A of type {scalar_name(a.dtype)} instead."
        )
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"A must be batches of square matrices, but they are {a.shape[-2]} by "
            f"{a.shape[-1]} matrices"
        )
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(
            f"Incompatible matrix sizes for {fname}: each A matrix is {a.shape[-1]} by "
            f"{a.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}"
        )
    broadcast_shapes(b.shape[:-2], a.shape[:-2])
    _lapack_dtype(a, kernel)


@register("cholesky_solve", method=True)
def cholesky_solve(input, input2, upper=False, *, out=None):
    """The solution ``X`` of ``A X = B`` (``B`` is ``input``) given ``A``'s Cholesky factor
    ``input2`` (lower, or upper if ``upper``); batch dims broadcast.

    Example:
        >>> import ember
        >>> L = ember.tensor([[2.0, 0.0], [1.0, 2.0]])
        >>> ember.cholesky_solve(ember.tensor([[6.0], [7.0]]), L)
        tensor([[1.],
                [1.]])
    """
    require_tensor(input, "cholesky_solve")
    require_tensor(input2, "cholesky_solve", "input2", 2)
    b, a = input._data, input2._data
    if b.ndim < 2:
        raise RuntimeError(
            f"b should have at least 2 dimensions, but has {b.ndim} dimensions instead"
        )
    if a.ndim < 2:
        raise RuntimeError(
            f"u should have at least 2 dimensions, but has {a.ndim} dimensions instead"
        )
    _check_b_and_A("cholesky_solve", b, a, "cholesky_solve_cpu")
    x = _lapack_layout(_cholesky_solve_forward(b, a, bool(upper)))
    t = record(CholeskySolveBackward0, x, (input, input2), (bool(upper),))
    return write_out("cholesky_solve", t, out)


def _cholesky_inverse_vjp(g, self, result, upper):
    """torch's ``cholesky_inverse_backward``: ``gL = -X (g + g^H) X L`` (``-U X (g + g^H) X``)."""
    c = result @ (g + _mH(g)) @ result
    return -(self @ c) if upper else -(c @ self)


def _cholesky_inverse_jvp(t_self, self, result, upper):
    """``dX = -X (dK + dK^H) X`` with ``dK = dL L^H`` (``dU^H U``): the adjoint of the rule
    above (torch 2.13's tangent multiplies in the wrong order; see the section's note)."""
    dk = _mH(t_self) @ self if upper else t_self @ _mH(self)
    return -(result @ (dk + _mH(dk)) @ result)


def _cholesky_inverse_forward(a, upper):
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    x = _chol_solve(eye, a, upper)
    return (0.5 * (x + np.conjugate(x).swapaxes(-1, -2))).astype(a.dtype, copy=False)


CholeskyInverseBackward0 = defop(
    "CholeskyInverseBackward0",
    params=("upper",),
    forward=_cholesky_inverse_forward,
    vjp={"self": _cholesky_inverse_vjp},
    jvp=_cholesky_inverse_jvp,
)


@register("cholesky_inverse", method=True)
def cholesky_inverse(input, upper=False, *, out=None):
    """The inverse of ``A`` from its Cholesky factor ``input`` (lower: ``A = L L^H``; upper if
    ``upper``: ``A = U^H U``).

    Example:
        >>> import ember
        >>> ember.cholesky_inverse(ember.tensor([[2.0, 0.0], [0.0, 4.0]]))
        tensor([[0.2500, 0.0000],
                [0.0000, 0.0625]])
    """
    require_tensor(input, "cholesky_inverse")
    a = _matrices(input, "cholesky_inverse")
    _lapack_dtype(a, "cholesky_inverse_out_cpu")
    zero = np.diagonal(a, 0, -2, -1) == 0
    if zero.any():
        mats = zero.reshape(-1, a.shape[-1])
        bi = int(np.argmax(mats.any(-1)))
        i = int(np.argmax(mats[bi])) + 1
        raise LinAlgError(
            f"cholesky_inverse: {_batch_prefix(a, bi)}The diagonal element {i} is zero, the "
            "inversion could not be completed because the input matrix is singular."
        )
    with quiet:
        x = _cholesky_inverse_forward(a, bool(upper))
    t = record(CholeskyInverseBackward0, x, (input,), (bool(upper),))
    return write_out("cholesky_inverse", t, out)


# -- lu, lu_solve, lu_unpack --------------------------------------------------------------------


@register("lu", method=True)
def _legacy_lu(input, pivot=True, get_infos=False, out=None):
    """``torch.lu`` (deprecated): ``(LU, pivots)`` of ``linalg.lu_factor``, and the ``info``
    tensor too if ``get_infos`` (a plain tuple, as torch's).

    Example:
        >>> import ember
        >>> LU, pivots = ember.lu(ember.tensor([[0.0, 1.0], [2.0, 3.0]]))
        >>> pivots
        tensor([2, 2], dtype=torch.int32)
    """
    _deprecated("lu")
    LU, piv, info = _lu_factor(input, pivot, "linalg.lu_factor_ex")
    res = (LU, piv, info) if get_infos else (LU, piv)
    if out is None:
        return res
    if len(out) - int(bool(get_infos)) != 2:
        raise TypeError(f"expected tuple of {2 + int(bool(get_infos))} elements but got {len(out)}")
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"argument 'out' must be tuple of Tensors, not {type(out).__name__}")
    for o, r in zip(out, res):
        o.resize_as_(r).copy_(r)
    return out


@register("lu_solve", method=True)
def _legacy_lu_solve(input, LU_data, LU_pivots, *, out=None):
    """``torch.lu_solve`` (deprecated): ``linalg.lu_solve(LU_data, LU_pivots, input)``.

    Example:
        >>> import ember
        >>> LU, piv = ember.linalg.lu_factor(ember.tensor([[2.0, 0.0], [0.0, 4.0]]))
        >>> ember.lu_solve(ember.tensor([[2.0], [4.0]]), LU, piv)
        tensor([[1.],
                [1.]])
    """
    _deprecated("lu_solve")
    return lu_solve(LU_data, LU_pivots, input, out=out)


def _zeros_as(x, shape: tuple):
    """Zeros of ``shape`` with ``x``'s dtype: an array, or a constant Tensor like ``x``."""
    if is_raw(x):
        return np.zeros(shape, x.dtype)
    return _wrap(np.zeros(shape, x._data.dtype))


def _lu_unpack_vjp(grads, sizes):
    """torch's ``lu_unpack_backward``: L's strict lower and U's upper triangle, placed where
    they came from in the packed ``LU`` (m x n)."""
    gL, gU = grads[1], grads[2]
    if (gL is None or gL.ndim < 2) and (gU is None or gU.ndim < 2):
        return None
    m, n = int(sizes[0]), int(sizes[1])
    k = min(m, n)
    low = None if gL is None or gL.ndim < 2 else _tril(gL, -1)
    up = None if gU is None or gU.ndim < 2 else _triu(gU)
    batch = (low if low is not None else up).shape[:-2]
    if low is None:
        low = _zeros_as(up, batch + (m, k))
    if up is None:
        up = _zeros_as(low, batch + (k, n))
    if m == n:
        return low + up
    if m < n:  # wide: L is m x m, U is m x n
        return _cat([low + up[..., :k], up[..., k:]], -1)
    return _cat([low[..., :k, :] + up, low[..., k:, :]], -2)  # tall: L m x n, U n x n


def _lu_unpack_jvp(t_LU_data, sizes, unpack_data):
    if not unpack_data:
        return [None, t_LU_data.new_zeros((0,)), t_LU_data.new_zeros((0,))]
    m, n = int(sizes[0]), int(sizes[1])
    k = min(m, n)
    return [None, t_LU_data[..., :, :k].tril(-1), t_LU_data[..., :k, :].triu()]


LuUnpackBackward0 = defop(
    "LuUnpackBackward0",
    inputs=("LU_data",),
    outputs=("P", "L", "U"),
    differentiable=(False, True, True),
    params=("unpack_data", "unpack_pivots"),
    saves=("sizes",),
    vjp={"LU_data": _lu_unpack_vjp},
    jvp=_lu_unpack_jvp,
)


@register("lu_unpack")
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """``(P, L, U)`` from ``lu_factor``'s packed ``(LU, pivots)``: ``A = P L U``. ``P`` is
    empty when not ``unpack_pivots``, ``L`` and ``U`` when not ``unpack_data``.

    Example:
        >>> import ember
        >>> LU, piv = ember.linalg.lu_factor(ember.tensor([[0.0, 1.0], [2.0, 3.0]]))
        >>> ember.lu_unpack(LU, piv).P
        tensor([[0., 1.],
                [1., 0.]])
    """
    require_tensor(LU_data, "lu_unpack", "LU_data")
    require_tensor(LU_pivots, "lu_unpack", "LU_pivots", 2)
    lu_ = LU_data._data
    piv = np.asarray(LU_pivots._data)
    if lu_.ndim < 2:
        raise RuntimeError(
            "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(lu_.shape)} instead"
        )
    if piv.dtype != np.int32:
        raise RuntimeError(
            "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
            "dtype.\nNote: this function is intended to be used with the output produced by "
            "torch.linalg.lu_factor"
        )
    m, n = lu_.shape[-2:]
    k = min(m, n)
    empty = np.zeros((0,), lu_.dtype)
    if unpack_data:
        L = np.tril(lu_[..., :, :k], -1) + np.eye(m, k, dtype=lu_.dtype)
        U = np.triu(lu_[..., :k, :])
    else:
        L = U = empty
    if unpack_pivots:
        if (
            piv.ndim < 1
            or piv.shape[-1] > k
            or piv.shape[:-1] != lu_.shape[:-2]
            or (piv < 1).any()
            or (piv > m).any()
        ):  # torch reads past its buffers then: undefined behaviour, an error here
            raise RuntimeError(
                "torch.lu_unpack: LU_pivots must hold the pivots of LU_data (1-based row "
                f"indices, at most {k} per matrix), as torch.linalg.lu_factor returns them"
            )
        P = _perm_from_pivots(piv, m, lu_.dtype)
    else:
        P = empty
    outs = record_multi(
        LuUnpackBackward0,
        [P, L, U.copy() if U is L else U],
        (LU_data,),
        (bool(unpack_data), bool(unpack_pivots)),
        (np.array([m, n]),),
    )
    return _write_outs("lu_unpack", outs, out, lu_unpack_type)


# -- triangular_solve -------------------------------------------------------------------------


def _op_solve(A, B, upper: bool, transpose: bool, unit: bool):
    """``op(A)^-1 B`` for triangular A, ``op(A)`` being ``A^T`` if ``transpose`` (not the
    conjugate: torch's ``transpose``) else A."""
    if transpose:
        return _solve_tri(A.mT, B, not upper, True, unit)
    return _solve_tri(A, B, upper, True, unit)


def _triangular_solve_vjp(
    grads, self, A, solution, needs_input_grad, upper, transpose, unitriangular
):
    """torch's ``triangular_solve_backward``: ``gB = op(A)^-H g``; ``gA`` the triangle of
    ``-gB X^H`` (``-conj(X) gB^T`` if ``transpose``), plus the cloned coefficient's
    gradient."""
    gx, gm = grads
    need_b, need_a = needs_input_grad
    gb = ga = None
    if gx is not None:
        gb = _op_solve(_cj(A), gx, upper, not transpose, unitriangular)
        if need_a:
            ga = -(_cj(solution) @ gb.mT) if transpose else -(gb @ _mH(solution))
            ga = _tri_mask(ga, upper, unitriangular)
    if gm is not None and need_a:
        ga = gm if ga is None else ga + gm
    return (gb if need_b else None), (ga if need_a else None)


def _triangular_solve_jvp(
    t_self, t_A, A, solution, cloned_coefficient, upper, transpose, unitriangular
):
    """``dX = op(A)^-1 (dB - op(dA) X)`` with dA's triangle (see the section's note);
    the cloned coefficient's tangent is dA's."""
    rhs = t_self
    dM = None
    if t_A is not None:
        dA = _tri_mask(t_A, upper, unitriangular)
        prod = (dA.mT if transpose else dA) @ solution
        rhs = -prod if rhs is None else rhs - prod
        dM = t_A.expand(cloned_coefficient.shape)
    dX = None if rhs is None else _op_solve(A, rhs, upper, transpose, unitriangular)
    return [dX, dM]


def _triangular_solve_forward(b, a, upper, transpose, unitriangular):
    """``(op(A)^-1 b, A broadcast to the batch)``, each matrix column-major as torch's."""
    batch = np.broadcast_shapes(b.shape[:-2], a.shape[:-2])
    am = a.swapaxes(-1, -2) if transpose else a
    x = _np_solve_triangular(am, b, upper != transpose, True, unitriangular)
    m = np.broadcast_to(a, batch + a.shape[-2:])
    return _lapack_layout(x.astype(a.dtype, copy=False)), _lapack_layout(m)


TriangularSolveBackward0 = defop(
    "TriangularSolveBackward0",
    inputs=("self", "A"),
    outputs=("solution", "cloned_coefficient"),
    params=("upper", "transpose", "unitriangular"),
    forward=_triangular_solve_forward,
    vjp=_triangular_solve_vjp,
    jvp=_triangular_solve_jvp,
)


@register("triangular_solve", method=True)
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """``torch.triangular_solve`` (deprecated): ``(solution, cloned_coefficient)``, the
    solution of ``op(A) X = input`` for triangular ``A`` (``op(A) = A^T`` if ``transpose``;
    ones on the diagonal if ``unitriangular``) and a copy of ``A`` broadcast to the batch.

    Example:
        >>> import ember
        >>> A = ember.tensor([[2.0, 1.0], [0.0, 4.0]])
        >>> ember.triangular_solve(ember.tensor([[3.0], [4.0]]), A).solution
        tensor([[1.],
                [1.]])
    """
    _deprecated("triangular_solve")
    require_tensor(input, "triangular_solve")
    require_tensor(A, "triangular_solve", "A", 2)
    b, a = input._data, A._data
    if b.ndim < 2:
        raise RuntimeError(
            "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
            f"{b.ndim} dimensions instead"
        )
    if a.ndim < 2:
        raise RuntimeError(
            "torch.triangular_solve: Expected A to have at least 2 dimensions, but it has "
            f"{a.ndim} dimensions instead"
        )
    _check_b_and_A("triangular_solve", b, a, "triangular_solve_cpu")
    params = (bool(upper), bool(transpose), bool(unitriangular))
    outs = list(_triangular_solve_forward(b, a, *params))
    outs = record_multi(TriangularSolveBackward0, outs, (input, A), params)
    return _write_outs("triangular_solve", outs, out, triangular_solve_type)


# Tensor methods of the functions above that are not registered with ``method=True``
# (torch.inverse, torch.det, ... are bound in ember/__init__).
register_methods(
    {
        "inverse": inverse,
        "det": det,
        "logdet": logdet,
        "slogdet": _top_slogdet,
        "qr": _legacy_qr,
        "svd": _legacy_svd,
        "pinverse": pinverse,
        "matrix_exp": _top_matrix_exp,
        "matrix_power": _top_matrix_power,
        "orgqr": orgqr,
    }
)
