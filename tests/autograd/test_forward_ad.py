"""Forward-mode AD (``ember.autograd.forward_ad``) against reverse mode and torch.

One op table drives the main test: for every differentiable op reachable as
``ember.<op>`` or a Tensor method, the tangent forward mode gives equals the reverse-mode
Jacobian (``autograd.functional.jacobian``) applied to the input tangents, in float64,
with every input dual and with only the first one dual; and it equals torch's
``forward_ad`` result. The rest covers the API and its errors, in-place ops, custom
Functions, forward-over-reverse Hessian-vector products and the functional API.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD
from ember.autograd.functional import hessian, jacobian

torch = pytest.importorskip("torch")
import torch.autograd.forward_ad as tfwAD  # noqa: E402

FW = {ember: fwAD, torch: tfwAD}


# -- the op table ----------------------------------------------------------------------------


@dataclass(frozen=True)
class In:
    """An input: its shape and the domain of its values."""

    shape: tuple
    kind: str = "any"  # any | pos (> 0.2) | unit (|x| < 0.9) | gt1 (> 1.1) | int (small ints)


def S(*shape):
    return In(shape)


def P(*shape):
    return In(shape, "pos")


def U(*shape):
    return In(shape, "unit")


def G1(*shape):
    return In(shape, "gt1")


@dataclass(frozen=True)
class Op:
    name: str
    fn: Callable  # fn(module, *inputs) -> Tensor or tuple of Tensors
    ins: tuple
    torch: bool = True  # also compare with torch's forward AD
    reverse: bool = True  # also compare with ember's reverse mode


def _idx(m, values):
    return m.tensor(values)


OPS = [
    # -- elementwise, unary (ember's _UNARY_ROWS and friends)
    *[
        Op(name, (lambda n: lambda m, x: getattr(x, n)())(name), (kind(3, 4),))
        for name, kind in [
            ("exp", S),
            ("exp2", S),
            ("expm1", S),
            ("log", P),
            ("log2", P),
            ("log10", P),
            ("log1p", P),
            ("sqrt", P),
            ("rsqrt", P),
            ("sin", S),
            ("cos", S),
            ("tan", U),
            ("asin", U),
            ("acos", U),
            ("atan", S),
            ("sinh", S),
            ("cosh", S),
            ("tanh", S),
            ("asinh", S),
            ("acosh", G1),
            ("atanh", U),
            ("sigmoid", S),
            ("relu", S),
            ("abs", S),
            ("sign", S),
            ("reciprocal", P),
            ("square", S),
            ("floor", S),
            ("ceil", S),
            ("round", S),
            ("trunc", S),
            ("frac", S),
            ("erf", S),
            ("neg", S),
        ]
    ],
    Op("torch.exp", lambda m, x: m.exp(x), (S(5),)),
    Op("-x", lambda m, x: -x, (S(2, 3),)),
    Op("abs(x)", lambda m, x: abs(x), (S(2, 3),)),
    Op("arcsin", lambda m, x: m.arcsin(x), (U(4),)),
    # -- elementwise, binary (broadcasting, scalar operands, alpha)
    Op("add", lambda m, x, y: x + y, (S(3, 4), S(3, 4))),
    Op("add_bcast", lambda m, x, y: m.add(x, y), (S(3, 4), S(4))),
    Op("add_bcast_both", lambda m, x, y: x + y, (S(3, 1), S(1, 4))),
    Op("add_alpha", lambda m, x, y: m.add(x, y, alpha=2.5), (S(3, 4), S(3, 1))),
    Op("add_scalar", lambda m, x: x + 2.0, (S(3),)),
    Op("radd", lambda m, x: 2 + x, (S(3),)),
    Op("add_0d", lambda m, x, y: x + y, (S(3, 2), S())),
    Op("sub", lambda m, x, y: x - y, (S(3, 4), S(4))),
    Op("sub_alpha", lambda m, x, y: m.sub(x, y, alpha=3), (S(3), S(3))),
    Op("rsub", lambda m, x: 2.0 - x, (S(3),)),
    Op("rsub_fn", lambda m, x: m.rsub(x, 2.0, alpha=2), (S(3),)),
    Op("mul", lambda m, x, y: x * y, (S(3, 4), S(3, 4))),
    Op("mul_bcast", lambda m, x, y: m.mul(x, y), (S(2, 3, 4), S(3, 1))),
    Op("mul_same", lambda m, x: x * x, (S(4),)),
    Op("mul_scalar", lambda m, x: x * 3.5, (S(3),)),
    Op("rmul", lambda m, x: 3 * x, (S(3),)),
    Op("div", lambda m, x, y: x / y, (S(3, 4), P(4))),
    Op("div_scalar", lambda m, x: x / 4.0, (S(3),)),
    Op("rtruediv", lambda m, x: 2.0 / x, (P(3),)),
    Op("div_0d", lambda m, x, y: m.div(x, y), (S(3), P())),
    Op("pow_2", lambda m, x: x**2, (S(3, 2),)),
    Op("pow_frac", lambda m, x: x**2.5, (P(3, 2),)),
    Op("pow_neg", lambda m, x: m.pow(x, -1.5), (P(3),)),
    Op("pow_0", lambda m, x: x**0, (S(3),)),
    Op("pow_tensor", lambda m, x, y: x**y, (P(3, 2), S(3, 2))),
    Op("pow_tensor_bcast", lambda m, x, y: m.pow(x, y), (P(3, 2), S(2))),
    Op("rpow", lambda m, x: 2.0**x, (S(4),)),
    Op("maximum", lambda m, x, y: m.maximum(x, y), (S(3, 4), S(3, 4))),
    Op("minimum", lambda m, x, y: m.minimum(x, y), (S(3, 4), S(4))),
    Op("max_binary", lambda m, x, y: m.max(x, y), (S(5), S(5))),
    Op("atan2", lambda m, x, y: m.atan2(x, y), (S(3, 4), S(3, 4))),
    Op("where", lambda m, x, y: m.where(x > 0, x, y), (S(3, 4), S(4))),
    Op("where_scalar", lambda m, x: m.where(x > 0, x, 0.5), (S(3, 4),)),
    Op("clamp", lambda m, x: x.clamp(-0.5, 0.5), (S(3, 4),)),
    Op("clamp_min", lambda m, x: m.clamp_min(x, 0.1), (S(6),)),
    Op("clamp_max", lambda m, x: x.clamp_max(0.1), (S(6),)),
    Op("clip", lambda m, x: m.clip(x, max=0.2), (S(6),)),
    Op("clamp_tensor", lambda m, x, lo, d: m.clamp(x, lo, lo + d), (S(3, 4), S(4), P(3, 4))),
    # Crossed bounds (min > max give max): ember's reverse mode differs from torch there.
    Op(
        "clamp_crossed",
        lambda m, x, lo, hi: m.clamp(x, lo, hi),
        (S(3, 4), S(4), S(3, 4)),
        reverse=False,
    ),
    Op("fmod", lambda m, x, y: m.fmod(x, y), (S(3, 4), P(4))),
    Op("remainder", lambda m, x, y: m.remainder(x, y), (S(3, 4), P(3, 4))),
    Op("remainder_scalar", lambda m, x: x % 0.7, (S(5),)),
    Op("lerp", lambda m, x, y: m.lerp(x, y, 0.3), (S(3, 4), S(3, 4))),
    Op("lerp_tensor", lambda m, x, y, w: x.lerp(y, w), (S(3, 4), S(4), S(3, 4))),
    # -- reductions
    Op("sum", lambda m, x: x.sum(), (S(3, 4),)),
    Op("sum_dim", lambda m, x: x.sum(1), (S(3, 4),)),
    Op("sum_dims_keepdim", lambda m, x: m.sum(x, (0, 2), keepdim=True), (S(2, 3, 4),)),
    Op("nansum", lambda m, x: m.nansum(x, 0), (S(3, 4),)),
    Op("mean", lambda m, x: x.mean(), (S(3, 4),)),
    Op("mean_dim", lambda m, x: x.mean(-1, keepdim=True), (S(3, 4),)),
    Op("prod", lambda m, x: x.prod(), (S(2, 3),)),
    Op("prod_dim", lambda m, x: x.prod(1), (S(3, 4),)),
    Op(
        "prod_zero",
        lambda m, x: (x * m.tensor([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]], dtype=m.float64)).prod(1),
        (S(2, 3),),
    ),
    Op("max", lambda m, x: x.max(), (S(3, 4),)),
    Op("max_dim", lambda m, x: x.max(1).values, (S(3, 4),)),
    Op("min_dim_keepdim", lambda m, x: m.min(x, 0, keepdim=True).values, (S(3, 4),)),
    Op("min", lambda m, x: m.min(x), (S(3, 4),)),
    Op("amax", lambda m, x: m.amax(x, 1), (S(3, 4),)),
    Op("amin", lambda m, x: x.amin((0, 1)), (S(2, 3, 2),)),
    Op("aminmax", lambda m, x: tuple(m.aminmax(x, dim=1)), (S(3, 4),)),
    Op("median", lambda m, x: x.median(), (S(3, 5),)),
    Op("median_dim", lambda m, x: x.median(1).values, (S(3, 5),)),
    Op("std", lambda m, x: x.std(), (S(3, 4),)),
    Op("std_dim", lambda m, x: x.std(1, correction=0), (S(3, 4),)),
    Op("var", lambda m, x: m.var(x, 0, keepdim=True), (S(3, 4),)),
    Op("var_mean", lambda m, x: tuple(m.var_mean(x, 1)), (S(3, 4),)),
    Op("std_mean", lambda m, x: tuple(m.std_mean(x)), (S(3, 4),)),
    Op("norm", lambda m, x: x.norm(), (S(3, 4),)),
    Op("norm_p1_dim", lambda m, x: x.norm(p=1, dim=1), (S(3, 4),)),
    Op("norm_p3", lambda m, x: m.norm(x, p=3), (S(3, 4),)),
    Op("norm_inf", lambda m, x: x.norm(p=float("inf"), dim=0), (S(3, 4),)),
    Op("logsumexp", lambda m, x: x.logsumexp(1), (S(3, 4),)),
    Op("softmax", lambda m, x: x.softmax(1), (S(3, 4),)),
    Op("log_softmax", lambda m, x: m.log_softmax(x, 0), (S(3, 4),)),
    Op("cumsum", lambda m, x: x.cumsum(1), (S(3, 4),)),
    Op("cumprod", lambda m, x: m.cumprod(x, 0), (S(4, 3),)),
    Op(
        "cumprod_zero",
        lambda m, x: (x * m.tensor([1.0, 0.0, 1.0, 0.0, 1.0], dtype=m.float64)).cumprod(0),
        (S(5),),
    ),
    # -- shape ops
    Op("reshape", lambda m, x: x.reshape(4, 3), (S(3, 4),)),
    Op("view", lambda m, x: x.view(-1), (S(3, 4),)),
    Op("reshape_copy", lambda m, x: x.t().reshape(12), (S(3, 4),)),
    Op("flatten", lambda m, x: m.flatten(x, 1), (S(2, 3, 2),)),
    Op("ravel", lambda m, x: x.ravel(), (S(3, 4),)),
    Op("unflatten", lambda m, x: x.unflatten(1, (2, 2)), (S(3, 4),)),
    Op("squeeze", lambda m, x: x.squeeze(), (S(3, 1, 4),)),
    Op("squeeze_dim", lambda m, x: x.squeeze(1), (S(3, 1, 4),)),
    Op("unsqueeze", lambda m, x: x.unsqueeze(-1), (S(3, 4),)),
    Op("transpose", lambda m, x: x.transpose(0, 2), (S(2, 3, 4),)),
    Op("permute", lambda m, x: x.permute(2, 0, 1), (S(2, 3, 4),)),
    Op("t", lambda m, x: x.t(), (S(3, 4),)),
    Op("T", lambda m, x: x.T, (S(3, 4),)),
    Op("mT", lambda m, x: x.mT, (S(2, 3, 4),)),
    Op("movedim", lambda m, x: m.movedim(x, 0, -1), (S(2, 3, 4),)),
    Op("expand", lambda m, x: x.expand(2, 3, 4), (S(3, 1),)),
    Op("expand_as", lambda m, x: x.expand_as(m.ones(3, 4)), (S(4),)),
    Op("broadcast_to", lambda m, x: m.broadcast_to(x, (3, 4)), (S(4),)),
    Op("broadcast_tensors", lambda m, x, y: m.broadcast_tensors(x, y), (S(3, 1), S(4))),
    Op("repeat", lambda m, x: x.repeat(2, 1, 3), (S(3, 2),)),
    Op("tile", lambda m, x: m.tile(x, (2,)), (S(3, 2),)),
    Op("cat", lambda m, x, y: m.cat([x, y], 1), (S(3, 2), S(3, 4))),
    Op("concat_3", lambda m, x, y, z: m.concat([x, y, z]), (S(2), S(3), S(1))),
    Op("stack", lambda m, x, y: m.stack([x, y], 1), (S(3, 4), S(3, 4))),
    Op("hstack", lambda m, x, y: m.hstack([x, y]), (S(3), S(2))),
    Op("vstack", lambda m, x, y: m.vstack([x, y]), (S(3), S(3))),
    Op("dstack", lambda m, x, y: m.dstack([x, y]), (S(2, 3), S(2, 3))),
    Op("split", lambda m, x: x.split(2, 1), (S(3, 5),)),
    Op("split_sizes", lambda m, x: m.split(x, [1, 3], 1), (S(3, 4),)),
    Op("chunk", lambda m, x: x.chunk(3), (S(5, 2),)),
    Op("tensor_split", lambda m, x: m.tensor_split(x, [1, 3], dim=1), (S(2, 5),)),
    Op("unbind", lambda m, x: x.unbind(1), (S(3, 4),)),
    Op("narrow", lambda m, x: x.narrow(1, 1, 2), (S(3, 4),)),
    Op("flip", lambda m, x: x.flip(0, 1), (S(3, 4),)),
    Op("fliplr", lambda m, x: m.fliplr(x), (S(3, 4),)),
    Op("flipud", lambda m, x: x.flipud(), (S(3, 4),)),
    Op("roll", lambda m, x: x.roll(1, 0), (S(3, 4),)),
    Op("roll_flat", lambda m, x: m.roll(x, 5), (S(3, 4),)),
    Op("clone", lambda m, x: x.clone(), (S(3, 4),)),
    Op("contiguous", lambda m, x: x.t().contiguous(), (S(3, 4),)),
    Op("atleast_2d", lambda m, x: m.atleast_2d(x), (S(4),)),
    Op("to_float32", lambda m, x: x.to(m.float32).double(), (S(3),)),
    # -- indexing
    Op("getitem_int", lambda m, x: x[1], (S(3, 4),)),
    Op("getitem_slice", lambda m, x: x[:, 1:3], (S(3, 4),)),
    Op("getitem_step", lambda m, x: x[::2, None, -1], (S(5, 4),)),
    Op("getitem_ellipsis", lambda m, x: x[..., 0], (S(2, 3, 4),)),
    Op("getitem_list", lambda m, x: x[[0, 2, 2]], (S(3, 4),)),
    Op("getitem_tensor", lambda m, x: x[_idx(m, [1, 0]), 2], (S(3, 4),)),
    Op("getitem_mask", lambda m, x: x[x > 0], (S(3, 4),)),
    Op("select", lambda m, x: m.select(x, 1, -1), (S(3, 4),)),
    Op("index_select", lambda m, x: x.index_select(1, _idx(m, [3, 0, 3])), (S(3, 4),)),
    Op("gather", lambda m, x: x.gather(1, _idx(m, [[0, 0], [3, 1], [2, 2]])), (S(3, 4),)),
    Op("take", lambda m, x: m.take(x, _idx(m, [0, 11, 5])), (S(3, 4),)),
    Op("masked_fill", lambda m, x: x.masked_fill(x > 0, 2.0), (S(3, 4),)),
    Op("masked_fill_tensor", lambda m, x, v: x.masked_fill(x > 0, v), (S(3, 4), S())),
    Op("masked_select", lambda m, x: m.masked_select(x, x > 0), (S(3, 4),)),
    Op(
        "index_put",
        lambda m, x, v: x.index_put((_idx(m, [0, 2]),), v),
        (S(3, 4), S(2, 4)),
    ),
    Op(
        "index_put_accumulate",
        lambda m, x, v: x.index_put((_idx(m, [0, 0]), _idx(m, [1, 1])), v, accumulate=True),
        (S(3, 4), S(2)),
    ),
    Op("index_add", lambda m, x, s: x.index_add(0, _idx(m, [2, 0, 2]), s), (S(3, 4), S(3, 4))),
    Op(
        "scatter",
        lambda m, x, s: x.scatter(1, _idx(m, [[0, 3], [1, 2]]), s),
        (S(2, 4), S(2, 3)),
    ),
    Op("scatter_value", lambda m, x: x.scatter(1, _idx(m, [[0], [2]]), 0.5), (S(2, 4),)),
    Op(
        "scatter_add",
        lambda m, x, s: m.scatter_add(x, 0, _idx(m, [[0, 1, 0], [0, 1, 1]]), s),
        (S(2, 3), S(2, 3)),
    ),
    Op("tril", lambda m, x: x.tril(), (S(3, 4),)),
    Op("triu", lambda m, x: m.triu(x, 1), (S(3, 4),)),
    Op("diag_vec", lambda m, x: m.diag(x, 1), (S(3),)),
    Op("diag_mat", lambda m, x: x.diag(), (S(3, 4),)),
    Op("diagonal", lambda m, x: x.diagonal(0, 1, 2), (S(2, 3, 3),)),
    Op("diag_embed", lambda m, x: m.diag_embed(x), (S(2, 3),)),
    Op("select_scatter", lambda m, x, s: m.select_scatter(x, s, 0, 1), (S(3, 4), S(4))),
    Op("slice_scatter", lambda m, x, s: m.slice_scatter(x, s, 1, 0, 4, 2), (S(3, 4), S(3, 2))),
    Op("diagonal_scatter", lambda m, x, s: m.diagonal_scatter(x, s), (S(3, 3), S(3))),
    # -- linear algebra
    Op("matmul_2d", lambda m, a, b: a @ b, (S(3, 4), S(4, 2))),
    Op("matmul_vm", lambda m, a, b: m.matmul(a, b), (S(4), S(4, 2))),
    Op("matmul_mv", lambda m, a, b: a.matmul(b), (S(3, 4), S(4))),
    Op("matmul_dot", lambda m, a, b: a @ b, (S(4), S(4))),
    Op("matmul_3d_2d", lambda m, a, b: a @ b, (S(2, 3, 4), S(4, 2))),
    Op("matmul_bcast", lambda m, a, b: a @ b, (S(2, 1, 3, 4), S(3, 4, 2))),
    Op("mm", lambda m, a, b: m.mm(a, b), (S(3, 4), S(4, 2))),
    Op("mv", lambda m, a, b: a.mv(b), (S(3, 4), S(4))),
    Op("bmm", lambda m, a, b: m.bmm(a, b), (S(2, 3, 4), S(2, 4, 2))),
    Op("dot", lambda m, a, b: m.dot(a, b), (S(4), S(4))),
    Op("vdot", lambda m, a, b: a.vdot(b), (S(4), S(4))),
    Op("outer", lambda m, a, b: m.outer(a, b), (S(3), S(4))),
    Op("ger", lambda m, a, b: a.ger(b), (S(3), S(2))),
    Op("inner", lambda m, a, b: m.inner(a, b), (S(3, 4), S(2, 4))),
    Op("addmm", lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2), (S(2), S(3, 4), S(4, 2))),
    Op("addmv", lambda m, c, a, b: c.addmv(a, b), (S(3), S(3, 4), S(4))),
    Op("baddbmm", lambda m, c, a, b: m.baddbmm(c, a, b), (S(2, 3, 2), S(2, 3, 4), S(2, 4, 2))),
    Op("einsum", lambda m, a, b: m.einsum("ij,jk->ik", a, b), (S(3, 4), S(4, 2))),
    Op("einsum_diag", lambda m, a: m.einsum("ii->i", a), (S(3, 3),)),
    Op(
        "einsum_3",
        lambda m, a, b, c: m.einsum("bi,bj,j->b", a, b, c),
        (S(2, 3), S(2, 4), S(4)),
    ),
    Op("tensordot", lambda m, a, b: m.tensordot(a, b, dims=2), (S(2, 3, 4), S(3, 4, 2))),
    Op("tensordot_dims", lambda m, a, b: m.tensordot(a, b, ([0], [1])), (S(3, 2), S(4, 3))),
    Op("kron", lambda m, a, b: m.kron(a, b), (S(2, 3), S(2, 2))),
    Op("trace", lambda m, a: a.trace(), (S(3, 4),)),
    Op("cross", lambda m, a, b: m.cross(a, b, dim=1), (S(2, 3), S(2, 3))),
    # -- in-place ops (the tensor takes the tangent of the out-of-place result)
    Op("mul_", lambda m, x, y: x.clone().mul_(y), (S(3, 4), S(4))),
    Op("sin_", lambda m, x: x.clone().sin_(), (S(3, 4),)),
    Op("iadd", lambda m, x, y: _iadd(x.clone(), y), (S(3), S(3))),
    Op("copy_", lambda m, x: m.zeros(2, 3, dtype=m.float64).copy_(x), (S(3),)),
    Op("setitem", lambda m, x, y: _setitem(x.clone(), y), (S(3, 4), S(4))),
    Op("zero_", lambda m, x, y: x.clone().zero_() + y, (S(3), S(3))),
    # -- compositions
    Op(
        "mlp",
        lambda m, x, w, b: (m.tanh(x @ w + b) ** 2).sum(1).log_softmax(0),
        (S(4, 3), S(3, 5), S(5)),
    ),
]


def _iadd(x, y):
    x += y
    return x


def _setitem(x, y):
    x[1] = y * 2
    x[0, 1:3] = 0.0
    return x


OP_IDS = [op.name for op in OPS]
assert len(set(OP_IDS)) == len(OP_IDS)


def _values(spec: In, rng) -> np.ndarray:
    a = rng.standard_normal(spec.shape)
    if spec.kind == "pos":
        a = np.abs(a) + 0.2
    elif spec.kind == "unit":
        a = np.tanh(a) * 0.9
    elif spec.kind == "gt1":
        a = np.abs(a) + 1.1
    return np.asarray(a, dtype=np.float64)


def _case(op: Op):
    rng = np.random.default_rng(zlib.crc32(op.name.encode()))
    primals = [_values(s, rng) for s in op.ins]
    tangents = [rng.standard_normal(s.shape) for s in op.ins]
    return primals, tangents


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _forward(m, op: Op, primals, tangents, dual_mask):
    """(primal, tangent) of each output when inputs ``dual_mask[i]`` carry tangents."""
    fw = FW[m]
    with fw.dual_level():
        ins = [
            fw.make_dual(m.tensor(p), m.tensor(t)) if d else m.tensor(p)
            for p, t, d in zip(primals, tangents, dual_mask)
        ]
        outs = _as_tuple(op.fn(m, *ins))
        res = []
        for o in outs:
            primal, tangent = fw.unpack_dual(o)
            res.append(
                (primal.detach().numpy(), None if tangent is None else tangent.detach().numpy())
            )
    return res


def _reverse_jvp(op: Op, primals, tangents, dual_mask):
    """The reverse-mode Jacobians (one vjp per output element) applied to the tangents."""
    xs = tuple(ember.tensor(p) for p in primals)
    outs = _as_tuple(op.fn(ember, *xs))
    jac = jacobian(lambda *a: op.fn(ember, *a), xs)
    if not isinstance(op.fn(ember, *xs), (tuple, list)):
        jac = (jac,)
    res = []
    for i, out in enumerate(outs):
        total = np.zeros(out.numel())
        for j, (t, d) in enumerate(zip(tangents, dual_mask)):
            if d:
                jij = jac[i][j].numpy().reshape(out.numel(), -1)
                total = total + jij @ np.ravel(t)
        res.append(total.reshape(tuple(out.shape)))
    return res


def _masks(op: Op):
    if len(op.ins) == 1:
        return [("all", (True,))]
    return [("all", (True,) * len(op.ins)), ("first", (True,) + (False,) * (len(op.ins) - 1))]


CASES = [
    pytest.param(op, mask, id=f"{op.name}-{label}") for op in OPS for label, mask in _masks(op)
]


@pytest.mark.parametrize("op,mask", CASES)
def test_jvp_matches_reverse_mode_and_torch(op, mask):
    primals, tangents = _case(op)
    got = _forward(ember, op, primals, tangents, mask)
    for primal, tangent in got:
        if tangent is not None:
            assert tangent.shape == primal.shape
            assert tangent.dtype == primal.dtype
    assert got[0][1] is not None, "no tangent"
    if op.reverse:
        want = _reverse_jvp(op, primals, tangents, mask)
        assert len(got) == len(want)
        for (primal, tangent), ref in zip(got, want):
            if tangent is None:  # an output that does not depend on a dual input
                tangent = np.zeros_like(primal)
            np.testing.assert_allclose(tangent, ref, rtol=1e-7, atol=1e-9)
    if op.torch:
        theirs = _forward(torch, op, primals, tangents, mask)
        for (primal, tangent), (tprimal, ttangent) in zip(got, theirs):
            np.testing.assert_allclose(primal, tprimal, rtol=1e-10, atol=1e-12)
            assert (tangent is None) == (ttangent is None)
            if tangent is not None:
                np.testing.assert_allclose(tangent, ttangent, rtol=1e-7, atol=1e-9)


# -- the API and its errors, against torch ---------------------------------------------------


def _err(fn):
    try:
        fn()
    except Exception as ex:  # noqa: BLE001
        return type(ex).__name__, str(ex)
    return None


def _same_error(call):
    """``call(module)`` raises the same exception type and message in both libraries."""
    t = _err(lambda: call(torch))
    e = _err(lambda: call(ember))
    assert t is not None, "torch did not raise"
    assert e == t
    return e


def _in_level(fn):
    def call(m):
        with FW[m].dual_level():
            return fn(m)

    return call


def _f64(m, *shape):
    return m.ones(*shape, dtype=m.float64)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda m: FW[m].make_dual(_f64(m, 3), _f64(m, 3)), id="make_dual_no_level"),
        pytest.param(lambda m: FW[m].exit_dual_level(), id="exit_no_level"),
        pytest.param(
            lambda m: FW[m].make_dual(_f64(m, 3), _f64(m, 3), level=0), id="make_dual_level0"
        ),
        pytest.param(
            _in_level(lambda m: FW[m].make_dual(_f64(m, 3), _f64(m, 4))), id="shape_mismatch"
        ),
        pytest.param(
            _in_level(lambda m: FW[m].make_dual(_f64(m, 2, 3), _f64(m, 3, 2))), id="shape_2d"
        ),
        pytest.param(_in_level(lambda m: FW[m].make_dual(m.tensor(1.0), m.ones(1))), id="shape_0d"),
        pytest.param(
            _in_level(lambda m: FW[m].make_dual(m.arange(3), _f64(m, 3))), id="int_primal"
        ),
        pytest.param(
            _in_level(lambda m: FW[m].make_dual(_f64(m, 3), m.arange(3))), id="int_tangent"
        ),
        pytest.param(
            _in_level(lambda m: FW[m].make_dual(_f64(m, 3), _f64(m, 3), level=1)),
            id="make_dual_bad_level",
        ),
        pytest.param(
            _in_level(
                lambda m: FW[m].make_dual(FW[m].make_dual(_f64(m, 2), _f64(m, 2)), _f64(m, 2))
            ),
            id="dual_of_dual",
        ),
        pytest.param(
            _in_level(
                lambda m: FW[m].make_dual(_f64(m, 2), FW[m].make_dual(_f64(m, 2), _f64(m, 2)))
            ),
            id="dual_tangent",
        ),
        pytest.param(
            _in_level(
                lambda m: FW[m].unpack_dual(FW[m].make_dual(_f64(m, 2), _f64(m, 2)), level=3)
            ),
            id="unpack_bad_level",
        ),
        pytest.param(_in_level(lambda m: FW[m].unpack_dual(3.0)), id="unpack_non_tensor"),
        pytest.param(_in_level(lambda m: FW[m].enter_dual_level()), id="nested_levels"),
        pytest.param(_in_level(lambda m: FW[m].exit_dual_level(level=1)), id="exit_wrong_level"),
    ],
)
def test_api_errors_match_torch(call):
    _same_error(call)


def test_nested_level_error_leaves_the_level_usable():
    with fwAD.dual_level() as level:
        assert level == 0
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            with fwAD.dual_level():
                pass
        d = fwAD.make_dual(ember.ones(2), ember.ones(2))
        assert fwAD.unpack_dual(d * 3).tangent.tolist() == [3.0, 3.0]


def test_exit_twice_errors_like_torch():
    def call(m):
        FW[m].enter_dual_level()
        FW[m].exit_dual_level()
        FW[m].exit_dual_level()

    _same_error(call)


def test_unpack_dual_of_plain_tensors():
    x = ember.ones(3, dtype=ember.float64)
    assert fwAD.unpack_dual(x) == (x, None)  # no level: the tensor itself
    with fwAD.dual_level():
        primal, tangent = fwAD.unpack_dual(x)
        assert tangent is None
        assert primal is not x and primal._base is x
        assert fwAD.unpack_dual(ember.arange(3)).tangent is None
        assert fwAD.unpack_dual(x, level=4).tangent is None
    r = fwAD.unpack_dual(x)
    assert type(r).__name__ == "UnpackedDualTensor" and r._fields == ("primal", "tangent")


def test_make_dual_is_a_view_keeping_the_tangent_object():
    x = ember.ones(3, dtype=ember.float64)
    v = ember.full((3,), 2.0, dtype=ember.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        assert d is not x and d._base is x
        assert fwAD.unpack_dual(d).tangent is v
        p = fwAD.unpack_dual(d).primal
        assert p._base is x and fwAD.unpack_dual(p).tangent is None
        assert fwAD.unpack_dual(x).tangent is None  # the base itself is not dual


def test_tangents_are_dropped_when_the_level_exits():
    x = ember.ones(3, dtype=ember.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.ones(3, dtype=ember.float64))
        y = d.exp()
        z = d * 2  # its JVP has not run yet when the level exits
    assert fwAD.unpack_dual(d).tangent is None
    assert fwAD.unpack_dual(y).tangent is None
    assert fwAD.unpack_dual(z).tangent is None
    with fwAD.dual_level():  # a new level (number 0 again) does not resurrect them
        assert fwAD.unpack_dual(y).tangent is None
        assert fwAD.unpack_dual(y * 2).tangent is None


def test_enter_exit_functions_and_decorator():
    level = fwAD.enter_dual_level()
    try:
        assert level == 0
        d = fwAD.make_dual(ember.ones(2), ember.ones(2))
    finally:
        fwAD.exit_dual_level()
    assert fwAD.unpack_dual(d).tangent is None

    @fwAD.dual_level()
    def f():
        return fwAD.unpack_dual(fwAD.make_dual(ember.ones(1), ember.ones(1)) * 5).tangent

    assert f().tolist() == [5.0]


def test_integer_and_comparison_results_have_no_tangent():
    for m in (ember, torch):
        fw = FW[m]
        with fw.dual_level():
            d = fw.make_dual(m.tensor([1.0, -2.0, 3.0]), m.ones(3))
            for out in (d > 0, d.argmax(), d.long(), m.count_nonzero(d), d.max(0).indices):
                assert fw.unpack_dual(out).tangent is None


def test_tangents_flow_under_no_grad_and_into_float32_tangents():
    for m in (ember, torch):
        fw = FW[m]
        with fw.dual_level():
            d = fw.make_dual(m.tensor([1.0, 2.0]), m.tensor([1.0, 0.5]))
            with m.no_grad():
                y = d.exp()
            assert fw.unpack_dual(y).tangent is not None
            np.testing.assert_allclose(
                fw.unpack_dual(y).tangent.numpy(), np.exp([1.0, 2.0]) * [1.0, 0.5], rtol=1e-6
            )


def test_dual_of_a_tensor_requiring_grad():
    x = ember.ones(2, dtype=ember.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.ones(2, dtype=ember.float64))
        assert d.requires_grad and type(d.grad_fn).__name__ == "ViewBackward0"
        primal = fwAD.unpack_dual(d).primal
        assert primal.grad_fn.name() == "torch::autograd::Identity"
        y = d.sin()
        assert y.grad_fn.name() == "SinBackward0"
        y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([1.0, 1.0]))


def test_plain_dual_results_record_no_graph():
    with fwAD.dual_level():
        d = fwAD.make_dual(ember.ones(2), ember.ones(2))
        y = d.exp() * 2
        assert y.grad_fn is None and not y.requires_grad
        tangent = fwAD.unpack_dual(y).tangent
        assert tangent.grad_fn is None and not tangent.requires_grad


def test_nn_losses_have_forward_rules_like_torch():
    import ember.nn.functional as F

    x = ember.ones(3, dtype=ember.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x * 3, x)
        tangent = fwAD.unpack_dual(F.mse_loss(d, x)).tangent
    # d/dt mean((d - x)^2) along t = ones: mean(2 (d - x)) = 4
    assert tangent.item() == pytest.approx(4.0)


# -- in-place ops ------------------------------------------------------------------------------


def _inplace_scenarios(m):
    fw = FW[m]
    with fw.dual_level():
        d = fw.make_dual(m.tensor([1.0, 2.0, 3.0]), m.tensor([0.5, 1.0, -1.0]))
        a = d.clone()
        a.mul_(d)  # a = d * d
        b = m.zeros(3)
        b.copy_(d[[2, 1, 0]])  # a plain tensor takes the tangent of what is copied in
        c = m.zeros(2, 3)
        c[1] = d  # setitem: tangent rows 0 zero, row 1 d's
        e = d.clone()
        e[0] = 7.0  # overwritten with a constant: zero tangent there
        f = d.clone()
        f.zero_()
        g = m.tensor([1.0, 1.0, 1.0])
        g.add_(d, alpha=2)
        return [fw.unpack_dual(t).tangent.numpy().copy() for t in (a, b, c, e, f, g)]


def test_inplace_ops_match_torch():
    for mine, theirs in zip(_inplace_scenarios(ember), _inplace_scenarios(torch)):
        np.testing.assert_allclose(mine, theirs)


def test_inplace_on_an_input_of_a_pending_jvp():
    # y's JVP needs x's old value: it must run before x is modified in place.
    for m in (ember, torch):
        fw = FW[m]
        with fw.dual_level():
            x = fw.make_dual(m.tensor([1.0, 2.0]), m.tensor([1.0, 1.0]))
            y = x * x
            x.mul_(10)
            x[0] = 5.0
            np.testing.assert_allclose(fw.unpack_dual(y).tangent.numpy(), [2.0, 4.0])


def test_tangent_read_after_a_backward_freed_the_graph():
    # The JVP of y runs when its tangent is first needed; a backward (without
    # create_graph) may have released the node's saved tensors by then.
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    one = ember.ones(2, dtype=ember.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, one)
        y = d.exp()
        ember.autograd.grad(y, x, one)
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.detach().numpy(), np.exp([1, 2]))
        v = d.view(1, 2).max(1).values
        ember.autograd.grad(v, x, ember.ones(1, dtype=ember.float64))
        assert fwAD.unpack_dual(v).tangent.tolist() == [1.0]


# -- custom Functions --------------------------------------------------------------------------


def _exp_function(m):
    class Exp(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            ctx.save_for_forward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

        @staticmethod
        def jvp(ctx, t):
            (y,) = ctx.saved_tensors
            return t * y

    return Exp


def test_custom_function_jvp_matches_torch():
    x0, v0 = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, -0.5])
    res = {}
    for m in (ember, torch):
        fw = FW[m]
        Exp = _exp_function(m)
        with fw.dual_level():
            y = Exp.apply(fw.make_dual(m.tensor(x0), m.tensor(v0))).sin()
            res[m] = fw.unpack_dual(y).tangent.numpy()
    np.testing.assert_allclose(res[ember], res[torch], rtol=1e-12)
    np.testing.assert_allclose(res[ember], np.cos(np.exp(x0)) * np.exp(x0) * v0, rtol=1e-12)


def test_custom_function_jvp_arguments_match_torch():
    def run(m):
        seen = []

        class Two(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, k):
                ctx.k = k
                seen.append(FW[m].unpack_dual(x).tangent)  # forward sees primals
                return x * y, x + y

            @staticmethod
            def backward(ctx, g1, g2):
                return None, None, None

            @staticmethod
            def jvp(ctx, tx, ty, tk):
                seen.extend([tx.tolist(), ty.tolist(), tk, ctx.k])
                return tx * 2, ty

        fw = FW[m]
        with fw.dual_level():
            d = fw.make_dual(m.tensor([1.0, 2.0]), m.tensor([1.0, 3.0]))
            a, b = Two.apply(d, m.tensor([5.0, 6.0]), 3)
            seen.append(fw.unpack_dual(a).tangent.tolist())
            seen.append(fw.unpack_dual(b).tangent.tolist())
        return seen

    assert run(ember) == run(torch)


def test_custom_function_without_jvp_raises_torchs_error():
    def call(m):
        class NoJvp(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        fw = FW[m]
        with fw.dual_level():
            NoJvp.apply(fw.make_dual(_f64(m, 2), _f64(m, 2)))

    name, msg = _same_error(call)
    assert name == "NotImplementedError" and "jvp" in msg


@pytest.mark.parametrize("bad", ["count", "shape"])
def test_custom_function_bad_jvp_results_match_torch(bad):
    def call(m):
        class Bad(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def jvp(ctx, t):
                return (t, t) if bad == "count" else t[:1]

        fw = FW[m]
        with fw.dual_level():
            Bad.apply(fw.make_dual(_f64(m, 2), _f64(m, 2)))

    _same_error(call)


def test_custom_function_outside_a_level_is_unaffected():
    Exp = _exp_function(ember)
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    Exp.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)


# -- higher order: forward-over-reverse and reverse-over-forward -------------------------------


def _hvp_forward_over_reverse(m, A, x0, v0, wrt_dual: bool):
    fw = FW[m]
    x = m.tensor(x0).requires_grad_()
    with fw.dual_level():
        d = fw.make_dual(x, m.tensor(v0))
        y = (m.tanh(m.tensor(A) @ d) ** 2).sum()
        (g,) = m.autograd.grad(y, d if wrt_dual else x, create_graph=True)
        return g.detach().numpy().copy(), fw.unpack_dual(g).tangent.detach().numpy().copy()


@pytest.mark.parametrize("wrt_dual", [True, False], ids=["grad_wrt_dual", "grad_wrt_primal"])
def test_hvp_forward_over_reverse_matches_torch(wrt_dual):
    rng = np.random.default_rng(7)
    A, x0, v0 = rng.standard_normal((50, 50)), rng.standard_normal(50), rng.standard_normal(50)
    g_e, hv_e = _hvp_forward_over_reverse(ember, A, x0, v0, wrt_dual)
    g_t, hv_t = _hvp_forward_over_reverse(torch, A, x0, v0, wrt_dual)
    np.testing.assert_allclose(g_e, g_t, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hv_e, hv_t, rtol=1e-9, atol=1e-11)
    # and against ember's reverse-over-reverse Hessian
    H = hessian(lambda z: (ember.tanh(ember.tensor(A) @ z) ** 2).sum(), ember.tensor(x0))
    np.testing.assert_allclose(hv_e, H.numpy() @ v0, rtol=1e-9, atol=1e-11)


def test_hvp_through_saved_outputs_and_reductions():
    # exp, sigmoid, softmax and std save their outputs for backward: a backward run on dual
    # tensors must see the outputs' tangents.
    rng = np.random.default_rng(3)
    x0, v0 = rng.standard_normal(6), rng.standard_normal(6)

    def f(m, x):
        return (x.exp() * x.sigmoid()).sum() + x.softmax(0).log().sum() * x.std() + x.norm()

    res = {}
    for m in (ember, torch):
        fw = FW[m]
        x = m.tensor(x0).requires_grad_()
        with fw.dual_level():
            (g,) = m.autograd.grad(f(m, fw.make_dual(x, m.tensor(v0))), x, create_graph=True)
            res[m] = fw.unpack_dual(g).tangent.detach().numpy()
    np.testing.assert_allclose(res[ember], res[torch], rtol=1e-9, atol=1e-11)


def test_reverse_over_forward_matches_torch():
    # The tangent is a differentiable function of the primal: d<J v, w>/dx = (H v)-like.
    rng = np.random.default_rng(5)
    x0, v0, w0 = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal(4)
    res = {}
    for m in (ember, torch):
        fw = FW[m]
        x = m.tensor(x0).requires_grad_()
        v = m.tensor(v0).requires_grad_()
        with fw.dual_level():
            y = (fw.make_dual(x, v).sin() * 3).cumsum(0) @ m.tensor(w0)
            jv = fw.unpack_dual(y).tangent
            assert jv.requires_grad
            gx, gv = m.autograd.grad(jv, (x, v))
        res[m] = (gx.numpy(), gv.numpy())
    for a, b in zip(res[ember], res[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# -- autograd.functional with strategy="forward-mode" ----------------------------------------


def test_functional_jacobian_forward_mode_uses_forward_ad(monkeypatch):
    calls = []
    real = fwAD.make_dual
    monkeypatch.setattr(fwAD, "make_dual", lambda *a, **k: calls.append(1) or real(*a, **k))
    x = ember.tensor([0.5, -1.0, 2.0], dtype=ember.float64)
    y = ember.tensor([1.0, 2.0], dtype=ember.float64)

    def f(a, b):
        return (a.sin() * a.sum(), (a[:2] * b).exp())

    fwd = jacobian(f, (x, y), vectorize=True, strategy="forward-mode")
    assert calls, "forward mode was not used"
    rev = jacobian(f, (x, y))
    assert type(fwd) is list and type(fwd[0]) is list  # torch returns lists on this path
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(fwd[i][j].numpy(), rev[i][j].numpy(), rtol=1e-12)


def test_functional_forward_mode_matches_torch():
    import torch.autograd.functional as TF

    x0 = np.array([0.3, -0.7, 1.1])
    w0 = np.array([2.0, 0.5, -1.0])

    def f(m):
        return lambda a, b: (a.sin() * b).sum() + (a * a * b).prod()

    res = {}
    for m, api in ((ember, ember.autograd.functional), (torch, TF)):
        xs = (m.tensor(x0), m.tensor(w0))
        H = api.hessian(f(m), xs, vectorize=True, outer_jacobian_strategy="forward-mode")
        J = api.jacobian(
            lambda a: a.exp() * a.sum(), xs[0], vectorize=True, strategy="forward-mode"
        )
        res[m] = ([[h.detach().numpy() for h in row] for row in H], J.numpy())
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(
                res[ember][0][i][j], res[torch][0][i][j], rtol=1e-10, atol=1e-15
            )
    np.testing.assert_allclose(res[ember][1], res[torch][1], rtol=1e-12)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(
            lambda api, m: api.jacobian(lambda a: a * 2, m.ones(2), strategy="forward-mode"),
            id="jacobian_needs_vectorize",
        ),
        pytest.param(
            lambda api, m: api.hessian(
                lambda a: (a * a).sum(), m.ones(2), outer_jacobian_strategy="forward-mode"
            ),
            id="hessian_needs_vectorize",
        ),
        pytest.param(
            lambda api, m: api.jacobian(
                lambda a: a * 2, m.ones(2), strict=True, vectorize=True, strategy="forward-mode"
            ),
            id="strict",
        ),
        pytest.param(
            lambda api, m: api.jacobian(
                lambda a: a * 2,
                m.ones(2),
                create_graph=True,
                vectorize=True,
                strategy="forward-mode",
            ),
            id="create_graph",
        ),
    ],
)
def test_functional_forward_mode_errors_match_torch(call):
    import torch.autograd.functional as TF

    t = _err(lambda: call(TF, torch))
    e = _err(lambda: call(ember.autograd.functional, ember))
    assert t is not None and e == t


# -- forward AD off: no cost, no behaviour change ------------------------------------------------


def test_no_forward_ad_work_without_a_level(monkeypatch):
    import ember.autograd.recording as rec

    def boom(*args, **kwargs):
        raise AssertionError("forward AD ran without a dual level")

    # Recording reaches the forward-mode path only through its `if _on:` check.
    monkeypatch.setattr(rec, "_record_dual", boom)
    assert rec._on == []
    x = ember.randn(3, 4, requires_grad=True)
    y = (x.sin() * 2).softmax(1).split(2, 1)[0].sum()
    y.backward()
    assert x.grad is not None
    with fwAD.dual_level():
        assert rec._on
    assert rec._on == []
    assert math.isfinite(y.item())


def test_dual_tensor_repr_shows_tangent_like_torch():
    with fwAD.dual_level():
        x = fwAD.make_dual(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 1.0]))
        assert repr(x) == "tensor([1., 2.], tangent=tensor([1., 1.]))"
        assert repr(x * 2) == "tensor([2., 4.], tangent=tensor([2., 2.]))"
    assert repr(x) == "tensor([1., 2.])"
