"""The C loops eager convolutions and BatchNorm use where a C compiler is present.

``_compile/c/conv2d.c`` (im2col and col2im) gives the NumPy code's results bit for bit,
over strides, dilations, pads (larger than the kernel reach too), geometries whose windows
leave a tail uncovered, both float dtypes and non-contiguous inputs; ``nn_conv`` chooses
it only where it applies (other cases, and machines without gcc, keep the NumPy code).
``_compile/c/batch_norm.c`` (training statistics, normalisation and backward) agrees with
the NumPy code to float rounding. Convolutions of large batches made a few images at a
time equal the whole batch's (with or without the C loops)."""

from __future__ import annotations

import numpy as np
import pytest

from ember._aten import nn_conv
from ember._compile import kernels, lowerings

needs_kernels = pytest.mark.skipif(bool(kernels.available()), reason="no C kernels here")

# (in_size, kernel, stride, dilation, pads)
GEOMETRIES = [
    ((8, 8), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((7, 9), (3, 2), (2, 1), (1, 2), (1, 0)),
    ((5, 6), (1, 1), (1, 1), (1, 1), (0, 0)),
    ((6, 5), (2, 3), (3, 2), (2, 1), (2, 3)),
    ((4, 4), (5, 5), (1, 1), (1, 1), (2, 2)),
    ((9, 4), (3, 3), (2, 2), (1, 1), (0, 0)),  # a row and column no window reads
    ((3, 3), (2, 2), (1, 1), (3, 3), (2, 2)),  # dilated beyond the input
]


def _geometry(in_size, k, s, d, p):
    return nn_conv._conv_geometry(in_size, k, s, d, p, p)


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", GEOMETRIES)
def test_im2col_and_col2im_are_the_numpy_codes(case, dtype):
    geo = _geometry(*case)
    if min(geo.out) <= 0:
        pytest.skip("no windows")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3) + geo.in_size).astype(dtype)
    cols = lowerings.im2col(x, geo)
    assert cols.dtype == dtype
    np.testing.assert_array_equal(cols, nn_conv._unfold_numpy(x, geo))
    g = rng.standard_normal(cols.shape).astype(dtype)
    gx = lowerings.col2im(g, geo)
    assert gx.shape == x.shape and gx.dtype == dtype
    np.testing.assert_array_equal(gx, nn_conv._fold_numpy(g, geo))


@needs_kernels
def test_non_contiguous_inputs_and_the_parallel_loops():
    geo = _geometry((32, 32), (3, 3), (1, 1), (1, 1), (1, 1))
    x = np.random.default_rng(1).standard_normal((64, 16, 32, 32)).astype(np.float32)
    x = x.transpose(1, 0, 2, 3)  # planes * H * W >= kernels.PARALLEL_MIN: split over cores
    np.testing.assert_array_equal(lowerings.im2col(x, geo), nn_conv._unfold_numpy(x, geo))
    g = np.asfortranarray(lowerings.im2col(x, geo))
    np.testing.assert_array_equal(lowerings.col2im(g, geo), nn_conv._fold_numpy(g, geo))


@needs_kernels
def test_eager_calls_check_then_use_the_loops_where_they_apply():
    geo = _geometry((6, 6), (3, 3), (1, 1), (1, 1), (1, 1))
    x = np.arange(2 * 3 * 36, dtype=np.float32).reshape(2, 3, 6, 6)
    for _ in range(2):  # the first call checks against NumPy, the second trusts the loop
        cols = nn_conv._unfold_array(x, geo)
        np.testing.assert_array_equal(cols, nn_conv._unfold_numpy(x, geo))
        np.testing.assert_array_equal(
            nn_conv._fold_array(cols, geo), nn_conv._fold_numpy(cols, geo)
        )
    im2col, col2im = lowerings.eager("im2col"), lowerings.eager("col2im")
    assert im2col(x.astype(np.int64), geo) is None  # integers: the NumPy code
    assert im2col(x[0], geo) is None  # unbatched: _unfold_array adds the batch dim itself
    assert col2im(cols[..., :-1], geo) is None  # columns of another geometry
    geo3 = nn_conv._conv_geometry((3, 3, 3), (2, 2, 2), (1,) * 3, (1,) * 3, (0,) * 3, (0,) * 3)
    assert im2col(np.ones((1, 1, 3, 3, 3), np.float32), geo3) is None  # 3-d windows


@pytest.mark.parametrize(
    "nd, groups, stride, dilation, padding",
    [(2, 1, 1, 1, 1), (2, 2, 2, 1, 0), (2, 1, (2, 1), 2, (1, 2)), (1, 2, 1, 1, 1), (3, 1, 1, 1, 1)],
)
def test_a_convolution_made_a_few_images_at_a_time_is_the_whole_batchs(
    nd, groups, stride, dilation, padding, monkeypatch
):
    """Large batches make their im2col columns (and GEMMs) a few images at a time, forward
    and backward (``nn_conv._CHUNK_BYTES``): the same results as the whole batch at once,
    up to the order the weight's gradient sums the images in."""
    import ember

    rng = np.random.default_rng(2)
    x0 = rng.standard_normal((5, 4) + (6,) * nd).astype(np.float32)
    w0 = rng.standard_normal((6, 4 // groups) + (3,) * nd).astype(np.float32)
    b0 = rng.standard_normal(6).astype(np.float32)
    conv = getattr(ember.nn.functional, f"conv{nd}d")

    def run():
        x, w, b = (ember.tensor(a, requires_grad=True) for a in (x0, w0, b0))
        out = conv(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
        out.backward(ember.tensor(np.cos(np.arange(out.numel())).reshape(out.shape)))
        return [t.detach().numpy() for t in (out, x.grad, w.grad, b.grad)]

    whole = run()
    monkeypatch.setattr(nn_conv, "_CHUNK_BYTES", 1)  # one image at a time
    assert nn_conv._chunk(5, 100) == 1
    for got, want in zip(run(), whole):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape, affine", [((8, 3, 5, 7), True), ((4, 6, 10), False), ((70, 4, 3, 3, 3), True)]
)
def test_batch_norm_loops_agree_with_the_numpy_code(shape, affine, dtype):
    from ember._aten import nn_norm

    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 3 + 2).astype(dtype)
    c = shape[1]
    w = rng.standard_normal(c).astype(dtype) if affine else None
    b = rng.standard_normal(c).astype(dtype) if affine else None
    tol = 64 * np.finfo(dtype).eps
    mine = lowerings.batch_norm_train(x, w, b, 1e-5)
    want = nn_norm._batch_norm_numpy(x, w, b, True, 1e-5, None, None)
    for got, ref in zip(mine, want):
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)
    g = rng.standard_normal(shape).astype(dtype)
    mean, invstd = want[1], want[2]
    mine = lowerings.batch_norm_train_grad(g, x, w, mean, invstd)
    want = nn_norm._batch_norm_train_grad(g, x, w, mean, invstd)
    for got, ref in zip(mine, want):
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * np.abs(ref).max())
