"""torch's ``_foreach_*`` functions: results, in-place effects, gradients and errors as
torch's, over a table of calls."""

from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

UNARY = """abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10
log1p log2 neg reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc""".split()

CALLS = [
    *(f"lib._foreach_{n}(xs)" for n in UNARY),
    "lib._foreach_add(xs, 1.5)",
    "lib._foreach_add(xs, ys, alpha=2)",
    "lib._foreach_add(xs, [1.0, -2.0])",
    "lib._foreach_add(xs, lib.tensor(3.0))",
    "lib._foreach_sub(xs, ys, alpha=0.5)",
    "lib._foreach_mul(xs, ys)",
    "lib._foreach_mul(xs, [2.0, 0.5])",
    "lib._foreach_div(xs, 4.0)",
    "lib._foreach_maximum(xs, ys)",
    "lib._foreach_minimum(xs, 0.6)",
    "lib._foreach_clamp_min(xs, 0.6)",
    "lib._foreach_clamp_max(xs, [0.5, 0.7])",
    "lib._foreach_pow(xs, 2.0)",
    "lib._foreach_pow(xs, ys)",
    "lib._foreach_pow(2.0, xs)",
    "lib._foreach_addcmul(xs, ys, xs, 0.5)",
    "lib._foreach_addcdiv(xs, ys, ys, [1.0, 2.0])",
    "lib._foreach_lerp(xs, ys, 0.25)",
    "lib._foreach_lerp(xs, ys, ys)",
    "lib._foreach_norm(xs)",
    "lib._foreach_norm(xs, 1)",
    "lib._foreach_max(xs)",
    "lib._foreach_clone(xs)",
]

INPLACE = [
    *(f"lib._foreach_{n}_(xs)" for n in ("sqrt", "neg", "exp", "zero")),
    "lib._foreach_add_(xs, ys, alpha=2)",
    "lib._foreach_mul_(xs, 3.0)",
    "lib._foreach_div_(xs, [2.0, 4.0])",
    "lib._foreach_maximum_(xs, ys)",
    "lib._foreach_addcmul_(xs, ys, ys, 2.0)",
    "lib._foreach_addcdiv_(xs, ys, ys)",
    "lib._foreach_lerp_(xs, ys, 0.5)",
    "lib._foreach_copy_(xs, ys)",
]

ERRORS = [
    "lib._foreach_add(xs, [xs[0]])",
    "lib._foreach_add(xs, [1.0])",
    "lib._foreach_add([], 1.0)",
]


def _inputs(lib):
    xs = [lib.tensor([0.25, 0.5, 0.75]), lib.tensor([[0.3, 0.9], [0.45, 0.6]])]
    ys = [lib.tensor([0.5, 0.2, 0.9]), lib.tensor([[0.7, 0.4], [0.8, 0.35]])]
    return xs, ys


def _as_arrays(result):
    if isinstance(result, (tuple, list)):
        return type(result).__name__, [np.asarray(r.tolist()) for r in result]
    return type(result).__name__, result


@pytest.mark.parametrize("call", CALLS)
def test_values_as_torch(call):
    got, want = [], []
    for lib, out in ((ember, got), (torch, want)):
        xs, ys = _inputs(lib)
        out.append(_as_arrays(eval(call)))
    (kind, values), (want_kind, want_values) = got[0], want[0]
    assert kind == want_kind == "tuple"
    for a, b in zip(values, want_values):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("call", INPLACE)
def test_in_place_as_torch(call):
    outs = []
    for lib in (ember, torch):
        xs, ys = _inputs(lib)
        result = eval(call)
        outs.append((result is xs, [np.asarray(x.tolist()) for x in xs]))
    assert outs[0][0] == outs[1][0]
    for a, b in zip(outs[0][1], outs[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("call", ERRORS)
def test_errors_as_torch(call):
    messages = []
    for lib in (ember, torch):
        xs, ys = _inputs(lib)
        with pytest.raises(RuntimeError) as info:
            eval(call)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_gradients_flow_through_each_tensor():
    grads = []
    for lib in (ember, torch):
        xs, ys = _inputs(lib)
        xs = [x.requires_grad_() for x in xs]
        outs = lib._foreach_addcmul(lib._foreach_exp(xs), xs, ys, 0.5)
        sum(o.sum() for o in outs).backward()
        grads.append([np.asarray(x.grad.tolist()) for x in xs])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-6)
