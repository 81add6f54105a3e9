"""Tensor factories (tensor, zeros, arange, randn, ...) and the global random generator."""

from __future__ import annotations

import collections.abc as _collections_abc
import math
import operator as _operator

import numpy as np

from . import _dtype
from ._alloc import raise_alloc_error
from ._meta import MetaArray, meta_empty
from ._overrides import warn as _warn
from ._quiet import QUIET, quiet_reset, quiet_set
from ._tensor import Tensor, check_device

_wrap = Tensor._wrap
_INT64_MAX = 2**63 - 1

# torch's default generator seed, so an unseeded run is reproducible like torch's.
_DEFAULT_SEED = 67280421310721


class Generator:
    """A random number generator (NumPy PCG64 behind torch's Generator API).

    Example:
        >>> import ember
        >>> g = ember.Generator().manual_seed(0)
        >>> ember.rand(2, generator=g).shape
        torch.Size([2])
    """

    def __init__(self, device: str = "cpu") -> None:
        self._seed = _DEFAULT_SEED
        self._rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Reseed from fresh OS entropy and return the new seed (``ember.seed()``: the
        global generator's).

        Example:
            >>> import ember
            >>> state = ember.get_rng_state()
            >>> s = ember.seed(); s == ember.initial_seed()
            True
            >>> ember.set_rng_state(state)
        """
        s = int(np.random.SeedSequence().entropy) % (2**63)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state as a uint8 tensor (PCG64's 128-bit state and increment)."""
        st = self._rng.bit_generator.state
        words = (st["state"]["state"], st["state"]["inc"])
        raw = b"".join(w.to_bytes(16, "little") for w in words)
        raw += int(st["has_uint32"]).to_bytes(4, "little") + int(st["uinteger"]).to_bytes(
            4, "little"
        )
        return _wrap(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, state: Tensor) -> Generator:
        """Restore a state from ``get_state`` (plain numbers: nothing is unpickled)."""
        raw = np.asarray(state._data, dtype=np.uint8).tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(
                f"Expected a state of {_STATE_BYTES} bytes (from get_rng_state), got {len(raw)}"
            )
        self._rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {
                "state": int.from_bytes(raw[0:16], "little"),
                "inc": int.from_bytes(raw[16:32], "little"),
            },
            "has_uint32": int.from_bytes(raw[32:36], "little"),
            "uinteger": int.from_bytes(raw[36:40], "little"),
        }
        return self


_STATE_BYTES = 40  # PCG64: state and increment (128 bits each), the cached 32-bit half

default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the global generator so ``rand``/``randn``/``randint`` are reproducible.

    Example:
        >>> import ember
        >>> _ = ember.manual_seed(0); a = ember.rand(3)
        >>> _ = ember.manual_seed(0); bool((a == ember.rand(3)).all())
        True
    """
    return default_generator.manual_seed(seed)


seed = default_generator.seed


def initial_seed() -> int:
    """The seed the global generator was last seeded with.

    Example:
        >>> import ember
        >>> _ = ember.manual_seed(7); ember.initial_seed()
        7
    """
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The global generator's state as a uint8 tensor, for ``set_rng_state``.

    Example:
        >>> import ember
        >>> state = ember.get_rng_state(); a = ember.rand(2)
        >>> ember.set_rng_state(state)
        >>> ember.equal(a, ember.rand(2)), state.dtype
        (True, torch.uint8)
    """
    return default_generator.get_state()


def set_rng_state(state: Tensor) -> None:
    """Restore the global generator's state from ``get_rng_state``.

    Example:
        >>> import ember
        >>> state = ember.get_rng_state(); a = ember.randn(3)
        >>> ember.set_rng_state(state)
        >>> ember.equal(a, ember.randn(3))
        True
    """
    default_generator.set_state(state)


def _rng(generator):
    return (generator or default_generator)._rng


# -- helpers ----------------------------------------------------------------------------


def _size(size, size_kw=None, negative: str | None = None, fname: str = "empty") -> tuple:
    """Accept ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(torch.Size(...))``, ``f(size=...)``.
    ``negative``: the factory's own message for a negative size (torch's zeros has one)."""
    if size_kw is not None:
        if size:
            raise TypeError("got multiple values for argument 'size'")
        size = (size_kw,)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, (int, np.integer)):
            raise TypeError(
                f"empty(): argument 'size' must be tuple of ints, but found element of type "
                f"{type(s).__name__} at pos {len(out)}"
            )
        if s < 0:
            raise RuntimeError(
                negative or f"Trying to create tensor with negative dimension {s}: {list(size)}"
            )
        if s > 9223372036854775807:  # past int64: torch cannot even read it as a size
            raise TypeError(
                f"{fname}(): argument 'size' failed to unpack the object at pos {len(out) + 1} "
                'with error "Overflow when unpacking long long"'
            )
        out.append(int(s))
    return tuple(out)


def _check_sampled_dtype(dt: np.dtype, kernel: str) -> None:
    """torch's refusal to draw uniform or normal samples of an integer dtype."""
    if dt.kind not in "fcV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.scalar_name(dt)}'")


def _float_dtype(dtype) -> np.dtype:
    return _dtype._default[0].np if dtype is None else _dtype.to_numpy_dtype(dtype)


def _finish(data: np.ndarray, requires_grad: bool) -> Tensor:
    t = _wrap(data)
    if requires_grad:
        t.requires_grad_(True) if data.dtype.kind in "fcV" else _no_grad_dtype()
    return t


# The factories allocate through _new, _new_full, _sample and _new_from: where NumPy
# refuses a size (MemoryError, ValueError), torch's RuntimeError with its message. The
# try costs nothing; the calls are positional (NumPy's keyword path is slower).


def _new(alloc, shape: tuple, dtype, requires_grad: bool) -> Tensor:
    """``alloc(shape, dtype)`` (np.zeros, np.ones) as a tensor."""
    try:
        data = alloc(shape, dtype)
    except (MemoryError, ValueError) as e:
        raise_alloc_error(shape, dtype, e)
    return _finish(data, requires_grad)


def _new_full(shape: tuple, fill_value, dtype, requires_grad: bool) -> Tensor:
    try:
        data = np.full(shape, fill_value, dtype)
    except (MemoryError, ValueError) as e:
        raise_alloc_error(shape, dtype, e)
    return _finish(data, requires_grad)


def _sample(draw, shape: tuple, dtype, requires_grad: bool) -> Tensor:
    """``draw(shape, float64)`` (a Generator's random, standard_normal) cast to ``dtype``."""
    try:
        data = draw(shape, np.float64).astype(dtype)
    except (MemoryError, ValueError) as e:
        raise_alloc_error(shape, dtype, e)
    return _finish(data, requires_grad)


def _new_from(make, shape: tuple, dtype, requires_grad: bool) -> Tensor:
    """``make()``'s array, of ``shape``, cast to ``dtype``, as a tensor."""
    try:
        data = make()
        if data.dtype != dtype:
            data = data.astype(dtype)
    except (MemoryError, ValueError) as e:
        raise_alloc_error(shape, dtype, e)
    return _finish(data, requires_grad)


def _meta(shape: tuple, dtype, requires_grad: bool) -> Tensor:
    """A tensor on the ``meta`` device: ``shape`` and ``dtype``, no data."""
    return _finish(meta_empty(shape, dtype), requires_grad)


def _like_is_meta(input: Tensor, device) -> bool:
    """Whether a ``*_like`` factory makes a meta tensor: ``device``, else ``input``'s (the
    default device plays no part)."""
    if device is None:
        return type(input._data) is MetaArray
    return bool(check_device(device))


def _no_grad_dtype():
    raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")


# -- from data --------------------------------------------------------------------------


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory=False):
    """A new tensor copying ``data`` (nested lists, numbers, arrays or tensors).

    Python floats become the default dtype (float32), ints int64, bools bool.

    Example:
        >>> import ember
        >>> ember.tensor([[1, 2], [3, 4]]).dtype
        torch.int64
        >>> ember.tensor([0.1, 1.0])
        tensor([0.1000, 1.0000])
    """
    meta = check_device(device)
    if isinstance(data, Tensor):
        _warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        arr = data._data.copy()
    elif isinstance(data, np.ndarray):
        arr = np.array(data, copy=True)
        if arr.dtype not in _dtype._FROM_NP:
            _dtype.from_numpy_dtype(arr.dtype)
    else:
        arr = _from_python(data, None if dtype is None else _dtype.to_numpy_dtype(dtype))
    if dtype is not None:
        arr = arr.astype(_dtype.to_numpy_dtype(dtype), copy=False)
    if meta:
        arr = meta_empty(arr.shape, arr.dtype)
    return _finish(arr, requires_grad)


_MAX_DIMS = 64
_SCALARS = (float, int, bool)
_SCALAR_SET = frozenset(_SCALARS)


def _is_py_sequence(x) -> bool:
    """CPython's ``PySequence_Check``, which torch reads data with: lists, tuples, ranges,
    deques, strings, bytes, arrays, memoryviews, ndarrays (not dicts, sets, iterators,
    NumPy scalars or tensors)."""
    if isinstance(x, (list, tuple)):
        return True
    if isinstance(x, (dict, Tensor, np.generic)):
        return False
    return (
        isinstance(x, np.ndarray)
        or _collections_abc.Sequence in type(x).__mro__
        or (hasattr(type(x), "__getitem__") and hasattr(type(x), "__len__"))
    )


def _promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch.promote_types for the dtypes data can hold: a floating or complex dtype wins
    over integers and bool whatever their width (NumPy would widen int64 + float32)."""
    fa, fb = a.kind in "fcV", b.kind in "fcV"
    if fa != fb:
        return a if fa else b
    if a == b:
        return a
    if a.kind == "V" or b.kind == "V":  # bfloat16 with float16: float32, as in torch
        other = b if a.kind == "V" else a
        return np.dtype(np.float32) if other.itemsize <= 2 else other
    return np.promote_types(a, b)


def _infer_scalar_type(obj) -> np.dtype:
    """torch's ``infer_scalar_type``: the dtype of Python data, promoting over sequences."""
    if isinstance(obj, np.ndarray):
        return _dtype.from_numpy_dtype(obj.dtype).np
    if isinstance(obj, np.generic):
        return _dtype.from_numpy_dtype(np.asarray(obj).dtype).np
    if isinstance(obj, float):
        return _dtype._default[0].np
    if isinstance(obj, bool):
        return np.dtype(np.bool_)
    if isinstance(obj, int):
        return np.dtype(np.int64)
    if isinstance(obj, complex):
        return np.dtype(np.complex64 if _dtype._default[0].np == np.float32 else np.complex128)
    if isinstance(obj, Tensor):
        return obj._data.dtype
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(obj).__name__}'")
    if _is_py_sequence(obj):
        if not len(obj):
            return _dtype._default[0].np
        if isinstance(obj, (list, tuple)):
            types = set(map(type, obj))
            if types <= _SCALAR_SET:  # (the common case, without a call per element)
                if float in types:
                    return _dtype._default[0].np
                return np.dtype(np.int64 if int in types else np.bool_)
        out = None
        for item in obj:
            if item is obj:
                raise TypeError("new(): self-referential lists are incompatible")
            dt = _infer_scalar_type(item)
            out = dt if out is None else _promote(out, dt)
        return out
    raise RuntimeError(f"Could not infer dtype of {type(obj).__name__}")


def _compute_sizes(data) -> list:
    """torch's ``compute_sizes``: the lengths read along the first elements."""
    sizes = []
    x = data
    while _is_py_sequence(x):
        sizes.append(len(x))
        if len(sizes) > _MAX_DIMS:
            raise ValueError(f"too many dimensions '{type(x).__name__}'")
        if not sizes[-1]:
            break
        x = x[0]
    return sizes


def _int_range(dt: np.dtype):
    info = np.iinfo(dt)
    lo = -int(info.max) if info.min == 0 else int(info.min)  # torch wraps -1 into uint8
    return lo, int(info.max)


def _to_float(x) -> float:
    """``PyFloat_AsDouble``: numbers, and objects with ``__float__`` or ``__index__``."""
    if type(x) is float:
        return x
    t = type(x)
    if hasattr(t, "__float__") and not isinstance(x, (str, bytes)):
        return float(x)
    if hasattr(t, "__index__"):
        return float(_operator.index(x))
    raise TypeError(f"must be real number, not {t.__name__}")


def _to_complex(x) -> complex:
    t = type(x)
    if hasattr(t, "__complex__") or hasattr(t, "__float__") and not isinstance(x, (str, bytes)):
        return complex(x)
    if hasattr(t, "__index__"):
        return complex(_operator.index(x))
    raise TypeError(f"must be real number, not {t.__name__}")


def _float_to_int(x, name: str, lo: int, hi: int) -> int:
    """torch's checked conversion of a float element to an integer dtype."""
    x = float(x)
    if not (lo - 1 < x < hi + 1):  # NaN and infinities fail too
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    return int(x)


def _to_int64(x) -> int:
    if isinstance(x, float):  # (PyFloat_Check: np.float64, not np.float32)
        return _float_to_int(x, "int64", -(2**63), 2**63 - 1)
    v = _operator.index(x)
    if not -(2**63) <= v < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return v


def _infer_dtype(x) -> np.dtype | None:
    """The dtype of a fill value: torch's inference, NumPy scalars keeping their own."""
    return None if isinstance(x, np.generic) else _infer_scalar_type(x)


def _leaf_converter(dt: np.dtype):
    """torch's ``store_scalar`` for ``dt``: each element as the Python number stored."""
    kind = dt.kind
    if kind in "fV":
        return _to_float
    if kind == "c":
        return _to_complex
    if kind == "b":

        def to_bool(x):
            if isinstance(x, (float, complex, np.bool_)):  # (np.float32: by __index__)
                return bool(x)
            return _operator.index(x) != 0

        return to_bool
    if dt == np.int64:
        return _to_int64
    lo, hi = _int_range(dt)
    name = dt.name

    def to_int(x):
        if isinstance(x, float):  # (PyFloat_Check: np.float64, not np.float32)
            return _float_to_int(x, name, lo, hi)
        v = _operator.index(x)
        if not -(2**63) <= v < 2**63:
            raise ValueError("Overflow when unpacking long long")
        if not lo <= v <= hi:
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")
        return v

    return to_int


def _block_ok(a: np.ndarray, conv) -> bool:
    """Whether NumPy's conversion of the block ``a`` stores what torch's element-by-element
    one does (else each element goes through ``conv``, for torch's errors)."""
    if conv is _to_float:
        return a.dtype.kind in "biuf"
    if conv is _to_complex:
        return a.dtype.kind in "biufc"
    return conv is _to_int64 and a.dtype.kind in "bi"


def _store(obj, sizes: list, dim: int, conv):
    """torch's ``recursive_store``: ``obj`` as nested lists of converted numbers, with
    torch's errors where it departs from ``sizes``."""
    if dim == len(sizes):
        return conv(obj)
    if isinstance(obj, np.ndarray) and obj.shape == tuple(sizes[dim:]) and _block_ok(obj, conv):
        return obj  # (NumPy converts a whole block: same values, no Python loop)
    try:
        seq = obj if isinstance(obj, (list, tuple)) else list(obj)
    except TypeError:
        raise TypeError("not a sequence") from None
    if len(seq) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(seq)})")
    if dim + 1 == len(sizes):
        types = set(map(type, seq))
        if types <= _SCALAR_SET and (
            conv is _to_float or conv is _to_complex or (conv is _to_int64 and float not in types)
        ):
            return seq  # NumPy stores these exactly as torch (int64 overflow: caught below)
    return [_store(item, sizes, dim + 1, conv) for item in seq]


def _from_python(data, np_dtype) -> np.ndarray:
    """torch.tensor's ``internal_new_from_data`` for data other than tensors and ndarrays:
    sizes read along the first elements, the dtype inferred over every element unless
    given, and each element stored as a number of it, with torch's errors."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, np.generic) and np_dtype is None:
        arr = np.array(data)
        _dtype.from_numpy_dtype(arr.dtype)
        return arr
    sizes = _compute_sizes(data)
    dt = _infer_scalar_type(data) if np_dtype is None else np_dtype
    conv = _leaf_converter(dt)
    if not sizes:
        value = conv(data)
    elif 0 in sizes:
        return np.empty(sizes, dtype=dt)
    else:
        value = _store(data, sizes, 0, conv)
    token = quiet_set(QUIET)  # (np.errstate would cost a microsecond a tensor)
    try:
        if dt.kind in "iu" and dt.itemsize < 8:  # checked above; torch wraps -1 to 255
            arr = np.array(value, dtype=np.int64).astype(dt)
        else:
            arr = np.array(value, dtype=dt)
    except OverflowError:  # a Python int past int64, left to NumPy above
        raise ValueError("Overflow when unpacking long long") from None
    finally:
        quiet_reset(token)
    if arr.shape != tuple(sizes):  # a block NumPy kept whole had the wrong shape
        raise ValueError(f"expected sequence of length {sizes[-1]} at dim {len(sizes) - 1}")
    return arr


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with a Tensor or ndarray when no conversion is needed
    (``asarray`` is the same function).

    Example:
        >>> import numpy as np, ember
        >>> a = np.array([1.0, 2.0]); t = ember.as_tensor(a); a[0] = 5.0
        >>> t
        tensor([5., 2.], dtype=torch.float64)
    """
    if check_device(device):
        if isinstance(data, Tensor):
            return data.to("meta", dtype)
        return tensor(data, dtype=dtype, device="meta")
    if isinstance(data, Tensor):
        if dtype is None or _dtype.to_numpy_dtype(dtype) == data._data.dtype:
            return data
        return data.to(dtype)
    if isinstance(data, np.ndarray):
        if dtype is None or _dtype.to_numpy_dtype(dtype) == data.dtype:
            _dtype.from_numpy_dtype(data.dtype)
            return _wrap(data)
        return _wrap(data.astype(_dtype.to_numpy_dtype(dtype)))
    return tensor(data, dtype=dtype)


asarray = as_tensor


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (dtype kept).

    Example:
        >>> import numpy as np, ember
        >>> a = np.zeros(2); t = ember.from_numpy(a); a[0] = 5; t
        tensor([5., 0.], dtype=torch.float64)
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    return _wrap(ndarray)


def frombuffer(
    buffer, *, dtype, count: int = -1, offset: int = 0, requires_grad: bool = False
) -> Tensor:
    """A 1-D tensor sharing memory with an object that has the buffer protocol (``bytearray``,
    ``array.array``, ``mmap``...): ``count`` elements of ``dtype`` from byte ``offset``
    (``count=-1``: to the end).

    Example:
        >>> import ember
        >>> data = bytearray(b"\\x01\\x00\\x02\\x00")
        >>> t = ember.frombuffer(data, dtype=ember.int16)
        >>> t
        tensor([1, 2], dtype=torch.int16)
        >>> t[0] = 7; bytes(data)
        b'\\x07\\x00\\x02\\x00'
    """
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length, size = view.nbytes, _dtype.to_numpy_dtype(dtype).itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
            f"({length} bytes) minus 1"
        )
    if count < 0:
        if (length - offset) % size:
            raise ValueError(
                f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be "
                f"a multiple of element size ({size})"
            )
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(
            f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) "
            f"must not be greater than actual buffer length ({length} bytes)"
        )
    arr = np.frombuffer(buffer, dtype=_dtype.to_numpy_dtype(dtype), count=count, offset=offset)
    if not arr.flags.writeable:
        # torch warns and shares the memory anyway; NumPy refuses writes to it, so ember
        # copies (writing to a read-only buffer is undefined behaviour in torch).
        _warn(
            "The given buffer is not writable, and PyTorch does not support non-writable "
            "tensors. This means you can write to the underlying (supposedly non-writable) "
            "buffer using the tensor. You may want to copy the buffer to protect its data or "
            "make it writable before converting it to a tensor. This type of warning will be "
            "suppressed for the rest of this program. (Triggered internally at "
            "/__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:1556.)",
            UserWarning,
            stacklevel=2,
        )
        arr = arr.copy()
    t = _wrap(arr)
    return t.requires_grad_() if requires_grad else t


# -- filled -----------------------------------------------------------------------------


def zeros(
    *shape, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """A tensor of zeros. Example: ``ember.zeros(2, 3)``.

    Example:
        >>> import ember
        >>> ember.zeros(2)
        tensor([0., 0.])
    """
    meta = check_device(device)
    shape = _size(shape, size, "zeros: Dimension size must be non-negative.", "zeros")
    if meta:
        return _meta(shape, _float_dtype(dtype), requires_grad)
    return _new(np.zeros, shape, _float_dtype(dtype), requires_grad)


def _zeros(size: tuple, dtype, requires_grad: bool, device=None) -> Tensor:
    """Zeros with the message of every factory but torch.zeros for a negative size
    (Tensor.new_zeros's)."""
    shape = _size(size, fname="new_zeros")
    if check_device(device):
        return _meta(shape, _float_dtype(dtype), requires_grad)
    return _new(np.zeros, shape, _float_dtype(dtype), requires_grad)


def ones(
    *shape, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """A tensor of ones.

    Example:
        >>> import ember
        >>> ember.ones(2, 2, requires_grad=True)
        tensor([[1., 1.],
                [1., 1.]], requires_grad=True)
    """
    if check_device(device):
        return _meta(_size(shape, size, fname="ones"), _float_dtype(dtype), requires_grad)
    return _new(np.ones, _size(shape, size, fname="ones"), _float_dtype(dtype), requires_grad)


def empty(
    *shape,
    size=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
    pin_memory=False,
) -> Tensor:
    """An uninitialised tensor (ember zero-fills it, so results are deterministic).

    Example:
        >>> import ember
        >>> ember.empty(2, 3).shape
        torch.Size([2, 3])
    """
    if check_device(device):
        return _meta(_size(shape, size), _float_dtype(dtype), requires_grad)
    return _new(np.zeros, _size(shape, size), _float_dtype(dtype), requires_grad)


def full(
    size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """A tensor filled with ``fill_value`` (dtype inferred from it like torch).

    Example:
        >>> import ember
        >>> ember.full((2,), 7)
        tensor([7, 7])
    """
    meta = check_device(device)
    if dtype is None:
        dt = _infer_dtype(fill_value)
    else:
        dt = _dtype.to_numpy_dtype(dtype)
    if meta:
        return _meta(_size((size,)), dt, requires_grad)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _new_full(_size((size,)), fill_value, dt, requires_grad)


def eye(
    n: int,
    m: int | None = None,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    """The identity matrix (``n`` x ``m``).

    Example:
        >>> import ember
        >>> ember.eye(2, 3)
        tensor([[1., 0., 0.],
                [0., 1., 0.]])
    """
    meta = check_device(device)
    m = n if m is None else m
    if n < 0 or m < 0:
        name, v = ("n", n) if n < 0 else ("m", m)
        raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dt = _float_dtype(dtype)
    if meta:
        return _meta((n, m), dt, requires_grad)
    try:
        data = np.eye(n, m, dtype=dt)
    except (MemoryError, ValueError) as e:
        if n * m > _INT64_MAX:  # torch checks eye's element count before its storage size
            raise RuntimeError("numel: integer multiplication overflow") from None
        raise_alloc_error((n, m), dt, e)
    return _finish(data, requires_grad)


def arange(
    start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 when all are ints.

    Example:
        >>> import ember
        >>> ember.arange(4.0)
        tensor([0., 1., 2., 3.])
        >>> ember.arange(0, 3)
        tensor([0, 1, 2])
    """
    meta = check_device(device)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is not None:
        dt = _dtype.to_numpy_dtype(dtype)
    elif all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in vals):
        dt = np.dtype(np.int64)
    else:
        dt = _dtype._default[0].np
    start, end, step = vals
    if dt.kind in "iub" and isinstance(step, float) and math.isfinite(step) and int(step) == 0:
        raise ValueError("step must be nonzero")  # (torch: the step cast to the dtype is 0)
    try:
        n = math.ceil((end - start) / step)
    except (OverflowError, ValueError):  # an infinite or NaN bound or step
        n = -1
    if n <= 0:  # torch's checks (a positive count has finite bounds of the step's sign)
        if not (step > 0 or step < 0):  # NaN
            raise RuntimeError("step must be nonzero")
        if not (math.isfinite(start) and math.isfinite(end)):
            raise RuntimeError(f"unsupported range: {_scalar_str(start)} -> {_scalar_str(end)}")
        if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
            raise RuntimeError("upper bound and lower bound inconsistent with step sign")
        n = 0
    if meta:
        return _meta((n,), dt, requires_grad)
    try:
        if dt.kind in "fV":
            data = (start + np.arange(n, dtype=np.float64) * step).astype(dt)
        else:
            data = np.arange(start, end, step, dtype=dt)
    except (MemoryError, ValueError) as e:
        raise_alloc_error((n,), dt, e)
    return _finish(data, requires_grad)


def _scalar_str(v) -> str:
    """A number as torch's messages print it (C++ streams: 0, 0.5, inf, nan, 1e+20)."""
    return str(v) if isinstance(v, (int, np.integer)) else f"{v:g}"


def linspace(
    start, end, steps: int, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    Example:
        >>> import ember
        >>> ember.linspace(0, 1, 5)
        tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    meta = check_device(device)
    _check_steps(steps)
    if meta:
        return _meta((steps,), _float_dtype(dtype), requires_grad)
    return _new_from(
        lambda: np.linspace(start, end, steps, dtype=np.float64),
        (steps,),
        _float_dtype(dtype),
        requires_grad,
    )


def logspace(
    start,
    end,
    steps: int,
    base: float = 10.0,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    """``steps`` values from ``base**start`` to ``base**end``, evenly spaced in exponent.

    Example:
        >>> import ember
        >>> ember.logspace(0, 2, 3)
        tensor([  1.,  10., 100.])
    """
    meta = check_device(device)
    _check_steps(steps)
    if meta:
        return _meta((steps,), _float_dtype(dtype), requires_grad)
    return _new_from(
        lambda: np.logspace(start, end, steps, base=base),
        (steps,),
        _float_dtype(dtype),
        requires_grad,
    )


def _check_steps(steps) -> None:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")


# -- random -----------------------------------------------------------------------------


def rand(
    *shape,
    size=None,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """Uniform samples on [0, 1).

    Example:
        >>> import ember
        >>> ember.rand(2, 3).shape
        torch.Size([2, 3])
    """
    meta = check_device(device)
    dt, shape = _float_dtype(dtype), _size(shape, size, fname="rand")
    _check_sampled_dtype(dt, "check_uniform_bounds")
    if meta:  # nothing drawn: the generator does not move
        return _meta(shape, dt, requires_grad)
    return _sample(_rng(generator).random, shape, dt, requires_grad)


def randn(
    *shape,
    size=None,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """Standard normal samples.

    Example:
        >>> import ember
        >>> ember.randn(3, requires_grad=True).requires_grad
        True
    """
    meta = check_device(device)
    dt = _float_dtype(dtype)
    rng, shape = _rng(generator), _size(shape, size, fname="randn")
    _check_sampled_dtype(dt, "normal_kernel_cpu")
    if meta:  # nothing drawn: the generator does not move
        return _meta(shape, dt, requires_grad)
    return _sample(rng.standard_normal, shape, dt, requires_grad)


def randint(
    low,
    high=None,
    size=None,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    """Integers uniform on ``[low, high)`` (int64 by default).

    Example:
        >>> import ember
        >>> ember.randint(0, 10, (3,)).dtype
        torch.int64
    """
    meta = check_device(device)
    if size is None:
        if isinstance(high, (tuple, list)):
            low, high, size = 0, low, high
        else:
            raise TypeError("randint() missing required argument 'size'")
    elif high is None:
        low, high = 0, low
    dt = np.dtype(np.int64) if dtype is None else _dtype.to_numpy_dtype(dtype)
    shape, rng = _size((size,)), _rng(generator)
    if meta:
        return _meta(shape, dt, requires_grad)
    return _new_from(
        lambda: rng.integers(low, high, size=shape, dtype=np.int64), shape, dt, requires_grad
    )


def randperm(
    n: int,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype``).

    Example:
        >>> import ember
        >>> sorted(ember.randperm(4).tolist())
        [0, 1, 2, 3]
    """
    meta = check_device(device)
    dt = np.dtype(np.int64) if dtype is None else _dtype.to_numpy_dtype(dtype)
    shape, rng = _size((n,)), _rng(generator)
    if meta:
        return _meta(shape, dt, requires_grad)
    return _new_from(lambda: rng.permutation(n), shape, dt, requires_grad)


def normal(
    mean: float,
    std: float,
    size,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """``normal(mean, std, size)`` with numbers: a new tensor of samples from
    N(``mean``, ``std``**2). (``torch.normal`` itself, ``ember._aten.random.normal``, also
    takes tensors for ``mean`` and ``std``.)

    Example:
        >>> import ember
        >>> ember.normal(2.0, 0.5, (2, 3), dtype=ember.float64).dtype
        torch.float64
    """
    meta = check_device(device)
    mean, std = float(mean), float(std)
    dt = _float_dtype(dtype)
    if dt.kind not in "fcV":
        raise NotImplementedError(
            f"\"normal_kernel_cpu\" not implemented for '{_dtype.scalar_name(dt)}'"
        )
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    shape, rng = _size((size,), fname="normal"), _rng(generator)
    if meta:
        return _meta(shape, dt, requires_grad)
    t = _new_from(lambda: mean + std * rng.standard_normal(shape), shape, dt, requires_grad)
    if out is not None:
        out.data = t.to(out.dtype) if out.dtype != t.dtype else t
        return out
    return t


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None):
    """``num_samples`` indices drawn from each row of ``input``, whose non-negative weights
    need not sum to 1 (int64; without ``replacement`` an index is drawn at most once).

    Example:
        >>> import ember
        >>> ember.multinomial(ember.tensor([0.0, 0.0, 1.0]), 2, replacement=True)
        tensor([2, 2])
        >>> sorted(ember.multinomial(ember.ones(3), 3).tolist())
        [0, 1, 2]
    """
    probs = np.atleast_2d(input._data.astype(np.float64))
    rng = _rng(generator)
    rows = [rng.choice(p.size, size=num_samples, replace=replacement, p=p / p.sum()) for p in probs]
    out = np.stack(rows).astype(np.int64)
    return _wrap(out if input._data.ndim == 2 else out[0])


# -- *_like -----------------------------------------------------------------------------


def _like_dtype(input: Tensor, dtype) -> np.dtype:
    return input._data.dtype if dtype is None else _dtype.to_numpy_dtype(dtype)


def zeros_like(
    input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
) -> Tensor:
    """Zeros with the shape (and dtype, unless given) of ``input``.

    Example:
        >>> import ember
        >>> ember.zeros_like(ember.tensor([[1, 2]]))
        tensor([[0, 0]])
    """
    if _like_is_meta(input, device):
        return _meta(input._data.shape, _like_dtype(input, dtype), requires_grad)
    return _new(np.zeros, input._data.shape, _like_dtype(input, dtype), requires_grad)


def ones_like(
    input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
) -> Tensor:
    """Ones with the shape (and dtype, unless given) of ``input``.

    Example:
        >>> import ember
        >>> ember.ones_like(ember.tensor([[1, 2]]))
        tensor([[1, 1]])
    """
    if _like_is_meta(input, device):
        return _meta(input._data.shape, _like_dtype(input, dtype), requires_grad)
    return _new(np.ones, input._data.shape, _like_dtype(input, dtype), requires_grad)


def empty_like(
    input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
) -> Tensor:
    """An uninitialised tensor with the shape (and dtype, unless given) of ``input`` (ember
    zero-fills it).

    Example:
        >>> import ember
        >>> t = ember.empty_like(ember.ones(2, 3, dtype=ember.int32))
        >>> t.shape, t.dtype
        (torch.Size([2, 3]), torch.int32)
    """
    if _like_is_meta(input, device):
        return _meta(input._data.shape, _like_dtype(input, dtype), requires_grad)
    return _new(np.zeros, input._data.shape, _like_dtype(input, dtype), requires_grad)


def full_like(
    input,
    fill_value,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
) -> Tensor:
    """``fill_value`` everywhere, with the shape (and dtype, unless given) of ``input``.

    Example:
        >>> import ember
        >>> ember.full_like(ember.zeros(2, 2), 7)
        tensor([[7., 7.],
                [7., 7.]])
    """
    dt = _like_dtype(input, dtype)
    if _like_is_meta(input, device):
        return _meta(input._data.shape, dt, requires_grad)
    return _new_full(input._data.shape, fill_value, dt, requires_grad)


def rand_like(
    input,
    *,
    generator=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
) -> Tensor:
    """Uniform samples on [0, 1) with the shape (and dtype, unless given) of ``input``.

    Example:
        >>> import ember
        >>> t = ember.rand_like(ember.zeros(2, 3, dtype=ember.float64))
        >>> t.shape, t.dtype, bool(((t >= 0) & (t < 1)).all())
        (torch.Size([2, 3]), torch.float64, True)
    """
    meta = _like_is_meta(input, device)
    dt = _like_dtype(input, dtype)
    rng = _rng(generator)
    _check_sampled_dtype(dt, "check_uniform_bounds")
    if meta:
        return _meta(input._data.shape, dt, requires_grad)
    return _sample(rng.random, input._data.shape, dt, requires_grad)


def randn_like(
    input,
    *,
    generator=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
) -> Tensor:
    """Standard normal samples with the shape (and dtype, unless given) of ``input``.

    Example:
        >>> import ember
        >>> ember.randn_like(ember.zeros(2, 3)).shape
        torch.Size([2, 3])
    """
    meta = _like_is_meta(input, device)
    dt = _like_dtype(input, dtype)
    rng = _rng(generator)
    _check_sampled_dtype(dt, "normal_kernel_cpu")
    if meta:
        return _meta(input._data.shape, dt, requires_grad)
    return _sample(rng.standard_normal, input._data.shape, dt, requires_grad)


def randint_like(
    input,
    low,
    high=None,
    *,
    generator=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
) -> Tensor:
    """Random integers in ``[low, high)`` with the shape (and dtype, unless given) of
    ``input``.

    Example:
        >>> import ember
        >>> ember.randint_like(ember.zeros(3), 5).shape
        torch.Size([3])
    """
    meta = _like_is_meta(input, device)
    if high is None:
        low, high = 0, low
    dt, shape, rng = _like_dtype(input, dtype), input._data.shape, _rng(generator)
    if meta:
        return _meta(shape, dt, requires_grad)
    return _new_from(lambda: rng.integers(low, high, size=shape), shape, dt, requires_grad)
