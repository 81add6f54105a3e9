"""Higher order through in-place ops on views (CopySlices, AsStridedBackward0), against
torch: values, first and second derivatives, gradcheck/gradgradcheck, forward mode and
forward-over-reverse, for each kind of view and of in-place write."""

import numpy as np
import pytest

import ember
from ember.autograd.gradcheck import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def _mask(m):
    return m.tensor([[True, False, True, False], [False, True, True, True]])


def _slice_imul(m, x, w):
    y = x * 1
    y[1:] *= 2
    return y


def _slice_imul_tensor(m, x, w):
    y = x * 1
    y[1:] *= w
    return y


def _slice_exp_(m, x, w):
    y = x * 1
    y[1:].exp_()  # exp_'s derivative reads its own result: the view after the write
    return y


def _slice_sigmoid_(m, x, w):
    y = x * 1
    y[:, 1:3].sigmoid_()
    return y


def _slice_div_(m, x, w):
    y = x * 1
    y[1:].div_(w)  # divisor requiring grad
    return y


def _transposed_row_mul_(m, x, w):
    y = x * 1
    y.t()[0].mul_(x[:, 1])
    return y


def _flat_view(m, x, w):
    y = x * 1
    v = y.view(12)[2:9]
    v.mul_(v * 0.5 + 1)
    return y


def _unsqueeze_select(m, x, w):
    y = x * 1
    y.unsqueeze(0)[0, 1].mul_(w)
    return y


def _diagonal(m, x, w):
    y = x * 1
    y.diagonal().mul_(x[0, :3])
    return y


def _select(m, x, w):
    y = x * 1
    y.select(1, 2).tanh_()
    return y


def _narrow(m, x, w):
    y = x * 1
    y.narrow(1, 1, 2).mul_(x[:, :2])
    return y


def _step_slice(m, x, w):
    y = x * 1
    y[:, ::2].sin_()
    return y


def _nested_views(m, x, w):
    y = x * 1
    y[1:][:, 1:].pow_(2)
    return y


def _masked_setitem(m, x, w):
    y = x * 1
    y[1:][_mask(m)] = (x[:2] * w)[_mask(m)]
    return y


def _masked_fill_(m, x, w):
    y = x * 1
    y[1:].masked_fill_(_mask(m), 0.5)
    return y * x


def _index_iadd(m, x, w):
    y = x * 1
    y[1:][m.tensor([0, 1]), 1] += x[0, :2] * x[1, :2]
    return y


def _setitem_through_view(m, x, w):
    y = x * 1
    y[1][1:3] = x[0, :2] ** 2
    return y


def _written_value_and_base_require_grad(m, x, w):
    y = x * w
    y[1:3, 1:].copy_(w[:3] * x[2, :3])
    return y


def _plain_base(m, x, w):
    y = m.zeros(3, 4, dtype=x.dtype)  # requires grad only once a written value does
    y[1:, :2] = x[:2, 1:3] ** 2
    y[0].copy_(w.sin())
    return y


def _two_writes(m, x, w):
    y = x * 1
    y[1:].mul_(x[:2])
    y[:2].add_(y[2:].clone() ** 2)
    return y


def _same_view_twice(m, x, w):
    y = x * 1
    v = y[0]
    v.mul_(w)
    v.exp_()
    return y


def _written_view_is_output(m, x, w):
    y = x * 1
    v = y[1:, 1:]
    v.mul_(x[:2, :3])
    return v


def _views_after_write(m, x, w):
    y = x * 1
    y[0].mul_(x[1])
    return y[0] * y[1:]


def _pad_circular(m, x, w):
    return m.nn.functional.pad(x[None], (2, 1), mode="circular")


def _pad_circular_2d(m, x, w):
    return m.nn.functional.pad(x[None, None] * w, (1, 2, 2, 0), mode="circular")


CASES = {
    f.__name__[1:]: f
    for f in (
        _slice_imul,
        _slice_imul_tensor,
        _slice_exp_,
        _slice_sigmoid_,
        _slice_div_,
        _transposed_row_mul_,
        _flat_view,
        _unsqueeze_select,
        _diagonal,
        _select,
        _narrow,
        _step_slice,
        _nested_views,
        _masked_setitem,
        _masked_fill_,
        _index_iadd,
        _setitem_through_view,
        _written_value_and_base_require_grad,
        _plain_base,
        _two_writes,
        _same_view_twice,
        _written_view_is_output,
        _views_after_write,
        _pad_circular,
        _pad_circular_2d,
    )
}
NAMES = pytest.mark.parametrize("name", sorted(CASES))

_RNG = np.random.default_rng(7)
X = _RNG.standard_normal((3, 4))
W = np.abs(_RNG.standard_normal(4)) + 0.5
U_SEED, V_SEED, T_SEED = 1, 2, 3


def _inputs(m, requires_grad=True):
    return [m.tensor(a, requires_grad=requires_grad) for a in (X, W)]


def _np(t):
    return None if t is None else t.detach().numpy().copy()


def _first_and_second(m, name):
    """The output, grad(<out, u>) and grad(<grad(<out, u>), v>) with respect to (x, w)."""
    xs = _inputs(m)
    out = CASES[name](m, *xs)
    u = m.tensor(np.random.default_rng(U_SEED).standard_normal(tuple(out.shape)))
    grads = m.autograd.grad(out, xs, u, create_graph=True, allow_unused=True)
    vr = np.random.default_rng(V_SEED)
    terms = [
        (g * m.tensor(vr.standard_normal(tuple(x.shape)))).sum()
        for g, x in zip(grads, xs)
        if g is not None and g.requires_grad
    ]
    if not terms:  # linear in the inputs: no second derivative
        return out, grads, (None, None)
    second = m.autograd.grad(sum(terms), xs, allow_unused=True)
    return out, grads, second


@NAMES
def test_values_and_first_and_second_derivatives_match_torch(name):
    e_out, e_g, e_gg = _first_and_second(ember, name)
    t_out, t_g, t_gg = _first_and_second(torch, name)
    np.testing.assert_allclose(_np(e_out), _np(t_out), rtol=1e-12)
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    for e, t in [*zip(e_g, t_g), *zip(e_gg, t_gg)]:
        _assert_same(_np(e), _np(t))


def _assert_same(e, t):
    """Equal arrays; None (no gradient) equals zeros."""
    if e is None or t is None:
        assert (e is None or not e.any()) and (t is None or not t.any())
    else:
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


@NAMES
def test_gradcheck_and_gradgradcheck(name):
    xs = _inputs(ember)
    fn = CASES[name]
    assert gradcheck(lambda x, w: fn(ember, x, w), xs)
    assert gradgradcheck(lambda x, w: fn(ember, x, w), xs)


def _tangent(m, name):
    fw = m.autograd.forward_ad
    tr = np.random.default_rng(T_SEED)
    with fw.dual_level():
        xs = [fw.make_dual(m.tensor(a), m.tensor(tr.standard_normal(a.shape))) for a in (X, W)]
        return _np(fw.unpack_dual(CASES[name](m, *xs)).tangent)


@NAMES
def test_forward_mode_matches_torch(name):
    np.testing.assert_allclose(_tangent(ember, name), _tangent(torch, name), rtol=1e-10, atol=1e-12)


def _forward_over_reverse(m, name):
    """The tangent of grad(<out, u>): a Hessian-vector product by forward mode."""
    fw = m.autograd.forward_ad
    tr = np.random.default_rng(T_SEED)
    with fw.dual_level():
        xs = [
            fw.make_dual(m.tensor(a, requires_grad=True), m.tensor(tr.standard_normal(a.shape)))
            for a in (X, W)
        ]
        out = CASES[name](m, *xs)
        u = m.tensor(np.random.default_rng(U_SEED).standard_normal(tuple(out.shape)))
        grads = m.autograd.grad(out, xs, u, create_graph=True, allow_unused=True)
        return [None if g is None else _np(fw.unpack_dual(g).tangent) for g in grads]


@NAMES
def test_forward_over_reverse_matches_torch(name):
    for e, t in zip(_forward_over_reverse(ember, name), _forward_over_reverse(torch, name)):
        _assert_same(e, t)


@pytest.mark.parametrize("name", ["slice_exp_", "transposed_row_mul_", "pad_circular_2d"])
def test_hessians_match_torch(name):
    shape = tuple(CASES[name](torch, *_inputs(torch, False)).shape)
    u = np.random.default_rng(U_SEED).standard_normal(shape)

    def loss(m):
        return lambda x: (CASES[name](m, x, m.tensor(W)) * m.tensor(u)).sum() ** 2

    want = torch.func.hessian(loss(torch))(torch.tensor(X)).numpy()
    for got in (
        ember.func.hessian(loss(ember))(ember.tensor(X)),  # forward over reverse
        ember.autograd.functional.hessian(loss(ember), ember.tensor(X)),  # reverse twice
    ):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_third_derivative(lib):
    x = lib.tensor([0.1, -0.7, 0.4, 1.2], dtype=lib.float64, requires_grad=True)
    y = x * 1
    y[1:].sin_()
    (g1,) = lib.autograd.grad((y**3).sum(), x, create_graph=True)
    (g2,) = lib.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = lib.autograd.grad(g2.sum(), x)
    xs = np.array([0.1, -0.7, 0.4, 1.2])
    s, c = np.sin(xs[1:]), np.cos(xs[1:])
    # d3/dx3 sin(x)^3 = 6 c^3 - 21 s^2 c; the first element is x^3: 6
    want = np.concatenate([[6.0], 6 * c**3 - 21 * s**2 * c])
    np.testing.assert_allclose(g3.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_what_the_written_op_saved_is_freed_with_the_graph(lib):
    x = lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64, requires_grad=True)
    y = x.clone()  # saves nothing: only exp_ (inside CopySlices) does
    y[1:].exp_()
    loss = y.sum()
    loss.backward(retain_graph=True)
    loss.backward()  # retained: runs again
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.r_[1.0, np.exp([0.2, 0.3])])
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_second_order_graph_is_differentiable_and_named_like_torch():
    names = {}
    for lib in (ember, torch):
        x = lib.tensor(X, requires_grad=True)
        y = x * 1
        y[1:].exp_()
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        assert g.requires_grad
        names[lib.__name__] = type(y[1:].grad_fn).__name__, type(y.grad_fn).__name__
    assert names["ember"] == names["torch"] == ("SliceBackward0", "CopySlices")


def test_forward_over_reverse_through_inplace_op_without_view():
    """The old value an in-place op saves keeps its own tangent (the write changes the
    tensor's tangent in place)."""

    def run(m):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor(X, requires_grad=True), m.tensor(np.ones((3, 4))))
            y = x * 1
            y.mul_(x)
            (g,) = m.autograd.grad((y**3).sum(), x, create_graph=True)
            return _np(fw.unpack_dual(g).tangent)

    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-12)


@pytest.mark.parametrize("view", [True, False], ids=["through_view", "whole"])
@pytest.mark.parametrize("write", ["zero_", "fill_", "copy_"])
def test_overwritten_values_get_zero_gradient_even_where_it_is_infinite(write, view):
    """torch's zeros_like(grad) for what zero_/fill_/copy_ overwrite: sqrt'(0) = inf there
    must not become NaN (inf * 0), in first or second order."""
    grads = {}
    for lib in (ember, torch):
        x = lib.tensor([0.0, 1.0, 4.0], dtype=lib.float64, requires_grad=True)
        y = x * 1
        target = y[:2] if view else y
        if write == "zero_":
            target.zero_()
        elif write == "fill_":
            target.fill_(0.0)
        else:
            target.copy_(lib.zeros_like(target))
        (g,) = lib.autograd.grad(y.sqrt().sum() + (x**3).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        grads[lib.__name__] = _np(g), _np(gg)
    for e, t in zip(grads["ember"], grads["torch"]):
        np.testing.assert_array_equal(e, t)
