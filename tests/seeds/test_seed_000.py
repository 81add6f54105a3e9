# ruff: noqa: E501  (the cells are the transcript's code, verbatim)
"""Seed 000 (Chinese comments): leaves, grad_fn, in-place ``t_()`` on a non-leaf, mean/backward
-> 4.5, randn, ``requires_grad_``, the vector-Jacobian product, no_grad, detach, ``eq().all()``.
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

TRANSCRIPT = "000_6a046a34fe0ce8e2.txt"

# -- random cells' texts (from ember's draws) and the relations the tutorial shows --


def relation_4(ns):
    # t_() on a non-leaf rebinds y's grad_fn to TBackward1, whose input is the AddBackward0.
    y = ns["y"]
    assert grad_fn_name(y) == "TBackward1"
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "AddBackward0"


def expect_6(d):
    a = d.randn(2, 2)
    a = (a * np.float32(3)) / (a - np.float32(1))
    b = (a * a).sum(dtype=np.float32)
    return f"False\nTrue\n{show(b, 'SumBackward0')}\n<SumBackward0 object at 0x...>\n"


def relation_6(ns):
    a, b = ns["a"], ns["b"]
    assert a.requires_grad and a.is_leaf and a.grad_fn is None and a.shape == (2, 2)
    assert b.shape == () and grad_fn_name(b) == "SumBackward0"
    np.testing.assert_allclose(array(b), (array(a) ** 2).sum(), rtol=1e-6)


def expect_15(d):
    d.x = x = d.randn(3)
    d.k = doublings(x)
    lines = [f"{show(norm(x * 2.0**j))} {show(x * 2.0**j, 'MulBackward0')}" for j in range(1, d.k)]
    lines.append(show(x * 2.0**d.k, "MulBackward0"))
    return "\n".join(lines) + "\n"


def relation_15(ns):
    x, y = array(ns["x"]), ns["y"]
    assert grad_fn_name(y) == "MulBackward0" and y.shape == (3,)
    assert np.array_equal(array(y), x * 2.0 ** doublings(x))


expect_16, relation_16 = vjp([0.1, 1.0, 0.001])


def relation_18(ns):
    x = ns["x"]
    with ns["torch"].no_grad():
        assert (x**2).grad_fn is None
    assert grad_fn_name(x**2) == "PowBackward0"


CELLS = [
    Cell(
        1,
        r"""
import torch
# leaf variable 就是直接create的Tensor，他们不是其他操作的结果
x = torch.ones(2,2, requires_grad=True)
# 像x.t_() 这种in-place operation不能在requires_grad=True中使用
print(x)
""",
        """
tensor([[1., 1.],
        [1., 1.]], requires_grad=True)
""",
    ),
    Cell(
        2,
        r"""
y = x + 2
print(y)
""",
        """
tensor([[3., 3.],
        [3., 3.]], grad_fn=<AddBackward0>)
""",
    ),
    Cell(
        3,
        r"""
# 所谓的grad_fn 就是创造这个Tensor的function
print(y.grad_fn)
""",
        """
<AddBackward0 object at 0x...>
""",
    ),
    Cell(
        4,
        r"""
print(y)
print(y.t_())
""",
        """
tensor([[3., 3.],
        [3., 3.]], grad_fn=<AddBackward0>)
tensor([[3., 3.],
        [3., 3.]], grad_fn=<TBackward1>)
""",
        relation_4,
    ),
    Cell(
        5,
        r"""
# 和TF一样，这里的相乘都是elementwise
# 假如这里将表达式改成z = y * y.t_() * 3 ，这里不会得到matrix相乘的结果，因为Tensor.t_()是一个in-place operation
# 所以在evaluate这个式子数值的时候也会将y改变，在这个expression中y与y.t_()是等效。
z = y * y * 3
# Tensor.mean() 等效于torch.mean()
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
# 不同于torch.rand()，这里生成的是从N(0,1) Gaussian Distribution采样的Tensor
a = torch.randn(2,2)
a = ((a * 3) / (a - 1))
# requires_grad 这个flag by default 是 false的
print(a.requires_grad)
# Tensor.requires_grad_()能将Tensor.requires_grad这个flag改变，如True，就开始追踪，有grad_fn
a.requires_grad_(True)
print(a.requires_grad)
b = (a * a).sum()
print(b)
print(b.grad_fn)
""",
        expect_6,
        relation_6,
    ),
    Cell(
        7,
        r"""
# Tensor.backward() 开始backpropagation
out.backward()
""",
        "",
    ),
    Cell(
        11,
        r"""
# 求出out对x的导数，因为x为一个矩阵，求出来的导数跟x形状一致
print(x.grad)
""",
        """
tensor([[4.5000, 4.5000],
        [4.5000, 4.5000]])
""",
    ),
    Cell(
        15,
        r"""
x = torch.randn(3, requires_grad=True)
# Tensor.data.norm()等于torch.norm(Tensor)，在默认情况下计算的是Forbenius Norm(matrix) 或者 L2 Norm(Vector)
y = x * 2
while y.data.norm() < 1000:
    print(y.data.norm(), y)
    y = y * 2

print(y)
""",
        expect_15,
        relation_15,
    ),
    Cell(
        16,
        r"""
# 这里y是一个向量， x也是一个向量，dy/dx应该是一个Jacobian矩阵， 但是若果y与x是更高维的Tensor，这里就无法给出导数的定义，
# 所以PyTorch规定，Tensor.backward()，若果backward中没有额外的参数就不能求导，只能求scalar对Tensor的导数
# 这里给出一个简单的例子，假设y也是一个中间变量，已知最终结果对y的求导结果为v，求最终结果对于x的求导
# 可以理解为(y_transpose * v)得到一个scalar后再到x求导，这里的v可以像上面一个理解为最终结果对y的求导，
# 也可以理解为对y各个分量求和的权重
v = torch.tensor([0.1, 1.0, 0.001], dtype=torch.float)
y.backward(v)
print(x.grad)
""",
        expect_16,
        relation_16,
    ),
    Cell(
        18,
        r"""
# x在上一个cell开了requires_grad，所以在它基础计算的Tensor自然也都是开了追踪
# 除非有no_grad()暂时把追踪关闭
print(x.requires_grad)
print((x**2).requires_grad)

with torch.no_grad():
    print((x**2).requires_grad)
""",
        """
True
True
False
""",
        relation_18,
    ),
    Cell(
        19,
        r"""
# 或者使用Tensor.detach()，返回的值与x一样但是不再具有追踪功能
print(x.requires_grad)
y = x.detach()
print(y.requires_grad)
# Tensor0.eq(Tensor1) 与torch.eq()一样，会返回一个elementwise的BoolTensor
# BoolTensor.all()会返回另一个boolTensor，如果BoolTensor全部都是True，它也返回一个True,否则只要有一个是False就返回一个False
print(x.eq(y).all())
""",
        """
True
False
tensor(True)
""",
    ),
]


# Cells still failing because of an ember bug: {n: reason}. Empty when ember is right.
XFAIL: dict[int, str] = {}


globals().update(standard_tests(CELLS, TRANSCRIPT, XFAIL))


def test_vjp_prints_the_transcript_values():
    """With the transcript's own x (norm about 1.3: ten doublings), In [16] prints its line."""
    x = np.array([2.4776, -0.6099, -0.4804], dtype=np.float32) / 2
    check_pinned(CELLS, {15: None, 16: "tensor([ 102.4000, 1024.0000,    1.0240])\n"}, randn=[x])
