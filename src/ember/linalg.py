"""``ember.linalg``: torch.linalg's norms, inverse, determinants, solve, cholesky, svd.

Forward passes are batched NumPy LAPACK calls over the leading dims. Each op is one
``defop`` declaration with torch 2.13's ``grad_fn`` name (``LinalgInvExBackward0`` ...) and
the analytical derivative torch uses (inv: ``-A^-T G A^-T``; det: ``G det A^-T``; solve: a
solve with ``A^T``), written once with ``@``, ``.mT``, indexing and the ``_inv``/``_solve``
helpers, which run on arrays in a plain backward and on Tensors (this module's own ops) in
a recorded one, so every higher order follows. Forward mode is each op's explicit JVP.

The declarations and functions are in ``ember._aten.linalg`` (with the rest of linear
algebra); this module is the namespace: every function registered there under
``namespace="linalg"``.
"""

from __future__ import annotations

from . import _overrides
from ._aten._core import namespace

# torch.inverse, torch.logdet and torch.slogdet are bound from here by ember/__init__.
from ._aten.linalg import LinAlgError, _top_slogdet, inverse, logdet  # noqa: F401

globals().update(namespace("linalg"))

__all__ = ["LinAlgError", *sorted(namespace("linalg"))]


# The public functions dispatch through __torch_function__ (ember._overrides), from here
# on: every module importing them gets the dispatching ones.
_overrides.install_namespace(globals(), __all__, "torch.linalg")
