"""ember.distributions against torch.distributions in float64: log_prob, cdf, icdf, entropy,
mean/mode/variance/stddev, enumerate_support, shapes, reprs, and the gradients of
log_prob + entropy with respect to every parameter."""

import math
import warnings

import numpy as np
import pytest

import ember
import ember.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions

f64 = np.float64


def _a(*x):
    return np.array(x, dtype=f64)


# name -> (constructor(M, *params), params (numpy), value (numpy), icdf arg or None)
CASES = {
    "Normal": (
        lambda M, a, b: M.Normal(a, b),
        [_a(0.0, 1.0), _a(1.0, 2.0)],
        _a(0.3, -1.0),
        _a(0.3, 0.9),
    ),
    "Normal_scalar": (lambda M: M.Normal(0.5, 2.0), [], _a(0.3), _a(0.2)),
    "Categorical_logits": (
        lambda M, a: M.Categorical(logits=a),
        [np.array([[0.2, 0.3, 0.5], [1.0, -1.0, 0.8]])],
        np.array([0, 2]),
        None,
    ),
    "Categorical_probs": (
        lambda M, a: M.Categorical(probs=a),
        [np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])],
        np.array([[1, 2], [0, 0]]),
        None,
    ),
    "Bernoulli_logits": (lambda M, a: M.Bernoulli(logits=a), [_a(0.3, -0.5)], _a(1.0, 0.0), None),
    "Bernoulli_probs": (
        lambda M, a: M.Bernoulli(probs=a),
        [_a(0.3, 0.5, 0.9)],
        _a(1.0, 0.0, 1.0),
        None,
    ),
    "Uniform": (
        lambda M, a, b: M.Uniform(a, b),
        [_a(0.0, 1.0), _a(3.0, 4.0)],
        _a(0.5, 2.0),
        _a(0.2, 0.7),
    ),
    "OneHotCategorical": (
        lambda M, a: M.OneHotCategorical(probs=a),
        [_a(0.2, 0.3, 0.5)],
        np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
        None,
    ),
    "MVN_cov": (
        lambda M, loc, c: M.MultivariateNormal(loc, covariance_matrix=c),
        [_a(0.0, 1.0), np.array([[2.0, 0.5], [0.5, 1.0]])],
        np.array([[0.3, 0.2], [-1.0, 2.0]]),
        None,
    ),
    "MVN_prec": (
        lambda M, loc, p: M.MultivariateNormal(loc, precision_matrix=p),
        [_a(0.0, 1.0, -1.0), np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 3.0]])],
        _a(0.3, 0.2, 0.1),
        None,
    ),
    "MVN_tril_batched": (
        lambda M, loc, L: M.MultivariateNormal(loc, scale_tril=L),
        [np.array([[0.0, 1.0], [1.0, 2.0]]), np.array([[2.0, 0.0], [0.5, 1.0]])],
        _a(0.3, 0.2),
        None,
    ),
    "Exponential": (lambda M, a: M.Exponential(a), [_a(0.5, 2.0)], _a(0.3, 1.2), _a(0.3, 0.9)),
    "Laplace": (
        lambda M, a, b: M.Laplace(a, b),
        [_a(0.0, 1.0), _a(1.0, 2.0)],
        _a(0.3, -1.0),
        _a(0.3, 0.8),
    ),
    "LogNormal": (
        lambda M, a, b: M.LogNormal(a, b),
        [_a(0.0, 1.0), _a(1.0, 0.5)],
        _a(0.3, 2.0),
        _a(0.3, 0.8),
    ),
    "Cauchy": (
        lambda M, a, b: M.Cauchy(a, b),
        [_a(0.0, 1.0), _a(1.0, 2.0)],
        _a(0.3, -1.0),
        _a(0.3, 0.8),
    ),
    "Gamma": (lambda M, a, b: M.Gamma(a, b), [_a(0.5, 3.0), _a(1.0, 2.0)], _a(0.3, 1.2), None),
    "Chi2": (lambda M, a: M.Chi2(a), [_a(3.0, 5.0)], _a(0.3, 1.2), None),
    "Beta": (lambda M, a, b: M.Beta(a, b), [_a(0.5, 3.0), _a(2.0, 2.0)], _a(0.3, 0.8), None),
    "Dirichlet": (
        lambda M, a: M.Dirichlet(a),
        [np.array([[0.5, 3.0, 2.0], [0.5, 0.7, 0.9]])],
        _a(0.3, 0.5, 0.2),
        None,
    ),
    "Poisson": (lambda M, a: M.Poisson(a), [_a(0.5, 3.0)], _a(0.0, 4.0), None),
    "Binomial": (lambda M, a: M.Binomial(10, a), [_a(0.3, 0.6)], _a(2.0, 7.0), None),
    "Binomial_logits": (
        lambda M, n, a: M.Binomial(n, logits=a),
        [_a(8.0, 8.0), _a(0.3, -0.6)],
        _a(2.0, 7.0),
        None,
    ),
    "Geometric": (lambda M, a: M.Geometric(a), [_a(0.3, 0.6)], _a(2.0, 7.0), None),
    "Geometric_logits": (lambda M, a: M.Geometric(logits=a), [_a(0.3, -0.6)], _a(2.0, 0.0), None),
    "Multinomial": (lambda M, a: M.Multinomial(6, a), [_a(0.2, 0.3, 0.5)], _a(1.0, 2.0, 3.0), None),
    "StudentT": (
        lambda M, a, b, c: M.StudentT(a, b, c),
        [_a(0.8, 1.5, 4.0), _a(0.0, 1.0, 2.0), _a(1.0, 2.0, 3.0)],
        _a(0.3, -1.0, 2.0),
        None,
    ),
    "MixtureSameFamily": (
        lambda M, w, loc, s: M.MixtureSameFamily(M.Categorical(w), M.Normal(loc, s)),
        [_a(0.2, 0.8), _a(0.0, 2.0), _a(1.0, 0.5)],
        _a(0.7, -0.3),
        None,
    ),
    "MixtureSameFamily_mvn": (
        lambda M, w, loc, s: M.MixtureSameFamily(
            M.Categorical(logits=w), M.Independent(M.Normal(loc, s), 1)
        ),
        [
            _a(0.2, 0.8, -1.0),
            np.array([[0.0, 1.0], [2.0, 0.0], [-1.0, -1.0]]),
            np.full((3, 2), 0.7),
        ],
        _a(0.7, -0.3),
        None,
    ),
    "RelaxedBernoulli": (
        lambda M, t, p: M.RelaxedBernoulli(t, p),
        [np.array(0.7), _a(0.3, 0.6)],
        _a(0.2, 0.9),
        None,
    ),
    "RelaxedOneHotCategorical": (
        lambda M, t, p: M.RelaxedOneHotCategorical(t, p),
        [np.array(0.7), _a(0.2, 0.3, 0.5)],
        _a(0.2, 0.3, 0.5),
        None,
    ),
    "Independent": (
        lambda M, a, b: M.Independent(M.Normal(a, b), 1),
        [np.array([[0.0, 1.0]]), np.array([[1.0, 2.0]])],
        _a(0.3, 0.2),
        None,
    ),
    "HalfNormal": (lambda M, a: M.HalfNormal(a), [_a(0.5, 2.0)], _a(0.3, 1.2), _a(0.3, 0.9)),
    "HalfCauchy": (lambda M, a: M.HalfCauchy(a), [_a(0.5, 2.0)], _a(0.3, 1.2), _a(0.3, 0.9)),
    "Gumbel": (lambda M, a, b: M.Gumbel(a, b), [_a(0.0, 1.0), _a(1.0, 2.0)], _a(0.3, -1.0), None),
    "Pareto": (
        lambda M, a, b: M.Pareto(a, b),
        [_a(1.0, 0.5), _a(3.0, 1.5)],
        _a(1.3, 2.0),
        _a(0.3, 0.8),
    ),
    "Weibull": (lambda M, a, b: M.Weibull(a, b), [_a(1.0, 0.5), _a(3.0, 1.5)], _a(1.3, 2.0), None),
    "InverseGamma": (
        lambda M, a, b: M.InverseGamma(a, b),
        [_a(1.5, 3.0), _a(1.0, 2.0)],
        _a(0.3, 1.2),
        None,
    ),
    "NegativeBinomial": (
        lambda M, n, p: M.NegativeBinomial(n, p),
        [_a(3.0, 0.5), _a(0.3, 0.6)],
        _a(2.0, 0.0),
        None,
    ),
    "NegativeBinomial_logits": (
        lambda M, n, p: M.NegativeBinomial(n, logits=p),
        [_a(3.0, 2.5), _a(0.3, -0.6)],
        _a(2.0, 7.0),
        None,
    ),
    "FisherSnedecor": (
        lambda M, a, b: M.FisherSnedecor(a, b),
        [_a(1.5, 3.0, 6.0), _a(1.0, 5.0, 10.0)],
        _a(0.3, 1.2, 2.0),
        None,
    ),
    "Kumaraswamy": (
        lambda M, a, b: M.Kumaraswamy(a, b),
        [_a(0.5, 3.0, 2.0), _a(2.0, 2.0, 0.8)],
        _a(0.3, 0.6, 0.9),
        None,
    ),
    "LogisticNormal": (
        lambda M, a, b: M.LogisticNormal(a, b),
        [_a(0.0, 1.0), _a(1.0, 0.5)],
        _a(0.3, 0.5, 0.2),
        None,
    ),
    "LowRankMultivariateNormal": (
        lambda M, loc, W, d: M.LowRankMultivariateNormal(loc, W, d),
        [
            np.array([[0.0, 1.0, 2.0], [1.0, -1.0, 0.5]]),
            np.array([[1.0, 0.3], [0.5, -0.2], [0.0, 0.7]]),
            _a(0.5, 1.0, 2.0),
        ],
        _a(0.3, 0.2, -0.4),
        None,
    ),
    "ContinuousBernoulli": (
        lambda M, p: M.ContinuousBernoulli(p),
        [_a(0.2, 0.4995, 0.5, 0.9)],
        _a(0.3, 0.6, 0.1, 0.95),
        _a(0.3, 0.5, 0.8, 0.1),
    ),
    "ContinuousBernoulli_logits": (
        lambda M, p: M.ContinuousBernoulli(logits=p),
        [_a(-1.0, 0.0, 2.5)],
        _a(0.3, 0.6, 0.1),
        _a(0.3, 0.5, 0.8),
    ),
    "GeneralizedPareto": (
        lambda M, a, b, c: M.GeneralizedPareto(a, b, c),
        [_a(0.0, 1.0, -1.0, 0.5), _a(1.0, 2.0, 0.5, 1.0), _a(0.0, 0.3, -0.2, 0.7)],
        _a(0.3, 1.5, -0.5, 2.0),
        _a(0.3, 0.6, 0.9, 0.1),
    ),
    "LKJCholesky": (
        lambda M, c: M.LKJCholesky(3, c),
        [_a(0.5, 1.0, 3.0)],
        np.linalg.cholesky(np.array([[1.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.0]])),
        None,
    ),
    "Wishart_cov": (
        lambda M, df, c: M.Wishart(df, covariance_matrix=c),
        [_a(4.0, 6.5), np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 3.0]])],
        np.array([[1.0, 0.3, 0.0], [0.3, 2.0, -0.4], [0.0, -0.4, 1.5]]),
        None,
    ),
    "Wishart_prec": (
        lambda M, df, c: M.Wishart(df, precision_matrix=c),
        [_a(3.5), np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 3.0]])],
        np.array([[1.0, 0.3, 0.0], [0.3, 2.0, -0.4], [0.0, -0.4, 1.5]]),
        None,
    ),
    "Wishart_tril": (
        lambda M, df, L: M.Wishart(df, scale_tril=L),
        [_a(5.0), np.array([[1.5, 0.0], [0.4, 0.7]])],
        np.array([[1.0, 0.3], [0.3, 2.0]]),
        None,
    ),
    "VonMises": (
        lambda M, a, b: M.VonMises(a, b),
        [_a(0.0, 1.0, -2.0), _a(0.5, 2.0, 8.0)],
        _a(0.3, 1.2, 3.0),
        None,
    ),
    "TransformedDistribution": (
        lambda M, a, b: M.TransformedDistribution(
            M.Normal(a, b),
            [M.transforms.AffineTransform(1.0, 2.0), M.transforms.SigmoidTransform()],
        ),
        [_a(0.0, 1.0), _a(1.0, 0.5)],
        _a(0.3, 0.9),
        _a(0.3, 0.8),
    ),
}


def _build(lib, name, requires_grad=False):
    ctor, params, _, _ = CASES[name]
    if lib == "ember":
        ts = [ember.tensor(p, dtype=ember.float64, requires_grad=requires_grad) for p in params]
        return ctor(D, *ts), ts
    ts = [torch.tensor(p, dtype=torch.float64, requires_grad=requires_grad) for p in params]
    return ctor(TD, *ts), ts


def _val(lib, x):
    if lib == "ember":
        return ember.tensor(x) if x.dtype.kind == "i" else ember.tensor(x, dtype=ember.float64)
    return torch.tensor(x) if x.dtype.kind == "i" else torch.tensor(x, dtype=torch.float64)


def _same(a, b, what):
    b = b.detach().numpy()
    a = a.detach().numpy()
    assert a.shape == b.shape, (what, a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9, err_msg=what)


def _call(obj, name, *args):
    try:
        r = getattr(obj, name)
        return r(*args) if callable(r) else r
    except NotImplementedError:
        return NotImplemented


@pytest.fixture(autouse=True)
def _float64():
    old, told = ember.get_default_dtype(), torch.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    yield
    ember.set_default_dtype(old)
    torch.set_default_dtype(told)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_torch(name):
    e, _ = _build("ember", name)
    t, _ = _build("torch", name)
    assert repr(e) == repr(t)
    assert e.batch_shape == t.batch_shape and e.event_shape == t.event_shape
    assert isinstance(e.batch_shape, ember.Size)
    assert e.has_rsample == t.has_rsample
    assert e.has_enumerate_support == t.has_enumerate_support
    value = CASES[name][2]
    checked = 0
    for fn in ("log_prob", "cdf"):
        rt = _call(t, fn, _val("torch", value))
        if rt is NotImplemented:
            continue
        _same(_call(e, fn, _val("ember", value)), rt, fn)
        checked += 1
    icdf_arg = CASES[name][3]
    if icdf_arg is not None:
        _same(e.icdf(_val("ember", icdf_arg)), t.icdf(_val("torch", icdf_arg)), "icdf")
    for prop in ("mean", "mode", "variance", "stddev", "entropy", "perplexity"):
        rt = _call(t, prop)
        if rt is NotImplemented:
            continue
        _same(_call(e, prop), rt, prop)
        checked += 1
    if t.has_enumerate_support:
        for expand in (True, False):
            _same(e.enumerate_support(expand), t.enumerate_support(expand), "enumerate_support")
    assert checked >= 1
    for shape in ((), (3,), (2, 1)):
        es = e.sample(shape)
        with warnings.catch_warnings():
            # torch's Wishart warns "Singular sample detected." for every valid sample
            # (it tests support.check(sample) instead of its negation); ember does not.
            warnings.simplefilter("ignore", UserWarning)
            ts = t.sample(shape)
        assert tuple(es.shape) == tuple(ts.shape)
        assert es.dtype == {torch.int64: ember.int64, torch.float64: ember.float64}[ts.dtype]


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_and_entropy_gradients_match_torch(name):
    if not CASES[name][1]:
        return  # the scalar case has no tensor parameters; values are checked above
    e, eps = _build("ember", name, requires_grad=True)
    t, tps = _build("torch", name, requires_grad=True)
    value = CASES[name][2]
    le = e.log_prob(_val("ember", value)).sum()
    lt = t.log_prob(_val("torch", value)).sum()
    ht = _call(t, "entropy")
    if ht is not NotImplemented:
        le = le + e.entropy().sum()
        lt = lt + ht.sum()
    lt.backward()
    le.backward()
    compared = 0
    for pe, pt in zip(eps, tps):
        if pt.grad is None:
            assert pe.grad is None or not pe.grad.detach().numpy().any()
            continue
        _same(pe.grad, pt.grad, "grad")
        compared += 1
    assert compared >= 1


def test_expand_matches_torch():
    names = [n for n in CASES if n not in ("Normal_scalar", "MVN_tril_batched")]
    for name in names:
        e, _ = _build("ember", name)
        t, _ = _build("torch", name)
        shape = (4,) + tuple(t.batch_shape)
        ee, te = e.expand(shape), t.expand(shape)
        assert ee.batch_shape == te.batch_shape and ee.event_shape == te.event_shape
        value = CASES[name][2]
        while value.ndim > len(t.batch_shape) + len(t.event_shape):
            value = value[0]
        _same(ee.log_prob(_val("ember", value)), te.log_prob(_val("torch", value)), name)


def test_lazy_probs_logits_and_properties():
    logits = np.array([0.5, -1.0, 2.0])
    e = D.Categorical(logits=ember.tensor(logits))
    t = TD.Categorical(logits=torch.tensor(logits))
    _same(e.probs, t.probs, "probs")
    assert "probs" in e.__dict__  # cached after the first access
    b = D.Bernoulli(probs=ember.tensor([0.2, 0.7]))
    _same(b.logits, TD.Bernoulli(probs=torch.tensor([0.2, 0.7])).logits, "logits")
    m = D.MultivariateNormal(
        ember.zeros(2), covariance_matrix=ember.tensor([[2.0, 0.5], [0.5, 1.0]])
    )
    tm = TD.MultivariateNormal(
        torch.zeros(2), covariance_matrix=torch.tensor([[2.0, 0.5], [0.5, 1.0]])
    )
    for attr in ("scale_tril", "covariance_matrix", "precision_matrix"):
        _same(getattr(m, attr), getattr(tm, attr), attr)
    assert math.isnan(float(D.Bernoulli(0.5).mode))
    assert D.Binomial(10, ember.tensor([0.5])).support.upper_bound.shape == (1,)


def test_binary_log_prob_gradient_at_zero_logit():
    # d/dlogits log p(value) = value - sigmoid(logits): exactly 0.5 at logits == 0.
    for make in (D.Bernoulli, D.ContinuousBernoulli):
        logits = ember.zeros(2, requires_grad=True)
        make(logits=logits).log_prob(ember.tensor([1.0, 0.0])).sum().backward()
        tl = torch.zeros(2, requires_grad=True)
        getattr(TD, make.__name__)(logits=tl).log_prob(torch.tensor([1.0, 0.0])).sum().backward()
        np.testing.assert_allclose(logits.grad.numpy(), tl.grad.numpy(), atol=1e-12)
        assert abs(float(logits.grad[0]) - float(tl.grad[0])) < 1e-12


@pytest.mark.parametrize("diag", [0, -1, 1])
def test_tril_vec_helpers_match_torch(diag):
    from torch.distributions import utils as tu

    from ember.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix

    mat = np.arange(2 * 16, dtype=np.float64).reshape(2, 4, 4)
    me = ember.tensor(mat, requires_grad=True)
    ve = tril_matrix_to_vec(me, diag)
    vt = tu.tril_matrix_to_vec(torch.tensor(mat), diag)
    np.testing.assert_array_equal(ve.detach().numpy(), vt.numpy())
    back = vec_to_tril_matrix(ve, diag)
    np.testing.assert_array_equal(back.detach().numpy(), tu.vec_to_tril_matrix(vt, diag).numpy())
    back.sum().backward()
    expected = np.tril(np.ones((4, 4)), k=diag)
    np.testing.assert_array_equal(me.grad.numpy(), np.broadcast_to(expected, (2, 4, 4)))
    with pytest.raises(ValueError, match="cannot be expressed as"):
        vec_to_tril_matrix(ember.zeros(4), 0)
