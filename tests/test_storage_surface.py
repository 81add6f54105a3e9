"""torch.UntypedStorage / TypedStorage, Tensor.untyped_storage / storage / storage_offset,
the torch._C names libraries import (_TensorMeta, _log_api_usage_once, _nn._parse_to,
PyTorchFileReader), and the small names Lightning needs, each compared with real torch."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _both(fn):
    """``fn(lib)`` under ember and torch: (result or (type, message)) for each."""
    out = []
    for lib in (ember, torch):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(fn(lib))
        except Exception as exc:  # noqa: BLE001 - compared below
            out.append((type(exc).__name__, str(exc)))
    return out


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.UntypedStorage([1, 2, 3]).tolist(),
        lambda t: len(t.UntypedStorage(5)),
        lambda t: t.UntypedStorage().nbytes(),
        lambda t: t.UntypedStorage([1, 2, 3])[-1],
        lambda t: t.UntypedStorage([1, 2, 3])[1:].tolist(),
        lambda t: t.UntypedStorage([1, 2, 3])[5],
        lambda t: t.UntypedStorage([1, 2, 3])[-10],
        lambda t: t.UntypedStorage([1, 2, 3])[0:3:2],
        lambda t: t.UntypedStorage([1, 2, 3])["a"],
        lambda t: t.UntypedStorage([1.5]),
        lambda t: t.UntypedStorage(2.0),
        lambda t: t.UntypedStorage(3, device="cuda"),
        lambda t: t.UntypedStorage(3).fill_(300).tolist(),
        lambda t: t.UntypedStorage(3).fill_(2.5),
        lambda t: t.UntypedStorage(2).copy_(t.UntypedStorage(3)),
        lambda t: t.UntypedStorage(2).copy_(t.UntypedStorage([4, 5])).tolist(),
        lambda t: str(t.UntypedStorage([4, 5])),
        lambda t: str(t.UntypedStorage(0)),
        lambda t: t.UntypedStorage(1).pin_memory(),
        lambda t: (t.UntypedStorage(1).type(), t.UntypedStorage(1).element_size()),
        lambda t: (t.UntypedStorage(1).is_shared(), t.UntypedStorage(1).is_pinned()),
        lambda t: (str(t.UntypedStorage(1).device), t.UntypedStorage(1).get_device()),
        lambda t: t.UntypedStorage.from_buffer(b"\x01\x00\x02\x00", "big", dtype=t.int16).tolist(),
        lambda t: t.is_storage(t.UntypedStorage(1)),
        lambda t: t.tensor([1, 258], dtype=t.int16).untyped_storage().tolist(),
        lambda t: t.arange(6.0).untyped_storage().nbytes(),
        lambda t: t.arange(6.0).view(2, 3)[1, 1:].storage_offset(),
        lambda t: (lambda x: x[2:].untyped_storage().data_ptr() == x.data_ptr())(t.arange(6.0)),
        lambda t: t.zeros(3, 4).t().untyped_storage().nbytes(),
        lambda t: t.zeros(3, 4).t()[1].storage_offset(),
        lambda t: t.tensor(3.0).untyped_storage().nbytes(),
        lambda t: t.empty(0).untyped_storage().nbytes(),
        lambda t: t.tensor([1.5, 2.0]).storage().tolist(),
        lambda t: str(t.tensor([1.5, 2.0]).storage()),
        lambda t: (t.tensor([1.5, 2.0]).storage().size(), t.tensor([1.5]).storage().nbytes()),
        lambda t: t.tensor([1.5, 2.0]).storage()[-1],
        lambda t: t.tensor([1.5, 2.0]).storage()[2],
        lambda t: t.tensor([1.5, 2.0]).storage()[0:1],
        lambda t: t.TypedStorage(3, dtype=t.float64).size(),
        lambda t: t.TypedStorage([1, 2]).tolist(),
        lambda t: str(t.TypedStorage().dtype),
        lambda t: t.TypedStorage(wrap_storage=t.UntypedStorage(4)),
        lambda t: t.TypedStorage(wrap_storage=[1], dtype=t.int8),
        lambda t: t.tensor([True, False]).storage().tolist(),
        lambda t: t.tensor([1 + 2j]).storage()[0],
    ],
)
def test_storage_matches_torch(fn):
    got, expected = _both(fn)
    assert got == expected


def test_storage_shares_memory_with_the_tensor():
    t = ember.arange(4, dtype=ember.int16)
    s = t.untyped_storage()
    assert s is t[1:].untyped_storage() is t.view(2, 2).untyped_storage()
    s[2] = 7
    assert t.tolist() == [0, 7, 2, 3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        typed = t.storage()
        typed[3] = 9
        typed[:1] = 5
    assert t.tolist() == [5, 7, 2, 9]
    assert typed.untyped() is s
    clone = s.clone()
    clone[0] = 1
    assert t[0].item() == 5 and clone.data_ptr() != s.data_ptr()
    s.byteswap(ember.int16)
    assert t.tolist() == [5 << 8, 7 << 8, 2 << 8, 9 << 8]


def test_typed_storage_warns_once_as_torch():
    import ember.storage as st

    st._TYPED_WARNED[0] = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ember.ones(2).storage()
        ember.ones(2).storage()
    msgs = [str(w.message) for w in caught]
    assert len(msgs) == 1 and msgs[0].startswith("TypedStorage is deprecated.")


def test_sparse_tensors_have_no_storage():
    # (torch's message is "Cannot access storage of SparseTensorImpl"; ember's sparse
    # tensors answer methods they lack with the "Could not run ..." message)
    s = ember.sparse_coo_tensor([[0]], [1.0], (2,))
    with pytest.raises(NotImplementedError):
        s.untyped_storage()


def test_tensor_meta_and_log_api_usage():
    from ember._C import _TensorMeta

    assert isinstance(ember.Tensor, _TensorMeta)
    assert isinstance(ember.nn.Parameter, _TensorMeta)
    assert not isinstance(int, _TensorMeta) and not isinstance(ember.ones(1), _TensorMeta)
    assert ember._C._log_api_usage_once("x") is None
    got, expected = _both(lambda t: t._C._log_api_usage_once(3))
    assert got == expected
    assert ember._C.Generator is ember.Generator


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t._C._nn._parse_to(t.float64),
        lambda t: t._C._nn._parse_to("cpu", t.float16, non_blocking=True),
        lambda t: t._C._nn._parse_to(t.ones(1, dtype=t.int32), True),
        lambda t: t._C._nn._parse_to(),
        lambda t: t._C._nn._parse_to("cuda:1"),
        lambda t: t._C._nn._parse_to(t.float16, memory_format=t.channels_last),
        lambda t: t._C._nn._parse_to(0),
        lambda t: t._C._nn._parse_to("cpu", "x"),
        lambda t: t._C._nn._parse_to(foo=1),
        lambda t: t._C._nn._parse_to(t.device("cpu"), dtype=t.int8, copy=True),
    ],
)
def test_parse_to_matches_torch(call):
    got, expected = _both(call)
    if isinstance(expected, tuple) and len(expected) == 4:
        expected = tuple(str(v) for v in expected)
        got = tuple(str(v) for v in got)
    assert got == expected


def test_pytorch_file_reader_matches_torch():
    buf = io.BytesIO()
    torch.save({"a": torch.arange(3.0)}, buf)
    data = buf.getvalue()
    readers = [lib.PyTorchFileReader(io.BytesIO(data)) for lib in (ember, torch)]
    mine, theirs = readers
    assert mine.get_all_records() == theirs.get_all_records()
    assert mine.get_record("data.pkl") == theirs.get_record("data.pkl")
    assert mine.get_record_size("data/0") == theirs.get_record_size("data/0")
    assert mine.serialization_id() == theirs.serialization_id()
    t = mine.get_storage_from_record("data/0", 3, ember.float32)
    assert t.shape == (0,) and t.dtype == ember.float32
    assert np.frombuffer(bytes(t.untyped_storage().tolist()), np.float32).tolist() == [0, 1, 2]
    u = mine.get_storage_from_record("data/0", 12, ember.UntypedStorage)
    assert u.dtype == ember.uint8 and u.untyped_storage().nbytes() == 12
    for reader, lib in ((mine, ember), (theirs, torch)):
        with pytest.raises(RuntimeError, match="record size \\(12 bytes\\) does not match"):
            reader.get_storage_from_record("data/0", 13, lib.uint8)
        with pytest.raises(RuntimeError, match="PytorchStreamReader failed locating file zz"):
            reader.get_record("zz")


def test_small_names_lightning_needs():
    assert ember.cuda.get_rng_state_all() == torch.cuda.get_rng_state_all() == []
    ember.cuda.set_rng_state_all([])
    assert ember.hub._get_torch_home() == torch.hub._get_torch_home()
    assert not isinstance(ember.nn.Linear(1, 1), ember.ScriptModule)
    assert issubclass(ember.jit.ScriptModule, ember.nn.Module)
    assert ember._dynamo.OptimizedModule is type(ember.compile(ember.nn.Linear(1, 1)))
    with ember.autograd.profiler.emit_nvtx(enabled=False):
        pass
    got, expected = _both(lambda t: t.autograd.profiler.emit_nvtx().__enter__())
    assert got == expected
    assert ember.profiler.kineto_available() is False


def test_flop_counter_matches_torch():
    results = []
    for lib in (ember, torch):
        from importlib import import_module

        fc = import_module(f"{lib.__name__}.utils.flop_counter")
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.ReLU(), lib.nn.Linear(5, 2))
        conv = lib.nn.Conv2d(2, 4, 3, groups=2)
        with fc.FlopCounterMode(display=False) as counter:
            net(lib.ones(4, 3))
            conv(lib.ones(2, 2, 6, 6))
            lib.bmm(lib.ones(2, 3, 4), lib.ones(2, 4, 5))
        counts = counter.get_flop_counts()
        results.append(
            (
                counter.get_total_flops(),
                {k: {str(op): n for op, n in v.items()} for k, v in counts.items()},
            )
        )
    assert results[0] == results[1]
