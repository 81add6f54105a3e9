"""The torch namespace, ``torch.<name>``: dtypes, ``Tensor``, the creation functions, the
names every op family registers, and the rest of torch's top level, each public function
wrapped for ``__torch_function__`` once the namespace is complete.

The package root re-exports it and adds what loads on first use (``nn``, ``compile``...).
Modules inside the package that call torch's public, dispatching functions (the
distributions call ``torch.lgamma``, ``torch.functional`` holds ``torch.einsum``, the
default collate stacks with ``torch.stack``, ``torch.ops`` runs ``torch.arange``) import
this module, never the package root.

Example:
    >>> import ember
    >>> from ember import _torch
    >>> _torch.add is ember.add
    True
"""

from . import _dtype, _tensor_str
from ._dtype import (
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._tensor import Size, Tensor, device
from ._tensor_str import set_printoptions
from . import autograd, _aten  # noqa: E402  (ops attach Tensor methods on import)
from ._creation import (
    Generator,
    arange,
    as_tensor,
    asarray,
    default_generator,
    empty,
    empty_like,
    eye,
    from_numpy,
    frombuffer,
    full,
    full_like,
    get_rng_state,
    initial_seed,
    linspace,
    logspace,
    manual_seed,
    multinomial,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
    tensor,
    zeros,
    zeros_like,
)
from . import special, fft  # noqa: E402
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

# The torch namespace: compat names first, so an op of the same name (searchsorted, ...)
# takes precedence; then the names each op family registered where it defines them.
from ._compat import *  # noqa: F403, E402


globals().update(_aten._core.namespace("torch"))
from ._aten.reduction import return_types  # noqa: E402
from .linalg import _top_slogdet as slogdet, det, inverse, logdet  # noqa: E402  (binds ember.linalg)
from ._aten.nn_layers import (  # noqa: E402  (torch exposes these at the top level too)
    cdist,
    channel_shuffle,
    cosine_similarity,
    native_channel_shuffle,
    pairwise_distance,
    pdist,
    pixel_shuffle,
    pixel_unshuffle,
)
from ._aten.nn_activation import celu, hardshrink, prelu, rrelu, selu, threshold  # noqa: E402
from ._lowrank import pca_lowrank, svd_lowrank  # noqa: E402
from ._tensor import LAYOUTS as _LAYOUTS, layout, strided  # noqa: E402

# torch's layouts (``t.layout``; sparse tensors are ``ember._aten.sparse``'s)
sparse_coo = _LAYOUTS["sparse_coo"]
sparse_csr = _LAYOUTS["sparse_csr"]
sparse_csc = _LAYOUTS["sparse_csc"]
sparse_bsr = _LAYOUTS["sparse_bsr"]
sparse_bsc = _LAYOUTS["sparse_bsc"]
_mkldnn = _LAYOUTS["_mkldnn"]

from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from .storage import TypedStorage, UntypedStorage, is_storage  # noqa: E402  (and Tensor.untyped_storage)


def _assert(condition, message) -> None:
    """``assert condition, message`` as a function (which ``torch.fx`` can trace).

    Example:
        >>> import ember
        >>> ember._assert(ember.tensor(True), "never shown")
    """
    if not condition:
        raise AssertionError(message)


def is_tensor(obj) -> bool:
    """True if ``obj`` is an ember Tensor.

    Example:
        >>> import ember
        >>> ember.is_tensor(ember.ones(2)), ember.is_tensor([1.0, 2.0])
        (True, False)
    """
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    """True for a floating dtype (float16, bfloat16, float32, float64, the float8 types).

    Example:
        >>> import ember
        >>> ember.is_floating_point(ember.ones(2)), ember.is_floating_point(ember.arange(2))
        (True, False)
    """
    _aten._core.require_tensor(input, "is_floating_point")
    return input.is_floating_point()


def is_complex(input: Tensor) -> bool:
    """True for a complex dtype.

    Example:
        >>> import ember
        >>> ember.is_complex(ember.ones(2, dtype=ember.complex64)), ember.is_complex(ember.ones(2))
        (True, False)
    """
    _aten._core.require_tensor(input, "is_complex")
    return input.is_complex()


def numel(input: Tensor) -> int:
    """The number of elements of ``input``.

    Example:
        >>> import ember
        >>> ember.numel(ember.zeros(2, 3))
        6
    """
    return input.numel()


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The dtype torch promotes ``type1`` and ``type2`` to.

    Example:
        >>> import ember
        >>> ember.promote_types(ember.int64, ember.float32)
        torch.float32
    """
    return _dtype.from_numpy_dtype(_aten._core.promote_types(type1.np, type2.np))


def result_type(tensor1, tensor2) -> dtype:
    """The dtype torch gives an op on ``tensor1`` and ``tensor2`` (numbers allowed).

    Example:
        >>> import ember
        >>> ember.result_type(ember.tensor([1, 2]), 1.0)
        torch.float32
    """
    return _dtype.from_numpy_dtype(_aten._core.result_type(tensor1, tensor2))


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether torch's type promotion allows casting ``from_`` to ``to`` (same kind or a
    higher one: bool < integers < floats < complex; a narrower width is allowed).

    Example:
        >>> import ember
        >>> ember.can_cast(ember.float64, ember.float32), ember.can_cast(ember.float32, ember.int32)
        (True, False)
    """
    return _CAST_RANK[from_.np.kind] <= _CAST_RANK[to.np.kind]


# torch's categories for can_cast: any width within one, or a later one (bfloat16 and the
# float8 types are NumPy "V" dtypes from ml_dtypes: floats).
_CAST_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}


# Every public function, Tensor method, operator and property dispatches through torch's
# __torch_function__ protocol (ember._overrides): the torch namespace and Tensor are wrapped
# here, when complete (nn.functional, linalg, special and fft wrap their own).
from . import _overrides as _ov  # noqa: E402
from . import _tensor  # noqa: E402

__all__ = [n for n in globals() if not n.startswith("_")]

from ._foreach import *  # noqa: E402  (torch's _foreach_* functions: per-tensor methods)
from ._foreach import __all__ as _foreach_names  # noqa: E402

_ov.install_namespace(globals(), __all__, "torch", owner="ember")
_ov.install_tensor_methods(Tensor)
_tensor._NOWRAP.update({Tensor.grad.__get__, Tensor._base.__get__})
for _name in __all__:  # torch.is_tensor's module is torch (pickle finds it there too)
    if getattr(globals()[_name], "__module__", None) == __name__:
        globals()[_name].__module__ = "ember"
del _name
__all__ += _foreach_names
