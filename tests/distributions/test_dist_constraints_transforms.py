"""constraints, transforms and TransformedDistribution against torch; argument and sample
validation errors with torch's messages."""

import numpy as np
import pytest

import ember
import ember.distributions as D
from ember.distributions import constraints as C
from ember.distributions import transforms as T

torch = pytest.importorskip("torch")
TD = torch.distributions
TC = torch.distributions.constraints
TT = torch.distributions.transforms


@pytest.fixture(autouse=True)
def _float64():
    old, told = ember.get_default_dtype(), torch.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    yield
    ember.set_default_dtype(old)
    torch.set_default_dtype(told)


VALUES = [
    np.array([-1.0, 0.0, 0.5, 1.0, 2.0, np.nan, 3.5]),
    np.array([[0.2, 0.8], [0.5, 0.6], [1.0, 0.0], [-0.1, 1.1]]),
    np.array([[[1.0, 0.0], [0.3, 2.0]], [[1.0, 0.2], [0.3, 2.0]], [[-1.0, 0.0], [0.3, 2.0]]]),
    np.array([[[2.0, 0.5], [0.5, 1.0]], [[1.0, 2.0], [2.0, 1.0]], [[1.0, 0.0], [0.0, 0.0]]]),
]

CONSTRAINTS = [
    "real",
    "positive",
    "nonnegative",
    "unit_interval",
    "simplex",
    "boolean",
    "nonnegative_integer",
    "positive_integer",
    "lower_cholesky",
    "lower_triangular",
    "positive_definite",
    "positive_semidefinite",
    "symmetric",
    "square",
    "real_vector",
    "one_hot",
    "corr_cholesky",
]
FACTORIES = [
    ("integer_interval", (0, 3)),
    ("interval", (0.0, 2.0)),
    ("half_open_interval", (0.0, 1.0)),
    ("greater_than", (1.0,)),
    ("greater_than_eq", (1.0,)),
    ("less_than", (2.0,)),
    ("multinomial", (3,)),
]


def _pairs():
    for name in CONSTRAINTS:
        yield name, getattr(C, name), getattr(TC, name)
    for name, args in FACTORIES:
        yield name, getattr(C, name)(*args), getattr(TC, name)(*args)
    yield "independent", C.independent(C.positive, 1), TC.independent(TC.positive, 1)


@pytest.mark.parametrize("name,ce,ct", list(_pairs()), ids=[p[0] for p in _pairs()])
def test_constraints_match_torch(name, ce, ct):
    assert repr(ce) == repr(ct)
    assert ce.event_dim == ct.event_dim and ce.is_discrete == ct.is_discrete
    checked = 0
    for v in VALUES:
        if v.ndim < ct.event_dim or (ct.event_dim == 2 and v.shape[-1] != v.shape[-2]):
            continue
        with np.errstate(invalid="ignore"):
            expected = ct.check(torch.tensor(v)).numpy()
            got = ce.check(ember.tensor(v)).numpy()
        np.testing.assert_array_equal(got, expected)
        checked += 1
    assert checked >= 1


def test_dependent_constraints():
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    assert C.is_dependent(D.Uniform.support)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        C.dependent.check(ember.tensor(1.0))
    u = D.Uniform(ember.tensor([0.0]), ember.tensor([2.0]))
    assert u.support.check(ember.tensor([1.0, 3.0])).tolist() == [True, False]


def _transform_pairs():
    loc, scale = np.array([0.5, -1.0, 2.0]), np.array([2.0, -0.5, 1.5])
    yield (
        "affine",
        T.AffineTransform(ember.tensor(loc), ember.tensor(scale)),
        TT.AffineTransform(torch.tensor(loc), torch.tensor(scale)),
    )
    yield (
        "affine_scalar_event",
        T.AffineTransform(1.0, 3.0, event_dim=1),
        TT.AffineTransform(1.0, 3.0, event_dim=1),
    )
    yield "exp", T.ExpTransform(), TT.ExpTransform()
    yield "sigmoid", T.SigmoidTransform(), TT.SigmoidTransform()
    yield "tanh", T.TanhTransform(), TT.TanhTransform()
    yield "softplus", T.SoftplusTransform(), TT.SoftplusTransform()
    yield (
        "cdf",
        T.CumulativeDistributionTransform(D.Normal(ember.tensor(0.5), ember.tensor(2.0))),
        TT.CumulativeDistributionTransform(TD.Normal(torch.tensor(0.5), torch.tensor(2.0))),
    )
    yield (
        "power",
        T.PowerTransform(ember.tensor(2.5, dtype=ember.float64)),
        TT.PowerTransform(torch.tensor(2.5, dtype=torch.float64)),
    )
    yield "stick_breaking", T.StickBreakingTransform(), TT.StickBreakingTransform()
    yield (
        "compose",
        T.ComposeTransform([T.AffineTransform(0.3, 2.0), T.ExpTransform()]),
        TT.ComposeTransform([TT.AffineTransform(0.3, 2.0), TT.ExpTransform()]),
    )
    yield (
        "compose_event",
        T.ComposeTransform(
            [T.IndependentTransform(T.ExpTransform(), 1), T.AffineTransform(1.0, 2.0)]
        ),
        TT.ComposeTransform(
            [TT.IndependentTransform(TT.ExpTransform(), 1), TT.AffineTransform(1.0, 2.0)]
        ),
    )
    yield (
        "cat",
        T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], dim=1, lengths=[1, 2]),
        TT.CatTransform([TT.ExpTransform(), TT.AffineTransform(1.0, 2.0)], dim=1, lengths=[1, 2]),
    )
    yield (
        "stack",
        T.StackTransform([T.ExpTransform(), T.TanhTransform()], dim=0),
        TT.StackTransform([TT.ExpTransform(), TT.TanhTransform()], dim=0),
    )
    yield "corr_cholesky", T.CorrCholeskyTransform(), TT.CorrCholeskyTransform()
    yield "inverse_sigmoid", T.SigmoidTransform().inv, TT.SigmoidTransform().inv
    yield "identity", T.identity_transform, TT.identity_transform


@pytest.mark.parametrize(
    "name,te,tt", list(_transform_pairs()), ids=[p[0] for p in _transform_pairs()]
)
def test_transforms_match_torch(name, te, tt):
    x = np.array([[0.3, -0.7, 1.2], [0.1, 0.4, -2.0]])
    if name in ("power", "inverse_sigmoid"):
        x = np.abs(x) / 3
    xe = ember.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    ye, yt = te(xe), tt(xt)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(te.inv(ye).detach().numpy(), x, rtol=1e-8, atol=1e-10)
    assert te.domain.event_dim == tt.domain.event_dim
    assert te.codomain.event_dim == tt.codomain.event_dim
    assert te.bijective == tt.bijective
    assert tuple(te.forward_shape(ember.Size([2, 3]))) == tuple(
        tt.forward_shape(torch.Size([2, 3]))
    )
    assert tuple(te.inverse_shape(ember.Size(ye.shape))) == tuple(tt.inverse_shape(yt.shape))
    le, lt = te.log_abs_det_jacobian(xe, ye), tt.log_abs_det_jacobian(xt, yt)
    np.testing.assert_allclose(le.detach().numpy(), lt.detach().numpy(), rtol=1e-9, atol=1e-12)
    (ye.sum() + le.sum()).backward()
    (yt.sum() + lt.sum()).backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-10)
    assert repr(te) == repr(tt)


def test_transform_sign_cache_equality_and_softmax():
    assert T.AffineTransform(0.0, -2.0).sign == -1
    assert T.ComposeTransform([T.AffineTransform(0.0, -2.0), T.ExpTransform()]).sign == -1
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.ExpTransform().inv.inv == T.ExpTransform()
    cached = T.ExpTransform(cache_size=1)
    x = ember.tensor([0.5])
    y = cached(x)
    assert cached.inv(y) is x  # the cached pair is returned exactly
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)
    x = np.array([[0.3, -0.7, 1.2]])
    np.testing.assert_allclose(
        T.SoftmaxTransform()(ember.tensor(x)).numpy(),
        TT.SoftmaxTransform()(torch.tensor(x)).numpy(),
    )
    with pytest.raises(NotImplementedError):
        T.SoftmaxTransform().log_abs_det_jacobian(ember.tensor(x), ember.tensor(x))


def test_transformed_distribution_matches_torch():
    loc, scale = np.array([[0.0, 1.0, -0.5]]), np.array([[1.0, 0.5, 2.0]])
    for make in (
        lambda M, Tr, a, b: M.TransformedDistribution(
            M.Normal(a, b), [Tr.StickBreakingTransform()]
        ),
        lambda M, Tr, a, b: M.TransformedDistribution(
            M.Normal(a, b), Tr.ComposeTransform([Tr.AffineTransform(-1.0, -2.0), Tr.ExpTransform()])
        ),
        lambda M, Tr, a, b: M.TransformedDistribution(M.Normal(a, b), Tr.TanhTransform()),
    ):
        ae, be = ember.tensor(loc, requires_grad=True), ember.tensor(scale, requires_grad=True)
        at, bt = torch.tensor(loc, requires_grad=True), torch.tensor(scale, requires_grad=True)
        de, dt = make(D, T, ae, be), make(TD, TT, at, bt)
        assert de.batch_shape == dt.batch_shape and de.event_shape == dt.event_shape
        assert repr(de.support) == repr(dt.support)
        with torch.no_grad():
            y = dt.sample((4,))
        le, lt = de.log_prob(ember.tensor(y.numpy())), dt.log_prob(y)
        np.testing.assert_allclose(le.detach().numpy(), lt.detach().numpy(), rtol=1e-8)
        le.sum().backward()
        lt.sum().backward()
        np.testing.assert_allclose(ae.grad.numpy(), at.grad.numpy(), rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(be.grad.numpy(), bt.grad.numpy(), rtol=1e-8, atol=1e-12)
        assert tuple(de.rsample((5,)).shape) == tuple(dt.rsample((5,)).shape)
    # cdf/icdf through a decreasing transform are monotonised like torch's.
    de = D.TransformedDistribution(D.Normal(0.0, 1.0), [T.AffineTransform(1.0, -2.0)])
    dt = TD.TransformedDistribution(TD.Normal(0.0, 1.0), [TT.AffineTransform(1.0, -2.0)])
    v = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_allclose(de.cdf(ember.tensor(v)).numpy(), dt.cdf(torch.tensor(v)).numpy())
    q = np.array([0.1, 0.5, 0.8])
    np.testing.assert_allclose(de.icdf(ember.tensor(q)).numpy(), dt.icdf(torch.tensor(q)).numpy())
    with pytest.raises(ValueError, match="transforms must be a Transform or list"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), "exp")


def _err(fn):
    try:
        fn()
    except (ValueError, NotImplementedError) as e:
        return type(e).__name__, str(e)
    raise AssertionError("no error raised")


@pytest.mark.parametrize(
    "make",
    [
        lambda M, t: M.Normal(t([0.0, 1.0]), t([1.0, -1.0])),
        lambda M, t: M.Normal(t([0.0, float("nan")]), t([1.0, 1.0])),
        lambda M, t: M.Bernoulli(t([0.5, 1.5])),
        lambda M, t: M.Categorical(probs=t([0.5, -0.5])),
        lambda M, t: M.Categorical(probs=t([0.5, 0.5]), logits=t([0.0, 0.0])),
        lambda M, t: M.Categorical(probs=t(0.5)),
        lambda M, t: M.Uniform(t([1.0]), t([0.0])),
        lambda M, t: M.Gamma(t([1.0]), t([0.0])),
        lambda M, t: M.Dirichlet(t([1.0, -1.0])),
        lambda M, t: M.Geometric(t([0.0, 0.5])),
        lambda M, t: M.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 2.0], [2.0, 1.0]])),
        lambda M, t: M.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[1.0, 1.0], [0.0, 1.0]])),
        lambda M, t: M.MultivariateNormal(t([0.0, 0.0])),
        lambda M, t: M.MultivariateNormal(t(0.0), t([[1.0]])),
        lambda M, t: M.Independent(M.Normal(t([0.0]), t([1.0])), 2),
        lambda M, t: M.Multinomial(t(3), t([0.5, 0.5])),
        lambda M, t: M.MixtureSameFamily(
            M.Normal(t([0.0]), t([1.0])), M.Normal(t([0.0]), t([1.0]))
        ),
        lambda M, t: M.MixtureSameFamily(
            M.Categorical(t([0.5, 0.5])), M.Normal(t([0.0] * 3), t([1.0] * 3))
        ),
    ],
)
def test_argument_validation_errors_match_torch(make):
    assert _err(lambda: make(D, ember.tensor)) == _err(lambda: make(TD, torch.tensor))


@pytest.mark.parametrize(
    "make,value",
    [
        (lambda M, t: M.Normal(t([0.0, 1.0]), t([1.0, 1.0])), [[0.0, 1.0, 2.0]]),
        (lambda M, t: M.Exponential(t([1.0, 2.0])), [-1.0, 1.0]),
        (lambda M, t: M.Bernoulli(t([0.5])), [0.5]),
        (lambda M, t: M.Categorical(t([0.2, 0.8])), [2.0]),
        (lambda M, t: M.Dirichlet(t([1.0, 1.0])), [1.0, 1.0, 1.0]),
        (lambda M, t: M.Dirichlet(t([1.0, 1.0])), [0.7, 0.7]),
        (lambda M, t: M.Uniform(t([0.0]), t([1.0])), [1.5]),
        (lambda M, t: M.Binomial(5, t([0.5])), [6.0]),
    ],
)
def test_sample_validation_errors_match_torch(make, value):
    assert _err(lambda: make(D, ember.tensor).log_prob(ember.tensor(value))) == _err(
        lambda: make(TD, torch.tensor).log_prob(torch.tensor(value))
    )


def test_validation_switches():
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        D.Normal(0.0, 1.0).log_prob(1.0)
    # validate_args=False skips the checks (like torch, the result is nan, not an error).
    d = D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]), validate_args=False)
    assert np.isnan(d.log_prob(ember.tensor([0.0])).numpy()).all()
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]))  # no error
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")
    with pytest.raises(ValueError, match="satisfy the constraint GreaterThan"):
        D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]))


REGISTRY_CASES = [
    ("real", lambda c: c.real, (3,)),
    ("positive", lambda c: c.positive, (3,)),
    ("nonnegative", lambda c: c.nonnegative, (3,)),
    ("greater_than", lambda c: c.greater_than(1.5), (3,)),
    ("greater_than_eq", lambda c: c.greater_than_eq(-1.0), (3,)),
    ("less_than", lambda c: c.less_than(2.0), (3,)),
    ("unit_interval", lambda c: c.unit_interval, (3,)),
    ("interval", lambda c: c.interval(-1.0, 3.0), (3,)),
    ("half_open_interval", lambda c: c.half_open_interval(0.0, 2.0), (3,)),
    ("simplex", lambda c: c.simplex, (2, 3)),
    ("independent", lambda c: c.independent(c.positive, 1), (2, 3)),
    ("lower_cholesky", lambda c: c.lower_cholesky, (3, 3)),
    ("positive_definite", lambda c: c.positive_definite, (3, 3)),
    ("corr_cholesky", lambda c: c.corr_cholesky, (2, 6)),
    ("cat", lambda c: c.cat([c.positive, c.real, c.unit_interval], dim=-1), (2, 3)),
    ("stack", lambda c: c.stack([c.positive, c.interval(-1.0, 1.0)], dim=0), (2, 3)),
]


@pytest.mark.parametrize("name,make,shape", REGISTRY_CASES, ids=[c[0] for c in REGISTRY_CASES])
def test_biject_to_and_transform_to_match_torch(name, make, shape):
    x = np.random.default_rng(1).standard_normal(shape)
    compared = 0
    for reg_e, reg_t in ((D.transform_to, TD.transform_to), (D.biject_to, TD.biject_to)):
        try:
            tt = reg_t(make(TC))
        except NotImplementedError as err:
            with pytest.raises(NotImplementedError, match=str(err)):
                reg_e(make(C))
            continue
        te = reg_e(make(C))
        assert repr(te) == repr(tt)
        ye = te(ember.tensor(x))
        yt = tt(torch.tensor(x))
        np.testing.assert_allclose(ye.numpy(), yt.numpy(), rtol=1e-10, atol=1e-12)
        assert bool(make(C).check(ye).all())
        if tt.bijective:
            np.testing.assert_allclose(te.inv(ye).numpy(), x, rtol=1e-7, atol=1e-9)
            np.testing.assert_allclose(
                te.log_abs_det_jacobian(ember.tensor(x), ye).numpy(),
                tt.log_abs_det_jacobian(torch.tensor(x), yt).numpy(),
                rtol=1e-9,
                atol=1e-12,
            )
        compared += 1
    assert compared >= 1


def test_constraint_registry_register_and_errors():
    reg = D.constraint_registry.ConstraintRegistry()
    with pytest.raises(NotImplementedError, match="Cannot transform _Real constraints"):
        reg(C.real)
    reg.register(C.real, lambda c: T.ExpTransform())
    assert reg(C.real) == T.ExpTransform()
    with pytest.raises(TypeError, match="Expected constraint to be either"):
        reg.register(3, lambda c: None)
    # Optimising a positive parameter through transform_to, as torch programs do.
    raw = ember.zeros(2, requires_grad=True)
    scale = D.transform_to(D.Normal.arg_constraints["scale"])(raw)
    D.Normal(0.0, scale).log_prob(ember.tensor([1.0, 2.0])).sum().backward()
    np.testing.assert_allclose(raw.grad.numpy(), [0.0, 3.0])
