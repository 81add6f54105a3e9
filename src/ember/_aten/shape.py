"""Shape ops: views (reshape, transpose, squeeze, expand, ...), joins, splits and casts.

Each differentiable op is one ``defop`` declaration, with torch's node name, next to its
public function. View ops return NumPy views of the input's array, as torch's views share
storage: they are declared ``view=True``, so the result shares the input's version counter
(an in-place change through either is seen by saved-tensor checks) and records the root
tensor as ``_base``. Copying ops (cat, repeat, flip, ...) return fresh arrays.

Every op here is linear, so forward mode is the op applied to the tangents (``LINEAR``):
the tangent of a view is then a view of the input's tangent, as in torch. Rules read only
parameters (shapes, dims), never the operands, so nothing is saved and modifying an input
in place never invalidates these nodes. A rule runs on arrays in a plain backward and on
Tensors in a recorded one (``create_graph=True``): it is written with the calls both
support (``reshape``, ``squeeze``, ``swapaxes``, ``sum``, basic indexing) or branches with
``is_raw`` to the ember op.

split and unbind make as many outputs as there are pieces: their nodes declare two output
names (which makes them multi-output nodes) and take every output as differentiable.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import _dtype
from .._alloc import raise_alloc_error
from .._meta import NO_DATA, MetaArray, meta_empty
from .._overrides import warn as _warn
from .._tensor import _LEGACY_NAMES, Tensor, _legacy_type_name, check_device, device
from ..autograd.graph import Node
from ..autograd.views import ViewBackward0
from ._core import (
    LINEAR,
    as_int,
    as_view,
    defop,
    is_raw,
    normalize_dim,
    normalize_dims,
    record,
    record_multi,
    register,
    register_methods,
    require_tensor,
    result_type,
    write_out,
)

_wrap = Tensor._wrap


# -- helpers ------------------------------------------------------------------------


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


# ``np.reshape(..., copy=False)`` is NumPy 2.1+; the declared minimum is 2.0.
_RESHAPE_HAS_COPY = np.lib.NumpyVersion(np.__version__) >= "2.1.0"


def _nocopy_reshape(a: np.ndarray, shape: tuple):
    """A view of ``a`` with ``shape``, or None when the strides do not allow one."""
    if not _RESHAPE_HAS_COPY:
        # NumPy 2.0: setting a view's shape never copies, it raises instead.
        out = a.view()
        try:
            out.shape = shape
        except AttributeError:
            return None
        return out
    try:
        return np.reshape(a, shape, copy=False)
    except ValueError:
        return None


def _zeros(shape, like):
    """Zeros as an array or a Tensor, matching ``like`` (a gradient)."""
    if is_raw(like):
        return np.zeros(shape, dtype=like.dtype)
    return _wrap(np.zeros(shape, dtype=like._data.dtype))


def _sizes_back(g, self_sym_sizes):
    """The gradient of a reshape: ``g`` seen with the input's shape."""
    return g.reshape(self_sym_sizes)


# Output names of the nodes with one output per piece (split, unbind): two names make a
# multi-output node; ``_any_number_of_outputs`` then takes every output as differentiable.
_PIECES = ("result0", "result1")


def _any_number_of_outputs(cls):
    cls._differentiable = Node._differentiable  # every output, however many
    return cls


# -- reshape / view -------------------------------------------------------------------
# ViewBackward0 (autograd.views) is a view with the same data in another shape; torch's
# reshape of a non-contiguous tensor is an alias when the strides allow, else a contiguous
# copy seen with the new shape ("unsafe view": not a view of the input).


def _bdim(d: int) -> int:
    """A logical dim of a batched tensor (non-negative ones move right by the batch dim)."""
    return d + 1 if d >= 0 else d


def _brows(x: Tensor, size) -> tuple:
    """``size`` with the batch dimension of ``x`` in front."""
    return (x.shape[0],) + tuple(size)


ReshapeAliasBackward0 = defop(
    "ReshapeAliasBackward0",
    batch=lambda x, sizes, size: x.reshape(_brows(x, size)),
    params=("self_sym_sizes", "size"),
    forward=lambda a, self_sym_sizes, size: a.reshape(size),
    vjp={"self": _sizes_back},
    jvp=LINEAR,
    view=True,
)

UnsafeViewBackward0 = defop(
    "UnsafeViewBackward0",
    batch=lambda x, sizes, size: x.reshape(_brows(x, size)),
    params=("self_sym_sizes", "size"),
    forward=lambda a, self_sym_sizes, size: a.reshape(size),
    vjp={"self": _sizes_back},
    jvp=LINEAR,
)


def _view_dtype(self: Tensor, d) -> Tensor:
    a = self._data
    nd = _dtype.to_numpy_dtype(d)
    if nd == a.dtype:
        return as_view(_wrap(a.view()), self)
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
    return as_view(_wrap(out), self)


@register("view", method=True, function=False)
def view(self: Tensor, *shape, **kwargs) -> Tensor:
    """A view with another shape (no copy); torch's error when the strides do not allow it.
    ``view(dtype)`` reinterprets the bytes; ``size=`` and ``dtype=`` may be keywords.

    Example:
        >>> import ember
        >>> ember.arange(6).view(2, -1)
        tensor([[0, 1, 2],
                [3, 4, 5]])
    """
    if kwargs:
        shape = _view_keywords(shape, kwargs)
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
    return record(ViewBackward0, out, (self,), (a.shape, size))


def _view_keywords(shape: tuple, kwargs: dict) -> tuple:
    """``view(size=...)`` or ``view(dtype=...)`` as the positional form; torch's error for
    other combinations."""
    if not shape and len(kwargs) == 1 and kwargs.keys() <= {"size", "dtype"}:
        (value,) = kwargs.values()
        if "dtype" in kwargs or isinstance(value, (tuple, list)):
            return (value,)
        raise TypeError(
            f"view() received an invalid combination of arguments - got (size="
            f"{type(value).__name__}, ), but expected one of:\n * (torch.dtype dtype)\n"
            "      didn't match because some of the keywords were incorrect: size\n"
            " * (tuple of ints size)\n      didn't match because some of the arguments have "
            f"invalid types: (!size={type(value).__name__}!, )\n"
        )

    def kind(v) -> str:
        return "torch.dtype" if isinstance(v, _dtype.dtype) else type(v).__name__

    got = ", ".join(kind(v) for v in shape)
    named = "".join(f"{k}={kind(v)}, " for k, v in sorted(kwargs.items()))
    got = f"{got}, {named[:-2]}" if got else named
    unknown = ", ".join(k for k in kwargs if k not in ("size", "dtype"))
    why = f"\n      didn't match because some of the keywords were incorrect: {unknown}"
    why = why if unknown else ""
    raise TypeError(
        f"view() received an invalid combination of arguments - got ({got}), but expected "
        f"one of:\n * (torch.dtype dtype){why}\n * (tuple of ints size){why}\n"
    )


def _view(self: Tensor, size: tuple) -> Tensor:
    """``view`` for an already-resolved shape known to be viewable."""
    a = self._data
    return record(ViewBackward0, a.reshape(size), (self,), (a.shape, size))


@register("reshape", method=True)
def reshape(input: Tensor, *shape) -> Tensor:
    """A tensor with the same data and the given shape: a view when possible, else a copy.

    Example:
        >>> import ember
        >>> ember.reshape(ember.arange(4), (2, 2))
        tensor([[0, 1],
                [2, 3]])
    """
    require_tensor(input, "reshape")
    size = _infer_shape(_size_args(shape, "reshape"), input._data.size)
    return _reshape(input, size)


def _reshape(input: Tensor, size: tuple) -> Tensor:
    a = input._data
    if a.flags.c_contiguous:
        return record(ViewBackward0, a.reshape(size), (input,), (a.shape, size))
    out = _nocopy_reshape(a, size)
    if out is not None:
        return record(ReshapeAliasBackward0, out, (input,), (a.shape, size))
    # torch: clone, then an "unsafe view" of the (contiguous) clone, which is not a view
    # of the input.
    c = clone(input, memory_format=_CONTIGUOUS)
    return record(UnsafeViewBackward0, c._data.reshape(size), (c,), (a.shape, size))


@register("view_as", method=True, function=False)
def view_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.view(other.size())``.

    Example:
        >>> import ember
        >>> ember.arange(6).view_as(ember.zeros(2, 3))
        tensor([[0, 1, 2],
                [3, 4, 5]])
    """
    return view(self, other._data.shape)


@register("reshape_as", method=True, function=False)
def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.reshape(other.size())``.

    Example:
        >>> import ember
        >>> ember.arange(4).reshape_as(ember.zeros(2, 2))
        tensor([[0, 1],
                [2, 3]])
    """
    return reshape(self, other._data.shape)


@register("flatten", method=True)
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one.

    Example:
        >>> import ember
        >>> ember.flatten(ember.zeros(2, 3, 4), 1).shape
        torch.Size([2, 12])
    """
    require_tensor(input, "flatten")
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


@register("ravel", method=True)
def ravel(input: Tensor) -> Tensor:
    """The elements as a 1-D tensor (``contiguous().view(-1)``).

    Example:
        >>> import ember
        >>> ember.ravel(ember.tensor([[1, 2], [3, 4]]))
        tensor([1, 2, 3, 4])
    """
    require_tensor(input, "ravel")
    c = contiguous(input)
    return _view(c, (c._data.size,))


@register("unflatten", method=True)
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


def _squeeze_array(a: np.ndarray, dims: tuple) -> np.ndarray:
    """``a`` without those of the (normalized) ``dims`` that have size 1."""
    return a.squeeze(tuple(d for d in dims if a.shape[d] == 1) if a.ndim else ())


SqueezeBackward0 = defop(  # squeeze()
    "SqueezeBackward0",
    batch=lambda x, sizes: x.reshape(_brows(x, [n for n in sizes if n != 1])),
    params=("self_sym_sizes",),
    forward=lambda a, self_sym_sizes: a.squeeze(),
    vjp={"self": _sizes_back},
    jvp=LINEAR,
    view=True,
)

SqueezeBackward1 = defop(  # squeeze(dim)
    "SqueezeBackward1",
    batch=lambda x, dim, sizes: x.reshape(
        _brows(
            x,
            [
                n
                for i, n in enumerate(sizes)
                if not (i in (dim if isinstance(dim, tuple) else (dim,)) and n == 1)
            ],
        )
    ),
    params=("dim", "self_sym_sizes"),
    forward=lambda a, dim, self_sym_sizes: _squeeze_array(a, (dim,)),
    vjp={"self": _sizes_back},
    jvp=LINEAR,
    view=True,
)

SqueezeBackward2 = defop(  # squeeze(dims)
    "SqueezeBackward2",
    params=("dim", "self_sym_sizes"),
    forward=lambda a, dim, self_sym_sizes: _squeeze_array(a, dim),
    vjp={"self": _sizes_back},
    jvp=LINEAR,
    view=True,
)


@register("squeeze", method=True)
def squeeze(input: Tensor, dim=None) -> Tensor:
    """Remove dims of size 1 (all, or only those in ``dim``).

    Example:
        >>> import ember
        >>> ember.zeros(2, 1, 3).squeeze().shape
        torch.Size([2, 3])
    """
    require_tensor(input, "squeeze")
    a = input._data
    if dim is None:
        return record(SqueezeBackward0, a.squeeze(), (input,), (a.shape,))
    if isinstance(dim, (tuple, list)):
        dims = normalize_dims(tuple(dim), a.ndim)
        return record(SqueezeBackward2, _squeeze_array(a, dims), (input,), (dims, a.shape))
    d = normalize_dim(dim, a.ndim)
    return record(SqueezeBackward1, _squeeze_array(a, (d,)), (input,), (d, a.shape))


def _unsqueeze_array(a: np.ndarray, dim: int) -> np.ndarray:
    return a.reshape(a.shape[:dim] + (1,) + a.shape[dim:])


UnsqueezeBackward0 = defop(
    "UnsqueezeBackward0",
    batch=lambda x, dim: x.unsqueeze(_bdim(dim)),
    params=("dim",),
    forward=_unsqueeze_array,
    vjp={"self": lambda g, dim: g.squeeze(dim)},
    jvp=LINEAR,
    view=True,
)


@register("unsqueeze", method=True)
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dim of size 1 at ``dim``.

    Example:
        >>> import ember
        >>> ember.zeros(3).unsqueeze(0).shape
        torch.Size([1, 3])
    """
    require_tensor(input, "unsqueeze")
    a = input._data
    d = normalize_dim(dim, a.ndim + 1)
    return record(UnsqueezeBackward0, a.reshape(a.shape[:d] + (1,) + a.shape[d:]), (input,), (d,))


@register("atleast_1d")
def atleast_1d(*tensors):
    """Tensors with at least one dim (0-d ones become shape ``[1]``).

    Example:
        >>> import ember
        >>> ember.atleast_1d(ember.tensor(1.5))
        tensor([1.5000])
    """
    return _atleast(tensors, 1)


@register("atleast_2d")
def atleast_2d(*tensors):
    """Tensors with at least two dims.

    Example:
        >>> import ember
        >>> ember.atleast_2d(ember.tensor([1, 2]))
        tensor([[1, 2]])
    """
    return _atleast(tensors, 2)


@register("atleast_3d")
def atleast_3d(*tensors):
    """Tensors with at least three dims.

    Example:
        >>> import ember
        >>> ember.atleast_3d(ember.tensor([1, 2])).shape
        torch.Size([1, 2, 1])
    """
    return _atleast(tensors, 3)


def _atleast(tensors, n: int):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    out = _atleast_each(tensors, n)
    return out[0] if single else tuple(out)


def _atleast_each(tensors, n: int) -> list:
    """Each tensor with at least ``n`` dims."""
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
    return out


# -- transpose / permute -----------------------------------------------------------------


def _swap(a, dim0: int, dim1: int):
    """Dims ``dim0`` and ``dim1`` of an array or a Tensor swapped (a 0-d one as it is)."""
    return a.swapaxes(dim0, dim1) if a.ndim else a


TransposeBackward0 = defop(
    "TransposeBackward0",
    batch=lambda x, dim0, dim1: x.transpose(_bdim(dim0), _bdim(dim1)) if x.dim() > 1 else x,
    params=("dim0", "dim1"),
    forward=lambda a, dim0, dim1: a.swapaxes(dim0, dim1) if a.ndim else a.view(),
    vjp={"self": _swap},
    jvp=LINEAR,
    view=True,
)


@register("transpose", "swapaxes", "swapdims", method=True)
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dims (a view).

    Example:
        >>> import ember
        >>> ember.zeros(2, 3).transpose(0, 1).shape
        torch.Size([3, 2])
    """
    require_tensor(input, "transpose")
    a = input._data
    d0 = normalize_dim(dim0, a.ndim)
    d1 = normalize_dim(dim1, a.ndim)
    out = a.swapaxes(d0, d1) if a.ndim else a.view()
    return record(TransposeBackward0, out, (input,), (d0, d1))


swapaxes = swapdims = transpose


def _permute_backward(g, dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return g.transpose(inverse) if is_raw(g) else permute(g, tuple(inverse))


PermuteBackward0 = defop(
    "PermuteBackward0",
    batch=lambda x, dims: x.permute((0,) + tuple(d % (x.dim() - 1) + 1 for d in dims)),
    params=("dims",),
    forward=lambda a, dims: a.transpose(dims),
    vjp={"self": _permute_backward},
    jvp=LINEAR,
    view=True,
)


@register("permute", method=True)
def permute(input: Tensor, *dims) -> Tensor:
    """Reorder dims (a view).

    Example:
        >>> import ember
        >>> ember.zeros(2, 3, 4).permute(2, 0, 1).shape
        torch.Size([4, 2, 3])
    """
    require_tensor(input, "permute")
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
    return record(PermuteBackward0, a.transpose(nd), (input,), (nd,))


TBackward0 = defop(
    "TBackward0",
    batch=lambda x: x.transpose(1, 2) if x.dim() == 3 else x,
    forward=lambda a: a.T if a.ndim == 2 else a.view(),
    vjp={"self": lambda g: g.swapaxes(0, 1) if g.ndim == 2 else g},
    jvp=LINEAR,
    view=True,
)


@register("t", method=True)
def t(input: Tensor) -> Tensor:
    """Transpose a tensor of at most 2 dims (0-d and 1-d tensors are returned as is).

    Example:
        >>> import ember
        >>> ember.zeros(2, 3).t().shape
        torch.Size([3, 2])
    """
    require_tensor(input, "t")
    a = input._data
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return record(TBackward0, a.T if a.ndim == 2 else a.view(), (input,))


def _T(self: Tensor) -> Tensor:
    """The tensor with its dimensions reversed: the transpose of a matrix (a view).

    Example:
        >>> import ember
        >>> ember.tensor([[1, 2], [3, 4]]).T
        tensor([[1, 3],
                [2, 4]])
    """
    nd = self._data.ndim
    if nd == 0:
        _warn(
            "Tensor.T is deprecated on 0-D tensors. This function is the identity in these "
            "cases. (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4321.)",
            UserWarning,
            stacklevel=2,
        )
    elif nd != 2:
        _warn(
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
    """Each matrix of a batch transposed: the last two dimensions swapped (a view).

    Example:
        >>> import ember
        >>> ember.zeros(2, 3, 4).mT.shape
        torch.Size([2, 4, 3])
    """
    nd = self._data.ndim
    if nd < 2:
        raise RuntimeError(
            f"tensor.mT is only supported on matrices or batches of matrices. Got {nd}-D tensor."
        )
    return transpose(self, -2, -1)


@register("movedim", "moveaxis", method=True)
def movedim(input: Tensor, source, destination) -> Tensor:
    """Move dims ``source`` to positions ``destination`` (a permuted view).

    Example:
        >>> import ember
        >>> ember.zeros(2, 3, 4).movedim(0, -1).shape
        torch.Size([3, 4, 2])
    """
    require_tensor(input, "movedim")
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


def _expand_array(a: np.ndarray, size: tuple) -> np.ndarray:
    """``a`` broadcast to ``size``: an ordinary (writable) view when nothing is broadcast."""
    if (1,) * (len(size) - a.ndim) + a.shape == size:
        return a.reshape(size)
    return np.broadcast_to(a, size)


ExpandBackward0 = defop(  # the engine sums the gradient back to the input's shape
    "ExpandBackward0",
    batch=lambda x, sizes, size: x.reshape(
        _brows(x, (1,) * (len(size) - len(sizes)) + tuple(sizes))
    ).expand(_brows(x, size)),
    params=("self_sym_sizes", "size"),
    forward=lambda a, self_sym_sizes, size: _expand_array(a, size),
    vjp={"self": lambda g: g},
    jvp=LINEAR,
    view=True,
)


@register("expand", method=True, function=False)
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
    return record(ExpandBackward0, _expand_array(a, target), (self,), (a.shape, target))


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


@register("expand_as", method=True, function=False)
def expand_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.expand(other.size())``.

    Example:
        >>> import ember
        >>> ember.tensor([1, 2]).expand_as(ember.zeros(2, 2))
        tensor([[1, 2],
                [1, 2]])
    """
    return expand(self, other._data.shape)


@register("broadcast_to", method=True)
def broadcast_to(input: Tensor, size) -> Tensor:
    """``input.expand(size)``.

    Example:
        >>> import ember
        >>> ember.broadcast_to(ember.tensor([1, 2]), (2, 2))
        tensor([[1, 2],
                [1, 2]])
    """
    require_tensor(input, "broadcast_to")
    return expand(input, size)


@register("broadcast_tensors")
def broadcast_tensors(*tensors):
    """Expand tensors to their common broadcast shape (tensors already of it are returned).

    Example:
        >>> import ember
        >>> a, b = ember.broadcast_tensors(ember.tensor([[1], [2]]), ember.tensor([10, 20]))
        >>> a
        tensor([[1, 1],
                [2, 2]])
        >>> b
        tensor([[10, 20],
                [10, 20]])
    """
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


def _repeat_array(a: np.ndarray, repeats: tuple) -> np.ndarray:
    padded = a.reshape((1,) * (len(repeats) - a.ndim) + a.shape)
    return np.ascontiguousarray(np.tile(padded, repeats) if repeats else padded.copy())


def _repeat_backward(g, repeats, self_sym_sizes):
    """Each copy's gradient summed: ``g`` seen as (repeat, size) pairs, summed over repeats."""
    padded = (1,) * (len(repeats) - len(self_sym_sizes)) + tuple(self_sym_sizes)
    pairs = []
    for r, s in zip(repeats, padded):
        pairs += [r, s]
    g = g.reshape(tuple(pairs))
    if repeats:
        g = g.sum(tuple(range(0, 2 * len(repeats), 2)))
    return g.reshape(self_sym_sizes)


RepeatBackward0 = defop(
    "RepeatBackward0",
    params=("repeats", "self_sym_sizes"),
    forward=lambda a, repeats, self_sym_sizes: _repeat_array(a, repeats),
    vjp={"self": _repeat_backward},
    jvp=LINEAR,
)


@register("repeat", method=True, function=False)
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
    try:
        out = _repeat_array(a, reps)
    except (MemoryError, ValueError) as e:  # torch's RuntimeError for a size it cannot allocate
        padded = (1,) * (len(reps) - a.ndim) + a.shape
        raise_alloc_error([r * s for r, s in zip(reps, padded)], a.dtype, e)
    return record(RepeatBackward0, out, (self,), (reps, a.shape))


@register("tile", method=True)
def tile(input: Tensor, dims) -> Tensor:
    """``repeat`` with ``dims`` padded with leading ones to the tensor's rank.

    Example:
        >>> import ember
        >>> ember.tile(ember.tensor([1, 2]), (2, 2))
        tensor([[1, 2, 1, 2],
                [1, 2, 1, 2]])
    """
    require_tensor(input, "tile")
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


def _cat_forward(arrays: list, dim: int, bounds: list) -> np.ndarray:
    """The arrays joined along ``dim``, in their promoted dtype; those whose bound is None
    (legacy empty 1-D inputs) are skipped."""
    dt = result_type(*arrays)
    kept = [a for a, b in zip(arrays, bounds) if b is not None]
    if not kept:
        return np.zeros((0,), dtype=dt)
    return np.concatenate(kept, axis=dim, dtype=dt, casting="unsafe")


def _cat_backward(g, dim, bounds):
    """Each input's part of ``g``; a skipped legacy empty input gets an empty gradient."""
    lead = (slice(None),) * dim
    return tuple(_zeros((0,), g) if b is None else g[lead + (slice(b[0], b[1]),)] for b in bounds)


CatBackward0 = defop(
    "CatBackward0",
    batch=lambda tensors, dim, bounds: cat(tensors, _bdim(dim)),
    inputs=("*tensors",),
    params=("dim", "bounds"),
    forward=_cat_forward,
    vjp=_cat_backward,
    jvp=LINEAR,
)


@register("cat", "concat", "concatenate")
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
    return _join_out("cat", record(CatBackward0, res, tuple(tensors), (d, bounds)), out)


concat = concatenate = cat


def _join_out(fname: str, t: Tensor, out) -> Tensor:
    """``out=`` of cat and stack: ``write_out``, with torch's TypeError for a dtype the
    result cannot be cast to."""
    if (
        out is not None
        and not t._rg
        and isinstance(out, Tensor)
        and not np.can_cast(t._data.dtype, out._data.dtype, "same_kind")
    ):
        raise TypeError(
            "torch.cat(): input types can't be cast to the desired output type "
            f"{_dtype.scalar_name(out._data.dtype)}"
        )
    return write_out(fname, t, out)


def _stack_forward(arrays: list, dim: int) -> np.ndarray:
    return np.stack(arrays, axis=dim, dtype=result_type(*arrays), casting="unsafe")


def _stack_backward(g, dim):
    """Each input's slice of ``g`` along ``dim``."""
    lead = (slice(None),) * dim
    return tuple(g[lead + (i, Ellipsis)] for i in range(g.shape[dim]))


StackBackward0 = defop(
    "StackBackward0",
    batch=lambda tensors, dim: stack(tensors, _bdim(dim)),
    inputs=("*tensors",),
    params=("dim",),
    forward=_stack_forward,
    vjp=_stack_backward,
    jvp=LINEAR,
)


@register("stack")
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
    res = _stack_forward([x._data for x in tensors], d)
    return _join_out("stack", record(StackBackward0, res, tuple(tensors), (d,)), out)


@register("hstack")
def hstack(tensors, *, out=None) -> Tensor:
    """Concatenate along dim 1 (dim 0 for 1-D tensors).

    Example:
        >>> import ember
        >>> ember.hstack([ember.tensor([1, 2]), ember.tensor([3])])
        tensor([1, 2, 3])
    """
    tensors = _tensor_list(tensors, "hstack")
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    ts = _atleast_each(tensors, 1)
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1, out=out)


@register("vstack", "row_stack")
def vstack(tensors, *, out=None) -> Tensor:
    """Concatenate along dim 0 after making tensors at least 2-D.

    Example:
        >>> import ember
        >>> ember.vstack([ember.tensor([1, 2]), ember.tensor([3, 4])])
        tensor([[1, 2],
                [3, 4]])
    """
    tensors = _tensor_list(tensors, "vstack")
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat(_atleast_each(tensors, 2), 0, out=out)


row_stack = vstack


@register("dstack")
def dstack(tensors, *, out=None) -> Tensor:
    """Concatenate along dim 2 after making tensors at least 3-D.

    Example:
        >>> import ember
        >>> ember.dstack([ember.tensor([1, 2]), ember.tensor([3, 4])])
        tensor([[[1, 3],
                 [2, 4]]])
    """
    tensors = _tensor_list(tensors, "dstack")
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return cat(_atleast_each(tensors, 3), 2, out=out)


# -- split / chunk / unbind ----------------------------------------------------------------


def _split_sizes(n: int, split_size: int) -> list:
    """The pieces' sizes when a dim of size ``n`` is split every ``split_size``."""
    num = max((n + split_size - 1) // split_size, 1) if split_size else 1
    sizes = [split_size] * num
    sizes[-1] = split_size - (split_size * num - n)
    return sizes


def _split_array(a: np.ndarray, dim: int, sizes) -> list:
    """Views of ``a``, pieces of ``sizes`` along ``dim``."""
    lead = (slice(None),) * dim
    outs = []
    pos = 0
    for n in sizes:
        outs.append(a[lead + (slice(pos, pos + n),)])
        pos += n
    return outs


def _join_backward(grads, dim, sizes):
    """The pieces' gradients joined along ``dim`` (zeros for pieces that got none)."""
    like = next(g for g in grads if g is not None)
    parts = []
    for g, n in zip(grads, sizes):
        if g is None:
            shape = list(like.shape)
            shape[dim] = n
            g = _zeros(tuple(shape), like)
        parts.append(g)
    return np.concatenate(parts, axis=dim) if is_raw(like) else cat(parts, dim)


def _split_ops(prefix: str, view: bool):
    """The nodes of ``split`` (equal pieces) and ``split_with_sizes``: ``<prefix>Backward0``
    and ``<prefix>WithSizesBackward0``; ``view``: the pieces are views autograd tracks."""
    equal = _any_number_of_outputs(
        defop(
            f"{prefix}Backward0",
            outputs=_PIECES,
            params=("dim", "split_size", "self_sym_sizes"),
            forward=lambda a, dim, split_size, self_sym_sizes: _split_array(
                a, dim, _split_sizes(a.shape[dim], split_size)
            ),
            vjp={
                "self": lambda grads, dim, split_size, self_sym_sizes: _join_backward(
                    grads, dim, _split_sizes(self_sym_sizes[dim], split_size)
                )
            },
            jvp=LINEAR,
            view=view,
        )
    )
    sized = _any_number_of_outputs(
        defop(
            f"{prefix}WithSizesBackward0",
            outputs=_PIECES,
            params=("dim", "split_sizes", "self_sym_sizes"),
            forward=lambda a, dim, split_sizes, self_sym_sizes: _split_array(a, dim, split_sizes),
            vjp={
                "self": lambda grads, dim, split_sizes, self_sym_sizes: _join_backward(
                    grads, dim, split_sizes
                )
            },
            jvp=LINEAR,
            view=view,
        )
    )
    return equal, sized


SplitBackward0, SplitWithSizesBackward0 = _split_ops("Split", view=True)


@register("split", method=True)
def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Split into chunks of ``split_size`` (the last may be smaller) or of the given sizes.

    Example:
        >>> import ember
        >>> [p.tolist() for p in ember.arange(5).split(2)]
        [[0, 1], [2, 3], [4]]
    """
    require_tensor(tensor, "split", "tensor")
    if isinstance(split_size_or_sections, (list, tuple)):
        a = tensor._data
        if a.ndim == 0:
            raise RuntimeError("split expects at least a 1-dimensional tensor")
        return split_with_sizes(tensor, split_size_or_sections, normalize_dim(dim, a.ndim))
    return _split(tensor, split_size_or_sections, dim, SplitBackward0)


def _split(tensor: Tensor, split_size, dim: int, cls) -> tuple:
    """``split`` by a size, recorded as ``cls`` (``SplitBackward0`` or the unsafe one)."""
    a = tensor._data
    if a.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = normalize_dim(dim, a.ndim)
    n = a.shape[d]
    size = operator.index(split_size)
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0 and n != 0:
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
        )
    outs = _split_array(a, d, _split_sizes(n, size))
    return tuple(record_multi(cls, outs, (tensor,), (d, size, a.shape)))


@register("split_with_sizes", method=True)
def split_with_sizes(self: Tensor, split_sizes, dim: int = 0) -> tuple:
    """Split into pieces of the given sizes along ``dim``.

    Example:
        >>> import ember
        >>> ember.arange(5).split_with_sizes([2, 3])
        (tensor([0, 1]), tensor([2, 3, 4]))
    """
    return _split_with_sizes(self, split_sizes, dim, SplitWithSizesBackward0)


def _split_with_sizes(self: Tensor, split_sizes, dim: int, cls) -> tuple:
    a = self._data
    if a.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = normalize_dim(dim, a.ndim)
    sizes = tuple(operator.index(s) for s in split_sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError(
            "split_with_sizes expects split_sizes have only non-negative entries, but got "
            f"split_sizes={list(sizes)}"
        )
    if sum(sizes) != a.shape[d]:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {a.shape[d]} (input "
            f"tensor's size at dimension {d}), but got split_sizes={list(sizes)}"
        )
    outs = _split_array(a, d, sizes)
    return tuple(record_multi(cls, outs, (self,), (d, sizes, a.shape)))


@register("chunk", method=True)
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """Split into ``chunks`` pieces of equal size (the last may be smaller; may be fewer).

    Example:
        >>> import ember
        >>> [p.shape[0] for p in ember.zeros(5).chunk(3)]
        [2, 2, 1]
    """
    require_tensor(input, "chunk")
    return _chunk(input, chunks, dim, False)


def _chunk(input: Tensor, chunks: int, dim: int, unsafe: bool) -> tuple:
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
        cls = UnsafeSplitWithSizesBackward0 if unsafe else SplitWithSizesBackward0
        return _split_with_sizes(input, [0] * chunks, d, cls)
    return _split(input, size, d, UnsafeSplitBackward0 if unsafe else SplitBackward0)


# unsafe_split, unsafe_split_with_sizes, unsafe_chunk: the same pieces, not views of the
# input as autograd sees them (they share its memory; in-place changes are not tracked).
UnsafeSplitBackward0, UnsafeSplitWithSizesBackward0 = _split_ops("UnsafeSplit", view=False)


@register("unsafe_split", method=True)
def unsafe_split(tensor: Tensor, split_size, dim: int = 0) -> tuple:
    """``split`` by a size whose pieces autograd does not track as views of ``tensor``.

    Example:
        >>> import ember
        >>> ember.arange(5).unsafe_split(2)
        (tensor([0, 1]), tensor([2, 3]), tensor([4]))
    """
    require_tensor(tensor, "unsafe_split", "tensor")
    return _split(tensor, split_size, dim, UnsafeSplitBackward0)


@register("unsafe_split_with_sizes", method=True)
def unsafe_split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """``split_with_sizes`` whose pieces autograd does not track as views of ``input``.

    Example:
        >>> import ember
        >>> ember.arange(5).unsafe_split_with_sizes([2, 3])
        (tensor([0, 1]), tensor([2, 3, 4]))
    """
    require_tensor(input, "unsafe_split_with_sizes")
    return _split_with_sizes(input, split_sizes, dim, UnsafeSplitWithSizesBackward0)


@register("unsafe_chunk", method=True)
def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """``chunk`` whose pieces autograd does not track as views of ``input``.

    Example:
        >>> import ember
        >>> ember.arange(5).unsafe_chunk(2)
        (tensor([0, 1, 2]), tensor([3, 4]))
    """
    require_tensor(input, "unsafe_chunk")
    return _chunk(input, chunks, dim, True)


@register("tensor_split", method=True)
def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """Split into ``sections`` nearly equal pieces, or at the given indices (slices).

    Example:
        >>> import ember
        >>> ember.tensor_split(ember.arange(5), 2)
        (tensor([0, 1, 2]), tensor([3, 4]))
        >>> ember.tensor_split(ember.arange(5), [1, 4])
        (tensor([0]), tensor([1, 2, 3]), tensor([4]))
    """
    require_tensor(input, "tensor_split")
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


def _unbind_array(a: np.ndarray, dim: int) -> list:
    lead = (slice(None),) * dim
    return [a[lead + (i, Ellipsis)] for i in range(a.shape[dim])]


def _unbind_backward(grads, dim):
    """The slices' gradients stacked along ``dim`` (zeros for slices that got none)."""
    like = next(g for g in grads if g is not None)
    parts = [_zeros(like.shape, like) if g is None else g for g in grads]
    return np.stack(parts, axis=dim) if is_raw(like) else stack(parts, dim)


UnbindBackward0 = _any_number_of_outputs(
    defop(
        "UnbindBackward0",
        outputs=_PIECES,
        params=("dim",),
        forward=_unbind_array,
        vjp={"self": _unbind_backward},
        jvp=LINEAR,
        view=True,
    )
)


@register("unbind", method=True)
def unbind(input: Tensor, dim: int = 0) -> tuple:
    """The slices along ``dim`` as a tuple of views.

    Example:
        >>> import ember
        >>> ember.tensor([[1, 2], [3, 4]]).unbind(1)
        (tensor([1, 3]), tensor([2, 4]))
    """
    require_tensor(input, "unbind")
    a = input._data
    if a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = normalize_dim(dim, a.ndim)
    return tuple(record_multi(UnbindBackward0, _unbind_array(a, d), (input,), (d,)))


# -- narrow / slice ------------------------------------------------------------------------


def _slice_backward(g, dim, start, end, step, self_sym_sizes):
    """``g`` written into zeros of the input's shape, at the slice."""
    if is_raw(g):
        z = np.zeros(self_sym_sizes, dtype=g.dtype)
        z[(slice(None),) * dim + (slice(start, end, step),)] = g
        return z
    return slice_scatter(_zeros(self_sym_sizes, g), g, dim, start, end, step)


SliceBackward0 = defop(
    "SliceBackward0",
    batch=lambda x, dim, start, end, step, sizes: x[
        (slice(None),) * (dim + 1) + (slice(start, end, step),)
    ],
    params=("dim", "start", "end", "step", "self_sym_sizes"),
    forward=lambda a, dim, start, end, step, self_sym_sizes: a[
        (slice(None),) * dim + (slice(start, end, step),)
    ],
    vjp={"self": _slice_backward},
    jvp=LINEAR,
    view=True,
)


def _slice(input: Tensor, d: int, start: int, end: int, step: int) -> Tensor:
    """The view ``input[..., start:end:step, ...]`` at dim ``d`` (bounds already clamped)."""
    a = input._data
    out = a[(slice(None),) * d + (slice(start, end, step),)]
    return record(SliceBackward0, out, (input,), (d, start, end, step, a.shape))


# -- slice_scatter: the out-of-place inverse of a slice (SliceBackward0's recorded backward) --


def _check_src(src: np.ndarray, view: np.ndarray) -> None:
    if src.shape != view.shape:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(view.shape)}"
        )


def _slice_scatter_forward(a, s, dim, start, end, step):
    out = a.copy()
    out[(slice(None),) * dim + (slice(start, end, step),)] = s
    return out


def _slice_scatter_self(g, dim, start, end, step):
    if is_raw(g):
        return _slice_scatter_forward(g, 0, dim, start, end, step)
    key = (slice(None),) * dim + (slice(start, end, step),)
    z = _wrap(np.zeros(g._data[key].shape, g._data.dtype))
    return _slice_scatter(g, z, dim, start, end, step)


def _slice_scatter_src(g, dim, start, end, step):
    if is_raw(g):
        return g[(slice(None),) * dim + (slice(start, end, step),)].copy()
    return _slice(g, dim, start, end, step)


SliceScatterBackward0 = defop(
    "SliceScatterBackward0",
    inputs=("self", "src"),
    params=("dim", "start", "end", "step"),
    forward=_slice_scatter_forward,
    vjp={"self": _slice_scatter_self, "src": _slice_scatter_src},
    jvp=LINEAR,
)


def _slice_scatter(x: Tensor, src: Tensor, d: int, start: int, end: int, step: int) -> Tensor:
    out = _slice_scatter_forward(x._data, src._data, d, start, end, step)
    return record(SliceScatterBackward0, out, (x, src), (d, start, end, step))


@register("slice_scatter", method=True)
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None, step=1):
    """A copy of ``input`` with ``input[..., start:end:step, ...]`` (at ``dim``) set to src.

    Example:
        >>> import ember
        >>> ember.zeros(4).slice_scatter(ember.ones(2), 0, 0, None, 2)
        tensor([1., 0., 1., 0.])
    """
    a = input._data
    d = normalize_dim(dim, a.ndim)
    step = 1 if step is None else operator.index(step)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    lo, hi, st = slice(start, end, step).indices(a.shape[d])
    hi = max(lo, hi)
    _check_src(src._data, a[(slice(None),) * d + (slice(lo, hi, st),)])
    return _slice_scatter(input, src, d, lo, hi, st)


@register("narrow", method=True)
def narrow(input: Tensor, dim: int, start, length: int) -> Tensor:
    """The view of ``length`` elements from ``start`` along ``dim``.

    Example:
        >>> import ember
        >>> ember.arange(5).narrow(0, 1, 3)
        tensor([1, 2, 3])
    """
    require_tensor(input, "narrow")
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


NarrowCopyBackward0 = defop(  # narrow_copy: the slice as a new tensor (not a view)
    "NarrowCopyBackward0",
    params=("dim", "start", "length", "self_sym_sizes"),
    forward=lambda a, dim, start, length, self_sym_sizes: a[
        (slice(None),) * dim + (slice(start, start + length),)
    ].copy(),
    vjp={
        "self": lambda g, dim, start, length, self_sym_sizes: _slice_backward(
            g, dim, start, start + length, 1, self_sym_sizes
        )
    },
    jvp=LINEAR,
)


@register("narrow_copy", method=True)
def narrow_copy(input: Tensor, dim: int, start, length: int) -> Tensor:
    """A copy of ``length`` elements from ``start`` along ``dim`` (``narrow``, not a view).

    Example:
        >>> import ember
        >>> ember.arange(5).narrow_copy(0, 1, 3)
        tensor([1, 2, 3])
    """
    require_tensor(input, "narrow_copy")
    view = narrow(input, dim, start, length) if input._data.ndim else None
    if view is None:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    a = input._data
    d = normalize_dim(dim, a.ndim)
    begin = operator.index(start)
    if begin < 0:
        begin += a.shape[d]
    params = (d, begin, operator.index(length), a.shape)
    return record(NarrowCopyBackward0, view._data.copy(), (input,), params)


def _split_at(input: Tensor, sections, fname: str, dim: int, min_dims: int) -> tuple:
    """hsplit/vsplit/dsplit: ``tensor_split`` along ``dim``, equal sections required."""
    require_tensor(input, fname)
    nd = input._data.ndim
    if nd < min_dims:
        raise RuntimeError(
            f"torch.{fname} requires a tensor with at least {min_dims} dimension, but got a tensor "
            f"with {nd} dimensions!"
        )
    if isinstance(sections, (int, np.integer)) and not isinstance(sections, bool):
        n = input._data.shape[dim]
        if sections == 0 or n % sections:
            raise RuntimeError(
                f"torch.{fname} attempted to split along dimension {dim}, but the size of the "
                f"dimension {n} is not divisible by the split_size {sections}!"
            )
    elif not isinstance(sections, (list, tuple)) or not all(
        isinstance(i, (int, np.integer)) for i in sections
    ):
        raise TypeError(
            f"{fname}() received an invalid combination of arguments - got "
            f"({type(sections).__name__}), but expected one of:\n * (int sections)\n * (tuple "
            "of ints indices)"
        )
    return tensor_split(input, sections, dim)


@register("hsplit", method=True)
def hsplit(input: Tensor, indices_or_sections) -> tuple:
    """``tensor_split`` along dim 1 (dim 0 of a 1-D tensor): ``sections`` equal pieces or
    pieces cut at the given indices.

    Example:
        >>> import ember
        >>> ember.arange(6).reshape(2, 3).hsplit([1])
        (tensor([[0],
                [3]]), tensor([[1, 2],
                [4, 5]]))
    """
    dim = 0 if getattr(input, "ndim", 2) == 1 else 1
    return _split_at(input, indices_or_sections, "hsplit", dim, 1)


@register("vsplit", method=True)
def vsplit(input: Tensor, indices_or_sections) -> tuple:
    """``tensor_split`` along dim 0 of a tensor of at least 2 dims.

    Example:
        >>> import ember
        >>> ember.arange(4).reshape(2, 2).vsplit(2)
        (tensor([[0, 1]]), tensor([[2, 3]]))
    """
    return _split_at(input, indices_or_sections, "vsplit", 0, 2)


@register("dsplit", method=True)
def dsplit(input: Tensor, indices_or_sections) -> tuple:
    """``tensor_split`` along dim 2 of a tensor of at least 3 dims.

    Example:
        >>> import ember
        >>> [p.shape for p in ember.zeros(1, 2, 4).dsplit(2)]
        [torch.Size([1, 2, 2]), torch.Size([1, 2, 2])]
    """
    return _split_at(input, indices_or_sections, "dsplit", 2, 3)


# -- metadata: sizes in bytes, signedness, comparisons of sizes ---------------------------------


def _itemsize(self: Tensor) -> int:
    """The size of one element in bytes.

    Example:
        >>> import ember
        >>> ember.zeros(2, dtype=ember.float16).itemsize
        2
    """
    return self._data.itemsize


def _nbytes(self: Tensor) -> int:
    """The size of the elements in bytes (``numel() * itemsize``).

    Example:
        >>> import ember
        >>> ember.zeros(2, 3).nbytes
        24
    """
    return self._data.size * self._data.itemsize


@register("is_signed", method=True)
def is_signed(input: Tensor) -> bool:
    """True when the dtype is signed (every dtype but bool and the unsigned integers).

    Example:
        >>> import ember
        >>> ember.zeros(1).is_signed(), ember.zeros(1, dtype=ember.uint8).is_signed()
        (True, False)
    """
    require_tensor(input, "is_signed")
    return input._data.dtype.kind not in "bu"


@register("is_same_size", method=True)
def is_same_size(input: Tensor, other: Tensor) -> bool:
    """True when both tensors have the same shape.

    Example:
        >>> import ember
        >>> ember.zeros(2, 3).is_same_size(ember.ones(2, 3))
        True
    """
    require_tensor(input, "is_same_size")
    require_tensor(other, "is_same_size", "other", 2)
    return input._data.shape == other._data.shape


@register("is_nonzero", method=True)
def is_nonzero(input: Tensor) -> bool:
    """Whether the one element of a one-element tensor is not zero.

    Example:
        >>> import ember
        >>> ember.tensor([0.0]).is_nonzero(), ember.tensor(3).is_nonzero()
        (False, True)
    """
    require_tensor(input, "is_nonzero")
    n = input._data.size
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(()) != 0)


# -- flip / roll ---------------------------------------------------------------------------


def _flip_array(a: np.ndarray, dims: tuple) -> np.ndarray:
    return np.flip(a, dims).copy() if dims and a.ndim else a.copy()


def _flip_backward(g, dims):
    if g.ndim == 0 or not dims:
        return g
    return np.flip(g, dims) if is_raw(g) else flip(g, dims)


FlipBackward0 = defop(
    "FlipBackward0",
    params=("dims",),
    forward=_flip_array,
    vjp={"self": _flip_backward},
    jvp=LINEAR,
)


@register("flip", method=True)
def flip(input: Tensor, *args, dims=None) -> Tensor:
    """Reverse the order of elements along ``dims`` (a copy), given positionally or by
    keyword (``flip(x, dims=[0])``).

    Example:
        >>> import ember
        >>> ember.tensor([1, 2, 3]).flip(0)
        tensor([3, 2, 1])
    """
    require_tensor(input, "flip")
    if dims is not None and args:
        raise TypeError("flip() got multiple values for argument 'dims'")
    if dims is None and not args:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    dims = _dims_args(args) if dims is None else _dims_args((dims,))
    a = input._data
    nd = normalize_dims(dims, a.ndim)
    return record(FlipBackward0, _flip_array(a, nd), (input,), (nd,))


@register("fliplr", method=True)
def fliplr(input: Tensor) -> Tensor:
    """Flip dim 1.

    Example:
        >>> import ember
        >>> ember.fliplr(ember.tensor([[1, 2], [3, 4]]))
        tensor([[2, 1],
                [4, 3]])
    """
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@register("flipud", method=True)
def flipud(input: Tensor) -> Tensor:
    """Flip dim 0.

    Example:
        >>> import ember
        >>> ember.flipud(ember.tensor([[1, 2], [3, 4]]))
        tensor([[3, 4],
                [1, 2]])
    """
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def _roll_array(a: np.ndarray, shifts: tuple, dims) -> np.ndarray:
    """``a`` rolled by ``shifts`` along ``dims`` (None: the flattened array)."""
    if dims is None:
        return np.roll(a, shifts[0])
    return np.roll(a, shifts, dims) if a.ndim else a.copy()


def _roll_backward(g, shifts, dims):
    if g.ndim == 0:
        return g
    back = tuple(-s for s in shifts)
    return _roll_array(g, back, dims) if is_raw(g) else roll(g, back, dims)


RollBackward0 = defop(
    "RollBackward0",
    params=("shifts", "dims"),
    forward=_roll_array,
    vjp={"self": _roll_backward},
    jvp=LINEAR,
)


@register("roll", method=True)
def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Rotate elements along ``dims`` (or the flattened tensor) by ``shifts`` (a copy).

    Example:
        >>> import ember
        >>> ember.tensor([1, 2, 3]).roll(1)
        tensor([3, 1, 2])
    """
    require_tensor(input, "roll")
    a = input._data
    sh = tuple(
        operator.index(s) for s in (shifts if isinstance(shifts, (tuple, list)) else (shifts,))
    )
    if dims is None:
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
        nd = None
    else:
        dl = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
        if len(sh) != len(dl):
            raise RuntimeError(
                f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(dl)}"
            )
        if a.ndim == 0:
            raise IndexError(f"Dimension specified as {dl[0]} but tensor has no dimensions")
        nd = tuple(normalize_dim(d, a.ndim) for d in dl)
    return record(RollBackward0, _roll_array(a, sh, nd), (input,), (sh, nd))


# -- rot90 ---------------------------------------------------------------------------------


def _int_list(values, fname: str, arg: str, pos: int) -> tuple:
    """An ``int[]`` argument, with torch's TypeErrors."""
    if not isinstance(values, (tuple, list)):
        raise TypeError(
            f"{fname}(): argument '{arg}' (position {pos}) must be tuple of ints, not "
            f"{type(values).__name__}"
        )
    out = []
    for i, v in enumerate(values):
        try:
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(
                f"{fname}(): argument '{arg}' (position {pos}) must be tuple of ints, but found "
                f"element of type {type(v).__name__} at pos {i}"
            ) from None
    return tuple(out)


def _rot90_array(a: np.ndarray, k: int, dims: tuple) -> np.ndarray:
    """torch's rot90: a flip, then a transposed view of it (a contiguous copy for k % 4 == 0)."""
    k %= 4
    d0, d1 = dims
    if k == 1:
        return np.flip(a, d1).copy().swapaxes(d0, d1)
    if k == 2:
        return np.flip(a, dims).copy()
    if k == 3:
        return np.flip(a, d0).copy().swapaxes(d0, d1)
    return a.copy()


def _rot90_backward(g, k, dims):
    return _rot90_array(g, -k, dims) if is_raw(g) else _rot90(g, -k, dims)


Rot90Backward0 = defop(
    "Rot90Backward0",
    params=("k", "dims"),
    forward=_rot90_array,
    vjp={"self": _rot90_backward},
    jvp=LINEAR,
)


def _rot90(x: Tensor, k: int, dims: tuple) -> Tensor:
    return record(Rot90Backward0, _rot90_array(x._data, k, dims), (x,), (k, dims))


@register("rot90", method=True)
def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first dim
    towards the second (a copy).

    Example:
        >>> import ember
        >>> ember.tensor([[1, 2], [3, 4]]).rot90()
        tensor([[2, 4],
                [1, 3]])
    """
    require_tensor(input, "rot90")
    k = as_int(k, "rot90", "k", 2)
    dims = _int_list(dims, "rot90", "dims", 3)
    a = input._data
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if a.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {a.ndim}")
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == a.ndim:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}"
        )
    d = (normalize_dim(dims[0], a.ndim), normalize_dim(dims[1], a.ndim))
    return _rot90(input, k, d)


# -- unfold: the sliding windows of a dim, as a view -----------------------------------------


def _unfold_array(a: np.ndarray, dimension: int, size: int, step: int) -> np.ndarray:
    """The (writable) strided view of the windows of ``a`` along ``dimension``."""
    if a.ndim == 0:
        return a.reshape(1)[:size]
    n = a.shape[dimension]
    count = (n - size) // step + 1
    shape = a.shape[:dimension] + (count,) + a.shape[dimension + 1 :] + (size,)
    st = a.strides
    strides = st[:dimension] + (st[dimension] * step,) + st[dimension + 1 :] + (st[dimension],)
    return np.lib.stride_tricks.as_strided(a, shape, strides)


def _unfold_backward_array(g, input_sizes, dim, size, step):
    """The gradient of a tensor of ``input_sizes`` from its windows' gradient ``g``: each
    window's values added back where they were read (windows overlap when step < size)."""
    if not input_sizes:
        return np.asarray(g.sum(), dtype=g.dtype)
    z = np.zeros(input_sizes, dtype=g.dtype)
    count = g.shape[dim]
    lead = (slice(None),) * dim
    for j in range(size):
        z[lead + (slice(j, j + step * (count - 1) + 1, step),)] += g[..., j]
    return z


def _unfold_backward(g, self_sym_sizes, dimension, size, step):
    if is_raw(g):
        return _unfold_backward_array(g, self_sym_sizes, dimension, size, step)
    out = _unfold_backward_array(g._data, self_sym_sizes, dimension, size, step)
    return record(UnfoldBackwardBackward0, out, (g,), (self_sym_sizes, dimension, size, step))


def _unfold_backward_backward(g, dim, size, step):
    if is_raw(g):
        return _unfold_array(g, dim, size, step).copy()
    return _unfold(g, dim, size, step)


UnfoldBackward0 = defop(
    "UnfoldBackward0",
    params=("self_sym_sizes", "dimension", "size", "step"),
    forward=lambda a, self_sym_sizes, dimension, size, step: _unfold_array(
        a, dimension, size, step
    ),
    vjp={"self": _unfold_backward},
    jvp=LINEAR,
    view=True,
)

UnfoldBackwardBackward0 = defop(  # unfold's backward, recorded: differentiable again
    "UnfoldBackwardBackward0",
    inputs=("grad_in",),
    params=("input_sizes", "dim", "size", "step"),
    forward=_unfold_backward_array,
    vjp={"grad_in": _unfold_backward_backward},
    jvp=LINEAR,
)


def _unfold(x: Tensor, d: int, size: int, step: int) -> Tensor:
    a = x._data
    return record(UnfoldBackward0, _unfold_array(a, d, size, step), (x,), (a.shape, d, size, step))


@register("unfold", method=True, function=False)
def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """The view of all windows of ``size`` elements, ``step`` apart, along ``dimension``:
    that dim counts the windows and a last dim of ``size`` holds each window.

    Example:
        >>> import ember
        >>> ember.arange(5).unfold(0, 2, 2)
        tensor([[0, 1],
                [2, 3]])
    """
    a = self._data
    d = normalize_dim(as_int(dimension, "unfold", "dimension", 1), a.ndim)
    size = as_int(size, "unfold", "size", 2)
    step = as_int(step, "unfold", "step", 3)
    n = a.shape[d] if a.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _unfold(self, d, size, step)


# -- block_diag / cartesian_prod -------------------------------------------------------------


def _block_diag_forward(arrays: list, blocks: tuple) -> np.ndarray:
    """``blocks``: each input's (rows, cols, shape)."""
    rows = sum(b[0] for b in blocks)
    cols = sum(b[1] for b in blocks)
    out = np.zeros((rows, cols), dtype=result_type(*arrays))
    r = c = 0
    for a, (nr, nc, _) in zip(arrays, blocks):
        out[r : r + nr, c : c + nc] = a.reshape(nr, nc)
        r += nr
        c += nc
    return out


def _block_diag_backward(g, blocks):
    """Each input's block of ``g``, in the input's shape."""
    grads = []
    r = c = 0
    for nr, nc, shape in blocks:
        grads.append(g[r : r + nr, c : c + nc].reshape(shape))
        r += nr
        c += nc
    return tuple(grads)


BlockDiagBackward0 = defop(
    "BlockDiagBackward0",
    inputs=("*tensors",),
    params=("blocks",),
    forward=_block_diag_forward,
    vjp=_block_diag_backward,
    jvp=LINEAR,
)


@register("block_diag")
def block_diag(*tensors: Tensor) -> Tensor:
    """The block-diagonal matrix of the tensors (0-d: 1x1, 1-d: one row), with torch's type
    promotion.

    Example:
        >>> import ember
        >>> ember.block_diag(ember.tensor([[1, 2]]), ember.tensor(3))
        tensor([[1, 2, 0],
                [0, 0, 3]])
    """
    tensors = _tensor_list(tensors, "block_diag")
    blocks = []
    for i, t in enumerate(tensors):
        a = t._data
        if a.ndim > 2:
            raise RuntimeError(
                "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input "
                f"{i} has {a.ndim} dimensions"
            )
        rows, cols = (1, 1) if a.ndim == 0 else (1, a.shape[0]) if a.ndim == 1 else a.shape
        blocks.append((rows, cols, a.shape))
    if not tensors:
        return _wrap(np.zeros((1, 0), dtype=_dtype._default[0].np))
    blocks = tuple(blocks)
    out = _block_diag_forward([t._data for t in tensors], blocks)
    return record(BlockDiagBackward0, out, tuple(tensors), (blocks,))


@register("cartesian_prod")
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The Cartesian product of 1-D tensors: one row per combination (``itertools.product``
    order); a single tensor is returned as is.

    Example:
        >>> import ember
        >>> ember.cartesian_prod(ember.tensor([1, 2]), ember.tensor([3, 4]))
        tensor([[1, 3],
                [1, 4],
                [2, 3],
                [2, 4]])
    """
    tensors = _tensor_list(tensors, "cartesian_prod")
    for t in tensors:
        if t._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if any(t._data.dtype != tensors[0]._data.dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    shape = tuple(t._data.shape[0] for t in tensors)
    numel = 1
    for n in shape:
        numel *= n
    cols = []
    for i, t in enumerate(tensors):
        view = (1,) * i + (shape[i],) + (1,) * (len(shape) - i - 1)
        grid = expand(_view(t, view), shape)
        cols.append(_reshape(grid, (numel,)))
    return stack(cols, 1)


# -- copies and casts ----------------------------------------------------------------------

_CONTIGUOUS = "torch.contiguous_format"

CloneBackward0 = defop(
    "CloneBackward0",
    batch=lambda x: x.clone(),
    forward=lambda a: a.copy(),
    vjp={"self": lambda g: g},
    jvp=LINEAR,
)


@register("clone", method=True)
def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy with its own storage (the gradient flows back unchanged).

    Example:
        >>> import ember
        >>> ember.tensor([1.0, 2.0]).clone()
        tensor([1., 2.])
    """
    require_tensor(input, "clone")
    a = input._data
    order = "C" if memory_format is not None and str(memory_format) == _CONTIGUOUS else "K"
    try:
        out = a.copy(order=order)
    except MemoryError as e:  # an expanded view's copy: torch's RuntimeError
        raise_alloc_error(a.shape, a.dtype, e)
    return record(CloneBackward0, out, (input,))


@register("contiguous", method=True, function=False)
def contiguous(self: Tensor, memory_format=None) -> Tensor:
    """Self if already C-contiguous, else a contiguous copy (CloneBackward0).

    Example:
        >>> import ember
        >>> x = ember.arange(6).view(2, 3).t()
        >>> x.is_contiguous(), x.contiguous().is_contiguous()
        (False, True)
    """
    if self._data.flags.c_contiguous:
        return self
    try:
        a = self._data
        out = a.copy() if type(a) is MetaArray else np.ascontiguousarray(a)
    except MemoryError as e:  # an expanded view's copy: torch's RuntimeError
        raise_alloc_error(self._data.shape, self._data.dtype, e)
    return record(CloneBackward0, out, (self,))


ToCopyBackward0 = defop(  # the engine casts the gradient back to the input's dtype
    "ToCopyBackward0",
    params=("dtype",),
    forward=lambda a, dtype: a.astype(dtype),
    vjp={"self": lambda g: g},
    jvp=LINEAR,
)


def _legacy_dtype(name: str):
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
    return record(ToCopyBackward0, a.astype(np_dt), (self,), (np_dt,))


@register("to", method=True, function=False)
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
        if dev is None and (type(other._data) is MetaArray) != (type(self._data) is MetaArray):
            dev = other.device
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
        meta = check_device(dev)  # ember is CPU-only: torch's CPU-build error otherwise
        if bool(meta) != (type(self._data) is MetaArray):  # to or from the meta device
            return _to_device(self, meta, self._data.dtype if target is None else target)
    if target is None:
        return _cast(self, self._data.dtype, copy)
    return _cast(self, target, copy)


def _to_device(self: Tensor, meta: bool, np_dt) -> Tensor:
    """``self`` moved to the meta device (a tensor without data); out of it, torch's error."""
    if not meta:
        raise NotImplementedError(NO_DATA)
    _dtype.from_numpy_dtype(np_dt)  # raises for unsupported dtypes
    return record(ToCopyBackward0, meta_empty(self._data.shape, np_dt), (self,), (np_dt,))


@register("type_as", method=True, function=False)
def type_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.to(other.dtype)``.

    Example:
        >>> import ember
        >>> ember.tensor([1, 2]).type_as(ember.zeros(1, dtype=ember.float64))
        tensor([1., 2.], dtype=torch.float64)
    """
    return _cast(self, other._data.dtype)


def _cast_doc(name: str, target: str, x: str, printed: str) -> str:
    """The docstring of the cast method ``name``, with its example (see ``_CASTS``)."""
    return (
        f"``self.to({target})`` (self if already that dtype).\n\nExample:\n"
        f"    >>> import ember\n    >>> {x}.{name}()\n    {printed}\n"
    )


def _caster(np_dt):
    def method(self: Tensor, memory_format=None) -> Tensor:
        return _cast(self, np.dtype(np_dt))

    return method


def _bfloat16_caster(self: Tensor, memory_format=None) -> Tensor:
    return _cast(self, _dtype._bfloat16().np)


# The cast methods: name, NumPy dtype (None: bfloat16), and the example of the docstring,
# ``X.name()`` printing PRINTED (what ember and torch print).
_CASTS = (
    # name, dtype, X, PRINTED
    (
        "bfloat16",
        None,
        "ember.tensor([1.5, -2.0])",
        "tensor([ 1.5000, -2.0000], dtype=torch.bfloat16)",
    ),
    ("bool", np.bool_, "ember.tensor([0.0, 2.0])", "tensor([False,  True])"),
    ("byte", np.uint8, "ember.tensor([1.0, 255.0])", "tensor([  1, 255], dtype=torch.uint8)"),
    (
        "cdouble",
        np.complex128,
        "ember.tensor([1.0, 2.0])",
        "tensor([1.+0.j, 2.+0.j], dtype=torch.complex128)",
    ),
    ("cfloat", np.complex64, "ember.tensor([1.0, 2.0])", "tensor([1.+0.j, 2.+0.j])"),
    ("char", np.int8, "ember.tensor([1.7, -1.7])", "tensor([ 1, -1], dtype=torch.int8)"),
    ("double", np.float64, "ember.tensor([1, 2])", "tensor([1., 2.], dtype=torch.float64)"),
    ("float", np.float32, "ember.tensor([1, 2])", "tensor([1., 2.])"),
    (
        "half",
        np.float16,
        "ember.tensor([0.5, 2.0])",
        "tensor([0.5000, 2.0000], dtype=torch.float16)",
    ),
    ("int", np.int32, "ember.tensor([1.7, -1.7])", "tensor([ 1, -1], dtype=torch.int32)"),
    ("long", np.int64, "ember.tensor([1.7, -1.7])", "tensor([ 1, -1])"),
    ("short", np.int16, "ember.tensor([1.7, -1.7])", "tensor([ 1, -1], dtype=torch.int16)"),
)


def _cast_methods() -> dict:
    methods = {}
    for name, np_dt, x, printed in _CASTS:
        method = _bfloat16_caster if np_dt is None else _caster(np_dt)
        target = "torch." + ("bfloat16" if np_dt is None else np.dtype(np_dt).name)
        method.__doc__ = _cast_doc(name, target, x, printed)
        methods[name] = method
    return methods


register_methods(
    {
        "T": property(_T),
        "mT": property(_mT),
        "itemsize": property(_itemsize),
        "nbytes": property(_nbytes),
        **_cast_methods(),
    }
)
