"""Attention (``ember/nn/_attention.py``): ``scaled_dot_product_attention``, one declared op
(``ScaledDotProductFlashAttentionForCpuBackward0``, torch's CPU flash kernel) on 4-D inputs,
and torch's math path (a composition ending in matmul's node) elsewhere.

torch's flash kernel has neither forward mode nor double backward (torch raises), so the
entries compared with torch switch those off; the ``torch=False`` entries check ember's
forward mode (the op's composite) against reverse mode. The op's double backward is checked
in ``tests/nn/test_attention.py`` (gradgradcheck, and torch's math path as reference). Masks
are constants built in the entry; a fully masked query row is included (its output and
gradient are 0).

Entries without torch do not run the generic double-backward check: its fallback (central
differences of the first derivative) evaluates the first derivative inside ``numgrad``'s
``no_grad``, where it is 0 for every op.
"""

import numpy as np

import ember._aten.nn_attention as _attention

from . import Op, S


def sdpa(m):
    if m.__name__ == "torch":
        return m.nn.functional.scaled_dot_product_attention
    return _attention.scaled_dot_product_attention


_MASK = np.array(
    [
        [True, False, True, True, False],
        [False, False, False, False, False],  # fully masked: zeros
        [True, True, False, True, True],
    ]
)
_FLOAT_MASK = np.where(_MASK, np.linspace(-1.0, 1.0, 15).reshape(3, 5), -np.inf)


def _mask(m, x, values):
    t = m.tensor(values)
    return t if t.dtype == m.bool else t.to(x.dtype)


Q, KV = S(2, 2, 3, 4), S(2, 2, 5, 4)

OPS = [
    # -- the flash op (torch has no forward mode or double backward for it) -------------------
    Op("sdpa", lambda m, q, k, v: sdpa(m)(q, k, v), (Q, KV, KV), forward=False, double=False),
    Op(
        "sdpa_bool_mask_causal",
        lambda m, q, k, v: sdpa(m)(q, k, v, attn_mask=_mask(m, q, _MASK), is_causal=True),
        (Q, KV, KV),
        forward=False,
        double=False,
    ),
    Op(
        "sdpa_float_mask_scale",
        lambda m, q, k, v: sdpa(m)(q, k, v, attn_mask=_mask(m, q, _FLOAT_MASK), scale=0.3),
        (Q, KV, KV),
        forward=False,
        double=False,
    ),
    Op(
        "sdpa_gqa",
        lambda m, q, k, v: sdpa(m)(q, k, v, enable_gqa=True),
        (S(1, 4, 3, 2), S(1, 2, 4, 2), S(1, 2, 4, 2)),
        forward=False,
        double=False,
    ),
    # ember's forward mode and double backward of the op (its composite), without torch:
    Op(
        "sdpa_higher_order",
        lambda m, q, k, v: sdpa(m)(q, k, v, attn_mask=_mask(m, q, _MASK)),
        (Q, KV, KV),
        torch=False,
        double=False,  # the generic fallback differentiates under no_grad (see module doc)
    ),
    Op(
        "sdpa_gqa_causal_higher_order",
        lambda m, q, k, v: sdpa(m)(q, k, v, is_causal=True, enable_gqa=True, scale=-0.5),
        (S(1, 4, 3, 2), S(1, 2, 4, 2), S(1, 2, 4, 2)),
        torch=False,
        double=False,  # as above
    ),
    # -- torch's math path: compositions, compared in full ------------------------------------
    Op(
        "sdpa_3d_mask",
        lambda m, q, k, v: sdpa(m)(q, k, v, attn_mask=_mask(m, q, _MASK)),
        (S(2, 3, 4), S(2, 5, 4), S(2, 5, 3)),
    ),
    Op(
        "sdpa_learned_mask",
        lambda m, q, k, v, mask: sdpa(m)(q, k, v, attn_mask=mask, is_causal=False),
        (Q, KV, KV, S(3, 5)),
        # torch runs its flash kernel (no forward mode) when the mask has no tangent.
        forward=False,
    ),
    Op(
        "sdpa_2d_causal",
        lambda m, q, k, v: sdpa(m)(q, k, v, is_causal=True),
        (S(3, 4), S(5, 4), S(5, 4)),
    ),
]
