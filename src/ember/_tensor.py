"""The Tensor: an ndarray plus autograd metadata, with PyTorch's API.

Operations live in ``ember._aten``; each op module attaches its Tensor methods through
``register_methods`` so this class stays a thin container.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtype, _overrides, _tensor_str
from ._dtype import dtype as _dtype_cls
from ._meta import NO_DATA, MetaArray
from ._mode import state as _state
from ._overrides import warn as _warn

_new = object.__new__

_LEGACY_NAMES = {k: f"torch.{v}Tensor" for k, v in _dtype.SCALAR_NAMES.items()}


def _legacy_type_name(np_dtype) -> str:
    return _LEGACY_NAMES[np.dtype(np_dtype).name]


INFERENCE_INPLACE_MSG = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)
INFERENCE_SAVE_MSG = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)


def normalize_dim(dim: int, ndim: int) -> int:
    """Wrap a negative dim; torch's IndexError when out of range."""
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def normalize_dims(dim, ndim: int) -> tuple:
    """Normalised dims of an int, a tuple/list (no repeats), or None (all of them)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        out = tuple(normalize_dim(d, ndim) for d in dim)
        if len(set(out)) != len(out):
            raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
        return out
    return (normalize_dim(dim, ndim),)


def broadcast_error(*shapes) -> RuntimeError:
    """torch's error for shapes that do not broadcast (the last mismatching dim is named)."""
    shape = tuple(shapes[0])
    for other in shapes[1:]:
        other = tuple(other)
        n = max(len(shape), len(other))
        a = (1,) * (n - len(shape)) + shape
        b = (1,) * (n - len(other)) + other
        for k in range(n - 1, -1, -1):
            if a[k] != b[k] and a[k] != 1 and b[k] != 1:
                return RuntimeError(
                    f"The size of tensor a ({a[k]}) must match the size of tensor b ({b[k]}) "
                    f"at non-singleton dimension {k}"
                )
        shape = tuple(max(x, y) if min(x, y) != 0 else 0 for x, y in zip(a, b))
    return RuntimeError("shape mismatch")


def broadcast_shapes(*shapes) -> tuple:
    """The broadcast of ``shapes``, with torch's error when there is none."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise broadcast_error(*shapes) from None


class Size(tuple):
    """``tensor.shape``: a tuple that prints as ``torch.Size([2, 3])``.

    Example:
        >>> import ember
        >>> s = ember.zeros(2, 3).shape
        >>> s, s[1], s.numel(), s == (2, 3)
        (torch.Size([2, 3]), 3, 6, True)
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


def _false_property(what: str) -> property:
    """A ``Tensor.is_<what>`` predicate of torch's that no ember tensor satisfies."""

    def get(self) -> bool:
        return False

    get.__name__ = f"is_{what}"
    get.__doc__ = (
        f"False: ember tensors are never {what} tensors.\n\n"
        "Example:\n"
        "    >>> import ember\n"
        f"    >>> ember.zeros(2).is_{what}\n"
        "    False\n"
    )
    return property(get, doc=get.__doc__)


class TensorAux:
    """Rarely used per-tensor state, allocated only for tensors that need it."""

    __slots__ = (
        "hooks",
        "post_accumulate_hooks",
        "accumulator",
        "retains_grad",
        "base",
        "name",
        "tangent",  # forward AD: the tangent at the current dual level (autograd.forward_ad)
        # A view made in no_grad mode of a tensor that requires grad: the grad_fn name of
        # the view of it modified in place ("" for the view itself), else None.
        "no_grad_view",
        # A view's version counter when its grad_fn was made: a write through another alias
        # since then (the counter moved) makes the next use regenerate it (graph.edge_of).
        "fn_version",
    )

    def __init__(self) -> None:
        self.hooks = None
        self.post_accumulate_hooks = None
        self.accumulator = None
        self.retains_grad = False
        self.base = None
        self.name = None
        self.tangent = None
        self.no_grad_view = None
        self.fn_version = 0


class Tensor:
    """A multi-dimensional array that can record operations for automatic differentiation.

    Example:
        >>> import ember
        >>> x = ember.ones(2, 2, requires_grad=True)
        >>> y = (x + 2).mean()
        >>> y.backward()
        >>> x.grad
        tensor([[0.2500, 0.2500],
                [0.2500, 0.2500]])
    """

    __slots__ = {  # name: docstring (the public one's shows in help() and the docs)
        "_data": "the values (a NumPy array, or a sparse layout's arrays)",
        "_rg": "requires_grad, for leaves",
        "grad_fn": """The node of the graph that made this tensor (None for leaves).

        Example:
            >>> import ember
            >>> x = ember.ones(2, requires_grad=True)
            >>> x.grad_fn is None, (x * 2).grad_fn.name()
            (True, 'MulBackward0')
        """,
        "_output_nr": "which output of grad_fn this tensor is",
        "_vc": "the version counter, shared by views ([count]; None in inference mode)",
        "_grad": "the accumulated gradient",
        "_aux": "rarely used state (forward-mode tangents, hooks, names...)",
        "__weakref__": None,
    }
    # Make NumPy defer to Tensor in mixed expressions such as ``ndarray * Tensor``.
    __array_priority__ = 1000

    def __init__(self, *args, **kwargs) -> None:
        # Legacy constructor: Tensor(2, 3) is uninitialised of that size, Tensor(data) copies.
        if len(args) == 1 and not isinstance(args[0], int):
            data = np.array(_to_array_input(args[0]), dtype=_dtype._default[0].np)
        else:
            shape = args[0] if len(args) == 1 and isinstance(args[0], tuple) else args
            data = np.zeros(tuple(shape), dtype=_dtype._default[0].np)
        self._data = data
        self._rg = False
        self.grad_fn = None
        self._output_nr = 0
        self._vc = None if _state.inference else [0]
        self._grad = None
        self._aux = None

    @staticmethod
    def _wrap(data: np.ndarray) -> Tensor:
        t = _new(Tensor)
        t._data = data
        t._rg = False
        t.grad_fn = None
        t._output_nr = 0
        # Inference tensors (made in inference_mode) have no version counter.
        t._vc = None if _state.inference else [0]
        t._grad = None
        t._aux = None
        if WRAP_HOOKS:  # ember.compile's capture notes tensors made outside the declared ops
            for hook in WRAP_HOOKS:
                hook(t)
        return t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """The default protocol method (torch's): run ``func`` without dispatching to
        subclasses, then give tensor results this subclass's type.

        Example:
            >>> import ember
            >>> class Tagged(ember.Tensor):
            ...     pass
            >>> t = ember.ones(2).as_subclass(Tagged)
            >>> type(t + 1).__name__
            'Tagged'
        """
        if kwargs is None:
            kwargs = {}
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with _overrides.DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
            if func in _NOWRAP:
                return ret
            return _convert(ret, cls)

    @staticmethod
    def _make_subclass(cls, data: Tensor, require_grad: bool = False, **kwargs) -> Tensor:
        """A ``cls`` instance sharing ``data``'s storage and version counter, a leaf
        (torch's ``Tensor._make_subclass``, used by Parameter-like subclasses)."""
        t = _new(cls)
        t._data = data._data
        t._rg = False
        t.grad_fn = None
        t._output_nr = 0
        t._vc = data._vc
        t._grad = None
        t._aux = None
        if require_grad:
            t.requires_grad_(True)
        return t

    @staticmethod
    def _make_result(data: np.ndarray, node) -> Tensor:
        t = Tensor._wrap(data)
        t.grad_fn = node
        t._rg = True
        return t

    def _aux_(self) -> TensorAux:
        aux = self._aux
        if aux is None:
            self._aux = aux = TensorAux()
        return aux

    # -- autograd attributes ------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        """Whether autograd records operations on this tensor (settable on leaves).

        Example:
            >>> import ember
            >>> x = ember.ones(2, requires_grad=True)
            >>> x.requires_grad, (x * 2).requires_grad, ember.ones(2).requires_grad
            (True, True, False)
        """
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        value = bool(value)
        if value and self._data.dtype.kind not in "fcV":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._rg = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place and return self.

        Example:
            >>> import ember
            >>> ember.zeros(2).requires_grad_().requires_grad
            True
        """
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if self.grad_fn is None:
            self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        """True for a tensor no recorded operation made (it has no ``grad_fn``): only leaves
        get ``.grad`` filled by ``backward``.

        Example:
            >>> import ember
            >>> x = ember.ones(2, requires_grad=True)
            >>> x.is_leaf, (x * 2).is_leaf
            (True, False)
        """
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        """The gradient ``backward`` accumulated into this leaf (None until then).

        Example:
            >>> import ember
            >>> x = ember.tensor([1.0, 2.0], requires_grad=True)
            >>> (x * x).sum().backward()
            >>> x.grad
            tensor([2., 4.])
        """
        if self.grad_fn is not None and not (self._aux is not None and self._aux.retains_grad):
            _warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead. See "
                "github.com/pytorch/pytorch/pull/30531 for more informations. (Triggered "
                "internally at /pytorch/build/aten/src/ATen/core/TensorBody.h:494.)",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            dt = value._data.dtype
            if dt != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_dtype.cpp_name(dt)}' to a "
                    f"tensor with grad_dtype '{_dtype.scalar_name(self._data.dtype)}'. The "
                    "gradient must match the tensor's grad_dtype (defaults to the tensor's "
                    "dtype). You can set the tensor's grad_dtype attribute with a specific "
                    "dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging "
                    "the dtypes of a tensor and its gradient may break downstream systems that "
                    "assume they match."
                )
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                    f"tensor of size '{list(self._data.shape)}'. Please ensure that the "
                    "gradient and the tensor are the same size"
                )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def data(self) -> Tensor:
        """The same storage as a tensor outside autograd: changes to it are not recorded.

        Example:
            >>> import ember
            >>> x = ember.ones(2, requires_grad=True)
            >>> _ = x.data.mul_(3); x.data.requires_grad, x
            (False, tensor([3., 3.], requires_grad=True))
        """
        t = Tensor._wrap(self._data)
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)

    @property
    def _version(self) -> int:
        """How many in-place changes this tensor's storage has seen (torch's ``_version``)."""
        if self._vc is None:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc[0]

    _version_ = _version

    def is_inference(self) -> bool:
        """True for a tensor made in ``inference_mode`` (or a view of one).

        Example:
            >>> import ember
            >>> with ember.inference_mode():
            ...     x = ember.ones(2)
            >>> x.is_inference()
            True
        """
        return self._vc is None

    def _bump(self) -> None:
        """Count an in-place change in the version counter (saved-tensor checks read it)."""
        v = self._vc
        if v is not None:
            v[0] += 1
        elif not _state.inference:
            raise RuntimeError(INFERENCE_INPLACE_MSG)
        if BUMP_HOOKS:  # ember.compile's capture: an in-place change inside the region
            for hook in BUMP_HOOKS:
                hook(self)

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf tensor whose ``.grad`` ``retain_grad()`` asked to keep.

        Example:
            >>> import ember
            >>> x = ember.ones(2, requires_grad=True); y = x * 2
            >>> y.retain_grad(); y.retains_grad, x.retains_grad
            (True, False)
        """
        return self._aux is not None and self._aux.retains_grad

    @property
    def output_nr(self) -> int:
        """This tensor's index among the outputs of the operation that made it.

        Example:
            >>> import ember
            >>> a, b = ember.ones(4, requires_grad=True).split(2)
            >>> a.output_nr, b.output_nr
            (0, 1)
        """
        return self._output_nr

    @property
    def _base(self) -> Tensor | None:
        return None if self._aux is None else self._aux.base

    @property
    def name(self):
        """The tensor's name: None (torch names only some internal tensors).

        Example:
            >>> import ember
            >>> ember.ones(2).name is None
            True
        """
        return None if self._aux is None else self._aux.name

    def detach(self) -> Tensor:
        """A tensor sharing storage (and version counter) that is not part of the graph.

        Example:
            >>> import ember
            >>> ember.ones(2, requires_grad=True).detach().requires_grad
            False
        """
        t = Tensor._wrap(self._data)
        t._vc = self._vc
        return t

    def detach_(self) -> Tensor:
        """Detach this tensor from the graph in place, making it a leaf.

        Example:
            >>> import ember
            >>> y = ember.ones(2, requires_grad=True) * 2
            >>> y.detach_().is_leaf, y.requires_grad
            (True, False)
        """
        self.grad_fn = None
        self._rg = False
        self._output_nr = 0
        return self

    # -- metadata -----------------------------------------------------------------

    @property
    def shape(self) -> Size:
        """The size of each dimension, a ``torch.Size`` (``size()`` gives it too).

        Example:
            >>> import ember
            >>> ember.zeros(2, 3).shape
            torch.Size([2, 3])
        """
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        """The shape as ``torch.Size``, or the length of one dimension.

        Example:
            >>> import ember
            >>> t = ember.zeros(2, 3)
            >>> t.size(), t.size(-1)
            (torch.Size([2, 3]), 3)
        """
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[normalize_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        """The number of dimensions (``ndimension`` and ``ndim`` are the same).

        Example:
            >>> import ember
            >>> t = ember.zeros(2, 3)
            >>> t.dim(), t.ndimension()
            (2, 2)
        """
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        """The number of dimensions, as ``dim()``.

        Example:
            >>> import ember
            >>> ember.zeros(2, 3).ndim, ember.tensor(1.0).ndim
            (2, 0)
        """
        return self._data.ndim

    def numel(self) -> int:
        """The number of elements (``nelement`` is the same).

        Example:
            >>> import ember
            >>> t = ember.zeros(2, 3)
            >>> t.numel(), t.nelement()
            (6, 6)
        """
        return self._data.size

    nelement = numel

    @property
    def dtype(self) -> _dtype_cls:
        """The element type.

        Example:
            >>> import ember
            >>> ember.ones(2).dtype, ember.tensor([1, 2]).dtype
            (torch.float32, torch.int64)
        """
        return _dtype.from_numpy_dtype(self._data.dtype)

    @property
    def device(self) -> device:
        """Where the tensor lives: the CPU, or ``meta`` for a tensor without data.

        Example:
            >>> import ember
            >>> ember.ones(2).device, ember.ones(2, device="meta").device
            (device(type='cpu'), device(type='meta'))
        """
        return _META if type(self._data) is MetaArray else _CPU

    @property
    def is_cuda(self) -> bool:
        """False: ember has no CUDA tensors.

        Example:
            >>> import ember
            >>> ember.ones(2).is_cuda
            False
        """
        return False

    @property
    def is_sparse(self) -> bool:
        """Whether this is a sparse COO tensor: False for dense tensors (sparse ones are
        ``ember._aten.sparse.SparseTensor``, which answers True).

        Example:
            >>> import ember
            >>> ember.eye(2).is_sparse, ember.eye(2).to_sparse().is_sparse
            (False, True)
        """
        return False

    # torch's other device and layout predicates: properties, all False on a CPU build
    # but ``is_cpu``; ``is_pinned``, ``is_shared`` and ``is_distributed`` are methods.
    @property
    def is_cpu(self) -> bool:
        """True for a tensor in host memory (every one but meta tensors).

        Example:
            >>> import ember
            >>> ember.zeros(1).is_cpu, ember.zeros(1).is_meta
            (True, False)
        """
        return type(self._data) is not MetaArray

    @property
    def is_meta(self) -> bool:
        """True for a tensor on the ``meta`` device: a shape and a dtype, no data.

        Example:
            >>> import ember
            >>> ember.zeros(1, device="meta").is_meta, ember.zeros(1).is_meta
            (True, False)
        """
        return type(self._data) is MetaArray

    is_xpu = _false_property("xpu")
    is_mps = _false_property("mps")
    is_ipu = _false_property("ipu")
    is_mkldnn = _false_property("mkldnn")
    is_vulkan = _false_property("vulkan")
    is_maia = _false_property("maia")
    is_mtia = _false_property("mtia")
    is_xla = _false_property("xla")
    is_nested = _false_property("nested")
    is_quantized = _false_property("quantized")
    is_sparse_csr = _false_property("sparse_csr")

    def is_pinned(self, device=None) -> bool:
        """False: no accelerator, so no page-locked memory.

        Example:
            >>> import ember
            >>> ember.zeros(2).is_pinned()
            False
        """
        return False

    def is_distributed(self) -> bool:
        """False, as for every torch tensor outside the legacy THD backend.

        Example:
            >>> import ember
            >>> ember.zeros(2).is_distributed()
            False
        """
        return False

    @property
    def layout(self) -> layout:
        """How the elements are stored: ``torch.strided`` for dense tensors, ``torch.sparse_coo``
        or ``torch.sparse_csr`` for sparse ones.

        Example:
            >>> import ember
            >>> ember.zeros(2).layout
            torch.strided
        """
        return strided

    def is_floating_point(self) -> bool:
        """True for a floating dtype (float16, bfloat16, float32, float64, the float8 types).

        Example:
            >>> import ember
            >>> ember.ones(2).is_floating_point(), ember.arange(2).is_floating_point()
            (True, False)
        """
        return self._data.dtype.kind in "fV"

    def is_complex(self) -> bool:
        """True for a complex dtype.

        Example:
            >>> import ember
            >>> ember.ones(2, dtype=ember.complex64).is_complex(), ember.ones(2).is_complex()
            (True, False)
        """
        return self._data.dtype.kind == "c"

    def element_size(self) -> int:
        """The size of one element in bytes.

        Example:
            >>> import ember
            >>> ember.ones(2).element_size(), ember.ones(2, dtype=ember.float64).element_size()
            (4, 8)
        """
        return self._data.itemsize

    def stride(self, dim: int | None = None):
        """The step in elements between neighbours along each dimension (or ``dim``).

        Example:
            >>> import ember
            >>> t = ember.zeros(2, 3)
            >>> t.stride(), t.t().stride(), t.stride(0)
            ((3, 1), (1, 3), 3)
        """
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[dim]

    def is_contiguous(self, memory_format=None) -> bool:
        """True when the elements are laid out in row-major order without gaps; with
        ``memory_format=torch.channels_last`` (4-d) or ``channels_last_3d`` (5-d), in that
        order with the channels innermost (NHWC).

        Example:
            >>> import ember
            >>> t = ember.zeros(2, 3)
            >>> t.is_contiguous(), t.t().is_contiguous()
            (True, False)
            >>> ember.zeros(2, 4, 4, 3).permute(0, 3, 1, 2).is_contiguous(
            ...     memory_format=ember.channels_last)
            True
        """
        data = self._data
        ndim = _CHANNELS_LAST_NDIM.get(getattr(memory_format, "_name", None))
        if ndim is None:
            return bool(data.flags.c_contiguous)
        if data.ndim != ndim:
            return False
        return bool(np.moveaxis(data, 1, -1).flags.c_contiguous)

    def data_ptr(self) -> int:
        """The address of the first element (views into one tensor point inside it).

        Example:
            >>> import ember
            >>> t = ember.zeros(3, 4)
            >>> t[1, 1].data_ptr() - t.data_ptr() == 5 * t.element_size()
            True
        """
        if type(self._data) is MetaArray:
            return 0  # (torch's, for a tensor without storage data)
        return self._data.__array_interface__["data"][0]

    def type(self, dtype=None):
        if dtype is None:
            return _legacy_type_name(self._data.dtype)
        return self.to(dtype)

    def cpu(self) -> Tensor:
        """This tensor on the CPU: itself, as ember tensors are there already (a meta
        tensor has no data to copy: torch's NotImplementedError).

        Example:
            >>> import ember
            >>> t = ember.ones(2)
            >>> t.cpu() is t
            True
        """
        if type(self._data) is MetaArray:
            raise NotImplementedError(NO_DATA)
        return self

    def get_device(self) -> int:
        """The CUDA device index; -1 for a CPU tensor (every ember tensor).

        Example:
            >>> import ember
            >>> ember.ones(2).get_device()
            -1
        """
        return -1

    # -- conversion to Python / NumPy ---------------------------------------------

    def item(self):
        """The value of a one-element tensor as a Python number.

        Example:
            >>> import ember
            >>> ember.tensor([2.5]).item()
            2.5
        """
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.reshape(()).item()

    def tolist(self):
        """Nested Python lists of the values (a number for a 0-d tensor).

        Example:
            >>> import ember
            >>> ember.tensor([[1, 2], [3, 4]]).tolist(), ember.tensor(2.5).tolist()
            ([[1, 2], [3, 4]], 2.5)
        """
        return self._data.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The ndarray behind this tensor (shared memory).

        Example:
            >>> import ember
            >>> ember.ones(2).numpy()
            array([1., 1.], dtype=float32)
        """
        if self._rg and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if type(self._data) is MetaArray:
            raise TypeError(_META_NUMPY)
        return self._data

    def __array__(self, dtype=None, copy=None):
        if type(self._data) is MetaArray:
            raise TypeError(_META_NUMPY)
        if dtype is None:
            return self._data
        return self._data.astype(dtype)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
                if self._data.size > 1
                else "Boolean value of Tensor with no values is ambiguous"
            )
        return bool(self._data.reshape(()).item())

    def _python_scalar(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self._data.reshape(()).item()

    def __float__(self) -> float:
        return float(self._python_scalar())

    def __int__(self) -> int:
        return int(self._python_scalar())

    def __complex__(self) -> complex:
        return complex(self._python_scalar())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._data, self._rg))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment.  If you were attempting to deepcopy a "
                "module, this may be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001"
            )
        t = type(self).__new__(type(self))
        Tensor.__init__(t, 0)
        t._data = self._data.copy()
        t._rg = self._rg
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t

    # -- printing -----------------------------------------------------------------

    def __repr__(self, *, tensor_contents=None) -> str:
        suffixes = []
        if self._aux is not None and self._aux.tangent is not None:
            suffixes.append(f"tangent={self._aux.tangent!r}")
        if self.grad_fn is not None:
            suffixes.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self._rg:
            suffixes.append("requires_grad=True")
        kind = type(self)
        prefix = None if kind is Tensor or kind.__name__ == "Parameter" else kind.__name__
        return _tensor_str.format_tensor(self._data, suffixes, prefix)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0 and type(self._data) is not MetaArray:
            return self._data.item().__format__(spec)
        return object.__format__(self, spec)

    # -- NumPy interoperability ---------------------------------------------------

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # Lets ``ndarray <op> Tensor`` and np.<ufunc>(Tensor) produce recorded Tensors.
        if method != "__call__" or kwargs.get("out") is not None:
            return NotImplemented
        fn = _UFUNCS.get(ufunc.__name__)
        if fn is None:
            return NotImplemented
        args = [x if isinstance(x, Tensor) else _as_operand(x) for x in inputs]
        return fn(*args)


# Hooks of ember.compile's capture (lists, empty unless a capture runs: the test is free):
# called with each tensor ``Tensor._wrap`` makes, and each tensor changed in place.
WRAP_HOOKS: list = []
BUMP_HOOKS: list = []


def _convert(ret, cls):
    """``ret`` with its tensors (in lists, tuples, named tuples) of class ``cls``."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        if type(ret._data) in DATA_CLASSES:  # sparse data: its own class does the dispatch
            return ret
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        kind = type(ret)
        if hasattr(kind, "_make"):  # a named tuple
            return kind._make(items)
        try:
            return kind(items)
        except TypeError:  # a structseq-like tuple built from positional items
            return kind(*items)
    return ret


# Functions whose results Tensor.__torch_function__ leaves as they are (torch's
# get_default_nowrap_functions: the getters of ._base and .grad).
_NOWRAP: set = set()


def _as_operand(x):
    if isinstance(x, np.ndarray):
        return Tensor._wrap(x)
    return x


def _rebuild(data, requires_grad):
    t = Tensor._wrap(data)
    t._rg = requires_grad
    return t


def _to_array_input(x):
    if isinstance(x, Tensor):
        return x._data
    return x


_DEVICE_TYPES = (
    "cpu",
    "cuda",
    "ipu",
    "xpu",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "hip",
    "ve",
    "fpga",
    "maia",
    "xla",
    "lazy",
    "vulkan",
    "mps",
    "meta",
    "hpu",
    "mtia",
    "privateuseone",
)


class device:
    """A device description, as ``torch.device``. Any type can be named; tensors live on
    the CPU only, and asking for another device raises torch's CPU-build error.

    Example:
        >>> import ember
        >>> ember.device("cuda:1")
        device(type='cuda', index=1)
    """

    __slots__ = ("type", "index")

    def __init__(self, type: str = "cpu", index: int | None = None) -> None:
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int):
            type, index = "cuda", type
        kind, _, number = type.partition(":")
        if kind not in _DEVICE_TYPES:
            raise RuntimeError(
                "Expected one of " + ", ".join(_DEVICE_TYPES) + " device type at start of "
                f"device string: {type}"
            )
        self.type = kind
        self.index = int(number) if number else index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __enter__(self) -> device:
        """``with torch.device(d):`` makes ``d`` the default device of the tensors created
        inside (as ``set_default_device``), restoring the previous default on exit."""
        _entered_devices.append(DEFAULT_DEVICE[0])
        DEFAULT_DEVICE[0] = self
        return self

    def __exit__(self, *exc) -> None:
        DEFAULT_DEVICE[0] = _entered_devices.pop()


_CPU = device("cpu")
# memory formats with the channels innermost, and the number of dims each applies to
_CHANNELS_LAST_NDIM = {"channels_last": 4, "channels_last_3d": 5}
_META = device("meta")
_META_NUMPY = (
    "can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
    "host memory first."
)
# The default device of factories called without one (set_default_device, ``with device``);
# None means the CPU. The defaults that ``with device(...)`` blocks replaced, innermost last.
DEFAULT_DEVICE: list = [None]
_entered_devices: list = []


class layout:
    """A memory layout, as ``torch.layout``: ``torch.strided`` (dense), ``torch.sparse_coo``,
    ``torch.sparse_csr`` ... (one object per layout, compared by identity).

    Example:
        >>> import ember
        >>> ember.sparse_coo, ember.zeros(1).layout is ember.strided
        (torch.sparse_coo, True)
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self):
        return (_layout_named, (self._name,))


def _layout_named(name: str) -> layout:
    return LAYOUTS[name]


LAYOUTS = {
    n: layout(n)
    for n in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc")
}
LAYOUTS["_mkldnn"] = layout("_mkldnn")
strided = LAYOUTS["strided"]

# Tensor data that is not an ndarray (sparse tensors' index and value arrays), by its type:
# the Tensor subclass that holds it. Filled by the op families that define such data; the
# engine and the recorder ask this (autograd knows no op) on their rare non-ndarray paths.
DATA_CLASSES: dict = {}
# Meta tensors' data (a MetaArray: an ndarray subclass without values) is kept as it is
# wherever an op's result would be turned into a plain ndarray.
DATA_CLASSES[MetaArray] = Tensor


def wrap_data(data) -> Tensor:
    """A Tensor of ``data``: an ndarray, or one of ``DATA_CLASSES``' kinds (its subclass)."""
    t = Tensor._wrap(data)
    cls = DATA_CLASSES.get(type(data))
    if cls is not None:
        t.__class__ = cls
    return t


def check_device(dev) -> bool | None:
    """Accept the CPU (None) and ``meta`` (True: the caller makes a tensor without data);
    any other device fails as in a CPU-only torch build. ``None`` means the default device
    (``set_default_device``, ``with torch.device(...)``)."""
    if dev is None:
        dev = DEFAULT_DEVICE[0]
    if dev is None or dev == "cpu" or dev is _CPU:
        return None
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "cpu":
        return None
    if d.type == "meta":
        return True
    if d.type == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    raise RuntimeError(f"ember computes on the CPU only; device '{d}' is not available")


# NumPy ufunc name -> ember function; filled by the op modules.
_UFUNCS: dict = {}


def register_methods(methods: dict, ufuncs: dict | None = None) -> None:
    """Attach op functions as Tensor methods (called by each ``ember._aten`` module)."""
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    if ufuncs:
        _UFUNCS.update(ufuncs)


# Never overriding: the wrappers' fast path (_overrides) lets these through untouched.
for _kind in (Tensor, Size, device, layout):
    _overrides.plain_type(_kind)
