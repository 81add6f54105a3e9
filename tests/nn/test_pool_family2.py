"""3-d max/avg pooling, max unpooling, Lp pooling and 3-d adaptive pooling against torch."""

import itertools
import re

import numpy as np
import pytest
import torch

import ember
from ember import nn
from ember._aten import nn_conv as C
from ember.nn.modules import pooling as P

TF = torch.nn.functional


def _distinct(*shape, seed=0):
    n = int(np.prod(shape))
    return np.random.default_rng(seed).permutation(n).reshape(shape) / n - 0.5


def _pair(a, requires_grad=True):
    return (
        ember.tensor(a, requires_grad=requires_grad),
        torch.tensor(a, requires_grad=requires_grad),
    )


def _check(fe, ft, a, grad=True):
    xe, xt = _pair(a)
    oe, ot = fe(xe), ft(xt)
    oe = oe if isinstance(oe, tuple) else (oe,)
    ot = ot if isinstance(ot, tuple) else (ot,)
    for e, t in zip(oe, ot):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert type(oe[0].grad_fn).__name__ == type(ot[0].grad_fn).__name__
    if grad:
        w = np.random.default_rng(1).standard_normal(tuple(ot[0].shape))
        (oe[0] * ember.tensor(w)).sum().backward()
        (ot[0] * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


MAX3D = [
    dict(kernel_size=k, stride=s, padding=p, dilation=d, ceil_mode=c)
    for k, s, p, d, c in itertools.product(
        [2, (2, 3, 2)], [None, 1, (2, 1, 2)], [0, 1], [1, (2, 1, 1)], [False, True]
    )
]


@pytest.mark.parametrize("kw", MAX3D)
def test_max_pool3d_grid(kw):
    a = _distinct(2, 2, 5, 6, 7)
    _check(
        lambda x: C.max_pool3d(x, return_indices=True, **kw),
        lambda x: TF.max_pool3d(x, return_indices=True, **kw),
        a,
    )


AVG3D = [
    dict(kernel_size=k, stride=s, padding=p, ceil_mode=c, count_include_pad=ci, divisor_override=dv)
    for k, s, p, c, ci, dv in itertools.product(
        [2, (3, 2, 3)], [None, (1, 2, 2)], [0, 1], [False, True], [True, False], [None, 5]
    )
]


@pytest.mark.parametrize("kw", AVG3D)
def test_avg_pool3d_grid(kw):
    _check(
        lambda x: C.avg_pool3d(x, **kw), lambda x: TF.avg_pool3d(x, **kw), _distinct(2, 2, 5, 6, 7)
    )


def test_pool3d_unbatched_and_int():
    a = _distinct(3, 4, 5, 6)
    _check(lambda x: C.max_pool3d(x, 2), lambda x: TF.max_pool3d(x, 2), a)
    _check(lambda x: C.avg_pool3d(x, 2, 1, 1), lambda x: TF.avg_pool3d(x, 2, 1, 1), a)
    i = np.arange(2 * 4 * 4 * 4).reshape(2, 4, 4, 4)
    np.testing.assert_array_equal(
        C.max_pool3d(ember.tensor(i), 2).numpy(), TF.max_pool3d(torch.tensor(i).double(), 2).numpy()
    )


@pytest.mark.parametrize(
    "nd,shape,kw",
    [
        (1, (2, 3, 9), dict(kernel_size=2)),
        (1, (3, 9), dict(kernel_size=3, stride=2, padding=1)),
        (2, (2, 2, 6, 7), dict(kernel_size=2)),
        (2, (2, 5, 7), dict(kernel_size=(2, 3), stride=(2, 3), padding=(1, 0))),
        (3, (2, 2, 4, 5, 6), dict(kernel_size=2)),
        (3, (2, 5, 4, 6), dict(kernel_size=(2, 2, 3), padding=(1, 0, 1))),
    ],
)
@pytest.mark.parametrize("explicit_size", [False, True])
def test_max_unpool(nd, shape, kw, explicit_size):
    a = _distinct(*shape)
    pe = getattr(C, f"max_pool{nd}d")
    pt = getattr(TF, f"max_pool{nd}d")
    ue = getattr(C, f"max_unpool{nd}d")
    ut = getattr(TF, f"max_unpool{nd}d")
    ve, ie = pe(ember.tensor(a), return_indices=True, **kw)
    vt, it = pt(torch.tensor(a), return_indices=True, **kw)
    size = shape[-nd:] if explicit_size else None
    if size is None:
        try:
            ut(vt, it, **kw)
        except RuntimeError:  # the default size is too small: the same error
            _same_error(lambda: ue(ve, ie, **kw), lambda: ut(vt, it, **kw))
            return
    _check(
        lambda x: ue(x, ie, output_size=size, **kw),
        lambda x: ut(x, it, output_size=size, **kw),
        vt.numpy(),
    )
    me, mt = getattr(nn, f"MaxUnpool{nd}d", None), getattr(torch.nn, f"MaxUnpool{nd}d")
    me = me or getattr(P, f"MaxUnpool{nd}d")
    out_e = me(**kw)(ve, ie, size)
    np.testing.assert_allclose(out_e.numpy(), mt(**kw)(vt, it, size).numpy())


@pytest.mark.parametrize("norm", [1, 2, 3.0, 1.5, float("inf"), -float("inf")])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("stride,ceil", [(None, False), (2, True), (1, False)])
def test_lp_pool(norm, nd, stride, ceil):
    shape = {1: (2, 3, 9), 2: (2, 3, 5, 7), 3: (1, 2, 4, 5, 6)}[nd]
    k = {1: 3, 2: (2, 3), 3: 2}[nd]
    a = np.abs(_distinct(*shape)) + 0.1
    fe, ft = getattr(C, f"lp_pool{nd}d"), getattr(TF, f"lp_pool{nd}d")
    _check(lambda x: fe(x, norm, k, stride, ceil), lambda x: ft(x, norm, k, stride, ceil), a)
    me = getattr(P, f"LPPool{nd}d")(norm, k, stride, ceil)
    mt = getattr(torch.nn, f"LPPool{nd}d")(norm, k, stride, ceil)
    assert repr(me) == repr(mt)
    np.testing.assert_allclose(
        me(ember.tensor(a)).numpy(), mt(torch.tensor(a)).numpy(), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("size", [2, (3, 1, 4), (None, 2, 5), (5, 6, 7), (1, 1, 1), (7, 3, 9)])
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_pool3d(size, batched):
    a = _distinct(*((2, 2, 5, 6, 7) if batched else (2, 5, 6, 7)))
    _check(lambda x: C.adaptive_avg_pool3d(x, size), lambda x: TF.adaptive_avg_pool3d(x, size), a)
    _check(
        lambda x: C.adaptive_max_pool3d(x, size, True),
        lambda x: TF.adaptive_max_pool3d(x, size, True),
        a,
    )


REPRS = [
    ("MaxPool3d", (2,), {}),
    ("MaxPool3d", ((2, 1, 2),), dict(padding=1, dilation=2, ceil_mode=True, return_indices=True)),
    ("AvgPool3d", (2,), {}),
    ("AvgPool3d", (3, 2, 1, True, False, 2), {}),
    ("MaxUnpool1d", (2,), {}),
    ("MaxUnpool2d", ((2, 3), 1, 1), {}),
    ("MaxUnpool3d", (2,), dict(stride=(1, 2, 1))),
    ("LPPool1d", (2, 3), {}),
    ("LPPool2d", (1.5, (2, 3), 1, True), {}),
    ("LPPool3d", (2, 3, 2), {}),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}),
    ("AdaptiveMaxPool3d", (2,), dict(return_indices=True)),
]


@pytest.mark.parametrize("name,args,kw", REPRS)
def test_reprs(name, args, kw):
    assert repr(getattr(P, name)(*args, **kw)) == repr(getattr(torch.nn, name)(*args, **kw))


def _same_error(fe, ft):
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(type(et.value)) as ee:
        fe()

    # torch's unpooling kernel reports whichever invalid index its threads meet first.
    def norm(m):
        return re.sub(r"invalid max index: -?\d+", "invalid max index: N", m.split("\n")[0])

    assert norm(str(ee.value)) == norm(str(et.value))


x5 = _distinct(1, 2, 4, 4, 4)
ERRORS = [
    ("max_pool3d", (2, 0), {}),
    ("max_pool3d", (2,), dict(dilation=0)),
    ("max_pool3d", (2,), dict(padding=2)),
    ("max_pool3d", (5,), {}),
    ("max_pool3d", ((2, 2),), {}),
    ("avg_pool3d", (2, 0), {}),
    ("avg_pool3d", (2,), dict(padding=2)),
    ("avg_pool3d", (5,), {}),
    ("avg_pool3d", (2,), dict(divisor_override=0)),
    ("avg_pool3d", ((2, 2),), {}),
    ("adaptive_avg_pool3d", ((2, 2),), {}),
    ("adaptive_max_pool3d", ((2, 2),), {}),
    ("adaptive_avg_pool3d", (-1,), {}),
    ("adaptive_max_pool3d", (-1,), {}),
]


@pytest.mark.parametrize("name,args,kw", ERRORS)
def test_errors(name, args, kw):
    _same_error(
        lambda: getattr(C, name)(ember.tensor(x5), *args, **kw),
        lambda: getattr(TF, name)(torch.tensor(x5), *args, **kw),
    )


def test_low_dim_errors():
    for name in ["max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d"]:
        arg = 2
        _same_error(
            lambda name=name, arg=arg: getattr(C, name)(ember.tensor(x5[0, 0]), arg),
            lambda name=name, arg=arg: getattr(TF, name)(torch.tensor(x5[0, 0]), arg),
        )


def test_unpool_errors():
    a = _distinct(2, 4, 4)
    ve, ie = C.max_pool2d(ember.tensor(a), 2, return_indices=True)
    vt, it = TF.max_pool2d(torch.tensor(a), 2, return_indices=True)
    cases = [
        (lambda v, i: (v, i + 100, 2), {}),
        (lambda v, i: (v, i, 2), dict(output_size=(9, 9))),
        (lambda v, i: (v, i, 2), dict(output_size=(4, 4, 4))),
        (lambda v, i: (v, i[..., :1], 2), {}),
        (lambda v, i: (v, i.float(), 2), {}),
        (lambda v, i: (v[0, 0], i[0, 0], 2), {}),
    ]
    for make, kw in cases:
        _same_error(
            lambda make=make, kw=kw: C.max_unpool2d(*make(ve, ie), **kw),
            lambda make=make, kw=kw: TF.max_unpool2d(*make(vt, it), **kw),
        )
    b = _distinct(1, 2, 4, 4, 4)
    _same_error(
        lambda: C.max_unpool3d(ember.tensor(b), ember.tensor(b).long() - 1, 2),
        lambda: TF.max_unpool3d(torch.tensor(b), torch.tensor(b).long() - 1, 2),
    )


GRADCHECKS = [
    lambda F, x: F.max_pool3d(x, 2, 1, 1, ceil_mode=True),
    lambda F, x: F.avg_pool3d(x, 2, 1, 1, count_include_pad=False),
    lambda F, x: F.lp_pool3d(x, 2.5, 2, 1),
    lambda F, x: F.adaptive_avg_pool3d(x, (2, 3, 2)),
    lambda F, x: F.adaptive_max_pool3d(x, (2, 1, 3)),
]


@pytest.mark.parametrize("fn", GRADCHECKS)
def test_gradcheck(fn):
    a = _distinct(1, 2, 3, 3, 4) + 0.6  # positive, no ties
    x = ember.tensor(a, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: fn(C, t), (x,))
    assert ember.autograd.gradgradcheck(lambda t: fn(C, t), (x,))


def test_unpool_gradcheck():
    a = _distinct(1, 2, 4, 4, 4)
    _, idx = C.max_pool3d(ember.tensor(a), 2, return_indices=True)
    x = ember.tensor(_distinct(1, 2, 2, 2, 2, seed=3), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: C.max_unpool3d(t, idx, 2), (x,))
    assert ember.autograd.gradgradcheck(lambda t: C.max_unpool3d(t, idx, 2), (x,))
