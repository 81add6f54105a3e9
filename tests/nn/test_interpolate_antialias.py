"""``F.interpolate(..., antialias=True)`` (bilinear, bicubic and lanczos on 4-D input) against
torch:
values and gradients over down- and up-sampling, non-integer factors, ``align_corners``,
``scale_factor`` and ``recompute_scale_factor``, float32 and float64; uint8 input (torch's
fixed-point arithmetic, exact); non-finite inputs; double backward; torch's errors. The
per-op autograd checks (forward mode, grad_fn names) live in tests/opdb/nn_conv.py."""

import numpy as np
import pytest

import ember
import ember.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(27)

CASES = [
    ((2, 3, 17, 13), {"size": (5, 7)}),  # downsampling, both dims
    ((1, 2, 8, 9), {"size": (20, 11)}),  # upsampling
    ((1, 1, 30, 31), {"size": (7, 3)}),  # strong downsampling (wide filters)
    ((1, 2, 10, 12), {"scale_factor": 0.37}),
    ((1, 2, 10, 12), {"scale_factor": (1.7, 0.3)}),  # up along H, down along W
    ((1, 2, 10, 12), {"scale_factor": 0.37, "recompute_scale_factor": True}),
    ((1, 2, 9, 9), {"scale_factor": 1.1}),  # same size: torch's backward still resamples
    ((1, 2, 12, 8), {"size": (12, 5)}),  # one dim unchanged
    ((1, 1, 5, 7), {"size": (1, 1)}),
    ((1, 1, 1, 7), {"size": (3, 2)}),
    ((2, 3, 64, 48), {"size": (24, 24)}),
    ((1, 2, 6, 6), {"size": 6}),  # no resampling at all
]

TOL = {np.float32: {"rtol": 2e-5, "atol": 2e-6}, np.float64: {"rtol": 1e-12, "atol": 1e-13}}


def _both(a, mode, align_corners, kw, requires_grad=True):
    tx = torch.tensor(a, requires_grad=requires_grad)
    ex = ember.tensor(a, requires_grad=requires_grad)
    ty = TF.interpolate(tx, mode=mode, align_corners=align_corners, antialias=True, **kw)
    ey = F.interpolate(ex, mode=mode, align_corners=align_corners, antialias=True, **kw)
    return tx, ex, ty, ey


MODES = [("bilinear", False), ("bilinear", True), ("bicubic", False), ("bicubic", True)]
MODES += [("lanczos", False)]  # (lanczos refuses align_corners=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("mode,align_corners", MODES)
@pytest.mark.parametrize("shape,kw", CASES)
def test_values_and_gradients_match_torch(shape, kw, mode, align_corners, dtype):
    a = RNG.standard_normal(shape).astype(dtype)
    tx, ex, ty, ey = _both(a, mode, align_corners, kw)
    assert tuple(ey.shape) == tuple(ty.shape)
    assert ey.dtype == getattr(ember, str(ty.dtype).split(".")[1])
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), **TOL[dtype])
    assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__
    g = RNG.standard_normal(tuple(ty.shape)).astype(dtype)
    ty.backward(torch.tensor(g))
    ey.backward(ember.tensor(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), **TOL[dtype])


def test_grad_fn_names():
    x = ember.ones(1, 1, 6, 6, requires_grad=True)
    y = F.interpolate(x, size=(3, 3), mode="bilinear", antialias=True)
    assert type(y.grad_fn).__name__ == "UpsampleBilinear2DAaBackward0"
    y = F.interpolate(x, size=(3, 3), mode="bicubic", antialias=True)
    assert type(y.grad_fn).__name__ == "UpsampleBicubic2DAaBackward0"
    y = F.interpolate(x, size=(3, 3), mode="lanczos", antialias=True)
    assert type(y.grad_fn).__name__ == "UpsampleLanczos2DAaBackward0"


def test_output_is_a_new_tensor_when_no_dim_changes():
    x = ember.arange(16.0).reshape(1, 1, 4, 4)
    y = F.interpolate(x, size=(4, 4), mode="bilinear", antialias=True)
    y[0, 0, 0, 0] = 100.0
    assert x[0, 0, 0, 0].item() == 0.0


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_torchvision_resize_call(mode):
    """torchvision's ``resize`` on a float image batch."""
    a = RNG.random((2, 3, 40, 57)).astype(np.float32)
    tx, ex, ty, ey = _both(a, mode, False, {"size": (24, 24)}, requires_grad=False)
    np.testing.assert_allclose(ey.numpy(), ty.numpy(), **TOL[np.float32])


@pytest.mark.parametrize("channels", [1, 3, 4, 5])  # torch's AVX kernel takes <= 4 channels
@pytest.mark.parametrize("mode,align_corners", MODES)
@pytest.mark.parametrize(
    "hw,kw",
    [
        ((17, 13), {"size": (5, 7)}),
        ((8, 9), {"size": (20, 11)}),
        ((64, 48), {"size": (24, 24)}),
        ((10, 12), {"scale_factor": 0.37}),
        ((30, 40), {"size": (31, 40)}),
        ((120, 90), {"size": (33, 77)}),
    ],
)
def test_uint8_matches_torch_exactly(hw, kw, mode, align_corners, channels):
    a = RNG.integers(0, 256, (2, channels, *hw)).astype(np.uint8)
    ty = TF.interpolate(
        torch.tensor(a), mode=mode, align_corners=align_corners, antialias=True, **kw
    )
    ey = F.interpolate(
        ember.tensor(a), mode=mode, align_corners=align_corners, antialias=True, **kw
    )
    assert ey.dtype == ember.uint8
    np.testing.assert_array_equal(ey.numpy(), ty.numpy())


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_non_finite_inputs_reach_only_their_window(mode):
    a = RNG.standard_normal((1, 1, 16, 16))
    a[0, 0, 2, 3] = np.inf
    a[0, 0, 12, 9] = np.nan
    tx, ex, ty, ey = _both(a, mode, False, {"size": (5, 6)}, requires_grad=False)
    np.testing.assert_allclose(ey.numpy(), ty.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_double_backward_matches_torch(mode):
    a = RNG.standard_normal((1, 2, 9, 7))
    g = RNG.standard_normal((1, 2, 4, 10))
    results = []
    for lib, fn in ((torch, TF), (ember, F)):
        x = lib.tensor(a, requires_grad=True)
        go = lib.tensor(g, requires_grad=True)
        y = fn.interpolate(x, size=(4, 10), mode=mode, antialias=True)
        (gx,) = lib.autograd.grad(y, x, go, create_graph=True)
        (ggo,) = lib.autograd.grad((gx * gx).sum(), go)
        results.append((gx.detach().numpy(), ggo.numpy()))
    for e, t in zip(results[1], results[0]):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("scales", [(), (0.3, 1.7)])  # scales map positions; the size is given
def test_aten_overloads(mode, align_corners, scales):
    a = RNG.standard_normal((1, 2, 9, 7))
    name = f"_upsample_{mode}2d_aa"
    t = getattr(torch.ops.aten, name)(torch.tensor(a), [4, 12], align_corners, *scales)
    e = getattr(ember.ops.aten, name)(ember.tensor(a), [4, 12], align_corners, *scales)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("args", [((1, 4, 4), [2, 2]), ((1, 1, 4, 4), [2])])
def test_aten_overload_errors(args):
    shape, size = args
    with pytest.raises(RuntimeError) as te:
        torch.ops.aten._upsample_bilinear2d_aa(torch.ones(shape), size, False)
    with pytest.raises(RuntimeError) as ee:
        ember.ops.aten._upsample_bilinear2d_aa(ember.ones(shape), size, False)
    assert str(ee.value) == str(te.value)


ERRORS = [
    lambda m, f: f.interpolate(
        m.ones(1, 1, 4, 4, dtype=m.int32), size=2, mode="bilinear", antialias=True
    ),
    lambda m, f: f.interpolate(
        m.ones(1, 1, 4, 4, dtype=m.float16), size=2, mode="bicubic", antialias=True
    ),
    lambda m, f: f.interpolate(
        m.ones(1, 1, 4, 4, dtype=m.bool), size=2, mode="bilinear", antialias=True
    ),
    lambda m, f: f.interpolate(m.ones(1, 1, 0, 4), size=2, mode="bilinear", antialias=True),
    lambda m, f: f.interpolate(m.ones(1, 1, 4, 4), size=(0, 2), mode="bicubic", antialias=True),
    lambda m, f: f.interpolate(
        m.ones(1, 1, 4, 4), scale_factor=0.1, mode="bicubic", antialias=True
    ),
    lambda m, f: f.interpolate(m.ones(1, 4, 4), size=2, mode="linear", antialias=True),
    lambda m, f: f.interpolate(m.ones(1, 4, 4), size=2, mode="bilinear", antialias=True),
    lambda m, f: f.interpolate(m.ones(1, 1, 4, 4), size=2, mode="nearest", antialias=True),
    lambda m, f: f.interpolate(m.ones(1, 1, 2, 4, 4), size=2, mode="trilinear", antialias=True),
    lambda m, f: f.interpolate(m.ones(1, 1, 4, 4), size=2, mode="lanczos"),
    lambda m, f: f.interpolate(m.ones(1, 4, 4), size=2, mode="lanczos", antialias=True),
    lambda m, f: f.interpolate(m.ones(1, 4, 4), size=2, mode="lanczos"),
    lambda m, f: f.interpolate(
        m.ones(1, 1, 4, 4, dtype=m.int64), size=2, mode="lanczos", antialias=True
    ),
    lambda m, f: f.interpolate(
        m.ones(1, 1, 4, 4), size=2, mode="lanczos", align_corners=True, antialias=True
    ),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case):
    fn = ERRORS[case]
    with pytest.raises(Exception) as te:
        fn(torch, TF)
    with pytest.raises(type(te.value)) as ee:
        fn(ember, F)
    assert str(ee.value) == str(te.value)
