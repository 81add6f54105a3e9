"""ember used from several threads at once, as torch may be: each thread's ops must compute
exactly what they compute alone. Per-call state must be per thread (a stack kept
process-wide, of NumPy error-state tokens or of backward passes' ``retain_graph``, lets one
thread pop another's entries), and so must grad mode, as in torch.

The threads start together (a barrier) and Python switches between them every microsecond
rather than every 5 ms, so that ops of different threads interleave finely.
"""

from __future__ import annotations

import functools
import sys
import threading
import warnings

import numpy as np
import pytest

import ember
from ember.nn import functional as F
from opdb import all_ops, run_with_grads

THREADS = 4


@pytest.fixture
def fine_switching():
    """Switch threads every microsecond (the default, 5 ms, lets most small ops finish
    uninterrupted), with NumPy's floating-point warnings as errors: the ops keep them off
    in every thread."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.simplefilter("error", RuntimeWarning)
            yield
    finally:
        sys.setswitchinterval(interval)


def _in_threads(*fns) -> list:
    """Each of ``fns`` called in a thread of its own, all started at once; their results, in
    order. An error in a thread is raised here."""
    barrier = threading.Barrier(len(fns))
    results: list = [None] * len(fns)
    errors: list = []

    def target(i: int) -> None:
        try:
            barrier.wait()
            results[i] = fns[i]()
        except BaseException as e:  # noqa: BLE001 (re-raised in the main thread)
            errors.append(e)

    workers = [threading.Thread(target=target, args=(i,)) for i in range(len(fns))]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if errors:
        raise errors[0]
    return results


def _run_together(work) -> list:
    """``work(i)`` in ``THREADS`` threads started at once; their results, in order."""
    return _in_threads(*(functools.partial(work, i) for i in range(THREADS)))


# -- the reported failure: norms and cdist ----------------------------------------------------


def _norms_and_cdist() -> list:
    """Forward and backward of batch norm (training: running statistics updated), layer
    norm and cdist, whose forwards keep NumPy's warnings off with ``with quiet:``."""
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    a = ember.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    b = ember.tensor(rng.standard_normal((6, 3)), requires_grad=True)
    bn = ember.nn.BatchNorm1d(3).double()
    outs = [bn(x), F.layer_norm(x, (3,)), ember.cdist(a, b)]
    total = sum((o * o).sum() for o in outs)
    grads = ember.autograd.grad(total, (x, a, b))
    return [o.detach().numpy() for o in (*outs, *grads, bn.running_mean, bn.running_var)]


def test_norms_and_cdist_in_threads_match_serial(fine_switching):
    """The issue's report: these forwards in 4 threads raised NumPy's "Token ... was created
    in a different Context" (``quiet`` kept every thread's tokens in one list)."""
    expected = _norms_and_cdist()

    def work(_):
        return [_norms_and_cdist() for _ in range(100)]

    for per_thread in _run_together(work):
        for got in per_thread:
            for g, e in zip(got, expected, strict=True):
                np.testing.assert_array_equal(g, e)


# -- every op-database entry ----------------------------------------------------------------------

OPS = all_ops()


def _forward_backward(op) -> tuple:
    """(outputs, gradients) of ``op`` on its sample input, as arrays; the gradients of the
    differentiable outputs against seeded cotangents."""
    _, values, grads = run_with_grads(ember, op)
    return values, grads


def _draws_from_default_generator(op) -> bool:
    """Whether ``op`` draws from the shared default generator (its values then depend on
    what the other threads drew first)."""
    before = ember.get_rng_state()
    _forward_backward(op)
    return not ember.equal(before, ember.get_rng_state())


def _mismatch(expected: tuple, got: tuple, shapes_only: bool) -> str | None:
    """How ``got`` differs from ``expected`` (None when it does not)."""
    if len(expected[0]) != len(got[0]) or len(expected[1]) != len(got[1]):
        return "a different number of outputs or gradients"
    for e, g in [*zip(expected[0], got[0]), *zip(expected[1], got[1])]:
        if (e is None) != (g is None):
            return "a gradient is None in one run only"
        if e is None:
            continue
        if e.shape != g.shape or e.dtype != g.dtype:
            return f"shape/dtype {g.shape} {g.dtype}, expected {e.shape} {e.dtype}"
        if not shapes_only and not np.array_equal(e, g, equal_nan=e.dtype.kind in "fc"):
            return "different values"
    return None


def test_every_opdb_entry_in_threads_matches_serial(fine_switching):
    """Each thread runs every entry's forward and backward three times: in the list's order
    (the threads run the same ops at about the same time), from a different quarter of the
    list (different ops at the same time), in the list's order again. Results must equal the
    serial ones exactly, except for entries drawing from the shared default generator (as in
    torch, one generator for all threads): their shapes and dtypes."""
    ember.manual_seed(0)
    random_entries = {op.name for op in OPS if _draws_from_default_generator(op)}
    expected = {op.name: _forward_backward(op) for op in OPS}

    def work(i: int) -> dict:
        start = i * len(OPS) // THREADS
        order = OPS + OPS[start:] + OPS[:start] + OPS
        problems: dict = {}
        for op in order:
            try:
                got = _forward_backward(op)
            except Exception as e:  # noqa: BLE001 (collected: every entry is reported)
                problems.setdefault(op.name, f"{type(e).__name__}: {e}")
                continue
            diff = _mismatch(expected[op.name], got, op.name in random_entries)
            if diff is not None:
                problems.setdefault(op.name, diff)
        return problems

    problems: dict = {}
    for per_thread in _run_together(work):
        for name, what in per_thread.items():
            problems.setdefault(name, what)
    report = "\n".join(f"{name}: {what}"[:300] for name, what in sorted(problems.items()))
    assert not problems, f"{len(problems)} of {len(OPS)} entries differ in threads:\n{report}"


# -- per-thread modes and passes ----------------------------------------------------------------

WAIT = 10  # seconds: a thread waiting longer than this for another one fails the test


@pytest.mark.parametrize(
    "mode",
    [ember.no_grad, ember.inference_mode, lambda: ember.set_grad_enabled(False)],
    ids=["no_grad", "inference_mode", "set_grad_enabled"],
)
def test_grad_mode_is_per_thread(mode):
    """As in torch: a thread inside no_grad (inference_mode, set_grad_enabled(False)) leaves
    the other threads recording, and a thread started inside one begins with grad on."""
    x = ember.ones(2, requires_grad=True)
    entered, recorded = threading.Event(), threading.Event()
    seen: dict = {}

    def without_grad():
        with mode():
            entered.set()
            assert recorded.wait(WAIT)
            seen["inside"] = ember.is_grad_enabled(), (x * 2).requires_grad

    def alongside():
        assert entered.wait(WAIT)
        seen["alongside"] = ember.is_grad_enabled(), (x * 2).requires_grad
        seen["alongside inference"] = ember.ones(1).is_inference()
        recorded.set()

    _in_threads(without_grad, alongside)
    assert seen == {
        "inside": (False, False),
        "alongside": (True, True),
        "alongside inference": False,
    }

    seen.clear()
    with mode():
        _in_threads(alongside, lambda: None)  # (``entered`` is still set)
    assert seen == {"alongside": (True, True), "alongside inference": False}


def test_each_backward_pass_sees_its_own_retain_graph():
    """``retaining_graph()``, which nodes that free what they saved while they run read,
    answers for the calling thread's pass while another thread's pass runs within it."""
    from ember.autograd.engine import retaining_graph

    a_inside, b_inside, a_read = threading.Event(), threading.Event(), threading.Event()
    seen: dict = {}

    def backward_pass(name: str, retain: bool, pause) -> None:
        x = ember.ones(2, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: pause(name))
        y.sum().backward(retain_graph=retain)

    def pause_a(name: str) -> None:
        a_inside.set()
        assert b_inside.wait(WAIT)  # thread B's pass has begun
        seen[name] = retaining_graph()
        a_read.set()

    def pause_b(name: str) -> None:
        b_inside.set()
        assert a_read.wait(WAIT)
        seen[name] = retaining_graph()

    def second():
        assert a_inside.wait(WAIT)  # thread A's pass is running
        backward_pass("b", False, pause_b)

    _in_threads(lambda: backward_pass("a", True, pause_a), second)
    assert seen == {"a": True, "b": False}
