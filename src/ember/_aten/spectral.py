"""The short-time Fourier transform and its inverse (``torch.stft``, ``torch.istft``, and the
Tensor methods of the same names), with torch's semantics and messages.

Both are compositions of differentiable ops, as torch's are (no op of their own): ``stft``
pads the signal (``center``), takes its frames (``Tensor.unfold``: the windows of ``n_fft``
samples, ``hop_length`` apart), multiplies them by the window (zero-padded to ``n_fft``) and
transforms each frame (the real-to-complex or complex-to-complex FFT op); ``istft`` inverts
each frame, multiplies by the window, overlap-adds the frames (unfold's backward, as torch's
``unfold_backward``) and divides by the overlap-added squared window (the envelope), after
checking that envelope has no zeros (the NOLA condition). Gradients of every order follow.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._creation import ones, zeros
from .._overrides import warn as _warn
from .._tensor import Tensor
from ._core import as_int, register, require_tensor
from .complex import view_as_real
from .fft import _BY_N, _BY_ROOT_N, _NONE, _c2c, _c2r, _r2c
from .nn_conv import pad as _pad
from .shape import _unfold_backward

# torch warns these once per process (TORCH_WARN_ONCE)
_WARNED: set = set()

_STFT_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied,which is known to cause "
    "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
    "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
    "window, explicitly set `window=torch.ones(n_fft, device=<device>)`. (Triggered internally "
    "at /__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:835.)"
)
_STFT_REAL_OUTPUT = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
    "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
    "Note: you can still call torch.view_as_real on the complex output to recover the old "
    "return format. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:874.)"
)
_ISTFT_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied.Please provide the same "
    "window used by stft to make the inversion lossless.To suppress this warning and use a "
    "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`. "
    "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:1035.)"
)
_ISTFT_PADDED = (
    "The length of signal is shorter than the length parameter. Result is being padded with "
    "zeros in the tail. Please check your center and hop_length settings. (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:1199.)"
)
_ONESIDED_COMPLEX = "Cannot have onesided output if window or input is complex"


def _warn_once(key: str, message: str) -> None:
    if key not in _WARNED:
        _WARNED.add(key)
        _warn(message, UserWarning, stacklevel=3)


# -- the messages' pieces ------------------------------------------------------------------------


def _type_string(t: Tensor) -> str:
    """What torch's ``Tensor::toString`` prints: the legacy type name where one exists
    (``torch.FloatTensor``), else the backend-and-scalar name (``CPUComplexFloatType``)."""
    if t._data.dtype.kind == "c":
        return f"CPU{_dtype.scalar_name(t._data.dtype)}Type"
    return t.type()


def _opt(v) -> str:
    return "None" if v is None else str(int(v))


def _window_string(window) -> str:
    return "None" if window is None else f"{_type_string(window)}{{{list(window.shape)}}}"


def _arg_type(v) -> str:
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_arg_type(e) for e in v)
        return f"{type(v).__name__} of [{inner}]" if isinstance(v, list) else f"tuple of ({inner})"
    return type(v).__name__


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_bool(v) -> bool:
    return isinstance(v, (bool, np.bool_))


_STFT_SIGNATURES = (
    " * (Tensor input, int n_fft, int hop_length = None, int win_length = None, Tensor window = "
    'None, bool center = True, str pad_mode = "reflect", bool normalized = False, bool onesided '
    "= None, bool return_complex = None, bool align_to_window = None)\n"
    " * (Tensor input, int n_fft, int hop_length = None, int win_length = None, Tensor window = "
    "None, bool normalized = False, bool onesided = None, bool return_complex = None, bool "
    "align_to_window = None)\n"
)


def _check_stft_types(args: tuple) -> None:
    """torch's argument parser on the ATen call ``stft(input, n_fft, hop_length, win_length,
    window, normalized, onesided, return_complex, align_to_window)``."""
    x, n_fft, hop, win, window, normalized, onesided, rc, align = args
    ok = (
        isinstance(x, Tensor)
        and _is_int(n_fft)
        and (hop is None or _is_int(hop))
        and (win is None or _is_int(win))
        and (window is None or isinstance(window, Tensor))
        and _is_bool(normalized)
        and all(v is None or _is_bool(v) for v in (onesided, rc, align))
    )
    if ok:
        return
    names = [_arg_type(v) for v in args]
    got = ", ".join(type(v).__name__ if isinstance(v, list) else n for v, n in zip(args, names))
    # the parser marks every argument past n_fft (matched against neither signature's
    # positions) and the first two where their types are wrong
    marked = [
        n if (i == 0 and isinstance(x, Tensor)) or (i == 1 and _is_int(n_fft)) else f"!{n}!"
        for i, n in enumerate(names)
    ]
    raise TypeError(
        f"stft() received an invalid combination of arguments - got ({got}), but expected one "
        f"of:\n{_STFT_SIGNATURES}      didn't match because some of the arguments have invalid "
        f"types: ({', '.join(marked)})\n"
    )


# -- stft ---------------------------------------------------------------------------------------


@register("stft", method=True)
def stft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """The short-time Fourier transform: the spectra of windowed frames of ``n_fft`` samples,
    ``hop_length`` apart, of a signal (``(L,)``) or a batch of signals (``(B, L)``).

    The result is ``(B?, N, T)``: ``N = n_fft // 2 + 1`` frequencies when ``onesided`` (the
    default for real input and window), else ``n_fft``; ``T`` frames. ``center`` pads
    ``n_fft // 2`` samples on both sides (``pad_mode``: ``'reflect'``, ``'constant'``,
    ``'replicate'`` or ``'circular'``) so that frame ``t`` is centred at ``t * hop_length``.
    A ``window`` shorter than ``n_fft`` (``win_length``) is zero-padded on both sides;
    ``normalized`` scales by ``n_fft ** -0.5``. Real inputs need ``return_complex``: ``True``
    (complex result) or ``False`` (deprecated: the ``view_as_real`` form).

    Example:
        >>> import ember
        >>> x = ember.arange(8.0)
        >>> s = ember.stft(x, 4, hop_length=2, window=ember.ones(4), return_complex=True)
        >>> s.shape
        torch.Size([3, 5])
        >>> s[:, 1]
        tensor([ 6.+0.j, -2.+2.j, -2.+0.j])
    """
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        signal_dim = input.dim()
        extended = [1] * (3 - signal_dim) + list(input.size())
        amount = int(n_fft // 2)
        input = _pad(input.view(extended), [amount, amount], pad_mode)
        input = input.view(input.shape[-signal_dim:])
    args = (input, n_fft, hop_length, win_length, window, normalized, onesided)
    _check_stft_types(args + (return_complex, align_to_window))
    return _stft(*args, return_complex, align_to_window)


def _stft(x, n_fft, hop_length, win_length, window, normalized, onesided, return_complex, align):
    """ATen's stft, on the (already padded) signal."""
    if window is None:
        _warn_once("stft_window", _STFT_NO_WINDOW)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    complex_default = x.is_complex() or (window is not None and window.is_complex())
    want_complex = complex_default if return_complex is None else bool(return_complex)
    if not want_complex:
        if return_complex is None:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        _warn_once("stft_real", _STFT_REAL_OUTPUT)

    def fail(what: str):
        return RuntimeError(
            f"stft({_type_string(x)}{list(x.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_string(window)}, normalized={int(normalized)}, "
            f"onesided={_opt(onesided)}, return_complex={_opt(return_complex)}, "
            f"align_to_window={_opt(align)}) : {what}"
        )

    if not (x.is_floating_point() or x.is_complex()):
        raise fail("expected a tensor of floating point or complex values")
    if x.dim() not in (1, 2):
        raise fail("expected a 1D or 2D tensor")
    frames = x.unsqueeze(0) if x.dim() == 1 else x
    batch, length = frames.shape
    if n_fft <= 0 or n_fft > length:
        raise fail(f"expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise fail(
            f"expected a 1D window tensor of size equal to win_length={win}, but got window "
            f"with size {list(window.shape)}"
        )
    left = (n_fft - win) // 2
    full_window = window
    if win < n_fft:  # the window, centred in n_fft samples
        if window is not None:
            full_window = _pad(window, [left, n_fft - win - left])
        else:
            full_window = zeros(n_fft, dtype=x.dtype)
            full_window[left : left + win] = 1
    if align:  # frames start where their windows do: the signal padded by the window's offset
        count = 1 + (length - win) // hop
        padded = length + 2 * left
        if (count - 1) * hop + n_fft > padded:  # torch's frames then overrun the signal
            item = x.element_size()
            need = (batch - 1) * padded + (count - 1) * hop + n_fft
            raise RuntimeError(
                f"setStorage: sizes [{batch}, {count}, {n_fft}], strides [{padded}, {hop}, 1], "
                f"storage offset 0, and itemsize {item} requiring a storage size of "
                f"{need * item} are out of bounds for storage of size {batch * padded * item}"
            )
        frames = _pad(frames, [left, left])
        frames = frames.unfold(1, n_fft, hop)
        if frames.shape[1] != count:
            frames = frames[:, :count]
    else:
        frames = frames.unfold(1, n_fft, hop)
    if full_window is not None:
        frames = frames * full_window
    kind = frames._data.dtype
    if kind.kind not in "fc" or kind.itemsize < (4 if kind.kind == "f" else 8):
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: {_dtype.scalar_name(kind)}")
    complex_fft = kind.kind == "c"
    sided = (not complex_fft) if onesided is None else bool(onesided)
    normalization = _BY_ROOT_N if normalized else _NONE
    if complex_fft:
        if sided:
            raise RuntimeError(_ONESIDED_COMPLEX)
        out = _c2c(frames, (2,), normalization, True)
    else:
        out = _r2c(frames, (2,), normalization, sided)
    out.transpose_(1, 2)
    if x.dim() == 1:
        out.squeeze_(0)
    return out if want_complex else view_as_real(out)


# -- istft --------------------------------------------------------------------------------------


def _bool_arg(v, name: str) -> bool:
    if not _is_bool(v):
        raise TypeError(f"istft(): argument '{name}' must be bool, not {type(v).__name__}")
    return bool(v)


def _optional(v, check, *a):
    return None if v is None else check(v, *a)


@register("istft", method=True)
def istft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """The inverse short-time Fourier transform: the least-squares signal whose ``stft`` (with
    the same arguments) is ``input``, a complex ``(B?, N, T)`` spectrogram.

    Each frame is inverted, windowed and overlap-added; the sum is divided by the
    overlap-added squared window, which must have no zeros (the NOLA condition). ``center``
    trims the ``n_fft // 2`` padded samples; ``length`` trims (or zero-pads) the result to
    that many samples; ``return_complex`` gives a complex signal (two-sided input only).

    Example:
        >>> import ember
        >>> x = ember.arange(8.0)
        >>> w = ember.hann_window(4)
        >>> s = ember.stft(x, 4, hop_length=1, window=w, return_complex=True)
        >>> ember.istft(s, 4, hop_length=1, window=w, length=8)
        tensor([0., 1., 2., 3., 4., 5., 6., 7.])
    """
    require_tensor(input, "istft")
    n_fft = as_int(n_fft, "istft", "n_fft", 2)
    hop_length = _optional(hop_length, as_int, "istft", "hop_length", 3)
    win_length = _optional(win_length, as_int, "istft", "win_length", 4)
    if window is not None and not isinstance(window, Tensor):
        raise TypeError(f"istft(): argument 'window' must be Tensor, not {type(window).__name__}")
    center = _bool_arg(center, "center")
    normalized = _bool_arg(normalized, "normalized")
    onesided = _optional(onesided, _bool_arg, "onesided")
    if length is not None and not _is_int(length):
        raise TypeError(f"istft(): argument 'length' must be int, not {type(length).__name__}")
    return_complex = _bool_arg(return_complex, "return_complex")

    if window is None:
        _warn_once("istft_window", _ISTFT_NO_WINDOW)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )
    real_dim = input.dim() + 1  # torch reads the sizes of view_as_real(input)
    if real_dim < 3:
        d = -2 if real_dim < 2 else -3
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-real_dim}, {real_dim - 1}], "
            f"but got {d})"
        )
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    expected = n_fft + hop * (n_frames - 1)
    repr_ = (
        f"istft({_type_string(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
        f"win_length={win}, window={_window_string(window)}, center={int(center)}, "
        f"normalized={int(normalized)}, onesided={_opt(onesided)}, length={_opt(length)}, "
        f"return_complex={int(return_complex)}) "
    )

    def fail(what: str):
        return RuntimeError(f"{repr_}: {what}")

    if input.numel() == 0:
        raise fail("input tensor cannot be empty.")
    if real_dim not in (3, 4):
        raise fail(f"expected a tensor with 3 or 4 dimensions, but got {real_dim}")
    sided = fft_size != n_fft if onesided is None else onesided
    if sided and n_fft // 2 + 1 != fft_size:
        raise fail(
            "expected the frequency dimension (3rd to the last) of the input tensor to match "
            f"n_fft / 2 + 1 when onesided=True, but got {fft_size}"
        )
    if not sided and n_fft != fft_size:
        raise fail(
            "expected the frequency dimension (3rd to the last) of the input tensor to match "
            f"n_fft when onesided=False, but got {fft_size}"
        )
    if not 0 < hop <= win:
        raise fail("expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise fail("expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise fail("Invalid window shape. window has to be 1D and length of `win_length`")

    real_dtype = _dtype.from_numpy_dtype(np.empty(0, input._data.dtype).real.dtype)
    full_window = ones(win, dtype=real_dtype) if window is None else window
    if win != n_fft:  # the window, centred in n_fft samples
        left = (n_fft - win) // 2
        full_window = _pad(full_window, [left, n_fft - win - left])

    spec = input.unsqueeze(0) if real_dim == 3 else input
    spec = spec.transpose(1, 2)  # (batch, frames, frequencies)
    normalization = _BY_ROOT_N if normalized else _BY_N
    if return_complex:
        if sided:
            raise RuntimeError(_ONESIDED_COMPLEX)
        frames = _c2c(spec, (2,), normalization, False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not sided:
            spec = spec.narrow(-1, 0, n_fft // 2 + 1)
        frames = _c2r(spec, (2,), normalization, n_fft)
    frames = frames * full_window.view(1, 1, n_fft)
    batch = frames.shape[0]
    y = _unfold_backward(frames, (batch, expected), 1, n_fft, hop)  # overlap-add
    squares = full_window.pow(2).expand(1, n_frames, n_fft)
    envelope = _unfold_backward(squares, (1, expected), 1, n_fft, hop)

    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center else expected
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if envelope.detach().abs().min().item() < 1e-11:
        raise RuntimeError(f"{repr_}window overlap add min: 1\n[ CPUBoolType{{}} ]")
    y = y / envelope
    if real_dim == 3:
        y = y.squeeze(0)
    if end > expected:
        _warn_once("istft_length", _ISTFT_PADDED)
        y = _pad(y, [0, end - expected])
    return y


# -- window functions ---------------------------------------------------------------------------


def _window(fname: str, window_length, dtype, layout, device, requires_grad, values) -> Tensor:
    """torch's window_function_checks, then ``values(n)`` (float64, for a symmetric window of
    ``n`` points) in ``dtype``; a periodic window is the first ``window_length`` points of the
    symmetric one of ``window_length + 1`` (the caller passes ``n`` accordingly)."""
    n = as_int(window_length, fname, "window_length", 1)
    d = _dtype.get_default_dtype() if dtype is None else dtype
    if layout is not None and str(layout) != "torch.strided":
        # (only hann_window's message marks the dtype it was not given as the default)
        default = " (default)" if dtype is None and fname == "hann_window" else ""
        raise RuntimeError(
            f"{fname} is not implemented for sparse types, got: TensorOptions(dtype="
            f"{_dtype.cpp_name(d.np)}{default}, device=cpu, "
            "layout=Sparse, requires_grad=false (default), pinned_memory=false, "
            "memory_format=(nullopt))"
        )
    if not d.is_floating_point:
        if d.is_complex:
            raise NotImplementedError(
                f"\"arange_cpu\" not implemented for '{_dtype.scalar_name(d.np)}'"
            )
        raise RuntimeError(
            f"{fname} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_dtype.cpp_name(d.np)}, device=cpu, layout=Strided (default), requires_grad="
            "false (default), pinned_memory=false, memory_format=(nullopt))"
        )
    if n < 0:
        raise RuntimeError(f"{fname} requires non-negative window_length, got window_length={n}")
    from .._creation import tensor  # deferred: keeps the module's imports to what ops need

    arr = np.zeros(0) if n == 0 else np.ones(1) if n == 1 else values()
    return tensor(arr, dtype=d, device=device, requires_grad=requires_grad)


def _cosine_sum(n: int, periodic: bool, coefficients: tuple) -> np.ndarray:
    """``sum_k (-1)^k a_k cos(2 pi k i / (N - 1))`` over ``N = n (+ 1 if periodic)`` points,
    the first ``n`` kept."""
    m = n + 1 if periodic else n
    phase = np.arange(m, dtype=np.float64) * (2 * np.pi / (m - 1))
    out = sum((-1) ** k * a * np.cos(k * phase) for k, a in enumerate(coefficients))
    return out[:n]


@register("hann_window")
def hann_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """The Hann window, ``0.5 - 0.5 cos(2 pi n / (N - 1))``; ``periodic`` (the default, for
    spectral analysis) drops the last point of the ``window_length + 1``-point window.

    Example:
        >>> import ember
        >>> ember.hann_window(4)
        tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window(
        "hann_window", window_length, dtype, layout, device, requires_grad,
        lambda: _cosine_sum(window_length, periodic, (0.5, 0.5)),
    )  # fmt: skip


@register("hamming_window")
def hamming_window(
    window_length: int,
    periodic: bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """The Hamming window, ``alpha - beta cos(2 pi n / (N - 1))``; ``periodic`` as in
    ``hann_window``.

    Example:
        >>> import ember
        >>> ember.hamming_window(3, periodic=False)
        tensor([0.0800, 1.0000, 0.0800])
    """
    return _window(
        "hamming_window", window_length, dtype, layout, device, requires_grad,
        lambda: _cosine_sum(window_length, periodic, (alpha, beta)),
    )  # fmt: skip


@register("blackman_window")
def blackman_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """The Blackman window, ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``;
    ``periodic`` as in ``hann_window``.

    Example:
        >>> import ember
        >>> ember.blackman_window(5, periodic=False)[2]
        tensor(1.)
    """
    return _window(
        "blackman_window", window_length, dtype, layout, device, requires_grad,
        lambda: _cosine_sum(window_length, periodic, (0.42, 0.5, 0.08)),
    )  # fmt: skip


@register("bartlett_window")
def bartlett_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """The Bartlett (triangular) window, ``1 - |2n / (N - 1) - 1|``; ``periodic`` as in
    ``hann_window``.

    Example:
        >>> import ember
        >>> ember.bartlett_window(5, periodic=False)
        tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """

    def values():
        m = window_length + 1 if periodic else window_length
        out = 1 - np.abs(np.arange(m, dtype=np.float64) * (2 / (m - 1)) - 1)
        return out[:window_length]

    return _window("bartlett_window", window_length, dtype, layout, device, requires_grad, values)


@register("kaiser_window")
def kaiser_window(
    window_length: int,
    periodic: bool = True,
    beta: float = 12.0,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """The Kaiser window, ``I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta)`` with
    ``a = (N - 1) / 2``; ``periodic`` as in ``hann_window``.

    Example:
        >>> import ember
        >>> ember.kaiser_window(3, periodic=False, beta=0.0)
        tensor([1., 1., 1.])
    """

    def values():
        m = window_length + 1 if periodic else window_length
        a = (m - 1) / 2
        ratio = (np.arange(m, dtype=np.float64) - a) / a
        out = np.i0(beta * np.sqrt(np.abs(1 - ratio**2))) / np.i0(beta)
        return out[:window_length]

    return _window("kaiser_window", window_length, dtype, layout, device, requires_grad, values)
