"""Custom autograd Functions (torch.autograd.Function), checked against torch itself."""

import contextlib
import gc
import io
import sys
import warnings
import weakref

import numpy as np
import pytest

import ember
from ember.autograd.function import Function, once_differentiable
from ember.autograd.gradcheck import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

LIBS = pytest.mark.parametrize("M", [ember, torch], ids=["ember", "torch"])


def _api(M):
    """(Function, once_differentiable) of a library."""
    if M is torch:
        from torch.autograd.function import once_differentiable as od

        return torch.autograd.Function, od
    return Function, once_differentiable


def _err(fn) -> tuple:
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def _same_error(make):
    """Run ``make(M)`` for both libraries; both raise the same exception type and text."""
    got = {M.__name__: _err(lambda M=M: make(M)) for M in (torch, ember)}
    assert got["torch"] is not None, "torch did not raise"
    assert got["ember"] == got["torch"]
    return got["ember"][1]


# -- the PyTorch tutorial, unchanged ----------------------------------------------------

TUTORIAL = '''
import torch
import math


class LegendrePolynomial3(torch.autograd.Function):
    """
    We can implement our own custom autograd Functions by subclassing
    torch.autograd.Function and implementing the forward and backward passes
    which operate on Tensors.
    """

    @staticmethod
    def forward(ctx, input):
        """
        In the forward pass we receive a Tensor containing the input and return
        a Tensor containing the output. ctx is a context object that can be used
        to stash information for backward computation. You can cache tensors for
        use in the backward pass using the ``ctx.save_for_backward`` method. Other
        objects can be stored directly as attributes on the ctx object, such as
        ``ctx.my_object = my_object``.
        """
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        """
        In the backward pass we receive a Tensor containing the gradient of the loss
        with respect to the output, and we need to compute the gradient of the loss
        with respect to the input.
        """
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


dtype = torch.float
device = torch.device("cpu")
# device = torch.device("cuda:0")  # Uncomment this to run on GPU

# Create Tensors to hold input and outputs.
# By default, requires_grad=False, which indicates that we do not need to
# compute gradients with respect to these Tensors during the backward pass.
x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

# Create random Tensors for weights. For this example, we need
# 4 weights: y = a + b * P3(c + d * x), these weights need to be initialized
# not too far from the correct result to ensure convergence.
# Setting requires_grad=True indicates that we want to compute gradients with
# respect to these Tensors during the backward pass.
a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

learning_rate = 5e-6
for t in range(2000):
    # To apply our Function, we use Function.apply method. We alias this as 'P3'.
    P3 = LegendrePolynomial3.apply

    # Forward pass: compute predicted y using operations; we compute
    # P3 using our custom autograd operation.
    y_pred = a + b * P3(c + d * x)

    # Compute and print loss
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())

    # Use autograd to compute the backward pass.
    loss.backward()

    # Update weights using gradient descent
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        # Manually zero the gradients after updating weights
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f'Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)')
'''


def _run_tutorial(module, monkeypatch, steps: int):
    source = TUTORIAL.replace("range(2000)", f"range({steps})")
    monkeypatch.setitem(sys.modules, "torch", module)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "legendre_tutorial.py", "exec"), {"__name__": "tutorial"})
    monkeypatch.setitem(sys.modules, "torch", torch)
    lines = out.getvalue().splitlines()
    losses = [float(line.split()[1]) for line in lines[:-1]]
    return losses, lines[-1]


def test_legendre_polynomial_tutorial_runs_unchanged_and_matches_torch(monkeypatch):
    assert ember.autograd.Function is Function
    ember_losses, ember_result = _run_tutorial(ember, monkeypatch, 300)
    torch_losses, torch_result = _run_tutorial(torch, monkeypatch, 300)
    assert len(ember_losses) == len(torch_losses) == 3
    assert ember_losses[-1] < ember_losses[0]  # it learns
    np.testing.assert_allclose(ember_losses, torch_losses, rtol=1e-4)
    assert ember_result.startswith("Result: y = ")


# -- recording: node class, next_functions, ctx -----------------------------------------


def _cube(M):
    F, _ = _api(M)

    class Cube(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.note = "kept"
            return x**3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * grad

    return Cube


@LIBS
def test_node_class_name_next_functions_and_ctx_attributes(M):
    Cube = _cube(M)
    x = M.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x)
    assert type(y.grad_fn).__name__ == "CubeBackward"
    assert y.grad_fn.name() == "CubeBackward"
    assert repr(y).endswith("grad_fn=<CubeBackward>)")
    ((fn, nr),) = y.grad_fn.next_functions
    assert type(fn).__name__ == "AccumulateGrad" and nr == 0
    assert y.grad_fn.note == "kept"
    assert y.grad_fn.needs_input_grad == (True,)
    assert y.grad_fn._forward_cls is Cube
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]


def test_ctx_is_the_node_and_forward_runs_without_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen["ctx"] = ctx
            seen["grad_enabled"] = ember.is_grad_enabled()
            y = x * 2
            seen["inner_requires_grad"] = y.requires_grad
            return y

        @staticmethod
        def backward(ctx, g):
            seen["backward_grad_enabled"] = ember.is_grad_enabled()
            seen["g_type"] = type(g)
            return g * 2

    x = ember.ones(2, requires_grad=True)
    y = Probe.apply(x)
    assert seen["ctx"] is y.grad_fn
    assert seen["grad_enabled"] is False
    assert seen["inner_requires_grad"] is False
    y.sum().backward()
    assert seen["backward_grad_enabled"] is False
    assert seen["g_type"] is ember.Tensor


def test_next_functions_follow_a_graph_input_and_skip_non_tensors():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k, w):
            return x * k + w

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, g

    x = ember.ones(2, requires_grad=True)
    w = ember.ones(2)
    y = Scale.apply(x * 3, 2.0, w)
    fns = y.grad_fn.next_functions
    assert len(fns) == 2  # one edge per tensor argument
    assert type(fns[0][0]).__name__ == "MulBackward0"
    assert fns[1] == (None, 0)
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


@LIBS
def test_no_node_without_grad_mode_or_inputs_requiring_grad(M):
    Cube = _cube(M)
    x = M.tensor([1.0, 2.0], requires_grad=True)
    with M.no_grad():
        y = Cube.apply(x)
    assert y.grad_fn is None and not y.requires_grad
    z = Cube.apply(M.tensor([1.0, 2.0]))
    assert z.grad_fn is None and not z.requires_grad
    assert z.tolist() == [1.0, 8.0]


@LIBS
def test_needs_input_grad(M):
    F, _ = _api(M)
    seen = []

    class Two(F):
        @staticmethod
        def forward(ctx, x, y, k):
            seen.append(ctx.needs_input_grad)
            return x * y * k

        @staticmethod
        def backward(ctx, g):
            return g, g, None

    x = M.ones(2, requires_grad=True)
    Two.apply(x, M.ones(2), 3)
    with M.no_grad():
        Two.apply(x, x, 3)
    Two.apply(M.ones(2), M.ones(2), 3)
    assert seen == [(True, False, False), (True, True, False), (False, False, False)]


# -- saved tensors ----------------------------------------------------------------------


def test_saved_input_is_the_original_tensor():
    got = {}

    class Keep(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None)
            got["during_forward"] = ctx.saved_tensors
            return x * 2

        @staticmethod
        def backward(ctx, g):
            got["saved"] = ctx.saved_tensors
            return g

    x = ember.ones(2, requires_grad=True)
    Keep.apply(x).sum().backward()
    assert got["during_forward"] == ()
    assert got["saved"][0] is x and got["saved"][1] is None


def test_saving_a_non_tensor_raises_like_torch():
    def make(M):
        F, _ = _api(M)

        class S(F):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

        S.apply(M.ones(2, requires_grad=True))

    assert "argument 1 is of type int" in _same_error(make)


def test_second_backward_and_freed_saved_tensors_raise_like_torch():
    def make(M):
        y = _cube(M).apply(M.ones(2, requires_grad=True))
        y.sum().backward()
        y.sum().backward()

    assert "backward through the graph a second time" in _same_error(make)

    def access(M):
        y = _cube(M).apply(M.ones(2, requires_grad=True))
        y.sum().backward()
        _ = y.grad_fn.saved_tensors

    _same_error(access)


@LIBS
def test_retain_graph_allows_a_second_backward(M):
    x = M.tensor([1.0, 2.0], requires_grad=True)
    y = _cube(M).apply(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]


def test_modified_saved_input_raises_torchs_inplace_error():
    def make(M):
        x = M.ones(2, requires_grad=True)
        b = x + 1
        y = _cube(M).apply(b)
        with M.no_grad():
            b.mul_(2)
        y.sum().backward()

    assert "is at version 1; expected version 0 instead" in _same_error(make)


def _save_out(M):
    F, _ = _api(M)

    class SaveOut(F):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    return SaveOut


def test_modified_saved_output_raises_torchs_inplace_error():
    def make(M):
        y = _save_out(M).apply(M.ones(2, requires_grad=True))
        with M.no_grad():
            y.add_(1)
        y.sum().backward()

    assert "which is output 0 of SaveOut, is at version 1" in _same_error(make)


def test_saved_output_does_not_keep_its_node_alive():
    x = ember.ones(3, requires_grad=True)
    y = _save_out(ember).apply(x)
    ref = weakref.ref(y.grad_fn)
    gc.disable()
    try:
        del y
        assert ref() is None  # freed by refcounting: no cycle through the saved output
    finally:
        gc.enable()


@LIBS
def test_saved_output_is_differentiable_with_create_graph(M):
    x = M.tensor([0.5, 1.0], dtype=M.float64, requires_grad=True)
    (g,) = M.autograd.grad(_save_out(M).apply(x).sum(), x, create_graph=True)
    (h,) = M.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), np.exp([0.5, 1.0]))


# -- what backward receives and returns --------------------------------------------------


def _multi_outputs_run(M):
    F, _ = _api(M)
    seen = []

    class Multi(F):
        @staticmethod
        def forward(ctx, x, w):
            return x * 2, 3, (x * 10).long(), x + w

        @staticmethod
        def backward(ctx, g0, g1, g2, g3):
            seen.append(
                [None if g is None else (tuple(g.shape), str(g.dtype)) for g in (g0, g1, g2, g3)]
            )
            seen.append(g2.tolist())
            return g0 * 2 + g3, g3

    x = M.ones(2, requires_grad=True)
    w = M.ones(2, requires_grad=True)
    a, three, idx, b = Multi.apply(x, w)
    assert three == 3
    assert a.grad_fn is b.grad_fn and type(a.grad_fn).__name__ == "MultiBackward"
    assert (a.output_nr, b.output_nr) == (0, 3)
    assert not idx.requires_grad and idx.grad_fn is None
    (a.sum() + b.sum()).backward()
    assert seen[0][1] is None  # the int output: None
    assert seen[0][2] == ((2,), str(M.int64))  # integer outputs get zeros of their dtype
    assert seen[1] == [0, 0]
    assert x.grad.tolist() == [3.0, 3.0] and w.grad.tolist() == [1.0, 1.0]
    return seen


@LIBS
def test_multiple_and_non_tensor_outputs(M):
    _multi_outputs_run(M)


def test_multiple_outputs_match_torch():
    assert _multi_outputs_run(ember)[0] == _multi_outputs_run(torch)[0]


@LIBS
def test_materialize_grads(M):
    F, _ = _api(M)
    seen = []

    class Two(F):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x.clone(), x.clone()

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(None if g2 is None else g2.tolist())
            return g1 + (0 if g2 is None else g2), None

    x = M.ones(2, requires_grad=True)
    Two.apply(x, True)[0].sum().backward()
    Two.apply(x, False)[0].sum().backward()
    assert seen == [[0.0, 0.0], None]


@LIBS
def test_mark_non_differentiable(M):
    F, _ = _api(M)
    seen = []

    class WithIndex(F):
        @staticmethod
        def forward(ctx, x):
            idx = (x > 1.5).long()
            vals = x * 2
            ctx.mark_non_differentiable(idx)
            return vals, idx, x * 3

        @staticmethod
        def backward(ctx, gv, gi, g3):
            seen.append(gi.tolist())
            return gv * 2 + g3 * 3

    x = M.tensor([1.0, 2.0], requires_grad=True)
    vals, idx, z = WithIndex.apply(x)
    assert vals.requires_grad and not idx.requires_grad and idx.grad_fn is None
    vals.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    assert seen == [[0, 0]]

    class NonDiffFloat(F):
        @staticmethod
        def forward(ctx, x):
            out = x * 2
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, g):
            return g

    out = NonDiffFloat.apply(x)
    assert not out.requires_grad and out.grad_fn is None


@LIBS
def test_returning_an_input_gives_a_new_tensor_in_the_graph(M):
    F, _ = _api(M)

    class Ident(F):
        @staticmethod
        def forward(ctx, x, y):
            return x, y * 2

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 10, g2 * 2

    x = M.ones(2, requires_grad=True)
    p, q = Ident.apply(x, x)
    assert p is not x and type(p.grad_fn).__name__ == "IdentBackward"
    assert x.grad_fn is None and x.is_leaf
    (p + q).sum().backward()
    assert x.grad.tolist() == [12.0, 12.0]


def test_wrong_number_of_gradients():
    def make(cls_body):
        def build(M):
            F, _ = _api(M)
            ns = {}
            exec(cls_body, {"F": F}, ns)
            cls = ns["C"]
            x = M.ones(2, requires_grad=True)
            cls.apply(x, x).sum().backward()

        return build

    too_few = """
class C(F):
    @staticmethod
    def forward(ctx, x, y):
        return x * y
    @staticmethod
    def backward(ctx, g):
        return g
"""
    msg = _same_error(make(too_few))
    assert msg == "function CBackward returned an incorrect number of gradients (expected 2, got 1)"
    too_many = too_few.replace("return g\n", "return g, g, g\n")
    assert "(expected 2, got 3)" in _same_error(make(too_many))


@LIBS
def test_extra_none_gradients_are_accepted(M):
    F, _ = _api(M)

    class C(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    x = M.ones(2, requires_grad=True)
    C.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def _bad_backward(M, result, args=None, shape=(2,)):
    F, _ = _api(M)

    class Bad(F):
        @staticmethod
        def forward(ctx, x, *rest):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return result(M, g)

    x = M.ones(*shape, requires_grad=True)
    Bad.apply(x, *(args or ())).sum().backward()
    return x.grad


def test_invalid_gradient_shape_raises_like_torch():
    msg = _same_error(lambda M: _bad_backward(M, lambda M, g: M.ones(3)))
    assert msg == (
        "Function BadBackward returned an invalid gradient at index 0 - got [3] but expected "
        "shape compatible with [2]"
    )


@LIBS
def test_broadcastable_gradient_is_summed_and_cast(M):
    g = _bad_backward(M, lambda M, g: M.ones(3, 2, dtype=M.float64))
    assert g.tolist() == [3.0, 3.0] and g.dtype == M.float32


def test_gradient_for_a_non_tensor_input_raises_like_torch():
    msg = _same_error(lambda M: _bad_backward(M, lambda M, g: (g, g), args=(2.0,)))
    assert msg == (
        "function BadBackward returned a gradient different than None at position 2, but the "
        "corresponding forward input was not a Variable"
    )


def test_non_tensor_gradient_raises_like_torch():
    assert _same_error(lambda M: _bad_backward(M, lambda M, g: 3.0)) == (
        "expected Variable or None (got float)"
    )
    assert "numpy.ndarray" in _same_error(lambda M: _bad_backward(M, lambda M, g: g.numpy()))


@LIBS
def test_gradient_for_an_input_without_requires_grad_is_dropped(M):
    F, _ = _api(M)

    class Mul(F):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x

    x = M.tensor([1.0, 2.0], requires_grad=True)
    y = M.tensor([3.0, 4.0])
    Mul.apply(x, y).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0] and y.grad is None


# -- in-place forward --------------------------------------------------------------------


def _inplace(M):
    F, _ = _api(M)

    class Double_(F):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Double_


@LIBS
def test_mark_dirty_rebases_the_input(M):
    a = M.ones(2, requires_grad=True)
    b = a.clone()
    out = _inplace(M).apply(b)
    assert out is b
    assert type(b.grad_fn).__name__ == "Double_Backward"
    assert type(b.grad_fn.next_functions[0][0]).__name__ == "CloneBackward0"
    assert b.tolist() == [2.0, 2.0]
    out.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0]


def test_mark_dirty_bumps_the_version_like_torch():
    versions = []
    for M in (ember, torch):
        b = M.ones(2)
        _inplace(M).apply(b)
        versions.append(b._version_ if M is ember else b._version)
    assert versions[0] == versions[1] == 2


def test_mark_dirty_errors_like_torch():
    assert _same_error(lambda M: _inplace(M).apply(M.ones(2, requires_grad=True))) == (
        "a leaf Variable that requires grad has been used in an in-place operation."
    )

    def not_returned(M):
        F, _ = _api(M)

        class D(F):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g

        D.apply(M.ones(2, requires_grad=True).clone())

    assert "marked as dirty" in _same_error(not_returned)


@LIBS
def test_mark_dirty_with_a_saved_dirty_tensor(M):
    F, _ = _api(M)

    class AddW_(F):
        @staticmethod
        def forward(ctx, x, w):
            x.add_(w)
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x, g * x

    w = M.tensor([1.0, 2.0], requires_grad=True)
    b = M.ones(2)
    r = AddW_.apply(b, w)
    assert r is b and b.requires_grad and b.grad_fn.next_functions[0] == (None, 0)
    r.sum().backward()
    assert w.grad.tolist() == [2.0, 3.0]


# -- higher order ------------------------------------------------------------------------


@LIBS
def test_create_graph_records_the_custom_backward(M):
    Cube = _cube(M)
    x = M.tensor([1.0, 2.0], dtype=M.float64, requires_grad=True)
    (g,) = M.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert g.requires_grad
    (h,) = M.autograd.grad(g.sum(), x, create_graph=True)
    (t,) = M.autograd.grad(h.sum(), x)
    assert g.tolist() == [3.0, 12.0] and h.tolist() == [6.0, 12.0] and t.tolist() == [6.0, 6.0]


def test_custom_function_gradgradcheck():
    x = ember.rand(4, dtype=ember.float64, requires_grad=True)
    assert gradcheck(_cube(ember).apply, (x,))
    assert gradgradcheck(_cube(ember).apply, (x,))

    class Detached(Function):  # backward uses x.detach(): no second derivative
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x.detach() ** 2 * g

    assert gradcheck(Detached.apply, (x,))
    assert not gradgradcheck(Detached.apply, (x,), raise_exception=False)


def _od(M):
    F, od = _api(M)

    class Sq(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @od
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    return Sq


@LIBS
def test_once_differentiable_first_order(M):
    x = M.tensor([1.0, 2.0], requires_grad=True)
    assert M.autograd.grad(_od(M).apply(x).sum(), x)[0].tolist() == [2.0, 4.0]
    # grad_outputs that don't require grad: the result is a plain tensor, as in torch
    (g,) = M.autograd.grad(_od(M).apply(x).sum(), x, create_graph=True)
    assert g.grad_fn is None and not g.requires_grad


def test_once_differentiable_raises_when_differentiated_twice():
    def make(M):
        x = M.tensor([1.0, 2.0], requires_grad=True)
        v = M.ones(2, requires_grad=True)
        (g,) = M.autograd.grad(_od(M).apply(x), x, v, create_graph=True)
        assert repr(g).endswith("grad_fn=<Error>)")
        assert g.tolist() == [2.0, 4.0]
        g.sum().backward()

    msg = _same_error(make)
    assert msg == (
        "trying to differentiate twice a function that was marked with @once_differentiable"
    )


# -- API styles ----------------------------------------------------------------------------


@LIBS
def test_setup_context_style_with_defaults_and_kwargs(M):
    F, _ = _api(M)
    seen = []

    class Scale(F):
        @staticmethod
        def forward(x, k=2.0):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            seen.append((len(inputs), output.requires_grad, M.is_grad_enabled()))
            ctx.k = inputs[1]
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * ctx.k, None

    x = M.tensor([1.0, 2.0], requires_grad=True)
    y = Scale.apply(x)
    assert type(y.grad_fn).__name__ == "ScaleBackward" and y.tolist() == [2.0, 4.0]
    y.sum().backward()
    assert Scale.apply(x, k=3.0).tolist() == [3.0, 6.0]
    assert x.grad.tolist() == [2.0, 2.0]
    assert seen == [(2, False, False), (2, False, False)]


@LIBS
def test_old_style_forward_accepts_keyword_arguments(M):
    F, _ = _api(M)

    class KW(F):
        @staticmethod
        def forward(ctx, x, k=2.0):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, None

    x = M.ones(2, requires_grad=True)
    assert KW.apply(x, k=5.0).tolist() == [5.0, 5.0]


@LIBS
def test_vjp_may_replace_backward(M):
    F, _ = _api(M)

    class V(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 5

    x = M.ones(2, requires_grad=True)
    V.apply(x).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_both_backward_and_vjp_is_an_error_like_torch():
    def make(M):
        F, _ = _api(M)

        class Both(F):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def vjp(ctx, g):
                return g

        Both.apply(M.ones(2, requires_grad=True)).sum().backward()

    assert "Implementing both 'backward' and 'vjp'" in _same_error(make)


def test_missing_methods_raise_like_torch():
    def no_forward(M):
        F, _ = _api(M)
        type("Empty", (F,), {}).apply(M.ones(2, requires_grad=True))

    assert "must implement the forward function" in _same_error(no_forward)

    def no_backward(M):
        F, _ = _api(M)
        cls = type("OnlyF", (F,), {"forward": staticmethod(lambda ctx, x: x * 2)})
        cls.apply(M.ones(2, requires_grad=True)).sum().backward()

    assert "must implement either the backward or vjp method" in _same_error(no_backward)


def test_instantiating_warns_and_calling_an_instance_raises_like_torch():
    Cube = _cube(ember)
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        inst = Cube()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        msg = _same_error(lambda M: _cube(M)()(M.ones(2)))
    assert msg.startswith("Legacy autograd function with non-static forward method")
    with pytest.raises(RuntimeError):
        inst(ember.ones(2))


def test_jvp_is_stored_and_callable_through_the_node():
    class J(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    y = J.apply(ember.ones(2, requires_grad=True))
    assert y.grad_fn.apply_jvp(ember.ones(2)).tolist() == [2.0, 2.0]
    assert y.grad_fn.apply(ember.ones(2)).tolist() == [2.0, 2.0]
    assert y.grad_fn.saved_for_forward[0].tolist() == [1.0, 1.0]
    with pytest.raises(NotImplementedError, match="must implement the jvp function"):
        Function.jvp(None, ember.ones(1))


@LIBS
def test_node_hooks_run_on_custom_nodes(M):
    calls = []
    x = M.ones(2, requires_grad=True)
    y = _cube(M).apply(x)
    y.grad_fn.register_prehook(lambda go: calls.append(("pre", go[0].tolist())))
    y.grad_fn.register_hook(lambda gi, go: calls.append(("post", gi[0].tolist())))
    y.sum().backward()
    assert calls == [("pre", [1.0, 1.0]), ("post", [3.0, 3.0])]


def _broadcast_run(M):
    Cube = _cube(M)
    a = M.tensor([[1.0], [2.0]], requires_grad=True)
    b = M.tensor([1.0, -1.0, 0.5], requires_grad=True)
    (Cube.apply(a * b) * b).sum().backward()
    return a.grad.tolist(), b.grad.tolist()


def test_custom_function_inside_a_broadcasting_graph_matches_torch():
    (ea, eb), (ta, tb) = _broadcast_run(ember), _broadcast_run(torch)
    np.testing.assert_allclose(ea, ta)
    np.testing.assert_allclose(eb, tb)
