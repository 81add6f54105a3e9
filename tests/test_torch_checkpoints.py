"""ember.save/ember.load and PyTorch's checkpoint format, checked against real torch."""

import argparse
import io
import os
import pickle
import struct
import warnings
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.optim
import ember.serialization as ser
from ember.serialization import load, save

torch = pytest.importorskip("torch")

DTYPES = [
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "bool",
]


def _np_sample(name, shape, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(name)
    if dt.kind == "b":
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return (rng.standard_normal(shape) * 10).astype(dt)


def _same(e, t):
    """An ember tensor equals a torch tensor: dtype, shape, strides and values."""
    assert isinstance(e, ember.Tensor), type(e)
    assert str(e.dtype) == str(t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    assert tuple(e.stride()) == tuple(t.stride())
    np.testing.assert_array_equal(e._data, t.detach().resolve_conj().numpy())


def _layers():
    """(name, torch module, ember module, input shape, input dtype) for each stateful layer."""
    return [
        ("Linear", torch.nn.Linear(4, 3), ember.nn.Linear(4, 3), (2, 4)),
        (
            "Conv2d",
            torch.nn.Conv2d(2, 3, 3, padding=1),
            ember.nn.Conv2d(2, 3, 3, padding=1),
            (2, 2, 5, 5),
        ),
        ("BatchNorm1d", torch.nn.BatchNorm1d(3), ember.nn.BatchNorm1d(3), (4, 3)),
        ("BatchNorm2d", torch.nn.BatchNorm2d(2), ember.nn.BatchNorm2d(2), (3, 2, 4, 4)),
        ("LayerNorm", torch.nn.LayerNorm(5), ember.nn.LayerNorm(5), (2, 5)),
        ("Embedding", torch.nn.Embedding(7, 3), ember.nn.Embedding(7, 3), "idx"),
        (
            "Sequential",
            torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)),
            ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU(), ember.nn.Linear(4, 2)),
            (5, 3),
        ),
    ]


def _input(shape, seed=1):
    if shape == "idx":
        return np.array([[0, 3, 6], [2, 2, 1]])
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _train_torch(tm, shape):
    """A few steps so that weights and BatchNorm running stats are not the defaults."""
    opt = torch.optim.SGD(tm.parameters(), lr=0.1)
    for seed in range(3):
        x = torch.from_numpy(_input(shape, seed))
        opt.zero_grad()
        tm(x).float().pow(2).mean().backward()
        opt.step()
    tm.eval()


@pytest.mark.parametrize("name", [layer[0] for layer in _layers()])
def test_torch_trained_state_dict_loads_into_ember(tmp_path, name):
    _, tm, em, shape = next(layer for layer in _layers() if layer[0] == name)
    torch.manual_seed(0)
    _train_torch(tm, shape)
    path = tmp_path / "model.pt"
    torch.save(tm.state_dict(), path)

    sd = load(path)
    assert list(sd) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        _same(sd[k], v)
    result = em.load_state_dict(sd)
    assert not result.missing_keys and not result.unexpected_keys
    em.eval()
    x = _input(shape, 7)
    expected = tm(torch.from_numpy(x)).detach().numpy()
    got = em(ember.tensor(x))._data
    assert got.dtype == expected.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    for p in em.parameters():
        assert p.dtype == ember.float32


@pytest.mark.parametrize("name", [layer[0] for layer in _layers()])
def test_ember_state_dict_loads_into_torch(tmp_path, name):
    _, tm, em, shape = next(layer for layer in _layers() if layer[0] == name)
    if "BatchNorm" in name:  # non-default running statistics
        em.train()
        em(ember.tensor(_input(shape, 3)))
    em.eval()
    path = tmp_path / "model.pth"
    save(em.state_dict(), path)
    assert zipfile.is_zipfile(path)

    sd = torch.load(path)  # weights_only=True, torch's default
    tm.load_state_dict(sd)
    tm.eval()
    for k, v in em.state_dict().items():
        _same(v, sd[k])
    x = _input(shape, 7)
    np.testing.assert_allclose(
        em(ember.tensor(x))._data,
        tm(torch.from_numpy(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_optimizer_state_dicts_both_ways(tmp_path, name):
    kw = {"lr": 0.1, "momentum": 0.9} if name == "SGD" else {"lr": 0.1}
    init = _np_sample("float32", (3, 2), 5)
    tp = torch.nn.Parameter(torch.from_numpy(init.copy()))
    ep = ember.nn.Parameter(ember.tensor(init.copy()))
    topt = getattr(torch.optim, name)([tp], **kw)
    eopt = getattr(ember.optim, name)([ep], **kw)
    for seed in range(2):
        g = _np_sample("float32", (3, 2), seed)
        tp.grad, ep.grad = torch.from_numpy(g.copy()), ember.tensor(g.copy())
        topt.step()
        eopt.step()

    # torch -> ember
    torch.save(topt.state_dict(), tmp_path / "t.pt")
    sd = load(tmp_path / "t.pt")
    assert sd["param_groups"] == [
        {k: v for k, v in g.items()} for g in topt.state_dict()["param_groups"]
    ]
    for k, v in topt.state_dict()["state"][0].items():
        _same(sd["state"][0][k], v)
    eopt2 = getattr(ember.optim, name)([ep], **kw)
    eopt2.load_state_dict(sd)

    # ember -> torch
    save(eopt.state_dict(), tmp_path / "e.pt")
    tsd = torch.load(tmp_path / "e.pt")
    assert tsd["param_groups"][0]["params"] == [0]
    topt2 = getattr(torch.optim, name)([tp], **kw)
    topt2.load_state_dict(tsd)

    g = _np_sample("float32", (3, 2), 9)
    tp.grad, ep.grad = torch.from_numpy(g.copy()), ember.tensor(g.copy())
    topt2.step()
    eopt2.step()
    np.testing.assert_allclose(ep._data, tp.detach().numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (3,), (2, 3)])
def test_every_dtype_both_ways(tmp_path, dtype, shape):
    arr = np.asarray(_np_sample(dtype, shape))
    # torch -> ember
    t = torch.from_numpy(arr.copy())
    torch.save({"t": t, "tt": t.T if t.dim() == 2 else t}, tmp_path / "t.pt")
    got = load(tmp_path / "t.pt")
    _same(got["t"], t)
    _same(got["tt"], t.T if t.dim() == 2 else t)
    # ember -> torch
    e = ember.tensor(arr.copy())
    save({"e": e, "et": e.t() if e.dim() == 2 else e}, tmp_path / "e.pt")
    back = torch.load(tmp_path / "e.pt")
    _same(e, back["e"])
    _same(e.t() if e.dim() == 2 else e, back["et"])
    # and ember -> ember
    again = load(tmp_path / "e.pt")
    _same(again["e"], back["e"])


def test_torch_views_share_one_storage_in_ember(tmp_path):
    x = torch.arange(12.0)
    obj = {"x": x, "tail": x[1:], "grid_t": x.view(3, 4).t(), "col": x.view(3, 4)[:, 1]}
    torch.save(obj, tmp_path / "v.pt")
    got = load(tmp_path / "v.pt")
    for k in obj:
        _same(got[k], obj[k])
    base = got["x"]._data
    for k in ("tail", "grid_t", "col"):
        assert np.shares_memory(base, got[k]._data), k
        assert got[k]._data.flags.writeable
    got["x"][1] = 100.0  # one memory: a write through one view shows in the others
    assert got["tail"][0].item() == 100.0
    assert got["grid_t"][1, 0].item() == 100.0
    assert got["col"][0].item() == 100.0


def test_ember_views_share_one_storage_in_torch(tmp_path):
    x = ember.arange(12.0)
    obj = {"x": x, "tail": x[1:], "grid_t": x.view(3, 4).t(), "col": x.view(3, 4)[:, 1]}
    save(obj, tmp_path / "v.pt")
    with zipfile.ZipFile(tmp_path / "v.pt") as zf:
        storages = [n for n in zf.namelist() if "/data/" in n]
    assert storages == ["archive/data/0"]  # written once
    got = torch.load(tmp_path / "v.pt")
    for k in obj:
        _same(obj[k], got[k])
    ptr = got["x"].untyped_storage().data_ptr()
    assert all(got[k].untyped_storage().data_ptr() == ptr for k in obj)
    assert got["tail"].storage_offset() == 1

    # a view saved without its base stores only the bytes it spans
    save({"tail": x[8:]}, tmp_path / "slice.pt")
    t = torch.load(tmp_path / "slice.pt")["tail"]
    assert t.untyped_storage().nbytes() == 4 * 4 and t.tolist() == [8.0, 9.0, 10.0, 11.0]


def test_ember_round_trip_keeps_sharing_and_identity(tmp_path):
    w = ember.ones(2, 3, requires_grad=True)
    p = ember.nn.Parameter(ember.zeros(3))
    obj = {"w": w, "again": [w], "detached": w.detach(), "p": p, "ps": (p,)}
    save(obj, tmp_path / "a.pt")
    got = load(tmp_path / "a.pt")
    assert got["w"] is got["again"][0] and got["p"] is got["ps"][0]
    assert got["w"].requires_grad and got["w"].is_leaf and not got["detached"].requires_grad
    assert np.shares_memory(got["w"]._data, got["detached"]._data)
    assert type(got["p"]) is ember.nn.Parameter and got["p"].requires_grad
    t = torch.load(tmp_path / "a.pt")
    assert isinstance(t["p"], torch.nn.Parameter) and t["w"].requires_grad


def test_plain_values_and_containers_both_ways(tmp_path):
    value = {
        "int": 3,
        "big": 2**70,
        "neg": -(2**40),
        "float": 0.1,
        "inf": float("inf"),
        "str": "ü✓",
        "bytes": b"\x00\xffab",
        "none": None,
        "flags": (True, False),
        "tuple4": (1, 2, 3, 4),
        "set": {1, 2, 3},
        "complex": 1 - 2j,
        "nested": [{"a": [1, [2, {"b": ()}]]}],
        "od": OrderedDict([("z", 1), ("a", 2)]),
        5: "int key",
        (1, "x"): "tuple key",
    }
    emb = dict(value, size=ember.Size([2, 3]), dev=ember.device("cpu"), dt=ember.float16)
    save(emb, tmp_path / "e.pt")
    t = torch.load(tmp_path / "e.pt")
    assert {k: v for k, v in t.items() if k not in ("size", "dev", "dt")} == value
    assert t["size"] == torch.Size([2, 3]) and isinstance(t["size"], torch.Size)
    assert t["dev"] == torch.device("cpu") and t["dt"] is torch.float16
    assert isinstance(t["od"], OrderedDict)
    assert load(tmp_path / "e.pt") == emb

    tv = dict(value, size=torch.Size([2, 3]), dev=torch.device("cpu"), dt=torch.float16)
    torch.save(tv, tmp_path / "t.pt")
    got = load(tmp_path / "t.pt")
    assert got == emb
    assert isinstance(got["size"], ember.Size) and got["dt"] is ember.float16
    assert list(got["od"]) == ["z", "a"]


def test_state_dict_metadata_survives(tmp_path):
    m = torch.nn.Sequential(torch.nn.Linear(2, 2))
    torch.save(m.state_dict(), tmp_path / "m.pt")
    sd = load(tmp_path / "m.pt")
    assert sd._metadata == m.state_dict()._metadata
    save(sd, tmp_path / "again.pt")
    assert torch.load(tmp_path / "again.pt")._metadata == m.state_dict()._metadata


# -- formats, paths and options -------------------------------------------------------------


def test_format_choice(tmp_path):
    obj = {"w": ember.ones(2)}
    for name in ("a.pt", "a.pth", "a.bin", "noext"):
        save(obj, tmp_path / name)
        assert (tmp_path / name).read_bytes()[:4] == b"PK\x03\x04", name
    save(obj, tmp_path / "a.safetensors")
    save(obj, tmp_path / "b.pt", format="safetensors")
    save(obj, tmp_path / "c.safetensors", format="torch")
    assert (tmp_path / "a.safetensors").read_bytes()[:4] != b"PK\x03\x04"
    assert (tmp_path / "b.pt").read_bytes()[:4] != b"PK\x03\x04"
    assert (tmp_path / "c.safetensors").read_bytes()[:4] == b"PK\x03\x04"
    buf = io.BytesIO()
    save(obj, buf)
    assert buf.getvalue()[:4] == b"PK\x03\x04"
    for f in ("a.pt", "a.safetensors", "b.pt", "c.safetensors"):
        assert load(tmp_path / f)["w"].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="unknown format"):
        save(obj, tmp_path / "x.pt", format="npz")


def test_torch_reads_ember_files_with_mmap(tmp_path):
    save({"w": ember.arange(100.0), "b": ember.ones(3, dtype=ember.int8)}, tmp_path / "m.pt")
    got = torch.load(tmp_path / "m.pt", mmap=True)
    assert got["w"].tolist() == list(map(float, range(100)))


def test_whole_module_and_optimizer_are_refused(tmp_path):
    m = ember.nn.Linear(2, 2)
    with pytest.raises(TypeError, match="state_dict"):
        save(m, tmp_path / "m.pt")
    with pytest.raises(TypeError, match="state_dict"):
        save({"model": m}, tmp_path / "m.pt")
    with pytest.raises(TypeError, match="state_dict"):
        save(ember.optim.SGD(m.parameters(), lr=0.1), tmp_path / "m.pt")
    for bad in (np.ones(2, dtype=object), frozenset([1]), object(), lambda: 0):
        with pytest.raises(TypeError, match="ember.save"):
            save({"x": bad}, tmp_path / "m.pt")
    assert os.listdir(tmp_path) == []


def test_map_location(tmp_path):
    torch.save({"w": torch.ones(2)}, tmp_path / "w.pt")
    path = tmp_path / "w.pt"
    for ml in (
        "cpu",
        ember.device("cpu"),
        {"cuda:0": "cpu"},
        lambda s, loc: s,
        lambda s, loc: None,
    ):
        assert load(path, map_location=ml)["w"].tolist() == [1.0, 1.0]
    for ml in ("cuda", "cuda:0", ember.device("cuda", 0), {"cpu": "cuda:1"}):
        with pytest.raises(RuntimeError, match="CUDA device"):
            load(path, map_location=ml)
    with pytest.raises(RuntimeError, match="CPU only"):
        load(path, map_location="meta")


def test_cuda_saved_checkpoint_needs_map_location(tmp_path):
    path = tmp_path / "w.pt"
    torch.save({"w": torch.arange(3.0)}, path)
    members = _members(path)
    pkl = members["w/data.pkl"]
    members["w/data.pkl"] = pkl.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    _write_zip(path, members)
    with pytest.raises(RuntimeError, match="map_location"):
        load(path)
    assert load(path, map_location="cpu")["w"].tolist() == [0.0, 1.0, 2.0]
    assert load(path, map_location={"cuda:0": "cpu"})["w"].tolist() == [0.0, 1.0, 2.0]


def test_big_endian_checkpoint(tmp_path):
    path = tmp_path / "be.pt"
    torch.save(
        {"w": torch.tensor([1.5, -2.0]), "i": torch.tensor([1, 256], dtype=torch.int16)}, path
    )
    members = _members(path)
    members["be/byteorder"] = b"big"
    for name, data in members.items():
        if name.startswith("be/data/"):
            width = 4 if name.endswith("/0") else 2
            members[name] = np.frombuffer(data, f"<u{width}").byteswap().tobytes()
    _write_zip(path, members)
    got = load(path)
    assert got["w"].tolist() == [1.5, -2.0] and got["i"].tolist() == [1, 256]
    assert torch.load(path)["i"].tolist() == [1, 256]  # torch agrees


def test_weights_only_false_still_never_runs_code(tmp_path):
    marker = tmp_path / "pwned"
    torch.save({"w": torch.ones(1), "x": _System(f"touch {marker}")}, tmp_path / "evil.pt")
    for wo in (None, True, False):
        with pytest.raises(pickle.UnpicklingError, match="system") as info:
            load(tmp_path / "evil.pt", weights_only=wo)
        assert "Weights only load failed" in str(info.value)
        if wo is False:
            assert "even with weights_only=False" in str(info.value)
    assert not marker.exists()


def test_safe_globals(tmp_path):
    ns = argparse.Namespace(lr=0.1, layers=[1, 2])
    torch.save({"args": ns, "w": torch.ones(1)}, tmp_path / "ns.pt")
    with pytest.raises(pickle.UnpicklingError, match=r"argparse\.Namespace"):
        load(tmp_path / "ns.pt")
    with ser.safe_globals([argparse.Namespace]):
        assert argparse.Namespace in ser.get_safe_globals()
        assert load(tmp_path / "ns.pt")["args"] == ns
    assert argparse.Namespace not in ser.get_safe_globals()
    ser.add_safe_globals([(argparse.Namespace, "argparse.Namespace")])
    try:
        assert load(tmp_path / "ns.pt")["args"] == ns
    finally:
        ser.clear_safe_globals()
    assert ser.get_safe_globals() == []
    # blocked modules stay blocked even when allowlisted
    ser.add_safe_globals([os.system])
    try:
        with pytest.raises(pickle.UnpicklingError, match="blocked"):
            load(io.BytesIO(_torch_bytes({"x": _System("true")})))
    finally:
        ser.clear_safe_globals()


def test_unsupported_torch_dtype_is_refused_clearly(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "ComplexHalf support is experimental"
        torch.save({"w": torch.ones(2, dtype=torch.complex32)}, tmp_path / "c32.pt")
    with pytest.raises(ValueError, match="complex32"):
        load(tmp_path / "c32.pt")


def test_torch_unsigned_checkpoints_load(tmp_path):
    values = [0, 1, 65535]
    for dtype in (torch.uint16, torch.uint32, torch.uint64):
        torch.save({"w": torch.tensor(values, dtype=dtype)}, tmp_path / "u.pt")
        w = load(tmp_path / "u.pt")["w"]
        assert str(w.dtype) == str(dtype) and w.tolist() == values


def test_legacy_torch_format_is_refused(tmp_path):
    torch.save({"w": torch.ones(2)}, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(ValueError, match="legacy"):
        load(tmp_path / "old.pt")


def test_failed_zip_write_keeps_old_file_and_removes_temp(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    save({"w": ember.full((100,), 7.0)}, path)
    before = path.read_bytes()

    def failing(fh, chunk):
        raise OSError("disk full")

    monkeypatch.setattr(ser, "_write_chunk", failing)
    with pytest.raises(OSError, match="disk full"):
        save({"w": ember.zeros(1000)}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.pt"]


# -- malicious files ---------------------------------------------------------------------------


class _System:
    """Unpickling this runs a shell command."""

    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


class _Eval:
    def __init__(self, code):
        self.code = code

    def __reduce__(self):
        return (eval, (self.code,))


def _torch_bytes(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def _members(path) -> dict:
    with zipfile.ZipFile(path) as zf:
        return {i.filename: zf.read(i) for i in zf.infolist()}


def _write_zip(path, members: dict) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


@pytest.mark.parametrize("payload", ["system", "eval", "nested"])
def test_code_running_pickles_are_refused_without_effect(tmp_path, payload):
    marker = tmp_path / "pwned"
    cmd = f"touch {marker}"
    obj = {
        "system": {"w": torch.ones(2), "x": _System(cmd)},
        "eval": [torch.ones(1), _Eval(f"open({str(marker)!r}, 'w')")],
        "nested": OrderedDict(a={"deep": [(_System(cmd),)]}),
    }[payload]
    data = _torch_bytes(obj)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        load(io.BytesIO(data))
    assert not marker.exists()


def test_hand_written_reduce_payload_in_data_pkl(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "ok.pt"
    torch.save({"w": torch.ones(2)}, path)
    members = _members(path)
    for proto in (2, 4):
        evil = pickle.dumps(_System(f"touch {marker}"), protocol=proto)
        members["ok/data.pkl"] = evil
        _write_zip(path, members)
        with pytest.raises(pickle.UnpicklingError, match="system"):
            load(path)
    # the C-level opcodes that call objects are refused too (INST / OBJ)
    members["ok/data.pkl"] = b"(S'touch " + str(marker).encode() + b"'\nios\nsystem\n."
    _write_zip(path, members)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        load(path)
    assert not marker.exists()


def test_allowed_globals_cannot_be_abused(tmp_path):
    path = tmp_path / "ok.pt"
    torch.save({"w": torch.ones(2)}, path)
    members = _members(path)
    attacks = [
        # bytearray(10**12): a terabyte allocation through an allowed global
        b"\x80\x02c__builtin__\nbytearray\n\x8a\x06\x00\x10\xa5\xd4\xe8\x00\x85R.",
        # REDUCE on an object that is not an allowed callable (a dtype)
        b"\x80\x02ctorch\nfloat32\n)R.",
        # BUILD on a tensor-like / SETITEM on a list
        b"\x80\x02]K\x01K\x02s.",
        # a huge memo index: the C unpickler would allocate memory for it
        b"\x80\x02Nr\xff\xff\xff\x7fh\x00.",
    ]
    for pkl in attacks:
        members["ok/data.pkl"] = pkl
        _write_zip(path, members)
        with pytest.raises((pickle.UnpicklingError, ValueError)):
            load(path)


def test_path_traversal_member_is_refused(tmp_path):
    path = tmp_path / "ok.pt"
    torch.save({"w": torch.ones(2)}, path)
    for evil in ("../../etc/passwd", "/abs/data/0", "ok/../x", "ok\\..\\x", "C:/x"):
        members = _members(path)
        members[evil] = b"x"
        _write_zip(path, members)
        with pytest.raises(ValueError, match="unsafe name"):
            load(path)
    assert not (tmp_path.parent / "x").exists()


def _pkl_with_storage(numel: int, dtype="FloatStorage", size=(2,)) -> bytes:
    key = b"0"
    shape = b"".join(b"K" + bytes([s]) for s in size)
    return (
        b"\x80\x02}(X\x01\x00\x00\x00wctorch._utils\n_rebuild_tensor_v2\n(("
        + b"X\x07\x00\x00\x00storagectorch\n"
        + dtype.encode()
        + b"\nX\x01\x00\x00\x00"
        + key
        + b"X\x03\x00\x00\x00cpu\x8a\x08"
        + struct.pack("<q", numel)
        + b"tQK\x00("
        + shape
        + b"t(K\x01t\x89ccollections\nOrderedDict\n)RtRu."
    )


def test_storage_claiming_a_terabyte_is_refused_before_allocating(tmp_path):
    path = tmp_path / "ok.pt"
    torch.save({"w": torch.ones(2)}, path)
    members = _members(path)
    members["ok/data.pkl"] = _pkl_with_storage(2)
    _write_zip(path, members)
    assert load(path)["w"].tolist() == [1.0, 1.0]  # the hand-written pickle is valid

    members["ok/data.pkl"] = _pkl_with_storage(2**38)  # a 1 TB storage
    _write_zip(path, members)
    with pytest.raises(ValueError, match="bytes"):
        load(path)

    # a tensor reaching past its storage
    members["ok/data.pkl"] = _pkl_with_storage(2, size=(3,))
    _write_zip(path, members)
    with pytest.raises(ValueError, match="reaches element"):
        load(path)

    # a central directory entry claiming a terabyte for the storage member
    members["ok/data.pkl"] = _pkl_with_storage(2)
    _write_zip(path, members)
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("ok/data/0")
    pos = raw.find(b"PK\x01\x02")
    while pos >= 0:
        (name_len,) = struct.unpack("<H", raw[pos + 28 : pos + 30])
        if raw[pos + 46 : pos + 46 + name_len] == b"ok/data/0":
            raw[pos + 20 : pos + 28] = struct.pack("<II", 2**32 - 2, 2**32 - 2)
        pos = raw.find(b"PK\x01\x02", pos + 4)
    assert info.file_size == 8
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError):
        load(path)


def test_truncated_files_raise_value_error(tmp_path):
    data = _torch_bytes({"w": torch.arange(50.0), "n": {"k": [1, 2]}})
    for cut in list(range(0, len(data), 97)) + [len(data) - 1, len(data) - 22]:
        with pytest.raises((ValueError, pickle.UnpicklingError)):
            load(io.BytesIO(data[:cut]))


@pytest.mark.parametrize("module", [ser, ser._torch_zip])
def test_docstring_examples(module):
    import doctest  # only this test needs it

    ser.clear_safe_globals()
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0 and result.attempted > 0


def test_deeply_nested_tuples_are_refused_not_crashing(tmp_path):
    # hashing a million-deep tuple overflows the C stack; the pickle for it is 2 MB
    path = tmp_path / "ok.pt"
    torch.save({"w": torch.ones(2)}, path)
    members = _members(path)
    members["ok/data.pkl"] = b"\x80\x02}" + b")" + b"\x85" * 1_000_000 + b"K\x01s."
    _write_zip(path, members)
    with pytest.raises(pickle.UnpicklingError, match="nested"):
        load(path)
    deep_ok = b"\x80\x02}" + b")" + b"\x85" * 100 + b"K\x01s."
    members["ok/data.pkl"] = deep_ok
    _write_zip(path, members)
    assert list(load(path).values()) == [1]
