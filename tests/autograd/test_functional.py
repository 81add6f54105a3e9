"""ember.autograd.functional against torch.autograd.functional: values, shapes, errors."""

import numpy as np
import pytest

import ember
import ember.autograd.functional as F

torch = pytest.importorskip("torch")
import torch.autograd.functional as TF  # noqa: E402

API = {ember: F, torch: TF}


def _pair(*arrays):
    """The same float64 values as torch and ember tensors."""
    return tuple(torch.tensor(a) for a in arrays), tuple(ember.tensor(a) for a in arrays)


def _unpack(ts, tuple_input: bool):
    return ts if tuple_input else ts[0]


def _assert_same(t, e, check_requires_grad=True, path="result"):
    if isinstance(t, (tuple, list)):
        assert type(e) is type(t), f"{path}: {type(e).__name__} vs torch {type(t).__name__}"
        assert len(e) == len(t), path
        for i, (a, b) in enumerate(zip(t, e)):
            _assert_same(a, b, check_requires_grad, f"{path}[{i}]")
        return
    assert isinstance(e, ember.Tensor), path
    assert tuple(e.shape) == tuple(t.shape), f"{path}: {tuple(e.shape)} vs {tuple(t.shape)}"
    assert e.dtype == ember.float64, path
    np.testing.assert_allclose(
        e.detach().numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=path
    )
    if check_requires_grad:
        assert e.requires_grad == t.requires_grad, path


def _err(fn):
    try:
        fn()
    except Exception as ex:  # noqa: BLE001
        return type(ex).__name__, str(ex)
    return None


def _same_error(call):
    """``call(M, api)`` raises the same exception (type and message) in both libraries."""
    t = _err(lambda: call(torch, TF))
    e = _err(lambda: call(ember, F))
    assert t is not None, "torch did not raise"
    assert e == t
    return e[1]


# -- functions of one or several tensors -------------------------------------------------

FUNCS = {
    # name: (fn(M) -> callable, input shapes, scalar output?)
    "tanh_sq_sum": (lambda M: lambda x: (M.tanh(x) ** 2).sum(), [(3,)], True),
    "two_inputs_scalar": (
        lambda M: lambda x, y: (x * y.exp()).sum() + (x**3).sum(),
        [(2, 3), (2, 3)],
        True,
    ),
    "elementwise_matrix": (lambda M: lambda x: x.exp() * x.sin(), [(2, 2)], False),
    "tuple_out": (lambda M: lambda x, y: (x @ y, (x * 2).sum()), [(2, 3), (3, 2)], False),
    "softmax_matmul": (lambda M: lambda x, y: M.softmax(x @ y, 1), [(2, 3), (3, 2)], False),
    "scalar_input": (lambda M: lambda x: x.sin() * x**2, [()], True),
    "logsumexp_norm": (
        lambda M: lambda x: M.logsumexp(x, 0).sum() + x.norm(),
        [(3, 2)],
        True,
    ),
}


def _setup(name, seed=0):
    make, shapes, scalar = FUNCS[name]
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1, 1, size=s) for s in shapes]
    ts, es = _pair(*arrays)
    tuple_in = len(shapes) > 1
    return make, shapes, scalar, rng, ts, es, tuple_in


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", list(FUNCS))
def test_jacobian_vjp_jvp_match_torch(name, create_graph):
    make, shapes, _, rng, ts, es, tuple_in = _setup(name)
    tin, ein = _unpack(ts, tuple_in), _unpack(es, tuple_in)
    _assert_same(
        TF.jacobian(make(torch), tin, create_graph=create_graph),
        F.jacobian(make(ember), ein, create_graph=create_graph),
    )
    _assert_same(
        TF.jacobian(make(torch), tin, vectorize=True),
        F.jacobian(make(ember), ein, vectorize=True),
    )
    with torch.no_grad():
        outs = make(torch)(*ts)
    tuple_out = isinstance(outs, tuple)
    outs = outs if tuple_out else (outs,)
    tv, ev = _pair(*[rng.uniform(-1, 1, size=tuple(o.shape)) for o in outs])
    _assert_same(
        TF.vjp(make(torch), tin, _unpack(tv, tuple_out), create_graph=create_graph),
        F.vjp(make(ember), ein, _unpack(ev, tuple_out), create_graph=create_graph),
    )
    tu, eu = _pair(*[rng.uniform(-1, 1, size=s) for s in shapes])
    _assert_same(
        TF.jvp(make(torch), tin, _unpack(tu, tuple_in), create_graph=create_graph),
        F.jvp(make(ember), ein, _unpack(eu, tuple_in), create_graph=create_graph),
    )


@pytest.mark.parametrize("name", list(FUNCS))
def test_forward_mode_jacobian_matches_torch(name):
    make, _, _, _, ts, es, tuple_in = _setup(name)
    _assert_same(
        TF.jacobian(make(torch), _unpack(ts, tuple_in), vectorize=True, strategy="forward-mode"),
        F.jacobian(make(ember), _unpack(es, tuple_in), vectorize=True, strategy="forward-mode"),
    )


SCALAR_FUNCS = [n for n, (_, _, scalar) in FUNCS.items() if scalar]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", SCALAR_FUNCS)
def test_hessian_hvp_vhp_match_torch(name, create_graph):
    make, shapes, _, rng, ts, es, tuple_in = _setup(name, seed=1)
    tin, ein = _unpack(ts, tuple_in), _unpack(es, tuple_in)
    _assert_same(
        TF.hessian(make(torch), tin, create_graph=create_graph),
        F.hessian(make(ember), ein, create_graph=create_graph),
    )
    tu, eu = _pair(*[rng.uniform(-1, 1, size=s) for s in shapes])
    tu, eu = _unpack(tu, tuple_in), _unpack(eu, tuple_in)
    for t_fn, e_fn in ((TF.hvp, F.hvp), (TF.vhp, F.vhp)):
        _assert_same(
            t_fn(make(torch), tin, tu, create_graph=create_graph),
            e_fn(make(ember), ein, eu, create_graph=create_graph),
        )


@pytest.mark.parametrize("name", SCALAR_FUNCS)
def test_hessian_options_match_torch(name):
    make, _, _, _, ts, es, tuple_in = _setup(name, seed=2)
    tin, ein = _unpack(ts, tuple_in), _unpack(es, tuple_in)
    _assert_same(
        TF.hessian(make(torch), tin, vectorize=True),
        F.hessian(make(ember), ein, vectorize=True),
    )
    # torch's forward-over-reverse result keeps a grad_fn; ember's does not.
    _assert_same(
        TF.hessian(make(torch), tin, vectorize=True, outer_jacobian_strategy="forward-mode"),
        F.hessian(make(ember), ein, vectorize=True, outer_jacobian_strategy="forward-mode"),
        check_requires_grad=False,
    )


def test_result_structure_for_tuple_inputs_and_outputs():
    x, y = ember.ones(2, 3), ember.ones(3)
    jac = F.jacobian(lambda a, b: (a @ b, a.sum(), b * 2), (x, y))
    assert isinstance(jac, tuple) and len(jac) == 3
    assert all(isinstance(row, tuple) and len(row) == 2 for row in jac)
    assert [[tuple(j.shape) for j in row] for row in jac] == [
        [(2, 2, 3), (2, 3)],
        [(2, 3), (3,)],
        [(3, 2, 3), (3, 3)],
    ]
    hess = F.hessian(lambda a, b: (a @ b).sum(), (x, y))
    assert [[tuple(h.shape) for h in row] for row in hess] == [
        [(2, 3, 2, 3), (2, 3, 3)],
        [(3, 2, 3), (3, 3)],
    ]


def test_v_may_be_omitted_for_single_elements():
    x = ember.tensor(0.5, dtype=ember.float64)
    out, g = F.vjp(lambda t: t.sin(), x)
    assert abs(g.item() - np.cos(0.5)) < 1e-12
    out, jv = F.jvp(lambda t: t**3, x)
    assert abs(jv.item() - 0.75) < 1e-12
    assert abs(F.hvp(lambda t: t**3, x)[1].item() - 3.0) < 1e-12
    assert abs(F.vhp(lambda t: t**3, x)[1].item() - 3.0) < 1e-12


# -- non-strict zeros and create_graph ---------------------------------------------------


@pytest.mark.parametrize("M", [ember, torch], ids=["ember", "torch"])
def test_independent_inputs_get_zeros_when_not_strict(M):
    api = API[M]
    x = M.ones(2, dtype=M.float64)
    y = M.ones(3, dtype=M.float64)
    _, g = api.vjp(lambda a, b: a * 2, (x, y), M.ones(2, dtype=M.float64))
    assert g[1].tolist() == [0.0, 0.0, 0.0]
    jac = api.jacobian(lambda a, b: a * 2, (x, y))
    assert jac[1].tolist() == [[0.0] * 3] * 2
    h = api.hessian(lambda a: (a * 2).sum(), x)
    assert h.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    _, hv = api.hvp(lambda a: (a * 2).sum(), x, x)
    assert hv.tolist() == [0.0, 0.0]


def test_create_graph_results_are_differentiable_like_torch():
    results = []
    for M in (torch, ember):
        api = API[M]
        # From a float64 array: ember.tensor(list, dtype=float64) rounds through float32.
        x = M.tensor(np.array([0.3, -0.7, 1.1]), requires_grad=True)
        jac = api.jacobian(lambda t: t.exp() * t, x, create_graph=True)
        hess = api.hessian(lambda t: (t.sin() * t).sum(), x, create_graph=True)
        _, hv = api.hvp(lambda t: (t**4).sum(), x, M.ones(3, dtype=M.float64), create_graph=True)
        total = jac.sum() + hess.sum() + hv.sum()
        (g,) = M.autograd.grad(total, x)
        results.append(g.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)


def test_user_inputs_are_not_modified():
    x = ember.ones(2)
    F.jacobian(lambda t: t * 2, x)
    F.hessian(lambda t: (t**3).sum(), x)
    assert not x.requires_grad and x.grad is None


# -- errors (torch's text) ---------------------------------------------------------------


def _ones(M, *shape):
    return M.ones(*shape, dtype=M.float64)


STRICT_CASES = {
    "vjp_independent_input": lambda M, api: api.vjp(
        lambda a, b: a * 2, (_ones(M, 2), _ones(M, 3)), _ones(M, 2), strict=True
    ),
    "vjp_output_without_grad": lambda M, api: api.vjp(
        lambda a: a.detach() * 2, _ones(M, 2), _ones(M, 2), strict=True
    ),
    "jvp_independent_input": lambda M, api: api.jvp(
        lambda a, b: a * 2, (_ones(M, 2), _ones(M, 3)), (_ones(M, 2), _ones(M, 3)), strict=True
    ),
    "jacobian_independent_input": lambda M, api: api.jacobian(
        lambda a, b: a * 2, (_ones(M, 2), _ones(M, 3)), strict=True
    ),
    "jacobian_linear_create_graph": lambda M, api: api.jacobian(
        lambda a: a * 2, _ones(M, 2), create_graph=True, strict=True
    ),
    "jacobian_strict_vectorize": lambda M, api: api.jacobian(
        lambda a: a * 2, _ones(M, 2), strict=True, vectorize=True
    ),
    "hessian_linear": lambda M, api: api.hessian(lambda a: (a * 2).sum(), _ones(M, 2), strict=True),
    "hessian_independent_input": lambda M, api: api.hessian(
        lambda a, b: (a**2).sum(), (_ones(M, 2), _ones(M, 2)), strict=True
    ),
    "hvp_linear": lambda M, api: api.hvp(
        lambda a: (a * 2).sum(), _ones(M, 2), _ones(M, 2), strict=True
    ),
    "vhp_linear": lambda M, api: api.vhp(
        lambda a: (a * 2).sum(), _ones(M, 2), _ones(M, 2), strict=True
    ),
    "vhp_quadratic_create_graph": lambda M, api: api.vhp(
        lambda a: (a * a).sum(), _ones(M, 2), _ones(M, 2), create_graph=True, strict=True
    ),
}


@pytest.mark.parametrize("case", list(STRICT_CASES))
def test_strict_mode_errors_match_torch(case):
    _same_error(STRICT_CASES[case])


ARG_ERRORS = {
    "v_wrong_length": lambda M, api: api.vjp(
        lambda a, b: (a, b), (_ones(M, 2), _ones(M, 2)), (_ones(M, 2),)
    ),
    "v_wrong_size": lambda M, api: api.vjp(lambda a: a * 2, _ones(M, 2), _ones(M, 3)),
    "v_entry_wrong_size": lambda M, api: api.jvp(
        lambda a, b: a * b, (_ones(M, 2), _ones(M, 2)), (_ones(M, 2), _ones(M, 3))
    ),
    "v_not_a_single_tensor": lambda M, api: api.vjp(
        lambda a: a * 2, _ones(M, 2), (_ones(M, 2), _ones(M, 2))
    ),
    "v_missing_vjp": lambda M, api: api.vjp(lambda a: a * 2, _ones(M, 2)),
    "v_missing_jvp": lambda M, api: api.jvp(lambda a: a * 2, _ones(M, 2)),
    "v_missing_hvp": lambda M, api: api.hvp(lambda a: a.sum(), _ones(M, 2)),
    "inputs_not_tensors": lambda M, api: api.jacobian(lambda a: a, [1.0, 2.0]),
    "tuple_input_not_tensors": lambda M, api: api.jacobian(lambda a, b: a, (_ones(M, 2), 3.0)),
    "output_not_tensor": lambda M, api: api.vjp(lambda a: 3.0, _ones(M, 1)),
    "hessian_vector_output": lambda M, api: api.hessian(lambda a: a * 2, _ones(M, 2)),
    "hessian_tuple_output": lambda M, api: api.hessian(lambda a: (a.sum(),), _ones(M, 2)),
    "hvp_vector_output": lambda M, api: api.hvp(lambda a: a * 2, _ones(M, 2), _ones(M, 2)),
    "vhp_tuple_output": lambda M, api: api.vhp(lambda a: (a.sum(),), _ones(M, 2), _ones(M, 2)),
    "bad_strategy": lambda M, api: api.jacobian(lambda a: a, _ones(M, 2), strategy="sideways"),
    "forward_mode_needs_vectorize": lambda M, api: api.jacobian(
        lambda a: a, _ones(M, 2), strategy="forward-mode"
    ),
    "forward_mode_create_graph": lambda M, api: api.jacobian(
        lambda a: a, _ones(M, 2), strategy="forward-mode", create_graph=True, vectorize=True
    ),
    "forward_mode_strict": lambda M, api: api.jacobian(
        lambda a: a, _ones(M, 2), strategy="forward-mode", strict=True, vectorize=True
    ),
}


@pytest.mark.parametrize("case", list(ARG_ERRORS))
def test_argument_errors_match_torch(case):
    _same_error(ARG_ERRORS[case])
