"""Sampling: moments and frequencies of large seeded samples, reproducibility under
ember.manual_seed, and reparameterised (rsample) gradients: structurally (rsample is the
documented function of standard noise, with torch's gradients for that noise) and
statistically (the implicit gamma gradient against torch's and against dE[x]/dparam)."""

import math

import numpy as np
import pytest

import ember
import ember.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions

N = 20000


@pytest.fixture(autouse=True)
def _float64():
    old = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    yield
    ember.set_default_dtype(old)


def t(*x):
    return ember.tensor(list(x))


def _check_moments(d, n=N, k=6.0, var=True):
    """Sample mean (and variance) within k standard errors of the distribution's."""
    s = d.sample((n,)).numpy().astype(np.float64)
    mean, variance = d.mean.detach().numpy(), d.variance.detach().numpy()
    se = np.sqrt(variance / n)
    assert np.all(np.abs(s.mean(0) - mean) <= k * se + 1e-12), (s.mean(0), mean)
    if var:
        # the variance of the sample variance needs the 4th moment; 10% is ample at this n
        np.testing.assert_allclose(s.var(0), variance, rtol=0.1, atol=1e-12)
    return s


@pytest.mark.parametrize(
    "make",
    [
        lambda: D.Normal(t(0.0, 3.0), t(1.0, 0.5)),
        lambda: D.Uniform(t(0.0, -2.0), t(1.0, 5.0)),
        lambda: D.Exponential(t(0.5, 4.0)),
        lambda: D.Laplace(t(0.0, 3.0), t(1.0, 0.5)),
        lambda: D.LogNormal(t(0.0, 0.5), t(0.3, 0.2)),
        lambda: D.Gamma(t(0.3, 1.0, 4.0), t(1.0, 2.0, 0.5)),
        lambda: D.Chi2(t(1.0, 6.0)),
        lambda: D.Beta(t(0.5, 2.0), t(0.5, 5.0)),
        lambda: D.Dirichlet(t(0.5, 2.0, 3.0)),
        lambda: D.Poisson(t(0.5, 3.0, 40.0)),
        lambda: D.Binomial(ember.tensor([5.0, 20.0]), t(0.3, 0.9)),
        lambda: D.Geometric(t(0.2, 0.7)),
        lambda: D.Bernoulli(t(0.1, 0.5)),
        lambda: D.Multinomial(10, t(0.2, 0.3, 0.5)),
        lambda: D.OneHotCategorical(t(0.2, 0.3, 0.5)),
        lambda: D.StudentT(t(5.0, 10.0), t(0.0, 1.0), t(1.0, 2.0)),
        lambda: D.MixtureSameFamily(
            D.Categorical(t(0.3, 0.7)), D.Normal(t(-2.0, 2.0), t(0.5, 1.0))
        ),
        lambda: D.MultivariateNormal(t(1.0, -1.0), ember.tensor([[2.0, 0.6], [0.6, 1.0]])),
        lambda: D.Independent(D.Normal(ember.zeros(2, 3), ember.ones(2, 3)), 2),
        lambda: D.HalfNormal(t(0.5, 2.0)),
        lambda: D.Gumbel(t(0.0, 3.0), t(1.0, 0.5)),
        lambda: D.Pareto(t(1.0, 2.0), t(5.0, 9.0)),
        lambda: D.Weibull(t(1.0, 2.0), t(0.8, 3.0)),
        lambda: D.InverseGamma(t(5.0, 9.0), t(1.0, 2.0)),
        lambda: D.NegativeBinomial(t(3.0, 10.0), t(0.3, 0.6)),
        lambda: D.ContinuousBernoulli(t(0.2, 0.5, 0.9)),
        lambda: D.Wishart(t(6.0, 9.0), covariance_matrix=ember.tensor([[2.0, 0.5], [0.5, 1.0]])),
        lambda: D.GeneralizedPareto(t(0.0, 1.0, -1.0), t(1.0, 2.0, 0.5), t(0.0, 0.2, -0.3)),
        lambda: D.FisherSnedecor(t(5.0, 10.0), t(12.0, 20.0)),
        lambda: D.Kumaraswamy(t(0.5, 3.0), t(2.0, 0.8)),
        lambda: D.LowRankMultivariateNormal(
            t(0.0, 1.0, 2.0), ember.tensor([[1.0, 0.3], [0.5, -0.2], [0.0, 0.7]]), t(0.5, 1.0, 2.0)
        ),
    ],
)
def test_sample_moments(make):
    d = make()
    s = _check_moments(d)
    assert tuple(s.shape) == (N,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert bool(d.support.check(ember.tensor(s)).all())


def test_logistic_normal_samples_are_stick_broken_normals():
    d = D.LogisticNormal(t(0.0, 1.0), t(1.0, 0.5))
    s = d.sample((N,))
    np.testing.assert_allclose(s.sum(-1).numpy(), 1.0, rtol=1e-12)
    x = D.transforms.StickBreakingTransform().inv(s).numpy()
    np.testing.assert_allclose(x.mean(0), [0.0, 1.0], atol=0.03)
    np.testing.assert_allclose(x.std(0), [1.0, 0.5], rtol=0.03)


def test_mvn_sample_covariance_and_parametrisations():
    cov = np.array([[2.0, 0.6, 0.1], [0.6, 1.0, -0.3], [0.1, -0.3, 0.5]])
    for kw in (
        {"covariance_matrix": ember.tensor(cov)},
        {"precision_matrix": ember.tensor(np.linalg.inv(cov))},
        {"scale_tril": ember.tensor(np.linalg.cholesky(cov))},
    ):
        d = D.MultivariateNormal(ember.zeros(3), **kw)
        s = d.sample((N,)).numpy()
        np.testing.assert_allclose(np.cov(s.T), cov, atol=0.06)


def test_discrete_frequencies_match_pmf():
    for d, support in (
        (D.Categorical(t(0.1, 0.2, 0.3, 0.4)), np.arange(4)),
        (D.Poisson(ember.tensor(2.5)), np.arange(8)),
        (D.Binomial(6, ember.tensor(0.3)), np.arange(7)),
        (D.Geometric(ember.tensor(0.4)), np.arange(6)),
    ):
        s = d.sample((N,)).numpy()
        freq = np.array([(s == k).mean() for k in support])
        pmf = d.log_prob(ember.tensor(support.astype(np.float64))).exp().numpy()
        np.testing.assert_allclose(freq, pmf, atol=5 * np.sqrt(0.25 / N))
    cat = D.Categorical(logits=ember.tensor([[0.0, 1.0], [2.0, -1.0]]))
    assert cat.sample((3, 4)).dtype == ember.int64


@pytest.mark.parametrize(
    "make",
    [
        lambda: D.Normal(t(0.0, 3.0), t(1.0, 0.5)),
        lambda: D.Cauchy(t(0.0, 3.0), t(1.0, 0.5)),
        lambda: D.Laplace(t(0.0, 3.0), t(1.0, 0.5)),
        lambda: D.Gamma(t(0.3, 4.0), t(1.0, 0.5)),
        lambda: D.StudentT(t(1.5, 3.0)),
        lambda: D.HalfCauchy(t(0.5, 2.0)),
    ],
)
def test_empirical_cdf(make):
    d = make()
    s = np.sort(d.sample((N,)).numpy(), axis=0)
    if isinstance(d, D.StudentT):
        # neither torch nor ember has StudentT.cdf: use the t distribution's cdf from SciPy.
        import scipy.stats

        cdf = scipy.stats.t.cdf(s, d.df.numpy())
    else:
        cdf = d.cdf(ember.tensor(s)).numpy()
    ecdf = (np.arange(N)[:, None] + 0.5) / N
    assert np.abs(cdf - ecdf).max() < 1.8 / math.sqrt(N)  # Kolmogorov-Smirnov at ~1%


def test_von_mises_sampling():
    loc, kappa = np.array([0.5, -2.0, 3.0]), np.array([0.5, 4.0, 1e-6])
    d = D.VonMises(ember.tensor(loc), ember.tensor(kappa))
    s = d.sample((N,)).numpy()
    assert (np.abs(s) <= math.pi).all()
    # circular mean direction and mean resultant length I1(k) / I0(k) = 1 - circular variance
    import scipy.special

    r = np.abs(np.exp(1j * s).mean(0))
    expected_r = scipy.special.i1(kappa) / scipy.special.i0(kappa)
    np.testing.assert_allclose(r, expected_r, atol=0.02)
    np.testing.assert_allclose(1 - expected_r, d.variance.numpy(), atol=1e-6)
    direction = np.angle(np.exp(1j * s).mean(0))
    np.testing.assert_allclose(direction[:2], loc[:2], atol=0.05)
    assert d.sample().dtype == ember.float64
    f32 = ember.tensor([0.0], dtype=ember.float32)
    assert D.VonMises(f32, f32 + 1).sample().dtype == ember.float32  # sampled in float64


def test_lkj_cholesky_sampling():
    d = D.LKJCholesky(3, ember.tensor([2.0, 1.0]))
    L = d.sample((N // 4,))
    assert bool(D.constraints.corr_cholesky.check(L).all())
    corr = (L @ L.mT).numpy()
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, rtol=1e-10)
    # off-diagonal correlations are 2 * Beta(a, a) - 1 with a = eta - 1 + dim / 2
    r = corr[:, :, 1, 0]
    np.testing.assert_allclose(r.mean(0), [0.0, 0.0], atol=0.03)
    np.testing.assert_allclose(r.var(0), [1 / 6, 1 / 4], rtol=0.08)


def test_relaxed_distributions():
    probs = t(0.2, 0.3, 0.5)
    d = D.RelaxedOneHotCategorical(ember.tensor(2.0), probs)
    s = d.sample((N,))
    np.testing.assert_allclose(s.sum(-1).numpy(), 1.0, rtol=1e-12)
    # Gumbel-max: the argmax of a Concrete sample is Categorical(probs) at any temperature.
    freq = np.bincount(s.argmax(-1).numpy(), minlength=3) / N
    np.testing.assert_allclose(freq, probs.numpy(), atol=0.02)
    rb = D.RelaxedBernoulli(ember.tensor(0.5), t(0.2, 0.7))
    x = rb.sample((N,)).numpy()
    assert ((x > 0) & (x < 1)).all()
    # logit(x) * temperature is Logistic(logits, 1): mean logits, variance pi^2 / 3.
    z = np.log(x) - np.log1p(-x)
    np.testing.assert_allclose((z * 0.5).mean(0), rb.logits.numpy(), atol=0.06)
    np.testing.assert_allclose((z * 0.5).var(0), [math.pi**2 / 3] * 2, rtol=0.06)
    # Low temperature approaches Bernoulli(probs).
    cold = D.RelaxedBernoulli(ember.tensor(0.01), t(0.2, 0.7)).sample((N,)).numpy()
    np.testing.assert_allclose((cold > 0.5).mean(0), [0.2, 0.7], atol=0.02)
    st = D.OneHotCategoricalStraightThrough(logits=ember.tensor([0.1, 0.2], requires_grad=True))
    r = st.rsample((5,))
    assert set(np.unique(r.detach().numpy())) <= {0.0, 1.0} and r.requires_grad


def test_seeded_sampling_is_reproducible():
    dists = [
        D.Normal(t(0.0), t(1.0)),
        D.Gamma(t(0.5, 3.0), t(1.0, 1.0)),
        D.Poisson(t(3.0)),
        D.Binomial(5, t(0.3)),
        D.Categorical(t(0.2, 0.8)),
        D.Dirichlet(t(1.0, 2.0)),
        D.MultivariateNormal(ember.zeros(2), ember.eye(2)),
        D.StudentT(t(3.0)),
    ]
    for d in dists:
        ember.manual_seed(123)
        a = d.sample((50,)).numpy()
        ember.manual_seed(123)
        b = d.sample((50,)).numpy()
        c = d.sample((50,)).numpy()
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(b, c)
    with pytest.warns(FutureWarning):
        assert tuple(D.Normal(0.0, 1.0).sample_n(4).shape) == (4,)


@pytest.mark.parametrize(
    "name,make,noise,formula",
    [
        (
            "Normal",
            lambda L, a, b: L.Normal(a, b),
            lambda shape: ember.randn(shape),
            lambda a, b, eps: a + eps * b,
        ),
        (
            "Uniform",
            lambda L, a, b: L.Uniform(a, a + b),
            lambda shape: ember.rand(shape),
            lambda a, b, u: a + u * b,
        ),
        (
            "Exponential",
            lambda L, a, b: L.Exponential(b),
            lambda shape: ember.empty(shape).exponential_(),
            lambda a, b, e: e / b,
        ),
        (
            "LogNormal",
            lambda L, a, b: L.LogNormal(a, b),
            lambda shape: ember.randn(shape),
            lambda a, b, eps: (a + eps * b).exp(),
        ),
        (
            "Cauchy",
            lambda L, a, b: L.Cauchy(a, b),
            lambda shape: ember.rand(shape),
            lambda a, b, u: a + (math.pi * (u - 0.5)).tan() * b,
        ),
    ],
)
def test_rsample_is_reparameterised_like_torch(name, make, noise, formula):
    loc, scale = np.array([0.3, -1.0, 2.0]), np.array([0.5, 1.5, 2.0])
    le = ember.tensor(loc, requires_grad=True)
    se = ember.tensor(scale, requires_grad=True)
    d = make(D, le, se)
    assert d.has_rsample
    ember.manual_seed(7)
    r = d.rsample((4,))
    ember.manual_seed(7)
    eps = noise((4, 3))
    expected = formula(ember.tensor(loc), ember.tensor(scale), eps)
    np.testing.assert_allclose(r.detach().numpy(), expected.numpy(), rtol=1e-12)
    # Gradients of f(rsample) equal torch's for the same noise through torch's formula.
    (r**2).sum().backward()
    lt = torch.tensor(loc, requires_grad=True)
    st = torch.tensor(scale, requires_grad=True)
    (formula(lt, st, torch.tensor(eps.numpy())) ** 2).sum().backward()
    if lt.grad is None:  # Exponential has no location
        assert le.grad is None
    else:
        np.testing.assert_allclose(le.grad.numpy(), lt.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(se.grad.numpy(), st.grad.numpy(), rtol=1e-10)
    with ember.no_grad():
        assert not d.sample().requires_grad


def test_laplace_and_mvn_rsample_structure():
    loc, scale = ember.tensor([0.5], requires_grad=True), ember.tensor([2.0], requires_grad=True)
    r = D.Laplace(loc, scale).rsample((1000,))
    r.sum().backward()
    assert float(loc.grad) == 1000.0
    np.testing.assert_allclose(float(scale.grad), float(((r - 0.5) / 2.0).sum()), rtol=1e-10)
    L = np.array([[1.5, 0.0], [0.4, 0.7]])
    Le = ember.tensor(L, requires_grad=True)
    m = D.MultivariateNormal(ember.zeros(2), scale_tril=Le)
    ember.manual_seed(3)
    x = m.rsample((6,))
    ember.manual_seed(3)
    eps = ember.randn(6, 2).numpy()
    np.testing.assert_allclose(x.detach().numpy(), eps @ L.T, rtol=1e-12)
    (x**2).sum().backward()
    Lt = torch.tensor(L, requires_grad=True)
    ((torch.tensor(eps) @ Lt.T) ** 2).sum().backward()
    np.testing.assert_allclose(Le.grad.numpy(), Lt.grad.numpy(), rtol=1e-10)


def test_gamma_rsample_gradient_matches_torch_implicit_gradient():
    alpha = ember.tensor([0.2, 0.7, 1.0, 2.5, 10.0, 80.0] * 50, requires_grad=True)
    rate = ember.tensor(2.0, requires_grad=True)
    x = D.Gamma(alpha, rate).rsample()
    x.sum().backward()
    standard = x.detach() * 2.0
    expected = (
        torch._standard_gamma_grad(
            torch.tensor(alpha.detach().numpy()), torch.tensor(standard.numpy())
        )
        / 2.0
    )
    # torch's gradient is itself a fitted approximation (about 1e-3 relative).
    np.testing.assert_allclose(alpha.grad.numpy(), expected.numpy(), rtol=5e-3, atol=1e-6)
    np.testing.assert_allclose(float(rate.grad), float(-(x / 2.0).sum()), rtol=1e-10)


def test_implicit_gradients_are_unbiased():
    # d/dalpha E[x] = 1 for x ~ Gamma(alpha, 1).
    alpha = ember.tensor([0.5, 3.0], requires_grad=True)
    D.Gamma(alpha.expand(N, 2), 1.0).rsample().sum().backward()
    np.testing.assert_allclose(alpha.grad.numpy() / N, [1.0, 1.0], atol=0.03)
    # Beta: d/dc1 E[x] = c0 / (c1 + c0)^2.
    c1, c0 = ember.tensor(2.0, requires_grad=True), ember.tensor(3.0, requires_grad=True)
    D.Beta(c1, c0).rsample((N,)).mean().backward()
    np.testing.assert_allclose(float(c1.grad), 3.0 / 25.0, atol=0.01)
    np.testing.assert_allclose(float(c0.grad), -2.0 / 25.0, atol=0.01)
    # Dirichlet: d/dc_0 E[x_0] = (S - c_0) / S^2.
    c = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    D.Dirichlet(c).rsample((N,))[:, 0].mean().backward()
    np.testing.assert_allclose(c.grad.numpy(), [5 / 36, -1 / 36, -1 / 36], atol=0.01)
    # StudentT: d/dloc, d/dscale structurally; d/ddf of E[Y^2] = -2 / (df - 2)^2.
    df = ember.tensor(10.0, requires_grad=True)
    y = D.StudentT(df, 0.0, 1.0).rsample((4 * N,))
    (y**2).mean().backward()
    np.testing.assert_allclose(float(df.grad), -2.0 / 64.0, atol=0.01)
