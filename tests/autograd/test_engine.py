"""The backward engine: accumulation, retain_graph, errors, hooks, grad(), memory, depth."""

import gc
import threading
import weakref

import numpy as np
import pytest

import ember
from ember.autograd.graph import AccumulateGrad


def test_tutorial_gradient_is_4_5():
    x = ember.ones(2, 2, requires_grad=True)
    out = ((x + 2) * (x + 2) * 3).mean()
    out.backward()
    assert x.grad.tolist() == [[4.5, 4.5], [4.5, 4.5]]


def test_gradients_accumulate_and_zero():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    (x * x).sum().backward()
    assert x.grad.tolist() == [4.0, 8.0]
    x.grad.zero_()
    assert x.grad.tolist() == [0.0, 0.0]


def test_accumulated_grad_does_not_alias_user_gradient():
    x = ember.ones(3, requires_grad=True)
    v = ember.tensor([1.0, 2.0, 3.0])
    (x + 0).backward(v)
    (x + 0).backward(v)
    assert v.tolist() == [1.0, 2.0, 3.0]
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_second_backward_raises_and_retain_graph_allows_it():
    x = ember.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_node_without_saved_values_can_run_twice_like_torch():
    x = ember.ones(3, requires_grad=True)
    y = x + 2
    y.backward(ember.ones(3))
    y.backward(ember.ones(3))
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_implicit_gradient_needs_a_scalar():
    y = ember.ones(3, requires_grad=True) * 2
    with pytest.raises(
        RuntimeError, match="^grad can be implicitly created only for scalar outputs$"
    ):
        y.backward()


def test_gradient_shape_mismatch():
    y = ember.ones(3, requires_grad=True) * 2
    with pytest.raises(RuntimeError) as e:
        y.backward(ember.ones(1))
    assert str(e.value) == (
        "Mismatch in shape: grad_output[0] has a shape of torch.Size([1]) and output[0] has a "
        "shape of torch.Size([3])."
    )


def test_backward_on_tensor_without_grad():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        ember.ones(2).sum().backward()


def test_next_functions_and_accumulate_grad_identity():
    w = ember.rand(1, requires_grad=True)
    x = ember.ones(1)
    b = ember.rand(1, requires_grad=True)
    y = w * x
    z = y + b
    (n0, i0), (n1, i1) = z.grad_fn.next_functions
    assert n0 is y.grad_fn and i0 == 0
    assert type(n1) is AccumulateGrad and n1.variable is b
    assert y.grad_fn.next_functions[1] == (None, 0)
    assert y.grad_fn.next_functions[0][0] is z.grad_fn.next_functions[0][0].next_functions[0][0]
    assert repr(n1).startswith("<AccumulateGrad object at 0x")


def test_diamond_graph_runs_each_node_once():
    calls = []
    x = ember.tensor([3.0], requires_grad=True)
    y = x * 2
    y.grad_fn.register_prehook(lambda g: calls.append(1))
    z = y * y + y.sin()
    z.backward(ember.ones(1))
    assert calls == [1]
    expected = 2 * (2 * 6.0) + 2 * np.cos(6.0)
    assert np.isclose(x.grad.item(), expected)


def test_tensor_hooks_leaf_and_nonleaf_and_remove():
    seen = []
    x = ember.ones(3, requires_grad=True)
    w = ember.ones(3, requires_grad=True)
    y = x * w
    h = y.register_hook(lambda g: seen.append(g.tolist()))
    hx = x.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert seen == [[1.0, 1.0, 1.0]]
    assert x.grad.tolist() == [10.0, 10.0, 10.0]
    assert w.grad.tolist() == [1.0, 1.0, 1.0]
    h.remove()
    hx.remove()
    y = x * w
    y.sum().backward()
    assert len(seen) == 1
    assert x.grad.tolist() == [11.0, 11.0, 11.0]


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't"):
        ember.ones(2).register_hook(lambda g: g)


def test_retain_grad():
    x = ember.ones(2, requires_grad=True)
    y = x * 3
    y.retain_grad()
    (y * y).sum().backward()
    assert y.grad.tolist() == [6.0, 6.0]
    assert y.retains_grad and not x.retains_grad


def test_nonleaf_grad_access_warns():
    y = ember.ones(2, requires_grad=True) * 2
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert y.grad is None


def test_node_post_hook():
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0 + 5, gi[1]))
    y.backward(ember.ones(2))
    assert x.grad.tolist() == [5.0, 5.0]


def test_autograd_grad_leaf_nonleaf_and_unused():
    x = ember.ones(3, requires_grad=True)
    w = ember.ones(3, requires_grad=True)
    u = ember.ones(3, requires_grad=True)
    y = x * w
    z = (y * 2).sum()
    gy, gx = ember.autograd.grad(z, (y, x), retain_graph=True)
    assert gy.tolist() == [2.0] * 3 and gx.tolist() == [2.0] * 3
    assert x.grad is None  # grad() does not accumulate
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        ember.autograd.grad(z, (x, u), retain_graph=True)
    gx, gu = ember.autograd.grad(z, (x, u), allow_unused=True, retain_graph=True)
    assert gu is None
    gx, gu = ember.autograd.grad(z, (x, u), materialize_grads=True)
    assert gu.tolist() == [0.0] * 3


def test_autograd_grad_with_grad_outputs():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    (g,) = ember.autograd.grad(x * x, x, grad_outputs=ember.tensor([1.0, 10.0]))
    assert g.tolist() == [2.0, 40.0]


def test_backward_inputs_restricts_accumulation():
    a = ember.ones(2, requires_grad=True)
    b = ember.ones(2, requires_grad=True)
    (a * b).sum().backward(inputs=[a])
    assert a.grad.tolist() == [1.0, 1.0] and b.grad is None


def test_grad_mode_contexts_decorators_and_threads():
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        assert not (x * 2).requires_grad
        with ember.enable_grad():
            assert (x * 2).requires_grad
    with ember.set_grad_enabled(False):
        assert not ember.is_grad_enabled()
    assert ember.is_grad_enabled()

    @ember.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad
    with ember.inference_mode():
        assert not (x * 2).requires_grad
    result = []
    with ember.no_grad():
        th = threading.Thread(target=lambda: result.append(ember.is_grad_enabled()))
        th.start()
        th.join()
    assert result == [True]  # grad mode is thread-local


def test_detach_and_data():
    x = ember.ones(1, requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d._vc is x._vc
    y = x * x
    x.data *= 100
    y.backward()
    assert x.tolist() == [100.0] and x.grad.tolist() == [200.0]


def test_inplace_on_leaf_requiring_grad_raises():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        x.add_(1)
    assert str(e.value) == (
        "a leaf Variable that requires grad is being used in an in-place operation."
    )
    with ember.no_grad():
        x.add_(1)
    assert x.tolist() == [2.0, 2.0]


def test_inplace_on_saved_tensor_is_detected():
    x = ember.ones(2, 2, requires_grad=True)
    b = (x * 3).exp()
    b.add_(1)
    with pytest.raises(RuntimeError) as e:
        b.sum().backward()
    assert str(e.value).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [2, 2]], which is output 0 of Exp, is at "
        "version 1; expected version 0 instead."
    )


def test_modified_leaf_message_matches_torch():
    x = ember.ones(2, requires_grad=True)
    y = x * x
    with ember.no_grad():
        x.add_(1)
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    assert str(e.value) == (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [2]] is at version 1; expected version 0 instead. Hint: "
        "enable anomaly detection to find the operation that failed to compute its gradient, "
        "with torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )


def test_inplace_rebases_history():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.mul_(x)
    assert y.grad_fn.name() == "MulBackward0"
    y.backward(ember.ones(2))
    assert x.grad.tolist() == [2.0, 4.0]


def test_t_inplace_on_nonleaf_is_tbackward1():
    x = ember.ones(2, 2, requires_grad=True)
    y = x + 2
    y.t_()
    assert y.grad_fn.name() == "TBackward1"
    assert y.grad_fn.next_functions[0][0].name() == "AddBackward0"


def test_setitem_copyslices():
    m = ember.tensor([[2.0, 3.0]], requires_grad=True)
    n = ember.zeros(1, 2)
    n[0, 0] = m[0, 0] ** 2
    n[0, 1] = m[0, 1] ** 3
    assert n.grad_fn.name() == "CopySlices"
    n.backward(m.data, retain_graph=True)
    assert m.grad.tolist() == [[8.0, 81.0]]
    n.backward(ember.tensor([[1.0, 1]]))
    assert m.grad.tolist() == [[12.0, 108.0]]


def test_deep_chain_has_no_recursion_limit():
    x = ember.tensor([0.5], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward(ember.ones(1))
    assert x.grad.tolist() == [1.0]


def test_saved_arrays_are_freed_after_backward():
    x = ember.ones(1000, requires_grad=True)
    h = x * 2
    probe = weakref.ref(h._data) if hasattr(h._data, "__weakref__") else None
    node = (h.sin()).grad_fn  # saves h
    del h
    gc.collect()
    del probe
    y = x.exp()
    node = y.grad_fn
    y.sum().backward()
    assert node._saved is not None and node._saved != ()
    from ember.autograd.graph import _FREED

    assert node._saved is _FREED


def test_graph_is_collected_without_gc():
    gc.disable()
    try:
        x = ember.ones(10, requires_grad=True)
        y = (x * 2).exp().sin()
        ref = weakref.ref(y.grad_fn)
        del y
        assert ref() is None  # freed by reference counting alone: no cycles
    finally:
        gc.enable()


def test_variable_returns_plain_tensor():
    from ember.autograd import Variable

    a = ember.ones(3)
    v = Variable(a, requires_grad=True)
    assert type(v) is ember.Tensor and v.requires_grad and not a.requires_grad
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        Variable(ember.arange(0, 3), requires_grad=True)


def test_requires_grad_rules():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        ember.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype"):
        ember.arange(3).requires_grad_()
    y = ember.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        y.numpy()


def test_grad_mode_bare_decorators():
    @ember.no_grad
    def f(t):
        return t * 2

    @ember.enable_grad
    def g(t):
        return t * 2

    @ember.inference_mode
    def h(t):
        return t * 2

    x = ember.ones(1, requires_grad=True)
    assert not f(x).requires_grad and not h(x).requires_grad
    with ember.no_grad():
        assert g(x).requires_grad
    assert ember.is_grad_enabled()


def test_anomaly_mode_names_the_node_that_made_nan():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = ember.autograd.detect_anomaly()
    with ctx:
        assert ember.is_anomaly_enabled()
        y = (x.sqrt() * 0).sum()
        with pytest.raises(RuntimeError) as e:
            y.backward()
    assert str(e.value) == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert not ember.is_anomaly_enabled()
    (x.sqrt() * 0).sum().backward()  # off: NaN flows as in torch
    assert np.isnan(x.grad.numpy()[0])
    with ember.autograd.set_detect_anomaly(True, check_nan=False):
        (x.sqrt() * 0).sum().backward()
