# ruff: noqa: E501  (the cells are the transcript's code, verbatim)
"""Seed 002 (Chinese): the same tutorial as seed 001 shown by bare-expression cells (their repr),
``rand``, ``norm``, the vector-Jacobian product, no_grad.
"""

from __future__ import annotations

import numpy as np
from replay import (
    Cell,
    array,
    check_pinned,
    doublings,
    grad_fn_name,
    norm,
    show,
    standard_tests,
    vjp,
)

TRANSCRIPT = "002_7098374ce7fe07be.txt"

# -- random cells' texts (from ember's draws) and the relations the tutorial shows --


def expect_11(d):
    d.a = d.rand(2, 2)
    return ""


def expect_14(d):
    a = (d.a * np.float32(3)) / (d.a - np.float32(1))
    return show(a, requires_grad=True) + "\n"


def relation_14(ns):
    a = ns["a"]
    assert a.is_leaf and a.requires_grad and a.grad_fn is None and a.shape == (2, 2)
    assert (array(a) < 0).all()  # rand is in [0, 1), so 3a / (a - 1) <= 0


def relation_17(ns):
    b = ns["b"]
    assert b.shape == () and grad_fn_name(b) == "SumBackward0"
    ((mul, _),) = b.grad_fn.next_functions
    assert type(mul).__name__ == "MulBackward0"


def expect_20(d):
    d.xx = d.rand(3)
    d.k = doublings(d.xx)
    return ""


def expect_23(d):
    return show(d.xx * 2) + "\n"


def expect_24(d):
    return show(norm(d.xx * 2)) + "\n"


def expect_26(d):
    return show(d.xx * 2.0**d.k, "MulBackward0") + "\n"


def relation_26(ns):
    xx, yy = array(ns["xx"]), ns["yy"]
    assert grad_fn_name(yy) == "MulBackward0" and norm(array(yy)) >= 1000
    assert np.array_equal(array(yy), xx * 2.0 ** doublings(xx))


expect_29, relation_29 = vjp([0.1, 1.0, 0.0001], x="xx")


def expect_31(d):
    return show(d.xx, requires_grad=True) + "\n"


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
x = torch.ones(2, 2 , requires_grad=True)
""",
        "",
    ),
    Cell(
        3,
        r"""
x
""",
        """
tensor([[1., 1.],
        [1., 1.]], requires_grad=True)
""",
    ),
    Cell(
        4,
        r"""
y  = x + 2
""",
        "",
    ),
    Cell(
        5,
        r"""
y
""",
        """
tensor([[3., 3.],
        [3., 3.]], grad_fn=<AddBackward0>)
""",
    ),
    Cell(
        6,
        r"""
y.grad_fn
""",
        """
<AddBackward0 object at 0x...>
""",
    ),
    Cell(
        7,
        r"""
z = y * y * 3
""",
        "",
    ),
    Cell(
        8,
        r"""
out = z.mean()
""",
        "",
    ),
    Cell(
        9,
        r"""
z, out
""",
        """
(tensor([[27., 27.],
        [27., 27.]], grad_fn=<MulBackward0>), tensor(27., grad_fn=<MeanBackward0>))
""",
    ),
    Cell(
        10,
        r"""
# 此例证明张量默认 requires_grad的属性为False， .requires_grad_(True/False)可以改变现有张量 requires_grad属性
""",
        "",
    ),
    Cell(
        11,
        r"""
a = torch.rand(2, 2 )
""",
        expect_11,
    ),
    Cell(
        12,
        r"""
a = ((a*3)/(a-1))
""",
        "",
    ),
    Cell(
        13,
        r"""
a.requires_grad
""",
        """
False
""",
    ),
    Cell(
        14,
        r"""
a.requires_grad_(True)
""",
        expect_14,
        relation_14,
    ),
    Cell(
        15,
        r"""
a.requires_grad
""",
        """
True
""",
    ),
    Cell(
        16,
        r"""
b = (a*a).sum()
""",
        "",
    ),
    Cell(
        17,
        r"""
b.grad_fn
""",
        """
<SumBackward0 object at 0x...>
""",
        relation_17,
    ),
    Cell(
        18,
        r"""
out.backward()
""",
        "",
    ),
    Cell(
        19,
        r"""
x.grad
""",
        """
tensor([[4.5000, 4.5000],
        [4.5000, 4.5000]])
""",
    ),
    Cell(
        20,
        r"""
xx = torch.rand(3, requires_grad=True)
""",
        expect_20,
    ),
    Cell(
        22,
        r"""
yy = xx * 2
""",
        "",
    ),
    Cell(
        23,
        r"""
yy.data
""",
        expect_23,
    ),
    Cell(
        24,
        r"""
# norm 范数， 范数1 为各绝对值之和， 范数2：各数子平方和的开平方  （距离）
yy.data.norm()
""",
        expect_24,
    ),
    Cell(
        25,
        r"""
while yy.data.norm() < 1000:
    yy = yy*2
""",
        "",
    ),
    Cell(
        26,
        r"""
yy
""",
        expect_26,
        relation_26,
    ),
    Cell(
        27,
        r"""
v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
""",
        "",
    ),
    Cell(
        28,
        r"""
yy.backward(v)
""",
        "",
    ),
    Cell(
        29,
        r"""
xx.grad
""",
        expect_29,
        relation_29,
    ),
    Cell(
        31,
        r"""
xx
""",
        expect_31,
    ),
    Cell(
        32,
        r"""
xx.requires_grad
""",
        """
True
""",
    ),
    Cell(
        33,
        r"""
(xx**2).requires_grad
""",
        """
True
""",
    ),
    Cell(
        34,
        r"""
with torch.no_grad():
    print((xx**2).requires_grad)
""",
        """
False
""",
    ),
]


# Cells still failing because of an ember bug: {n: reason}. Empty when ember is right.
XFAIL: dict[int, str] = {}


globals().update(standard_tests(CELLS, TRANSCRIPT, XFAIL))


def test_vjp_prints_the_transcript_values():
    """With the transcript's own xx (In [31]: ten doublings), In [29] prints its line."""
    xx = np.array([0.5825, 0.8190, 0.7868], dtype=np.float32)
    expect = {n: None for n in (20, 22, 25, 27, 28)}
    expect[29] = "tensor([1.0240e+02, 1.0240e+03, 1.0240e-01])\n"
    check_pinned(CELLS, expect, rand=[xx])
