"""nn.utils.prune against torch's: masks, the weight_orig parameter / weight_mask buffer /
forward pre-hook reparametrization, combined prunings, remove, and the errors. The random
methods are checked by what they prune (how many entries or channels), not which."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401  (torch does not import it with torch.nn.utils)

import ember

W = np.array(
    [
        [0.3, -1.2, 0.05, 2.0, -0.7],
        [1.1, 0.2, -0.45, -0.15, 0.9],
        [-2.2, 0.6, 0.35, 1.5, -0.01],
        [0.8, -0.25, 1.3, -0.55, 0.4],
    ]
)


def _linear(lib):
    m = lib.nn.Linear(5, 4).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W))
        m.bias.copy_(lib.tensor([0.5, -0.1, 0.2, 0.05]))
    return m


def _state(lib, m):
    x = lib.tensor(np.linspace(-1, 1, 10).reshape(2, 5))
    y = m(x)
    y.pow(2).sum().backward()
    params = {n: p.grad.numpy().copy() for n, p in m.named_parameters()}
    buffers = {n: b.numpy().copy() for n, b in m.named_buffers()}
    return (
        y.detach().numpy(),
        params,
        buffers,
        sorted(m.state_dict()),
        [type(h).__name__ for h in m._forward_pre_hooks.values()],
        m.weight.detach().numpy().copy(),
    )


def _compare(a, b):
    np.testing.assert_allclose(b[0], a[0])
    assert a[1].keys() == b[1].keys() and a[2].keys() == b[2].keys()
    for k in a[1]:
        np.testing.assert_allclose(b[1][k], a[1][k], rtol=1e-12, atol=1e-14)
    for k in a[2]:
        np.testing.assert_allclose(b[2][k], a[2][k])
    assert a[3:5] == b[3:5]
    np.testing.assert_allclose(b[5], a[5])


PRUNINGS = {
    "identity": lambda P, m: P.identity(m, "weight"),
    "l1_fraction": lambda P, m: P.l1_unstructured(m, "weight", amount=0.3),
    "l1_count": lambda P, m: P.l1_unstructured(m, "bias", amount=2),
    "l1_importance": lambda P, m: P.l1_unstructured(
        m, "weight", amount=5, importance_scores=m.weight.detach().flip(0)
    ),
    "ln_structured_rows": lambda P, m: P.ln_structured(m, "weight", amount=0.5, n=2, dim=0),
    "ln_structured_cols_l1": lambda P, m: P.ln_structured(m, "weight", amount=2, n=1, dim=-1),
    "ln_structured_inf": lambda P, m: P.ln_structured(m, "weight", amount=1, n=float("inf"), dim=1),
    "custom": lambda P, m: P.custom_from_mask(m, "weight", mask=_mask(m)),
    "l1_then_ln": lambda P, m: P.ln_structured(
        P.l1_unstructured(m, "weight", amount=4), "weight", amount=1, n=2, dim=0
    ),
    "ln_then_l1": lambda P, m: P.l1_unstructured(
        P.ln_structured(m, "weight", amount=1, n=1, dim=1), "weight", amount=0.25
    ),
    "three": lambda P, m: P.custom_from_mask(
        P.l1_unstructured(P.identity(m, "weight"), "weight", amount=3), "weight", _mask(m)
    ),
    "two_params": lambda P, m: P.l1_unstructured(
        P.l1_unstructured(m, "weight", amount=6), "bias", amount=1
    ),
}


def _mask(m):
    lib = torch if isinstance(m.weight, torch.Tensor) else ember
    return lib.tensor(np.tril(np.ones((4, 5))))


@pytest.mark.parametrize("name", list(PRUNINGS))
def test_prune_matches_torch(name):
    results = []
    for lib in (torch, ember):
        m = _linear(lib)
        PRUNINGS[name](lib.nn.utils.prune, m)
        assert lib.nn.utils.prune.is_pruned(m)
        results.append(_state(lib, m))
    _compare(*results)


@pytest.mark.parametrize("name", list(PRUNINGS))
def test_remove_matches_torch(name):
    results = []
    for lib in (torch, ember):
        m = _linear(lib)
        P = lib.nn.utils.prune
        PRUNINGS[name](P, m)
        for pname in ("weight", "bias"):
            if hasattr(m, pname + "_mask"):
                P.remove(m, pname)
        assert not P.is_pruned(m)
        assert isinstance(m.weight, lib.nn.Parameter)
        results.append(_state(lib, m))
    _compare(*results)


def test_pruned_weight_follows_orig_through_the_hook():
    for lib in (torch, ember):
        m = _linear(lib)
        lib.nn.utils.prune.l1_unstructured(m, "weight", amount=0.5)
        with lib.no_grad():
            m.weight_orig.mul_(2)
        m(lib.zeros(1, 5, dtype=lib.float64))  # the pre-hook recomputes weight
        np.testing.assert_allclose(
            m.weight.detach().numpy(), 2 * W * m.weight_mask.numpy(), rtol=0, atol=0
        )
        assert m.weight.grad_fn is not None and type(m.weight_mask) is lib.Tensor


def test_global_unstructured_matches_torch():
    results = []
    for lib in (torch, ember):
        a, b = _linear(lib), _linear(lib)
        with lib.no_grad():
            b.weight.mul_(0.47)  # (no ties between the layers' magnitudes)
        P = lib.nn.utils.prune
        P.l1_unstructured(a, "weight", amount=3)
        P.global_unstructured(
            [(a, "weight"), (b, "weight"), (b, "bias")], pruning_method=P.L1Unstructured, amount=0.4
        )
        results.append(
            [t.detach().numpy() for t in (a.weight, b.weight, b.bias, a.weight_mask, b.bias_mask)]
            + [len(a._forward_pre_hooks[next(iter(a._forward_pre_hooks))])]
        )
    for x, y in zip(*results):
        np.testing.assert_allclose(y, x)


def test_random_methods_prune_the_right_amount():
    P = ember.nn.utils.prune
    m = _linear(ember)
    P.random_unstructured(m, "weight", amount=0.35)
    assert int((m.weight_mask == 0).sum()) == round(0.35 * 20)
    m2 = _linear(ember)
    P.random_structured(m2, "weight", amount=2, dim=0)
    rows = m2.weight_mask.sum(1)
    assert int((rows == 0).sum()) == 2 and int((rows == 5).sum()) == 2
    P.random_structured(m2, "weight", amount=1, dim=0)  # among the rows kept
    assert int((m2.weight_mask.sum(1) == 0).sum()) == 3
    assert len(m2._forward_pre_hooks[next(iter(m2._forward_pre_hooks))]) == 2


def _errors(lib):
    P = lib.nn.utils.prune
    out = []
    cases = [
        lambda: P.l1_unstructured(_linear(lib), "weight", amount=1.5),
        lambda: P.l1_unstructured(_linear(lib), "weight", amount=-1),
        lambda: P.l1_unstructured(_linear(lib), "weight", amount="a"),
        lambda: P.l1_unstructured(_linear(lib), "weight", amount=21),
        lambda: P.ln_structured(_linear(lib), "bias", amount=1, n=2, dim=0),
        lambda: P.ln_structured(_linear(lib), "weight", amount=1, n=2, dim=2),
        lambda: P.remove(_linear(lib), "weight"),
        lambda: P.global_unstructured(3, P.L1Unstructured, amount=1),
        lambda: P.global_unstructured([], P.L1Unstructured, importance_scores=[], amount=1),
        lambda: P.global_unstructured([(_linear(lib), "weight")], P.RandomStructured, amount=1),
        lambda: P.PruningContainer(3),
    ]
    for case in cases:
        try:
            case()
            out.append(None)
        except Exception as e:  # noqa: BLE001
            msg = str(e).replace("torch.Size", "Size").replace("torch.nn", "ember.nn")
            out.append((type(e).__name__, msg.split("Linear(")[0]))
    return out


def test_errors_match_torch():
    for a, b in zip(_errors(torch), _errors(ember)):
        assert a == b


def test_a_failed_pruning_restores_the_parameter():
    for lib in (torch, ember):
        m = _linear(lib)
        with pytest.raises(ValueError):
            lib.nn.utils.prune.l1_unstructured(m, "weight", amount=100)
        assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight"]
        assert not lib.nn.utils.prune.is_pruned(m)


def test_prune_method_on_a_tensor():
    for lib in (torch, ember):
        t = lib.tensor(W)
        out = lib.nn.utils.prune.L1Unstructured(amount=0.5).prune(t)
        expected = np.where(np.abs(W) > np.sort(np.abs(W).ravel())[9], W, 0)
        np.testing.assert_array_equal(out.numpy(), expected)
