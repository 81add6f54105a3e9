"""Sparse tensors: torch's COO and CSR layouts.

A sparse tensor is a Tensor (of the subclass ``SparseTensor``) whose data is not an ndarray
but the layout's arrays: ``CooData`` (``indices``, int64 of shape ``(sparse_dim, nnz)``, and
``values``, of shape ``(nnz, *dense_shape)``) or ``CsrData`` (``crow_indices``,
``col_indices``, ``values``). Products go through SciPy's sparse arrays (compressed rows,
built once per data object); gradients follow torch: the gradient of a sparse tensor is
sparse, with the pattern of the tensor (coalesced), and dense operands get dense gradients.

Every function that meets a sparse tensor dispatches on it through ``__torch_function__``:
``SparseTensor.__torch_function__`` runs the sparse implementation registered under the
function's name (``_SPARSE``), passes through what is layout-free (``shape``, ``backward``,
``requires_grad_``...), and raises torch's "Could not run 'aten::<op>' with arguments from
the 'SparseCPU' backend" for the rest.

Example:
    >>> import ember
    >>> i = ember.tensor([[0, 1, 1], [2, 0, 2]])
    >>> s = ember.sparse_coo_tensor(i, ember.tensor([3.0, 4.0, 5.0]), (2, 3))
    >>> s.to_dense()
    tensor([[0., 0., 3.],
            [4., 0., 5.]])
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import _dtype, _overrides, _tensor_str
from .._creation import tensor as _tensor_of
from .._tensor import DATA_CLASSES, LAYOUTS, Tensor, _legacy_type_name, check_device, wrap_data
from ..autograd.opdef import defop
from ..autograd.recording import record
from . import reduction as _red
from ._core import as_int, intp, register, require_tensor
from ._core import quiet as _quiet

_COO = LAYOUTS["sparse_coo"]
_CSR = LAYOUTS["sparse_csr"]
_STRIDED = LAYOUTS["strided"]


def _sp():
    """SciPy's sparse module, imported on first use (NumPy alone imports ember)."""
    import scipy.sparse

    return scipy.sparse


def _no_backend(name: str, backend: str = "SparseCPU") -> NotImplementedError:
    """torch's error for an operator the backend does not implement."""
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the '{backend}' backend. This "
        "could be because the operator doesn't exist for this backend, or was omitted during "
        "the selective/custom build process (if using custom build)."
    )


# -- the data ---------------------------------------------------------------------------------


class _SparseData:
    """What both layouts' data share: NumPy defers to their operators (``ndarray + coo``
    is the dense sum), and they answer the questions the engine asks of a gradient."""

    __slots__ = ()
    __array_ufunc__ = None

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.values.itemsize

    def __radd__(self, other):
        return self + other


class CooData(_SparseData):
    """A COO tensor's arrays: ``indices`` (sparse_dim, nnz) and ``values`` (nnz, *dense)."""

    __slots__ = ("indices", "values", "shape", "coalesced", "_coalesced", "_csr", "_t")
    layout = _COO

    def __init__(self, indices, values, shape, coalesced: bool = False) -> None:
        self.indices = indices
        self.values = values
        self.shape = tuple(shape)
        self.coalesced = coalesced
        self._coalesced = None  # the coalesced copy, made once
        self._csr = None  # SciPy's CSR array of a 2-D tensor of scalars, made once
        self._t = None  # the transpose (with its CSR array: every backward of a product)

    @property
    def nnz(self) -> int:
        return self.indices.shape[1]

    @property
    def sparse_dim(self) -> int:
        return self.indices.shape[0]

    @property
    def dense_dim(self) -> int:
        return self.values.ndim - 1

    def with_values(self, values) -> CooData:
        """The same pattern with other values."""
        return CooData(self.indices, values, self.shape, self.coalesced)

    def astype(self, dt, copy: bool = True) -> CooData:
        return self.with_values(self.values.astype(dt, copy=copy))

    def copy(self) -> CooData:
        return CooData(self.indices.copy(), self.values.copy(), self.shape, self.coalesced)

    def linear(self, indices=None) -> np.ndarray:
        """Each entry's position among the sparse dims, as one integer (row-major)."""
        idx = self.indices if indices is None else indices
        sd = idx.shape[0]
        if idx.shape[1] == 0 or sd == 0:
            return np.zeros(idx.shape[1], np.int64)
        return np.ravel_multi_index(tuple(idx), self.shape[:sd])

    def coalesce(self) -> CooData:
        """Sorted indices without repeats (repeated entries' values summed)."""
        if self.coalesced:
            return self
        if self._coalesced is None:
            sd = self.sparse_dim
            uniq, inverse = np.unique(self.linear(), return_inverse=True)
            values = np.zeros((len(uniq),) + self.values.shape[1:], self.values.dtype)
            np.add.at(values, inverse, self.values)
            if sd:
                indices = np.array(np.unravel_index(uniq, self.shape[:sd]), dtype=np.int64)
            else:
                indices = np.zeros((0, len(uniq)), np.int64)
            self._coalesced = CooData(indices.reshape(sd, -1), values, self.shape, True)
        return self._coalesced

    def to_dense(self) -> np.ndarray:
        out = np.zeros(self.shape, self.values.dtype)
        if self.coalesced:
            out[tuple(self.indices)] = self.values
        elif self.nnz:
            np.add.at(out, tuple(self.indices), self.values)
        return out

    def at(self, indices) -> np.ndarray:
        """The (summed) values at ``indices`` (sparse_dim, n); zero where none is stored."""
        c = self.coalesce()
        lin, want = c.linear(), c.linear(indices)
        pos = np.searchsorted(lin, want)
        pos_c = np.minimum(pos, max(len(lin) - 1, 0))
        found = (pos < len(lin)) & (lin[pos_c] == want) if len(lin) else np.zeros(len(want), bool)
        out = np.zeros((len(want),) + c.values.shape[1:], c.values.dtype)
        out[found] = c.values[pos[found]]
        return out

    def mask(self, g) -> CooData:
        """``g`` (dense, or sparse) at this tensor's coalesced pattern: a gradient for it."""
        c = self.coalesce()
        return c.with_values(_values_at(g, c.indices))

    def scipy(self):
        """SciPy's CSR array of this 2-D tensor of scalars (repeated entries summed)."""
        if self._csr is None:
            if self.sparse_dim != 2 or self.dense_dim:
                raise RuntimeError(
                    "ember multiplies 2-D sparse tensors of scalars (sparse_dim 2, dense_dim 0)"
                )
            self._csr = _sp().csr_array(
                (self.values, (self.indices[0], self.indices[1])), shape=self.shape
            )
        return self._csr

    def transpose(self, d0: int, d1: int) -> CooData:
        idx = self.indices.copy()
        idx[[d0, d1]] = idx[[d1, d0]]
        shape = list(self.shape)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        return CooData(idx, self.values, shape)

    @property
    def T(self) -> CooData:  # noqa: N802 (NumPy's name)
        if self._t is None:
            self._t = self.transpose(0, 1)
        return self._t

    def __add__(self, other):
        if isinstance(other, CsrData):
            other = other.to_coo()
        if isinstance(other, CooData):
            dt = np.result_type(self.values, other.values)
            both = CooData(
                np.concatenate([self.indices, other.indices], axis=1),
                np.concatenate([self.values, other.values]).astype(dt, copy=False),
                self.shape,
            )
            return both.coalesce() if self.coalesced and other.coalesced else both
        return self.to_dense() + other

    def __neg__(self) -> CooData:
        return self.with_values(-self.values)

    def __mul__(self, scalar) -> CooData:
        return self.with_values(self.values * scalar)

    __rmul__ = __mul__


class CsrData(_SparseData):
    """A CSR matrix's arrays: ``crow_indices`` (rows + 1), ``col_indices`` and ``values``."""

    __slots__ = ("crow_indices", "col_indices", "values", "shape", "_csr", "_t")
    layout = _CSR

    def __init__(self, crow_indices, col_indices, values, shape) -> None:
        self.crow_indices = crow_indices
        self.col_indices = col_indices
        self.values = values
        self.shape = tuple(shape)
        self._csr = None
        self._t = None

    @property
    def nnz(self) -> int:
        return self.col_indices.shape[0]

    sparse_dim = 2
    dense_dim = 0

    def with_values(self, values) -> CsrData:
        return CsrData(self.crow_indices, self.col_indices, values, self.shape)

    def astype(self, dt, copy: bool = True) -> CsrData:
        return self.with_values(self.values.astype(dt, copy=copy))

    def copy(self) -> CsrData:
        return CsrData(
            self.crow_indices.copy(), self.col_indices.copy(), self.values.copy(), self.shape
        )

    def rows(self) -> np.ndarray:
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), intp(np.diff(self.crow_indices)))

    def to_coo(self) -> CooData:
        idx = np.stack([self.rows(), self.col_indices.astype(np.int64)])
        # sorted by row, then column when the columns of each row are sorted (torch's rule)
        return CooData(idx, self.values, self.shape).coalesce()

    def to_dense(self) -> np.ndarray:
        out = np.zeros(self.shape, self.values.dtype)
        np.add.at(out, (self.rows(), self.col_indices), self.values)
        return out

    def mask(self, g) -> CsrData:
        idx = np.stack([self.rows(), self.col_indices.astype(np.int64)])
        return self.with_values(_values_at(g, idx))

    def scipy(self):
        if self._csr is None:
            self._csr = _sp().csr_array(
                (self.values, self.col_indices, self.crow_indices), shape=self.shape
            )
        return self._csr

    @property
    def T(self):  # noqa: N802
        if self._t is None:
            self._t = self.to_coo().T
        return self._t

    def __add__(self, other):
        if isinstance(other, _SparseData):
            return self.to_coo() + other
        return self.to_dense() + other

    def __neg__(self) -> CsrData:
        return self.with_values(-self.values)

    def __mul__(self, scalar) -> CsrData:
        return self.with_values(self.values * scalar)

    __rmul__ = __mul__


def _values_at(g, indices) -> np.ndarray:
    """The values of gradient ``g`` (an ndarray, or sparse data) at ``indices``."""
    if isinstance(g, CsrData):
        g = g.to_coo()
    if isinstance(g, CooData):
        return g.at(indices)
    g = np.asarray(g)
    return g[tuple(indices)]


def _dense(g) -> np.ndarray:
    return g.to_dense() if isinstance(g, _SparseData) else g


def _coo_from_dense(a: np.ndarray, sparse_dim: int) -> CooData:
    lead = a.reshape(a.shape[:sparse_dim] + (-1,)) if sparse_dim < a.ndim else a[..., None]
    nonzero = np.any(lead != 0, axis=-1)
    indices = np.array(np.nonzero(nonzero), dtype=np.int64).reshape(sparse_dim, -1)
    return CooData(indices, a[tuple(indices)], a.shape, True)


def _csr_from_coo(c: CooData) -> CsrData:
    c = c.coalesce()
    if c.sparse_dim != 2 or c.dense_dim:
        raise RuntimeError(
            "to_sparse_csr: ember converts 2-D tensors of scalars (sparse_dim 2, dense_dim 0)"
        )
    counts = np.bincount(intp(c.indices[0]), minlength=c.shape[0])
    crow = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return CsrData(crow, c.indices[1].copy(), c.values, c.shape)


def _spmm(s, d: np.ndarray) -> np.ndarray:
    """Sparse (2-D) times dense, through SciPy; the dense result in the common dtype."""
    dt = np.result_type(s.values, d)
    out = s.scipy() @ d
    return np.asarray(out, dtype=dt)


def _pattern_dot(s, g: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``(g @ d.T)`` at the coalesced pattern of ``s`` without forming the dense product."""
    c = s.to_coo() if isinstance(s, CsrData) else s.coalesce()
    rows, cols = c.indices
    if d.ndim == 1:
        vals = g[rows] * d[cols]
    else:
        vals = np.einsum("ij,ij->i", g[rows], d[cols])
    if isinstance(s, CsrData):
        return s.with_values(vals.astype(s.values.dtype, copy=False))
    return c.with_values(vals.astype(c.values.dtype, copy=False))


# -- the Tensor subclass -----------------------------------------------------------------------


class SparseTensor(Tensor):
    """A torch sparse tensor (layout ``torch.sparse_coo`` or ``torch.sparse_csr``).

    Example:
        >>> import ember
        >>> ember.tensor([[0.0, 2.0], [0.0, 0.0]]).to_sparse()
        tensor(indices=tensor([[0],
                               [1]]),
               values=tensor([2.]),
               size=(2, 2), nnz=1, layout=torch.sparse_coo)
    """

    __slots__ = ()

    @property
    def layout(self):
        return self._data.layout

    @property
    def is_sparse(self) -> bool:
        return self._data.layout is _COO

    @property
    def is_sparse_csr(self) -> bool:
        return self._data.layout is _CSR

    def __repr__(self, *, tensor_contents=None) -> str:
        data = self._data
        suffixes = [f"size={tuple(data.shape)}", f"nnz={data.nnz}"]
        if _tensor_str._shows_dtype(data.values.dtype):
            suffixes.append(f"dtype={_dtype.from_numpy_dtype(data.values.dtype)}")
        suffixes.append(f"layout={data.layout}")
        if self.grad_fn is not None:
            suffixes.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self._rg:
            suffixes.append("requires_grad=True")
        if isinstance(data, CooData):
            parts = [("indices", data.indices), ("values", data.values)]
        else:
            parts = [
                ("crow_indices", data.crow_indices),
                ("col_indices", data.col_indices),
                ("values", data.values),
            ]
        return _tensor_str.format_sparse(parts, suffixes, coo=isinstance(data, CooData))

    __str__ = __repr__

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """Run the sparse implementation of ``func``, or raise torch's error for it."""
        kwargs = _plain_kwargs(kwargs) if kwargs else {}
        key = _key(func)
        impl = _SPARSE.get(key)
        if impl is not None:
            with _quiet:  # torch computes overflow and 0/0 silently
                return impl(*args, **kwargs)
        name = key.rpartition(".")[2]
        if name in _LAYOUT_FREE:
            with _overrides.DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        if name == "numpy":
            raise TypeError(
                "can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first."
            )
        layout = next((a._data.layout for a in args if isinstance(a, SparseTensor)), _COO)
        backend = "SparseCPU" if layout is _COO else "SparseCsrCPU"
        raise _no_backend(name.strip("_") if name.startswith("__") else name, backend)


DATA_CLASSES[CooData] = SparseTensor
DATA_CLASSES[CsrData] = SparseTensor


def _plain_kwargs(kwargs: dict) -> dict:
    """The keyword arguments with NumPy's aliases (``axis=``, ``keepdims=``) renamed to
    torch's and those not given dropped."""
    out = {}
    for k, v in kwargs.items():
        if v is _overrides._ALIAS_UNSET or (v is None and k in ("axis", "keepdims")):
            continue
        out[{"axis": "dim", "keepdims": "keepdim"}.get(k, k)] = v
    return out


def _key(func) -> str:
    """The name a dispatched function is registered under: ``Tensor.<method>``,
    ``<module>.<function>`` or ``property.<name>``."""
    owner = getattr(func, "__self__", None)
    if isinstance(owner, property):
        return "property." + owner.fget.__name__
    qual = getattr(func, "__qualname__", "")
    if qual.startswith("Tensor."):
        return qual
    return f"{getattr(func, '__module__', '')}.{getattr(func, '__name__', '')}"


# Attributes that do not depend on the layout: run as for any tensor.
_LAYOUT_FREE = frozenset(
    """shape dtype device requires_grad grad grad_fn is_leaf ndim is_cuda is_cpu is_meta
    is_mps is_xpu is_quantized is_nested is_mkldnn output_nr _version _base retains_grad
    size dim ndimension numel nelement element_size backward register_hook retain_grad
    requires_grad_ is_floating_point is_complex is_signed __format__ __len__ get_device is_pinned
    is_shared is_distributed""".split()
)

# The sparse implementations, by the dispatched function's key (filled by ``_sparse``).
_SPARSE: dict = {}


def _sparse(*keys: str):
    """Register the decorated function as the sparse implementation of ``keys``."""

    def decorate(fn):
        for k in keys:
            _SPARSE[k] = fn
        return fn

    return decorate


def _wrap_out(t: Tensor) -> Tensor:
    """A result Tensor holding sparse data gets the sparse class."""
    cls = DATA_CLASSES.get(type(t._data))
    if cls is not None and type(t) is not cls:
        t.__class__ = cls
    return t


def _record(node_cls, out, inputs, params=(), extras=()):
    return _wrap_out(record(node_cls, out, inputs, params, extras))


def _array_rule(rule, op_name: str):
    """``rule``, refusing a recorded backward: sparse rules run on arrays only."""

    @functools.wraps(rule)
    def run(g, *args):
        if isinstance(g, Tensor):
            raise RuntimeError(
                f"{op_name}: ember has no double backward through sparse tensors "
                "(backward with create_graph=True reached a sparse op)"
            )
        return rule(g, *args)

    return run


def _defop(name: str, **declaration):
    """``defop`` for a sparse op: its rules run on the layouts' arrays, not on Tensors."""
    declaration["vjp"] = {k: _array_rule(r, name) for k, r in declaration["vjp"].items()}
    return defop(name, **declaration)


def _is_sparse(x) -> bool:
    return isinstance(x, Tensor) and isinstance(x._data, _SparseData)


# -- construction --------------------------------------------------------------------------------

SparseCooTensorWithDimsAndTensorsBackward0 = _defop(
    "SparseCooTensorWithDimsAndTensorsBackward0",
    inputs=("values",),
    params=("_indices", "_size", "_is_coalesced"),
    forward=lambda values, indices, size, is_coalesced: CooData(
        indices, values, size, is_coalesced
    ),
    vjp={"values": lambda g, result: _values_at(g, result.indices)},
)


def _as_index_array(x, name: str) -> np.ndarray:
    arr = x._data if isinstance(x, Tensor) else np.asarray(x)
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"{name} must be an int64 tensor")
    return arr.astype(np.int64, copy=False)


def _as_values(values, dtype) -> Tensor:
    v = values if isinstance(values, Tensor) else _tensor_of(values)
    if dtype is not None:
        v = v.to(dtype)
    return v


@register("sparse_coo_tensor")
def sparse_coo_tensor(
    indices,
    values,
    size=None,
    *,
    dtype=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    check_invariants=None,
    is_coalesced=None,
) -> Tensor:
    """A sparse COO tensor with ``values`` at ``indices`` (``(sparse_dim, nnz)``).

    Example:
        >>> import ember
        >>> s = ember.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (4,))
        >>> s.to_dense()
        tensor([1., 0., 2., 0.])
    """
    check_device(device)
    if size is None and isinstance(values, (tuple, list)) and not values and indices is None:
        raise TypeError("sparse_coo_tensor() missing required argument 'values'")
    idx = _as_index_array(indices, "indices")
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    v = _as_values(values, dtype)
    if idx.shape[1] != v.shape[0]:
        raise RuntimeError(
            f"indices and values must have same nnz, but got nnz from indices: {idx.shape[1]}, "
            f"nnz from values: {v.shape[0]}"
        )
    sd = idx.shape[0]
    if size is None:
        lead = tuple(int(m) + 1 for m in idx.max(axis=1)) if idx.shape[1] else (0,) * sd
        size = lead + tuple(v.shape[1:])
    else:
        size = tuple(as_int(s, "sparse_coo_tensor", "size") for s in size)
        if len(size) != sd + v.dim() - 1:
            raise RuntimeError(
                f"number of dimensions must be sparse_dim ({sd}) + dense_dim ({v.dim() - 1}), "
                f"but got {len(size)}"
            )
        if idx.shape[1]:
            for d in range(sd):
                top = int(idx[d].max())
                if top >= size[d]:
                    raise RuntimeError(
                        f"size is inconsistent with indices: for dim {d}, size is {size[d]} but "
                        f"found index {top}"
                    )
    coalesced = bool(is_coalesced) if is_coalesced is not None else idx.shape[1] <= 1
    data = CooData(idx, v._data, size, coalesced)
    return _construct(
        SparseCooTensorWithDimsAndTensorsBackward0, data, v, (idx, size, coalesced), requires_grad
    )


def _construct(node_cls, data, values: Tensor, params: tuple, requires_grad: bool) -> Tensor:
    """A new sparse tensor: a leaf when ``requires_grad``, else recorded as made from
    ``values`` (gradients reach them, as torch's constructors do)."""
    if requires_grad:
        return wrap_data(data).requires_grad_(True)
    return _record(node_cls, data, (values,), params)


@register("sparse_csr_tensor")
def sparse_csr_tensor(
    crow_indices,
    col_indices,
    values,
    size=None,
    *,
    dtype=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
    check_invariants=None,
) -> Tensor:
    """A sparse CSR matrix from its compressed row pointers, columns and values.

    Example:
        >>> import ember
        >>> ember.sparse_csr_tensor([0, 1, 2], [1, 0], [5.0, 6.0]).to_dense()
        tensor([[0., 5.],
                [6., 0.]])
    """
    check_device(device)
    crow = _as_index_array(crow_indices, "crow_indices")
    col = _as_index_array(col_indices, "col_indices")
    v = _as_values(values, dtype)
    if crow.ndim != 1 or col.ndim != 1:
        raise RuntimeError("ember's CSR tensors are 2-D (no batch dimensions)")
    if size is None:
        size = (len(crow) - 1, int(col.max()) + 1 if len(col) else 0)
    size = tuple(int(s) for s in size)
    if len(crow) != size[0] + 1:
        raise RuntimeError(
            f"crow_indices.size(-1) must be equal to size[-2] + 1 (that is {size[0] + 1}), but "
            f"got: {len(crow)}"
        )
    if col.shape[0] != v.shape[0]:
        raise RuntimeError(
            f"col_indices and values nnz must be equal, but got {col.shape[0]} and {v.shape[0]}"
        )
    data = CsrData(crow, col, v._data, size)
    return _construct(SparseCsrTensorBackward0, data, v, (crow, col, size), requires_grad)


SparseCsrTensorBackward0 = _defop(
    "SparseCompressedTensorBackward0",
    inputs=("values",),
    params=("_crow", "_col", "_size"),
    forward=lambda values, crow, col, size: CsrData(crow, col, values, size),
    vjp={"values": lambda g, result: result.mask(g).values},
)


# -- conversions -------------------------------------------------------------------------------

ToDenseBackward0 = _defop(
    "ToDenseBackward0",
    forward=lambda self: self.to_dense(),
    vjp={"self": lambda g, self: self.mask(g)},
)

ToSparseBackward0 = _defop(
    "ToSparseBackward0",
    params=("_sparse_dim",),
    forward=lambda self, sparse_dim: _coo_from_dense(self, sparse_dim),
    vjp={"self": lambda g: _dense(g)},
)

ToSparseCsrBackward0 = _defop(
    "ToSparseCsrBackward0",
    forward=lambda self: _csr_from_coo(_coo_from_dense(self, 2)),
    vjp={"self": lambda g: _dense(g)},
)

CoalesceBackward0 = _defop(
    "CoalesceBackward0",
    forward=lambda self: self.coalesce(),
    vjp={"self": lambda g: g},
)

ValuesBackward0 = _defop(
    "ValuesBackward0",
    forward=lambda self: self.values,
    vjp={"self": lambda g, self: self.with_values(g)},  # (a coalesced COO tensor, or CSR)
)

SparseToCooBackward0 = _defop(
    "ToSparseBackward0",
    params=("_layout",),
    forward=lambda self, layout: self.to_coo(),
    vjp={"self": lambda g, self: self.mask(g)},
)

SparseToCsrBackward0 = _defop(
    "ToSparseCsrBackward0",
    params=("_layout",),
    forward=lambda self, layout: _csr_from_coo(self),
    vjp={"self": lambda g, self: self.mask(g)},
)


@register("to_dense", method=True, function=False)
def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
    """The dense tensor of a sparse one (a dense tensor returns itself).

    Example:
        >>> import ember
        >>> ember.sparse_coo_tensor([[1]], [2.0], (3,)).to_dense()
        tensor([0., 2., 0.])
    """
    if not _is_sparse(self):
        return self if dtype is None else self.to(dtype)
    out = _record(ToDenseBackward0, self._data.to_dense(), (self,))
    return out if dtype is None else out.to(dtype)


def _sparse_dim_arg(self, sparse_dim) -> int:
    if sparse_dim is None:
        return self.dim()
    sd = as_int(sparse_dim, "to_sparse", "sparse_dim")
    if not 0 < sd <= self.dim():
        raise RuntimeError(
            f"sparse_dim argument must be in [1, {self.dim()}] range, but {sd} is given"
        )
    return sd


@register("to_sparse", method=True, function=False)
def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None) -> Tensor:
    """This tensor in a sparse layout (COO unless ``layout`` says CSR).

    Example:
        >>> import ember
        >>> ember.tensor([0.0, 3.0]).to_sparse().values()
        tensor([3.])
    """
    if layout is _CSR:
        return to_sparse_csr(self)
    if layout is not None and layout is not _COO:
        raise RuntimeError(f"to_sparse for Strided to {layout} conversion is not supported")
    if _is_sparse(self):
        if isinstance(self._data, CsrData):
            return _record(SparseToCooBackward0, self._data.to_coo(), (self,), (_COO,))
        return self
    sd = _sparse_dim_arg(self, sparse_dim)
    return _record(ToSparseBackward0, _coo_from_dense(self._data, sd), (self,), (sd,))


@register("to_sparse_coo", method=True, function=False)
def to_sparse_coo(self) -> Tensor:
    """This tensor in the COO layout (``to_sparse()``).

    Example:
        >>> import ember
        >>> ember.eye(2).to_sparse_coo()._nnz()
        2
    """
    return to_sparse(self)


@register("to_sparse_csr", method=True, function=False)
def to_sparse_csr(self, dense_dim=None) -> Tensor:
    """This 2-D tensor in the CSR layout.

    Example:
        >>> import ember
        >>> ember.eye(2).to_sparse_csr().crow_indices()
        tensor([0, 1, 2])
    """
    if dense_dim:
        raise RuntimeError("ember's CSR tensors have no dense dimensions")
    if _is_sparse(self):
        if isinstance(self._data, CsrData):
            return self
        return _record(SparseToCsrBackward0, _csr_from_coo(self._data), (self,), (_CSR,))
    if self.dim() != 2:
        raise RuntimeError(
            f"to_sparse_csr: expected a 2-D tensor (ember has no batched CSR), got {self.dim()}-D"
        )
    return _record(ToSparseCsrBackward0, _csr_from_coo(_coo_from_dense(self._data, 2)), (self,))


def _require_coo(self, name: str) -> CooData:
    if not _is_sparse(self):
        raise _no_backend(name, "CPU")
    if not isinstance(self._data, CooData):
        raise _no_backend(name, "SparseCsrCPU")
    return self._data


@register("coalesce", method=True, function=False)
def coalesce(self) -> Tensor:
    """The COO tensor with sorted, unique indices (repeated entries summed).

    Example:
        >>> import ember
        >>> s = ember.sparse_coo_tensor([[1, 1]], [2.0, 3.0], (2,))
        >>> s.coalesce().values()
        tensor([5.])
    """
    data = _require_coo(self, "coalesce")
    if data.coalesced:
        return self
    return _record(CoalesceBackward0, data.coalesce(), (self,))


@register("is_coalesced", method=True, function=False)
def is_coalesced(self) -> bool:
    """Whether the COO tensor's indices are sorted and unique.

    Example:
        >>> import ember
        >>> ember.sparse_coo_tensor([[1, 0]], [2.0, 3.0], (2,)).is_coalesced()
        False
    """
    return _require_coo(self, "is_coalesced").coalesced


def _check_coalesced(data: CooData, what: str) -> None:
    if not data.coalesced:
        raise RuntimeError(
            f"Cannot get {what} on an uncoalesced tensor, please call .coalesce() first"
        )


@register("indices", method=True, function=False)
def indices(self) -> Tensor:
    """The int64 ``(sparse_dim, nnz)`` indices of a coalesced COO tensor.

    Example:
        >>> import ember
        >>> ember.tensor([0.0, 3.0]).to_sparse().indices()
        tensor([[1]])
    """
    data = _require_coo(self, "indices")
    _check_coalesced(data, "indices")
    return Tensor._wrap(data.indices)


@register("values", method=True, function=False)
def values(self) -> Tensor:
    """The ``(nnz, *dense)`` values of a coalesced COO tensor or of a CSR tensor.

    Example:
        >>> import ember
        >>> ember.tensor([0.0, 3.0]).to_sparse().values()
        tensor([3.])
    """
    if not _is_sparse(self):
        raise _no_backend("values", "CPU")
    data = self._data
    if isinstance(data, CooData):
        _check_coalesced(data, "values")
    return _record(ValuesBackward0, data.values, (self,))


@register("_indices", method=True, function=False)
def _indices(self) -> Tensor:
    """The stored indices (coalesced or not), without autograd history."""
    return Tensor._wrap(_require_coo(self, "_indices").indices)


@register("_values", method=True, function=False)
def _values(self) -> Tensor:
    """The stored values (coalesced or not), without autograd history."""
    return Tensor._wrap(_require_coo(self, "_values").values)


def _require_csr(self, name: str) -> CsrData:
    if not _is_sparse(self):
        raise _no_backend(name, "CPU")
    if not isinstance(self._data, CsrData):
        raise _no_backend(name, "SparseCPU")
    return self._data


@register("crow_indices", method=True, function=False)
def crow_indices(self) -> Tensor:
    """A CSR tensor's compressed row pointers (rows + 1 of them).

    Example:
        >>> import ember
        >>> ember.eye(2).to_sparse_csr().crow_indices()
        tensor([0, 1, 2])
    """
    return Tensor._wrap(_require_csr(self, "crow_indices").crow_indices)


@register("col_indices", method=True, function=False)
def col_indices(self) -> Tensor:
    """A CSR tensor's column of each stored value.

    Example:
        >>> import ember
        >>> ember.eye(2).to_sparse_csr().col_indices()
        tensor([0, 1])
    """
    return Tensor._wrap(_require_csr(self, "col_indices").col_indices)


@register("_nnz", method=True, function=False)
def _nnz(self) -> int:
    """The number of stored entries of a sparse tensor."""
    if not _is_sparse(self):
        raise _no_backend("_nnz", "CPU")
    return self._data.nnz


@register("sparse_dim", method=True, function=False)
def sparse_dim(self) -> int:
    """How many leading dims are sparse (0 for a dense tensor).

    Example:
        >>> import ember
        >>> ember.ones(2, 3).to_sparse(1).sparse_dim()
        1
    """
    return self._data.sparse_dim if _is_sparse(self) else 0


@register("dense_dim", method=True, function=False)
def dense_dim(self) -> int:
    """How many trailing dims each stored value has (all of them for a dense tensor).

    Example:
        >>> import ember
        >>> ember.ones(2, 3).to_sparse(1).dense_dim()
        1
    """
    return self._data.dense_dim if _is_sparse(self) else self.dim()


# -- products ----------------------------------------------------------------------------------

# torch.mm and matmul give a sparse matrix a dense gradient (torch.sparse.mm a sparse one)
SparseMmBackward0 = _defop(
    "MmBackward0",
    inputs=("self", "mat2"),
    params=("_sparse",),
    forward=lambda self, mat2, sparse: _spmm(self, mat2),
    vjp={
        "self": lambda g, mat2: g @ mat2.T,
        "mat2": lambda g, self: _spmm(self.T, g),
    },
)

SparseMvBackward0 = _defop(
    "MvBackward0",
    inputs=("self", "vec"),
    params=("_sparse",),
    forward=lambda self, vec, sparse: _spmm(self, vec),
    vjp={
        "self": lambda g, vec: np.multiply.outer(g, vec),
        "vec": lambda g, self: _spmm(self.T, g),
    },
)


def _addmm_forward(self, mat1, mat2, beta, alpha):
    out = _spmm(mat1, mat2)
    if alpha != 1:
        out = out * alpha
    if self is not None and beta != 0:
        out = out + (self * beta if beta != 1 else self)
    return out


SparseAddmmBackward0 = _defop(
    "SparseAddmmBackward0",
    inputs=("self", "mat1", "mat2"),
    params=("beta", "alpha"),
    forward=_addmm_forward,
    vjp={
        "self": lambda g, beta: g * beta,
        "mat1": lambda g, mat1, mat2, alpha: _pattern_dot(mat1, g, mat2) * alpha,
        "mat2": lambda g, mat1, alpha: _spmm(mat1.T, g) * alpha,
    },
)


def _scalar_type(t: Tensor) -> str:
    return _legacy_type_name(t._data.dtype)[len("torch.") : -len("Tensor")]


def _check_dtypes(sparse: Tensor, *others: Tensor) -> None:
    """torch's error when a product's operands differ in dtype (no promotion for sparse)."""
    for other in others:
        if other._data.dtype != sparse._data.dtype:
            raise RuntimeError(
                f"expected scalar type {_scalar_type(sparse)} but found {_scalar_type(other)}"
            )


def _check_mm(a: Tensor, b: Tensor, name: str) -> None:
    if not _is_sparse(a) or _is_sparse(b):
        kinds = ["sparse" if _is_sparse(t) else "dense" for t in (a, b)]
        raise RuntimeError(
            f"{name}: ember multiplies a sparse matrix by a dense one (got {' @ '.join(kinds)})"
        )
    if a._data.sparse_dim != 2 or a._data.dense_dim:
        raise RuntimeError(f"{name}: expected a 2-D sparse matrix, got {a.dim()}-D")
    if b.dim() not in (1, 2) or a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"{name}: Argument #3 (dense): Expected dim 0 size {a.shape[1]}, got {b.shape[0]}"
        )
    _check_dtypes(a, b)


DenseMmSparseBackward0 = _defop(
    "MmBackward0",
    inputs=("self", "mat2"),
    params=("_sparse_right",),
    forward=lambda self, mat2, sparse: _spmm(mat2.T, self.T).T,
    vjp={
        "self": lambda g, mat2: _spmm(mat2, g.T).T,
        "mat2": lambda g, self: self.T @ g,
    },
)


@_sparse("ember.mm", "Tensor.mm", "ember.spmm", "ember.matmul", "Tensor.matmul")
def _mm(input, mat2, *, out=None) -> Tensor:
    if not _is_sparse(input) and isinstance(input, Tensor) and input.dim() == 2:
        right = mat2._data
        _check_dtypes(mat2, input)
        if right.sparse_dim != 2 or right.dense_dim or input.shape[1] != mat2.shape[0]:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} "
                f"and {mat2.shape[0]}x{mat2.shape[1]})"
            )
        out_ = _spmm(right.T, input._data.T).T
        return _record(DenseMmSparseBackward0, np.ascontiguousarray(out_), (input, mat2), (True,))
    _check_mm(input, mat2, "mm")
    if mat2.dim() == 1:
        return _record(SparseMvBackward0, _spmm(input._data, mat2._data), (input, mat2), (True,))
    return _record(SparseMmBackward0, _spmm(input._data, mat2._data), (input, mat2), (True,))


@register("spmm")
def spmm(input, mat2) -> Tensor:
    """Sparse times dense matrix (``torch.spmm``, the same as ``torch.mm``).

    Example:
        >>> import ember
        >>> ember.spmm(ember.eye(2).to_sparse(), ember.ones(2, 1))
        tensor([[1.],
                [1.]])
    """
    if not _is_sparse(input):
        raise _no_backend("_sparse_mm", "CPU")
    return _mm(input, mat2)


def sparse_mm(sparse: Tensor, dense: Tensor) -> Tensor:
    """``torch.sparse.mm``: sparse times dense, gradients for both (the sparse one's with
    its pattern).

    Example:
        >>> import ember
        >>> s = ember.eye(2).to_sparse()
        >>> ember.sparse.mm(s, ember.tensor([[1.0], [2.0]]))
        tensor([[1.],
                [2.]])
    """
    require_tensor(sparse, "mm", "sparse", 1)
    require_tensor(dense, "mm", "dense", 2)
    if not _is_sparse(sparse):
        return sparse.mm(dense)
    _check_mm(sparse, dense, "addmm")
    if dense.dim() == 1:
        return _mm(sparse, dense)
    out = _addmm_forward(None, sparse._data, dense._data, 0, 1)
    return _record(SparseAddmmBackward0, out, (None, sparse, dense), (0, 1))


def sparse_addmm(mat, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
    """``torch.sparse.addmm``: ``beta * mat + alpha * (mat1 @ mat2)`` with ``mat1`` sparse.

    Example:
        >>> import ember
        >>> ember.sparse.addmm(ember.ones(2, 1), ember.eye(2).to_sparse(), ember.ones(2, 1))
        tensor([[2.],
                [2.]])
    """
    _check_mm(mat1, mat2, "addmm")
    _check_dtypes(mat1, mat)
    out = _addmm_forward(mat._data, mat1._data, mat2._data, beta, alpha)
    if out.shape != tuple(mat.shape) and np.broadcast_shapes(out.shape, mat.shape) != out.shape:
        raise RuntimeError(f"addmm: cannot broadcast {tuple(mat.shape)} to {out.shape}")
    return _record(SparseAddmmBackward0, out, (mat, mat1, mat2), (beta, alpha))


@_sparse("ember.addmm", "Tensor.addmm")
def _addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None) -> Tensor:
    if _is_sparse(input):
        raise _no_backend("addmm")
    return sparse_addmm(input, mat1, mat2, beta=beta, alpha=alpha)


# -- elementwise -------------------------------------------------------------------------------


def _scale_forward(self, other):
    return self.with_values(self.values * other)  # linear: no need to coalesce


SparseMulScalarBackward0 = _defop(
    "MulBackward0",
    params=("other",),
    forward=_scale_forward,
    vjp={"self": lambda g, self, other: self.mask(g) * other},
)

SparseDivScalarBackward0 = _defop(
    "DivBackward0",
    params=("other",),
    forward=lambda self, other: self.with_values(self.values / other),
    vjp={"self": lambda g, self, other: self.mask(g).with_values(self.mask(g).values / other)},
)


def _mul_sparse_forward(self, other):
    a, b = self.coalesce(), other.coalesce()
    common, ia, ib = np.intersect1d(a.linear(), b.linear(), assume_unique=True, return_indices=True)
    return CooData(a.indices[:, ia], a.values[ia] * b.values[ib], a.shape, True)


SparseMulSparseBackward0 = _defop(
    "MulBackward0",
    inputs=("self", "other"),
    params=("_sparse",),
    forward=lambda self, other, sparse: _mul_sparse_forward(self, other),
    vjp={
        "self": lambda g, other, result: result.with_values(
            _values_at(g, result.indices) * other.at(result.indices)
        ),
        "other": lambda g, self, result: result.with_values(
            _values_at(g, result.indices) * self.at(result.indices)
        ),
    },
)


def _mul_dense_forward(sparse, dense):
    c = sparse.coalesce()
    full = np.broadcast_to(dense, c.shape)
    return c.with_values(c.values * full[tuple(c.indices)])


SparseMulDenseBackward0 = _defop(
    "MulBackward0",
    inputs=("self", "other"),
    params=("_dense",),
    forward=lambda self, other, dense: _mul_dense_forward(self, other),
    vjp={
        "self": lambda g, self, other: self.mask(g).with_values(
            _values_at(g, self.coalesce().indices)
            * np.broadcast_to(other, self.shape)[tuple(self.coalesce().indices)]
        ),
        "other": lambda g, self: (
            self.coalesce()
            .with_values(_values_at(g, self.coalesce().indices) * self.coalesce().values)
            .to_dense()
        ),
    },
)


def _add_sparse_forward(self, other, alpha):
    return self + (other if alpha == 1 else other * alpha)


SparseAddSparseBackward0 = _defop(
    "AddBackward0",
    inputs=("self", "other"),
    params=("alpha",),
    forward=lambda self, other, alpha: _add_sparse_forward(self, other, alpha),
    vjp={"self": lambda g: g, "other": lambda g, alpha: g * alpha if alpha != 1 else g},
)

SparseSubSparseBackward0 = _defop(
    "SubBackward0",
    inputs=("self", "other"),
    params=("alpha",),
    forward=lambda self, other, alpha: _add_sparse_forward(self, other, -alpha),
    vjp={"self": lambda g: g, "other": lambda g, alpha: g * -alpha},
)

DenseAddSparseBackward0 = _defop(
    "AddBackward0",
    inputs=("self", "other"),
    params=("alpha", "_sparse"),
    forward=lambda self, other, alpha, sparse: (
        self + other.to_dense() * alpha if alpha != 1 else self + other.to_dense()
    ),
    vjp={"self": lambda g: g, "other": lambda g, other, alpha: other.mask(g) * alpha},
)

DenseSubSparseBackward0 = _defop(
    "SubBackward0",
    inputs=("self", "other"),
    params=("alpha", "_sparse"),
    forward=lambda self, other, alpha, sparse: self - other.to_dense() * alpha,
    vjp={"self": lambda g: g, "other": lambda g, other, alpha: other.mask(g) * -alpha},
)


def _number(x) -> bool:
    return isinstance(x, (bool, int, float, complex)) or (
        isinstance(x, Tensor) and not _is_sparse(x) and x.dim() == 0
    )


def _scalar(x):
    return x.item() if isinstance(x, Tensor) else x


@_sparse("Tensor.mul", "ember.mul", "ember.multiply", "Tensor.multiply")
def _mul(input, other, *, out=None) -> Tensor:
    if _number(other) and _is_sparse(input):
        return _record(
            SparseMulScalarBackward0,
            _scale_forward(input._data, _scalar(other)),
            (input,),
            (_scalar(other),),
        )
    if _number(input) and _is_sparse(other):
        return _mul(other, input)
    if _is_sparse(input) and _is_sparse(other):
        _same_shape(input, other, "mul")
        out_ = _mul_sparse_forward(_coo(input), _coo(other))
        return _record(SparseMulSparseBackward0, out_, (input, other), (True,))
    sparse, dense = (input, other) if _is_sparse(input) else (other, input)
    dense = dense if isinstance(dense, Tensor) else _tensor_of(dense)
    if np.broadcast_shapes(tuple(dense.shape), tuple(sparse.shape)) != tuple(sparse.shape):
        raise RuntimeError("mul(sparse, dense): the dense operand must broadcast to the sparse one")
    out_ = _mul_dense_forward(_coo(sparse), dense._data)
    return _record(SparseMulDenseBackward0, out_, (sparse, dense), (True,))


def _coo(t: Tensor) -> CooData:
    data = t._data
    if isinstance(data, CsrData):
        raise _no_backend("mul", "SparseCsrCPU")
    return data


def _same_shape(a, b, name) -> None:
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(
            f"{name}: expected sizes of 'self' and 'other' to match, but {list(a.shape)} != "
            f"{list(b.shape)}"
        )


@_sparse("Tensor.div", "ember.div", "Tensor.true_divide", "ember.true_divide", "Tensor.divide")
def _div(input, other, *, rounding_mode=None, out=None) -> Tensor:
    if not (_is_sparse(input) and _number(other)):
        raise _no_backend("div.Tensor")
    if rounding_mode is not None:
        raise _no_backend("div.Tensor_mode")
    value = _scalar(other)
    out_ = SparseDivScalarBackward0.forward(input._data, value)
    return _record(SparseDivScalarBackward0, out_, (input,), (value,))


def _add_impl(input, other, alpha, sub: bool) -> Tensor:
    name = "sub" if sub else "add"
    if _is_sparse(input) and not _is_sparse(other):
        raise RuntimeError(
            f"{name}(sparse, dense) is not supported. Use {name}(dense, sparse) instead."
        )
    if not isinstance(input, Tensor):
        raise _no_backend(f"{name}.Tensor")
    _same_shape(input, other, name)
    if _is_sparse(input):
        node = SparseSubSparseBackward0 if sub else SparseAddSparseBackward0
        a, b = _coo(input), _coo(other)
        out_ = _add_sparse_forward(a, b, -alpha if sub else alpha)
        return _record(node, out_, (input, other), (alpha,))
    node = DenseSubSparseBackward0 if sub else DenseAddSparseBackward0
    sign = -alpha if sub else alpha
    out_ = input._data + other._data.to_dense() * sign
    return _record(node, out_, (input, other), (alpha, True))


@_sparse("Tensor.add", "ember.add")
def _add(input, other, *, alpha=1, out=None) -> Tensor:
    return _add_impl(input, other, alpha, sub=False)


@_sparse("Tensor.sub", "ember.sub", "Tensor.subtract", "ember.subtract")
def _sub(input, other, *, alpha=1, out=None) -> Tensor:
    return _add_impl(input, other, alpha, sub=True)


# Functions of one argument with f(0) = 0, applied to the stored values (of the coalesced
# tensor: f(a) + f(b) is not f(a + b)): torch's node name and the derivative f'.
_UNARY = {
    "neg": ("NegBackward0", np.negative, lambda x: -np.ones_like(x)),
    "abs": ("AbsBackward0", np.abs, np.sign),
    "relu": ("ReluBackward0", lambda x: np.maximum(x, 0), lambda x: (x > 0).astype(x.dtype)),
    "sqrt": ("SqrtBackward0", np.sqrt, lambda x: 0.5 / np.sqrt(x)),
    "sin": ("SinBackward0", np.sin, np.cos),
    "tanh": ("TanhBackward0", np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    "square": ("PowBackward0", np.square, lambda x: 2 * x),
    "sinh": ("SinhBackward0", np.sinh, np.cosh),
    "tan": ("TanBackward0", np.tan, lambda x: 1 + np.tan(x) ** 2),
    "asin": ("AsinBackward0", np.arcsin, lambda x: 1 / np.sqrt(1 - x * x)),
    "atan": ("AtanBackward0", np.arctan, lambda x: 1 / (1 + x * x)),
    "expm1": ("Expm1Backward0", np.expm1, np.exp),
    "log1p": ("Log1PBackward0", np.log1p, lambda x: 1 / (1 + x)),
    "sign": ("SignBackward0", np.sign, np.zeros_like),
}


# integer in, integer out (the others compute in the default float dtype, as torch's)
_INT_KEEPING = frozenset({"neg", "abs", "sign", "square", "relu"})


def _unary(name: str, node_name: str, fn, dfn):
    """The node of a zero-preserving function ``fn`` (derivative ``dfn``) on the stored
    values of the coalesced tensor, and the function that applies it."""

    def forward(self, op):
        c = self.coalesce() if isinstance(self, CooData) else self
        if c.values.dtype.kind not in "fc" and name not in _INT_KEEPING:
            c = c.astype(_dtype._default[0].np)
        return c.with_values(fn(c.values))

    def rule(g, self):
        c = self.coalesce() if isinstance(self, CooData) else self
        return c.with_values(_values_at(g, _pattern_of(c)) * dfn(c.values))

    node = _defop(node_name, params=("_op",), forward=forward, vjp={"self": rule})

    def run(input, *args, **kwargs) -> Tensor:
        return _record(node, forward(input._data, name), (input,), (name,))

    return node, run


def _pattern_of(data) -> np.ndarray:
    if isinstance(data, CsrData):
        return np.stack([data.rows(), data.col_indices.astype(np.int64)])
    return data.indices


_UNARY_NODES = {}
for _name, (_node_name, _fn, _dfn) in _UNARY.items():
    _UNARY_NODES[_name], _run = _unary(_name, _node_name, _fn, _dfn)
    _sparse(f"Tensor.{_name}", f"ember.{_name}")(_run)
_sparse("ember.nn.functional.relu")(lambda input, inplace=False: _SPARSE["Tensor.relu"](input))
_sparse("Tensor.negative", "ember.negative", "Tensor.__neg__")(_SPARSE["Tensor.neg"])


SparsePowBackward0 = _defop(
    "PowBackward0",
    params=("exponent",),
    forward=lambda self, exponent: self.coalesce().with_values(self.coalesce().values ** exponent),
    vjp={
        "self": lambda g, self, exponent: self.mask(g).with_values(
            _values_at(g, self.coalesce().indices)
            * exponent
            * self.coalesce().values ** (exponent - 1)
        )
    },
)


@_sparse("Tensor.pow", "ember.pow")
def _pow(input, exponent, *, out=None) -> Tensor:
    if not (_is_sparse(input) and _number(exponent)) or _scalar(exponent) <= 0:
        raise _no_backend("pow.Tensor_Scalar")
    e = _scalar(exponent)
    data = _coo(input)
    return _record(SparsePowBackward0, SparsePowBackward0.forward(data, e), (input,), (e,))


# -- reductions --------------------------------------------------------------------------------

SparseSumAllBackward0 = _defop(
    "SumBackward0",
    params=("_sparse",),
    forward=lambda self, sparse: np.asarray(self.values.sum()),
    vjp={
        "self": lambda g, self: self.mask(np.broadcast_to(g, self.shape)),
    },
)


def _sum_dims(data: CooData, dims: tuple):
    """(result data, positions of the kept sparse dims): sum over ``dims``."""
    sd = data.sparse_dim
    c = data.coalesce()
    sparse_dims = [d for d in dims if d < sd]
    dense_dims = tuple(d - sd + 1 for d in dims if d >= sd)
    values = c.values.sum(axis=dense_dims) if dense_dims else c.values
    keep = [d for d in range(sd) if d not in sparse_dims]
    shape = [s for d, s in enumerate(c.shape) if d not in dims]
    if not keep:  # every sparse dim summed: a dense result
        return values.sum(axis=0), keep
    out = CooData(c.indices[keep], values, shape)
    return out.coalesce(), keep


def _sum_dim_rule(g, self, dims):
    """Each stored value's gradient: the result's gradient where the value was summed to."""
    c = self.coalesce()
    sd = c.sparse_dim
    keep = [d for d in range(sd) if d not in dims]
    dense_dims = [d - sd + 1 for d in dims if d >= sd]
    if keep:
        g_vals = _values_at(g, c.indices[keep])
    else:  # a dense result: every value reaches the same place
        g = np.asarray(g)
        g_vals = np.broadcast_to(g, (c.nnz,) + g.shape)
    for d in sorted(dense_dims):
        g_vals = np.expand_dims(g_vals, d)
    return c.with_values(np.broadcast_to(g_vals, c.values.shape).copy())


SparseSumBackward0 = _defop(
    "SparseSumBackward0",
    params=("dim", "_keepdim"),
    forward=lambda self, dim, keepdim: _sum_dims(self, dim)[0],
    vjp={"self": lambda g, self, dim: _sum_dim_rule(g, self, dim)},
)

SparseSumDimBackward1 = _defop(
    "SumBackward1",
    params=("dim", "keepdim", "_sparse"),
    forward=lambda self, dim, keepdim, sparse: _sum_dims(self, dim)[0],
    vjp={"self": lambda g, self, dim: _sum_dim_rule(g, self, dim)},
)


def _norm_dims(dim, ndim: int) -> tuple:
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(sorted(d % ndim for d in dims))


def _sum(input, dim=None, keepdim=False, *, dtype=None, node=SparseSumDimBackward1) -> Tensor:
    data = _coo(input)
    if dtype is not None:
        input = input.to(dtype)
        data = input._data
    if dim is None:
        out = np.asarray(data.values.sum())
        if data.values.dtype.kind in "biu":
            out = out.astype(np.int64)
        return _record(SparseSumAllBackward0, out, (input,), (True,))
    if keepdim:
        raise RuntimeError("sum: keepdim is not supported for sparse tensors")
    dims = _norm_dims(dim, input.dim())
    out, _ = _sum_dims(data, dims)
    if node is SparseSumDimBackward1:
        return _record(node, out, (input,), (dims, keepdim, True))
    return _record(node, out, (input,), (dims, keepdim))


@_sparse("Tensor.sum", "ember.sum")
def _tensor_sum(input, dim=None, keepdim=False, *, dtype=None, out=None) -> Tensor:
    if dim is _red._UNSET:  # (reduction.sum's default: all dims)
        dim = None
    return _sum(input, dim, keepdim, dtype=dtype)


def sparse_sum(input, dim=None, dtype=None) -> Tensor:
    """``torch.sparse.sum``: the sum of a sparse tensor over ``dim`` (all dims: a dense
    scalar; all sparse dims: dense; otherwise sparse).

    Example:
        >>> import ember
        >>> s = ember.tensor([[0.0, 1.0], [2.0, 3.0]]).to_sparse()
        >>> ember.sparse.sum(s)
        tensor(6.)
    """
    if not _is_sparse(input):
        return input.sum() if dim is None else input.sum(dim)
    return _sum(input, dim, False, dtype=dtype, node=SparseSumBackward0)


def _groups(c: CooData, dim: int) -> np.ndarray:
    """A group number per stored entry: entries that share every index but ``dim``'s."""
    others = [d for d in range(c.sparse_dim) if d != dim]
    if not others:
        return np.zeros(c.nnz, np.int64)
    key = np.ravel_multi_index(tuple(c.indices[others]), tuple(c.shape[d] for d in others))
    return np.unique(key, return_inverse=True)[1].reshape(-1)


def _group_sum(x: np.ndarray, groups: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros((n,) + x.shape[1:], x.dtype)
    np.add.at(out, groups, x)
    return out


def _softmax_forward(self, dim, log):
    c = self.coalesce()
    groups = _groups(c, dim)
    n = int(groups.max()) + 1 if len(groups) else 0
    top = np.full((n,) + c.values.shape[1:], -np.inf, c.values.dtype)
    np.maximum.at(top, groups, c.values)
    shifted = c.values - top[groups]
    e = np.exp(shifted)
    total = _group_sum(e, groups, n)
    if log:
        return c.with_values(shifted - np.log(total)[groups])
    return c.with_values(e / total[groups])


def _softmax_rule(g, result, dim, log):
    groups = _groups(result, dim)
    n = int(groups.max()) + 1 if len(groups) else 0
    gv = _values_at(g, result.indices)
    y = result.values
    if log:
        return result.with_values(gv - np.exp(y) * _group_sum(gv, groups, n)[groups])
    return result.with_values(y * (gv - _group_sum(gv * y, groups, n)[groups]))


SparseSoftmaxBackward0 = _defop(
    "SparseSoftmaxBackward0",
    params=("dim",),
    forward=lambda self, dim: _softmax_forward(self, dim, False),
    vjp={"self": lambda g, result, dim: _softmax_rule(g, result, dim, False)},
)

SparseLogSoftmaxBackward0 = _defop(
    "SparseLogSoftmaxBackward0",
    params=("dim",),
    forward=lambda self, dim: _softmax_forward(self, dim, True),
    vjp={"self": lambda g, result, dim: _softmax_rule(g, result, dim, True)},
)


def _softmax(input, dim, dtype, log: bool) -> Tensor:
    data = _coo(input)
    if dtype is not None:
        input = input.to(dtype)
        data = input._data
    d = dim % input.dim()
    if d >= data.sparse_dim:
        raise RuntimeError("ember's sparse softmax runs over a sparse dim")
    node = SparseLogSoftmaxBackward0 if log else SparseSoftmaxBackward0
    return _record(node, _softmax_forward(data, d, log), (input,), (d,))


def sparse_softmax(input, dim: int, dtype=None) -> Tensor:
    """``torch.sparse.softmax``: softmax over the stored entries along ``dim`` (entries not
    stored count as minus infinity, so they stay unstored).

    Example:
        >>> import ember
        >>> s = ember.tensor([[0.0, 1.0], [2.0, 2.0]]).to_sparse()
        >>> ember.sparse.softmax(s, 1).to_dense()
        tensor([[0.0000, 1.0000],
                [0.5000, 0.5000]])
    """
    return _softmax(input, dim, dtype, log=False)


def sparse_log_softmax(input, dim: int, dtype=None) -> Tensor:
    """``torch.sparse.log_softmax``: the log of ``sparse.softmax``, computed stably.

    Example:
        >>> import ember
        >>> s = ember.tensor([[0.0, 1.0], [2.0, 2.0]]).to_sparse()
        >>> ember.sparse.log_softmax(s, 1).values()
        tensor([ 0.0000, -0.6931, -0.6931])
    """
    return _softmax(input, dim, dtype, log=True)


# -- shape ---------------------------------------------------------------------------------------

SparseTransposeBackward0 = _defop(
    "TransposeBackward0",
    params=("dim0", "dim1", "_sparse"),
    forward=lambda self, dim0, dim1, sparse: self.transpose(dim0, dim1),
    vjp={
        "self": lambda g, dim0, dim1: (
            g.transpose(dim0, dim1) if isinstance(g, CooData) else np.swapaxes(g, dim0, dim1)
        )
    },
)


@_sparse("Tensor.transpose", "ember.transpose", "Tensor.swapaxes", "Tensor.swapdims")
def _transpose(input, dim0, dim1) -> Tensor:
    data = _coo(input)
    d0, d1 = dim0 % input.dim(), dim1 % input.dim()
    if d0 >= data.sparse_dim or d1 >= data.sparse_dim:
        raise RuntimeError("transpose: ember transposes sparse dims of COO tensors, not dense ones")
    return _record(SparseTransposeBackward0, data.transpose(d0, d1), (input,), (d0, d1, True))


@_sparse("Tensor.t", "ember.t")
def _t(input) -> Tensor:
    if input.dim() > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
            f"{input._data.sparse_dim} sparse and {input._data.dense_dim} dense dimensions"
        )
    if input.dim() < 2:
        return input
    return _transpose(input, 0, 1)


def _index_select_forward(self: CooData, dim: int, index: np.ndarray):
    """The entries whose index along ``dim`` is selected, renumbered (an index listed twice
    copies its entries twice), coalesced; and for each, the coalesced input entry it copies."""
    c = self.coalesce()
    col = c.indices[dim]
    order = np.argsort(col, kind="stable")
    lo = np.searchsorted(col[order], index, "left")
    counts = np.searchsorted(col[order], index, "right") - lo
    total = int(counts.sum())
    new_pos = np.repeat(np.arange(len(index), dtype=np.int64), counts)
    # the k-th copied entry is order[lo of its index + its rank among that index's copies]
    first = np.repeat(np.cumsum(counts) - counts, counts)
    src = order[np.repeat(lo, counts) + np.arange(total, dtype=np.int64) - first]
    idx = c.indices[:, src].copy()
    idx[dim] = new_pos
    shape = list(c.shape)
    shape[dim] = len(index)
    out = CooData(idx, c.values[src], shape)
    perm = np.argsort(out.linear(), kind="stable")
    return CooData(idx[:, perm], c.values[src[perm]], shape, True), src[perm]


def _index_select_rule(g, self, result, src):
    c = self.coalesce()
    out = np.zeros_like(c.values)
    np.add.at(out, src, _values_at(g, result.indices))
    return c.with_values(out)


SparseIndexSelectBackward0 = _defop(
    "IndexSelectBackward0",
    params=("dim", "_index"),
    saves=("src",),
    forward=lambda self, dim, index: _index_select_forward(self, dim, index),
    vjp={"self": lambda g, self, result, src: _index_select_rule(g, self, result, src)},
)


@_sparse("Tensor.index_select", "ember.index_select")
def _index_select(input, dim, index, *, out=None) -> Tensor:
    data = _coo(input)
    d = dim % input.dim()
    if d >= data.sparse_dim:
        raise RuntimeError("index_select: ember selects along sparse dims of COO tensors")
    idx = index._data.astype(np.int64).reshape(-1)
    if idx.size and (idx.min() < -input.shape[d] or idx.max() >= input.shape[d]):
        raise IndexError("index out of range in self")
    idx = idx % input.shape[d] if idx.size else idx
    res, src = _index_select_forward(data, d, idx)
    return _record(SparseIndexSelectBackward0, res, (input,), (d, idx), (src,))


# -- copies and conversions --------------------------------------------------------------------

SparseCloneBackward0 = _defop(
    "CloneBackward0",
    params=("_sparse",),
    forward=lambda self, sparse: self.copy(),
    vjp={"self": lambda g: g},
)

SparseToCopyBackward0 = _defop(
    "ToCopyBackward0",
    params=("_dtype",),
    forward=lambda self, dt: self.astype(dt),
    vjp={"self": lambda g: g},  # (the engine casts it to the input's dtype)
)


@_sparse("Tensor.clone", "ember.clone")
def _clone(input, *, memory_format=None) -> Tensor:
    return _record(SparseCloneBackward0, input._data.copy(), (input,), (True,))


@_sparse("Tensor.detach")
def _detach(input) -> Tensor:
    return wrap_data(input._data)


@_sparse("property.data")
def _data_of(input) -> Tensor:
    return wrap_data(input._data)


def _cast(input, np_dtype) -> Tensor:
    if np_dtype == input._data.dtype:
        return input
    return _record(SparseToCopyBackward0, input._data.astype(np_dtype), (input,), (np_dtype,))


@_sparse("Tensor.to")
def _to(input, *args, **kwargs) -> Tensor:
    dt = kwargs.get("dtype")
    for a in args:
        if isinstance(a, _dtype.dtype):
            dt = a
        elif isinstance(a, Tensor):
            dt = a.dtype
        elif a is not None and not isinstance(a, bool):
            check_device(a)
    check_device(kwargs.get("device"))
    return input if dt is None else _cast(input, dt.np)


def _caster(np_dtype):
    return lambda input, memory_format=None: _cast(input, np.dtype(np_dtype))


for _meth, _np in (
    ("double", np.float64),
    ("float", np.float32),
    ("long", np.int64),
    ("int", np.int32),
    ("bool", np.bool_),
):
    _sparse(f"Tensor.{_meth}")(_caster(_np))


@_sparse("Tensor.type_as")
def _type_as(input, other) -> Tensor:
    return _cast(input, other._data.dtype)


@_sparse("Tensor.cpu", "Tensor.contiguous", "Tensor.coalesce_")
def _self(input, *args, **kwargs) -> Tensor:
    return input


@_sparse("Tensor.zero_")
def _zero_(input) -> Tensor:
    if input.requires_grad and input.is_leaf:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    data = input._data
    if isinstance(data, CooData):
        input._data = CooData(
            np.zeros((data.sparse_dim, 0), np.int64),
            np.zeros((0,) + data.values.shape[1:], data.dtype),
            data.shape,
            True,
        )
    else:
        input._data = data.with_values(np.zeros_like(data.values))
    input._bump()
    return input


for _fn in (
    to_dense,
    to_sparse,
    to_sparse_coo,
    to_sparse_csr,
    coalesce,
    is_coalesced,
    indices,
    values,
    _indices,
    _values,
    crow_indices,
    col_indices,
    _nnz,
    sparse_dim,
    dense_dim,
):
    _SPARSE[f"Tensor.{_fn.__name__}"] = _fn
_SPARSE["ember.spmm"] = spmm


@_sparse("Tensor.__eq__")
def _eq(input, other):
    raise _no_backend("eq.Tensor")


@_sparse("Tensor.__getitem__")
def _getitem(input, index):
    raise _no_backend("index.Tensor")


for _fn in (sparse_mm, sparse_addmm, sparse_sum, sparse_softmax, sparse_log_softmax):
    _SPARSE["ember.sparse." + _fn.__name__.replace("sparse_", "")] = _fn
