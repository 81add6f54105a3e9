"""Linear algebra ops: the matmul family, einsum, tensordot, kron, trace and cross.

Forward passes are single NumPy calls (``np.matmul``, ``np.tensordot``, ``np.einsum``)
on the raw arrays. Each backward rule has two paths:

* plain backward (NumPy arrays): matmuls against ``.T``/``swapaxes`` views, so the
  2-D case is two BLAS calls and no copies;
* recorded backward (``create_graph=True``, Tensors): the rule is the VJP of the op's
  einsum description (``_einsum_vjp``), computed with ember's own ``einsum``, so
  higher-order gradients need no other op family.

Node classes carry the names ``type(t.grad_fn).__name__`` has in torch 2.13. Where
torch's last recorded op is a view or copy (``matmul`` of batched inputs ends in
``_unsafe_view``, ``outer`` in ``mul``, ``tensordot`` in ``view``), ember records one
node under that name whose rule is the whole op's gradient; its ``next_functions``
point straight at the operands instead of at torch's intermediate nodes.
"""

from __future__ import annotations

import math
import string
import warnings
from functools import lru_cache

import numpy as np

from .._dtype import cpp_name, scalar_name
from .._tensor import Tensor, _legacy_type_name, register_methods
from ..autograd import grad_mode
from . import elementwise as _ew
from ._core import binary_operands, normalize_dim
from ._legacy import Node, _fw, add_tangents, record

_state = grad_mode.state
_wrap = Tensor._wrap

# torch's label order for einsum: 'A'-'Z' are labels 0-25, 'a'-'z' are 26-51.
_LABELS = string.ascii_uppercase + string.ascii_lowercase
_LABEL_SET = frozenset(_LABELS)


# -- shared helpers ----------------------------------------------------------------------


def _require_tensor(x, fname: str, arg: str, pos: int) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}"
        )


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


def _infer_size(sa: tuple, sb: tuple) -> tuple:
    """Broadcast two shapes with torch's error text (reports the last mismatching dim)."""
    n = max(len(sa), len(sb))
    out = [0] * n
    for i in range(n - 1, -1, -1):
        off = n - 1 - i
        da = sa[len(sa) - 1 - off] if off < len(sa) else 1
        db = sb[len(sb) - 1 - off] if off < len(sb) else 1
        if da != db and da != 1 and db != 1:
            raise RuntimeError(
                f"The size of tensor a ({da}) must match the size of tensor b ({db}) at "
                f"non-singleton dimension {i}"
            )
        out[i] = db if da == 1 else da
    return tuple(out)


def _check_expand(t: Tensor, target: tuple) -> None:
    """torch's ``expand`` errors for broadcasting an addmm-style ``input`` to the result."""
    shape = t._data.shape
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
    """Complex conjugate (real inputs are returned as they are)."""
    dt = x.dtype if type(x) is np.ndarray else x._data.dtype
    if dt.kind != "c":
        return x
    return np.conjugate(x) if type(x) is np.ndarray else x.conj()


def _mT(x: np.ndarray) -> np.ndarray:
    return x.swapaxes(-1, -2)


def _prod(shape) -> int:
    return math.prod(shape)


def _out(t: Tensor, out):
    from ._core import write_out

    return write_out("linalg", t, out)


# -- bilinear nodes: which operand needs which ------------------------------------------
# For ``a (op) b`` the rule for a needs b and vice versa; like torch, only the operand
# another one's gradient needs is saved (so modifying the other in place is allowed).


def _record_bilinear(cls, res: np.ndarray, inputs: tuple, a: Tensor, b: Tensor):
    ra, rb = a._rg, b._rg
    saved = ((a,) if rb else ()) + ((b,) if ra else ())
    t = record(cls, res, inputs, saved)
    node = t.grad_fn or _fw.node
    if node is not None:
        node.need = (ra, rb)
        node.shapes = (a._data.shape, b._data.shape)
    return t


class _Bilinear(Node):
    """Base of nodes for ``out = a (op) b`` described by the einsum ``terms -> out_term``."""

    __slots__ = ("need", "shapes")
    terms: tuple = ()
    out_term: str = ""

    def _unpack(self, saved):
        ra, rb = self.need
        a = saved[0] if rb else None
        b = saved[-1] if ra else None
        return ra, rb, a, b

    def _recorded(self, g, a, b, terms=None, out_term=None, scale=1):
        """Gradients as einsum VJPs (used when the backward pass is being recorded)."""
        ra, rb = self.need
        terms = terms or self.terms
        out_term = self.out_term if out_term is None else out_term
        ops = (a, b)
        ga = _einsum_vjp(g, terms, out_term, ops, self.shapes, 0) if ra else None
        gb = _einsum_vjp(g, terms, out_term, ops, self.shapes, 1) if rb else None
        if scale != 1:
            ga = ga * scale if ga is not None else None
            gb = gb * scale if gb is not None else None
        return ga, gb

    def jvp(self, tangents, inputs, *saved):
        # Bilinear: the product rule, the op itself with one operand's tangent at a time.
        (ta, tb), (a, b) = tangents[-2:], inputs[-2:]
        return add_tangents(
            None if ta is None else self._apply(ta, b), None if tb is None else self._apply(a, tb)
        )


# -- dot, vdot -----------------------------------------------------------------------------


class DotBackward0(_Bilinear):
    __slots__ = ()

    def backward(self, g, *saved):
        ra, rb, a, b = self._unpack(saved)
        return (g * _cj(b) if ra else None), (g * _cj(a) if rb else None)

    def _apply(self, a, b):
        return dot(a, b)


class VdotBackward0(_Bilinear):
    __slots__ = ()

    def backward(self, g, *saved):
        ra, rb, a, b = self._unpack(saved)
        return (_cj(g) * b if ra else None), (g * a if rb else None)

    def _apply(self, a, b):
        return vdot(a, b)


def dot(input, tensor, *, out=None):
    """Inner product of two 1-D tensors of the same length and dtype.

    Example:
        >>> import ember
        >>> ember.dot(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
        tensor(11.)
    """
    _require_tensor(input, "dot", "input", 1)
    _require_tensor(tensor, "dot", "tensor", 2)
    a, b = input._data, tensor._data
    _check_dot(a, b)
    res = np.asarray(np.dot(a, b))
    return _out(_record_bilinear(DotBackward0, res, (input, tensor), input, tensor), out)


def vdot(input, other, *, out=None):
    """``sum(conj(input) * other)`` for 1-D tensors (``dot`` for real ones)."""
    _require_tensor(input, "vdot", "input", 1)
    _require_tensor(other, "vdot", "other", 2)
    a, b = input._data, other._data
    _check_dot(a, b)
    res = np.asarray(np.vdot(a, b))
    return _out(_record_bilinear(VdotBackward0, res, (input, other), input, other), out)


# -- mm, mv, bmm -----------------------------------------------------------------------------


class MmBackward0(_Bilinear):
    __slots__ = ()
    terms = ("ij", "jk")
    out_term = "ik"

    def backward(self, g, *saved):
        ra, rb, a, b = self._unpack(saved)
        if type(g) is not np.ndarray:
            return self._recorded(g, a, b)
        return (g @ _cj(b).T if ra else None), (_cj(a).T @ g if rb else None)

    def _apply(self, a, b):
        return mm(a, b)


class MvBackward0(_Bilinear):
    __slots__ = ()
    terms = ("ij", "j")
    out_term = "i"

    def backward(self, g, *saved):
        ra, rb, a, b = self._unpack(saved)
        if type(g) is not np.ndarray:
            return self._recorded(g, a, b)
        return (np.outer(g, _cj(b)) if ra else None), (_cj(a).T @ g if rb else None)

    def _apply(self, a, b):
        return mv(a, b)


class BmmBackward0(_Bilinear):
    __slots__ = ()
    terms = ("bij", "bjk")
    out_term = "bik"

    def backward(self, g, *saved):
        ra, rb, a, b = self._unpack(saved)
        if type(g) is not np.ndarray:
            return self._recorded(g, a, b)
        return (g @ _mT(_cj(b)) if ra else None), (_mT(_cj(a)) @ g if rb else None)

    def _apply(self, a, b):
        return bmm(a, b)


def mm(input, mat2, *, out=None):
    """Matrix product of two 2-D tensors (no broadcasting).

    Example:
        >>> import ember
        >>> ember.mm(ember.ones(2, 3), ember.ones(3, 1))
        tensor([[3.],
                [3.]])
    """
    _require_tensor(input, "mm", "input", 1)
    _require_tensor(mat2, "mm", "mat2", 2)
    a, b = input._data, mat2._data
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_mm(a.shape[0], a.shape[1], b.shape[0], b.shape[1], a.dtype, b.dtype)
    return _out(_record_bilinear(MmBackward0, np.matmul(a, b), (input, mat2), input, mat2), out)


def mv(input, vec, *, out=None):
    """Matrix-vector product of a 2-D and a 1-D tensor."""
    _require_tensor(input, "mv", "input", 1)
    _require_tensor(vec, "mv", "vec", 2)
    a, v = input._data, vec._data
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}")
    _check_mv(a.shape[0], a.shape[1], v.shape[0], a.dtype, v.dtype)
    return _out(_record_bilinear(MvBackward0, np.matmul(a, v), (input, vec), input, vec), out)


def bmm(input, mat2, *, out=None):
    """Batched matrix product of two 3-D tensors with the same batch size (no broadcasting).

    Example:
        >>> import ember
        >>> ember.bmm(ember.ones(4, 2, 3), ember.ones(4, 3, 5)).shape
        torch.Size([4, 2, 5])
    """
    _require_tensor(input, "bmm", "input", 1)
    _require_tensor(mat2, "bmm", "mat2", 2)
    a, b = input._data, mat2._data
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_bmm(a.shape, b.shape, a.dtype, b.dtype)
    return _out(_record_bilinear(BmmBackward0, np.matmul(a, b), (input, mat2), input, mat2), out)


# -- matmul ----------------------------------------------------------------------------------


@lru_cache(maxsize=256)
def _matmul_terms(da: int, db: int) -> tuple:
    """einsum subscripts of ``matmul`` for operands of ``da`` and ``db`` dims."""
    nb = max(da - 2, db - 2, 0)
    batch = _LABELS[:nb]
    ta = batch[nb - max(da - 2, 0) :] + ("ij" if da >= 2 else "j")
    tb = batch[nb - max(db - 2, 0) :] + ("jk" if db >= 2 else "j")
    return (ta, tb), batch + ("i" if da >= 2 else "") + ("k" if db >= 2 else "")


class _MatmulNd(_Bilinear):
    """``matmul`` with a batched (>= 3-D) operand; broadcasting over batch dims."""

    __slots__ = ()

    def backward(self, g, *saved):
        ra, rb, a, b = self._unpack(saved)
        sa, sb = self.shapes
        da, db = len(sa), len(sb)
        if type(g) is not np.ndarray:
            terms, out_term = _matmul_terms(da, db)
            return self._recorded(g, a, b, terms, out_term)
        # Treat 1-D operands as matrices, as matmul does.
        g2 = g[..., None] if db == 1 else g
        if da == 1:
            g2 = g2[..., None, :]
        ga = gb = None
        if ra:
            b2 = _cj(b[:, None] if db == 1 else b)
            if da >= 3 and db <= 2:
                # Fold the batch into rows: one (B*n, p) @ (p, m) product.
                rows = _prod(g2.shape[:-1])
                ga = (g2.reshape(rows, g2.shape[-1]) @ b2.T).reshape(sa)
            elif da <= 2:
                # a is shared by every batch: contract batch and column dims at once.
                axes = list(range(g2.ndim - 2)) + [g2.ndim - 1]
                ga = np.tensordot(g2, b2, axes=(axes, axes))
                if da == 1:
                    ga = ga[0]
            else:
                ga = g2 @ _mT(b2)
        if rb:
            a2 = _cj(a[None, :] if da == 1 else a)
            if db <= 2 and da >= 3:
                rows = _prod(a2.shape[:-1])
                gb = a2.reshape(rows, a2.shape[-1]).T @ g2.reshape(rows, g2.shape[-1])
            else:
                gb = _mT(a2) @ g2
            if db == 1:
                gb = gb[..., 0]
        return ga, gb

    def _apply(self, a, b):
        return matmul(a, b)


# torch's final node for each way matmul can go (see ``_matmul_impl`` in LinearAlgebra.cpp).
_MatmulUnsafeView = type("UnsafeViewBackward0", (_MatmulNd,), {"__slots__": ()})
_MatmulClone = type("CloneBackward0", (_MatmulNd,), {"__slots__": ()})
_MatmulTranspose = type("TransposeBackward0", (_MatmulNd,), {"__slots__": ()})


class _VecMatBackward(_Bilinear):
    """1-D @ 2-D: torch computes ``a.unsqueeze(0).mm(b).squeeze_(0)``."""

    __slots__ = ()
    terms = ("j", "jk")
    out_term = "k"

    def backward(self, g, *saved):
        ra, rb, a, b = self._unpack(saved)
        if type(g) is not np.ndarray:
            return self._recorded(g, a, b)
        return (_cj(b) @ g if ra else None), (np.outer(_cj(a), g) if rb else None)

    def _apply(self, a, b):
        return matmul(a, b)


_VecMatBackward.__name__ = _VecMatBackward.__qualname__ = "SqueezeBackward4"


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
    big = a if larger else _mT(b)
    if big.size == 0:
        return True
    item = big.itemsize
    strides = [s // item for s in big.strides]
    shape = big.shape
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(dim_t1 - 2))


def _matmul_checks(a: np.ndarray, b: np.ndarray, rga: bool, rgb: bool):
    """Run torch's checks for the path matmul takes (``_matmul_impl``); return the class
    of the node torch ends with. ``rga``/``rgb``: the operands' ``requires_grad``."""
    da, db = a.ndim, b.ndim
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    if da == 1 and db == 1:
        _check_dot(a, b)
        return DotBackward0
    if da == 2 and db == 1:
        _check_mv(a.shape[0], a.shape[1], b.shape[0], a.dtype, b.dtype)
        return MvBackward0
    if da == 1 and db == 2:
        _check_mm(1, a.shape[0], b.shape[0], b.shape[1], a.dtype, b.dtype)
        return _VecMatBackward
    if da == 2 and db == 2:
        _check_mm(a.shape[0], a.shape[1], b.shape[0], b.shape[1], a.dtype, b.dtype)
        return MmBackward0
    if _should_fold(a, b, rga, rgb):
        if da >= db:
            rows, cols = _prod(a.shape[:-1]), a.shape[-1]
            if db == 2:
                _check_mm(rows, cols, b.shape[0], b.shape[1], a.dtype, b.dtype)
            else:
                _check_mv(rows, cols, b.shape[0], a.dtype, b.dtype)
            return _MatmulUnsafeView
        # b is the larger one: torch folds b.mT and multiplies by a.t() (or a).
        rows, cols = _prod(b.shape[:-2]) * b.shape[-1], b.shape[-2]
        if da == 2:
            _check_mm(rows, cols, a.shape[1], a.shape[0], b.dtype, a.dtype)
            # ``output.mT().contiguous()`` copies unless the transpose is already contiguous.
            n, p = a.shape[0], b.shape[-1]
            if n == 1 or p == 1 or rows * n == 0:
                return _MatmulTranspose
            return _MatmulClone
        _check_mv(rows, cols, a.shape[0], b.dtype, a.dtype)
        return _MatmulUnsafeView
    if da == 3 and db == 3 and a.shape[0] != b.shape[0]:
        # A batch of one that requires grad is squeezed (and matmul starts over).
        if a.shape[0] == 1 and rga:
            return _matmul_checks(a[0], b, rga, rgb)
        if b.shape[0] == 1 and rgb:
            return _matmul_checks(a, b[0], rga, rgb)
    # Batched path: broadcast batch dims, then bmm.
    batch = _infer_size(a.shape[: max(da - 2, 0)], b.shape[: max(db - 2, 0)])
    bs = _prod(batch)
    n = a.shape[-2] if da > 1 else 1
    m1 = a.shape[-1]
    m2 = b.shape[-2] if db > 1 else b.shape[0]
    _check_bmm((bs, n, m1), (bs, m2), a.dtype, b.dtype)
    return _MatmulUnsafeView


def matmul(input, other, *, out=None):
    """Matrix product with NumPy/torch semantics for 1-D operands and broadcast batch dims.

    Example:
        >>> import ember
        >>> a = ember.ones(2, 3, requires_grad=True)
        >>> ember.matmul(a, ember.ones(3))
        tensor([3., 3.], grad_fn=<MvBackward0>)
    """
    _require_tensor(input, "matmul", "input", 1)
    _require_tensor(other, "matmul", "other", 2)
    a, b = input._data, other._data
    rga, rgb = input._rg, other._rg
    if out is not None and (rga or rgb or out._rg) and _state.enabled:
        raise RuntimeError(
            "matmul(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    cls = _matmul_checks(a, b, rga, rgb)
    if a.ndim >= 3 and b.ndim <= 2 and a.flags.c_contiguous:
        # One (B*n, m) @ (m, p) BLAS call instead of a loop over the batch.
        res = np.matmul(a.reshape(_prod(a.shape[:-1]), a.shape[-1]), b)
        res = res.reshape(a.shape[:-1] + b.shape[1:])
    else:
        res = np.matmul(a, b)
    return _out(_record_bilinear(cls, np.asarray(res), (input, other), input, other), out)


# -- outer, inner --------------------------------------------------------------------------


class _OuterBackward(_Bilinear):
    """``outer``: torch records ``input.reshape(-1, 1) * vec2`` (MulBackward0)."""

    __slots__ = ()
    terms = ("i", "j")
    out_term = "ij"

    def backward(self, g, *saved):
        ra, rb, a, b = self._unpack(saved)
        if type(g) is not np.ndarray:
            return self._recorded(g, a, b)
        return (g @ _cj(b) if ra else None), (_cj(a) @ g if rb else None)

    def _apply(self, a, b):
        return outer(a, b)


_OuterBackward.__name__ = _OuterBackward.__qualname__ = "MulBackward0"


def outer(input, vec2, *, out=None):
    """Outer product of two 1-D tensors (dtypes are promoted like ``*``).

    Example:
        >>> import ember
        >>> ember.outer(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 10.0]))
        tensor([[ 1., 10.],
                [ 2., 20.]])
    """
    _require_tensor(input, "outer", "input", 1)
    _require_tensor(vec2, "outer", "vec2", 2)
    if input._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input._data.ndim}-D")
    if vec2._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2._data.ndim}-D")
    a, b = binary_operands(input, vec2)
    res = np.multiply.outer(a, b)
    return _out(_record_bilinear(_OuterBackward, res, (input, vec2), input, vec2), out)


def ger(input, vec2, *, out=None):
    """Alias of ``outer``."""
    _require_tensor(input, "ger", "input", 1)
    _require_tensor(vec2, "ger", "vec2", 2)
    return outer(input, vec2, out=out)


def inner(input, other, *, out=None):
    """Sum of products over the last dimension (a product with a 0-d operand).

    Example:
        >>> import ember
        >>> ember.inner(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
        tensor(11.)
    """
    _require_tensor(input, "inner", "input", 1)
    _require_tensor(other, "inner", "other", 2)
    a, b = input._data, other._data
    if a.ndim == 0 or b.ndim == 0:
        return _out(_ew.mul(input, other), out)
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(a.shape)} and {list(b.shape)}"
        )
    return _out(_tensordot(input, other, [-1], [-1]), out)


# -- addmm, addmv, baddbmm -------------------------------------------------------------------


class _Scaled(_Bilinear):
    """``beta * input + alpha * (mat1 (op) mat2)``; inputs are (input, mat1, mat2)."""

    __slots__ = ("alpha", "beta")

    def backward(self, g, *saved):
        ra, rb, a, b = self._unpack(saved)
        alpha, beta = self.alpha, self.beta
        gi = g if beta == 1 else g * beta
        if type(g) is not np.ndarray:
            ga, gb = self._recorded(g, a, b, scale=alpha)
            return gi, ga, gb
        ga, gb = self._products(g, a, b, ra, rb)
        if alpha != 1:
            ga = ga * alpha if ga is not None else None
            gb = gb * alpha if gb is not None else None
        return gi, ga, gb

    def jvp(self, tangents, inputs, *saved):
        prod = _Bilinear.jvp(self, tangents, inputs)
        if prod is not None and self.alpha != 1:
            prod = prod * self.alpha
        ti = tangents[0]
        if ti is not None and self.beta != 1:
            ti = ti * self.beta
        return add_tangents(ti if self.beta != 0 else None, prod)


class AddmmBackward0(_Scaled):
    __slots__ = ()
    terms = MmBackward0.terms
    out_term = MmBackward0.out_term

    def _products(self, g, a, b, ra, rb):
        return (g @ _cj(b).T if ra else None), (_cj(a).T @ g if rb else None)

    def _apply(self, a, b):
        return mm(a, b)


class AddmvBackward0(_Scaled):
    __slots__ = ()
    terms = MvBackward0.terms
    out_term = MvBackward0.out_term

    def _products(self, g, a, b, ra, rb):
        return (np.outer(g, _cj(b)) if ra else None), (_cj(a).T @ g if rb else None)

    def _apply(self, a, b):
        return mv(a, b)


class BaddbmmBackward0(_Scaled):
    __slots__ = ()
    terms = BmmBackward0.terms
    out_term = BmmBackward0.out_term

    def _products(self, g, a, b, ra, rb):
        return (g @ _mT(_cj(b)) if ra else None), (_mT(_cj(a)) @ g if rb else None)

    def _apply(self, a, b):
        return bmm(a, b)


def _scaled_result(cls, prod, input, m1, m2, beta, alpha):
    dt = prod.dtype
    alpha, beta = _int_scalar(alpha, dt), _int_scalar(beta, dt)
    res = prod
    if alpha != 1:
        res *= alpha
    if beta != 0:
        x = input._data
        res += x if beta == 1 else x * beta
    t = _record_bilinear(cls, res, (input, m1, m2), m1, m2)
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.alpha = alpha
        gf.beta = beta
    return t


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to the result.

    Example:
        >>> import ember
        >>> ember.addmm(ember.ones(2), ember.ones(1, 3), ember.ones(3, 2), alpha=2)
        tensor([[7., 7.]])
    """
    _require_tensor(input, "addmm", "input", 1)
    _require_tensor(mat1, "addmm", "mat1", 2)
    _require_tensor(mat2, "addmm", "mat2", 3)
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
    _not_implemented_bool("addmm_impl_cpu_", a.dtype)
    return _out(
        _scaled_result(AddmmBackward0, np.matmul(a, b), input, mat1, mat2, beta, alpha), out
    )


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``."""
    _require_tensor(input, "addmv", "input", 1)
    _require_tensor(mat, "addmv", "mat", 2)
    _require_tensor(vec, "addmv", "vec", 3)
    x, a, v = input._data, mat._data, vec._data
    if not (a.ndim == 2 and v.ndim == 1 and x.ndim <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {x.ndim}, {a.ndim}, {v.ndim}")
    if (a.shape[1] != v.shape[0] or not (x.size == a.shape[0] or x.size == 1)) and x.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    size = x.shape[0] if x.ndim else 1
    _check_mv(a.shape[0], a.shape[1], v.shape[0], a.dtype, v.dtype, size, x.dtype)
    return _out(_scaled_result(AddmvBackward0, np.matmul(a, v), input, mat, vec, beta, alpha), out)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    _require_tensor(input, "baddbmm", "input", 1)
    _require_tensor(batch1, "baddbmm", "batch1", 2)
    _require_tensor(batch2, "baddbmm", "batch2", 3)
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
    return _out(
        _scaled_result(BaddbmmBackward0, np.matmul(a, b), input, batch1, batch2, beta, alpha),
        out,
    )


# -- einsum ----------------------------------------------------------------------------------

_ELL = "..."


def _parse_einsum(equation: str, shapes: list) -> tuple:
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


def _einsum_vjp(g, terms, out_term, ops, shapes, k):
    """Gradient for operand ``k`` of ``einsum(terms -> out_term)``: an einsum of ``g`` with
    the conjugated other operands. Labels repeated in operand ``k`` get identity matrices;
    labels only operand ``k`` has (or has larger than everywhere else) get vectors of ones.

    Works on NumPy arrays, or on Tensors (recorded, for higher-order gradients).
    """
    tk = terms[k]
    shape_k = shapes[k]
    recorded = type(g) is not np.ndarray
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


class _EinsumBackward(Node):
    """einsum's node: the gradient of each operand is an einsum (``_einsum_vjp``).

    torch's einsum records the permute/sum/mul/bmm/view it runs; the subclasses below carry
    the name of the node torch ends with (see ``_einsum_node``).
    """

    __slots__ = ("terms", "out_term", "shapes", "saved_idx")

    def backward(self, g, *saved):
        n = len(self.terms)
        ops = [None] * n
        for i, x in zip(self.saved_idx, saved):
            ops[i] = x
        grads = []
        for k in range(n):
            if self.next_functions[k][0] is None:
                grads.append(None)
            else:
                grads.append(_einsum_vjp(g, self.terms, self.out_term, ops, self.shapes, k))
        return tuple(grads)

    def jvp(self, tangents, inputs, *saved):
        # Multilinear: the sum over operands of the einsum with that operand's tangent.
        eq = ",".join(self.terms) + "->" + self.out_term
        res = None
        for k, tg in enumerate(tangents):
            if tg is not None:
                ops = [tg if j == k else x for j, x in enumerate(inputs)]
                res = add_tangents(res, einsum(eq, *ops))
        return res


_EinsumSum = type("SumBackward1", (_EinsumBackward,), {"__slots__": ()})
_EinsumPermute = type("PermuteBackward0", (_EinsumBackward,), {"__slots__": ()})
_EinsumView = type("ViewBackward0", (_EinsumBackward,), {"__slots__": ()})
_EinsumMul = type("MulBackward0", (_EinsumBackward,), {"__slots__": ()})


def _einsum_node(terms: tuple, out_term: str):
    """torch's last einsum step: one operand is permuted (then summed if labels are
    contracted); several are multiplied pairwise (``mul``, or ``bmm`` and a final ``view``
    when labels are contracted)."""
    contracted = bool(set("".join(terms)) - set(out_term))
    if len(terms) == 1:
        return _EinsumSum if contracted else _EinsumPermute
    return _EinsumView if contracted else _EinsumMul


def _sublist_label(n) -> str:
    if n is Ellipsis:
        return "..."
    if isinstance(n, (int, np.integer)) and 0 <= n < 26:
        return chr(ord("A") + int(n))
    if isinstance(n, (int, np.integer)) and 26 <= n < 52:
        return chr(ord("a") + int(n) - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


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
    shapes = [x._data.shape for x in operands]
    terms, out_term = _parse_einsum(equation, shapes)
    arrays = [x._data for x in operands]
    dt0 = arrays[0].dtype
    for x in arrays[1:]:
        if x.dtype != dt0:
            raise RuntimeError(f"expected scalar type {_sname(dt0)} but found {_sname(x.dtype)}")
    res = _np_einsum(terms, out_term, arrays)
    if len(arrays) == 1 and dt0.kind in "biu" and set(terms[0]) - set(out_term):
        res = res.astype(np.int64)  # one operand's contraction is a ``sum``: ints -> int64
    rg = [x._rg for x in operands]
    n = len(operands)
    # Operand i is needed when some other operand wants a gradient.
    saved_idx = tuple(i for i in range(n) if any(rg[j] for j in range(n) if j != i))
    t = record(
        _einsum_node(terms, out_term), res, tuple(operands), tuple(operands[i] for i in saved_idx)
    )
    node = t.grad_fn or _fw.node
    if node is not None:
        node.terms = terms
        node.out_term = out_term
        node.shapes = tuple(shapes)
        node.saved_idx = saved_idx
    return t


# -- tensordot -------------------------------------------------------------------------------


class _TensordotBackward(_Bilinear):
    """tensordot (and inner): torch's last op is a ``view`` of an ``mm`` (ViewBackward0)."""

    __slots__ = ("eq",)

    def backward(self, g, *saved):
        ra, rb, a, b = self._unpack(saved)
        terms, out_term = self.eq
        ops = (a, b)
        ga = _einsum_vjp(g, terms, out_term, ops, self.shapes, 0) if ra else None
        gb = _einsum_vjp(g, terms, out_term, ops, self.shapes, 1) if rb else None
        return ga, gb

    def _apply(self, a, b):
        terms, out_term = self.eq
        return einsum(",".join(terms) + "->" + out_term, a, b)


_TensordotBackward.__name__ = _TensordotBackward.__qualname__ = "ViewBackward0"


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


def tensordot(a, b, dims=2, out=None):
    """Contract ``dims`` (an int, or two lists of dims) of ``a`` with those of ``b``.

    Example:
        >>> import ember
        >>> ember.tensordot(ember.ones(2, 3, 4), ember.ones(3, 4, 5), dims=2).shape
        torch.Size([2, 5])
    """
    _require_tensor(a, "tensordot", "input", 1)
    _require_tensor(b, "tensordot", "other", 2)
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
    return _out(_tensordot(a, b, dims_a, dims_b), out)


def _tensordot(a: Tensor, b: Tensor, dims_a: list, dims_b: list) -> Tensor:
    x, y = a._data, b._data
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if x.dtype != y.dtype:
        raise RuntimeError("both inputs should have same dtype")
    na, nb = [], []
    sum_a, sum_b = [], []
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
        na.append(ia)
        nb.append(ib)
    for nl in (na, nb):
        seen: set = set()
        for d in nl:
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
    xs = x.sum(axis=tuple(sum_a), keepdims=True, dtype=x.dtype) if sum_a else x
    ys = y.sum(axis=tuple(sum_b), keepdims=True, dtype=y.dtype) if sum_b else y
    res = np.asarray(np.tensordot(xs, ys, axes=(na, nb)))
    if res.dtype != x.dtype:
        res = res.astype(x.dtype)
    t = _record_bilinear(_TensordotBackward, res, (a, b), a, b)
    if (gf := t.grad_fn or _fw.node) is not None:
        la = _LABELS[: x.ndim]
        lb = list(_LABELS[x.ndim : x.ndim + y.ndim])
        for ia, ib in zip(na, nb):
            lb[ib] = la[ia]
        lb = "".join(lb)
        out_term = "".join(la[i] for i in range(x.ndim) if i not in na) + "".join(
            lb[i] for i in range(y.ndim) if i not in nb
        )
        gf.eq = ((la, lb), out_term)
    return t


# -- kron -----------------------------------------------------------------------------------


class _KronBackward(_Bilinear):
    """kron: torch multiplies interleaved reshapes and ends in ``_unsafe_view``."""

    __slots__ = ()

    def backward(self, g, *saved):
        ra, rb, a, b = self._unpack(saved)
        sa, sb = self.shapes
        nd = max(len(sa), len(sb))
        pa = (1,) * (nd - len(sa)) + tuple(sa)
        pb = (1,) * (nd - len(sb)) + tuple(sb)
        inter = tuple(s for pair in zip(pa, pb) for s in pair)
        ta = _LABELS[0 : 2 * nd : 2]
        tb = _LABELS[1 : 2 * nd : 2]
        ops = (None if a is None else a.reshape(pa), None if b is None else b.reshape(pb))
        gi = g.reshape(inter)
        terms, out_term = (ta, tb), _LABELS[: 2 * nd]
        ga = gb = None
        if ra:
            ga = _einsum_vjp(gi, terms, out_term, ops, (pa, pb), 0).reshape(sa)
        if rb:
            gb = _einsum_vjp(gi, terms, out_term, ops, (pa, pb), 1).reshape(sb)
        return ga, gb

    def _apply(self, a, b):
        return kron(a, b)


_KronBackward.__name__ = _KronBackward.__qualname__ = "UnsafeViewBackward0"


def kron(input, other, *, out=None):
    """Kronecker product; dims are matched from the right (missing ones count as 1).

    Example:
        >>> import ember
        >>> ember.kron(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 10.0]))
        tensor([ 1., 10.,  2., 20.])
    """
    _require_tensor(input, "kron", "input", 1)
    _require_tensor(other, "kron", "other", 2)
    a, b = binary_operands(input, other)
    res = np.kron(a, b)
    if res.dtype != a.dtype:
        res = res.astype(a.dtype)
    return _out(_record_bilinear(_KronBackward, res, (input, other), input, other), out)


# -- trace ----------------------------------------------------------------------------------


class TraceBackward0(Node):
    __slots__ = ("shape",)

    def backward(self, g):
        n, m = self.shape
        if type(g) is np.ndarray:
            return np.eye(n, m, dtype=g.dtype) * g
        return g * _wrap(np.eye(n, m, dtype=g._data.dtype))

    def jvp(self, tangents, inputs):
        return trace(tangents[0])


def trace(input):
    """Sum of the main diagonal of a 2-D tensor (integers sum to int64).

    Example:
        >>> import ember
        >>> ember.trace(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor(5.)
    """
    _require_tensor(input, "trace", "input", 1)
    a = input._data
    if a.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {a.ndim}")
    _not_implemented_bool("trace", a.dtype)
    dt = np.dtype(np.int64) if a.dtype.kind in "iu" else a.dtype
    res = np.asarray(np.trace(a, dtype=dt))
    t = record(TraceBackward0, res, (input,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.shape = a.shape
    return t


# -- cross ----------------------------------------------------------------------------------

_CROSS_WARNED = [False]


class LinalgCrossBackward0(Node):
    __slots__ = ("dim", "need")

    def backward(self, g, *saved):
        ra, rb = self.need
        a = saved[0] if rb else None
        b = saved[-1] if ra else None
        d = self.dim
        if type(g) is np.ndarray:
            ga = np.cross(_cj(b), g, axis=d) if ra else None
            gb = np.cross(g, _cj(a), axis=d) if rb else None
        else:
            ga = cross(_cj(b), g, dim=d) if ra else None
            gb = cross(g, _cj(a), dim=d) if rb else None
        return ga, gb

    def jvp(self, tangents, inputs, *saved):
        (ta, tb), (a, b), d = tangents, inputs, self.dim
        return add_tangents(
            None if ta is None else cross(ta, b, dim=d), None if tb is None else cross(a, tb, dim=d)
        )


def cross(input, other, dim=None, *, out=None):
    """Cross product of 3-vectors along ``dim`` (default: the first dim of size 3).

    Example:
        >>> import ember
        >>> ember.cross(ember.tensor([1.0, 0.0, 0.0]), ember.tensor([0.0, 1.0, 0.0]), dim=0)
        tensor([0., 0., 1.])
    """
    _require_tensor(input, "cross", "input", 1)
    _require_tensor(other, "cross", "other", 2)
    a, b = input._data, other._data
    if dim is None:
        if not _CROSS_WARNED[0]:
            _CROSS_WARNED[0] = True
            warnings.warn(
                "Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
                "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of "
                "dim will change to agree with that of linalg.cross in a future release. "
                "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/Cross.cpp:63.)",
                UserWarning,
                stacklevel=2,
            )
        dim = next((i for i, s in enumerate(a.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = normalize_dim(dim, a.ndim)
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
            f"{b.shape[d]}"
        )
    _infer_size(a.shape, b.shape)
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_sname(a.dtype)} but found {_sname(b.dtype)}")
    res = np.cross(a, b, axis=d)
    ra, rb = input._rg, other._rg
    saved = ((input,) if rb else ()) + ((other,) if ra else ())
    t = record(LinalgCrossBackward0, np.asarray(res), (input, other), saved)
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.dim = d
        gf.need = (ra, rb)
    return _out(t, out)


register_methods(
    {
        "matmul": matmul,
        "mm": mm,
        "bmm": bmm,
        "dot": dot,
        "vdot": vdot,
        "mv": mv,
        "outer": outer,
        "ger": ger,
        "inner": inner,
        "addmm": addmm,
        "addmv": addmv,
        "baddbmm": baddbmm,
        "kron": kron,
        "trace": trace,
        "cross": cross,
    }
)

__all__ = [
    "matmul",
    "mm",
    "bmm",
    "dot",
    "vdot",
    "mv",
    "outer",
    "ger",
    "inner",
    "addmm",
    "addmv",
    "baddbmm",
    "einsum",
    "tensordot",
    "kron",
    "trace",
    "cross",
]
