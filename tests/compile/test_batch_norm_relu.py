"""Compiled conv nets: a training BatchNorm whose result only a ReLU reads runs as one C
loop each way (``c/batch_norm_relu.c``), the running statistics' update reuses the batch's
mean and variance, and graphs that call BLAS run their C loops on one core. Each gives
eager's loss, gradients and running statistics."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember._compile import kernels

needs_kernels = pytest.mark.skipif(bool(kernels.available()), reason="no C kernels here")


def _net(read_twice: bool = False, dtype=ember.float32):
    ember.manual_seed(0)
    conv, bn, head = nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.Linear(4 * 36, 5)
    for m in (conv, bn, head):
        m.to(dtype)

    def step(x):
        h = bn(conv(x))
        y = F.relu(h)
        if read_twice:  # the normalised values read again: nothing to fuse
            y = y + h * 0.5
        return F.cross_entropy(head(F.max_pool2d(y, 2).flatten(1)), ember.arange(4) % 5)

    return step, [*conv.parameters(), *bn.parameters(), *head.parameters()], bn


def _compiled_and_eager(read_twice: bool, dtype, rtol: float):
    """Runs the step compiled (twice: capture, then the compiled call) and eagerly from the
    same weights and running statistics; compares everything; returns explain()."""
    x = ember.tensor(np.random.default_rng(0).standard_normal((4, 3, 12, 12)), dtype=dtype)
    results = []
    for compiled in (True, False):
        step, params, bn = _net(read_twice, dtype)
        fn = ember.compile(step) if compiled else step
        for _ in range(2):
            for p in params:
                p.grad = None
            loss = fn(x)
            loss.backward()
        results.append(
            [loss.item()]
            + [p.grad.numpy().copy() for p in params]
            + [bn.running_mean.numpy().copy(), bn.running_var.numpy().copy()]
        )
        report = fn.explain() if compiled else None
        if compiled:
            explain = report
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    return explain


@needs_kernels
@pytest.mark.parametrize("dtype, rtol", [(ember.float32, 1e-4), (ember.float64, 1e-10)])
def test_batch_norm_then_relu_runs_as_one_loop_with_eager_results(dtype, rtol):
    report = _compiled_and_eager(False, dtype, rtol)
    assert "NativeBatchNormBackward0 + ReluBackward0" in report, report


@needs_kernels
def test_normalised_values_read_twice_are_not_fused():
    report = _compiled_and_eager(True, ember.float32, 1e-4)
    assert "NativeBatchNormBackward0 + ReluBackward0" not in report, report


def test_without_kernels_the_running_statistics_still_match(monkeypatch):
    monkeypatch.setenv("EMBER_COMPILE_KERNELS", "0")
    _compiled_and_eager(False, ember.float32, 1e-4)


@needs_kernels
def test_graphs_calling_blas_run_their_loops_on_one_core():
    big = 1 << 18  # at kernels.PARALLEL_MIN: a loop that would be split over the cores
    assert big >= kernels.PARALLEL_MIN
    w = ember.randn(8, 8, requires_grad=True)

    def elementwise_only(x):
        return (x.tanh() * x.sigmoid()).sum()

    def with_matmul(x):
        return (x.tanh() * x.sigmoid()).reshape(-1, 8).matmul(w).sum()

    x = ember.randn(big, requires_grad=True)
    codes = {}
    for fn in (elementwise_only, with_matmul):
        compiled = ember.compile(fn)
        for _ in range(2):
            compiled(x).backward()
        codes[fn.__name__] = compiled._ember_compiled.entries[0].graph.kernel_code
    assert "omp parallel" in codes["elementwise_only"]
    assert codes["with_matmul"] and "omp parallel" not in codes["with_matmul"]
