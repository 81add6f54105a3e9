"""torch.fft and the complex ops against torch: values, dtypes, graphs, gradients (real and
complex inputs), forward mode, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import ember
import ember.fft

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 6))
Z = X + 1j * RNG.standard_normal((4, 6))


def _np(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _compare(fn, arr, tol=1e-10):
    """Values, dtype, grad_fn name and the gradient of a random real projection."""
    e = ember.tensor(arr, requires_grad=True)
    t = torch.tensor(arr, requires_grad=True)
    re_, rt = fn(ember, e), fn(torch, t)
    assert str(re_.dtype) == str(rt.dtype)
    assert tuple(re_.shape) == tuple(rt.shape)
    np.testing.assert_allclose(_np(re_), _np(rt), atol=tol, rtol=tol)
    assert type(re_.grad_fn).__name__ == type(rt.grad_fn).__name__
    w = RNG.standard_normal(tuple(rt.shape) + ((2,) if rt.is_complex() else ()))
    le = ember.view_as_real(re_ * 1) if re_.is_complex() else re_
    lt = torch.view_as_real(rt * 1) if rt.is_complex() else rt
    (le * ember.tensor(w, dtype=le.dtype)).sum().backward()
    (lt * torch.tensor(w, dtype=lt.dtype)).sum().backward()
    np.testing.assert_allclose(_np(e.grad), _np(t.grad), atol=tol, rtol=tol)


ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
NORMS = [None, "backward", "ortho", "forward"]


@pytest.mark.parametrize("name,norm", list(itertools.product(ONE_D, NORMS)))
def test_one_dimensional_transforms_match_torch(name, norm):
    inputs = [X] if name in ("rfft", "ihfft") else [X, Z]
    for arr, (n, dim) in itertools.product(inputs, [(None, -1), (3, 0), (6, 1), (9, -1)]):
        _compare(lambda m, v, n=n, dim=dim: getattr(m.fft, name)(v, n=n, dim=dim, norm=norm), arr)


@pytest.mark.parametrize("name,norm", list(itertools.product(N_D, NORMS[1:])))
def test_n_dimensional_transforms_match_torch(name, norm):
    inputs = [X] if name.startswith("rfft") else [X, Z]
    cases = [(None, None), ((3, 5), None), ((5, 7), None), ((5,), (0,)), ((-1, 4), (1, 0))]
    if not name.endswith("2"):
        cases.append((None, (0,)))
    for arr, (s, dim) in itertools.product(inputs, cases):
        kw = {"s": s, "norm": norm}
        if dim is not None:
            kw["dim"] = dim
        _compare(lambda m, v, kw=kw: getattr(m.fft, name)(v, **kw), arr)


def test_three_dimensional_and_float32():
    a = RNG.standard_normal((2, 3, 4))
    for name in ["fftn", "ifftn", "rfftn", "irfftn"]:
        _compare(lambda m, v, name=name: getattr(m.fft, name)(v, dim=(0, 2)), a)
        e = getattr(ember.fft, name)(ember.tensor(a, dtype=ember.float32))
        t = getattr(torch.fft, name)(torch.tensor(a, dtype=torch.float32))
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_allclose(_np(e), _np(t), atol=1e-5)
    e = ember.fft.fft(ember.tensor(Z, dtype=ember.complex64))
    assert e.dtype == ember.complex64


def test_integer_inputs_become_default_float():
    for name in ["fft", "rfft", "ihfft", "fftn", "irfft"]:
        e = getattr(ember.fft, name)(ember.arange(6))
        t = getattr(torch.fft, name)(torch.arange(6))
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_allclose(_np(e), _np(t), atol=1e-5)


def test_graphs_match_torch():
    def chain(t):
        names, f = [], t.grad_fn
        while f is not None:
            names.append(type(f).__name__)
            f = f.next_functions[0][0] if f.next_functions else None
        return names

    x, z = X, Z
    cases = [
        (lambda m, v: m.fft.fft(v, n=9), x),
        (lambda m, v: m.fft.fft(v, n=3), x),
        (lambda m, v: m.fft.ifft(v), x),
        (lambda m, v: m.fft.fft2(v), x),
        (lambda m, v: m.fft.hfft(v), z),
        (lambda m, v: m.fft.ihfft(v), x),
        (lambda m, v: m.fft.irfftn(v, s=(3, 5)), z),
        (lambda m, v: m.fft.fft2(v, s=(5, 3)), z),
        (lambda m, v: m.fft.fftshift(v), x),
        (lambda m, v: v.real, z),
        (lambda m, v: m.view_as_complex(m.view_as_real(v)), z),
    ]
    for fn, a in cases:
        e = fn(ember, ember.tensor(a, requires_grad=True))
        t = fn(torch, torch.tensor(a, requires_grad=True))
        assert chain(e) == chain(t)
    assert ember.fft.rfft(ember.tensor(X, requires_grad=True)).grad_fn._saved_normalization == 0


@pytest.mark.parametrize("norm", NORMS)
def test_gradients_of_complex_losses_match_torch(norm):
    for lib_loss in [
        lambda m, v: (m.fft.fft(v, norm=norm).abs() ** 2).sum(),
        lambda m, v: m.view_as_real(m.fft.fftn(v, norm=norm)).sum(),
        lambda m, v: (m.fft.ifft2(v, norm=norm).angle()).sum(),
        lambda m, v: m.fft.irfft(m.fft.rfft(v.real, norm=norm) * 2, norm=norm).pow(2).sum(),
    ]:
        e = ember.tensor(Z, requires_grad=True)
        t = torch.tensor(Z, requires_grad=True)
        lib_loss(ember, e).backward()
        lib_loss(torch, t).backward()
        np.testing.assert_allclose(_np(e.grad), _np(t.grad), atol=1e-10)


def test_gradcheck_and_forward_mode():
    x = ember.tensor(RNG.standard_normal((3, 5)), requires_grad=True)
    for f in [
        lambda v: ember.view_as_real(ember.fft.rfft(v, norm="ortho")),
        lambda v: ember.fft.irfft(ember.fft.fft(v), n=6),
        lambda v: ember.fft.hfft(ember.fft.ihfft(v), n=5),
        lambda v: ember.view_as_real(ember.fft.fftn(v, s=(4, 4))),
    ]:
        assert ember.autograd.gradcheck(f, (x,))
        assert ember.autograd.gradgradcheck(f, (x,))
    import ember.autograd.forward_ad as fwad

    t = RNG.standard_normal((3, 5))
    with fwad.dual_level():
        d = fwad.make_dual(x.detach(), ember.tensor(t))
        out = fwad.unpack_dual(ember.fft.rfft2(d, norm="forward"))
    assert np.allclose(out.tangent.numpy(), np.fft.rfft2(t, norm="forward"), atol=1e-12)


def test_helpers_match_torch():
    for n, d in [(1, 1.0), (4, 1.0), (5, 0.3), (8, 2.0)]:
        np.testing.assert_allclose(
            ember.fft.fftfreq(n, d).numpy(), torch.fft.fftfreq(n, d).numpy(), rtol=1e-6
        )
        np.testing.assert_allclose(
            ember.fft.rfftfreq(n, d=d).numpy(), torch.fft.rfftfreq(n, d=d).numpy(), rtol=1e-6
        )
    assert ember.fft.fftfreq(4, dtype=ember.float64).dtype == ember.float64
    a = np.arange(30.0).reshape(5, 6)
    for dim in [None, 0, (1,), (0, 1)]:
        assert np.array_equal(
            ember.fft.fftshift(ember.tensor(a), dim).numpy(),
            torch.fft.fftshift(torch.tensor(a), dim).numpy(),
        )
        assert np.array_equal(
            ember.fft.ifftshift(ember.tensor(a), dim).numpy(),
            torch.fft.ifftshift(torch.tensor(a), dim).numpy(),
        )


def test_complex_ops_match_torch():
    for fn in [
        lambda m, v: m.view_as_real(v),
        lambda m, v: v.real * 1,
        lambda m, v: v.imag * 1,
        lambda m, v: m.view_as_real(v.conj() * 1),
        lambda m, v: m.view_as_real(m.conj_physical(v)),
        lambda m, v: v.angle(),
        lambda m, v: v.abs(),
        lambda m, v: m.view_as_real(m.view_as_complex(m.view_as_real(v) * 2)),
    ]:
        _compare(fn, Z)
    a, b = RNG.standard_normal(4), RNG.standard_normal(4)
    for name in ["complex", "polar"]:
        ea, eb = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
        ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        e, t = getattr(ember, name)(ea, eb), getattr(torch, name)(ta, tb)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=1e-12)
        (ember.view_as_real(e) * ember.tensor([1.0, -2.0], dtype=ember.float64)).sum().backward()
        (torch.view_as_real(t) * torch.tensor([1.0, -2.0], dtype=torch.float64)).sum().backward()
        np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), atol=1e-12)
        np.testing.assert_allclose(eb.grad.numpy(), tb.grad.numpy(), atol=1e-12)
    x = ember.tensor(X)
    assert x.real is x and x.conj() is x
    r = ember.tensor(Z).real
    assert r._base is not None  # a view, as in torch
    np.testing.assert_allclose(ember.angle(ember.tensor([-1.0, 2.0])).numpy(), [np.pi, 0])


def _raises(fn):
    try:
        fn(torch)
    except Exception as err:  # noqa: BLE001  (the torch error is the reference)
        expected = (type(err), str(err))
    else:
        raise AssertionError("torch did not raise")
    with pytest.raises(expected[0]) as info:
        fn(ember)
    assert str(info.value) == expected[1]


def test_errors_match_torch():
    cases = [
        lambda m: m.fft.fft(m.ones(4), norm="bad"),
        lambda m: m.fft.fft(m.ones(4), n=0),
        lambda m: m.fft.irfft(m.ones(4), n=-1),
        lambda m: m.fft.fft(m.ones(4), dim=3),
        lambda m: m.fft.fft2(m.ones(4)),
        lambda m: m.fft.rfft(m.ones(4, dtype=m.complex64)),
        lambda m: m.fft.ihfft(m.ones(4, dtype=m.complex64)),
        lambda m: m.fft.fftn(m.ones(4), s=(2, 3)),
        lambda m: m.fft.fftn(m.ones(4, 4), s=(2,), dim=(0, 0)),
        lambda m: m.fft.fftn(m.ones(4, 4), s=(2,), dim=(0, 1)),
        lambda m: m.fft.fftshift(m.ones(4), dim=5),
        lambda m: m.view_as_complex(m.ones(4)),
        lambda m: m.view_as_complex(m.ones(4, 2, dtype=m.int64)),
        lambda m: m.view_as_real(m.ones(4)),
        lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)),
        lambda m: m.complex(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
        lambda m: m.ones(2).imag,
    ]
    for fn in cases:
        _raises(fn)
