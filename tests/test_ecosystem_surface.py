"""Names libraries built on torch reach for at import (issue 27), with a CPU build's
behaviour: CUDA graphs and stream contexts exist and refuse as that build does, dynamo's
``TransformGetItemToIndex`` mode, and torch's distribution metadata while ember is torch
(tests/test_run_as_torch.py)."""

from __future__ import annotations

import pytest

import ember

torch = pytest.importorskip("torch")


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        return type(e), str(e)
    return None


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.cuda.CUDAGraph(),
        lambda m: m.cuda.graphs.CUDAGraph(),
        lambda m: m.cuda.graph_pool_handle(),
        lambda m: m.cuda.graph(None),
        lambda m: m.cuda.make_graphed_callables(lambda x: x, (m.ones(1),)),
        lambda m: m.cuda.Stream(),
        lambda m: m.cuda.Event(),
    ],
)
def test_cuda_graphs_and_streams_refuse_as_a_cpu_build(call):
    assert _error(lambda: call(ember)) == _error(lambda: call(torch))


def test_stream_context_of_none_is_a_no_op():
    for m in (ember, torch):
        with m.cuda.StreamContext(None) as s:
            assert s is None
        with m.cuda.stream(None):
            pass


def test_transform_getitem_to_index_lets_vmap_index_with_tensors():
    from ember._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex

    x = ember.arange(6.0).reshape(2, 3)
    with TransformGetItemToIndex():
        got = ember.vmap(lambda i, j: x[i, j])(ember.tensor([1, 0]), ember.tensor([2, 1]))
    assert got.tolist() == [5.0, 1.0]


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
def test_unsigned_shell_dtypes_create_cast_print_and_refuse_promotion(name):
    def run(m):
        dt = getattr(m, name)
        t = m.tensor([1, 2, 3], dtype=dt)
        out = [
            repr(dt),
            dt.is_signed,
            dt.itemsize,
            repr(t),
            repr(m.zeros(2, dtype=dt)),
            repr(m.full((2,), 5, dtype=dt)),
            repr(t.float()),
            repr(m.tensor([1.5, 7.0]).to(dt)),
            repr(m.cat([t, t])),
            t.tolist(),
            t[0].item(),
            repr(m.zeros(3, dtype=dt).copy_(m.tensor([1.0, 2.0, 3.0]))),
        ]
        out.append(_error(lambda: m.promote_types(dt, m.int64)))
        out.append(_error(lambda: m.promote_types(m.uint8, dt)))
        return out

    assert run(ember) == run(torch)


def test_from_numpy_accepts_unsigned_arrays():
    import numpy as np

    a = np.array([1, 2], dtype=np.uint32)
    assert repr(ember.from_numpy(a)) == repr(torch.from_numpy(a))


def test_save_on_cpu_is_the_identity_on_cpu_and_refuses_pinning():
    for m in (ember, torch):
        a = m.ones(3, requires_grad=True)
        with m.autograd.graph.save_on_cpu():
            y = (a * a).sum()
        y.backward()
        assert a.grad.tolist() == [2.0, 2.0, 2.0]

    def pinned(m):
        a = m.ones(3, requires_grad=True)
        with m.autograd.graph.save_on_cpu(pin_memory=True, device_type="cpu"):
            (a * a).sum()

    assert _error(lambda: pinned(ember)) == _error(lambda: pinned(torch))


def test_custom_op_with_registered_autograd():
    results = []
    for m in (ember, torch):
        ns = f"eco_{m.__name__}"

        @m.library.custom_op(
            f"{ns}::scale", mutates_args=(), schema="(Tensor x, float k) -> Tensor"
        )
        def scale(x, k):
            return x * k

        x = m.ones(2, requires_grad=True)
        y = scale(x, 3.0)
        err = _error(lambda y=y: y.sum().backward())

        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        m.library.register_autograd(
            f"{ns}::scale", lambda ctx, g: (g * ctx.k, None), setup_context=setup_context
        )
        m.library.register_fake(f"{ns}::scale", lambda x, k, m=m: m.empty_like(x))
        getattr(m.ops, ns).scale(x, k=3.0).sum().backward()
        results.append(
            (
                repr(y.detach()),
                err[0],
                err[1].replace(ns, "NS"),
                x.grad.tolist(),
                repr(scale).split("(")[0],
            )
        )

    assert results[0] == results[1]


def test_nn_buffer_registers_as_torchs():
    """nn.Buffer (transformers' rotary embeddings assign ``self.inv_freq = nn.Buffer(...)``)."""
    torch = pytest.importorskip("torch")
    for lib in (ember, torch):
        b = lib.nn.Buffer(lib.ones(2))
        assert repr(b) == "tensor([1., 1.])" and b.persistent
        assert isinstance(b, lib.nn.Buffer) and not isinstance(lib.ones(1), lib.nn.Buffer)
        assert type(b * 2) is lib.Tensor
        m = lib.nn.Module()
        m.steps = lib.nn.Buffer(lib.tensor(3))
        m.cache = lib.nn.Buffer(lib.zeros(2), persistent=False)
        assert [n for n, _ in m.named_buffers()] == ["steps", "cache"]
        assert list(m.state_dict()) == ["steps"] and type(m.cache) is lib.Tensor
        w = lib.ones(2, requires_grad=True)
        shared = lib.nn.Buffer(w)
        assert shared.requires_grad and shared.grad_fn is None
        with lib.no_grad():
            w.add_(1)
        assert shared.tolist() == [2.0, 2.0]  # the same values (a detached alias)
        assert repr(lib.nn.Buffer()) == "tensor([])"
        with pytest.raises(AttributeError, match="'list' object has no attribute 'detach'"):
            lib.nn.Buffer([1, 2])
        m.p = lib.nn.Parameter(lib.ones(1))
        with pytest.raises(TypeError, match="as parameter 'p'"):
            m.p = lib.nn.Buffer(lib.ones(1))


def test_frombuffer_as_torch():
    """torch.frombuffer (safetensors' loading path in from_pretrained): memory shared with a
    writable buffer, torch's checks and messages, a copy with torch's warning otherwise."""
    import warnings

    torch = pytest.importorskip("torch")
    for lib in (ember, torch):
        data = bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00")
        t = lib.frombuffer(data, dtype=lib.int32)
        assert t.tolist() == [1, 2] and t.dtype == lib.int32
        t[0] = 7
        assert data[0] == 7  # shared
        assert lib.frombuffer(data, dtype=lib.int32, count=1, offset=4).tolist() == [2]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert lib.frombuffer(b"\x01\x02", dtype=lib.uint8).tolist() == [1, 2]
        assert "The given buffer is not writable" in str(caught[0].message)
        for kwargs, message in (
            ({"count": 0}, r"both buffer length \(8\) and count \(0\) must not be 0"),
            ({"count": 3}, r"requested buffer length \(3 \* 4 bytes\) after offset"),
            ({"offset": 9}, r"offset \(9 bytes\) must be non-negative"),
            ({"offset": 2}, r"must be a multiple of element size \(4\)"),
        ):
            with pytest.raises(ValueError, match=message):
                lib.frombuffer(data, dtype=lib.int32, **kwargs)
        with pytest.raises(ValueError, match="does not implement Python buffer protocol"):
            lib.frombuffer([1, 2], dtype=lib.float32)
        ones = lib.ones(2).new_ones(size=(2, 3))
        assert ones.shape == (2, 3) and lib.ones(2).new_zeros(size=(1,)).shape == (1,)
        with pytest.raises(TypeError, match=r"new_ones\(\) got multiple values for argument"):
            lib.ones(2).new_ones(2, size=(2,))


def _outcome(fn):
    try:
        return ("ok", repr(fn()))
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        return type(e).__name__, str(e)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.Stream(),
        lambda m: m.Stream("cpu", priority=-1),
        lambda m: m.Stream("meta"),
        lambda m: m.Stream("cuda"),
        lambda m: m.Stream(0),
        lambda m: (m.Stream().query(), m.Stream().synchronize(), m.Stream() == m.Stream()),
        lambda m: m.Stream().wait_event(m.Event()),
        lambda m: m.Stream().wait_stream(m.Stream()),
        lambda m: m.Stream().record_event(),
        lambda m: m.Event(),
        lambda m: m.Event(enable_timing=True, blocking=True),
        lambda m: m.Event("cuda"),
        lambda m: (m.Event().query(), m.Event().synchronize(), m.Event().wait()),
        lambda m: m.Event().record(),
        lambda m: m.Event().elapsed_time(m.Event()),
        lambda m: m.Event(enable_timing=True).elapsed_time(m.Event(enable_timing=True)),
        lambda m: m.Event().ipc_handle(),
    ],
)
def test_streams_and_events_behave_as_a_cpu_build(call):
    assert _outcome(lambda: call(ember)) == _outcome(lambda: call(torch))


def test_device_as_a_context_manager_and_default_device():
    def run(m):
        seen = []
        with m.device("cpu") as d:
            seen.append((repr(d), str(m.ones(2).device), str(m.get_default_device())))
        with m.device("cuda"):
            seen.append(_outcome(lambda: m.randn(2)))
            seen.append(_outcome(lambda: m.zeros(2, device="cpu").device))
        seen.append(str(m.get_default_device()))
        m.set_default_device("cuda")
        try:
            seen.append(_outcome(lambda: m.tensor([1.0])))
            seen.append(_outcome(lambda: m.arange(3)))
        finally:
            m.set_default_device(None)
        seen.append(_outcome(lambda: m.ones(1)))
        return seen

    assert run(ember) == run(torch)


def test_data_classes_are_generic_as_torchs():
    import torch.utils.data as td

    import ember.utils.data as ed

    for name in (
        "Dataset",
        "IterableDataset",
        "Subset",
        "ConcatDataset",
        "Sampler",
        "DistributedSampler",
        "DataLoader",
    ):
        assert getattr(ed, name)[int].__args__ == (int,), name
        assert len(getattr(ed, name).__parameters__) == len(getattr(td, name).__parameters__)
    for name in ("SequentialSampler", "RandomSampler", "BatchSampler", "TensorDataset"):
        assert getattr(ed, name).__parameters__ == (), name

    class Evens(ed.Sampler[int]):
        def __iter__(self):
            return iter([0, 2])

    assert list(ed.DataLoader(ed.TensorDataset(ember.arange(4)), sampler=Evens())) == [
        [ember.tensor([0])],
        [ember.tensor([2])],
    ]


def test_config_report_hub_hash_and_checkpoint_device_states():
    from torch.utils.checkpoint import get_device_states as torch_states

    from ember.utils.checkpoint import get_device_states, set_device_states

    assert ember.__config__.show().startswith("PyTorch built with:\n")
    assert "NumPy" in ember.__config__.show()
    assert ember.__config__.parallel_info().startswith("ATen/Parallel:\n")
    assert ember.hub.HASH_REGEX.pattern == torch.hub.HASH_REGEX.pattern
    assert get_device_states(ember.ones(2), 3) == torch_states(torch.ones(2), 3) == ([], [])
    set_device_states([], [])
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        set_device_states([0], [None])
