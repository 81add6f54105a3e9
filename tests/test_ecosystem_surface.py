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
