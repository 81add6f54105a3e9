"""Layers against torch.nn with torch's parameters copied in: outputs, input and parameter
gradients, running statistics, default initialisation, and a few training steps."""

import math

import numpy as np
import pytest

import ember
import ember.nn as enn

torch = pytest.importorskip("torch")
tnn = torch.nn

RNG = np.random.default_rng(2024)


def _copy_params(tm, em):
    """Load torch's state (parameters and buffers) into the ember module."""
    state = {k: ember.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    em.load_state_dict(state)


def _pair(make, dtype):
    tm, em = make(tnn), make(enn)
    if dtype == np.float64:
        tm.double()
        em.double()
    _copy_params(tm, em)
    return tm, em


def _check_module(make, xshape, dtype=np.float64, tol=None, x=None, steps=1, train=True):
    """Same output and gradients (input and every parameter) for ``steps`` calls."""
    tol = tol or (1e-10 if dtype == np.float64 else 1e-5)
    tm, em = _pair(make, dtype)
    tm.train(train)
    em.train(train)
    for _ in range(steps):
        xa = (RNG.standard_normal(xshape) * 2 + 0.5 if x is None else x).astype(dtype)
        tx = torch.tensor(xa, requires_grad=True)
        ex = ember.tensor(xa, requires_grad=True)
        to, eo = tm(tx), em(ex)
        np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=tol, atol=tol)
        assert type(eo.grad_fn).__name__ == type(to.grad_fn).__name__
        g = RNG.standard_normal(tuple(to.shape)).astype(dtype)
        to.backward(torch.tensor(g))
        eo.backward(ember.tensor(g))
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=tol * 10, atol=tol * 10)
    tparams = dict(tm.named_parameters())
    for name, ep in em.named_parameters():
        tp = tparams[name]
        np.testing.assert_allclose(
            ep.grad.numpy(), tp.grad.numpy(), rtol=tol * 10, atol=tol * 10, err_msg=name
        )
    for (tn, tb), (en, eb) in zip(tm.named_buffers(), em.named_buffers()):
        assert tn == en
        np.testing.assert_allclose(eb.numpy(), tb.numpy(), rtol=tol, atol=tol, err_msg=en)
    assert repr(em) == repr(tm)
    return tm, em


DTYPES = [np.float64, np.float32]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("xshape", [(5, 4), (2, 3, 4), (4,)])
def test_linear(dtype, bias, xshape):
    _check_module(lambda nn: nn.Linear(4, 3, bias=bias), xshape, dtype)


CONV_CONFIGS = [
    dict(in_channels=3, out_channels=4, kernel_size=3),
    dict(in_channels=3, out_channels=4, kernel_size=3, stride=2, padding=1),
    dict(
        in_channels=4,
        out_channels=6,
        kernel_size=(3, 2),
        stride=(1, 2),
        padding=(2, 1),
        dilation=(2, 1),
        groups=2,
    ),
    dict(in_channels=4, out_channels=4, kernel_size=3, padding="same", groups=4, bias=False),
    dict(in_channels=3, out_channels=2, kernel_size=2, padding="valid", stride=3),
    dict(in_channels=3, out_channels=2, kernel_size=3, padding=1, padding_mode="reflect"),
    dict(in_channels=3, out_channels=2, kernel_size=3, padding=1, padding_mode="circular"),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cfg", CONV_CONFIGS)
def test_conv2d(dtype, cfg):
    _check_module(
        lambda nn: nn.Conv2d(**cfg),
        (2, cfg["in_channels"], 9, 8),
        dtype,
        tol=None if dtype == np.float64 else 2e-5,
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "make",
    [
        lambda nn: nn.MaxPool2d(2),
        lambda nn: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
        lambda nn: nn.MaxPool2d((2, 3), stride=1, padding=(1, 1), dilation=(2, 1)),
        lambda nn: nn.AvgPool2d(2),
        lambda nn: nn.AvgPool2d(3, stride=2, padding=1),
        lambda nn: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        lambda nn: nn.Flatten(),
        lambda nn: nn.Flatten(0, 2),
    ],
)
def test_pooling_and_flatten(dtype, make):
    _check_module(make, (2, 3, 9, 8), dtype)


def test_max_pool2d_module_return_indices():
    x = RNG.standard_normal((1, 2, 6, 6))
    tv, ti = tnn.MaxPool2d(2, return_indices=True)(torch.tensor(x))
    ev, ei = enn.MaxPool2d(2, return_indices=True)(ember.tensor(x))
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"momentum": 0.3, "eps": 1e-3},
        {"momentum": None},
        {"affine": False},
        {"bias": False},
        {"track_running_stats": False},
    ],
    ids=["default", "momentum", "cumulative", "no_affine", "no_bias", "no_stats"],
)
@pytest.mark.parametrize(
    "cls,xshape",
    [("BatchNorm1d", (8, 3)), ("BatchNorm1d", (4, 3, 5)), ("BatchNorm2d", (4, 3, 5, 2))],
)
def test_batchnorm_train_then_eval(dtype, kw, cls, xshape):
    tol = 1e-10 if dtype == np.float64 else 1e-5
    make = lambda nn: getattr(nn, cls)(3, **kw)  # noqa: E731
    tm, em = _check_module(make, xshape, dtype, steps=4, tol=tol)
    if tm.track_running_stats:
        assert em.num_batches_tracked.item() == tm.num_batches_tracked.item() == 4
        assert em.num_batches_tracked.dtype == ember.int64
    tm.eval()
    em.eval()
    xa = RNG.standard_normal(xshape).astype(dtype)
    tx, ex = torch.tensor(xa, requires_grad=True), ember.tensor(xa, requires_grad=True)
    to, eo = tm(tx), em(ex)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=tol, atol=tol)
    to.sum().backward()
    eo.sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)


def test_batchnorm_input_dim_errors_match_torch():
    for cls, shape in [
        ("BatchNorm1d", (2, 3, 4, 5)),
        ("BatchNorm2d", (2, 3)),
        ("BatchNorm1d", (1, 3)),
    ]:
        with pytest.raises(ValueError) as te:
            getattr(tnn, cls)(3)(torch.randn(*shape))
        with pytest.raises(ValueError) as ee:
            getattr(enn, cls)(3)(ember.randn(*shape))
        assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "make,xshape",
    [
        (lambda nn: nn.LayerNorm(6), (4, 6)),
        (lambda nn: nn.LayerNorm([5, 6]), (2, 3, 5, 6)),
        (lambda nn: nn.LayerNorm((3, 5, 6), eps=1e-3), (2, 3, 5, 6)),
        (lambda nn: nn.LayerNorm(6, elementwise_affine=False), (2, 3, 6)),
        (lambda nn: nn.LayerNorm(6, bias=False), (2, 3, 6)),
    ],
)
def test_layernorm(dtype, make, xshape):
    tm, em = _pair(make, dtype)
    if em.weight is not None:  # non-trivial affine parameters
        w = RNG.standard_normal(tuple(em.weight.shape))
        em.weight.data = ember.tensor(w.astype(dtype))
        tm.weight.data = torch.tensor(w.astype(dtype))
    _check_module(
        lambda nn: tm if nn is tnn else em, xshape, dtype, tol=None if dtype == np.float64 else 3e-5
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [{}, {"padding_idx": 1}, {"scale_grad_by_freq": True}])
def test_embedding_repeated_indices(dtype, kw):
    tm, em = _pair(lambda nn: nn.Embedding(6, 3, **kw), dtype)
    idx = np.array([[1, 2, 1, 5], [1, 1, 0, 2]])
    to, eo = tm(torch.tensor(idx)), em(ember.tensor(idx))
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy())
    assert type(eo.grad_fn).__name__ == "EmbeddingBackward0"
    g = RNG.standard_normal(tuple(to.shape)).astype(dtype)
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    np.testing.assert_allclose(em.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-6, atol=1e-6)
    assert repr(em) == repr(tm)


def test_embedding_init_padding_and_from_pretrained():
    emb = enn.Embedding(5, 4, padding_idx=-1)
    assert emb.padding_idx == 4
    np.testing.assert_array_equal(emb.weight.detach().numpy()[4], 0.0)
    w = ember.tensor(RNG.standard_normal((3, 2)))
    pre = enn.Embedding.from_pretrained(w)
    assert not pre.weight.requires_grad
    np.testing.assert_array_equal(pre(ember.tensor([2])).numpy(), w.numpy()[[2]])
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        enn.Embedding(3, 2, padding_idx=3)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "make",
    [
        lambda nn: nn.ReLU(),
        lambda nn: nn.LeakyReLU(0.2),
        lambda nn: nn.GELU(),
        lambda nn: nn.GELU(approximate="tanh"),
        lambda nn: nn.Tanh(),
        lambda nn: nn.Sigmoid(),
        lambda nn: nn.Softmax(dim=1),
        lambda nn: nn.LogSoftmax(dim=-1),
        lambda nn: nn.Identity(),
    ],
)
def test_activation_modules(dtype, make):
    if isinstance(make(enn), enn.Identity):
        tm, em = make(tnn), make(enn)
        x = ember.ones(2)
        assert em(x) is x and repr(em) == repr(tm)
        return
    _check_module(make, (3, 4, 5), dtype, tol=None if dtype == np.float64 else 2e-6)


def test_dropout_module_train_and_eval():
    drop = enn.Dropout(0.25)
    assert repr(drop) == repr(tnn.Dropout(0.25))
    x = ember.ones(100, 100)
    y = drop(x)
    assert abs((y.numpy() == 0).mean() - 0.25) < 0.02
    drop.eval()
    assert drop(x) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        enn.Dropout(1.5)


# -- default initialisation --------------------------------------------------------------------


@pytest.mark.parametrize(
    "make,fan_in",
    [(lambda nn: nn.Linear(50, 40), 50), (lambda nn: nn.Conv2d(6, 30, (3, 4), groups=2), 36)],
)
def test_default_init_bounds_and_spread(make, fan_in):
    ember.manual_seed(0)
    m = make(enn)
    bound = 1 / math.sqrt(fan_in)
    for p in (m.weight, m.bias):
        a = p.detach().numpy()
        assert p.requires_grad and isinstance(p, enn.Parameter)
        assert np.abs(a).max() <= bound
        assert np.abs(a).max() > 0.8 * bound  # not degenerate
    w = m.weight.detach().numpy()
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound
    t = make(tnn)
    assert tuple(m.weight.shape) == tuple(t.weight.shape)
    ember.manual_seed(0)
    np.testing.assert_array_equal(make(enn).weight.detach().numpy(), w)  # global generator


def test_norm_layers_default_state():
    bn = enn.BatchNorm2d(4)
    np.testing.assert_array_equal(bn.weight.detach().numpy(), 1.0)
    np.testing.assert_array_equal(bn.bias.detach().numpy(), 0.0)
    np.testing.assert_array_equal(bn.running_var.numpy(), 1.0)
    assert bn.num_batches_tracked.item() == 0
    ln = enn.LayerNorm((2, 3))
    assert ln.weight.shape == (2, 3)


# -- a few optimisation steps of a small conv net agree with torch ----------------------------


def _small_net(nn):
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, stride=1, padding=1, groups=2),
        nn.GELU(),
        nn.AvgPool2d(2),
        nn.Flatten(),
        nn.Linear(6 * 2 * 2, 8),
        nn.LayerNorm(8),
        nn.LeakyReLU(0.1),
        nn.Linear(8, 3),
    )


def test_training_steps_match_torch():
    tm, em = _pair(_small_net, np.float64)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    eopt = ember.optim.SGD(em.parameters(), lr=0.1, momentum=0.9)
    tloss, eloss = (
        tnn.CrossEntropyLoss(label_smoothing=0.05),
        enn.CrossEntropyLoss(label_smoothing=0.05),
    )
    for step in range(5):
        x = RNG.standard_normal((6, 1, 8, 8))
        y = RNG.integers(0, 3, 6)
        for opt, model, lossf, lib in ((topt, tm, tloss, torch), (eopt, em, eloss, ember)):
            opt.zero_grad()
            loss = lossf(model(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
            if lib is torch:
                tl = loss.item()
            else:
                assert loss.item() == pytest.approx(tl, rel=1e-9), step
    for (name, tp), (_, ep) in zip(tm.state_dict().items(), em.state_dict().items()):
        np.testing.assert_allclose(ep.numpy(), tp.numpy(), rtol=1e-8, atol=1e-10, err_msg=name)
