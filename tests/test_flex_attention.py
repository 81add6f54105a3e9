"""ember.nn.attention.flex_attention against torch's (its eager CPU path): block masks,
outputs with score_mod / mask_mod / GQA / fully masked rows, the log-sum-exp, and
gradients (which torch's CPU build refuses: checked against the same math in torch ops)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(0)
Q = _RNG.standard_normal((2, 4, 8, 4)).astype(np.float32)
K = _RNG.standard_normal((2, 2, 8, 4)).astype(np.float32)
V = _RNG.standard_normal((2, 2, 8, 3)).astype(np.float32)
BIAS = _RNG.standard_normal((8, 8)).astype(np.float32)


def _fa(m):
    import importlib

    return importlib.import_module(f"{m.__name__}.nn.attention.flex_attention")


def causal(b, h, q, kv):
    return q >= kv


def early_docs(b, h, q, kv):
    return (b == 1) | (kv < 6)


def row3_empty(b, h, q, kv):
    return (q != 3) & (kv <= q)


def _run(m, case):
    fa = _fa(m)
    q, k, v = (m.tensor(a) for a in (Q, K, V))
    bias = m.tensor(BIAS)

    def score_mod(score, b, h, qi, ki):
        return score + bias[qi, ki] * (h + 1)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case == "plain":
            return [fa.flex_attention(q, q, q)]
        if case == "gqa_causal":
            bm = fa.create_block_mask(causal, None, None, 8, 8, BLOCK_SIZE=4)
            return [fa.flex_attention(q, k, v, block_mask=bm, enable_gqa=True)]
        if case == "score_mod":
            mask = fa.and_masks(causal, early_docs)
            bm = fa.create_block_mask(mask, 2, None, 8, 8, BLOCK_SIZE=4)
            out = fa.flex_attention(
                q, k, v, score_mod=score_mod, block_mask=bm, enable_gqa=True, scale=0.3
            )
            return [out]
        if case == "empty_row_lse":
            bm = fa.create_block_mask(row3_empty, None, 4, 8, 8, BLOCK_SIZE=2)
            out, aux = fa.flex_attention(q, q, q, block_mask=bm, return_aux=fa.AuxRequest(lse=True))
            return [out, aux.lse]
        if case == "block_mask":
            bm = fa.create_block_mask(fa.or_masks(causal, early_docs), 2, 1, 8, 8, BLOCK_SIZE=4)
            sliced = bm[1]
            return [
                bm.kv_num_blocks,
                bm.kv_indices,
                bm.full_kv_num_blocks,
                bm.full_kv_indices,
                bm.q_num_blocks,
                bm.q_indices,
                bm.to_dense(),
                fa.create_mask(fa.or_masks(causal, early_docs), 2, 1, 8, 8),
                m.tensor(bm.sparsity()),
                sliced.kv_num_blocks,
                bm._adjust(4, 4).kv_num_blocks,
            ]
    raise AssertionError(case)


@pytest.mark.parametrize(
    "case", ["plain", "gqa_causal", "score_mod", "empty_row_lse", "block_mask"]
)
def test_matches_torch(case):
    got, want = _run(ember, case), _run(torch, case)
    for g, w in zip(got, want):
        assert str(g.dtype) == str(w.dtype) and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def test_printing_matches_torch():
    shown = []
    for m in (ember, torch):
        bm = _fa(m).create_block_mask(row3_empty, None, 4, 8, 8, BLOCK_SIZE=2)
        shown.append((str(bm), repr(bm), bm.shape))
    assert shown[0] == shown[1]


def _reference_grads(score):
    """Gradients of the same attention written with torch's plain ops."""
    q, k, v = (torch.tensor(a, requires_grad=True) for a in (Q, K, V))
    bias = torch.tensor(BIAS, requires_grad=True)
    kk, vv = k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1)
    s = q @ kk.transpose(-2, -1) * 0.3
    if score:
        s = s + bias * torch.arange(1, 5).view(1, 4, 1, 1)
    keep = torch.ones(8, 8, dtype=torch.bool).tril()
    s = s.masked_fill(~keep, float("-inf"))
    out = torch.softmax(s, dim=-1) @ vv
    (out * torch.arange(3.0)).sum().backward()
    return [t.grad for t in (q, k, v, bias)]


def test_gradients_flow_to_inputs_and_captured_tensors():
    fa = _fa(ember)
    q, k, v = (ember.tensor(a, requires_grad=True) for a in (Q, K, V))
    bias = ember.tensor(BIAS, requires_grad=True)

    def score_mod(score, b, h, qi, ki):
        return score + bias[qi, ki] * (h + 1)

    bm = fa.create_block_mask(causal, None, None, 8, 8, BLOCK_SIZE=4)
    out = fa.flex_attention(q, k, v, score_mod=score_mod, block_mask=bm, enable_gqa=True, scale=0.3)
    (out * ember.arange(3.0)).sum().backward()
    for g, w in zip((q.grad, k.grad, v.grad, bias.grad), _reference_grads(True)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)


def test_fully_masked_rows_give_zero_output_and_finite_gradients():
    fa = _fa(ember)
    q = ember.tensor(Q, requires_grad=True)
    bm = fa.create_block_mask(row3_empty, None, None, 8, 8, BLOCK_SIZE=2)
    out, aux = fa.flex_attention(q, q, q, block_mask=bm, return_aux=fa.AuxRequest(lse=True))
    assert (out[:, :, 3] == 0).all() and ember.isneginf(aux.lse[:, :, 3]).all()
    (out.sum() + aux.lse[:, :, :3].sum()).backward()
    assert ember.isfinite(q.grad).all()


@pytest.mark.parametrize(
    "call",
    [
        lambda fa, t: fa.flex_attention(t, t[:, :3], t[:, :3]),
        lambda fa, t: fa.flex_attention(t, t[:, :3], t[:, :3], enable_gqa=True),
        lambda fa, t: fa.flex_attention(t, t, t, return_lse=True, return_aux=fa.AuxRequest()),
        lambda fa, t: fa.flex_attention(t, t, t, return_aux=fa.AuxRequest(max_scores=True)),
        lambda fa, t: fa.flex_attention(t[0], t[0], t[0]),
        lambda fa, t: fa.flex_attention(
            t, t, t, block_mask=fa.create_block_mask(causal, None, None, 16, 16)
        ),
        lambda fa, t: fa.flex_attention(
            t, t, t, block_mask=fa.create_block_mask(causal, None, None, 8, 8, BLOCK_SIZE=4)[0]
        ),
        lambda fa, t: fa.create_block_mask(lambda s, b, h, q, kv: s, None, None, 8, 8),
        lambda fa, t: fa.flex_attention(t, t, t, kernel_options={"BACKEND": "NOPE"}),
    ],
)
def test_errors_match_torch(call):
    def error(m):
        try:
            call(_fa(m), m.tensor(Q))
        except Exception as e:  # noqa: BLE001 (the error is what is compared)
            return type(e), str(e)
        return None

    assert error(ember) == error(torch)
