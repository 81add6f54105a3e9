"""ember.nn.functional against torch.nn.functional: values, gradients, grad_fn names,
float64 finite-difference checks, double backward and error messages."""

import numpy as np
import pytest

import ember
import ember.nn.functional as EF

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(1234)


# -- helpers ----------------------------------------------------------------------------------


def _tensors(lib, arrays, dtype, requires_grad=True):
    out = []
    for a in arrays:
        a = np.asarray(a)
        if a.dtype.kind == "f":
            a = a.astype(dtype)
            t = lib.tensor(a, requires_grad=requires_grad)
        else:
            t = lib.tensor(a)
        out.append(t)
    return out


def _compare(tfn, efn, arrays, dtype=np.float64, rtol=None, atol=None, check_name=True):
    """Run both libraries on the same data; compare output, grad_fn name and input grads."""
    rtol = rtol if rtol is not None else (1e-10 if dtype == np.float64 else 1e-5)
    atol = atol if atol is not None else (1e-10 if dtype == np.float64 else 1e-5)
    tt = _tensors(torch, arrays, dtype)
    et = _tensors(ember, arrays, dtype)
    to, eo = tfn(*tt), efn(*et)
    if isinstance(to, tuple):
        to, eo = to[0], eo[0]
    assert tuple(eo.shape) == tuple(to.shape)
    assert eo.dtype.name == str(to.dtype).split(".")[-1]
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=rtol, atol=atol)
    if check_name:
        assert type(eo.grad_fn).__name__ == type(to.grad_fn).__name__
    g = RNG.standard_normal(tuple(to.shape)).astype(dtype)
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    for t, e in zip(tt, et):
        if t.grad is None:
            assert e.grad is None
            continue
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=rtol * 10, atol=atol * 10)
    return eo


def _numgrad_check(fn, arrays, eps=1e-6, rtol=1e-6, atol=1e-7):
    """float64 central differences of ``sum(fn(*xs) * w)`` against ember's backward."""
    xs = [
        np.array(a, dtype=np.float64) if np.asarray(a).dtype.kind == "f" else np.asarray(a)
        for a in arrays
    ]
    ts = [ember.tensor(x, requires_grad=x.dtype.kind == "f") for x in xs]
    out = fn(*ts)
    w = np.random.default_rng(0).uniform(0.5, 1.5, size=tuple(out.shape))
    (out * ember.tensor(w)).sum().backward()
    for k, x in enumerate(xs):
        if x.dtype.kind != "f":
            continue
        num = np.zeros_like(x)
        flat, nflat = x.reshape(-1), num.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            vals = []
            for step in (eps, -eps):
                flat[i] = old + step
                args = [ember.tensor(a) for a in xs]
                with ember.no_grad():
                    vals.append(float((fn(*args).numpy() * w).sum()))
            flat[i] = old
            nflat[i] = (vals[0] - vals[1]) / (2 * eps)
        np.testing.assert_allclose(ts[k].grad.numpy(), num, rtol=rtol, atol=atol)


def _double_backward(tfn, efn, arrays):
    """Gradient of ``sum(grad_i ** 2)`` (grads taken with create_graph=True) in both."""
    gout = None
    results = []
    for lib, fn in ((torch, tfn), (ember, efn)):
        xs = _tensors(lib, arrays, np.float64)
        out = fn(*xs)
        if gout is None:
            gout = np.random.default_rng(5).standard_normal(tuple(out.shape))
        diff = [x for x in xs if x.requires_grad]
        gs = lib.autograd.grad(out, diff, lib.tensor(gout), create_graph=True, allow_unused=True)
        z = sum((g * g).sum() * (k + 1) for k, g in enumerate(gs) if g is not None)
        if z.requires_grad:  # piecewise-linear ops: ember records no second-order graph
            z.backward()
        results.append([np.zeros(x.shape) if x.grad is None else x.grad.numpy() for x in diff])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-10)


def _raises_like(tcall, ecall):
    """Both calls raise the same exception type with the same message."""
    with pytest.raises(Exception) as te:
        tcall()
    with pytest.raises(Exception) as ee:
        ecall()
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


X4 = RNG.standard_normal((2, 4, 7, 6))


# -- conv2d ------------------------------------------------------------------------------------

CONV_CASES = [
    # (input shape, weight shape, kwargs)
    ((2, 3, 7, 6), (4, 3, 3, 3), {}),
    ((2, 3, 7, 6), (4, 3, 3, 3), {"stride": 2, "padding": 1}),
    ((2, 4, 8, 7), (6, 2, 3, 2), {"stride": (2, 1), "padding": (1, 2), "dilation": 2, "groups": 2}),
    ((1, 6, 9, 9), (6, 1, 3, 3), {"padding": 1, "groups": 6}),
    ((2, 3, 7, 6), (5, 3, 2, 4), {"padding": "same", "dilation": (1, 2)}),
    ((2, 3, 7, 6), (5, 3, 3, 3), {"padding": "valid", "stride": 3}),
    ((3, 7, 6), (4, 3, 3, 3), {"padding": 1}),  # unbatched
]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("xs,ws,kw", CONV_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_conv2d_matches_torch(xs, ws, kw, bias, dtype):
    arrays = [RNG.standard_normal(xs), RNG.standard_normal(ws)]
    if bias:
        arrays.append(RNG.standard_normal(ws[0]))
    eo = _compare(
        lambda *a: TF.conv2d(*a, **kw),
        lambda *a: EF.conv2d(*a, **kw),
        arrays,
        dtype,
        atol=None if dtype == np.float64 else 1e-4,
        check_name=len(xs) == 4,
    )
    if len(xs) == 4:
        assert type(eo.grad_fn).__name__ == "ConvolutionBackward0"


def test_conv2d_gradcheck():
    _numgrad_check(
        lambda x, w, b: EF.conv2d(x, w, b, stride=2, padding=1, dilation=(1, 2), groups=2),
        [
            RNG.standard_normal((1, 4, 5, 6)),
            RNG.standard_normal((2, 2, 2, 3)),
            RNG.standard_normal(2),
        ],
    )


def test_conv2d_double_backward_matches_torch():
    _double_backward(
        lambda x, w, b: TF.conv2d(x, w, b, stride=2, padding=1, groups=2),
        lambda x, w, b: EF.conv2d(x, w, b, stride=2, padding=1, groups=2),
        [
            RNG.standard_normal((2, 4, 6, 5)),
            RNG.standard_normal((4, 2, 3, 2)),
            RNG.standard_normal(4),
        ],
    )


def test_conv2d_input_without_grad_and_frozen_weight():
    x = ember.tensor(RNG.standard_normal((1, 2, 5, 5)))
    w = ember.tensor(RNG.standard_normal((3, 2, 3, 3)), requires_grad=True)
    EF.conv2d(x, w).sum().backward()
    assert x.grad is None and w.grad.shape == w.shape
    x.requires_grad_()
    w2 = ember.tensor(w.detach().numpy())
    EF.conv2d(x, w2).sum().backward()
    assert x.grad.shape == x.shape and w2.grad is None


@pytest.mark.parametrize(
    "call",
    [
        lambda F, T: F.conv2d(T.randn(2, 5, 6, 6), T.randn(4, 3, 3, 3)),
        lambda F, T: F.conv2d(T.randn(2, 3, 2, 2), T.randn(4, 3, 3, 3)),
        lambda F, T: F.conv2d(T.randn(2, 4, 6, 6), T.randn(3, 2, 3, 3), groups=2),
        lambda F, T: F.conv2d(T.randn(2, 3, 6, 6), T.randn(4, 3, 3, 3), T.randn(3)),
        lambda F, T: F.conv2d(T.randn(2, 3, 6, 6), T.randn(4, 3, 3, 3), stride=2, padding="same"),
        lambda F, T: F.conv2d(T.randn(2, 3, 6, 6), T.randn(4, 3, 3, 3).double()),
        lambda F, T: F.conv2d(T.randn(2, 3, 6, 6), T.randn(4, 3, 3, 3), padding=-1),
        lambda F, T: F.conv2d(T.randn(2, 3, 6, 6), T.randn(4, 3, 3, 3), stride=0),
        lambda F, T: F.conv2d(T.randn(6, 6), T.randn(4, 3, 3, 3)),
    ],
)
def test_conv2d_errors_match_torch(call):
    _raises_like(lambda: call(TF, torch), lambda: call(EF, ember))


# -- pooling ------------------------------------------------------------------------------------

POOL_CASES = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": (3, 2), "stride": (2, 1), "padding": (1, 1), "ceil_mode": True},
    {"kernel_size": 3, "stride": 2, "ceil_mode": True},
]


@pytest.mark.parametrize("kw", POOL_CASES + [{"kernel_size": 3, "padding": 1, "dilation": 2}])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_max_pool2d_matches_torch(kw, dtype):
    _compare(lambda x: TF.max_pool2d(x, **kw), lambda x: EF.max_pool2d(x, **kw), [X4], dtype)


@pytest.mark.parametrize("kw", POOL_CASES)
def test_max_pool2d_indices_match_torch(kw):
    tv, ti = TF.max_pool2d(torch.tensor(X4), return_indices=True, **kw)
    ev, ei = EF.max_pool2d(ember.tensor(X4), return_indices=True, **kw)
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    assert ei.dtype == ember.int64


def test_max_pool2d_overlapping_windows_and_nan():
    x = RNG.standard_normal((1, 2, 6, 6))
    x[0, 0, 2, 3] = np.nan
    _compare(
        lambda t: TF.max_pool2d(t, 3, stride=1),
        lambda t: EF.max_pool2d(t, 3, stride=1),
        [x],
    )
    # Ties: any convex combination of the tied entries is a subgradient and torch does not
    # document which one it picks, so the reference is ember's rule written out (the one
    # torch's CPU kernel uses today): the first maximum of each window, row-major, gets the
    # gradient and is the returned index.
    ones = np.ones((1, 1, 4, 4))
    x = ember.tensor(ones, requires_grad=True)
    out = EF.max_pool2d(x, 2)
    tout = TF.max_pool2d(torch.tensor(ones, requires_grad=True), 2)
    np.testing.assert_array_equal(out.detach().numpy(), np.ones((1, 1, 2, 2)))
    assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__
    g = RNG.standard_normal((1, 1, 2, 2))
    out.backward(ember.tensor(g))
    first = np.zeros_like(ones)
    first[..., ::2, ::2] = g
    np.testing.assert_array_equal(x.grad.numpy(), first)
    _, idx = EF.max_pool2d(ember.tensor(ones), 2, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), [[[[0, 2], [8, 10]]]])


def test_max_pool2d_unbatched():
    _compare(
        lambda t: TF.max_pool2d(t, 2), lambda t: EF.max_pool2d(t, 2), [X4[0]], check_name=False
    )


@pytest.mark.parametrize(
    "kw",
    POOL_CASES
    + [
        {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
        {
            "kernel_size": 3,
            "stride": 2,
            "padding": 1,
            "ceil_mode": True,
            "count_include_pad": False,
        },
        {"kernel_size": 2, "divisor_override": 3},
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_avg_pool2d_matches_torch(kw, dtype):
    _compare(lambda x: TF.avg_pool2d(x, **kw), lambda x: EF.avg_pool2d(x, **kw), [X4], dtype)


def test_pool_gradchecks():
    x = RNG.standard_normal((1, 2, 5, 5))
    _numgrad_check(lambda t: EF.max_pool2d(t, 3, stride=2, padding=1, ceil_mode=True), [x])
    _numgrad_check(lambda t: EF.avg_pool2d(t, 3, stride=2, padding=1, count_include_pad=False), [x])


@pytest.mark.parametrize(
    "call",
    [
        lambda F, T: F.max_pool2d(T.randn(2, 3, 6, 6), 3, padding=2),
        lambda F, T: F.avg_pool2d(T.randn(2, 3, 6, 6), 3, padding=2),
        lambda F, T: F.max_pool2d(T.randn(1, 1, 2, 2), 3),
        lambda F, T: F.avg_pool2d(T.randn(1, 1, 2, 2), 3),
    ],
)
def test_pool_errors_match_torch(call):
    _raises_like(lambda: call(TF, torch), lambda: call(EF, ember))


# -- unfold / fold / pad --------------------------------------------------------------------------


def test_unfold_and_fold_match_torch():
    kw = {"kernel_size": (2, 3), "dilation": (1, 2), "padding": 1, "stride": (2, 1)}
    _compare(lambda x: TF.unfold(x, **kw), lambda x: EF.unfold(x, **kw), [X4])
    cols = RNG.standard_normal((2, 12, 9))
    kw = {"output_size": (4, 5), "kernel_size": (2, 3)}
    _compare(lambda c: TF.fold(c, **kw), lambda c: EF.fold(c, **kw), [cols])


@pytest.mark.parametrize("pad", [(1, 2), (1, 2, -1, 3), (0, 0, 2, 2, 1, 0), (-1, -1)])
def test_constant_pad_matches_torch(pad):
    _compare(lambda x: TF.pad(x, pad, value=0.5), lambda x: EF.pad(x, pad, value=0.5), [X4])


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_other_pad_modes_match_torch_values_and_grads(mode):
    _compare(
        lambda x: TF.pad(x, (1, 2, 2, 1), mode=mode),
        lambda x: EF.pad(x, (1, 2, 2, 1), mode=mode),
        [X4],
        check_name=False,  # torch: ReflectionPad2DBackward0 & co; ember: IndexSelectBackward0
    )


def test_pad_errors_match_torch():
    _raises_like(lambda: TF.pad(torch.ones(2, 2), (1,)), lambda: EF.pad(ember.ones(2, 2), (1,)))
    _raises_like(
        lambda: TF.pad(torch.ones(2, 2), (1, 1, 1, 1, 1, 1)),
        lambda: EF.pad(ember.ones(2, 2), (1, 1, 1, 1, 1, 1)),
    )


def test_window_ops_double_backward_match_torch():
    _double_backward(
        lambda x: TF.pad(x, (1, -1, 2, 0)) ** 2, lambda x: EF.pad(x, (1, -1, 2, 0)) ** 2, [X4]
    )
    _double_backward(
        lambda x: TF.unfold(x, 2, padding=1) ** 2, lambda x: EF.unfold(x, 2, padding=1) ** 2, [X4]
    )


# -- activations --------------------------------------------------------------------------------

ACTIVATIONS = [
    ("gelu", lambda F: lambda x: F.gelu(x)),
    ("gelu_tanh", lambda F: lambda x: F.gelu(x, approximate="tanh")),
    ("leaky_relu", lambda F: lambda x: F.leaky_relu(x, 0.2)),
    ("leaky_relu_default", lambda F: lambda x: F.leaky_relu(x)),
    ("relu", lambda F: lambda x: F.relu(x)),
    ("tanh", lambda F: lambda x: F.tanh(x)),
    ("sigmoid", lambda F: lambda x: F.sigmoid(x)),
    ("softmax", lambda F: lambda x: F.softmax(x, dim=1)),
    ("log_softmax", lambda F: lambda x: F.log_softmax(x, dim=-1)),
]


@pytest.mark.parametrize("name,make", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_activations_match_torch(name, make, dtype):
    x = RNG.standard_normal((3, 4, 5)) * 3
    _compare(make(TF), make(EF), [x], dtype, rtol=None if dtype == np.float64 else 2e-6)


@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "leaky_relu"])
def test_activation_gradcheck_and_double_backward(name):
    make = dict(ACTIVATIONS)[name]
    x = RNG.standard_normal((3, 4)) * 2
    _numgrad_check(make(EF), [x])
    _double_backward(make(TF), make(EF), [x])


def test_leaky_relu_inplace_matches_torch():
    x = RNG.standard_normal((4, 3))
    results = []
    for lib, F in ((torch, TF), (ember, EF)):
        leaf = lib.tensor(x, requires_grad=True)
        y = leaf * 1.0
        out = F.leaky_relu(y, 0.3, inplace=True)
        assert out is y
        out.sum().backward()
        results.append((out.detach().numpy(), leaf.grad.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0])
    np.testing.assert_allclose(results[1][1], results[0][1])


def test_gelu_bad_approximate():
    _raises_like(
        lambda: TF.gelu(torch.ones(2), approximate="foo"),
        lambda: EF.gelu(ember.ones(2), approximate="foo"),
    )


def test_softmax_implicit_dim_warns_like_torch():
    x = RNG.standard_normal((2, 3))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        e = EF.softmax(ember.tensor(x))
    t = TF.softmax(torch.tensor(x), dim=1)
    np.testing.assert_allclose(e.numpy(), t.numpy())


# -- normalization -------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 5)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batch_norm_matches_torch(shape, training, affine, dtype):
    c = shape[1]
    rm, rv = RNG.standard_normal(c), RNG.uniform(0.5, 2.0, c)
    stats = {}

    def run(lib, F):
        def fn(x, *wb):
            mean = lib.tensor(rm.astype(dtype))
            var = lib.tensor(rv.astype(dtype))
            out = F.batch_norm(x, mean, var, *wb, training=training, momentum=0.3, eps=1e-4)
            stats[lib.__name__] = (mean.numpy(), var.numpy())
            return out

        return fn

    arrays = [RNG.standard_normal(shape) * 2 + 1]
    if affine:
        arrays += [RNG.standard_normal(c), RNG.standard_normal(c)]
    _compare(
        run(torch, TF), run(ember, EF), arrays, dtype, atol=None if dtype == np.float64 else 5e-5
    )
    tol = 1e-12 if dtype == np.float64 else 1e-6
    for a, b in zip(stats["torch"], stats["ember"]):
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol)


def test_batch_norm_gradcheck_and_double_backward():
    x = RNG.standard_normal((4, 3, 2))
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    _numgrad_check(lambda *a: EF.batch_norm(a[0], None, None, a[1], a[2], training=True), [x, w, b])
    rm, rv = ember.tensor(RNG.standard_normal(3)), ember.tensor(RNG.uniform(1, 2, 3))
    _numgrad_check(lambda *a: EF.batch_norm(a[0], rm, rv, a[1], a[2], training=False), [x, w, b])
    _double_backward(
        lambda *a: TF.batch_norm(a[0], None, None, a[1], a[2], training=True),
        lambda *a: EF.batch_norm(a[0], None, None, a[1], a[2], training=True),
        [x, w, b],
    )


def test_batch_norm_errors_match_torch():
    _raises_like(
        lambda: TF.batch_norm(torch.randn(1, 3), None, None, training=True),
        lambda: EF.batch_norm(ember.randn(1, 3), None, None, training=True),
    )
    _raises_like(
        lambda: TF.batch_norm(torch.randn(2, 4), torch.zeros(3), torch.ones(3)),
        lambda: EF.batch_norm(ember.randn(2, 4), ember.zeros(3), ember.ones(3)),
    )
    _raises_like(
        lambda: TF.batch_norm(torch.randn(2, 3), None, None, training=False),
        lambda: EF.batch_norm(ember.randn(2, 3), None, None, training=False),
    )


@pytest.mark.parametrize("nshape", [(6,), (5, 6), (4, 5, 6)])
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_layer_norm_matches_torch(nshape, affine, dtype):
    arrays = [RNG.standard_normal((3, 4, 5, 6)) * 3 + 1]
    if affine != "none":
        arrays.append(RNG.standard_normal(nshape))
    if affine == "both":
        arrays.append(RNG.standard_normal(nshape))
    _compare(
        lambda x, *wb: TF.layer_norm(x, nshape, *wb, eps=1e-3),
        lambda x, *wb: EF.layer_norm(x, nshape, *wb, eps=1e-3),
        arrays,
        dtype,
        atol=None if dtype == np.float64 else 5e-5,
    )


def test_layer_norm_gradcheck_double_backward_and_error():
    x, w, b = RNG.standard_normal((3, 2, 4)), RNG.standard_normal(4), RNG.standard_normal(4)
    _numgrad_check(lambda *a: EF.layer_norm(a[0], (4,), a[1], a[2]), [x, w, b])
    _double_backward(
        lambda *a: TF.layer_norm(a[0], (2, 4), a[1].expand(2, 4), a[2].expand(2, 4)),
        lambda *a: EF.layer_norm(a[0], (2, 4), a[1].expand(2, 4), a[2].expand(2, 4)),
        [x, w, b],
    )
    _raises_like(
        lambda: TF.layer_norm(torch.randn(2, 3), (4,)),
        lambda: EF.layer_norm(ember.randn(2, 3), (4,)),
    )


# -- embedding, one_hot, linear, dropout ------------------------------------------------------

EMB_IDX = np.array([[1, 2, 1, 1], [4, 1, 0, 2]])


@pytest.mark.parametrize(
    "kw", [{}, {"padding_idx": 2}, {"padding_idx": -1}, {"scale_grad_by_freq": True}]
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_embedding_matches_torch(kw, dtype):
    _compare(
        lambda w, i: TF.embedding(i, w, **kw),
        lambda w, i: EF.embedding(i, w, **kw),
        [RNG.standard_normal((5, 3)), EMB_IDX],
        dtype,
    )


def test_embedding_max_norm_renormalises_like_torch():
    w = RNG.standard_normal((5, 3)) * 3
    tw, ew = torch.tensor(w), ember.tensor(w)
    to = TF.embedding(torch.tensor(EMB_IDX), tw, max_norm=1.5)
    eo = EF.embedding(ember.tensor(EMB_IDX), ew, max_norm=1.5)
    np.testing.assert_allclose(ew.numpy(), tw.numpy(), rtol=1e-6)
    np.testing.assert_allclose(eo.numpy(), to.numpy(), rtol=1e-6)


def test_embedding_gradcheck_and_errors():
    _numgrad_check(lambda w: EF.embedding(ember.tensor(EMB_IDX), w), [RNG.standard_normal((5, 3))])
    _raises_like(
        lambda: TF.embedding(torch.tensor([5]), torch.randn(5, 3)),
        lambda: EF.embedding(ember.tensor([5]), ember.randn(5, 3)),
    )
    _raises_like(
        lambda: TF.embedding(torch.tensor([1.0]), torch.randn(5, 3)),
        lambda: EF.embedding(ember.tensor([1.0]), ember.randn(5, 3)),
    )


def test_one_hot_matches_torch():
    t = np.array([[0, 3], [2, 1]])
    np.testing.assert_array_equal(
        EF.one_hot(ember.tensor(t)).numpy(), TF.one_hot(torch.tensor(t)).numpy()
    )
    np.testing.assert_array_equal(
        EF.one_hot(ember.tensor(t), 6).numpy(), TF.one_hot(torch.tensor(t), 6).numpy()
    )
    assert EF.one_hot(ember.tensor(t)).dtype == ember.int64
    for args in [([1, 5], 3), ([1, -1], 3)]:
        _raises_like(
            lambda a=args: TF.one_hot(torch.tensor(a[0]), a[1]),
            lambda a=args: EF.one_hot(ember.tensor(a[0]), a[1]),
        )
    _raises_like(
        lambda: TF.one_hot(torch.tensor([1.0, 2.0])), lambda: EF.one_hot(ember.tensor([1.0, 2.0]))
    )


@pytest.mark.parametrize("xshape", [(4,), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_linear_matches_torch(xshape, bias, dtype):
    arrays = [RNG.standard_normal(xshape), RNG.standard_normal((5, 4))]
    if bias:
        arrays.append(RNG.standard_normal(5))
    _compare(TF.linear, EF.linear, arrays, dtype, check_name=len(xshape) >= 2 or bias)


def test_linear_shape_error_matches_torch():
    _raises_like(
        lambda: TF.linear(torch.randn(4, 5), torch.randn(2, 3), torch.randn(2)),
        lambda: EF.linear(ember.randn(4, 5), ember.randn(2, 3), ember.randn(2)),
    )


def test_dropout_semantics():
    x = ember.ones(200, 100, requires_grad=True)
    assert EF.dropout(x, 0.3, training=False) is x
    assert EF.dropout(x, 0.0) is x
    ember.manual_seed(3)
    y = EF.dropout(x, 0.3)
    vals = np.unique(y.detach().numpy())
    np.testing.assert_allclose(vals, [0.0, 1 / 0.7], rtol=1e-6)
    kept = (y.detach().numpy() != 0).mean()
    assert abs(kept - 0.7) < 0.02
    assert type(y.grad_fn).__name__ == "MulBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())
    ember.manual_seed(3)
    np.testing.assert_array_equal(EF.dropout(x, 0.3).detach().numpy(), y.detach().numpy())
    np.testing.assert_array_equal(EF.dropout(x, 1.0).detach().numpy(), 0.0)
    z = ember.ones(10) * 1.0
    assert EF.dropout(z, 0.5, inplace=True) is z
    _raises_like(lambda: TF.dropout(torch.ones(2), 1.5), lambda: EF.dropout(ember.ones(2), 1.5))


@pytest.mark.parametrize(
    "fn,shapes",
    [
        (lambda x: EF.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)), [(1, 2, 5, 5)]),
        (lambda c: EF.fold(c, (4, 5), (2, 3), stride=1), [(1, 12, 9)]),
        (lambda x: EF.pad(x, (2, -1, 1, 1), value=3.0), [(2, 3, 4)]),
        (lambda x: EF.pad(x, (2, 1, 1, 2), mode="reflect"), [(1, 2, 4, 4)]),
        (lambda x: EF.pad(x, (2, 1), mode="replicate"), [(2, 3, 4)]),
        (lambda x: EF.pad(x, (1, 2), mode="circular"), [(2, 3, 4)]),
        (lambda x, w, b: EF.linear(x, w, b), [(2, 3, 4), (5, 4), (5,)]),
        (lambda x, y: EF.l1_loss(x, y, reduction="sum"), [(3, 4), (3, 4)]),
    ],
    ids=[
        "unfold",
        "fold",
        "pad_constant",
        "pad_reflect",
        "pad_replicate",
        "pad_circular",
        "linear",
        "l1_loss",
    ],
)
def test_more_gradchecks(fn, shapes):
    _numgrad_check(fn, [RNG.standard_normal(s) for s in shapes])


@pytest.mark.parametrize(
    "call",
    [
        lambda F, T: F.max_pool2d(T.tensor([[[[1, 5], [3, 2]]]], dtype=T.int32), 2, padding=1),
        lambda F, T: F.avg_pool2d(T.tensor([[[[1, -6], [3, 1]]]]), 2, padding=1),
        lambda F, T: F.conv2d(T.ones(1, 1, 4, 4, dtype=T.int64), T.ones(1, 1, 2, 2, dtype=T.int64)),
        lambda F, T: F.pad(T.ones(2, 2), (-2, -1)),
        lambda F, T: F.pad(T.ones(2, 2), (-1, -1)),
        lambda F, T: F.l1_loss(T.ones(2, 3), T.ones(4)),
        lambda F, T: F.mse_loss(T.ones(2, 3), T.ones(4)),
        lambda F, T: F.layer_norm(T.ones(2, 3), 3),
        lambda F, T: F.gelu(T.ones(2, dtype=T.int64)),
        lambda F, T: F.leaky_relu(T.ones(2, dtype=T.int64)),
        lambda F, T: F.batch_norm(T.ones(2, 2, dtype=T.int64), None, None, training=True),
        lambda F, T: F.cross_entropy(T.tensor(1.0), T.tensor(0)),
    ],
)
def test_edge_cases_behave_like_torch(call):
    outcomes = []
    for F, T in ((TF, torch), (EF, ember)):
        try:
            outcomes.append(("ok", str(call(F, T))))
        except Exception as e:  # noqa: BLE001
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[1] == outcomes[0]
