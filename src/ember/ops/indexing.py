"""Indexing: ``tensor[key]``, gather/scatter, masks, diagonals and triangular parts.

``Tensor.__getitem__`` follows torch: integers, slices, ``None`` and ``...`` are applied
left to right as views (select, slice, unsqueeze; a key that changes nothing gives an
alias), then any index tensors / lists / masks are applied at once with NumPy's advanced
indexing (which torch matches once the integers are gone), copying the data. Each step is
its own node, as in torch, so ``x[0, [1, 2]]`` ends in ``IndexBackward0`` fed by
``SelectBackward0``.

``tensor[key] = value`` lives in ``inplace.py`` (CopySlices); its recorded backward uses
``index_put`` from here, which accepts raw NumPy keys.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from .._dtype import cpp_name
from .._tensor import Tensor, register_methods
from ._core import normalize_dim
from ._legacy import Node, _fw, _make_inplace, _type_word, record
from .shape import _as_view, _slice, _zeros, unsqueeze

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
_BAD_INDEX_DTYPE = "tensors used as indices must be long, int, byte or bool tensors"


def _is_arr(g) -> bool:
    """True for a raw gradient (ndarray or NumPy scalar), False for a recorded Tensor."""
    return not isinstance(g, Tensor)


def _tangent_or_zeros(t, meta):
    """A JVP operand: the tangent, or zeros of ``meta = (shape, dtype)`` when it is None."""
    return _wrap(np.zeros(meta[0], meta[1])) if t is None else t


def _type_name(a: np.ndarray) -> str:
    from .._dtype import from_numpy_dtype

    return _type_word(from_numpy_dtype(a.dtype))


def _idx_array(x) -> np.ndarray:
    """An index given as a Tensor, list or ndarray, as an ndarray (dtype checked as torch)."""
    if isinstance(x, Tensor):
        arr = x._data
    elif isinstance(x, np.ndarray):
        arr = x
    else:
        arr = np.asarray(_unwrap_nested(x))
        if arr.size == 0 and arr.dtype.kind == "f":
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


# -- basic indexing pieces (views) ---------------------------------------------------------


class SelectBackward0(Node):
    __slots__ = ("dim", "index", "self_sizes")

    def backward(self, g):
        if _is_arr(g):
            z = np.zeros(self.self_sizes, dtype=g.dtype)
            z[(slice(None),) * self.dim + (self.index,)] = g
            return z
        return select_scatter(_zeros(self.self_sizes, g), g, self.dim, self.index)

    def jvp(self, tangents, inputs):
        return _select(tangents[0], self.dim, self.index)


def _select(x: Tensor, d: int, index: int) -> Tensor:
    a = x._data
    t = record(SelectBackward0, a[(slice(None),) * d + (index, Ellipsis)], (x,))
    if (node := t.grad_fn or _fw.node) is not None:
        node.dim, node.index, node.self_sizes = d, index, a.shape
    return _as_view(t, x)


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


def _alias(x: Tensor) -> Tensor:
    return _as_view(record(AliasBackward0, x._data.view(), (x,)), x)


class AliasBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return g

    def jvp(self, tangents, inputs):
        return tangents[0]


def _slice_key(x: Tensor, d: int, s: slice, optimize: bool) -> Tensor:
    a = x._data
    if a.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    step = 1 if s.step is None else operator.index(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    start = 0 if s.start is None else operator.index(s.start)
    n = a.shape[d]
    if optimize and start == 0 and step == 1 and (s.stop is None or operator.index(s.stop) >= n):
        return x
    lo, hi, _ = slice(start, s.stop, step).indices(n)
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
    if _is_int(key):
        if a.ndim == 0:
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
            )
        return _select_checked(self, 0, int(key), 0)
    if type(key) is slice:
        return _slice_key(self, 0, key, optimize=False)
    if key is None:
        return unsqueeze(self, 0)
    if key is Ellipsis:
        return _alias(self)
    if isinstance(key, tuple):
        items = key
    elif isinstance(key, list) and _seq_as_tuple(key):
        warnings.warn(_SEQ_WARNING, UserWarning, stacklevel=2)
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
    for i, obj in enumerate(items):
        if _is_int(obj):
            result = _select_checked(result, dim, int(obj), i)
        elif type(obj) is slice:
            result = _slice_key(result, dim, obj, optimize=True)
            dim += 1
        elif obj is None:
            result = unsqueeze(result, dim)
            dim += 1
        elif obj is Ellipsis:
            dim += a.ndim - specified
        elif isinstance(obj, (bool, np.bool_)):
            result = unsqueeze(result, dim)
            adv.append((dim, np.zeros(1 if obj else 0, dtype=np.int64), False))
            dim += 1
        elif isinstance(obj, (Tensor, np.ndarray, list, tuple, range)):
            arr = _idx_array(obj)
            if arr.ndim == 0 and arr.dtype.kind == "i":
                result = _select_checked(result, dim, int(arr), i)
            elif arr.ndim == 0:  # 0-d bool or byte tensor: like a Python bool
                result = unsqueeze(result, dim)
                adv.append((dim, np.zeros(1 if arr else 0, dtype=np.int64), False))
                dim += 1
            elif arr.dtype in (np.bool_, np.uint8):
                if arr.dtype == np.uint8:
                    warnings.warn(_UINT8_WARNING, UserWarning, stacklevel=2)
                    arr = arr.astype(np.bool_)
                adv.append((dim, arr, True))
                dim += arr.ndim
            else:
                adv.append((dim, arr, False))
                dim += 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(obj).__name__})"
            )
    if not adv:
        return _alias(self) if result is self else result
    return _advanced(result, adv)


def _select_checked(x: Tensor, d: int, index: int, real_dim: int) -> Tensor:
    n = x._data.shape[d]
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for dimension {real_dim} with size {n}")
    return _select(x, d, index % n)


def _advanced(x: Tensor, adv: list) -> Tensor:
    a = x._data
    key: list = []
    shapes = []
    unique = len(adv) == 1 and adv[0][2]
    k = 0  # ordinal of the index among the (expanded) index tensors, as torch reports it
    for d, arr, is_mask in adv:
        key += [slice(None)] * (d - len(key))
        if is_mask:
            for j in range(arr.ndim):
                if d + j >= a.ndim or arr.shape[j] != a.shape[d + j]:
                    raise IndexError(
                        f"The shape of the mask {list(arr.shape)} at index {j} does not match the "
                        f"shape of the indexed tensor {list(a.shape)} at index {d + j}"
                    )
            nz = np.nonzero(arr)
            key += list(nz)
            shapes += [list(z.shape) for z in nz]
            k += arr.ndim
        else:
            n = a.shape[d]
            if arr.size:
                bad = (arr < -n) | (arr >= n)
                if bad.any():
                    raise IndexError(
                        f"index {arr[bad].flat[0]} is out of bounds for dimension {k} with size {n}"
                    )
            key.append(arr)
            shapes.append(list(arr.shape))
            k += 1
    try:
        np.broadcast_shapes(*(tuple(s) for s in shapes))
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(str(s) for s in shapes)
        ) from None
    return _index(x, tuple(key), unique)


class IndexBackward0(Node):
    __slots__ = ("key", "self_sizes", "unique")

    def backward(self, g):
        if _is_arr(g):
            z = np.zeros(self.self_sizes, dtype=g.dtype)
            if self.unique:
                z[self.key] = g
            else:
                np.add.at(z, self.key, g)
            return z
        return index_put(_zeros(self.self_sizes, g), self.key, g, accumulate=not self.unique)

    def jvp(self, tangents, inputs):
        return _index(tangents[0], self.key)


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
                out += list(np.nonzero(arr))
            else:
                out.append(arr)
        else:
            out.append(k)
    return tuple(out)


def _index(x: Tensor, key: tuple, unique: bool = False) -> Tensor:
    """``x[key]`` with NumPy semantics for an already normalized key (IndexBackward0)."""
    a = x._data
    try:
        out = a[key]
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None
    if not any(isinstance(k, np.ndarray) for k in key):
        out = np.array(out)  # an advanced index always copies
    t = record(IndexBackward0, np.asarray(out), (x,))
    if (node := t.grad_fn or _fw.node) is not None:
        node.key, node.self_sizes, node.unique = key, a.shape, unique
    return t


def index_np(x: Tensor, key) -> Tensor:
    """``x[key]`` with NumPy's semantics for a raw key (integers count as advanced indices
    next to index arrays); recorded as IndexBackward0. Used by rules with raw keys."""
    return _index(x, _np_key(key))


# -- index_put / index_select / index_add ----------------------------------------------------


class IndexPutBackward0(Node):
    __slots__ = ("key", "accumulate", "values_shape")

    def backward(self, g):
        key = self.key
        if self.accumulate:
            gi = g
        elif _is_arr(g):
            gi = g.copy()
            gi[key] = 0
        else:
            gi = index_put(g, key, 0.0)
        if self.values_shape is None:
            return gi, None
        gv = np.asarray(g[key]) if _is_arr(g) else _index(g, key)
        if gv.ndim < len(self.values_shape):
            gv = gv.reshape(self.values_shape)
        return gi, gv

    def jvp(self, tangents, inputs):
        ti, tv = tangents
        ti = _tangent_or_zeros(ti, self._meta[0])
        if tv is None:
            return ti if self.accumulate else index_put(ti, self.key, 0.0)
        return index_put(ti, self.key, tv.to(self._meta[0][1]), accumulate=self.accumulate)


def index_put(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """Out-of-place ``input[indices] = values`` (``+=`` with ``accumulate``, summing repeats).

    ``indices`` is a tuple of index tensors (torch) or any raw NumPy-style key.

    Example:
        >>> import ember
        >>> ember.zeros(3).index_put((ember.tensor([0, 0]),), ember.tensor(1.0), True)
        tensor([2., 0., 0.])
    """
    a = input._data
    key = _np_key(
        indices
        if isinstance(indices, tuple)
        else tuple(indices)
        if isinstance(indices, list)
        else indices
    )
    if isinstance(values, Tensor):
        if values._data.dtype != a.dtype:
            raise RuntimeError(
                "Index put requires the source and destination dtypes match, got "
                f"{_type_name(a)} for the destination and {_type_name(values._data)} for the "
                "source."
            )
        v = values._data
        vt = values
    else:
        v = np.asarray(values, dtype=a.dtype)
        vt = None
    out = a.copy()
    try:
        if accumulate:
            np.add.at(out, key, v)
        else:
            out[key] = v
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(v.shape)} cannot be broadcast to "
            f"indexing result of shape {list(np.shape(a[key]))}"
        ) from None
    t = record(IndexPutBackward0, out, (input, vt))
    if (node := t.grad_fn or _fw.node) is not None:
        node.key, node.accumulate = key, bool(accumulate)
        node.values_shape = None if vt is None else v.shape
    return t


def _check_index_dtype(idx: np.ndarray, msg: str) -> None:
    if idx.dtype != np.int64 and idx.dtype != np.int32:
        raise RuntimeError(msg)


class IndexSelectBackward0(Node):
    __slots__ = ("dim", "self_sizes")

    def backward(self, g, index):
        if len(self.self_sizes) == 0:
            return g.reshape(())
        if _is_arr(g):
            z = np.zeros(self.self_sizes, dtype=g.dtype)
            np.add.at(z, (slice(None),) * self.dim + (index.reshape(-1),), g)
            return z
        return index_add(_zeros(self.self_sizes, g), self.dim, index.reshape(-1), g)

    def jvp(self, tangents, inputs, index):
        return index_select(tangents[0], self.dim, index)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The entries at ``index`` (a vector) along ``dim`` (a copy).

    Example:
        >>> import ember
        >>> ember.tensor([[1, 2, 3]]).index_select(1, ember.tensor([2, 0]))
        tensor([[3, 1]])
    """
    a = input._data
    idx = index._data
    _check_index_dtype(idx, "index_select(): Expected dtype int32 or int64 for index")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = normalize_dim(dim, a.ndim)
    n = a.shape[d] if a.ndim else 1
    flat = idx.reshape(-1)
    bad = (flat < 0) | (flat >= n)
    if bad.any():
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={flat[bad][0]} axis_dim={n}")
    out = np.take(a, flat, axis=d) if a.ndim else a.reshape(1)[flat].reshape(())
    t = record(IndexSelectBackward0, out, (input,), (index,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.dim, gf.self_sizes = d, a.shape
    return t


class IndexAddBackward0(Node):
    __slots__ = ("dim", "alpha")

    def backward(self, g, index):
        if _is_arr(g):
            gs = np.take(g, index.reshape(-1), axis=self.dim) if g.ndim else g
        else:
            gs = index_select(g, self.dim, index)
        return g, (gs if self.alpha == 1 else gs * self.alpha)

    def jvp(self, tangents, inputs, index):
        ti, ts = tangents
        if ts is None:
            return ti
        ti = _tangent_or_zeros(ti, self._meta[0])
        return index_add(ti, self.dim, index, ts.to(self._meta[0][1]), alpha=self.alpha)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """Out-of-place ``input.index_add_``: add ``alpha * source`` slices at ``index``."""
    a = input._data
    s = source._data
    idx = index._data
    _check_index_dtype(idx, "index_add_(): Expected dtype int32/int64 for index")
    d = normalize_dim(dim, a.ndim)
    if s.dtype != a.dtype:
        raise RuntimeError(
            f"index_add_(): self ({_type_name(a)}) and source ({_type_name(s)}) must have the "
            "same scalar type"
        )
    if a.ndim and (
        s.ndim != a.ndim or any(s.shape[k] != a.shape[k] for k in range(a.ndim) if k != d)
    ):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(a.shape)} source.shape = {list(s.shape)}"
        )
    out = a.copy()
    src = s if alpha == 1 else (s * alpha).astype(a.dtype)
    if a.ndim:
        np.add.at(out, (slice(None),) * d + (idx.reshape(-1),), src)
    else:
        out = out + src.reshape(())
    t = record(IndexAddBackward0, np.asarray(out), (input, source), (index,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.dim, gf.alpha = d, alpha
    return t


# -- gather / scatter ----------------------------------------------------------------------


def _coords(idx: np.ndarray, d: int) -> tuple:
    """Full coordinates of ``idx``'s elements with dim ``d`` replaced by the index values."""
    grids = list(np.ogrid[tuple(slice(0, s) for s in idx.shape)])
    grids[d] = idx
    return tuple(grids)


def _check_gather_args(a, idx, d, fname):
    if idx.ndim != a.ndim and not (idx.ndim <= 1 and a.ndim <= 1):
        raise RuntimeError(
            f"Index tensor must have the same number of dimensions as {fname} tensor"
        )


def _check_bounds_dim(idx: np.ndarray, d: int, n: int) -> None:
    if idx.size:
        bad = (idx < 0) | (idx >= n)
        if bad.any():
            raise RuntimeError(
                f"index {idx[bad].flat[0]} is out of bounds for dimension {d} with size {n}"
            )


class GatherBackward0(Node):
    __slots__ = ("dim", "self_sizes")

    def backward(self, g, index):
        if _is_arr(g):
            z = np.zeros(self.self_sizes, dtype=g.dtype)
            if z.ndim == 0:
                return g.reshape(())
            np.add.at(z, _coords(index.reshape(g.shape), self.dim), g)
            return z
        return scatter_add(_zeros(self.self_sizes, g), self.dim, index, g)

    def jvp(self, tangents, inputs, index):
        return gather(tangents[0], self.dim, index)


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
    _check_gather_args(a, idx, dim, "input")
    d = normalize_dim(dim, a.ndim)
    if a.ndim == 0 or idx.ndim == 0:
        _check_bounds_dim(idx, d, 1)
        out = a.reshape(-1)[idx.reshape(-1)].reshape(idx.shape)
    else:
        for k in range(a.ndim):
            if k != d and idx.shape[k] > a.shape[k]:
                raise RuntimeError(
                    f"Size does not match at dimension {k} expected index {list(idx.shape)} to "
                    f"be no larger than self {list(a.shape)} apart from dimension {d}"
                )
        _check_bounds_dim(idx, d, a.shape[d])
        out = a[_coords(idx, d)]
    t = record(GatherBackward0, np.asarray(out), (input,), (index,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.dim, gf.self_sizes = d, a.shape
    return t


def _scatter_checks(a, idx, d, src, fname):
    if idx.dtype != np.int64:
        raise RuntimeError(f"{fname}(): Expected dtype int64 for index")
    _check_gather_args(a, idx, d, "self")
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


def _region(idx_shape) -> tuple:
    return tuple(slice(0, s) for s in idx_shape)


def _pad_to(gs, shape):
    """Place ``gs`` (index-shaped) in the leading corner of zeros of ``shape``."""
    if tuple(gs.shape) == tuple(shape):
        return gs
    if _is_arr(gs):
        z = np.zeros(shape, dtype=gs.dtype)
        z[_region(gs.shape)] = gs
        return z
    return index_put(_zeros(shape, gs), _region(gs.shape), gs)


class ScatterBackward0(Node):
    __slots__ = ("dim", "src_shape")

    def backward(self, g, index):
        if _is_arr(g):
            c = _coords(index, self.dim) if g.ndim else ()
            gi = g.copy()
            gi[c] = 0
            gs = g[c]
        else:
            gi = scatter(g, self.dim, index, 0.0)
            gs = gather(g, self.dim, index)
        return gi, _pad_to(gs, self.src_shape)

    def jvp(self, tangents, inputs, index):
        ti, ts = tangents
        ti = _tangent_or_zeros(ti, self._meta[0])
        ts = _tangent_or_zeros(ts, (self.src_shape, self._meta[0][1]))
        return scatter(ti, self.dim, index, ts.to(self._meta[0][1]))


class ScatterBackward1(Node):
    __slots__ = ("dim",)

    def backward(self, g, index):
        if _is_arr(g):
            gi = g.copy()
            gi[_coords(index, self.dim) if g.ndim else ()] = 0
            return gi
        return scatter(g, self.dim, index, 0.0)

    def jvp(self, tangents, inputs, index):
        return scatter(tangents[0], self.dim, index, 0.0)


class ScatterAddBackward0(Node):
    __slots__ = ("dim", "src_shape")

    def backward(self, g, index):
        if _is_arr(g):
            gs = g[_coords(index, self.dim)] if g.ndim else g
        else:
            gs = gather(g, self.dim, index)
        return g, _pad_to(gs, self.src_shape)

    def jvp(self, tangents, inputs, index):
        ti, ts = tangents
        if ts is None:
            return ti
        ti = _tangent_or_zeros(ti, self._meta[0])
        return scatter_add(ti, self.dim, index, ts.to(self._meta[0][1]))


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
    _scatter_checks(a, idx, d, s, "scatter")
    out = a.copy()
    c = _coords(idx, d) if a.ndim else ()
    vals = s[_region(idx.shape)] if s is not None else np.asarray(value).astype(a.dtype)
    if reduce is None:
        out[c] = vals
    elif reduce == "add":
        np.add.at(out, c, vals)
    elif reduce == "multiply":
        np.multiply.at(out, c, vals)
    else:
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
    if reduce is not None:
        return _wrap(out)  # not differentiable in torch either
    if src is not None:
        t = record(ScatterBackward0, out, (input, src), (index,))
        if (gf := t.grad_fn or _fw.node) is not None:
            gf.dim, gf.src_shape = d, s.shape
    else:
        t = record(ScatterBackward1, out, (input,), (index,))
        if (gf := t.grad_fn or _fw.node) is not None:
            gf.dim = d
    return t


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """Out-of-place ``scatter_add_``: add ``src`` at ``index`` along ``dim`` (repeats sum)."""
    a = input._data
    idx = index._data
    s = src._data
    if s.dtype != a.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = normalize_dim(dim, a.ndim)
    _scatter_checks(a, idx, d, s, "scatter_add")
    out = a.copy()
    np.add.at(out, _coords(idx, d) if a.ndim else (), s[_region(idx.shape)])
    t = record(ScatterAddBackward0, out, (input, src), (index,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.dim, gf.src_shape = d, s.shape
    return t


# -- masks ---------------------------------------------------------------------------------


def _bcast_shape(sa, sb) -> tuple:
    try:
        return np.broadcast_shapes(sa, sb)
    except ValueError:
        n = max(len(sa), len(sb))
        a = (1,) * (n - len(sa)) + tuple(sa)
        b = (1,) * (n - len(sb)) + tuple(sb)
        for k in range(n - 1, -1, -1):
            if a[k] != b[k] and a[k] != 1 and b[k] != 1:
                raise RuntimeError(
                    f"The size of tensor a ({a[k]}) must match the size of tensor b ({b[k]}) at "
                    f"non-singleton dimension {k}"
                ) from None
        raise


class MaskedFillBackward0(Node):
    __slots__ = ()

    def backward(self, g, mask):
        if _is_arr(g):
            return np.where(mask, 0, g).astype(g.dtype, copy=False)
        return masked_fill(g, mask, 0)

    def jvp(self, tangents, inputs, mask):
        return masked_fill(tangents[0], mask, 0.0)


class MaskedFillBackward1(Node):
    __slots__ = ()

    def backward(self, g, mask):
        if _is_arr(g):
            gi = np.where(mask, 0, g).astype(g.dtype, copy=False)
            gv = np.asarray(np.where(mask, g, 0).sum(), dtype=g.dtype)
            return gi, gv
        return masked_fill(g, mask, 0), masked_select(g, mask).sum()

    def jvp(self, tangents, inputs, mask):
        ti, tv = tangents
        ti = _tangent_or_zeros(ti, self._meta[0])
        if tv is None:
            return masked_fill(ti, mask, 0.0)
        return masked_fill(ti, mask, tv.to(self._meta[0][1]))


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
    vt = None
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value._data.ndim} dimension(s)."
            )
        vt = value
        v = value._data
    else:
        v = np.asarray(value)
    _bcast_shape(m.shape, a.shape)
    out = np.where(m, v.astype(a.dtype), a)
    mt = mask if isinstance(mask, Tensor) else _wrap(m)
    if vt is not None:
        return record(MaskedFillBackward1, out, (input, vt), (mt,))
    return record(MaskedFillBackward0, out, (input,), (mt,))


class MaskedSelectBackward0(Node):
    __slots__ = ("shape",)

    def backward(self, g, mask):
        if _is_arr(g):
            z = np.zeros(self.shape, dtype=g.dtype)
            z[np.broadcast_to(mask, self.shape)] = g
            return z
        m = np.broadcast_to(mask._data, self.shape)
        return index_put(_zeros(self.shape, g), (m,), g)

    def jvp(self, tangents, inputs, mask):
        return masked_select(tangents[0], mask)


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
    shape = _bcast_shape(a.shape, m.shape)
    out = np.broadcast_to(a, shape)[np.broadcast_to(m, shape)]
    mt = mask if isinstance(mask, Tensor) else _wrap(m)
    t = record(MaskedSelectBackward0, out, (input,), (mt,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.shape = shape
    return t


# -- take / nonzero ----------------------------------------------------------------------


class TakeBackward0(Node):
    __slots__ = ("self_sizes",)

    def backward(self, g, index):
        n = int(np.prod(self.self_sizes))
        if _is_arr(g):
            z = np.zeros(n, dtype=g.dtype)
            np.add.at(z, index.reshape(-1), g.reshape(-1))
            return z.reshape(self.self_sizes)
        z = index_put(_zeros((n,), g), (index.reshape(-1),), g.reshape(-1), accumulate=True)
        return z.reshape(self.self_sizes)

    def jvp(self, tangents, inputs, index):
        return take(tangents[0], index)


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
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {_type_name(idx)}")
    n = a.size
    if idx.size:
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            raise IndexError(
                f"out of range: tried to access index {idx[bad].flat[0]} on a tensor of {n} "
                "elements."
            )
    out = a.reshape(-1)[idx]
    t = record(TakeBackward0, np.asarray(out), (input,), (index,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.self_sizes = a.shape
    return t


def nonzero(input: Tensor, *, as_tuple: bool = False, out=None):
    """Indices of the nonzero elements: an ``(n, ndim)`` int64 tensor, or one index tensor
    per dim with ``as_tuple=True``.

    Example:
        >>> import ember
        >>> ember.tensor([0, 3, 0, 5]).nonzero()
        tensor([[1],
                [3]])
    """
    a = input._data
    if a.ndim == 0:
        n = int(bool(a))
        if as_tuple:
            # torch: the columns of nonzero() of the tensor viewed as 1-D
            cols = _wrap(np.zeros((n, 1), dtype=np.int64))
            return (_as_view(_wrap(cols._data[:, 0]), cols),)
        return _wrap(np.zeros((n, 0), dtype=np.int64))
    if as_tuple:
        # torch returns the columns of one (n, ndim) result: views of it
        full = _wrap(np.argwhere(a).astype(np.int64))
        return tuple(_as_view(_wrap(full._data[:, i]), full) for i in range(a.ndim))
    res = _wrap(np.argwhere(a).astype(np.int64))
    if out is not None:
        out._data = res._data
        return out
    return res


def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``."""
    return nonzero(input)


# -- triangular parts and diagonals ----------------------------------------------------------


class TrilBackward0(Node):
    __slots__ = ("diagonal",)

    def backward(self, g):
        return np.tril(g, self.diagonal) if _is_arr(g) else tril(g, self.diagonal)

    def jvp(self, tangents, inputs):
        return tril(tangents[0], self.diagonal)


class TriuBackward0(Node):
    __slots__ = ("diagonal",)

    def backward(self, g):
        return np.triu(g, self.diagonal) if _is_arr(g) else triu(g, self.diagonal)

    def jvp(self, tangents, inputs):
        return triu(tangents[0], self.diagonal)


def _tri(cls, fn, name, input: Tensor, diagonal: int) -> Tensor:
    a = input._data
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    diagonal = operator.index(diagonal)
    t = record(cls, fn(a, diagonal), (input,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.diagonal = diagonal
    return t


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle (at and below diagonal ``diagonal``) of the last two dims.

    Example:
        >>> import ember
        >>> ember.ones(2, 2).tril()
        tensor([[1., 0.],
                [1., 1.]])
    """
    return _tri(TrilBackward0, np.tril, "tril", input, diagonal)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle (at and above diagonal ``diagonal``) of the last two dims."""
    return _tri(TriuBackward0, np.triu, "triu", input, diagonal)


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


class DiagonalBackward0(Node):
    __slots__ = ("offset", "dim1", "dim2", "self_sizes")

    def backward(self, g):
        if _is_arr(g):
            z = np.zeros(self.self_sizes, dtype=g.dtype)
            _diag_view(z, self.offset, self.dim1, self.dim2)[...] = g
            return z
        z = _zeros(self.self_sizes, g)
        return diagonal_scatter(z, g, self.offset, self.dim1, self.dim2)

    def jvp(self, tangents, inputs):
        return diagonal(tangents[0], self.offset, self.dim1, self.dim2)


DiagonalBackward0_copy = type("DiagonalBackward0_copy", (DiagonalBackward0,), {"__slots__": ()})


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The view of the diagonal over ``dim1``/``dim2`` (appended as the last dim).

    Example:
        >>> import ember
        >>> ember.arange(9).view(3, 3).diagonal()
        tensor([0, 4, 8])
    """
    a = input._data
    d1, d2 = _diag_dims(a.ndim, dim1, dim2)
    t = record(DiagonalBackward0, _diag_view(a, offset, d1, d2), (input,))
    if (node := t.grad_fn or _fw.node) is not None:
        node.offset, node.dim1, node.dim2, node.self_sizes = offset, d1, d2, a.shape
    return _as_view(t, input)


class DiagEmbedBackward0(Node):
    __slots__ = ("offset", "dim1", "dim2")

    def backward(self, g):
        if _is_arr(g):
            return _diag_view(g, self.offset, self.dim1, self.dim2).copy()
        return diagonal(g, self.offset, self.dim1, self.dim2)

    def jvp(self, tangents, inputs):
        return diag_embed(tangents[0], self.offset, self.dim1, self.dim2)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices whose diagonal (over ``dim1``/``dim2``) holds the last dim of ``input``."""
    a = input._data
    nd = a.ndim + 1
    d1, d2 = _diag_dims(nd, dim1, dim2)
    m = (a.shape[-1] if a.ndim else 1) + abs(offset)
    batch = list(a.shape[:-1])
    shape = []
    for i in range(nd):
        shape.append(m if i in (d1, d2) else batch.pop(0))
    out = np.zeros(shape, dtype=a.dtype)
    _diag_view(out, offset, d1, d2)[...] = a
    t = record(DiagEmbedBackward0, out, (input,))
    if (node := t.grad_fn or _fw.node) is not None:
        node.offset, node.dim1, node.dim2 = offset, d1, d2
    return t


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D tensor as a diagonal matrix, or a matrix's diagonal as a 1-D tensor (a copy).

    Example:
        >>> import ember
        >>> ember.diag(ember.tensor([1, 2]))
        tensor([[1, 0],
                [0, 2]])
    """
    a = input._data
    if a.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if a.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {a.ndim}D")
    t = record(DiagonalBackward0_copy, _diag_view(a, diagonal, 0, 1).copy(), (input,))
    if (node := t.grad_fn or _fw.node) is not None:
        node.offset, node.dim1, node.dim2, node.self_sizes = diagonal, 0, 1, a.shape
    return t


# -- *_scatter: the out-of-place inverses of views (used by recorded backward rules) ---------


def _check_src(src: np.ndarray, view: np.ndarray) -> None:
    if src.shape != view.shape:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(view.shape)}"
        )


class SelectScatterBackward0(Node):
    __slots__ = ("dim", "index", "src_shape")

    def backward(self, g):
        if _is_arr(g):
            key = (slice(None),) * self.dim + (self.index,)
            gi = g.copy()
            gi[key] = 0
            return gi, np.array(g[key])
        z = _zeros(self.src_shape, g)
        return select_scatter(g, z, self.dim, self.index), select(g, self.dim, self.index)

    def jvp(self, tangents, inputs):
        ti, ts = tangents
        ti = _tangent_or_zeros(ti, self._meta[0])
        ts = _tangent_or_zeros(ts, (self.src_shape, self._meta[0][1]))
        return select_scatter(ti, ts.to(self._meta[0][1]), self.dim, self.index)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``input.select(dim, index)`` replaced by ``src``."""
    a = input._data
    d = normalize_dim(dim, a.ndim)
    index = operator.index(index)
    key = (slice(None),) * d + (index,)
    out = a.copy()
    _check_src(src._data, out[key + (Ellipsis,)])
    out[key] = src._data
    t = record(SelectScatterBackward0, out, (input, src))
    if (node := t.grad_fn or _fw.node) is not None:
        node.dim, node.index, node.src_shape = d, index, src._data.shape
    return t


class SliceScatterBackward0(Node):
    __slots__ = ("dim", "slc", "src_shape")

    def backward(self, g):
        key = (slice(None),) * self.dim + (self.slc,)
        if _is_arr(g):
            gi = g.copy()
            gi[key] = 0
            return gi, g[key].copy()
        z = _zeros(self.src_shape, g)
        s = self.slc
        return slice_scatter(g, z, self.dim, s.start, s.stop, s.step), g[key]

    def jvp(self, tangents, inputs):
        ti, ts = tangents
        ti = _tangent_or_zeros(ti, self._meta[0])
        ts = _tangent_or_zeros(ts, (self.src_shape, self._meta[0][1]))
        s = self.slc
        return slice_scatter(ti, ts.to(self._meta[0][1]), self.dim, s.start, s.stop, s.step)


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None, step=1):
    """A copy of ``input`` with ``input[..., start:end:step, ...]`` (at ``dim``) set to src."""
    a = input._data
    d = normalize_dim(dim, a.ndim)
    lo, hi, st = slice(start, end, step).indices(a.shape[d])
    slc = slice(lo, max(lo, hi), st)
    key = (slice(None),) * d + (slc,)
    out = a.copy()
    _check_src(src._data, out[key])
    out[key] = src._data
    t = record(SliceScatterBackward0, out, (input, src))
    if (node := t.grad_fn or _fw.node) is not None:
        node.dim, node.slc, node.src_shape = d, slc, src._data.shape
    return t


class DiagonalScatterBackward0(Node):
    __slots__ = ("offset", "dim1", "dim2", "src_shape")

    def backward(self, g):
        if _is_arr(g):
            gi = g.copy()
            _diag_view(gi, self.offset, self.dim1, self.dim2)[...] = 0
            return gi, _diag_view(g, self.offset, self.dim1, self.dim2).copy()
        z = _zeros(self.src_shape, g)
        return (
            diagonal_scatter(g, z, self.offset, self.dim1, self.dim2),
            diagonal(g, self.offset, self.dim1, self.dim2),
        )

    def jvp(self, tangents, inputs):
        ti, ts = tangents
        ti = _tangent_or_zeros(ti, self._meta[0])
        ts = _tangent_or_zeros(ts, (self.src_shape, self._meta[0][1]))
        return diagonal_scatter(ti, ts.to(self._meta[0][1]), self.offset, self.dim1, self.dim2)


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """A copy of ``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src``."""
    a = input._data
    d1, d2 = _diag_dims(a.ndim, dim1, dim2)
    out = a.copy()
    view = _diag_view(out, offset, d1, d2)
    _check_src(src._data, view)
    view[...] = src._data
    t = record(DiagonalScatterBackward0, out, (input, src))
    if (node := t.grad_fn or _fw.node) is not None:
        node.offset, node.dim1, node.dim2, node.src_shape = offset, d1, d2, src._data.shape
    return t


__all__ = [
    "select",
    "index_put",
    "index_select",
    "index_add",
    "gather",
    "scatter",
    "scatter_add",
    "masked_fill",
    "masked_select",
    "take",
    "nonzero",
    "argwhere",
    "tril",
    "triu",
    "diag",
    "diagonal",
    "diag_embed",
    "select_scatter",
    "slice_scatter",
    "diagonal_scatter",
]

register_methods(
    {
        "__getitem__": getitem,
        "select": select,
        "index_put": index_put,
        "index_select": index_select,
        "index_add": index_add,
        "gather": gather,
        "scatter": scatter,
        "scatter_add": scatter_add,
        "masked_fill": masked_fill,
        "masked_select": masked_select,
        "take": take,
        "nonzero": nonzero,
        "argwhere": argwhere,
        "tril": tril,
        "triu": triu,
        "diag": diag,
        "diagonal": diagonal,
        "diag_embed": diag_embed,
        "select_scatter": select_scatter,
        "slice_scatter": slice_scatter,
        "diagonal_scatter": diagonal_scatter,
        # In-place variants through inplace.py's generic machinery (snapshot + rebase).
        "masked_fill_": _make_inplace(masked_fill),
        "index_put_": _make_inplace(index_put),
        "index_add_": _make_inplace(index_add),
        "scatter_": _make_inplace(scatter),
        "scatter_add_": _make_inplace(scatter_add),
        "tril_": _make_inplace(tril),
        "triu_": _make_inplace(triu),
    }
)
