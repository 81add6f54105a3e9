"""Forward-mode AD through the ``ember.nn`` ops: tangents match torch's
``torch.autograd.forward_ad`` and ember's own reverse-mode Jacobian-vector products."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.autograd.forward_ad as fwAD
import ember.autograd.recording as recording
import ember.nn.functional as EF
from ember.autograd.functional import jacobian

FW = {ember: fwAD, torch: torch.autograd.forward_ad}
F = {ember: EF, torch: TF}

_rng = np.random.default_rng(0)


def _r(*shape):
    return _rng.standard_normal(shape)


def _u(*shape, lo=0.1, hi=0.9):
    return _rng.uniform(lo, hi, shape)


IDX = np.array([0, 3, 1, 2, -100])
IDX2D = _rng.integers(0, 3, (2, 5, 5))
EMB_IDX = np.array([[0, 2, 1], [1, 1, 3]])
TIES = np.round(_r(2, 2, 6, 6))  # many equal values in a window: the tie-breaking rule
NLL_W = np.array([0.5, 1.0, 2.0, 0.3])
BCE_W = _u(3, 4)
POS_W = np.array([0.5, 1.0, 2.0, 3.0])


def _bn(m, x, w, b, training):
    rm, rv = m.tensor(np.zeros(3)), m.tensor(np.ones(3) * 1.5)
    return F[m].batch_norm(x, rm, rv, w, b, training=training)


# name -> (fn(m, *tensors), primal arrays); every argument gets a tangent
CASES = {
    "conv2d": (
        lambda m, x, w, b: F[m].conv2d(x, w, b, padding=1),
        (_r(2, 3, 5, 5), _r(4, 3, 3, 3), _r(4)),
    ),
    "conv2d_groups_stride": (
        lambda m, x, w: F[m].conv2d(x, w, stride=2, dilation=(1, 2), groups=3),
        (_r(2, 3, 7, 7), _r(6, 1, 3, 2)),
    ),
    "conv2d_same": (
        lambda m, x, w: F[m].conv2d(x, w, padding="same"),
        (_r(1, 2, 5, 4), _r(3, 2, 2, 3)),
    ),
    "conv2d_unbatched": (lambda m, x, w: F[m].conv2d(x, w), (_r(2, 4, 4), _r(3, 2, 2, 2))),
    "max_pool2d": (lambda m, x: F[m].max_pool2d(x, 2), (_r(2, 3, 6, 6),)),
    "max_pool2d_pad_ceil": (
        lambda m, x: F[m].max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
        (_r(2, 2, 6, 7),),
    ),
    "max_pool2d_ties": (lambda m, x: F[m].max_pool2d(x, 3, stride=1, dilation=2), (TIES,)),
    "max_pool2d_indices": (
        lambda m, x: F[m].max_pool2d(x, 2, return_indices=True)[0],
        (_r(1, 2, 4, 4),),
    ),
    "avg_pool2d": (lambda m, x: F[m].avg_pool2d(x, 3, stride=2, padding=1), (_r(2, 3, 6, 6),)),
    "avg_pool2d_no_pad_count": (
        lambda m, x: F[m].avg_pool2d(x, 2, padding=1, ceil_mode=True, count_include_pad=False),
        (_r(1, 2, 5, 5),),
    ),
    "batch_norm_train": (lambda m, x, w, b: _bn(m, x, w, b, True), (_r(4, 3, 2, 2), _r(3), _r(3))),
    "batch_norm_eval": (lambda m, x, w, b: _bn(m, x, w, b, False), (_r(4, 3, 2, 2), _r(3), _r(3))),
    "batch_norm_no_affine": (
        lambda m, x: F[m].batch_norm(x, None, None, training=True),
        (_r(5, 3),),
    ),
    "layer_norm": (
        lambda m, x, w, b: F[m].layer_norm(x, (3, 4), w, b),
        (_r(2, 3, 4), _r(3, 4), _r(3, 4)),
    ),
    "layer_norm_plain": (lambda m, x: F[m].layer_norm(x, (4,)), (_r(3, 4),)),
    "embedding": (lambda m, w: F[m].embedding(m.tensor(EMB_IDX), w), (_r(4, 3),)),
    "embedding_padding_freq": (
        lambda m, w: F[m].embedding(m.tensor(EMB_IDX), w, padding_idx=1, scale_grad_by_freq=True),
        (_r(4, 3),),
    ),
    "gelu": (lambda m, x: F[m].gelu(x), (_r(3, 4),)),
    "gelu_tanh": (lambda m, x: F[m].gelu(x, approximate="tanh"), (_r(3, 4),)),
    "leaky_relu": (lambda m, x: F[m].leaky_relu(x, 0.2), (_r(3, 4),)),
    "leaky_relu_inplace": (lambda m, x: F[m].leaky_relu(x * 1, 0.3, inplace=True), (_r(3, 4),)),
    "mse_loss": (lambda m, x, y: F[m].mse_loss(x, y), (_r(3, 4), _r(3, 4))),
    "mse_loss_sum": (lambda m, x, y: F[m].mse_loss(x, y, reduction="sum"), (_r(3, 4), _r(3, 4))),
    "mse_loss_none": (lambda m, x, y: F[m].mse_loss(x, y, reduction="none"), (_r(3, 4), _r(3, 4))),
    "nll_loss": (lambda m, x: F[m].nll_loss(x, m.tensor(IDX)), (_r(5, 4),)),
    "nll_loss_weight_sum": (
        lambda m, x: F[m].nll_loss(x, m.tensor(IDX), weight=m.tensor(NLL_W), reduction="sum"),
        (_r(5, 4),),
    ),
    "nll_loss_none": (lambda m, x: F[m].nll_loss(x, m.tensor(IDX), reduction="none"), (_r(5, 4),)),
    "nll_loss2d": (lambda m, x: F[m].nll_loss(x, m.tensor(IDX2D)), (_r(2, 3, 5, 5),)),
    "nll_loss_1d": (lambda m, x: F[m].nll_loss(x, m.tensor(2)), (_r(4),)),
    "cross_entropy": (lambda m, x: F[m].cross_entropy(x, m.tensor(IDX)), (_r(5, 4),)),
    "cross_entropy_probs": (
        lambda m, x, p: F[m].cross_entropy(x, p, label_smoothing=0.1),
        (_r(3, 4), _u(3, 4)),
    ),
    "cross_entropy_smoothing": (
        lambda m, x: F[m].cross_entropy(x, m.tensor(IDX), label_smoothing=0.2),
        (_r(5, 4),),
    ),
    "binary_cross_entropy": (lambda m, p, y: F[m].binary_cross_entropy(p, y), (_u(3, 4), _u(3, 4))),
    "binary_cross_entropy_weight": (
        lambda m, p, y: F[m].binary_cross_entropy(
            p, y, weight=m.tensor(np.linspace(0.5, 2, 4)), reduction="sum"
        ),
        (_u(3, 4), _u(3, 4)),
    ),
    "bce_with_logits": (
        lambda m, x, y: F[m].binary_cross_entropy_with_logits(x, y, reduction="none"),
        (_r(3, 4), _u(3, 4)),
    ),
    "bce_with_logits_pos_weight": (
        lambda m, x, y: F[m].binary_cross_entropy_with_logits(
            x, y, weight=m.tensor(BCE_W), pos_weight=m.tensor(POS_W)
        ),
        (_r(3, 4), _u(3, 4)),
    ),
    "pad_constant": (lambda m, x: F[m].pad(x, (1, 2, 0, 1), value=0.5), (_r(2, 3, 4),)),
    "pad_crop": (lambda m, x: F[m].pad(x, (-1, 2, 1, -2)), (_r(2, 3, 4),)),
    "pad_reflect": (lambda m, x: F[m].pad(x, (1, 2), mode="reflect"), (_r(2, 3, 4),)),
    "unfold": (lambda m, x: F[m].unfold(x, 2, dilation=1, padding=1, stride=2), (_r(2, 3, 5, 5),)),
    "fold": (lambda m, c: F[m].fold(c, (4, 5), (2, 3), padding=(1, 0)), (_r(2, 12, 15),)),
}


def _first_max_tangent(primals, tangents, k=3, d=2):
    """max_pool2d(x, k, stride=1, dilation=d)'s tangent under ember's tie rule: each window
    takes the tangent of its first maximum in row-major order (np.argmax's choice)."""
    (x,), (t,) = primals, tangents
    n, c, h, w = x.shape
    span = d * (k - 1) + 1
    out = np.empty((n, c, h - span + 1, w - span + 1))
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            win = x[:, :, i : i + span : d, j : j + span : d].reshape(n, c, -1)
            tw = t[:, :, i : i + span : d, j : j + span : d].reshape(n, c, -1)
            first = win.argmax(-1)[..., None]
            out[:, :, i, j] = np.take_along_axis(tw, first, -1)[..., 0]
    return out


# At a tie max pooling is not differentiable (its one-sided directional derivative is the
# largest tied tangent, not any one entry's) and torch does not document which entry it
# follows: the tangent is checked against ember's rule written out, not against torch.
TIE_REFERENCE = {"max_pool2d_ties": _first_max_tangent}

# Ops whose backward is, by design, not the transposed Jacobian (torch's too): the
# padding_idx row gets no gradient and scale_grad_by_freq scales it, yet the forward
# tangent is the plain derivative of the function (as in torch).
NOT_TRANSPOSED_JACOBIAN = {"embedding_padding_freq"}


def _forward_tangent(m, fn, primals, tangents, requires_grad=False):
    fw = FW[m]
    xs = [m.tensor(p).requires_grad_(requires_grad) for p in primals]
    with fw.dual_level():
        duals = [fw.make_dual(x, m.tensor(t)) for x, t in zip(xs, tangents)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = fn(m, *duals)
        out, tangent = fw.unpack_dual(y)
        assert tangent is not None
        return out.detach().numpy().copy(), tangent.detach().numpy().copy()


def _reverse_jvp(fn, primals, tangents):
    """J @ t from ember's reverse-mode Jacobian."""
    xs = tuple(ember.tensor(p) for p in primals)
    jac = jacobian(lambda *a: fn(ember, *a), xs)
    if not isinstance(jac, tuple):
        jac = (jac,)
    y = fn(ember, *xs)
    res = np.zeros(y.numel())
    for j, t in zip(jac, tangents):
        res += j.numpy().reshape(y.numel(), -1) @ np.asarray(t).reshape(-1)
    return res.reshape(tuple(y.shape))


@pytest.mark.parametrize("name", list(CASES))
def test_tangent_matches_torch_and_reverse_mode(name):
    fn, primals = CASES[name]
    rng = np.random.default_rng(len(name))
    tangents = [rng.standard_normal(np.shape(p)) for p in primals]
    out_e, tg_e = _forward_tangent(ember, fn, primals, tangents)
    out_t, tg_t = _forward_tangent(torch, fn, primals, tangents)
    np.testing.assert_allclose(out_e, out_t, rtol=1e-10, atol=1e-12)
    if name in TIE_REFERENCE:
        tg_t = TIE_REFERENCE[name](primals, tangents)
    np.testing.assert_allclose(tg_e, tg_t, rtol=1e-9, atol=1e-11)
    if name not in NOT_TRANSPOSED_JACOBIAN:
        jv = _reverse_jvp(fn, primals, tangents)
        np.testing.assert_allclose(tg_e, jv, rtol=1e-9, atol=1e-11)
    # The same with a graph recorded (node parameters set on grad_fn, not _fw.node).
    _, tg_g = _forward_tangent(ember, fn, primals, tangents, requires_grad=True)
    np.testing.assert_allclose(tg_g, tg_t, rtol=1e-9, atol=1e-11)


def test_tangent_of_one_argument_only():
    # conv with only the weight dual, mse with only the target dual
    x, w = _r(1, 2, 4, 4), _r(3, 2, 2, 2)
    tw = _r(3, 2, 2, 2)
    res = {}
    for m in (ember, torch):
        fw = FW[m]
        with fw.dual_level():
            y = F[m].conv2d(m.tensor(x), fw.make_dual(m.tensor(w), m.tensor(tw)))
            loss = F[m].mse_loss(m.tensor(x[:, :, :3, :3]).sum(1, keepdim=True), y[:, :1])
            res[m] = [fw.unpack_dual(t).tangent.numpy().copy() for t in (y, loss)]
    for a, b in zip(res[ember], res[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_non_float_results_get_no_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(ember.tensor(_r(1, 1, 4, 4)), ember.tensor(_r(1, 1, 4, 4)))
        _, idx = EF.max_pool2d(d, 2, return_indices=True)
        assert fwAD.unpack_dual(idx).tangent is None


def _small_net(m, x, target, params):
    w1, b1, g, beta, w2 = params
    f = F[m]
    h = f.conv2d(x, w1, b1, padding=1)
    h = f.batch_norm(h, None, None, g, beta, training=True)
    h = f.gelu(f.max_pool2d(h, 2))
    h = f.avg_pool2d(f.leaky_relu(h, 0.1), 2)
    logits = h.reshape(h.shape[0], -1) @ w2
    return f.cross_entropy(logits, target)


def _net_data():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((3, 2, 8, 8))
    target = np.array([0, 2, 1])
    shapes = [(4, 2, 3, 3), (4,), (4,), (4,), (16, 3)]
    params = [rng.standard_normal(s) * 0.5 for s in shapes]
    vs = [rng.standard_normal(s) for s in shapes]
    return x, target, params, vs


def _hvp_forward_over_reverse(m):
    x, target, params, vs = _net_data()
    fw = FW[m]
    ps = [m.tensor(p).requires_grad_() for p in params]
    with fw.dual_level():
        duals = [fw.make_dual(p, m.tensor(v)) for p, v in zip(ps, vs)]
        loss = _small_net(m, m.tensor(x), m.tensor(target), duals)
        grads = m.autograd.grad(loss, ps, create_graph=True)
        return [
            (g.detach().numpy().copy(), fw.unpack_dual(g).tangent.detach().numpy().copy())
            for g in grads
        ]


def test_hvp_forward_over_reverse_through_conv_net_matches_torch():
    for (ge, hve), (gt, hvt) in zip(
        _hvp_forward_over_reverse(ember), _hvp_forward_over_reverse(torch)
    ):
        np.testing.assert_allclose(ge, gt, rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(hve, hvt, rtol=1e-8, atol=1e-10)


def test_reverse_over_forward_through_conv_net():
    # The tangent J v = <grad L, v> is differentiable in the primals and the tangents:
    # d(J v)/d(params) = H v and d(J v)/dv = grad L. (Checked against torch's
    # forward-over-reverse: torch's own reverse-over-forward fails through cross_entropy,
    # and skips the batch statistics' dependence on the input in batch_norm's JVP.)
    x, target, params, vs = _net_data()
    ps = [ember.tensor(p).requires_grad_() for p in params]
    ts = [ember.tensor(v).requires_grad_() for v in vs]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(ps, ts)]
        out = _small_net(ember, ember.tensor(x), ember.tensor(target), duals)
        jv = fwAD.unpack_dual(out).tangent
        assert jv.requires_grad
        grads = ember.autograd.grad(jv, ps + ts)
    hvp, grad = grads[: len(ps)], grads[len(ps) :]
    for he, ge, (gt, hvt) in zip(hvp, grad, _hvp_forward_over_reverse(torch)):
        np.testing.assert_allclose(he.numpy(), hvt, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(ge.numpy(), gt, rtol=1e-9, atol=1e-11)


def test_forward_ad_off_again_after_the_level():
    x = ember.tensor(_r(1, 1, 4, 4), requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.ones(1, 1, 4, 4, dtype=ember.float64))
        EF.conv2d(d, ember.ones(1, 1, 2, 2, dtype=ember.float64)).sum()
    assert not recording._on
    y = EF.conv2d(x, ember.ones(1, 1, 2, 2, dtype=ember.float64))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[0, 0, 1, 1], 4.0)
