"""Storages, ``torch.storage``: the bytes under a tensor. ``UntypedStorage`` is a flat,
byte-addressed buffer that shares memory with the tensors viewing it
(``Tensor.untyped_storage()``); ``TypedStorage`` (deprecated in torch, as here) reads the
same bytes as elements of one dtype (``Tensor.storage()``).

In ember a tensor's values are a NumPy array: its storage is the memory of the array at the
root of that array's ``base`` chain, so views of one tensor share one storage, and a write
through the storage is seen by every tensor on it (as in torch).

Example:
    >>> import ember
    >>> t = ember.arange(4, dtype=ember.int16)
    >>> s = t.untyped_storage()
    >>> s.nbytes(), t[1:].storage_offset(), t[1:].untyped_storage() is s
    (8, 1, True)
    >>> s[2] = 7
    >>> t
    tensor([0, 7, 2, 3], dtype=torch.int16)
"""

from __future__ import annotations

import collections.abc
import copy as _copy
import os
import warnings
import weakref
from typing import Any

import numpy as np

from . import _dtype
from ._tensor import Tensor, check_device, device, register_methods

__all__ = ["TypedStorage", "UntypedStorage"]

_CPU = device("cpu")
_UINT8 = np.dtype(np.uint8)


def _span(root: np.ndarray) -> np.ndarray:
    """The bytes ``root`` covers (lowest to highest address) as a 1-D uint8 array sharing
    its memory."""
    if root.flags.c_contiguous or root.flags.f_contiguous:
        return root.reshape(-1, order="A").view(_UINT8)
    start = stop = root.__array_interface__["data"][0]
    if root.size:
        for n, step in zip(root.shape, root.strides):
            if step < 0:
                start += (n - 1) * step
            else:
                stop += (n - 1) * step
        stop += root.itemsize
    return np.asarray(_Bytes(root, start, stop - start))


class _Bytes:
    """``nbytes`` bytes at ``address``, kept alive by ``owner`` (NumPy's array interface)."""

    def __init__(self, owner: np.ndarray, address: int, nbytes: int) -> None:
        self.owner = owner
        self.__array_interface__ = {
            "data": (address, not owner.flags.writeable),
            "shape": (nbytes,),
            "typestr": "|u1",
            "version": 3,
        }


def _root(arr: np.ndarray) -> np.ndarray:
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


# a tensor's storage object, by the id of the root array it covers: the same object each
# time (as torch's), while anything holds it
_STORAGES: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _data_of(t: Tensor) -> np.ndarray:
    data = t._data
    if not isinstance(data, np.ndarray):
        raise NotImplementedError("Cannot access storage of SparseTensorImpl")
    return data


def _storage_of(t: Tensor) -> UntypedStorage:
    root = _root(_data_of(t))
    found = _STORAGES.get(id(root))
    if found is not None and found._root is root:
        return found
    storage = UntypedStorage._wrap(_span(root), root)
    _STORAGES[id(root)] = storage
    return storage


def _index_error(idx: int, size: int) -> IndexError:
    return IndexError(f"index {idx} out of range for storage of size {size}")


class UntypedStorage:
    """A flat buffer of bytes on the CPU (``torch.UntypedStorage``): made with a size
    (uninitialised bytes), from a sequence of byte values, or as the memory under a tensor
    (``Tensor.untyped_storage()``), which it shares.

    Example:
        >>> import ember
        >>> s = ember.UntypedStorage([1, 2, 3])
        >>> s[0], s.tolist(), s.nbytes(), s.device
        (1, [1, 2, 3], 3, device(type='cpu'))
        >>> s[1:].tolist()
        [2, 3]
    """

    is_sparse = False
    is_sparse_csr = False
    is_cuda = False
    is_hpu = False
    filename = None  # not memory-mapped from a file

    def __init__(self, *args, allocator=None, device=None) -> None:
        check_device(device if device is not None else "cpu")
        if len(args) > 1 or (
            args and not isinstance(args[0], (int, np.integer, collections.abc.Sequence))
        ):
            got = ", ".join(type(a).__name__ for a in args)
            if len(args) == 1:
                raise RuntimeError(
                    f"torch.UntypedStorage(): Expected a sequence type, but got {got}"
                )
            raise TypeError(
                "torch.UntypedStorage() received an invalid combination of arguments - got "
                f"({got}), but expected one of:\n"
                " * (*, int allocator = None, torch.device device = None)\n"
                " * (int size, *, int allocator = None, torch.device device = None)\n"
                " * (object sequence, *, int allocator = None, torch.device device = None)\n"
            )
        if not args:
            buf = np.empty(0, _UINT8)
        elif isinstance(args[0], (int, np.integer)):
            if args[0] < 0:
                raise RuntimeError(
                    "[enforce fail at alloc_cpu.cpp:98] ((ptrdiff_t)nbytes) >= 0. alloc_cpu() "
                    f"seems to have been called with negative number: {args[0] % 2**64}"
                )
            buf = np.empty(int(args[0]), _UINT8)
        else:
            seq = args[0]
            for item in seq:
                if not isinstance(item, (int, np.integer)):
                    raise RuntimeError(
                        "torch.UntypedStorage(): tried to construct a storage from a sequence "
                        f"({type(seq).__name__}), but one of the items was of type "
                        f"{type(item).__name__} instead of int"
                    )
            buf = np.array([int(v) & 0xFF for v in seq], dtype=_UINT8)
        self._buf = buf
        self._root = buf

    @classmethod
    def _wrap(cls, buf: np.ndarray, root: np.ndarray) -> UntypedStorage:
        s = object.__new__(cls)
        s._buf = buf
        s._root = root
        return s

    @classmethod
    def from_file(cls, filename: str, shared: bool = False, nbytes: int = 0) -> UntypedStorage:
        """A storage of the file's first ``nbytes`` bytes, memory-mapped: with ``shared``
        writes go to the file (created or grown as needed), without it they stay private.

        Example:
            >>> import ember, os, tempfile
            >>> path = os.path.join(tempfile.mkdtemp(), "bytes.bin")
            >>> _ = open(path, "wb").write(bytes([1, 2, 3, 4]))
            >>> ember.UntypedStorage.from_file(path, False, 3).tolist()
            [1, 2, 3]
        """
        nbytes = int(nbytes)
        if shared:
            if not os.path.exists(filename) or os.path.getsize(filename) < nbytes:
                with open(filename, "ab") as f:  # create, or grow, to the mapping's size
                    f.truncate(nbytes)
        elif not os.path.exists(filename):
            raise RuntimeError(
                f"unable to open file <{filename}> in read-only mode: No such file or directory (2)"
            )
        size = os.path.getsize(filename)
        if size < nbytes:
            raise RuntimeError(
                f"file <{filename}> size <{size}> is smaller than the required mapping size "
                f"<{nbytes}>"
            )
        if nbytes == 0:
            buf = np.empty(0, _UINT8)
        else:
            # "c": copy-on-write (torch's MAP_PRIVATE); "r+": writes reach the file
            buf = np.memmap(filename, dtype=_UINT8, mode="r+" if shared else "c", shape=(nbytes,))
        return cls._wrap(buf, buf)

    # -- size and place -------------------------------------------------------------------

    def size(self) -> int:
        """The number of bytes.

        Example:
            >>> import ember
            >>> ember.UntypedStorage(5).size()
            5
        """
        return int(self._buf.size)

    def nbytes(self) -> int:
        """The number of bytes.

        Example:
            >>> import ember
            >>> ember.ones(3).untyped_storage().nbytes()
            12
        """
        return int(self._buf.size)

    def __len__(self) -> int:
        return int(self._buf.size)

    def element_size(self) -> int:
        """1: an untyped storage's elements are bytes.

        Example:
            >>> import ember
            >>> ember.UntypedStorage(2).element_size()
            1
        """
        return 1

    def data_ptr(self) -> int:
        """The address of the first byte (a tensor's ``data_ptr()`` when it starts there).

        Example:
            >>> import ember
            >>> t = ember.ones(2)
            >>> t.untyped_storage().data_ptr() == t.data_ptr()
            True
        """
        return self._buf.__array_interface__["data"][0]

    @property
    def device(self) -> device:
        """Where the bytes are: the CPU.

        Example:
            >>> import ember
            >>> ember.UntypedStorage(1).device
            device(type='cpu')
        """
        return _CPU

    def get_device(self) -> int | None:
        """The device's index: None for the CPU (as torch's storages answer).

        Example:
            >>> import ember
            >>> ember.UntypedStorage(1).get_device() is None
            True
        """
        return None

    def type(self, dtype: str | None = None, non_blocking: bool = False) -> Any:
        """The storage's type name, ``'torch.storage.UntypedStorage'``.

        Example:
            >>> import ember
            >>> ember.UntypedStorage(1).type()
            'torch.storage.UntypedStorage'
        """
        if dtype is None:
            return "torch.storage.UntypedStorage"
        raise NotImplementedError("ember storages convert with Tensor methods, not type()")

    def is_shared(self) -> bool:
        """False: ember storages are in the process's own memory.

        Example:
            >>> import ember
            >>> ember.UntypedStorage(1).is_shared()
            False
        """
        return False

    def is_pinned(self, device=None) -> bool:
        """False: no memory is pinned on a CPU-only build.

        Example:
            >>> import ember
            >>> ember.UntypedStorage(1).is_pinned()
            False
        """
        return False

    def pin_memory(self, device=None):
        """Fails as on a CPU-only torch build (no accelerator to pin memory for).

        Example:
            >>> import ember
            >>> try:
            ...     ember.UntypedStorage(1).pin_memory()
            ... except RuntimeError as e:
            ...     print(e)
            Cannot access accelerator device when none is available.
        """
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def cpu(self) -> UntypedStorage:
        """This storage (it is on the CPU already).

        Example:
            >>> import ember
            >>> s = ember.UntypedStorage(1)
            >>> s.cpu() is s
            True
        """
        return self

    def to(self, *, device, non_blocking: bool = False) -> UntypedStorage:
        """This storage on ``device``: itself for the CPU; other devices fail as in a
        CPU-only torch build.

        Example:
            >>> import ember
            >>> s = ember.UntypedStorage(1)
            >>> s.to(device="cpu") is s
            True
        """
        check_device(device)
        return self

    def untyped(self) -> UntypedStorage:
        """Itself.

        Example:
            >>> import ember
            >>> s = ember.UntypedStorage(1)
            >>> s.untyped() is s
            True
        """
        return self

    def _typed_storage(self) -> TypedStorage:
        return TypedStorage(wrap_storage=self, dtype=_dtype.uint8, _internal=True)

    # -- contents ---------------------------------------------------------------------------

    def _wrap_index(self, idx: int) -> int:
        n = self._buf.size
        if idx >= n or idx < -n:
            raise _index_error(idx + n if idx < 0 else idx, n)
        return idx % n if n else idx

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            if idx.step not in (None, 1):
                raise RuntimeError(
                    f"Trying to slice with a step of {idx.step}, but only a step of 1 is supported"
                )
            return UntypedStorage._wrap(self._buf[idx], self._root)
        if not isinstance(idx, (int, np.integer)) or isinstance(idx, bool):
            raise TypeError(f"can't index a torch.UntypedStorage with {type(idx).__name__}")
        return int(self._buf[self._wrap_index(int(idx))])

    def __setitem__(self, idx, value) -> None:
        if not isinstance(idx, (int, np.integer, slice)):
            raise RuntimeError(f"can't index a torch.UntypedStorage with {type(idx).__name__}")
        if not isinstance(value, (int, np.integer)):
            raise RuntimeError(
                "can only set storage content with a int types, but got "
                f"{type(value).__name__} instead"
            )
        if isinstance(idx, slice):
            self._buf[idx] = int(value) & 0xFF
        else:
            self._buf[self._wrap_index(int(idx))] = int(value) & 0xFF

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list:
        """The bytes as a list of ints.

        Example:
            >>> import ember
            >>> ember.tensor([1, 258], dtype=ember.int16).untyped_storage().tolist()
            [1, 0, 2, 1]
        """
        return self._buf.tolist()

    def fill_(self, value: int) -> UntypedStorage:
        """Set every byte to ``value`` (modulo 256); returns self.

        Example:
            >>> import ember
            >>> ember.UntypedStorage(3).fill_(7).tolist()
            [7, 7, 7]
        """
        if not isinstance(value, (int, np.integer)):
            raise RuntimeError(f"fill_ expects int, but got {type(value).__name__}")
        self._buf[...] = int(value) & 0xFF
        return self

    def copy_(self, src, non_blocking: bool | None = None) -> UntypedStorage:
        """Copy the bytes of ``src`` (a storage of the same size) into this one; returns
        self.

        Example:
            >>> import ember
            >>> ember.UntypedStorage(2).copy_(ember.UntypedStorage([4, 5])).tolist()
            [4, 5]
        """
        if isinstance(src, TypedStorage):
            src = src._untyped_storage
        if not isinstance(src, UntypedStorage):
            raise TypeError(f"copy_(): expected a storage, got {type(src).__name__}")
        if src.nbytes() != self.nbytes():
            raise RuntimeError(
                f"size does not match, self was {self.nbytes()} bytes but src was "
                f"{src.nbytes()} bytes"
            )
        self._buf[...] = src._buf
        return self

    def clone(self) -> UntypedStorage:
        """A copy of the bytes in new memory.

        Example:
            >>> import ember
            >>> s = ember.UntypedStorage([1, 2])
            >>> c = s.clone()
            >>> c.tolist(), c.data_ptr() != s.data_ptr()
            ([1, 2], True)
        """
        buf = self._buf.copy()
        return UntypedStorage._wrap(buf, buf)

    def byteswap(self, dtype) -> None:
        """Reverse the byte order of each ``dtype`` element in place.

        Example:
            >>> import ember
            >>> s = ember.UntypedStorage([1, 2, 3, 4])
            >>> s.byteswap(ember.int16)
            >>> s.tolist()
            [2, 1, 4, 3]
        """
        size = dtype.itemsize
        if size > 1:
            usable = self._buf.size - self._buf.size % size
            elements = self._buf[:usable].reshape(-1, size)
            elements[...] = elements[:, ::-1].copy()

    @classmethod
    def from_buffer(
        cls, buffer, byte_order: str = "native", count: int = -1, offset: int = 0, *, dtype
    ) -> UntypedStorage:
        """A storage holding a copy of ``buffer``'s bytes, read as ``dtype`` elements in
        ``byte_order`` (``'native'``, ``'little'`` or ``'big'``) and stored natively.

        Example:
            >>> import ember
            >>> ember.UntypedStorage.from_buffer(b"\\x00\\x01", "big", dtype=ember.int16).tolist()
            [1, 0]
        """
        if byte_order not in ("native", "little", "big"):
            raise ValueError(
                "invalid byte_order '" + str(byte_order) + "' (expected 'big', 'little', or "
                "'native')"
            )
        np_dtype = dtype.np
        if byte_order != "native" and np_dtype.itemsize > 1:
            np_dtype = np_dtype.newbyteorder("<" if byte_order == "little" else ">")
        arr = np.frombuffer(buffer, dtype=np_dtype, count=count, offset=offset)
        buf = arr.astype(dtype.np).view(_UINT8).copy()
        return cls._wrap(buf, buf)

    # -- Python protocols -------------------------------------------------------------------

    def __copy__(self) -> UntypedStorage:
        return self.clone()

    def __deepcopy__(self, memo) -> UntypedStorage:
        found = memo.get(id(self))
        if found is None:
            found = memo[id(self)] = self.clone()
        return found

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + self.nbytes()

    def __str__(self) -> str:
        data = " " + "\n ".join(str(v) for v in self.tolist())
        return f"{data}\n[torch.storage.UntypedStorage(device=cpu) of size {len(self)}]"

    __repr__ = __str__


def _warn_typed_storage_removal(stacklevel: int = 2) -> None:
    if not _TYPED_WARNED[0]:
        _TYPED_WARNED[0] = True
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
            "will be the only storage class. This should only matter to you if you are using "
            "storages directly.  To access UntypedStorage directly, use "
            "tensor.untyped_storage() instead of tensor.storage()",
            UserWarning,
            stacklevel=stacklevel + 1,
        )


_TYPED_WARNED = [False]

_TYPED_ARGS = (
    "TypedStorage.__init__ received an invalid combination of arguments. Expected one of:\n"
    " * (*, torch.device device, torch.dtype dtype)\n"
    " * (int size, *, torch.device device, torch.dtype dtype)\n"
    " * (Sequence data, *, torch.device device, torch.dtype dtype)\n"
    " * (*, UntypedStorage wrap_storage, torch.dtype dtype)"
)


class TypedStorage:
    """The bytes of an ``UntypedStorage`` read as elements of one dtype
    (``torch.TypedStorage``, deprecated in torch: its public use warns once, as there).

    Example:
        >>> import ember, warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     s = ember.tensor([1.5, 2.0]).storage()
        ...     print(s.dtype, s.size(), s[0], s.tolist())
        torch.float32 2 1.5 [1.5, 2.0]
    """

    is_sparse = False

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        if wrap_storage is not None:
            if args:
                raise RuntimeError(
                    _TYPED_ARGS + "\nNo positional arguments should be given when using "
                    "'wrap_storage'"
                )
            if dtype is None:
                raise RuntimeError(_TYPED_ARGS + "\nArgument 'dtype' must be specified")
            if not isinstance(dtype, _dtype.dtype):
                raise TypeError(
                    _TYPED_ARGS + f"\nArgument 'dtype' must be torch.dtype, not {type(dtype)}"
                )
            if device is not None:
                raise RuntimeError(
                    _TYPED_ARGS
                    + "\nArgument 'device' should not be specified when 'wrap_storage' is given"
                )
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(
                    _TYPED_ARGS + "\nArgument 'wrap_storage' must be UntypedStorage, but got "
                    f"{type(wrap_storage)}"
                )
            self.dtype = dtype
            self._untyped_storage = wrap_storage
            return
        self.dtype = _dtype.get_default_dtype() if dtype is None else dtype
        if len(args) > 1:
            raise RuntimeError(_TYPED_ARGS + "\nToo many positional arguments")
        if not args:
            self._untyped_storage = UntypedStorage(device=device)
        elif isinstance(args[0], (int, np.integer)):
            self._untyped_storage = UntypedStorage(
                int(args[0]) * self.dtype.itemsize, device=device
            )
        elif isinstance(args[0], collections.abc.Sequence):
            check_device(device)
            buf = np.array(args[0], dtype=self.dtype.np).reshape(-1).view(_UINT8)
            self._untyped_storage = UntypedStorage._wrap(buf, buf)
        else:
            raise TypeError(_TYPED_ARGS + f"\nArgument type not recognized: {type(args[0])}")

    def _array(self) -> np.ndarray:
        """The elements (a NumPy view of the untyped storage's bytes)."""
        buf = self._untyped_storage._buf
        return buf[: buf.size - buf.size % self.dtype.itemsize].view(self.dtype.np)

    def _size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def size(self) -> int:
        """The number of elements.

        Example:
            >>> import ember, warnings
            >>> warnings.simplefilter("ignore")
            >>> ember.TypedStorage(3, dtype=ember.float64).size()
            3
        """
        _warn_typed_storage_removal()
        return self._size()

    def __len__(self) -> int:
        _warn_typed_storage_removal()
        return self._size()

    def nbytes(self) -> int:
        """The number of bytes.

        Example:
            >>> import ember, warnings
            >>> warnings.simplefilter("ignore")
            >>> ember.TypedStorage(3, dtype=ember.float64).nbytes()
            24
        """
        _warn_typed_storage_removal()
        return self._untyped_storage.nbytes()

    def element_size(self) -> int:
        """The size of one element in bytes.

        Example:
            >>> import ember, warnings
            >>> warnings.simplefilter("ignore")
            >>> ember.TypedStorage(1, dtype=ember.int16).element_size()
            2
        """
        _warn_typed_storage_removal()
        return self.dtype.itemsize

    def untyped(self) -> UntypedStorage:
        """The ``UntypedStorage`` holding the bytes.

        Example:
            >>> import ember, warnings
            >>> warnings.simplefilter("ignore")
            >>> t = ember.ones(2)
            >>> t.storage().untyped() is t.untyped_storage()
            True
        """
        _warn_typed_storage_removal()
        return self._untyped_storage

    def _new_wrapped_storage(self, untyped_storage: UntypedStorage) -> TypedStorage:
        if type(untyped_storage) is not UntypedStorage:
            raise AssertionError(f"expected UntypedStorage, got {type(untyped_storage).__name__}")
        return TypedStorage(wrap_storage=untyped_storage, dtype=self.dtype, _internal=True)

    @property
    def device(self) -> device:
        """Where the elements are: the CPU."""
        _warn_typed_storage_removal()
        return _CPU

    @property
    def is_cuda(self) -> bool:
        """False: a CPU storage."""
        _warn_typed_storage_removal()
        return False

    @property
    def filename(self):
        """None: not memory-mapped from a file."""
        return None

    def get_device(self) -> int | None:
        """The device's index: None for the CPU."""
        _warn_typed_storage_removal()
        return None

    def data_ptr(self) -> int:
        """The address of the first element."""
        _warn_typed_storage_removal()
        return self._untyped_storage.data_ptr()

    def _wrap_index(self, idx) -> int:
        if type(idx) is not int:
            raise TypeError(f"can't index a {type(self)} with {type(idx)}")
        n = self._size()
        if idx >= n or idx < -n:
            raise _index_error(idx, n)
        return idx % n

    def __getitem__(self, idx):
        _warn_typed_storage_removal()
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if not isinstance(idx, int):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        return self._item(self._array()[self._wrap_index(idx)])

    def _item(self, value):
        if self.dtype.np.kind == "V":  # bfloat16 and the float8 types: Python floats
            return float(value)
        return value.item()

    def __setitem__(self, idx, value) -> None:
        _warn_typed_storage_removal()
        if not isinstance(idx, (int, slice)):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        if isinstance(value, (UntypedStorage, TypedStorage)):
            raise RuntimeError(f"cannot set item with value type {type(value)}")
        Tensor._wrap(self._array())[idx] = value

    def tolist(self) -> list:
        """The elements as a list of Python numbers.

        Example:
            >>> import ember, warnings
            >>> warnings.simplefilter("ignore")
            >>> ember.tensor([1, 2]).storage().tolist()
            [1, 2]
        """
        _warn_typed_storage_removal()
        return [self._item(v) for v in self._array()]

    def __iter__(self):
        _warn_typed_storage_removal()
        return iter(self.tolist())

    def fill_(self, value) -> TypedStorage:
        """Set every element to ``value``; returns self."""
        _warn_typed_storage_removal()
        Tensor._wrap(self._array())[...] = value
        return self

    def copy_(self, source, non_blocking: bool | None = None) -> TypedStorage:
        """Copy ``source``'s bytes (a storage of as many bytes) into this one; returns self."""
        _warn_typed_storage_removal()
        self._untyped_storage.copy_(source, non_blocking)
        return self

    def clone(self) -> TypedStorage:
        """A copy of the elements in new memory."""
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.clone())

    def cpu(self) -> TypedStorage:
        """A TypedStorage on the same (CPU) bytes."""
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.cpu())

    def is_shared(self) -> bool:
        """False: ember storages are in the process's own memory."""
        _warn_typed_storage_removal()
        return False

    def is_pinned(self, device=None) -> bool:
        """False: no memory is pinned on a CPU-only build."""
        _warn_typed_storage_removal()
        return False

    def pickle_storage_type(self) -> str:
        """The legacy storage class name pickles use for this dtype (``'FloatStorage'``)."""
        _warn_typed_storage_removal()
        return _LEGACY_STORAGE[self.dtype.np.name]

    def __copy__(self) -> TypedStorage:
        return self.clone()

    def __deepcopy__(self, memo) -> TypedStorage:
        return self._new_wrapped_storage(_copy.deepcopy(self._untyped_storage, memo))

    def __str__(self) -> str:
        _warn_typed_storage_removal()
        data = " " + "\n ".join(str(v) for v in self.tolist())
        info = (
            f"[torch.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size {self._size()}]"
        )
        return f"{data}\n{info}"

    __repr__ = __str__


_LEGACY_STORAGE = {
    "float64": "DoubleStorage",
    "float32": "FloatStorage",
    "float16": "HalfStorage",
    "int64": "LongStorage",
    "int32": "IntStorage",
    "int16": "ShortStorage",
    "int8": "CharStorage",
    "uint8": "ByteStorage",
    "bool": "BoolStorage",
    "bfloat16": "BFloat16Storage",
    "complex128": "ComplexDoubleStorage",
    "complex64": "ComplexFloatStorage",
}


def is_storage(obj) -> bool:
    """True for a storage (``UntypedStorage`` or ``TypedStorage``).

    Example:
        >>> import ember
        >>> ember.is_storage(ember.UntypedStorage(1)), ember.is_storage(ember.ones(1))
        (True, False)
    """
    return type(obj) in (UntypedStorage, TypedStorage)


# -- the Tensor methods -----------------------------------------------------------------------


def untyped_storage(self: Tensor) -> UntypedStorage:
    """The storage holding this tensor's bytes (shared with its views: the same object).

    Example:
        >>> import ember
        >>> t = ember.zeros(2, 3)
        >>> t.untyped_storage().nbytes(), t[1].untyped_storage() is t.untyped_storage()
        (24, True)
    """
    return _storage_of(self)


def storage(self: Tensor) -> TypedStorage:
    """This tensor's storage read as its dtype (``TypedStorage``, deprecated in torch: the
    call warns once, as there).

    Example:
        >>> import ember, warnings
        >>> warnings.simplefilter("ignore")
        >>> ember.tensor([1.0, 2.0]).storage().tolist()
        [1.0, 2.0]
    """
    _warn_typed_storage_removal(stacklevel=2)
    return TypedStorage(wrap_storage=_storage_of(self), dtype=self.dtype, _internal=True)


def storage_offset(self: Tensor) -> int:
    """Where this tensor's first element is in its storage, in elements.

    Example:
        >>> import ember
        >>> ember.arange(6).view(2, 3)[1, 1:].storage_offset()
        4
    """
    data = _data_of(self)
    start = _storage_of(self).data_ptr()
    return (data.__array_interface__["data"][0] - start) // data.itemsize


register_methods(
    {"untyped_storage": untyped_storage, "storage": storage, "storage_offset": storage_offset}
)
