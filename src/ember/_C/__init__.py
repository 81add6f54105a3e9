"""``torch._C``: the names of torch's compiled core that Python libraries reach for
directly, each doing torch's work (or raising torch's error on a CPU-only build).

Example:
    >>> import ember
    >>> isinstance(ember.Tensor, ember._C._TensorMeta), ember._C.Generator is ember.Generator
    (True, True)
"""

from __future__ import annotations

import enum
import os

import numpy as np

from .. import _torch_zip
from .._creation import Generator
from .._overrides import (
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    _disabled_torch_function_impl,
)
from .._dtype import dtype as _dtype_cls
from .._tensor import Tensor
from ..storage import UntypedStorage
from . import _nn

__all__ = [
    "DispatchKey",
    "DispatchKeySet",
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "Generator",
    "PyTorchFileReader",
    "_ExcludeDispatchKeyGuard",
    "_TensorMeta",
    "_disabled_torch_function_impl",
    "_get_tracing_state",
    "_log_api_usage_once",
    "_nn",
]


class _TensorMetaType(type):
    """The type of ``_TensorMeta``: makes ``isinstance(cls, _TensorMeta)`` true exactly for
    ``Tensor`` and its subclasses (torch's metaclass of the tensor classes)."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, type) and issubclass(obj, Tensor)

    def __subclasscheck__(cls, sub) -> bool:
        return isinstance(sub, type) and (type.__subclasscheck__(cls, sub))


class _TensorMeta(type, metaclass=_TensorMetaType):
    """torch's metaclass of ``Tensor`` and its subclasses: ``isinstance(c, _TensorMeta)``
    says whether the class ``c`` is a tensor class.

    Example:
        >>> import ember
        >>> from ember._C import _TensorMeta
        >>> isinstance(ember.nn.Parameter, _TensorMeta), isinstance(int, _TensorMeta)
        (True, False)
    """


def _log_api_usage_once(event: str) -> None:
    """Record that an API was used (torch's usage logging): a string is required, and, as
    in torch without a logging handler installed, nothing is recorded.

    Example:
        >>> import ember
        >>> ember._C._log_api_usage_once("mylib.feature")
    """
    if not isinstance(event, str):
        raise TypeError("bad argument type for built-in operation")


# torch's ScalarType names, which its record-size message uses
_SCALAR_NAMES = {
    "float64": "Double",
    "float32": "Float",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
    "complex128": "ComplexDouble",
    "complex64": "ComplexFloat",
}


class PyTorchFileReader:
    """The records of a ``torch.save`` zip archive (a path or a readable binary file), by
    their names inside the archive: ``'data.pkl'``, ``'byteorder'``, ``'data/0'``...

    Example:
        >>> import ember, io
        >>> buf = io.BytesIO()
        >>> ember.save({"w": ember.arange(3.0)}, buf)
        >>> reader = ember.PyTorchFileReader(buf)
        >>> reader.has_record("data.pkl"), reader.get_record_size("data/0")
        (True, 12)
        >>> reader.get_storage_from_record("data/0", 3, ember.float32).untyped_storage().nbytes()
        12
    """

    def __init__(self, file) -> None:
        if isinstance(file, (str, os.PathLike)):
            path = os.fspath(file)
            try:
                fh = open(path, "rb")  # noqa: SIM115 - kept open while the reader lives
            except OSError as exc:
                raise RuntimeError(
                    f"open file failed because of errno {exc.errno} on fopen: "
                    f"{exc.strerror}, file path: {path}"
                ) from None
        else:
            fh = file
        size = fh.seek(0, os.SEEK_END)
        fh.seek(0)
        self._fh = fh
        self._archive = _torch_zip._Archive(fh, size)

    def _info(self, name: str):
        info = self._archive.info(name)
        if info is None:
            raise RuntimeError(
                f"PytorchStreamReader failed locating file {name}: file not found. This is an "
                "internal miniz error. If you are seeing this error, there is a high "
                "likelihood that your checkpoint file is corrupted."
            )
        return info

    def get_all_records(self) -> list[str]:
        """The names of the records, in the archive's order.

        Example:
            >>> import ember, io
            >>> buf = io.BytesIO()
            >>> ember.save([1], buf)
            >>> "data.pkl" in ember.PyTorchFileReader(buf).get_all_records()
            True
        """
        prefix = self._archive.prefix
        return [n[len(prefix) :] for n in self._archive.members if n.startswith(prefix)]

    def has_record(self, name: str) -> bool:
        """Whether the archive holds the record ``name``."""
        return self._archive.info(name) is not None

    def get_record(self, name: str) -> bytes:
        """The bytes of the record ``name``."""
        self._info(name)
        return self._archive.read(name)

    def get_record_size(self, name: str) -> int:
        """The size of the record ``name`` in bytes."""
        return self._info(name).file_size

    def serialization_id(self) -> str:
        """The id the writer stored in ``.data/serialization_id`` ('' if none)."""
        if self._archive.info(".data/serialization_id") is None:
            return ""
        return self._archive.read(".data/serialization_id").decode("ascii", "replace")

    def get_storage_from_record(self, name: str, numel: int, dtype) -> Tensor:
        """An empty tensor of ``dtype`` whose storage holds the record ``name`` (``numel``
        elements of ``dtype``; ``UntypedStorage`` for bytes), as torch's reader gives it.
        """
        if dtype is UntypedStorage:
            np_dtype = np.dtype(np.uint8)
        elif isinstance(dtype, _dtype_cls):
            np_dtype = dtype.np
        else:
            raise TypeError(f"get_storage_from_record(): expected a dtype, got {dtype!r}")
        info = self._info(name)
        nbytes = numel * np_dtype.itemsize
        if info.file_size != nbytes:
            raise RuntimeError(
                f"record size ({info.file_size} bytes) does not match expected size ({nbytes} "
                f"bytes = {numel} elements * {np_dtype.itemsize} bytes/element) for dtype "
                f"{_SCALAR_NAMES.get(np_dtype.name, np_dtype.name)}"
            )
        buf = np.empty(nbytes, dtype=np.uint8)
        self._archive.read_into(info, buf, name)
        return Tensor._wrap(buf.view(np_dtype)[:0])


# -- dispatch keys ---------------------------------------------------------------------------
# torch's dispatcher routes each op call through keys (backend, autograd, autocast...).
# ember runs ops directly, with no dispatcher: the keys exist as torch names them (libraries
# build key sets at import, e.g. torchvision's autocast registrations), and excluding keys
# is vacuous. Name=value, as torch 2.13 numbers them (aliases share a value).
_DISPATCH_KEYS = """
    Undefined=0 CompositeExplicitAutogradNonFunctional=155 CompositeExplicitAutograd=154
    CompositeImplicitAutogradNestedTensor=153 CompositeImplicitAutograd=151
    AutogradNestedTensor=22 AutogradOther=20 Autograd=150 Conjugate=16 ZeroTensor=18 Negative=17
    BackendSelect=11 ADInplaceOrView=19 PythonTLSSnapshot=41 Python=13
    FuncTorchDynamicLayerFrontMode=42 FuncTorchDynamicLayerBackMode=14
    FuncTorchBatchedDecomposition=152 FuncTorchBatched=34 FuncTorchVmapMode=36
    FuncTorchGradWrapper=39 PythonDispatcher=46 PreDispatch=45 Functionalize=15 AutocastCPU=24
    AutocastMPS=31 AutocastXPU=27 AutocastHPU=29 AutocastIPU=28 AutocastCUDA=32
    AutocastPrivateUse1=33 Dense=1 StartOfDenseBackends=48 CPU=49 CUDA=50 HIP=51 XLA=52 MPS=53
    IPU=54 XPU=55 HPU=56 VE=57 Lazy=58 MTIA=59 MAIA=60 PrivateUse1=61 PrivateUse2=62
    PrivateUse3=63 Meta=64 EndOfDenseBackends=64 Quantized=5 StartOfQuantizedBackends=65
    QuantizedCPU=66 QuantizedCUDA=67 QuantizedHIP=68 QuantizedXLA=69 QuantizedMPS=70
    QuantizedIPU=71 QuantizedXPU=72 QuantizedHPU=73 QuantizedVE=74 QuantizedLazy=75
    QuantizedMTIA=76 QuantizedMAIA=77 QuantizedPrivateUse1=78 QuantizedPrivateUse2=79
    QuantizedPrivateUse3=80 QuantizedMeta=81 EndOfQuantizedBackends=81 Sparse=8
    StartOfSparseBackends=82 SparseCPU=83 SparseCUDA=84 SparseHIP=85 SparseXLA=86 SparseMPS=87
    SparseIPU=88 SparseXPU=89 SparseHPU=90 SparseVE=91 SparseLazy=92 SparseMTIA=93 SparseMAIA=94
    SparsePrivateUse1=95 SparsePrivateUse2=96 SparsePrivateUse3=97 SparseMeta=98
    EndOfSparseBackends=98 SparseCsr=9 StartOfSparseCsrBackends=99 SparseCsrCPU=100
    SparseCsrCUDA=101 SparseCsrHIP=102 SparseCsrXLA=103 SparseCsrMPS=104 SparseCsrIPU=105
    SparseCsrXPU=106 SparseCsrHPU=107 SparseCsrVE=108 SparseCsrLazy=109 SparseCsrMTIA=110
    SparseCsrMAIA=111 SparseCsrPrivateUse1=112 SparseCsrPrivateUse2=113 SparseCsrPrivateUse3=114
    SparseCsrMeta=115 EndOfSparseCsrBackends=115 NestedTensor=10 StartOfNestedTensorBackends=116
    NestedTensorCPU=117 NestedTensorCUDA=118 NestedTensorHIP=119 NestedTensorXLA=120
    NestedTensorMPS=121 NestedTensorIPU=122 NestedTensorXPU=123 NestedTensorHPU=124
    NestedTensorVE=125 NestedTensorLazy=126 NestedTensorMTIA=127 NestedTensorMAIA=128
    NestedTensorPrivateUse1=129 NestedTensorPrivateUse2=130 NestedTensorPrivateUse3=131
    NestedTensorMeta=132 EndOfNestedTensorBackends=132 AutogradFunctionality=21
    StartOfAutogradFunctionalityBackends=133 AutogradCPU=134 AutogradCUDA=135 AutogradHIP=136
    AutogradXLA=137 AutogradMPS=138 AutogradIPU=139 AutogradXPU=140 AutogradHPU=141
    AutogradVE=142 AutogradLazy=143 AutogradMTIA=144 AutogradMAIA=145 AutogradPrivateUse1=146
    AutogradPrivateUse2=147 AutogradPrivateUse3=148 AutogradMeta=149
    EndOfAutogradFunctionalityBackends=149
"""

DispatchKey = enum.IntEnum(
    "DispatchKey",
    [(n, int(v)) for n, v in (item.split("=") for item in _DISPATCH_KEYS.split())],
)
DispatchKey.__doc__ = """torch's dispatch keys, by torch's names and numbers.

Example:
    >>> import ember
    >>> ember._C.DispatchKey.AutocastCPU
    <DispatchKey.AutocastCPU: 24>
"""
DispatchKey.__module__ = __name__
_BACKEND_KEYS = frozenset(
    "CPU CUDA HIP XLA MPS IPU XPU HPU VE Lazy MTIA MAIA PrivateUse1 PrivateUse2 PrivateUse3 "
    "Meta".split()
)


class DispatchKeySet:
    """A set of dispatch keys, combined with ``|`` and queried with ``has``.

    Example:
        >>> from ember._C import DispatchKey, DispatchKeySet
        >>> keys = DispatchKeySet(DispatchKey.AutocastCPU) | DispatchKeySet(DispatchKey.CPU)
        >>> keys, keys.has(DispatchKey.CPU)
        (DispatchKeySet(CPU, AutocastCPU), True)
    """

    def __init__(self, key: DispatchKey | None = None) -> None:
        self._keys = frozenset() if key is None else frozenset((DispatchKey(key),))

    @classmethod
    def _of(cls, keys) -> DispatchKeySet:
        made = cls()
        made._keys = frozenset(keys)
        return made

    def __or__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet._of(self._keys | other._keys)

    def __and__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet._of(self._keys & other._keys)

    def __sub__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet._of(self._keys - other._keys)

    def __eq__(self, other) -> bool:
        return isinstance(other, DispatchKeySet) and self._keys == other._keys

    def __hash__(self) -> int:
        return hash(self._keys)

    def has(self, key: DispatchKey) -> bool:
        """Whether ``key`` is in the set."""
        return DispatchKey(key) in self._keys

    def empty(self) -> bool:
        """Whether the set has no keys."""
        return not self._keys

    def __repr__(self) -> str:
        # as torch lists them: backend keys (CPU, CUDA...) first, then the others
        order = sorted(self._keys, key=lambda k: (k.name not in _BACKEND_KEYS, k.value))
        names = ", ".join(k.name for k in order)
        return f"DispatchKeySet({names})"


class _ExcludeDispatchKeyGuard:
    """While alive, torch's dispatcher skips the keys of a set. ember has no dispatcher, so
    there is nothing to skip: the guard only holds its set (and works as a context manager).

    Example:
        >>> from ember._C import DispatchKey, DispatchKeySet, _ExcludeDispatchKeyGuard
        >>> with _ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.AutocastCPU)):
        ...     pass
    """

    def __init__(self, keyset: DispatchKeySet) -> None:
        self.keyset = keyset

    def __enter__(self) -> _ExcludeDispatchKeyGuard:
        return self

    def __exit__(self, *exc) -> None:
        pass


def _get_tracing_state():
    """The TorchScript tracer's state: None, as outside ``torch.jit.trace`` (ember traces
    with ``torch.fx``, never through this state).

    Example:
        >>> import ember
        >>> ember._C._get_tracing_state() is None
        True
    """
    return None
