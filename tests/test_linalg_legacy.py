"""torch's legacy linear algebra (torch.cholesky, cholesky_solve, cholesky_inverse, lu,
lu_solve, lu_unpack, triangular_solve, and the Tensor methods hardshrink, prelu, mvlgamma):
values on batched, broadcast, float32 and complex inputs, return types, the deprecation
warnings (once per process), torch's error messages, and forward mode where torch's own
tangents are not the derivative. Values, grad_fn names, gradients, forward mode and double
backward of each op are in tests/opdb/linalg.py."""

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)


def _spd(a):
    return a @ np.swapaxes(a.conj(), -1, -2) + 3 * np.eye(a.shape[-1])


S = _spd(RNG.normal(size=(2, 3, 3)))  # symmetric positive-definite
L = np.linalg.cholesky(S)  # its lower Cholesky factors
B = RNG.normal(size=(4, 1, 3, 2))  # right-hand sides broadcasting against S's batch
UP = np.triu(RNG.normal(size=(3, 3))) + 3 * np.eye(3)  # upper triangular
_C = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
SC = _spd(_C)
LC = np.linalg.cholesky(SC)
BC = RNG.normal(size=(3, 2)) + 1j * RNG.normal(size=(3, 2))


def _run(m, fn, arrays, dtype=None, requires_grad=True):
    ts = []
    for a in arrays:
        a = a if dtype is None else a.astype(dtype)
        ts.append(m.tensor(a, requires_grad=requires_grad and a.dtype.kind in "fc"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(m, *ts)


def _same(e, t, tol):
    if isinstance(t, tuple):
        assert type(e).__name__ == type(t).__name__
        assert isinstance(e, tuple) and len(e) == len(t)
        for x, y in zip(e, t):
            _same(x, y, tol)
        return
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)
    names = [None if x.grad_fn is None else type(x.grad_fn).__name__ for x in (e, t)]
    assert names[0] == names[1]


CASES = [
    ("cholesky", lambda m, s, low, b, u: m.cholesky(s)),
    ("cholesky_upper", lambda m, s, low, b, u: m.cholesky(s, upper=True)),
    ("Tensor.cholesky", lambda m, s, low, b, u: s.cholesky(True)),
    ("cholesky_solve", lambda m, s, low, b, u: m.cholesky_solve(b, low)),
    ("Tensor.cholesky_solve", lambda m, s, low, b, u: b.cholesky_solve(low.mT, upper=True)),
    ("cholesky_inverse", lambda m, s, low, b, u: m.cholesky_inverse(low)),
    ("Tensor.cholesky_inverse", lambda m, s, low, b, u: low.mT.cholesky_inverse(upper=True)),
    ("lu", lambda m, s, low, b, u: m.lu(s)),
    ("Tensor.lu_infos", lambda m, s, low, b, u: s.lu(get_infos=True)),
    ("lu_solve", lambda m, s, low, b, u: m.lu_solve(b[0], *m.linalg.lu_factor(s))),
    ("Tensor.lu_solve", lambda m, s, low, b, u: b[:, 0].lu_solve(*m.linalg.lu_factor(s[0]))),
    ("lu_unpack", lambda m, s, low, b, u: m.lu_unpack(*m.linalg.lu_factor(s))),
    ("lu_unpack_tall", lambda m, s, low, b, u: m.lu_unpack(*m.linalg.lu_factor(b[:, 0].mT))),
    ("lu_unpack_wide", lambda m, s, low, b, u: m.lu_unpack(*m.linalg.lu_factor(b[0, 0].mT))),
    ("lu_unpack_no_data", lambda m, s, low, b, u: m.lu_unpack(*m.lu(s), unpack_data=False)),
    ("lu_unpack_no_pivots", lambda m, s, low, b, u: m.lu_unpack(*m.lu(s), unpack_pivots=False)),
    ("triangular_solve", lambda m, s, low, b, u: m.triangular_solve(b, u)),
    ("Tensor.triangular_solve", lambda m, s, low, b, u: b.triangular_solve(u, transpose=True)),
    (
        "triangular_solve_unit",
        lambda m, s, low, b, u: m.triangular_solve(b, u.mT, upper=False, unitriangular=True),
    ),
    (
        "triangular_solve_bcast_transpose",
        lambda m, s, low, b, u: m.triangular_solve(b, low, upper=False, transpose=True),
    ),
]


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-10), (np.float32, 2e-5)])
@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
def test_values_types_and_grad_fn_match_torch(name, fn, dtype, tol):
    arrays = [S, L, B, UP]
    _same(_run(ember, fn, arrays, dtype), _run(torch, fn, arrays, dtype), tol)


COMPLEX = [
    lambda m, s, low, b: m.cholesky(s),
    lambda m, s, low, b: m.cholesky_solve(b, low),
    lambda m, s, low, b: m.cholesky_inverse(low.mH, upper=True),
    lambda m, s, low, b: m.triangular_solve(b, low, upper=False, transpose=True),
    lambda m, s, low, b: m.lu_solve(b, *m.lu(s)),
    lambda m, s, low, b: m.lu_unpack(*m.lu(s)),
]


@pytest.mark.parametrize("fn", COMPLEX)
def test_complex_values_match_torch(fn):
    _same(_run(ember, fn, [SC, LC, BC]), _run(torch, fn, [SC, LC, BC]), 1e-10)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, b, low: (m.cholesky_solve(b, low) * m.tensor(2.0)).sum(),
        lambda m, b, low: ((m.cholesky_inverse(low) @ b) ** 2).sum(),
        lambda m, b, low: (m.triangular_solve(b, low, upper=False).solution ** 2).sum(),
        lambda m, b, low: sum(x.sum() for x in m.triangular_solve(b, low, False, True, True)),
    ],
)
def test_complex_gradients_match_torch(fn):
    def grads(m):
        x = m.tensor(BC, requires_grad=True)
        y = m.tensor(LC, requires_grad=True)
        out = _run(m, lambda m_, *_: fn(m_, x, y), [])
        out.abs().backward()
        return x.grad.numpy(), y.grad.numpy()

    for e, t in zip(grads(ember), grads(torch)):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


def test_return_types_match_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m in (ember, torch):
            s = m.tensor(S[0])
            r = m.triangular_solve(s, s.triu())
            assert type(r).__name__ == "triangular_solve"
            assert r._fields if m is ember else True
            assert r.solution is r[0] and r.cloned_coefficient is r[1]
            u = m.lu_unpack(*m.linalg.lu_factor(s))
            assert type(u).__name__ == "lu_unpack"
            assert u.P is u[0] and u.L is u[1] and u.U is u[2]
            assert type(m.lu(s)) is tuple and len(m.lu(s)) == 2
            assert type(s.lu(get_infos=True)) is tuple and len(s.lu(get_infos=True)) == 3
    assert str(ember.return_types.triangular_solve.__qualname__) == "return_types.triangular_solve"


def test_singular_and_non_pd_inputs_match_torch():
    zero = np.zeros((2, 3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (
            lambda m, z: m.lu(z, get_infos=True),  # no error: info says so
            lambda m, z: m.lu(z),
            lambda m, z: m.triangular_solve(m.ones(2, 3, 2, dtype=z.dtype), z),  # inf, nan
            lambda m, z: m.triangular_solve(m.ones(3, 1, dtype=z.dtype), z[0], unitriangular=True),
        ):
            e, t = fn(ember, ember.tensor(zero)), fn(torch, torch.tensor(zero))
            for x, y in zip(e, t):
                np.testing.assert_array_equal(x.numpy(), y.numpy())


_LEGACY_WARNINGS = """
import json, sys, warnings
warnings.simplefilter("always")
if sys.argv[1] == "ember":
    import ember as torch
else:
    import torch
got = []
calls = [
    lambda: torch.cholesky(torch.ones(3)),  # warns before its error
    lambda: torch.cholesky(torch.eye(2)),
    lambda: torch.eye(2).cholesky(),
    lambda: torch.lu(torch.eye(2)),
    lambda: torch.eye(2).lu(),
    lambda: torch.lu_solve(torch.ones(2, 1), *torch.linalg.lu_factor(torch.eye(2))),
    lambda: torch.triangular_solve(torch.ones(2, 1), torch.eye(2)),
    lambda: torch.ones(2, 1).triangular_solve(torch.eye(2)),
    lambda: torch.cholesky_solve(torch.ones(2, 1), torch.eye(2)),
    lambda: torch.cholesky_inverse(torch.eye(2)),
    lambda: torch.lu_unpack(*torch.linalg.lu_factor(torch.eye(2))),
]
for call in calls:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            call()
        except RuntimeError:
            pass
    got.append([(x.category.__name__, str(x.message)) for x in w])
print(json.dumps(got))
"""


def test_deprecation_warnings_match_torch_once_per_process():
    """Each deprecated function warns once per process, as torch's TORCH_WARN_ONCE (so each
    library runs in a fresh interpreter)."""
    out = {}
    for lib in ("ember", "torch"):
        res = subprocess.run(
            [sys.executable, "-c", _LEGACY_WARNINGS, lib], capture_output=True, text=True
        )
        assert res.returncode == 0, res.stderr
        out[lib] = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["ember"] == out["torch"]
    assert [len(w) for w in out["torch"]] == [1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0]


def _error(m, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(m)
        except Exception as e:  # noqa: BLE001 (the error is what is compared)
            return type(e).__name__, str(e)
    raise AssertionError("no error")


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.cholesky(m.zeros(3, 3, dtype=m.float64)),
        lambda m: m.cholesky(-m.eye(3).expand(2, 3, 3)),
        lambda m: m.cholesky(m.ones(3)),
        lambda m: m.cholesky(m.ones(3, 2)),
        lambda m: m.cholesky(m.ones(3, 3, dtype=m.int64)),
        lambda m: m.cholesky(m.eye(3, dtype=m.float16)),
        lambda m: m.cholesky([[1.0]]),
        lambda m: m.cholesky_solve(m.ones(3), m.eye(3)),
        lambda m: m.cholesky_solve(m.ones(3, 2), m.ones(3)),
        lambda m: m.cholesky_solve(m.ones(4, 2), m.eye(3)),
        lambda m: m.cholesky_solve(m.ones(3, 2), m.ones(3, 2)),
        lambda m: m.cholesky_solve(m.ones(3, 2), m.eye(3, dtype=m.float64)),
        lambda m: m.cholesky_solve(m.ones(3, 2, dtype=m.int64), m.eye(3, dtype=m.int64)),
        lambda m: m.cholesky_solve(m.ones(2, 3, 2), m.eye(3).expand(3, 3, 3)),
        lambda m: m.cholesky_inverse(m.ones(3)),
        lambda m: m.cholesky_inverse(m.ones(3, 2)),
        lambda m: m.cholesky_inverse(m.tensor([[1.0, 0.0], [0.0, 0.0]])),
        lambda m: m.cholesky_inverse(m.zeros(2, 3, 3)),
        lambda m: m.cholesky_inverse(m.eye(3, dtype=m.int64)),
        lambda m: m.lu(m.ones(3)),
        lambda m: m.lu(m.ones(3, 3, dtype=m.int64)),
        lambda m: m.lu(m.eye(3), pivot=False),
        lambda m: m.linalg.lu_factor_ex(m.ones(3)),
        lambda m: m.lu_solve(m.ones(3), *m.linalg.lu_factor(m.eye(3))),
        lambda m: m.lu_solve(m.ones(4, 2), *m.linalg.lu_factor(m.eye(3))),
        lambda m: m.lu_solve(m.ones(3, 2, dtype=m.float64), *m.linalg.lu_factor(m.eye(3))),
        lambda m: m.linalg.lu_solve(m.eye(3), m.ones(3, dtype=m.int64), m.ones(3, 1)),
        lambda m: m.linalg.lu_solve(m.eye(3), m.ones(2, dtype=m.int32), m.ones(3, 1)),
        lambda m: m.linalg.lu_solve(m.eye(3), m.ones(2, 3, dtype=m.int32), m.ones(3, 1)),
        lambda m: m.linalg.lu_solve(m.ones(2, 3), m.ones(3, dtype=m.int32), m.ones(3, 1)),
        lambda m: m.lu_unpack(m.ones(3), m.ones(3, dtype=m.int32)),
        lambda m: m.lu_unpack(m.eye(3), m.ones(3, dtype=m.int64)),
        lambda m: m.triangular_solve(m.ones(3), m.eye(3)),
        lambda m: m.triangular_solve(m.ones(3, 2), m.ones(3)),
        lambda m: m.triangular_solve(m.ones(4, 2), m.eye(3)),
        lambda m: m.triangular_solve(m.ones(3, 2), m.ones(3, 4)),
        lambda m: m.triangular_solve(m.ones(3, 2), m.eye(3, dtype=m.float64)),
        lambda m: m.triangular_solve(m.ones(3, 2, dtype=m.int64), m.eye(3, dtype=m.int64)),
        lambda m: m.triangular_solve(m.ones(2, 3, 2), m.eye(3).expand(3, 3, 3)),
        lambda m: m.tensor([1, -2]).hardshrink(),
        lambda m: m.tensor([1.0]).prelu(m.tensor([1])),
        lambda m: m.tensor([2.0]).mvlgamma(0),
    ],
)
def test_errors_match_torch(fn):
    assert _error(ember, fn) == _error(torch, fn)


def test_cholesky_has_no_forward_mode_as_torch():
    msgs = []
    for m in (ember, torch):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor(S[0]), m.tensor(S[1]))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(NotImplementedError) as err:
                    m.cholesky(x)
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]


def _jvp_vs_vjp(fn, primals):
    """``<u, J v>`` by ember's forward mode and ``<J^T u, v>`` by its reverse mode."""
    rng = np.random.default_rng(3)
    tangents = [rng.standard_normal(p.shape) for p in primals]
    fw = ember.autograd.forward_ad
    with fw.dual_level():
        ins = [fw.make_dual(ember.tensor(p), ember.tensor(t)) for p, t in zip(primals, tangents)]
        outs = fn(*ins)
        outs = outs if isinstance(outs, tuple) else (outs,)
        jvps = [fw.unpack_dual(o).tangent.numpy() for o in outs]
    us = [rng.standard_normal(j.shape) for j in jvps]
    xs = [ember.tensor(p, requires_grad=True) for p in primals]
    outs = fn(*xs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    grads = ember.autograd.grad(list(outs), xs, [ember.tensor(u) for u in us])
    lhs = sum(float((u * j).sum()) for u, j in zip(us, jvps))
    rhs = sum(float((g.numpy() * t).sum()) for g, t in zip(grads, tangents))
    assert lhs == pytest.approx(rhs, rel=1e-9)


@pytest.mark.parametrize(
    "fn, primals",
    [
        # torch's tangents of these are not the derivative (see linalg.py's legacy section)
        (lambda low: ember.cholesky_inverse(low.tril()), [L]),
        (lambda up: ember.cholesky_inverse(up.triu(), upper=True), [L.swapaxes(-1, -2)]),
        (
            lambda b, a: tuple(ember.triangular_solve(b, a.triu(), transpose=True)),
            [B[0], UP],
        ),
        (
            lambda b, a: tuple(ember.triangular_solve(b, a.tril(-1) + 3, False, True, True)),
            [B[0, 0], UP.T],
        ),
        # torch's forward mode fails when A broadcasts
        (lambda b, a: tuple(ember.triangular_solve(b, a.tril(), upper=False)), [B, L]),
    ],
)
def test_forward_mode_equals_reverse_mode(fn, primals):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _jvp_vs_vjp(fn, primals)


def test_tensor_methods_of_existing_functions_match_torch():
    x = RNG.normal(size=(2, 3))
    for fn in (
        lambda m, t: t.hardshrink(),
        lambda m, t: t.hardshrink(lambd=0.1),
        lambda m, t: t.prelu(m.tensor([0.25], dtype=t.dtype)),
        lambda m, t: (t.abs() + 2).mvlgamma(2),
        lambda m, t: (t.abs() + 2).mvlgamma(p=3),
    ):
        e = fn(ember, ember.tensor(x, requires_grad=True))
        t = fn(torch, torch.tensor(x, requires_grad=True))
        _same(e, t, 1e-12)
    for m in (ember, torch):
        y = m.tensor(np.abs(x) + 2)
        assert y.mvlgamma_(2) is y
        np.testing.assert_allclose(y.numpy(), m.mvlgamma(m.tensor(np.abs(x) + 2), 2).numpy())
