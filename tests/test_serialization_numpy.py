"""NumPy arrays, dtypes and scalars inside torch-format checkpoints.

ember.save pickles them as torch's pickler does (NumPy's own ``__reduce__``), and ember.load
rebuilds them through checked stand-ins for NumPy's reconstruction globals: with
``weights_only=False``, or with ``weights_only=True`` once the globals are allowlisted, as
torch requires. Checked in both directions against real torch; malicious pickles that use
NumPy's globals (or ride along with NumPy data) are still refused and never run.
"""

import io
import os
import pickle
import random
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember.serialization import load, safe_globals, save

torch = pytest.importorskip("torch")

_CORE = np._core if hasattr(np, "_core") else np.core
RECONSTRUCT = _CORE.multiarray._reconstruct
SCALAR = _CORE.multiarray.scalar


def _dtype_classes(*specs) -> list:
    return [type(np.dtype(s)) for s in specs]


# what accelerate allowlists around torch.load (accelerate.utils.other.TORCH_SAFE_GLOBALS)
ACCELERATE_GLOBALS = [RECONSTRUCT, np.ndarray, np.dtype, *_dtype_classes("u4")]
ALL_GLOBALS = [
    bytes,  # protocol 2 pickles b"" (an empty array's data) as bytes()
    RECONSTRUCT,
    SCALAR,
    np.ndarray,
    np.dtype,
    *_dtype_classes("b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"),
    *_dtype_classes("f2", "f4", "f8", "c8", "c16", "U1", "S1"),
]


def _objects() -> dict:
    return {
        "rng": np.random.RandomState(7).get_state(),
        "py": random.Random(3).getstate(),
        "matrix": np.arange(6.0).reshape(2, 3),
        "fortran": np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3)),
        "view": np.arange(10, dtype=np.int32)[::3],
        "scalar0d": np.array(2.5, dtype=np.float32),
        "empty": np.zeros((0, 3), dtype=np.uint8),
        "bools": np.array([True, False, True]),
        "big_endian": np.arange(3, dtype=">i4"),
        "complex": np.array([1 + 2j, -0.5j], dtype=np.complex64),
        "half": np.array([0.5, -1.0], dtype=np.float16),
        "u64": np.array([2**64 - 1], dtype=np.uint64),
        "text": np.array(["ab", "é"]),
        "raw": np.array([b"xy", b"z"]),
        "dtypes": [np.dtype("float32"), np.dtype(">u4"), np.dtype("bool"), np.dtype("U3")],
        "scalars": [
            np.float64(1.5),
            np.float32(-0.0),
            np.int64(-3),
            np.uint8(255),
            np.bool_(True),
            np.complex128(1 - 1j),
            np.float16(0.25),
            np.str_("hé"),
            np.bytes_(b"q"),
        ],
        "nested": OrderedDict(a=(np.arange(2), {"s": np.int32(4)})),
    }


def _assert_same(a, b, path="root"):
    assert type(a) is type(b), (path, type(a), type(b))
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.dtype.str == b.dtype.str, path
        assert a.shape == b.shape and a.strides == b.strides, path
        assert a.tobytes() == b.tobytes(), path
        assert b.flags.writeable, path
    elif isinstance(a, np.dtype):
        assert a.str == b.str, path
    elif isinstance(a, np.generic):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), path
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            _assert_same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{path}[{i}]")
    else:
        assert a == b, path


def _torch_bytes(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def _ember_bytes(obj) -> bytes:
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def _torch_load(data: bytes, weights_only: bool, allow=()):
    with torch.serialization.safe_globals(list(allow)):
        return torch.load(io.BytesIO(data), weights_only=weights_only)


def _ember_load(data: bytes, weights_only, allow=()):
    with safe_globals(list(allow)):
        return load(io.BytesIO(data), weights_only=weights_only)


# -- both directions with real torch --------------------------------------------------------


def test_ember_reads_what_torch_writes():
    obj = _objects()
    data = _torch_bytes(obj)
    expected = _torch_load(data, weights_only=False)
    _assert_same(expected, _ember_load(data, weights_only=False))
    _assert_same(expected, _ember_load(data, weights_only=True, allow=ALL_GLOBALS))


def test_torch_reads_what_ember_writes():
    obj = _objects()
    expected = _torch_load(_torch_bytes(obj), weights_only=False)
    data = _ember_bytes(obj)
    _assert_same(expected, _torch_load(data, weights_only=False))
    _assert_same(expected, _torch_load(data, weights_only=True, allow=ALL_GLOBALS))
    _assert_same(expected, _ember_load(data, weights_only=False))


def test_ember_writes_the_globals_calls_and_builds_torch_writes():
    import pickletools

    def ops(data):
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            pkl = next(zf.read(n) for n in zf.namelist() if n.endswith("/data.pkl"))
        # (memo bookkeeping differs: torch also memoizes and reuses strings and tuples)
        keep = {"GLOBAL", "REDUCE", "BUILD"}
        return [(op.name, arg) for op, arg, _ in pickletools.genops(pkl) if op.name in keep]

    obj = {"a": np.arange(4, dtype=np.uint32), "d": np.dtype(">f8"), "s": np.float64(1.5)}
    assert ops(_ember_bytes(obj)) == ops(_torch_bytes(obj))
    assert ("GLOBAL", f"{RECONSTRUCT.__module__} _reconstruct") in ops(_ember_bytes(obj))


def test_tensors_and_numpy_together_both_ways():
    e_obj = {"w": ember.arange(4.0).reshape(2, 2), "np": np.arange(3.0), "s": np.int64(2)}
    got = _torch_load(_ember_bytes(e_obj), weights_only=False)
    assert got["w"].tolist() == [[0.0, 1.0], [2.0, 3.0]]
    _assert_same(e_obj["np"], got["np"])
    _assert_same(e_obj["s"], got["s"])
    t_obj = {"w": torch.arange(4.0).reshape(2, 2), "np": np.arange(3.0), "s": np.int64(2)}
    got = _ember_load(_torch_bytes(t_obj), weights_only=False)
    assert isinstance(got["w"], ember.Tensor) and got["w"].tolist() == [[0.0, 1.0], [2.0, 3.0]]
    _assert_same(t_obj["np"], got["np"])
    _assert_same(t_obj["s"], got["s"])


def test_rng_states_round_trip_and_restore_the_generators():
    # what accelerate's save_state writes, and how its load() reads it back
    np.random.seed(5)
    random.seed(5)
    states = {
        "step": 3,
        "random_state": random.getstate(),
        "numpy_random_seed": np.random.get_state(),
    }
    want_np, want_py = np.random.rand(4), random.random()
    for writer in (_ember_bytes, _torch_bytes):
        data = writer(states)
        for reader in (_ember_load, _torch_load):
            got = reader(data, weights_only=True, allow=ACCELERATE_GLOBALS)
            np.random.set_state(got["numpy_random_seed"])
            random.setstate(got["random_state"])
            assert np.array_equal(np.random.rand(4), want_np)
            assert random.random() == want_py
            assert got["step"] == 3


def test_the_same_array_twice_loads_as_one_object():
    a = np.arange(3)
    for data in (_ember_bytes({"x": a, "y": a}), _torch_bytes({"x": a, "y": a})):
        got = load(io.BytesIO(data), weights_only=False)
        assert got["x"] is got["y"]


def test_numpy_1_spelling_is_read():
    # NumPy 1 names its module numpy.core.multiarray; the file says so
    data = _ember_bytes({"a": np.arange(3.0), "s": np.int16(7)})
    members = _members(data)
    pkl = members["archive/data.pkl"]
    assert b"numpy._core.multiarray" in pkl or b"numpy.core.multiarray" in pkl
    members["archive/data.pkl"] = pkl.replace(b"numpy._core.multiarray", b"numpy.core.multiarray")
    got = load(io.BytesIO(_zip(members)), weights_only=False)
    _assert_same({"a": np.arange(3.0), "s": np.int16(7)}, got)


def test_dtype_singletons_are_never_modified():
    before = np.dtype("f8").str
    got = load(
        io.BytesIO(_ember_bytes([np.dtype(">f8"), np.arange(2, dtype=">f8")])), weights_only=False
    )
    assert got[0].str == ">f8"
    assert np.dtype("f8").str == before == "<f8"
    # a file asking for no copy (dtype("f8", False, False)) still gets a fresh dtype
    data = _with_pickle(
        _Reduce(np.dtype, ("f8", False, False), (3, ">", None, None, None, -1, -1, 0))
    )
    assert load(io.BytesIO(data), weights_only=False).str == ">f8"
    assert np.dtype("f8").str == "<f8"


def test_bool_bytes_other_than_0_and_1_are_normalised():
    data = _ember_bytes({"b": np.array([True, False, True]), "s": np.bool_(True)})
    pkl = _members(data)["archive/data.pkl"]
    assert pkl.count(b"X\x03\x00\x00\x00\x01\x00\x01") == 1
    pkl = pkl.replace(b"X\x03\x00\x00\x00\x01\x00\x01", b"X\x03\x00\x00\x00\x07\x00\x02")
    assert pkl.count(b"X\x01\x00\x00\x00\x01") == 1
    pkl = pkl.replace(b"X\x01\x00\x00\x00\x01", b"X\x01\x00\x00\x00\x05")
    members = _members(data)
    members["archive/data.pkl"] = pkl
    got = load(io.BytesIO(_zip(members)), weights_only=False)
    assert got["b"].view(np.uint8).tolist() == [1, 0, 1]
    assert type(got["s"]) is np.bool_ and got["s"].view(np.uint8) == 1


# -- weights_only=True: as torch, NumPy's globals must be allowlisted ------------------------

_ALLOW_CASES = {
    "none": [],
    "accelerate": ACCELERATE_GLOBALS,
    "no_dtype_class": [RECONSTRUCT, np.ndarray, np.dtype],
    "no_ndarray": [RECONSTRUCT, np.dtype, *_dtype_classes("u4")],
    "no_reconstruct": [np.ndarray, np.dtype, *_dtype_classes("u4")],
    "no_dtype": [RECONSTRUCT, np.ndarray, *_dtype_classes("u4")],
    "scalar": [SCALAR, np.dtype, *_dtype_classes("f8")],
    "scalar_no_class": [SCALAR, np.dtype],
    "all": ALL_GLOBALS,
}
_OBJ_CASES = {
    "array": np.arange(3, dtype=np.uint32),
    "scalar": np.float64(2.5),
    "dtype": np.dtype("float32"),
    "rng": np.random.RandomState(0).get_state(),
}


def _detail(exc: Exception) -> str:
    text = str(exc).split("WeightsUnpickler error:")[-1].strip()
    return text.split("\n")[0].split(" (Or load with")[0].strip()


@pytest.mark.parametrize("objname", sorted(_OBJ_CASES))
@pytest.mark.parametrize("allowname", sorted(_ALLOW_CASES))
def test_weights_only_true_matches_torch(objname, allowname):
    allow = _ALLOW_CASES[allowname]
    data = _torch_bytes(_OBJ_CASES[objname])
    try:
        want = _torch_load(data, weights_only=True, allow=allow)
    except pickle.UnpicklingError as exc:
        want_error = _detail(exc)
    else:
        want_error = None
    try:
        got = _ember_load(data, weights_only=True, allow=allow)
    except pickle.UnpicklingError as exc:
        assert want_error is not None, f"torch loads it, ember refused: {exc}"
        assert _detail(exc) == want_error
    else:
        assert want_error is None, f"torch refuses ({want_error}), ember loaded it"
        _assert_same(want, got)


def test_default_is_weights_only_and_the_error_says_what_to_do():
    data = _ember_bytes({"a": np.arange(2)})
    with pytest.raises(pickle.UnpicklingError) as info:
        load(io.BytesIO(data))
    msg = str(info.value)
    assert "numpy._core.multiarray._reconstruct" in msg or "numpy.core.multiarray" in msg
    assert "add_safe_globals" in msg and "weights_only=False" in msg
    with pytest.raises(pickle.UnpicklingError):
        torch.load(io.BytesIO(data))  # torch refuses it by default too


# -- saving: what is refused ----------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        np.array([1, "a"], dtype=object),
        np.zeros(2, dtype=[("a", "f4")]),
        np.array(["2020-01-01"], dtype="datetime64[D]"),
        np.datetime64("2020-01-01"),
        np.ma.masked_array([1, 2]),
        np.dtype(object),
        np.void(b"ab"),
    ],
    ids=["object", "structured", "datetime", "datetime_scalar", "masked", "object_dtype", "void"],
)
def test_unsupported_numpy_objects_are_refused_before_writing(tmp_path, bad):
    path = tmp_path / "x.pt"
    with pytest.raises(TypeError, match="ember.save"):
        save({"x": bad}, path)
    assert not path.exists() and os.listdir(tmp_path) == []


# -- malicious and malformed files ----------------------------------------------------------


class _Reduce:
    """Pickles as ``func(*args)`` (plus BUILD with ``state`` if given)."""

    def __init__(self, func, args, state=None):
        self.r = (func, args) if state is None else (func, args, state)

    def __reduce__(self):
        return self.r


class _System:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class _RunString:
    """numpy.testing's runstring is a NumPy global that executes code: a classic gadget."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        from numpy.testing._private.utils import runstring

        return (runstring, (f"open({str(self.marker)!r}, 'w').close()", {}))


def _members(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _zip(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _with_pickle(obj) -> bytes:
    members = _members(_ember_bytes({"w": ember.ones(2)}))
    members["archive/data.pkl"] = pickle.dumps(obj, protocol=2)
    return _zip(members)


def _evil_cases(marker) -> dict:
    return {
        "system_beside_arrays": {"rng": np.random.get_state(), "x": _System(marker)},
        "numpy_runstring": {"a": np.arange(2), "x": _RunString(marker)},
        "object_array": np.array([1, "two"], dtype=object),
        "object_scalar": _Reduce(SCALAR, (np.dtype(object), 5)),
        "reconstruct_other_class": _Reduce(RECONSTRUCT, (OrderedDict, (0,), b"b")),
        "reconstruct_big_shape": _Reduce(RECONSTRUCT, (np.ndarray, (10**12,), b"b")),
        "structured_dtype_state": _Reduce(
            np.dtype,
            ("f8", False, True),
            (3, "|", None, ("a",), {"a": (np.dtype("f4"), 0)}, 8, 1, 16),
        ),
        "array_state_size_bomb": _Reduce(
            RECONSTRUCT,
            (np.ndarray, (0,), b"b"),
            (1, (10**12,), np.dtype("f8"), False, b"12345678"),
        ),
        "array_state_object_list": _Reduce(
            RECONSTRUCT,
            (np.ndarray, (0,), b"b"),
            (1, (1,), np.dtype("O"), False, [_System(marker)]),
        ),
        "dtype_from_class": _Reduce(np.dtype, (np.float64, False, True)),
        "random_state_object": np.random.RandomState(0),
    }


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize(
    "case",
    sorted(_evil_cases("m")),
)
def test_malicious_pickles_are_refused_and_never_run(tmp_path, case, weights_only):
    marker = tmp_path / "pwned"
    data = _with_pickle(_evil_cases(marker)[case])
    with pytest.raises((pickle.UnpicklingError, ValueError), match="ember.load"):
        _ember_load(data, weights_only=weights_only, allow=ALL_GLOBALS if weights_only else ())
    assert not marker.exists()


def test_a_numpy_array_built_twice_is_refused():
    # BUILD on an already built array would overwrite its contents
    pkl = pickle.dumps(np.arange(2, dtype=np.int64), protocol=2)
    assert pkl.endswith(b"b.")
    for state in (b"N", pickle.dumps(None, protocol=2)[2:-1]):
        with pytest.raises(pickle.UnpicklingError, match="ember.load"):
            load(io.BytesIO(_with_raw_pickle(pkl[:-1] + state + b"b.")), weights_only=False)


def _with_raw_pickle(pkl: bytes) -> bytes:
    members = _members(_ember_bytes({"w": ember.ones(2)}))
    members["archive/data.pkl"] = pkl
    return _zip(members)


def test_corrupted_numpy_checkpoints_only_raise_load_errors():
    allowed = (ValueError, pickle.UnpicklingError, RuntimeError)
    data = _ember_bytes(_objects())
    pkl = _members(data)["archive/data.pkl"]
    rng = np.random.default_rng(0)
    for _ in range(300):
        mutated = bytearray(pkl)
        for _ in range(int(rng.integers(1, 4))):
            mutated[int(rng.integers(len(mutated)))] = int(rng.integers(256))
        members = _members(data)
        members["archive/data.pkl"] = bytes(mutated)
        try:
            load(io.BytesIO(_zip(members)), weights_only=False)
        except allowed:
            pass


def test_allowlisting_pythons_own_encode_keeps_embers_checked_version():
    # accelerate allowlists _codecs.encode around its loads: the file still only gets the
    # text-to-bytes use protocol 2 needs, not any codec it names
    import _codecs

    data = _with_pickle(_Reduce(_codecs.encode, ("abc", "rot13")))
    with safe_globals([_codecs.encode]):
        with pytest.raises(ValueError, match="_codecs.encode"):
            load(io.BytesIO(data))
    got = _ember_load(
        _ember_bytes({"b": b"\x00\xff", "rng": np.random.get_state()}),
        True,
        [_codecs.encode, *ACCELERATE_GLOBALS],
    )
    assert got["b"] == b"\x00\xff" and got["rng"][1].dtype == np.uint32
