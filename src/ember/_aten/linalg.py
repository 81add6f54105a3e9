"""Linear algebra ops: the matmul family, einsum, tensordot, kron, trace and cross.

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
    LINEAR,
    QUIET,
    broadcast_shapes,
    defop,
    is_raw,
    normalize_dim,
    promote_types,
    quiet_reset,
    quiet_set,
    record,
    register,
    require_tensor,
    run,
    write_out,
)
from .reduction import SumBackward0, SumBackward1
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
)

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


def _register_inplace(op) -> None:
    """``Tensor.<op>_``: the product written into ``self``, which must have the result's
    shape (torch's check, after the op's own)."""

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
    method.__doc__ = f"In-place version of ``{op.__name__}``."
    register(method.__name__, function=False, method=True)(method)


for _op in (addmm, addmv, baddbmm):
    _register_inplace(_op)


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


def _eye_like(g, shape: tuple):
    """The identity of ``shape`` in ``g``'s dtype, as an array or a constant Tensor."""
    if is_raw(g):
        return np.eye(*shape, dtype=g.dtype)
    return _wrap(np.eye(*shape, dtype=g._data.dtype))


TraceBackward0 = defop(
    "TraceBackward0",
    params=("self_sym_sizes",),
    forward=_trace,
    vjp={"self": lambda g, self_sym_sizes: g * _eye_like(g, self_sym_sizes)},
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
