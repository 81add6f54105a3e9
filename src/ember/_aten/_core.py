"""What every op family shares: operands and torch's type promotion, argument checks with
torch's messages, ``out=``, NumPy's errors and warnings kept from users, and the registry
that makes each op reachable by its names.

An op is a declaration (``autograd.opdef.defop``) plus its public function, registered
where it is defined::

    @register("mul", "multiply", method=True, inplace=True, ufunc="multiply")
    def mul(input, other, *, out=None):
        ...

``register`` records the names; ``ember/__init__.py`` builds the torch namespace (and its
``__all__``) from them, and ``install`` attaches Tensor methods, in-place variants and
NumPy ufunc overrides once every family is imported.
"""

from __future__ import annotations

import operator
import threading

import numpy as np

from .. import _dtype
from .._alloc import from_numpy_error
from .._dtype import _BF16
from .._overrides import warn as _warn
from .._quiet import QUIET, quiet_reset, quiet_set  # NumPy's warnings off for a block
from .._tensor import (
    _UFUNCS,
    Tensor,
    _legacy_type_name,
    broadcast_error,
    broadcast_shapes,
    normalize_dim,
    normalize_dims,
)
from ..autograd.opdef import BILINEAR, COMPOSITE, ELEMENTWISE, LINEAR, apply, defop, record_result
from ..autograd.recording import _capture, as_view, cast_operand, needs_grad, record, record_multi

_PY_SCALARS = (int, float, bool, complex)

__all__ = [
    "BILINEAR",
    "COMPOSITE",
    "ELEMENTWISE",
    "LINEAR",
    "apply",
    "as_array",
    "as_view",
    "binary_operands",
    "broadcast_error",
    "broadcast_shapes",
    "default_float",
    "defop",
    "float_operand",
    "needs_grad",
    "normalize_dim",
    "normalize_dims",
    "promote_types",
    "quiet",
    "quiet_reset",
    "quiet_set",
    "record",
    "record_multi",
    "register",
    "require_tensor",
    "result_type",
    "run",
    "write_out",
]


# -- the registry ------------------------------------------------------------------------------

# namespace ("torch", "linalg", "nn.functional", ...) -> {public name: object}
_NAMESPACES: dict = {}
_METHODS: dict = {}  # Tensor attribute name -> function
_INPLACE: dict = {}  # in-place method name -> out-of-place function
_UFUNC_NAMES: dict = {}  # NumPy ufunc name -> function


def register(
    *names: str,
    namespace: str = "torch",
    method: bool | tuple = False,
    inplace: bool | tuple = False,
    ufunc: str | tuple = (),
    function: bool = True,
):
    """Make the decorated function reachable by torch's names.

    names: the public names in ``namespace`` (the first is the function's own); none
        means the function's ``__name__``.
    method: also a Tensor method under the same names (or under the given names).
    inplace: also in-place Tensor methods ``name_`` (or the given names).
    ufunc: NumPy ufunc name(s) that dispatch to it on Tensors (``np.sin(t)``).
    function: False for Tensor-only names (``Tensor.view``).

    Example:
        >>> from ember._aten._core import register
        >>> @register("my_op", function=False)
        ... def my_op(input):
        ...     return input
    """

    def decorate(fn):
        public = names or (fn.__name__,)
        if function:
            table = _NAMESPACES.setdefault(namespace, {})
            for n in public:
                table[n] = fn
        if method:
            for n in method if isinstance(method, tuple) else public:
                _METHODS[n] = fn
        if inplace:
            for n in inplace if isinstance(inplace, tuple) else public:
                _INPLACE[n if n.endswith("_") else n + "_"] = fn
        for u in (ufunc,) if isinstance(ufunc, str) else ufunc:
            _UFUNC_NAMES[u] = fn
        return fn

    return decorate


# -- C kernels for eager ops ---------------------------------------------------------------

# Set by the package root: name -> the C version of an op's array function, checked against
# the NumPy code on first use per shape (ember._compile.lowerings.eager), or None where C
# kernels cannot be built. The ops layer cannot import the compiler, which imports it.
_kernel_loader: list = [None]
_eager_kernels: dict = {}


def set_kernel_loader(loader) -> None:
    """Install the function that finds an eager op's C kernel by name (the package root's)."""
    _kernel_loader[0] = loader
    _eager_kernels.clear()


def eager_kernel(name: str):
    """The C kernel for ``name`` (a callable returning None where it does not apply), or None
    without a C compiler: loaded on first use only.

    Example:
        >>> from ember._aten._core import eager_kernel
        >>> eager_kernel("no such kernel") is None
        True
    """
    try:
        return _eager_kernels[name]
    except KeyError:
        loader = _kernel_loader[0]
        kernel = _eager_kernels[name] = None if loader is None else loader(name)
        return kernel


def with_eager_kernel(name: str, numpy_fn, *args):
    """``numpy_fn(*args)``, computed by the C kernel ``name`` instead where one applies to
    ``args`` (``eager_kernel``: a C compiler is present and the kernel agreed with the NumPy
    code on its first call).

    Example:
        >>> import numpy as np
        >>> from ember._aten._core import with_eager_kernel
        >>> with_eager_kernel("no such kernel", np.negative, np.ones(2))
        array([-1., -1.])
    """
    kernel = eager_kernel(name)
    res = None if kernel is None else kernel(*args)
    return numpy_fn(*args) if res is None else res


def register_methods(methods: dict) -> None:
    """Tensor attributes that are not public functions (dunders, properties)."""
    _METHODS.update(methods)


def namespace(name: str = "torch") -> dict:
    """The public objects registered under ``name``."""
    return dict(_NAMESPACES.get(name, {}))


def install(make_inplace) -> None:
    """Attach the registered Tensor methods, in-place variants (``make_inplace(op, name)``,
    the in-place family's: it builds on the others) and ufunc overrides."""
    for name, fn in _METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in _INPLACE.items():
        if name not in Tensor.__dict__:
            setattr(Tensor, name, make_inplace(fn, name))
    _UFUNCS.update(_UFUNC_NAMES)


# -- arguments -----------------------------------------------------------------------------------


def intp(index: np.ndarray) -> np.ndarray:
    """Index positions in NumPy's index type: ``take`` and ``bincount`` refuse int64 where
    ``intp`` is 32 bits (WebAssembly); returned as they are where it is 64 bits.

    Example:
        >>> import numpy as np
        >>> from ember._aten._core import intp
        >>> intp(np.array([1, 2], dtype=np.int64)).dtype == np.intp
        True
    """
    if _INTP_64:  # 64-bit platforms take any integer index as it is: nothing to do
        return index
    return np.asarray(index).astype(np.intp, copy=False)


_INTP_64 = np.dtype(np.intp).itemsize == 8


def require_tensor(x, fname: str, arg: str = "input", pos: int = 1) -> None:
    """torch's TypeError when an argument that must be a Tensor is not."""
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}"
        )


def as_int(x, fname: str, arg: str, pos: int = 1) -> int:
    """An int argument (bools and integer-valued NumPy scalars accepted, as torch does)."""
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(
            f"{fname}(): argument '{arg}' (position {pos}) must be int, not {type(x).__name__}"
        ) from None


def as_array(x) -> np.ndarray:
    """The ndarray behind ``x`` (a Tensor, array, or Python number/list)."""
    if isinstance(x, Tensor):
        return x._data
    return np.asarray(x)


def scalar_or_tensor(x):
    """Python numbers stay numbers (torch's 'wrapped scalars'); arrays become Tensors."""
    if isinstance(x, (Tensor, *_PY_SCALARS)):
        return x
    return Tensor._wrap(np.asarray(x))


# -- out= ---------------------------------------------------------------------------------------


def write_out(fname: str, result: Tensor, out: Tensor | None) -> Tensor:
    """torch's ``out=``: the result is written into ``out`` (resized if its shape differs,
    cast to its dtype), which is returned. Not differentiable."""
    if out is None:
        return result
    if result._rg:
        raise RuntimeError(
            f"{fname}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    if not isinstance(out, Tensor):
        raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
    data = result._data
    if out._data.shape != data.shape:
        if out._data.size:
            _warn(
                "An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(data.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You "
                "can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                "elements with t.resize_(0). (Triggered internally at "
                "/__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)",
                UserWarning,
                stacklevel=3,
            )
        out._data = np.empty(data.shape, out._data.dtype)
    if data.dtype != out._data.dtype and not np.can_cast(data.dtype, out._data.dtype, "same_kind"):
        raise RuntimeError(
            f"result type {_dtype.scalar_name(data.dtype)} can't be cast to the desired output "
            f"type {_dtype.scalar_name(out._data.dtype)}"
        )
    np.copyto(out._data, data, casting="unsafe")
    out._bump()
    return out


# -- NumPy's errors and warnings, kept from users ------------------------------------------


class _Quiet(threading.local):
    """``with quiet:`` the same, as a (reentrant) context manager for colder code. Each
    thread stacks its own tokens: a token can only be reset in the thread that made it, and
    blocks of different threads do not end in the order they began."""

    def __init__(self) -> None:
        self.tokens: list = []

    def __enter__(self):
        self.tokens.append(quiet_set(QUIET))

    def __exit__(self, *exc) -> None:
        quiet_reset(self.tokens.pop())


quiet = _Quiet()


def run(cls, inputs: tuple, arrays: tuple, params: tuple = ()):
    """``cls.forward`` on the arrays, recorded for ``inputs``: NumPy's floating-point
    warnings off and its broadcasting error turned into torch's."""
    token = quiet_set(QUIET)
    try:
        res = cls.forward(list(arrays), *params) if cls._variadic else cls.forward(*arrays, *params)
        # (_BF16 is empty until ember.bfloat16 is first made: free for everyone else)
        if _BF16 and arrays and type(arrays[0]) is np.ndarray and arrays[0].dtype.kind == "V":
            res = _bfloat16_forward(cls, arrays, params, res)
    except ValueError:
        raise broadcast_error(*(np.shape(a) for a in arrays)) from None
    except MemoryError as e:  # torch's allocator error (RuntimeError), with the byte count
        raise from_numpy_error(e) from None
    finally:
        quiet_reset(token)
    if cls._multi_output or cls._saves:
        return record_result(cls, res, inputs, params)
    return record(cls, res, inputs, params)


def _bfloat16_forward(cls, arrays: tuple, params: tuple, res):
    """A bfloat16 op's result as torch computes it: in float32, rounded once. ``res`` (from
    the bfloat16 arrays, where ml_dtypes rounds each step of a composite op) gives the dtypes;
    the values come from the same forward on float32 copies."""
    f32 = np.dtype(np.float32)
    up = [a.astype(f32) if getattr(a, "dtype", None) is not None and a.dtype.kind == "V" else a
          for a in arrays]  # fmt: skip
    exact = cls.forward(up, *params) if cls._variadic else cls.forward(*up, *params)

    def pick(native, value):
        if type(native) is np.ndarray and native.dtype.kind == "V":
            if getattr(value, "dtype", None) == f32 and np.shape(value) == native.shape:
                return np.asarray(value).astype(native.dtype)
        return native

    if type(res) is tuple and type(exact) is tuple and len(res) == len(exact):
        return tuple(pick(n, v) for n, v in zip(res, exact))
    return pick(res, exact)


# -- operands and torch's type promotion ---------------------------------------------------


def _group_type(x):
    """(group, numpy dtype) of an operand for torch's promotion: 0 dim, 1 zero-dim, 2 scalar."""
    if isinstance(x, Tensor):
        d = x._data
        return (0 if d.ndim else 1), d.dtype
    if isinstance(x, np.ndarray):
        return (0 if x.ndim else 1), x.dtype
    if isinstance(x, bool):
        return 2, np.dtype(np.bool_)
    if isinstance(x, int):
        return 2, np.dtype(np.int64)
    if isinstance(x, float):
        return 2, _dtype._default[0].np
    if isinstance(x, complex):
        return 2, np.dtype(np.complex64 if _dtype._default[0].np == np.float32 else np.complex128)
    if isinstance(x, np.generic):
        return 1, x.dtype
    raise TypeError(f"unsupported operand type: {type(x).__name__}")


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch.promote_types on NumPy dtypes (differs from NumPy for float16 with integers)."""
    if a == b:
        return a
    ka, kb = a.kind, b.kind
    # (the kind first: only unsigned operands pay for the set lookup)
    if (ka == "u" or kb == "u") and (a in _dtype.UNSIGNED_SHELL or b in _dtype.UNSIGNED_SHELL):
        raise RuntimeError(
            "Promotion for uint16, uint32, uint64 types is not supported, attempted to "
            f"promote {_dtype.scalar_name(a)} and {_dtype.scalar_name(b)}"
        )
    if ka == "V" or kb == "V":
        return _promote_bf16(a, b)
    if ka in "fc" and kb in "biu":
        return a
    if kb in "fc" and ka in "biu":
        return b
    return np.promote_types(a, b)


def _promote_bf16(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch's promotion with bfloat16: it outranks bool/integers, meets float16 at float32."""
    ka, kb = _dtype.kind(a), _dtype.kind(b)
    if ka in "fc" and kb in "biu":
        return a
    if kb in "fc" and ka in "biu":
        return b
    if a.kind == "V" and b.kind == "V":
        return a
    other = b if a.kind == "V" else a
    if other == np.float16:
        return np.dtype(np.float32)
    return other


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    kh, kl = higher.kind, lower.kind
    if kh == "V" or kl == "V":
        kh, kl = _dtype.kind(higher), _dtype.kind(lower)
    if kh == "c":
        return higher
    if kl == "c":
        if kh == "f":
            return np.promote_types(higher, np.complex64)
        return lower
    if kh == "f":
        return higher
    if kh == "b" or kl == "f":
        return promote_types(higher, lower)
    return higher


def result_type(*operands) -> np.dtype:
    """The dtype torch gives ``op(*operands)``: dimensioned tensors outrank 0-d ones,
    which outrank Python scalars, unless a lower group has a higher category."""
    groups = [None, None, None]
    for x in operands:
        g, dt = _group_type(x)
        groups[g] = dt if groups[g] is None else promote_types(groups[g], dt)
    return _combine(groups[0], _combine(groups[1], groups[2]))


def binary_operands(x, y):
    """Raw operands for a NumPy binary op whose result has torch's dtype."""
    # Fast paths cover the common cases where NumPy's own promotion already agrees.
    tx, ty = type(x), type(y)
    if tx is Tensor:
        a = x._data
        if ty is Tensor:
            b = y._data
            if a.dtype is b.dtype or a.dtype == b.dtype:
                return a, b
        elif ty is float:
            if a.dtype.kind in "fc":
                return a, y
        elif ty is int:
            if a.dtype.kind in "fiuc" and a.dtype != np.uint8:
                return a, y
    elif ty is Tensor:
        b = y._data
        if tx is float:
            if b.dtype.kind in "fc":
                return x, b
        elif tx is int:
            if b.dtype.kind in "fiuc" and b.dtype != np.uint8:
                return x, b
    return _promoted(x, y)


def _promoted(x, y):
    if not isinstance(x, (Tensor, np.ndarray, np.generic, *_PY_SCALARS)):
        x = np.asarray(x)
    if not isinstance(y, (Tensor, np.ndarray, np.generic, *_PY_SCALARS)):
        y = np.asarray(y)
    rt = result_type(x, y)
    a, b = _cast(x, rt), _cast(y, rt)
    if _capture:  # the compiler replays the op on the tensors' own arrays: it casts them
        for t, arr in ((x, a), (y, b)):
            if isinstance(t, Tensor):
                cast_operand(t, arr)
    return a, b


def _cast(x, dt: np.dtype):
    if isinstance(x, Tensor):
        x = x._data
    if isinstance(x, (np.ndarray, np.generic)):
        return x if x.dtype == dt else x.astype(dt)
    return np.asarray(x, dtype=dt)


def default_float() -> np.dtype:
    return _dtype._default[0].np


def float_operand(a: np.ndarray) -> np.ndarray:
    """Integer/bool inputs to float functions (sin, exp, mean, ...) become the default dtype."""
    if a.dtype.kind in "fcV":
        return a
    return a.astype(_dtype._default[0].np)


def is_raw(g) -> bool:
    """True for a gradient in a plain backward (an array or NumPy scalar), False for a
    Tensor (the backward is being recorded)."""
    return not isinstance(g, Tensor)


def legacy_type_name(np_dtype) -> str:
    """``torch.FloatTensor`` and friends, for torch's messages."""
    return _legacy_type_name(np_dtype)
