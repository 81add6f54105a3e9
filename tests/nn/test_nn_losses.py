"""Losses against torch: reductions, weights, ignore_index, label smoothing, probability
targets, extreme logits, loss modules, finite-difference checks and errors."""

import warnings

import numpy as np
import pytest

import ember
import ember.nn as enn
import ember.nn.functional as EF

torch = pytest.importorskip("torch")
TF = torch.nn.functional
tnn = torch.nn

RNG = np.random.default_rng(99)
REDUCTIONS = ["mean", "sum", "none"]


def _run(lib, fn, arrays, dtype, grad_mask):
    ts = []
    for a, g in zip(arrays, grad_mask):
        a = np.asarray(a)
        if a.dtype.kind == "f":
            ts.append(lib.tensor(a.astype(dtype), requires_grad=g))
        else:
            ts.append(lib.tensor(a))
    out = fn(lib, *ts)
    gout = np.random.default_rng(7).uniform(0.5, 1.5, size=tuple(out.shape)).astype(dtype)
    out.backward(lib.tensor(gout))
    return out, [t.grad for t in ts]


def _compare(fn, arrays, dtype=np.float64, grad_mask=None, tol=None, check_name=True):
    """``fn(lib, *tensors)`` in torch and ember: same value, dtype, grad_fn, gradients."""
    grad_mask = grad_mask or [True] * len(arrays)
    tol = tol or (1e-10 if dtype == np.float64 else 2e-5)
    to, tg = _run(torch, fn, arrays, dtype, grad_mask)
    eo, eg = _run(ember, fn, arrays, dtype, grad_mask)
    assert tuple(eo.shape) == tuple(to.shape)
    assert eo.dtype.name == str(to.dtype).split(".")[-1]
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=tol, atol=tol)
    if check_name:
        assert type(eo.grad_fn).__name__ == type(to.grad_fn).__name__
    for t, e in zip(tg, eg):
        assert (t is None) == (e is None)
        if t is not None:
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=tol, atol=tol)
    return eo, eg


def _lib_nn(lib):
    return TF if lib is torch else EF


def _numgrad(fn, x, eps=1e-6):
    """float64 central differences of ``sum(fn(x) * w)`` against ember's gradient."""
    x = np.array(x, dtype=np.float64)
    t = ember.tensor(x, requires_grad=True)
    out = fn(t)
    w = np.random.default_rng(0).uniform(0.5, 1.5, size=tuple(out.shape))
    (out * ember.tensor(w)).sum().backward()
    num = np.zeros_like(x)
    flat, nflat = x.reshape(-1), num.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        vals = []
        for step in (eps, -eps):
            flat[i] = old + step
            with ember.no_grad():
                vals.append(float((fn(ember.tensor(x)).numpy() * w).sum()))
        flat[i] = old
        nflat[i] = (vals[0] - vals[1]) / (2 * eps)
    np.testing.assert_allclose(t.grad.numpy(), num, rtol=1e-6, atol=1e-7)


# -- cross entropy and nll -------------------------------------------------------------------

LOGITS = RNG.standard_normal((6, 5)) * 2
TARGET = np.array([1, 0, 4, 3, 2, 2])
TARGET_IGN = np.array([1, 0, 4, -100, 2, 2])
WEIGHT = np.array([0.5, 1.0, 2.0, 1.5, 0.25])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("use_weight", [False, True])
@pytest.mark.parametrize(
    "target",
    [TARGET, TARGET_IGN, np.array([1, 3, 4, 3, 3, 0])],
    ids=["plain", "ignore_default", "ignore_3"],
)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cross_entropy_class_indices(reduction, use_weight, target, smoothing, dtype):
    ignore = 3 if target[1] == 3 else -100

    def fn(lib, x, t):
        w = lib.tensor(WEIGHT.astype(dtype)) if use_weight else None
        return _lib_nn(lib).cross_entropy(
            x, t, weight=w, ignore_index=ignore, reduction=reduction, label_smoothing=smoothing
        )

    _compare(fn, [LOGITS, target], dtype, grad_mask=[True, False])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("use_weight", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_probabilities(reduction, use_weight, smoothing):
    probs = RNG.dirichlet(np.ones(5), 6)

    def fn(lib, x, p):
        w = lib.tensor(WEIGHT) if use_weight else None
        return _lib_nn(lib).cross_entropy(
            x, p, weight=w, reduction=reduction, label_smoothing=smoothing
        )

    # torch divides by a Python number (DivBackward1); ember records DivBackward0.
    _compare(fn, [LOGITS, probs], check_name=reduction != "mean")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_spatial_and_unbatched(reduction):
    x = RNG.standard_normal((2, 4, 3, 5))
    t = RNG.integers(0, 4, (2, 3, 5))
    t[0, 1, 2] = -100
    _compare(
        lambda lib, a, b: _lib_nn(lib).cross_entropy(a, b, reduction=reduction),
        [x, t],
        grad_mask=[True, False],
    )
    _compare(
        lambda lib, a, b: _lib_nn(lib).cross_entropy(a, b, reduction=reduction),
        [RNG.standard_normal(5), np.array(3)],
        grad_mask=[True, False],
    )
    x3 = RNG.standard_normal((2, 4, 7))
    t3 = RNG.integers(0, 4, (2, 7))
    _compare(
        lambda lib, a, b: _lib_nn(lib).cross_entropy(a, b, reduction=reduction),
        [x3, t3],
        grad_mask=[True, False],
        check_name=False,
    )


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_extreme_logits_are_finite(smoothing):
    x = np.array([[1e4, -1e4, 0.0], [-1e4, 1e4, 3.0], [0.0, 0.0, -1e4]])
    t = np.array([1, 1, 2])
    eo, eg = _compare(
        lambda lib, a, b: _lib_nn(lib).cross_entropy(a, b, label_smoothing=smoothing),
        [x, t],
        grad_mask=[True, False],
    )
    assert np.isfinite(eo.item()) and np.isfinite(eg[0].numpy()).all()
    probs = np.array([[0.0, 1.0, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    eo, eg = _compare(
        lambda lib, a, b: _lib_nn(lib).cross_entropy(a, b), [x, probs], check_name=False
    )
    assert np.isfinite(eg[0].numpy()).all()


def test_cross_entropy_float32_extreme_logits():
    x = np.array([[1e4, -1e4], [-1e4, 1e4]], dtype=np.float32)
    e = ember.tensor(x, requires_grad=True)
    loss = EF.cross_entropy(e, ember.tensor([1, 1]))
    loss.backward()
    assert np.isfinite(loss.item()) and np.isfinite(e.grad.numpy()).all()
    assert loss.item() == pytest.approx(1e4, rel=1e-6)


def test_cross_entropy_all_ignored_is_nan_like_torch():
    x = RNG.standard_normal((2, 3))
    t = np.array([-100, -100])
    for s in (0.0, 0.1):
        tv = TF.cross_entropy(torch.tensor(x), torch.tensor(t), label_smoothing=s)
        ev = EF.cross_entropy(ember.tensor(x), ember.tensor(t), label_smoothing=s)
        assert np.isnan(tv.item()) and np.isnan(ev.item())


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("use_weight", [False, True])
def test_nll_loss_matches_torch(reduction, use_weight):
    logp = np.log(RNG.dirichlet(np.ones(5), 6))

    def fn(lib, x, t):
        w = lib.tensor(WEIGHT) if use_weight else None
        return _lib_nn(lib).nll_loss(x, t, weight=w, ignore_index=2, reduction=reduction)

    _compare(fn, [logp, TARGET], grad_mask=[True, False])


def test_cross_entropy_and_nll_gradchecks():
    x = RNG.standard_normal((4, 3))
    t = ember.tensor([0, 2, -100, 1])
    w = ember.tensor([0.3, 1.0, 2.0], dtype=ember.float64)
    probs = ember.tensor(RNG.dirichlet(np.ones(3), 4))
    for fn in [
        lambda a: EF.cross_entropy(a, t, weight=w, label_smoothing=0.2),
        lambda a: EF.cross_entropy(a, t, reduction="none"),
        lambda a: EF.nll_loss(a, t, weight=w),
        lambda a: EF.cross_entropy(a, probs, weight=w),
    ]:
        _numgrad(fn, x)


@pytest.mark.parametrize(
    "call",
    [
        lambda F, T: F.nll_loss(T.randn(4, 5), T.tensor([1, 2, 0, 5])),
        lambda F, T: F.nll_loss(T.randn(4, 5), T.tensor([1, 2, 0])),
        lambda F, T: F.nll_loss(T.randn(4, 5), T.tensor([1, 2, 0, -3])),
        lambda F, T: F.cross_entropy(T.randn(4, 5), T.tensor([1.0, 2, 0, 3])),
        lambda F, T: F.cross_entropy(T.randn(4, 5), T.tensor([1, 2, 0, 3], dtype=T.int32)),
        lambda F, T: F.nll_loss(T.randn(4, 5), T.tensor([1, 2, 0, 3]), weight=T.ones(3)),
        lambda F, T: F.cross_entropy(T.randn(4, 5), T.rand(4, 5), ignore_index=1),
        lambda F, T: F.cross_entropy(T.randn(4, 5), T.tensor([1, 2, 0, 3]), label_smoothing=1.5),
        lambda F, T: F.nll_loss(T.randn(2, 5, 3), T.tensor([[1, 2], [1, 2]])),
        lambda F, T: F.cross_entropy(T.randn(4, 5), T.tensor([1, 2, 0, 3]), reduction="avg"),
    ],
)
def test_cross_entropy_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(TF, torch)
    with pytest.raises(Exception) as ee:
        call(EF, ember)
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


# -- mse / l1 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_regression_losses_match_torch(name, reduction, dtype):
    x, y = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    _compare(
        lambda lib, a, b: getattr(_lib_nn(lib), name)(a, b, reduction=reduction), [x, y], dtype
    )
    w = RNG.uniform(0.1, 2.0, (3, 4))
    _compare(
        lambda lib, a, b, c: getattr(_lib_nn(lib), name)(a, b, reduction=reduction, weight=c),
        [x, y, w],
        dtype,
        grad_mask=[True, True, False],
    )


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
def test_regression_losses_broadcast_with_warning(name):
    x, y = RNG.standard_normal((3, 1)), RNG.standard_normal(4)
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        to = getattr(TF, name)(torch.tensor(x), torch.tensor(y))
    with warnings.catch_warnings(record=True) as ew:
        warnings.simplefilter("always")
        eo = getattr(EF, name)(ember.tensor(x), ember.tensor(y))
    assert [str(w.message) for w in ew] == [str(w.message) for w in tw]
    np.testing.assert_allclose(eo.numpy(), to.numpy())


def test_mse_gradcheck_both_arguments_and_same_tensor():
    x, y = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    _numgrad(lambda a: EF.mse_loss(a, ember.tensor(y)), x)
    _numgrad(lambda b: EF.mse_loss(ember.tensor(x), b, reduction="sum"), y)
    a = ember.tensor(x, requires_grad=True)
    EF.mse_loss(a, a).backward()
    np.testing.assert_allclose(a.grad.numpy(), 0.0)


def test_legacy_size_average_reduce_arguments():
    x, y = RNG.standard_normal(4), RNG.standard_normal(4)
    with pytest.warns(UserWarning) as ew:
        e = EF.mse_loss(ember.tensor(x), ember.tensor(y), size_average=False)
    with pytest.warns(UserWarning) as tw:
        t = TF.mse_loss(torch.tensor(x), torch.tensor(y), size_average=False)
    assert str(ew[0].message) == str(tw[0].message)
    assert e.item() == pytest.approx(t.item())


# -- binary cross entropy -------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("use_weight", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_binary_cross_entropy_matches_torch(reduction, use_weight, dtype):
    p = RNG.uniform(0.02, 0.98, (4, 3))
    y = RNG.uniform(size=(4, 3))
    w = RNG.uniform(0.5, 2.0, 3)

    def fn(lib, a, b):
        wt = lib.tensor(w.astype(dtype)) if use_weight else None
        return _lib_nn(lib).binary_cross_entropy(a, b, weight=wt, reduction=reduction)

    _compare(fn, [p, y], dtype, tol=None if dtype == np.float64 else 1e-4)


def test_binary_cross_entropy_at_zero_and_one_is_finite_like_torch():
    p = np.array([0.0, 1.0, 0.0, 1.0, 0.5])
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])

    def fn(lib, a, b):
        return _lib_nn(lib).binary_cross_entropy(a, b, reduction="none")

    to, (tgp, tgy) = _run(torch, fn, [p, y], np.float64, [True, True])
    eo, (egp, egy) = _run(ember, fn, [p, y], np.float64, [True, True])
    # Values: torch documents clamping the logs at -100, which defines every entry.
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(eo.detach().numpy(), [0.0, 0.0, 100.0, 100.0, np.log(2)])
    assert eo.dtype.name == str(to.dtype).split(".")[-1]
    assert type(eo.grad_fn).__name__ == type(to.grad_fn).__name__
    # The loss is linear in the target, so d/dy (clamped logs, up to 100) is defined at p=0, 1.
    np.testing.assert_allclose(egy.numpy(), tgy.numpy(), rtol=1e-12)
    # d/dp does not exist at p = 0 or 1 (log's singularity at the edge of its domain; torch's
    # 1e12 and 0 there come from an undocumented epsilon in its backward): those entries only
    # have to be finite. At p = 0.5, y = 1 it is the closed form -y/p times the output grad.
    gout = np.random.default_rng(7).uniform(0.5, 1.5, size=p.shape)  # _run's output grad
    assert np.isfinite(egp.numpy()).all()
    np.testing.assert_allclose(egp.numpy()[4], -2.0 * gout[4], rtol=1e-12)
    np.testing.assert_allclose(egp.numpy()[4], tgp.numpy()[4], rtol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("extras", ["none", "weight", "pos_weight", "both"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_bce_with_logits_matches_torch(reduction, extras, dtype):
    x = RNG.standard_normal((4, 3)) * 5
    y = RNG.uniform(size=(4, 3))
    w, pw = RNG.uniform(0.5, 2.0, 3), RNG.uniform(0.5, 3.0, 3)

    def fn(lib, a, b):
        kw = {}
        if extras in ("weight", "both"):
            kw["weight"] = lib.tensor(w.astype(dtype))
        if extras in ("pos_weight", "both"):
            kw["pos_weight"] = lib.tensor(pw.astype(dtype))
        return _lib_nn(lib).binary_cross_entropy_with_logits(a, b, reduction=reduction, **kw)

    _compare(fn, [x, y], dtype, tol=None if dtype == np.float64 else 1e-4)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_bce_with_logits_extreme_logits_are_finite(dtype):
    x = np.array([1e4, -1e4, 1e4, -1e4, 0.0])
    y = np.array([1.0, 0.0, 0.0, 1.0, 0.5])
    eo, eg = _compare(
        lambda lib, a, b: _lib_nn(lib).binary_cross_entropy_with_logits(
            a, b, pos_weight=lib.tensor(np.full(5, 2.0, dtype=dtype)), reduction="none"
        ),
        [x, y],
        dtype,
    )
    assert np.isfinite(eo.detach().numpy()).all()
    assert all(np.isfinite(g.numpy()).all() for g in eg)


def test_binary_losses_gradchecks():
    p, y = RNG.uniform(0.1, 0.9, (2, 3)), RNG.uniform(size=(2, 3))
    _numgrad(lambda a: EF.binary_cross_entropy(a, ember.tensor(y)), p)
    _numgrad(lambda b: EF.binary_cross_entropy(ember.tensor(p), b, reduction="sum"), y)
    x = RNG.standard_normal((2, 3)) * 3
    pw = ember.tensor([1.0, 2.0, 0.5], dtype=ember.float64)
    _numgrad(lambda a: EF.binary_cross_entropy_with_logits(a, ember.tensor(y), pos_weight=pw), x)
    _numgrad(lambda b: EF.binary_cross_entropy_with_logits(ember.tensor(x), b, pos_weight=pw), y)


@pytest.mark.parametrize(
    "call",
    [
        lambda F, T: F.binary_cross_entropy(T.tensor([0.5, 1.5]), T.tensor([0.0, 1.0])),
        lambda F, T: F.binary_cross_entropy(T.tensor([0.5, 0.5]), T.tensor([[0.0, 1.0]])),
        lambda F, T: F.binary_cross_entropy_with_logits(T.ones(2), T.ones(2, 2)),
        lambda F, T: F.mse_loss(T.ones(2), T.ones(2), weight=T.ones(3)),
    ],
)
def test_binary_loss_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(TF, torch)
    with pytest.raises(Exception) as ee:
        call(EF, ember)
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


# -- loss modules -----------------------------------------------------------------------------


LOSS_MODULES = [
    ("MSELoss", {}, "regression"),
    ("L1Loss", {"reduction": "sum"}, "regression"),
    ("CrossEntropyLoss", {"label_smoothing": 0.1, "ignore_index": 2}, "classes"),
    ("CrossEntropyLoss", {"weight": WEIGHT}, "classes"),
    ("NLLLoss", {"weight": WEIGHT, "reduction": "none"}, "logp"),
    ("BCELoss", {"weight": WEIGHT}, "probs"),
    ("BCEWithLogitsLoss", {"pos_weight": WEIGHT, "reduction": "sum"}, "logits"),
]


@pytest.mark.parametrize("name,kw,kind", LOSS_MODULES)
def test_loss_modules_match_torch(name, kw, kind):
    inputs = {
        "regression": (LOGITS, RNG.standard_normal(LOGITS.shape)),
        "classes": (LOGITS, TARGET),
        "logp": (np.log(RNG.dirichlet(np.ones(5), 6)), TARGET),
        "probs": (RNG.uniform(0.05, 0.95, (6, 5)), RNG.uniform(size=(6, 5))),
        "logits": (LOGITS, RNG.uniform(size=(6, 5))),
    }[kind]

    def make(lib, nn):
        args = {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        return getattr(nn, name)(**args)

    tm, em = make(torch, tnn), make(ember, enn)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    _compare(
        lambda lib, a, b: (tm if lib is torch else em)(a, b), list(inputs), grad_mask=[True, False]
    )
