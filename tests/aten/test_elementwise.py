"""Elementwise ops: values, dtypes, grad_fn names and gradients vs finite differences and torch."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember.autograd import gradcheck

# name -> (domain low, high) so that finite differences are well defined
UNARY = {
    "exp": (-2, 2),
    "exp2": (-2, 2),
    "expm1": (-2, 2),
    "log": (0.2, 3),
    "log2": (0.2, 3),
    "log10": (0.2, 3),
    "log1p": (-0.5, 3),
    "sqrt": (0.2, 3),
    "rsqrt": (0.2, 3),
    "sin": (-3, 3),
    "cos": (-3, 3),
    "tan": (-1, 1),
    "asin": (-0.9, 0.9),
    "acos": (-0.9, 0.9),
    "atan": (-3, 3),
    "sinh": (-2, 2),
    "cosh": (-2, 2),
    "tanh": (-3, 3),
    "asinh": (-3, 3),
    "acosh": (1.2, 3),
    "atanh": (-0.9, 0.9),
    "sigmoid": (-5, 5),
    "relu": (-3, 3),
    "abs": (-3, 3),
    "sign": (-3, 3),
    "reciprocal": (0.3, 3),
    "square": (-3, 3),
    "floor": (-3, 3),
    "ceil": (-3, 3),
    "round": (-3, 3),
    "trunc": (-3, 3),
    "frac": (-3, 3),
    "erf": (-2, 2),
    "neg": (-3, 3),
}
# Piecewise-constant or kinked ops: keep samples away from the kinks.
KINKED = {"relu", "abs", "sign", "floor", "ceil", "round", "trunc", "frac"}


def _sample(lo, hi, shape, kinked, rng):
    x = rng.uniform(lo, hi, size=shape)
    if kinked:
        x = np.round(x) + rng.uniform(0.1, 0.4, size=shape) * rng.choice([-1, 1], size=shape)
    return x


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_unary_gradcheck(name, shape):
    rng = np.random.default_rng(0)
    lo, hi = UNARY[name]
    x = ember.tensor(_sample(lo, hi, shape, name in KINKED, rng), requires_grad=True)
    assert gradcheck(getattr(ember, name), (x,))


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_torch(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    lo, hi = UNARY[name]
    data = _sample(lo, hi, (2, 3), name in KINKED, rng).astype(np.float32)
    x = ember.tensor(data, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    y = getattr(ember, name)(x)
    ty = getattr(torch, name)(tx)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert y.dtype.name == str(ty.dtype).split(".")[1]
    assert y.grad_fn.name() == ty.grad_fn.name()
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2"]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2,))])
def test_binary_gradcheck_broadcast(name, shapes):
    rng = np.random.default_rng(2)
    a = ember.tensor(rng.uniform(0.5, 2.0, shapes[0]), requires_grad=True)
    b = ember.tensor(rng.uniform(0.5, 2.0, shapes[1]) + 0.01, requires_grad=True)
    assert gradcheck(getattr(ember, name), (a, b))


def test_scalar_operands_and_reflected():
    x = ember.tensor([1.0, 2.0, 4.0], dtype=ember.float64, requires_grad=True)
    for f in (
        lambda t: t + 2,
        lambda t: 2 + t,
        lambda t: t - 2,
        lambda t: 2 - t,
        lambda t: t * 3,
        lambda t: 3 * t,
        lambda t: t / 2,
        lambda t: 2 / t,
        lambda t: t**3,
        lambda t: 2**t,
        lambda t: -t,
        lambda t: t**0.5,
        lambda t: ember.clamp(t, 1.5, 3.0),
        lambda t: ember.where(t > 1.5, t * t, -t),
    ):
        assert gradcheck(f, (x,))


def test_grad_fn_names_match_torch():
    torch = pytest.importorskip("torch")
    exprs = [
        "x+y",
        "x+2",
        "2+x",
        "x-y",
        "x-2",
        "2-x",
        "x*y",
        "x*2",
        "2*x",
        "x/y",
        "x/2",
        "2/x",
        "x**y",
        "x**2",
        "2**x",
        "-x",
        "x.clamp(0.6, 1)",
        "torch.maximum(x, y)",
        "torch.where(x > y, x, y)",
        "x.square()",
        "x.abs()",
    ]
    rng = np.random.default_rng(3)
    xd, yd = rng.uniform(0.5, 1.5, (2, 3)), rng.uniform(0.5, 1.5, (2, 3))
    for e in exprs:
        ours = eval(
            e,
            {
                "torch": ember,
                "x": ember.tensor(xd, requires_grad=True),
                "y": ember.tensor(yd, requires_grad=True),
            },
        )
        theirs = eval(
            e,
            {
                "torch": torch,
                "x": torch.tensor(xd, requires_grad=True),
                "y": torch.tensor(yd, requires_grad=True),
            },
        )
        assert ours.grad_fn.name() == theirs.grad_fn.name(), e
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy())


DTYPES = ["float32", "float64", "int64", "int32", "bool", "uint8"]


@pytest.mark.parametrize("da", DTYPES)
@pytest.mark.parametrize("db", DTYPES + ["pyint", "pyfloat", "0d-float64", "0d-int64"])
@pytest.mark.parametrize("op", ["add", "mul", "div", "sub"])
def test_type_promotion_matches_torch(da, db, op):
    torch = pytest.importorskip("torch")

    def make(lib, spec, n):
        if spec == "pyint":
            return 3
        if spec == "pyfloat":
            return 2.5
        if spec.startswith("0d-"):
            return lib.tensor(2, dtype=getattr(lib, spec[3:]))
        return lib.tensor([1, 0, 2][:n], dtype=getattr(lib, spec))

    a_e, b_e = make(ember, da, 3), make(ember, db, 3)
    a_t, b_t = make(torch, da, 3), make(torch, db, 3)
    try:
        expected = getattr(torch, op)(a_t, b_t)
    except Exception as exc:  # torch refuses (e.g. bool - bool): so must we
        with pytest.raises(type(exc)):
            getattr(ember, op)(a_e, b_e)
        return
    got = getattr(ember, op)(a_e, b_e)
    assert str(got.dtype) == str(expected.dtype)
    np.testing.assert_allclose(got.numpy().astype(float), expected.numpy().astype(float))


shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)


@settings(max_examples=60, deadline=None)
@given(
    shapes=shapes,
    op=st.sampled_from(["add", "sub", "mul", "div", "maximum"]),
    seed=st.integers(0, 2**16),
)
def test_broadcast_binary_vs_torch(shapes, op, seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    a = rng.uniform(0.5, 2, sa)
    b = rng.uniform(0.5, 2, sb)
    ea, eb = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    eo = getattr(ember, op)(ea, eb)
    to = getattr(torch, op)(ta, tb)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-12)
    w = rng.standard_normal(to.shape)
    eo.backward(ember.tensor(w))
    to.backward(torch.tensor(w))
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(eb.grad.numpy(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert ea.grad.shape == ea.shape and eb.grad.shape == eb.shape


def test_mixed_dtype_grad_has_input_dtype():
    a = ember.ones(3, requires_grad=True)  # float32
    b = ember.ones(3, dtype=ember.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype == ember.float32 and b.grad.dtype == ember.float64


def test_sigmoid_is_stable_at_extremes():
    x = ember.tensor([-1000.0, 0.0, 1000.0], requires_grad=True)
    y = x.sigmoid()
    assert y.tolist() == [0.0, 0.5, 1.0]
    y.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_comparisons_return_bool_and_are_not_differentiable():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    for r in (x == 1, x != 1, x < 2, x <= 2, x > 1, x >= 1, x.eq(x), x.isnan()):
        assert r.dtype == ember.bool and r.grad_fn is None and not r.requires_grad
    assert (x == 1).tolist() == [True, False]
    assert ember.allclose(x, x * 1.0000001)
    assert ember.equal(x, x.detach().clone()) if hasattr(x, "clone") else True


def test_errors_match_torch():
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool"):
        ember.tensor([True]) - ember.tensor([False])
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -ember.tensor([True])
    with pytest.raises(TypeError, match=r"sin\(\): argument 'input' \(position 1\) must be Tensor"):
        ember.sin(1.0)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        ember.tensor([2]) ** -1


def test_numpy_array_on_the_left_defers_to_tensor():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = np.array([3.0, 4.0], dtype=np.float32) * x
    assert isinstance(y, ember.Tensor) and y.grad_fn.name() == "MulBackward0"
    z = np.sin(x)
    assert isinstance(z, ember.Tensor) and z.grad_fn.name() == "SinBackward0"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("size", [8, 8192])  # the small (stable) and large (in place) paths
def test_sigmoid_paths_agree_with_torch(dtype, size):
    torch = pytest.importorskip("torch")
    edge = [-1000.0, -60.0, -20.0, -1.0, 0.0, 1.0, 20.0, 1000.0]
    a = np.resize(np.array(edge, dtype=dtype), size)
    expected = torch.sigmoid(torch.tensor(a)).numpy()
    with np.errstate(over="raise", divide="raise", invalid="raise"):  # no warnings leak out
        got = ember.tensor(a).sigmoid().numpy()
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=2e-3 if dtype == "float16" else 1e-6)


@pytest.mark.parametrize("name", ["isposinf", "isneginf"])
def test_infinity_tests_match_torch(name):
    torch = pytest.importorskip("torch")
    values = [-np.inf, np.inf, np.nan, 0.0, -1.5]
    for dtype in (np.float32, np.float64):
        got = getattr(ember, name)(ember.tensor(np.array(values, dtype)))
        want = getattr(torch, name)(torch.tensor(np.array(values, dtype)))
        assert got.dtype == ember.bool and got.tolist() == want.tolist()
    assert getattr(ember.tensor([1, -2]), name)().tolist() == [False, False]
    out = ember.empty(5, dtype=ember.bool)
    getattr(ember, name)(ember.tensor(np.array(values)), out=out)
    assert out.tolist() == got.tolist()
    with pytest.raises(RuntimeError, match=f"{name} does not support complex inputs."):
        getattr(ember, name)(ember.tensor([1j]))
