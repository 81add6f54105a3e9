"""The C loops that eager GELU, ReLU, sigmoid, tanh's gradient, LayerNorm and the embedding
gradient use where a C compiler is present.

``_compile/c/activation.c`` gives exact GELU, sigmoid and their gradients and tanh's within
float rounding of the NumPy code (SciPy's erf), ReLU and its gradient bit for bit (NaN,
infinities and signed zeros included); LayerNorm (``c/layer_norm.c``) agrees to rounding,
the embedding gradient (``c/embedding.c``) is ``np.add.at``'s exactly. The eager ops choose
them only for contiguous float arrays of one shape (other cases, and machines without gcc,
keep the NumPy code), and a call that checks against NumPy returns what later calls
return."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._aten import elementwise, nn_activation, nn_embedding, nn_norm
from ember._compile import kernels, lowerings

needs_kernels = pytest.mark.skipif(bool(kernels.available()), reason="no C kernels here")

SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 5.0, -5.0, 40.0, -40.0]


def _inputs(dtype, shape=(3, 5, 7)):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    x.reshape(-1)[: len(SPECIALS)] = SPECIALS
    return x


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_and_its_gradient_equal_the_numpy_code(dtype):
    x = _inputs(dtype)
    out, cdf = lowerings.gelu(x)
    ref_out, ref_cdf = nn_activation._gelu_numpy(x)
    tol = 64 * np.finfo(dtype).eps
    for mine, ref in ((out, ref_out), (cdf, ref_cdf)):
        assert mine.dtype == dtype and mine.shape == x.shape
        np.testing.assert_allclose(mine, ref, rtol=tol, atol=tol)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    np.testing.assert_allclose(
        lowerings.pointwise("gelu_grad", g, x, cdf),
        nn_activation._gelu_grad_numpy(g, x, ref_cdf),
        rtol=tol,
        atol=tol,
    )


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_and_the_sigmoid_and_tanh_gradients_equal_the_numpy_code(dtype):
    x = _inputs(dtype)
    x.reshape(-1)[-3:] = [-100.0, 100.0, -1000.0]  # exp overflows: 0, not NaN
    tol = 64 * np.finfo(dtype).eps
    s = lowerings.pointwise("sigmoid", x)
    np.testing.assert_allclose(s, elementwise.sigmoid_numpy(x), rtol=tol, atol=tol)
    assert s.reshape(-1)[-1] == 0 and s.reshape(-1)[-2] == 1
    g = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    r = np.tanh(x)
    for name, numpy_fn, result in (
        ("sigmoid_grad", elementwise.sigmoid_grad_numpy, s),
        ("tanh_grad", elementwise.tanh_grad_numpy, r),
    ):
        mine = lowerings.pointwise(name, g, result)
        assert mine.dtype == dtype
        np.testing.assert_allclose(mine, numpy_fn(g, result), rtol=tol, atol=tol)


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_and_its_gradient_are_the_numpy_code_bit_for_bit(dtype):
    x = _inputs(dtype)
    x.reshape(-1)[-2:] = [-np.nan, np.nan]
    result = lowerings.pointwise("relu", x)
    ref_result = elementwise.relu_numpy(x)
    assert result.dtype == dtype
    np.testing.assert_array_equal(result, ref_result)
    assert np.array_equal(np.signbit(result), np.signbit(ref_result))  # -0 and -NaN
    g = _inputs(dtype)[::-1].copy()  # NaN and infinite gradients meet zeros and positives
    mine = lowerings.pointwise("relu_grad", g, result)
    ref = elementwise.relu_grad_numpy(g, result)
    assert mine.dtype == ref.dtype
    np.testing.assert_array_equal(mine, ref)
    assert np.array_equal(np.signbit(mine), np.signbit(ref))


@needs_kernels
def test_eager_calls_use_the_loops_only_where_they_apply():
    x = _inputs(np.float32)
    gelu, relu_grad = lowerings.eager("gelu"), lowerings.eager("relu_grad")
    assert gelu(x.astype(np.float16)) is None  # other dtypes: the NumPy code
    assert gelu(x[:, ::2]) is None  # a view that is not contiguous
    g = np.ones(x.shape, np.float32)
    assert relu_grad(np.broadcast_to(np.float32(1), x.shape), x) is None  # a broadcast grad
    assert relu_grad(g, x[:, :, :1]) is None  # shapes differ
    assert relu_grad(g.astype(np.float64), x) is None  # dtypes differ
    assert gelu(np.zeros((0, 3), np.float32)) is None  # empty
    # the first call per shape checks against NumPy and returns what later calls return
    first, second = (nn_activation._gelu_array(x, "none") for _ in range(2))
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", [True, False])
def test_eager_layer_norm_uses_the_row_loops_with_the_numpy_results(dtype, affine):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 6, 8)).astype(dtype)
    w = rng.standard_normal(8).astype(dtype) if affine else None
    b = rng.standard_normal(8).astype(dtype) if affine else None
    tol = 64 * np.finfo(dtype).eps
    ref = nn_norm._layer_norm_numpy(x, w, b, (8,), 1e-5)
    for _ in range(2):  # the checking call, then the trusted one
        mine = nn_norm._layer_norm_forward(x, w, b, (8,), 1e-5)
        for m, r in zip(mine, ref):
            assert m.shape == r.shape and m.dtype == r.dtype
            np.testing.assert_allclose(m, r, rtol=tol, atol=tol)
    g = rng.standard_normal(x.shape).astype(dtype)
    for needs in ((True, True, True), (False, True, True), (True, False, False)):
        args = (g, x, w, b, ref[1], ref[2], (8,), needs)
        expected = nn_norm._layer_norm_vjp_numpy(*args)
        for _ in range(2):
            got = nn_norm._layer_norm_vjp(*args)
            for m, r in zip(got, expected):
                assert (m is None) == (r is None)
                if m is not None:
                    np.testing.assert_allclose(m, r, rtol=8 * tol, atol=8 * tol)


@needs_kernels
def test_the_eager_embedding_backward_reaches_the_loop(monkeypatch):
    """Eager backward passes the saved indices as (tensor, version): the loop still runs."""
    from ember._aten import _core

    monkeypatch.setattr(_core, "_eager_kernels", {})
    calls = []
    loop = lowerings.embedding_grad
    monkeypatch.setattr(lowerings, "embedding_grad", lambda *args: calls.append(1) or loop(*args))
    emb = ember.nn.Embedding(10, 4)
    idx = ember.tensor([[1, 2, 3], [1, 1, 9]])
    for _ in range(2):
        emb.weight.grad = None
        (emb(idx) * ember.arange(4.0)).sum().backward()
    assert len(calls) == 2
    np.testing.assert_array_equal(emb.weight.grad.numpy()[1], [0.0, 3.0, 6.0, 9.0])


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eager_embedding_gradient_is_np_add_at_exactly(dtype):
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 5, (6, 7))
    g = rng.standard_normal((6, 7, 4)).astype(dtype)
    for padding_idx in (-1, 2):
        ref = nn_embedding._embedding_vjp_numpy(g, idx, 5, padding_idx, None)
        for _ in range(2):
            np.testing.assert_array_equal(
                nn_embedding._embedding_vjp(g, idx, 5, padding_idx, None), ref
            )


def test_gelu_relu_layer_norm_and_embedding_gradients_match_torch():
    """The ops as users call them, through the loops where present, against torch."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    data = (rng.standard_normal((8, 5, 16)) * 2).astype(np.float32)
    idx = rng.integers(0, 11, (8, 5))
    weight = rng.standard_normal((11, 16)).astype(np.float32)
    ln_w, ln_b = (
        rng.standard_normal(16).astype(np.float32),
        rng.standard_normal(16).astype(np.float32),
    )

    def run(lib):
        x = lib.tensor(data, requires_grad=True)
        w = lib.tensor(weight, requires_grad=True)
        lw, lb = lib.tensor(ln_w, requires_grad=True), lib.tensor(ln_b, requires_grad=True)
        Fl = lib.nn.functional
        h = Fl.embedding(lib.tensor(idx), w) + x
        y = Fl.gelu(Fl.layer_norm(h, (16,), lw, lb))
        loss = (Fl.relu(y - 0.1) * y).sum()
        loss.backward()
        return [t.detach().numpy() for t in (loss, x.grad, w.grad, lw.grad, lb.grad)]

    for _ in range(2):  # the checking calls, then the trusted ones
        mine = run(ember)
    for m, r in zip(mine, run(torch)):
        np.testing.assert_allclose(m, r, rtol=1e-4, atol=1e-5)
    assert F.gelu(ember.tensor([1.0])).item() == pytest.approx(0.8413447)


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eager_softmax_and_log_softmax_use_the_row_loops_over_the_last_dim(dtype):
    from ember._aten import reduction

    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 9)).astype(dtype)
    x[0, 0, :3] = [-np.inf, 50.0, -50.0]  # a masked score and far-apart ones
    g = rng.standard_normal(x.shape).astype(dtype)
    tol = 64 * np.finfo(dtype).eps
    for name, array_fn, numpy_fn, vjp, vjp_numpy in (
        ("softmax", reduction._softmax_array, reduction._softmax_numpy,
         reduction._softmax_vjp, reduction._softmax_vjp_numpy),
        ("log_softmax", reduction._log_softmax_array, reduction._log_softmax_numpy,
         reduction._log_softmax_vjp, reduction._log_softmax_vjp_numpy),
    ):  # fmt: skip
        for _ in range(2):  # the checking call, then the trusted one
            y = array_fn(x, 2)
            np.testing.assert_allclose(y, numpy_fn(x, 2), rtol=tol, atol=tol)
            np.testing.assert_allclose(vjp(g, y, 2), vjp_numpy(g, y, 2), rtol=tol, atol=tol)
        assert lowerings.eager(name)(x, 1) is None  # not the last dim: the NumPy code


@needs_kernels
@pytest.mark.parametrize("causal", [True, False])
def test_eager_attention_forward_uses_the_loop_with_the_numpy_results(causal):
    from ember._aten import nn_attention

    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal((2, 3, 5, 4)).astype(np.float32) for _ in range(3))
    bias = np.triu(np.full((5, 5), -np.inf, np.float32), 1) if causal else None
    ref = nn_attention._sdpa_numpy(q, k, v, bias, 0.5, 1)
    for _ in range(2):  # the checking call, then the trusted one
        got = nn_attention._sdpa_forward(q, k, v, bias, 0.5, 1)
        for m, r in zip(got, ref):
            np.testing.assert_allclose(m, r, rtol=1e-5, atol=1e-6)
    assert lowerings.eager("attention")(q, k, v, bias, 0.5, 3) is None  # grouped: NumPy's


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shapes", [((2, 3, 5, 4), 5, 4), ((16, 4, 32, 16), 32, 16), ((1, 7, 3), 9, 6)]
)
def test_eager_attention_backward_uses_the_loop_with_the_numpy_results(dtype, shapes):
    from ember._aten import nn_attention

    q_shape, s, ev = shapes
    rng = np.random.default_rng(7)
    q = rng.standard_normal(q_shape).astype(dtype)
    k = rng.standard_normal(q_shape[:-2] + (s, q_shape[-1])).astype(dtype)
    v = rng.standard_normal(q_shape[:-2] + (s, ev)).astype(dtype)
    _, probs = nn_attention._sdpa_numpy(q, k, v, None, 0.3, 1)
    g = rng.standard_normal(q_shape[:-1] + (ev,)).astype(dtype)
    if q.ndim == 4:  # heads as a transposed view, as a GPT's attention gives them
        q = np.ascontiguousarray(q.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)
    for needs in [(True, True, True), (False, True, False)]:
        ref = nn_attention._sdpa_vjp_numpy(g, q, k, v, probs, 0.3, 1, needs)
        for _ in range(2):  # the checking call, then the trusted one
            got = nn_attention._sdpa_vjp(g, q, k, v, probs, 0.3, 1, needs)
            for m, r in zip(got, ref):
                assert (m is None) == (r is None)
                if r is not None:
                    tol = 64 * np.finfo(dtype).eps * max(1.0, np.abs(r).max())
                    np.testing.assert_allclose(m, r, rtol=tol, atol=tol)
    grouped = (g, q, k[:, :1] if q.ndim == 4 else k, v, probs, 0.3, 3, (True,) * 3)
    assert lowerings.eager("attention_grad")(*grouped) is None  # grouped heads: NumPy's


@needs_kernels
def test_models_reach_every_eager_loop_and_each_agrees(monkeypatch):
    """A small GPT block and a conv net, eagerly: each C loop they should use runs (the
    check against NumPy passed on its first call), so none is silently bypassed."""
    from ember._aten import _core

    monkeypatch.setattr(_core, "_eager_kernels", {})
    used: dict = {}
    checked = lowerings._checked

    def counting(name, c_fn, *rest, **kwargs):
        def counted(*args):
            res = c_fn(*args)
            used[name] = used.get(name, 0) + 1
            return res

        run = checked(name, counted, *rest, **kwargs)
        return lambda *args: run(*args)

    monkeypatch.setattr(lowerings, "_checked", counting)
    nn = ember.nn
    ember.manual_seed(0)
    emb, ln = nn.Embedding(50, 32), nn.LayerNorm(32)
    fc, head = nn.Linear(32, 128), nn.Linear(128, 50)
    conv, bn = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
    for _ in range(2):  # the checking calls, then the trusted ones
        idx = ember.tensor(np.arange(64 * 16).reshape(64, 16) % 50)
        h = ln(emb(idx))
        q = h.view(64, 2, 16, 16)
        h = h + F.scaled_dot_product_attention(q, q, q, is_causal=True).reshape(64, 16, 32)
        logits = head(F.gelu(fc(h)))
        loss = F.cross_entropy(logits.view(-1, 50), idx.view(-1))
        loss = loss + F.softmax(h, -1)[..., 0].mean()
        x = ember.randn(8, 3, 32, 32, requires_grad=True)  # (col2im: its gradient)
        y = F.max_pool2d(F.relu(bn(conv(x))), 2)
        loss = loss + (y.sigmoid() * y.tanh()).mean()
        loss.backward()
    want = {
        "embedding_grad", "layer_norm", "layer_norm_grad", "attention", "attention_grad",
        "gelu", "gelu_grad",
        "softmax", "softmax_grad", "log_softmax", "log_softmax_grad", "im2col", "col2im",
        "batch_norm_train", "batch_norm_train_grad", "relu", "relu_grad", "max_pool2d",
        "max_pool2d_grad", "sigmoid", "sigmoid_grad", "tanh_grad",
    }  # fmt: skip
    assert want <= set(used), sorted(want - set(used))


@needs_kernels
def test_varying_batch_and_sequence_lengths_are_checked_once(monkeypatch):
    """The check runs per what a C module is built for (LayerNorm's row length, softmax's
    last dim, an elementwise loop's dtype), not per shape: a growing sequence (generation)
    does not run the NumPy code beside the loop at every step."""
    from ember._aten import _core, reduction

    monkeypatch.setattr(_core, "_eager_kernels", {})
    ran = []

    def counting(name, fn):
        return lambda *args: ran.append(name) or fn(*args)

    layer_norm = counting("_layer_norm_numpy", nn_norm._layer_norm_numpy)
    monkeypatch.setattr(nn_norm, "_layer_norm_numpy", layer_norm)
    softmax = counting("_softmax_numpy", reduction._softmax_numpy)
    monkeypatch.setitem(lowerings._ROWS_NUMPY, "softmax", softmax)
    ln = ember.nn.LayerNorm(8)
    for t in range(1, 6):
        x = ember.randn(2, t, 8)
        F.softmax(ln(x), -1)
    assert sorted(ran) == ["_layer_norm_numpy", "_softmax_numpy"]
