# ruff: noqa: E501  (the cells are the transcript's code, verbatim)
"""Seed 004: ``Variable``, ``is_leaf``, next_functions and AccumulateGrad, retain_graph,
``autograd.grad``, tensor hooks, and ``arange(0, 3)`` (int64) refusing ``requires_grad``.
"""

from __future__ import annotations

import numpy as np
from replay import (
    Cell,
    Raises,
    array,
    grad_fn_name,
    show,
    standard_tests,
)

TRANSCRIPT = "004_85a610b037536760.txt"

# -- random cells' texts (from ember's draws) and the relations the tutorial shows --


def relation_32(ns):
    a, b, c = ns["a"], ns["b"], ns["c"]
    assert isinstance(a, ns["t"].Tensor) and a.requires_grad and not b.requires_grad
    assert grad_fn_name(c) == "AddBackward0" and grad_fn_name(ns["d"]) == "SumBackward0"


def relation_33(ns):
    # b never required grad; a leaf either way. c is the result of an op on a: not a leaf.
    assert ns["b"].grad is None and ns["b"].grad_fn is None


def expect_44(d):
    x = d.randn(2, 3)
    grad = 2 * x
    return f"{show(x * x, 'PowBackward0')}\n({show(grad)}, {show(grad, 'MulBackward0')})\n"


def relation_44(ns):
    # The tutorial's point: backward with ones gives x.grad == gradf(x) == 2 * x.
    x = ns["x"]
    assert x.is_leaf and x.requires_grad and x.shape == (2, 3)
    assert np.array_equal(array(x.grad), 2 * array(x))
    assert np.array_equal(array(x.grad), array(ns["gradf"](x)))


def expect_48(d):
    d.rand(1)  # b
    d.rand(1)  # w
    return ""


def relation_48(ns):
    w, x, b, z = ns["w"], ns["x"], ns["b"], ns["z"]
    assert np.array_equal(array(z), array(w) * array(x) + array(b))


def relation_52(ns):
    assert grad_fn_name(ns["z"]) == "AddBackward0" and grad_fn_name(ns["y"]) == "MulBackward0"


def relation_53(ns):
    # z = y + b: the edges lead to y's MulBackward0 and b's AccumulateGrad.
    (mul, i), (acc, j) = ns["z"].grad_fn.next_functions
    assert mul is ns["y"].grad_fn and i == 0 and j == 0
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is ns["b"]
    assert acc.next_functions == ()


def relation_54(ns):
    # y = w * x: w's AccumulateGrad, and (None, 0) for x, which does not require grad.
    (acc, _), none_edge = ns["y"].grad_fn.next_functions
    assert acc.variable is ns["w"] and none_edge == (None, 0)


def relation_59(ns):
    # dz/dw = x = 1 and dz/db = 1; retain_graph kept the graph, so it can be used again.
    assert array(ns["b"].grad).tolist() == [1.0]
    (grad_w,) = ns["t"].autograd.grad(ns["z"], ns["w"], retain_graph=True)
    assert array(grad_w).tolist() == [1.0]


def relation_65(ns):
    # autograd.grad returns the gradient without storing it: y is not a leaf, x.grad stays None.
    assert ns["x"].grad is None and ns["w"].grad is None


def relation_67(ns):
    # The hook saw y's gradient; the leaves got theirs: d(x*w)/dx = w = 1.
    assert array(ns["x"].grad).tolist() == [1.0, 1.0, 1.0]


CELLS = [
    Cell(
        45,
        r"""
import torch as t
from torch.autograd import Variable as V
import matplotlib.pyplot as plt
""",
        "",
    ),
    Cell(
        32,
        r"""
# requires_grad's default is false.If a leaf is True,its depended nodes are all True.
a = V(t.ones(3,4), requires_grad = True)
b = V(t.ones(3,4))
c = a+b
d = c.sum()  # calculate the sum
d.backward()  #back-propagation
a.grad,c.requires_grad,c.grad is None
""",
        """
(tensor([[1., 1., 1., 1.],
        [1., 1., 1., 1.],
        [1., 1., 1., 1.]]), True, True)
""",
        relation_32,
    ),
    Cell(
        33,
        r"""
a.is_leaf,b.is_leaf,c.is_leaf  # autograd only calculate the leaf.
""",
        """
(True, True, False)
""",
        relation_33,
    ),
    Cell(
        15,
        r"""
c.data.sum() , c.sum()  # first is tensor,second is variable
""",
        """
(tensor(24.), tensor(24., grad_fn=<SumBackward0>))
""",
    ),
    Cell(
        44,
        r"""
# let's do an example
def f(x):
    y = x**2
    return y
def gradf(x):
    dx = 2*x
    return dx
x = V(t.randn(2,3),requires_grad = True)
y = f(x)
print(y)
y.backward(t.ones(x.size()))
x.grad,gradf(x)
""",
        expect_44,
        relation_44,
    ),
    Cell(
        48,
        r"""
x = V(t.ones(1))
b = V(t.rand(1),requires_grad=True)
w = V(t.rand(1),requires_grad=True)
y = w*x
z = y+b
""",
        expect_48,
        relation_48,
    ),
    Cell(
        52,
        r"""
#grad_fn is used to show the backward functions.grad_fn.next_functions is used to save input of grad_fn.
y.requires_grad,z.requires_grad,z.grad_fn,y.grad_fn  #We can see z and y's backward.
""",
        """
(True, True, <AddBackward0 object at 0x...>, <MulBackward0 object at 0x...>)
""",
        relation_52,
    ),
    Cell(
        53,
        r"""
z.grad_fn.next_functions  # we can see z[0][0] = y.grad_fn,z[1][0] = b.grad
""",
        """
((<MulBackward0 object at 0x...>, 0), (<AccumulateGrad object at 0x...>, 0))
""",
        relation_53,
    ),
    Cell(
        54,
        r"""
y.grad_fn.next_functions  #y[0][0]=w.grad  y[1][0]=x.grad(none)
""",
        """
((<AccumulateGrad object at 0x...>, 0), (None, 0))
""",
        relation_54,
    ),
    Cell(
        55,
        r"""
# leaf's grad_fn is none
w.grad_fn,x.grad_fn
""",
        """
(None, None)
""",
    ),
    Cell(
        59,
        r"""
# retain_graph can stop to deleting the buffer
#multi-backward will make the grad accmulated.
z.backward(retain_graph = True)
w.grad
""",
        """
tensor([1.])
""",
        relation_59,
    ),
    Cell(
        60,
        r"""
# pytoch uses Dynamic graphics.Every forward will recreate calculate picture.So we can use python's control setence(if,while,for)
""",
        "",
    ),
    Cell(
        65,
        r"""
x = V(t.ones(3),requires_grad = True)
w = V(t.ones(3),requires_grad = True)
y = x*w
z = y.sum()
# because after backward,y's grad will automaticly delete.In order to find the y'grad,we can use autograd.grad() or hook
t.autograd.grad(z,y)
""",
        """
(tensor([1., 1., 1.]),)
""",
        relation_65,
    ),
    Cell(
        67,
        r"""
def hook1(grad):
    print("y's grad:\n",grad)
x = V(t.ones(3),requires_grad = True)
w = V(t.ones(3),requires_grad = True)
y = x*w
hook_handle = y.register_hook(hook1)
z = y.sum()
z.backward()
hook_handle.remove()
""",
        """
y's grad:
 tensor([1., 1., 1.])
""",
        relation_67,
    ),
    Cell(
        68,
        r"""
# let's see the grad_variables. z.backward() = y.backward(grad_y)
x = V(t.arange(0,3),requires_grad = True)
y = x**2 + x*2
z = y.sum()
z.backward()
x.grad
""",
        Raises(
            RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"
        ),
    ),
    Cell(
        71,
        r"""
x = V(t.arange(0,3),requires_grad = True)
y = x**2 + x*2
z = y.sum()
grad_y = V(t.ones(1))
y.backward(grad_y)
x.grad
""",
        Raises(
            RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"
        ),
    ),
]


# Cells still failing because of an ember bug: {n: reason}. Empty when ember is right.
XFAIL: dict[int, str] = {}


globals().update(standard_tests(CELLS, TRANSCRIPT, XFAIL))
