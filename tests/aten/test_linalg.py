"""Linear algebra ops: values, dtypes, grad_fn names, gradients (finite differences and torch),
higher-order gradients and torch's error messages."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from numgrad import numgrad

torch = pytest.importorskip("torch")


# -- helpers ------------------------------------------------------------------------------


def _numgrad(f, arrays, w, eps=1e-6):
    """Central differences of ``sum(f(*xs) * w)`` w.r.t. each float64 array in ``arrays``."""
    return numgrad(f, arrays, [w], eps)


def _rand(shape, seed):
    return np.random.default_rng(seed).uniform(-1.5, 1.5, size=shape)


def _check_grad(f, shapes, rtol=1e-6, atol=1e-7):
    arrays = [_rand(s, i) for i, s in enumerate(shapes)]
    ts = [ember.tensor(a, requires_grad=True) for a in arrays]
    y = f(*ts)
    w = np.random.default_rng(99).uniform(0.5, 1.5, size=y.shape)
    y.backward(ember.tensor(w))
    for t, gn in zip(ts, _numgrad(f, arrays, w)):
        assert t.grad is not None and t.grad.shape == t.shape
        np.testing.assert_allclose(t.grad.numpy(), gn, rtol=rtol, atol=atol)


def _tensor(lib, a, dtype, rg):
    t = lib.tensor(np.asarray(a).astype(dtype))
    return t.requires_grad_(rg) if rg else t


def _run(lib, f, arrays, dtype, grad):
    ts = [_tensor(lib, a, dtype, grad) for a in arrays]
    y = f(lib, *ts)
    name = type(y.grad_fn).__name__ if y.grad_fn is not None else None
    grads = None
    if grad:
        w = np.random.default_rng(7).uniform(0.5, 1.5, size=tuple(y.shape)).astype(dtype)
        y.backward(lib.tensor(w))
        grads = [t.grad.numpy() for t in ts]
    return y.detach().numpy(), str(y.dtype), name, grads


def _compare(f, shapes, dtype="float64", grad=True, rtol=None):
    arrays = [_rand(s, i) for i, s in enumerate(shapes)]
    if rtol is None:
        rtol = 1e-10 if dtype == "float64" else 2e-5
    ey, edt, ename, egrads = _run(ember, f, arrays, dtype, grad)
    ty, tdt, tname, tgrads = _run(torch, f, arrays, dtype, grad)
    assert edt == tdt
    assert ename == tname
    assert ey.shape == ty.shape and ey.dtype == ty.dtype
    np.testing.assert_allclose(ey, ty, rtol=rtol, atol=rtol)
    if grad:
        for ge, gt in zip(egrads, tgrads):
            assert ge.dtype == gt.dtype and ge.shape == gt.shape
            np.testing.assert_allclose(ge, gt, rtol=rtol, atol=rtol)


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the point is to compare any error
        return type(e).__name__, str(e)
    return None


def _same_error(f):
    """Run ``f(lib)`` on both libraries; the errors (type and text) must be equal."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        te = _err(lambda: f(torch))
        ee = _err(lambda: f(ember))
    assert te is not None, "torch did not raise"
    assert ee == te


# -- op table: (id, f(lib, *tensors), shapes) --------------------------------------------

MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((2, 2, 3), (3, 4)),
    ((2, 2, 3), (3,)),
    ((2, 3), (2, 3, 4)),
    ((1, 3), (2, 3, 4)),
    ((2, 3), (2, 3, 1)),
    ((3,), (2, 3, 4)),
    ((2, 2, 3), (2, 3, 4)),
    ((1, 2, 3), (4, 3, 2)),
    ((2, 1, 2, 3), (3, 3, 2)),
    ((2, 1, 2, 3), (3,)),
    ((3,), (2, 1, 3, 2)),
]


def _f_matmul(lib, a, b):
    return lib.matmul(a, b)


OPS = [
    *[(f"matmul{sa}{sb}", _f_matmul, (sa, sb)) for sa, sb in MATMUL_SHAPES],
    ("matmul-op", lambda lib, a, b: a @ b, ((2, 3), (3, 2))),
    ("matmul-method", lambda lib, a, b: a.matmul(b), ((2, 2, 3), (2, 3, 2))),
    ("mm", lambda lib, a, b: lib.mm(a, b), ((2, 3), (3, 4))),
    ("mm-method", lambda lib, a, b: a.mm(b), ((4, 3), (3, 1))),
    ("bmm", lambda lib, a, b: lib.bmm(a, b), ((3, 2, 4), (3, 4, 2))),
    ("bmm-method", lambda lib, a, b: a.bmm(b), ((1, 2, 4), (1, 4, 3))),
    ("dot", lambda lib, a, b: lib.dot(a, b), ((4,), (4,))),
    ("dot-method", lambda lib, a, b: a.dot(b), ((3,), (3,))),
    ("vdot", lambda lib, a, b: lib.vdot(a, b), ((4,), (4,))),
    ("mv", lambda lib, a, b: lib.mv(a, b), ((2, 3), (3,))),
    ("mv-method", lambda lib, a, b: a.mv(b), ((4, 3), (3,))),
    ("outer", lambda lib, a, b: lib.outer(a, b), ((3,), (4,))),
    ("ger", lambda lib, a, b: a.ger(b), ((2,), (3,))),
    ("inner-1d", lambda lib, a, b: lib.inner(a, b), ((3,), (3,))),
    ("inner-2d", lambda lib, a, b: lib.inner(a, b), ((2, 3), (4, 3))),
    ("inner-3d", lambda lib, a, b: a.inner(b), ((2, 2, 3), (3,))),
    ("inner-0d", lambda lib, a, b: lib.inner(a, b), ((), (2, 3))),
    ("addmm", lambda lib, x, a, b: lib.addmm(x, a, b), ((2, 4), (2, 3), (3, 4))),
    (
        "addmm-bias",
        lambda lib, x, a, b: lib.addmm(x, a, b, beta=0.5, alpha=2.0),
        ((4,), (2, 3), (3, 4)),
    ),
    ("addmm-0d", lambda lib, x, a, b: x.addmm(a, b, alpha=-1.5), ((), (2, 3), (3, 4))),
    ("addmm-beta0", lambda lib, x, a, b: lib.addmm(x, a, b, beta=0), ((2, 1), (2, 3), (3, 4))),
    ("addmv", lambda lib, x, a, v: lib.addmv(x, a, v, beta=2, alpha=0.5), ((2,), (2, 3), (3,))),
    ("addmv-bcast", lambda lib, x, a, v: x.addmv(a, v), ((1,), (2, 3), (3,))),
    (
        "baddbmm",
        lambda lib, x, a, b: lib.baddbmm(x, a, b, beta=0.5, alpha=3),
        ((2, 2, 4), (2, 2, 3), (2, 3, 4)),
    ),
    ("baddbmm-bcast", lambda lib, x, a, b: x.baddbmm(a, b), ((2, 4), (3, 2, 3), (3, 3, 4))),
    ("tensordot-2", lambda lib, a, b: lib.tensordot(a, b), ((2, 3, 4), (3, 4, 2))),
    ("tensordot-0", lambda lib, a, b: lib.tensordot(a, b, dims=0), ((2,), (3, 2))),
    ("tensordot-1", lambda lib, a, b: lib.tensordot(a, b, dims=1), ((2, 3), (3, 2))),
    (
        "tensordot-lists",
        lambda lib, a, b: lib.tensordot(a, b, dims=([1, 0], [0, 2])),
        ((3, 2, 4), (2, 4, 3)),
    ),
    ("tensordot-neg", lambda lib, a, b: lib.tensordot(a, b, dims=([-1], [0])), ((2, 3), (3,))),
    ("tensordot-bcast", lambda lib, a, b: lib.tensordot(a, b, dims=([1], [0])), ((2, 1), (3, 4))),
    ("tensordot-bcast2", lambda lib, a, b: lib.tensordot(a, b, dims=([1], [1])), ((2, 3), (4, 1))),
    ("kron-2d", lambda lib, a, b: lib.kron(a, b), ((2, 3), (2, 2))),
    ("kron-1d2d", lambda lib, a, b: a.kron(b), ((3,), (2, 2))),
    ("kron-3d", lambda lib, a, b: lib.kron(a, b), ((2, 2), (3, 1, 2))),
    ("kron-0d", lambda lib, a, b: lib.kron(a, b), ((), (3,))),
    ("trace", lambda lib, a: lib.trace(a), ((3, 3),)),
    ("trace-rect", lambda lib, a: a.trace(), ((2, 4),)),
    ("cross", lambda lib, a, b: lib.cross(a, b, dim=0), ((3,), (3,))),
    ("cross-dim", lambda lib, a, b: a.cross(b, dim=1), ((2, 3, 4), (2, 3, 4))),
    ("cross-bcast", lambda lib, a, b: lib.cross(a, b, dim=-1), ((4, 3), (1, 3))),
    ("einsum-mm", lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), ((2, 3), (3, 4))),
    ("einsum-bmm", lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b), ((2, 2, 3), (2, 3, 4))),
    (
        "einsum-ell",
        lambda lib, a, b: lib.einsum("...ij,...jk->...ik", a, b),
        ((2, 1, 2, 3), (3, 3, 2)),
    ),
    ("einsum-trace", lambda lib, a: lib.einsum("ii->", a), ((3, 3),)),
    ("einsum-diag", lambda lib, a: lib.einsum("ii->i", a), ((3, 3),)),
    ("einsum-diag3", lambda lib, a: lib.einsum("iij->ji", a), ((3, 3, 2),)),
    ("einsum-perm", lambda lib, a: lib.einsum("ijk->kji", a), ((2, 3, 4),)),
    ("einsum-sum", lambda lib, a: lib.einsum("ij->", a), ((2, 3),)),
    ("einsum-outer", lambda lib, a, b: lib.einsum("i,j->ij", a, b), ((3,), (2,))),
    ("einsum-dot", lambda lib, a, b: lib.einsum("i,i->", a, b), ((3,), (3,))),
    ("einsum-implicit", lambda lib, a, b: lib.einsum("jk,ij", a, b), ((3, 4), (2, 3))),
    ("einsum-spaces", lambda lib, a, b: lib.einsum("i j , j k -> k i", a, b), ((2, 3), (3, 4))),
    ("einsum-list", lambda lib, a, b: lib.einsum("ij,jk", [a, b]), ((2, 3), (3, 4))),
    (
        "einsum-sublist",
        lambda lib, a, b: lib.einsum(a, [0, 1], b, [1, 2], [2, 0]),
        ((2, 3), (3, 4)),
    ),
    (
        "einsum-sublist-ell",
        lambda lib, a, b: lib.einsum(a, [..., 1], b, [1, 2]),
        ((4, 2, 3), (3, 2)),
    ),
    (
        "einsum-3ops",
        lambda lib, a, b, c: lib.einsum("ij,jk,kl->il", a, b, c),
        ((2, 3), (3, 4), (4, 2)),
    ),
    ("einsum-bcast-label", lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), ((2, 1), (3, 4))),
    ("einsum-bcast-label2", lambda lib, a, b: lib.einsum("ij,ij->ij", a, b), ((2, 1), (2, 3))),
    ("einsum-ell-sum", lambda lib, a: lib.einsum("...i->i", a), ((2, 3, 4),)),
    ("einsum-only-in-one", lambda lib, a, b: lib.einsum("ij,k->i", a, b), ((2, 3), (4,))),
    ("einsum-repeat-operand", lambda lib, a: lib.einsum("ij,ij->i", a, a), ((2, 3),)),
    ("einsum-upper", lambda lib, a, b: lib.einsum("Ab,bC->CA", a, b), ((2, 3), (3, 4))),
]
OP_IDS = [o[0] for o in OPS]


@pytest.mark.parametrize("name,f,shapes", OPS, ids=OP_IDS)
def test_gradcheck(name, f, shapes):
    _check_grad(lambda *ts: f(ember, *ts), shapes)


@pytest.mark.parametrize("name,f,shapes", OPS, ids=OP_IDS)
def test_matches_torch_float64(name, f, shapes):
    _compare(f, shapes, "float64")


@pytest.mark.parametrize("name,f,shapes", OPS, ids=OP_IDS)
def test_matches_torch_float32(name, f, shapes):
    _compare(f, shapes, "float32")


# -- grad_fn names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sa,sb,rga,rgb",
    [
        ((2, 3), (4, 3, 5), True, False),  # folded 2-D @ 3-D: CloneBackward0
        ((2, 3), (4, 3, 5), False, True),  # batched: UnsafeViewBackward0
        ((1, 3), (4, 3, 5), True, False),  # transpose already contiguous: TransposeBackward0
        ((2, 3), (4, 3, 1), True, True),
        ((2, 3), (0, 3, 4), True, False),
        ((3,), (4, 3, 5), True, False),
        ((4, 2, 3), (3, 5), False, True),
        ((3,), (3, 2), True, False),  # SqueezeBackward4
    ],
)
def test_matmul_grad_fn_names(sa, sb, rga, rgb):
    names = []
    for lib in (ember, torch):
        a = lib.ones(sa, dtype=lib.float64, requires_grad=rga)
        b = lib.ones(sb, dtype=lib.float64, requires_grad=rgb)
        names.append(type(lib.matmul(a, b).grad_fn).__name__)
    assert names[0] == names[1]


def test_grad_fn_names_summary():
    a = ember.ones(2, 3, requires_grad=True)
    v = ember.ones(3, requires_grad=True)
    assert type((a @ a.mT).grad_fn).__name__ == "MmBackward0"
    assert (v @ v).grad_fn.name() == "DotBackward0"
    assert (a @ v).grad_fn.name() == "MvBackward0"
    assert ember.outer(v, v).grad_fn.name() == "MulBackward0"
    assert ember.trace(a).grad_fn.name() == "TraceBackward0"
    assert ember.einsum("ij->j", a).grad_fn.name() == "SumBackward1"
    assert ember.einsum("ij->ji", a).grad_fn.name() == "PermuteBackward0"
    assert ember.einsum("ij,kj->ik", a, a).grad_fn.name() == "ViewBackward0"
    assert ember.einsum("ij,ij->ij", a, a).grad_fn.name() == "MulBackward0"


def test_no_grad_records_nothing():
    a = ember.ones(2, 3, requires_grad=True)
    with ember.no_grad():
        y = a @ ember.ones(3, 2)
    assert y.grad_fn is None and not y.requires_grad


# -- dtypes -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "float16"])
@pytest.mark.parametrize(
    "f,shapes",
    [
        (lambda lib, a, b: lib.matmul(a, b), ((2, 3), (3, 2))),
        (lambda lib, a, b: lib.matmul(a, b), ((2, 2, 3), (2, 3, 2))),
        (lambda lib, a, b: lib.matmul(a, b), ((3,), (3,))),
        (lambda lib, a, b: lib.mv(a, b), ((2, 3), (3,))),
        (lambda lib, a, b: lib.outer(a, b), ((2,), (3,))),
        (lambda lib, a, b: lib.kron(a, b), ((2,), (3,))),
        (lambda lib, a, b: lib.tensordot(a, b, dims=1), ((2, 3), (3, 2))),
        (lambda lib, a, b: lib.cross(a, b, dim=0), ((3,), (3,))),
        (lambda lib, a: lib.trace(a), ((3, 3),)),
        (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), ((2, 3), (3, 2))),
        (lambda lib, a: lib.einsum("ij->i", a), ((2, 3),)),
        (lambda lib, a: lib.einsum("ij->ji", a), ((2, 3),)),
    ],
)
def test_integer_and_half_dtypes(f, shapes, dtype):
    arrays = [np.random.default_rng(i).integers(0, 4, size=s) for i, s in enumerate(shapes)]
    ey, edt, ename, _ = _run(ember, f, arrays, dtype, False)
    ty, tdt, tname, _ = _run(torch, f, arrays, dtype, False)
    assert (edt, ename) == (tdt, tname)
    np.testing.assert_allclose(ey.astype(np.float64), ty.astype(np.float64), rtol=1e-3)


def test_int_matmul_is_not_differentiable():
    a = ember.tensor([[1, 2], [3, 4]])
    y = a @ a
    assert y.dtype == ember.int64 and y.grad_fn is None
    assert y.tolist() == [[7, 10], [15, 22]]


@pytest.mark.parametrize(
    "f,shapes",
    [
        (lambda lib, a, b: lib.outer(a, b), ((2,), (3,))),
        (lambda lib, a, b: lib.kron(a, b), ((2, 2), (3,))),
        (lambda lib, a, b: lib.inner(a, b), ((), (3,))),
    ],
)
def test_mixed_dtype_promotion_and_grads(f, shapes):
    arrays = [_rand(s, i) for i, s in enumerate(shapes)]
    res = []
    for lib in (ember, torch):
        a = lib.tensor(arrays[0].astype(np.float32), requires_grad=True)
        b = lib.tensor(arrays[1].astype(np.float64), requires_grad=True)
        y = f(lib, a, b)
        y.sum().backward()
        res.append(
            (str(y.dtype), str(a.grad.dtype), str(b.grad.dtype), a.grad.numpy(), b.grad.numpy())
        )
    assert res[0][:3] == res[1][:3]
    np.testing.assert_allclose(res[0][3], res[1][3], rtol=1e-6)
    np.testing.assert_allclose(res[0][4], res[1][4], rtol=1e-6)


def test_float32_stays_float32():
    a = ember.randn(4, 3, requires_grad=True)
    b = ember.randn(2, 3, 5, requires_grad=True)
    y = a @ b[0]
    z = ember.matmul(b.mT, a.mT)
    assert y.dtype == ember.float32 and z.dtype == ember.float32
    (y.sum() + z.sum()).backward()
    assert a.grad.dtype == ember.float32 and b.grad.dtype == ember.float32


def test_complex_mm_and_vdot_match_torch():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))
    b = rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))
    v = rng.normal(size=3) + 1j * rng.normal(size=3)
    out = []
    for lib in (ember, torch):
        ta = lib.tensor(a, requires_grad=True)
        tb = lib.tensor(b, requires_grad=True)
        tv = lib.tensor(v, requires_grad=True)
        y = lib.mm(ta, tb)
        z = lib.vdot(tv, ta[0])
        y.backward(lib.ones_like(y))
        z.backward(lib.tensor(0.5 - 1.5j, dtype=lib.complex128))
        out.append(
            (
                y.detach().numpy(),
                z.detach().numpy(),
                ta.grad.numpy(),
                tb.grad.numpy(),
                tv.grad.numpy(),
            )
        )
    for e, t in zip(*out):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)


# -- hypothesis: random compatible matmul shapes ---------------------------------------------


@st.composite
def _matmul_shapes(draw):
    n, m, p = (draw(st.integers(1, 4)) for _ in range(3))
    da = draw(st.integers(1, 4))
    db = draw(st.integers(1, 4))
    nb = max(da - 2, db - 2, 0)
    batch = [draw(st.integers(1, 3)) for _ in range(nb)]

    def batch_of(k):
        dims = batch[nb - k :] if k else []
        # Some batch dims become 1 (broadcast) in one operand.
        return [1 if draw(st.booleans()) and draw(st.booleans()) else d for d in dims]

    sa = [m] if da == 1 else batch_of(da - 2) + [n, m]
    sb = [m] if db == 1 else batch_of(db - 2) + [m, p]
    return tuple(sa), tuple(sb), draw(st.booleans()), draw(st.booleans())


@settings(derandomize=True, max_examples=50, deadline=None)
@given(_matmul_shapes())
def test_matmul_random_shapes_match_torch(case):
    sa, sb, rga, rgb = case
    if not (rga or rgb):
        rga = True
    arrays = [_rand(sa, 0), _rand(sb, 1)]
    res = []
    for lib in (ember, torch):
        a = _tensor(lib, arrays[0], "float64", rga)
        b = _tensor(lib, arrays[1], "float64", rgb)
        y = lib.matmul(a, b)
        w = np.random.default_rng(5).uniform(0.5, 1.5, size=tuple(y.shape))
        y.backward(lib.tensor(w))
        res.append(
            (
                y.detach().numpy(),
                type(y.grad_fn).__name__,
                a.grad.numpy() if rga else None,
                b.grad.numpy() if rgb else None,
            )
        )
    (ey, en, ega, egb), (ty, tn, tga, tgb) = res
    assert en == tn
    assert ey.shape == ty.shape
    np.testing.assert_allclose(ey, ty, rtol=1e-12, atol=1e-12)
    for ge, gt in ((ega, tga), (egb, tgb)):
        if gt is not None:
            assert ge.shape == gt.shape
            np.testing.assert_allclose(ge, gt, rtol=1e-12, atol=1e-12)


# -- higher-order gradients -----------------------------------------------------------------


@pytest.mark.parametrize(
    "f,shapes",
    [
        (lambda lib, a, b: lib.mm(a, b), ((2, 3), (3, 2))),
        (lambda lib, a, b: lib.matmul(a, b), ((2, 2, 3), (3,))),
        (lambda lib, a, b: lib.matmul(a, b), ((3,), (2, 3, 2))),
        (lambda lib, a, b: lib.matmul(a, b), ((3,), (3,))),
        (lambda lib, a, b: lib.outer(a, b), ((3,), (2,))),
        (lambda lib, a, b: lib.addmm(a[0], a, b, alpha=2.0, beta=0.5), ((3, 3), (3, 3))),
        (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), ((2, 3), (3, 2))),
        (lambda lib, a, b: lib.tensordot(a, b, dims=1), ((2, 3), (3, 2))),
        (lambda lib, a, b: lib.cross(a, b, dim=0), ((3,), (3,))),
        (lambda lib, a, b: lib.kron(a, b), ((2, 2), (3,))),
        (lambda lib, a, b: lib.bmm(a, b), ((2, 2, 3), (2, 3, 2))),
        (lambda lib, a, b: lib.mv(a, b), ((2, 3), (3,))),
        (lambda lib, a, b: lib.matmul(a, b), ((3,), (3, 2))),
        (lambda lib, a, b: lib.dot(a, b), ((3,), (3,))),
        (lambda lib, a, b: lib.inner(a, b), ((2, 3), (3,))),
        (lambda lib, a, b: lib.baddbmm(a[0], a, b, beta=2.0, alpha=0.5), ((2, 2, 2), (2, 2, 2))),
        (lambda lib, a, b: lib.einsum("ii,i->i", a, b), ((3, 3), (3,))),
        (lambda lib, a, b: lib.einsum("...ij,...jk", a, b), ((2, 1, 2, 3), (3, 3, 2))),
    ],
)
def test_double_backward_matches_torch(f, shapes):
    arrays = [_rand(s, i) for i, s in enumerate(shapes)]
    res = []
    for lib in (ember, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        y = f(lib, *ts)
        gs = lib.autograd.grad((y * y).sum(), ts, create_graph=True)
        s = sum((g * g).sum() for g in gs)
        hs = lib.autograd.grad(s, ts)
        res.append([g.detach().numpy() for g in gs] + [h.numpy() for h in hs])
    for e, t in zip(*res):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-10)


def test_double_backward_trace():
    x = ember.tensor(_rand((3, 3), 0), requires_grad=True)
    (g,) = ember.autograd.grad(ember.trace(x * x), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 2 * np.diag(np.diag(x.detach().numpy())))
    (h,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 2 * np.eye(3))


# -- saved tensors: only what the rule needs --------------------------------------------------


def test_inplace_on_operand_not_needed_is_allowed():
    for lib in (ember, torch):
        z = lib.ones(2, 3, requires_grad=True)
        w = lib.ones(3, 2)  # does not require grad: z's gradient needs w, not h
        h = z * 2
        y = h @ w
        h.mul_(3)
        y.sum().backward()
        assert z.grad.tolist() == [[4.0, 4.0, 4.0]] * 2


def test_inplace_on_needed_operand_raises_like_torch():
    def f(lib):
        z = lib.ones(2, 3, requires_grad=True)
        w = lib.ones(3, 2, requires_grad=True)
        h = z * 2
        y = h @ w
        h.mul_(3)
        y.sum().backward()

    errors = [_err(lambda lib=lib: f(lib)) for lib in (ember, torch)]
    # The node named at the end of the message is the engine's business (torch 2.13 says
    # "output 0 of Mul"); the op's part is that the saved operand is checked.
    for kind, msg in errors:
        assert kind == "RuntimeError"
        assert msg.startswith(
            "one of the variables needed for gradient computation has been "
            "modified by an inplace operation: [torch.FloatTensor [2, 3]]"
        )


# -- misc behaviour ------------------------------------------------------------------------------


def test_einsum_result_does_not_alias_input():
    a = ember.ones(2, 3)
    b = ember.einsum("ij->ji", a)
    b.add_(1)
    assert a.tolist() == [[1.0] * 3] * 2


def test_cross_default_dim_matches_torch():
    a, b = _rand((4, 3), 0), _rand((4, 3), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = ember.cross(ember.tensor(a), ember.tensor(b)).numpy()
        t = torch.cross(torch.tensor(a), torch.tensor(b)).numpy()
    np.testing.assert_allclose(e, t)


def test_out_argument():
    out = ember.empty(2, 2)
    r = ember.mm(ember.ones(2, 3), ember.ones(3, 2), out=out)
    assert r is out and out.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_matmul_out_with_grad_raises_like_torch():
    def f(lib):
        a = lib.ones(2, 3, requires_grad=True)
        return lib.matmul(a, lib.ones(3, 2), out=lib.empty(2, 2))

    _same_error(f)


def test_addmm_beta_zero_ignores_nan():
    x = ember.full((2, 2), float("nan"))
    y = ember.addmm(x, ember.ones(2, 3), ember.ones(3, 2), beta=0)
    assert not np.isnan(y.numpy()).any()


# -- errors ----------------------------------------------------------------------------------


def _f(lib, *shape, dtype="float32", rg=False):
    t = (
        lib.zeros(*shape, dtype=getattr(lib, dtype))
        if shape
        else lib.zeros((), dtype=getattr(lib, dtype))
    )
    return t.requires_grad_(rg) if rg else t


def _d(lib, *shape):
    return _f(lib, *shape, dtype="float64")


def _i(lib, *shape):
    return _f(lib, *shape, dtype="int64")


ERRORS = [
    # dot / vdot
    lambda L: L.dot(_f(L, 2, 3), _f(L, 2, 3)),
    lambda L: L.dot(_f(L, 3), _f(L, 2, 3)),
    lambda L: L.dot(_f(L, 3), _f(L, 4)),
    lambda L: L.dot(_f(L, 3), _d(L, 3)),
    lambda L: L.dot(_d(L, 3), _f(L, 3)),
    lambda L: L.dot(_i(L, 3), _f(L, 3)),
    lambda L: L.dot(_f(L, 3), _d(L, 4)),
    lambda L: L.dot(_f(L, 3, dtype="bool"), _f(L, 3, dtype="bool")),
    lambda L: L.dot(_f(L, 3), 2),
    lambda L: L.vdot(_f(L, 3), _f(L, 4)),
    lambda L: L.vdot(_f(L, 3), _d(L, 3)),
    # mm
    lambda L: L.mm(_f(L, 2, 3), _f(L, 4, 5)),
    lambda L: L.mm(_f(L, 3), _f(L, 3, 5)),
    lambda L: L.mm(_f(L, 3, 3), _f(L, 2, 3, 5)),
    lambda L: L.mm(_f(L, 2, 3), _d(L, 3, 5)),
    lambda L: L.mm(_d(L, 2, 3), _f(L, 3, 5)),
    lambda L: L.mm(_i(L, 2, 3), _f(L, 3, 5)),
    lambda L: L.mm(_f(L, 2, 3), _f(L, 3, 5, dtype="float16")),
    lambda L: L.mm(_f(L, 2, 3), _f(L, 3, 5, dtype="int32")),
    lambda L: L.mm(_f(L, 2, 3), _f(L, 3, 5, dtype="int16")),
    lambda L: L.mm(_f(L, 2, 3), _f(L, 3, 5, dtype="int8")),
    lambda L: L.mm(_f(L, 2, 3), _f(L, 3, 5, dtype="uint8")),
    lambda L: L.mm(_f(L, 2, 3), _f(L, 3, 5, dtype="bool")),
    lambda L: L.mm(_f(L, 2, 3), _f(L, 3, 5, dtype="complex64")),
    lambda L: L.mm(_f(L, 2, 3, dtype="bool"), _f(L, 3, 5, dtype="bool")),
    lambda L: L.mm(_f(L, 2, 3), _d(L, 4, 5)),
    lambda L: L.mm(_f(L, 2, 3), 1.0),
    # mv
    lambda L: L.mv(_f(L, 2, 3), _f(L, 4)),
    lambda L: L.mv(_f(L, 2, 3), _f(L, 3, 1)),
    lambda L: L.mv(_f(L, 3), _f(L, 3)),
    lambda L: L.mv(_f(L, 2, 3), _d(L, 3)),
    lambda L: L.mv(_d(L, 2, 3), _f(L, 3)),
    lambda L: L.mv(_f(L, 2, 3, dtype="bool"), _f(L, 3, dtype="bool")),
    # bmm
    lambda L: L.bmm(_f(L, 2, 3), _f(L, 3, 4)),
    lambda L: L.bmm(_f(L, 2, 2, 3), _f(L, 3, 4)),
    lambda L: L.bmm(_f(L, 2, 2, 3), _f(L, 3, 3, 4)),
    lambda L: L.bmm(_f(L, 2, 2, 3), _f(L, 2, 4, 4)),
    lambda L: L.bmm(_f(L, 2, 2, 3), _d(L, 2, 3, 4)),
    lambda L: L.bmm(_d(L, 2, 2, 3), _f(L, 2, 3, 4)),
    lambda L: L.bmm(_f(L, 1, 2, 3, dtype="bool"), _f(L, 1, 3, 2, dtype="bool")),
    # matmul, every path
    lambda L: L.matmul(_f(L), _f(L, 3)),
    lambda L: L.matmul(_f(L, 3), _f(L)),
    lambda L: L.matmul(_f(L, 2, 3), _f(L, 4, 5)),
    lambda L: L.matmul(_f(L, 2, 3), _d(L, 3, 5)),
    lambda L: L.matmul(_f(L, 3), _d(L, 3)),
    lambda L: L.matmul(_f(L, 2, 3), _d(L, 3)),
    lambda L: L.matmul(_f(L, 3), _d(L, 3, 2)),
    lambda L: L.matmul(_f(L, 4, 2, 3), _d(L, 4, 3, 5)),
    lambda L: L.matmul(_f(L, 4, 2, 3), _d(L, 3, 5)),
    lambda L: L.matmul(_f(L, 2, 3), _d(L, 4, 3, 5)),
    lambda L: L.matmul(_f(L, 2, 3, rg=True), _d(L, 4, 3, 5)),
    lambda L: L.matmul(_i(L, 2, 3), _f(L, 3, 5)),
    lambda L: L.matmul(_i(L, 2, 2, 3), _f(L, 2, 3, 2)),
    lambda L: L.matmul(_f(L, 3), _f(L, 4)),
    lambda L: L.matmul(_f(L, 2, 3), _f(L, 4)),
    lambda L: L.matmul(_f(L, 3), _f(L, 4, 2)),
    lambda L: L.matmul(_f(L, 5, 2, 3), _f(L, 5, 4, 2)),
    lambda L: L.matmul(_f(L, 5, 2, 3), _f(L, 4, 3, 2)),
    lambda L: L.matmul(_f(L, 2, 5, 2, 3), _f(L, 3, 4, 3, 2)),
    lambda L: L.matmul(_f(L, 5, 2, 3), _f(L, 4, 2)),
    lambda L: L.matmul(_f(L, 5, 2, 3), _f(L, 4)),
    lambda L: L.matmul(_f(L, 4), _f(L, 5, 2, 3)),
    lambda L: L.matmul(_f(L, 4, rg=True), _f(L, 5, 2, 3)),
    lambda L: L.matmul(_f(L, 2, 4), _f(L, 5, 2, 3)),
    lambda L: L.matmul(_f(L, 2, 4, rg=True), _f(L, 5, 2, 3)),
    lambda L: L.matmul(_f(L, 4, 2, 3), _f(L, 4, 5, rg=True)),
    lambda L: L.matmul(_f(L, 3, 4, 2).mT.mT.transpose(0, 1), _f(L, 4)),
    lambda L: L.matmul(_f(L, 4, 2), _f(L, 3, 4, 2).transpose(0, 1)),
    lambda L: L.matmul(_f(L, 2, 4, 3, 2), _d(L, 2)),
    lambda L: L.matmul(_f(L, 3, rg=True), _d(L, 2, 3, 2)),
    lambda L: L.matmul(_f(L, 2, 2, 3, dtype="bool"), _f(L, 2, 3, 2, dtype="bool")),
    lambda L: L.matmul(_f(L, 2, 3, dtype="bool"), _f(L, 3, 2, dtype="bool")),
    lambda L: L.matmul(_f(L, 3), 2),
    lambda L: L.matmul(2, _f(L, 3)),
    # outer / inner
    lambda L: L.outer(_f(L, 2, 2), _f(L, 3)),
    lambda L: L.outer(_f(L, 3), _f(L, 2, 2)),
    lambda L: L.outer(_f(L), _f(L, 3)),
    lambda L: L.ger(_f(L, 3), 1),
    lambda L: L.inner(_f(L, 2, 3), _f(L, 4, 2)),
    lambda L: L.inner(_f(L, 3), _d(L, 3)),
    lambda L: L.inner(_i(L, 3), _f(L, 3)),
    # addmm / addmv / baddbmm
    lambda L: L.addmm(_f(L, 4), _f(L, 2, 3), _f(L, 3, 3)),
    lambda L: L.addmm(_f(L, 2, 3), _f(L, 2, 3), _f(L, 4, 3)),
    lambda L: L.addmm(_d(L, 2, 3), _f(L, 2, 3), _f(L, 3, 3)),
    lambda L: L.addmm(_f(L, 2, 3), _d(L, 2, 3), _f(L, 3, 3)),
    lambda L: L.addmm(_f(L, 2, 3), _f(L, 2, 3), _d(L, 3, 3)),
    lambda L: L.addmm(_f(L, 2, 3), _f(L, 3), _f(L, 3, 3)),
    lambda L: L.addmm(_f(L, 2, 3), _f(L, 2, 3), _f(L, 3)),
    lambda L: L.addmm(_f(L, 1, 2, 2), _f(L, 2, 3), _f(L, 3, 2)),
    lambda L: L.addmm(_f(L, 4), _f(L, 2, 3), _d(L, 3, 3)),
    lambda L: L.addmm(_f(L, 2, 3), 1, _f(L, 3, 3)),
    lambda L: L.addmv(_f(L, 4), _f(L, 2, 3), _f(L, 3)),
    lambda L: L.addmv(_f(L, 2, 2), _f(L, 2, 3), _f(L, 3)),
    lambda L: L.addmv(_f(L, 2), _f(L, 3), _f(L, 3)),
    lambda L: L.addmv(_f(L), _f(L, 2, 3), _f(L, 4)),
    lambda L: L.addmv(_f(L, 1), _f(L, 2, 3), _f(L, 4)),
    lambda L: L.addmv(_d(L, 2), _f(L, 2, 3), _f(L, 3)),
    lambda L: L.addmv(_f(L, 2), _d(L, 2, 3), _f(L, 3)),
    lambda L: L.addmv(_f(L, 2), _f(L, 2, 3), _d(L, 3)),
    lambda L: L.baddbmm(_d(L, 2, 2, 4), _f(L, 2, 2, 3), _f(L, 2, 3, 4)),
    lambda L: L.baddbmm(_f(L, 2, 2, 4), _d(L, 2, 2, 3), _f(L, 2, 3, 4)),
    lambda L: L.baddbmm(_f(L, 2, 2, 4), _f(L, 2, 2, 3), _d(L, 2, 3, 4)),
    lambda L: L.baddbmm(_f(L, 3, 2, 4), _f(L, 2, 2, 3), _f(L, 2, 3, 4)),
    lambda L: L.baddbmm(_f(L, 2, 4), _f(L, 2, 3), _f(L, 2, 3, 4)),
    lambda L: L.baddbmm(_f(L, 2, 2, 4), _f(L, 2, 2, 3), _f(L, 2, 4, 4)),
    lambda L: L.baddbmm(_d(L, 2, 2, 4), _f(L, 2, 2, 3), _f(L, 2, 4, 4)),
    # trace / kron / cross
    lambda L: L.trace(_f(L, 3)),
    lambda L: L.trace(_f(L, 3, 3, 3)),
    lambda L: L.trace(_f(L, 3, 3, dtype="bool")),
    lambda L: L.trace(2),
    lambda L: L.kron(_f(L, 3), 2),
    lambda L: L.cross(_f(L, 4), _f(L, 4)),
    lambda L: L.cross(_f(L, 4, 3), _f(L, 4, 3), dim=0),
    lambda L: L.cross(_f(L, 4, 3), _f(L, 3), dim=1),
    lambda L: L.cross(_f(L, 3), _f(L, 3), dim=1),
    lambda L: L.cross(_f(L, 2, 3), _f(L, 4, 3), dim=1),
    lambda L: L.cross(_f(L, 3), _d(L, 3), dim=0),
    lambda L: L.cross(_d(L, 3), _f(L, 3), dim=0),
    lambda L: L.cross(_f(L, 2, 3), _f(L, 2, 3, 3)),
    lambda L: L.cross(_f(L, 2, 4), _f(L, 3, 4)),
    # tensordot
    lambda L: L.tensordot(_f(L, 2, 3), _f(L, 4, 5), dims=1),
    lambda L: L.tensordot(_f(L, 2, 3), _f(L, 3, 5), dims=-1),
    lambda L: L.tensordot(_f(L, 2, 3), _f(L, 3, 5), dims=3),
    lambda L: L.tensordot(_f(L, 2, 3), _f(L, 3, 5)),
    lambda L: L.tensordot(_f(L, 2, 3, 4), _f(L, 4, 3, 5), dims=([1, 2], [0, 1])),
    lambda L: L.tensordot(_f(L, 2, 3), _d(L, 3, 5), dims=1),
    lambda L: L.tensordot(_f(L, 2, 3, 4), _f(L, 4, 3, 5), dims=([1, 2], [1])),
    lambda L: L.tensordot(_f(L, 2, 3, 4), _f(L, 4, 3, 5), dims=(2, 0)),
    lambda L: L.tensordot(_f(L, 2, 3), _f(L, 3, 2), dims=[1, 0]),
    lambda L: L.tensordot(_f(L, 2, 3), _f(L, 3, 2), dims=([2], [0])),
    lambda L: L.tensordot(_f(L, 3, 3), _f(L, 3, 3), dims=([0, 0], [0, 1])),
    lambda L: L.tensordot(_f(L, 2, 3), _f(L, 3, 2), dims=1.5),
    # einsum
    lambda L: L.einsum("ij,jk->ik", _f(L, 2, 3), _f(L, 4, 5)),
    lambda L: L.einsum("ij,jk->ik", _f(L, 2, 3)),
    lambda L: L.einsum("i->i", _f(L, 2), _f(L, 3)),
    lambda L: L.einsum("ij->ji", _f(L, 2, 3, 4)),
    lambda L: L.einsum("...ijk->i", _f(L, 2, 3)),
    lambda L: L.einsum("ij,jk->ik", _f(L, 2, 3), _d(L, 3, 4)),
    lambda L: L.einsum("i,i->", _i(L, 2), _f(L, 2)),
    lambda L: L.einsum("ij->k", _f(L, 2, 3)),
    lambda L: L.einsum("ij->ii", _f(L, 2, 3)),
    lambda L: L.einsum("ii->i", _f(L, 3, 4)),
    lambda L: L.einsum("iij->j", _f(L, 3, 4, 2)),
    lambda L: L.einsum("ij"),
    lambda L: L.einsum("i1->i", _f(L, 2, 3)),
    lambda L: L.einsum("i->i->i", _f(L, 2)),
    lambda L: L.einsum("...i...->i", _f(L, 2)),
    lambda L: L.einsum("i.j->i", _f(L, 2, 3)),
    lambda L: L.einsum("i..", _f(L, 2, 3)),
    lambda L: L.einsum("i->..", _f(L, 2)),
    lambda L: L.einsum("...i->......", _f(L, 2)),
    lambda L: L.einsum("...i,...i->...", _f(L, 2, 3), _f(L, 4, 3)),
    lambda L: L.einsum("...i,...i->...", _f(L, 5, 2, 3), _f(L, 4, 3)),
    lambda L: L.einsum("...i,...i->...", _f(L, 5, 2, 3), _f(L, 7, 4, 3)),
    lambda L: L.einsum("i...,i...->...", _f(L, 3, 5, 2), _f(L, 3, 4)),
    lambda L: L.einsum(_f(L, 2), [60]),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case):
    _same_error(ERRORS[case])


def test_matmul_operator_with_tensors():
    a = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = a @ a
    assert y.grad_fn.name() == "MmBackward0"
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [[7.0, 11.0], [9.0, 13.0]])
