"""F.grid_sample, F.affine_grid and F.gumbel_softmax against torch: values, gradients (also
second order for bilinear sampling), grad_fn names, warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF

RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 3, 4, 5))
GRID = RNG.uniform(-1.4, 1.4, (2, 3, 6, 2))
THETA = RNG.standard_normal((2, 2, 3))
THETA3 = RNG.standard_normal((2, 3, 4))


def _sample(lib, F, mode, padding, align, x=X, grid=GRID, second=True):
    xt = lib.tensor(x, requires_grad=True)
    gt = lib.tensor(grid, requires_grad=True)
    out = F.grid_sample(xt, gt, mode=mode, padding_mode=padding, align_corners=align)
    w = lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
    gx, gg = lib.autograd.grad((out * w).sum(), [xt, gt], create_graph=second)
    res = [
        type(out.grad_fn).__name__,
        out.detach().numpy(),
        gx.detach().numpy(),
        gg.detach().numpy(),
    ]
    if second and mode != "nearest":
        res += [g.numpy() for g in lib.autograd.grad((gx.sin().sum() + (gg**2).sum()), [xt, gt])]
    return res


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_matches_torch(mode, padding, align):
    a = _sample(torch, TF, mode, padding, align)
    b = _sample(ember, EF, mode, padding, align)
    assert a[0] == b[0] == "GridSampler2DBackward0"
    for x, y in zip(a[1:], b[1:]):
        np.testing.assert_allclose(y, x, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_float32_and_edges(padding):
    # points on pixel centres, borders and far outside; a 1-pixel-wide input
    grid = np.array([[[[-1.0, -1.0], [1.0, 1.0], [0.0, 0.25], [5.0, -7.0], [-1.0, 0.999]]]])
    for x in (X[:1], X[:1, :, :1, :]):
        for align in (False, True):
            for mode in ("bilinear", "nearest", "bicubic"):
                a = _sample(
                    torch,
                    TF,
                    mode,
                    padding,
                    align,
                    x.astype(np.float32),
                    grid.astype(np.float32),
                    False,
                )
                b = _sample(
                    ember,
                    EF,
                    mode,
                    padding,
                    align,
                    x.astype(np.float32),
                    grid.astype(np.float32),
                    False,
                )
                for u, v in zip(a[1:], b[1:]):
                    assert v.dtype == np.float32
                    np.testing.assert_allclose(v, u, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_5d_matches_torch(mode, padding, align):
    x = RNG.standard_normal((2, 2, 3, 4, 5))
    grid = RNG.uniform(-1.3, 1.3, (2, 2, 3, 2, 3))
    a = _sample(torch, TF, mode, padding, align, x, grid)
    b = _sample(ember, EF, mode, padding, align, x, grid)
    assert a[0] == b[0] == "GridSampler3DBackward0"
    for u, v in zip(a[1:], b[1:]):
        np.testing.assert_allclose(v, u, rtol=1e-10, atol=1e-12)
    a = _sample(torch, TF, mode, padding, align, x, grid, second=False)
    b = _sample(ember, EF, mode, padding, align, x, grid, second=False)
    for u, v in zip(a[1:], b[1:]):
        np.testing.assert_allclose(v, u, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize(
    "size", [(2, 3, 4, 5), (2, 1, 1, 3), (2, 1, 3, 1), (2, 1, 3, 4, 5), (2, 2, 1, 2, 1)]
)
def test_affine_grid_matches_torch(size, align):
    out = []
    for lib, F in ((torch, TF), (ember, EF)):
        theta = lib.tensor(THETA if len(size) == 4 else THETA3, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grid = F.affine_grid(theta, list(size), align_corners=align)
        (g,) = lib.autograd.grad((grid * grid).sum(), theta)
        out.append((type(grid.grad_fn).__name__, grid.detach().numpy(), g.numpy()))
    assert out[0][0] == out[1][0]
    for x, y in zip(out[0][1:], out[1][1:]):
        np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-14)


def test_affine_grid_then_grid_sample_rotates():
    c, s = np.cos(0.3), np.sin(0.3)
    theta = np.array([[[c, -s, 0.1], [s, c, -0.2]], [[1.2, 0.0, 0.0], [0.0, 0.8, 0.3]]])
    out = []
    for lib, F in ((torch, TF), (ember, EF)):
        th = lib.tensor(theta, requires_grad=True)
        x = lib.tensor(X, requires_grad=True)
        y = F.grid_sample(
            x, F.affine_grid(th, [2, 3, 4, 5], align_corners=False), align_corners=False
        )
        gs = lib.autograd.grad(y.pow(2).sum(), [x, th])
        out.append([y.detach().numpy()] + [g.numpy() for g in gs])
    for a, b in zip(*out):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def _outcome(f):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            f()
            result = "ok"
        except Exception as e:  # noqa: BLE001
            result = (type(e).__name__, str(e).replace("torch.Size", "Size"))
    return result, [str(w.message) for w in caught]


ERRORS = {
    "default_align_warns_sample": lambda lib, F: F.grid_sample(
        lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2)
    ),
    "default_align_warns_affine": lambda lib, F: F.affine_grid(lib.zeros(1, 2, 3), [1, 1, 2, 2]),
    "unit_size_warns": lambda lib, F: F.affine_grid(
        lib.zeros(1, 2, 3), [1, 1, 1, 2], align_corners=True
    ),
    "dtype": lambda lib, F: F.grid_sample(
        lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2, dtype=lib.float64), align_corners=False
    ),
    "batch": lambda lib, F: F.grid_sample(
        lib.zeros(1, 1, 2, 2), lib.zeros(2, 1, 1, 2), align_corners=False
    ),
    "last_dim": lambda lib, F: F.grid_sample(
        lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 3), align_corners=False
    ),
    "grid_dims": lambda lib, F: F.grid_sample(
        lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 2), align_corners=False
    ),
    "mode": lambda lib, F: F.grid_sample(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), mode="x"),
    "padding": lambda lib, F: F.grid_sample(
        lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), padding_mode="x"
    ),
    "theta_int": lambda lib, F: F.affine_grid(
        lib.zeros(2, 2, 3, dtype=lib.int64), [2, 1, 2, 2], align_corners=False
    ),
    "theta_shape": lambda lib, F: F.affine_grid(
        lib.zeros(2, 3, 3), [2, 1, 2, 2], align_corners=False
    ),
    "size_len": lambda lib, F: F.affine_grid(lib.zeros(2, 2, 3), [2, 1, 2], align_corners=False),
    "size_zero": lambda lib, F: F.affine_grid(
        lib.zeros(2, 2, 3), [2, 1, 0, 2], align_corners=False
    ),
    "bicubic_5d": lambda lib, F: F.grid_sample(
        lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 1, 1, 1, 3), mode="bicubic", align_corners=False
    ),
    "theta_3d_shape": lambda lib, F: F.affine_grid(
        lib.zeros(2, 2, 3), [2, 1, 2, 2, 2], align_corners=False
    ),
    "grid_5d_last_dim": lambda lib, F: F.grid_sample(
        lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 1, 1, 1, 2), align_corners=False
    ),
    "theta_batch": lambda lib, F: F.affine_grid(
        lib.zeros(2, 2, 3), [3, 1, 2, 2], align_corners=False
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_and_warnings_match_torch(name):
    assert _outcome(lambda: ERRORS[name](ember, EF)) == _outcome(lambda: ERRORS[name](torch, TF))


def _gumbel(lib, F, monkeypatch, **kwargs):
    """gumbel_softmax with the exponential noise fixed (the same in both libraries)."""
    noise = np.linspace(0.1, 3.0, 12).reshape(3, 4)[:, ::-1].copy()

    def fill(self, *args, **kw):
        with lib.no_grad():
            self.copy_(lib.tensor(noise, dtype=self.dtype).reshape(self.shape))
        return self

    monkeypatch.setattr(lib.Tensor, "exponential_", fill)
    logits = lib.tensor(np.sin(np.arange(12.0)).reshape(3, 4), requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = F.gumbel_softmax(logits, **kwargs)
    (g,) = lib.autograd.grad((y * lib.tensor(np.arange(12.0).reshape(3, 4))).sum(), logits)
    return y.detach().numpy(), g.numpy(), [str(w.message) for w in caught]


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"tau": 0.5}, {"hard": True}, {"tau": 2.0, "hard": True, "dim": 0}, {"eps": 1e-5}],
)
def test_gumbel_softmax_matches_torch(kwargs, monkeypatch):
    with monkeypatch.context() as mp:
        a = _gumbel(torch, TF, mp, **kwargs)
    with monkeypatch.context() as mp:
        b = _gumbel(ember, EF, mp, **kwargs)
    np.testing.assert_allclose(b[0], a[0], rtol=1e-12)
    np.testing.assert_allclose(b[1], a[1], rtol=1e-10, atol=1e-12)
    assert a[2] == b[2]


def test_gumbel_softmax_samples():
    ember.manual_seed(0)
    y = EF.gumbel_softmax(ember.zeros(4000, 3), hard=True)
    assert set(np.unique(y.numpy())) == {0.0, 1.0}
    np.testing.assert_array_equal(y.sum(1).numpy(), np.ones(4000))
    np.testing.assert_allclose(y.mean(0).numpy(), [1 / 3] * 3, atol=0.04)
    soft = EF.gumbel_softmax(ember.tensor([[0.0, 5.0]]).expand(2000, 2), tau=1.0)
    assert abs(float(soft[:, 1].mean()) - 0.95) < 0.05
