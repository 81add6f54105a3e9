"""Fuzzing ember.load with mutated checkpoints of both formats.

Any malformed input must raise ValueError, pickle.UnpicklingError or RuntimeError: no other
exception type, no hang, no code run. Deterministic (derandomize=True) and bounded in time.
"""

import io
import os
import pickle
import warnings
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ember
from ember.serialization import load, save

ALLOWED = (ValueError, pickle.UnpicklingError, RuntimeError)
MARKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".fuzz-pwned-marker")


class _System:
    def __reduce__(self):
        return (os.system, (f"touch {MARKER}",))


def _ember_obj(torch_format=True):
    x = ember.arange(12.0)
    return {
        "sd": OrderedDict(
            [("w", x.view(3, 4)), ("b", x[1:4]), ("i", ember.tensor([1, -2], dtype=ember.int64))]
        ),
        "t": x.view(3, 4).t(),
        "flags": ember.tensor([True, False]),
        "h": ember.ones(2, dtype=ember.float16),
        "meta": {"step": 3, "lr": 0.5, "name": "run", "betas": (0.9, 0.99)},
        "z": ember.zeros(0),
        "c": ember.tensor(2.0),
        **({"s": {1, 2}, "size": ember.Size([2])} if torch_format else {}),
    }


def _corpus() -> dict:
    out = {}
    buf = io.BytesIO()
    save(_ember_obj(), buf)
    out["ember_zip"] = buf.getvalue()
    buf = io.BytesIO()
    save(_ember_obj(False), buf, format="safetensors")
    out["safetensors"] = buf.getvalue()
    torch = pytest.importorskip("torch")
    buf = io.BytesIO()
    torch.save(
        {
            "sd": torch.nn.Linear(3, 2).state_dict(),
            "p": torch.nn.Parameter(torch.ones(2)),
            "size": torch.Size([1, 2]),
            "dev": torch.device("cpu"),
            "bytes": b"ab",
        },
        buf,
    )
    out["torch_zip"] = buf.getvalue()
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2), "evil": _System()}, buf)
    out["evil_zip"] = buf.getvalue()
    return out


CORPUS = _corpus()
NAMES = sorted(CORPUS)


def _members(data: bytes) -> list:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return [(i.filename, zf.read(i)) for i in zf.infolist()]


def _rezip(members) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate member names are one of the edits
        with zipfile.ZipFile(buf, "w") as zf:
            for name, data in members:
                zf.writestr(name, data)
    return buf.getvalue()


def _check(data: bytes) -> None:
    try:
        load(io.BytesIO(data))
    except ALLOWED:
        pass
    assert not os.path.exists(MARKER), "code from the checkpoint ran"


@pytest.fixture(autouse=True)
def _no_marker():
    if os.path.exists(MARKER):
        os.unlink(MARKER)
    yield
    assert not os.path.exists(MARKER)


_FUZZ = settings(
    max_examples=150,
    derandomize=True,
    deadline=2000,  # ms per example: a hang fails the test
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_corpus_is_valid():
    assert load(io.BytesIO(CORPUS["ember_zip"]))["meta"]["step"] == 3
    assert load(io.BytesIO(CORPUS["safetensors"]))["meta"]["step"] == 3
    assert load(io.BytesIO(CORPUS["torch_zip"]))["size"] == ember.Size([1, 2])
    with pytest.raises(pickle.UnpicklingError):
        load(io.BytesIO(CORPUS["evil_zip"]))


@_FUZZ
@given(
    name=st.sampled_from(NAMES),
    flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), max_size=6),
    cut=st.one_of(st.none(), st.floats(0, 1)),
)
def test_byte_flips_and_truncations(name, flips, cut):
    data = bytearray(CORPUS[name])
    for where, value in flips:
        data[int(where * len(data))] = value
    if cut is not None:
        data = data[: int(cut * len(data))]
    _check(bytes(data))


@_FUZZ
@given(
    name=st.sampled_from(["ember_zip", "torch_zip", "evil_zip"]),
    which=st.floats(0, 1, exclude_max=True),
    edit=st.sampled_from(["flip", "truncate", "extend", "drop", "rename", "duplicate", "empty"]),
    where=st.floats(0, 1, exclude_max=True),
    value=st.binary(min_size=1, max_size=8),
)
def test_zip_member_edits(name, which, edit, where, value):
    members = _members(CORPUS[name])
    i = int(which * len(members))
    member, content = members[i]
    pos = int(where * len(content)) if content else 0
    if edit == "flip":
        content = content[:pos] + value + content[pos + len(value) :]
    elif edit == "truncate":
        content = content[:pos]
    elif edit == "extend":
        content = content[:pos] + value + content[pos:]
    elif edit == "empty":
        content = b""
    if edit == "drop":
        del members[i]
    elif edit == "rename":
        members[i] = (member[:pos] + value.decode("latin-1") + member[pos:], content)
    elif edit == "duplicate":
        members.append((member, content))
    else:
        members[i] = (member, content)
    _check(_rezip(members))


_OPCODES = [bytes([c]) for c in b"().0NKJMGXhqrRbstuae]}\x85\x86\x87\x88\x89\x8a\x81\x93\x94cQ"]


@_FUZZ
@given(
    name=st.sampled_from(["ember_zip", "torch_zip", "evil_zip"]),
    inserts=st.lists(
        st.tuples(
            st.floats(0, 1, exclude_max=True), st.sampled_from(_OPCODES), st.binary(max_size=4)
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_pickle_opcode_insertions(name, inserts):
    members = _members(CORPUS[name])
    for j, (member, content) in enumerate(members):
        if member.endswith("/data.pkl"):
            for where, op, arg in inserts:
                pos = int(where * len(content))
                content = content[:pos] + op + arg + content[pos:]
            members[j] = (member, content)
    _check(_rezip(members))


def test_random_corruption_of_both_formats_is_quick():
    # a seeded, non-hypothesis sweep over many more single-byte corruptions
    rng = np.random.default_rng(0)
    for name in NAMES:
        good = CORPUS[name]
        for _ in range(150):
            data = bytearray(good)
            data[rng.integers(0, len(data))] = rng.integers(0, 256)
            _check(bytes(data))
