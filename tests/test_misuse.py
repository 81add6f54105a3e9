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
