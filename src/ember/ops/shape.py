"""Shape ops: views (reshape, transpose, squeeze, expand, ...), joins, splits and casts.

View ops return NumPy views of the input's array, like torch's views share storage: the
result shares the input's version counter (so an in-place change through either is seen
by saved-tensor checks) and records the root tensor as ``_base``. Copying ops (cat,
repeat, flip, ...) return fresh arrays.

Backward rules receive NumPy arrays, or Tensors when the backward pass is recorded
(``create_graph=True``); rules are written with calls both support (``reshape``,
``squeeze``, ``swapaxes``, ``sum``, basic indexing) or branch on the type.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _legacy_type_name, check_device, device, register_methods
from ._core import normalize_dim, normalize_dims, result_type
from ._legacy import Node, _fw, as_view, record, record_multi

_wrap = Tensor._wrap


# -- helpers ------------------------------------------------------------------------


_as_view = as_view


def _require_tensor(x, fname: str, what: str = "input") -> None:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{fname}(): argument '{what}' (position 1) must be Tensor, not {type(x).__name__}"
        )


def _int(x, fname: str = "", pos: int = 0) -> int:
    if isinstance(x, bool):
        return int(x)
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(
            f"{fname}(): argument 'size' (position 1) must be tuple of ints, but found element "
            f"of type {type(x).__name__} at pos {pos}"
        ) from None


def _size_args(args: tuple, fname: str) -> tuple:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(torch.Size(...))`` -> ``(2, 3)``."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple(_int(a, fname, i) for i, a in enumerate(args))


def _dims_args(args: tuple) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple(operator.index(a) for a in args)


def _infer_shape(shape: tuple, numel: int) -> tuple:
    """Resolve one ``-1`` in ``shape`` as torch's ``infer_size`` does (same error texts)."""
    newsize = 1
    infer = None
    for i, d in enumerate(shape):
        if d == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif d >= 0:
            newsize *= d
        else:
            raise RuntimeError(f"invalid shape dimension {d} at index {i} of shape {list(shape)}")
    if numel == newsize or (infer is not None and newsize > 0 and numel % newsize == 0):
        if infer is not None:
            if newsize == 0:
                raise RuntimeError(
                    f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                    "unspecified dimension size -1 can be any value and is ambiguous"
                )
            shape = shape[:infer] + (numel // newsize,) + shape[infer + 1 :]
        return shape
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


def _nocopy_reshape(a: np.ndarray, shape: tuple):
    """A view of ``a`` with ``shape``, or None when the strides do not allow one."""
    try:
        return np.reshape(a, shape, copy=False)
    except ValueError:
        return None


def _zeros(shape, like):
    """Zeros as an array or a Tensor, matching ``like`` (a gradient)."""
    if not isinstance(like, Tensor):
        return np.zeros(shape, dtype=like.dtype)
    return _wrap(np.zeros(shape, dtype=like._data.dtype))


def _is_arr(g) -> bool:
    """True for a raw gradient (ndarray or NumPy scalar), False for a recorded Tensor."""
    return not isinstance(g, Tensor)


# -- reshape / view -------------------------------------------------------------------


class ViewBackward0(Node):
    __slots__ = ("self_sizes",)

    def backward(self, g):
        return g.reshape(self.self_sizes)

    def jvp(self, tangents, inputs):
        return tangents[0].reshape(self._meta[0][0])


class ReshapeAliasBackward0(ViewBackward0):
    __slots__ = ()


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()


class CloneBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return g

    def jvp(self, tangents, inputs):
        return tangents[0].clone()


class AliasBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return g

    def jvp(self, tangents, inputs):
        return tangents[0]


def _record_view(cls, out: np.ndarray, x: Tensor) -> Tensor:
    t = record(cls, out, (x,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.self_sizes = x._data.shape
    return _as_view(t, x)


def _view_dtype(self: Tensor, d) -> Tensor:
    a = self._data
    nd = _dtype.to_numpy_dtype(d)
    if nd == a.dtype:
        return _as_view(_wrap(a.view()), self)
    if a.ndim == 0 and nd.itemsize != a.itemsize:
        raise RuntimeError(
            "self.dim() cannot be 0 to view "
            f"{self.dtype} as {_dtype.from_numpy_dtype(nd)} (different element sizes)"
        )
    try:
        out = a.view(nd)
    except ValueError:
        raise RuntimeError(
            "self.stride(-1) must be 1 to view "
            f"{self.dtype} as {_dtype.from_numpy_dtype(nd)} (different element sizes), but got "
            f"{self.stride(-1) if a.ndim else 1}"
        ) from None
    return _as_view(_wrap(out), self)


def view(self: Tensor, *shape) -> Tensor:
    """A view with another shape (no copy); torch's error when the strides do not allow it.

    Example:
        >>> import ember
        >>> ember.arange(6).view(2, -1)
        tensor([[0, 1, 2],
                [3, 4, 5]])
    """
    if len(shape) == 1 and isinstance(shape[0], (_dtype.dtype, np.dtype, type)):
        return _view_dtype(self, shape[0])
    try:
        size = _size_args(shape, "view")
    except TypeError:
        got = ", ".join(type(s).__name__ for s in shape)
        raise TypeError(
            f"view() received an invalid combination of arguments - got ({got}), but expected "
            "one of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n"
        ) from None
    a = self._data
    size = _infer_shape(size, a.size)
    out = a.reshape(size) if a.flags.c_contiguous else _nocopy_reshape(a, size)
    if out is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return _record_view(ViewBackward0, out, self)


def _view(self: Tensor, size: tuple) -> Tensor:
    """``view`` for an already-resolved shape known to be viewable."""
    return _record_view(ViewBackward0, np.reshape(self._data, size), self)


def reshape(input: Tensor, *shape) -> Tensor:
    """A tensor with the same data and the given shape: a view when possible, else a copy.

    Example:
        >>> import ember
        >>> ember.reshape(ember.arange(4), (2, 2))
        tensor([[0, 1],
                [2, 3]])
    """
    _require_tensor(input, "reshape")
    size = _infer_shape(_size_args(shape, "reshape"), input._data.size)
    return _reshape(input, size)


def _reshape(input: Tensor, size: tuple) -> Tensor:
    a = input._data
    if a.flags.c_contiguous:
        return _record_view(ViewBackward0, a.reshape(size), input)
    out = _nocopy_reshape(a, size)
    if out is not None:
        return _record_view(ReshapeAliasBackward0, out, input)
    # torch: clone, then an "unsafe view" of the (contiguous) clone, which is not a view
    # of the input.
    c = clone(input, memory_format=_CONTIGUOUS)
    t = record(UnsafeViewBackward0, c._data.reshape(size), (c,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.self_sizes = a.shape
    return t


def view_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.view(other.size())``."""
    return view(self, other._data.shape)


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.reshape(other.size())``."""
    return reshape(self, other._data.shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one.

    Example:
        >>> import ember
        >>> ember.flatten(ember.zeros(2, 3, 4), 1).shape
        torch.Size([2, 12])
    """
    _require_tensor(input, "flatten")
    a = input._data
    s = normalize_dim(start_dim, a.ndim)
    e = normalize_dim(end_dim, a.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if a.ndim == 0:
        return _reshape(input, (1,))
    if s == e:
        return input
    n = 1
    for d in a.shape[s : e + 1]:
        n *= d
    return _reshape(input, a.shape[:s] + (n,) + a.shape[e + 1 :])


def ravel(input: Tensor) -> Tensor:
    """The elements as a 1-D tensor (``contiguous().view(-1)``)."""
    _require_tensor(input, "ravel")
    c = contiguous(input)
    return _view(c, (c._data.size,))


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    """Split dim ``dim`` into ``sizes`` (one entry may be -1).

    Example:
        >>> import ember
        >>> ember.zeros(2, 6).unflatten(1, (2, 3)).shape
        torch.Size([2, 2, 3])
    """
    a = input._data
    d = normalize_dim(dim, a.ndim)
    sizes = _size_args((sizes,), "unflatten")
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    n = a.shape[d] if a.ndim else 1
    known = 1
    for s in sizes:
        if s != -1:
            known *= s
    if (-1 in sizes and (known == 0 or n % known)) or (-1 not in sizes and known != n):
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
            f"({n}) in the input tensor"
        )
    if -1 in sizes:
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    return _view(input, a.shape[:d] + sizes + a.shape[d + 1 :])


# -- squeeze / unsqueeze -----------------------------------------------------------------


class SqueezeBackward0(Node):
    __slots__ = ("self_sizes",)

    def backward(self, g):
        return g.reshape(self.self_sizes)

    def jvp(self, tangents, inputs):
        return tangents[0].reshape(self._meta[0][0])


class SqueezeBackward1(SqueezeBackward0):
    __slots__ = ()


class SqueezeBackward2(SqueezeBackward0):
    __slots__ = ()


def squeeze(input: Tensor, dim=None) -> Tensor:
    """Remove dims of size 1 (all, or only those in ``dim``).

    Example:
        >>> import ember
        >>> ember.zeros(2, 1, 3).squeeze().shape
        torch.Size([2, 3])
    """
    _require_tensor(input, "squeeze")
    a = input._data
    if dim is None:
        cls = SqueezeBackward0
        dims = tuple(i for i, s in enumerate(a.shape) if s == 1)
    elif isinstance(dim, (tuple, list)):
        cls = SqueezeBackward2
        dims = tuple(d for d in normalize_dims(tuple(dim), a.ndim) if a.ndim and a.shape[d] == 1)
    else:
        cls = SqueezeBackward1
        d = normalize_dim(dim, a.ndim)
        dims = (d,) if a.ndim and a.shape[d] == 1 else ()
    shape = tuple(s for i, s in enumerate(a.shape) if i not in dims)
    return _record_view(cls, a.reshape(shape), input)


class UnsqueezeBackward0(Node):
    __slots__ = ("dim",)

    def backward(self, g):
        return g.squeeze(self.dim)

    def jvp(self, tangents, inputs):
        return unsqueeze(tangents[0], self.dim)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dim of size 1 at ``dim``.

    Example:
        >>> import ember
        >>> ember.zeros(3).unsqueeze(0).shape
        torch.Size([1, 3])
    """
    _require_tensor(input, "unsqueeze")
    a = input._data
    d = normalize_dim(dim, a.ndim + 1)
    t = record(UnsqueezeBackward0, a.reshape(a.shape[:d] + (1,) + a.shape[d:]), (input,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.dim = d
    return _as_view(t, input)


def atleast_1d(*tensors):
    """Tensors with at least one dim (0-d ones become shape ``[1]``)."""
    return _atleast(tensors, 1)


def atleast_2d(*tensors):
    """Tensors with at least two dims."""
    return _atleast(tensors, 2)


def atleast_3d(*tensors):
    """Tensors with at least three dims."""
    return _atleast(tensors, 3)


def _atleast(tensors, n: int):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    out = []
    for x in tensors:
        nd = x._data.ndim
        if nd == 0:
            y = _reshape(x, (1,) * n)
        elif nd >= n:
            y = x
        elif n == 2:
            y = unsqueeze(x, 0)
        elif nd == 1:
            y = unsqueeze(unsqueeze(x, 0), -1)
        else:
            y = unsqueeze(x, -1)
        out.append(y)
    return out[0] if single else tuple(out)


# -- transpose / permute -----------------------------------------------------------------


class TransposeBackward0(Node):
    __slots__ = ("dim0", "dim1")

    def backward(self, g):
        if g.ndim == 0:
            return g
        return g.swapaxes(self.dim0, self.dim1)

    def jvp(self, tangents, inputs):
        t = tangents[0]
        return t if t.ndim == 0 else transpose(t, self.dim0, self.dim1)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dims (a view).

    Example:
        >>> import ember
        >>> ember.zeros(2, 3).transpose(0, 1).shape
        torch.Size([3, 2])
    """
    _require_tensor(input, "transpose")
    a = input._data
    d0 = normalize_dim(dim0, a.ndim)
    d1 = normalize_dim(dim1, a.ndim)
    out = a.swapaxes(d0, d1) if a.ndim else a.view()
    t = record(TransposeBackward0, out, (input,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.dim0 = d0
        gf.dim1 = d1
    return _as_view(t, input)


swapaxes = swapdims = transpose


class PermuteBackward0(Node):
    __slots__ = ("dims",)

    def backward(self, g):
        inv = tuple(np.argsort(self.dims).tolist())
        if _is_arr(g):
            return g.transpose(inv)
        return permute(g, inv)

    def jvp(self, tangents, inputs):
        return permute(tangents[0], self.dims)


def permute(input: Tensor, *dims) -> Tensor:
    """Reorder dims (a view).

    Example:
        >>> import ember
        >>> ember.zeros(2, 3, 4).permute(2, 0, 1).shape
        torch.Size([4, 2, 3])
    """
    _require_tensor(input, "permute")
    a = input._data
    dims = _dims_args(dims)
    if len(dims) != a.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{a.ndim} is not equal to len(dims) = {len(dims)}"
        )
    nd = tuple(normalize_dim(d, a.ndim) for d in dims)
    if len(set(nd)) != len(nd):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    t = record(PermuteBackward0, a.transpose(nd), (input,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.dims = nd
    return _as_view(t, input)


class TBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        if g.ndim < 2:
            return g
        return g.swapaxes(0, 1)

    def jvp(self, tangents, inputs):
        return t(tangents[0])


def t(input: Tensor) -> Tensor:
    """Transpose a tensor of at most 2 dims (0-d and 1-d tensors are returned as is).

    Example:
        >>> import ember
        >>> ember.zeros(2, 3).t().shape
        torch.Size([3, 2])
    """
    _require_tensor(input, "t")
    a = input._data
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return _as_view(record(TBackward0, a.T if a.ndim == 2 else a.view(), (input,)), input)


def _T(self: Tensor) -> Tensor:
    nd = self._data.ndim
    if nd == 0:
        warnings.warn(
            "Tensor.T is deprecated on 0-D tensors. This function is the identity in these "
            "cases. (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4321.)",
            UserWarning,
            stacklevel=2,
        )
    elif nd != 2:
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` "
            "to reverse the dimensions of a tensor. (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4314.)",
            UserWarning,
            stacklevel=2,
        )
    return permute(self, tuple(range(nd - 1, -1, -1)))


def _mT(self: Tensor) -> Tensor:
    nd = self._data.ndim
    if nd < 2:
        raise RuntimeError(
            f"tensor.mT is only supported on matrices or batches of matrices. Got {nd}-D tensor."
        )
    return transpose(self, -2, -1)


def movedim(input: Tensor, source, destination) -> Tensor:
    """Move dims ``source`` to positions ``destination`` (a permuted view).

    Example:
        >>> import ember
        >>> ember.zeros(2, 3, 4).movedim(0, -1).shape
        torch.Size([3, 4, 2])
    """
    _require_tensor(input, "movedim")
    nd = input._data.ndim
    src = [source] if not isinstance(source, (tuple, list)) else list(source)
    dst = [destination] if not isinstance(destination, (tuple, list)) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({src} dims) should contain "
            f"the same number of dims as destination ({dst} dims)"
        )
    ns = [normalize_dim(d, nd) for d in src]
    nt = [normalize_dim(d, nd) for d in dst]
    if len(set(ns)) != len(ns):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(nt)) != len(nt):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    order = [d for d in range(nd) if d not in ns]
    perm = [None] * nd
    for s_, d_ in zip(ns, nt):
        perm[d_] = s_
    it = iter(order)
    perm = [p if p is not None else next(it) for p in perm]
    return permute(input, tuple(perm))


moveaxis = movedim


# -- expand / repeat -----------------------------------------------------------------------


class ExpandBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        # The engine sums the gradient back to the input's shape.
        return g

    def jvp(self, tangents, inputs):
        return expand(tangents[0], self._meta[0][0])


def expand(self: Tensor, *sizes) -> Tensor:
    """A broadcast view with the given sizes (-1 keeps a dim).

    Example:
        >>> import ember
        >>> ember.tensor([[1], [2]]).expand(2, 3)
        tensor([[1, 1, 1],
                [2, 2, 2]])
    """
    size = _size_args(sizes, "expand")
    a = self._data
    target = expanded_size(a.shape, size, a.dtype)
    padded = (1,) * (len(target) - a.ndim) + a.shape
    if all(p == s for p, s in zip(padded, target)):
        out = a.reshape(target)  # nothing is broadcast: an ordinary (writable) view
    else:
        out = np.broadcast_to(a, target)
    return _as_view(record(ExpandBackward0, out, (self,)), self)


def expanded_size(shape: tuple, size: tuple, np_dtype) -> tuple:
    """The shape ``expand(size)`` gives a tensor of ``shape`` (-1 keeps a dim), with
    torch's errors when it cannot."""
    if len(size) < len(shape):
        raise RuntimeError(
            f"expand({_legacy_type_name(np_dtype)}{{{list(shape)}}}, size={list(size)}): the "
            f"number of sizes provided ({len(size)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(shape)})"
        )
    lead = len(size) - len(shape)
    target = []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            target.append(s)
            continue
        cur = shape[i - lead]
        if s == -1:
            s = cur
        elif (cur != s and cur != 1) or s < 0:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(size)}.  Tensor sizes: "
                f"{list(shape)}"
            )
        target.append(s)
    return tuple(target)


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.expand(other.size())``."""
    return expand(self, other._data.shape)


def broadcast_to(input: Tensor, size) -> Tensor:
    """``input.expand(size)``.

    Example:
        >>> import ember
        >>> ember.broadcast_to(ember.tensor([1, 2]), (2, 2))
        tensor([[1, 2],
                [1, 2]])
    """
    _require_tensor(input, "broadcast_to")
    return expand(input, size)


def broadcast_tensors(*tensors):
    """Expand tensors to their common broadcast shape (tensors already of it are returned)."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    try:
        shape = np.broadcast_shapes(*(x._data.shape for x in tensors))
    except ValueError:
        raise RuntimeError(_broadcast_error(tensors)) from None
    return tuple(x if x._data.shape == shape else expand(x, shape) for x in tensors)


def _broadcast_error(tensors) -> str:
    shape = tensors[0]._data.shape
    for x in tensors[1:]:
        other = x._data.shape
        n = max(len(shape), len(other))
        a = (1,) * (n - len(shape)) + tuple(shape)
        b = (1,) * (n - len(other)) + tuple(other)
        for k in range(n - 1, -1, -1):
            if a[k] != b[k] and a[k] != 1 and b[k] != 1:
                return (
                    f"The size of tensor a ({a[k]}) must match the size of tensor b ({b[k]}) "
                    f"at non-singleton dimension {k}"
                )
        shape = np.broadcast_shapes(a, b)
    return "shape mismatch"


class RepeatBackward0(Node):
    __slots__ = ("repeats", "self_sizes")

    def backward(self, g):
        reps = self.repeats
        padded = (1,) * (len(reps) - len(self.self_sizes)) + tuple(self.self_sizes)
        inter = []
        for r, s in zip(reps, padded):
            inter += [r, s]
        g = g.reshape(tuple(inter))
        axes = tuple(range(0, 2 * len(reps), 2))
        if axes:
            g = g.sum(axes)
        return g.reshape(self.self_sizes)

    def jvp(self, tangents, inputs):
        return repeat(tangents[0], self.repeats)


def repeat(self: Tensor, *sizes) -> Tensor:
    """Tile the tensor ``sizes[i]`` times along each dim (a copy).

    Example:
        >>> import ember
        >>> ember.tensor([1, 2]).repeat(2)
        tensor([1, 2, 1, 2])
    """
    reps = _size_args(sizes, "repeat")
    a = self._data
    if len(reps) < a.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    for r in reps:
        if r < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {r}: {list(reps)}")
    padded = a.reshape((1,) * (len(reps) - a.ndim) + a.shape)
    out = np.tile(padded, reps) if reps else padded.copy()
    t = record(RepeatBackward0, np.ascontiguousarray(out), (self,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.repeats = reps
        gf.self_sizes = a.shape
    return t


def tile(input: Tensor, dims) -> Tensor:
    """``repeat`` with ``dims`` padded with leading ones to the tensor's rank."""
    _require_tensor(input, "tile")
    dims = _size_args((dims,), "tile")
    nd = input._data.ndim
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    return repeat(input, dims)


# -- cat / stack ---------------------------------------------------------------------------


def _tensor_list(tensors, fname: str) -> list:
    if isinstance(tensors, Tensor):
        raise TypeError(
            f"{fname}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"
        )
    tensors = list(tensors)
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(x).__name__}"
            )
    return tensors


class CatBackward0(Node):
    __slots__ = ("dim", "bounds")

    def backward(self, g):
        lead = (slice(None),) * self.dim
        # Skipped legacy empty inputs get an empty gradient, as in torch.
        return tuple(
            _zeros((0,), g) if b is None else g[lead + (slice(b[0], b[1]),)] for b in self.bounds
        )

    def jvp(self, tangents, inputs):
        dt = self._meta[0][1]
        parts = [
            _wrap(np.zeros(x._data.shape, dt)) if tg is None else tg
            for tg, x in zip(tangents, inputs)
        ]
        return cat(parts, self.dim)


def cat(tensors, dim: int = 0, *, out=None) -> Tensor:
    """Concatenate tensors along an existing dim (with type promotion).

    Example:
        >>> import ember
        >>> ember.cat([ember.tensor([1, 2]), ember.tensor([3.0])])
        tensor([1., 2., 3.])
    """
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, x in enumerate(tensors):
        if x._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    # torch skips 1-D empty tensors (a legacy behaviour) when checking shapes.
    kept = [i for i, x in enumerate(tensors) if not (x._data.ndim == 1 and x._data.shape[0] == 0)]
    dt = result_type(*tensors)
    if not kept:
        res = np.zeros((0,), dtype=dt)
        d = normalize_dim(dim, 1)
        bounds = [(0, 0)] * len(tensors)
    else:
        ref = tensors[kept[0]]._data
        d = normalize_dim(dim, ref.ndim)
        for i in kept:
            a = tensors[i]._data
            if a.ndim != ref.ndim:
                raise RuntimeError(
                    f"Tensors must have same number of dimensions: got {ref.ndim} and {a.ndim}"
                )
            for k in range(ref.ndim):
                if k != d and a.shape[k] != ref.shape[k]:
                    raise RuntimeError(
                        f"Sizes of tensors must match except in dimension {d}. Expected size "
                        f"{ref.shape[k]} but got size {a.shape[k]} for tensor number {i} in the "
                        "list."
                    )
        arrays = [tensors[i]._data for i in kept]
        res = np.concatenate(arrays, axis=d, dtype=dt, casting="unsafe")
        bounds = [None] * len(tensors)
        pos = 0
        for i in kept:
            n = tensors[i]._data.shape[d]
            bounds[i] = (pos, pos + n)
            pos += n
    t = record(CatBackward0, res, tuple(tensors))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.dim = d
        gf.bounds = bounds
    return _out(t, out)


concat = concatenate = cat


def _out(t: Tensor, out):
    if out is None:
        return t
    out._data = t._data.astype(out._data.dtype, copy=False)
    out._bump()
    return out


class StackBackward0(Node):
    __slots__ = ("dim", "n")

    def backward(self, g):
        lead = (slice(None),) * self.dim
        return tuple(g[lead + (i, Ellipsis)] for i in range(self.n))

    def jvp(self, tangents, inputs):
        dt = self._meta[0][1]
        parts = [
            _wrap(np.zeros(x._data.shape, dt)) if tg is None else tg
            for tg, x in zip(tangents, inputs)
        ]
        return stack(parts, self.dim)


def stack(tensors, dim: int = 0, *, out=None) -> Tensor:
    """Join equally shaped tensors along a new dim.

    Example:
        >>> import ember
        >>> ember.stack([ember.tensor([1, 2]), ember.tensor([3, 4])], dim=1)
        tensor([[1, 3],
                [2, 4]])
    """
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tensors[0]._data
    d = normalize_dim(dim, ref.ndim + 1)
    for i, x in enumerate(tensors[1:], 1):
        if x._data.shape != ref.shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(ref.shape)} at entry "
                f"0 and {list(x._data.shape)} at entry {i}"
            )
    dt = result_type(*tensors)
    res = np.stack([x._data for x in tensors], axis=d, dtype=dt, casting="unsafe")
    t = record(StackBackward0, res, tuple(tensors))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.dim = d
        gf.n = len(tensors)
    return _out(t, out)


def hstack(tensors, *, out=None) -> Tensor:
    """Concatenate along dim 1 (dim 0 for 1-D tensors)."""
    tensors = _tensor_list(tensors, "hstack")
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    ts = _atleast(tensors, 1)
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None) -> Tensor:
    """Concatenate along dim 0 after making tensors at least 2-D."""
    tensors = _tensor_list(tensors, "vstack")
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat(_atleast(tensors, 2), 0, out=out)


row_stack = vstack


def dstack(tensors, *, out=None) -> Tensor:
    """Concatenate along dim 2 after making tensors at least 3-D."""
    tensors = _tensor_list(tensors, "dstack")
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return cat(_atleast(tensors, 3), 2, out=out)


# -- split / chunk / unbind ----------------------------------------------------------------


class SplitBackward0(Node):
    __slots__ = ("dim", "shapes")
    _multi_output = True

    def backward(self, grads):
        like = next(g for g in grads if g is not None)
        parts = [_zeros(s, like) if g is None else g for g, s in zip(grads, self.shapes)]
        if _is_arr(like):
            return np.concatenate(parts, axis=self.dim)
        return cat(parts, self.dim)

    def jvp(self, tangents, inputs):
        return list(split_with_sizes(tangents[0], [s[self.dim] for s in self.shapes], self.dim))


class SplitWithSizesBackward0(SplitBackward0):
    __slots__ = ()


def _split_views(cls, input: Tensor, sizes: list, d: int) -> tuple:
    a = input._data
    lead = (slice(None),) * d
    outs = []
    pos = 0
    for n in sizes:
        outs.append(a[lead + (slice(pos, pos + n),)])
        pos += n
    ts = record_multi(cls, outs, (input,))
    if ts and (node := ts[0].grad_fn or _fw.node) is not None:
        node.dim = d
        node.shapes = [o.shape for o in outs]
    for x in ts:
        _as_view(x, input)
    return tuple(ts)


def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Split into chunks of ``split_size`` (the last may be smaller) or of the given sizes.

    Example:
        >>> import ember
        >>> [p.tolist() for p in ember.arange(5).split(2)]
        [[0, 1], [2, 3], [4]]
    """
    _require_tensor(tensor, "split", "tensor")
    a = tensor._data
    if a.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = normalize_dim(dim, a.ndim)
    n = a.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        return split_with_sizes(tensor, split_size_or_sections, d)
    size = operator.index(split_size_or_sections)
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0 and n != 0:
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
        )
    num = max((n + size - 1) // size, 1) if size else 1
    sizes = [size] * num
    sizes[-1] = size - (size * num - n)
    return _split_views(SplitBackward0, tensor, sizes, d)


def split_with_sizes(self: Tensor, split_sizes, dim: int = 0) -> tuple:
    """Split into pieces of the given sizes along ``dim``."""
    a = self._data
    if a.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = normalize_dim(dim, a.ndim)
    sizes = [operator.index(s) for s in split_sizes]
    if any(s < 0 for s in sizes):
        raise RuntimeError(
            "split_with_sizes expects split_sizes have only non-negative entries, but got "
            f"split_sizes={sizes}"
        )
    if sum(sizes) != a.shape[d]:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {a.shape[d]} (input "
            f"tensor's size at dimension {d}), but got split_sizes={sizes}"
        )
    return _split_views(SplitWithSizesBackward0, self, sizes, d)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """Split into ``chunks`` pieces of equal size (the last may be smaller; may be fewer).

    Example:
        >>> import ember
        >>> [p.shape[0] for p in ember.zeros(5).chunk(3)]
        [2, 2, 1]
    """
    _require_tensor(input, "chunk")
    a = input._data
    if a.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    chunks = operator.index(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = normalize_dim(dim, a.ndim)
    n = a.shape[d]
    size = (n + chunks - 1) // chunks
    if size == 0 and n == 0:
        return split_with_sizes(input, [0] * chunks, d)
    return split(input, size, d)


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """Split into ``sections`` nearly equal pieces, or at the given indices (slices)."""
    _require_tensor(input, "tensor_split")
    a = input._data
    if a.ndim == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    d = normalize_dim(dim, a.ndim)
    n = a.shape[d]
    if isinstance(indices_or_sections, Tensor) and indices_or_sections._data.ndim == 0:
        indices_or_sections = int(indices_or_sections.item())
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        bounds = []
        pos = 0
        for i in range(k):
            step = q + (1 if i < r else 0)
            bounds.append((pos, pos + step))
            pos += step
    else:
        idx = indices_or_sections
        if isinstance(idx, Tensor):
            idx = idx._data.tolist()
        idx = [int(i) for i in idx]
        edges = [0] + idx + [n]
        bounds = []
        for s, e in zip(edges[:-1], edges[1:]):
            s = min(max(s + n if s < 0 else s, 0), n)
            e = min(max(e + n if e < 0 else e, 0), n)
            bounds.append((s, max(s, e)))
    return tuple(_slice(input, d, s, e, 1) for s, e in bounds)


class UnbindBackward0(Node):
    __slots__ = ("dim", "shape")
    _multi_output = True

    def backward(self, grads):
        like = next(g for g in grads if g is not None)
        parts = [_zeros(self.shape, like) if g is None else g for g in grads]
        if _is_arr(like):
            return np.stack(parts, axis=self.dim)
        return stack(parts, self.dim)

    def jvp(self, tangents, inputs):
        return list(unbind(tangents[0], self.dim))


def unbind(input: Tensor, dim: int = 0) -> tuple:
    """The slices along ``dim`` as a tuple of views.

    Example:
        >>> import ember
        >>> ember.tensor([[1, 2], [3, 4]]).unbind(1)
        (tensor([1, 3]), tensor([2, 4]))
    """
    _require_tensor(input, "unbind")
    a = input._data
    if a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = normalize_dim(dim, a.ndim)
    lead = (slice(None),) * d
    outs = [a[lead + (i, Ellipsis)] for i in range(a.shape[d])]
    ts = record_multi(UnbindBackward0, outs, (input,))
    if ts and (gf := ts[0].grad_fn or _fw.node) is not None:
        gf.dim = d
        gf.shape = outs[0].shape
    for x in ts:
        _as_view(x, input)
    return tuple(ts)


# -- narrow / slice ------------------------------------------------------------------------


class SliceBackward0(Node):
    __slots__ = ("dim", "start", "end", "step", "self_sizes")

    def backward(self, g):
        if _is_arr(g):
            z = np.zeros(self.self_sizes, dtype=g.dtype)
            z[(slice(None),) * self.dim + (slice(self.start, self.end, self.step),)] = g
            return z
        from .indexing import slice_scatter

        z = _zeros(self.self_sizes, g)
        return slice_scatter(z, g, self.dim, self.start, self.end, self.step)

    def jvp(self, tangents, inputs):
        return _slice(tangents[0], self.dim, self.start, self.end, self.step)


def _slice(input: Tensor, d: int, start: int, end: int, step: int) -> Tensor:
    """The view ``input[..., start:end:step, ...]`` at dim ``d`` (bounds already clamped)."""
    a = input._data
    out = a[(slice(None),) * d + (slice(start, end, step),)]
    t = record(SliceBackward0, out, (input,))
    if (node := t.grad_fn or _fw.node) is not None:
        node.dim, node.start, node.end, node.step = d, start, end, step
        node.self_sizes = a.shape
    return _as_view(t, input)


def narrow(input: Tensor, dim: int, start, length: int) -> Tensor:
    """The view of ``length`` elements from ``start`` along ``dim``.

    Example:
        >>> import ember
        >>> ember.arange(5).narrow(0, 1, 3)
        tensor([1, 2, 3])
    """
    _require_tensor(input, "narrow")
    a = input._data
    if a.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    length = operator.index(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = normalize_dim(dim, a.ndim)
    n = a.shape[d]
    start = operator.index(start)
    if not -n <= start <= n:
        raise IndexError(
            f"start out of range (expected to be in range of [{-n}, {n}], but got {start})"
        )
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return _slice(input, d, start, start + length, 1)


# -- flip / roll ---------------------------------------------------------------------------


class FlipBackward0(Node):
    __slots__ = ("dims",)

    def backward(self, g):
        if g.ndim == 0 or not self.dims:
            return g
        if _is_arr(g):
            return np.flip(g, self.dims)
        return flip(g, self.dims)

    def jvp(self, tangents, inputs):
        return flip(tangents[0], self.dims)


def flip(input: Tensor, *dims) -> Tensor:
    """Reverse the order of elements along ``dims`` (a copy).

    Example:
        >>> import ember
        >>> ember.tensor([1, 2, 3]).flip(0)
        tensor([3, 2, 1])
    """
    _require_tensor(input, "flip")
    dims = _dims_args(dims)
    a = input._data
    nd = normalize_dims(dims, a.ndim)
    out = np.flip(a, nd).copy() if nd and a.ndim else a.copy()
    t = record(FlipBackward0, out, (input,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.dims = nd
    return t


def fliplr(input: Tensor) -> Tensor:
    """Flip dim 1."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    """Flip dim 0."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


class RollBackward0(Node):
    __slots__ = ("shifts", "dims")

    def backward(self, g):
        neg = tuple(-s for s in self.shifts)
        if g.ndim == 0:
            return g
        if _is_arr(g):
            return np.roll(g, neg, self.dims) if self.dims is not None else np.roll(g, neg[0])
        return roll(g, neg, self.dims)

    def jvp(self, tangents, inputs):
        return roll(tangents[0], self.shifts, self.dims)


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Rotate elements along ``dims`` (or the flattened tensor) by ``shifts`` (a copy).

    Example:
        >>> import ember
        >>> ember.tensor([1, 2, 3]).roll(1)
        tensor([3, 1, 2])
    """
    _require_tensor(input, "roll")
    a = input._data
    sh = tuple(
        operator.index(s) for s in (shifts if isinstance(shifts, (tuple, list)) else (shifts,))
    )
    if dims is None:
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
        nd = None
        out = np.roll(a, sh[0])
    else:
        dl = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
        if len(sh) != len(dl):
            raise RuntimeError(
                f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(dl)}"
            )
        if a.ndim == 0:
            raise IndexError(f"Dimension specified as {dl[0]} but tensor has no dimensions")
        nd = tuple(normalize_dim(d, a.ndim) for d in dl)
        out = np.roll(a, sh, nd) if a.ndim else a.copy()
    t = record(RollBackward0, out, (input,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.shifts = sh
        gf.dims = nd
    return t


# -- copies and casts ----------------------------------------------------------------------

_CONTIGUOUS = "torch.contiguous_format"


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy with its own storage (the gradient flows back unchanged).

    Example:
        >>> import ember
        >>> ember.tensor([1.0, 2.0]).clone()
        tensor([1., 2.])
    """
    _require_tensor(input, "clone")
    a = input._data
    order = "C" if memory_format is not None and str(memory_format) == _CONTIGUOUS else "K"
    return record(CloneBackward0, a.copy(order=order), (input,))


def contiguous(self: Tensor, memory_format=None) -> Tensor:
    """Self if already C-contiguous, else a contiguous copy (CloneBackward0)."""
    if self._data.flags.c_contiguous:
        return self
    return record(CloneBackward0, np.ascontiguousarray(self._data), (self,))


class ToCopyBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        # The engine casts the gradient back to the input's dtype.
        return g

    def jvp(self, tangents, inputs):
        return _cast(tangents[0], self._meta[0][1])


def _legacy_dtype(name: str):
    from .._tensor import _LEGACY_NAMES

    for np_name, legacy in _LEGACY_NAMES.items():
        if legacy == name:
            return np.dtype(np_name)
    return None


def _np_dtype_of(d):
    """A dtype argument of ``to``/``type`` as a NumPy dtype (None if ``d`` is no dtype)."""
    if isinstance(d, _dtype.dtype):
        return d.np
    if d is float:
        return np.dtype(np.float64)
    if d is int:
        return np.dtype(np.int64)
    if d is bool:
        return np.dtype(np.bool_)
    if d is complex:
        return np.dtype(np.complex128)
    if isinstance(d, np.dtype):
        return d
    if isinstance(d, type) and issubclass(d, np.generic):
        return np.dtype(d)
    if isinstance(d, str):
        return _legacy_dtype(d)
    return None


def _cast(self: Tensor, np_dt, copy: bool = False) -> Tensor:
    a = self._data
    if a.dtype == np_dt and not copy:
        return self
    from_numpy = _dtype.from_numpy_dtype  # raises for unsupported dtypes
    from_numpy(np_dt)
    return record(ToCopyBackward0, a.astype(np_dt), (self,))


def to(self: Tensor, *args, **kwargs) -> Tensor:
    """Cast (and "move", ember being CPU-only): ``to(dtype)``, ``to(device[, dtype])``,
    ``to(other)``; returns self when nothing changes unless ``copy=True``.

    Example:
        >>> import ember
        >>> ember.tensor([1, 2]).to(ember.float64)
        tensor([1., 2.], dtype=torch.float64)
    """
    copy = bool(kwargs.pop("copy", False))
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    target = None
    dev = kwargs.pop("device", None)
    if "dtype" in kwargs:
        target = _np_dtype_of(kwargs.pop("dtype"))
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    args = list(args)
    if args and isinstance(args[0], Tensor):
        other = args.pop(0)
        target = other._data.dtype
    flags = [a for a in args if isinstance(a, bool)]  # (non_blocking, copy) positionally
    if len(flags) > 1:
        copy = copy or flags[1]
    for arg in args:
        if isinstance(arg, bool):
            continue
        nd = _np_dtype_of(arg)
        if nd is not None:
            target = nd
        elif isinstance(arg, int):
            dev = f"cuda:{arg}"  # a device ordinal means CUDA in torch
        elif isinstance(arg, (str, device)):
            dev = arg
        elif arg is not None:
            raise TypeError(
                "to() received an invalid combination of arguments - got "
                f"({type(arg).__name__}), but expected one of:\n * (torch.device device = None, "
                "torch.dtype dtype = None, bool non_blocking = False, bool copy = False, *, "
                "torch.memory_format memory_format = None)"
            )
    if dev is not None:
        check_device(dev)  # ember is CPU-only: torch's CPU-build error otherwise
    if target is None:
        return _cast(self, self._data.dtype, copy)
    return _cast(self, target, copy)


def type_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.to(other.dtype)``."""
    return _cast(self, other._data.dtype)


def _caster(np_dt):
    def method(self: Tensor, memory_format=None) -> Tensor:
        return _cast(self, np.dtype(np_dt))

    method.__doc__ = f"``self.to({np.dtype(np_dt).name})`` (self if already that dtype)."
    return method


__all__ = [
    "reshape",
    "flatten",
    "ravel",
    "unflatten",
    "squeeze",
    "unsqueeze",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "transpose",
    "swapaxes",
    "swapdims",
    "permute",
    "t",
    "movedim",
    "moveaxis",
    "broadcast_to",
    "broadcast_tensors",
    "tile",
    "cat",
    "concat",
    "concatenate",
    "stack",
    "hstack",
    "vstack",
    "row_stack",
    "dstack",
    "split",
    "split_with_sizes",
    "chunk",
    "tensor_split",
    "unbind",
    "narrow",
    "flip",
    "fliplr",
    "flipud",
    "roll",
    "clone",
]

register_methods(
    {
        "view": view,
        "view_as": view_as,
        "reshape": reshape,
        "reshape_as": reshape_as,
        "flatten": flatten,
        "ravel": ravel,
        "unflatten": unflatten,
        "squeeze": squeeze,
        "unsqueeze": unsqueeze,
        "transpose": transpose,
        "swapaxes": transpose,
        "swapdims": transpose,
        "permute": permute,
        "t": t,
        "T": property(_T),
        "mT": property(_mT),
        "movedim": movedim,
        "moveaxis": movedim,
        "expand": expand,
        "expand_as": expand_as,
        "broadcast_to": broadcast_to,
        "repeat": repeat,
        "tile": tile,
        "split": split,
        "split_with_sizes": split_with_sizes,
        "chunk": chunk,
        "tensor_split": tensor_split,
        "unbind": unbind,
        "narrow": narrow,
        "flip": flip,
        "fliplr": fliplr,
        "flipud": flipud,
        "roll": roll,
        "clone": clone,
        "contiguous": contiguous,
        "to": to,
        "type_as": type_as,
        "float": _caster(np.float32),
        "double": _caster(np.float64),
        "half": _caster(np.float16),
        "long": _caster(np.int64),
        "int": _caster(np.int32),
        "short": _caster(np.int16),
        "char": _caster(np.int8),
        "byte": _caster(np.uint8),
        "bool": _caster(np.bool_),
        "cfloat": _caster(np.complex64),
        "cdouble": _caster(np.complex128),
    }
)
