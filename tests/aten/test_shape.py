"""Shape ops: values, views, grad_fn names, gradients and error texts vs torch and finite
differences."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

torch = pytest.importorskip("torch")

import torch_compare as tc  # noqa: E402  (needs torch: after importorskip)

# -- the case table: (id, input shapes, fn(module, *inputs)) ---------------------------------

CASES = [
    ("view", [(2, 6)], lambda M, x: x.view(3, 4)),
    ("view_tuple", [(2, 6)], lambda M, x: x.view((4, -1))),
    ("view_as", [(2, 6)], lambda M, x: x.view_as(M.zeros(12))),
    ("view_transposed_ok", [(2, 3, 4)], lambda M, x: x.transpose(0, 2).view(4, 3, 2)),
    ("reshape", [(2, 6)], lambda M, x: x.reshape(-1)),
    ("reshape_fn", [(2, 6)], lambda M, x: M.reshape(x, (3, 2, 2))),
    ("reshape_noncontig", [(3, 4)], lambda M, x: x.t().reshape(12)),
    ("reshape_alias", [(2, 3, 4)], lambda M, x: x.transpose(0, 2).reshape(4, 3, 2)),
    ("reshape_as", [(2, 6)], lambda M, x: x.reshape_as(M.zeros(3, 4))),
    ("reshape_alias_1d", [(3, 2)], lambda M, x: x[:, 0].reshape(3, 1)),
    ("flatten", [(2, 3, 4)], lambda M, x: x.flatten()),
    ("flatten_part", [(2, 3, 4)], lambda M, x: M.flatten(x, 1)),
    ("flatten_0d", [()], lambda M, x: x.flatten()),
    ("flatten_noncontig", [(3, 4)], lambda M, x: x.t().flatten()),
    ("ravel", [(3, 4)], lambda M, x: x.t().ravel()),
    ("unflatten", [(2, 6)], lambda M, x: x.unflatten(1, (2, -1))),
    ("squeeze", [(2, 1, 3, 1)], lambda M, x: x.squeeze()),
    ("squeeze_dim", [(2, 1, 3)], lambda M, x: x.squeeze(1)),
    ("squeeze_dim_noop", [(2, 1, 3)], lambda M, x: x.squeeze(0)),
    ("squeeze_dims", [(1, 2, 1)], lambda M, x: M.squeeze(x, (0, 2))),
    ("squeeze_0d", [()], lambda M, x: x.squeeze(0)),
    ("unsqueeze", [(2, 3)], lambda M, x: x.unsqueeze(1)),
    ("unsqueeze_neg", [(2, 3)], lambda M, x: M.unsqueeze(x, -1)),
    ("transpose", [(2, 3, 4)], lambda M, x: x.transpose(0, 2)),
    ("swapaxes", [(2, 3)], lambda M, x: M.swapaxes(x, 0, 1)),
    ("transpose_0d", [()], lambda M, x: x.transpose(0, 0)),
    ("permute", [(2, 3, 4)], lambda M, x: x.permute(2, 0, 1)),
    ("permute_tuple", [(2, 3, 4)], lambda M, x: M.permute(x, (1, -1, 0))),
    ("T", [(2, 3)], lambda M, x: x.T),
    ("T_3d", [(2, 3, 4)], lambda M, x: x.T),
    ("mT", [(2, 3, 4)], lambda M, x: x.mT),
    ("t", [(2, 3)], lambda M, x: x.t()),
    ("t_1d", [(3,)], lambda M, x: M.t(x)),
    ("movedim", [(2, 3, 4)], lambda M, x: x.movedim(0, -1)),
    ("movedim_multi", [(2, 3, 4)], lambda M, x: M.movedim(x, (0, 1), (2, 0))),
    ("expand", [(3, 1)], lambda M, x: x.expand(2, 3, 4)),
    ("expand_minus1", [(3, 1)], lambda M, x: x.expand(-1, 5)),
    ("expand_same", [(3, 4)], lambda M, x: x.expand(3, 4)),
    ("expand_0d", [()], lambda M, x: x.expand(2, 3)),
    ("expand_as", [(4,)], lambda M, x: x.expand_as(M.zeros(3, 4))),
    ("broadcast_to", [(1, 4)], lambda M, x: M.broadcast_to(x, (3, 4))),
    ("broadcast_tensors", [(4,), (3, 1)], lambda M, a, b: M.broadcast_tensors(a, b)),
    ("repeat", [(2, 3)], lambda M, x: x.repeat(2, 1)),
    ("repeat_more", [(2, 3)], lambda M, x: x.repeat(2, 1, 3)),
    ("repeat_tuple", [(3,)], lambda M, x: x.repeat((2, 2))),
    ("repeat_zero", [(2, 3)], lambda M, x: x.repeat(0, 1)),
    ("tile", [(2, 3)], lambda M, x: M.tile(x, (2,))),
    ("cat", [(2, 3), (1, 3)], lambda M, a, b: M.cat([a, b])),
    ("cat_dim1", [(2, 3), (2, 1)], lambda M, a, b: M.cat((a, b), dim=1)),
    ("cat_neg", [(2, 3), (2, 2)], lambda M, a, b: M.cat([a, b], -1)),
    ("concat", [(2, 3), (2, 3)], lambda M, a, b: M.concat([a, b])),
    ("concatenate", [(2,), (3,)], lambda M, a, b: M.concatenate([a, b])),
    ("cat_legacy_empty", [(2, 3), (0,)], lambda M, a, b: M.cat([a, b])),
    ("stack", [(2, 3), (2, 3)], lambda M, a, b: M.stack([a, b])),
    ("stack_dim", [(2, 3), (2, 3)], lambda M, a, b: M.stack([a, b], dim=2)),
    ("stack_0d", [(), ()], lambda M, a, b: M.stack([a, b])),
    ("hstack", [(2, 3), (2, 1)], lambda M, a, b: M.hstack([a, b])),
    ("hstack_1d", [(2,), (3,)], lambda M, a, b: M.hstack([a, b])),
    ("hstack_single", [(3,)], lambda M, x: M.hstack([x])),
    ("dstack_single", [(3,)], lambda M, x: M.dstack((x,))),
    ("vstack", [(3,), (3,)], lambda M, a, b: M.vstack([a, b])),
    ("vstack_0d", [(), ()], lambda M, a, b: M.vstack([a, b])),
    ("dstack", [(2, 3), (2, 3)], lambda M, a, b: M.dstack([a, b])),
    ("atleast_1d", [()], lambda M, x: M.atleast_1d(x)),
    ("atleast_2d", [(3,)], lambda M, x: M.atleast_2d(x)),
    ("atleast_3d", [(3,)], lambda M, x: M.atleast_3d(x)),
    ("split", [(5, 2)], lambda M, x: x.split(2)),
    ("split_dim", [(2, 5)], lambda M, x: M.split(x, 3, dim=1)),
    ("split_sizes", [(5, 2)], lambda M, x: x.split([1, 4])),
    ("split_with_sizes", [(5, 2)], lambda M, x: x.split_with_sizes([2, 0, 3])),
    ("split_partial_use", [(6,)], lambda M, x: x.split(2)[1]),
    ("chunk", [(5, 3)], lambda M, x: x.chunk(3)),
    ("chunk_dim", [(2, 6)], lambda M, x: M.chunk(x, 4, 1)),
    ("tensor_split", [(7, 2)], lambda M, x: x.tensor_split(3)),
    ("tensor_split_idx", [(7, 2)], lambda M, x: M.tensor_split(x, [1, 5])),
    ("unbind", [(3, 2)], lambda M, x: x.unbind()),
    ("unbind_dim", [(3, 2)], lambda M, x: M.unbind(x, 1)),
    ("unbind_one", [(3, 2)], lambda M, x: x.unbind(0)[2]),
    ("iter", [(3, 2)], lambda M, x: tuple(iter(x))),
    ("flip", [(2, 3, 4)], lambda M, x: x.flip(0, 2)),
    ("flip_list", [(2, 3)], lambda M, x: M.flip(x, [-1])),
    ("fliplr", [(2, 3)], lambda M, x: M.fliplr(x)),
    ("flipud", [(2, 3)], lambda M, x: M.flipud(x)),
    ("roll", [(2, 3)], lambda M, x: x.roll(1)),
    ("flip_0d", [()], lambda M, x: x.flip(0)),
    ("roll_0d_nodim", [()], lambda M, x: x.roll(2)),
    ("roll_dim", [(2, 3)], lambda M, x: x.roll(-1, 1)),
    ("roll_multi", [(2, 3, 4)], lambda M, x: M.roll(x, (1, 2), (0, 2))),
    ("narrow", [(4, 3)], lambda M, x: x.narrow(0, 1, 2)),
    ("narrow_neg", [(4, 3)], lambda M, x: M.narrow(x, -1, -2, 2)),
    ("clone", [(2, 3)], lambda M, x: x.clone()),
    ("clone_fn", [(2, 3)], lambda M, x: M.clone(x.t())),
    ("contiguous", [(2, 3)], lambda M, x: x.t().contiguous()),
    ("double", [(2, 3)], lambda M, x: x.float().double()),
    ("half", [(2, 3)], lambda M, x: x.half()),
    ("to_dtype", [(2, 3)], lambda M, x: x.to(M.float32)),
    ("to_device_dtype", [(2, 3)], lambda M, x: x.to("cpu", M.float16)),
    ("to_kw", [(2, 3)], lambda M, x: x.to(dtype=M.float32, copy=True)),
    ("to_other", [(2, 3)], lambda M, x: x.to(M.zeros(1, dtype=M.float32))),
    ("to_python_float", [(2, 3)], lambda M, x: x.float().to(float)),
    ("type_as", [(2, 3)], lambda M, x: x.type_as(M.zeros(1))),
    ("type_str", [(2, 3)], lambda M, x: x.type("torch.FloatTensor")),
    ("long", [(2, 3)], lambda M, x: (x * 3).long()),
    ("int_bool", [(2, 3)], lambda M, x: (x.int(), x.bool(), x.short(), x.byte(), x.char())),
    ("view_then_mul", [(2, 3)], lambda M, x: x.view(3, 2) * x.t()),
    ("chain", [(2, 3, 4)], lambda M, x: x.permute(2, 0, 1).reshape(4, 6)[1:].unsqueeze(0)),
]

CASE_IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_matches_torch(case):
    _, shapes, fn = case
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tc.compare(fn, [tc.arr(rng, s, np.float32) for s in shapes], rng)


# Casts that round through float32/float16 cannot pass a float64 finite-difference check.
NO_GRADCHECK = {
    "long",
    "int_bool",
    "half",
    "to_device_dtype",
    "type_as",
    "type_str",
    "double",
    "to_dtype",
    "to_kw",
    "to_other",
    "to_python_float",
}


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c[0] not in NO_GRADCHECK],
    ids=[i for i in CASE_IDS if i not in NO_GRADCHECK],
)
def test_gradcheck_float64(case):
    _, shapes, fn = case
    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tc.check_gradients(lambda *xs: fn(ember, *xs), [tc.arr(rng, s) for s in shapes], rng)


# The recorded (create_graph) backward: d/dw <J^T w, v> = J v, compared with torch. Every
# case but the casts through low precision, and repeat_zero: its output is empty, so torch's
# first gradient has no graph back to w and torch refuses the second.
DOUBLE = [c for c in CASE_IDS if (c not in NO_GRADCHECK or c == "double") and c != "repeat_zero"]


@pytest.mark.parametrize("cid", DOUBLE)
def test_double_backward_matches_torch(cid):
    _, shapes, fn = CASES[CASE_IDS.index(cid)]
    rng = np.random.default_rng(2)
    arrays = [tc.arr(rng, s) for s in shapes]
    results = []
    for M in (ember, torch):
        xs = [M.tensor(a, requires_grad=True) for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # x.T of 3-D tensors (compared in test_matches_torch)
            outs = [o for o in tc.outs(fn(M, *xs)) if o.requires_grad]
        r = np.random.default_rng(3)
        ws = [
            M.tensor(r.standard_normal(tuple(o.shape)), dtype=o.dtype, requires_grad=True)
            for o in outs
        ]
        gs = M.autograd.grad(outs, xs, ws, create_graph=True, allow_unused=True)
        vs = [r.standard_normal(tuple(x.shape)) for x in xs]
        total = sum((g * M.tensor(v)).sum() for g, v in zip(gs, vs) if g is not None)
        gw = M.autograd.grad(total, ws, allow_unused=True)
        results.append([None if g is None else g.detach().numpy() for g in gw])
    for e, t in zip(*results):
        if t is None:
            assert e is None or not e.any()
        else:
            np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


# -- identity / no-op semantics ----------------------------------------------------------------


def test_noops_return_self():
    x = ember.zeros(2, 3)
    assert x.contiguous() is x
    assert x.float() is x
    assert x.to(ember.float32) is x
    assert x.to("cpu") is x
    assert x.to(x) is x
    assert x.type_as(x) is x
    assert x.to(ember.float32, copy=True) is not x
    v = ember.zeros(3)
    assert v.flatten() is v
    assert x.flatten(1, 1) is x


def test_casts_and_names():
    x = ember.ones(2, requires_grad=True)
    assert x.double().grad_fn.name() == "ToCopyBackward0"
    assert x.double().dtype == ember.float64
    assert x.long().dtype == ember.int64 and x.long().grad_fn is None
    assert x.to(ember.device("cpu"), ember.float64).dtype == ember.float64
    assert x.clone().grad_fn.name() == "CloneBackward0"
    assert x.t().grad_fn.name() == "TBackward0"
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        x.to("cuda")  # what a CPU-only torch build raises


def test_to_numpy_dtype_used_by_engine():
    x = ember.ones(2, dtype=ember.float64)
    assert x.to(np.float32).dtype == ember.float32
    assert x.to(np.dtype("float16")).dtype == ember.float16


def test_mixed_dtype_cat_promotes_and_casts_grads():
    a = ember.ones(2, requires_grad=True)
    b = ember.ones(2, dtype=ember.float64, requires_grad=True)
    i = ember.tensor([1, 2])
    c = ember.cat([a, b, i])
    assert c.dtype == ember.float64 and c.grad_fn.name() == "CatBackward0"
    c.backward(ember.arange(6, dtype=ember.float64))
    assert a.grad.dtype == ember.float32 and a.grad.tolist() == [0.0, 1.0]
    assert b.grad.tolist() == [2.0, 3.0]
    s = ember.stack([ember.tensor([1, 2]), ember.tensor([1.5, 2.5])])
    assert s.dtype == ember.float32


def test_T_warnings():
    v = ember.ones(3)
    with pytest.warns(UserWarning, match="The use of `x.T` on tensors of dimension other than 2"):
        assert v.T.shape == (3,)
    with pytest.warns(UserWarning, match="Tensor.T is deprecated on 0-D tensors"):
        assert ember.tensor(1.0).T.shape == ()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.ones(2, 3).T.shape == (3, 2)


def test_split_grad_with_unused_outputs():
    x = ember.arange(6.0, requires_grad=True)
    a, b, c = x.split(2)
    (b * 2).backward(ember.ones(2))
    assert x.grad.tolist() == [0, 0, 2, 2, 0, 0]
    assert a.grad_fn is b.grad_fn and b.output_nr == 1


def test_multi_output_nodes_share_one_node():
    x = ember.ones(3, 2, requires_grad=True)
    parts = x.unbind()
    assert len({id(p.grad_fn) for p in parts}) == 1
    assert [p.output_nr for p in parts] == [0, 1, 2]
    assert parts[0].grad_fn._multi_output


# -- views share memory and version counters ---------------------------------------------------

VIEW_OPS = [
    lambda x: x.view(-1),
    lambda x: x.reshape(12),
    lambda x: x.transpose(0, 1),
    lambda x: x.permute(1, 0),
    lambda x: x.unsqueeze(0),
    lambda x: x.unsqueeze(1).squeeze(1),
    lambda x: x.t(),
    lambda x: x.T,
    lambda x: x.mT,
    lambda x: x.narrow(1, 1, 2),
    lambda x: x.unflatten(1, (2, 2)),
    lambda x: x.flatten(),
    lambda x: x.movedim(0, 1),
    lambda x: x.split(2)[1],
    lambda x: x.chunk(3, 1)[0],
    lambda x: x.unbind(1)[2],
    lambda x: x.expand(3, 4),
    lambda x: x.tensor_split(2, 1)[1],
]


@pytest.mark.parametrize("k", range(len(VIEW_OPS)))
def test_views_share_memory_and_version(k):
    x = ember.tensor(np.arange(12.0).reshape(3, 4))
    base_version = x._version_
    v = VIEW_OPS[k](x)
    assert v._base is x
    assert v._vc is x._vc
    with ember.no_grad():
        v.mul_(0)
    assert x._version_ == base_version + 1 == v._version_
    assert float(x.abs().sum()) < 66  # some elements of the base were zeroed


def test_view_of_view_base_is_root():
    x = ember.zeros(2, 3, requires_grad=True)
    v = x.view(3, 2).t().unsqueeze(0)
    assert v._base is x
    assert v.grad_fn.name() == "UnsqueezeBackward0"


def test_copies_do_not_share():
    x = ember.arange(6.0).view(2, 3)
    for y in (
        x.flip(0),
        x.roll(1),
        x.repeat(1, 1),
        x.clone(),
        ember.cat([x]),
        x.t().reshape(-1),
        x.double(),
        x.t().contiguous(),
    ):
        assert y._base is None
        y.numpy()[...] = -1
        assert x.numpy().min() == 0


def test_inplace_through_view_invalidates_saved_tensor():
    a = ember.ones(2, 3, requires_grad=True)
    b = a * 1
    c = b * b  # saves b
    with ember.no_grad():
        b.view(-1).add_(1)
    assert b._version_ == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.backward(ember.ones(2, 3))


def test_setitem_through_view_changes_base():
    x = ember.zeros(2, 3)
    row = x[1]
    row[0] = 5.0
    assert x.tolist() == [[0, 0, 0], [5, 0, 0]]
    assert x._version_ == 1


# -- forward mode: tangents of views are views, as in torch ----------------------------------

FW_OPS = {
    "view": lambda M, x: x.view(-1),
    "reshape": lambda M, x: x.reshape(12),
    "reshape_alias": lambda M, x: x.t().reshape(2, 2, 3),
    "reshape_copy": lambda M, x: x.t().reshape(12),
    "flatten": lambda M, x: x.flatten(),
    "unflatten": lambda M, x: x.unflatten(1, (2, 2)),
    "squeeze": lambda M, x: x.unsqueeze(1).squeeze(1),
    "squeeze_dims": lambda M, x: x.unsqueeze(1).squeeze((1,)),
    "transpose": lambda M, x: x.transpose(0, 1),
    "permute": lambda M, x: x.permute(1, 0),
    "t": lambda M, x: x.t(),
    "mT": lambda M, x: x.mT,
    "movedim": lambda M, x: x.movedim(0, 1),
    "expand": lambda M, x: x[:, :1].expand(3, 5),
    "split": lambda M, x: x.split(2)[1],
    "split_sizes": lambda M, x: x.split([1, 3], 1)[1],
    "chunk": lambda M, x: x.chunk(2, 1)[1],
    "unbind": lambda M, x: x.unbind(1)[2],
    "narrow": lambda M, x: x.narrow(1, 1, 2),
    "tensor_split": lambda M, x: x.tensor_split(2, 1)[1],
    "flip": lambda M, x: x.flip(0),
    "roll": lambda M, x: x.roll(1, 1),
    "repeat": lambda M, x: x.repeat(2, 1),
    "clone": lambda M, x: x.clone(),
    "cat": lambda M, x: M.cat([x, x], 1),
    "stack": lambda M, x: M.stack([x, x], 2),
    "to": lambda M, x: x.to(M.float32),
}


def _fw(M):
    return ember.autograd.forward_ad if M is ember else torch.autograd.forward_ad


def _shares(M, a, b) -> bool:
    if M is ember:
        return np.shares_memory(a._data, b._data)
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


@pytest.mark.parametrize("name", list(FW_OPS))
def test_view_tangents_are_views_like_torch(name):
    """The tangent of a view shares memory with the input's tangent (and has it as base)
    exactly when torch's does; its value is the op applied to the tangent."""
    rng = np.random.default_rng(4)
    p, tg = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    got = []
    for M in (ember, torch):
        fw = _fw(M)
        with fw.dual_level():
            x = fw.make_dual(M.tensor(p), M.tensor(tg))
            yt = fw.unpack_dual(FW_OPS[name](M, x)).tangent
            xt = fw.unpack_dual(x).tangent
            got.append((yt._base is xt, _shares(M, yt, xt), yt.detach().numpy().copy()))
    (e_base, e_shares, e_val), (t_base, t_shares, t_val) = got
    assert (e_base, e_shares) == (t_base, t_shares)
    np.testing.assert_allclose(e_val, t_val, rtol=1e-6)


@pytest.mark.parametrize("name", list(FW_OPS))
def test_backward_through_view_tangents_matches_torch(name):
    """Reverse over forward: the tangents are recorded, so they can be differentiated."""
    rng = np.random.default_rng(5)
    p, tg = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    got = []
    for M in (ember, torch):
        fw = _fw(M)
        t = M.tensor(tg, requires_grad=True)
        with fw.dual_level():
            yt = fw.unpack_dual(FW_OPS[name](M, fw.make_dual(M.tensor(p), t))).tangent
            w = M.tensor(np.arange(yt.numel(), dtype=np.float64).reshape(tuple(yt.shape)))
            (yt * w.to(yt.dtype)).sum().backward()
        got.append(t.grad.numpy().copy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-6)


INPLACE_VIEWS = ["view", "reshape_alias", "squeeze", "transpose", "permute", "t", "mT"]
INPLACE_VIEWS += ["split", "unbind", "narrow", "tensor_split", "unflatten"]


@pytest.mark.parametrize("name", INPLACE_VIEWS)
def test_inplace_through_a_view_updates_tangents_like_torch(name):
    """``view.mul_(dual)`` updates the tangents of the view and of its base, as torch does."""
    rng = np.random.default_rng(6)
    p, tg, o, ot = (rng.standard_normal((3, 4)) for _ in range(4))
    op = FW_OPS[name]
    got = []
    for M in (ember, torch):
        fw = _fw(M)
        with fw.dual_level():
            x = fw.make_dual(M.tensor(p), M.tensor(tg)) * 1.0
            v = op(M, x)
            other = op(M, fw.make_dual(M.tensor(o), M.tensor(ot)))
            v.mul_(other)
            got.append([fw.unpack_dual(t).tangent.numpy().copy() for t in (x, v)])
    for e, t in zip(*got):
        np.testing.assert_allclose(e, t, rtol=1e-10)


# -- the nodes' saved parameters, named and valued as torch's ---------------------------------

SAVED = [
    lambda M, x: x.transpose(0, 2).reshape(4, 3, 2),
    lambda M, x: x.transpose(0, 2).reshape(24),
    lambda M, x: x.unsqueeze(1).squeeze(),
    lambda M, x: x.unsqueeze(1).squeeze(1),
    lambda M, x: x.unsqueeze(1).squeeze((1, 3)),
    lambda M, x: x.unsqueeze(2),
    lambda M, x: x.transpose(0, 2),
    lambda M, x: x.permute(2, 0, 1),
    lambda M, x: x[:, :1].expand(5, 2, 3, 4),
    lambda M, x: x.repeat(2, 1, 1, 2),
    lambda M, x: M.cat([x, x], 2),
    lambda M, x: M.stack([x, x], 3),
    lambda M, x: x.split(2, 2)[0],
    lambda M, x: x.split([1, 3], 2)[0],
    lambda M, x: x.unbind(2)[0],
    lambda M, x: x.narrow(2, 1, 2),
    lambda M, x: x.flip(0, 2),
    lambda M, x: x.roll((1, 2), (0, 2)),
]


@pytest.mark.parametrize("k", range(len(SAVED)))
def test_saved_parameters_match_torch(k):
    """``grad_fn._saved_<name>`` of every parameter torch saves (ember may save more)."""
    nodes = [SAVED[k](M, M.ones(2, 3, 4, requires_grad=True)).grad_fn for M in (ember, torch)]
    assert type(nodes[0]).__name__ == type(nodes[1]).__name__
    names = [a for a in dir(nodes[1]) if a.startswith("_saved_")]
    assert names
    for a in names:
        e, t = getattr(nodes[0], a), getattr(nodes[1], a)
        assert (tuple(e) if isinstance(e, (tuple, list)) else e) == (
            tuple(t) if isinstance(t, (tuple, list)) else t
        ), a


def test_shape_nodes_save_no_tensor():
    """The rules read only parameters: modifying the input in place after the ops is allowed,
    as in torch, and the gradients are torch's. (Not split/unbind: torch forbids using the
    views of a multi-output op once their base changed in place.)"""
    grads = []
    for M in (ember, torch):
        x = M.ones(2, 3, requires_grad=True)
        y = x * 1
        outs = [y.view(6), y.t(), y.expand(2, 2, 3), M.cat([y, y]), M.stack([y, y]), y.flip(0)]
        outs += [y.repeat(2, 1), y.roll(1), y.clone(), y.narrow(1, 1, 2), y.unsqueeze(0)]
        with M.no_grad():
            y.mul_(5)
        sum((o * (k + 1)).sum() for k, o in enumerate(outs)).backward()
        grads.append(x.grad.numpy().copy())
    np.testing.assert_array_equal(grads[0], grads[1])


# -- out= of the joins ---------------------------------------------------------------------

OUT_CASES = [
    lambda M: M.cat([M.ones(2, requires_grad=True), M.ones(1)], out=M.zeros(3)),
    lambda M: M.stack([M.ones(2, requires_grad=True)], out=M.zeros(1, 2)),
    lambda M: M.hstack([M.ones(2, requires_grad=True)], out=M.zeros(2)),
    lambda M: M.cat([M.ones(2), M.ones(1)], out=M.zeros(3, dtype=M.float64)),
    lambda M: M.cat([M.ones(2), M.ones(1)], out=M.zeros(3, dtype=M.int64)),
    lambda M: M.stack([M.ones(2)], out=M.zeros(1, 2, dtype=M.int64)),
    lambda M: M.cat([M.ones(2), M.ones(1)], out=M.zeros(5)),
    lambda M: M.cat([M.ones(2), M.ones(1)], out=M.zeros(0)),
    lambda M: M.stack([M.ones(2), M.ones(2)], out=M.zeros(4)),
    lambda M: M.vstack([M.ones(2), M.ones(2)], out=M.zeros(2, 2)),
    lambda M: M.dstack([M.ones(2)], out=M.zeros(1, 2, 1, dtype=M.float64)),
]


@pytest.mark.parametrize("k", range(len(OUT_CASES)))
def test_out_matches_torch(k):
    """Values, dtype, the resize warning and the errors of ``out=``, as torch's."""
    got = []
    for M in (ember, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                o = OUT_CASES[k](M)
                res = (str(o.dtype), o.tolist())
            except (RuntimeError, TypeError) as e:
                res = (type(e).__name__, str(e))
        got.append((res, [str(x.message).split(" (Triggered")[0] for x in w]))
    assert got[0] == got[1]


def test_out_is_written_in_place():
    o = ember.zeros(2, 2)
    view = o.view(4)
    r = ember.stack([ember.ones(2), ember.ones(2) * 2], out=o)
    assert r is o and o._version_ == 1
    assert view.tolist() == [1.0, 1.0, 2.0, 2.0]


# -- error texts equal torch's ---------------------------------------------------------------

ERRORS = [
    lambda M: M.zeros(4).view(5),
    lambda M: M.zeros(2, 3).view(-1, -1),
    lambda M: M.zeros(0, 3).view(-1, 0),
    lambda M: M.zeros(2, 3).t().view(6),
    lambda M: M.zeros(2, 3).reshape(4),
    lambda M: M.zeros(2, 3).reshape(-2, 3),
    lambda M: M.zeros(2, 3).view(-1, 4),
    lambda M: M.zeros(2, 3).view(2.0, 3),
    lambda M: M.zeros(2, 3, 4).t(),
    lambda M: M.zeros(3).mT,
    lambda M: M.zeros(2, 3).transpose(0, 2),
    lambda M: M.zeros(2, 3).permute(0),
    lambda M: M.zeros(2, 3).permute(0, 0),
    lambda M: M.zeros(2, 3).permute(0, 5),
    lambda M: M.zeros(2, 3).squeeze(3),
    lambda M: M.zeros(2, 3).squeeze((0, 0)),
    lambda M: M.zeros(2, 3).unsqueeze(3),
    lambda M: M.zeros(2, 3).expand(3, 3),
    lambda M: M.zeros(2, 3).expand(3),
    lambda M: M.zeros(2, 3).expand(-1, 2, 3),
    lambda M: M.zeros(2, 3).expand(2, -2),
    lambda M: M.zeros(2, 3).repeat(2),
    lambda M: M.cat([]),
    lambda M: M.cat([M.zeros(2, 3), M.zeros(3)]),
    lambda M: M.cat([M.zeros(2, 3), M.zeros(2, 2)]),
    lambda M: M.cat([M.zeros(2, 3), M.zeros(3, 4)], dim=1),
    lambda M: M.cat([M.tensor(1.0), M.tensor(1.0)]),
    lambda M: M.cat([M.zeros(2), M.zeros(2)], dim=1),
    lambda M: M.cat([M.zeros(2), [1]]),
    lambda M: M.cat(M.zeros(2)),
    lambda M: M.stack([M.zeros(2, 3), M.zeros(3, 2)]),
    lambda M: M.stack([]),
    lambda M: M.stack([M.zeros(2)], dim=2),
    lambda M: M.hstack([]),
    lambda M: M.zeros(2, 3).split(0),
    lambda M: M.zeros(2, 3).split([1, 2]),
    lambda M: M.zeros(2, 3).split([-1, 3]),
    lambda M: M.tensor(1.0).split(1),
    lambda M: M.zeros(2, 3).chunk(0),
    lambda M: M.tensor(1.0).chunk(1),
    lambda M: M.tensor(1.0).unbind(),
    lambda M: M.zeros(2, 3).narrow(0, 1, 2),
    lambda M: M.zeros(2, 3).narrow(0, 4, 0),
    lambda M: M.zeros(2, 3).narrow(0, 0, -1),
    lambda M: M.tensor(1.0).narrow(0, 0, 1),
    lambda M: M.zeros(2, 3).flip(0, 0),
    lambda M: M.zeros(2, 3).roll((1, 2), (0,)),
    lambda M: M.zeros(2, 3).roll((1, 2)),
    lambda M: M.tensor(1.0).roll(1, 0),
    lambda M: M.zeros(2, 3, 4).movedim((0, 0), (2, 1)),
    lambda M: M.zeros(2, 3, 4).movedim((0, 1), (0,)),
    lambda M: M.zeros(2, 3).unflatten(1, (2, 2)),
    lambda M: M.zeros(2, 3).unflatten(1, ()),
    lambda M: M.zeros(2, 3, 4).flatten(2, 1),
    lambda M: M.broadcast_to(M.zeros(2, 3), (3,)),
    lambda M: M.zeros(3).fliplr(),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_error_texts_match_torch(k):
    fn = ERRORS[k]
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(Exception) as ee:
        fn(ember)
    assert type(ee.value).__name__ == type(te.value).__name__
    assert str(ee.value) == str(te.value)


# -- hypothesis: random shapes, permutations, reshapes and split sizes ---------------------------

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


@settings(derandomize=True, max_examples=50, deadline=None)
@given(shape=shapes, data=st.data())
def test_hyp_permute_transpose(shape, data):
    perm = data.draw(st.permutations(range(len(shape))))
    d0 = data.draw(st.integers(-len(shape), len(shape) - 1))
    d1 = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(len(shape))
    arr = tc.arr(rng, shape, np.float32)
    tc.compare(lambda M, x: x.permute(*perm), [arr], rng)
    tc.compare(lambda M, x: x.transpose(d0, d1).contiguous(), [arr], rng, check_base=False)


@settings(derandomize=True, max_examples=50, deadline=None)
@given(shape=shapes, data=st.data())
def test_hyp_reshape(shape, data):
    n = int(np.prod(shape))
    # a random factorization of n, with one factor possibly -1
    factors = []
    rest = n
    while rest > 1:
        divs = [d for d in range(2, rest + 1) if rest % d == 0]
        d = data.draw(st.sampled_from(divs))
        factors.append(d)
        rest //= d
    factors = data.draw(st.permutations(factors)) if factors else [1]
    if data.draw(st.booleans()):
        factors = list(factors)
        factors[data.draw(st.integers(0, len(factors) - 1))] = -1
    transpose_first = data.draw(st.booleans()) and len(shape) > 1
    rng = np.random.default_rng(n)

    def fn(M, x):
        if transpose_first:
            x = x.transpose(0, -1)
        return x.reshape(*factors)

    tc.compare(fn, [tc.arr(rng, shape, np.float32)], rng)


@settings(derandomize=True, max_examples=50, deadline=None)
@given(shape=shapes, data=st.data())
def test_hyp_split_chunk_cat(shape, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    n = shape[dim]
    size = data.draw(st.integers(1, n + 1))
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3)))
    sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    chunks = data.draw(st.integers(1, 5))
    rng = np.random.default_rng(n)
    arr = tc.arr(rng, shape, np.float32)
    tc.compare(lambda M, x: x.split(size, dim), [arr], rng)
    tc.compare(lambda M, x: x.split(sizes, dim), [arr], rng)
    tc.compare(lambda M, x: x.chunk(chunks, dim), [arr], rng)
    tc.compare(lambda M, x: M.cat(x.split(sizes, dim)[::-1], dim), [arr], rng)


@settings(derandomize=True, max_examples=50, deadline=None)
@given(shape=shapes, data=st.data())
def test_hyp_expand_repeat_flip_roll(shape, data):
    nd = len(shape)
    lead = data.draw(st.lists(st.integers(1, 3), max_size=2))
    small = tuple(s if data.draw(st.booleans()) else 1 for s in shape)
    target = tuple(lead) + tuple(s if s != 1 else data.draw(st.integers(1, 3)) for s in small)
    reps = data.draw(st.lists(st.integers(0, 3), min_size=nd, max_size=nd + 2))
    dims = data.draw(st.lists(st.integers(-nd, nd - 1), max_size=nd, unique_by=lambda d: d % nd))
    shifts = data.draw(st.lists(st.integers(-5, 5), min_size=len(dims), max_size=len(dims)))
    rng = np.random.default_rng(nd)
    tc.compare(lambda M, x: x.expand(*target), [tc.arr(rng, small, np.float32)], rng)
    arr = tc.arr(rng, shape, np.float32)
    tc.compare(lambda M, x: x.repeat(*reps), [arr], rng)
    tc.compare(lambda M, x: x.flip(dims), [arr], rng)
    if dims:
        tc.compare(lambda M, x: x.roll(shifts, dims), [arr], rng)


@settings(derandomize=True, max_examples=50, deadline=None)
@given(shape=shapes, data=st.data())
def test_hyp_squeeze_unsqueeze_stack(shape, data):
    nd = len(shape)
    d = data.draw(st.integers(-nd - 1, nd))
    sq = data.draw(st.integers(-nd, nd - 1))
    k = data.draw(st.integers(1, 3))
    rng = np.random.default_rng(nd)
    arrs = [tc.arr(rng, shape, np.float32) for _ in range(k)]
    tc.compare(lambda M, x: x.unsqueeze(d), arrs[:1], rng)
    tc.compare(lambda M, x: x.squeeze(sq), arrs[:1], rng)
    tc.compare(lambda M, x: x.squeeze(), arrs[:1], rng)
    tc.compare(lambda M, *xs: M.stack(xs, d), arrs, rng)
    tc.compare(lambda M, x: x.unbind(sq), arrs[:1], rng)


# -- rot90, unfold, block_diag, cartesian_prod -------------------------------------------------


def _same_error(fn):
    """``fn(lib)`` raises the same exception type and message in ember and torch."""
    errors = []
    for lib in (ember, torch):
        with pytest.raises(Exception) as info:
            fn(lib)
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize(
    "call",
    [
        lambda M: M.rot90(M.zeros(2, 3), 1, [0, 1, 2]),
        lambda M: M.rot90(M.zeros(3), 1, [0, 1]),
        lambda M: M.rot90(M.zeros(2, 3), 1, [0, 0]),
        lambda M: M.rot90(M.zeros(2, 3), 1, [0, -2]),
        lambda M: M.rot90(M.zeros(2, 3), 1, [0, 3]),
        lambda M: M.rot90(M.zeros(2, 3), 1.5),
        lambda M: M.rot90(M.zeros(2, 3), 1, 0),
        lambda M: M.rot90(M.zeros(2, 3), 1, [0.0, 1]),
        lambda M: M.zeros(3).unfold(0, 2.0, 1),
        lambda M: M.zeros(3).unfold(0, 2, 1.0),
        lambda M: M.zeros(3).unfold(0.0, 2, 1),
        lambda M: M.block_diag(M.zeros(2), 3),
        lambda M: M.zeros(3, 5).unfold(1, 6, 1),
        lambda M: M.zeros(3, 5).unfold(1, 2, 0),
        lambda M: M.zeros(3, 5).unfold(1, -1, 1),
        lambda M: M.zeros(3, 5).unfold(2, 1, 1),
        lambda M: M.tensor(3.0).unfold(0, 2, 1),
        lambda M: M.block_diag(M.zeros(2, 2, 2)),
        lambda M: M.block_diag([1, 2]),
        lambda M: M.cartesian_prod(),
        lambda M: M.cartesian_prod(M.zeros(2, 3)),
        lambda M: M.cartesian_prod(M.tensor(1.0), M.zeros(2)),
        lambda M: M.cartesian_prod(M.tensor([1, 2]), M.tensor([1.0, 2.0])),
    ],
)
def test_new_shape_ops_errors_match_torch(call):
    _same_error(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda M, x: M.rot90(x, 0),
        lambda M, x: M.rot90(x, 5, (1, 0)),
        lambda M, x: x.rot90(-1, (-1, 0)),
        lambda M, x: x.unfold(0, 0, 1),
        lambda M, x: x.unfold(-1, 4, 4),
        lambda M, x: x[0, 0].unfold(0, 1, 5),
        lambda M, x: M.block_diag(),
        lambda M, x: M.block_diag(x[0], M.tensor([1, 2], dtype=M.int32), M.tensor(7)),
        lambda M, x: M.block_diag(M.zeros(0, 2), M.ones(1, 0, dtype=M.int64)),
        lambda M, x: M.cartesian_prod(x[0, 0], x[1, 1, :2]),
        lambda M, x: M.cartesian_prod(M.arange(2), M.arange(3), M.arange(0)),
    ],
)
def test_new_shape_ops_values_and_dtypes_match_torch(call):
    a = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    got = call(ember, ember.tensor(a))
    want = call(torch, torch.tensor(a))
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if got.numel():  # (ember gives an empty tensor zero strides)
        assert got.stride() == want.stride()


def test_cartesian_prod_of_one_tensor_is_that_tensor():
    x = ember.tensor([1.0, 2.0])
    assert ember.cartesian_prod(x) is x


def test_unfold_is_a_view_sharing_memory_and_version():
    x = ember.tensor(np.arange(10.0).reshape(2, 5))
    u = x.unfold(1, 3, 2)
    assert u._base is x and u.stride() == (5, 2, 1)
    assert u.shape == (2, 2, 3)
    x[0, 2] = 100.0  # read by two windows
    assert u[0, 0, 2].item() == 100.0 and u[0, 1, 0].item() == 100.0
    assert u._version == x._version


def test_unfold_gradient_adds_overlapping_windows_and_flows_through_the_view():
    for lib in (ember, torch):
        x = lib.arange(5.0, requires_grad=True)
        w = x * 1
        u = w.unfold(0, 3, 1)
        (g,) = lib.autograd.grad((u * u).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        if lib is ember:
            mine = (g.detach().numpy(), gg.numpy(), type(g.grad_fn).__name__)
        else:
            theirs = (g.detach().numpy(), gg.numpy(), type(g.grad_fn).__name__)
    np.testing.assert_allclose(mine[0], theirs[0])
    np.testing.assert_allclose(mine[1], theirs[1])
    assert mine[2] == theirs[2]


def test_rot90_and_block_diag_grad_fn_names_and_saved_params():
    x = ember.zeros(2, 3, requires_grad=True)
    r = ember.rot90(x, 3, [1, 0])
    assert type(r.grad_fn).__name__ == "Rot90Backward0"
    assert r.grad_fn._saved_k == 3 and r.grad_fn._saved_dims == (1, 0)
    b = ember.block_diag(x, ember.ones(2, dtype=ember.float64, requires_grad=True))
    assert type(b.grad_fn).__name__ == "BlockDiagBackward0"
    assert b.dtype == ember.float64
    gx, gy = ember.autograd.grad(b.sum(), [x, b.grad_fn.next_functions[1][0].variable])
    assert gx.dtype == ember.float32 and gy.dtype == ember.float64


@pytest.mark.parametrize(
    "call",
    [
        "lib.flip(x, dims=[0])",
        "x.flip(dims=(1,))",
        "x.flip(0, 1)",
        "x.flip([0])",
        "lib.flip(x, [0], dims=[1])",
        "x.flip(0, dims=[1])",
        "lib.flip(x)",
    ],
)
def test_flip_dims_positional_or_by_keyword_as_torch(call):
    torch = pytest.importorskip("torch")
    out = []
    for lib in (ember, torch):
        try:
            out.append(eval(call, {"lib": lib, "x": lib.arange(6).reshape(2, 3)}).tolist())
        except TypeError as e:
            out.append(str(e))
    assert out[0] == out[1]
