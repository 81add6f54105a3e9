"""kl_divergence against torch for every pair registered among ember's families, and the
register_kl dispatch rules."""

import warnings

import numpy as np
import pytest

import ember
import ember.distributions as D
from ember.distributions.kl import _KL_REGISTRY

torch = pytest.importorskip("torch")
TD = torch.distributions


@pytest.fixture(autouse=True)
def _float64():
    old, told = ember.get_default_dtype(), torch.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    yield
    ember.set_default_dtype(old)
    torch.set_default_dtype(told)


def _a(*x):
    return np.array(x, dtype=np.float64)


# Two parameter sets per family (p-like and q-like), as numpy arrays.
FAMILIES = {
    "Bernoulli": (lambda M, p: M.Bernoulli(p), [[_a(0.3, 0.0, 1.0)], [_a(0.6, 0.5, 0.5)]]),
    "Beta": (
        lambda M, a, b: M.Beta(a, b),
        [[_a(0.5, 3.0, 1.0), _a(2.0, 2.0, 1.5)], [_a(1.5, 1.0, 2.0), _a(0.7, 3.0, 1.0)]],
    ),
    "Binomial": (lambda M, p: M.Binomial(10, p), [[_a(0.3, 0.6, 0.1)], [_a(0.5, 0.2, 0.9)]]),
    "Categorical": (
        lambda M, p: M.Categorical(p),
        [
            [np.array([[0.2, 0.3, 0.5], [0.0, 0.5, 0.5]])],
            [np.array([[0.4, 0.4, 0.2], [0.3, 0.3, 0.4]])],
        ],
    ),
    "Cauchy": (
        lambda M, a, b: M.Cauchy(a, b),
        [[_a(0.0, 1.0, 2.0), _a(1.0, 2.0, 0.5)], [_a(1.0, -1.0, 0.0), _a(2.0, 1.0, 3.0)]],
    ),
    "Dirichlet": (
        lambda M, a: M.Dirichlet(a),
        [[np.array([[0.5, 3.0, 2.0]])], [np.array([[1.0, 1.0, 4.0]])]],
    ),
    "Exponential": (lambda M, r: M.Exponential(r), [[_a(0.5, 2.0, 1.0)], [_a(1.5, 0.7, 3.0)]]),
    "Gamma": (
        lambda M, a, b: M.Gamma(a, b),
        [[_a(0.5, 3.0, 2.0), _a(1.0, 2.0, 0.5)], [_a(2.0, 1.0, 1.0), _a(0.5, 3.0, 2.0)]],
    ),
    "Geometric": (lambda M, p: M.Geometric(p), [[_a(0.3, 0.6, 0.9)], [_a(0.5, 0.2, 0.4)]]),
    "Laplace": (
        lambda M, a, b: M.Laplace(a, b),
        [[_a(0.0, 1.0, 2.0), _a(1.0, 2.0, 0.5)], [_a(1.0, -1.0, 0.0), _a(2.0, 1.0, 3.0)]],
    ),
    "MultivariateNormal": (
        lambda M, loc, c: M.MultivariateNormal(loc, covariance_matrix=c),
        [
            [_a(0.0, 1.0), np.array([[2.0, 0.5], [0.5, 1.0]])],
            [np.array([[1.0, -1.0], [0.0, 0.0]]), np.array([[1.0, -0.3], [-0.3, 3.0]])],
        ],
    ),
    "Normal": (
        lambda M, a, b: M.Normal(a, b),
        [[_a(0.0, 1.0, 0.2), _a(1.0, 2.0, 0.5)], [_a(1.0, -1.0, 0.3), _a(2.0, 1.0, 3.0)]],
    ),
    "OneHotCategorical": (
        lambda M, p: M.OneHotCategorical(p),
        [[np.array([0.2, 0.3, 0.5])], [np.array([0.4, 0.4, 0.2])]],
    ),
    "Poisson": (lambda M, r: M.Poisson(r), [[_a(0.5, 2.0, 1.0)], [_a(1.5, 0.7, 3.0)]]),
    "Uniform": (
        lambda M, a, b: M.Uniform(a, b),
        [[_a(0.1, -1.0, 0.2), _a(0.5, 2.0, 0.9)], [_a(0.0, -2.0, 0.3), _a(1.0, 3.0, 0.8)]],
    ),
    "Gumbel": (
        lambda M, a, b: M.Gumbel(a, b),
        [[_a(0.0, 1.0, 2.0), _a(1.0, 2.0, 0.5)], [_a(1.0, -1.0, 0.0), _a(2.0, 1.0, 3.0)]],
    ),
    "HalfNormal": (lambda M, s: M.HalfNormal(s), [[_a(0.5, 2.0, 1.0)], [_a(1.5, 0.7, 3.0)]]),
    "Pareto": (
        lambda M, a, b: M.Pareto(a, b),
        [[_a(1.0, 0.5, 2.0), _a(3.0, 1.5, 0.8)], [_a(0.8, 1.0, 1.0), _a(2.0, 3.0, 1.2)]],
    ),
    "LowRankMultivariateNormal": (
        lambda M, loc, W, d: M.LowRankMultivariateNormal(loc, W, d),
        [
            [_a(0.0, 1.0), np.array([[1.0, 0.3], [0.5, -0.2]]), _a(0.5, 1.0)],
            [np.array([[1.0, -1.0], [0.0, 0.0]]), np.array([[0.2], [0.4]]), _a(2.0, 1.5)],
        ],
    ),
    "ContinuousBernoulli": (
        lambda M, p: M.ContinuousBernoulli(p),
        [[_a(0.2, 0.4995, 0.9)], [_a(0.6, 0.3, 0.5)]],
    ),
    "LogNormal": (
        lambda M, a, b: M.LogNormal(a, b),
        [[_a(0.0, 1.0, 0.2), _a(1.0, 2.0, 0.5)], [_a(1.0, -1.0, 0.3), _a(2.0, 1.0, 3.0)]],
    ),
    "Independent": (
        lambda M, a, b: M.Independent(M.Normal(a, b), 1),
        [[_a(0.0, 1.0, 0.2), _a(1.0, 2.0, 0.5)], [_a(1.0, -1.0, 0.3), _a(2.0, 1.0, 3.0)]],
    ),
}


def _make(lib, fam, which, requires_grad=False):
    ctor, params = FAMILIES[fam]
    if lib == "ember":
        ts = [ember.tensor(p, requires_grad=requires_grad) for p in params[which]]
        return ctor(D, *ts), ts
    ts = [torch.tensor(p, requires_grad=requires_grad) for p in params[which]]
    return ctor(TD, *ts), ts


def _public(tp):
    return getattr(D, tp.__name__, None) is tp


def _registered_pairs():
    pairs = []
    for tp, tq in _KL_REGISTRY:
        if not (_public(tp) and _public(tq)):
            continue  # registered by a test or a doctest
        if tp is D.ExponentialFamily:
            continue
        fp = "LogNormal" if tp is D.TransformedDistribution else tp.__name__
        fq = "LogNormal" if tq is D.TransformedDistribution else tq.__name__
        if fp in FAMILIES and fq in FAMILIES:
            pairs.append((fp, fq))
    return sorted(pairs)


PAIRS = _registered_pairs()


def test_every_registered_pair_is_tested():
    covered = {(p, q) for p, q in PAIRS}
    for tp, tq in _KL_REGISTRY:
        if tp is D.ExponentialFamily or not (_public(tp) and _public(tq)):
            continue
        name = lambda t: "LogNormal" if t is D.TransformedDistribution else t.__name__  # noqa: E731
        assert (name(tp), name(tq)) in covered
    assert len(PAIRS) >= 85


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{p}-{q}" for p, q in PAIRS])
def test_kl_matches_torch(pair):
    fp, fq = pair
    pe, pe_params = _make("ember", fp, 0, requires_grad=True)
    qe, qe_params = _make("ember", fq, 1, requires_grad=True)
    pt, pt_params = _make("torch", fp, 0, requires_grad=True)
    qt, qt_params = _make("torch", fq, 1, requires_grad=True)
    try:
        kt = TD.kl_divergence(pt, qt)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            D.kl_divergence(pe, qe)
        return
    ke = D.kl_divergence(pe, qe)
    np.testing.assert_allclose(ke.detach().numpy(), kt.detach().numpy(), rtol=1e-7, atol=1e-9)
    finite = np.isfinite(kt.detach().numpy())
    if finite.any() and kt.requires_grad:
        kt[torch.tensor(finite)].sum().backward()
        ke[ember.tensor(finite)].sum().backward()
        for a, b in zip(pe_params + qe_params, pt_params + qt_params):
            if b.grad is None:
                continue
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6, atol=1e-8)


def test_expfamily_bregman_fallback_and_entropy():
    # Poisson has no closed form registered for entropy; the Bregman KL applies to Chi2.
    pe, qe = D.Chi2(ember.tensor([3.0, 5.0])), D.Chi2(ember.tensor([2.0, 1.0]))
    pt, qt = TD.Chi2(torch.tensor([3.0, 5.0])), TD.Chi2(torch.tensor([2.0, 1.0]))
    np.testing.assert_allclose(
        D.kl_divergence(pe, qe).detach().numpy(),
        TD.kl_divergence(pt, qt).detach().numpy(),
        rtol=1e-9,
    )
    # ExponentialFamily.entropy (Bregman) equals the closed form.
    g = D.Gamma(ember.tensor([0.5, 3.0]), ember.tensor([1.0, 2.0]))
    bregman = D.ExponentialFamily.entropy(g)
    np.testing.assert_allclose(bregman.detach().numpy(), g.entropy().numpy(), rtol=1e-9)


@pytest.fixture
def _restore_registry():
    from ember.distributions.kl import _KL_MEMOIZE

    saved = dict(_KL_REGISTRY)
    yield
    _KL_REGISTRY.clear()
    _KL_REGISTRY.update(saved)
    _KL_MEMOIZE.clear()


def test_wishart_bregman_kl_matches_torch():
    c = np.array([[2.0, 0.5], [0.5, 1.0]])
    df = np.array([4.0, 6.5])
    de = ember.tensor(df, requires_grad=True)
    dt = torch.tensor(df, requires_grad=True)
    ke = D.kl_divergence(
        D.Wishart(de, covariance_matrix=ember.tensor(c)), D.Wishart(ember.tensor(5.0), ember.eye(2))
    )
    kt = TD.kl_divergence(
        TD.Wishart(dt, covariance_matrix=torch.tensor(c)),
        TD.Wishart(torch.tensor(5.0), torch.eye(2)),
    )
    np.testing.assert_allclose(ke.detach().numpy(), kt.detach().numpy(), rtol=1e-8)
    ke.sum().backward()
    kt.sum().backward()
    # torch's Bregman KL detaches p's natural parameters: no gradient reaches p's df
    assert dt.grad is None and de.grad is None


def test_no_kl_and_register_kl_dispatch(_restore_registry):
    with pytest.raises(NotImplementedError) as e:
        D.kl_divergence(D.StudentT(ember.tensor(3.0)), D.Normal(0.0, 1.0))
    with pytest.raises(NotImplementedError) as t:
        TD.kl_divergence(TD.StudentT(torch.tensor(3.0)), TD.Normal(0.0, 1.0))
    assert str(e.value) == str(t.value)

    class MyNormal(D.Normal):
        pass

    # Subclasses inherit the parent's registration ...
    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)
    assert float(D.kl_divergence(p, q)) == float(D.kl_divergence(D.Normal(0.0, 1.0), q))

    # ... until a more specific one is registered.
    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return ember.tensor(42.0)

    assert float(D.kl_divergence(p, q)) == 42.0

    class A(D.Distribution):
        arg_constraints = {}

    class B(A):
        pass

    @D.register_kl(A, B)
    def _k1(p, q):
        return ember.tensor(1.0)

    @D.register_kl(B, A)
    def _k2(p, q):
        return ember.tensor(2.0)

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        D.kl_divergence(B(), B())
    assert any("Ambiguous kl_divergence(B, B)" in str(x.message) for x in w)
