"""ctc_loss / CTCLoss against torch 2.13 in float64: values, graphs, gradients, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as efwd
from ember._aten import nn_ctc as _ctc
from ember.nn.modules.loss import CTCLoss

torch = pytest.importorskip("torch")
import torch.autograd.forward_ad as tfwd  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

T, N, C = 7, 4, 5


def _log_probs(seed: int, shape=(T, N, C)) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def _case(blank: int, repeated: bool, seed: int):
    """Padded targets (N, S) avoiding ``blank``, lengths including a zero target length and a
    short input."""
    rng = np.random.default_rng(seed)
    labels = [c for c in range(C) if c != blank]
    tl = np.array([3, 2, 0, 3])
    tg = rng.choice(labels, size=(N, 3))
    if repeated:
        tg[0] = labels[0]  # "a a a" needs 5 frames
        tg[3, :2] = labels[1]
    il = np.array([7, 5, 3, 6])
    return tg, il, tl


def _graph(t) -> list:
    names, fn = [], t.grad_fn
    while fn is not None:
        names.append(type(fn).__name__)
        nxt = [f for f, _ in fn.next_functions if f is not None]
        fn = nxt[0] if nxt and type(nxt[0]).__name__ != "AccumulateGrad" else None
    return names


def _both(lp, tg, il, tl, as_tensors=True, **kw):
    """(ember loss, ember input, torch loss, torch input)."""
    e_in = ember.tensor(lp, requires_grad=True)
    t_in = torch.tensor(lp, requires_grad=True)
    if as_tensors:
        e_len = (ember.tensor(il), ember.tensor(tl))
        t_len = (torch.tensor(il), torch.tensor(tl))
    else:
        e_len = t_len = (tuple(int(v) for v in il), tuple(int(v) for v in tl))
    e = _ctc.ctc_loss(e_in, ember.tensor(tg), *e_len, **kw)
    t = TF.ctc_loss(t_in, torch.tensor(tg), *t_len, **kw)
    return e, e_in, t, t_in


def _compare(e, e_in, t, t_in):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert e.shape == tuple(t.shape)
    assert e.dtype == ember.float64
    assert _graph(e) == _graph(t)
    w = np.random.default_rng(0).standard_normal(tuple(t.shape))
    (t * torch.tensor(w)).sum().backward()
    (e * ember.tensor(w)).sum().backward()
    np.testing.assert_allclose(e_in.grad.numpy(), t_in.grad.numpy(), rtol=1e-10, atol=1e-12)


GRID = list(
    itertools.product(
        (0, C - 1),  # blank
        (False, True),  # repeated labels
        ("padded", "concatenated"),
        ("none", "mean", "sum"),
        (False, True),  # zero_infinity
        (True, False),  # lengths as tensors / tuples
    )
)


@pytest.mark.parametrize("blank,repeated,layout,reduction,zero_inf,as_tensors", GRID)
def test_matches_torch(blank, repeated, layout, reduction, zero_inf, as_tensors):
    tg, il, tl = _case(blank, repeated, seed=blank + 2 * repeated)
    if layout == "concatenated":
        tg = np.concatenate([tg[b, : tl[b]] for b in range(N)])
    lp = _log_probs(1)
    kw = dict(blank=blank, reduction=reduction, zero_infinity=zero_inf)
    _compare(*_both(lp, tg, il, tl, as_tensors, **kw))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_inf", [False, True])
def test_impossible_alignments(reduction, zero_inf):
    """Inputs too short for their targets: infinite losses, zeroed with zero_infinity (torch's
    gradient is NaN on those frames otherwise; ember's too)."""
    tg = np.array([[1, 1, 1], [1, 2, 3], [2, 2, 2], [3, 1, 3]])
    il = np.array([4, 2, 7, 3])  # "1 1 1" needs 5 frames, "1 2 3" needs 3
    tl = np.array([3, 3, 2, 3])
    e, e_in, t, t_in = _both(_log_probs(2), tg, il, tl, reduction=reduction, zero_infinity=zero_inf)
    if reduction == "none":
        assert np.isinf(t.detach().numpy()).sum() == (0 if zero_inf else 2)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12)
    assert _graph(e) == _graph(t)
    e.sum().backward()
    t.sum().backward()
    np.testing.assert_allclose(e_in.grad.numpy(), t_in.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("lengths", ["tensor0d", "tensor1d", "tuple"])
def test_unbatched(reduction, lengths):
    lp = _log_probs(3, (T, C))
    tg = np.array([1, 3, 3])
    make = {
        "tensor0d": lambda lib: (lib.tensor(6), lib.tensor(3)),
        "tensor1d": lambda lib: (lib.tensor([6]), lib.tensor([3])),
        "tuple": lambda lib: ((6,), (3,)),
    }[lengths]
    e_in = ember.tensor(lp, requires_grad=True)
    t_in = torch.tensor(lp, requires_grad=True)
    e = _ctc.ctc_loss(e_in, ember.tensor(tg), *make(ember), reduction=reduction)
    t = TF.ctc_loss(t_in, torch.tensor(tg), *make(torch), reduction=reduction)
    _compare(e, e_in, t, t_in)
    assert e.grad_fn.next_functions[0][0] is not None


def test_zero_lengths_and_targets_dtypes():
    lp = _log_probs(4)
    tg = np.array([[1, 2, 3]] * N)
    il, tl = np.array([0, 5, 7, 1]), np.array([0, 2, 0, 1])
    _compare(*_both(lp, tg, il, tl, reduction="none"))
    # int32 targets and float targets (torch truncates them)
    for dt in (np.int32, np.float64):
        _compare(*_both(lp, tg.astype(dt), il, tl, reduction="mean"))


def test_batch_of_long_sequences():
    rng = np.random.default_rng(5)
    t_max, n, c = 40, 6, 8
    lp = _log_probs(6, (t_max, n, c)) * 3  # not normalised: torch's formula all the same
    tl = rng.integers(1, 15, size=n)
    il = rng.integers(tl.max() * 2, t_max + 1, size=n)
    tg = rng.integers(1, c, size=(n, 15))
    _compare(*_both(lp, tg, il, tl, reduction="mean"))


def test_float32():
    lp = _log_probs(7).astype(np.float32)
    tg, il, tl = _case(0, True, 0)
    e = _ctc.ctc_loss(ember.tensor(lp), ember.tensor(tg), ember.tensor(il), ember.tensor(tl))
    t = TF.ctc_loss(torch.tensor(lp), torch.tensor(tg), torch.tensor(il), torch.tensor(tl))
    assert e.dtype == ember.float32
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5)


def test_gradcheck_through_log_softmax():
    tg, il, tl = _case(0, True, 1)
    x = ember.tensor(np.random.default_rng(8).standard_normal((T, N, C)), requires_grad=True)

    def f(x):
        return _ctc.ctc_loss(
            x.log_softmax(2), ember.tensor(tg), tuple(il), tuple(tl), reduction="none"
        )

    assert ember.autograd.gradcheck(f, (x,))


def test_gradient_is_torch_convention():
    """Directly w.r.t. log_probs: ``exp(log_probs) - posterior / p`` (not the true gradient
    of unnormalised inputs), zero beyond each input length."""
    tg, il, tl = _case(0, False, 2)
    e, e_in, t, t_in = _both(_log_probs(9) + 0.3, tg, il, tl, reduction="sum")
    _compare(e, e_in, t, t_in)
    assert np.all(e_in.grad.numpy()[5:, 1] == 0)


def test_no_double_backward():
    tg, il, tl = _case(0, False, 3)
    e, e_in, t, t_in = _both(_log_probs(10), tg, il, tl)
    (ge,) = ember.autograd.grad(e, e_in, create_graph=True)
    (gt,) = torch.autograd.grad(t, t_in, create_graph=True)
    assert type(ge.grad_fn).__name__ == type(gt.grad_fn).__name__ == "NotImplemented"
    np.testing.assert_allclose(ge.detach().numpy(), gt.detach().numpy(), rtol=1e-10, atol=1e-12)
    msg = "derivative for aten::_ctc_loss_backward is not implemented"
    with pytest.raises(RuntimeError, match=msg):
        gt.sum().backward()
    with pytest.raises(RuntimeError, match=msg):
        ge.sum().backward()


def test_no_forward_mode():
    tg, il, tl = _case(0, False, 4)
    lp = _log_probs(11)
    with tfwd.dual_level(), pytest.raises(NotImplementedError, match="_ctc_loss"):
        d = tfwd.make_dual(torch.tensor(lp), torch.ones(T, N, C, dtype=torch.float64))
        TF.ctc_loss(d, torch.tensor(tg), torch.tensor(il), torch.tensor(tl))
    with efwd.dual_level(), pytest.raises(NotImplementedError):
        d = efwd.make_dual(ember.tensor(lp), ember.ones(T, N, C, dtype=ember.float64))
        _ctc.ctc_loss(d, ember.tensor(tg), ember.tensor(il), ember.tensor(tl))


def _errors(lib, fn):
    lp = lib.tensor(_log_probs(12))
    tg = lib.tensor(np.array([[1, 2, 3]] * N))
    try:
        fn(lib, lp, tg)
    except Exception as exc:  # noqa: BLE001 - the error is the result compared
        return type(exc), str(exc).split("\n")[0]
    return None


def _F(lib):
    return _ctc if lib is ember else TF


ERRORS = {
    "input_too_long": lambda m, lp, tg: _F(m).ctc_loss(lp, tg, [8, 7, 7, 7], [3, 3, 3, 3]),
    "target_too_long": lambda m, lp, tg: _F(m).ctc_loss(lp, tg, [7] * 4, [4, 3, 3, 3]),
    "input_lengths_size": lambda m, lp, tg: _F(m).ctc_loss(lp, tg, [7] * 3, [3] * 4),
    "target_lengths_size": lambda m, lp, tg: _F(m).ctc_loss(lp, tg, [7] * 4, [3] * 5),
    "negative_input": lambda m, lp, tg: _F(m).ctc_loss(lp, tg, [7, -1, 7, 7], [3] * 4),
    "negative_target": lambda m, lp, tg: _F(m).ctc_loss(lp, tg, [7] * 4, [3, -2, 3, 3]),
    "blank_high": lambda m, lp, tg: _F(m).ctc_loss(lp, tg, [7] * 4, [3] * 4, blank=C),
    "blank_negative": lambda m, lp, tg: _F(m).ctc_loss(lp, tg, [7] * 4, [3] * 4, blank=-1),
    "reduction": lambda m, lp, tg: _F(m).ctc_loss(lp, tg, [7] * 4, [3] * 4, reduction="x"),
    "float_lengths": lambda m, lp, tg: _F(m).ctc_loss(
        lp, tg, m.tensor([7.0] * 4), m.tensor([3] * 4)
    ),
    "float_target_lengths": lambda m, lp, tg: _F(m).ctc_loss(
        lp, tg, m.tensor([7] * 4), m.tensor([3.0] * 4)
    ),
    "mixed_lengths": lambda m, lp, tg: _F(m).ctc_loss(lp, tg, m.tensor([7] * 4), [3] * 4),
    "int_lengths": lambda m, lp, tg: _F(m).ctc_loss(lp[:, 0], tg[0], 7, 3),
    "targets_batch": lambda m, lp, tg: _F(m).ctc_loss(lp, tg[:1], [7] * 4, [3] * 4),
    "targets_3d": lambda m, lp, tg: _F(m).ctc_loss(lp, tg[None], [7] * 4, [3] * 4),
    "concat_short": lambda m, lp, tg: _F(m).ctc_loss(lp, tg.flatten()[:5], [7] * 4, [3, 3, 0, 0]),
    "log_probs_4d": lambda m, lp, tg: _F(m).ctc_loss(lp[None], tg, [7] * 4, [3] * 4),
    "log_probs_1d": lambda m, lp, tg: _F(m).ctc_loss(lp[0, 0], tg, [7] * 4, [3] * 4),
    "empty": lambda m, lp, tg: _F(m).ctc_loss(lp[:0], tg, [0] * 4, [3] * 4),
    "int_log_probs": lambda m, lp, tg: _F(m).ctc_loss(lp.long(), tg, [7] * 4, [3] * 4),
    "scalar_lengths_batched": lambda m, lp, tg: _F(m).ctc_loss(lp, tg, m.tensor(7), m.tensor(3)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    e = _errors(ember, ERRORS[name])
    t = _errors(torch, ERRORS[name])
    assert t is not None
    assert e == t


def test_module():
    tg, il, tl = _case(2, True, 5)
    lp = _log_probs(13)
    for reduction in ("none", "mean", "sum"):
        e = CTCLoss(blank=2, reduction=reduction, zero_infinity=True)
        t = torch.nn.CTCLoss(blank=2, reduction=reduction, zero_infinity=True)
        assert repr(e) == repr(t)
        args = (tg, il, tl)
        got = e(ember.tensor(lp), *(ember.tensor(a) for a in args))
        want = t(torch.tensor(lp), *(torch.tensor(a) for a in args))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    assert CTCLoss().blank == 0 and CTCLoss().zero_infinity is False
