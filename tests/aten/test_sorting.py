"""Sorting/selection ops: values, indices, grad_fn names, gradients (torch and finite
differences), forward-mode JVPs and torch's error messages."""

import numpy as np
import pytest

import ember
from numgrad import numgrad

torch = pytest.importorskip("torch")


def _rand(shape, seed=0):
    # Distinct values (no ties), so sort orders are unambiguous.
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n) + rng.uniform(0, 0.5, n)).reshape(shape) / n


def _name(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


def _first(y):
    return y[0] if isinstance(y, tuple) else y


CASES = [
    ("sort", lambda lib, x: lib.sort(x, dim=1), [(3, 4)]),
    ("sort_desc", lambda lib, x: lib.sort(x, 0, descending=True), [(3, 4)]),
    ("sort_stable", lambda lib, x: x.sort(stable=True), [(2, 5)]),
    ("msort", lambda lib, x: lib.msort(x), [(3, 4)]),
    ("topk", lambda lib, x: lib.topk(x, 2), [(3, 4)]),
    ("topk_small", lambda lib, x: x.topk(3, dim=0, largest=False), [(4, 3)]),
    ("kthvalue", lambda lib, x: lib.kthvalue(x, 2, 1), [(3, 4)]),
    ("kthvalue_keep", lambda lib, x: x.kthvalue(3, 0, keepdim=True), [(4, 2)]),
    ("ri_int", lambda lib, x: lib.repeat_interleave(x, 2, dim=1), [(2, 3)]),
    ("ri_flat", lambda lib, x: x.repeat_interleave(3), [(2, 2)]),
    ("ri_tensor", lambda lib, x: lib.repeat_interleave(x, lib.tensor([1, 0, 2]), 0), [(3, 2)]),
    ("index_fill", lambda lib, x: lib.index_fill(x, 1, lib.tensor([0, 2, 0]), -1.0), [(2, 4)]),
    ("index_fill_t", lambda lib, x, v: x.index_fill(0, lib.tensor([1]), v), [(3, 2), ()]),
    ("addcmul", lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5), [(2, 3), (3,), (2, 1)]),
    ("addcdiv", lambda lib, a, b, c: lib.addcdiv(a, b, c + 2, value=-2), [(2, 3), (2, 3), (3,)]),
]


def _run(lib, f, arrays):
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = f(lib, *ts)
    y = _first(out)
    w = np.random.default_rng(3).uniform(0.5, 1.5, tuple(y.shape))
    y.backward(lib.tensor(w))
    extra = [o.numpy() for o in out[1:]] if isinstance(out, tuple) else []
    return y.detach().numpy(), extra, _name(y), [t.grad.numpy() for t in ts], w


@pytest.mark.parametrize("name,f,shapes", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_and_numgrad(name, f, shapes):
    arrays = [_rand(s, i) for i, s in enumerate(shapes)]
    v, extra, n, grads, w = _run(ember, f, arrays)
    tv, textra, tn, tgrads, _ = _run(torch, f, arrays)
    np.testing.assert_allclose(v, tv, rtol=1e-12)
    for a, b in zip(extra, textra):
        np.testing.assert_array_equal(a, b)
    assert n == tn
    for g, tg in zip(grads, tgrads):
        np.testing.assert_allclose(g, tg, rtol=1e-10, atol=1e-12)
    for g, ng in zip(grads, numgrad(lambda *xs: _first(f(ember, *xs)), arrays, [w])):
        np.testing.assert_allclose(g, ng, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name,f,shapes", CASES, ids=[c[0] for c in CASES])
def test_forward_ad_matches_torch(name, f, shapes):
    arrays = [_rand(s, i) for i, s in enumerate(shapes)]
    tangents = [np.random.default_rng(10 + i).normal(size=s) for i, s in enumerate(shapes)]
    res = []
    for lib in (ember, torch):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            duals = [fwad.make_dual(lib.tensor(a), lib.tensor(t)) for a, t in zip(arrays, tangents)]
            y = _first(f(lib, *duals))
            res.append(fwad.unpack_dual(y).tangent.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-10, atol=1e-12)


def test_sort_nan_and_descending_order():
    a = np.array([3.0, np.nan, 1.0, 3.0, -2.0])
    for desc in (False, True):
        e = ember.sort(ember.tensor(a), descending=desc, stable=True)
        t = torch.sort(torch.tensor(a), descending=desc, stable=True)
        np.testing.assert_array_equal(e.values.numpy(), t.values.numpy())
        np.testing.assert_array_equal(e.indices.numpy(), t.indices.numpy())
        assert repr(e).startswith("torch.return_types.sort(")
    np.testing.assert_array_equal(
        ember.argsort(ember.tensor(a), descending=True, stable=True).numpy(),
        torch.argsort(torch.tensor(a), descending=True, stable=True).numpy(),
    )


def test_zero_dim_and_return_types():
    x = ember.tensor(3.0, requires_grad=True)
    for fn in (lambda t: t.sort(), lambda t: t.topk(1), lambda t: t.kthvalue(1)):
        r = fn(x)
        assert r.values.item() == 3.0 and r.indices.item() == 0
    assert type(ember.topk(ember.ones(3), 1)).__name__ == "topk"
    assert ember.topk(ember.ones(3), 1).indices.grad_fn is None


def test_unique():
    a = np.array([[3, 1, 2], [1, 3, 0]])
    for kw in (
        {},
        {"return_inverse": True},
        {"return_counts": True},
        {"return_inverse": True, "return_counts": True},
        {"dim": 1, "return_inverse": True},
    ):
        e = ember.unique(ember.tensor(a), **kw)
        t = torch.unique(torch.tensor(a), **kw)
        for x, y in zip(e if isinstance(e, tuple) else (e,), t if isinstance(t, tuple) else (t,)):
            np.testing.assert_array_equal(x.numpy(), y.numpy())
            assert str(x.dtype) == str(y.dtype)
    x = ember.tensor([1.0, 1.0, 2.0], requires_grad=True)
    u = x.unique()
    assert _name(u) == "Unique2Backward0"
    with pytest.raises(NotImplementedError, match="the derivative for '_unique2' is not"):
        u.sum().backward()


def test_repeat_interleave_repeats_only_and_inplace():
    r = ember.tensor([1, 0, 3])
    np.testing.assert_array_equal(
        ember.repeat_interleave(r).numpy(), torch.repeat_interleave(torch.tensor([1, 0, 3])).numpy()
    )
    x = ember.tensor([[1.0, 2.0]], requires_grad=True)
    y = x * 1
    y.addcmul_(x, x, value=2)
    assert _name(y) == "AddcmulBackward0"
    y.addcdiv_(x, x + 1)
    assert _name(y) == "AddcdivBackward0"
    y.index_fill_(1, ember.tensor([0]), 0.0)
    assert _name(y) == "IndexFillBackward0"
    y.sum().backward()
    tx = torch.tensor([[1.0, 2.0]], requires_grad=True)
    ty = tx * 1
    ty.addcmul_(tx, tx, value=2).addcdiv_(tx, tx + 1).index_fill_(1, torch.tensor([0]), 0.0)
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


ERRORS = [
    lambda lib: lib.topk(lib.ones(3), 5),
    lambda lib: lib.topk(lib.ones(3), -1),
    lambda lib: lib.kthvalue(lib.ones(3), 0),
    lambda lib: lib.kthvalue(lib.ones(2, 3), 4, 1),
    lambda lib: lib.sort(lib.ones(3), dim=2),
    lambda lib: lib.repeat_interleave(lib.ones(3), lib.tensor([1, 2])),
    lambda lib: lib.repeat_interleave(lib.ones(3), lib.tensor([1, -2, 1])),
    lambda lib: lib.repeat_interleave(lib.ones(3), lib.tensor([[1]])),
    lambda lib: lib.index_fill(lib.ones(3), 0, lib.tensor([5]), 1.0),
    lambda lib: lib.index_fill(lib.ones(3), 0, lib.tensor([1.0]), 1.0),
    lambda lib: lib.index_fill(lib.ones(3), 0, lib.tensor([[1]]), 1.0),
    lambda lib: lib.index_fill(lib.ones(3), 0, lib.tensor([1]), lib.ones(2)),
    lambda lib: lib.addcdiv(*(lib.ones(2, dtype=lib.int64),) * 3),
]


@pytest.mark.parametrize("f", ERRORS)
def test_errors_match_torch(f):
    with pytest.raises(Exception) as te:
        f(torch)
    with pytest.raises(type(te.value)) as ee:
        f(ember)
    assert str(ee.value) == str(te.value)


def _outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 (the error itself is what is compared)
        return type(e).__name__, str(e)


def test_indices_modified_in_place_before_backward_errors_like_torch():
    res = []
    for lib in (ember, torch):
        x = lib.tensor([[3.0, 1.0, 2.0]], requires_grad=True)
        values, indices = x.sort()
        indices.add_(0)
        res.append(_outcome(values.sum().backward))
    assert res[0] == res[1]
    assert res[0][0] == "RuntimeError"


@pytest.mark.parametrize("kw", [{}, {"dim": 0}], ids=["unique2", "unique_dim"])
def test_unique_forward_ad_errors_like_torch(kw):
    res = []
    for lib in (ember, torch):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            d = fwad.make_dual(lib.tensor([1.0, 2.0, 1.0]), lib.tensor([1.0, 1.0, 1.0]))
            res.append(_outcome(lib.unique, d, **kw))
    assert res[0] == res[1]
    assert res[0][0] == "NotImplementedError"


def test_picked_gradient_is_recorded_for_higher_order():
    """The recorded backward of kthvalue is a scatter of the incoming gradient: its own
    gradient (with respect to that incoming gradient) gathers back, as in torch."""
    a = _rand((2, 3))
    res = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        w = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        r = x.kthvalue(2, 1)
        (g,) = lib.autograd.grad(r.values, x, w, create_graph=True)
        (gw,) = lib.autograd.grad((g * lib.tensor(a)).sum(), w)
        saved = r.values.grad_fn
        res.append((g.detach().numpy(), gw.numpy(), saved._saved_indices.numpy()))
        assert saved._saved_keepdim is False and tuple(saved._saved_self_sym_sizes) == (2, 3)
    for e, t in zip(*res):
        np.testing.assert_allclose(e, t, rtol=1e-12)
