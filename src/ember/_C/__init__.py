"""``torch._C``: the names of torch's compiled core that Python libraries reach for
directly, each doing torch's work (or raising torch's error on a CPU-only build).

Example:
    >>> import ember
    >>> isinstance(ember.Tensor, ember._C._TensorMeta), ember._C.Generator is ember.Generator
    (True, True)
"""

from __future__ import annotations

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
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "Generator",
    "PyTorchFileReader",
    "_TensorMeta",
    "_disabled_torch_function_impl",
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
