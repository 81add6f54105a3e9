"""Forward-mode AD (``ember.autograd.forward_ad``): the machinery, against torch.

Each op's forward mode (tangents against reverse mode and torch's, with every input dual and
with only the first one) is checked by the op database (``tests/opdb``, generic tests in
``tests/test_opdb.py``). This file covers the machinery: dual levels, make_dual/unpack_dual
and their errors, tangents across casts, no_grad and level exits, in-place ops, custom
Functions' jvp, forward-over-reverse Hessian-vector products and the functional API.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD
from ember.autograd.functional import hessian, jacobian

torch = pytest.importorskip("torch")
import torch.autograd.forward_ad as tfwAD  # noqa: E402

FW = {ember: fwAD, torch: tfwAD}


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


def test_tangents_follow_dtype_casts_like_torch():
    # A cast casts the tangent too (float64 -> float32 rounds it, like the primal). Not an
    # op-database entry: central differences cannot check a float32 round trip.
    rng = np.random.default_rng(11)
    x0, t0 = rng.standard_normal(3), rng.standard_normal(3)
    res = {}
    for m in (ember, torch):
        fw = FW[m]
        with fw.dual_level():
            d = fw.make_dual(m.tensor(x0), m.tensor(t0))
            single = d.to(m.float32)
            back = single.double()
            res[m] = [fw.unpack_dual(y) for y in (single, back)]
            assert [str(t.dtype) for _, t in res[m]] == ["torch.float32", "torch.float64"]
    for (p, t), (tp, tt) in zip(res[ember], res[torch]):
        np.testing.assert_array_equal(p.numpy(), tp.numpy())
        np.testing.assert_array_equal(t.numpy(), tt.numpy())
    np.testing.assert_allclose(res[ember][1][1].numpy(), t0, rtol=1e-7)


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
