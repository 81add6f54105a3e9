# ruff: noqa: E501  (the cells are the transcript's code, verbatim)
"""Seed 001: the official "Autograd: Automatic Differentiation" tutorial, the implicit-grad
error, indexed assignment into zeros with autograd (CopySlices), repeated backward with
retain_graph.
"""

from __future__ import annotations

import numpy as np
from replay import (
    Cell,
    Raises,
    array,
    check_pinned,
    doublings,
    grad_fn_name,
    show,
    standard_tests,
    vjp,
)

TRANSCRIPT = "001_ebc2824ae0d619fc.txt"

# -- random cells' texts (from ember's draws) and the relations the tutorial shows --


def expect_6(d):
    d.randn(2, 2)  # a's values are not printed, only its flags and b's grad_fn
    return "False\nTrue\n<SumBackward0 object at 0x...>\n"


def relation_6(ns):
    a, b = ns["a"], ns["b"]
    assert a.requires_grad and a.is_leaf and b.shape == () and grad_fn_name(b) == "SumBackward0"


def expect_9(d):
    d.x = x = d.randn(3)
    d.k = doublings(x)
    return show(x * 2.0**d.k, "MulBackward0") + "\n"


def relation_9(ns):
    x, y = array(ns["x"]), ns["y"]
    assert grad_fn_name(y) == "MulBackward0" and y.requires_grad and not y.is_leaf
    assert np.array_equal(array(y), x * 2.0 ** doublings(x))


expect_10, relation_10 = vjp([0.1, 1.0, 0.0001])


def relation_14(ns):
    # out = mean(3 (a + 3)^2), d out / d a = 3 (a + 3)
    a = ns["a"]
    assert np.array_equal(array(a.grad), 3 * (array(a) + 3))


def relation_16(ns):
    # Indexed assignment of tracked values into a plain zeros tensor: the graph goes through
    # CopySlices, whose inputs are the previous CopySlices (the first: n itself, no grad_fn)
    # and the PowBackward0 of m[0, 1] ** 3.
    n = ns["n"]
    assert n.requires_grad and not n.is_leaf and grad_fn_name(n) == "CopySlices"
    (first, _), (power, _) = n.grad_fn.next_functions
    assert type(first).__name__ == "CopySlices" and type(power).__name__ == "PowBackward0"
    assert first.next_functions[0] == (None, 0)
    assert type(first.next_functions[1][0]).__name__ == "PowBackward0"


CELLS = [
    Cell(
        1,
        r"""
import torch
""",
        "",
    ),
    Cell(
        2,
        r"""
# Create a tensor and set requires_grad = True to track computation with it.
x = torch.ones(2, 2, requires_grad=True)
print(x)
""",
        """
tensor([[1., 1.],
        [1., 1.]], requires_grad=True)
""",
    ),
    Cell(
        3,
        r"""
# Do an operation of tensor.
y = x + 2
print(y)
""",
        """
tensor([[3., 3.],
        [3., 3.]], grad_fn=<AddBackward0>)
""",
    ),
    Cell(
        4,
        r"""
print(y.grad_fn)
""",
        """
<AddBackward0 object at 0x...>
""",
    ),
    Cell(
        5,
        r"""
# Do more operations on y
z = y * y * 3
out = z.mean()
print(z, out)
""",
        """
tensor([[27., 27.],
        [27., 27.]], grad_fn=<MulBackward0>) tensor(27., grad_fn=<MeanBackward0>)
""",
    ),
    Cell(
        6,
        r"""
a = torch.randn(2, 2)
a = ((a*3)/(a-1))
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)
b = (a * a).sum()
print(b.grad_fn)
""",
        expect_6,
        relation_6,
    ),
    Cell(
        7,
        r"""
out.backward()
""",
        "",
    ),
    Cell(
        8,
        r"""
# print gradients d(out)/dx
print(x.grad)
""",
        """
tensor([[4.5000, 4.5000],
        [4.5000, 4.5000]])
""",
    ),
    Cell(
        9,
        r"""
# Let's take a look at an example of Jacobian-vector product:
x = torch.randn(3, requires_grad = True)

y = x * 2

while y.data.norm() < 1000:
    y = y * 2

print(y)
""",
        expect_9,
        relation_9,
    ),
    Cell(
        10,
        r"""
# Now in this case y is no longer a scalar. torch.autograd could not compute the full Jacobian directly
# but if we just wnat the Jacobian-vector product, simple pass the vector to backward as argument.

v = torch.tensor([0.1, 1.0, 0.0001], dtype = torch.float)
y.backward(v)
print(x.grad)
""",
        expect_10,
        relation_10,
    ),
    Cell(
        11,
        r"""
y.backward()
""",
        Raises(RuntimeError, "grad can be implicitly created only for scalar outputs"),
    ),
    Cell(
        12,
        r"""
#simple gradient
a = torch.tensor([2.,3.], requires_grad=True)
b = a + 3
c = b * b * 3
out = c.mean()
out.backward()
""",
        "",
    ),
    Cell(
        13,
        r"""
print('input: ', a.data)
""",
        """
input:  tensor([2., 3.])
""",
    ),
    Cell(
        14,
        r"""
print('compute result is ', out.data)
""",
        """
compute result is  tensor(91.5000)
""",
        relation_14,
    ),
    Cell(
        15,
        r"""
print('input gradients are: ', a.grad.data)
""",
        """
input gradients are:  tensor([15., 18.])
""",
    ),
    Cell(
        16,
        r"""
m = torch.tensor([[2., 3.]], requires_grad = True)
n = torch.zeros((1,2))
print(n)
n[0,0] = m[0,0] ** 2
n[0,1] = m[0,1] ** 3
""",
        """
tensor([[0., 0.]])
""",
        relation_16,
    ),
    Cell(
        17,
        r"""
n.backward(m.data, retain_graph=True)
""",
        "",
    ),
    Cell(
        18,
        r"""
m.grad
""",
        """
tensor([[ 8., 81.]])
""",
    ),
    Cell(
        19,
        r"""
n.backward(torch.tensor([[1.,1]]))
""",
        "",
    ),
    Cell(
        20,
        r"""
m.grad
""",
        """
tensor([[ 12., 108.]])
""",
    ),
]


# Cells still failing because of an ember bug: {n: reason}. Empty when ember is right.
XFAIL: dict[int, str] = {}


globals().update(standard_tests(CELLS, TRANSCRIPT, XFAIL))


def test_vjp_prints_the_transcript_values():
    """With the transcript's own x (its y / 2**10), In [9] and In [10] print its lines."""
    y = np.array([456.1063, -466.0776, 1430.5864], dtype=np.float32)
    expect = {
        9: show(y, "MulBackward0") + "\n",
        10: "tensor([1.0240e+02, 1.0240e+03, 1.0240e-01])\n",
    }
    check_pinned(CELLS, expect, randn=[y / 1024])
