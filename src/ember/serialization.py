"""Checkpoints: ``save``/``load`` in PyTorch's zip format or the safetensors layout.

Two formats, told apart by their first bytes when loading:

* PyTorch's checkpoint format (``torch.save``'s zip archive, see ``ember._torch_zip``): the
  default for ``.pt``/``.pth`` and any other suffix, and for file objects, as in torch. It is
  read with torch's ``weights_only=True`` rules: a restricted unpickler that admits only an
  allow-list of globals (extend it with ``add_safe_globals``) and never runs code from the
  file; ``weights_only=False`` does not lift that. Files ``ember.save`` writes load in torch.
  NumPy arrays, dtypes and scalars are pickled as torch pickles them; loading them needs
  ``weights_only=False`` or NumPy's globals allowlisted (as in torch), and goes through
  ember's checked stand-ins for NumPy's reconstruction functions, never NumPy's own.
* ember's safetensors-style format, chosen by a ``.safetensors`` suffix or
  ``format="safetensors"``; it involves no pickle at all.

The safetensors-style layout (written with NumPy):

* 8 bytes: ``N``, the header length, an unsigned little-endian 64-bit integer;
* ``N`` bytes: a UTF-8 JSON object mapping each tensor's name to
  ``{"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}`` (offsets into the
  data section), plus ``"__metadata__"``: a str -> str map. ember stores the nesting of the
  saved object there, under ``"ember.structure"``, as a JSON string;
* the data section: each tensor's elements, C order, little-endian.

Loading parses JSON and copies bytes into fresh arrays: it never unpickles and never runs
code from the file, and it refuses malformed files with a ``ValueError``. Saving to a path
is atomic: the bytes go to a temporary file in the same directory, which is flushed,
fsync'ed and then renamed over the target, so a crash mid-save leaves the old file intact.
The temporary is named ``.NAME.tmp-PID`` (``NAME`` the target's basename, ``PID`` the
writer's process id, plus ``.XXXXXXXXXXXX`` when one process writes the same path from
several threads at once), so that the next save of the same path can recognise and remove
the temporaries of writers that died mid-save, while leaving those of live processes alone.

Savable objects in the safetensors layout: Tensors, NumPy arrays, ember dtypes,
``int``/``float``/``str``/``bool``/``None`` (NumPy scalars are saved as the Python number),
and dicts, lists and tuples of these. The same Tensor object referenced twice is stored once
and loads as one object.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import struct
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from . import _dtype, _torch_zip
from ._tensor import Tensor
from ._torch_zip import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = [
    "save",
    "load",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "safe_globals",
]

_FORMATS = {"torch": "torch", "pt": "torch", "zip": "torch", "safetensors": "safetensors"}

_STRUCTURE_KEY = "ember.structure"
_FORMAT_VERSION = 1
_MAX_HEADER = 100_000_000  # bytes; the limit safetensors uses
_CHUNK = 16 * 1024 * 1024  # tensor bytes are written in chunks of this size

# safetensors dtype codes (C128 is ember's extension for complex128)
_CODE_OF = {
    "float16": "F16",
    "float32": "F32",
    "float64": "F64",
    "complex64": "C64",
    "complex128": "C128",
    "uint8": "U8",
    "int8": "I8",
    "int16": "I16",
    "int32": "I32",
    "int64": "I64",
    "bool": "BOOL",
    "bfloat16": "BF16",
}


class _Codes(dict):
    """dtype code -> NumPy dtype; "BF16" makes ember.bfloat16 (imports ml_dtypes) on first use."""

    def __contains__(self, code) -> bool:
        return code == "BF16" or super().__contains__(code)

    def __missing__(self, code):
        if code != "BF16":
            raise KeyError(code)
        self[code] = np_dtype = _dtype._bfloat16().np
        return np_dtype


_NP_OF_CODE = {
    "F16": np.dtype("<f2"),
    "F32": np.dtype("<f4"),
    "F64": np.dtype("<f8"),
    "C64": np.dtype("<c8"),
    "C128": np.dtype("<c16"),
    "U8": np.dtype("u1"),
    "I8": np.dtype("i1"),
    "I16": np.dtype("<i2"),
    "I32": np.dtype("<i4"),
    "I64": np.dtype("<i8"),
    "BOOL": np.dtype("?"),
}
_NP_OF_CODE = _Codes(_NP_OF_CODE)


def _error(msg: str) -> ValueError:
    return ValueError(f"ember.load: {msg}")


# -- encoding -----------------------------------------------------------------------------


class _Encoder:
    """Walks the object, assigning each tensor (or array) a name and an entry."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self._names_by_id: dict[int, str] = {}
        self._keepalive: list = []

    def _name(self, path: list[str]) -> str:
        base = ".".join(path) if path else "tensor"
        name, n = base, 1
        while name in self.arrays or name == "__metadata__":
            n += 1
            name = f"{base}#{n}"
        return name

    def _array(self, obj, arr: np.ndarray, path: list[str]) -> str:
        name = self._names_by_id.get(id(obj))
        if name is None:
            if arr.dtype.name not in _CODE_OF:
                raise TypeError(f"ember.save: unsupported array dtype {arr.dtype}")
            name = self._name(path)
            self.arrays[name] = arr
            self._names_by_id[id(obj)] = name
            self._keepalive.append(obj)
        return name

    def encode(self, obj, path: list[str], depth: int = 0):
        if depth > 500:
            raise ValueError("ember.save: object is nested too deeply")
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, Tensor):
            node: dict[str, Any] = {"tensor": self._array(obj, obj._data, path)}
            if obj._rg:
                node["requires_grad"] = True
            return node
        if isinstance(obj, np.ndarray):
            return {"ndarray": self._array(obj, obj, path)}
        if isinstance(obj, np.generic) and not isinstance(obj, (np.bool_, np.number)):
            raise TypeError(f"ember.save: cannot save NumPy scalars of type {type(obj).__name__}")
        if isinstance(obj, np.generic):
            obj = obj.item()
            if isinstance(obj, complex):
                raise TypeError("ember.save: cannot save complex Python numbers")
            return self.encode(obj, path, depth + 1)
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            obj = float(obj)
            return obj if math.isfinite(obj) else {"float": repr(obj)}
        if isinstance(obj, _dtype.dtype):
            return {"dtype": obj.name}
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if not (k is None or isinstance(k, (bool, int, float, str, tuple))):
                    raise TypeError(
                        f"ember.save: dict keys must be str, int, float, bool, None or tuples; "
                        f"got {type(k).__name__}"
                    )
                items.append(
                    [self.encode(k, path, depth + 1), self.encode(v, [*path, str(k)], depth + 1)]
                )
            return {"odict" if isinstance(obj, OrderedDict) else "dict": items}
        if isinstance(obj, (list, tuple)):
            tag = "list" if isinstance(obj, list) else "tuple"
            return {tag: [self.encode(v, [*path, str(i)], depth + 1) for i, v in enumerate(obj)]}
        raise TypeError(
            f"ember.save: cannot save objects of type {type(obj).__module__}."
            f"{type(obj).__qualname__}; only tensors, NumPy arrays, numbers, strings, bools, "
            "None, dtypes, and dicts/lists/tuples of these are supported"
        )


def _build(obj) -> tuple[bytes, list[np.ndarray]]:
    """The complete header bytes (length prefix included) and the arrays to write."""
    enc = _Encoder()
    structure = enc.encode(obj, [])
    header: dict[str, Any] = {}
    arrays = []
    offset = 0
    for name, arr in enc.arrays.items():
        le = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False)
        nbytes = le.size * le.itemsize
        header[name] = {
            "dtype": _CODE_OF[arr.dtype.name],
            "shape": list(arr.shape),
            "data_offsets": [offset, offset + nbytes],
        }
        offset += nbytes
        arrays.append(le)
    meta = {"format": "pt", "ember.format_version": str(_FORMAT_VERSION)}
    meta[_STRUCTURE_KEY] = json.dumps(structure, separators=(",", ":"), allow_nan=False)
    header["__metadata__"] = meta
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    raw = text.encode("utf-8")
    raw += b" " * (-len(raw) % 8)  # safetensors pads the header so the data is 8-aligned
    return struct.pack("<Q", len(raw)) + raw, arrays


def _write_chunk(fh, chunk) -> None:
    fh.write(chunk)


def _write_array(fh, arr: np.ndarray) -> None:
    if arr.size == 0:
        return
    flat = memoryview(arr.reshape(-1).view(np.uint8))
    for start in range(0, len(flat), _CHUNK):
        _write_chunk(fh, flat[start : start + _CHUNK])


def _write(fh, header: bytes, arrays: list[np.ndarray]) -> None:
    fh.write(header)
    for arr in arrays:
        _write_array(fh, arr)


def _choose_format(f, format) -> str:
    if format is not None:
        if format not in _FORMATS:
            raise ValueError(
                f"ember.save: unknown format {format!r}; use 'torch' (torch.save's zip format) "
                "or 'safetensors'"
            )
        return _FORMATS[format]
    name = getattr(f, "name", None) if hasattr(f, "write") else f
    try:
        name = os.fsdecode(name) if name is not None and not isinstance(name, int) else ""
    except TypeError:
        name = ""
    return "safetensors" if name.lower().endswith(".safetensors") else "torch"


def save(
    obj,
    f,
    pickle_module=None,
    pickle_protocol=None,
    _use_new_zipfile_serialization=True,
    _disable_byteorder_record=False,
    *,
    format=None,
) -> None:
    """Save ``obj`` (e.g. a state dict) to ``f``, a path or a writable binary file.

    The format is torch's zip checkpoint (``torch.load`` reads it) unless ``f`` ends in
    ``.safetensors`` or ``format="safetensors"`` is given. Tensors viewing one buffer are
    stored once and keep sharing memory when loaded. NumPy arrays, dtypes and scalars (of
    numeric, bool and string dtypes) are pickled as torch pickles them. A whole ``nn.Module``
    is refused: save
    its ``state_dict()``. A path is written atomically (temporary file in the same
    directory, fsync, rename). ``pickle_module``, ``pickle_protocol`` and torch's private
    flags are accepted for compatibility and ignored: ember writes pickle protocol 2, as torch.

    Example:
        >>> import ember, os, tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     path = os.path.join(d, "ckpt.pt")
        ...     ember.save({"w": ember.ones(2), "step": 3}, path)
        ...     ember.load(path)
        {'w': tensor([1., 1.]), 'step': 3}
    """
    # validate everything before touching the file
    if _choose_format(f, format) == "safetensors":
        header, arrays = _build(obj)

        def writer(fh):
            _write(fh, header, arrays)

    else:
        plan = _torch_zip.plan_zip(obj)

        def writer(fh):
            # looked up at call time, so that tests can intercept the chunk writes
            _torch_zip.write_zip(fh, plan, lambda dst, chunk: _write_chunk(dst, chunk))

    if hasattr(f, "write"):
        writer(f)
        if hasattr(f, "flush"):
            f.flush()
        return

    path = os.fspath(f)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    path = os.path.realpath(path)  # write through a symlink rather than replace it
    directory = os.path.dirname(os.path.abspath(path))
    _remove_stale_temps(directory, os.path.basename(path))
    tmp, fd = _create_temp(directory, os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as fh:
            writer(fh)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)  # keep an existing file's mode
        except OSError:
            pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        # Only now, with the temporary renamed or unlinked, may another save of this
        # process treat a file of that name as stale.
        with _temps_lock:
            _temps_in_progress.discard(tmp)
    _fsync_dir(directory)


# -- temporary files ----------------------------------------------------------------------

# Temporaries this process is writing right now (full paths). A file named with our own pid
# that is not in this set is a leftover of an earlier process that had the same pid.
_temps_in_progress: set[str] = set()
_temps_lock = threading.Lock()


def _reset_after_fork() -> None:
    # The child has a new pid, so the parent's in-progress names are not its own; and a
    # lock held by another parent thread at fork time would never be released in the child.
    global _temps_lock
    _temps_lock = threading.Lock()
    _temps_in_progress.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _temp_prefix(name: str) -> str:
    return f".{name}.tmp-"


def _create_temp(directory: str, name: str) -> tuple[str, int]:
    """Create and open (O_EXCL) a fresh temporary beside ``directory/name``.

    The name is ``.NAME.tmp-PID``; if that exists (another thread of this process is saving
    the same path), a random ``.XXXXXXXXXXXX`` suffix is added, keeping the prefix that
    ``_remove_stale_temps`` recognises.
    """
    base = os.path.join(directory, f"{_temp_prefix(name)}{os.getpid()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    tmp = base
    with _temps_lock:  # creation and registration together, so no other thread sees a gap
        while True:
            try:
                # mode 0o666 lets the umask decide, like open(path, "wb")
                fd = os.open(tmp, flags, 0o666)
            except FileExistsError:
                tmp = f"{base}.{secrets.token_hex(6)}"
                continue
            _temps_in_progress.add(tmp)
            return tmp, fd


def _temp_owner(entry: str, name: str) -> int | None:
    """The writer's pid if ``entry`` is exactly a temporary name for target ``name``."""
    m = re.fullmatch(re.escape(_temp_prefix(name)) + r"([1-9][0-9]{0,9})(?:\.[0-9a-f]{12})?", entry)
    if m is None:
        return None
    pid = int(m.group(1))
    return pid if pid < 2**31 else None  # larger numbers are no pid: leave such files alone


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists; when in doubt, say it does."""
    if os.name != "posix":
        # os.kill(pid, 0) on Windows terminates the process instead of probing it.
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: alive but not ours; anything else: unknown
        return True
    return True


def _remove_stale_temps(directory: str, name: str) -> None:
    """Remove temporaries of ``directory/name`` left behind by writers that died mid-save.

    A temporary of another pid goes only if that process no longer exists: a live one may be
    mid-save. One of our own pid goes if no thread of this process is writing it (its writer
    was an earlier process with a recycled pid). Best effort: errors never fail the save.
    """
    me = os.getpid()
    try:
        with os.scandir(directory) as it:
            candidates = [
                (e.path, e.inode(), pid)
                for e in it
                if (pid := _temp_owner(e.name, name)) is not None
                and e.is_file(follow_symlinks=False)
            ]
    except OSError:
        return
    for tmp, inode, pid in candidates:
        try:
            if pid == me:
                with _temps_lock:
                    if tmp not in _temps_in_progress:
                        os.unlink(tmp)
            elif not _pid_alive(pid) and os.lstat(tmp).st_ino == inode:
                # the inode check narrows the window in which a new process that got the
                # dead pid recreated the name after our probe
                os.unlink(tmp)
        except OSError:
            pass


def _fsync_dir(directory: str) -> None:
    """Make the rename durable (best effort; not possible on every platform)."""
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


# -- decoding -----------------------------------------------------------------------------


def _reject_constant(name):
    raise _error(f"invalid JSON constant {name} in header")


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _error(f"duplicate key {k!r} in header")
        out[k] = v
    return out


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _parse_header(raw: bytes, data_len: int) -> tuple[dict, dict]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _error("header is not valid UTF-8; not a safetensors/ember checkpoint") from None
    try:
        header = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except RecursionError:
        raise _error("header is nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise _error(f"header is not valid JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(header, dict):
        raise _error("header must be a JSON object")
    meta = header.pop("__metadata__", None) or {}
    if not isinstance(meta, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in meta.items()
    ):
        raise _error("__metadata__ must map strings to strings")
    for name, entry in header.items():
        if not isinstance(entry, dict):
            raise _error(f"entry for tensor {name!r} must be an object")
        code = entry.get("dtype")
        if code not in _NP_OF_CODE:
            raise _error(f"unknown or unsupported dtype {code!r} for tensor {name!r}")
        shape = entry.get("shape")
        if not isinstance(shape, list) or not all(_is_int(s) and s >= 0 for s in shape):
            raise _error(f"invalid shape {shape!r} for tensor {name!r}")
        if len(shape) > 64:
            raise _error(f"tensor {name!r} has too many dimensions")
        offsets = entry.get("data_offsets")
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(_is_int(o) for o in offsets)
        ):
            raise _error(f"invalid data_offsets {offsets!r} for tensor {name!r}")
        begin, end = offsets
        if not 0 <= begin <= end <= data_len:
            raise _error(
                f"data_offsets {offsets} of tensor {name!r} are out of range (the data "
                f"section has {data_len} bytes); the file is truncated or corrupt"
            )
        nbytes = math.prod(shape) * _NP_OF_CODE[code].itemsize
        if end - begin != nbytes:
            raise _error(
                f"tensor {name!r} of dtype {code} and shape {shape} needs {nbytes} bytes but "
                f"its data_offsets span {end - begin}"
            )
    return header, meta


_LEGACY_TORCH_MAGIC = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19."


def _describe_foreign(head: bytes) -> str | None:
    if head.startswith(_LEGACY_TORCH_MAGIC[:8]):
        return (
            "this is torch's legacy (pre-1.6, non-zip) checkpoint format, a sequence of pickles; "
            "ember reads only torch's zip format. Re-save it with a current torch.save"
        )
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return (
            "this looks like a plain pickle file; ember never unpickles arbitrary pickles "
            "(unpickling can run arbitrary code). Re-save the data with ember.save or torch.save"
        )
    return None


class _Reader:
    """Random access to the checkpoint bytes of a path or a binary file object."""

    def __init__(self, fh) -> None:
        self.fh = fh
        if not (hasattr(fh, "seekable") and fh.seekable()):
            import io

            self.fh = io.BytesIO(fh.read())
        self.start = self.fh.tell()
        self.size = self.fh.seek(0, os.SEEK_END) - self.start
        self.fh.seek(self.start)

    def read(self, offset: int, n: int) -> bytes:
        self.fh.seek(self.start + offset)
        data = self.fh.read(n)
        if len(data) != n:
            raise _error("unexpected end of file")
        return data

    def read_into(self, offset: int, arr: np.ndarray) -> None:
        if arr.size == 0:
            return
        buf = memoryview(arr.reshape(-1).view(np.uint8))
        self.fh.seek(self.start + offset)
        got = 0
        while got < len(buf):
            n = self.fh.readinto(buf[got:])
            if not n:
                raise _error("unexpected end of file while reading tensor data")
            got += n


def _load_from(reader: _Reader):
    if reader.size < 8:
        raise _error(f"file is too short ({reader.size} bytes) to be a checkpoint")
    head = reader.read(0, 8)
    (n,) = struct.unpack("<Q", head)
    if n > reader.size - 8 or n > _MAX_HEADER or n < 2:
        foreign = _describe_foreign(head)
        if foreign:
            raise _error(foreign)
        raise _error(
            f"invalid header length {n} for a file of {reader.size} bytes; not a "
            "safetensors/ember checkpoint, or the file is truncated"
        )
    header, meta = _parse_header(reader.read(8, n), reader.size - 8 - n)

    data_start = 8 + n
    tensors: dict[str, np.ndarray] = {}
    for name, entry in header.items():
        dt = _NP_OF_CODE[entry["dtype"]]
        try:
            arr = np.empty(entry["shape"], dtype=dt)
        except (ValueError, OverflowError, MemoryError):
            raise _error(f"tensor {name!r} has an unusable shape {entry['shape']}") from None
        reader.read_into(data_start + entry["data_offsets"][0], arr)
        if not arr.dtype.isnative:
            arr = arr.astype(arr.dtype.newbyteorder("="))
        tensors[name] = arr

    structure_text = meta.get(_STRUCTURE_KEY)
    if structure_text is None:  # a plain safetensors file: a flat dict of tensors
        return {name: Tensor._wrap(arr) for name, arr in tensors.items()}
    try:
        structure = json.loads(structure_text, parse_constant=_reject_constant)
    except RecursionError:
        raise _error("structure metadata is nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise _error(f"structure metadata is not valid JSON ({exc.msg})") from None
    try:
        return _Decoder(tensors).decode(structure)
    except RecursionError:
        raise _error("structure metadata is nested too deeply") from None


class _Decoder:
    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.arrays = arrays
        self.made: dict[tuple[str, str], Any] = {}

    def _get(self, kind: str, name) -> Any:
        if not isinstance(name, str) or name not in self.arrays:
            raise _error(f"structure refers to a missing tensor {name!r}")
        key = (kind, name)
        if key not in self.made:
            self.made[key] = (
                Tensor._wrap(self.arrays[name]) if kind == "tensor" else self.arrays[name]
            )
        return self.made[key]

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            raise _error("malformed structure metadata (bare list)")
        if not isinstance(node, dict) or len(node) not in (1, 2):
            raise _error("malformed structure metadata")
        if "tensor" in node:
            t = self._get("tensor", node["tensor"])
            rg = node.get("requires_grad", False)
            if not isinstance(rg, bool) or set(node) - {"tensor", "requires_grad"}:
                raise _error("malformed tensor entry in structure metadata")
            if rg:
                if t._data.dtype.kind not in "fcV":
                    raise _error("requires_grad set on a non-floating tensor")
                t._rg = True
            return t
        if len(node) != 1:
            raise _error("malformed structure metadata")
        ((tag, value),) = node.items()
        if tag == "ndarray":
            return self._get("ndarray", value)
        if tag == "float":
            if value not in ("inf", "-inf", "nan"):
                raise _error(f"invalid float {value!r} in structure metadata")
            return float(value)
        if tag == "dtype":
            if value not in _CODE_OF:
                raise _error(f"unknown dtype {value!r} in structure metadata")
            return _dtype._by_name(value)
        if tag in ("list", "tuple"):
            if not isinstance(value, list):
                raise _error(f"malformed {tag} in structure metadata")
            items = [self.decode(v) for v in value]
            return items if tag == "list" else tuple(items)
        if tag in ("dict", "odict"):
            if not isinstance(value, list):
                raise _error("malformed dict in structure metadata")
            out = OrderedDict() if tag == "odict" else {}
            for pair in value:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise _error("malformed dict item in structure metadata")
                key = self.decode(pair[0])
                try:
                    hash(key)
                except TypeError:
                    raise _error("unhashable dict key in structure metadata") from None
                out[key] = self.decode(pair[1])
            return out
        raise _error(f"unknown tag {tag!r} in structure metadata")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **kwargs):
    """Load a checkpoint written by ``torch.save`` or ``ember.save`` (or a safetensors file).

    ``f`` is a path or a readable binary file. torch's zip checkpoints are read with torch's
    ``weights_only=True`` rules: only tensors, parameters, numbers, strings, containers,
    ``torch.Size``, devices, dtypes and globals allowed with ``add_safe_globals``; anything
    else raises ``pickle.UnpicklingError`` naming the refused global, and nothing in the file
    is ever executed, whatever ``weights_only`` says. As in torch, NumPy arrays, dtypes and
    scalars load with ``weights_only=False``, or with ``weights_only=True`` once NumPy's
    globals are allowlisted; ember rebuilds them with its own checked code either way.
    Malformed files raise ``ValueError``.
    ``map_location`` may name or map to the CPU only (a CUDA target raises torch's CPU-build
    ``RuntimeError``); a callable is called as in torch. ``pickle_module`` and ``mmap`` are
    accepted for compatibility: tensors are always read into fresh memory.

    Example:
        >>> import ember, io
        >>> buf = io.BytesIO()
        >>> ember.save({"layer": {"bias": ember.zeros(2)}, "epochs": [1, 2.5, None]}, buf)
        >>> _ = buf.seek(0)
        >>> ember.load(buf)
        {'layer': {'bias': tensor([0., 0.])}, 'epochs': [1, 2.5, None]}
    """
    if hasattr(f, "read"):
        return _load_any(_Reader(f), map_location, weights_only)
    with open(os.fspath(f), "rb") as fh:
        return _load_any(_Reader(fh), map_location, weights_only)


def _load_any(reader: _Reader, map_location, weights_only):
    head = reader.read(0, 4) if reader.size >= 4 else b""
    if _torch_zip.is_torch_zip(head):
        reader.fh.seek(reader.start)
        return _torch_zip.load_zip(reader.fh, reader.size, map_location, weights_only is not False)
    _torch_zip.check_map_location(map_location)
    return _load_from(reader)
