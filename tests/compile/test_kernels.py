"""Fused C kernels: the tracer follows NumPy's semantics (dtypes, NaN, broadcasting,
in-place writes), the kernels equal NumPy, and ember.compile uses them only when they agree
with its NumPy code, saying why not otherwise."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._compile import kernels
from ember._compile.kernels import Group, Sym, Untraceable, leaf, trace

pytestmark = pytest.mark.skipif(
    bool(kernels.available()), reason="fused kernels need gcc and Python's headers"
)

EDGE = np.array([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -3.0, 30.0, -30.0, 1e-30, 1e30])
SPECIAL = np.array([np.inf, -np.inf, np.nan])


def _run_traced(fn, *arrays):
    """``fn`` traced on leaves of ``arrays``' shapes, built into a kernel and run."""
    leaves = [leaf(f"v{i}", a.shape, a.dtype) for i, a in enumerate(arrays)]
    res = trace(fn, tuple(leaves))
    assert isinstance(res, Sym), "the function should trace"
    group = Group(res.shape)
    group.members = [("out", res.node)]
    group.outputs = ["out"]
    module = kernels.build({"k0": group.source("k0")})
    by_name = {f"v{i}": a for i, a in enumerate(arrays)}
    return module.k0(*[by_name[n] for n in group.inputs])


UNARY = [np.sin, np.cos, np.tan, np.tanh, np.sinh, np.cosh, np.exp, np.expm1, np.log,
         np.log1p, np.log2, np.log10, np.sqrt, np.abs, np.negative, np.square, np.reciprocal,
         np.floor, np.ceil, np.trunc, np.sign, np.arcsin, np.arccos, np.arctan, np.arcsinh,
         np.arctanh, np.exp2, np.cbrt]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ufunc", UNARY, ids=lambda u: u.__name__)
def test_unary_ufuncs_equal_numpy_with_edge_values(ufunc, dtype):
    x = np.concatenate([EDGE, SPECIAL, np.linspace(-0.99, 0.99, 37)]).astype(dtype)
    with np.errstate(all="ignore"):
        want = ufunc(x)
    got = _run_traced(ufunc, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    rtol = 1e-13 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)
    np.testing.assert_array_equal(
        np.signbit(got[~np.isnan(want)]), np.signbit(want[~np.isnan(want)])
    )


BINARY = [np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum, np.power,
          np.greater, np.less_equal, np.equal, np.not_equal, np.arctan2, np.hypot]  # fmt: skip


@pytest.mark.parametrize("ufunc", BINARY, ids=lambda u: u.__name__)
def test_binary_ufuncs_equal_numpy_with_nan_and_infinity(ufunc):
    vals = np.concatenate([EDGE[:8], SPECIAL])
    a, b = np.meshgrid(vals, vals)
    a, b = a.ravel().copy(), b.ravel().copy()
    with np.errstate(all="ignore"):
        want = ufunc(a, b)
    got = _run_traced(ufunc, a, b)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0, equal_nan=True)


def test_dtypes_follow_numpy_promotion():
    x32 = np.linspace(-2, 2, 9, dtype=np.float32)
    x64 = np.linspace(-1, 3, 9)
    mask = x64 > 0
    cases = [
        (lambda a: a * 1.001 + 2, (x32,)),  # Python numbers are weak: float32 stays
        (lambda a, b: a * b, (x32, x64)),  # float32 * float64 is float64
        (lambda a, m: a * m, (x32, mask)),  # bool promotes
        (lambda a, b: np.where(a > 0, a, b), (x32, x64)),
        (lambda a: a * np.float64(3.0), (x32,)),  # a NumPy scalar is weak too (NEP 50)
        (lambda a: (a > 0) & (a < 1), (x32,)),
        (lambda a: a.astype(np.float64) / 3, (x32,)),
    ]
    for fn, arrays in cases:
        want = fn(*arrays)
        got = _run_traced(fn, *arrays)
        assert got.dtype == want.dtype, fn
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    "shapes",
    [((4, 5), (5,)), ((4, 5), (4, 1)), ((2, 3, 4), (3, 1)), ((2, 3, 4), (2, 1, 4)),
     ((2, 3, 4), (1,)), ((3, 1, 5), (3, 4, 1)), ((1, 6), (6,)), ((), ())],
)  # fmt: skip
def test_broadcasting_indexes_each_operand(shapes):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s) for s in shapes)
    fn = lambda x, y: np.tanh(x * y) + y  # noqa: E731
    got = _run_traced(fn, a, b)
    np.testing.assert_allclose(got, fn(a, b), rtol=1e-14)
    assert got.shape == np.broadcast_shapes(*shapes)


def test_in_place_writes_rebind_and_keep_earlier_values():
    def fn(a, b):
        d = a * b
        e = d + 1  # computed before d changes: keeps the old value
        d *= 2
        np.exp(d, out=d)
        return e + d

    a, b = np.linspace(0, 1, 5), np.linspace(1, 2, 5)
    np.testing.assert_allclose(_run_traced(fn, a, b), fn(a.copy(), b.copy()), rtol=1e-14)


def test_what_the_tracer_refuses():
    x = leaf("v0", (3,), np.float64)
    refused = [
        lambda a: a.sum(),  # a reduction
        lambda a: a[0],  # indexing
        lambda a: a if a > 0 else -a,  # a branch on values
        lambda a: np.asarray(a),  # leaving the traced world
        lambda a: a.astype(np.int64),  # an integer dtype
    ]
    for fn in refused:
        assert trace(fn, (x,)) is None
    with pytest.raises(Untraceable):
        np.add(x, 1, out=x)  # leaves are read-only
    assert trace(lambda a: a.reshape(3), (x,)) is None


def test_non_contiguous_arguments_are_copied_and_bad_ones_rejected():
    a = np.arange(12.0).reshape(3, 4)
    got = _run_traced(np.sin, a.T.copy())
    leaves = [leaf("v0", (4, 3), np.float64)]
    res = trace(np.sin, tuple(leaves))
    group = Group(res.shape)
    group.members, group.outputs = [("o", res.node)], ["o"]
    k = kernels.build({"k0": group.source("k0")}).k0
    np.testing.assert_array_equal(k(a.T), got)  # a transposed view: copied contiguous
    with pytest.raises(TypeError, match="changed dtype or size"):
        k(np.zeros((4, 3), np.float32))
    with pytest.raises(TypeError, match="changed dtype or size"):
        k(np.zeros(5))


def test_compile_fuses_elementwise_chains_forward_and_backward():
    rng = np.random.default_rng(1)
    x, w, b = (ember.tensor(rng.standard_normal(1000).astype(np.float32)) for _ in range(3))
    w.requires_grad_()
    b.requires_grad_()

    def fn(x, w, b):
        return ((x * w + b).tanh() * x.sigmoid()).sum()

    f = ember.compile(fn)
    for _ in range(2):
        out = f(x, w, b)
        gw, gb = ember.autograd.grad(out, [w, b])
    want = fn(x, w, b)
    ew, eb = ember.autograd.grad(want, [w, b])
    np.testing.assert_allclose(out.item(), want.item(), rtol=1e-5)
    np.testing.assert_allclose(gw.numpy(), ew.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gb.numpy(), eb.numpy(), rtol=1e-5, atol=1e-6)
    assert "0 fused kernels" not in f._ember_compiled.explain()
    code = f._ember_compiled.code
    assert "# fused: MulBackward0, AddBackward0, TanhBackward0, SigmoidBackward0" in code
    assert "static PyObject *k0" in f._ember_compiled.entries[0].graph.kernel_code


def test_gelu_and_bias_broadcast_fuse_in_a_module():
    ember.manual_seed(0)
    net = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.GELU(), ember.nn.Linear(16, 2))
    x = ember.randn(5, 8)
    f = ember.compile(net)
    for _ in range(2):
        net.zero_grad()
        f(x).pow(2).sum().backward()
        got = [p.grad.numpy().copy() for p in net.parameters()]
    net.zero_grad()
    net(x).pow(2).sum().backward()
    for g, p in zip(got, net.parameters()):
        np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert "fused: GeluBackward0" in f._compiled.code
    assert "0 fused kernels" not in f.explain()


def test_kernels_that_disagree_with_numpy_are_not_used(monkeypatch):
    monkeypatch.setitem(kernels._UNARY_FN, "sin", "cos")  # a deliberately wrong kernel
    x = ember.linspace(0, 1, 7, requires_grad=True)
    f = ember.compile(lambda x: x.sin() * 2)
    for _ in range(2):
        out = f(x)
    np.testing.assert_allclose(out.detach().numpy(), 2 * np.sin(x.detach().numpy()))
    report = f._ember_compiled.explain()
    assert "0 fused kernels" in report
    assert "they differ from the NumPy code beyond rounding" in report


def test_without_a_compiler_the_numpy_code_runs(monkeypatch):
    monkeypatch.setenv("EMBER_COMPILE_KERNELS", "0")
    f = ember.compile(lambda x: x.exp() + 1)
    x = ember.ones(3, requires_grad=True)
    f(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.e * np.ones(3))
    report = f._ember_compiled.explain()
    assert "0 fused kernels" in report and "EMBER_COMPILE_KERNELS=0" in report
    monkeypatch.delenv("EMBER_COMPILE_KERNELS")
    monkeypatch.setattr(kernels, "_AVAILABLE", None)
    monkeypatch.setenv("CC", "/nonexistent/cc")
    assert kernels.available() == "no C compiler (/nonexistent/cc)"
    monkeypatch.setattr(kernels, "_AVAILABLE", None)


def test_an_input_no_gradient_reaches_gets_none_as_eagerly():
    """The kernel backward assumes every output has a gradient; when one has none, the
    NumPy backward runs, so an input that only feeds it gets None (not zeros)."""
    x = ember.linspace(-1, 1, 5, requires_grad=True)
    y = ember.linspace(0, 2, 5, requires_grad=True)
    f = ember.compile(lambda x, y: (x.sin() * 2, y.cos() * 3))
    for _ in range(2):
        a, b = f(x, y)
        gx, gy = ember.autograd.grad(a.sum(), [x, y], allow_unused=True)
        assert gy is None
        np.testing.assert_allclose(gx.numpy(), 2 * np.cos(x.detach().numpy()))
        a, b = f(x, y)
        gx, gy = ember.autograd.grad([a.sum(), b.sum()], [x, y])
        np.testing.assert_allclose(gy.numpy(), -3 * np.sin(y.detach().numpy()))
    assert "_backward_numpy" in f._ember_compiled.code


def test_in_place_ops_and_batchnorm_side_effects_still_match():
    ember.manual_seed(0)
    bn = ember.nn.BatchNorm1d(4)
    x = ember.randn(6, 4)
    ref = ember.nn.BatchNorm1d(4)
    ref.load_state_dict(bn.state_dict())
    f = ember.compile(lambda x: (bn(x).relu() + 1).tanh())
    for _ in range(3):
        got = f(x)
        want = (ref(x).relu() + 1).tanh()
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(bn.running_mean.numpy(), ref.running_mean.numpy(), rtol=1e-6)
    np.testing.assert_allclose(bn.running_var.numpy(), ref.running_var.numpy(), rtol=1e-6)


def test_gelu_on_0d_arrays_keeps_arrays():
    out = F.gelu(ember.tensor(0.5))
    assert out.shape == () and abs(out.item() - 0.3457312) < 1e-6


def test_values_computed_from_inputs_are_recomputed_in_backward_not_saved():
    """tanh's rule reads its result: the kernel backward recomputes tanh(x * w) from the
    saved inputs instead of keeping the array; the NumPy backward (an output without a
    gradient) recomputes it too."""
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.standard_normal(50), requires_grad=True)
    w = ember.tensor(rng.standard_normal(50), requires_grad=True)

    def fn(x, w):
        return (x * w).tanh() * 2, (x * w).exp()

    f = ember.compile(fn)
    for _ in range(2):
        for weights in ((1.0, 1.0), (1.0, None)):  # the second: the NumPy backward
            outs, want = f(x, w), fn(x, w)
            pairs = [(o.sum() * c, e.sum() * c) for o, e, c in zip(outs, want, weights) if c]
            got = ember.autograd.grad([p[0] for p in pairs], [x, w])
            ref = ember.autograd.grad([p[1] for p in pairs], [x, w])
            for a, b in zip(got, ref):
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    code = f._ember_compiled.code
    assert "recomputed" in code
    forward = code.split("def _backward_numpy")[0]
    saved = forward.rstrip().rsplit("(", 1)[1]
    assert sorted(saved.strip(", )").split(", ")) == ["v0", "v1"], forward  # only inputs
