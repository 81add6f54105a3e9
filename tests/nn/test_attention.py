"""scaled_dot_product_attention, multi_head_attention_forward and MultiheadAttention against
torch 2.13: values, input and parameter gradients (float64, 1e-6), grad_fn names, errors;
gradcheck / gradgradcheck and forward mode of the sdpa op; dropout's distribution."""

import itertools
import math
import warnings

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfwd
import torch.nn.functional as TF

import ember
import ember.autograd.forward_ad as efwd
from ember._aten.nn_attention import scaled_dot_product_attention
from ember.autograd import gradcheck, gradgradcheck
from ember.nn.attention import SDPBackend, sdpa_kernel
from ember.nn.functional import multi_head_attention_forward
from ember.nn.modules.multihead import MultiheadAttention, NonDynamicallyQuantizableLinear

RNG = np.random.default_rng(7)
FLASH = "ScaledDotProductFlashAttentionForCpuBackward0"


def _close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _np(t):
    return t.detach().numpy()


def _run_both(fn_e, fn_t, arrays, masks=(), seed=0):
    """Outputs of ``fn(lib, *tensors, *masks)`` and gradients of a random projection of the
    first output for ember and torch; returns (ember out, torch out)."""
    es = [ember.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    em = [None if m is None else ember.tensor(m) for m in masks]
    tm = [None if m is None else torch.tensor(m) for m in masks]
    oe, ot = fn_e(*es, *em), fn_t(*ts, *tm)
    _close(_np(oe), _np(ot))
    u = np.random.default_rng(seed).standard_normal(tuple(ot.shape))
    (oe * ember.tensor(u)).sum().backward()
    (ot * torch.tensor(u)).sum().backward()
    for e, t in zip(es, ts):
        _close(e.grad.numpy(), t.grad.numpy())
    return oe, ot


# -- scaled_dot_product_attention ---------------------------------------------------------------

BOOL_MASK = RNG.random((4, 6)) > 0.4
BOOL_MASK[1] = False  # a fully masked row: zeros (torch's kernels agree)
FLOAT_MASK = np.where(BOOL_MASK, RNG.standard_normal((4, 6)), -np.inf)

SDPA_CASES = {
    "plain": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), None, {}),
    "causal": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), None, {"is_causal": True}),
    "bool_mask": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), BOOL_MASK, {}),
    "float_mask": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), FLOAT_MASK, {}),
    "mask_4d": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), RNG.random((2, 1, 4, 6)) > 0.3, {}),
    "mask_and_causal": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), BOOL_MASK, {"is_causal": True}),
    "scale": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), None, {"scale": 0.7}),
    "negative_scale": ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), None, {"scale": -0.4}),
    "gqa": ((2, 6, 4, 5), (2, 2, 6, 5), (2, 2, 6, 5), None, {"enable_gqa": True}),
    "gqa_causal": (
        (1, 4, 5, 3),
        (1, 1, 5, 3),
        (1, 1, 5, 3),
        None,
        {"enable_gqa": True, "is_causal": True},
    ),
    # torch's math path (the graph ends in matmul's node):
    "3d_mask": ((3, 4, 5), (3, 6, 5), (3, 6, 5), BOOL_MASK, {}),
    "3d_causal_value_dim": ((3, 4, 5), (3, 6, 5), (3, 6, 7), None, {"is_causal": True}),
    "2d": ((4, 5), (6, 5), (6, 7), FLOAT_MASK, {"scale": 0.3}),
    "heads_broadcast": ((2, 3, 4, 5), (2, 1, 6, 5), (2, 1, 6, 5), None, {}),
    "mask_3d_on_4d": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), RNG.random((3, 4, 6)) > 0.3, {}),
    "5d": ((1, 2, 2, 3, 4), (1, 2, 2, 5, 4), (1, 2, 2, 5, 4), None, {"is_causal": True}),
}


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_matches_torch(case):
    qs, ks, vs, mask, kw = SDPA_CASES[case]
    arrays = [RNG.standard_normal(s) for s in (qs, ks, vs)]
    oe, ot = _run_both(
        lambda q, k, v, m: scaled_dot_product_attention(q, k, v, attn_mask=m, **kw),
        lambda q, k, v, m: TF.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw),
        arrays,
        (mask,),
    )
    assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__


def test_sdpa_grad_fn_is_the_flash_node_with_its_inputs():
    q, k = ember.randn(1, 2, 3, 4, requires_grad=True), ember.randn(1, 1, 5, 4, requires_grad=True)
    out = scaled_dot_product_attention(q, k, k, enable_gqa=True)
    assert type(out.grad_fn).__name__ == FLASH
    assert [type(f).__name__ for f, _ in out.grad_fn.next_functions] == ["AccumulateGrad"] * 3
    assert out.grad_fn.next_functions[1][0] is out.grad_fn.next_functions[2][0]
    with ember.no_grad():
        assert scaled_dot_product_attention(q, k, k, enable_gqa=True).grad_fn is None


def test_sdpa_mask_that_requires_grad_gets_its_gradient():
    arrays = [RNG.standard_normal(s) for s in ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), (4, 6))]
    oe, ot = _run_both(
        lambda q, k, v, m: scaled_dot_product_attention(q, k, v, attn_mask=m),
        lambda q, k, v, m: TF.scaled_dot_product_attention(q, k, v, attn_mask=m),
        arrays,
    )
    assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__ == "UnsafeViewBackward0"


def test_sdpa_math_backend_is_the_composite():
    q = ember.randn(1, 2, 3, 4, requires_grad=True)
    with sdpa_kernel(SDPBackend.MATH):
        out = scaled_dot_product_attention(q, q, q)
    assert type(out.grad_fn).__name__ == "UnsafeViewBackward0"
    _close(_np(out), _np(scaled_dot_product_attention(q, q, q)), 1e-6)


def test_sdpa_fully_masked_rows_give_zero_values_and_gradients():
    q = ember.randn(1, 1, 3, 4, dtype=ember.float64, requires_grad=True)
    mask = ember.tensor([[True, True], [False, False], [True, False]])
    kv = ember.randn(1, 1, 2, 4, dtype=ember.float64, requires_grad=True)
    out = scaled_dot_product_attention(q, kv, kv, attn_mask=mask)
    assert np.all(_np(out)[0, 0, 1] == 0)
    out.sum().backward()
    assert np.all(q.grad.numpy()[0, 0, 1] == 0)
    assert np.isfinite(kv.grad.numpy()).all()


def test_sdpa_is_stable_for_large_scores():
    q = ember.full((1, 1, 2, 3), 300.0, dtype=ember.float64)
    k = ember.tensor([[[[300.0, 300.0, 300.0], [-300.0, 0.0, 0.0]]]], dtype=ember.float64)
    out = scaled_dot_product_attention(q, k, k)
    _close(
        _np(out), _np(TF.scaled_dot_product_attention(*(torch.tensor(_np(t)) for t in (q, k, k))))
    )
    assert np.isfinite(_np(out)).all()


@pytest.mark.parametrize("case", ["plain", "bool_mask", "mask_and_causal", "gqa", "negative_scale"])
def test_sdpa_gradcheck_and_gradgradcheck(case):
    qs, ks, vs, mask, kw = SDPA_CASES[case]
    small = lambda s: s[:-2] + (min(s[-2], 3), min(s[-1], 3))  # noqa: E731
    rng = np.random.default_rng(1)
    xs = [ember.tensor(rng.standard_normal(small(s)), requires_grad=True) for s in (qs, ks, vs)]
    m = None if mask is None else ember.tensor(mask[..., :3, :3])

    def fn(q, k, v):
        return scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)

    assert type(fn(*xs).grad_fn).__name__ == FLASH
    assert gradcheck(fn, xs)
    assert gradgradcheck(fn, xs)


def test_sdpa_double_backward_matches_torch_math_path():
    """torch's flash node has no double backward: compare with its math path (3-D inputs)."""
    arrays = [RNG.standard_normal(s) for s in ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4))]
    u = RNG.standard_normal((1, 2, 3, 4))
    vs = [RNG.standard_normal(a.shape) for a in arrays]

    def second(lib, sdpa, xs, squeeze):
        ins = [x[0] for x in xs] if squeeze else xs
        out = sdpa(*ins, attn_mask=lib.tensor(BOOL_MASK[:3, :5]))
        uu = lib.tensor(u[0] if squeeze else u)
        gs = lib.autograd.grad((out * uu).sum(), xs, create_graph=True)
        total = sum((g * lib.tensor(v)).sum() for g, v in zip(gs, vs))
        return [g.detach().numpy() for g in lib.autograd.grad(total, xs)]

    e = second(
        ember,
        scaled_dot_product_attention,
        [ember.tensor(a, requires_grad=True) for a in arrays],
        False,
    )
    t = second(
        torch,
        TF.scaled_dot_product_attention,
        [torch.tensor(a, requires_grad=True) for a in arrays],
        True,
    )
    for a, b in zip(e, t):
        _close(a, b, 1e-8)


def test_sdpa_forward_mode_matches_torch_math_path_and_reverse_mode():
    arrays = [RNG.standard_normal(s) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 4))]
    tangents = [RNG.standard_normal(a.shape) for a in arrays]
    with efwd.dual_level():
        primals = [ember.tensor(a[None], requires_grad=True) for a in arrays]
        duals = [efwd.make_dual(p, ember.tensor(t[None])) for p, t in zip(primals, tangents)]
        out = scaled_dot_product_attention(*duals, is_causal=True)
        assert type(out.grad_fn).__name__ == FLASH  # the op's own forward mode (its composite)
        e_tan = efwd.unpack_dual(out).tangent.detach().numpy()[0]
    with tfwd.dual_level():
        duals = [tfwd.make_dual(torch.tensor(a), torch.tensor(t)) for a, t in zip(arrays, tangents)]
        t_tan = tfwd.unpack_dual(TF.scaled_dot_product_attention(*duals, is_causal=True)).tangent
    _close(e_tan, t_tan.numpy(), 1e-8)
    # <u, J v> == <J^T u, v>
    xs = [ember.tensor(a[None], requires_grad=True) for a in arrays]
    u = RNG.standard_normal(e_tan.shape)[None]
    scaled_dot_product_attention(*xs, is_causal=True).backward(ember.tensor(u))
    jtu = sum(float((x.grad.numpy()[0] * t).sum()) for x, t in zip(xs, tangents))
    assert float((u[0] * e_tan).sum()) == pytest.approx(jtu, rel=1e-9)


def test_sdpa_float32():
    arrays = [
        RNG.standard_normal(s).astype(np.float32)
        for s in ((2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8))
    ]
    oe = scaled_dot_product_attention(*(ember.tensor(a) for a in arrays), is_causal=True)
    ot = TF.scaled_dot_product_attention(*(torch.tensor(a) for a in arrays), is_causal=True)
    assert oe.dtype == ember.float32
    _close(_np(oe), _np(ot), 1e-5)


def test_sdpa_dropout_distribution():
    ember.manual_seed(0)
    q = ember.zeros(1, 1, 400, 8)  # uniform attention over 400 keys
    v = ember.ones(1, 1, 400, 8)
    out = scaled_dot_product_attention(q, q, v, dropout_p=0.25).numpy()
    # each output = (kept fraction) / 0.75: mean 1, std sqrt(p / (1 - p) / 400)
    assert abs(out.mean() - 1.0) < 0.02
    assert abs(out[0, 0, :, 0].std() - math.sqrt(0.25 / 0.75 / 400)) < 0.01
    assert np.all(scaled_dot_product_attention(q, q, v, dropout_p=1.0).numpy() == 0)
    out = scaled_dot_product_attention(q.requires_grad_(), q, v, dropout_p=0.5)
    assert type(out.grad_fn).__name__ == "UnsafeViewBackward0"  # torch's math path


@pytest.mark.parametrize(
    "args, kwargs",
    [
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)), {"dropout_p": 1.5}),
        (((5,), (5,), (5,)), {}),
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)), {"attn_mask": np.ones(6, bool)}),
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)), {"attn_mask": np.ones((5, 6), bool)}),
        (((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)), {"attn_mask": np.ones((4, 6), np.int64)}),
        (
            ((3, 4, 5), (3, 6, 5), (3, 6, 5)),
            {"attn_mask": np.ones((4, 6), bool), "is_causal": True},
        ),
        (((2, 6, 4, 5), (2, 4, 6, 5), (2, 4, 6, 5)), {"enable_gqa": True}),
        (((2, 6, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)), {}),
    ],
)
def test_sdpa_errors_match_torch(args, kwargs):
    arrays = [RNG.standard_normal(s) for s in args]
    kw_e = {k: ember.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    kw_t = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    with pytest.raises(Exception) as te:
        TF.scaled_dot_product_attention(*(torch.tensor(a) for a in arrays), **kw_t)
    with pytest.raises(type(te.value)) as ee:
        scaled_dot_product_attention(*(ember.tensor(a) for a in arrays), **kw_e)
    assert str(ee.value) == str(te.value)


def test_sdpa_dtype_errors_match_torch():
    q = np.ones((1, 1, 2, 3))
    for e_args, t_args in [
        (
            (ember.tensor(q), ember.tensor(q, dtype=ember.float32), ember.tensor(q)),
            (torch.tensor(q), torch.tensor(q, dtype=torch.float32), torch.tensor(q)),
        ),
        ((ember.tensor(q).long(),) * 3, (torch.tensor(q).long(),) * 3),
    ]:
        with pytest.raises(RuntimeError) as te:
            TF.scaled_dot_product_attention(*t_args)
        with pytest.raises(RuntimeError, match=None) as ee:
            scaled_dot_product_attention(*e_args)
        assert str(ee.value) == str(te.value)


# -- MultiheadAttention ---------------------------------------------------------------------------


def _mha_pair(**kw):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(**kw).double().eval()
    em = MultiheadAttention(**kw).double().eval()
    em.load_state_dict(
        {k: ember.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    )
    return tm, em


def _mha_masks(kind, n, lq, ls, heads):
    """(attn_mask, key_padding_mask) arrays for a grid entry."""
    rng = np.random.default_rng(11)
    attn = kpm = None
    if kind in ("bool", "bool+kpm"):
        attn = rng.random((lq, ls)) > 0.7
        attn[:, 0] = False  # keep a key for every query (no fully masked row)
    if kind == "float":
        attn = rng.standard_normal((n * heads, lq, ls))
    if kind == "causal":
        attn = np.triu(np.full((lq, ls), -np.inf), 1)
    if kind in ("kpm", "bool+kpm"):
        kpm = np.zeros((n, ls), bool)
        kpm[0, -2:] = True
    return attn, kpm


MHA_GRID = [
    dict(batch_first=bf, masks=m, need_weights=nw, average=avg, variant=var)
    for bf, m, (nw, avg), var in itertools.product(
        (False, True),
        ("none", "bool", "float", "kpm", "bool+kpm", "causal"),
        ((True, True), (True, False), (False, True)),
        ("self", "cross", "kvdim", "bias_kv_zero_attn", "no_bias"),
    )
    if not (var == "kvdim" and m == "causal")
]


@pytest.mark.parametrize("p", MHA_GRID)
def test_multihead_attention_matches_torch(p):
    e, heads, n, lq, ls = 8, 2, 3, 4, 4 if p["variant"] == "self" else 5
    ls = lq if p["masks"] == "causal" or p["variant"] == "self" else 5
    kw = dict(embed_dim=e, num_heads=heads, batch_first=p["batch_first"])
    kdim = vdim = e
    if p["variant"] == "kvdim":
        kdim, vdim = 3, 6
        kw.update(kdim=kdim, vdim=vdim)
    if p["variant"] == "bias_kv_zero_attn":
        kw.update(add_bias_kv=True, add_zero_attn=True)
    if p["variant"] == "no_bias":
        kw.update(bias=False)
    tm, em = _mha_pair(**kw)
    attn, kpm = _mha_masks(p["masks"], n, lq, ls, heads)
    if p["variant"] == "bias_kv_zero_attn" and attn is not None and attn.ndim == 3:
        attn = None  # a 3-D mask must cover the extra keys' positions
    shape = lambda length, d: (n, length, d) if p["batch_first"] else (length, n, d)  # noqa: E731
    q = RNG.standard_normal(shape(lq, e))
    if p["variant"] == "self":
        arrays = [q]
        order = lambda x: (x, x, x)  # noqa: E731
    else:
        arrays = [q, RNG.standard_normal(shape(ls, kdim)), RNG.standard_normal(shape(ls, vdim))]
        if p["variant"] == "cross":
            arrays = arrays[:2]
            order = lambda x, m: (x, m, m)  # noqa: E731
        else:
            order = lambda x, k, v: (x, k, v)  # noqa: E731
    causal = p["masks"] == "causal"
    call = dict(need_weights=p["need_weights"], average_attn_weights=p["average"], is_causal=causal)

    def run(module, lib, *xs):
        m_attn = None if attn is None else lib.tensor(attn)
        m_kpm = None if kpm is None else lib.tensor(kpm)
        out, w = module(*order(*xs), key_padding_mask=m_kpm, attn_mask=m_attn, **call)
        run.weights[lib.__name__] = w
        return out

    run.weights = {}
    _run_both(lambda *xs: run(em, ember, *xs), lambda *xs: run(tm, torch, *xs), arrays)
    we, wt = run.weights["ember"], run.weights["torch"]
    assert (we is None) == (wt is None)
    if wt is not None:
        _close(_np(we), _np(wt))
    for (name, pe), (_, pt) in zip(em.named_parameters(), tm.named_parameters()):
        assert pe.grad is not None, name
        _close(pe.grad.numpy(), pt.grad.numpy())


def test_multihead_attention_unbatched_and_functional():
    tm, em = _mha_pair(embed_dim=6, num_heads=3)
    x = RNG.standard_normal((4, 6))
    kpm = np.array([False, False, True, False])

    def fn(lib, module):
        def f(x):
            return module(x, x, x, key_padding_mask=lib.tensor(kpm))[0]

        return f

    _run_both(fn(ember, em), fn(torch, tm), [x])
    args = lambda m: (
        m.in_proj_weight,
        m.in_proj_bias,
        None,
        None,
        False,
        0.0,
        m.out_proj.weight,
        m.out_proj.bias,
    )  # noqa: E731, E501
    x3 = RNG.standard_normal((4, 2, 6))
    oe, we = multi_head_attention_forward(*(ember.tensor(x3),) * 3, 6, 3, *args(em), training=False)
    ot, wt = TF.multi_head_attention_forward(
        *(torch.tensor(x3),) * 3, 6, 3, *args(tm), training=False
    )
    _close(_np(oe), _np(ot))
    _close(_np(we), _np(wt))


def test_multihead_attention_parameters_init_and_repr():
    for kw in [dict(), dict(kdim=3, vdim=5, add_bias_kv=True), dict(bias=False, batch_first=True)]:
        tm = torch.nn.MultiheadAttention(8, 2, **kw)
        em = MultiheadAttention(8, 2, **kw)
        assert list(em.state_dict()) == list(tm.state_dict())
        assert repr(em) == repr(tm)
        for (n, pe), (_, pt) in zip(em.named_parameters(), tm.named_parameters()):
            assert tuple(pe.shape) == tuple(pt.shape), n
        if em.in_proj_bias is not None:
            assert np.all(em.in_proj_bias.detach().numpy() == 0)
            assert np.all(em.out_proj.bias.detach().numpy() == 0)
        w = em.in_proj_weight if em.in_proj_weight is not None else em.q_proj_weight
        bound = math.sqrt(6.0 / (w.shape[0] + w.shape[1]))
        assert np.abs(w.detach().numpy()).max() <= bound
    assert type(em.out_proj) is NonDynamicallyQuantizableLinear
    assert isinstance(em.out_proj, ember.nn.modules.linear.Linear)


def test_multihead_attention_errors_match_torch():
    for args in [(0, 2), (8, 3)]:
        with pytest.raises((ValueError, AssertionError)) as te:
            torch.nn.MultiheadAttention(*args)
        with pytest.raises(type(te.value)) as ee:
            MultiheadAttention(*args)
        assert str(ee.value) == str(te.value)
    tm, em = _mha_pair(embed_dim=4, num_heads=2)
    x = np.ones((3, 2, 4))
    for call in [
        lambda lib, m: m(lib.tensor(x), lib.tensor(x), lib.tensor(x), is_causal=True),
        lambda lib, m: m(lib.tensor(x), lib.tensor(x), lib.tensor(x), attn_mask=lib.ones(2, 2)),
        lambda lib, m: m(lib.tensor(x[0]), lib.tensor(x), lib.tensor(x)),
        lambda lib, m: m(
            lib.tensor(x), lib.tensor(x), lib.tensor(x), key_padding_mask=lib.ones(2, 3).long()
        ),  # noqa: E501
    ]:
        with pytest.raises(Exception) as te:
            call(torch, tm)
        with pytest.raises(type(te.value)) as ee:
            call(ember, em)
        assert str(ee.value) == str(te.value)


def test_mismatched_mask_types_warn_like_torch():
    tm, em = _mha_pair(embed_dim=4, num_heads=2)
    x = np.ones((3, 2, 4))
    messages = {}
    for lib, m in ((torch, tm), (ember, em)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m(
                *(lib.tensor(x),) * 3,
                key_padding_mask=lib.zeros(2, 3, dtype=lib.bool),
                attn_mask=lib.zeros(3, 3),
            )
        messages[lib.__name__] = [str(x.message) for x in w if x.category is UserWarning]
    assert messages["ember"] == messages["torch"]
    assert messages["ember"][0] == (
        "Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type "
        "for both instead."
    )
