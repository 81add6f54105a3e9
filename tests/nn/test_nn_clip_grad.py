"""ember.nn.utils.clip_grad_norm_ / clip_grad_value_ against torch.nn.utils."""

import math

import numpy as np
import pytest

import ember
from ember.nn.utils import clip_grad_norm_, clip_grad_value_, get_total_norm

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)


def _params(lib, grads, dtype=np.float32):
    ps = []
    for g in grads:
        p = lib.zeros(g.shape, dtype=getattr(lib, np.dtype(dtype).name), requires_grad=True)
        if lib is torch:
            p.grad = torch.tensor(g.astype(dtype))
        else:
            p.grad = ember.tensor(g.astype(dtype))
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, dtype):
    grads = [RNG.standard_normal((3, 4)), RNG.standard_normal(5), RNG.standard_normal((2, 2, 2))]
    tp, ep = _params(torch, grads, dtype), _params(ember, grads, dtype)
    tn = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    en = clip_grad_norm_(ep, max_norm, norm_type)
    assert en.dtype.name == str(tn.dtype).split(".")[-1] and en.shape == tn.shape
    rtol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(en.numpy(), tn.numpy(), rtol=rtol)
    for t, e in zip(tp, ep):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=rtol)


def test_clip_grad_norm_edge_cases():
    p = ember.zeros(2, requires_grad=True)
    assert clip_grad_norm_([p], 1.0).item() == 0.0  # no gradients at all
    p.grad = ember.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients"):
        clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    with pytest.warns(UserWarning, match="empty generator"):
        clip_grad_norm_((q for q in []), 1.0)
    assert get_total_norm([ember.tensor([3.0]), ember.tensor([4.0])]).item() == 5.0


def test_clip_grad_value_matches_torch():
    grads = [RNG.standard_normal((4, 4)) * 3, RNG.standard_normal(3)]
    tp, ep = _params(torch, grads), _params(ember, grads)
    torch.nn.utils.clip_grad_value_(tp, 0.7)
    clip_grad_value_(ep, 0.7)
    for t, e in zip(tp, ep):
        np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())


def test_clipping_inside_a_training_step():
    model = ember.nn.Linear(3, 1)
    x = ember.tensor(RNG.standard_normal((8, 3)) * 100, dtype=ember.float32)
    model(x).pow(2).mean().backward()
    total = clip_grad_norm_(model.parameters(), max_norm=1.0)
    assert total.item() > 1.0
    after = get_total_norm([p.grad for p in model.parameters()])
    assert after.item() == pytest.approx(1.0, rel=1e-4)
