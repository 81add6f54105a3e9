"""ember's operations, one module per family; importing this attaches Tensor methods."""

from . import elementwise, indexing, inplace, linalg, reduction, shape  # noqa: F401
from . import sorting  # noqa: F401,E402
