"""ember's operations, one module per family, imported in dependency order; then the
registered Tensor methods, in-place variants and ufunc overrides are attached."""

from . import shape, indexing, elementwise, reduction, linalg, sorting, inplace, random  # noqa: F401
from . import special  # noqa: F401
from . import complex  # noqa: F401
from . import _core

_core.install()
