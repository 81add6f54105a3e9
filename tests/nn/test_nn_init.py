"""ember.nn.init against torch.nn.init: gains, fans, distributions, in-place semantics and
errors."""

import math

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
