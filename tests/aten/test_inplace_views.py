"""In-place changes through views of tensors in the graph: values, grad_fn names and
gradients against torch (the base's history becomes CopySlices)."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CASES = {
    "select_mul": lambda y, z: y[0].mul_(3),
    "slice_add_tensor": lambda y, z: y[:, 1:3].add_(z[:, :2]),
    "transpose_row_add": lambda y, z: y.t()[0].add_(z[0, :2]),
    "setitem_through_select": lambda y, z: y[0].__setitem__(1, 5.0),
    "setitem_tensor_through_slice": lambda y, z: y[1:].__setitem__((0, slice(0, 2)), z[0, :2] * 2),
    "zero_column": lambda y, z: y[:, 0].zero_(),
    "fill_row": lambda y, z: y[1].fill_(2.5),
    "copy_into_row": lambda y, z: y[0].copy_(z[1]),
    "diagonal_mul_tensor": lambda y, z: y.diagonal().mul_(z[0, :2]),
    "nested_views": lambda y, z: y[1][1:].sub_(z[0, 1:]),
    "view_then_use": lambda y, z: (y[0].mul_(2) * z[0]).sum(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_through_view_matches_torch(name):
    rng = np.random.default_rng(0)
    xd, zd = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    out = {}
    for lib in (ember, torch):
        x = lib.tensor(xd, requires_grad=True)
        z = lib.tensor(zd, requires_grad=True)
        y = x * 2
        r = CASES[name](y, z)
        loss = (y * y).sum() + (r.sum() if r is not None and r.dim() == 0 else 0)
        loss.backward()
        out[lib.__name__] = (
            y.detach().numpy().copy(),
            type(y.grad_fn).__name__,
            x.grad.numpy().copy(),
            None if z.grad is None else z.grad.numpy().copy(),
        )
    e, t = out["ember"], out["torch"]
    np.testing.assert_allclose(e[0], t[0], rtol=1e-12)
    assert e[1] == t[1] == "CopySlices"
    np.testing.assert_allclose(e[2], t[2], rtol=1e-10, atol=1e-12)
    if t[3] is None:
        assert e[3] is None or not e[3].any()
    else:
        np.testing.assert_allclose(e[3], t[3], rtol=1e-10, atol=1e-12)


def test_view_grad_fn_is_as_strided_and_base_next_functions_match_torch():
    x = ember.ones(2, 3, requires_grad=True)
    y = x * 2
    v = y[0]
    v.mul_(3)
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    (n0, _), (n1, _) = y.grad_fn.next_functions
    assert n0.name() == "MulBackward0" and n1 is None


def test_view_of_plain_tensor_joins_the_graph():
    m = ember.tensor([[2.0, 3.0]], requires_grad=True)
    n = ember.zeros(2, 2)
    n[0].copy_(m[0] ** 2)
    assert n.grad_fn.name() == "CopySlices"
    n.sum().backward()
    assert m.grad.tolist() == [[4.0, 6.0]]


def test_view_of_leaf_still_refused():
    x = ember.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0].mul_(2)


def test_modified_view_is_detected_by_saved_tensor_checks():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    s = y.sin()  # saves y
    y[1:].mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.sum().backward()
