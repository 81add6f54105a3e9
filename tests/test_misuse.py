"""Misuses raise what torch raises: the same exception type and message, checked by running
each snippet under ember and (where installed) under torch 2.13."""

import importlib
import warnings

import numpy as np
import pytest

import ember

try:
    import torch
except ImportError:
    torch = None

LIBS = [ember] + ([torch] if torch is not None else [])


def _raised(fn, lib):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001  (the exception is the result under test)
        return type(e).__name__, str(e)
    return None


def _fw(lib):
    return importlib.import_module(lib.__name__ + ".autograd.forward_ad")


def _no_grad_view_then_inplace(T):
    x = T.ones(3, requires_grad=True)
    y = x * 2
    with T.no_grad():
        v = y[:2]
    v.mul_(2)


def _no_grad_view_of_leaf(T):
    x = T.ones(3, 2, requires_grad=True)
    with T.no_grad():
        v = x.view(6)
    v.add_(1)


def _no_grad_unbind_then_inplace(T):
    y = T.ones(3, requires_grad=True) * 2
    with T.no_grad():
        parts = y.unbind(0)
    parts[0].mul_(2)


def _inference_saved(T):
    with T.inference_mode():
        a = T.ones(3)
    x = T.ones(3, requires_grad=True)
    x * a


def _inference_inplace(T):
    with T.inference_mode():
        a = T.ones(3)
    a.add_(1)


def _inference_inplace_no_grad(T):
    with T.inference_mode():
        a = T.ones(3)
    with T.no_grad():
        a[0] = 2.0


def _inference_version(T):
    with T.inference_mode():
        a = T.ones(3)
    return a._version


def _hook(returns, on_leaf=False):
    def run(T):
        x = T.ones(3, requires_grad=True)
        y = x if on_leaf else x * 2
        y.register_hook(lambda g: returns(T, g))
        (y * 1).sum().backward()

    return run


def _node_hook(kind, returns):
    def run(T):
        y = T.ones(3, requires_grad=True) * 2
        if kind == "pre":
            y.grad_fn.register_prehook(lambda go: returns(T))
        else:
            y.grad_fn.register_hook(lambda gi, go: returns(T))
        y.sum().backward()

    return run


def _set_grad(value):
    def run(T):
        x = T.zeros(3, requires_grad=True)
        x.grad = value(T)

    return run


def _setitem(key, value):
    def run(T):
        x = T.zeros(3, 4)
        x[key(T) if callable(key) else key] = value(T)

    return run


MISUSES = {
    "float() of many": lambda T: float(T.ones(2)),
    "int() of many": lambda T: int(T.ones(2)),
    "complex() of many": lambda T: complex(T.ones(2)),
    "float() of none": lambda T: float(T.ones(0)),
    "ragged lists": lambda T: T.tensor([[1, 2], [3]]),
    "ragged longer": lambda T: T.tensor([[1, 2], [3, 4, 5]]),
    "ragged deeper": lambda T: T.tensor([[[1, 2], [3, 4]], [[1, 2]]]),
    "list where a number belongs": lambda T: T.tensor([1, [2]]),
    "list where a float belongs": lambda T: T.tensor([1.0, [2.0]]),
    "number where a list belongs": lambda T: T.tensor([[[1]], [2]]),
    "None in data": lambda T: T.tensor([1, None]),
    "string data": lambda T: T.tensor(["a"]),
    "object data": lambda T: T.tensor([object()]),
    "setitem row too long": _setitem(0, lambda T: T.ones(3)),
    "setitem column": _setitem((slice(None), 1), lambda T: T.ones(2)),
    "setitem extra dims": _setitem(0, lambda T: T.ones(2, 4)),
    "setitem scalar slot": _setitem((0, 0), lambda T: T.ones(2)),
    "setitem slice": _setitem((slice(None), slice(0, 2)), lambda T: T.ones(3, 3)),
    "setitem advanced": _setitem(lambda T: T.tensor([0, 1]), lambda T: T.ones(3, 4)),
    "setitem list value": _setitem(0, lambda T: [1.0, 2.0]),
    "setitem ndarray value": _setitem(0, lambda T: np.ones(4)),
    "setitem out of bounds": _setitem(5, lambda T: 1.0),
    "grad of wrong size": _set_grad(lambda T: T.zeros(4)),
    "grad of wrong dtype": _set_grad(lambda T: T.zeros(3, dtype=T.float64)),
    "grad of wrong dtype and size": _set_grad(lambda T: T.zeros(4, dtype=T.int64)),
    "grad not a tensor": _set_grad(lambda T: 3),
    "tensor hook changes size": _hook(lambda T, g: T.ones(4)),
    "leaf hook changes size": _hook(lambda T, g: T.ones(4), on_leaf=True),
    "tensor hook changes dtype": _hook(lambda T, g: g.double()),
    "leaf hook changes dtype": _hook(lambda T, g: g.double(), on_leaf=True),
    "hook returns a number": _hook(lambda T, g: 5, on_leaf=True),
    "node prehook changes size": _node_hook("pre", lambda T: (T.ones(2),)),
    "node prehook returns too many": _node_hook("pre", lambda T: (T.ones(3), T.ones(3))),
    "node hook changes size": _node_hook("post", lambda T: (T.ones(2), None)),
    "node hook returns too few": _node_hook("post", lambda T: (T.ones(3),)),
    "node hook changes dtype": _node_hook("post", lambda T: (T.ones(3).double(), None)),
    "no_grad view modified in place": _no_grad_view_then_inplace,
    "no_grad view of a leaf modified in place": _no_grad_view_of_leaf,
    "no_grad unbind modified in place": _no_grad_unbind_then_inplace,
    "inference tensor saved for backward": _inference_saved,
    "inference tensor modified outside": _inference_inplace,
    "inference tensor modified under no_grad": _inference_inplace_no_grad,
    "inference tensor version": _inference_version,
}


@pytest.mark.parametrize("name", list(MISUSES))
def test_misuse_raises_torchs_error(name):
    fn = MISUSES[name]
    got = _raised(fn, ember)
    assert got is not None, f"{name}: ember raised nothing"
    assert "numpy" not in got[1].lower() or "numpy.ndarray" in got[1], got
    if torch is not None:
        assert got == _raised(fn, torch)


# -- what must keep working -----------------------------------------------------------------

ALLOWED = {
    "scalar conversions of one element": lambda T: (
        float(T.ones(1, 1)),
        int(T.tensor([[3]])),
        complex(T.tensor([2.0])),
    ),
    "empty nested lists": lambda T: tuple(T.tensor([[], [1]]).shape),
    "empty nested lists dtype": lambda T: str(T.tensor([[], [1]]).dtype),
    "setitem drops leading ones": lambda T: _setitem(0, lambda T: T.ones(1, 4))(T),
    "inference tensors": lambda T: _inference_kinds(T),
    "in-place on inference tensor inside inference_mode": lambda T: _inference_inside(T),
    "in-place on a no_grad view under no_grad": lambda T: _no_grad_view_inside(T),
    "in-place on a view of a plain tensor made under no_grad": lambda T: _plain_view(T),
}


def _inference_kinds(T):
    with T.inference_mode():
        a = T.ones(3)
        b = a[:2]
        c = a * 2
    return (
        a.is_inference(),
        b.is_inference(),
        c.is_inference(),
        (a * 2).is_inference(),
        a.detach().is_inference(),
        a.clone().is_inference(),
        (T.ones(3, requires_grad=True) + a).requires_grad,
    )


def _inference_inside(T):
    with T.inference_mode():
        a = T.ones(3)
        a.add_(1)
        return a.tolist()


def _no_grad_view_inside(T):
    y = T.ones(3, requires_grad=True) * 2
    with T.no_grad():
        v = y[:2]
        v.mul_(2)
    return y.tolist()


def _plain_view(T):
    w = T.ones(3)
    with T.no_grad():
        u = w[:2]
    u.mul_(2)
    return w.tolist()


@pytest.mark.parametrize("name", list(ALLOWED))
def test_allowed_use_behaves_like_torch(name):
    got = ALLOWED[name](ember)
    if torch is not None:
        assert got == ALLOWED[name](torch)


# -- gradients torch defines by convention -----------------------------------------------------


def _pow_grads(T):
    b = T.tensor([0.0, 1.0, 2.0, 0.0], dtype=T.float64, requires_grad=True)
    e = T.tensor([2.0, 3.0, 0.5, 0.0], dtype=T.float64, requires_grad=True)
    (b**e).sum().backward()
    e2 = T.tensor([2.0, 3.0], dtype=T.float64, requires_grad=True)
    (0.0**e2).sum().backward()
    e3 = T.tensor([2.0, 3.0], dtype=T.float64, requires_grad=True)
    (T.zeros(2, dtype=T.float64) ** e3).sum().backward()
    return [x.grad.tolist() for x in (b, e, e2, e3)]


def test_pow_with_zero_base_gives_zero_exponent_gradient():
    grads = _pow_grads(ember)
    assert grads[1][0] == 0.0 and grads[1][3] == 0.0
    assert grads[2] == [0.0, 0.0] and grads[3] == [0.0, 0.0]
    if torch is not None:
        for mine, theirs in zip(grads, _pow_grads(torch)):
            np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_backward_rules_give_nan_and_inf_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = ember.zeros(2, requires_grad=True)
        ember.sqrt(x).sum().backward()
        assert x.grad.tolist() == [float("inf")] * 2
        y = ember.tensor([0.0, 4.0], requires_grad=True)
        y.pow(0.5).sum().backward()
        assert y.grad.tolist() == [float("inf"), 0.25]


# -- shapes that do not fit: torch's RuntimeError, never NumPy's broadcasting text ------------


def _a(T):
    return T.ones(2, 3)


def _b(T):
    return T.ones(4)


SHAPE_MISMATCHES = {
    "add": lambda T: _a(T) + _b(T),
    "mul": lambda T: _a(T) * _b(T),
    "sub": lambda T: T.sub(_a(T), _b(T)),
    "div": lambda T: _a(T) / _b(T),
    "pow": lambda T: _a(T) ** _b(T),
    "atan2": lambda T: T.atan2(_a(T), _b(T)),
    "maximum": lambda T: T.maximum(_a(T), _b(T)),
    "hypot": lambda T: T.hypot(_a(T), _b(T)),
    "eq": lambda T: _a(T) == _b(T),
    "lt": lambda T: _a(T) < _b(T),
    "logical_and": lambda T: T.logical_and(_a(T), _b(T)),
    "bitwise_and": lambda T: T.ones(2, 3, dtype=T.int64) & T.ones(4, dtype=T.int64),
    "xlogy": lambda T: T.xlogy(_a(T), _b(T)),
    "special.xlog1py": lambda T: T.special.xlog1py(_a(T), _b(T)),
    "fmod": lambda T: T.fmod(_a(T), _b(T)),
    "remainder": lambda T: T.remainder(_a(T), _b(T)),
    "copysign": lambda T: T.copysign(_a(T), _b(T)),
    "floor_divide": lambda T: T.floor_divide(_a(T), _b(T)),
    "where": lambda T: T.where(_a(T) > 0, _a(T), _b(T)),
    "where3": lambda T: T.where(T.ones(5) > 0, _a(T), _a(T)),
    "lerp": lambda T: T.lerp(_a(T), _b(T), 0.5),
    "lerp_w": lambda T: T.lerp(_a(T), _a(T), _b(T)),
    "addcmul": lambda T: T.addcmul(_a(T), _a(T), _b(T)),
    "addcdiv": lambda T: T.addcdiv(_a(T), _b(T), _a(T)),
    "clamp_t": lambda T: T.clamp(_a(T), _b(T)),
    "masked_fill": lambda T: _a(T).masked_fill(T.ones(4) > 0, 1.0),
    "iadd": lambda T: _a(T).add_(_b(T)),
    "iadd_expand": lambda T: T.ones(3).add_(_a(T)),
    "mse_loss": lambda T: T.nn.functional.mse_loss(_a(T), _b(T)),
    "l1_loss": lambda T: T.nn.functional.l1_loss(_a(T), _b(T)),
    "bce": lambda T: T.nn.functional.binary_cross_entropy(_a(T) * 0.5, _b(T)),
    "bce_logits": lambda T: T.nn.functional.binary_cross_entropy_with_logits(_a(T), _b(T)),
    "matmul": lambda T: _a(T) @ _b(T),
    "mm": lambda T: T.mm(_a(T), T.ones(4, 2)),
    "bmm": lambda T: T.bmm(T.ones(2, 2, 3), T.ones(2, 4, 2)),
    "matmul_batch": lambda T: T.ones(2, 2, 3) @ T.ones(3, 3, 2),
    "dot": lambda T: T.dot(T.ones(3), _b(T)),
    "cat": lambda T: T.cat([_a(T), T.ones(2, 4)], 0),
    "stack": lambda T: T.stack([_a(T), T.ones(2, 4)]),
    "expand": lambda T: _a(T).expand(2, 4),
    "broadcast_to": lambda T: T.broadcast_to(_a(T), (4,)),
    "broadcast_tensors": lambda T: T.broadcast_tensors(_a(T), _b(T)),
    "view": lambda T: _a(T).view(4),
    "reshape": lambda T: _a(T).reshape(4),
    "einsum": lambda T: T.einsum("ij,j->i", _a(T), _b(T)),
    "cross": lambda T: T.linalg.cross(T.ones(2, 3), T.ones(4, 3)),
    "linear": lambda T: T.nn.functional.linear(_a(T), T.ones(2, 4)),
    "index_add": lambda T: _a(T).index_add(0, T.tensor([0]), T.ones(1, 4)),
    "gather": lambda T: _a(T).gather(1, T.zeros(3, 3, dtype=T.long)),
    "scatter": lambda T: _a(T).scatter(1, T.zeros(2, 2, dtype=T.long), T.ones(1, 1)),
    "logaddexp": lambda T: T.logaddexp(_a(T), _b(T)),
    "fmax": lambda T: T.fmax(_a(T), _b(T)),
    "heaviside": lambda T: T.heaviside(_a(T), _b(T)),
    "isclose": lambda T: T.isclose(_a(T), _b(T)),
    "allclose": lambda T: T.allclose(_a(T), _b(T)),
    "equal": lambda T: T.equal(_a(T), _b(T)),
    "ldexp": lambda T: T.ldexp(_a(T), _b(T)),
    "float_power": lambda T: T.float_power(_a(T), _b(T)),
    "nextafter": lambda T: T.nextafter(_a(T), _b(T)),
    "out=": lambda T: T.add(_a(T), _a(T), out=T.ones(4)),
    "softmax_dim": lambda T: T.softmax(_a(T), 3),
    "sum_dim": lambda T: _a(T).sum(5),
    "layer_norm": lambda T: T.nn.functional.layer_norm(_a(T), (4,)),
    "embedding": lambda T: T.nn.functional.embedding(T.tensor([5]), T.ones(3, 2)),
    "cross_entropy": lambda T: T.nn.functional.cross_entropy(_a(T), T.tensor([0, 1, 2])),
    "nll_class": lambda T: T.nn.functional.nll_loss(_a(T), T.tensor([0, 5])),
    "conv2d": lambda T: T.nn.functional.conv2d(T.ones(1, 2, 5, 5), T.ones(3, 3, 3, 3)),
    "batch_norm": lambda T: T.nn.functional.batch_norm(_a(T), T.ones(4), T.ones(4)),
    "masked_select": lambda T: T.masked_select(_a(T), T.ones(4) > 0),
    "searchsorted": lambda T: T.searchsorted(T.ones(3, 3), _a(T)),
    "bucketize": lambda T: T.bucketize(_a(T), T.ones(2, 2)),
    "vdot": lambda T: T.vdot(T.ones(3), _b(T)),
    "inner": lambda T: T.inner(_a(T), _b(T)),
    "tensordot": lambda T: T.tensordot(_a(T), _b(T), 1),
    "solve": lambda T: T.linalg.solve(T.eye(3), _b(T)),
    "addmm": lambda T: T.addmm(_b(T), _a(T), T.ones(3, 2)),
    "baddbmm": lambda T: T.baddbmm(T.ones(2, 2, 2), T.ones(2, 2, 3), T.ones(2, 4, 2)),
    "addmv": lambda T: T.addmv(T.ones(2), _a(T), _b(T)),
    "mv": lambda T: T.mv(_a(T), _b(T)),
    "normal": lambda T: T.normal(_a(T), _b(T)),
}


@pytest.mark.parametrize("name", list(SHAPE_MISMATCHES))
def test_shape_mismatch_raises_torchs_error(name):
    """torch's error (or, for ``equal`` and a resizable ``out=``, torch's lack of one)."""
    fn = SHAPE_MISMATCHES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about mse_loss's broadcasting first
        got = _raised(fn, ember)
        assert got is None or "operands could not be broadcast" not in got[1], got
        assert got is not None or name in ("equal", "out="), f"{name}: ember raised nothing"
        if torch is not None:
            assert got == _raised(fn, torch)


def test_shape_mismatches_torch_allows():
    assert ember.equal(ember.ones(2, 3), ember.ones(4)) is False
    out = ember.ones(4)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        ember.add(ember.ones(2, 3), ember.ones(2, 3), out=out)
    assert out.shape == (2, 3) and out.sum().item() == 12.0
