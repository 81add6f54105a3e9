"""The convolution family against torch: Conv1d/2d/3d and ConvTranspose1d/2d/3d (every
padding mode and option), 1-d and adaptive pooling, interpolation and the Upsample layers,
Embedding's options and EmbeddingBag. Outputs, the input's and every parameter's gradient
equal torch's (float64, same weights); reprs, state_dict names and error messages too; each
new op passes gradcheck and gradgradcheck on tiny shapes.

The layers are reached through their own modules (``ember.nn.modules.conv``...) and the
functions through ``ember._aten.nn_conv`` / ``nn_interp`` / ``nn_embedding``.
"""

import itertools

import numpy as np
import pytest

import ember
from ember._aten import nn_conv as _conv
from ember._aten import nn_embedding as _bag
from ember._aten import nn_interp as _interp
from ember.nn.modules import conv as econv
from ember.nn.modules import pooling as epool
from ember.nn.modules import sparse as esparse
from ember.nn.modules import upsampling as eup

torch = pytest.importorskip("torch")
tnn = torch.nn
TF = torch.nn.functional

RNG = np.random.default_rng(10)
TOL = 1e-6


def _distinct(shape):
    """Values without ties (max pooling picks a unique maximum)."""
    n = int(np.prod(shape))
    return (RNG.permutation(n) / n + RNG.uniform(0, 1e-3, n)).reshape(shape) - 0.5


def _copy(tm, em):
    state = {k: ember.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    em.load_state_dict(state)


def _check_layer(tm, em, x, extra=None):
    """Same output, input gradient and parameter gradients; same grad_fn, repr, state names."""
    tm.double()
    em.double()
    _copy(tm, em)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert repr(em) == repr(tm)
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True)
    to = tm(tx) if extra is None else tm(tx, **extra)
    eo = em(ex) if extra is None else em(ex, **extra)
    if isinstance(to, tuple):
        np.testing.assert_array_equal(eo[1].numpy(), to[1].numpy())
        to, eo = to[0], eo[0]
    assert tuple(eo.shape) == tuple(to.shape)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=TOL, atol=TOL)
    assert type(eo.grad_fn).__name__ == type(to.grad_fn).__name__
    g = RNG.standard_normal(tuple(to.shape))
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=TOL, atol=TOL)
    tparams = dict(tm.named_parameters())
    for name, p in em.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(), tparams[name].grad.numpy(), rtol=TOL, atol=TOL, err_msg=name
        )


# -- convolution layers -------------------------------------------------------------------

CONV_GRID = [
    # (kernel, stride, padding, dilation, groups, bias, padding_mode)
    (3, 1, 0, 1, 1, True, "zeros"),
    (3, 2, 1, 1, 2, False, "zeros"),
    (2, 1, "same", 2, 1, True, "zeros"),
    (3, 1, "valid", 1, 2, True, "zeros"),
    (3, 1, 1, 1, 1, True, "reflect"),
    (3, 2, 2, 1, 1, True, "replicate"),
    (3, 1, 2, 2, 2, False, "circular"),
    (4, 1, "same", 1, 1, True, "reflect"),
]


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("opts", CONV_GRID)
def test_conv_layers_match_torch(dims, opts):
    k, s, p, d, g, bias, mode = opts
    if dims == 3 and mode == "reflect":
        k = min(k, 3)
    spatial = {1: (9,), 2: (7, 6), 3: (5, 6, 4)}[dims]
    name = f"Conv{dims}d"

    def make(lib):
        return getattr(lib, name)(4, 6, k, s, p, d, g, bias, mode)

    _check_layer(make(tnn), make(econv), RNG.standard_normal((2, 4) + spatial))
    # unbatched input
    _check_layer(make(tnn), make(econv), RNG.standard_normal((4,) + spatial))


TRANSPOSED_GRID = [
    # (kernel, stride, padding, output_padding, groups, bias, dilation)
    (3, 1, 0, 0, 1, True, 1),
    (3, 2, 1, 1, 2, True, 1),
    (4, 3, 2, 2, 1, False, 1),
    (2, 1, 0, 1, 2, True, 2),
    (3, 2, 1, 0, 1, True, 2),
]


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("opts", TRANSPOSED_GRID)
def test_conv_transpose_layers_match_torch(dims, opts):
    k, s, p, op, g, bias, d = opts
    spatial = {1: (5,), 2: (4, 3), 3: (3, 2, 3)}[dims]
    name = f"ConvTranspose{dims}d"

    def make(lib):
        return getattr(lib, name)(4, 6, k, s, p, op, g, bias, d)

    _check_layer(make(tnn), make(econv), RNG.standard_normal((2, 4) + spatial))
    _check_layer(make(tnn), make(econv), RNG.standard_normal((4,) + spatial))


def test_conv_transpose_output_size_matches_torch():
    def make(lib):
        return lib.ConvTranspose2d(3, 2, 3, stride=2, padding=1)

    x = RNG.standard_normal((1, 3, 4, 4))
    for size in [(7, 7), (8, 8), (1, 2, 8, 7)]:
        _check_layer(make(tnn), make(econv), x, extra={"output_size": size})
    with pytest.raises(ValueError) as e:
        make(econv)(ember.tensor(x), output_size=(10, 10))
    with pytest.raises(ValueError) as t:
        make(tnn)(torch.tensor(x), output_size=(10, 10))
    assert str(e.value) == str(t.value)


def test_conv_default_init_and_reprs():
    ember.manual_seed(0)
    m = econv.Conv1d(4, 8, 5, stride=2, padding=2, dilation=1, groups=2)
    assert repr(m) == repr(tnn.Conv1d(4, 8, 5, stride=2, padding=2, dilation=1, groups=2))
    assert m.weight.shape == (8, 2, 5) and m.bias.shape == (8,)
    bound = 1 / np.sqrt(2 * 5)  # kaiming_uniform(a=sqrt(5)) and the bias share this bound
    assert np.abs(m.weight.detach().numpy()).max() <= bound
    assert np.abs(m.bias.detach().numpy()).max() <= bound
    t = econv.ConvTranspose2d(4, 6, 3, groups=2)
    assert t.weight.shape == (4, 3, 3, 3)
    for args in [
        ("ConvTranspose1d", (2, 3, 3), {"output_padding": 1, "stride": 2}),
        ("Conv3d", (2, 3, (1, 2, 3)), {"padding": "same", "padding_mode": "replicate"}),
        ("ConvTranspose3d", (2, 4, 2), {"groups": 2, "bias": False, "dilation": 2}),
    ]:
        name, a, kw = args
        assert repr(getattr(econv, name)(*a, **kw)) == repr(getattr(tnn, name)(*a, **kw))
    assert list(m.state_dict()) == ["weight", "bias"]


def _same_error(fe, ft, kind=Exception):
    with pytest.raises(kind) as te:
        ft()
    with pytest.raises(type(te.value)) as ee:
        fe()
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda F, T: F.conv1d(T.ones(2, 3, 4, 4), T.ones(4, 3, 3)),
        lambda F, T: F.conv1d(T.ones(2, 3, 8), T.ones(4, 2, 3)),
        lambda F, T: F.conv1d(T.ones(2, 3, 8), T.ones(4, 3, 9)),
        lambda F, T: F.conv1d(T.ones(2, 3, 8), T.ones(4, 3, 3, 3)),
        lambda F, T: F.conv3d(T.ones(2, 3, 8), T.ones(4, 3, 3, 3, 3)),
        lambda F, T: F.conv1d(T.ones(2, 3, 8), T.ones(4, 3, 3), padding="same", stride=2),
        lambda F, T: F.conv_transpose1d(T.ones(2, 3, 8), T.ones(3, 4, 3), output_padding=1),
        lambda F, T: F.conv_transpose2d(
            T.ones(1, 3, 4, 4), T.ones(3, 4, 3, 3), output_padding=2, stride=2
        ),  # noqa: E501
        lambda F, T: F.conv_transpose3d(
            T.ones(1, 3, 2, 2, 2), T.ones(3, 4, 1, 1, 1), output_padding=1
        ),  # noqa: E501
        lambda F, T: F.conv_transpose1d(T.ones(2, 3, 8), T.ones(4, 4, 3)),
        lambda F, T: F.conv_transpose1d(T.ones(2, 3, 8), T.ones(3, 4, 3), bias=T.ones(3)),
        lambda F, T: F.conv_transpose1d(T.ones(2, 4, 8), T.ones(4, 2, 3), groups=3),
        lambda F, T: F.conv_transpose1d(T.ones(2, 3, 8), T.ones(3, 4, 3), padding="same"),
        lambda F, T: F.max_pool1d(T.ones(2, 3, 4, 4), 2),
        lambda F, T: F.max_pool1d(T.ones(2, 3, 8), 2, padding=2),
        lambda F, T: F.max_pool1d(T.ones(2, 3, 8), 9),
        lambda F, T: F.avg_pool1d(T.ones(2, 3, 4, 4), 2),
        lambda F, T: F.avg_pool1d(T.ones(2, 3, 8), 9),
        lambda F, T: F.adaptive_avg_pool1d(T.ones(2, 3, 4, 4), 2),
        lambda F, T: F.adaptive_avg_pool1d(T.ones(2, 3, 8), (2, 3)),
        lambda F, T: F.adaptive_avg_pool2d(T.ones(2, 4), 2),
        lambda F, T: F.adaptive_max_pool2d(T.ones(2, 4), 2),
        lambda F, T: F.adaptive_avg_pool2d(T.ones(2, 3, 4, 4), (2, 2, 2)),
        lambda F, T: F.interpolate(T.ones(2, 3, 8), mode="bilinear", scale_factor=2),
        lambda F, T: F.interpolate(T.ones(2, 3, 8), mode="foo", scale_factor=2),
        lambda F, T: F.interpolate(T.ones(2, 3, 8), size=4, scale_factor=2),
        lambda F, T: F.interpolate(T.ones(2, 3, 8)),
        lambda F, T: F.interpolate(T.ones(2, 3, 8), size=4, align_corners=True),
        lambda F, T: F.interpolate(T.ones(2, 3, 8), size=(4, 4)),
        lambda F, T: F.interpolate(T.ones(2, 3, 8), scale_factor=(2, 2)),
        lambda F, T: F.interpolate(T.ones(2, 3, 8), size=4, recompute_scale_factor=True),
        lambda F, T: F.interpolate(T.ones(2, 3, 8), size=4, mode="linear", antialias=True),
        lambda F, T: F.interpolate(T.ones(1, 2, 3, 3), size=0),
    ],
)
def test_errors_match_torch(call):
    class E:
        conv1d, conv3d = _conv.conv1d, _conv.conv3d
        conv_transpose1d, conv_transpose2d = _conv.conv_transpose1d, _conv.conv_transpose2d
        conv_transpose3d = _conv.conv_transpose3d
        max_pool1d, avg_pool1d = _conv.max_pool1d, _conv.avg_pool1d
        adaptive_avg_pool1d, adaptive_avg_pool2d = (
            _conv.adaptive_avg_pool1d,
            _conv.adaptive_avg_pool2d,
        )
        adaptive_max_pool2d = _conv.adaptive_max_pool2d
        interpolate = staticmethod(_interp.interpolate)

    _same_error(lambda: call(E, ember), lambda: call(TF, torch))


@pytest.mark.parametrize(
    "make",
    [
        lambda nn: nn.Conv1d(3, 4, 3, padding="foo"),
        lambda nn: nn.Conv1d(3, 4, 3, padding="same", stride=2),
        lambda nn: nn.Conv1d(3, 4, 3, groups=2),
        lambda nn: nn.Conv1d(4, 3, 3, groups=2),
        lambda nn: nn.Conv1d(3, 3, 3, groups=0),
        lambda nn: nn.ConvTranspose1d(3, 4, 3, padding_mode="reflect"),
    ],
)
def test_layer_construction_errors_match_torch(make):
    with pytest.raises(ValueError) as t:
        make(tnn)
    with pytest.raises(ValueError) as e:
        make(econv)
    assert str(e.value) == str(t.value)


# -- pooling --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [
        {"kernel_size": 2},
        {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
        {"kernel_size": 2, "stride": 1, "padding": 1, "dilation": 2, "return_indices": True},
        {"kernel_size": 3, "stride": 3, "ceil_mode": True, "return_indices": True},
    ],
)
@pytest.mark.parametrize("batched", [True, False])
def test_max_pool1d_matches_torch(kw, batched):
    shape = (2, 3, 10) if batched else (3, 10)
    _check_layer(tnn.MaxPool1d(**kw), epool.MaxPool1d(**kw), _distinct(shape))


@pytest.mark.parametrize(
    "kw",
    [
        {"kernel_size": 2},
        {"kernel_size": 3, "stride": 2, "padding": 1},
        {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
        {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
        {
            "kernel_size": 4,
            "stride": 3,
            "padding": 2,
            "ceil_mode": True,
            "count_include_pad": False,
        },
    ],
)
@pytest.mark.parametrize("batched", [True, False])
def test_avg_pool1d_matches_torch(kw, batched):
    shape = (2, 3, 11) if batched else (3, 11)
    _check_layer(tnn.AvgPool1d(**kw), epool.AvgPool1d(**kw), RNG.standard_normal(shape))


@pytest.mark.parametrize("out", [1, 3, 4, 7, 9])
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_pool1d_matches_torch(out, batched):
    shape = (2, 3, 7) if batched else (3, 7)
    _check_layer(tnn.AdaptiveAvgPool1d(out), epool.AdaptiveAvgPool1d(out), _distinct(shape))
    for ri in (False, True):
        t, e = tnn.AdaptiveMaxPool1d(out, ri), epool.AdaptiveMaxPool1d(out, ri)
        _check_layer(t, e, _distinct(shape))


@pytest.mark.parametrize("out", [1, 2, (3, 4), (5, None), (None, 2), (9, 11)])
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_pool2d_matches_torch(out, batched):
    shape = (2, 3, 7, 6) if batched else (3, 7, 6)
    _check_layer(tnn.AdaptiveAvgPool2d(out), epool.AdaptiveAvgPool2d(out), _distinct(shape))
    for ri in (False, True):
        t, e = tnn.AdaptiveMaxPool2d(out, ri), epool.AdaptiveMaxPool2d(out, ri)
        _check_layer(t, e, _distinct(shape))


# -- interpolation -----------------------------------------------------------------------------

_MODE_DIMS = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "area": (1, 2)}
_MODE_DIMS.update({"linear": (1,), "bilinear": (2,), "bicubic": (2,), "trilinear": (3,)})


def _interp_cases():
    for mode, dims in _MODE_DIMS.items():
        corners = (None,) if mode in ("nearest", "nearest-exact", "area") else (False, True)
        for dim, ac in itertools.product(dims, corners):
            for size in (1, 3, 7):
                yield mode, dim, ac, {"size": size}
            for sf in (0.5, 1.7, 2.0, 3.0):
                for rc in (None, True):
                    yield mode, dim, ac, {"scale_factor": sf, "recompute_scale_factor": rc}


@pytest.mark.parametrize("case", list(_interp_cases()), ids=str)
def test_interpolate_matches_torch(case):
    mode, dim, ac, kw = case
    shape = (2, 2) + (4, 5, 3)[:dim]
    for dtype, tol in ((np.float64, 1e-10), (np.float32, 1e-5)):
        x = RNG.standard_normal(shape).astype(dtype)
        tx = torch.tensor(x, requires_grad=True)
        ex = ember.tensor(x, requires_grad=True)
        to = TF.interpolate(tx, mode=mode, align_corners=ac, **kw)
        eo = _interp.interpolate(ex, mode=mode, align_corners=ac, **kw)
        assert eo.dtype == ex.dtype
        np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=tol, atol=tol)
        assert type(eo.grad_fn).__name__ == type(to.grad_fn).__name__
        g = RNG.standard_normal(tuple(to.shape)).astype(dtype)
        to.backward(torch.tensor(g))
        eo.backward(ember.tensor(g))
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol * 10)


@pytest.mark.parametrize(
    "make",
    [
        lambda nn: nn.Upsample(scale_factor=2),
        lambda nn: nn.Upsample(size=(5, 3), mode="bilinear"),
        lambda nn: nn.Upsample(scale_factor=(1.5, 2), mode="bicubic", align_corners=True),
        lambda nn: nn.Upsample(scale_factor=1.7, mode="nearest-exact", recompute_scale_factor=True),
        lambda nn: nn.UpsamplingNearest2d(scale_factor=3),
        lambda nn: nn.UpsamplingNearest2d(size=(2, 7)),
        lambda nn: nn.UpsamplingBilinear2d(scale_factor=2),
        lambda nn: nn.UpsamplingBilinear2d(size=5),
    ],
)
def test_upsample_layers_match_torch(make):
    _check_layer(make(tnn), make(eup), RNG.standard_normal((2, 3, 4, 5)))


def test_upsample_1d_3d_layers_match_torch():
    for mode, shape in (("linear", (2, 3, 6)), ("trilinear", (1, 2, 3, 4, 2))):
        t = tnn.Upsample(scale_factor=2, mode=mode, align_corners=False)
        e = eup.Upsample(scale_factor=2, mode=mode, align_corners=False)
        _check_layer(t, e, RNG.standard_normal(shape))


# -- embedding ----------------------------------------------------------------------------------

IDX = np.array([[0, 2, 5, 2], [5, 1, 1, 3]])


def _embedding_pair(**kw):
    t = tnn.Embedding(7, 3, **kw).double()
    e = esparse.Embedding(7, 3, **kw).double()
    _copy(t, e)
    assert repr(e) == repr(t)
    return t, e


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"padding_idx": 2},
        {"padding_idx": -2},
        {"scale_grad_by_freq": True},
        {"padding_idx": 1, "scale_grad_by_freq": True},
        {"max_norm": 1.0},
        {"max_norm": 0.5, "norm_type": 1.0, "padding_idx": 5},
    ],
)
def test_embedding_options_match_torch(kw):
    t, e = _embedding_pair(**kw)
    with torch.no_grad():
        t.weight.mul_(2)  # norms above max_norm
    _copy(t, e)
    to, eo = t(torch.tensor(IDX)), e(ember.tensor(IDX))
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=TOL, atol=TOL)
    # max_norm renormalises the used rows in place, as torch
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy(), atol=TOL)
    g = RNG.standard_normal(tuple(to.shape))
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    np.testing.assert_allclose(e.weight.grad.numpy(), t.weight.grad.numpy(), atol=TOL)
    if e.padding_idx is not None:
        assert not e.weight.grad.numpy()[e.padding_idx].any()


def test_embedding_from_pretrained_and_sparse():
    w = RNG.standard_normal((5, 2))
    for kw in ({}, {"freeze": False, "padding_idx": 1}, {"max_norm": 1.0}):
        t = tnn.Embedding.from_pretrained(torch.tensor(w), **kw)
        e = esparse.Embedding.from_pretrained(ember.tensor(w), **kw)
        assert repr(e) == repr(t)
        assert e.weight.requires_grad == t.weight.requires_grad
        np.testing.assert_allclose(
            e(ember.tensor([1, 4])).detach().numpy(), t(torch.tensor([1, 4])).detach().numpy()
        )
    e = esparse.Embedding(4, 2, sparse=True)
    assert repr(e) == repr(tnn.Embedding(4, 2, sparse=True))
    with pytest.raises(RuntimeError, match="sparse"):
        e(ember.tensor([1]))


def _bag_inputs(two_d):
    if two_d:
        return np.array([[0, 2, 5], [5, 1, 1], [3, 3, 6]]), None
    return np.array([0, 2, 5, 5, 1, 1, 3, 6, 2]), np.array([0, 3, 3, 7])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 1])
@pytest.mark.parametrize("two_d,last", [(False, False), (False, True), (True, False)])
def test_embedding_bag_matches_torch(mode, padding_idx, two_d, last):
    kw = {"mode": mode, "padding_idx": padding_idx, "include_last_offset": last}
    t = tnn.EmbeddingBag(7, 3, **kw).double()
    e = esparse.EmbeddingBag(7, 3, **kw).double()
    with torch.no_grad():
        t.weight.copy_(torch.tensor(_distinct((7, 3))))
    _copy(t, e)
    assert repr(e) == repr(t)
    assert list(e.state_dict()) == list(t.state_dict())
    idx, off = _bag_inputs(two_d)
    if last:
        off = np.append(off, len(idx))
    to = t(torch.tensor(idx), None if off is None else torch.tensor(off))
    eo = e(ember.tensor(idx), None if off is None else ember.tensor(off))
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=TOL, atol=TOL)
    assert type(eo.grad_fn).__name__ == type(to.grad_fn).__name__
    g = RNG.standard_normal(tuple(to.shape))
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    np.testing.assert_allclose(e.weight.grad.numpy(), t.weight.grad.numpy(), atol=TOL)


@pytest.mark.parametrize("with_weights", [False, True])
def test_embedding_bag_max_norm_and_weights_match_torch(with_weights):
    w = RNG.standard_normal((7, 3)) * 2
    idx, off = _bag_inputs(False)
    p = RNG.standard_normal(idx.shape)
    tw, ew = torch.tensor(w, requires_grad=True), ember.tensor(w, requires_grad=True)
    tp, ep = torch.tensor(p, requires_grad=True), ember.tensor(p, requires_grad=True)
    kw = {"mode": "sum", "max_norm": 1.5}
    tkw = dict(kw, per_sample_weights=tp if with_weights else None)
    ekw = dict(kw, per_sample_weights=ep if with_weights else None)
    to = TF.embedding_bag(torch.tensor(idx), tw, torch.tensor(off), **tkw)
    eo = _bag.embedding_bag(ember.tensor(idx), ew, ember.tensor(off), **ekw)
    np.testing.assert_allclose(ew.detach().numpy(), tw.detach().numpy(), atol=TOL)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), atol=TOL)
    g = RNG.standard_normal(tuple(to.shape))
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy(), atol=TOL)
    if with_weights:
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), atol=TOL)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq(mode):
    """The weight's gradient is scaled by 1 / frequency, as ``F.embedding`` does (torch's
    embedding_bag kernel miscounts frequencies when indices repeat across bags, so the
    reference is torch's embedding summed or averaged per bag)."""
    w = RNG.standard_normal((7, 3))
    idx, off = _bag_inputs(False)
    ew = ember.tensor(w, requires_grad=True)
    eo = _bag.embedding_bag(
        ember.tensor(idx), ew, ember.tensor(off), mode=mode, scale_grad_by_freq=True
    )
    tw = torch.tensor(w, requires_grad=True)
    rows = TF.embedding(torch.tensor(idx), tw, scale_grad_by_freq=True)
    bounds = list(off) + [len(idx)]
    parts = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        seg = rows[a:b]
        if b == a:
            parts.append(torch.zeros(3, dtype=torch.float64))
        else:
            parts.append(seg.sum(0) if mode == "sum" else seg.mean(0))
    to = torch.stack(parts)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), atol=TOL)
    g = RNG.standard_normal(tuple(to.shape))
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy(), atol=TOL)


def test_embedding_bag_from_pretrained_and_errors():
    w = RNG.standard_normal((5, 2))
    t = tnn.EmbeddingBag.from_pretrained(torch.tensor(w), mode="max", padding_idx=-1)
    e = esparse.EmbeddingBag.from_pretrained(ember.tensor(w), mode="max", padding_idx=-1)
    assert repr(e) == repr(t)
    assert e.weight.requires_grad is t.weight.requires_grad is False
    idx = np.array([[0, 4, 2], [4, 4, 4]])
    np.testing.assert_allclose(e(ember.tensor(idx)).numpy(), t(torch.tensor(idx)).numpy())
    ew, tw = ember.tensor(w), torch.tensor(w)
    i1 = np.array([0, 1, 2, 2, 4])
    calls = [
        lambda F, T, W: F(T.tensor(i1), W, T.tensor([0, 2]), per_sample_weights=T.ones(5).double()),  # noqa: E501
        lambda F, T, W: F(T.tensor(i1), W),
        lambda F, T, W: F(T.tensor(i1), W, T.tensor([1, 2])),
        lambda F, T, W: F(T.tensor(i1), W, T.tensor([0, 2]), mode="foo"),
        lambda F, T, W: F(T.tensor(i1), W, T.tensor([[0, 2]])),
        lambda F, T, W: F(T.tensor([0, 1, 9]), W, T.tensor([0, 2])),
        lambda F, T, W: F(T.tensor([0, 1, 2, 2, 7]), W.float(), T.tensor([0, 2])),
        lambda F, T, W: F(T.tensor(i1), W, T.tensor([0]), mode="max", scale_grad_by_freq=True),
        lambda F, T, W: F(T.tensor([0.0]), W, T.tensor([0])),
        lambda F, T, W: F(T.tensor(i1), W, T.tensor([0]), per_sample_weights=T.ones(4).double()),
        lambda F, T, W: F(T.tensor(i1), W, T.tensor([0]), padding_idx=9),
        lambda F, T, W: F(T.tensor(i1), W, T.tensor([0, 9])),
    ]
    for call in calls:
        _same_error(
            lambda c=call: c(_bag.embedding_bag, ember, ew),
            lambda c=call: c(TF.embedding_bag, torch, tw),
        )
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        _bag.embedding_bag(ember.tensor([[0, 1]]), ew, ember.tensor([0]))
    with pytest.raises(RuntimeError, match="sparse"):
        _bag.embedding_bag(ember.tensor(i1), ew, ember.tensor([0]), sparse=True)


# -- gradcheck of every new op on tiny shapes ----------------------------------------------------


def _t(*shape):
    return ember.tensor(RNG.standard_normal(shape), requires_grad=True)


GRADCHECKS = [
    (
        "conv1d",
        lambda x, w, b: _conv.conv1d(x, w, b, stride=2, padding=1),
        ((1, 2, 5), (2, 2, 2), (2,)),
    ),  # noqa: E501
    ("conv3d", lambda x, w: _conv.conv3d(x, w, padding=1), ((1, 1, 2, 2, 2), (1, 1, 2, 2, 2))),
    (
        "conv_transpose1d",
        lambda x, w, b: _conv.conv_transpose1d(x, w, b, 2, 1, 1),
        ((1, 2, 3), (2, 1, 3), (1,)),
    ),  # noqa: E501
    (
        "conv_transpose2d",
        lambda x, w: _conv.conv_transpose2d(x, w, stride=2, groups=2),
        ((1, 2, 2, 2), (2, 1, 2, 2)),
    ),  # noqa: E501
    ("max_pool1d", lambda x: _conv.max_pool1d(x, 2, 1, 1), ((1, 2, 4),)),
    ("avg_pool1d", lambda x: _conv.avg_pool1d(x, 2, 1, 1, count_include_pad=False), ((1, 2, 4),)),
    ("adaptive_avg_pool2d", lambda x: _conv.adaptive_avg_pool2d(x, (2, 3)), ((1, 1, 3, 4),)),
    ("adaptive_max_pool2d", lambda x: _conv.adaptive_max_pool2d(x, (2, 3)), ((1, 1, 3, 4),)),
    ("bilinear", lambda x: _interp.interpolate(x, size=(3, 2), mode="bilinear"), ((1, 1, 2, 3),)),
    ("bicubic", lambda x: _interp.interpolate(x, size=(3, 4), mode="bicubic"), ((1, 1, 2, 3),)),
    ("nearest", lambda x: _interp.interpolate(x, scale_factor=1.5), ((1, 1, 2, 3),)),
    (
        "embedding_bag",
        lambda w, p: _bag.embedding_bag(
            ember.tensor([0, 2, 2, 1]), w, ember.tensor([0, 1]), mode="sum", per_sample_weights=p
        ),
        ((3, 2), (4,)),
    ),  # noqa: E501
    (
        "embedding_bag_max",
        lambda w: _bag.embedding_bag(ember.tensor([[0, 2], [1, 2]]), w, mode="max"),
        ((3, 2),),
    ),  # noqa: E501
]


@pytest.mark.parametrize("name,fn,shapes", GRADCHECKS, ids=[g[0] for g in GRADCHECKS])
def test_gradcheck(name, fn, shapes):
    if name.startswith("adaptive_max") or name.startswith("max") or name.endswith("max"):
        inputs = [ember.tensor(_distinct(s), requires_grad=True) for s in shapes]
    else:
        inputs = [_t(*s) for s in shapes]
    assert ember.autograd.gradcheck(fn, inputs)
    if name != "embedding_bag":  # torch has no double backward through per-sample weights
        assert ember.autograd.gradgradcheck(fn, inputs)


@pytest.mark.parametrize("kernel", [1, 2, (2, 3), 3])
def test_tiling_max_pool_ties_zeros_and_nans_match_torch(kernel):
    """Windows that tile the input take a whole-array path: the first of equal maxima wins
    (torch's strictly-larger rule, indices included), a NaN propagates (the last one)."""
    rng = np.random.default_rng(5)
    a = rng.integers(-2, 3, (2, 3, 6, 6)).astype(np.float64)  # many ties
    a[0, 0, :2, :2] = [[-0.0, 0.0], [0.0, -0.0]]
    a[1, 2, 0, 0] = a[1, 2, 1, 1] = np.nan
    for values in (a, np.nan_to_num(a)):
        got = ember.tensor(values, requires_grad=True)
        want = torch.tensor(values, requires_grad=True)
        go, gi = ember.nn.functional.max_pool2d(got, kernel, return_indices=True)
        wo, wi = torch.nn.functional.max_pool2d(want, kernel, return_indices=True)
        np.testing.assert_array_equal(go.detach().numpy(), wo.detach().numpy())
        np.testing.assert_array_equal(gi.numpy(), wi.numpy())
        w = rng.standard_normal(tuple(wo.shape))
        (go * ember.tensor(w)).sum().backward()
        (wo * torch.tensor(w)).sum().backward()
        np.testing.assert_array_equal(got.grad.numpy(), want.grad.numpy())


def test_tiling_max_pool_gradient_with_inf_and_nan_goes_only_to_the_maxima():
    values = np.arange(16.0).reshape(1, 1, 4, 4)
    grad = np.array([[[[np.inf, 1.0], [np.nan, 2.0]]]])
    got = ember.tensor(values, requires_grad=True)
    want = torch.tensor(values, requires_grad=True)
    ember.nn.functional.max_pool2d(got, 2).backward(ember.tensor(grad))
    torch.nn.functional.max_pool2d(want, 2).backward(torch.tensor(grad))
    np.testing.assert_array_equal(got.grad.numpy(), want.grad.numpy())
