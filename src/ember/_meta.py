"""The data of tensors on the ``meta`` device: a shape, a dtype and strides, no values.

A meta tensor's ``_data`` is a ``MetaArray``: an ndarray subclass viewing a read-only
anonymous memory mapping that is never written, so it costs address space, not memory
(untouched pages are not backed). NumPy hands every ufunc and array function that meets a
``MetaArray`` to its overrides, which work out the result's shape and dtype without
computing and return another ``MetaArray``; writes into one (``out=``, ``copyto``,
``__setitem__``) check shapes and change nothing. So every op of ember runs on meta
tensors unchanged, and plain arrays never reach this module: the CPU path pays nothing.

This module depends on nothing but NumPy (it sits below ``ember._tensor``).
"""

from __future__ import annotations

import mmap
import operator

import numpy as np

__all__ = [
    "ITEM_ON_META",
    "META_RANDOM",
    "NO_DATA",
    "MetaArray",
    "MetaRandom",
    "meta_empty",
    "meta_like",
]

# torch's messages for reading values out of a meta tensor
NO_DATA = "Cannot copy out of meta tensor; no data!"
ITEM_ON_META = "Tensor.item() cannot be called on meta tensors"

_ZERO_SIZE = 1 << 40  # the address space of the shared mapping (no memory until touched)
_zero: list = []  # [mmap, size]: the mapping new meta arrays view


def _zero_buffer(nbytes: int):
    """A read-only, never written, zero-filled buffer of at least ``nbytes`` bytes (None
    when the system gives no such mapping: the arrays are then zero-strided)."""
    if _zero and _zero[1] >= nbytes:
        return _zero[0]
    size = max(nbytes, _ZERO_SIZE)
    try:
        buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)
    except (AttributeError, OSError, ValueError, OverflowError, TypeError):
        return None
    _zero[:] = [buf, size]
    return buf


# Whether this process has made a meta array: until it has, the op recorder skips its check
# that an op given a meta tensor returns one (``propagate``).
MADE = [False]


def meta_empty(shape, dtype) -> MetaArray:
    """A C-contiguous ``MetaArray`` of ``shape`` and ``dtype``.

    Example:
        >>> import numpy as np
        >>> from ember._meta import meta_empty
        >>> a = meta_empty((2, 3), np.float32)
        >>> type(a).__name__, a.shape, a.dtype, a.strides
        ('MetaArray', (2, 3), dtype('float32'), (12, 4))
    """
    shape = tuple(operator.index(s) for s in shape)
    dtype = np.dtype(dtype)
    MADE[0] = True
    n = dtype.itemsize
    for s in shape:
        n *= s
    buf = _zero_buffer(max(n, 1))
    if buf is None:
        base = np.zeros((), dtype)
        view = np.lib.stride_tricks.as_strided(base, shape, (0,) * len(shape), writeable=False)
        return view.view(MetaArray)
    return np.ndarray.__new__(MetaArray, shape, dtype, buffer=buf)


def meta_like(a, dtype=None) -> MetaArray:
    """A ``MetaArray`` with ``a``'s shape and (unless given) dtype.

    Example:
        >>> import numpy as np
        >>> from ember._meta import meta_like
        >>> meta_like(np.ones((2, 2)), np.int64).dtype
        dtype('int64')
    """
    return meta_empty(np.shape(a), a.dtype if dtype is None else dtype)


def _is_meta_view(a) -> bool:
    """Whether the array ``a`` views a meta array's memory (NumPy functions that make views
    with ``subok=False`` hand back plain ndarrays of it)."""
    b = a
    for _ in range(64):
        if b is None:
            return False
        if isinstance(b, (MetaArray, mmap.mmap)):
            return True
        b = getattr(b, "base", None)
    return False


def _to_meta(r):
    """The result ``r`` of running NumPy on meta arrays' memory, with its arrays meta: a
    view stays a view, a freshly computed array becomes an empty meta array."""
    if isinstance(r, MetaArray):
        return r
    if isinstance(r, np.ndarray):
        if _is_meta_view(r):
            return r.view(MetaArray)
        return meta_empty(r.shape, r.dtype)
    if isinstance(r, np.generic):  # a 0-d result NumPy gave as a scalar
        return meta_empty((), r.dtype)
    if isinstance(r, tuple):
        items = [_to_meta(x) for x in r]
        return type(r)(*items) if hasattr(type(r), "_fields") else tuple(items)
    if isinstance(r, list):
        return [_to_meta(x) for x in r]
    return r


def _plain(x):
    """``x`` with meta arrays seen as plain ndarrays (of the same zero memory)."""
    if isinstance(x, MetaArray):
        return x.view(np.ndarray)
    if isinstance(x, tuple):
        return tuple(_plain(v) for v in x)
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


def _stand_in(x):
    """A one-element (or empty) array of ``x``'s dtype and ndim, for a ufunc to find the
    result dtype (and its errors) without touching ``x``'s size."""
    if isinstance(x, np.ndarray):
        return np.zeros(tuple(min(s, 1) for s in x.shape), x.dtype)
    return x


def _broadcast_shapes(shapes) -> tuple:
    """The broadcast of ``shapes``, with the error torch's meta kernels raise."""
    common = [1] * max(len(s) for s in shapes)
    for arg, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            if common[i] == 1:
                common[i] = shape[i]
            elif shape[i] != 1 and shape[i] != common[i]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[i]} at {i}! "
                    f"Mismatching argument at index {arg} had torch.Size({list(shape)}); but "
                    f"expected shape should be broadcastable to {common}"
                )
    return tuple(common)


def _matmul_shape(a: tuple, b: tuple) -> tuple:
    if not a or not b:
        raise ValueError(
            "matmul: Input operand 0 does not have enough dimensions (has 0, gufunc core "
            "with signature (n?,k),(k,m?)->(n?,m?) requires 1)"
        )
    sa = (1,) + a if len(a) == 1 else a
    sb = b + (1,) if len(b) == 1 else b
    if sa[-1] != sb[-2]:
        raise ValueError(
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature (n?,k),(k,m?)->(n?,m?) (size {sb[-2]} is different from {sa[-1]})"
        )
    out = np.broadcast_shapes(sa[:-2], sb[:-2])
    if len(a) > 1:
        out += (sa[-2],)
    if len(b) > 1:
        out += (sb[-1],)
    return out


def _reduced_shape(shape: tuple, axis, keepdims: bool) -> tuple:
    ndim = len(shape)
    if axis is None:
        axes = set(range(ndim))
    elif isinstance(axis, tuple):
        axes = {int(a) % ndim if ndim else 0 for a in axis}
    else:
        axes = {operator.index(axis) % ndim if ndim else 0}
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _wrap_out(out, result):
    """A ufunc's answer when ``out=`` targets were given: the targets themselves."""
    return out[0] if len(out) == 1 else out


class MetaArray(np.ndarray):
    """The data of a meta tensor: an ndarray that has a shape, a dtype and strides but no
    values (read-only zero memory that costs nothing). NumPy's ufuncs and functions give
    meta arrays of the right shape and dtype without computing; writes into one are
    no-ops; reading its values (``item``, ``tolist``) raises torch's errors.

    Example:
        >>> import numpy as np
        >>> from ember._meta import meta_empty
        >>> a = meta_empty((2, 3), np.float32)
        >>> b = a @ meta_empty((3, 4), np.float32)
        >>> type(b).__name__, b.shape, (a.sum(axis=0) + 1).shape
        ('MetaArray', (2, 4), (3,))
        >>> a[0] = 5.0  # a no-op, as torch's writes into meta tensors
    """

    # -- ufuncs -----------------------------------------------------------------------------

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if out is not None:
            outs = out if isinstance(out, tuple) else (out,)
            result = self.__array_ufunc__(ufunc, method, *inputs, **kwargs)
            if method == "at":
                return None
            results = result if isinstance(result, tuple) else (result,)
            for o, r in zip(outs, results):
                if o is not None and r is not None and o.shape != r.shape:
                    np.broadcast_to(np.empty(r.shape, np.bool_), o.shape)  # NumPy's error
            return _wrap_out(outs, result)
        if method == "__call__":
            return self._call(ufunc, inputs, kwargs)
        if method == "reduce":
            return self._reduce(ufunc, inputs, kwargs)
        if method == "accumulate":
            a = inputs[0]
            with np.errstate(all="ignore"):
                r = ufunc.accumulate(_stand_in(a), **kwargs)
            return meta_empty(a.shape, r.dtype)
        if method == "outer":
            dt = self._call(ufunc, tuple(_stand_in(x) for x in inputs), kwargs, shape_only=True)
            return meta_empty(sum((np.shape(x) for x in inputs), ()), dt)
        if method == "at":
            if not isinstance(inputs[0], MetaArray):
                raise NotImplementedError(NO_DATA)
            return None
        with np.errstate(all="ignore"):  # reduceat: run on the (zero) memory
            return _to_meta(getattr(ufunc, method)(*_plain(inputs), **kwargs))

    def _call(self, ufunc, inputs, kwargs, shape_only: bool = False):
        if ufunc.signature is not None and ufunc is not np.matmul:
            with np.errstate(all="ignore"):  # other gufuncs: run on the (zero) memory
                return _to_meta(ufunc(*_plain(inputs), **kwargs))
        with np.errstate(all="ignore"):
            if ufunc is np.matmul:
                probe = ufunc(*(np.zeros((1,) * max(np.ndim(x), 1), x.dtype) for x in inputs))
            else:
                kw = {k: v for k, v in kwargs.items() if k in ("dtype", "casting", "signature")}
                probe = ufunc(*(np.zeros((), x.dtype) if isinstance(x, np.ndarray) else x
                                for x in inputs), **kw)  # fmt: skip
        results = probe if isinstance(probe, tuple) else (probe,)
        dtypes = [np.result_type(r) for r in results]
        if shape_only:
            return dtypes[0]
        shapes = [np.shape(x) for x in inputs if isinstance(x, (np.ndarray, np.generic))]
        if ufunc is np.matmul:
            shape = _matmul_shape(*shapes)
        else:
            shape = _broadcast_shapes(shapes)
        out = tuple(meta_empty(shape, dt) for dt in dtypes)
        return out if ufunc.nout > 1 else out[0]

    def _reduce(self, ufunc, inputs, kwargs):
        a = inputs[0]
        kw = dict(kwargs)
        if isinstance(kw.get("where"), np.ndarray):
            kw["where"] = True
        axis = kw.get("axis", 0)
        with np.errstate(all="ignore"):
            r = ufunc.reduce(_stand_in(a), **kw)  # the dtype, and NumPy's errors
        shape = _reduced_shape(a.shape, axis, bool(kw.get("keepdims", False)))
        return meta_empty(shape, np.result_type(r))

    # -- other NumPy functions --------------------------------------------------------------

    def __array_function__(self, func, types, args, kwargs):
        special = _FUNCTIONS.get(func)
        if special is not None:
            return special(*args, **kwargs)
        # NumPy's own implementation, on the meta arrays: the functions it calls dispatch
        # here again; a freshly computed result becomes an empty meta array.
        with np.errstate(all="ignore"):
            return _to_meta(super().__array_function__(func, types, args, kwargs))

    # -- writes: shapes checked, nothing changed -------------------------------------------

    def __setitem__(self, key, value) -> None:
        target = np.ndarray.__getitem__(self.view(np.ndarray), _plain(key))
        np.broadcast_to(np.empty(np.shape(value), np.bool_), np.shape(target))

    def fill(self, value) -> None:
        return None

    def itemset(self, *args) -> None:
        return None

    # -- copies: new meta arrays ------------------------------------------------------------

    def copy(self, order="C") -> MetaArray:
        return meta_empty(self.shape, self.dtype)

    def __copy__(self) -> MetaArray:
        return self.copy()

    def __deepcopy__(self, memo) -> MetaArray:
        return self.copy()

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = np.dtype(dtype)
        if not copy and dtype == self.dtype:
            return self
        if not np.can_cast(self.dtype, dtype, casting):
            np.zeros((), self.dtype).astype(dtype, casting=casting)  # NumPy's TypeError
        return meta_empty(self.shape, dtype)

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        plain = self.view(np.ndarray)
        try:
            return np.reshape(plain, shape, order=order, copy=False).view(MetaArray)
        except ValueError:  # a copy is needed, or the sizes differ (NumPy's error, from a
            # zero-strided view, which any shape of the same size views without copying)
            new = np.reshape(np.broadcast_to(np.False_, self.shape), shape, order=order)
            return meta_empty(new.shape, self.dtype)

    def ravel(self, order="C") -> MetaArray:
        return self.reshape(-1)

    def flatten(self, order="C") -> MetaArray:
        return meta_empty((self.size,), self.dtype)

    def __reduce__(self):
        return (meta_empty, (self.shape, self.dtype))

    def sort(self, axis=-1, kind=None, order=None, *, stable=None) -> None:
        return None  # in place: nothing to change

    def partition(self, *args, **kwargs) -> None:
        return None

    # -- reads: torch's errors ---------------------------------------------------------------

    def item(self, *args):
        raise RuntimeError(ITEM_ON_META)

    def tolist(self):
        raise NotImplementedError(NO_DATA)

    def tobytes(self, order="C"):
        raise NotImplementedError(NO_DATA)

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    __str__ = __repr__


def _copyto(dst, src, casting="same_kind", where=True) -> None:
    if not isinstance(dst, MetaArray):
        if isinstance(src, MetaArray):
            raise NotImplementedError(NO_DATA)
        return np.copyto(dst, src, casting=casting, where=where)
    np.broadcast_to(np.empty(np.shape(src), np.bool_), dst.shape)
    src_dt = np.result_type(src)
    if not np.can_cast(src_dt, dst.dtype, casting):
        np.copyto(np.zeros((), dst.dtype), np.zeros((), src_dt), casting=casting)
    return None


def _broadcast_to(array, shape, subok=False):
    return np.broadcast_to(_plain(array), shape, subok=subok).view(MetaArray)


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    # NumPy's checks and dtype from empty arrays of the same shapes but the joined axis
    probe = np.concatenate(
        [_emptied(a, axis) for a in arrays], axis=axis, dtype=dtype, casting=casting
    )
    if axis is None:
        shape = (sum(int(np.size(a)) for a in arrays),)
    else:
        ax = operator.index(axis) % probe.ndim
        shape = probe.shape[:ax] + (sum(np.shape(a)[ax] for a in arrays),) + probe.shape[ax + 1 :]
    result = meta_empty(shape, probe.dtype)
    return result if out is None else out


def _emptied(a, axis):
    """An empty stand-in for ``a`` in a concatenation: its shape with the joined axis 0."""
    shape = list(np.shape(a))
    if axis is None:
        shape = [0]
    elif shape:
        shape[operator.index(axis) % len(shape)] = 0
    return np.empty(tuple(shape), np.result_type(a))


def _zeros_like(a, dtype=None, order="K", subok=True, shape=None, **kw):
    return meta_empty(np.shape(a) if shape is None else shape, a.dtype if dtype is None else dtype)


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kw):
    return _zeros_like(a, dtype, shape=shape)


def _where(condition, *args):
    if not args:
        return _to_meta(np.where(_plain(condition)))
    x, y = args
    dt = np.where(np.True_, _stand_in(x) if isinstance(x, np.ndarray) else x,
                  _stand_in(y) if isinstance(y, np.ndarray) else y).dtype  # fmt: skip
    return meta_empty(np.broadcast_shapes(np.shape(condition), np.shape(x), np.shape(y)), dt)


def _computed(name: str):
    """The ndarray method ``name`` run on the (zero) memory, its result made meta (the C
    methods that compute call no ufunc NumPy would hand to ``__array_ufunc__``)."""
    plain_method = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        with np.errstate(all="ignore"):
            return _to_meta(plain_method(self.view(np.ndarray), *_plain(args), **_plain(kwargs)))

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``ndarray.{name}``, giving meta arrays."
    return method


for _name in (
    "argmax", "argmin", "argsort", "argpartition", "nonzero", "take", "repeat", "dot",
    "searchsorted", "cumsum", "cumprod", "round", "clip", "trace", "compress", "choose",
    "diagonal",
):  # fmt: skip
    if hasattr(np.ndarray, _name):
        setattr(MetaArray, _name, _computed(_name))


_FUNCTIONS = {
    np.copyto: _copyto,
    np.broadcast_to: _broadcast_to,
    np.concatenate: _concatenate,
    np.zeros_like: _zeros_like,
    np.ones_like: _zeros_like,
    np.empty_like: _zeros_like,
    np.full_like: _full_like,
    np.where: _where,
}


def _size_of(size) -> tuple:
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        return (int(size),)
    return tuple(size)


class MetaRandom:
    """What fills a meta tensor in place of a NumPy ``Generator``: it draws nothing (the
    generator's state does not move, as in torch) and gives meta arrays of the sizes asked.

    Example:
        >>> from ember._meta import MetaRandom
        >>> MetaRandom().standard_normal((2, 3)).shape
        (2, 3)
    """

    def random(self, size=None, dtype=np.float64, out=None) -> MetaArray:
        return meta_empty(_size_of(size), dtype)

    def standard_normal(self, size=None, dtype=np.float64, out=None) -> MetaArray:
        return meta_empty(_size_of(size), dtype)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False) -> MetaArray:
        return meta_empty(_size_of(size), dtype)

    def exponential(self, scale=1.0, size=None) -> MetaArray:
        return meta_empty(_size_of(size), np.float64)

    def normal(self, loc=0.0, scale=1.0, size=None) -> MetaArray:
        return meta_empty(_size_of(size), np.float64)

    def uniform(self, low=0.0, high=1.0, size=None) -> MetaArray:
        return meta_empty(_size_of(size), np.float64)


META_RANDOM = MetaRandom()


def keep_array(x, dtype=None) -> np.ndarray:
    """``np.asarray(x, dtype)`` that keeps a meta array meta (``np.asarray`` would view it
    as a plain ndarray): what an op calls on its result, whose NumPy scalar for a 0-d
    result must become an array.

    Example:
        >>> import numpy as np
        >>> from ember._meta import keep_array, meta_empty
        >>> type(keep_array(meta_empty((2,), np.float32), np.float64)).__name__
        'MetaArray'
        >>> keep_array(np.float32(1.5))
        array(1.5, dtype=float32)
    """
    if isinstance(x, MetaArray):
        return x if dtype is None else x.astype(dtype, copy=False)
    return np.asarray(x, dtype)


def propagate(out: np.ndarray, inputs: tuple) -> np.ndarray:
    """``out`` as a meta array of its shape and dtype if any of the op's ``inputs`` is a
    meta tensor: ops written with NumPy routines that view meta arrays as plain ones
    (``np.asarray``) computed ``out`` on zeros, and a meta input must give a meta result.

    Example:
        >>> import numpy as np
        >>> from ember._meta import meta_empty, propagate
        >>> class T:  # stands for a Tensor: what matters is its ``_data``
        ...     _data = meta_empty((2,), np.float32)
        >>> type(propagate(np.zeros(2, np.float32), (T(), 1.0))).__name__
        'MetaArray'
    """
    for x in inputs:
        if type(getattr(x, "_data", None)) is MetaArray:
            return meta_empty(out.shape, out.dtype)
    return out
