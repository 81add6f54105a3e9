"""torch.stft / torch.istft (and Tensor.stft / Tensor.istft) and the window functions
(hann, hamming, blackman, bartlett, kaiser): values, gradients, errors and warnings against
real torch over many parameter combinations; the round trip istft(stft(x)) == x; gradcheck,
gradgradcheck and forward mode in float64 (the op-database checks, for these compositions).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember._aten import spectral

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs real torch as the oracle")

MODES = ("reflect", "constant", "replicate", "circular")
DTYPES = (np.float32, np.float64, np.complex128)


def _both(fn):
    """``fn(lib)`` under torch then ember: each its result or the exception it raised."""
    out = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out.append(fn(lib))
            except Exception as e:  # noqa: BLE001 - the exception is what is compared
                out.append(e)
    return out


def _same(a, b, tol: float) -> None:
    if isinstance(a, Exception) or isinstance(b, Exception):
        assert type(a) is type(b) and str(a) == str(b), (a, b)
        return
    assert len(a) == len(b)
    for u, v in zip(a, b):
        if u is None or v is None:
            assert u is None and v is None
            continue
        assert u.shape == v.shape and u.dtype == v.dtype, (u.shape, v.shape, u.dtype, v.dtype)
        np.testing.assert_allclose(v, u, rtol=tol, atol=tol)


def _loss(lib, r):
    """A sum weighted by fixed, position-dependent weights: every output element counts."""
    w = lib.arange(r.numel(), dtype=r.dtype).reshape(r.shape).cos()
    return (r * w).sum()


def _signal(rng, shape, dt):
    if np.dtype(dt).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)


# -- stft: values and gradients against torch ----------------------------------------------------


@needs_torch
@settings(max_examples=80, deadline=None)
@given(
    n_fft=st.integers(1, 12),
    hop=st.integers(1, 6),
    win_frac=st.floats(0.01, 1.0),
    extra=st.integers(0, 20),
    batch=st.integers(0, 2),
    center=st.booleans(),
    pad_mode=st.sampled_from(MODES),
    normalized=st.booleans(),
    onesided=st.sampled_from((None, True, False)),
    dt=st.sampled_from(DTYPES),
    window=st.sampled_from(("given", "none", "none_with_win_length")),
    seed=st.integers(0, 2**16),
)
def test_stft_values_and_grads_match_torch(
    n_fft, hop, win_frac, extra, batch, center, pad_mode, normalized, onesided, dt, window, seed
):
    rng = np.random.default_rng(seed)
    win = max(1, round(win_frac * n_fft))
    length = n_fft + extra
    shape = (length,) if batch == 0 else (batch, length)
    xa = _signal(rng, shape, dt)
    wa = rng.random(win) + 0.1
    if np.dtype(dt).kind == "c" and onesided:
        onesided = None

    def run(lib):
        x = lib.tensor(xa, requires_grad=True)
        w = lib.tensor(wa, requires_grad=True) if window == "given" else None
        wl = None if window == "none" else win
        s = lib.stft(
            x, n_fft, hop, wl, w, center, pad_mode, normalized, onesided, return_complex=True
        )
        r = lib.view_as_real(s)
        leaves = [x] + ([w] if w is not None else [])
        grads = lib.autograd.grad(_loss(lib, r), leaves)
        return [r.detach().numpy()] + [g.numpy() for g in grads]

    a, b = _both(run)
    _same(a, b, 1e-4 if dt == np.float32 else 1e-10)


@needs_torch
@pytest.mark.parametrize("onesided", [None, False])
def test_stft_return_complex_false_is_view_as_real(onesided):
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((2, 20))
    wa = rng.random(6)

    def run(lib):
        x = lib.tensor(xa, requires_grad=True)
        s = lib.stft(x, 8, 3, 6, lib.tensor(wa), onesided=onesided, return_complex=False)
        (g,) = lib.autograd.grad(_loss(lib, s), [x])
        return [s.detach().numpy(), g.numpy(), np.array(s.stride())]

    a, b = _both(run)
    _same(a, b, 1e-10)


@needs_torch
@pytest.mark.parametrize(
    "length,n_fft,hop,win,batch", [(24, 8, 3, 5, 1), (20, 10, 4, 3, 2), (21, 10, 4, 3, 0)]
)
def test_stft_align_to_window(length, n_fft, hop, win, batch):
    rng = np.random.default_rng(length)
    xa = rng.standard_normal((length,) if batch == 0 else (batch, length))
    wa = rng.random(win)

    def run(lib):
        x = lib.tensor(xa, requires_grad=True)
        w = lib.tensor(wa)
        s = lib.stft(x, n_fft, hop, win, w, center=False, return_complex=True, align_to_window=True)
        (g,) = lib.autograd.grad(_loss(lib, lib.view_as_real(s)), [x])
        return [lib.view_as_real(s).detach().numpy(), g.numpy()]

    a, b = _both(run)
    _same(a, b, 1e-10)


@needs_torch
@pytest.mark.parametrize("dt", ["float32", "float64", "complex64"])
def test_stft_grad_fn_names_strides_and_dtypes_match_torch(dt):
    def run(lib):
        x = lib.randn(20, dtype=getattr(lib, dt), requires_grad=True)
        w = lib.ones(8, dtype=lib.float64)
        s = lib.stft(x, 8, 2, window=w, return_complex=True)
        t = lib.stft(x[None], 8, 2, window=w, return_complex=True)
        return [type(s.grad_fn).__name__, type(t.grad_fn).__name__, s.stride(), s.dtype]

    a, b = _both(run)
    assert a[:3] == b[:3] and str(a[3]) == str(b[3])


# -- istft: values and gradients against torch ---------------------------------------------------


@needs_torch
@settings(max_examples=80, deadline=None)
@given(
    n_fft=st.integers(1, 12),
    hop_frac=st.floats(0.01, 1.0),
    win_frac=st.floats(0.01, 1.0),
    frames=st.integers(1, 7),
    batch=st.integers(0, 2),
    center=st.booleans(),
    normalized=st.booleans(),
    sided=st.sampled_from(("default_one", "default_two", "one", "two")),
    return_complex=st.booleans(),
    length=st.one_of(st.none(), st.integers(0, 40)),
    dt=st.sampled_from((np.complex64, np.complex128)),
    window=st.sampled_from(("given", "none", "none_with_win_length")),
    seed=st.integers(0, 2**16),
)
def test_istft_values_and_grads_match_torch(
    n_fft,
    hop_frac,
    win_frac,
    frames,
    batch,
    center,
    normalized,
    sided,
    return_complex,
    length,
    dt,
    window,
    seed,
):
    rng = np.random.default_rng(seed)
    win = max(1, round(win_frac * n_fft))
    hop = max(1, round(hop_frac * win))
    bins = n_fft // 2 + 1 if sided in ("default_one", "one") else n_fft
    onesided = {"one": True, "two": False}.get(sided)
    shape = (bins, frames) if batch == 0 else (batch, bins, frames)
    xa = _signal(rng, shape, dt)
    wa = rng.random(win) + 0.1

    def run(lib):
        x = lib.tensor(xa, requires_grad=True)
        w = lib.tensor(wa, requires_grad=True) if window == "given" else None
        wl = None if window == "none" else win
        y = lib.istft(x, n_fft, hop, wl, w, center, normalized, onesided, length, return_complex)
        r = lib.view_as_real(y) if y.is_complex() else y
        leaves = [x] + ([w] if w is not None else [])
        grads = lib.autograd.grad(_loss(lib, r), leaves, allow_unused=True)
        return [r.detach().numpy()] + [None if g is None else g.numpy() for g in grads]

    a, b = _both(run)
    _same(a, b, 1e-4 if dt == np.complex64 else 1e-9)


@needs_torch
def test_istft_grad_fn_names_match_torch():
    def run(lib):
        s = lib.stft(lib.randn(20), 8, 2, window=lib.hann_window(8), return_complex=True)
        s.requires_grad_()
        y = lib.istft(s, 8, 2, window=lib.hann_window(8))
        z = lib.istft(s, 8, 2, window=lib.hann_window(8), length=30)
        return [type(y.grad_fn).__name__, type(z.grad_fn).__name__, y.dtype, z.shape]

    a, b = _both(run)
    assert a[:2] == b[:2] and str(a[2]) == str(b[2]) and tuple(a[3]) == tuple(b[3])


# -- the round trip ------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    n_fft=st.sampled_from((4, 8, 16, 15)),
    hop_div=st.sampled_from((2, 4)),
    extra=st.integers(0, 30),
    batch=st.integers(0, 3),
    center=st.booleans(),
    normalized=st.booleans(),
    onesided=st.booleans(),
    dt=st.sampled_from(("float64", "complex128")),
    seed=st.integers(0, 2**16),
)
def test_istft_inverts_stft(n_fft, hop_div, extra, batch, center, normalized, onesided, dt, seed):
    rng = np.random.default_rng(seed)
    length = n_fft + extra
    shape = (length,) if batch == 0 else (batch, length)
    x = ember.tensor(_signal(rng, shape, getattr(np, dt)))
    hop = n_fft // hop_div
    # a periodic Hann window: its squares overlap-add without zeros inside the signal
    w = ember.hann_window(n_fft, dtype=ember.float64) + (0.0 if center else 0.1)
    complex_ = dt == "complex128"
    sided = onesided and not complex_
    s = ember.stft(
        x, n_fft, hop, window=w, center=center, normalized=normalized, onesided=sided,
        return_complex=True,
    )  # fmt: skip
    y = ember.istft(
        s, n_fft, hop, window=w, center=center, normalized=normalized, onesided=sided,
        length=length if center else None, return_complex=complex_,
    )  # fmt: skip
    frames = s.shape[-1]
    kept = length if center else n_fft + hop * (frames - 1)
    np.testing.assert_allclose(y.numpy(), x.numpy()[..., :kept], atol=1e-10)


# -- gradcheck, gradgradcheck and forward mode (float64) -----------------------------------------


def _parts(*shape, complex_=False, seed=0):
    """Real float64 leaves: the signal, or its real and imaginary parts (gradcheck works on
    real inputs; ``_join`` builds the complex signal inside the checked function)."""
    rng = np.random.default_rng(seed)
    n = 2 if complex_ else 1
    return tuple(ember.tensor(rng.standard_normal(shape), requires_grad=True) for _ in range(n))


def _join(parts):
    return parts[0] if len(parts) == 1 else ember.complex(parts[0], parts[1])


STFT_CASES = [
    ("center_reflect", (2, 11), False, dict(n_fft=6, hop_length=2, center=True)),
    ("no_center_win", (13,), False, dict(n_fft=6, hop_length=3, win_length=4, center=False)),
    ("normalized_twosided", (9,), False, dict(n_fft=4, hop_length=1, normalized=True,
                                             onesided=False, pad_mode="circular")),
    ("complex", (2, 9), True, dict(n_fft=4, hop_length=2, pad_mode="replicate")),
    ("align", (11,), False, dict(n_fft=6, hop_length=3, win_length=4, center=False,
                                align_to_window=True)),
]  # fmt: skip


@pytest.mark.parametrize("name,shape,complex_,kw", STFT_CASES, ids=[c[0] for c in STFT_CASES])
def test_stft_gradcheck(name, shape, complex_, kw):
    parts = _parts(*shape, complex_=complex_)
    win = kw.get("win_length", kw["n_fft"])
    w = ember.tensor(np.random.default_rng(1).random(win) + 0.2, requires_grad=True)

    def fn(w, *parts):
        return ember.view_as_real(ember.stft(_join(parts), window=w, return_complex=True, **kw))

    assert ember.autograd.gradcheck(fn, (w, *parts), check_forward_ad=True)
    assert ember.autograd.gradgradcheck(fn, (w, *parts))


ISTFT_CASES = [
    ("center", (2, 4, 7), dict(n_fft=6, hop_length=2, center=True)),
    ("length_win", (4, 6), dict(n_fft=6, hop_length=2, win_length=5, center=True, length=12)),
    ("no_center", (5, 5), dict(n_fft=8, hop_length=4, center=False, normalized=True)),
    ("twosided", (6, 5), dict(n_fft=6, hop_length=2, onesided=False)),
    ("complex", (2, 6, 5), dict(n_fft=6, hop_length=3, return_complex=True)),
    ("padded_tail", (4, 5), dict(n_fft=6, hop_length=2, length=20)),
]


@pytest.mark.parametrize("name,shape,kw", ISTFT_CASES, ids=[c[0] for c in ISTFT_CASES])
def test_istft_gradcheck(name, shape, kw):
    parts = _parts(*shape, complex_=True, seed=2)
    win = kw.get("win_length", kw["n_fft"])
    w = ember.tensor(np.random.default_rng(3).random(win) + 0.5, requires_grad=True)

    def fn(w, *parts):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = ember.istft(_join(parts), window=w, **kw)
        return ember.view_as_real(y) if y.is_complex() else y

    assert ember.autograd.gradcheck(fn, (w, *parts), check_forward_ad=True)
    assert ember.autograd.gradgradcheck(fn, (w, *parts))


# -- errors and warnings -------------------------------------------------------------------------

_X = np.random.default_rng(5).standard_normal(10).astype(np.float32)
_S = (np.random.default_rng(6).standard_normal((5, 11)) * (1 + 1j)).astype(np.complex64)


def _stft(lib, **kw):
    x = kw.pop("x", lib.tensor(_X))
    n_fft = kw.pop("n_fft", 4)
    return lib.stft(x, n_fft, **kw)


def _istft(lib, **kw):
    s = kw.pop("s", lib.tensor(_S))
    return lib.istft(s, kw.pop("n_fft", 8), kw.pop("hop_length", 2), **kw)


EDGES = [  # each raises in torch (ember's error must be the same), or not
    lambda m: _stft(m),  # return_complex missing for a real input
    lambda m: _stft(m, n_fft=20, center=False, return_complex=True),
    lambda m: _stft(m, n_fft=20, win_length=5, center=False, return_complex=True),
    lambda m: _stft(m, n_fft=0, center=False, return_complex=True),
    lambda m: _stft(m, hop_length=0, return_complex=True),
    lambda m: _stft(m, hop_length=-1, x=m.tensor(_X).to(m.complex128), center=False,
                    normalized=True, onesided=False),
    lambda m: _stft(m, win_length=5, return_complex=True),
    lambda m: _stft(m, win_length=0, return_complex=True),
    lambda m: _stft(m, window=m.ones(3), return_complex=True),
    lambda m: _stft(m, window=m.ones(4, 1), return_complex=True),
    lambda m: _stft(m, win_length=3, window=m.ones(2, dtype=m.complex64), return_complex=True),
    lambda m: _stft(m, x=m.tensor(_X).long(), center=False, return_complex=True),
    lambda m: _stft(m, x=m.randn(2, 3, 10), center=False, return_complex=True),
    lambda m: _stft(m, x=m.randn(2, 3, 10), return_complex=True),
    lambda m: _stft(m, x=m.tensor(_X).to(m.complex64), onesided=True),
    lambda m: _stft(m, window=m.ones(4, dtype=m.complex64), onesided=True, return_complex=True),
    lambda m: _stft(m, return_complex=True, align_to_window=True),
    lambda m: _stft(m, return_complex=True, pad_mode="foo"),
    lambda m: _stft(m, x=m.tensor(_X).half(), return_complex=True),
    lambda m: _stft(m, x=m.tensor(_X).bfloat16(), return_complex=True),
    lambda m: _stft(m, x=m.randn(2, 0), center=False, return_complex=True),
    lambda m: _stft(m, x=m.tensor(1.0), return_complex=True),
    lambda m: _stft(m, n_fft=4.0, return_complex=True),
    lambda m: _stft(m, hop_length=1.0, return_complex=True),
    lambda m: _stft(m, hop_length=2, window=[1, 1, 1, 1], return_complex=True),
    lambda m: _stft(m, window=m.ones(4), return_complex=True, onesided=3),
    lambda m: _stft(m, x=m.randn(23, dtype=m.float64), n_fft=8, hop_length=3, win_length=5,
                    window=m.ones(5, dtype=m.float64), center=False, return_complex=True,
                    align_to_window=True),
    lambda m: _stft(m, x=m.randn(3, 20), n_fft=9, hop_length=4, win_length=4, center=False,
                    return_complex=True, align_to_window=True),
    lambda m: _istft(m, s=m.view_as_real(m.tensor(_S))),
    lambda m: _istft(m, s=m.tensor(_S)[:0]),
    lambda m: _istft(m, s=m.tensor(_S)[None, None]),
    lambda m: _istft(m, s=m.tensor(_S)[0]),
    lambda m: _istft(m, s=m.tensor(_S)[0, 0]),
    lambda m: _istft(m, onesided=False),
    lambda m: _istft(m, s=m.tensor(_S).repeat(2, 1), onesided=True, return_complex=True),
    lambda m: _istft(m, hop_length=9),
    lambda m: _istft(m, hop_length=0),
    lambda m: _istft(m, win_length=9),
    lambda m: _istft(m, window=m.ones(7)),
    lambda m: _istft(m, window=m.hann_window(8), return_complex=True),
    lambda m: _istft(m, window=m.zeros(8)),
    lambda m: _istft(m, window=m.hann_window(8), center=False),
    lambda m: _istft(m, window=m.hann_window(8, dtype=m.complex64)),
    lambda m: _istft(m, window=m.ones(8, dtype=m.complex64), onesided=True),
    lambda m: _istft(m, s=m.tensor(_S).repeat(2, 1)[:8], window=m.ones(8, dtype=m.complex64)),
    lambda m: _istft(m, window=m.ones(8), length=0),
    lambda m: _istft(m, window=m.ones(8), center=False, length=-3),
    lambda m: _istft(m, window=m.tensor([0, 0, 0, 0, 1.0, 0, 0, 0])),
    lambda m: _istft(m, n_fft=8.0),
    lambda m: _istft(m, hop_length=2.0),
    lambda m: _istft(m, window=[1.0]),
    lambda m: _istft(m, length=3.0),
    lambda m: _istft(m, center=None),
    lambda m: m.tensor(_S).istft(8.0),
    lambda m: m.hann_window(-1),
    lambda m: m.hann_window(4, dtype=m.int64),
    lambda m: m.kaiser_window(4, dtype=m.complex64),
    lambda m: m.bartlett_window(4, layout=m.sparse_coo),
    lambda m: m.hann_window(4, layout=m.sparse_coo),
    lambda m: m.hann_window(4, layout=m.sparse_coo, dtype=m.float32),
    lambda m: m.blackman_window(4.0),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("i", range(len(EDGES)))
def test_errors_match_torch(i):
    a, b = _both(EDGES[i])
    if not isinstance(a, Exception):
        assert not isinstance(b, Exception), b
        np.testing.assert_allclose(b.numpy(), a.numpy(), atol=1e-5)
        return
    assert type(b) is type(a) and str(b) == str(a), (a, b)


def _caught(fn) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught if w.category is UserWarning]


def test_warnings_once_each():
    spectral._WARNED.clear()
    x = ember.randn(20)
    messages = _caught(lambda: ember.stft(x, 8, return_complex=False))
    assert messages == [spectral._STFT_NO_WINDOW, spectral._STFT_REAL_OUTPUT]
    assert _caught(lambda: ember.stft(x, 8, return_complex=False)) == []  # once per process
    s = ember.stft(x, 8, window=ember.hann_window(8), return_complex=True)
    assert _caught(lambda: ember.istft(s, 8, length=40)) == [
        spectral._ISTFT_NO_WINDOW,
        spectral._ISTFT_PADDED,
    ]
    assert _caught(lambda: ember.istft(s, 8, length=40)) == []


@needs_torch
def test_warning_texts_are_torchs():
    # torch warns each once per process: compare where this process has not warned yet
    x = torch.randn(20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.stft(x, 8, return_complex=False)
        torch.istft(torch.stft(x, 8, window=torch.ones(8), return_complex=True), 8, length=40)
    seen = {str(w.message) for w in caught}
    ours = {spectral._STFT_NO_WINDOW, spectral._STFT_REAL_OUTPUT}
    ours |= {spectral._ISTFT_NO_WINDOW, spectral._ISTFT_PADDED}
    assert seen <= ours


# -- names, methods, window functions ------------------------------------------------------------


def test_public_names():
    import ember.functional

    assert ember.functional.stft is ember.stft and ember.functional.istft is ember.istft
    assert {"stft", "istft"} <= set(ember.functional.__all__)
    x = ember.randn(2, 16)
    w = ember.hann_window(8)
    s = x.stft(8, 2, window=w, return_complex=True)
    assert ember.equal(s, ember.stft(x, 8, 2, window=w, return_complex=True))
    assert ember.allclose(s.istft(8, 2, window=w, length=16), x, atol=1e-5)


WINDOWS = ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")


@needs_torch
@pytest.mark.parametrize("name", WINDOWS)
def test_window_functions_match_torch(name):
    for n in (0, 1, 2, 3, 4, 7, 10, 33):
        for periodic in (True, False):
            for dt in ("float32", "float64"):
                a = getattr(torch, name)(n, periodic, dtype=getattr(torch, dt)).numpy()
                b = getattr(ember, name)(n, periodic, dtype=getattr(ember, dt)).numpy()
                assert a.dtype == b.dtype and a.shape == b.shape
                np.testing.assert_allclose(b, a, atol=1e-6 if dt == "float32" else 1e-13)
    t = getattr(ember, name)(5, requires_grad=True)
    assert t.requires_grad and t.dtype == ember.float32 and t.is_leaf
    np.testing.assert_allclose(
        ember.hamming_window(6, False, 0.6, 0.3).numpy(),
        torch.hamming_window(6, False, 0.6, 0.3).numpy(),
        atol=1e-6,
    )
    np.testing.assert_allclose(
        ember.kaiser_window(6, True, 3.5).numpy(),
        torch.kaiser_window(6, True, 3.5).numpy(),
        atol=1e-6,
    )
