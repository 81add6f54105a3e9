"""Tensor factories (tensor, zeros, arange, randn, ...) and the global random generator."""

from __future__ import annotations

import math

import numpy as np

from . import _dtype
from ._alloc import raise_alloc_error
from ._overrides import warn as _warn
from ._tensor import Tensor, broadcast_shapes, check_device

_wrap = Tensor._wrap
_INT64_MAX = 2**63 - 1

# torch's default generator seed, so an unseeded run is reproducible like torch's.
_DEFAULT_SEED = 67280421310721


class Generator:
    """A random number generator (NumPy PCG64 behind torch's Generator API).

    Example:
        >>> import ember
        >>> g = ember.Generator().manual_seed(0)
        >>> ember.rand(2, generator=g).shape
        torch.Size([2])
    """

    def __init__(self, device: str = "cpu") -> None:
        self._seed = _DEFAULT_SEED
        self._rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        s = int(np.random.SeedSequence().entropy) % (2**63)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state as a uint8 tensor (PCG64's 128-bit state and increment)."""
        st = self._rng.bit_generator.state
        words = (st["state"]["state"], st["state"]["inc"])
        raw = b"".join(w.to_bytes(16, "little") for w in words)
        raw += int(st["has_uint32"]).to_bytes(4, "little") + int(st["uinteger"]).to_bytes(
            4, "little"
        )
        return _wrap(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, state: Tensor) -> Generator:
        """Restore a state from ``get_state`` (plain numbers: nothing is unpickled)."""
        raw = np.asarray(state._data, dtype=np.uint8).tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(
                f"Expected a state of {_STATE_BYTES} bytes (from get_rng_state), got {len(raw)}"
            )
        self._rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {
                "state": int.from_bytes(raw[0:16], "little"),
                "inc": int.from_bytes(raw[16:32], "little"),
            },
            "has_uint32": int.from_bytes(raw[32:36], "little"),
            "uinteger": int.from_bytes(raw[36:40], "little"),
        }
        return self


_STATE_BYTES = 40  # PCG64: state and increment (128 bits each), the cached 32-bit half

default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the global generator so ``rand``/``randn``/``randint`` are reproducible.

    Example:
        >>> import ember
        >>> _ = ember.manual_seed(0); a = ember.rand(3)
        >>> _ = ember.manual_seed(0); bool((a == ember.rand(3)).all())
        True
    """
    return default_generator.manual_seed(seed)


seed = default_generator.seed


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(state: Tensor) -> None:
    default_generator.set_state(state)


def _rng(generator):
    return (generator or default_generator)._rng


# -- helpers ----------------------------------------------------------------------------


def _size(size, size_kw=None, negative: str | None = None, fname: str = "empty") -> tuple:
    """Accept ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(torch.Size(...))``, ``f(size=...)``.
    ``negative``: the factory's own message for a negative size (torch's zeros has one)."""
    if size_kw is not None:
        if size:
            raise TypeError("got multiple values for argument 'size'")
        size = (size_kw,)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, (int, np.integer)):
            raise TypeError(
                f"empty(): argument 'size' must be tuple of ints, but found element of type "
                f"{type(s).__name__} at pos {len(out)}"
            )
        if s < 0:
            raise RuntimeError(
                negative or f"Trying to create tensor with negative dimension {s}: {list(size)}"
            )
        if s > 9223372036854775807:  # past int64: torch cannot even read it as a size
            raise TypeError(
                f"{fname}(): argument 'size' failed to unpack the object at pos {len(out) + 1} "
                'with error "Overflow when unpacking long long"'
            )
        out.append(int(s))
    return tuple(out)


def _float_dtype(dtype) -> np.dtype:
    return _dtype._default[0].np if dtype is None else _dtype.to_numpy_dtype(dtype)


def _finish(data: np.ndarray, requires_grad: bool) -> Tensor:
    t = _wrap(data)
    if requires_grad:
        t.requires_grad_(True) if data.dtype.kind in "fcV" else _no_grad_dtype()
    return t


# The factories allocate through _new, _new_full, _sample and _new_from: where NumPy
# refuses a size (MemoryError, ValueError), torch's RuntimeError with its message. The
# try costs nothing; the calls are positional (NumPy's keyword path is slower).


def _new(alloc, shape: tuple, dtype, requires_grad: bool) -> Tensor:
    """``alloc(shape, dtype)`` (np.zeros, np.ones) as a tensor."""
    try:
        data = alloc(shape, dtype)
    except (MemoryError, ValueError) as e:
        raise_alloc_error(shape, dtype, e)
    return _finish(data, requires_grad)


def _new_full(shape: tuple, fill_value, dtype, requires_grad: bool) -> Tensor:
    try:
        data = np.full(shape, fill_value, dtype)
    except (MemoryError, ValueError) as e:
        raise_alloc_error(shape, dtype, e)
    return _finish(data, requires_grad)


def _sample(draw, shape: tuple, dtype, requires_grad: bool) -> Tensor:
    """``draw(shape, float64)`` (a Generator's random, standard_normal) cast to ``dtype``."""
    try:
        data = draw(shape, np.float64).astype(dtype)
    except (MemoryError, ValueError) as e:
        raise_alloc_error(shape, dtype, e)
    return _finish(data, requires_grad)


def _new_from(make, shape: tuple, dtype, requires_grad: bool) -> Tensor:
    """``make()``'s array, of ``shape``, cast to ``dtype``, as a tensor."""
    try:
        data = make()
        if data.dtype != dtype:
            data = data.astype(dtype)
    except (MemoryError, ValueError) as e:
        raise_alloc_error(shape, dtype, e)
    return _finish(data, requires_grad)


def _no_grad_dtype():
    raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")


def _infer_dtype(data) -> np.dtype | None:
    """torch.tensor's inference for Python data: floats -> default, ints -> int64, bools."""
    kinds = set()
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            if not x:  # torch: an empty sequence is of the default dtype
                kinds.add("f")
            stack.extend(x)
        elif isinstance(x, (np.ndarray, np.generic)):
            kinds.add("np")
        elif isinstance(x, bool):
            kinds.add("b")
        elif isinstance(x, int):
            kinds.add("i")
        elif isinstance(x, float):
            kinds.add("f")
        elif isinstance(x, complex):
            kinds.add("c")
        elif isinstance(x, Tensor):
            kinds.add(
                x._data.dtype.kind if x._data.dtype.kind not in "fV" else "tf" + x._data.dtype.name
            )
        elif not isinstance(x, str):  # strings fail later, with torch's sizes error
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
    if not kinds or kinds == {"np"}:
        return None if kinds else _dtype._default[0].np
    if "c" in kinds:
        return np.dtype(np.complex64 if _dtype._default[0].np == np.float32 else np.complex128)
    if "f" in kinds:
        return _dtype._default[0].np
    tf = [k for k in kinds if k.startswith("tf")]
    if tf:
        return np.dtype(max(tf)[2:])
    if "i" in kinds or "u" in kinds:
        return np.dtype(np.int64)
    if kinds == {"b"}:
        return np.dtype(np.bool_)
    return None


# -- from data --------------------------------------------------------------------------


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory=False):
    """A new tensor copying ``data`` (nested lists, numbers, arrays or tensors).

    Python floats become the default dtype (float32), ints int64, bools bool.

    Example:
        >>> import ember
        >>> ember.tensor([[1, 2], [3, 4]]).dtype
        torch.int64
        >>> ember.tensor([0.1, 1.0])
        tensor([0.1000, 1.0000])
    """
    check_device(device)
    if isinstance(data, Tensor):
        _warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        arr = data._data.copy()
    elif isinstance(data, np.ndarray):
        arr = np.array(data, copy=True)
        if arr.dtype not in _dtype._FROM_NP:
            _dtype.from_numpy_dtype(arr.dtype)
    else:
        # With an explicit dtype, convert Python numbers straight to it (0.3 stays exact
        # in float64 instead of passing through float32).
        inferred = _infer_dtype(data) if dtype is None else _dtype.to_numpy_dtype(dtype)
        try:
            arr = np.array(_unwrap_nested(data), dtype=inferred)
        except (ValueError, TypeError):
            # NumPy's message names its own internals: walk the data as torch does instead.
            arr = _from_irregular(data, inferred)
        if arr.dtype == object:
            raise TypeError(f"Could not infer dtype of {type(data).__name__}")
        if arr.dtype.kind == "U" or arr.dtype.kind == "S":
            raise TypeError("new(): invalid data type 'str'")
    if dtype is not None:
        arr = arr.astype(_dtype.to_numpy_dtype(dtype), copy=False)
    return _finish(arr, requires_grad)


_MAX_DIMS = 64


def _is_sequence(x) -> bool:
    return isinstance(x, (list, tuple, str, Tensor, np.ndarray))


def _from_irregular(data, np_dtype) -> np.ndarray:
    """Data NumPy refused (ragged lists, strings, None): torch's error for it, or, as
    torch does for data with no elements (``[[], [1]]``), an empty array of the sizes
    read along the first elements."""
    sizes = []
    x = data
    while _is_sequence(x) and not isinstance(x, (Tensor, np.ndarray)):
        if len(sizes) >= _MAX_DIMS:
            raise ValueError(f"too many dimensions '{type(x).__name__}'")
        sizes.append(len(x))
        if not len(x):
            break
        x = x[0]
    if isinstance(x, (Tensor, np.ndarray)):
        sizes.extend(np.shape(x._data if isinstance(x, Tensor) else x))
    if x is None:
        raise RuntimeError("Could not infer dtype of NoneType")
    if np_dtype is None:
        np_dtype = _dtype._default[0].np
    if int(np.prod(sizes)) == 0:
        return np.empty(sizes, dtype=np_dtype)
    _check_nested(data, sizes, 0, np_dtype)
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _check_nested(obj, sizes: list, dim: int, np_dtype) -> None:
    """Raise torch's error for the first place where ``obj`` departs from ``sizes``."""
    if dim == len(sizes):
        if _is_sequence(obj) or obj is None:
            kind = np.dtype(np_dtype).kind
            what = type(obj).__name__
            if kind in "iub":
                raise TypeError(f"'{what}' object cannot be interpreted as an integer")
            raise TypeError(f"must be real number, not {what}")
        return
    if isinstance(obj, (Tensor, np.ndarray)):
        return
    if not isinstance(obj, (list, tuple)):
        raise TypeError("not a sequence")
    if len(obj) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(obj)})")
    for item in obj:
        _check_nested(item, sizes, dim + 1, np_dtype)


def _unwrap_nested(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        if any(isinstance(x, (list, tuple, Tensor)) for x in data):
            return [_unwrap_nested(x) for x in data]
    return data


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with a Tensor or ndarray when no conversion is needed."""
    check_device(device)
    if isinstance(data, Tensor):
        if dtype is None or _dtype.to_numpy_dtype(dtype) == data._data.dtype:
            return data
        return data.to(dtype)
    if isinstance(data, np.ndarray):
        if dtype is None or _dtype.to_numpy_dtype(dtype) == data.dtype:
            _dtype.from_numpy_dtype(data.dtype)
            return _wrap(data)
        return _wrap(data.astype(_dtype.to_numpy_dtype(dtype)))
    return tensor(data, dtype=dtype)


asarray = as_tensor


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (dtype kept).

    Example:
        >>> import numpy as np, ember
        >>> a = np.zeros(2); t = ember.from_numpy(a); a[0] = 5; t
        tensor([5., 0.], dtype=torch.float64)
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    return _wrap(ndarray)


# -- filled -----------------------------------------------------------------------------


def zeros(
    *shape, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """A tensor of zeros. Example: ``ember.zeros(2, 3)``.

    Example:
        >>> import ember
        >>> ember.zeros(2)
        tensor([0., 0.])
    """
    check_device(device)
    shape = _size(shape, size, "zeros: Dimension size must be non-negative.", "zeros")
    return _new(np.zeros, shape, _float_dtype(dtype), requires_grad)


def _zeros(size: tuple, dtype, requires_grad: bool) -> Tensor:
    """Zeros with the message of every factory but torch.zeros for a negative size
    (Tensor.new_zeros's)."""
    return _new(np.zeros, _size(size, fname="new_zeros"), _float_dtype(dtype), requires_grad)


def ones(
    *shape, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """A tensor of ones.

    Example:
        >>> import ember
        >>> ember.ones(2, 2, requires_grad=True)
        tensor([[1., 1.],
                [1., 1.]], requires_grad=True)
    """
    check_device(device)
    return _new(np.ones, _size(shape, size, fname="ones"), _float_dtype(dtype), requires_grad)


def empty(
    *shape,
    size=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
    pin_memory=False,
) -> Tensor:
    """An uninitialised tensor (ember zero-fills it, so results are deterministic)."""
    check_device(device)
    return _new(np.zeros, _size(shape, size), _float_dtype(dtype), requires_grad)


def full(
    size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """A tensor filled with ``fill_value`` (dtype inferred from it like torch).

    Example:
        >>> import ember
        >>> ember.full((2,), 7)
        tensor([7, 7])
    """
    check_device(device)
    if dtype is None:
        dt = _infer_dtype(fill_value)
    else:
        dt = _dtype.to_numpy_dtype(dtype)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _new_full(_size((size,)), fill_value, dt, requires_grad)


def eye(
    n: int,
    m: int | None = None,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    """The identity matrix (``n`` x ``m``)."""
    check_device(device)
    m = n if m is None else m
    if n < 0 or m < 0:
        name, v = ("n", n) if n < 0 else ("m", m)
        raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dt = _float_dtype(dtype)
    try:
        data = np.eye(n, m, dtype=dt)
    except (MemoryError, ValueError) as e:
        if n * m > _INT64_MAX:  # torch checks eye's element count before its storage size
            raise RuntimeError("numel: integer multiplication overflow") from None
        raise_alloc_error((n, m), dt, e)
    return _finish(data, requires_grad)


def arange(
    start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 when all are ints.

    Example:
        >>> import ember
        >>> ember.arange(4.0)
        tensor([0., 1., 2., 3.])
        >>> ember.arange(0, 3)
        tensor([0, 1, 2])
    """
    check_device(device)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is not None:
        dt = _dtype.to_numpy_dtype(dtype)
    elif all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in vals):
        dt = np.dtype(np.int64)
    else:
        dt = _dtype._default[0].np
    start, end, step = vals
    try:
        n = math.ceil((end - start) / step)
    except (OverflowError, ValueError):  # an infinite or NaN bound or step
        n = -1
    if n <= 0:  # torch's checks (a positive count has finite bounds of the step's sign)
        if not (step > 0 or step < 0):  # NaN
            raise RuntimeError("step must be nonzero")
        if not (math.isfinite(start) and math.isfinite(end)):
            raise RuntimeError(f"unsupported range: {_scalar_str(start)} -> {_scalar_str(end)}")
        if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
            raise RuntimeError("upper bound and lower bound inconsistent with step sign")
        n = 0
    try:
        if dt.kind in "fV":
            data = (start + np.arange(n, dtype=np.float64) * step).astype(dt)
        else:
            data = np.arange(start, end, step, dtype=dt)
    except (MemoryError, ValueError) as e:
        raise_alloc_error((n,), dt, e)
    return _finish(data, requires_grad)


def _scalar_str(v) -> str:
    """A number as torch's messages print it (C++ streams: 0, 0.5, inf, nan, 1e+20)."""
    return str(v) if isinstance(v, (int, np.integer)) else f"{v:g}"


def linspace(
    start, end, steps: int, *, out=None, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    check_device(device)
    _check_steps(steps)
    return _new_from(
        lambda: np.linspace(start, end, steps, dtype=np.float64),
        (steps,),
        _float_dtype(dtype),
        requires_grad,
    )


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, requires_grad=False):
    _check_steps(steps)
    return _new_from(
        lambda: np.logspace(start, end, steps, base=base),
        (steps,),
        _float_dtype(dtype),
        requires_grad,
    )


def _check_steps(steps) -> None:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")


# -- random -----------------------------------------------------------------------------


def rand(
    *shape,
    size=None,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    """Uniform samples on [0, 1).

    Example:
        >>> import ember
        >>> ember.rand(2, 3).shape
        torch.Size([2, 3])
    """
    check_device(device)
    dt, shape = _float_dtype(dtype), _size(shape, size, fname="rand")
    return _sample(_rng(generator).random, shape, dt, requires_grad)


def randn(
    *shape,
    size=None,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    """Standard normal samples.

    Example:
        >>> import ember
        >>> ember.randn(3, requires_grad=True).requires_grad
        True
    """
    check_device(device)
    dt = _float_dtype(dtype)
    rng, shape = _rng(generator), _size(shape, size, fname="randn")
    return _sample(rng.standard_normal, shape, dt, requires_grad)


def randint(
    low,
    high=None,
    size=None,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    """Integers uniform on ``[low, high)`` (int64 by default).

    Example:
        >>> import ember
        >>> ember.randint(0, 10, (3,)).dtype
        torch.int64
    """
    check_device(device)
    if size is None:
        if isinstance(high, (tuple, list)):
            low, high, size = 0, low, high
        else:
            raise TypeError("randint() missing required argument 'size'")
    elif high is None:
        low, high = 0, low
    dt = np.dtype(np.int64) if dtype is None else _dtype.to_numpy_dtype(dtype)
    shape, rng = _size((size,)), _rng(generator)
    return _new_from(
        lambda: rng.integers(low, high, size=shape, dtype=np.int64), shape, dt, requires_grad
    )


def randperm(n: int, *, generator=None, dtype=None, requires_grad=False) -> Tensor:
    dt = np.dtype(np.int64) if dtype is None else _dtype.to_numpy_dtype(dtype)
    shape, rng = _size((n,)), _rng(generator)
    return _new_from(lambda: rng.permutation(n), shape, dt, requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None) -> Tensor:
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
        shape = broadcast_shapes(np.shape(m), np.shape(s))
        dt = (mean if isinstance(mean, Tensor) else std)._data.dtype
        return _wrap((m + s * _rng(generator).standard_normal(shape)).astype(dt))
    shape, rng = _size((size,)), _rng(generator)
    return _new_from(
        lambda: mean + std * rng.standard_normal(shape), shape, _dtype._default[0].np, False
    )


def bernoulli(input: Tensor, p=None, *, generator=None) -> Tensor:
    probs = input._data if p is None else np.full(input._data.shape, p)
    return _wrap((_rng(generator).random(input._data.shape) < probs).astype(input._data.dtype))


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None):
    probs = np.atleast_2d(input._data.astype(np.float64))
    rng = _rng(generator)
    rows = [rng.choice(p.size, size=num_samples, replace=replacement, p=p / p.sum()) for p in probs]
    out = np.stack(rows).astype(np.int64)
    return _wrap(out if input._data.ndim == 2 else out[0])


# -- *_like -----------------------------------------------------------------------------


def _like_dtype(input: Tensor, dtype) -> np.dtype:
    return input._data.dtype if dtype is None else _dtype.to_numpy_dtype(dtype)


def zeros_like(
    input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
) -> Tensor:
    """Zeros with the shape (and dtype, unless given) of ``input``."""
    check_device(device)
    return _new(np.zeros, input._data.shape, _like_dtype(input, dtype), requires_grad)


def ones_like(
    input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
) -> Tensor:
    """Ones with the shape (and dtype, unless given) of ``input``."""
    check_device(device)
    return _new(np.ones, input._data.shape, _like_dtype(input, dtype), requires_grad)


def empty_like(
    input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
) -> Tensor:
    check_device(device)
    return zeros_like(input, dtype=dtype, requires_grad=requires_grad)


def full_like(
    input,
    fill_value,
    *,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
) -> Tensor:
    check_device(device)
    dt = _like_dtype(input, dtype)
    return _new_full(input._data.shape, fill_value, dt, requires_grad)


def rand_like(
    input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
) -> Tensor:
    check_device(device)
    dt = _like_dtype(input, dtype)
    rng = default_generator._rng
    return _sample(rng.random, input._data.shape, dt, requires_grad)


def randn_like(
    input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None
) -> Tensor:
    check_device(device)
    dt = _like_dtype(input, dtype)
    rng = default_generator._rng
    return _sample(rng.standard_normal, input._data.shape, dt, requires_grad)


def randint_like(input, low, high=None, *, dtype=None, requires_grad=False) -> Tensor:
    if high is None:
        low, high = 0, low
    dt, shape, rng = _like_dtype(input, dtype), input._data.shape, default_generator._rng
    return _new_from(lambda: rng.integers(low, high, size=shape), shape, dt, requires_grad)
