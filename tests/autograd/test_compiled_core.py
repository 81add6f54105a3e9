"""The optional compiled core (ember._compile.core): the C ``record`` and engine loop must
behave exactly as the Python code they replace, which stays for machines without a C
compiler. Each scenario runs under both and their results (values, gradients, graph
structure, errors and their messages) must be identical."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import warnings
import weakref

import numpy as np
import pytest

import ember
from ember._compile import core, kernels
from ember.autograd import engine, recording

pytestmark = pytest.mark.skipif(
    bool(core.why_not()), reason="no C compiler: the Python code is all there is"
)


@pytest.fixture(autouse=True)
def _restore_core():
    yield
    core.install()


def _outcome(fn):
    """What ``fn()`` gives, comparable across runs: arrays as lists, errors as (type,
    message)."""
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001 (the error itself is the outcome compared)
        return ("raised", type(e).__name__, str(e))
    return _plain(result)


def _plain(x):
    if isinstance(x, ember.Tensor):
        return ("tensor", str(x.dtype), x.shape, x.detach().numpy().tolist(), x.requires_grad)
    if isinstance(x, np.ndarray):
        return ("array", str(x.dtype), x.tolist())
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    return x


def _both(fn):
    """``fn``'s outcome with the Python code and with the C core (asserted equal)."""
    core.uninstall()
    assert recording.record is core._PYTHON["record"]
    python = _outcome(fn)
    assert core.install() and core.installed()
    assert recording.record is not core._PYTHON["record"]
    compiled = _outcome(fn)
    assert compiled == python
    return compiled


def test_installed_where_kernels_build():
    x = ember.ones(2, requires_grad=True)
    (x * 2).sum().backward()
    assert kernels.available() == "" and core.installed()
    assert type(engine._execute).__name__ == "builtin_function_or_method"
    assert type(engine._dependencies).__name__ == "builtin_function_or_method"


def _chain():
    x0 = ember.tensor([0.1, 0.3, 0.5], dtype=ember.float64, requires_grad=True)
    y = x0
    for i in range(50):
        y = [lambda y: y * 1.001, lambda y: y + 0.01, ember.sin, lambda y: y * x0, ember.tanh][
            i % 5
        ](y)
    y.sum().backward()
    return y, x0.grad, y.grad_fn.name(), [type(n).__name__ for n, _ in y.grad_fn.next_functions]


def _broadcast_and_casts():
    a = ember.randn(3, 1, 4, generator=ember.Generator().manual_seed(0), requires_grad=True)
    b = ember.randn(5, 1, generator=ember.Generator().manual_seed(1), dtype=ember.float64)
    b.requires_grad_()
    c = ember.tensor(2.0, requires_grad=True)  # a 0-d leaf: NumPy scalars in the rules
    out = (a * b + c) / (b.exp() + 1)
    out.sum().backward()
    return out, a.grad, b.grad, c.grad


def _scalars():
    leaves = [ember.tensor(v, dtype=ember.float64, requires_grad=True) for v in (0.3, -0.7, 1.1)]
    v = leaves[0]
    for i in range(30):
        v = ember.tanh(v * leaves[i % 3] * 0.5 + leaves[(i + 1) % 3])
    v.backward()
    return v, [t.grad for t in leaves]


def _multi_output_and_shared():
    x = ember.arange(12.0, requires_grad=True)
    a, b, c = x.view(3, 4).unbind(0)
    y = (a * b).sum() + (b * c).sum() + x.split(5)[0].sum()
    y.backward()
    return y, x.grad


def _hooks():
    seen = []
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g * 10)
    z = y.sin()
    z.grad_fn.register_prehook(lambda grads: (grads[0] + 1,))
    z.grad_fn.register_hook(lambda gi, go: seen.append(gi[0].sum().item()))
    y.retain_grad()
    z.sum().backward()
    return x.grad, y.grad, seen


def _retain_graph_and_second_backward():
    x = ember.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    first = x.grad.clone()
    y.backward()  # freed: torch's error
    return first


def _modified_in_place():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    z = y * y
    y.add_(1)
    z.sum().backward()


def _modified_in_place_one_saved():
    x = ember.ones(3, requires_grad=True)
    y = x.sin()
    z = y.exp()  # saves its output
    z.mul_(2)
    z.sum().backward()


def _stale_view():
    x = ember.ones(4, requires_grad=True)
    base = x * 1
    view = base[:2]
    base.mul_(3)  # the view's grad_fn is regenerated
    (view * view).sum().backward()
    return view.grad_fn.name(), x.grad


def _autograd_grad_and_create_graph():
    x = ember.tensor([0.5, 1.5], requires_grad=True)
    y = (x**3).sum()
    (g,) = ember.autograd.grad(y, x, create_graph=True)
    (h,) = ember.autograd.grad(g.sum(), x)
    return g, h


def _no_grad_and_inference():
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        a = x * 2
    with ember.inference_mode():
        b = x * 2
    try:
        (x * b).sum().backward()
    except RuntimeError as e:
        err = str(e)
    return a, a.requires_grad, b.is_inference(), err


def _forward_ad():
    import ember.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        x = fwAD.make_dual(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 0.0]))
        y = (x * x).sin()
        return fwAD.unpack_dual(y).tangent


def _anomaly():
    x = ember.tensor([-1.0], requires_grad=True)
    with warnings.catch_warnings(), ember.autograd.detect_anomaly():
        warnings.simplefilter("ignore")  # (its notice, and the forward traceback it prints)
        (x.sqrt() * 0).sum().backward()


def _integer_and_bool_results():
    x = ember.tensor([1.0, -2.0], requires_grad=True)
    return (x > 0), x.argmax(), (x * 2).requires_grad, x.sign().grad_fn.name()


def _meta():
    x = ember.empty(3, 4, device="meta", requires_grad=True)
    y = (x * 2).sum(0)
    y.sum().backward()
    return y.shape, y.device.type, x.grad.shape


def _float32_leaf_from_float64_rule():
    w = ember.ones(3, dtype=ember.float32, requires_grad=True)
    y = (w.double() * 3).sum()
    y.backward()
    return w.grad


SCENARIOS = [
    _chain,
    _broadcast_and_casts,
    _scalars,
    _multi_output_and_shared,
    _hooks,
    _retain_graph_and_second_backward,
    _modified_in_place,
    _modified_in_place_one_saved,
    _stale_view,
    _autograd_grad_and_create_graph,
    _no_grad_and_inference,
    _forward_ad,
    _anomaly,
    _integer_and_bool_results,
    _meta,
    _float32_leaf_from_float64_rule,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__.strip("_"))
def test_c_core_matches_python(scenario):
    _both(scenario)


def test_errors_are_torchs():
    assert _both(_retain_graph_and_second_backward)[0] == "raised"
    assert (
        "Trying to backward through the graph a second time"
        in _both(_retain_graph_and_second_backward)[2]
    )
    outcome = _both(_modified_in_place)
    assert outcome[1] == "RuntimeError" and "modified by an inplace operation" in outcome[2]
    assert "inference" in _both(_no_grad_and_inference)[3].lower()


def test_nodes_from_c_record_are_the_python_ones():
    assert core.install()
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    node = y.grad_fn
    assert node.name() == "MulBackward0"
    assert node.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    assert node.next_functions[1] == (None, 0)
    assert node._saved_self is None and node._saved_other == 3.0  # torch's saved attributes
    assert y._version == 0 and y.is_leaf is False and y.requires_grad
    y.add_(1)
    assert y._version == 1
    z = x.exp()
    assert np.array_equal(z.grad_fn._saved_result.detach().numpy(), z.detach().numpy())


def test_a_leaf_adopts_an_unshared_gradient():
    assert core.install()
    # Both engines hand a leaf the array its last rule made when nothing else holds it,
    # and copy it otherwise: the two leaves' gradients must never share memory.
    x = ember.ones(4, requires_grad=True)
    y = ember.ones(4, requires_grad=True)
    (x + y).sum().backward()
    assert not np.shares_memory(x.grad.numpy(), y.grad.numpy())
    assert x.grad.tolist() == y.grad.tolist() == [1.0] * 4


def test_graph_freed_after_backward():
    assert core.install()
    x = ember.ones(8, requires_grad=True)
    y = (x * 2).sin() * x
    node = weakref.ref(y.grad_fn)
    y.sum().backward()
    saved = y.grad_fn._saved
    del y
    gc.collect()
    assert node() is None
    assert saved is not None


def test_memory_flat_over_a_training_loop():
    import tracemalloc

    assert core.install()
    w = ember.randn(16, 16, requires_grad=True)

    def step():
        h = ember.tanh(ember.randn(8, 16) @ w)
        (h * h).sum().backward()
        w.grad = None

    for _ in range(50):
        step()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for _ in range(300):
        step()
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert grown < 64 * 1024, grown


def test_deep_graph_no_recursion():
    assert core.install()
    x = ember.ones(1, requires_grad=True)
    y = x
    for _ in range(20000):
        y = y * 1.0
    y.backward()
    assert x.grad.tolist() == [1.0]


def test_python_path_runs_without_the_core():
    # The autograd tests, with the compiled core turned off: the Python code stays tested.
    env = dict(os.environ, EMBER_COMPILED_CORE="0")
    folder = os.path.dirname(__file__)
    probe = subprocess.run(
        [sys.executable, "-c", "import ember; x = ember.ones(1, requires_grad=True); "
         "(x * 2).backward(); from ember._compile import core; print(core.installed())"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert probe.stdout.strip() == "False"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", folder,
         "--deselect", f"{folder}/test_compiled_core.py"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:]


def test_a_failing_first_backward_setup_is_logged_and_the_backward_runs(monkeypatch, caplog):
    import ember as package

    def broken():
        raise ImportError("no such module")

    monkeypatch.setattr(core, "install", broken)
    monkeypatch.setattr(engine, "_first_backward_hook", [package._first_backward])
    x = ember.ones(2, requires_grad=True)
    with caplog.at_level("WARNING", logger="ember"):
        (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert any("first-backward set-up failed" in r.getMessage() for r in caplog.records)
    assert engine._first_backward_hook == []  # once only
