"""In-place ops: each tensor takes the gradient and tangent of its out-of-place result."""

from . import Op, S


def _iadd(x, y):
    x += y
    return x


def _setitem(x, y):
    x[1] = y * 2
    x[0, 1:3] = 0.0
    return x


OPS = [
    # in-place ops (the tensor takes the tangent of the out-of-place result)
    Op("mul_", lambda m, x, y: x.clone().mul_(y), (S(3, 4), S(4))),
    Op("sin_", lambda m, x: x.clone().sin_(), (S(3, 4),)),
    Op("iadd", lambda m, x, y: _iadd(x.clone(), y), (S(3), S(3))),
    Op("copy_", lambda m, x: m.zeros(2, 3, dtype=m.float64).copy_(x), (S(3),)),
    Op("setitem", lambda m, x, y: _setitem(x.clone(), y), (S(3, 4), S(4))),
    Op("zero_", lambda m, x, y: x.clone().zero_() + y, (S(3), S(3))),
    Op("fill_", lambda m, x, y: x.clone().fill_(2.5) * y, (S(3), S(3))),
    Op("t_", lambda m, x: (x * 2).t_(), (S(3, 4),)),
]
