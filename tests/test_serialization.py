"""ember.serialization: safetensors-layout checkpoints, no pickle, atomic writes."""

import io
import json
import os
import pickle
import signal
import struct
import subprocess
import sys
import textwrap
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import ember
import ember.optim
from ember.serialization import load, save

ALL_DTYPES = [
    ember.float16,
    ember.float32,
    ember.float64,
    ember.complex64,
    ember.complex128,
    ember.uint8,
    ember.int8,
    ember.int16,
    ember.int32,
    ember.int64,
    ember.bool,
]


def _sample(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    np_dtype = dtype.np
    if np_dtype.kind == "b":
        arr = rng.random(shape) > 0.5
    elif np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        arr = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=np_dtype)
    elif np_dtype.kind == "c":
        arr = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    else:
        arr = rng.standard_normal(shape) * 100
    return ember.tensor(np.asarray(arr).astype(np_dtype))


def _nested_state():
    tensors = {
        d.name: _sample(d, shape, i)
        for i, (d, shape) in enumerate(
            zip(
                ALL_DTYPES,
                [(3,), (2, 3), (), (4,), (1, 2, 2), (5,), (0,), (2, 0, 3), (7,), (3, 1), (2, 2)],
            )
        )
    }
    special = ember.tensor([np.inf, -np.inf, np.nan, -0.0, 1e-310], dtype=ember.float64)
    return {
        "model": OrderedDict([("fc.weight", tensors["float32"]), ("fc.bias", tensors["float64"])]),
        "all_dtypes": tensors,
        "special": special,
        "transposed": ember.tensor(np.arange(6.0).reshape(2, 3).T.copy()).t_(),
        "epoch": 12,
        "big_int": 2**62 + 1,
        "lr": 0.1,
        "floats": [float("inf"), float("-inf"), -0.0, 1e-300],
        "name": "run-ü-✓",
        "flags": (True, False, None),
        "int_keys": {0: "zero", 1: [1, (2, 3)], -5: {}},
        "empty": {"list": [], "tuple": (), "dict": {}},
        "dtype": ember.float16,
        "array": np.arange(4, dtype=np.int16),
    }


def _assert_same(a, b, path="root"):
    assert type(a) is type(b), path
    if isinstance(a, ember.Tensor):
        assert a.dtype == b.dtype, path
        assert a.shape == b.shape, path
        assert a.requires_grad == b.requires_grad, path
        np.testing.assert_array_equal(a._data, b._data, err_msg=path)
        assert np.signbit(a._data.real).tolist() == np.signbit(b._data.real).tolist(), path
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, path
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            _assert_same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    else:
        assert a == b, path
        if isinstance(a, float):
            assert np.signbit(a) == np.signbit(b), path


@pytest.mark.parametrize("kind", ["str", "pathlike", "file", "bytesio"])
def test_round_trip_nested_all_dtypes(tmp_path, kind):
    obj = _nested_state()
    path = tmp_path / "ckpt.safetensors"
    if kind == "str":
        save(obj, str(path))
        loaded = load(str(path))
    elif kind == "pathlike":
        save(obj, path)
        loaded = load(path)
    elif kind == "file":
        with open(path, "wb") as fh:
            save(obj, fh)
        with open(path, "rb") as fh:
            loaded = load(fh)
    else:
        buf = io.BytesIO(b"prefix")
        buf.seek(6)
        save(obj, buf, format="safetensors")  # file objects default to torch's format
        buf.seek(6)
        loaded = load(buf)
    _assert_same(obj, loaded)


def test_loaded_tensors_own_their_memory(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    obj = {"a": ember.ones(1000), "b": ember.zeros(3, dtype=ember.int64)}
    save(obj, path)
    loaded = load(path)
    arrays = [loaded["a"]._data, loaded["b"]._data]
    assert not np.shares_memory(arrays[0], arrays[1])
    for arr in arrays:
        assert arr.flags.writeable and arr.flags.owndata or arr.base is not None
        assert not isinstance(arr.base, np.memmap)
    path.write_bytes(b"\0" * path.stat().st_size)  # the file changes; the tensors don't
    np.testing.assert_array_equal(loaded["a"]._data, np.ones(1000))
    loaded["a"]._data[0] = 5  # writable, and independent of the saved tensor
    assert obj["a"]._data[0] == 1


def test_same_tensor_twice_loads_as_one_object_and_requires_grad_kept(tmp_path):
    w = ember.ones(2, requires_grad=True)
    buf = io.BytesIO()
    save({"a": w, "b": [w], "c": w.detach()}, buf)
    buf.seek(0)
    loaded = load(buf)
    assert loaded["a"] is loaded["b"][0]
    assert loaded["a"].requires_grad and loaded["a"].is_leaf
    assert not loaded["c"].requires_grad


def test_plain_safetensors_file_loads_as_flat_dict(tmp_path):
    # a file written by another safetensors writer: no ember structure metadata
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    b = np.array([1, -2], dtype="<i8")
    header = {
        "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "__metadata__": {"format": "pt"},
    }
    raw = json.dumps(header).encode()
    path = tmp_path / "plain.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + a.tobytes() + b.tobytes())
    loaded = load(path)
    assert set(loaded) == {"a", "b"}
    np.testing.assert_array_equal(loaded["a"]._data, a)
    np.testing.assert_array_equal(loaded["b"]._data, b)


def test_file_layout_is_safetensors(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    save({"w": ember.tensor([[1.0, 2.0]]), "meta": {"step": 3}}, path)
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert (8 + n) % 8 == 0
    header = json.loads(raw[8 : 8 + n])
    assert header["w"] == {"dtype": "F32", "shape": [1, 2], "data_offsets": [0, 8]}
    assert isinstance(header["__metadata__"]["ember.structure"], str)
    assert np.frombuffer(raw[8 + n :], dtype="<f4").tolist() == [1.0, 2.0]


def test_safetensors_package_reads_ember_files(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "ckpt.safetensors"
    save({"a": ember.ones(2, 2), "b": {"c": ember.tensor([1, 2], dtype=ember.int8)}}, path)
    loaded = st.load_file(str(path))
    assert set(loaded) == {"a", "b.c"} and loaded["b.c"].dtype == np.int8


def test_optimizer_state_dict_round_trip(tmp_path):
    p = ember.tensor([1.0, -2.0, 3.0], dtype=ember.float64, requires_grad=True)
    opt = ember.optim.Adam([p], lr=0.1, amsgrad=True)
    for _ in range(3):
        p.grad = p.detach() * 2
        opt.step()
    path = tmp_path / "opt.safetensors"
    save({"optimizer": opt.state_dict(), "param": p}, path)
    ckpt = load(path)
    _assert_same(opt.state_dict(), ckpt["optimizer"])
    assert list(ckpt["optimizer"]["state"]) == [0]  # int keys survive
    assert ckpt["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)

    p2 = ckpt["param"]
    opt2 = ember.optim.Adam([p2], lr=0.5)
    opt2.load_state_dict(ckpt["optimizer"])
    for _ in range(3):
        p.grad = p.detach() * 2
        p2.grad = p2.detach() * 2
        opt.step()
        opt2.step()
    np.testing.assert_array_equal(p._data, p2._data)


def test_unsupported_objects_raise_before_touching_the_file(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    save({"w": ember.ones(2)}, path)
    before = path.read_bytes()
    for bad in ({"f": lambda: 0}, {"obj": object()}, {(1, 2): {object(): 1}}, {"c": 1j}):
        with pytest.raises(TypeError, match="ember.save"):
            save(bad, path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["ckpt.safetensors"]


# -- refusing pickles and malformed files ----------------------------------------------------


class _Payload:
    """Unpickling this creates a marker file: evidence that code ran."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_is_refused_and_never_executed(tmp_path, protocol):
    marker = tmp_path / "pwned"
    data = pickle.dumps({"state": _Payload(str(marker))}, protocol=protocol)
    pickle.loads(data)  # sanity: unpickling really would run the payload
    assert marker.exists()
    marker.unlink()

    path = tmp_path / "evil.pt"
    path.write_bytes(data)
    with pytest.raises(ValueError, match="ember.load"):
        load(path)
    with pytest.raises(ValueError, match="ember.load"):
        load(io.BytesIO(data))
    assert not marker.exists()


def test_torch_checkpoint_is_refused_and_never_executed(tmp_path):
    torch = pytest.importorskip("torch")
    marker = tmp_path / "pwned"
    path = tmp_path / "torch.pt"
    torch.save({"w": torch.ones(2), "payload": _Payload(str(marker))}, path)
    # torch's zip format is read with a weights-only unpickler that refuses the payload
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        load(path)
    assert not marker.exists()
    legacy = tmp_path / "legacy.pt"
    torch.save({"payload": _Payload(str(marker))}, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(ValueError, match="pickle"):
        load(legacy)
    assert not marker.exists()


def _valid_bytes():
    buf = io.BytesIO()
    obj = {"w": ember.tensor([1.0, 2.0, 3.0]), "n": {"k": ember.tensor([1, 2])}, "s": 1}
    save(obj, buf, format="safetensors")
    return buf.getvalue()


def _with_header(header: dict, data: bytes = b"\0" * 16) -> bytes:
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


def _structure(node) -> dict:
    return {"__metadata__": {"ember.structure": json.dumps(node)}}


_T = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}

MALFORMED = {
    "empty": b"",
    "short": b"\x01\x02\x03",
    "huge_header_length": struct.pack("<Q", 2**63) + b"{}",
    "header_past_eof": struct.pack("<Q", 100) + b"{}",
    "garbage": bytes(range(256)) * 4,
    "bad_utf8": struct.pack("<Q", 4) + b"\xff\xfe{}",
    "bad_json": struct.pack("<Q", 8) + b'{"a": 1,',
    "json_array": struct.pack("<Q", 2) + b"[]",
    "nan_constant": struct.pack("<Q", 11) + b'{"a": NaN }',
    "unknown_dtype": _with_header({"w": {**_T, "dtype": "Q7"}}),
    "f8_unsupported": _with_header({"w": {**_T, "dtype": "F8_E4M3", "data_offsets": [0, 2]}}),
    "offsets_out_of_range": _with_header({"w": {**_T, "data_offsets": [8, 24]}}),
    "offsets_reversed": _with_header({"w": {**_T, "data_offsets": [8, 0]}}),
    "offsets_size_mismatch": _with_header({"w": {**_T, "data_offsets": [0, 12]}}),
    "offsets_not_ints": _with_header({"w": {**_T, "data_offsets": [0.0, 8.0]}}),
    "negative_shape": _with_header({"w": {**_T, "shape": [-2]}}),
    "shape_not_list": _with_header({"w": {**_T, "shape": 2}}),
    "shape_too_big": _with_header({"w": {**_T, "shape": [0, 2**70], "data_offsets": [0, 0]}}),
    "entry_not_object": _with_header({"w": [1, 2]}),
    "metadata_not_strings": _with_header({"__metadata__": {"a": 1}}),
    "duplicate_keys": struct.pack("<Q", 18) + b'{"a": {}, "a": {}}',
    "structure_bad_json": _with_header({"__metadata__": {"ember.structure": "{"}}),
    "structure_missing_tensor": _with_header(_structure({"tensor": "nope"})),
    "structure_unknown_tag": _with_header(_structure({"pickle": "x"})),
    "structure_bad_float": _with_header(_structure({"float": "1e999999"})),
    "structure_bad_dtype": _with_header(_structure({"dtype": "object"})),
    "structure_dict_not_pairs": _with_header(_structure({"dict": [[1]]})),
    "structure_unhashable_key": _with_header(_structure({"dict": [[{"list": []}, 1]]})),
    "structure_deep": _with_header(
        {"__metadata__": {"ember.structure": '{"list":[' * 5000 + "]}" * 5000}}
    ),
    "truncated": _valid_bytes()[:-5],
    "header_only": _valid_bytes()[: 8 + struct.unpack("<Q", _valid_bytes()[:8])[0]],
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_files_raise_value_error(tmp_path, name):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(MALFORMED[name])
    with pytest.raises(ValueError, match="ember.load"):
        load(path)


def test_random_corruption_only_ever_raises_value_error():
    good = _valid_bytes()
    rng = np.random.default_rng(0)
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(300):
        data = bytearray(good)
        for pos in rng.integers(0, len(data), size=rng.integers(1, 4)):
            data[pos] = rng.integers(0, 256)
        if rng.random() < 0.2:
            data = data[: rng.integers(0, len(data))]
        try:
            load(io.BytesIO(bytes(data)))
            outcomes["loaded"] += 1
        except ValueError:
            outcomes["refused"] += 1
    assert outcomes["refused"] > 0


def test_non_seekable_stream_and_map_location():
    data = _valid_bytes()

    class Stream(io.RawIOBase):
        def __init__(self):
            self._buf = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            chunk = self._buf.read(min(len(b), 7))
            b[: len(chunk)] = chunk
            return len(chunk)

    loaded = load(Stream(), map_location="cpu")
    assert loaded["w"].tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="CPU only"):
        load(io.BytesIO(data), map_location="cuda:0")


# -- atomic writes ---------------------------------------------------------------------------


def test_failed_write_keeps_old_file_and_removes_temp(tmp_path, monkeypatch):
    import ember.serialization as ser

    path = tmp_path / "ckpt.safetensors"
    save({"w": ember.full((100,), 7.0)}, path)
    before = path.read_bytes()

    calls = {"n": 0}

    def failing(fh, chunk):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        fh.write(chunk)

    monkeypatch.setattr(ser, "_CHUNK", 64)
    monkeypatch.setattr(ser, "_write_chunk", failing)
    with pytest.raises(OSError, match="disk full"):
        save({"w": ember.zeros(1000)}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]


def test_new_file_mode_follows_umask_and_existing_mode_is_kept(tmp_path):
    if os.name != "posix":
        pytest.skip("POSIX permissions")
    path = tmp_path / "ckpt.safetensors"
    old = os.umask(0o022)
    try:
        save({"a": 1}, path)
        assert path.stat().st_mode & 0o777 == 0o644
        os.chmod(path, 0o600)
        save({"a": 2}, path)
        assert path.stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)
    assert load(path) == {"a": 2}


def test_save_through_symlink_updates_the_target(tmp_path):
    target = tmp_path / "real.safetensors"
    link = tmp_path / "link.safetensors"
    save({"v": 1}, target)
    try:
        link.symlink_to(target)
    except (OSError, NotImplementedError):
        pytest.skip("symlinks unavailable")
    save({"v": 2}, link)
    assert link.is_symlink() and load(target) == {"v": 2}


_CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    import ember
    import ember.serialization as ser

    ser._CHUNK = 4096
    real_write = ser._write_chunk
    count = [0]

    def slow_write(fh, chunk):
        real_write(fh, chunk)
        count[0] += 1
        if count[0] == 8:
            fh.flush()
            print("WRITING", flush=True)
        time.sleep(0.005)

    ser._write_chunk = slow_write
    ser.save({"w": ember.zeros(1_000_000, dtype=ember.float64), "step": 2}, sys.argv[1])
    print("DONE", flush=True)
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_killed_save_leaves_old_checkpoint_intact(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    old = {"w": ember.tensor(np.full(1000, 7.0)), "step": 1}
    save(old, path)
    before = path.read_bytes()

    env = dict(os.environ)
    src = str(Path(ember.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path)], stdout=subprocess.PIPE, env=env
    )
    try:
        line = proc.stdout.readline()
        assert line == b"WRITING\n"
        temps = [p for p in tmp_path.iterdir() if p.name != "ckpt.safetensors"]
        assert len(temps) == 1 and temps[0].stat().st_size > 0  # mid-write
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL

    assert path.read_bytes() == before
    loaded = load(path)
    _assert_same(old, loaded)
    # a later save over the leftovers still works, replaces the file and removes the litter
    save({"step": 3}, path)
    assert load(path) == {"step": 3}
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]


# -- temporary files: recognisable names, stale ones removed ---------------------------------

_TMP = ".ckpt.safetensors.tmp-"


def _child_env():
    env = dict(os.environ)
    src = str(Path(ember.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _dead_pid():
    """The pid of a child that has exited and been reaped: no such process exists."""
    proc = subprocess.Popen([sys.executable, "-c", ""])
    proc.wait(timeout=30)
    with pytest.raises(ProcessLookupError):
        os.kill(proc.pid, 0)
    return proc.pid


@pytest.fixture
def live_pid():
    """The pid of a child that stays alive (blocked on stdin) for the test's duration."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        yield proc.pid
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_killed_saves_leave_no_temp_files_after_next_save(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    old = {"w": ember.tensor(np.full(1000, 7.0)), "step": 1}
    save(old, path)
    before = path.read_bytes()

    # three writers killed mid-save (run side by side to keep the test fast)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(path)], stdout=subprocess.PIPE, env=_child_env()
        )
        for _ in range(3)
    ]
    try:
        for proc in procs:
            assert proc.stdout.readline() == b"WRITING\n"
        # each live writer has its own temporary; none removed another's
        temps = sorted(p for p in os.listdir(tmp_path) if p != "ckpt.safetensors")
        assert temps == sorted(f"{_TMP}{proc.pid}" for proc in procs)
        for proc in procs:
            os.kill(proc.pid, signal.SIGKILL)
    finally:
        for proc in procs:
            proc.wait(timeout=30)
            proc.stdout.close()
    assert all(proc.returncode == -signal.SIGKILL for proc in procs)
    assert len(os.listdir(tmp_path)) == 4  # the litter this task is about
    assert path.read_bytes() == before

    save({"step": 4, "w": ember.arange(3)}, path)
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]
    _assert_same(load(path), {"step": 4, "w": ember.arange(3)})


def test_temp_files_of_live_processes_are_left_alone(tmp_path, live_pid):
    path = tmp_path / "ckpt.safetensors"
    # pid 1 always exists; unless we run as root, probing it raises PermissionError
    live = [f"{_TMP}{live_pid}", f"{_TMP}{live_pid}.0123456789ab", f"{_TMP}1"]
    for name in live:
        (tmp_path / name).write_bytes(b"partial")
    save({"v": 1}, path)
    save({"v": 2}, path)
    assert sorted(os.listdir(tmp_path)) == sorted(["ckpt.safetensors", *live])
    assert all((tmp_path / name).read_bytes() == b"partial" for name in live)
    assert load(path) == {"v": 2}


def test_permission_error_means_alive_and_lookup_error_means_dead(tmp_path, monkeypatch):
    import ember.serialization as ser

    path = tmp_path / "ckpt.safetensors"
    for name in (f"{_TMP}4242", f"{_TMP}4343"):
        (tmp_path / name).write_bytes(b"partial")
    probed = []

    def fake_kill(pid, sig):
        assert sig == 0  # only ever probed, never signalled
        probed.append(pid)
        raise PermissionError if pid == 4242 else ProcessLookupError

    monkeypatch.setattr(ser.os, "kill", fake_kill)
    if os.name != "posix":
        pytest.skip("other processes' temporaries are only probed on POSIX")
    save({"v": 1}, path)
    assert sorted(probed) == [4242, 4343]
    assert sorted(os.listdir(tmp_path)) == sorted(["ckpt.safetensors", f"{_TMP}4242"])


def test_only_exact_temp_names_of_dead_writers_are_removed(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    dead = _dead_pid()
    stale = [f"{_TMP}{dead}", f"{_TMP}{dead}.0123456789ab"]
    lookalikes = [
        f"{_TMP}abc",
        f"{_TMP}",
        f"{_TMP}0{dead}",
        f"{_TMP}{dead}x",
        f"{_TMP}{dead}.txt",
        f"{_TMP}{dead}.0123456789AB",
        f"{_TMP}{dead}.0123456789ab.x",
        f"{_TMP}-{dead}",
        f"{_TMP}99999999999999999999",
        f".OTHER.tmp-{dead}",
        f".ckpt.safetensors.tmp{dead}",
        f".ckptXsafetensors.tmp-{dead}",  # the dot in NAME is literal, not a wildcard
        f".ckpt.safetensorsX.tmp-{dead}",
        f"ckpt.safetensors.tmp-{dead}",
        f"..ckpt.safetensors.tmp-{dead}",
        ".ckpt.safetensors.0123456789ab.tmp",  # the old temporary name
    ]
    for name in stale + lookalikes:
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / f"{_TMP}{dead}.aaaaaaaaaaaa").mkdir()  # matching, but not a file
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / f"{_TMP}{dead}").write_bytes(b"x")  # another directory

    save({"v": 1}, path)
    expected = ["ckpt.safetensors", "sub", f"{_TMP}{dead}.aaaaaaaaaaaa", *lookalikes]
    assert sorted(os.listdir(tmp_path)) == sorted(expected)
    assert all((tmp_path / name).read_bytes() == b"x" for name in lookalikes)
    assert (tmp_path / "sub" / f"{_TMP}{dead}").exists()


def test_temp_name_during_save_is_dot_name_tmp_pid(tmp_path, monkeypatch):
    import ember.serialization as ser

    path = tmp_path / "ckpt.safetensors"
    seen = []
    real = ser._write_chunk

    def spy(fh, chunk):
        # the directory listing, and whether the open file is the one of that name
        names = os.listdir(tmp_path)
        same = [os.path.samestat(os.fstat(fh.fileno()), os.lstat(tmp_path / n)) for n in names]
        seen.append((names, same))
        real(fh, chunk)

    monkeypatch.setattr(ser, "_write_chunk", spy)
    save({"w": ember.ones(4)}, path)
    assert seen == [([f"{_TMP}{os.getpid()}"], [True])]
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]


def test_own_pid_leftover_is_replaced_but_not_a_concurrent_threads_temp(tmp_path, monkeypatch):
    import ember.serialization as ser

    path = tmp_path / "ckpt.safetensors"
    mine = f"{_TMP}{os.getpid()}"
    # left by an earlier process that had our pid: nothing in this process is writing them
    (tmp_path / mine).write_bytes(b"stale")
    (tmp_path / f"{mine}.0123456789ab").write_bytes(b"stale")
    save({"v": 0}, path)
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]

    # two threads of this process save the same path at once: both temporaries coexist
    both_writing = threading.Barrier(2, timeout=10)
    seen = []
    real = ser._write_chunk

    def rendezvous(fh, chunk):
        both_writing.wait()
        seen.append(sorted(os.listdir(tmp_path)))
        both_writing.wait()
        real(fh, chunk)

    monkeypatch.setattr(ser, "_write_chunk", rendezvous)
    errors = []

    def worker(v):
        try:
            save({"v": v, "w": ember.ones(2)}, path)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(v,)) for v in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors
    assert seen[0] == seen[1]
    names = [n for n in seen[0] if n != "ckpt.safetensors"]
    assert len(names) == 2 and names[0] == mine
    suffix = names[1][len(mine) :]
    assert suffix[0] == "." and len(suffix) == 13 and int(suffix[1:], 16) >= 0
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]
    assert load(path)["v"] in (1, 2)
