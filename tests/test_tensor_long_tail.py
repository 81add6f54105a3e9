"""The long tail of Tensor methods and torch functions, compared with real torch: values,
dtypes, errors (type and message) and graph nodes. Differentiable ops are also in the op
database (tests/opdb); these tests cover what it does not: errors, integer and bool dtypes,
in-place shape changes and resizing, metadata."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _run(fn, lib):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn(lib)
    except Exception as e:  # noqa: BLE001  (the error itself is compared)
        return "error", (type(e).__name__, str(e))


def _same(a, b):
    if isinstance(b, torch.Tensor):
        assert isinstance(a, ember.Tensor), type(a)
        assert str(a.dtype) == str(b.dtype)
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().resolve_conj().numpy())
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
    elif isinstance(b, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b


def _compare(fn):
    kind_t, out_t = _run(fn, torch)
    kind_e, out_e = _run(fn, ember)
    assert kind_e == kind_t, (out_e, out_t)
    if kind_t == "error":
        assert out_e == out_t
    else:
        _same(out_e, out_t)


def _x(m):
    return m.arange(12.0).reshape(3, 4)


CASES = {
    # in-place shape changes
    "squeeze_": lambda m: (m.zeros(2, 1, 3, 1) * 1).squeeze_(),
    "squeeze_dim": lambda m: m.zeros(2, 1, 3).squeeze_(-2).shape,
    "squeeze_dims": lambda m: m.zeros(1, 2, 1).squeeze_((0, 2)).shape,
    "squeeze_bad_dim": lambda m: m.zeros(2, 1).squeeze_(2),
    "unsqueeze_": lambda m: m.zeros(2, 3).unsqueeze_(-1).shape,
    "unsqueeze_bad_dim": lambda m: m.zeros(2, 3).unsqueeze_(4),
    "transpose_": lambda m: _x(m).transpose_(0, 1),
    "swapdims_": lambda m: m.zeros(2, 3, 4).swapdims_(0, -1).shape,
    "swapaxes_": lambda m: m.zeros(2, 3, 4).swapaxes_(1, 2).shape,
    "transpose_0d": lambda m: m.tensor(1.0).transpose_(0, -1),
    "squeeze_leaf": lambda m: m.zeros(2, 1, requires_grad=True).squeeze_(),
    "transpose_graph": lambda m: (m.ones(2, 3, requires_grad=True) * 2).transpose_(0, 1),
    # resize_
    "resize_shrink": lambda m: m.arange(6).resize_(2, 2),
    "resize_same": lambda m: _x(m).t().resize_(4, 3),
    "resize_noncontiguous": lambda m: _x(m).t().resize_(12),
    "resize_view": lambda m: m.arange(6.0)[1:].resize_(2, 2),
    "resize_size": lambda m: m.arange(6).resize_(m.Size([3])),
    "resize_list": lambda m: m.arange(6).resize_([1, 2]),
    "resize_requires_grad": lambda m: m.ones(2, requires_grad=True).resize_(3),
    "resize_float": lambda m: m.ones(2).resize_(2.0),
    "resize_as_": lambda m: m.arange(6).resize_as_(m.zeros(3, 2)),
    "resize_as_function": lambda m: m.resize_as_(m.arange(6), m.zeros(2, 1)),
    "resize_as_not_tensor": lambda m: m.ones(2).resize_as_(3),
    # sgn, shifts, isreal
    "sgn_complex": lambda m: m.sgn(m.tensor([3 + 4j, 0j, -2j])),
    "sgn_int": lambda m: m.tensor([-3, 0, 5]).sgn(),
    "sgn_bool": lambda m: m.tensor([True, False]).sgn(),
    "lshift": lambda m: m.tensor([1, -8, 5, 127], dtype=m.int8) << 2,
    "rshift_amounts": lambda m: m.tensor([-5, 2, 64]) >> m.tensor([-1, 65, 3]),
    "lshift_amounts": lambda m: m.bitwise_left_shift(m.tensor([1, 2, 3]), m.tensor([-1, 64, 2])),
    "lshift_scalar_first": lambda m: m.bitwise_left_shift(3, m.tensor([1, 2])),
    "rlshift": lambda m: 3 << m.tensor([1, 2]),
    "rshift_uint8": lambda m: m.tensor([255, 8], dtype=m.uint8) >> m.tensor([1, 9], dtype=m.uint8),
    "lshift_float": lambda m: m.tensor([1.0]) << 1,
    "lshift_bool": lambda m: m.tensor([True]) >> m.tensor([True]),
    "ilshift": lambda m: m.tensor([1, 2]).bitwise_left_shift_(3),
    "isreal": lambda m: m.isreal(m.tensor([1 + 0j, 1 + 1j])),
    "isreal_real": lambda m: m.tensor([1.0, 2.0]).isreal(),
    # metadata
    "is_signed": lambda m: [m.zeros(1, dtype=d).is_signed() for d in (m.uint8, m.bool, m.int8)],
    "is_nonzero": lambda m: (m.tensor([0.0]).is_nonzero(), m.is_nonzero(m.tensor([[2]]))),
    "is_nonzero_empty": lambda m: m.tensor([]).is_nonzero(),
    "is_nonzero_many": lambda m: m.ones(2).is_nonzero(),
    "is_same_size": lambda m: (
        m.is_same_size(m.ones(2), m.ones(2)),
        m.ones(1).is_same_size(m.ones(2)),
    ),
    "itemsize_nbytes": lambda m: (m.ones(3, dtype=m.float16).itemsize, _x(m).t().nbytes),
    "is_neg": lambda m: (m.is_neg(m.ones(1)), m.ones(1).is_neg()),
    # reductions and selections
    "nanmedian_all_nan": lambda m: m.tensor([float("nan")] * 3).nanmedian(),
    "nanmedian_int": lambda m: m.tensor([[1, 2], [3, 4]]).nanmedian(0),
    "mode_int": lambda m: m.mode(m.tensor([[1, 3, 3, 2, 3, 1], [5, 5, 2, 2, 2, 7]]), 1),
    "mode_empty": lambda m: m.mode(m.ones(2, 0)),
    "dist_int": lambda m: m.dist(m.tensor([1, 2]), m.tensor([0, 0])),
    "dist_promotes": lambda m: m.dist(m.tensor([1.0, 2.0]), m.tensor([0.0], dtype=m.float64)),
    "dist_shapes": lambda m: m.dist(m.ones(2), m.ones(3)),
    "renorm_1d": lambda m: m.renorm(m.ones(3), 2, 0, 1),
    "renorm_p": lambda m: m.renorm(m.ones(2, 3), -1, 0, 1),
    "renorm_maxnorm": lambda m: m.renorm(m.ones(2, 3), 2, 0, -1),
    "renorm_int": lambda m: m.renorm(m.ones(2, 3, dtype=m.int64), 2, 0, 1),
    "sum_to_size_bad": lambda m: m.ones(2, 3, 4).sum_to_size(2, 4),
    "sum_to_size_int": lambda m: m.ones(2, 3, dtype=m.int32).sum_to_size(1, 3),
    "cumsum_int": lambda m: m.tensor([1, 2, 3], dtype=m.int32).cumsum_(0),
    # addr, addbmm
    "addr_int_float_beta": lambda m: m.addr(
        m.ones(2, 3, dtype=m.int64), m.ones(2, dtype=m.int64), m.ones(3, dtype=m.int64), beta=2.5
    ),
    "addr_int": lambda m: m.addr(
        m.ones(2, 3, dtype=m.int64), m.arange(2), m.arange(3), beta=2, alpha=3
    ),
    "addr_promotes": lambda m: m.addr(m.zeros(2, 3, dtype=m.int64), m.ones(2), m.ones(3)),
    "addr_bool": lambda m: m.addr(
        m.zeros(2, 3, dtype=m.bool), m.tensor([True, False]), m.ones(3, dtype=m.bool)
    ),
    "addr_2d": lambda m: m.addr(m.zeros(2, 3), m.ones(2, 1), m.ones(3)),
    "addr_beta0_nan": lambda m: m.addr(m.full((2, 3), float("nan")), m.ones(2), m.ones(3), beta=0),
    "addbmm_batches": lambda m: m.addbmm(m.zeros(3, 5), m.ones(2, 3, 4), m.ones(3, 4, 5)),
    "addbmm_sizes": lambda m: m.addbmm(m.zeros(3, 5), m.ones(2, 3, 4), m.ones(2, 3, 5)),
    "addbmm_dtype": lambda m: m.addbmm(
        m.zeros(3, 5), m.ones(2, 3, 4), m.ones(2, 4, 5, dtype=m.float64)
    ),
    "addbmm_int": lambda m: m.addbmm(
        m.zeros(3, 5, dtype=m.int64), m.ones(2, 3, 4, dtype=m.int64), m.ones(2, 4, 5, dtype=m.int64)
    ),
    # splits and copies
    "hsplit_0d": lambda m: m.hsplit(m.tensor(1.0), 2),
    "hsplit_uneven": lambda m: m.hsplit(m.ones(2, 5), 2),
    "vsplit_1d": lambda m: m.vsplit(m.ones(5), 2),
    "dsplit": lambda m: m.arange(12).reshape(2, 3, 2).dsplit([1]),
    "narrow_copy_range": lambda m: m.arange(5).narrow_copy(0, 4, 2),
    "narrow_copy_negative": lambda m: m.arange(5).narrow_copy(0, -2, 2),
    "unsafe_chunk_zero": lambda m: m.ones(4).unsafe_chunk(0),
    "unsafe_split": lambda m: m.arange(5).unsafe_split(2),
    "unsafe_split_sizes_sum": lambda m: m.arange(5).unsafe_split_with_sizes([1, 3]),
    "mH_1d": lambda m: m.ones(3).mH,
    "H_3d": lambda m: m.ones(2, 2, 2).H,
    "adjoint_1d": lambda m: m.ones(3).adjoint(),
    "adjoint_complex": lambda m: m.tensor([[1 + 1j, 2 - 1j]]).adjoint(),
    # indexing
    "take_along_dim_dtype": lambda m: m.take_along_dim(_x(m), m.tensor([[0]], dtype=m.int32), 1),
    "take_along_dim_dims": lambda m: m.take_along_dim(_x(m), m.tensor([0, 2]), 1),
    "take_along_dim_broadcast": lambda m: m.take_along_dim(_x(m), m.tensor([[0], [3], [1]]), 1),
    "take_along_dim_flat": lambda m: _x(m).take_along_dim(m.tensor([11, 0])),
    "diagflat_0d": lambda m: m.diagflat(m.tensor(3.0)),
    "put_out_of_range": lambda m: _x(m).put(m.tensor([0, 12]), m.tensor([1.0, 2.0])),
    "put_numel": lambda m: _x(m).put(m.tensor([0, 1]), m.tensor([1.0, 2.0, 3.0])),
    "put_dtype": lambda m: _x(m).put(m.tensor([0]), m.tensor([1.0], dtype=m.float64)),
    "put_index_dtype": lambda m: _x(m).put(m.tensor([0], dtype=m.int32), m.tensor([1.0])),
    "put_accumulate": lambda m: m.arange(4).put_(m.tensor([1, 1, -1]), m.tensor([5, 6, 7]), True),
    # unique_consecutive
    "unique_consecutive": lambda m: m.unique_consecutive(
        m.tensor([1, 1, 2, 2, 3, 1, 1, 2]), return_inverse=True, return_counts=True
    ),
    "unique_consecutive_dim": lambda m: m.tensor(
        [[1, 1, 2], [1, 1, 2], [3, 3, 3]]
    ).unique_consecutive(return_inverse=True, return_counts=True, dim=0),
    "unique_consecutive_graph": lambda m: m.unique_consecutive(m.ones(3, requires_grad=True)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    _compare(CASES[name])


def test_in_place_shape_changes_are_recorded_and_differentiate():
    for lib in (ember, torch):
        x = lib.arange(6.0, requires_grad=True)
        y = x.reshape(2, 1, 3) * 1
        assert y.squeeze_(1) is y and y.shape == (2, 3)
        y.unsqueeze_(0).transpose_(0, 2)
        assert type(y.grad_fn).__name__ == "TransposeBackward1"
        (y * lib.arange(6.0).reshape(y.shape)).sum().backward()
        if lib is ember:
            ours = x.grad.numpy()
        else:
            np.testing.assert_array_equal(ours, x.grad.numpy())


def test_resize_keeps_the_memory_prefix():
    x = ember.arange(6)
    y = x.view(2, 3)
    y.resize_(2, 2)
    assert y.tolist() == [[0, 1], [2, 3]]
    y[0, 0] = 9  # still the same memory as ``x``
    assert x[0].item() == 9
    grown = ember.arange(4.0).resize_(3, 3)
    assert grown.reshape(-1)[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
    v = x._version
    x.resize_(6)
    assert x._version == v + 1


def test_bit_shift_operators_in_place():
    x = ember.tensor([1, 2])
    x <<= 2
    assert x.tolist() == [4, 8]
    x >>= 1
    assert x.tolist() == [2, 4]
