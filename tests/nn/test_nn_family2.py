"""nn, second batch, against torch: normalisation, loss, distance, shuffle, padding, fold,
dropout and bilinear modules (outputs and every gradient with the same weights, over option
grids), their reprs, state_dict names and errors; ParameterList / ParameterDict; lazy
modules; full backward hooks; signatures; second derivatives of the ops torch cannot
differentiate twice, against central differences.
"""

import inspect
import warnings

import numpy as np
import pytest

import ember
from ember._aten import nn_layers as _layers
from ember._aten import nn_loss as _loss
from ember._aten import nn_norm as _norm
from ember.nn.modules import (
    channelshuffle,
    container,
    distance,
    dropout,
    flatten,
    fold,
    instancenorm,
    lazy,
    linear,
    loss,
    normalization,
    padding,
    pixelshuffle,
)
from numgrad import numgrad

torch = pytest.importorskip("torch")
tnn = torch.nn
TF = torch.nn.functional

MODULES = {}
for _mod in (
    channelshuffle,
    container,
    distance,
    dropout,
    flatten,
    fold,
    instancenorm,
    lazy,
    linear,
    loss,
    normalization,
    padding,
    pixelshuffle,
):
    for _name in _mod.__all__:
        MODULES[_name] = getattr(_mod, _name)


def E(name):
    return MODULES[name]


def _pair(name, *args, **kwargs):
    """The ember and torch module ``name``, the ember one loaded with torch's state."""
    t = getattr(tnn, name)(*args, **kwargs).double()
    e = E(name)(*args, **kwargs).double()
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return e, t


def _check(e, t, arrays, grads=None, tol=1e-10, train=True):
    """Same outputs and gradients (inputs and parameters) of modules ``e`` and ``t``."""
    e.train(train)
    t.train(train)
    grads = grads or [a.dtype.kind == "f" for a in arrays]
    xe = [ember.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    xt = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        oe = e(*xe)
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        ot = t(*xt)
    assert [str(w.message) for w in we] == [str(w.message) for w in wt]
    assert tuple(oe.shape) == tuple(ot.shape)
    np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), rtol=tol, atol=tol)
    if not ot.requires_grad:
        return
    w = np.random.default_rng(1).standard_normal(tuple(ot.shape))
    oe.backward(ember.tensor(w))
    ot.backward(torch.tensor(w))
    pairs = list(zip(xe, xt)) + list(zip(e.parameters(), t.parameters()))
    for a, b in pairs:
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-8, atol=1e-9)
    for (ka, va), (kb, vb) in zip(e.state_dict().items(), t.state_dict().items()):
        assert ka == kb
        np.testing.assert_allclose(va.numpy(), vb.numpy(), rtol=1e-10, atol=1e-12)


RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.standard_normal(shape)


# -- normalisation modules ----------------------------------------------------------------------


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("bias", [True, False])
def test_group_norm_module(affine, bias):
    e, t = _pair("GroupNorm", 2, 6, eps=1e-3, affine=affine, bias=bias)
    if affine:
        with torch.no_grad():
            t.weight.normal_()
        e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    assert repr(e) == repr(t)
    assert list(e.state_dict()) == list(t.state_dict())
    _check(e, t, [_x(3, 6, 4)])
    _check(e, t, [_x(3, 6, 2, 2)])


INSTANCE = [("InstanceNorm1d", (3, 4, 5)), ("InstanceNorm2d", (2, 4, 3, 3))]
INSTANCE.append(("InstanceNorm3d", (2, 4, 2, 2, 3)))


@pytest.mark.parametrize("name,shape", INSTANCE)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("momentum", [0.3, None])
def test_instance_norm_modules(name, shape, affine, track, momentum):
    e, t = _pair(name, 4, momentum=momentum, affine=affine, track_running_stats=track)
    assert repr(e) == repr(t)
    assert list(e.state_dict()) == list(t.state_dict())
    x = _x(*shape)
    _check(e, t, [x])
    _check(e, t, [x[0]])  # unbatched
    _check(e, t, [x], train=False)


def test_instance_norm_num_features_mismatch():
    e, t = _pair("InstanceNorm1d", 3)
    _check(e, t, [_x(2, 4, 5)])  # warns (affine=False)
    e, t = _pair("InstanceNorm1d", 3, affine=True)
    for m, lib in ((e, ember), (t, torch)):
        with pytest.raises(ValueError, match="to match num_features"):
            m(lib.ones(2, 4, 5, dtype=lib.float64))


@pytest.mark.parametrize("shape", [(4,), (3, 4)])
@pytest.mark.parametrize("eps", [None, 1e-3])
@pytest.mark.parametrize("affine", [True, False])
def test_rms_norm_module(shape, eps, affine):
    e, t = _pair("RMSNorm", shape, eps=eps, elementwise_affine=affine)
    if affine:
        with torch.no_grad():
            t.weight.normal_()
        e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    assert repr(e) == repr(t)
    _check(e, t, [_x(2, 3, 4)])


def test_rms_norm_default_eps_float32():
    x = RNG.standard_normal((3, 4)).astype(np.float32) * 1e-4
    got = _norm.rms_norm(ember.tensor(x), [4]).numpy()
    want = TF.rms_norm(torch.tensor(x), [4]).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("size,shape", [(3, (2, 5, 4)), (2, (2, 4, 3, 2)), (4, (1, 6, 2, 2, 2))])
def test_local_response_norm_module(size, shape):
    e, t = _pair("LocalResponseNorm", size, alpha=0.3, beta=0.6, k=1.5)
    assert repr(e) == repr(t)
    _check(e, t, [_x(*shape)])


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_3d(momentum):
    e, t = _pair("BatchNorm3d", 3, momentum=momentum)
    assert repr(e) == repr(t)
    for _ in range(2):
        _check(e, t, [_x(2, 3, 2, 2, 2)])
    _check(e, t, [_x(2, 3, 2, 2, 2)], train=False)
    with pytest.raises(ValueError, match=r"expected 5D input \(got 4D input\)"):
        e(ember.ones(2, 3, 2, 2, dtype=ember.float64))


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, -1), (3.0, 0)])
def test_normalize(p, dim):
    x = _x(3, 4)
    x[1] = 0  # a zero row: the eps clamp
    for out in (False, True):
        a = _norm.normalize(ember.tensor(x), p, dim).numpy()
        b = TF.normalize(torch.tensor(x), p, dim).numpy()
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
        if out:
            buf = ember.empty(3, 4, dtype=ember.float64)
            _norm.normalize(ember.tensor(x), p, dim, out=buf)
            np.testing.assert_allclose(buf.numpy(), b, rtol=1e-12)


NORM_ERRORS = [
    (lambda m, F: F.group_norm(m.ones(2, 6, 3), 4), RuntimeError),
    (lambda m, F: F.group_norm(m.ones(2, 6, 3), 3, m.ones(5)), RuntimeError),
    (lambda m, F: F.group_norm(m.ones(6), 3), RuntimeError),
    (lambda m, F: F.group_norm(m.ones(1, 6), 6), ValueError),
    (lambda m, F: F.instance_norm(m.ones(2, 3, 1)), ValueError),
    (lambda m, F: F.rms_norm(m.ones(2, 3), [4]), RuntimeError),
    (lambda m, F: F.rms_norm(m.ones(2, 3), [3], m.ones(2)), RuntimeError),
    (lambda m, F: F.rms_norm(m.ones(2, 3), 3), TypeError),
    (lambda m, F: F.local_response_norm(m.ones(2, 3), 2), ValueError),
]


def _ember_F():
    """ember's functions of this batch (wired into nn.functional separately)."""

    class NS:
        pass

    ns = NS()
    for mod in (_layers, _loss, _norm):
        for n in getattr(mod, "__all__", None) or dir(mod):
            if not n.startswith("_"):
                setattr(ns, n, getattr(mod, n))
    for n in ("group_norm", "instance_norm", "rms_norm", "local_response_norm", "normalize"):
        setattr(ns, n, getattr(_norm, n))
    return ns


EF = _ember_F()


@pytest.mark.parametrize("case", range(len(NORM_ERRORS)))
def test_norm_errors(case):
    fn, exc = NORM_ERRORS[case]
    with pytest.raises(exc) as te:
        fn(torch, TF)
    with pytest.raises(exc) as ee:
        fn(ember, EF)
    assert str(ee.value) == str(te.value)


def test_norm_module_errors():
    for GN in (tnn.GroupNorm, E("GroupNorm")):
        with pytest.raises(
            ValueError, match=r"num_channels \(6\) must be divisible by num_groups \(4\)"
        ):
            GN(4, 6)


# -- losses --------------------------------------------------------------------------------


def _loss_case(name, kwargs, arrays, grads=None):
    e, t = _pair(name, **kwargs)
    assert repr(e) == repr(t)
    _check(e, t, arrays, grads)


SIGNS = np.where(RNG.standard_normal((4, 5)) > 0, 1.0, -1.0)
REDS = ["mean", "sum", "none"]


@pytest.mark.parametrize("reduction", REDS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_loss(reduction, log_target):
    target = _x(4, 5) if log_target else np.abs(_x(4, 5))
    _loss_case("KLDivLoss", dict(reduction=reduction, log_target=log_target), [_x(4, 5), target])


@pytest.mark.parametrize("reduction", REDS)
def test_regression_losses(reduction):
    x, y = _x(4, 5), _x(4, 5)
    for beta in (0.0, 0.4, 1.5):
        _loss_case("SmoothL1Loss", dict(reduction=reduction, beta=beta), [x, y])
    for delta in (0.3, 1.0, 2.5):
        _loss_case("HuberLoss", dict(reduction=reduction, delta=delta), [x, y])
    _loss_case("SmoothL1Loss", dict(reduction=reduction), [x, y[:1]])  # broadcast warning


@pytest.mark.parametrize("reduction", REDS)
def test_margin_losses(reduction):
    x, y = _x(4, 5), _x(4, 5)
    kw = dict(reduction=reduction)
    _loss_case("SoftMarginLoss", kw, [x, SIGNS], [True, False])
    for margin in (0.0, 0.35):
        _loss_case("MarginRankingLoss", dict(kw, margin=margin), [x, y, SIGNS])
        _loss_case("HingeEmbeddingLoss", dict(kw, margin=margin + 0.5), [x, SIGNS])
        _loss_case("CosineEmbeddingLoss", dict(kw, margin=margin - 0.8), [x, y, SIGNS[:, 0]])
    _loss_case("CosineEmbeddingLoss", kw, [x[0], y[0], np.array(-1.0)])
    idx = np.array([0, 3, 1, 4])
    for p in (1, 2):
        for weight in (None, np.abs(_x(5)) + 0.1):
            mkw = dict(p=p, margin=0.65, reduction=reduction)
            w_e = None if weight is None else ember.tensor(weight)
            e = E("MultiMarginLoss")(weight=w_e, **mkw)
            t = tnn.MultiMarginLoss(weight=None if weight is None else torch.tensor(weight), **mkw)
            assert repr(e) == repr(t) and list(e.state_dict()) == list(t.state_dict())
            _check(e, t, [x, idx])
    labels = np.array([[0, 3, -1, 1], [4, -1, 0, 0], [1, 1, 2, -1], [2, 0, 1, 4]])
    _loss_case("MultiLabelMarginLoss", kw, [x, np.pad(labels, ((0, 0), (0, 1)), constant_values=3)])
    _loss_case("MultiLabelMarginLoss", kw, [x[0], np.array([2, 1, -1, 0, 0])])
    for weight in (None, np.abs(_x(5))):
        w_e, w_t = (None, None) if weight is None else (ember.tensor(weight), torch.tensor(weight))
        e = E("MultiLabelSoftMarginLoss")(weight=w_e, reduction=reduction)
        t = tnn.MultiLabelSoftMarginLoss(weight=w_t, reduction=reduction)
        _check(e, t, [x, (SIGNS > 0) * 1.0])


@pytest.mark.parametrize("reduction", REDS)
@pytest.mark.parametrize("swap", [False, True])
def test_triplet_losses(reduction, swap):
    a, p, n = _x(4, 5), _x(4, 5), _x(4, 5)
    for norm in (1.0, 2.0, 3.0):
        kw = dict(margin=1.3, p=norm, swap=swap, reduction=reduction)
        _loss_case("TripletMarginLoss", kw, [a, p, n])
    e = E("TripletMarginWithDistanceLoss")(swap=swap, reduction=reduction, margin=2.0)
    t = tnn.TripletMarginWithDistanceLoss(swap=swap, reduction=reduction, margin=2.0)
    _check(e, t, [a, p, n])

    def cos_dist(lib):
        F = EF if lib is ember else TF
        return lambda u, v: 1.0 - F.cosine_similarity(u, v)

    e = E("TripletMarginWithDistanceLoss")(distance_function=cos_dist(ember), margin=0.5)
    t = tnn.TripletMarginWithDistanceLoss(distance_function=cos_dist(torch), margin=0.5)
    _check(e, t, [a, p, n])


@pytest.mark.parametrize("reduction", REDS)
def test_nll_losses(reduction):
    x, rate = _x(4, 5), np.abs(_x(4, 5)) + 0.1
    counts = np.floor(np.abs(_x(4, 5)) * 3)
    for log_input in (True, False):
        for full in (True, False):
            kw = dict(log_input=log_input, full=full, reduction=reduction, eps=1e-6)
            _loss_case("PoissonNLLLoss", kw, [x if log_input else rate, counts])
    for full in (True, False):
        kw = dict(full=full, reduction=reduction, eps=1e-3)
        var = np.abs(_x(4, 5))
        var[0, 0] = 1e-5  # clamped at eps
        _loss_case("GaussianNLLLoss", kw, [x, _x(4, 5), var])
        _loss_case("GaussianNLLLoss", kw, [x, _x(4, 5), np.abs(_x(4)) + 0.1])
        _loss_case("GaussianNLLLoss", kw, [x, _x(4, 5), np.abs(_x(4, 1)) + 0.1])


def test_kl_div_mean_warns_like_torch():
    x, y = _x(2, 3), np.abs(_x(2, 3))
    with pytest.warns(UserWarning) as we:
        _loss.kl_div(ember.tensor(x), ember.tensor(y))
    with pytest.warns(UserWarning) as wt:
        TF.kl_div(torch.tensor(x), torch.tensor(y))
    assert [str(w.message) for w in we] == [str(w.message) for w in wt]


LOSS_ERRORS = [
    lambda m, F: F.smooth_l1_loss(m.ones(3), m.ones(3), beta=-1.0),
    lambda m, F: F.huber_loss(m.ones(3), m.ones(3), delta=0.0),
    lambda m, F: F.huber_loss(m.ones(3), m.ones(3), weight=m.ones(2)),
    lambda m, F: F.kl_div(m.ones(3), m.ones(3), reduction="avg"),
    lambda m, F: F.margin_ranking_loss(m.ones(3), m.ones(3), m.ones(1, 3)),
    lambda m, F: F.cosine_embedding_loss(m.ones(2, 3), m.ones(2, 3), m.ones(2, 1)),
    lambda m, F: F.cosine_embedding_loss(m.ones(3), m.ones(3), m.ones(2)),
    lambda m, F: F.multi_margin_loss(m.ones(3, 4), m.tensor([0, 1])),
    lambda m, F: F.multi_margin_loss(m.ones(3, 4), m.tensor([0, 1, 7])),
    lambda m, F: F.multi_margin_loss(m.ones(3, 4), m.tensor([0, 1, 2]), p=3),
    lambda m, F: F.multi_margin_loss(m.ones(3, 4), m.tensor([0, 1, 2]), weight=m.ones(3)),
    lambda m, F: F.multi_margin_loss(m.ones(2, 3, 4), m.tensor([0, 1])),
    lambda m, F: F.multilabel_margin_loss(m.ones(3, 4), m.tensor([0, 1, 2])),
    lambda m, F: F.multilabel_margin_loss(m.ones(3, 4), m.tensor([[0, 1, 7, -1]] * 3)),
    lambda m, F: F.soft_margin_loss(m.ones(3, requires_grad=True), m.ones(3, requires_grad=True)),
    lambda m, F: F.triplet_margin_loss(m.ones(2, 3), m.ones(2, 3), m.ones(3), margin=1.0),
    lambda m, F: F.triplet_margin_loss(m.ones(2, 3), m.ones(2, 3), m.ones(2, 3), margin=0.0),
    lambda m, F: F.triplet_margin_with_distance_loss(m.ones(3), m.ones(3), m.ones(3), margin=-1),
    lambda m, F: F.gaussian_nll_loss(m.ones(2, 3), m.ones(2, 3), -m.ones(2, 3)),
    lambda m, F: F.gaussian_nll_loss(m.ones(2, 3), m.ones(2, 3), m.ones(3, 3)),
    lambda m, F: F.poisson_nll_loss(m.ones(3), m.ones(3), reduction="avg"),
]


@pytest.mark.parametrize("case", range(len(LOSS_ERRORS)))
def test_loss_errors(case):
    fn = LOSS_ERRORS[case]
    with pytest.raises(Exception) as te:
        fn(torch, TF)
    with pytest.raises(Exception) as ee:
        fn(ember, EF)
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


def test_loss_module_constructor_errors():
    for lib in (tnn, None):
        get = (lambda n: getattr(tnn, n)) if lib else E
        with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
            get("MultiMarginLoss")(p=3)
        with pytest.raises(ValueError, match="expected margin to be greater than 0"):
            get("TripletMarginLoss")(margin=0)
        with pytest.raises(TypeError, match="delta must be a float or int"):
            get("HuberLoss")(delta="1")


# -- distances, bilinear, shuffles, fold, padding --------------------------------------------


def test_distance_modules():
    x, y = _x(4, 5), _x(4, 5)
    for kw in (dict(), dict(p=1.0, eps=0.0, keepdim=True), dict(p=3.0)):
        e, t = _pair("PairwiseDistance", **kw)
        _check(e, t, [x, y])
    for kw in (dict(), dict(dim=0, eps=1e-3)):
        e, t = _pair("CosineSimilarity", **kw)
        _check(e, t, [x, y])
    zero = np.zeros((2, 5))
    e, t = _pair("CosineSimilarity")
    _check(e, t, [zero, y[:2]])  # a zero vector: the eps clamp


@pytest.mark.parametrize("p", [0.0, 1.0, 1.5, 2.0, 3.0, np.inf])
def test_cdist_pdist_values_and_gradients(p):
    x, y = _x(2, 4, 3), _x(2, 5, 3)
    y[0, 1] = x[0, 2]  # a zero distance: the subgradient 0
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist")
    for mode in modes + ("donot_use_mm_for_euclid_dist",):
        xe, ye = ember.tensor(x, requires_grad=True), ember.tensor(y, requires_grad=True)
        xt, yt = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
        oe, ot = _layers.cdist(xe, ye, p, mode), torch.cdist(xt, yt, p, mode)
        np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), atol=1e-7)
        assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__
        w = _x(*ot.shape)
        oe.backward(ember.tensor(w))
        ot.backward(torch.tensor(w))
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), atol=1e-6)
        np.testing.assert_allclose(ye.grad.numpy(), yt.grad.numpy(), atol=1e-6)
    z = _x(6, 3)
    z[4] = z[1]
    ze, zt = ember.tensor(z, requires_grad=True), torch.tensor(z, requires_grad=True)
    oe, ot = _layers.pdist(ze, p), TF.pdist(zt, p)
    np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), atol=1e-12)
    w = _x(*ot.shape)
    oe.backward(ember.tensor(w))
    ot.backward(torch.tensor(w))
    np.testing.assert_allclose(ze.grad.numpy(), zt.grad.numpy(), atol=1e-9)


DIST_ERRORS = [
    lambda m, cd, F: cd(m.ones(3), m.ones(2, 3)),
    lambda m, cd, F: cd(m.ones(2, 3), m.ones(2, 4)),
    lambda m, cd, F: cd(m.ones(2, 3), m.ones(2, 3), -1.0),
    lambda m, cd, F: cd(m.ones(2, 3, dtype=m.int64), m.ones(2, 3, dtype=m.int64)),
    lambda m, cd, F: cd(m.ones(2, 3), m.ones(2, 3), 2.0, "fast"),
    lambda m, cd, F: F.pdist(m.ones(2, 3, 4)),
    lambda m, cd, F: F.pdist(m.ones(2, 3), -1),
    lambda m, cd, F: F.bilinear(m.ones(2, 3), m.ones(2, 2, 4), m.ones(5, 3, 4)),
    lambda m, cd, F: F.bilinear(m.ones(2, 3), m.ones(3, 4), m.ones(5, 3, 4)),
    lambda m, cd, F: F.bilinear(m.ones(2, 2), m.ones(2, 4), m.ones(5, 3, 4)),
    lambda m, cd, F: F.bilinear(m.ones(2, 3), m.ones(2, 4), m.ones(5, 3, 4), m.ones(4)),
    lambda m, cd, F: F.pixel_shuffle(m.ones(1, 7, 2, 2), 2),
    lambda m, cd, F: F.pixel_shuffle(m.ones(7, 2), 2),
    lambda m, cd, F: F.pixel_unshuffle(m.ones(1, 1, 3, 4), 2),
    lambda m, cd, F: F.pixel_unshuffle(m.ones(1, 1, 4, 3), 2),
    lambda m, cd, F: F.channel_shuffle(m.ones(1, 7, 2), 2),
    lambda m, cd, F: F.channel_shuffle(m.ones(1, 6, 2), 0),
    lambda m, cd, F: F.channel_shuffle(m.ones(6, 2), 2),
    lambda m, cd, F: F.cosine_similarity(m.ones(2, 3, dtype=m.int64), m.ones(2, 3, dtype=m.int64)),
]


@pytest.mark.parametrize("case", range(len(DIST_ERRORS)))
def test_layer_errors(case):
    fn = DIST_ERRORS[case]
    with pytest.raises(Exception) as te:
        fn(torch, torch.cdist, TF)
    with pytest.raises(Exception) as ee:
        fn(ember, _layers.cdist, EF)
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_module(bias):
    e, t = _pair("Bilinear", 3, 4, 5, bias=bias)
    assert repr(e) == repr(t)
    assert list(e.state_dict()) == list(t.state_dict())
    _check(e, t, [_x(6, 3), _x(6, 4)])
    _check(e, t, [_x(2, 3, 3), _x(2, 3, 4)])
    m = E("Bilinear")(3, 4, 5)
    bound = 1 / np.sqrt(3)
    assert np.abs(m.weight.detach().numpy()).max() <= bound
    assert np.abs(m.bias.detach().numpy()).max() <= bound


def test_shuffle_and_fold_modules():
    cases = [
        ("PixelShuffle", (3,), (2, 18, 2, 3)),
        ("PixelShuffle", (2,), (4, 2, 2)),
        ("PixelUnshuffle", (2,), (2, 3, 4, 6)),
        ("ChannelShuffle", (3,), (2, 6, 2, 2)),
        ("ChannelShuffle", (2,), (2, 4, 3)),
        ("Fold", ((4, 5), 2), (2, 12, 12)),
        ("Fold", ((5, 5), (2, 3), 2, 1, 2), (1, 6, 6)),
        ("Unfold", (2,), (2, 3, 4, 5)),
        ("Unfold", ((2, 3), 1, 1, 2), (1, 2, 5, 5)),
    ]
    for name, args, shape in cases:
        e, t = _pair(name, *args)
        assert repr(e) == repr(t)
        _check(e, t, [_x(*shape)])


def test_padding_modules():
    for name in padding.__all__:
        d = int(name[-2])
        for pad in (2, tuple(range(1, 2 * d + 1))):
            args = (pad, 0.5) if name.startswith("Constant") else (pad,)
            e, t = _pair(name, *args)
            assert repr(e) == repr(t)
            _check(e, t, [_x(*([2, 3] + [7] * d))])
            _check(e, t, [_x(*([3] + [7] * d))])
    for m, lib in ((E("CircularPad2d")(1), ember), (tnn.CircularPad2d(1), torch)):
        with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
            m(lib.ones(3, 3))


def test_flatten_unflatten():
    e, t = _pair("Unflatten", 1, (2, 5))
    assert repr(e) == repr(t)
    _check(e, t, [_x(3, 10, 2)])
    e, t = _pair("Unflatten", -1, [2, -1])
    _check(e, t, [_x(3, 10)])
    for lib in (tnn, None):
        U = tnn.Unflatten if lib else E("Unflatten")
        with pytest.raises(TypeError, match="found element of type float at pos 1"):
            U(1, (2, 5.0))
        with pytest.raises(TypeError, match="but found type int"):
            U(1, 5)


def test_identity_takes_any_arguments():
    m = E("Identity")(3, 4, unused="x")
    x = ember.ones(2)
    assert m(x) is x
    assert repr(m) == repr(tnn.Identity(3, unused="x")) == "Identity()"


# -- dropout ----------------------------------------------------------------------------------


CHANNEL_DROPOUT = [("Dropout1d", (40, 50, 3)), ("Dropout2d", (40, 50, 2, 2))]
CHANNEL_DROPOUT.append(("Dropout3d", (40, 50, 1, 2, 2)))


@pytest.mark.parametrize("name,shape", CHANNEL_DROPOUT)
def test_channel_dropout(name, shape):
    m = E(name)(0.3)
    assert repr(m) == repr(getattr(tnn, name)(0.3))
    x = ember.ones(*shape, dtype=ember.float64, requires_grad=True)
    y = m(x)
    flat = y.detach().numpy().reshape(shape[0], shape[1], -1)
    # whole channels: constant over the spatial dims, either 0 or 1 / (1 - p)
    assert np.all(flat == flat[..., :1])
    assert set(np.unique(flat)) <= {0.0, 1 / 0.7}
    assert abs((flat[..., 0] == 0).mean() - 0.3) < 0.05
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())
    assert type(y.grad_fn).__name__ == "MulBackward0"
    m.eval()
    assert m(x) is x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dropout2d of a 3-D input warns (as torch)
        unbatched = E(name)(1.0)(ember.ones(*shape[1:]))
    assert tuple(unbatched.shape) == shape[1:] and not unbatched.numpy().any()


def test_dropout_dims_and_warnings():
    for fn_e, fn_t, shape in [
        (_layers.dropout1d, TF.dropout1d, (2, 3, 4, 5)),
        (_layers.dropout2d, TF.dropout2d, (2, 3, 4)),
        (_layers.dropout2d, TF.dropout2d, (2, 3)),
        (_layers.dropout3d, TF.dropout3d, (2, 3, 4)),
    ]:
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            try:
                fn_t(torch.ones(shape), 0.5)
                terr = None
            except RuntimeError as ex:
                terr = str(ex)
        with warnings.catch_warnings(record=True) as we:
            warnings.simplefilter("always")
            try:
                fn_e(ember.ones(shape), 0.5)
                eerr = None
            except RuntimeError as ex:
                eerr = str(ex)
        assert eerr == terr
        assert [str(w.message) for w in we] == [str(w.message) for w in wt]
    for m in (E("Dropout2d"), tnn.Dropout2d):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            m(1.5)


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_statistics(feature):
    name = "FeatureAlphaDropout" if feature else "AlphaDropout"
    m = E(name)(0.2)
    assert repr(m) == repr(getattr(tnn, name)(0.2))
    x = ember.randn(400, 500, 2, dtype=ember.float64)
    y = m(x).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02  # SELU's fixed point kept
    alpha, p = 1.7580993408473766, 0.2
    a = 1 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    dropped = np.isclose(y, -alpha * a + alpha * a * p, rtol=0, atol=1e-13)
    assert abs(dropped.mean() - p) < 0.01
    kept = ~dropped
    np.testing.assert_allclose(y[kept], a * x.numpy()[kept] + alpha * a * p)
    if feature:  # whole channels
        assert np.all(dropped == dropped[..., :1])
    xg = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    out = m(xg)
    assert type(out.grad_fn).__name__ == "AddBackward0"
    assert m.eval()(xg) is xg
    assert _layers.alpha_dropout(xg, 0.5) is xg  # training defaults to False
    assert not _layers.alpha_dropout(xg, 1.0, True).detach().numpy().any()


# -- containers -------------------------------------------------------------------------------


def test_parameter_list():
    ts = [np.ones(2), np.zeros((2, 3))]
    e = E("ParameterList")([ember.tensor(a) for a in ts])
    t = tnn.ParameterList([torch.tensor(a) for a in ts])
    assert repr(e) == repr(t)
    e.append(ember.ones(1))
    t.append(torch.ones(1))
    e.extend(["x"])
    t.extend(["x"])
    assert repr(e) == repr(t)
    assert len(e) == 4 and isinstance(e[0], ember.nn.Parameter) and e[-1] == "x"
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert list(e.state_dict()) == list(t.state_dict())
    assert len(e[1:3]) == 2 and isinstance(e[1:3], E("ParameterList"))
    e[0] = ember.zeros(5)
    assert tuple(e[0].shape) == (5,) and isinstance(e[0], ember.nn.Parameter)
    with pytest.raises(IndexError, match="index 7 is out of range"):
        e[7]
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        e()
    with pytest.raises(TypeError, match="should be called with an iterable, but got Tensor"):
        e.extend(ember.ones(2))


def test_parameter_dict():
    e = E("ParameterDict")({"b": ember.ones(2), "a": ember.zeros(3)})
    t = tnn.ParameterDict({"b": torch.ones(2), "a": torch.zeros(3)})
    assert repr(e) == repr(t)
    assert list(e.keys()) == list(t.keys()) == ["a", "b"]  # plain dicts: sorted keys
    e["c"] = ember.ones(1)
    t["c"] = torch.ones(1)
    e.update([("d", ember.ones(4))])
    t.update([("d", torch.ones(4))])
    assert list(e.state_dict()) == list(t.state_dict())
    assert e.pop("a").shape == (3,) and "a" not in e
    assert e.get("zz", 5) == 5 and len(e) == 3
    assert list((e | {"z": ember.ones(1)}).keys()) == ["b", "c", "d", "z"]
    assert e.popitem()[0] == "d" and e.setdefault("q") is None
    e.clear()
    assert len(e) == 0 and not list(e.parameters())
    with pytest.raises(TypeError, match="not a string"):
        e[1] = ember.ones(1)
    with pytest.raises(ValueError, match="has length 3; 2 is required"):
        e.update([("a", 1, 2)])


# -- lazy modules -----------------------------------------------------------------------------

LAZY = [
    ("LazyLinear", (3,), (2, 5)),
    ("LazyConv1d", (4, 3), (2, 2, 7)),
    ("LazyConv2d", (4, 3), (2, 2, 6, 6)),
    ("LazyConv3d", (2, 2), (1, 2, 3, 3, 3)),
    ("LazyConvTranspose1d", (4, 3), (2, 2, 5)),
    ("LazyConvTranspose2d", (4, 3), (2, 2, 5, 5)),
    ("LazyBatchNorm1d", (), (4, 3)),
    ("LazyBatchNorm2d", (), (4, 3, 2, 2)),
    ("LazyBatchNorm3d", (), (4, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), (4, 3, 5)),
    ("LazyInstanceNorm2d", (), (4, 3, 5, 5)),
    ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("name,args,shape", LAZY)
def test_lazy_modules(name, args, shape):
    e, t = E(name)(*args), getattr(tnn, name)(*args)
    assert repr(e) == repr(t)
    assert e.has_uninitialized_params() and t.has_uninitialized_params()
    assert list(e.state_dict()) == list(t.state_dict())
    assert [repr(v) for v in e.state_dict().values()] == [repr(v) for v in t.state_dict().values()]
    x = RNG.standard_normal(shape).astype(np.float32)
    t(torch.tensor(x))
    e(ember.tensor(x))
    assert type(e).__name__ == type(t).__name__ and repr(e) == repr(t)
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    _check(e.double(), t.double(), [x.astype(np.float64)])


def test_lazy_linear_load_state_dict_and_errors():
    src = E("Linear")(4, 2)
    m = E("LazyLinear")(2)
    m.load_state_dict(src.state_dict())
    assert not m.has_uninitialized_params() and type(m).__name__ == "LazyLinear"
    x = ember.randn(3, 4)
    np.testing.assert_array_equal(m(x).detach().numpy(), src(x).detach().numpy())
    assert type(m).__name__ == "Linear"
    p = lazy.UninitializedParameter()
    assert repr(p) == repr(tnn.parameter.UninitializedParameter()) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        _ = p.shape
    p.materialize((2, 3), dtype=ember.float64)
    assert type(p) is ember.nn.Parameter and p.dtype == ember.float64 and p.requires_grad
    conv = E("LazyConv2d")(4, 3, groups=2)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        conv(ember.ones(1, 3, 5, 5))
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\)"):
        E("LazyConv2d")(4, 3)(ember.ones(5, 5))


# -- module hooks -----------------------------------------------------------------------------


def _hooked_run(lib, prepend):
    m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh()).double()
    with lib.no_grad():
        m[0].weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 7))
        m[0].bias.copy_(lib.tensor([0.1, -0.2]))
    log = []

    def rec(*tag):
        return lambda *a: log.append(tag + tuple(_summary(v) for v in a[1:]))

    m.register_forward_pre_hook(rec("pre"))
    m.register_forward_pre_hook(
        lambda mod, a, kw: log.append(("pre_kw", sorted(kw))), with_kwargs=True, prepend=prepend
    )
    m[0].register_forward_hook(rec("fwd"))
    m[0].register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
    m[0].register_full_backward_hook(rec("bwd"))
    m[1].register_full_backward_hook(lambda mod, gi, go: (gi[0] * 3,), prepend=prepend)
    x = lib.tensor(np.arange(6.0).reshape(2, 3) / 5, requires_grad=True)
    y = m(x)
    y.sum().backward()
    log.append(_summary(x.grad))
    log.append(_summary(m[0].weight.grad))
    return log


def _summary(v):
    if isinstance(v, (tuple, list)):
        return tuple(_summary(a) for a in v)
    if v is None or not hasattr(v, "shape"):
        return v
    return np.round(v.detach().numpy(), 10).tolist()


@pytest.mark.parametrize("prepend", [False, True])
def test_forward_and_full_backward_hooks_match_torch(prepend):
    assert _hooked_run(ember, prepend) == _hooked_run(torch, prepend)


def test_backward_hook_without_input_grad_and_always_call():
    logs = []
    for lib in (ember, torch):
        m = lib.nn.Linear(2, 2)
        log = []
        m.register_full_backward_hook(lambda mod, gi, go, log=log: log.append((gi, len(go))))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m(lib.ones(1, 2)).sum().backward()
        logs.append((log, [str(x.message) for x in w]))

        def boom(*a):
            raise ValueError("boom")

        m.forward = boom
        calls = []
        m.register_forward_hook(
            lambda mod, a, out, calls=calls: calls.append(out), always_call=True
        )
        with pytest.raises(ValueError, match="boom"):
            m(lib.ones(1, 2))
        assert calls == [None]
    assert logs[0] == logs[1]


def test_named_modules_and_getters():
    for lib in (ember, torch):
        shared = lib.nn.Linear(2, 2)
        m = lib.nn.Sequential(shared, lib.nn.Sequential(shared, lib.nn.BatchNorm1d(2)))
        names = [n for n, _ in m.named_modules(remove_duplicate=False)]
        assert names == ["", "0", "1", "1.0", "1.1"]
        named = [n for n, _ in m.named_modules(prefix="net")]
        assert named == ["net", "net.0", "net.1", "net.1.1"]
        assert m.get_submodule("1.1") is m[1][1]
        assert m.get_parameter("1.0.bias") is shared.bias
        assert m.get_buffer("1.1.running_mean") is m[1][1].running_mean
        with pytest.raises(AttributeError, match="has no attribute `nope`"):
            m.get_submodule("1.nope")
        with pytest.raises(AttributeError, match="is not a buffer"):
            m.get_buffer("0.weight")


# -- signatures --------------------------------------------------------------------------------

FUNCTIONAL = {
    _norm: ["group_norm", "instance_norm", "rms_norm", "local_response_norm", "normalize"],
    _loss: [
        "kl_div", "smooth_l1_loss", "huber_loss", "soft_margin_loss", "margin_ranking_loss",
        "hinge_embedding_loss", "cosine_embedding_loss", "multi_margin_loss",
        "multilabel_margin_loss", "multilabel_soft_margin_loss", "triplet_margin_loss",
        "triplet_margin_with_distance_loss", "poisson_nll_loss", "gaussian_nll_loss",
    ],
    _layers: [
        "cosine_similarity", "pairwise_distance", "pdist", "bilinear", "pixel_shuffle",
        "pixel_unshuffle", "channel_shuffle", "dropout1d", "dropout2d", "dropout3d",
        "alpha_dropout", "feature_alpha_dropout",
    ],
}  # fmt: skip


def _params(fn):
    sig = inspect.signature(fn)
    return [(p.name, p.default, p.kind) for p in sig.parameters.values()]


def test_signatures_match_torch():
    for mod, names in FUNCTIONAL.items():
        for n in names:
            try:
                theirs = _params(getattr(TF, n))
            except ValueError:  # a builtin without a signature
                continue
            assert [p[:2] for p in _params(getattr(mod, n))] == [p[:2] for p in theirs], n
    assert [p[:2] for p in _params(_layers.cdist)] == [p[:2] for p in _params(torch.cdist)]
    for name, cls in MODULES.items():
        if not hasattr(tnn, name) or name.startswith("Uninitialized"):
            continue
        ours, theirs = _params(cls.__init__), _params(getattr(tnn, name).__init__)
        assert [p[:2] for p in ours] == [p[:2] for p in theirs], name


# -- second derivatives torch does not have -----------------------------------------------------


@pytest.mark.parametrize(
    "fn,shapes",
    [
        (lambda x, y: _layers.cdist(x, y, 1.5), [(4, 3), (5, 3)]),
        (lambda x, y: _layers.cdist(x, y, 3.0), [(2, 3, 2), (2, 4, 2)]),
        (lambda x: _layers.pdist(x, 2.5), [(5, 3)]),
        (lambda x: _loss.multi_margin_loss(x, ember.tensor([0, 3, 1]), 2, 0.05), [(3, 5)]),
    ],
)
def test_second_derivatives_against_differences(fn, shapes):
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in shapes]
    u = None
    xs = [ember.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*xs)
    u = rng.standard_normal(tuple(out.shape))
    vs = [rng.standard_normal(s) for s in shapes]
    grads = ember.autograd.grad(out, xs, ember.tensor(u), create_graph=True)
    total = sum((g * ember.tensor(v)).sum() for g, v in zip(grads, vs))
    hv = ember.autograd.grad(total, xs)

    def first(*ts):
        with ember.enable_grad():
            ts = [t.detach().requires_grad_() for t in ts]
            gs = ember.autograd.grad(fn(*ts), ts, ember.tensor(u))
        return tuple(gs)

    want = numgrad(first, arrays, vs)
    for got, w in zip(hv, want):
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-5, atol=1e-6)
