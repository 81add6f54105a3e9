"""In-place ops: each tensor takes the gradient and tangent of its out-of-place result.

Through a view of a tensor in the graph, the base's history becomes ``CopySlices`` and the
written view's ``AsStridedBackward0``: the entries below write through each kind of view
(slices, select, transposes, diagonals, flattening views, nested views, masks and index
lists), with ops whose derivative reads their operands or their own result, so that the
generic tests differentiate ``CopySlices`` twice and in forward mode.
"""

from . import Op, P, S


def _iadd(x, y):
    x += y
    return x


def _setitem(x, y):
    x[1] = y * 2
    x[0, 1:3] = 0.0
    return x


def _mask(m):
    return m.tensor([[True, False, True, True], [False, True, False, True]])


def _slice_imul(m, x, w):
    y = x * 1
    y[1:] *= w
    return y


def _select_exp_(m, x):
    y = x * 1
    y.select(1, 2).exp_()  # exp_ saves its result: the view after the write
    return y


def _transposed_row_sigmoid_(m, x):
    y = x * 1
    y.t()[1].sigmoid_()
    return y


def _diagonal_div_(m, x, w):
    y = x * 1
    y.diagonal().div_(w)
    return y


def _narrow_copy_(m, x, w):
    y = x * 1
    y.narrow(1, 1, 2).copy_(w * w)
    return y


def _flat_view_mul_(m, x):
    y = x * 1
    v = y.view(12)[2:9]
    v.mul_(v * 0.5 + 1)  # the operand depends on the view's old value
    return y


def _unsqueezed_tanh_(m, x):
    y = x * 1
    y.unsqueeze(0)[0, 1, 1:].tanh_()
    return y


def _nested_views_pow_(m, x):
    y = x * 1
    y[1:][:, ::2].pow_(2)
    return y


def _masked_setitem_view(m, x, w):
    y = x * 1
    y[1:][_mask(m)] = (w * w)[_mask(m)]
    return y


def _masked_fill_view(m, x):
    y = x * 1
    y[1:].masked_fill_(_mask(m), 0.5)
    return y * x


def _index_iadd_view(m, x, w):
    y = x * 1
    y[:, 1:][m.tensor([2, 0])] += w * y[0, :3].clone()
    return y


def _two_writes(m, x):
    y = x * 1
    y[1:].mul_(y[:-1] * 1)
    y[:2].sin_()
    return y


def _written_view(m, x):
    y = x * 1
    v = y[1:, 1:]
    v.exp_()
    return v  # the written view itself: AsStridedBackward0 of the base's CopySlices


def _views_after_write(m, x):
    y = x * 1
    y[0].mul_(x[1])
    return y[0] * y[1:]


def _plain_base(m, x, w):
    y = m.zeros(3, 4, dtype=x.dtype)  # requires no grad until a written value does
    y[1:, :2] = x[:2, 1:3] ** 2
    y[0].copy_(w.sin())
    return y


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
    Op("squeeze_", lambda m, x: (x * 2).squeeze_() * x.squeeze(), (S(3, 1, 4),)),
    Op("squeeze__dim", lambda m, x: (x * 2).squeeze_(-2) * x.squeeze(1), (S(3, 1, 4),)),
    Op("squeeze__dims", lambda m, x: (x * 2).squeeze_((0, 1)) * x[0, 0], (S(1, 1, 4),)),
    Op("unsqueeze_", lambda m, x: (x * 2).unsqueeze_(1) * x.unsqueeze(1), (S(3, 4),)),
    Op("transpose_", lambda m, x: (x * 2).transpose_(0, 2) * x.transpose(0, 2), (S(2, 3, 4),)),
    Op("swapdims_", lambda m, x: (x * 2).swapdims_(-1, 0).swapaxes_(0, 1), (S(2, 3, 4),)),
    # in-place ops through views (CopySlices)
    Op("view_slice_imul", _slice_imul, (S(3, 4), S(4))),
    Op("view_select_exp_", _select_exp_, (S(3, 4),)),
    Op("view_transposed_row_sigmoid_", _transposed_row_sigmoid_, (S(3, 4),)),
    Op("view_diagonal_div_", _diagonal_div_, (S(3, 4), P(3))),
    Op("view_narrow_copy_", _narrow_copy_, (S(3, 4), S(3, 2))),
    Op("view_flat_mul_", _flat_view_mul_, (S(3, 4),)),
    Op("view_unsqueezed_tanh_", _unsqueezed_tanh_, (S(3, 4),)),
    Op("view_nested_pow_", _nested_views_pow_, (S(3, 4),)),
    Op("view_masked_setitem", _masked_setitem_view, (S(3, 4), S(2, 4))),
    Op("view_masked_fill_", _masked_fill_view, (S(3, 4),)),
    Op("view_index_iadd", _index_iadd_view, (S(3, 4), S(2, 3))),
    Op("view_two_writes", _two_writes, (S(3, 4),)),
    Op("view_written_view", _written_view, (S(3, 4),)),
    Op("view_views_after_write", _views_after_write, (S(3, 4),)),
    Op("view_plain_base", _plain_base, (S(3, 4), S(4))),
]
