"""torch.fft's three ops (``FftC2CBackward0``, ``FftR2CBackward0``, ``FftC2RBackward0``) and
the transforms of the ``ember.fft`` namespace built on them; ``ember.fft``'s docstring says
how.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import _dtype
from .._creation import tensor, zeros
from .._tensor import Tensor, normalize_dim
from ._core import LINEAR, defop, is_raw, require_tensor, run, write_out
from .complex import conj, re
from .nn_conv import pad as _pad
from .shape import cat, roll

_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}
_REAL_OF = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}

# torch's fft_norm_mode: none, by_root_n, by_n
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _scaled(a: np.ndarray, normalization: int, n: int) -> np.ndarray:
    if normalization == _NONE or n == 0:
        return a
    a *= 1 / math.sqrt(n) if normalization == _BY_ROOT_N else 1 / n
    return a


def _count(shape, dims) -> int:
    return math.prod(shape[d] for d in dims)


# -- the three ops, on arrays ---------------------------------------------------------------------


def _c2c_array(a, dim, normalization, forward):
    out_dtype = a.dtype
    if forward:
        r = np.fft.fftn(a, axes=dim)
    else:
        r = np.fft.ifftn(a, axes=dim, norm="forward")  # unscaled: the scale is applied below
    return _scaled(r.astype(out_dtype, copy=False), normalization, _count(a.shape, dim))


def _r2c_array(a, dim, normalization, onesided, self_sym_sizes):
    r = np.fft.rfftn(a, axes=dim) if onesided else np.fft.fftn(a, axes=dim)
    r = r.astype(_COMPLEX_OF[a.dtype], copy=False)
    return _scaled(r, normalization, _count(a.shape, dim))


def _c2r_array(a, dim, normalization, last_dim_size):
    sizes = [a.shape[d] for d in dim[:-1]] + [last_dim_size]
    r = np.fft.irfftn(a, s=sizes, axes=dim, norm="forward")
    return _scaled(r.astype(_REAL_OF[a.dtype], copy=False), normalization, math.prod(sizes))


# -- the three ops, recorded (also called by the rules on Tensors, for higher orders) -------------


def _c2c(x, dim, normalization, forward):
    if is_raw(x):
        return _c2c_array(x, dim, normalization, forward)
    return run(FftC2CBackward0, (x,), (x._data,), (dim, normalization, forward))


def _r2c(x, dim, normalization, onesided):
    if is_raw(x):
        return _r2c_array(x, dim, normalization, onesided, x.shape)
    params = (dim, normalization, onesided, tuple(x._data.shape))
    return run(FftR2CBackward0, (x,), (x._data,), params)


def _c2r(x, dim, normalization, last_dim_size):
    if is_raw(x):
        return _c2r_array(x, dim, normalization, last_dim_size)
    return run(FftC2RBackward0, (x,), (x._data,), (dim, normalization, last_dim_size))


def _r2c_backward(g, dim, normalization, onesided, self_sym_sizes):
    # torch's fft_r2c_backward: the one-sided gradient is zero-padded to the full spectrum,
    # then the adjoint of the full transform (the unnormalized inverse), real part.
    last = dim[-1]
    full = self_sym_sizes[last]
    if onesided and g.shape[last] != full:
        pad_shape = list(g.shape)
        pad_shape[last] = full - g.shape[last]
        if is_raw(g):
            g = np.concatenate([g, np.zeros(pad_shape, g.dtype)], axis=last)
        else:
            g = cat([g, zeros(pad_shape, dtype=g.dtype)], last)
    return re(_c2c(g, dim, normalization, False))


def _c2r_backward(g, dim, normalization, last_dim_size):
    # torch's fft_c2r_backward: the one-sided transform of the gradient, the bins that stand
    # for two (conjugate) bins of the full spectrum doubled.
    gi = _r2c(g, dim, normalization, True)
    last = dim[-1]
    double_length = g.shape[last] - gi.shape[last]
    if double_length > 0:
        w = np.ones(gi.shape[last], _REAL_OF[(gi if is_raw(gi) else gi._data).dtype])
        w[1 : 1 + double_length] = 2
        w = w.reshape((-1,) + (1,) * (len(gi.shape) - 1 - last))
        gi = gi * (w if is_raw(gi) else Tensor._wrap(w))
    return gi


FftC2CBackward0 = defop(
    "FftC2CBackward0",
    params=("dim", "normalization", "forward"),
    forward=_c2c_array,
    vjp={"self": lambda g, dim, normalization, forward: _c2c(g, dim, normalization, not forward)},
    jvp=LINEAR,
)

FftR2CBackward0 = defop(
    "FftR2CBackward0",
    params=("dim", "normalization", "onesided", "self_sym_sizes"),
    forward=_r2c_array,
    vjp={"self": _r2c_backward},
    jvp=LINEAR,
)

FftC2RBackward0 = defop(
    "FftC2RBackward0",
    params=("dim", "normalization", "last_dim_size"),
    forward=_c2r_array,
    vjp={"self": _c2r_backward},
    jvp=LINEAR,
)


# -- arguments, with torch's checks and messages ----------------------------------------------


def _norm(norm, forward: bool) -> int:
    if norm is None or norm == "backward":
        mode = _NONE
    elif norm == "ortho":
        mode = _BY_ROOT_N
    elif norm == "forward":
        mode = _BY_N
    else:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return mode if forward else _BY_N - mode


def _points(n) -> int:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _int_arg(x, fname: str, arg: str) -> int:
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(
            f"{fname}(): argument '{arg}' must be int, not {type(x).__name__}"
        ) from None


def _promote(x: Tensor, fname: str, require_complex: bool = False) -> Tensor:
    """torch's promote_tensor_fft: integers to the default float, reals to complex when
    the transform needs a complex input."""
    require_tensor(x, fname)
    kind = x._data.dtype.kind
    if kind in "biu":
        x = x.to(_dtype._default[0])
    elif kind == "f" and x._data.dtype not in _COMPLEX_OF:
        raise RuntimeError(f"Unsupported dtype {_dtype.scalar_name(x._data.dtype)}")
    if require_complex and x._data.dtype.kind != "c":
        x = x.to(_dtype.from_numpy_dtype(np.dtype(_COMPLEX_OF[x._data.dtype])))
    return x


def _require_real(x: Tensor, fname: str) -> None:
    if x._data.dtype.kind == "c":
        raise RuntimeError(
            f"{fname} expects a real input tensor, but got {_dtype.scalar_name(x._data.dtype)}"
        )


def _resize(x: Tensor, dims, sizes) -> Tensor:
    """torch's resize_fft_input: slice the longer dimensions, then zero-pad the shorter."""
    pad = [0] * (2 * x.dim())
    must_pad = False
    for d, s in zip(dims, sizes):
        if s == -1:
            continue
        cur = x.shape[d]
        if cur > s:
            x = x.narrow(d, 0, s)
        elif cur < s:
            pad[2 * (x.dim() - 1 - d) + 1] = s - cur
            must_pad = True
    if must_pad:
        x = _pad(x, pad)
    return x


def _dim1(x: Tensor, dim, n, fname: str):
    d = normalize_dim(_int_arg(dim, fname, "dim"), x.dim())
    if n is not None:
        n = _points(_int_arg(n, fname, "n"))
    return d, n


def _shape_and_dims(x: Tensor, s, dim, fname: str):
    """torch's canonicalize_fft_shape_and_dim_args: (sizes, dims), -1 keeps a size."""
    ndim = x.dim()
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [normalize_dim(_int_arg(d, fname, "dim"), ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [s] if isinstance(s, int) else [_int_arg(v, fname, "s") for v in s]
        if dim is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions."
            )
        if dim is None:
            dims = list(range(ndim - len(s), ndim))
        sizes = [x.shape[d] if v == -1 else v for v, d in zip(s, dims)]
        for v in sizes:
            _points(v)
    else:
        if dim is None:
            dims = list(range(ndim))
        sizes = [x.shape[d] for d in dims]
    return sizes, dims


# -- 1-D transforms --------------------------------------------------------------------------------


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D discrete Fourier transform along ``dim`` (``n``: the signal length, by
    truncating or zero-padding). Real inputs give the full (two-sided) complex spectrum.

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.fft(ember.tensor([0.0, 1.0, 0.0, 0.0]), norm="ortho")
        tensor([ 0.5000+0.0000j,  0.0000-0.5000j, -0.5000+0.0000j,  0.0000+0.5000j])
    """
    x = _promote(input, "fft_fft")
    d, n = _dim1(x, dim, n, "fft_fft")
    x = _resize(x, [d], [n if n is not None else -1])
    if x._data.dtype.kind == "c":
        res = _c2c(x, (d,), _norm(norm, True), True)
    else:
        res = _r2c(x, (d,), _norm(norm, True), False)
    return write_out("fft_fft", res, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D inverse discrete Fourier transform along ``dim``.

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.ifft(ember.tensor([4.0, 2.0])).real
        tensor([3., 1.])
    """
    x = _promote(input, "fft_ifft")
    d, n = _dim1(x, dim, n, "fft_ifft")
    x = _resize(x, [d], [n if n is not None else -1])
    if x._data.dtype.kind == "c":
        res = _c2c(x, (d,), _norm(norm, False), False)
    else:
        res = conj(_r2c(x, (d,), _norm(norm, False), False))
    return write_out("fft_ifft", res, out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D transform of a real signal: the one-sided spectrum, ``n // 2 + 1`` bins.

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.rfft(ember.tensor([1.0, 1.0, 1.0, 1.0]))
        tensor([4.+0.j, 0.+0.j, 0.+0.j])
    """
    x = _promote(input, "fft_rfft")
    _require_real(x, "rfft")
    d, n = _dim1(x, dim, n, "fft_rfft")
    x = _resize(x, [d], [n if n is not None else -1])
    return write_out("fft_rfft", _r2c(x, (d,), _norm(norm, True), True), out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of ``rfft``: a real signal of length ``n`` (default ``2 * (m - 1)`` for
    ``m`` input bins) from its one-sided spectrum.

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.irfft(ember.tensor([4.0, 0.0, 0.0]))
        tensor([1., 1., 1., 1.])
    """
    x = _promote(input, "fft_irfft", require_complex=True)
    d, n = _dim1(x, dim, n, "fft_irfft")
    last = n if n is not None else _points(2 * (x.shape[d] - 1))
    x = _resize(x, [d], [last // 2 + 1])
    return write_out("fft_irfft", _c2r(x, (d,), _norm(norm, False), last), out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The transform of a Hermitian-symmetric signal given by its first half: a real
    spectrum of length ``n`` (default ``2 * (m - 1)``).

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.hfft(ember.tensor([1.0, 0.0, 0.0]))
        tensor([1., 1., 1., 1.])
    """
    x = _promote(input, "fft_hfft", require_complex=True)
    d, n = _dim1(x, dim, n, "fft_hfft")
    last = n if n is not None else _points(2 * (x.shape[d] - 1))
    x = _resize(x, [d], [last // 2 + 1])
    return write_out("fft_hfft", _c2r(conj(x), (d,), _norm(norm, True), last), out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of ``hfft``: the first half of the Hermitian inverse transform of a real
    signal (``n // 2 + 1`` bins).

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.ihfft(ember.tensor([1.0, 1.0, 1.0, 1.0]))
        tensor([1.-0.j, 0.-0.j, 0.-0.j])
    """
    x = _promote(input, "fft_ihfft")
    _require_real(x, "ihfft")
    d, n = _dim1(x, dim, n, "fft_ihfft")
    x = _resize(x, [d], [n if n is not None else -1])
    return write_out("fft_ihfft", conj(_r2c(x, (d,), _norm(norm, False), True)), out)


# -- n-D transforms --------------------------------------------------------------------------------


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-D transform over ``dim`` (default: the last ``len(s)`` dims, or all), sizes
    ``s`` (-1 keeps a dimension's size).

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.fftn(ember.ones(2, 2))
        tensor([[4.+0.j, 0.+0.j],
                [0.+0.j, 0.+0.j]])
    """
    x = _promote(input, "fft_fftn", require_complex=True)
    sizes, dims = _shape_and_dims(x, s, dim, "fft_fftn")
    x = _resize(x, dims, sizes)
    return write_out("fft_fftn", _c2c(x, tuple(dims), _norm(norm, True), True), out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-D inverse transform (see ``fftn`` for ``s`` and ``dim``).

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.ifftn(ember.ones(2, 2)).real
        tensor([[1., 0.],
                [0., 0.]])
    """
    x = _promote(input, "fft_ifftn", require_complex=True)
    sizes, dims = _shape_and_dims(x, s, dim, "fft_ifftn")
    x = _resize(x, dims, sizes)
    return write_out("fft_ifftn", _c2c(x, tuple(dims), _norm(norm, False), False), out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-D transform of a real signal, one-sided in the last of ``dim``.

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.rfftn(ember.ones(2, 4)).shape
        torch.Size([2, 3])
    """
    x = _promote(input, "fft_rfftn")
    _require_real(x, "rfftn")
    sizes, dims = _shape_and_dims(x, s, dim, "fft_rfftn")
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(x, dims, sizes)
    return write_out("fft_rfftn", _r2c(x, tuple(dims), _norm(norm, True), True), out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of ``rfftn``: the last of ``dim`` gets ``s[-1]`` points (default
    ``2 * (m - 1)``).

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.irfftn(ember.fft.rfftn(ember.ones(2, 4)))
        tensor([[1., 1., 1., 1.],
                [1., 1., 1., 1.]])
    """
    x = _promote(input, "fft_irfftn", require_complex=True)
    sizes, dims = _shape_and_dims(x, s, dim, "fft_irfftn")
    if not dims:
        raise RuntimeError("irfftn must transform at least one axis")
    last_given = s is not None and ((s if isinstance(s, int) else list(s)[-1]) != -1)
    last = sizes[-1] if last_given else _points(2 * (x.shape[dims[-1]] - 1))
    sizes = sizes[:-1] + [last // 2 + 1]
    x = _resize(x, dims, sizes)
    return write_out("fft_irfftn", _c2r(x, tuple(dims), _norm(norm, False), last), out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D transform (``fftn`` over the last two dims by default).

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.fft2(ember.ones(2, 2)).abs()
        tensor([[4., 0.],
                [0., 0.]])
    """
    return fftn(input, s, dim, norm, out=out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D inverse transform.

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.ifft2(ember.ones(2, 2)).abs()
        tensor([[1., 0.],
                [0., 0.]])
    """
    return ifftn(input, s, dim, norm, out=out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D transform of a real signal, one-sided in the last dim.

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.rfft2(ember.ones(2, 4)).shape
        torch.Size([2, 3])
    """
    return rfftn(input, s, dim, norm, out=out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of ``rfft2``.

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.irfft2(ember.fft.rfft2(ember.ones(2, 4))).shape
        torch.Size([2, 4])
    """
    return irfftn(input, s, dim, norm, out=out)


# -- helpers --------------------------------------------------------------------------------


def _freq_tensor(values: np.ndarray, dtype, requires_grad: bool, out):

    d = dtype if dtype is not None else _dtype._default[0]
    res = tensor(values.astype(_dtype.to_numpy_dtype(d)), requires_grad=requires_grad)
    return write_out("fft_fftfreq", res, out)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of ``fft`` for a signal of ``n`` points spaced ``d`` apart:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``.

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.fftfreq(4)
        tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    n = _int_arg(n, "fft_fftfreq", "n")
    nd = _dtype.to_numpy_dtype(dtype if dtype is not None else _dtype._default[0])
    a = np.arange(n, dtype=nd)
    a[(n + 1) // 2 :] -= n
    a *= nd.type(1.0 / (n * d)) if n else nd.type(0)
    return _freq_tensor(a, dtype, requires_grad, out)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of ``rfft``: ``[0, 1, ..., n // 2] / (d * n)``.

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.rfftfreq(4)
        tensor([0.0000, 0.2500, 0.5000])
    """
    n = _int_arg(n, "fft_rfftfreq", "n")
    nd = _dtype.to_numpy_dtype(dtype if dtype is not None else _dtype._default[0])
    a = np.arange(n // 2 + 1, dtype=nd)
    a *= nd.type(1.0 / (n * d)) if n else nd.type(0)
    return _freq_tensor(a, dtype, requires_grad, out)


def _shift(input, dim, fname: str, inverse: bool):

    require_tensor(input, fname)
    if dim is None:
        dims = list(range(input.dim()))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [normalize_dim(d, input.dim()) for d in dims]
    shifts = [(input.shape[d] + 1) // 2 if inverse else input.shape[d] // 2 for d in dims]
    return roll(input, shifts, dims)


def fftshift(input, dim=None):
    """Moves the zero-frequency bin to the center (a ``roll`` by ``n // 2`` over ``dim``,
    all dims by default).

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.fftshift(ember.fft.fftfreq(4))
        tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    return _shift(input, dim, "fft_fftshift", False)


def ifftshift(input, dim=None):
    """The inverse of ``fftshift`` (a ``roll`` by ``(n + 1) // 2``).

    Example:
        >>> import ember, ember.fft
        >>> ember.fft.ifftshift(ember.fft.fftshift(ember.arange(5)))
        tensor([0, 1, 2, 3, 4])
    """
    return _shift(input, dim, "fft_ifftshift", True)
