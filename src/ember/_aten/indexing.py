"""Indexing: ``tensor[key]``, gather/scatter, masks, diagonals and triangular parts.

``Tensor.__getitem__`` follows torch: integers, slices, ``None`` and ``...`` are applied
left to right as views (select, slice, unsqueeze; a key that changes nothing gives an
alias), then any index tensors / lists / masks are applied at once with NumPy's advanced
indexing (which torch matches once the integers are gone), copying the data. Each step is
its own node, as in torch, so ``x[0, [1, 2]]`` ends in ``IndexBackward0`` fed by
``SelectBackward0``.

Each op is a ``defop`` declaration next to its public function. Index arrays are the
nodes' parameters (not tensor inputs: no edge, as in torch). Every op here is linear in its
tensor operands, so forward mode is the op applied to the tangents (``LINEAR``; views stay
views), except where a constant is written (``scatter`` of a value, ``masked_fill`` of a
number), whose tangent is zero there. A rule runs on arrays in a plain backward and calls
the ember ops of this module on Tensors in a recorded one.

``tensor[key] = value`` lives in ``inplace.py`` (CopySlices); its recorded backward uses
``index_put`` and ``index_np`` from here, which accept raw NumPy keys.
"""

from __future__ import annotations

import operator

import numpy as np

from .._dtype import cpp_name, scalar_name, to_numpy_dtype
from .._overrides import warn as _warn
from .._tensor import Tensor, check_device
from ..autograd.graph import SavedValue
from ..autograd.recording import _on, check_values, shape_constant, tangent_of
from ..autograd.views import AliasBackward0, apply_inplace
from ._core import (
    LINEAR,
    QUIET,
    as_int,
    broadcast_shapes,
    defop,
    intp,
    is_raw,
    normalize_dim,
    quiet_reset,
    quiet_set,
    record,
    register,
    register_methods,
    require_tensor,
    run,
    write_out,
)
from .shape import SliceBackward0, UnsqueezeBackward0, _check_src, _reshape, expanded_size
from .shape import expand as _expand_to

_wrap = Tensor._wrap

_SEQ_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
    "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error "
    "or a different result (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/python_variable_indexing.cpp:349.)"
)
_UINT8_WARNING = (
    "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead. "
    "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/IndexingUtils.h:37.)"
)
_REDUCE_WARNING = (
    "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in "
    "a future PyTorch release. Use torch.scatter_reduce instead for more reduction options. "
    "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
    "TensorAdvancedIndexing.cpp:225.)"
)
_BAD_INDEX_DTYPE = "tensors used as indices must be long, int, byte or bool tensors"


def _zeros(shape, like):
    """Zeros of ``shape`` as an array or a Tensor, matching the gradient ``like``."""
    if is_raw(like):
        return np.zeros(shape, dtype=like.dtype)
    return _wrap(np.zeros(shape, dtype=like._data.dtype))


def _index_error(e: IndexError) -> IndexError:
    """NumPy's IndexError in torch's words ("dimension", not "axis")."""
    return IndexError(str(e).replace("axis", "dimension"))


def _idx_array(x) -> np.ndarray:
    """An index given as a Tensor, list or ndarray, as an ndarray (dtype checked as torch)."""
    if isinstance(x, Tensor):
        arr = x._data
    elif isinstance(x, np.ndarray):
        arr = x
    else:
        arr = np.asarray(_unwrap_nested(x))
        if arr.size == 0 and arr.dtype.kind in "fV":
            arr = arr.astype(np.int64)
    k = arr.dtype
    if k == np.bool_ or k == np.int64 or k == np.int32 or k == np.uint8:
        return arr
    if k.kind in "iu" and not isinstance(x, Tensor) and not isinstance(x, np.ndarray):
        return arr.astype(np.int64)
    raise IndexError(_BAD_INDEX_DTYPE)


def _unwrap_nested(x):
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, (list, tuple, range)):
        return [_unwrap_nested(v) for v in x]
    return x


def _seq_as_tuple(key) -> bool:
    """torch's ``treatSequenceAsTuple`` for a non-tuple sequence key (a list)."""
    if len(key) >= 32:
        return False
    for obj in key:
        if (
            isinstance(obj, (Tensor, list, tuple, np.ndarray, slice))
            or obj is None
            or (obj is Ellipsis)
        ):
            return True
    return False


def _is_int(obj) -> bool:
    return isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_))


# -- the index tensors a node keeps ------------------------------------------------------------
#
# torch saves the index (or mask) tensors an op read, and its backward raises when one was
# modified in place since. The rules here read the index *arrays* (parameters: the forward
# and forward mode need them too); the tensors themselves are a declared ``saves`` slot,
# there for the engine's version check. Protocol limitation: ``saves=`` values are saved as
# constants (``SavedValue``), so these classes save a Tensor extra as itself instead.


def _save_index_tensors(inputs, edges, out, extras) -> tuple:
    e = extras[0]
    if isinstance(e, Tensor) or type(e) is _Tensors:
        return extras
    return (_NO_TENSORS,) if e is None else (SavedValue(e),)


def _keeps_index_tensors(cls):
    """``cls`` (whose rules read only parameters) saves its index tensors as themselves."""
    assert cls._slots == cls._saves and len(cls._saves) == 1, cls.__name__
    cls._save = _save_index_tensors
    return cls


class _Tensors:
    """Several index tensors saved as one slot: modified when one of them is."""

    __slots__ = ("tensors",)
    grad_fn = None

    def __init__(self, tensors: list) -> None:
        self.tensors = tensors

    @property
    def _vc(self) -> tuple:
        return (sum(t._vc[0] for t in self.tensors),)

    @property
    def _data(self):
        return self.tensors[0]._data


_NO_TENSORS = SavedValue(None)


def _index_tensors(tensors: list) -> object:
    """What a node saves for the index tensors it read (None when there are none)."""
    if not tensors:
        return None
    return tensors[0] if len(tensors) == 1 else _Tensors(tensors)


# -- basic indexing: views -----------------------------------------------------------------


def _select_backward(g, dim, index, self_sym_sizes):
    if is_raw(g):
        z = np.zeros(self_sym_sizes, dtype=g.dtype)
        z[(slice(None),) * dim + (index,)] = g
        return z
    return _select_scatter(_zeros(self_sym_sizes, g), g, dim, index)


SelectBackward0 = defop(
    "SelectBackward0",
    batch=lambda x, dim, index, sizes: x.select(dim + 1, index),
    params=("dim", "index", "self_sym_sizes"),
    forward=lambda a, dim, index, self_sym_sizes: a[(slice(None),) * dim + (index, Ellipsis)],
    vjp={"self": _select_backward},
    jvp=LINEAR,
    view=True,
)


def _select(x: Tensor, d: int, index: int) -> Tensor:
    """The view ``x[..., index, ...]`` at dim ``d`` (``index`` already in range)."""
    a = x._data
    return record(
        SelectBackward0, a[(slice(None),) * d + (index, Ellipsis)], (x,), (d, index, a.shape)
    )


@register("select", method=True)
def select(input: Tensor, dim: int, index) -> Tensor:
    """The view of ``input`` at ``index`` along ``dim`` (that dim removed).

    Example:
        >>> import ember
        >>> ember.tensor([[1, 2], [3, 4]]).select(1, 0)
        tensor([1, 3])
    """
    a = input._data
    if a.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, a.ndim)
    index = operator.index(index)
    n = a.shape[d]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(a.shape)} at "
            f"dimension {d}"
        )
    return _select(input, d, index % n if n else index)


def _slice(x: Tensor, d: int, start: int, end: int, step: int) -> Tensor:
    """The view ``x[..., start:end:step, ...]`` at dim ``d`` (bounds already clamped)."""
    a = x._data
    out = a[start:end:step] if d == 0 else a[(slice(None),) * d + (slice(start, end, step),)]
    return record(SliceBackward0, out, (x,), (d, start, end, step, a.shape))


def _unsqueeze(x: Tensor, d: int) -> Tensor:
    return record(UnsqueezeBackward0, x._data[(slice(None),) * d + (None,)], (x,), (d,))


def _alias(x: Tensor) -> Tensor:
    return record(AliasBackward0, x._data.view(), (x,))


def as_subclass(self: Tensor, cls) -> Tensor:
    """A ``cls`` instance (a Tensor subclass) sharing this tensor's storage and version
    counter, attached to the graph through an alias (torch's ``AliasBackward0``).

    Example:
        >>> import ember
        >>> class Tagged(ember.Tensor):
        ...     pass
        >>> type(ember.ones(2).as_subclass(Tagged)).__name__
        'Tagged'
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor, not {cls!r}")
    alias = _alias(self)
    out = object.__new__(cls)
    out._data, out._rg, out.grad_fn = alias._data, alias._rg, alias.grad_fn
    out._output_nr, out._vc, out._grad, out._aux = alias._output_nr, alias._vc, None, alias._aux
    return out


register_methods({"as_subclass": as_subclass})


def _slice_bound(v) -> int:
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(
            "slice indices must be integers or None or have an __index__ method"
        ) from None


def _slice_key(x: Tensor, d: int, s: slice, optimize: bool) -> Tensor:
    a = x._data
    if a.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    start, stop, step = s.start, s.stop, s.step
    if step is None:
        step = 1
    else:
        if type(step) is not int:
            step = _slice_bound(step)
        if step <= 0:
            raise ValueError(
                "slice step cannot be zero" if step == 0 else "step must be greater than zero"
            )
    if start is not None and type(start) is not int:
        start = _slice_bound(start)
    if stop is not None and type(stop) is not int:
        stop = _slice_bound(stop)
    n = a.shape[d]
    if optimize and not start and step == 1 and (stop is None or stop >= n):
        return x
    lo, hi, _ = slice(start, stop, step).indices(n)
    return _slice(x, d, lo, max(lo, hi), step)


# -- __getitem__ ---------------------------------------------------------------------------


def getitem(self: Tensor, key) -> Tensor:
    """``self[key]`` with torch's semantics (views for basic keys, copies for advanced).

    Example:
        >>> import ember
        >>> x = ember.arange(6).view(2, 3)
        >>> x[1, ::2]
        tensor([3, 5])
        >>> x[x > 3]
        tensor([4, 5])
    """
    a = self._data
    # Fast paths for a single basic index (torch: slices here are never optimized away).
    if type(key) is int or _is_int(key):
        if a.ndim == 0:
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
            )
        n = a.shape[0]
        index = int(key)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {n}")
        if index < 0:
            index += n
        return record(SelectBackward0, a[index, ...], (self,), (0, index, a.shape))
    if type(key) is slice:
        return _slice_key(self, 0, key, optimize=False)
    if key is None:
        return record(UnsqueezeBackward0, a[None], (self,), (0,))
    if key is Ellipsis:
        return record(AliasBackward0, a.view(), (self,))
    if isinstance(key, tuple):
        items = key
    elif isinstance(key, list) and _seq_as_tuple(key):
        _warn(_SEQ_WARNING, UserWarning, stacklevel=2)
        items = tuple(key)
    elif isinstance(key, str):
        raise TypeError("new(): invalid data type 'str'")
    else:
        items = (key,)

    specified = 0
    for obj in items:
        if obj is None or obj is Ellipsis or isinstance(obj, (bool, np.bool_)):
            continue
        if isinstance(obj, (Tensor, np.ndarray)):
            arr = obj._data if isinstance(obj, Tensor) else obj
            specified += arr.ndim if arr.dtype in (np.bool_, np.uint8) else 1
        else:
            specified += 1
    if specified > a.ndim:
        raise IndexError(f"too many indices for tensor of dimension {a.ndim}")

    result = self
    dim = 0
    adv = []  # (dim, index array, is_mask)
    tensors = []  # the index tensors among them (saved for backward, as torch does)
    for i, obj in enumerate(items):
        if _is_int(obj):
            result = _select_checked(result, dim, int(obj), i)
        elif type(obj) is slice:
            result = _slice_key(result, dim, obj, optimize=True)
            dim += 1
        elif obj is None:
            result = _unsqueeze(result, dim)
            dim += 1
        elif obj is Ellipsis:
            dim += a.ndim - specified
        elif isinstance(obj, (bool, np.bool_)):
            result = _unsqueeze(result, dim)
            adv.append((dim, np.zeros(1 if obj else 0, dtype=np.int64), False))
            dim += 1
        elif isinstance(obj, (Tensor, np.ndarray, list, tuple, range)):
            arr = _idx_array(obj)
            if arr.ndim == 0 and arr.dtype.kind == "i":
                result = _select_checked(result, dim, int(arr), i)
            elif arr.ndim == 0:  # 0-d bool or byte tensor: like a Python bool
                result = _unsqueeze(result, dim)
                adv.append((dim, np.zeros(1 if arr else 0, dtype=np.int64), False))
                dim += 1
            elif arr.dtype in (np.bool_, np.uint8):
                if arr.dtype == np.uint8:
                    _warn(_UINT8_WARNING, UserWarning, stacklevel=2)
                    arr = arr.astype(np.bool_)
                adv.append((dim, arr, True))
                dim += arr.ndim
            else:
                adv.append((dim, arr, False))
                dim += 1
            if arr.ndim and isinstance(obj, Tensor):
                tensors.append(obj)
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(obj).__name__})"
            )
    if not adv:
        return _alias(self) if result is self else result
    key, unique = _adv_key(result._data.shape, adv)
    if not tensors:  # every index array from Python values: constants of the program
        key = tuple(shape_constant(k) if isinstance(k, np.ndarray) else k for k in key)
    return _index(result, key, unique, _index_tensors(tensors))


def _select_checked(x: Tensor, d: int, index: int, real_dim: int) -> Tensor:
    n = x._data.shape[d]
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for dimension {real_dim} with size {n}")
    return _select(x, d, index % n)


def _adv_key(shape: tuple, adv: list) -> tuple:
    """(NumPy key, indices known unique) for the index arrays ``adv`` = [(dim, array,
    is_mask)], checked with torch's errors; masks become their ``nonzero()`` arrays."""
    key: list = []
    shapes = []
    unique = len(adv) == 1 and adv[0][2]
    k = 0  # ordinal of the index among the (expanded) index tensors, as torch reports it
    for d, arr, is_mask in adv:
        key += [slice(None)] * (d - len(key))
        if is_mask:
            for j in range(arr.ndim):
                if d + j >= len(shape) or arr.shape[j] != shape[d + j]:
                    raise IndexError(
                        f"The shape of the mask {list(arr.shape)} at index {j} does not match the "
                        f"shape of the indexed tensor {list(shape)} at index {d + j}"
                    )
            nz = np.nonzero(arr)
            key += nz
            shapes += [z.shape for z in nz]
            k += arr.ndim
        else:
            n = shape[d]
            if arr.size:
                bad = (arr < -n) | (arr >= n)
                if bad.any():
                    raise IndexError(
                        f"index {arr[bad].flat[0]} is out of bounds for dimension {k} with size {n}"
                    )
            key.append(arr)
            shapes.append(arr.shape)
            k += 1
    if len(shapes) > 1:
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            raise IndexError(
                "shape mismatch: indexing tensors could not be broadcast together with shapes "
                + ", ".join(str(list(s)) for s in shapes)
            ) from None
    return tuple(key), unique


# -- advanced indexing: copies ---------------------------------------------------------------


def _take_key(a: np.ndarray, indices: tuple) -> np.ndarray:
    """``a[indices]`` as a new array (an advanced index always copies)."""
    out = a[indices]
    for k in indices:
        if type(k) is np.ndarray:
            return out
    return np.array(out)


def _index_backward(g, key, self_sym_sizes, unique):
    if is_raw(g):
        z = np.zeros(self_sym_sizes, dtype=g.dtype)
        if unique:
            z[key] = g
        else:
            np.add.at(z, key, g)
        return z
    return _index_put(_zeros(self_sym_sizes, g), key, g, not unique)


IndexBackward0 = _keeps_index_tensors(
    defop(
        "IndexBackward0",
        params=("key", "self_sym_sizes", "unique"),  # key: NumPy's, masks as nonzero()
        saves=("indices",),  # the index tensors of the key
        forward=lambda a, key, self_sym_sizes, unique: (_take_key(a, key), None),
        vjp={"self": _index_backward},
        jvp=LINEAR,
    )
)


def _index(x: Tensor, key: tuple, unique: bool = False, indices=None) -> Tensor:
    """``x[key]`` with NumPy semantics for an already normalized key (IndexBackward0);
    ``indices``: the index tensors the key came from."""
    a = x._data
    try:
        out = _take_key(a, key)
    except IndexError as e:
        raise _index_error(e) from None
    return record(IndexBackward0, out, (x,), (key, a.shape, unique), (indices,))


def _np_key(key) -> tuple:
    """A raw index key as a tuple NumPy (and ``np.add.at``) understands: Tensors and lists
    become arrays and boolean masks become their ``nonzero()`` index arrays."""
    if not isinstance(key, tuple):
        key = tuple(key) if isinstance(key, list) and _seq_as_tuple(key) else (key,)
    out = []
    for k in key:
        if isinstance(k, (Tensor, list, np.ndarray)):
            arr = _idx_array(k)
            if arr.dtype == np.uint8:
                arr = arr.astype(np.bool_)
            if arr.dtype == np.bool_ and arr.ndim:
                parts = list(np.nonzero(arr))
            else:
                parts = [arr]
            if not isinstance(k, Tensor):  # from Python values: a constant of the program
                parts = [shape_constant(a) for a in parts]
            out += parts
        else:
            out.append(k)
    return tuple(out)


def index_np(x: Tensor, key) -> Tensor:
    """``x[key]`` with NumPy's semantics for a raw key (integers count as advanced indices
    next to index arrays); recorded as IndexBackward0. Used by rules with raw keys."""
    return _index(x, _np_key(key))


# -- index_put ---------------------------------------------------------------------------------


def _index_put_forward(a, v, key, accumulate):
    out = a.copy()
    if accumulate:
        np.add.at(out, key, v)
    else:
        out[key] = v
    return out


def _without(g, indices):
    """``g`` with zeros at ``indices``."""
    if is_raw(g):
        g = g.copy()
        g[indices] = 0
        return g
    return _index_put(g, indices, _wrap(np.zeros((), g._data.dtype)), False)


def _part(g, indices):
    """``g[indices]`` as a new array, or recorded."""
    if is_raw(g):
        return _take_key(g, indices)
    return _index(g, indices)


IndexPutBackward0 = _keeps_index_tensors(
    defop(
        "IndexPutBackward0",
        inputs=("self", "values"),
        params=("key", "accumulate"),
        saves=("indices",),
        forward=lambda a, v, key, accumulate: (_index_put_forward(a, v, key, accumulate), None),
        vjp={
            "self": lambda g, key, accumulate: g if accumulate else _without(g, key),
            "values": lambda g, key: _part(g, key),
        },
        jvp=LINEAR,
    )
)


def _index_put(x: Tensor, key: tuple, values: Tensor, accumulate: bool, indices=None) -> Tensor:
    """``index_put`` for a normalized key and values of ``x``'s dtype (no checks)."""
    token = quiet_set(QUIET)
    try:
        out = _index_put_forward(x._data, values._data, key, accumulate)
    finally:
        quiet_reset(token)
    return record(IndexPutBackward0, out, (x, values), (key, accumulate), (indices,))


def _tensor_indices(a: np.ndarray, indices: tuple) -> tuple:
    """torch's ``indices`` (a tuple of index tensors) as a NumPy key, checked as torch."""
    adv = []
    dim = 0
    for t in indices:
        arr = _idx_array(t)
        if arr.dtype == np.uint8:
            _warn(_UINT8_WARNING, UserWarning, stacklevel=3)
            arr = arr.astype(np.bool_)
        if arr.dtype == np.bool_ and arr.ndim:
            adv.append((dim, arr, True))
            dim += arr.ndim
        else:
            adv.append((dim, arr, False))
            dim += 1
    if dim > a.ndim:
        raise IndexError(f"too many indices for tensor of dimension {a.ndim} (got {dim})")
    return _adv_key(a.shape, adv)[0]


def _result_shape(a: np.ndarray, key: tuple) -> tuple:
    """The shape of ``a[key]`` (computed on a stand-in: no copy of the data)."""
    try:
        return np.broadcast_to(np.zeros((), np.bool_), a.shape)[key].shape
    except IndexError as e:
        raise _index_error(e) from None


@register("index_put", method=True, inplace=True)
def index_put(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """Out-of-place ``input[indices] = values`` (``+=`` with ``accumulate``, summing repeats).

    ``indices`` is a tuple of index tensors (torch) or any raw NumPy-style key.

    Example:
        >>> import ember
        >>> ember.zeros(3).index_put((ember.tensor([0, 0]),), ember.tensor(1.0), True)
        tensor([2., 0., 0.])
    """
    a = input._data
    if (
        isinstance(indices, (tuple, list))
        and indices
        and all(isinstance(t, Tensor) for t in indices)
    ):
        key = _tensor_indices(a, tuple(indices))
        tensors = list(indices)
    else:
        key = _np_key(tuple(indices) if isinstance(indices, list) else indices)
        tensors = []
    if isinstance(values, Tensor):
        if values._data.dtype != a.dtype:
            raise RuntimeError(
                "Index put requires the source and destination dtypes match, got "
                f"{scalar_name(a.dtype)} for the destination and "
                f"{scalar_name(values._data.dtype)} for the source."
            )
    else:
        values = _wrap(np.asarray(values, dtype=a.dtype))
    v = values._data
    if v.ndim:
        target = _result_shape(a, key)
        try:
            fits = np.broadcast_shapes(v.shape, target) == target
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(v.shape)} cannot be broadcast to "
                f"indexing result of shape {list(target)}"
            )
    try:
        return _index_put(input, key, values, bool(accumulate), _index_tensors(tensors))
    except IndexError as e:
        raise _index_error(e) from None


# -- index_select / index_add ------------------------------------------------------------------


def _check_index_dtype(idx: np.ndarray, msg: str) -> None:
    if idx.dtype != np.int64 and idx.dtype != np.int32:
        raise RuntimeError(msg)


def _index_select_forward(a, dim, idx, self_sym_sizes):
    if a.ndim:
        return a.take(intp(idx), axis=dim)
    return a.reshape(1)[idx].reshape(())


def _index_select_backward(g, dim, idx, self_sym_sizes):
    if not self_sym_sizes:
        return g  # a 0-d input: the engine sums the selected copies
    if is_raw(g):
        z = np.zeros(self_sym_sizes, dtype=g.dtype)
        np.add.at(z, (slice(None),) * dim + (idx,), g)
        return z
    return _index_add(_zeros(self_sym_sizes, g), dim, idx, g, 1)


IndexSelectBackward0 = _keeps_index_tensors(
    defop(
        "IndexSelectBackward0",
        params=("dim", "idx", "self_sym_sizes"),  # idx: the index, flat
        saves=("index",),
        forward=lambda a, dim, idx, self_sym_sizes: (
            _index_select_forward(a, dim, idx, self_sym_sizes),
            None,
        ),
        vjp={"self": _index_select_backward},
        jvp=LINEAR,
    )
)


def _index_select(x: Tensor, d: int, idx: np.ndarray, index=None) -> Tensor:
    a = x._data
    out = a.take(intp(idx), axis=d) if a.ndim else a.reshape(1)[idx].reshape(())
    return record(IndexSelectBackward0, out, (x,), (d, idx, a.shape), (index,))


@register("index_select", method=True)
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The entries at ``index`` (a vector) along ``dim`` (a copy).

    Example:
        >>> import ember
        >>> ember.tensor([[1, 2, 3]]).index_select(1, ember.tensor([2, 0]))
        tensor([[3, 1]])
    """
    a = input._data
    idx = index._data
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    _check_index_dtype(idx, "index_select(): Expected dtype int32 or int64 for index")
    d = normalize_dim(dim, a.ndim)
    n = a.shape[d] if a.ndim else 1
    flat = idx.reshape(-1)
    check_values(_indices_within_select, flat, n)
    return _index_select(input, d, flat, index)


def _indices_within_select(flat: np.ndarray, n: int) -> None:
    bad = _outside(flat, n)
    if bad.any():
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={flat[bad][0]} axis_dim={n}")


def _index_add_forward(a, s, dim, idx, alpha):
    out = a.copy()
    src = s if alpha == 1 else (s * alpha).astype(a.dtype, copy=False)
    if a.ndim:
        np.add.at(out, (slice(None),) * dim + (idx,), src)
        return out
    return out + src.reshape(())


def _index_add_source(g, dim, idx, alpha):
    if is_raw(g):
        gs = g.take(intp(idx), axis=dim) if g.ndim else g
    else:
        gs = _index_select(g, dim, idx)
    return gs if alpha == 1 else gs * alpha


IndexAddBackward0 = _keeps_index_tensors(
    defop(
        "IndexAddBackward0",
        inputs=("self", "source"),
        params=("dim", "idx", "alpha"),  # idx: the index, flat
        saves=("index",),
        forward=lambda a, s, dim, idx, alpha: (_index_add_forward(a, s, dim, idx, alpha), None),
        vjp={"self": lambda g: g, "source": _index_add_source},
        jvp=LINEAR,
    )
)


def _index_add(x: Tensor, d: int, idx: np.ndarray, source: Tensor, alpha, index=None) -> Tensor:
    token = quiet_set(QUIET)
    try:
        out = _index_add_forward(x._data, source._data, d, idx, alpha)
    finally:
        quiet_reset(token)
    return record(IndexAddBackward0, out, (x, source), (d, idx, alpha), (index,))


@register("index_add", method=True, inplace=True)
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """Out-of-place ``input.index_add_``: add ``alpha * source`` slices at ``index``.

    Example:
        >>> import ember
        >>> ember.zeros(3).index_add(0, ember.tensor([0, 0]), ember.ones(2))
        tensor([2., 0., 0.])
    """
    a = input._data
    s = source._data
    idx = index._data
    d = normalize_dim(dim, a.ndim)
    if idx.ndim > 1:
        raise IndexError(
            "index_add_(): Index is supposed to be a vector, but got dim: "
            f"{idx.ndim} with type: {scalar_name(idx.dtype)} and size: {list(idx.shape)}"
        )
    if idx.dtype != np.int64 and idx.dtype != np.int32:
        raise RuntimeError(
            f"index_add_(): Expected dtype int32/int64 for index but got: {scalar_name(idx.dtype)}"
        )
    if s.dtype != a.dtype:
        raise RuntimeError(
            f"index_add_(): self ({scalar_name(a.dtype)}) and source ({scalar_name(s.dtype)}) "
            "must have the same scalar type"
        )
    if not (d == 0 or d < s.ndim):
        raise RuntimeError(
            f"index_add_(): Indexing dim {d} is out of bounds of the source tensor with dim "
            f"{s.ndim}"
        )
    n_src = s.shape[d] if s.ndim else 1
    if idx.size != n_src:
        raise RuntimeError(
            f"index_add_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
            f"({n_src}), for dim: {d}"
        )
    if a.ndim and s.ndim:
        same = s.shape[:d] + s.shape[d + 1 :] == a.shape[:d] + a.shape[d + 1 :]
    else:
        same = a.shape == s.shape
    if not same:
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(a.shape)} source.shape = {list(s.shape)}"
        )
    flat = idx.reshape(-1)
    _check_bounds_dim(flat, d, a.shape[d] if a.ndim else 1)
    return _index_add(input, d, flat, source, alpha, index)


# -- gather / scatter ----------------------------------------------------------------------


def _coords(idx: np.ndarray, d: int) -> tuple:
    """Full coordinates of ``idx``'s elements with dim ``d`` replaced by the index values
    (the other dims' aranges, shaped to broadcast: what ``np.ogrid`` gives, 10x faster)."""
    nd = idx.ndim
    grids = []
    for k, n in enumerate(idx.shape):
        if k == d:
            grids.append(idx)
        else:
            shape = [1] * nd
            shape[k] = n
            grids.append(np.arange(n).reshape(shape))
    return tuple(grids)


def _check_gather_args(a, idx, fname):
    if idx.ndim != a.ndim and not (idx.ndim <= 1 and a.ndim <= 1):
        raise RuntimeError(
            f"Index tensor must have the same number of dimensions as {fname} tensor"
        )


def _outside(idx: np.ndarray, n: int) -> np.ndarray:
    """Where the int32/int64 ``idx`` is outside ``[0, n)``: one comparison, negative values
    being huge once viewed as unsigned."""
    return idx.view(np.uint64 if idx.dtype == np.int64 else np.uint32) >= n


def _check_bounds_dim(idx: np.ndarray, d: int, n: int) -> None:
    check_values(_indices_within_dim, idx, d, n)


def _indices_within_dim(idx: np.ndarray, d: int, n: int) -> None:
    if idx.size:
        bad = _outside(idx, n)
        if bad.any():
            raise RuntimeError(
                f"index {idx[bad].flat[0]} is out of bounds for dimension {d} with size {n}"
            )


def _gather_forward(a, dim, idx):
    if a.ndim == 0 or idx.ndim == 0:
        return a.reshape(-1)[idx.reshape(-1)].reshape(idx.shape)
    return a[_coords(idx, dim)]


def _gather_backward(g, dim, idx, self_sym_sizes):
    if not self_sym_sizes:
        return g  # a 0-d input: the engine sums the gathered copies
    if is_raw(g):
        z = np.zeros(self_sym_sizes, dtype=g.dtype)
        np.add.at(z, _coords(idx, dim), g)
        return z
    return _scatter_add(_zeros(self_sym_sizes, g), dim, idx, g)


GatherBackward0 = _keeps_index_tensors(
    defop(
        "GatherBackward0",
        params=("dim", "idx", "self_sym_sizes"),
        saves=("index",),
        forward=lambda a, dim, idx, self_sym_sizes: (_gather_forward(a, dim, idx), None),
        vjp={"self": _gather_backward},
        jvp=LINEAR,
    )
)


def _gather(x: Tensor, d: int, idx: np.ndarray, index=None) -> Tensor:
    a = x._data
    return record(GatherBackward0, _gather_forward(a, d, idx), (x,), (d, idx, a.shape), (index,))


@register("gather", method=True)
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = input[i][index[i][j]]`` (for ``dim=1``); ``out`` has index's shape.

    Example:
        >>> import ember
        >>> ember.tensor([[1, 2], [3, 4]]).gather(1, ember.tensor([[1], [0]]))
        tensor([[2],
                [3]])
    """
    a = input._data
    idx = index._data
    _check_index_dtype(idx, "gather(): Expected dtype int32/int64 for index")
    _check_gather_args(a, idx, "input")
    d = normalize_dim(dim, a.ndim)
    if a.ndim == 0 or idx.ndim == 0:
        _check_bounds_dim(idx, d, 1)
    else:
        for k in range(a.ndim):
            if k != d and idx.shape[k] > a.shape[k]:
                raise RuntimeError(
                    f"Size does not match at dimension {k} expected index {list(idx.shape)} to "
                    f"be no larger than self {list(a.shape)} apart from dimension {d}"
                )
        _check_bounds_dim(idx, d, a.shape[d])
    return _gather(input, d, idx, index)


def _scatter_checks(a, idx, d, src):
    _check_index_dtype(idx, "scatter(): Expected dtype int32/int64 for index")
    _check_gather_args(a, idx, "self")
    if a.ndim == 0:
        return
    bad = any(idx.shape[k] > a.shape[k] for k in range(a.ndim) if k != d)
    if src is not None and not bad:
        bad = any(idx.shape[k] > src.shape[k] for k in range(a.ndim))
    if bad:
        msg = (
            f"Expected index {list(idx.shape)} to be no larger than self {list(a.shape)} apart "
            f"from dimension {d}"
        )
        if src is not None:
            msg += f" and to be no larger size than src {list(src.shape)}"
        raise RuntimeError(msg)
    _check_bounds_dim(idx, d, a.shape[d])


def _scatter_at(a: np.ndarray, dim: int, index: np.ndarray) -> tuple:
    return _coords(index, dim) if a.ndim else ()


def _region(idx_shape) -> tuple:
    return tuple(slice(0, s) for s in idx_shape)


def _pad_to(gs, shape):
    """Place ``gs`` (index-shaped) in the leading corner of zeros of ``shape`` (a ``src``
    larger than the index gets zeros where nothing was read; torch refuses that gradient)."""
    if tuple(gs.shape) == tuple(shape):
        return gs
    if is_raw(gs):
        z = np.zeros(shape, dtype=gs.dtype)
        z[_region(gs.shape)] = gs
        return z
    return _index_put(_zeros(shape, gs), _region(gs.shape), gs, False)


def _scatter_forward(a, s, dim, idx):
    out = a.copy()
    out[_scatter_at(a, dim, idx)] = s[_region(idx.shape)]
    return out


def _scatter_self(g, dim, idx):
    """``g.scatter(dim, index, 0)``."""
    if is_raw(g):
        g = g.copy()
        g[_scatter_at(g, dim, idx)] = 0
        return g
    return _scatter_value(g, dim, idx, 0)


def _scatter_src(g, dim, idx, src_sizes):
    """``g.gather(dim, index)``: every src element written at a repeated index gets the
    gradient there (torch's rule), in ``src``'s shape."""
    if is_raw(g):
        gs = g[_scatter_at(g, dim, idx)] if g.ndim else g
    else:
        gs = _gather(g, dim, idx)
    return _pad_to(gs, src_sizes)


ScatterBackward0 = _keeps_index_tensors(
    defop(
        "ScatterBackward0",
        inputs=("self", "src"),
        params=("dim", "idx", "src_sizes"),
        saves=("index",),
        forward=lambda a, s, dim, idx, src_sizes: (_scatter_forward(a, s, dim, idx), None),
        vjp={"self": _scatter_self, "src": _scatter_src},
        jvp=LINEAR,
    )
)


def _scatter_value_forward(a, dim, idx, value):
    out = a.copy()
    out[_scatter_at(a, dim, idx)] = value
    return out


ScatterBackward1 = _keeps_index_tensors(
    defop(  # scatter of a number: a constant where written
        "ScatterBackward1",
        params=("dim", "idx", "value"),
        saves=("index",),
        forward=lambda a, dim, idx, value: (_scatter_value_forward(a, dim, idx, value), None),
        vjp={"self": _scatter_self},
        jvp=lambda t_self, dim, idx: _scatter_value(t_self, dim, idx, 0),
    )
)


def _scatter_value(x: Tensor, d: int, idx: np.ndarray, value, index=None) -> Tensor:
    a = x._data
    v = np.asarray(value).astype(a.dtype)
    out = _scatter_value_forward(a, d, idx, v)
    return record(ScatterBackward1, out, (x,), (d, idx, v), (index,))


def _no_scatter_derivative(g):
    raise RuntimeError("derivative for aten::scatter is not implemented")


def _no_scatter_forward_derivative():
    raise NotImplementedError(
        "Trying to use forward AD with aten::scatter that does not support it."
    )


ScatterReduce = defop(  # scatter with reduce=: torch has no derivative (a node that says so)
    "NotImplemented",
    inputs=("*tensors",),
    vjp=_no_scatter_derivative,
    jvp=_no_scatter_forward_derivative,
)

_warned_reduce = []


def _scatter_reduce(input: Tensor, d: int, idx: np.ndarray, src, value, reduce: str) -> Tensor:
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    a = input._data
    if src is not None and not _warned_reduce:
        _warned_reduce.append(True)
        _warn(_REDUCE_WARNING, UserWarning, stacklevel=3)
    vals = src._data[_region(idx.shape)] if src is not None else np.asarray(value).astype(a.dtype)
    out = a.copy()
    token = quiet_set(QUIET)
    try:
        ufunc = np.add if reduce == "add" else np.multiply
        ufunc.at(out, _scatter_at(a, d, idx), vals)
    finally:
        quiet_reset(token)
    # torch's node lists only the operands that take part in autograd
    operands = tuple(
        t
        for t in (input, src)
        if isinstance(t, Tensor) and (t._rg or (_on and tangent_of(t) is not None))
    )
    return record(ScatterReduce, out, operands)


@register("scatter", method=True, inplace=True)
def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce=None):
    """Out-of-place ``scatter_``: write ``src`` (or a scalar ``value``) at ``index`` along
    ``dim``.

    Example:
        >>> import ember
        >>> ember.zeros(2, 3).scatter(1, ember.tensor([[2], [0]]), 1.0)
        tensor([[0., 0., 1.],
                [1., 0., 0.]])
    """
    a = input._data
    idx = index._data
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    if src is not None and not isinstance(src, Tensor):
        value, src = src, None
    s = None if src is None else src._data
    if s is not None and s.dtype != a.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = normalize_dim(dim, a.ndim)
    _scatter_checks(a, idx, d, s)
    if reduce is not None:
        return _scatter_reduce(input, d, idx, src, value, reduce)
    if src is None:
        return _scatter_value(input, d, idx, value, index)
    out = _scatter_forward(a, s, d, idx)
    return record(ScatterBackward0, out, (input, src), (d, idx, s.shape), (index,))


def _scatter_add_forward(a, s, dim, idx):
    out = a.copy()
    np.add.at(out, _scatter_at(a, dim, idx), s[_region(idx.shape)])
    return out


ScatterAddBackward0 = _keeps_index_tensors(
    defop(
        "ScatterAddBackward0",
        inputs=("self", "src"),
        params=("dim", "idx", "src_sizes"),
        saves=("index",),
        forward=lambda a, s, dim, idx, src_sizes: (_scatter_add_forward(a, s, dim, idx), None),
        vjp={"self": lambda g: g, "src": _scatter_src},
        jvp=LINEAR,
    )
)


def _scatter_add(x: Tensor, d: int, idx: np.ndarray, src: Tensor, index=None) -> Tensor:
    s = src._data
    token = quiet_set(QUIET)
    try:
        out = _scatter_add_forward(x._data, s, d, idx)
    finally:
        quiet_reset(token)
    return record(ScatterAddBackward0, out, (x, src), (d, idx, s.shape), (index,))


@register("scatter_add", method=True, inplace=True)
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """Out-of-place ``scatter_add_``: add ``src`` at ``index`` along ``dim`` (repeats sum).

    Example:
        >>> import ember
        >>> ember.zeros(3).scatter_add(0, ember.tensor([0, 0]), ember.ones(2))
        tensor([2., 0., 0.])
    """
    a = input._data
    idx = index._data
    s = src._data
    if s.dtype != a.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = normalize_dim(dim, a.ndim)
    _scatter_checks(a, idx, d, s)
    return _scatter_add(input, d, idx, src, index)


# -- scatter_reduce ------------------------------------------------------------------------

_SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin", "max", "min")


def _reduce_kind(reduce: str) -> str:
    """torch also takes the legacy names "max"/"min" for "amax"/"amin"."""
    return {"max": "amax", "min": "amin"}.get(reduce, reduce)


def _scatter_reduce_forward(a, s, dim, idx, reduce, include_self):
    at = _scatter_at(a, dim, idx)
    vals = s[_region(idx.shape)]
    kind = _reduce_kind(reduce)
    out = a.copy()
    if kind == "mean":
        count = np.zeros(a.shape, np.int64)
        np.add.at(count, at, 1)
        if not include_self:
            out[at] = 0
        else:
            count += 1
        np.add.at(out, at, vals)
        count[count == 0] = 1  # (where nothing was scattered with include_self=False)
        if out.dtype.kind in "iub":
            return np.floor_divide(out, count).astype(out.dtype, copy=False)
        return (out / count).astype(out.dtype, copy=False)
    ufunc = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[kind]
    if not include_self:
        out[at] = _identity(kind, out.dtype)
    ufunc.at(out, at, vals)
    return out


def _identity(kind: str, dt: np.dtype):
    """The value a reduction starts from where ``include_self=False``."""
    if kind in ("sum", "prod"):
        return 0 if kind == "sum" else 1
    if dt.kind == "b":
        return kind == "amin"
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return info.min if kind == "amax" else info.max
    return -np.inf if kind == "amax" else np.inf


def _scatter_reduce_grads(g, self, src, result, dim, idx, reduce, include_self):
    """torch's ``scatter_reduce_backward``, with ember ops: recorded when ``g`` is a Tensor
    (a differentiable backward), on raw arrays otherwise."""
    raw = is_raw(g)
    if raw:
        g, self, src, result = (_wrap(np.asarray(v)) for v in (g, self, src, result))
    a, s = self._data, src._data
    at = _scatter_at(a, dim, idx)
    region = s[_region(idx.shape)]
    kind = _reduce_kind(reduce)
    dt = g._data.dtype

    def const(v):
        return _wrap(np.asarray(v, dtype=dt))

    if kind == "sum":
        grad_self, grad_src = g, _gather(g, dim, idx)
    elif kind == "mean":
        n = np.full(a.shape, 1 if include_self else 0, dtype=dt)
        np.add.at(n, at, 1)
        n[n == 0] = 1
        grad_self = g / const(n)
        grad_src = _gather(g, dim, idx) / const(n[at] if a.ndim else n)
    elif kind == "prod":
        zero = a == 0
        masked_self = _masked_fill(self, zero, np.ones((), a.dtype)) if zero.any() else self
        masked_self_result = (
            _scatter_reduce_op(masked_self, dim, idx, src, reduce, include_self)
            if zero.any()
            else result
        )
        grad_self = g * masked_self_result / masked_self
        src_zero = region == 0
        n_zeros = np.zeros(a.shape, np.int64)
        np.add.at(n_zeros, at, src_zero)
        single = src_zero & (n_zeros[at] == 1) if a.ndim else src_zero & (n_zeros == 1)
        gathered = _gather(g * result, dim, idx)
        if src_zero.any():
            src_region = _gather_region(src, idx)
            grad_src = gathered / _masked_fill(src_region, src_zero, np.ones((), s.dtype))
        else:
            grad_src = gathered / _gather_region(src, idx)
        if single.any():
            masked_src = _masked_fill(src, _pad_mask(single, s.shape), np.ones((), s.dtype))
            masked_src_result = _scatter_reduce_op(self, dim, idx, masked_src, reduce, include_self)
            alt = _gather(g * masked_src_result, dim, idx)
            zero_v = np.zeros((), dt)
            grad_src = _masked_fill(grad_src, single, zero_v) + _masked_fill(alt, ~single, zero_v)
    else:  # amax / amin: the gradient shared evenly between the elements equal to the result
        r = result._data
        value = r[at] if a.ndim else r
        self_is = (a == r).astype(dt)
        src_is = (region == value).astype(dt)
        n = self_is.copy()
        np.add.at(n, at, src_is)
        shared = g / const(n)
        grad_self = shared * const(self_is)
        grad_src = _gather(shared, dim, idx) * const(src_is)
    if not include_self:
        grad_self = _scatter_value(grad_self, dim, idx, 0)
    grad_src = _pad_to(grad_src, s.shape)
    if raw:
        return grad_self._data, grad_src._data
    return grad_self, grad_src


def _gather_region(x: Tensor, idx: np.ndarray) -> Tensor:
    """``x``'s leading corner of ``idx``'s shape (what a scatter reads of ``src``)."""
    if tuple(x._data.shape) == idx.shape:
        return x
    return _index(x, _region(idx.shape))


def _pad_mask(m: np.ndarray, shape: tuple) -> np.ndarray:
    if m.shape == tuple(shape):
        return m
    out = np.zeros(shape, np.bool_)
    out[_region(m.shape)] = m
    return out


def _scatter_reduce_jvp(t_self, t_src, self, src, result, dim, idx, reduce, include_self):
    """torch's ``scatter_reduce_jvp``. torch has none for "prod" (its tangent is left
    undefined); ember gives the exact one: each element's tangent times the product of the
    others reduced with it (the backward's factors for a gradient of ones)."""
    kind = _reduce_kind(reduce)
    a = self._data
    if t_self is None:
        t_self = _wrap(np.zeros(a.shape, a.dtype))
    if t_src is None:
        t_src = _wrap(np.zeros(src._data.shape, a.dtype))
    if kind == "prod":
        ones = _wrap(np.ones(a.shape, a.dtype))
        d_self, d_src = _scatter_reduce_grads(
            ones, self, src, result, dim, idx, reduce, include_self
        )
        return _scatter_add(t_self * d_self, dim, idx, _gather_region(t_src * d_src, idx))
    if kind in ("sum", "mean"):
        return _scatter_reduce_op(t_self, dim, idx, t_src, reduce, include_self)
    at = _scatter_at(a, dim, idx)
    r = result._data
    value = r[at] if a.ndim else r
    self_is = (a == r).astype(a.dtype)
    if not include_self:
        self_is[at] = 0
    src_is = (src._data[_region(idx.shape)] == value).astype(a.dtype)
    n = self_is.copy()
    np.add.at(n, at, src_is)
    n[n == 0] = 1
    picked = _scatter_add(
        t_self * _wrap(self_is), dim, idx, _gather_region(t_src, idx) * _wrap(src_is)
    )
    return picked / _wrap(n)


ScatterReduceBackward0 = defop(
    "ScatterReduceBackward0",
    inputs=("self", "src"),
    params=("dim", "idx", "reduce", "include_self"),
    forward=_scatter_reduce_forward,
    vjp=_scatter_reduce_grads,
    jvp=_scatter_reduce_jvp,
)


def _scatter_reduce_op(
    x: Tensor, d: int, idx: np.ndarray, src: Tensor, reduce: str, include_self: bool
) -> Tensor:
    token = quiet_set(QUIET)
    try:
        out = _scatter_reduce_forward(x._data, src._data, d, idx, reduce, include_self)
    finally:
        quiet_reset(token)
    return record(ScatterReduceBackward0, out, (x, src), (d, idx, reduce, include_self))


@register("scatter_reduce", method=True, inplace=True)
def scatter_reduce(
    input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """Out-of-place ``scatter_reduce_``: reduce ``src``'s elements into ``input`` at
    ``index`` along ``dim`` with ``reduce`` ("sum", "prod", "mean", "amax" or "amin"),
    counting ``input``'s own values unless ``include_self=False``.

    Example:
        >>> import ember
        >>> x = ember.tensor([1.0, 2.0, 3.0])
        >>> x.scatter_reduce(0, ember.tensor([0, 0, 2]), ember.tensor([5.0, 7.0, 1.0]), "amax")
        tensor([7., 2., 3.])
    """
    a = input._data
    idx = index._data
    s = src._data
    if reduce not in _SCATTER_REDUCES:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    _check_index_dtype(idx, "scatter(): Expected dtype int32/int64 for index")
    if s.dtype != a.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = normalize_dim(dim, a.ndim)
    _scatter_checks(a, idx, d, s)
    return _scatter_reduce_op(input, d, idx, src, reduce, bool(include_self))


# -- masked_scatter / index_copy -------------------------------------------------------------


def _masked_scatter_forward(a, s, m, source_sym_sizes):
    out = np.array(np.broadcast_to(a, m.shape))
    out[m] = s.reshape(-1)[: int(np.count_nonzero(m))]
    return out


def _masked_scatter_source(g, m, source_sym_sizes):
    """``g`` where the mask holds, in order, then zeros: in the source's shape."""
    n = 1
    for k in source_sym_sizes:
        n *= k
    if is_raw(g):
        flat = np.zeros(n, dtype=g.dtype)
        picked = np.broadcast_to(g, m.shape)[m]
        flat[: picked.size] = picked
        return flat.reshape(source_sym_sizes)
    picked = _masked_select(g, m)
    flat = _index_put(_zeros((n,), g), (slice(0, picked._data.size),), picked, False)
    return flat.reshape(source_sym_sizes)


MaskedScatterBackward0 = _keeps_index_tensors(
    defop(
        "MaskedScatterBackward0",
        inputs=("self", "source"),
        params=("m", "source_sym_sizes"),  # m: the mask's array, broadcast to the result's
        saves=("mask",),
        forward=lambda a, s, m, source_sym_sizes: (
            _masked_scatter_forward(a, s, m, source_sym_sizes),
            None,
        ),
        vjp={"self": lambda g, m: _masked_zero(g, m), "source": _masked_scatter_source},
        jvp=LINEAR,
    )
)


@register("masked_scatter", method=True, inplace=True)
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the positions where ``mask`` (broadcast) holds filled, in order, with
    the first elements of ``source``.

    Example:
        >>> import ember
        >>> x = ember.zeros(4)
        >>> x.masked_scatter(ember.tensor([True, False, True, False]), ember.tensor([1.0, 2.0]))
        tensor([1., 0., 2., 0.])
    """
    a = input._data
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    s = source._data
    if m.dtype != np.bool_:
        raise RuntimeError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            + scalar_name(m.dtype)
        )
    if s.dtype != a.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{scalar_name(a.dtype)} and {scalar_name(s.dtype)}"
        )
    shape = broadcast_shapes(m.shape, a.shape)
    m = np.broadcast_to(m, shape)
    if np.count_nonzero(m) > s.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out = _masked_scatter_forward(a, s, m, s.shape)
    saved = mask if isinstance(mask, Tensor) else None
    return record(MaskedScatterBackward0, out, (input, source), (m, s.shape), (saved,))


@register("masked_scatter_", method=True, function=False)
def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """In-place ``masked_scatter``: the mask is expanded to this tensor's shape (never the
    other way round).

    Example:
        >>> import ember
        >>> ember.zeros(3).masked_scatter_(ember.tensor([False, True, True]), ember.ones(2))
        tensor([0., 1., 1.])
    """
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype == np.bool_ and m.shape != self._data.shape:
        try:
            expanded_size(m.shape, self._data.shape, m.dtype)
        except RuntimeError as e:  # torch's error, from its C++ expand (named as such)
            raise RuntimeError(str(e).replace("torch.BoolTensor{", "CPUBoolType{")) from None
    return apply_inplace(self, masked_scatter, mask, source)


def _index_at(ndim: int, dim: int, idx: np.ndarray) -> tuple:
    return (slice(None),) * dim + (idx,) if ndim else (Ellipsis,)


def _index_copy_forward(a, s, dim, idx):
    out = a.copy()
    if a.ndim:
        out[_index_at(a.ndim, dim, idx)] = s.reshape(
            s.shape[:dim] + (idx.size,) + s.shape[dim + 1 :] if s.ndim else (idx.size,)
        )
    elif idx.size:
        out[...] = s.reshape(-1)[-1]
    return out


def _index_copy_self(g, dim, idx):
    """``g.index_fill(dim, index, 0)``."""
    if is_raw(g):
        g = g.copy()
        g[_index_at(g.ndim, dim, idx)] = 0
        return g
    zero = _wrap(np.zeros((), g._data.dtype))
    return _index_put(g, _index_at(g._data.ndim, dim, idx), zero, False)


def _index_copy_source(g, dim, idx, source_sym_sizes):
    """``g.index_select(dim, index)``, in the source's shape."""
    if is_raw(g):
        gs = g.take(intp(idx), axis=dim) if g.ndim else g.reshape(1)[idx]
    else:
        gs = _index_select(g, dim, idx) if g._data.ndim else g.reshape(1)
    return gs.reshape(source_sym_sizes)


IndexCopyBackward0 = _keeps_index_tensors(
    defop(
        "IndexCopyBackward0",
        inputs=("self", "source"),
        params=("dim", "idx", "source_sym_sizes"),  # idx: the index, flat
        saves=("index",),
        forward=lambda a, s, dim, idx, source_sym_sizes: (
            _index_copy_forward(a, s, dim, idx),
            None,
        ),
        vjp={"self": _index_copy_self, "source": _index_copy_source},
        jvp=LINEAR,
    )
)


@register("index_copy", method=True, inplace=True)
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """Out-of-place ``index_copy_``: ``input`` with its slices at ``index`` along ``dim``
    replaced by ``source``'s slices, in order.

    Example:
        >>> import ember
        >>> ember.zeros(3, 2).index_copy(0, ember.tensor([2, 0]), ember.ones(2, 2))
        tensor([[1., 1.],
                [0., 0.],
                [1., 1.]])
    """
    a = input._data
    s = source._data
    idx = index._data
    d = normalize_dim(dim, a.ndim)
    if idx.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
    n_idx = idx.size
    if a.ndim != s.ndim and a.ndim and s.ndim:
        raise IndexError(
            "index_copy_(): When source and destination are not scalars, their dimensionality "
            f"must match. Source dimensionality ({s.ndim}), destination dimensionality "
            f"({a.ndim})"
        )
    n_src = s.shape[d] if s.ndim else 1
    if n_idx != n_src:
        raise IndexError(
            f"index_copy_(): Number of indices ({n_idx}) should be equal to source.size(dim) "
            f"({n_src})"
        )
    if idx.dtype != np.int64:
        raise RuntimeError(
            f"index_copy_(): Expected a long tensor for index, but got {scalar_name(idx.dtype)}"
        )
    if s.dtype != a.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{scalar_name(a.dtype)} and (source) {scalar_name(s.dtype)}"
        )
    if a.ndim and s.ndim:
        for k in range(a.ndim):
            if k != d and a.shape[k] != s.shape[k]:
                raise RuntimeError(
                    "index_copy_(): Source/destination tensor must have same slice shapes. "
                    f"Destination slice shape: {_slice_shape(a.shape, d)} at dimension {d} and "
                    f"source slice shape: {_slice_shape(s.shape, d)} at dimension {d}."
                )
    flat = idx.reshape(-1)
    n = a.shape[d] if a.ndim else 1
    bad = _outside(flat, n) if flat.size else np.zeros(0, np.bool_)
    if bad.any():
        raise IndexError(
            f"index_copy_(): index {flat[bad][0]} is out of bounds for dimension {d} with size {n}"
        )
    out = _index_copy_forward(a, s, d, flat)
    return record(IndexCopyBackward0, out, (input, source), (d, flat, s.shape), (index,))


def _slice_shape(shape: tuple, d: int) -> str:
    return ", ".join(str(n) for k, n in enumerate(shape) if k != d)


# -- tril_indices / triu_indices -------------------------------------------------------------


def _tri_indices(fn, name: str, row, col, offset, dtype, device, requires_grad) -> Tensor:
    row = as_int(row, name, "row", 1)
    col = as_int(col, name, "col", 2)
    offset = as_int(offset, name, "offset", 3)
    check_device(device)
    nd = np.dtype(np.int64) if dtype is None else to_numpy_dtype(dtype)
    if nd != np.int64 and nd != np.int32:
        raise NotImplementedError(f"\"{name}\" not implemented for '{scalar_name(nd)}'")
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if requires_grad:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    rows, cols = fn(row, offset, col)
    return _wrap(np.stack([rows, cols]).astype(nd).reshape(2, -1))


@register("tril_indices")
def tril_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype=None,
    device=None,
    layout=None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """The coordinates of the lower triangle (at and below diagonal ``offset``) of a
    ``row`` x ``col`` matrix, as a ``(2, N)`` tensor ordered by rows, then columns.

    Example:
        >>> import ember
        >>> ember.tril_indices(3, 3)
        tensor([[0, 1, 1, 2, 2, 2],
                [0, 0, 1, 0, 1, 2]])
    """
    return _tri_indices(
        np.tril_indices, "tril_indices", row, col, offset, dtype, device, requires_grad
    )


@register("triu_indices")
def triu_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype=None,
    device=None,
    layout=None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """The coordinates of the upper triangle (at and above diagonal ``offset``) of a
    ``row`` x ``col`` matrix, as a ``(2, N)`` tensor ordered by rows, then columns.

    Example:
        >>> import ember
        >>> ember.triu_indices(3, 3, 1)
        tensor([[0, 0, 1],
                [1, 2, 2]])
    """
    return _tri_indices(
        np.triu_indices, "triu_indices", row, col, offset, dtype, device, requires_grad
    )


# -- masks ---------------------------------------------------------------------------------


def _masked_zero(g, m):
    """``g.masked_fill(m, 0)``."""
    if is_raw(g):
        return np.where(m, 0, g).astype(g.dtype, copy=False)
    return _masked_fill(g, m, np.zeros((), g._data.dtype))


MaskedFillBackward0 = _keeps_index_tensors(
    defop(  # masked_fill of a number: a constant where the mask holds
        "MaskedFillBackward0",
        params=("m", "value"),  # m: the mask's array
        saves=("mask",),
        forward=lambda a, m, value: (np.where(m, value, a), None),
        vjp={"self": lambda g, m: _masked_zero(g, m)},
        jvp=lambda t_self, m: _masked_zero(t_self, m),
    )
)


def _masked_fill(x: Tensor, m: np.ndarray, value: np.ndarray) -> Tensor:
    return record(MaskedFillBackward0, np.where(m, value, x._data), (x,), (m, value), (None,))


def _masked_value_grad(g, m):
    if is_raw(g):
        return np.asarray(np.where(m, g, 0).sum(), dtype=g.dtype)
    return _masked_select(g, np.broadcast_to(m, g._data.shape)).sum()


MaskedFillBackward1 = _keeps_index_tensors(
    defop(  # masked_fill of a 0-d tensor
        "MaskedFillBackward1",
        inputs=("self", "value"),
        params=("m",),
        saves=("mask",),
        forward=lambda a, v, m: (np.where(m, v.astype(a.dtype, copy=False), a), None),
        vjp={
            "self": lambda g, m: _masked_zero(g, m),
            "value": _masked_value_grad,
        },
        jvp=LINEAR,
    )
)


@register("masked_fill", method=True, inplace=True)
def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """``value`` where ``mask`` is True, else ``input`` (broadcasting).

    Example:
        >>> import ember
        >>> x = ember.tensor([1.0, 2.0, 3.0])
        >>> x.masked_fill(x > 1, 0.0)
        tensor([1., 0., 0.])
    """
    a = input._data
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype " + cpp_name(m.dtype)
        )
    if m.shape != a.shape:
        broadcast_shapes(m.shape, a.shape)
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value._data.ndim} dimension(s)."
            )
        out = np.where(m, value._data.astype(a.dtype, copy=False), a)
        return record(MaskedFillBackward1, out, (input, value), (m,), (mask,))
    v = np.asarray(value)
    if v.dtype != a.dtype:
        token = quiet_set(QUIET)
        try:
            v = v.astype(a.dtype)
        finally:
            quiet_reset(token)
    return record(MaskedFillBackward0, np.where(m, v, a), (input,), (m, v), (mask,))


def _masked_select_backward(g, m):
    if is_raw(g):
        z = np.zeros(m.shape, dtype=g.dtype)
        z[m] = g
        return z
    return _index_put(_zeros(m.shape, g), (m,), g, False)


MaskedSelectBackward0 = _keeps_index_tensors(
    defop(
        "MaskedSelectBackward0",
        params=("m",),  # the mask's array, broadcast to the shape of the op
        saves=("mask",),
        forward=lambda a, m: (np.broadcast_to(a, m.shape)[m], None),
        vjp={"self": _masked_select_backward},
        jvp=LINEAR,
    )
)


def _masked_select(x: Tensor, m: np.ndarray, mask=None) -> Tensor:
    out = np.broadcast_to(x._data, m.shape)[m]
    return record(MaskedSelectBackward0, out, (x,), (m,), (mask,))


@register("masked_select", method=True)
def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements where ``mask`` (broadcast) is True, as a 1-D tensor.

    Example:
        >>> import ember
        >>> x = ember.tensor([[1, 2], [3, 4]])
        >>> x.masked_select(x > 2)
        tensor([3, 4])
    """
    a = input._data
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_shapes(m.shape, a.shape)
    return _masked_select(input, np.broadcast_to(m, shape), mask)


# -- take / nonzero ----------------------------------------------------------------------


def _take_backward(g, idx, self_sym_sizes):
    n = 1
    for s in self_sym_sizes:
        n *= s
    flat = idx.reshape(-1)
    if is_raw(g):
        z = np.zeros(n, dtype=g.dtype)
        np.add.at(z, flat, g.reshape(-1))
        return z.reshape(self_sym_sizes)
    z = _index_put(_zeros((n,), g), (flat,), g.reshape(-1), True)
    return z.reshape(self_sym_sizes)


TakeBackward0 = _keeps_index_tensors(
    defop(
        "TakeBackward0",
        params=("idx", "self_sym_sizes"),
        saves=("index",),
        forward=lambda a, idx, self_sym_sizes: (a.reshape(-1)[idx], None),
        vjp={"self": _take_backward},
        jvp=LINEAR,
    )
)


@register("take", method=True)
def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of the flattened ``input`` at ``index``; the result has index's shape.

    Example:
        >>> import ember
        >>> ember.tensor([[1, 2], [3, 4]]).take(ember.tensor([0, 3]))
        tensor([1, 4])
    """
    a = input._data
    idx = index._data
    if idx.dtype != np.int64:
        raise RuntimeError(
            f"take(): Expected a long tensor for index, but got {scalar_name(idx.dtype)}"
        )
    n = a.size
    if idx.size:
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            raise IndexError(
                f"out of range: tried to access index {idx[bad].flat[0]} on a tensor of {n} "
                "elements."
            )
    return record(TakeBackward0, a.reshape(-1)[idx], (input,), (idx, a.shape), (index,))


@register("nonzero", method=True)
def nonzero(input: Tensor, *, as_tuple: bool = False, out=None):
    """Indices of the nonzero elements: an ``(n, ndim)`` int64 tensor, or one index tensor
    per dim with ``as_tuple=True``.

    Example:
        >>> import ember
        >>> ember.tensor([0, 3, 0, 5]).nonzero()
        tensor([[1],
                [3]])
    """
    if as_tuple and out is not None:
        raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
    a = input._data
    if a.ndim == 0:
        n = int(bool(a))
        if as_tuple:
            # torch: the columns of nonzero() of the tensor viewed as 1-D
            cols = _wrap(np.zeros((n, 1), dtype=np.int64))
            return (_column(cols, 0),)
        res = _wrap(np.zeros((n, 0), dtype=np.int64))
    else:
        res = _wrap(np.argwhere(a).astype(np.int64))
        if as_tuple:
            # torch returns the columns of one (n, ndim) result: views of it
            return tuple(_column(res, i) for i in range(a.ndim))
    if out is not None:
        out._data = res._data
        out._bump()
        return out
    return res


def _column(t: Tensor, i: int) -> Tensor:
    """Column ``i`` of an index matrix, as a view of it (no graph: integers)."""
    return record(SelectBackward0, t._data[:, i], (t,), (1, i, t._data.shape))


@register("argwhere", method=True)
def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``.

    Example:
        >>> import ember
        >>> ember.argwhere(ember.tensor([0, 1]))
        tensor([[1]])
    """
    return nonzero(input)


# -- triangular parts and diagonals ----------------------------------------------------------


def _tril(g, diagonal):
    return np.tril(g, diagonal) if is_raw(g) else _tri(TrilBackward0, np.tril, g, diagonal)


def _triu(g, diagonal):
    return np.triu(g, diagonal) if is_raw(g) else _tri(TriuBackward0, np.triu, g, diagonal)


TrilBackward0 = defop(
    "TrilBackward0",
    params=("diagonal",),
    forward=np.tril,
    vjp={"self": _tril},
    jvp=LINEAR,
)

TriuBackward0 = defop(
    "TriuBackward0",
    params=("diagonal",),
    forward=np.triu,
    vjp={"self": _triu},
    jvp=LINEAR,
)


def _tri(cls, fn, x: Tensor, diagonal: int) -> Tensor:
    return record(cls, fn(x._data, diagonal), (x,), (diagonal,))


def _tri_checked(cls, fn, name, input: Tensor, diagonal: int) -> Tensor:
    if input._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return _tri(cls, fn, input, operator.index(diagonal))


@register("tril", method=True, inplace=True)
def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle (at and below diagonal ``diagonal``) of the last two dims.

    Example:
        >>> import ember
        >>> ember.ones(2, 2).tril()
        tensor([[1., 0.],
                [1., 1.]])
    """
    return _tri_checked(TrilBackward0, np.tril, "tril", input, diagonal)


@register("triu", method=True, inplace=True)
def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle (at and above diagonal ``diagonal``) of the last two dims.

    Example:
        >>> import ember
        >>> ember.ones(2, 2).triu()
        tensor([[1., 1.],
                [0., 1.]])
    """
    return _tri_checked(TriuBackward0, np.triu, "triu", input, diagonal)


def _diag_view(a: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """The (writable) strided view of the diagonal of ``a`` over dims d1, d2, appended last."""
    n1, n2 = a.shape[d1], a.shape[d2]
    if offset >= 0:
        length = max(0, min(n1, n2 - offset))
        start = (0, offset)
    else:
        length = max(0, min(n1 + offset, n2))
        start = (-offset, 0)
    rest = [i for i in range(a.ndim) if i not in (d1, d2)]
    shape = tuple(a.shape[i] for i in rest) + (length,)
    strides = tuple(a.strides[i] for i in rest) + (a.strides[d1] + a.strides[d2],)
    base = a
    if length:
        key = [slice(None)] * a.ndim
        key[d1] = slice(start[0], None)
        key[d2] = slice(start[1], None)
        base = a[tuple(key)]
    return np.lib.stride_tricks.as_strided(base, shape, strides)


def _diag_dims(nd: int, dim1: int, dim2: int) -> tuple:
    d1 = normalize_dim(dim1, nd)
    d2 = normalize_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def _diagonal_backward(g, offset, dim1, dim2, self_sym_sizes):
    if is_raw(g):
        z = np.zeros(self_sym_sizes, dtype=g.dtype)
        _diag_view(z, offset, dim1, dim2)[...] = g
        return z
    return _diagonal_scatter(_zeros(self_sym_sizes, g), g, offset, dim1, dim2)


DiagonalBackward0 = defop(
    "DiagonalBackward0",
    params=("offset", "dim1", "dim2", "self_sym_sizes"),
    forward=lambda a, offset, dim1, dim2, self_sym_sizes: _diag_view(a, offset, dim1, dim2),
    vjp={"self": _diagonal_backward},
    jvp=LINEAR,
    view=True,
)

DiagonalBackward0_copy = defop(  # diag of a matrix: the diagonal, copied
    "DiagonalBackward0_copy",
    params=("offset", "dim1", "dim2", "self_sym_sizes"),
    forward=lambda a, offset, dim1, dim2, self_sym_sizes: _diag_view(a, offset, dim1, dim2).copy(),
    vjp={"self": _diagonal_backward},
    jvp=LINEAR,
)


def _diagonal(x: Tensor, offset: int, d1: int, d2: int) -> Tensor:
    a = x._data
    return record(DiagonalBackward0, _diag_view(a, offset, d1, d2), (x,), (offset, d1, d2, a.shape))


@register("diagonal", method=True)
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The view of the diagonal over ``dim1``/``dim2`` (appended as the last dim).

    Example:
        >>> import ember
        >>> ember.arange(9).view(3, 3).diagonal()
        tensor([0, 4, 8])
    """
    d1, d2 = _diag_dims(input._data.ndim, dim1, dim2)
    return _diagonal(input, operator.index(offset), d1, d2)


def _diag_embed_forward(a, offset, dim1, dim2):
    nd = a.ndim + 1
    m = (a.shape[-1] if a.ndim else 1) + abs(offset)
    batch = list(a.shape[:-1])
    shape = [m if i in (dim1, dim2) else batch.pop(0) for i in range(nd)]
    out = np.zeros(shape, dtype=a.dtype)
    _diag_view(out, offset, dim1, dim2)[...] = a
    return out


def _diag_embed_backward(g, offset, dim1, dim2):
    if is_raw(g):
        return _diag_view(g, offset, dim1, dim2).copy()
    return _diagonal(g, offset, dim1, dim2)


DiagEmbedBackward0 = defop(
    "DiagEmbedBackward0",
    params=("offset", "dim1", "dim2"),
    forward=_diag_embed_forward,
    vjp={"self": _diag_embed_backward},
    jvp=LINEAR,
)


def _diag_embed(x: Tensor, offset: int, d1: int, d2: int) -> Tensor:
    out = _diag_embed_forward(x._data, offset, d1, d2)
    return record(DiagEmbedBackward0, out, (x,), (offset, d1, d2))


@register("diag_embed", method=True)
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices whose diagonal (over ``dim1``/``dim2``) holds the last dim of ``input``.

    Example:
        >>> import ember
        >>> ember.diag_embed(ember.tensor([1, 2]))
        tensor([[1, 0],
                [0, 2]])
    """
    d1, d2 = _diag_dims(input._data.ndim + 1, dim1, dim2)
    return _diag_embed(input, operator.index(offset), d1, d2)


@register("diag", method=True)
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D tensor as a diagonal matrix, or a matrix's diagonal as a 1-D tensor (a copy).

    Example:
        >>> import ember
        >>> ember.diag(ember.tensor([1, 2]))
        tensor([[1, 0],
                [0, 2]])
    """
    a = input._data
    diagonal = operator.index(diagonal)
    if a.ndim == 1:
        return _diag_embed(input, diagonal, 0, 1)
    if a.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {a.ndim}D")
    out = _diag_view(a, diagonal, 0, 1).copy()
    return record(DiagonalBackward0_copy, out, (input,), (diagonal, 0, 1, a.shape))


# -- *_scatter: the out-of-place inverses of views (used by recorded backward rules) ---------


# (slice_scatter is in shape.py, beside the slice it inverts: SliceBackward0's rule uses it.)


def _select_scatter_forward(a, s, dim, index):
    out = a.copy()
    out[(slice(None),) * dim + (index,)] = s
    return out


def _select_scatter_self(g, dim, index):
    if is_raw(g):
        return _select_scatter_forward(g, 0, dim, index)
    z = np.zeros(g._data[(slice(None),) * dim + (index,)].shape, g._data.dtype)
    return _select_scatter(g, _wrap(z), dim, index)


def _select_scatter_src(g, dim, index):
    if is_raw(g):
        return np.array(g[(slice(None),) * dim + (index,)])
    return _select(g, dim, index)


SelectScatterBackward0 = defop(
    "SelectScatterBackward0",
    inputs=("self", "src"),
    params=("dim", "index"),
    forward=_select_scatter_forward,
    vjp={"self": _select_scatter_self, "src": _select_scatter_src},
    jvp=LINEAR,
)


def _select_scatter(x: Tensor, src: Tensor, d: int, index: int) -> Tensor:
    out = _select_scatter_forward(x._data, src._data, d, index)
    return record(SelectScatterBackward0, out, (x, src), (d, index))


@register("select_scatter", method=True)
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``input.select(dim, index)`` replaced by ``src``.

    Example:
        >>> import ember
        >>> ember.zeros(2, 2).select_scatter(ember.ones(2), 0, 0)
        tensor([[1., 1.],
                [0., 0.]])
    """
    a = input._data
    d = normalize_dim(dim, a.ndim)
    index = operator.index(index)
    n = a.shape[d]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(a.shape)} at "
            f"dimension {d}"
        )
    index %= n
    _check_src(src._data, a[(slice(None),) * d + (index, Ellipsis)])
    return _select_scatter(input, src, d, index)


def _diagonal_scatter_forward(a, s, offset, dim1, dim2):
    out = a.copy()
    _diag_view(out, offset, dim1, dim2)[...] = s
    return out


def _diagonal_scatter_self(g, offset, dim1, dim2):
    if is_raw(g):
        return _diagonal_scatter_forward(g, 0, offset, dim1, dim2)
    z = _wrap(np.zeros(_diag_view(g._data, offset, dim1, dim2).shape, g._data.dtype))
    return _diagonal_scatter(g, z, offset, dim1, dim2)


def _diagonal_scatter_src(g, offset, dim1, dim2):
    if is_raw(g):
        return _diag_view(g, offset, dim1, dim2).copy()
    return _diagonal(g, offset, dim1, dim2)


DiagonalScatterBackward0 = defop(
    "DiagonalScatterBackward0",
    inputs=("self", "src"),
    params=("offset", "dim1", "dim2"),
    forward=_diagonal_scatter_forward,
    vjp={"self": _diagonal_scatter_self, "src": _diagonal_scatter_src},
    jvp=LINEAR,
)


def _diagonal_scatter(x: Tensor, src: Tensor, offset: int, d1: int, d2: int) -> Tensor:
    out = _diagonal_scatter_forward(x._data, src._data, offset, d1, d2)
    return record(DiagonalScatterBackward0, out, (x, src), (offset, d1, d2))


@register("diagonal_scatter", method=True)
def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """A copy of ``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src``.

    Example:
        >>> import ember
        >>> ember.zeros(2, 2).diagonal_scatter(ember.ones(2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    a = input._data
    d1, d2 = _diag_dims(a.ndim, dim1, dim2)
    offset = operator.index(offset)
    _check_src(src._data, _diag_view(a, offset, d1, d2))
    return _diagonal_scatter(input, src, offset, d1, d2)


register_methods({"__getitem__": getitem})


# -- take_along_dim, diagflat, put ----------------------------------------------------------


@register("take_along_dim", method=True)
def take_along_dim(input: Tensor, indices: Tensor, dim=None, *, out=None) -> Tensor:
    """Values of ``input`` at ``indices`` along ``dim`` (``gather`` after broadcasting the
    other dims of both); without ``dim``, of the flattened ``input``.

    Example:
        >>> import ember
        >>> x = ember.tensor([[10, 30, 20], [60, 40, 50]])
        >>> ember.take_along_dim(x, x.argmax(1, keepdim=True), 1)
        tensor([[30],
                [60]])
    """
    require_tensor(input, "take_along_dim")
    require_tensor(indices, "take_along_dim", "indices", 2)
    a, idx = input._data, indices._data
    if idx.dtype != np.int64:
        raise RuntimeError(
            "torch.take_along_dim(): dtype of indices should be Long but got "
            f"{scalar_name(idx.dtype)}"
        )
    if dim is None:
        res = gather(_reshape(input, (-1,)), 0, _reshape(indices, (-1,)))
        return write_out("take_along_dim", res, out)
    d = normalize_dim(dim, a.ndim)
    if a.ndim != idx.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {a.ndim} dimensions for input, and {idx.ndim} dimensions for "
            "indices"
        )
    sizes = list(a.shape)
    sizes[d] = idx.shape[d]
    shape = list(broadcast_shapes(tuple(sizes), idx.shape))
    if tuple(shape) != idx.shape:
        indices = _expand_to(indices, *shape)
    shape[d] = a.shape[d]
    if tuple(shape) != a.shape:
        input = _expand_to(input, *shape)
    return write_out("take_along_dim", gather(input, d, indices), out)


@register("diagflat", method=True)
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A matrix whose ``offset`` diagonal holds the elements of ``input`` (flattened).

    Example:
        >>> import ember
        >>> ember.diagflat(ember.tensor([[1, 2], [3, 4]]))
        tensor([[1, 0, 0, 0],
                [0, 2, 0, 0],
                [0, 0, 3, 0],
                [0, 0, 0, 4]])
    """
    require_tensor(input, "diagflat")
    flat = input if input._data.ndim == 1 else _reshape(input, (-1,))
    return diag_embed(flat, offset)


def _put_forward(a, src, index, accumulate):
    out = a.copy()
    flat = out.reshape(-1)
    if accumulate:
        np.add.at(flat, intp(index), src.reshape(-1))
    else:
        flat[index] = src.reshape(-1)
    return out


def _put_self_vjp(g, index, accumulate):
    """The gradient of ``self``: all of ``g``, or without the replaced positions."""
    if accumulate:
        return g
    if is_raw(g):
        out = np.array(g)
        out.reshape(-1)[index] = 0
        return out
    zeros = _wrap(np.zeros(np.shape(index), dtype=g._data.dtype))
    return put(g, _wrap(np.asarray(index, np.int64)), zeros)


def _put_source_vjp(g, source, index):
    """The gradient of ``source``: ``g`` at the positions written (``g.take(index)``)."""
    if is_raw(g):
        return np.asarray(g).reshape(-1)[index].reshape(np.shape(source))
    return take(g, _wrap(np.asarray(index, np.int64))).reshape(tuple(source.shape))


PutBackward0 = defop(
    "PutBackward0",
    inputs=("self", "source"),
    params=("index", "accumulate"),
    forward=_put_forward,
    vjp={"self": _put_self_vjp, "source": _put_source_vjp},
    jvp=LINEAR,
)


@register("put", method=True, inplace=True)
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``input`` with the elements of ``source`` written at the flat positions ``index``
    (added to them with ``accumulate=True``).

    Example:
        >>> import ember
        >>> ember.zeros(2, 2).put(ember.tensor([0, -1]), ember.tensor([1.0, 2.0]))
        tensor([[1., 0.],
                [0., 2.]])
    """
    require_tensor(input, "put")
    require_tensor(index, "put", "index", 2)
    require_tensor(source, "put", "source", 3)
    a, idx, src = input._data, index._data, source._data
    if idx.dtype != np.int64:
        raise RuntimeError(
            f"put_(): Expected a long tensor for index, but got {scalar_name(idx.dtype)}"
        )
    if a.dtype != src.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{scalar_name(a.dtype)} and source.dtype = {scalar_name(src.dtype)}"
        )
    if idx.size != src.size:
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {src.size}, index.numel() = {idx.size}"
        )
    n = a.size
    flat = idx.reshape(-1)
    bad = (flat < -n) | (flat >= n)
    if bad.any():
        raise IndexError(
            f"out of range: tried to access index {flat[bad][0]} on a tensor of {n} elements."
        )
    positions = np.where(flat < 0, flat + n, flat)
    params = (positions, bool(accumulate))
    return run(PutBackward0, (input, source), (a, src), params)
