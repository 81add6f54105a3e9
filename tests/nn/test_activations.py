"""Activation modules and functions against torch (float64): values, input and parameter
gradients, reprs, in-place behaviour and errors over option grids. The per-op autograd
checks (forward mode, double backward, grad_fn names) live in tests/opdb/nn_activation.py."""

import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(11)
X = RNG.standard_normal((3, 4, 5)) * 3  # no sample sits on a kink (all |x| well off 0, ±1, ±3)

MODULES = [
    ("Threshold", (0.5, -2.0), {}),
    ("Threshold", (0.1, 20.0), {"inplace": True}),
    ("ReLU", (), {"inplace": True}),
    ("RReLU", (0.1, 0.3), {}),
    ("Hardtanh", (), {}),
    ("Hardtanh", (-2.0, 0.5), {"inplace": True}),
    ("ReLU6", (), {}),
    ("ReLU6", (True,), {}),
    ("Sigmoid", (), {}),
    ("Hardsigmoid", (), {}),
    ("Hardsigmoid", (True,), {}),
    ("Tanh", (), {}),
    ("SiLU", (), {}),
    ("SiLU", (), {"inplace": True}),
    ("Mish", (), {}),
    ("Mish", (True,), {}),
    ("Hardswish", (), {}),
    ("ELU", (), {}),
    ("ELU", (0.3,), {"inplace": True}),
    ("CELU", (2.0,), {}),
    ("CELU", (), {"inplace": True}),
    ("SELU", (), {}),
    ("SELU", (True,), {}),
    ("GLU", (), {"dim": 1}),
    ("GLU", (-2,), {}),
    ("GELU", (), {"approximate": "tanh"}),
    ("Hardshrink", (1.2,), {}),
    ("LeakyReLU", (0.2, True), {}),
    ("LogSigmoid", (), {}),
    ("Softplus", (), {}),
    ("Softplus", (2, 3.0), {}),
    ("Softshrink", (), {"lambd": 0.8}),
    ("PReLU", (), {}),
    ("PReLU", (4,), {"init": 0.1}),
    ("Softsign", (), {}),
    ("Tanhshrink", (), {}),
    ("Softmin", (), {"dim": 1}),
    ("Softmax2d", (), {}),
]


def _pair(name, args, kwargs):
    return getattr(ember.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)


@pytest.mark.parametrize("name,args,kwargs", MODULES, ids=lambda v: str(v))
def test_module_matches_torch(name, args, kwargs):
    em, tm = _pair(name, args, kwargs)
    assert repr(em) == repr(tm)
    em.double()
    tm.double()
    if name == "RReLU":  # random slopes in training (tested below): the mean slope in eval
        em.eval()
        tm.eval()
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    shape = (2, 4, 3, 5) if name == "Softmax2d" else X.shape
    x = RNG.standard_normal(shape) * 3
    ex = ember.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    inplace = getattr(em, "inplace", False)
    ey, ty = em(ex * 1 if inplace else ex), tm(tx * 1 if inplace else tx)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-14)
    gy = RNG.standard_normal(tuple(ty.shape))
    ey.backward(ember.tensor(gy))
    ty.backward(torch.tensor(gy))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    for (n, ep), (_, tp) in zip(em.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-9, err_msg=n)


def test_reprs_with_options_match_torch():
    for name, args in [
        ("Hardtanh", (-1.0, 1.0, True)),
        ("Threshold", (1, 2, True)),
        ("RReLU", (0.1, 0.2, True)),
        ("ELU", (2.0, True)),
        ("CELU", (0.5,)),
        ("Softmin", (0,)),
        ("GLU", ()),
        ("Softshrink", ()),
        ("Hardswish", (True,)),
        ("PReLU", (3, 0.5)),
    ]:
        em, tm = _pair(name, args, {})
        assert repr(em) == repr(tm)


@pytest.mark.parametrize(
    "fname,kw",
    [
        ("relu_", {}),
        ("elu_", {"alpha": 0.5}),
        ("selu_", {}),
        ("celu_", {"alpha": 1.5}),
        ("hardtanh_", {"min_val": -0.5, "max_val": 2.0}),
        ("leaky_relu_", {"negative_slope": 0.3}),
        ("threshold_", {"threshold": 0.2, "value": -1.0}),
        ("rrelu_", {}),
    ],
)
def test_inplace_functions_write_into_their_input(fname, kw):
    x = RNG.standard_normal((4, 5))
    e, t = ember.tensor(x), torch.tensor(x)
    v = e._version
    assert getattr(F, fname)(e, **kw) is e
    getattr(TF, fname)(t, **kw)
    assert e._version > v
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


def test_inplace_flag_on_a_leaf_requiring_grad_is_refused_like_torch():
    for fn in [lambda m, x: m.nn.functional.elu(x, inplace=True), lambda m, x: m.nn.SiLU(True)(x)]:
        with pytest.raises(RuntimeError) as te:
            fn(torch, torch.ones(2, requires_grad=True))
        with pytest.raises(RuntimeError) as ee:
            fn(ember, ember.ones(2, requires_grad=True))
        assert str(ee.value) == str(te.value)


def _errors_match(fn, exc=RuntimeError):
    with pytest.raises(exc) as te:
        fn(torch)
    with pytest.raises(exc) as ee:
        fn(ember)
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize(
    "fn,exc",
    [
        (lambda m: m.nn.functional.prelu(m.ones(2, 4), m.ones(3)), RuntimeError),
        (lambda m: m.nn.functional.prelu(m.ones(5), m.ones(5)), RuntimeError),
        (lambda m: m.nn.functional.prelu(m.ones(2, 4), m.ones(1, 4)), RuntimeError),
        (lambda m: m.nn.functional.prelu(m.ones(2), m.ones(1, dtype=m.float64)), RuntimeError),
        (lambda m: m.nn.PReLU(3)(m.ones(2, 4)), RuntimeError),
        (lambda m: m.nn.functional.glu(m.ones(3, 3), 1), RuntimeError),
        (lambda m: m.nn.functional.glu(m.ones(3, 2), 2), IndexError),
        (lambda m: m.nn.functional.glu(m.tensor(1.0)), RuntimeError),
        (lambda m: m.nn.functional.softshrink(m.ones(2, dtype=m.float64), -1.0), RuntimeError),
        (lambda m: m.nn.functional.softshrink(m.ones(2), -0.5), RuntimeError),
        (lambda m: m.nn.functional.hardtanh(m.ones(2), 2.0, 1.0), ValueError),
        (lambda m: m.nn.Hardtanh(1.0, 1.0), AssertionError),
        (lambda m: m.nn.functional.celu(m.ones(2), 0.0), RuntimeError),
        (lambda m: m.nn.functional.rrelu(m.ones(2), 0.5, 0.1, True), RuntimeError),
        (lambda m: m.nn.Softmax2d()(m.ones(2, 2)), ValueError),
        (lambda m: m.nn.functional.elu(m.tensor([1, 2])), NotImplementedError),
        (lambda m: m.nn.functional.silu(m.tensor([1, 2])), NotImplementedError),
        (lambda m: m.nn.functional.softplus(m.tensor([1, 2])), NotImplementedError),
        (lambda m: m.nn.functional.logsigmoid(m.tensor([1, 2])), NotImplementedError),
        (lambda m: m.nn.functional.hardshrink(m.tensor([1, 2])), NotImplementedError),
        (lambda m: m.nn.functional.glu(m.tensor([1, 2])), NotImplementedError),
        (lambda m: m.nn.functional.prelu(m.tensor([1, 2]), m.tensor([1])), NotImplementedError),
    ],
)
def test_errors_match_torch(fn, exc):
    _errors_match(fn, exc)


def test_inplace_elu_with_negative_alpha_fails_in_backward_like_torch():
    def fn(m):
        x = m.ones(3, requires_grad=True)
        m.nn.functional.elu(x * 1, -0.5, inplace=True).sum().backward()

    _errors_match(fn)


def test_hardsigmoid_double_backward_is_the_exact_one():
    # torch raises "derivative for aten::hardsigmoid_backward is not implemented"; ember
    # gives the true second derivative: zero away from the kinks (the first derivative is
    # constant in x there, so it records nothing for x).
    x = ember.tensor([-4.0, 0.5, 2.0], requires_grad=True)
    (g,) = ember.autograd.grad(F.hardsigmoid(x).sum(), x, create_graph=True)
    assert not g.requires_grad
    np.testing.assert_array_equal(g.numpy(), np.float32([0, 1, 1]) / np.float32(6))
    u = ember.ones(3, requires_grad=True)
    (g,) = ember.autograd.grad(F.hardsigmoid(x), x, u, create_graph=True)
    gx, gu = ember.autograd.grad(g.sum(), (x, u), allow_unused=True)
    assert gx is None
    np.testing.assert_array_equal(gu.numpy(), g.detach().numpy())


def test_integer_inputs_where_torch_keeps_them():
    for fn in [
        lambda m, x: m.nn.functional.hardtanh(x, -2, 2),
        lambda m, x: m.nn.functional.relu6(x),
        lambda m, x: m.nn.functional.threshold(x, 1, 7),
    ]:
        e, t = fn(ember, ember.tensor([-3, 1, 2, 9])), fn(torch, torch.tensor([-3, 1, 2, 9]))
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_rrelu_training_draws_slopes_from_embers_generator():
    m = ember.nn.RReLU(0.1, 0.3)
    x = ember.tensor(-np.abs(RNG.standard_normal(1000)) - 0.1, requires_grad=True)
    ember.manual_seed(3)
    y = m(x)
    slopes = (y / x).detach().numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    y.backward(ember.ones(1000))
    np.testing.assert_allclose(x.grad.numpy(), slopes, rtol=1e-6)
    ember.manual_seed(3)
    np.testing.assert_array_equal(m(x).detach().numpy(), y.detach().numpy())
    pos = ember.tensor([1.0, 2.0])
    np.testing.assert_array_equal(m(pos).numpy(), pos.numpy())
    m.eval()
    np.testing.assert_allclose((m(x) / x).detach().numpy(), 0.2)


def test_softmin_implicit_dim_warns_like_torch():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        e = F.softmin(ember.tensor([[1.0, 2.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = TF.softmin(torch.tensor([[1.0, 2.0]]))
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


def test_softplus_is_stable_and_linear_above_threshold():
    x = ember.tensor([-1000.0, 0.0, 15.0, 1000.0], dtype=ember.float64)
    t = torch.tensor([-1000.0, 0.0, 15.0, 1000.0], dtype=torch.float64)
    for kw in [{}, {"beta": 2.0, "threshold": 10.0}, {"beta": 0.5}]:
        np.testing.assert_allclose(F.softplus(x, **kw).numpy(), TF.softplus(t, **kw).numpy())
    np.testing.assert_allclose(F.logsigmoid(x).numpy(), TF.logsigmoid(t).numpy())


def test_every_torch_activation_exists():
    import torch.nn.modules.activation as A

    missing = [n for n in A.__all__ if n != "MultiheadAttention" and not hasattr(ember.nn, n)]
    assert missing == []
    names = [
        "threshold", "threshold_", "relu", "relu_", "glu", "hardtanh", "hardtanh_", "relu6",
        "elu", "elu_", "selu", "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_", "prelu",
        "rrelu", "rrelu_", "logsigmoid", "gelu", "hardshrink", "tanhshrink", "softsign",
        "softplus", "softmin", "softmax", "softshrink", "tanh", "sigmoid", "hardsigmoid",
        "silu", "mish", "hardswish", "log_softmax",
    ]  # fmt: skip
    assert [n for n in names if not hasattr(F, n)] == []
