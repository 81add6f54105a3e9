"""``ember.sparse``: torch.sparse's functions on sparse tensors (``torch.sparse_coo`` and
``torch.sparse_csr`` layouts, defined in ``ember._aten.sparse``): products with a dense
matrix, sums and softmax over the stored entries, with gradients as torch defines them (a
sparse tensor's gradient is sparse, with its pattern).

Example:
    >>> import ember
    >>> adj = ember.tensor([[0.0, 1.0], [1.0, 0.0]]).to_sparse()
    >>> ember.sparse.mm(adj, ember.tensor([[1.0], [2.0]]))
    tensor([[2.],
            [1.]])
"""

from __future__ import annotations

from . import _overrides
from ._aten import sparse as _sparse

mm = _sparse.sparse_mm
addmm = _sparse.sparse_addmm
sum = _sparse.sparse_sum  # noqa: A001 (torch's name)
softmax = _sparse.sparse_softmax
log_softmax = _sparse.sparse_log_softmax
for _fn, _name in (
    (mm, "mm"),
    (addmm, "addmm"),
    (sum, "sum"),
    (softmax, "softmax"),
    (log_softmax, "log_softmax"),
):
    _fn.__name__ = _fn.__qualname__ = _name
    _fn.__module__ = __name__


class check_sparse_tensor_invariants:  # noqa: N801 (torch's name)
    """Whether sparse constructors check their indices (``torch.sparse.
    check_sparse_tensor_invariants``): a context manager and decorator, with ``enable()``,
    ``disable()`` and ``is_enabled()``. ember always checks the indices' bounds, which is
    what the setting turns on in torch.

    Example:
        >>> import ember
        >>> with ember.sparse.check_sparse_tensor_invariants():
        ...     ember.sparse.check_sparse_tensor_invariants.is_enabled()
        True
    """

    _enabled = False

    def __init__(self, enable: bool = True) -> None:
        self.state = enable
        self.saved_state: bool | None = None

    @staticmethod
    def is_enabled() -> bool:
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable() -> None:
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable() -> None:
        check_sparse_tensor_invariants._enabled = False

    def __enter__(self):
        self.saved_state = check_sparse_tensor_invariants._enabled
        check_sparse_tensor_invariants._enabled = self.state
        return self

    def __exit__(self, *exc) -> None:
        check_sparse_tensor_invariants._enabled = self.saved_state

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def run(*args, **kwargs):
            with check_sparse_tensor_invariants(self.state):
                return fn(*args, **kwargs)

        return run


__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "check_sparse_tensor_invariants"]

# The public functions dispatch through __torch_function__ (ember._overrides).
_overrides.install_namespace(globals(), __all__, "torch.sparse")
