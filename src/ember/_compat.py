"""torch API surface that tutorials touch but that has little to compute on a CPU-only,
NumPy-backed library: thread and determinism settings, the default device and matmul
precision, ``finfo``/``iinfo``, the legacy ``torch.FloatTensor``-style types, ``Tensor.new_*``
factories, the in-place random fills, ``meshgrid``, ``bucketize`` and ``searchsorted``.
"""

from __future__ import annotations

import builtins
import math
import os

import numpy as np

from . import _creation, _dtype
from ._aten.inplace import setitem
from ._mode import state as _mode
from ._overrides import warn as _warn
from ._tensor import DEFAULT_DEVICE, Size, Tensor, register_methods
from ._tensor import device as _device
from .autograd.views import VIEW_LEAF_MSG

_wrap = Tensor._wrap

__all__ = [
    "Event",
    "Stream",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
    "are_deterministic_algorithms_enabled",
    "broadcast_shapes",
    "bucketize",
    "isin",
    "set_default_tensor_type",
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "e",
    "finfo",
    "get_default_device",
    "get_float32_matmul_precision",
    "get_num_interop_threads",
    "get_num_threads",
    "iinfo",
    "inf",
    "is_deterministic_algorithms_warn_only_enabled",
    "memory_format",
    "meshgrid",
    "nan",
    "pi",
    "preserve_format",
    "searchsorted",
    "set_default_device",
    "set_float32_matmul_precision",
    "set_num_interop_threads",
    "set_num_threads",
    "use_deterministic_algorithms",
]

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan

# -- a CPU-only build ----------------------------------------------------------------------

_NO_CUDA = "Torch not compiled with CUDA enabled"


def _tensor_cuda(self, device=None, non_blocking=False, memory_format=None):
    """``Tensor.cuda()`` fails as on a CPU-only torch build.

    Example:
        >>> import ember
        >>> try:
        ...     ember.ones(2).cuda()
        ... except AssertionError as e:
        ...     print(e)
        Torch not compiled with CUDA enabled
    """
    raise AssertionError(_NO_CUDA)


# -- memory formats ------------------------------------------------------------------------


class memory_format:
    """``torch.memory_format``: how a tensor's elements are laid out. ember's arrays are
    NumPy's (C order unless a view says otherwise); the formats are accepted where torch
    takes them and compare by identity, as torch's do.

    Example:
        >>> import ember
        >>> ember.channels_last, isinstance(ember.contiguous_format, ember.memory_format)
        (torch.channels_last, True)
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


def _tensor_pin_memory(self, device=None):
    """``Tensor.pin_memory()``: pinned memory needs an accelerator, as on torch's CPU build.

    Example:
        >>> import ember
        >>> try:
        ...     ember.ones(2).pin_memory()
        ... except RuntimeError as e:
        ...     print(e)
        Cannot access accelerator device when none is available.
    """
    raise RuntimeError("Cannot access accelerator device when none is available.")


# -- streams and events (torch.Stream, torch.Event) on the CPU ---------------------------

_NO_CPU_EVENTS = "cpu backend doesn't support events."


def _stream_device(device):
    """The device of a Stream or Event: the CPU (or meta) as torch's CPU build allows."""
    if device is None:
        return _device("cpu")
    if isinstance(device, int):  # an accelerator index
        raise RuntimeError("Cannot access accelerator device when none is available.")
    d = _device(device)
    if d.type not in ("cpu", "meta"):
        raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")
    return d


class Stream:
    """``torch.Stream``: an ordered queue of work on a device. On the CPU work runs as it is
    issued, so a stream is always idle; recording events fails as on torch's CPU build.

    Example:
        >>> import ember
        >>> s = ember.Stream()
        >>> s, s.query()
        (torch.Stream device_type=cpu, device_index=-1, stream_id=0, True)
    """

    def __init__(self, device=None, *, priority: int = 0) -> None:
        self.device = _stream_device(device)
        self.device_type = self.device.type
        self.device_index = -1 if self.device.index is None else self.device.index
        self.stream_id = 0

    def query(self) -> bool:
        """True: all work issued to a CPU stream has finished."""
        return True

    def synchronize(self) -> None:
        """Wait for the stream's work (none is pending on the CPU)."""

    def wait_event(self, event: Event) -> None:
        """Make later work wait for ``event`` (nothing to wait for on the CPU)."""

    def wait_stream(self, stream: Stream) -> None:
        """Make later work wait for ``stream``'s: needs an event, which the CPU lacks."""
        raise RuntimeError(_NO_CPU_EVENTS)

    def record_event(self, event: Event | None = None) -> Event:
        """Record an event on the stream: the CPU has no events."""
        raise RuntimeError(_NO_CPU_EVENTS)

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc) -> None:
        pass

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and (self.device, self.stream_id) == (
            other.device,
            other.stream_id,
        )

    def __hash__(self) -> int:
        return hash((self.device, self.stream_id))

    def __repr__(self) -> str:
        return (
            f"torch.Stream device_type={self.device_type}, device_index={self.device_index}, "
            f"stream_id={self.stream_id}"
        )


class Event:
    """``torch.Event``: a marker in a stream's work, for synchronizing and timing. A CPU
    event is never recorded (torch's CPU build refuses), so it is always complete.

    Example:
        >>> import ember
        >>> e = ember.Event(enable_timing=True)
        >>> e, e.query()
        (torch.Event device_type=cpu, device_index=-1, event_flag=1, event_id=0, True)
    """

    def __init__(
        self,
        device=None,
        *,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
    ) -> None:
        self.device = _stream_device(device)
        self.event_id = 0
        self._timing = enable_timing

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on ``stream``: the CPU has no events."""
        raise RuntimeError(_NO_CPU_EVENTS)

    def query(self) -> bool:
        """True: nothing recorded is pending."""
        return True

    def synchronize(self) -> None:
        """Wait for the event (never pending on the CPU)."""

    def wait(self, stream: Stream | None = None) -> None:
        """Make ``stream``'s later work wait for the event (nothing to wait for)."""

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between two recorded timing events: CPU events are never recorded."""
        if not (self._timing and end_event._timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def ipc_handle(self):
        """A handle to share the event between processes: not supported, as in torch."""
        raise NotImplementedError(
            "torch.Event ipc is not supported yet, please open an issue if you need this!"
        )

    def __repr__(self) -> str:
        index = -1 if self.device.index is None else self.device.index
        return (
            f"torch.Event device_type={self.device.type}, device_index={index}, "
            f"event_flag={int(self._timing)}, event_id={self.event_id}"
        )


# -- default device and matmul precision ---------------------------------------------------

_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision: str) -> None:
    """Accepted as torch accepts it; ember's float32 matmuls always use full precision.

    Example:
        >>> import ember
        >>> ember.set_float32_matmul_precision("high")
        >>> ember.get_float32_matmul_precision()
        'high'
        >>> ember.set_float32_matmul_precision("highest")
    """
    if precision not in ("highest", "high", "medium"):
        _warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
            "setFloat32MatmulPrecision call has no effect.",
            stacklevel=2,
        )
        return
    _matmul_precision[0] = precision


def get_float32_matmul_precision() -> str:
    """The precision set by ``set_float32_matmul_precision`` (``"highest"`` by default).

    Example:
        >>> import ember
        >>> ember.get_float32_matmul_precision()
        'highest'
    """
    return _matmul_precision[0]


def set_default_device(device) -> None:
    """Remember the default device (``None`` resets it); ember computes on the CPU only.

    Example:
        >>> import ember
        >>> ember.set_default_device("cpu")
        >>> ember.get_default_device()
        device(type='cpu')
        >>> ember.set_default_device(None)
    """
    DEFAULT_DEVICE[0] = None if device is None else _device(device)


def get_default_device():
    """``device(type='cpu')`` unless another was set with ``set_default_device``.

    Example:
        >>> import ember
        >>> ember.get_default_device()
        device(type='cpu')
    """
    return DEFAULT_DEVICE[0] or _device("cpu")


# -- threads and determinism ----------------------------------------------------------------

_threads: list = [None]


def set_num_threads(int) -> None:  # noqa: A002 - torch's parameter name
    """Set the number of BLAS threads NumPy uses (through threadpoolctl when installed).

    Example:
        >>> import ember
        >>> n = ember.get_num_threads(); ember.set_num_threads(1); ember.get_num_threads()
        1
        >>> ember.set_num_threads(n)
    """
    n = int
    if isinstance(n, builtins.bool) or not isinstance(n, (builtins.int, np.integer)):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads[0] = builtins.int(n)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=_threads[0], user_api="blas")
    except Exception:  # noqa: BLE001 - optional and best effort: never fail
        pass


def get_num_threads() -> builtins.int:
    """The number of threads set by ``set_num_threads`` (else NumPy's BLAS threads).

    Example:
        >>> import ember
        >>> ember.get_num_threads() >= 1
        True
    """
    if _threads[0] is not None:
        return _threads[0]
    try:
        from threadpoolctl import threadpool_info

        counts = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
        if counts:
            return builtins.int(max(counts))
    except Exception:  # noqa: BLE001
        pass
    import os

    return os.cpu_count() or 1


_interop_threads: list = [None]


def set_num_interop_threads(int) -> None:  # noqa: A002 - torch's parameter name
    """Set the size of the inter-op thread pool, once (torch's rule). ember runs one op at a
    time, so the number is only recorded; ``get_num_interop_threads`` returns it.

    Example:
        >>> import ember
        >>> ember.get_num_interop_threads() >= 1
        True
    """
    n = int
    if isinstance(n, builtins.bool) or not isinstance(n, (builtins.int, np.integer)):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop_threads[0] is not None:
        raise RuntimeError(
            "Error: cannot set number of interop threads after parallel work has started or "
            "set_num_interop_threads called"
        )
    _interop_threads[0] = builtins.int(n)


def get_num_interop_threads() -> builtins.int:
    """The size of the inter-op thread pool: the number set, else the number of cores
    (torch's default).

    Example:
        >>> import ember
        >>> ember.get_num_interop_threads() >= 1
        True
    """
    if _interop_threads[0] is not None:
        return _interop_threads[0]
    return os.cpu_count() or 1


_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False) -> None:
    """Remember the flag (ember's algorithms are deterministic anyway).

    Example:
        >>> import ember
        >>> ember.use_deterministic_algorithms(True)
        >>> ember.are_deterministic_algorithms_enabled()
        True
        >>> ember.use_deterministic_algorithms(False)
    """
    if type(mode) is not builtins.bool:
        raise TypeError(
            "_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
            f"{type(mode).__name__}"
        )
    if type(warn_only) is not builtins.bool:
        raise TypeError(
            "_set_deterministic_algorithms(): argument 'warn_only' must be bool, not "
            f"{type(warn_only).__name__}"
        )
    _deterministic["mode"] = mode
    _deterministic["warn_only"] = warn_only


def are_deterministic_algorithms_enabled() -> builtins.bool:
    """Whether ``use_deterministic_algorithms(True)`` is in effect.

    Example:
        >>> import ember
        >>> ember.are_deterministic_algorithms_enabled()
        False
    """
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> builtins.bool:
    """The ``warn_only`` flag given to ``use_deterministic_algorithms``.

    Example:
        >>> import ember
        >>> ember.use_deterministic_algorithms(True, warn_only=True)
        >>> ember.is_deterministic_algorithms_warn_only_enabled()
        True
        >>> ember.use_deterministic_algorithms(False)
    """
    return _deterministic["warn_only"]


# -- finfo / iinfo ---------------------------------------------------------------------------


def _as_dtype(d):
    if isinstance(d, _dtype.dtype):
        return d
    return _dtype.from_numpy_dtype(_dtype.to_numpy_dtype(d))


class finfo:  # noqa: N801 - torch's name
    """Machine limits of a floating dtype, with torch's fields.

    Example:
        >>> import ember
        >>> ember.finfo(ember.float32).eps
        1.1920928955078125e-07
        >>> ember.finfo(ember.float16)
        finfo(resolution=0.001, min=-65504, max=65504, eps=0.000976562, smallest_normal=6.10352e-05, tiny=6.10352e-05, dtype=float16)
    """  # noqa: E501

    def __init__(self, type=None) -> None:  # noqa: A002 - torch's parameter name
        d = _dtype.get_default_dtype() if type is None else _as_dtype(type)
        d = d.to_real()
        if not d.is_floating_point:
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use torch.iinfo to "
                "handle 'torch.finfo'"
            )
        if d.np.name in _dtype.ML_NAMES:
            # deferred: bfloat16's limits (ml_dtypes is loaded already, with the dtype)
            import ml_dtypes

            info = ml_dtypes.finfo(d.np)
        else:
            info = np.finfo(d.np)
        self.bits = info.bits
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = builtins.float(info.smallest_normal)
        self.smallest_normal = self.tiny
        # torch's: 10 ** -floor(-log10(eps)) (ml_dtypes rounds float8's precision up)
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))
        self.dtype = d.name

    def __eq__(self, other) -> builtins.bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> builtins.int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )

    __str__ = __repr__


class iinfo:  # noqa: N801 - torch's name
    """Limits of an integer dtype, with torch's fields (``bits``, ``min``, ``max``, ``dtype``).

    Example:
        >>> import ember
        >>> ember.iinfo(ember.uint8).max
        255
    """

    def __init__(self, type) -> None:  # noqa: A002 - torch's parameter name
        d = _as_dtype(type)
        if d is _dtype.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d.np.kind not in "iu":
            raise TypeError(
                "torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                "'torch.iinfo'"
            )
        info = np.iinfo(d.np)
        self.bits = info.bits
        self.min = builtins.int(info.min)
        self.max = builtins.int(info.max)
        self.dtype = d.name

    def __eq__(self, other) -> builtins.bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> builtins.int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

    __str__ = __repr__


# -- legacy tensor types (torch.FloatTensor, ...) ---------------------------------------------


def _options(d) -> str:
    return (
        f"TensorOptions(dtype={_dtype.cpp_name(d)}, device=cpu, layout=Strided, "
        "requires_grad=false (default), pinned_memory=false (default), "
        "memory_format=(nullopt))"
    )


class tensortype(type):  # noqa: N801 - torch's metaclass name
    """Metaclass of the legacy types: ``isinstance(t, FloatTensor)`` tests the dtype."""

    dtype: _dtype.dtype
    is_cuda = False
    is_sparse = False

    def __instancecheck__(cls, obj) -> builtins.bool:
        return isinstance(obj, Tensor) and obj._data.dtype == cls.dtype.np

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"

    def __call__(cls, *args, device=None):
        d = cls.dtype
        if not args:
            return _wrap(np.zeros((0,), dtype=d.np))
        if len(args) == 1:
            (data,) = args
            if isinstance(data, Tensor):
                if data._data.dtype != d.np:
                    raise TypeError(
                        f"expected {_options(d)} (got {_options(_as_dtype(data.dtype))})"
                    )
                return data
            if isinstance(data, Size):
                return _creation.empty(data, dtype=d)
            if isinstance(data, (list, tuple, np.ndarray)):
                return _creation.tensor(data, dtype=d)
            if isinstance(data, str):
                raise TypeError("new(): invalid data type 'str'")
            if not isinstance(data, (builtins.int, np.integer)) or isinstance(data, builtins.bool):
                raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        for i, s in enumerate(args):
            if isinstance(s, builtins.bool) or not isinstance(s, (builtins.int, np.integer)):
                raise TypeError(
                    f"new(): argument 'size' failed to unpack the object at pos {i + 1} with "
                    f'error "type must be tuple of ints,but got {type(s).__name__}"'
                )
        return _creation.empty(*args, dtype=d)


def _legacy(name: str, d, example: str) -> tensortype:
    """The legacy type ``name`` of dtype ``d``; ``example``: how ``name([1, 0])`` prints."""
    cls = tensortype(name, (), {"dtype": d, "__module__": "torch"})
    cls.__doc__ = (
        f"Legacy constructor: ``{name}(data)`` or ``{name}(*size)`` of dtype {d};\n"
        f"``isinstance(t, {name})`` tests whether ``t`` has that dtype.\n\n"
        "Example:\n"
        "    >>> import ember\n"
        f"    >>> ember.{name}([1, 0])\n"
        f"    {example}\n"
        f"    >>> isinstance(ember.zeros(2, dtype=ember.{d.name}), ember.{name})\n"
        "    True\n"
    )
    return cls


FloatTensor = _legacy("FloatTensor", _dtype.float32, "tensor([1., 0.])")
DoubleTensor = _legacy("DoubleTensor", _dtype.float64, "tensor([1., 0.], dtype=torch.float64)")
HalfTensor = _legacy("HalfTensor", _dtype.float16, "tensor([1., 0.], dtype=torch.float16)")
LongTensor = _legacy("LongTensor", _dtype.int64, "tensor([1, 0])")
IntTensor = _legacy("IntTensor", _dtype.int32, "tensor([1, 0], dtype=torch.int32)")
ShortTensor = _legacy("ShortTensor", _dtype.int16, "tensor([1, 0], dtype=torch.int16)")
CharTensor = _legacy("CharTensor", _dtype.int8, "tensor([1, 0], dtype=torch.int8)")
ByteTensor = _legacy("ByteTensor", _dtype.uint8, "tensor([1, 0], dtype=torch.uint8)")
BoolTensor = _legacy("BoolTensor", _dtype.bool, "tensor([ True, False])")


def set_default_tensor_type(t) -> None:
    """Deprecated in torch: the default dtype from a legacy floating type
    (``torch.DoubleTensor`` or ``"torch.DoubleTensor"``); use ``set_default_dtype``.

    Example:
        >>> import warnings, ember
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     ember.set_default_tensor_type(ember.DoubleTensor)
        >>> ember.get_default_dtype()
        torch.float64
        >>> ember.set_default_dtype(ember.float32)
    """
    _warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
        stacklevel=2,
    )
    if isinstance(t, str):
        found = globals().get(t[len("torch.") :] if t.startswith("torch.") else t)
        if not isinstance(found, tensortype):
            raise TypeError(f"invalid type: '{t}'")
        t = found
    if not isinstance(t, tensortype):
        raise TypeError(
            "invalid type object: only floating-point types are supported as the default type"
        )
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(t.dtype)


_orig_type = Tensor.type


def _tensor_type(self, dtype=None, non_blocking=False, **kwargs):
    """``t.type()`` -> 'torch.FloatTensor'; ``t.type(torch.DoubleTensor)`` converts.

    Example:
        >>> import ember
        >>> ember.ones(2).type()
        'torch.FloatTensor'
        >>> ember.ones(2).type(ember.LongTensor)
        tensor([1, 1])
    """
    if isinstance(dtype, tensortype):
        dtype = dtype.dtype
    return _orig_type(self, dtype)


# -- Tensor.new_* ------------------------------------------------------------------------------


def _new_dtype(self: Tensor, dtype):
    return self.dtype if dtype is None else dtype


def _new_size(fname: str, dims: tuple, size) -> tuple:
    """The size of ``t.new_*(*dims)`` or ``t.new_*(size=...)`` (torch takes either)."""
    if size is None:
        return dims
    if dims:
        raise TypeError(f"{fname}() got multiple values for argument 'size'")
    return (size,)


def _new_method(name: str, make, doc: str):
    """``Tensor.<name>(*size, size=None, dtype=None, ...)``: ``make(size, dtype, requires_grad)``
    with this tensor's dtype unless ``dtype`` is given (the device, layout and pinning that
    torch also takes are all the CPU's)."""

    def method(
        self,
        *dims,
        size=None,
        dtype=None,
        device=None,
        requires_grad=False,
        layout=None,
        pin_memory=False,
    ):
        dev = self.device if device is None else device  # (self's: meta or the CPU)
        return make(_new_size(name, dims, size), _new_dtype(self, dtype), requires_grad, dev)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = doc
    return method


new_zeros = _new_method(
    "new_zeros",
    lambda size, dtype, rg, dev: _creation._zeros(size, dtype, rg, dev),
    """Zeros of ``size`` with this tensor's dtype unless ``dtype`` is given.

    Example:
        >>> import ember
        >>> ember.tensor([1.0], dtype=ember.float64).new_zeros(2)
        tensor([0., 0.], dtype=torch.float64)
    """,
)
new_ones = _new_method(
    "new_ones",
    lambda size, dtype, rg, dev: _creation.ones(*size, dtype=dtype, requires_grad=rg, device=dev),
    """Ones of ``size`` with this tensor's dtype unless ``dtype`` is given.

    Example:
        >>> import ember
        >>> ember.tensor([1, 2], dtype=ember.int32).new_ones(2)
        tensor([1, 1], dtype=torch.int32)
    """,
)
new_empty = _new_method(
    "new_empty",
    lambda size, dtype, rg, dev: _creation.empty(*size, dtype=dtype, requires_grad=rg, device=dev),
    """An uninitialised tensor of ``size`` with this tensor's dtype (ember zero-fills it).

    Example:
        >>> import ember
        >>> t = ember.tensor([1, 2]).new_empty(2, 3)
        >>> t.shape, t.dtype
        (torch.Size([2, 3]), torch.int64)
    """,
)


def new_full(
    self,
    size,
    fill_value,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
    layout=None,
    pin_memory=False,
):
    """``size`` filled with ``fill_value``, with this tensor's dtype unless ``dtype`` is given.

    Example:
        >>> import ember
        >>> ember.tensor([1, 2]).new_full((2,), 7)
        tensor([7, 7])
    """
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"new_full(): argument 'size' (position 1) must be tuple of ints, not "
            f"{type(size).__name__}"
        )
    return _creation.full(
        size,
        _scalar(fill_value),
        dtype=_new_dtype(self, dtype),
        requires_grad=requires_grad,
        device=self.device if device is None else device,
    )


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor copying ``data`` with this tensor's dtype unless ``dtype`` is given.

    Example:
        >>> import ember
        >>> ember.zeros(1, dtype=ember.float64).new_tensor([1, 2])
        tensor([1., 2.], dtype=torch.float64)
    """
    d = _new_dtype(self, dtype)
    if isinstance(data, Tensor):
        _warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        arr = data._data.astype(_dtype.to_numpy_dtype(d), copy=True)
        t = _creation._finish(arr, requires_grad)
        return t if device is None and not self.is_meta else t.to(device or self.device)
    dev = self.device if device is None else device
    return _creation.tensor(data, dtype=d, requires_grad=requires_grad, device=dev)


# -- fill_diagonal_ ---------------------------------------------------------------------------


def fill_diagonal_(self: Tensor, fill_value, wrap: builtins.bool = False) -> Tensor:
    """Fill the main diagonal in place (``wrap``: restart it below a tall matrix's square).

    Example:
        >>> import ember
        >>> ember.zeros(2, 3).fill_diagonal_(1)
        tensor([[1., 0., 0.],
                [0., 1., 0.]])
    """
    shape = self._data.shape
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if _mode.enabled and self._rg and self.grad_fn is None:
        raise RuntimeError(VIEW_LEAF_MSG)  # torch fills a diagonal view of it
    n = min(shape)
    if len(shape) == 2 and wrap and shape[0] > shape[1]:
        step = shape[1] + 1
        flat = np.arange(0, shape[0] * shape[1], step)
        idx = np.unravel_index(flat, shape)
    else:
        idx = (np.arange(n),) * len(shape)
    setitem(self, tuple(idx), _scalar(fill_value))
    return self


# -- meshgrid / bucketize / searchsorted ----------------------------------------------------------

_MESHGRID_WARNING = (
    "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
    "argument. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)"
)


def _scalar(x):
    return x.item() if isinstance(x, Tensor) else x


def broadcast_shapes(*shapes) -> Size:
    """The shape tensors of ``shapes`` broadcast to, with torch's error when there is none.

    Example:
        >>> import ember
        >>> ember.broadcast_shapes((2, 1), (3,))
        torch.Size([2, 3])
    """
    dims = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
    for shape in dims:
        if not isinstance(shape, (tuple, list)):
            raise RuntimeError(
                "Input shapes should be of type ints, a tuple of ints, or a list of ints, "
                f"got {shape}"
            )
    if not dims:
        return Size(())
    # torch's algorithm and messages: grow the common shape argument by argument.
    common = [1] * max(len(shape) for shape in dims)
    for index, shape in enumerate(dims):
        for k in range(-1, -1 - len(shape), -1):
            if shape[k] == common[k]:
                continue
            if common[k] == 1:
                if shape[k] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[k] = shape[k]
            if shape[k] != 1 and common[k] != shape[k]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[k]} at {k}! "
                    f"Mismatching argument at index {index} had {shape}; but expected shape "
                    f"should be broadcastable to {common}"
                )
    return Size(common)


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-D tensors (``indexing='ij'`` or ``'xy'``), as expanded views.

    Example:
        >>> import ember
        >>> xs, ys = ember.meshgrid(ember.arange(3), ember.arange(2), indexing="ij")
        >>> xs.shape
        torch.Size([3, 2])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        _warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                f"{t._data.ndim}D tensor of shape {list(t._data.shape)}"
            )
    if any(t._data.dtype != tensors[0]._data.dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    swap = indexing == "xy" and len(tensors) >= 2
    ts = list(tensors)
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t._data.size for t in ts]
    out = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        out.append(t.reshape(view).expand(*shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def _search(boundaries: np.ndarray, values: np.ndarray, side: str) -> np.ndarray:
    if boundaries.ndim == 1:
        return np.searchsorted(boundaries, values, side=side)
    lead = boundaries.shape[:-1]
    b = boundaries.reshape(-1, boundaries.shape[-1])
    v = values.reshape(b.shape[0], -1)
    rows = [np.searchsorted(br, vr, side=side) for br, vr in zip(b, v)]
    return np.stack(rows).reshape(lead + values.shape[-1:])


def _index_result(arr: np.ndarray, out_int32: builtins.bool) -> Tensor:
    return _wrap(np.asarray(arr, dtype=np.int32 if out_int32 else np.int64))


def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None) -> Tensor:
    """Whether each of ``elements`` is in ``test_elements`` (a bool tensor of ``elements``'s
    shape; either may be a number).

    Example:
        >>> import ember
        >>> ember.isin(ember.tensor([1, 2, 3]), ember.tensor([2, 3]))
        tensor([False,  True,  True])
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(
            f"isin() received an invalid combination of arguments - got "
            f"({type(elements).__name__}, {type(test_elements).__name__}), but expected a "
            f"Tensor for elements or test_elements"
        )
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    result = _wrap(np.isin(a, b, assume_unique=assume_unique, invert=invert))
    if out is not None:
        out.copy_(result)
        return out
    return result


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None) -> Tensor:
    """The bucket of each value of ``input`` between the 1-D sorted ``boundaries`` (int64).

    ``right=False``: ``boundaries[i-1] < x <= boundaries[i]``; ``right=True``:
    ``boundaries[i-1] <= x < boundaries[i]``.

    Example:
        >>> import ember
        >>> ember.bucketize(ember.tensor([3, 6, 9]), ember.tensor([1, 3, 5, 7, 9]))
        tensor([1, 3, 4])
    """
    b = boundaries._data
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    v = input._data if isinstance(input, Tensor) else np.asarray(input)
    return _index_result(np.searchsorted(b, v, side="right" if right else "left"), out_int32)


def searchsorted(
    sorted_sequence,
    values,
    *,
    out_int32=False,
    right=False,
    side=None,
    out=None,
    sorter=None,
) -> Tensor:
    """Indices at which ``values`` would be inserted into the innermost dimension of
    ``sorted_sequence`` to keep it sorted (int64; ``right``/``side='right'`` after equals).

    Example:
        >>> import ember
        >>> ember.searchsorted(ember.tensor([1, 3, 5, 7, 9]), ember.tensor([3, 6, 9]))
        tensor([1, 3, 4])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of "
                "left while right was True"
            )
        right = side == "right"
    b = sorted_sequence._data
    if b.ndim == 0:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
            "dimension"
        )
    if sorter is not None:
        b = np.take_along_axis(b, sorter._data, axis=-1)
    scalar = not isinstance(values, Tensor)
    v = np.asarray(values) if scalar else values._data
    if b.ndim > 1:
        if v.ndim == 0:
            raise RuntimeError(
                "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                f"dimension is 1, but we got boundaries tensor dim({b.ndim}) and input value's "
                f"dim({v.ndim}) numel({v.size})"
            )
        if v.shape[:-1] != b.shape[:-1]:
            raise RuntimeError(
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                "dimensions of boundaries tensor and input value tensor must match, but we got "
                f"boundaries tensor {list(b.shape)} and input value tensor {list(v.shape)}"
            )
    return _index_result(_search(b, v, "right" if right else "left"), out_int32)


# -- attach the Tensor methods (only those no one else has defined) ---------------------------

_METHODS = {
    "cuda": _tensor_cuda,
    "pin_memory": _tensor_pin_memory,
    "new_zeros": new_zeros,
    "new_ones": new_ones,
    "new_full": new_full,
    "new_empty": new_empty,
    "new_tensor": new_tensor,
    "fill_diagonal_": fill_diagonal_,
}
register_methods({k: v for k, v in _METHODS.items() if not hasattr(Tensor, k)})
register_methods({"type": _tensor_type})
