"""The generic op tests, generated from the op database (``tests/opdb``).

For every entry: values, dtypes and ``grad_fn`` names equal torch's; gradients equal
central differences and torch's; forward mode equals reverse mode (``<u, J v> == <J^T u, v>``)
and torch's tangents; second derivatives equal torch's (or central differences of the first);
float32 results and gradients keep their dtype and match torch; elementwise entries hold on
broadcastable shapes drawn by hypothesis. Finally, every declared op is exercised by some
entry, so an op cannot be added without one.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import ember
from ember.autograd.opdef import DECLARED
from numgrad import numgrad
from opdb import all_ops, as_tuple, case

try:
    import torch
except ImportError:
    torch = None

OPS = all_ops()
PARAMS = [pytest.param(op, id=f"{op.family}:{op.name}") for op in OPS]


def _where(*flags: str) -> list:
    """The entries a generic test applies to: every flag set ("torch" also needs torch
    installed). Checks an entry declares not applicable are not generated at all."""
    chosen = []
    for param in PARAMS:
        op = param.values[0]
        if all(getattr(op, f) for f in flags) and ("torch" not in flags or torch is not None):
            chosen.append(param)
    return chosen


def _lib_fw(lib):
    return importlib.import_module(lib.__name__ + ".autograd.forward_ad")


def _grad_op(op):
    if not op.grad:
        pytest.skip("not differentiable (torch raises too)")


def _torch_op(op):
    if torch is None or not op.torch:
        pytest.skip("no torch reference for this entry")


def _inputs(lib, arrays, dtype=np.float64, requires_grad=True):
    return [lib.tensor(a.astype(dtype), requires_grad=requires_grad) for a in arrays]


def _outputs(lib, op, xs):
    return as_tuple(op.fn(lib, *xs))


def _diff_outputs(outs):
    return [o for o in outs if o.requires_grad]


def _grad_fn_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def _first_grads(lib, op, arrays, cotangent_rng, dtype=np.float64):
    xs = _inputs(lib, arrays, dtype)
    outs = _diff_outputs(_outputs(lib, op, xs))
    ws = [lib.tensor(cotangent_rng(tuple(o.shape)).astype(dtype)) for o in outs]
    grads = lib.autograd.grad(outs, xs, ws, allow_unused=True)
    return [
        np.zeros(a.shape, dtype) if g is None else g.detach().numpy(force=True)
        for a, g in zip(arrays, grads)
    ]


# -- values and graphs ---------------------------------------------------------------------------


@pytest.mark.parametrize("op", _where("torch"))
def test_values_dtypes_and_grad_fn_match_torch(op):
    _torch_op(op)
    primals, _ = case(op)
    mine = _outputs(ember, op, _inputs(ember, primals))
    theirs = _outputs(torch, op, _inputs(torch, primals))
    assert len(mine) == len(theirs)
    for e, t in zip(mine, theirs):
        assert tuple(e.shape) == tuple(t.shape)
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)
        assert _grad_fn_name(e) == _grad_fn_name(t)


# -- first derivatives -----------------------------------------------------------------------------


@pytest.mark.parametrize("op", _where("grad"))
def test_gradients_match_central_differences(op):
    _grad_op(op)
    primals, _ = case(op)
    rng = np.random.default_rng(1)
    got = _first_grads(ember, op, primals, lambda s: rng.standard_normal(s))
    rng = np.random.default_rng(1)
    outs = _diff_outputs(_outputs(ember, op, _inputs(ember, primals)))
    ws = [rng.standard_normal(tuple(o.shape)) for o in outs]

    def diff(*xs):
        return tuple(o for o in as_tuple(op.fn(ember, *xs)) if o.dtype.is_floating_point)

    want = numgrad(diff, [p.copy() for p in primals], ws)
    for g, n in zip(got, want):
        np.testing.assert_allclose(g, n, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op", _where("grad", "torch"))
def test_gradients_match_torch(op):
    _grad_op(op)
    _torch_op(op)
    primals, _ = case(op)
    mine = _first_grads(ember, op, primals, np.random.default_rng(2).standard_normal)
    theirs = _first_grads(torch, op, primals, np.random.default_rng(2).standard_normal)
    for e, t in zip(mine, theirs):
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-11)


# -- forward mode --------------------------------------------------------------------------


def _tangents(lib, op, primals, tangents, mask):
    """(primal, tangent) of each output when the inputs ``mask[i]`` carry tangents."""
    fw = _lib_fw(lib)
    with fw.dual_level():
        ins = [
            fw.make_dual(lib.tensor(p), lib.tensor(t)) if d else lib.tensor(p)
            for p, t, d in zip(primals, tangents, mask)
        ]
        res = []
        for o in _outputs(lib, op, ins):
            primal, tangent = fw.unpack_dual(o)
            # (assert_allclose would broadcast a 0-d tangent against any shape)
            assert tangent is None or tuple(tangent.shape) == tuple(primal.shape)
            res.append(
                (primal.detach().numpy(), None if tangent is None else tangent.detach().numpy())
            )
    return res


def _masks(op):
    if len(op.ins) == 1:
        return [(True,)]
    return [(True,) * len(op.ins), (True,) + (False,) * (len(op.ins) - 1)]


@pytest.mark.parametrize("op", _where("grad", "forward", "reverse"))
def test_forward_mode_equals_reverse_mode(op):
    """``<u, J v>`` from forward mode equals ``<J^T u, v>`` from reverse mode."""
    _grad_op(op)
    if not op.forward or not op.reverse:
        pytest.skip("no forward mode, or not comparable with reverse mode")
    primals, tangents = case(op)
    got = _tangents(ember, op, primals, tangents, (True,) * len(op.ins))
    rng = np.random.default_rng(3)
    outs = _outputs(ember, op, _inputs(ember, primals))
    us = [rng.standard_normal(tuple(o.shape)) for o in outs]
    jv = sum(
        float((u * (np.zeros_like(p) if t is None else t)).sum())
        for u, (p, t), o in zip(us, got, outs)
        if o.dtype.is_floating_point
    )
    rng = np.random.default_rng(3)
    grads = _first_grads(ember, op, primals, rng.standard_normal)
    jtu = sum(float((g * v).sum()) for g, v in zip(grads, tangents))
    assert jv == pytest.approx(jtu, rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("op", _where("grad", "forward", "torch"))
def test_forward_mode_matches_torch(op):
    _grad_op(op)
    if not op.forward:
        pytest.skip("no forward mode")
    _torch_op(op)
    primals, tangents = case(op)
    for mask in _masks(op):
        got = _tangents(ember, op, primals, tangents, mask)
        theirs = _tangents(torch, op, primals, tangents, mask)
        for (primal, tangent), (tprimal, ttangent) in zip(got, theirs):
            assert tangent is None or tangent.dtype == primal.dtype
            np.testing.assert_allclose(primal, tprimal, rtol=1e-10, atol=1e-12)
            assert (tangent is None) == (ttangent is None)
            if tangent is not None:
                np.testing.assert_allclose(tangent, ttangent, rtol=1e-7, atol=1e-9)


# -- second derivatives --------------------------------------------------------------------


def _second_grads(lib, op, arrays, u_seed, v_seed):
    """d/dx of ``<grad(<outs, u>), v>``: the Hessian-vector product of the op's outputs."""
    xs = _inputs(lib, arrays)
    outs = _diff_outputs(_outputs(lib, op, xs))
    ur = np.random.default_rng(u_seed)
    us = [lib.tensor(ur.standard_normal(tuple(o.shape))) for o in outs]
    grads = lib.autograd.grad(outs, xs, us, create_graph=True, allow_unused=True)
    vr = np.random.default_rng(v_seed)
    pairs = [(g, lib.tensor(vr.standard_normal(tuple(x.shape)))) for g, x in zip(grads, xs)]
    total = sum((g * v).sum() for g, v in pairs if g is not None and g.requires_grad)
    if not isinstance(total, (lib.Tensor,)):
        return [np.zeros(a.shape) for a in arrays]  # linear: the second derivative is 0
    second = lib.autograd.grad(total, xs, allow_unused=True)
    return [
        np.zeros(a.shape) if g is None else g.detach().numpy(force=True)
        for a, g in zip(arrays, second)
    ]


@pytest.mark.parametrize("op", _where("grad", "double"))
def test_double_backward(op):
    _grad_op(op)
    if not op.double:
        pytest.skip("no double backward")
    primals, _ = case(op)
    mine = _second_grads(ember, op, primals, 4, 5)
    if torch is not None and op.torch:
        theirs = _second_grads(torch, op, primals, 4, 5)
        for e, t in zip(mine, theirs):
            np.testing.assert_allclose(e, t, rtol=1e-8, atol=1e-10)
        return
    # Without a reference: central differences of the first derivative along v.
    vr = np.random.default_rng(5)
    vs = [vr.standard_normal(p.shape) for p in primals]

    def first(*xs):
        with ember.enable_grad():  # numgrad calls this under no_grad
            out = _first_grads(
                ember, op, [x.numpy() for x in xs], np.random.default_rng(4).standard_normal
            )
        return tuple(ember.tensor(g) for g in out)

    want = numgrad(first, [p.copy() for p in primals], vs)
    for e, n in zip(mine, want):
        np.testing.assert_allclose(e, n, rtol=1e-5, atol=1e-6)


# -- float32 -------------------------------------------------------------------------------


@pytest.mark.parametrize("op", _where("grad", "float32", "torch"))
def test_float32_values_and_gradients(op):
    _grad_op(op)
    if not op.float32:
        pytest.skip("float64 only")
    _torch_op(op)
    primals, _ = case(op)
    mine = _outputs(ember, op, _inputs(ember, primals, np.float32))
    theirs = _outputs(torch, op, _inputs(torch, primals, np.float32))
    for e, t in zip(mine, theirs):
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=2e-5, atol=2e-6)
    rng = np.random.default_rng(6)
    g_mine = _first_grads(ember, op, primals, rng.standard_normal, np.float32)
    rng = np.random.default_rng(6)
    g_theirs = _first_grads(torch, op, primals, rng.standard_normal, np.float32)
    for e, t in zip(g_mine, g_theirs):
        assert e.dtype == np.float32
        np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-5)


# -- shapes drawn by hypothesis ------------------------------------------------------------

BROADCASTING = [p for p, op in zip(PARAMS, OPS) if op.broadcasts]


@pytest.mark.parametrize("op", BROADCASTING)
@settings(max_examples=15)
@given(data=st.data())
def test_broadcasting_shapes_match_torch(op, data):
    _torch_op(op)
    shapes = data.draw(
        mutually_broadcastable_shapes(num_shapes=len(op.ins), min_dims=0, max_dims=3, max_side=3)
    ).input_shapes
    primals, _ = case(op, shapes)
    mine = _outputs(ember, op, _inputs(ember, primals))
    theirs = _outputs(torch, op, _inputs(torch, primals))
    for e, t in zip(mine, theirs):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10)
    g_mine = _first_grads(ember, op, primals, np.random.default_rng(7).standard_normal)
    g_theirs = _first_grads(torch, op, primals, np.random.default_rng(7).standard_normal)
    for e, t in zip(g_mine, g_theirs):
        assert e.shape == t.shape
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-11)


# -- no NumPy warnings ---------------------------------------------------------------------------

_SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 1e-320, 1.0, -1.0])


@pytest.mark.parametrize("op", PARAMS)
def test_no_numpy_warning_reaches_the_user(op):
    """torch computes 0/0, log(0), overflow... silently; so must ember, forward and backward.
    Inputs are filled with zeros, infinities, NaN and extreme values."""
    import warnings

    arrays = [np.resize(_SPECIAL, i.shape) if i.shape else np.float64(0.0) for i in op.ins]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            xs = _inputs(ember, [np.asarray(a) for a in arrays])
            outs = _diff_outputs(_outputs(ember, op, xs))
            if outs and op.grad:
                ember.autograd.grad(outs, xs, [ember.ones_like(o) for o in outs], allow_unused=True)
        except RuntimeWarning as w:
            raise AssertionError(f"a NumPy warning reached the user: {w}") from None
        except Exception:  # noqa: BLE001 (torch may refuse such inputs too: not this test's concern)
            pass


# -- coverage ------------------------------------------------------------------------------


def _nodes_reached(op) -> set:
    """Names of the node classes in the graphs of ``op``'s outputs and first gradients."""
    primals, _ = case(op)
    xs = _inputs(ember, primals)
    outs = _diff_outputs(_outputs(ember, op, xs))
    roots = [o.grad_fn for o in outs]
    if outs and op.grad:
        grads = ember.autograd.grad(
            outs, xs, [ember.ones_like(o) for o in outs], create_graph=op.double, allow_unused=True
        )
        roots += [g.grad_fn for g in grads if g is not None]
    seen, names = set(), set()
    stack = [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        names.add(type(node).__name__)
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return names


def test_every_declared_op_has_an_entry():
    """An op cannot be added without its opdb entry: each declared node class is reached."""
    reached = set()
    for op in OPS:
        reached |= _nodes_reached(op)
    declared = {cls.__name__ for cls in DECLARED}
    missing = sorted(declared - reached - _UNCOVERED)
    assert missing == [], f"declared ops without an opdb entry: {missing}"


# Declared classes no entry can reach, and why.
_UNCOVERED = {
    # The primal of forward_ad.unpack_dual: only made inside a dual level (see
    # tests/autograd/test_forward_ad.py), which the generic tests enter themselves.
    "torch::autograd::Identity",
}
