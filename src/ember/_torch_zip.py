"""PyTorch's checkpoint format (the zip archive ``torch.save`` writes), read and written safely.

Layout of the archive (all members stored uncompressed, under one top-level directory,
``archive/`` when ember writes it):

* ``data.pkl``: the saved object as a pickle (protocol 2). Tensors are calls of
  ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``;
  each ``storage`` is a *persistent id* ``("storage", torch.FloatStorage, key, "cpu", numel)``
  naming the member ``data/<key>``, so tensors viewing one storage share it;
* ``data/<key>``: a storage's raw bytes, in the byte order named by ``byteorder``;
* ``version``, ``byteorder``, ``.format_version``, ``.storage_alignment``,
  ``.data/serialization_id``: small metadata records.

Reading follows ``torch.load(weights_only=True)``: the pickle goes through a restricted
unpickler whose ``find_class`` admits only an allow-list of globals (tensor and parameter
rebuild functions, storage types, dtypes, ``torch.Size``, ``torch.device``,
``collections.OrderedDict``/``Counter``, ``set``/``complex``/``bytearray`` and the globals
registered with ``add_safe_globals``), which are mapped onto ember's own implementations.
Calls (``REDUCE``/``NEWOBJ``), ``BUILD`` and item assignment are allowed only on those
objects, and every size in the file is checked against the file's length before anything is
allocated. Nothing from the file is ever imported or executed.

NumPy arrays, dtypes and scalars are written as torch's pickler writes them (NumPy's own
``__reduce__``) and read through checked stand-ins for NumPy's reconstruction globals
(``numpy[._]core.multiarray._reconstruct``/``scalar``, ``numpy.ndarray``, ``numpy.dtype``):
allowed with ``weights_only=False``, or with ``weights_only=True`` when the user allowlisted
them, as torch requires.
"""

from __future__ import annotations

import _codecs
import io
import pickle
import pickletools
import re
import secrets
import struct
import sys
import threading
import zipfile
from collections import Counter, OrderedDict
from typing import Any

import numpy as np

from . import _dtype
from ._aten import sparse as _sparse
from ._tensor import LAYOUTS as _LAYOUTS
from ._tensor import Size, Tensor, device
from .nn.modules.module import Module
from .nn.parameter import Parameter
from .optim.optimizer import Optimizer

__all__ = [
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "safe_globals",
    "is_torch_zip",
    "load_zip",
    "plan_zip",
    "write_zip",
]

ZIP_MAGIC = b"PK\x03\x04"
_ALIGNMENT = 64  # storage records start at multiples of this offset, as torch writes them
_CHUNK = 16 * 1024 * 1024
_MAX_DEPTH = 500


# -- errors -------------------------------------------------------------------------------


class _FormatError(ValueError):
    """A malformed or unsupported checkpoint."""


class _DeviceError(RuntimeError):
    """Tensors mapped to a device other than the CPU."""


class _Refused(pickle.UnpicklingError):
    """The pickle asks for something the weights-only unpickler does not allow."""


_PASS_THROUGH = (_FormatError, _DeviceError, _Refused)


def _bad(msg: str) -> _FormatError:
    return _FormatError(f"ember.load: {msg}")


_CUDA_MSG = (
    "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
    "False. If you are running on a CPU-only machine, please use torch.load with "
    "map_location=torch.device('cpu') to map your storages to the CPU. (ember runs on the "
    "CPU only.)"
)


def _weights_only_message(detail: str, weights_only: bool) -> str:
    if weights_only:
        why = (
            "ember.load only loads weights (tensors, numbers, strings and containers of these) "
            "and never runs code from a checkpoint."
        )
    else:
        why = (
            "ember.load only loads weights and never runs code from a checkpoint, even with "
            "weights_only=False (torch would unpickle arbitrary objects and run their code)."
        )
    return (
        f"ember.load: Weights only load failed. {why} If you trust the file and it needs more "
        "globals, allowlist them with `torch.serialization.add_safe_globals([...])` or the "
        "`torch.serialization.safe_globals([...])` context manager (ember.serialization has "
        f"the same functions).\n\tWeightsUnpickler error: {detail}"
    )


# -- user allow-list (torch.serialization.add_safe_globals) -------------------------------

_user_globals: dict[str, Any] = {}  # "module.qualname" -> object
_user_lock = threading.Lock()


def _global_name(entry) -> tuple[str, Any]:
    if isinstance(entry, tuple):
        if len(entry) != 2:
            raise ValueError(
                "Expected tuple of length 2 (global, str of callable full path), but got tuple "
                f"of length: {len(entry)}"
            )
        if not isinstance(entry[1], str):
            raise TypeError(
                "Expected second item in tuple to be str of callable full path, but got: "
                f"{type(entry[1])}"
            )
        return entry[1], entry[0]
    module = getattr(entry, "__module__", None)
    name = getattr(entry, "__qualname__", None) or getattr(entry, "__name__", None)
    if not isinstance(module, str) or not isinstance(name, str):
        raise TypeError(
            f"add_safe_globals: {entry!r} has no __module__/__qualname__; pass a tuple "
            "(object, 'module.name') instead"
        )
    return f"{module}.{name}", entry


def add_safe_globals(safe_globals: list) -> None:
    """Allow ``ember.load`` (and ``torch.load`` code run on ember) to use these globals.

    Each entry is a class or function, or a tuple ``(object, "module.name")`` naming the
    global under which the checkpoint refers to it. Allowlisted classes may be created
    (``NEWOBJ``/``REDUCE``) and filled in (``BUILD``) by the file: only add what you trust.
    Globals of ``os``, ``sys``, ``subprocess`` and similar modules are never allowed.

    Example:
        >>> import ember, argparse
        >>> ember.serialization.add_safe_globals([argparse.Namespace])
        >>> argparse.Namespace in ember.serialization.get_safe_globals()
        True
        >>> ember.serialization.clear_safe_globals()
    """
    entries = [_global_name(e) for e in safe_globals]
    with _user_lock:
        for name, obj in entries:
            _user_globals[name] = obj


def get_safe_globals() -> list:
    """The globals added with ``add_safe_globals`` (as torch, a list).

    Example:
        >>> import ember
        >>> ember.serialization.get_safe_globals()
        []
    """
    with _user_lock:
        return [
            obj if _global_name_or_none(obj) == name else (obj, name)
            for name, obj in _user_globals.items()
        ]


def _global_name_or_none(obj) -> str | None:
    try:
        return _global_name(obj)[0]
    except (TypeError, ValueError):
        return None


def clear_safe_globals() -> None:
    """Forget every global added with ``add_safe_globals``.

    Example:
        >>> import ember
        >>> ember.serialization.clear_safe_globals()
        >>> ember.serialization.get_safe_globals()
        []
    """
    with _user_lock:
        _user_globals.clear()


class safe_globals:
    """Context manager: the given globals are allowlisted inside the ``with`` block only.

    Example:
        >>> import ember, argparse
        >>> with ember.serialization.safe_globals([argparse.Namespace]):
        ...     argparse.Namespace in ember.serialization.get_safe_globals()
        True
        >>> argparse.Namespace in ember.serialization.get_safe_globals()
        False
    """

    def __init__(self, safe_globals: list) -> None:
        self.safe_globals = list(safe_globals)
        self._added: list[str] = []

    def __enter__(self):
        entries = [_global_name(e) for e in self.safe_globals]
        with _user_lock:
            self._added = [name for name, _ in entries if name not in _user_globals]
            for name, obj in entries:
                _user_globals.setdefault(name, obj)
        return self

    def __exit__(self, *exc) -> None:
        with _user_lock:
            for name in self._added:
                _user_globals.pop(name, None)


# -- the objects the allow-list maps torch's globals to -----------------------------------

# torch dtype name -> ember dtype, or None where ember has no such dtype
_TORCH_DTYPES: dict[str, _dtype.dtype | None] = {d.name: d for d in _dtype.ALL}
for _n in (
    "bfloat16 complex32 float8_e4m3fn float8_e5m2 float8_e4m3fnuz "
    "float8_e5m2fnuz float8_e8m0fnu float4_e2m1fn_x2 qint8 quint8 qint32 quint4x2 quint2x4 "
    "bits1x8 bits2x4 bits4x2 bits8 bits16 int1 int2 int3 int4 int5 int6 int7 uint1 uint2 uint3 "
    "uint4 uint5 uint6 uint7"
).split():
    _TORCH_DTYPES[_n] = None

# legacy typed storage classes -> dtype name
_STORAGE_DTYPES = {
    "FloatStorage": "float32",
    "DoubleStorage": "float64",
    "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16",
    "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
    "ByteStorage": "uint8",
    "CharStorage": "int8",
    "ShortStorage": "int16",
    "IntStorage": "int32",
    "LongStorage": "int64",
    "BoolStorage": "bool",
    "QInt8Storage": "qint8",
    "QUInt8Storage": "quint8",
    "QInt32Storage": "qint32",
    "QUInt4x2Storage": "quint4x2",
    "QUInt2x4Storage": "quint2x4",
}
_STORAGE_OF_DTYPE = {v: k for k, v in _STORAGE_DTYPES.items() if _TORCH_DTYPES.get(v) is not None}
_STORAGE_OF_DTYPE["bfloat16"] = "BFloat16Storage"  # ember.bfloat16 is made on first use


class _TorchDtype:
    """A torch dtype that ember lacks: loads as a marker; tensors of it are refused."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class _StorageType:
    """``torch.FloatStorage`` & co. as the unpickler sees them: a dtype name, or untyped."""

    __slots__ = ("name", "dtype_name")

    def __init__(self, name: str, dtype_name: str | None) -> None:
        self.name = name
        self.dtype_name = dtype_name

    def __repr__(self) -> str:
        return f"<storage type {self.name}>"


class _Storage:
    """A loaded storage: one writable byte buffer that every tensor of it views."""

    __slots__ = ("buf", "swap", "swapped", "bools")

    def __init__(self, buf: np.ndarray, swap: bool = False) -> None:
        self.buf = buf
        self.swap = swap  # bytes are in the other byte order; swapped on first typed use
        self.swapped: int | None = None  # the itemsize they were swapped with
        self.bools = False  # made valid NumPy bools (0/1) already

    def nbytes(self) -> int:
        return self.buf.size

    def size(self) -> int:
        return self.buf.size

    def cpu(self) -> _Storage:
        return self

    def cuda(self, *args, **kwargs):
        raise _DeviceError(_CUDA_MSG)

    def __repr__(self) -> str:
        return f"<storage of {self.buf.size} bytes>"

    def typed(self, np_dtype: np.dtype) -> np.ndarray:
        """The buffer's bytes prepared for viewing as ``np_dtype``."""
        item = np_dtype.itemsize
        if self.swap and item > 1:
            if self.swapped is None:
                usable = self.buf.size - self.buf.size % item
                self.buf[:usable].view(np_dtype).byteswap(inplace=True)
                self.swapped = item
            elif self.swapped != item:
                raise _bad("a big-endian storage is viewed with dtypes of different sizes")
        if np_dtype.kind == "b" and not self.bools:
            # any nonzero byte is True in torch; NumPy bools must be exactly 0 or 1
            np.not_equal(self.buf, 0, out=self.buf.view(np.bool_))
            self.bools = True
        return self.buf


def _tensor_dtype(marker) -> np.dtype:
    if isinstance(marker, _dtype.dtype):
        return marker.np
    if isinstance(marker, _TorchDtype):
        if marker.name == "bfloat16":  # made (and ml_dtypes imported) on first use
            return _dtype._bfloat16().np
        raise _bad(
            f"the checkpoint holds a tensor of dtype torch.{marker.name}, which ember does not "
            "support; convert it in torch first (e.g. to float32)"
        )
    raise _Refused(f"ember.load: expected a dtype, got {type(marker).__name__}")


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _int_tuple(x, what: str) -> tuple:
    if not isinstance(x, (tuple, list)) or not all(_is_int(v) for v in x):
        raise _bad(f"tensor {what} must be a tuple of ints, got {x!r:.80}")
    if len(x) > 64:
        raise _bad(f"tensor has {len(x)} dimensions; at most 64 are supported")
    return tuple(x)


def _make_array(storage, offset, size, stride, np_dtype: np.dtype) -> np.ndarray:
    if not isinstance(storage, _Storage):
        raise _Refused(
            f"ember.load: tensor storage must be a storage, got {type(storage).__name__}"
        )
    if not _is_int(offset) or offset < 0:
        raise _bad(f"invalid storage offset {offset!r:.80}")
    size = _int_tuple(size, "size")
    stride = _int_tuple(stride, "stride")
    if len(size) != len(stride):
        raise _bad(f"tensor size {size} and stride {stride} differ in length")
    if any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise _bad(f"negative size or stride in size {size}, stride {stride}")
    item = np_dtype.itemsize
    buf = storage.typed(np_dtype)
    if 0 in size:
        return np.empty(size, dtype=np_dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if (last + 1) * item > buf.size:
        raise _bad(
            f"tensor of size {size}, stride {stride} and offset {offset} reaches element "
            f"{last} of a storage of {buf.size // item} {np_dtype.name} elements"
        )
    try:
        return np.ndarray(
            size,
            dtype=np_dtype,
            buffer=buf,
            offset=offset * item,
            strides=tuple(s * item for s in stride),
        )
    except (ValueError, TypeError, OverflowError) as exc:
        raise _bad(f"cannot view the storage as size {size}, stride {stride}: {exc}") from None


def _wrap(arr: np.ndarray, requires_grad) -> Tensor:
    if not isinstance(requires_grad, bool):
        raise _bad(f"requires_grad must be a bool, got {requires_grad!r:.80}")
    t = Tensor._wrap(arr)
    if requires_grad:
        if arr.dtype.kind not in "fcV":
            raise _bad("only floating point and complex tensors can require gradients")
        t._rg = True
    return t


def _check_hooks(hooks) -> None:
    if hooks is not None and not (isinstance(hooks, dict) and not hooks):
        raise _bad("tensors with backward hooks cannot be loaded")


def _rebuild_tensor_v2(
    storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None
):
    if not isinstance(storage, _TypedStorage):
        raise _Refused("ember.load: _rebuild_tensor_v2 expects a typed storage")
    _check_hooks(backward_hooks)
    arr = _make_array(storage.storage, storage_offset, size, stride, storage.np_dtype)
    return _wrap(arr, requires_grad)


def _rebuild_tensor_v3(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None
):
    np_dtype = _tensor_dtype(dtype)
    if isinstance(storage, _TypedStorage):
        storage = storage.storage
    _check_hooks(backward_hooks)
    return _wrap(_make_array(storage, storage_offset, size, stride, np_dtype), requires_grad)


class _TypedStorage:
    """A storage together with the dtype a persistent id gave it."""

    __slots__ = ("storage", "np_dtype")

    def __init__(self, storage: _Storage, np_dtype: np.dtype) -> None:
        self.storage = storage
        self.np_dtype = np_dtype


def _rebuild_sparse_tensor(layout, data):
    """torch's pickled sparse tensor: ``(indices, values, size[, is_coalesced])`` for COO,
    ``(crow_indices, col_indices, values, size)`` for CSR; checked like any constructor."""

    if not isinstance(data, tuple) or not all(
        isinstance(t, Tensor) for t in data[: -2 if layout is _LAYOUTS["sparse_coo"] else -1]
    ):
        raise _bad("_rebuild_sparse_tensor expects tensors")
    if layout is _LAYOUTS["sparse_coo"] and len(data) in (3, 4):
        indices, values, size = data[:3]
        coalesced = data[3] if len(data) == 4 else None
        if coalesced is not None and not isinstance(coalesced, bool):
            raise _bad("is_coalesced must be a bool or None")
        return _sparse.sparse_coo_tensor(indices, values, tuple(size), is_coalesced=coalesced)
    if layout is _LAYOUTS["sparse_csr"] and len(data) == 4:
        crow, col, values, size = data
        return _sparse.sparse_csr_tensor(crow, col, values, tuple(size))
    raise _Refused(f"ember.load: rebuilding sparse tensor for layout {layout} is not supported")


def _get_layout(name):
    """torch.serialization._get_layout: a layout by its name (``"torch.sparse_coo"``)."""
    if not isinstance(name, str) or not name.startswith("torch.") or name[6:] not in _LAYOUTS:
        raise _bad(f"unknown layout {name!r}")
    return _LAYOUTS[name[6:]]


def _rebuild_tensor_legacy(storage, storage_offset, size, stride):
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    if type(data) is not Tensor:
        raise _Refused("ember.load: _rebuild_parameter expects a tensor")
    if not isinstance(requires_grad, bool):
        raise _bad("requires_grad must be a bool")
    _check_hooks(backward_hooks)
    if requires_grad and data._data.dtype.kind not in "fcV":
        raise _bad("only floating point and complex tensors can require gradients")
    return Parameter(data, requires_grad)


def _set_state(obj, state) -> None:
    if state is None:
        return
    if not isinstance(state, dict):
        raise _bad("tensor state must be a dict")
    for k, v in state.items():
        if not isinstance(k, str) or k.startswith("__") or hasattr(type(obj), k):
            raise _bad(f"cannot set attribute {k!r:.80} on a loaded tensor")
        try:
            object.__setattr__(obj, k, v)
        except AttributeError:
            raise _bad(f"cannot set attribute {k!r:.80} on a loaded tensor") from None


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    param = _rebuild_parameter(data, requires_grad, backward_hooks)
    _set_state(param, state)
    return param


def _rebuild_from_type_v2(func, new_type, args, state):
    if func not in (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter):
        raise _Refused(f"ember.load: _rebuild_from_type_v2 cannot call {func!r:.80}")
    if not isinstance(args, tuple):
        raise _bad("_rebuild_from_type_v2 expects an argument tuple")
    ret = func(*args)
    if new_type is Parameter and type(ret) is Tensor:
        ret = Parameter(ret, ret._rg)
    elif new_type not in (Tensor, Parameter):
        raise _Refused(f"ember.load: cannot load tensors of type {new_type!r:.80}")
    if state:
        if isinstance(state, tuple) and len(state) == 2 and not state[1]:
            state = state[0]
        if type(ret) is Tensor:
            raise _bad("plain tensors with extra attributes cannot be loaded")
        _set_state(ret, state)
    return ret


def _make_size(*args):
    if len(args) != 1:
        raise _bad("torch.Size takes one argument")
    return Size(_int_tuple(args[0], "Size"))


def _make_device(*args):
    if not 1 <= len(args) <= 2 or not isinstance(args[0], str):
        raise _bad(f"invalid torch.device arguments {args!r:.80}")
    if len(args) == 2 and args[1] is not None and not _is_int(args[1]):
        raise _bad(f"invalid torch.device index {args[1]!r:.80}")
    if len(args[0]) > 64:
        raise _bad("device name too long")
    try:
        return device(*args)
    except (RuntimeError, ValueError) as exc:
        raise _bad(f"invalid device: {exc}") from None


def _make_set(*args):
    if len(args) > 1 or (args and not isinstance(args[0], (list, tuple))):
        raise _bad("set() must be built from a list")
    return set(*args)


def _make_complex(*args):
    if len(args) > 2 or not all(isinstance(a, (int, float)) for a in args):
        raise _bad("complex() must be built from numbers")
    return complex(*args)


_TEXT_ENCODINGS = ("latin1", "latin-1", "iso-8859-1", "utf-8", "utf8", "ascii")


def _encode(*args):
    # protocol 2 pickles bytes as _codecs.encode(text, "latin1")
    if len(args) != 2 or not isinstance(args[0], str) or args[1] not in _TEXT_ENCODINGS:
        raise _bad("_codecs.encode is only allowed to turn text into bytes")
    return args[0].encode(args[1])


def _make_bytearray(*args):
    if not args:
        return bytearray()
    if len(args) == 1 and isinstance(args[0], (bytes, bytearray)):
        return bytearray(args[0])
    if len(args) == 2 and isinstance(args[0], str) and args[1] in _TEXT_ENCODINGS:
        return bytearray(args[0], args[1])
    raise _bad("bytearray() must be built from bytes")


def _make_ordered_dict(*args):
    if len(args) > 1 or (args and not isinstance(args[0], (list, tuple, dict))):
        raise _bad("OrderedDict() must be built from a list of pairs")
    return OrderedDict(*args)


def _make_counter(*args):
    if len(args) > 1 or (args and not isinstance(args[0], dict)):
        raise _bad("Counter() must be built from a dict")
    return Counter(*args)


def _make_parameter(*args):
    if not 0 <= len(args) <= 2:
        raise _bad("Parameter takes at most two arguments")
    if args and type(args[0]) is not Tensor:
        raise _bad("Parameter data must be a tensor")
    if len(args) == 2 and not isinstance(args[1], bool):
        raise _bad("requires_grad must be a bool")
    return Parameter(*args)


# -- NumPy objects --------------------------------------------------------------------------
#
# torch.save pickles a NumPy array as ``_reconstruct(ndarray, (0,), b"b")`` followed by BUILD
# with the state ``(1, shape, dtype, is_fortran, raw_bytes)``; a dtype as
# ``dtype("u4", False, True)`` followed by BUILD with ``(3, byteorder, None, None, None,
# elsize, alignment, flags)``; a scalar as ``scalar(dtype, raw_bytes)``. ember maps those
# globals onto the checked stand-ins below: only numeric, bool and fixed-size string dtypes
# are accepted, every argument and state is validated, and sizes are checked against the
# bytes the file holds. Nothing of NumPy's is called with unchecked arguments.


class _NumpyClass:
    """``numpy.ndarray`` as the unpickler sees it: only an argument of ``_reconstruct``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<class '{self.name}'>"


_NP_NDARRAY = _NumpyClass("numpy.ndarray")
_NP_DTYPE_SPEC = re.compile(r"(b1|[iu][1248]|f(2|4|8|16)|c(8|16|32)|[US][0-9]{1,9})\Z")
_NP_KINDS = "biufcUS"


def _np_refused(what: str) -> _Refused:
    return _Refused(
        f"ember.load: {what}; ember loads NumPy arrays, dtypes and scalars of numeric, bool and "
        "fixed-size string dtypes only (others would need code or arbitrary objects from the file)"
    )


def _np_supported(dt) -> bool:
    """Whether ``dt`` is a plain numeric, bool or fixed-size string NumPy dtype."""
    return (
        isinstance(dt, np.dtype)
        and type(dt).__module__ == "numpy.dtypes"
        and dt.kind in _NP_KINDS
        and dt.fields is None
        and dt.subdtype is None
        and not dt.hasobject
        and dt.metadata is None
    )


def _np_reconstruct(*args):
    """numpy's ``_reconstruct(ndarray, (0,), b"b")``: the empty array BUILD then fills in."""
    if (
        len(args) != 3
        or args[0] is not _NP_NDARRAY
        or type(args[1]) is not tuple
        or len(args[1]) != 1
        or type(args[1][0]) is not int
        or args[1][0] != 0
        or type(args[2]) is not bytes
        or args[2] != b"b"
    ):
        raise _Refused(
            f"ember.load: _reconstruct is only allowed as (numpy.ndarray, (0,), b'b'), got "
            f"{args!r:.120}"
        )
    return np.empty((0,), dtype=np.int8)


def _np_dtype(*args):
    """numpy's ``dtype(spec, align, copy)``: always a fresh copy, so BUILD changes only it."""
    if not 1 <= len(args) <= 3 or not all(type(a) is bool for a in args[1:]):
        raise _bad(f"invalid numpy.dtype arguments {args!r:.120}")
    spec = args[0]
    if type(spec) is not str or not _NP_DTYPE_SPEC.match(spec):
        raise _np_refused(f"NumPy dtype {spec!r:.40} is not supported")
    try:
        dt = np.dtype(spec, align=False, copy=True)
    except TypeError:
        raise _np_refused(f"NumPy dtype {spec!r:.40} does not exist on this platform") from None
    if not _np_supported(dt):
        raise _np_refused(f"NumPy dtype {spec!r:.40} is not supported")
    return dt


def _np_scalar(*args):
    """numpy's ``scalar(dtype, raw_bytes)``: a NumPy scalar of that dtype."""
    if len(args) != 2 or not _np_supported(args[0]):
        raise _np_refused(f"NumPy scalars must be (dtype, bytes), got {args!r:.120}")
    dt, data = args
    if type(data) is not bytes or len(data) != dt.itemsize:
        raise _bad(f"a NumPy scalar of dtype {dt} needs {dt.itemsize} bytes of data")
    if dt.kind == "b":
        return np.bool_(data != b"\x00")  # any nonzero byte is True, as for tensors
    if dt.itemsize == 0:
        return dt.type()
    return np.frombuffer(data, dtype=dt)[0]


def _np_same_state(state, expected: tuple) -> bool:
    return (
        type(state) is tuple
        and len(state) == len(expected)
        and all(type(a) is type(b) and a == b for a, b in zip(state, expected))
    )


def _np_build_dtype(dt: np.dtype, state) -> None:
    """BUILD of a fresh dtype: only the state NumPy itself writes, in either byte order."""
    native = dt.__reduce__()[2]
    swapped = dt.newbyteorder().__reduce__()[2]
    if not (_np_same_state(state, native) or _np_same_state(state, swapped)):
        raise _np_refused(f"unsupported state {state!r:.120} for NumPy dtype {dt}")
    dt.__setstate__(state)


def _np_build_array(arr: np.ndarray, state) -> None:
    """BUILD of a fresh ``_reconstruct`` array: shape, dtype, order and its raw bytes."""
    if type(state) is not tuple or len(state) not in (4, 5):
        raise _bad(f"invalid NumPy array state {state!r:.120}")
    if len(state) == 5:
        if type(state[0]) is not int or state[0] != 1:
            raise _bad(f"unsupported NumPy array state version {state[0]!r:.40}")
        state = state[1:]
    shape, dt, fortran, raw = state
    if (
        type(shape) is not tuple
        or len(shape) > 64
        or not all(type(n) is int and n >= 0 for n in shape)
    ):
        raise _bad(f"invalid NumPy array shape {shape!r:.120}")
    if not _np_supported(dt):
        raise _np_refused(f"NumPy arrays of dtype {dt!r:.60} are not supported")
    if type(fortran) is not bool:
        raise _bad("the NumPy array order flag must be a bool")
    if type(raw) is not bytes:
        raise _np_refused("NumPy array data must be bytes")
    count = 1
    for n in shape:
        count *= n
    if count * dt.itemsize != len(raw):
        raise _bad(
            f"a NumPy array of shape {shape} and dtype {dt} needs {count * dt.itemsize} bytes "
            f"but the file holds {len(raw)}"
        )
    arr.__setstate__((1, shape, dt, fortran, raw))
    if dt.kind == "b" and arr.size:
        arr[...] = arr.view(np.uint8) != 0  # NumPy bools must be exactly 0 or 1


def _make_bytes(*args):
    # protocol 2 pickles b"" as bytes() (NumPy's empty arrays hold it); no sizes: bytes(n)
    if not args:
        return b""
    if len(args) == 2 and isinstance(args[0], str) and args[1] in _TEXT_ENCODINGS:
        return args[0].encode(args[1])
    raise _bad("bytes() must be empty or built from text")


# Globals torch's weights_only=True refuses unless allowlisted, and weights_only=False
# allows: NumPy's (both spellings: numpy.core in NumPy 1, numpy._core in NumPy 2) and the
# bytes() that protocol 2 writes for b"".
_OPT_IN_GLOBALS: dict[str, Any] = {
    "numpy.ndarray": _NP_NDARRAY,
    "numpy.dtype": _np_dtype,
    "builtins.bytes": _make_bytes,
}
for _core in ("numpy.core", "numpy._core"):
    _OPT_IN_GLOBALS[f"{_core}.multiarray._reconstruct"] = _np_reconstruct
    _OPT_IN_GLOBALS[f"{_core}.multiarray.scalar"] = _np_scalar


def _default_globals() -> dict[str, Any]:
    table: dict[str, Any] = {
        "collections.OrderedDict": _make_ordered_dict,
        "collections.Counter": _make_counter,
        "torch._utils._rebuild_tensor": _rebuild_tensor_legacy,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._utils._rebuild_sparse_tensor": _rebuild_sparse_tensor,
        "torch.serialization._get_layout": _get_layout,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Tensor": Tensor,
        "torch.Size": _make_size,
        "torch.device": _make_device,
        "builtins.set": _make_set,
        "builtins.complex": _make_complex,
        "builtins.bytearray": _make_bytearray,
        "_codecs.encode": _encode,
        "torch.storage.UntypedStorage": _StorageType("UntypedStorage", None),
        "torch.UntypedStorage": _StorageType("UntypedStorage", None),
    }
    for name, d in _TORCH_DTYPES.items():
        table[f"torch.{name}"] = d if d is not None else _TorchDtype(name)
    for name in ("strided", "sparse_coo", "sparse_csr"):
        table[f"torch.{name}"] = _LAYOUTS[name]
    for cls, dname in _STORAGE_DTYPES.items():
        table[f"torch.{cls}"] = _StorageType(cls, dname)
    return table


_DEFAULT_GLOBALS = _default_globals()
# what REDUCE may call: ember's own constructors, never a class or function from the file
_CALLABLE = {
    id(v): v
    for v in _DEFAULT_GLOBALS.values()
    if callable(v) and v is not Tensor and not isinstance(v, type)
}
_CALLABLE[id(Parameter)] = Parameter
_CALLABLE.update({id(v): v for v in _OPT_IN_GLOBALS.values() if callable(v)})
_CALLABLE_SAFE = {id(Parameter): _make_parameter}  # checked stand-ins for REDUCE on classes

# Python's own objects behind default globals: allowlisting one of them (accelerate adds
# _codecs.encode) keeps ember's checked stand-in in use rather than the unchecked original.
_CHECKED_TWINS: dict[str, Any] = {
    "_codecs.encode": _codecs.encode,
    "builtins.set": set,
    "builtins.complex": complex,
    "builtins.bytearray": bytearray,
    "collections.OrderedDict": OrderedDict,
    "collections.Counter": Counter,
}

_BLOCKED_MODULES = {
    "os",
    "sys",
    "posix",
    "nt",
    "subprocess",
    "shutil",
    "importlib",
    "runpy",
    "pickle",
    "_pickle",
    "marshal",
    "ctypes",
    "socket",
    "code",
    "codeop",
    "pty",
    "webbrowser",
}
_BLOCKED_BUILTINS = {
    "eval",
    "exec",
    "compile",
    "__import__",
    "getattr",
    "setattr",
    "delattr",
    "open",
    "breakpoint",
    "input",
    "globals",
    "locals",
    "vars",
}
_PY2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}  # protocol-2 spellings


def _unsupported_global(full: str) -> str:
    if full.startswith("builtins."):
        full = full[len("builtins.") :]
    return (
        f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{full}])` or the "
        f"`torch.serialization.safe_globals([{full}])` context manager to allowlist this "
        "global if you trust this class/function."
    )


# -- the restricted unpickler -------------------------------------------------------------


def _refuse_opcode(code: int):
    def refuse(self):
        raise _Refused(
            _weights_only_message(f"Unsupported operand {code} ({bytes([code])!r})", True)
        )

    return refuse


_ALLOWED_OPCODES = {
    op.code.encode("latin-1")[0]
    for op in pickletools.opcodes
    if op.name
    not in {
        "INST",  # call a class found by name: the legacy code-running opcodes
        "OBJ",
        "EXT1",  # the copyreg extension registry
        "EXT2",
        "EXT4",
        "PERSID",  # text persistent ids: torch uses BINPERSID only
        "NEXT_BUFFER",  # out-of-band buffers
        "READONLY_BUFFER",
    }
}


class _Unpickler(pickle._Unpickler):
    """pickle's Unpickler with ``find_class`` restricted to the allow-list, and the opcodes
    that call, build or mutate objects restricted to the allowed types.

    Built on the pure-Python Unpickler so that every opcode can be checked and the memo is a
    dict (the C one preallocates an array as large as the biggest memo index in the file).
    """

    dispatch = dict(pickle._Unpickler.dispatch)
    for _code in range(256):
        if _code not in _ALLOWED_OPCODES:
            dispatch[_code] = _refuse_opcode(_code)

    def __init__(self, data: bytes, storages, weights_only: bool) -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8")
        self._storages = storages
        self._weights_only = weights_only
        with _user_lock:
            self._user = dict(_user_globals)
        self._user_ids = {id(v) for v in self._user.values()}
        self._tuple_depth: dict[int, tuple[tuple, int]] = {}
        # NumPy arrays and dtypes made by _reconstruct/dtype and not yet filled in by BUILD
        self._np_pending: dict[int, Any] = {}

    def _refuse(self, detail: str) -> _Refused:
        return _Refused(_weights_only_message(detail, self._weights_only))

    def find_class(self, module: str, name: str):
        module = _PY2_MODULES.get(module, module)
        full = f"{module}.{name}"
        if module.split(".")[0] in _BLOCKED_MODULES or (
            module == "builtins" and name in _BLOCKED_BUILTINS
        ):
            raise self._refuse(
                f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked."
            )
        opt_in = _OPT_IN_GLOBALS.get(full)
        if opt_in is not None:
            # As torch: with weights_only=True each of these must be allowlisted; either way
            # ember uses its checked stand-in, never NumPy's (or bytes') own code.
            if self._weights_only and full not in self._user:
                raise self._refuse(
                    _unsupported_global(full) + " (Or load with weights_only=False: ember "
                    "then also reads NumPy arrays, dtypes and scalars, still running no code.)"
                )
            return opt_in
        user = self._user.get(full)
        if user is not None and user is not _CHECKED_TWINS.get(full):
            return user
        if full in _DEFAULT_GLOBALS:
            if full == "torch.bfloat16":
                return _dtype._bfloat16()
            return _DEFAULT_GLOBALS[full]
        raise self._refuse(_unsupported_global(full))

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) != 5:
            raise self._refuse(f"persistent_load id must be a 5-tuple, got {type(pid).__name__}")
        kind, stype, key, location, numel = pid
        if isinstance(kind, bytes):
            kind = kind.decode("ascii", "replace")
        if kind != "storage":
            raise self._refuse(f"Only persistent_load of storage is allowed, but got {kind!r:.40}")
        if not isinstance(stype, _StorageType):
            raise self._refuse("persistent_load storage type must be a torch storage class")
        if isinstance(key, bytes) or isinstance(location, bytes):
            key = key.decode("ascii", "replace") if isinstance(key, bytes) else key
            location = (
                location.decode("ascii", "replace") if isinstance(location, bytes) else location
            )
        if not isinstance(key, str) or not isinstance(location, str) or not _is_int(numel):
            raise _bad("malformed storage reference in data.pkl")
        if numel < 0:
            raise _bad(f"negative storage size {numel}")
        if stype.dtype_name is None:
            np_dtype = np.dtype(np.uint8)
        else:
            np_dtype = _tensor_dtype(_DEFAULT_GLOBALS[f"torch.{stype.dtype_name}"])
        storage = self._storages.get(key, location, numel * np_dtype.itemsize)
        return _TypedStorage(storage, np_dtype) if stype.dtype_name is not None else storage

    # -- opcodes that call, build or mutate: only on allowed objects ----------------------

    def _reduce(self):
        stack = self.stack
        args = stack.pop()
        func = stack[-1]
        if not isinstance(args, tuple):
            raise self._refuse("REDUCE arguments must be a tuple")
        if id(func) in _CALLABLE_SAFE and _CALLABLE.get(id(func)) is func:
            stack[-1] = _CALLABLE_SAFE[id(func)](*args)
        elif _CALLABLE.get(id(func)) is func or id(func) in self._user_ids:
            stack[-1] = result = func(*args)
            if func is _np_reconstruct or func is _np_dtype:
                self._np_pending[id(result)] = result
        else:
            raise self._refuse(f"Trying to call reduce for unrecognized function {func!r:.80}")

    dispatch[pickle.REDUCE[0]] = _reduce

    def _newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        if not isinstance(args, tuple):
            raise self._refuse("NEWOBJ arguments must be a tuple")
        if cls is Parameter:
            self.append(_make_parameter(*args))
        elif isinstance(cls, type) and id(cls) in self._user_ids:
            self.append(cls.__new__(cls, *args))
        else:
            raise self._refuse(
                "Can only create new object for nn.Parameter or classes allowlisted via "
                f"`add_safe_globals` but got {cls!r:.80}"
            )

    dispatch[pickle.NEWOBJ[0]] = _newobj

    def _newobj_ex(self):
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        if not (isinstance(cls, type) and id(cls) in self._user_ids):
            raise self._refuse(
                f"NEWOBJ_EX is only allowed for allowlisted classes, not {cls!r:.80}"
            )
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise self._refuse("malformed NEWOBJ_EX arguments")
        self.append(cls.__new__(cls, *args, **kwargs))

    dispatch[pickle.NEWOBJ_EX[0]] = _newobj_ex

    def _build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        cls = type(inst)
        if self._np_pending.get(id(inst)) is inst:
            del self._np_pending[id(inst)]
            if self._weights_only and id(cls) not in self._user_ids:
                raise self._refuse(
                    "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                    f"`add_safe_globals`, but got {cls}"
                )
            if isinstance(inst, np.dtype):
                _np_build_dtype(inst, state)
            else:
                _np_build_array(inst, state)
        elif isinstance(inst, (np.ndarray, np.dtype, np.generic)):
            raise self._refuse(f"cannot BUILD a NumPy object twice or one of type {cls}")
        elif cls is OrderedDict or cls is Counter:
            # torch stores e.g. a state dict's ``_metadata`` attribute this way
            if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
                raise self._refuse("OrderedDict state must be a dict with str keys")
            if any(k.startswith("__") for k in state):
                raise self._refuse("cannot set dunder attributes")
            inst.__dict__.update(state)
        elif id(cls) in self._user_ids:
            setstate = getattr(inst, "__setstate__", None)
            if setstate is not None:
                setstate(state)
                return
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            if state:
                inst.__dict__.update(state)
            if slotstate:
                for k, v in slotstate.items():
                    setattr(inst, k, v)
        else:
            raise self._refuse(
                "Can only build OrderedDict, Counter or types allowlisted via "
                f"`add_safe_globals`, but got {cls.__module__}.{cls.__qualname__}"
            )

    dispatch[pickle.BUILD[0]] = _build

    def _check_target(self, target, kinds: tuple, opcode: str) -> None:
        if type(target) not in kinds:
            raise self._refuse(f"Can only {opcode} on {kinds[0].__name__}, got {type(target)}")

    def _setitem(self):
        value = self.stack.pop()
        key = self.stack.pop()
        target = self.stack[-1]
        self._check_target(target, (dict, OrderedDict, Counter), "SETITEM")
        target[key] = value

    dispatch[pickle.SETITEM[0]] = _setitem

    def _setitems(self):
        items = self.pop_mark()
        target = self.stack[-1]
        self._check_target(target, (dict, OrderedDict, Counter), "SETITEMS")
        if len(items) % 2:
            raise self._refuse("SETITEMS needs key/value pairs")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    dispatch[pickle.SETITEMS[0]] = _setitems

    def _append(self):
        value = self.stack.pop()
        target = self.stack[-1]
        self._check_target(target, (list,), "APPEND")
        target.append(value)

    dispatch[pickle.APPEND[0]] = _append

    def _appends(self):
        items = self.pop_mark()
        target = self.stack[-1]
        self._check_target(target, (list,), "APPENDS")
        target.extend(items)

    dispatch[pickle.APPENDS[0]] = _appends

    def _additems(self):
        items = self.pop_mark()
        target = self.stack[-1]
        self._check_target(target, (set,), "ADDITEMS")
        target.update(items)

    dispatch[pickle.ADDITEMS[0]] = _additems

    # Tuples are hashed (as dict keys, set items) by C code that recurses without a guard:
    # hashing a million-deep tuple, a few bytes per level in a pickle, crashes the
    # interpreter. So tuples nest at most _MAX_DEPTH deep; lists and dicts are safe to nest.
    def _new_tuple(self, items) -> tuple:
        depth = 1
        for item in items:
            if type(item) is tuple and item:
                entry = self._tuple_depth.get(id(item))
                if entry is not None and entry[0] is item:
                    depth = max(depth, entry[1] + 1)
        if depth > _MAX_DEPTH:
            raise self._refuse(f"tuples nested more than {_MAX_DEPTH} deep")
        t = tuple(items)
        self._tuple_depth[id(t)] = (t, depth)  # the reference keeps the id unique
        return t

    def _tuple(self):
        items = self.pop_mark()  # before looking up self.append: pop_mark rebinds it
        self.append(self._new_tuple(items))

    def _tuple1(self):
        self.stack[-1] = self._new_tuple(self.stack[-1:])

    def _tuple2(self):
        self.stack[-2:] = [self._new_tuple(self.stack[-2:])]

    def _tuple3(self):
        self.stack[-3:] = [self._new_tuple(self.stack[-3:])]

    dispatch[pickle.TUPLE[0]] = _tuple
    dispatch[pickle.TUPLE1[0]] = _tuple1
    dispatch[pickle.TUPLE2[0]] = _tuple2
    dispatch[pickle.TUPLE3[0]] = _tuple3

    def _frozenset(self):
        raise self._refuse(_unsupported_global("builtins.frozenset"))

    dispatch[pickle.FROZENSET[0]] = _frozenset

    def load(self):
        try:
            return super().load()
        except _PASS_THROUGH:
            raise
        except Exception as exc:  # a malformed pickle: any error of the pickle machinery
            raise _Refused(
                f"ember.load: data.pkl is not a valid checkpoint pickle "
                f"({type(exc).__name__}: {str(exc)[:200]})"
            ) from None


# -- reading the archive ------------------------------------------------------------------

_UNSAFE_NAME = re.compile(r"(^|/)\.\.(/|$)|^/|\\|^[A-Za-z]:|\x00|//")


class _Archive:
    """The validated members of a torch zip checkpoint."""

    def __init__(self, fh, size: int) -> None:
        try:
            self.zf = zipfile.ZipFile(fh)
            infos = self.zf.infolist()
        except Exception as exc:  # zipfile raises many types for damaged archives
            raise _bad(
                f"not a valid zip archive ({type(exc).__name__}: {str(exc)[:200]}); the file is "
                "truncated or corrupt"
            ) from None
        self.size = size
        self.members: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = info.orig_filename
            if not name or _UNSAFE_NAME.search(name):
                raise _bad(f"refusing zip member with an unsafe name {name!r:.200}")
            if name in self.members:
                raise _bad(f"duplicate zip member {name!r:.200}")
            self.members[name] = info
        pkls = [n for n in self.members if n.count("/") == 1 and n.endswith("/data.pkl")]
        if len(pkls) != 1:
            raise _bad(
                "not a torch checkpoint: expected one '<archive>/data.pkl' member, found "
                f"{len(pkls)}"
            )
        self.prefix = pkls[0][: -len("data.pkl")]

    def info(self, name: str) -> zipfile.ZipInfo | None:
        info = self.members.get(self.prefix + name)
        if info is None:
            return None
        if info.flag_bits & 0x1:
            raise _bad(f"zip member {name!r} is encrypted")
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise _bad(
                f"zip member {name!r} is compressed; torch checkpoints store members uncompressed"
            )
        if info.header_offset + 30 + info.file_size > self.size:
            raise _bad(
                f"zip member {name!r} claims {info.file_size} bytes, more than the file's "
                f"{self.size}; the file is truncated or corrupt"
            )
        return info

    def read(self, name: str, limit: int | None = None) -> bytes | None:
        info = self.info(name)
        if info is None:
            return None
        if limit is not None and info.file_size > limit:
            raise _bad(f"zip member {name!r} is too large ({info.file_size} bytes)")
        buf = np.empty(info.file_size, dtype=np.uint8)
        self.read_into(info, buf, name)
        return buf.tobytes()

    def read_into(self, info: zipfile.ZipInfo, buf: np.ndarray, name: str) -> None:
        view = memoryview(buf)
        try:
            with self.zf.open(info) as src:
                pos = 0
                while pos < len(view):
                    chunk = src.read(min(_CHUNK, len(view) - pos))
                    if not chunk:
                        raise EOFError("unexpected end of data")
                    view[pos : pos + len(chunk)] = chunk
                    pos += len(chunk)
                if src.read(1):
                    raise ValueError("more data than declared")
        except _PASS_THROUGH:
            raise
        except Exception as exc:
            raise _bad(
                f"cannot read zip member {name!r} ({type(exc).__name__}: {str(exc)[:200]}); "
                "the file is truncated or corrupt"
            ) from None


class _StorageLoader:
    def __init__(self, archive: _Archive, map_location, swap: bool) -> None:
        self.archive = archive
        self.map_location = map_location
        self.swap = swap
        self.loaded: dict[str, _Storage] = {}

    def get(self, key: str, location: str, nbytes: int) -> _Storage:
        storage = self.loaded.get(key)
        if storage is not None:
            if storage.buf.size != nbytes:
                raise _bad(f"storage {key!r} is referenced with different sizes")
            return storage
        name = f"data/{key}"
        info = self.archive.info(name)
        if info is None:
            raise _bad(f"storage record {name!r} is missing from the archive")
        if info.file_size != nbytes:
            raise _bad(
                f"storage record {name!r} holds {info.file_size} bytes but data.pkl says "
                f"{nbytes}; the file is corrupt"
            )
        buf = np.empty(nbytes, dtype=np.uint8)  # size checked against the file above
        self.archive.read_into(info, buf, name)
        storage = _Storage(buf, self.swap)
        storage = self._restore(storage, location)
        self.loaded[key] = storage
        return storage

    def _restore(self, storage: _Storage, location: str) -> _Storage:
        ml = self.map_location
        if callable(ml) and not isinstance(ml, (str, device, dict)):
            result = ml(storage, location)
            if result is None:
                _check_location(location)
                return storage
            if not isinstance(result, _Storage):
                raise _DeviceError(
                    f"map_location returned {type(result).__name__}; ember storages stay on the CPU"
                )
            return result
        _check_location(_target_location(ml, location))
        return storage


def _target_location(map_location, location: str) -> str:
    if map_location is None:
        return location
    if isinstance(map_location, dict):
        target = map_location.get(location, location)
        return target if isinstance(target, str) else _target_location(target, location)
    if isinstance(map_location, str):
        return map_location
    if isinstance(map_location, device) or hasattr(map_location, "type"):
        return str(map_location)
    raise TypeError(f"map_location must be a str, device, dict or callable, got {map_location!r}")


def _check_location(location: str) -> None:
    kind = location.split(":")[0]
    if kind == "cpu":
        return
    if kind == "cuda":
        raise _DeviceError(_CUDA_MSG)
    raise _DeviceError(
        f"don't know how to restore data location of torch.storage.UntypedStorage (tagged with "
        f"{location[:64]}); ember runs on the CPU only: pass map_location='cpu'"
    )


def check_map_location(map_location) -> None:
    """Raise torch's CPU-build error if ``map_location`` sends CPU tensors elsewhere."""
    if (
        map_location is None
        or callable(map_location)
        and not isinstance(map_location, (str, device, dict))
    ):
        return
    _check_location(_target_location(map_location, "cpu"))


def is_torch_zip(head: bytes) -> bool:
    return head[:4] == ZIP_MAGIC


def load_zip(fh, size: int, map_location=None, weights_only: bool = True):
    """Load a torch zip checkpoint from the seekable binary file ``fh`` of ``size`` bytes."""
    archive = _Archive(fh, size)
    order = archive.read("byteorder", limit=16)
    if order is not None and order not in (b"little", b"big"):
        raise _bad(f"Unknown endianness type: {order.decode('latin-1')[:16]!r}")
    swap = order is not None and order.decode() != sys.byteorder
    data = archive.read("data.pkl")
    assert data is not None
    storages = _StorageLoader(archive, map_location, swap)
    return _Unpickler(data, storages, weights_only).load()


# -- writing ------------------------------------------------------------------------------


class _Plan:
    """Everything ``write_zip`` needs: the pickle bytes and the storages' byte arrays."""

    def __init__(self, pickle_bytes: bytes, storages: list[np.ndarray]) -> None:
        self.pickle = pickle_bytes
        self.storages = storages  # storage i is the member data/<i>, uint8, C-contiguous


def _root(arr: np.ndarray) -> np.ndarray:
    """The array owning ``arr``'s memory (the last ndarray down its ``.base`` chain)."""
    root = arr
    base = arr.base
    depth = 0
    while base is not None and depth < 1000:
        if isinstance(base, np.ndarray):
            root = base
        base = getattr(base, "base", None)
        depth += 1
    return root


def _address(arr: np.ndarray) -> int:
    return arr.__array_interface__["data"][0]


class _TensorSlot:
    """Where one tensor lives in the saved storages."""

    __slots__ = ("group", "start", "arr")

    def __init__(self, group, start: int, arr: np.ndarray) -> None:
        self.group = group  # _Group
        self.start = start  # byte offset in the root buffer (or 0 for a private copy)
        self.arr = arr


class _Group:
    __slots__ = ("flat", "dtype", "lo", "hi", "key")

    def __init__(self, flat: np.ndarray, dtype: np.dtype) -> None:
        self.flat = flat  # uint8 view of the whole root buffer
        self.dtype = dtype
        self.lo = None
        self.hi = None
        self.key = None


def _layout(tensors: list[np.ndarray]) -> tuple[list[_TensorSlot], list[_Group]]:
    """Assign each array a storage: arrays viewing one buffer with one dtype share one."""
    groups: dict[tuple[int, str], _Group] = {}
    order: list[_Group] = []
    in_order: set[int] = set()
    slots = []
    for arr in tensors:
        slot = None
        if arr.size and arr.dtype.isnative:
            root = _root(arr)
            item = arr.dtype.itemsize
            ok = all(s >= 0 and s % item == 0 for s in arr.strides)
            if ok and (root.flags.c_contiguous or root.flags.f_contiguous):
                start = _address(arr) - _address(root)
                end = start + sum((n - 1) * s for n, s in zip(arr.shape, arr.strides)) + item
                if 0 <= start and end <= root.nbytes:
                    gkey = (id(root), arr.dtype.str)
                    group = groups.get(gkey)
                    if group is None:
                        flat = root.ravel(order="K")
                        # a view, not a copy: a copy could not live at root's address
                        if _address(flat) == _address(root) and flat.nbytes == root.nbytes:
                            group = groups[gkey] = _Group(flat.view(np.uint8), arr.dtype)
                    if group is not None and (group.lo is None or (start - group.lo) % item == 0):
                        group.lo = start if group.lo is None else min(group.lo, start)
                        group.hi = end if group.hi is None else max(group.hi, end)
                        if id(group) not in in_order:
                            in_order.add(id(group))
                            order.append(group)
                        slot = _TensorSlot(group, start, arr)
        if slot is None:  # a private contiguous copy (empty, negative strides, odd layouts)
            copy = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("="), copy=False)
            group = _Group(copy.reshape(-1).view(np.uint8), copy.dtype)
            group.lo, group.hi = 0, copy.nbytes
            order.append(group)
            slot = _TensorSlot(group, 0, copy)
        slots.append(slot)
    return slots, order


class _Pickler:
    """Writes the protocol-2 pickle torch's weights-only unpickler reads."""

    def __init__(self) -> None:
        self.out = bytearray(b"\x80\x02")
        self.memo: dict[int, int] = {}
        self.keep: list = []
        self.globals: dict[str, int] = {}
        self.tensors: list[Tensor] = []
        self.tensor_index: dict[int, int] = {}
        self.sparse_parts: dict[int, tuple] = {}  # a sparse tensor's id -> its index/value tensors
        self.slots: list[_TensorSlot] = []
        self.active: set[int] = set()

    # memo
    def _put(self, obj=None) -> None:
        idx = len(self.memo) + len(self.globals)
        if obj is not None:
            self.memo[id(obj)] = idx
            self.keep.append(obj)
        self._emit_put(idx)

    def _emit_put(self, idx: int) -> None:
        if idx < 256:
            self.out += b"q" + bytes([idx])
        else:
            self.out += b"r" + struct.pack("<I", idx)

    def _get(self, idx: int) -> None:
        if idx < 256:
            self.out += b"h" + bytes([idx])
        else:
            self.out += b"j" + struct.pack("<I", idx)

    def _global(self, module: str, name: str) -> None:
        full = f"{module}\n{name}\n"
        idx = self.globals.get(full)
        if idx is not None:
            self._get(idx)
            return
        self.out += b"c" + full.encode("ascii")
        idx = len(self.memo) + len(self.globals)
        self.globals[full] = idx
        self._emit_put(idx)

    # scalars
    def _int(self, x: int) -> None:
        if 0 <= x < 256:
            self.out += b"K" + bytes([x])
        elif 0 <= x < 65536:
            self.out += b"M" + struct.pack("<H", x)
        elif -(2**31) <= x < 2**31:
            self.out += b"J" + struct.pack("<i", x)
        else:
            enc = pickle.encode_long(x)
            if len(enc) < 256:
                self.out += b"\x8a" + bytes([len(enc)]) + enc
            else:
                self.out += b"\x8b" + struct.pack("<i", len(enc)) + enc

    def _str(self, s: str) -> None:
        raw = s.encode("utf-8", "surrogatepass")
        self.out += b"X" + struct.pack("<I", len(raw)) + raw

    def _reduce_global(self, module: str, name: str, args: tuple, depth: int) -> None:
        self._global(module, name)
        self._tuple(args, depth + 1)
        self.out += b"R"

    def _tuple(self, items, depth: int) -> None:
        n = len(items)
        if n == 0:
            self.out += b")"
            return
        if n > 3:
            self.out += b"("
        for v in items:
            self.save(v, depth + 1)
        self.out += {1: b"\x85", 2: b"\x86", 3: b"\x87"}.get(n, b"t")

    def _batched(self, items: list, single: bytes, many: bytes, depth: int, pairs: bool) -> None:
        step = 1000
        for i in range(0, len(items), step):
            batch = items[i : i + step]
            if len(batch) == 1:
                for v in batch[0] if pairs else batch:
                    self.save(v, depth + 1)
                self.out += single
                continue
            self.out += b"("
            for item in batch:
                for v in item if pairs else (item,):
                    self.save(v, depth + 1)
            self.out += many

    def _tensor(self, t: Tensor, depth: int) -> None:
        slot = self.slots[self.tensor_index[id(t)]]
        arr = slot.arr
        group = slot.group
        item = arr.dtype.itemsize
        offset = (slot.start - group.lo) // item
        stride = tuple(s // item for s in arr.strides)
        if type(t) is Parameter or isinstance(t, Parameter):
            self._global("torch._utils", "_rebuild_parameter")
            self.out += b"("
            self._tensor_v2(group, offset, arr, stride, False)
            self.out += b"\x88" if t._rg else b"\x89"
            self._ordered_dict_empty()
            self.out += b"tR"
        else:
            self._tensor_v2(group, offset, arr, stride, bool(t._rg))

    def _tensor_v2(self, group: _Group, offset: int, arr: np.ndarray, stride, rg: bool) -> None:
        self._global("torch._utils", "_rebuild_tensor_v2")
        self.out += b"(("
        self._str("storage")
        self._global("torch", _STORAGE_OF_DTYPE[group.dtype.name])
        self._str(str(group.key))
        self._str("cpu")
        self._int((group.hi - group.lo) // group.dtype.itemsize)
        self.out += b"tQ"
        self._int(offset)
        self._tuple(tuple(int(s) for s in arr.shape), 0)
        self._tuple(stride, 0)
        self.out += b"\x88" if rg else b"\x89"
        self._ordered_dict_empty()
        self.out += b"tR"

    def _ordered_dict_empty(self) -> None:
        self._global("collections", "OrderedDict")
        self.out += b")R"

    def save(self, obj, depth: int = 0) -> None:
        if depth > _MAX_DEPTH:
            raise ValueError("ember.save: object is nested too deeply")
        if obj is None:
            self.out += b"N"
            return
        if obj is True or obj is False:
            self.out += b"\x88" if obj else b"\x89"
            return
        idx = self.memo.get(id(obj))
        if idx is not None:
            self._get(idx)
            return
        if isinstance(obj, (np.ndarray, np.generic, np.dtype)):
            self._numpy(obj, depth)
        elif isinstance(obj, int):
            self._int(int(obj))
        elif isinstance(obj, float):
            self.out += b"G" + struct.pack(">d", float(obj))
        elif isinstance(obj, str):
            self._str(str(obj))
        elif isinstance(obj, complex):
            self._reduce_global("__builtin__", "complex", (obj.real, obj.imag), depth)
        elif isinstance(obj, Tensor) and id(obj) in self.sparse_parts:
            data = obj._data
            extra = (data.coalesced,) if data.layout is _LAYOUTS["sparse_coo"] else ()
            self._global("torch._utils", "_rebuild_sparse_tensor")
            self.out += b"("
            self._global("torch.serialization", "_get_layout")  # (torch's way to name one)
            self._str(repr(data.layout))
            self.out += b"\x85R"
            self.save((*self.sparse_parts[id(obj)], Size(data.shape), *extra), depth + 1)
            self.out += b"tR"
            self._put(obj)
        elif isinstance(obj, Tensor):
            self._tensor(obj, depth)
            self._put(obj)
        elif isinstance(obj, _dtype.dtype):
            self._global("torch", obj.name)
        elif isinstance(obj, Size):
            self._reduce_global("torch", "Size", (tuple(int(s) for s in obj),), depth)
            self._put(obj)
        elif isinstance(obj, device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            self._reduce_global("torch", "device", args, depth)
            self._put(obj)
        elif isinstance(obj, tuple):
            if id(obj) in self.active:
                raise ValueError("ember.save: cannot save a tuple that contains itself")
            self.active.add(id(obj))
            self._tuple(obj, depth)
            self.active.discard(id(obj))
            if obj:
                self._put(obj)
        elif isinstance(obj, list):
            self.out += b"]"
            self._put(obj)
            self._batched(list(obj), b"a", b"e", depth, pairs=False)
        elif isinstance(obj, (OrderedDict, Counter)):
            cls = "OrderedDict" if isinstance(obj, OrderedDict) else "Counter"
            self._global("collections", cls)
            self.out += b")R"
            self._put(obj)
            self._batched(list(obj.items()), b"s", b"u", depth, pairs=True)
            state = getattr(obj, "__dict__", None)
            if state:
                self.save(dict(state), depth + 1)
                self.out += b"b"
        elif isinstance(obj, dict):
            self.out += b"}"
            self._put(obj)
            self._batched(list(obj.items()), b"s", b"u", depth, pairs=True)
        elif isinstance(obj, (set, frozenset)):
            if isinstance(obj, frozenset):
                raise TypeError(
                    "ember.save: cannot save a frozenset (torch.load(weights_only=True) refuses "
                    "it); use a set or a tuple"
                )
            self._global("__builtin__", "set")
            self.out += b"]"
            self._batched(list(obj), b"a", b"e", depth, pairs=False)
            self.out += b"\x85R"
            self._put(obj)
        elif isinstance(obj, (bytes, bytearray)):
            text = bytes(obj).decode("latin-1")
            if isinstance(obj, bytearray):
                self._global("__builtin__", "bytearray")
                self.out += b"("
            self._reduce_global("_codecs", "encode", (text, "latin1"), depth)
            if isinstance(obj, bytearray):
                self.out += b"\x85R"
            self._put(obj)
        else:
            raise TypeError(_unsavable(obj))

    def _numpy(self, obj, depth: int) -> None:
        """A NumPy array, dtype or scalar, pickled as torch's pickler does (NumPy's own
        ``__reduce__``: ``_reconstruct`` + BUILD, ``dtype`` + BUILD, ``scalar``)."""
        if isinstance(obj, np.ndarray) and type(obj) is not np.ndarray:
            cls = type(obj)
            raise TypeError(
                f"ember.save: cannot save NumPy array subclass {cls.__module__}.{cls.__qualname__}"
                "; convert it with numpy.asarray first"
            )
        dt = obj if isinstance(obj, np.dtype) else obj.dtype
        if not _np_supported(dt):
            raise TypeError(
                f"ember.save: cannot save NumPy objects of dtype {dt}: only numeric, bool and "
                "fixed-size string dtypes are supported (ember.load would refuse others)"
            )
        func, args, *rest = obj.__reduce__()
        state = rest[0] if rest else None
        self._global(func.__module__, func.__name__)
        if isinstance(obj, np.ndarray):  # args: (numpy.ndarray, (0,), b"b")
            self._global(np.ndarray.__module__, np.ndarray.__name__)
            for arg in args[1:]:
                self.save(arg, depth + 1)
            self.out += b"\x87"
        else:
            self._tuple(args, depth)
        self.out += b"R"
        self._put(obj)
        if state is not None:
            self.save(state, depth + 1)
            self.out += b"b"

    def collect(self, obj) -> None:
        """Find every tensor in ``obj`` (first pass), so storages can be laid out."""
        stack = [(obj, 0)]
        seen: set[int] = set()
        while stack:
            o, depth = stack.pop()
            if depth > _MAX_DEPTH:
                raise ValueError("ember.save: object is nested too deeply")
            if id(o) in seen:
                continue
            if isinstance(o, Tensor) and not isinstance(o._data, np.ndarray):
                # a sparse tensor: torch pickles its index and value tensors
                seen.add(id(o))
                self.keep.append(o)
                data = o._data
                arrays = (
                    (data.indices, data.values)
                    if data.layout is _LAYOUTS["sparse_coo"]
                    else (data.crow_indices, data.col_indices, data.values)
                )
                parts = tuple(Tensor._wrap(np.ascontiguousarray(a)) for a in arrays)
                self.sparse_parts[id(o)] = parts
                stack.extend((t, depth + 1) for t in reversed(parts))
            elif isinstance(o, Tensor):
                seen.add(id(o))
                self.tensor_index[id(o)] = len(self.tensors)
                self.tensors.append(o)
                self.keep.append(o)
            elif isinstance(o, dict):
                seen.add(id(o))
                self.keep.append(o)
                items = list(o.items())
                state = getattr(o, "__dict__", None)
                if state:
                    items.append((None, dict(state)))
                stack.extend((v, depth + 1) for kv in reversed(items) for v in reversed(kv))
            elif isinstance(o, (list, tuple, set, frozenset)) and not isinstance(o, Size):
                seen.add(id(o))
                self.keep.append(o)
                stack.extend((v, depth + 1) for v in reversed(list(o)))


def _unsavable(obj) -> str:
    cls = type(obj)
    if isinstance(obj, Module):
        return (
            f"ember.save: cannot save a whole nn.Module ({cls.__name__}): torch would pickle its "
            "class and code, which torch.load(weights_only=True) and ember.load refuse. Save "
            "its weights instead: ember.save(model.state_dict(), path), and restore them with "
            "model.load_state_dict(ember.load(path))"
        )
    if isinstance(obj, Optimizer):
        return (
            f"ember.save: cannot save a whole optimizer ({cls.__name__}); save "
            "optimizer.state_dict() instead"
        )
    return (
        f"ember.save: cannot save objects of type {cls.__module__}.{cls.__qualname__}; only "
        "tensors, NumPy arrays/dtypes/scalars, numbers, strings, bytes, bools, None, dtypes, "
        "torch.Size, devices, and dicts/lists/tuples/sets of these are supported"
    )


def plan_zip(obj) -> _Plan:
    """Validate ``obj`` and lay out its pickle and storages (nothing is written yet)."""
    p = _Pickler()
    p.collect(obj)
    for t in p.tensors:
        if t._data.dtype.name not in _STORAGE_OF_DTYPE:
            raise TypeError(f"ember.save: unsupported tensor dtype {t._data.dtype}")
    p.slots, groups = _layout([t._data for t in p.tensors])
    for key, group in enumerate(groups):
        group.key = key
    p.save(obj)
    p.out += b"."
    storages = [g.flat[g.lo : g.hi] for g in groups]
    return _Plan(bytes(p.out), storages)


def _padding(offset: int, name: str, zip64: bool) -> bytes:
    """An extra field placing the member's data at a multiple of ``_ALIGNMENT``."""
    data_at = offset + 30 + len(name.encode()) + (20 if zip64 else 0)
    pad = -data_at % _ALIGNMENT
    if pad == 0:
        return b""
    if pad < 4:
        pad += _ALIGNMENT
    return b"FB" + struct.pack("<H", pad - 4) + b"Z" * (pad - 4)


def write_zip(fh, plan: _Plan, write_chunk) -> None:
    """Write the archive to the binary file ``fh``; storage bytes go through ``write_chunk``."""
    serialization_id = "".join(str(secrets.randbelow(10)) for _ in range(40)).encode()
    records: list[tuple[str, Any]] = [
        ("data.pkl", plan.pickle),
        (".format_version", b"1"),
        (".storage_alignment", str(_ALIGNMENT).encode()),
        ("byteorder", sys.byteorder.encode()),
    ]
    records += [(f"data/{i}", s) for i, s in enumerate(plan.storages)]
    records += [("version", b"3\n"), (".data/serialization_id", serialization_id)]
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, data in records:
            full = "archive/" + name
            size = len(data)
            info = zipfile.ZipInfo(full, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.file_size = size
            zip64 = size * 1.05 > zipfile.ZIP64_LIMIT
            info.extra = _padding(zf.start_dir, full, zip64)
            with zf.open(info, "w", force_zip64=zip64) as dst:
                if isinstance(data, np.ndarray):
                    flat = memoryview(data)
                    for start in range(0, len(flat), _CHUNK):
                        write_chunk(dst, flat[start : start + _CHUNK])
                else:
                    dst.write(data)
