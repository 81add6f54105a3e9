"""A view read after its base was written in place, by another alias or directly.

torch regenerates such a view's history (``AsStridedBackward0`` of the base's new
history) the next time the view is used; a view that kept its old ``grad_fn`` would send
gradients around the write, silently wrong. Each case runs under ember and torch.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _case_other_alias(lib, x):
    y = x * 1
    v = y[1:]
    y[:2].mul_(3)  # through another view, overlapping v
    return (v * v).sum(), v


def _case_base_directly(lib, x):
    y = x * 1
    v = y[1:]
    y.mul_(2)
    return (v * v).sum(), v


def _case_view_of_view(lib, x):
    y = x.reshape(2, 3) * 1
    v = y.t()[1]  # a view of a view: its base is y
    y[:, 1:].sin_()
    return (v * v).sum(), v


def _case_stale_view_written(lib, x):
    y = x * 1
    v = y[2:]
    y[:3].sin_()
    v.mul_(x[2:])  # the stale view is itself written in place
    return (y * y).sum(), v


def _case_two_writes(lib, x):
    y = x * 1
    u, v = y[:4], y[2:]
    u.mul_(2)
    v.add_(u[2:4].sum())
    return (u[:2] * v[:2]).sum() + (v * v).sum(), u


def _case_no_grad_write(lib, x):
    y = x * 1
    v = y[1:]
    with lib.no_grad():
        y.mul_(2)  # not recorded: the gradient stays, the history is regenerated
    return (v * v).sum(), v


def _case_unsqueeze_and_flat(lib, x):
    y = x * 1
    a, b = y.unsqueeze(0), y.view(2, 3)
    y[3:].tanh_()
    return (a[0] * b.reshape(-1)).sum(), b


def _case_expanded(lib, x):
    y = x * 1
    e = y.expand(3, 6)  # each element seen three times (stride 0)
    y[1:4].mul_(x[:3])
    return (e * e * lib.arange(3.0, dtype=lib.float64).reshape(3, 1)).sum(), e


CASES = [
    _case_other_alias,
    _case_base_directly,
    _case_view_of_view,
    _case_stale_view_written,
    _case_two_writes,
    _case_no_grad_write,
    _case_unsqueeze_and_flat,
    _case_expanded,
]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__[6:] for c in CASES])
def test_views_read_after_their_base_was_written_match_torch(case):
    start = np.linspace(0.3, 1.4, 6)
    results = {}
    for lib in (ember, torch):
        x = lib.tensor(start, dtype=lib.float64, requires_grad=True)
        out, view = case(lib, x)
        (g,) = lib.autograd.grad(out, x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        results[lib.__name__] = (out.item(), g.detach().numpy(), gg.numpy(), view)
    e, t = results["ember"], results["torch"]
    np.testing.assert_allclose(e[0], t[0], rtol=1e-12)
    np.testing.assert_allclose(e[1], t[1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(e[2], t[2], rtol=1e-12, atol=1e-14)
    assert type(e[3].grad_fn).__name__ == type(t[3].grad_fn).__name__


def test_gradcheck_through_a_regenerated_view():
    def f(x):
        y = x * 1
        v = y[1:]
        y[:3].mul_(y[3:].sum())
        return v.sin()

    x = ember.tensor(np.linspace(0.2, 0.9, 5), dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(f, (x,))
    assert ember.autograd.gradgradcheck(f, (x,))
