"""ember.nn.init against torch.nn.init: gains, fans, distributions, in-place semantics and
errors."""

import math
import warnings

import numpy as np
import pytest

import ember
from ember.nn import Parameter, init

torch = pytest.importorskip("torch")
tinit = torch.nn.init


@pytest.mark.parametrize(
    "args",
    [
        ("linear",),
        ("conv2d",),
        ("sigmoid",),
        ("tanh",),
        ("relu",),
        ("leaky_relu",),
        ("leaky_relu", 0.2),
        ("leaky_relu", 3),
        ("selu",),
    ],
)
def test_calculate_gain_matches_torch(args):
    assert init.calculate_gain(*args) == tinit.calculate_gain(*args)


@pytest.mark.parametrize("args", [("foo",), ("leaky_relu", "x"), ("leaky_relu", True)])
def test_calculate_gain_errors_match_torch(args):
    with pytest.raises(ValueError) as te:
        tinit.calculate_gain(*args)
    with pytest.raises(ValueError) as ee:
        init.calculate_gain(*args)
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("shape", [(3, 4), (8, 3, 5, 5), (2, 6, 3), (7,)])
def test_fan_in_and_fan_out_match_torch(shape):
    if len(shape) < 2:
        with pytest.raises(ValueError) as te:
            tinit._calculate_fan_in_and_fan_out(torch.empty(shape))
        with pytest.raises(ValueError) as ee:
            init._calculate_fan_in_and_fan_out(ember.empty(shape))
        assert str(ee.value) == str(te.value)
        return
    assert init._calculate_fan_in_and_fan_out(
        ember.empty(shape)
    ) == tinit._calculate_fan_in_and_fan_out(torch.empty(shape))


def _stats(fn, shape=(200, 300)):
    p = Parameter(ember.empty(shape))
    version = p._version_
    out = fn(p)
    assert out is p  # in place, returns the tensor
    assert p._version_ > version and p.grad_fn is None and p.requires_grad
    return p.detach().numpy()


def test_uniform_normal_constant():
    a = _stats(lambda t: init.uniform_(t, -2.0, 3.0))
    assert a.min() >= -2.0 and a.max() < 3.0 and abs(a.mean() - 0.5) < 0.02
    a = _stats(lambda t: init.normal_(t, 1.0, 0.5))
    assert abs(a.mean() - 1.0) < 0.01 and abs(a.std() - 0.5) < 0.01
    a = _stats(lambda t: init.trunc_normal_(t, 0.0, 1.0, -1.0, 1.5))
    assert a.min() >= -1.0 and a.max() <= 1.5
    assert (_stats(lambda t: init.constant_(t, 0.3)) == np.float32(0.3)).all()
    assert (_stats(init.ones_) == 1).all() and (_stats(init.zeros_) == 0).all()
    np.testing.assert_array_equal(_stats(init.eye_, (3, 4)), np.eye(3, 4))


@pytest.mark.parametrize(
    "name,kw,expected_std",
    [
        ("xavier_uniform_", {"gain": 2.0}, lambda fi, fo: 2.0 * math.sqrt(2.0 / (fi + fo))),
        ("xavier_normal_", {}, lambda fi, fo: math.sqrt(2.0 / (fi + fo))),
        ("kaiming_uniform_", {"a": math.sqrt(5)}, lambda fi, fo: math.sqrt(2 / 6) / math.sqrt(fi)),
        (
            "kaiming_normal_",
            {"mode": "fan_out", "nonlinearity": "relu"},
            lambda fi, fo: math.sqrt(2.0) / math.sqrt(fo),
        ),
    ],
)
def test_fan_based_inits_have_torch_spread(name, kw, expected_std):
    shape = (64, 32, 3, 3)
    a = _stats(lambda t: getattr(init, name)(t, **kw), shape)
    fan_in, fan_out = 32 * 9, 64 * 9
    std = expected_std(fan_in, fan_out)
    assert abs(a.std() - std) < 0.03 * std
    t = getattr(tinit, name)(torch.empty(shape), **kw).numpy()
    assert abs(a.std() - t.std()) < 0.05 * std
    if "uniform" in name:
        assert np.abs(a).max() <= math.sqrt(3) * std * (1 + 1e-6)


def test_init_errors_and_zero_element_warning_match_torch():
    with pytest.raises(ValueError) as te:
        tinit.kaiming_uniform_(torch.empty(3, 4), mode="fan_middle")
    with pytest.raises(ValueError) as ee:
        init.kaiming_uniform_(ember.empty(3, 4), mode="fan_middle")
    assert str(ee.value) == str(te.value)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_normal_(ember.empty(0, 3))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(ember.empty(3))


def test_generator_and_manual_seed_reproducibility():
    ember.manual_seed(5)
    a = init.normal_(ember.empty(10)).numpy().copy()
    ember.manual_seed(5)
    np.testing.assert_array_equal(init.normal_(ember.empty(10)).numpy(), a)
    g1, g2 = ember.Generator().manual_seed(1), ember.Generator().manual_seed(1)
    np.testing.assert_array_equal(
        init.uniform_(ember.empty(5), generator=g1).numpy(),
        init.uniform_(ember.empty(5), generator=g2).numpy(),
    )


def test_init_does_not_record_and_keeps_dtype():
    w = ember.zeros(3, 3, dtype=ember.float64, requires_grad=True)
    init.xavier_uniform_(w)
    assert w.dtype == ember.float64 and w.is_leaf and w.grad_fn is None


# -- the rest of torch.nn.init ---------------------------------------------------------------


def test_init_namespace_matches_torch():
    assert sorted(init.__all__) == sorted(tinit.__all__)
    for name in tinit.__all__:
        assert callable(getattr(init, name))


@pytest.mark.parametrize("shape,groups", [((4, 2, 3), 1), ((6, 3, 3, 5), 2), ((4, 4, 3, 3, 3), 4)])
def test_dirac_matches_torch(shape, groups):
    got = _stats(lambda t: init.dirac_(t, groups), shape)
    np.testing.assert_array_equal(got, tinit.dirac_(torch.empty(shape), groups).numpy())


def test_dirac_convolution_is_the_identity():
    w = init.dirac_(ember.empty(3, 3, 3, 3))
    x = ember.randn(2, 3, 5, 5)
    np.testing.assert_allclose(
        ember.nn.functional.conv2d(x, w, padding=1).numpy(), x.numpy(), atol=1e-6
    )


@pytest.mark.parametrize(
    "fn,args",
    [
        ("dirac_", ((3, 4),)),
        ("dirac_", ((3, 2, 3), 2)),
        ("orthogonal_", ((3,),)),
        ("sparse_", ((3, 4, 5), 0.1)),
        ("eye_", ((2, 2, 2),)),
        ("xavier_normal_", ((3,),)),
        ("kaiming_normal_", ((3,),)),
    ],
)
def test_structural_init_errors_match_torch(fn, args):
    shape, *rest = args
    with pytest.raises(ValueError) as te:
        getattr(tinit, fn)(torch.empty(shape), *rest)
    with pytest.raises(ValueError) as ee:
        getattr(init, fn)(ember.empty(shape), *rest)
    assert str(ee.value) == str(te.value)


def test_random_fill_errors_match_torch():
    for fn, args in [("normal_", (0.0, -1.0)), ("uniform_", (1.0, 0.0))]:
        with pytest.raises(RuntimeError) as te:
            getattr(tinit, fn)(torch.empty(3), *args)
        with pytest.raises(RuntimeError) as ee:
            getattr(init, fn)(ember.empty(3), *args)
        assert str(ee.value) == str(te.value)
    with pytest.raises(NotImplementedError) as te:
        tinit.uniform_(torch.zeros(3, dtype=torch.int64))
    with pytest.raises(NotImplementedError) as ee:
        init.uniform_(ember.zeros(3, dtype=ember.int64))
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("shape,gain", [((30, 50), 1.0), ((50, 30), 2.0), ((8, 3, 2, 2), 0.5)])
def test_orthogonal_is_orthogonal(shape, gain):
    w = _stats(lambda t: init.orthogonal_(t, gain), shape)
    flat = w.reshape(shape[0], -1).astype(np.float64) / gain
    small = min(flat.shape)
    gram = flat @ flat.T if flat.shape[0] == small else flat.T @ flat
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)


def test_orthogonal_with_generator_is_reproducible_and_skips_empty():
    a = init.orthogonal_(ember.empty(4, 4), generator=ember.Generator().manual_seed(3))
    b = init.orthogonal_(ember.empty(4, 4), generator=ember.Generator().manual_seed(3))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    e = ember.empty(0, 3)
    assert init.orthogonal_(e) is e


@pytest.mark.parametrize("rows,sparsity", [(10, 0.3), (7, 0.5), (5, 0.0), (4, 1.0)])
def test_sparse_zeros_per_column(rows, sparsity):
    w = _stats(lambda t: init.sparse_(t, sparsity, std=0.5), (rows, 200))
    zeros = (w == 0).sum(axis=0)
    assert (zeros == math.ceil(sparsity * rows)).all()
    nonzero = w[w != 0]
    if nonzero.size > 500:
        assert abs(nonzero.std() - 0.5) < 0.05


@pytest.mark.parametrize(
    "mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.0, 1.0, 3.0, 3.5), (1.0, 0.2, 0.9, 1.0)]
)
def test_trunc_normal_bounds_and_spread_match_torch(mean, std, a, b):
    shape = (200, 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (3, 3.5) is over 2 std from the mean: torch warns
        got = _stats(lambda t: init.trunc_normal_(t, mean, std, a, b), shape)
        want = tinit.trunc_normal_(torch.empty(shape), mean, std, a, b).numpy()
    assert got.min() >= a and got.max() <= b
    assert abs(got.mean() - want.mean()) < 0.05 * (b - a)
    assert abs(got.std() - want.std()) < 0.05 * want.std() + 1e-3


def test_trunc_normal_warns_like_torch():
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(ember.empty(10), 0.0, 1.0, 3.0, 4.0)


def test_deprecated_aliases_warn_and_fill():
    with pytest.warns(
        FutureWarning, match=r"`nn.init.constant` is now deprecated in favor of `nn.init.constant_`"
    ):
        w = init.constant(ember.empty(3), 2.0)
    assert (w.numpy() == 2).all()
    with pytest.warns(FutureWarning, match="xavier_uniform"):
        init.xavier_uniform(ember.empty(3, 4))
    assert init.normal.__name__ == "normal"


def test_init_on_integer_fill_and_version():
    t = ember.zeros(2, 3, dtype=ember.int64)
    init.constant_(t, 3)
    assert t.dtype == ember.int64 and (t.numpy() == 3).all()
    init.zeros_(t)
    assert (t.numpy() == 0).all()


@pytest.mark.parametrize(
    "nonlinearity", ["conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
)
def test_calculate_gain_linear_family(nonlinearity):
    assert init.calculate_gain(nonlinearity) == tinit.calculate_gain(nonlinearity) == 1
