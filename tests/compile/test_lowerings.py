"""Hand-written C loops the compiler uses for ops NumPy runs slowly (window maxima): equal
to the ops' NumPy code on ties, NaNs, infinities, tails, dtypes and sizes, and used by
ember.compile (which says so) with the eager values and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._aten import nn_conv as _conv
from ember._compile import kernels, lowerings

pytestmark = pytest.mark.skipif(
    bool(kernels.available()), reason="C loops need gcc and Python's headers"
)


def _geometry(h: int, w: int, kh: int, kw: int):
    return _conv._Geometry((h, w), (kh, kw), (kh, kw), (1, 1), (h // kh, w // kw), (0, 0))


def _awkward(shape, dtype, rng):
    """Values with ties, NaNs, infinities and signed zeros, in every window position."""
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    n = flat.size
    flat[rng.integers(0, n, n // 9)] = np.nan
    flat[rng.integers(0, n, n // 11)] = np.inf
    flat[rng.integers(0, n, n // 13)] = -np.inf
    flat[rng.integers(0, n, n // 7)] = 1.0  # ties
    flat[rng.integers(0, n, n // 17)] = -0.0
    return x


CASES = [
    ((64, 16, 8, 8), (2, 2), np.float32),  # W7's pooling
    ((2, 3, 9, 7), (3, 3), np.float64),  # tails past the last window (floor mode)
    ((3, 10, 12), (2, 3), np.float32),  # unbatched (C, H, W), non-square windows
    ((2, 5, 12, 12), (4, 4), np.float64),
    ((8, 64, 32, 32), (2, 2), np.float32),  # large: the loops run on both cores
]


@pytest.mark.parametrize("shape,k,dtype", CASES, ids=str)
def test_c_max_pooling_equals_the_numpy_code(shape, k, dtype):
    rng = np.random.default_rng(3)
    geo = _geometry(shape[-2], shape[-1], *k)
    for x in (rng.standard_normal(shape).astype(dtype), _awkward(shape, dtype, rng)):
        top, arg = lowerings.max_pool2d(x, geo)
        want_top, want_arg = _conv._max_pool_array(x, geo)
        np.testing.assert_array_equal(top, want_top)
        np.testing.assert_array_equal(arg, want_arg)
        assert top.dtype == want_top.dtype and arg.dtype == want_arg.dtype
        g = rng.standard_normal(top.shape).astype(dtype)
        gx = lowerings.max_pool2d_grad(g, arg, geo)
        np.testing.assert_array_equal(gx, _conv._max_pool_vjp_array(g, arg, geo))
        # non-contiguous arguments are copied, not misread
        gt = np.ascontiguousarray(np.swapaxes(g, -1, -2)).swapaxes(-1, -2)
        np.testing.assert_array_equal(lowerings.max_pool2d_grad(gt, arg, geo), gx)


def test_cases_the_loops_do_not_cover_run_the_numpy_code():
    x = np.arange(2 * 3 * 6 * 6, dtype=np.float32).reshape(2, 3, 6, 6)
    overlapping = _conv._Geometry((6, 6), (3, 3), (2, 2), (1, 1), (2, 2), (0, 0))
    top, arg = lowerings.max_pool2d(x, overlapping)
    want = _conv._max_pool_array(x, overlapping)
    np.testing.assert_array_equal(top, want[0])
    np.testing.assert_array_equal(arg, want[1])
    ints = np.arange(36, dtype=np.int64).reshape(1, 1, 6, 6)
    geo = _geometry(6, 6, 2, 2)
    want = [[[[7, 9, 11], [19, 21, 23], [31, 33, 35]]]]
    np.testing.assert_array_equal(lowerings.max_pool2d(ints, geo)[0], want)


def test_the_module_checks_its_arguments():
    geo = _geometry(4, 4, 2, 2)
    x = np.zeros((1, 1, 4, 4), np.float32)
    lowerings.max_pool2d(x, geo)
    module = lowerings._pool_module(np.dtype(np.float32), geo, 1)
    top, arg = np.empty((1, 1, 2, 2), np.float32), np.empty((1, 1, 2, 2), np.int16)
    with pytest.raises(TypeError, match="arguments"):
        module.max_pool2d(x.astype(np.float64), top, arg)  # another dtype
    with pytest.raises(TypeError, match="arguments"):
        module.max_pool2d(x, top[..., :1], arg)  # sizes that do not match
    with pytest.raises(TypeError, match="arguments"):
        module.max_pool2d(x, top)


def test_compile_uses_the_loops_with_eager_values_and_gradients():
    rng = np.random.default_rng(0)
    K = ember.tensor(rng.standard_normal((4, 1, 3, 3)).astype(np.float32), requires_grad=True)
    x = ember.tensor(_awkward((8, 1, 8, 8), np.float32, rng)[..., :, :])
    x = ember.where(x.isnan(), ember.zeros(()), x).clamp(-5, 5)  # finite loss

    def f(x, K):
        return F.max_pool2d(F.relu(F.conv2d(x, K, padding=1)), 2).square().sum()

    compiled = ember.compile(f)
    for _ in range(2):
        K.grad = None
        loss = compiled(x, K)
        loss.backward()
        got = (loss.item(), K.grad.numpy().copy())
    K.grad = None
    want = f(x, K)
    want.backward()
    np.testing.assert_allclose(got[0], want.item(), rtol=1e-5)
    np.testing.assert_allclose(got[1], K.grad.numpy(), rtol=1e-5, atol=1e-5)
    report = compiled.explain()
    assert "C loops for MaxPool2DWithIndicesBackward0" in report, report


class _Node:
    """What a lowered backward reads of its node: the params and the inputs' edges."""

    def __init__(self, params, needs):
        self._params = params
        self.next_functions = tuple(((True, 0) if n else (None, 0)) for n in needs)


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
@pytest.mark.parametrize(
    "shape, nshape, affine",
    [((16, 32, 64), (64,), True), ((5, 3, 4), (3, 4), False), ((7, 10), (10,), True)],
    ids=str,
)
def test_c_layer_norm_equals_the_numpy_code(shape, nshape, affine, dtype, tol):
    from ember._aten import nn_norm as _norm

    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    w = rng.standard_normal(nshape).astype(dtype) if affine else None
    b = rng.standard_normal(nshape).astype(dtype) if affine else None
    got = lowerings.layer_norm(x, w, b, nshape, 1e-5)
    want = _norm._layer_norm_forward(x, w, b, nshape, 1e-5)
    for a, e in zip(got, want):
        assert a.shape == e.shape and a.dtype == e.dtype
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol)
    g = rng.standard_normal(shape).astype(dtype)
    for needs in ((True, affine, affine), (False, affine, False), (True, False, False)):
        node = _Node((nshape, 1e-5), needs)
        got = lowerings.layer_norm_backward(node, g, x, w, b, want[1], want[2])
        ref = _norm._layer_norm_vjp(g, x, w, b, want[1], want[2], nshape, needs)
        for a, e in zip(got, ref):
            assert (a is None) == (e is None)
            if a is not None:
                np.testing.assert_allclose(a, e, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_c_embedding_gradient_is_np_add_at_exactly(dtype):
    from ember._aten import nn_embedding as Fn

    rng = np.random.default_rng(6)
    idx = rng.integers(0, 9, (4, 30))  # many repeats: the order of the additions matters
    g = rng.standard_normal((4, 30, 5)).astype(dtype)
    for padding_idx in (-1, 2):
        got = lowerings.embedding_grad(g, (idx, 0), 9, padding_idx, None)
        want = Fn._embedding_vjp(g, (idx, 0), 9, padding_idx, None)
        np.testing.assert_array_equal(got, want)
    with pytest.raises(IndexError):
        lowerings.embedding_grad(g, (idx + 100, 0), 9, -1, None)


def _compiled_matches_eager(step, x, params) -> str:
    """Loss and parameter gradients of ``step(x)`` compiled (called twice) equal eager's;
    returns the compiled function's ``explain()``."""
    compiled = ember.compile(step)
    for fn in (compiled, compiled, step):
        for p in params:
            p.grad = None
        loss = fn(x)
        loss.backward()
        if fn is compiled:
            got = [loss.item()] + [p.grad.numpy().copy() for p in params]
    np.testing.assert_allclose(got[0], loss.item(), rtol=1e-5)
    for g, p in zip(got[1:], params):
        np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-4, atol=1e-6)
    return compiled.explain()


def test_a_compiled_transformer_block_uses_them_with_eager_gradients():
    import ember.nn as nn

    ember.manual_seed(0)
    emb, ln = nn.Embedding(11, 8), nn.LayerNorm(8)
    head = nn.Linear(8, 11)

    def step(idx):
        return F.cross_entropy(head(ln(emb(idx))).view(-1, 11), idx.view(-1))

    idx = ember.tensor(np.random.default_rng(0).integers(0, 11, (3, 7)))
    params = [*emb.parameters(), *ln.parameters(), *head.parameters()]
    report = _compiled_matches_eager(step, idx, params)
    want = "C loops for EmbeddingBackward0, LogSoftmaxBackward0, NativeLayerNormBackward0"
    assert want in report, report


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 2e-6)])
@pytest.mark.parametrize("shape", [(64, 65), (4, 2, 8, 8), (3, 1), (7,)], ids=str)
def test_c_softmax_and_log_softmax_equal_the_numpy_code(shape, dtype, tol):
    from ember._aten import reduction as R

    rng = np.random.default_rng(8)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if len(shape) == 4:  # a causal mask, as attention writes it
        x = np.where(np.tril(np.ones(shape[-2:], bool)), x, -np.inf).astype(dtype)
    if len(shape) == 2 and shape[1] > 1:  # rows of -inf, +inf, a NaN: NumPy's NaNs
        x[3], x[6], x[5, 2] = -np.inf, np.inf, np.nan
    g = rng.standard_normal(shape).astype(dtype)
    dim = len(shape) - 1
    ops = [
        (lowerings.softmax, lowerings.softmax_grad, R._softmax_forward, R.SoftmaxBackward0),
        (
            lowerings.log_softmax,
            lowerings.log_softmax_grad,
            R._log_softmax_forward,
            R.LogSoftmaxBackward0,
        ),
    ]
    with np.errstate(all="ignore"):
        for forward, grad, numpy_forward, cls in ops:
            want = numpy_forward(x, dim)
            got = forward(x, dim)
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
            rule = cls._rules["self"][0]
            np.testing.assert_allclose(
                grad(g, want, dim), rule(g, want, dim), rtol=tol, atol=tol, equal_nan=True
            )
    # another dim than the last: the NumPy code
    if len(shape) > 1:
        np.testing.assert_array_equal(lowerings.softmax(x, 0), R._softmax_forward(x, 0))


def _attention_inputs(rng, shape, ev, dtype):
    q, k = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
    v = rng.standard_normal(shape[:-1] + (ev,)).astype(dtype)
    return q, k, v


ATTENTION_CASES = [
    ((16, 4, 32, 16), 16, "causal", np.float32, 2e-6),  # the tiny GPT's heads
    ((2, 3, 5, 7), 4, None, np.float64, 1e-13),  # value dim != key dim, odd sizes
    ((3, 6, 8), 8, "float", np.float64, 1e-13),  # 3-d, an additive float mask
    ((1, 2, 9, 4), 3, "rows", np.float32, 2e-6),  # rows masked everywhere, a NaN
]


@pytest.mark.parametrize("shape, ev, mask, dtype, tol", ATTENTION_CASES, ids=str)
def test_c_attention_forward_equals_the_numpy_code(shape, ev, mask, dtype, tol):
    from ember._aten import nn_attention as _attention

    rng = np.random.default_rng(11)
    q, k, v = _attention_inputs(rng, shape, ev, dtype)
    length = shape[-2]
    bias = None
    if mask == "causal":
        bias = np.where(np.tri(length, dtype=bool), 0, -np.inf).astype(dtype)
    elif mask == "float":
        bias = rng.standard_normal((1, length, length)).astype(dtype)
    elif mask == "rows":
        bias = np.zeros((length, length), dtype)
        bias[2] = -np.inf  # a query that sees no key: output 0, as torch's flash kernel
        q[0, 1, 4, 2] = np.nan
    got = lowerings.attention(q, k, v, bias, 0.375, 1)
    want = _attention._sdpa_forward(q, k, v, bias, 0.375, 1)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)
    if mask == "rows":
        assert not np.any(got[1][..., 2, :]) and np.isnan(got[0][0, 1, 4]).all()


def test_attention_the_loop_does_not_cover_runs_the_numpy_code():
    from ember._aten import nn_attention as _attention

    rng = np.random.default_rng(12)
    q, k, v = _attention_inputs(rng, (2, 4, 6, 5), 5, np.float32)
    per_batch = np.zeros((2, 1, 6, 6), np.float32)  # a mask that differs between heads
    per_batch[1, 0, :, 0] = -np.inf
    kv2 = (k[:, :2].copy(), v[:, :2].copy())  # grouped-query attention
    cases = [(q, k, v, per_batch, 1), (q, *kv2, None, 2), (q.astype(np.float16), k, v, None, 1)]
    for args in cases:
        with np.errstate(all="ignore"):
            got = lowerings.attention(*args[:3], args[3], 0.5, args[4])
            want = _attention._sdpa_forward(*args[:3], args[3], 0.5, args[4])
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    module = lowerings._attention_module(np.dtype(np.float32), q, v)
    out, probs = np.empty((2, 4, 6, 5), np.float32), np.empty((2, 4, 6, 6), np.float32)
    with pytest.raises(TypeError, match="attention kernel: arguments"):
        module.attention(q, k, v[..., :4], None, 0.5, out, probs)  # a wrong size


def test_a_compiled_causal_attention_model_uses_the_loop_with_eager_gradients():
    import ember.nn as nn

    ember.manual_seed(0)
    qkv, proj = nn.Linear(16, 48), nn.Linear(16, 16)

    def step(x):
        q, k, v = qkv(x).view(2, 8, 3, 2, 8).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return proj(y.transpose(1, 2).reshape(2, 8, 16)).square().mean()

    report = _compiled_matches_eager(
        step, ember.randn(2, 8, 16), [*qkv.parameters(), *proj.parameters()]
    )
    assert "ScaledDotProductFlashAttentionForCpuBackward0" in report
