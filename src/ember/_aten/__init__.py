"""ember's operations, one module per family, imported in dependency order; then the
registered Tensor methods, in-place variants and ufunc overrides are attached.

Every op declaration (``autograd.opdef.defop``) lives in one of these modules: the tensor
families (``shape`` ... ``complex``), torch.linalg with the rest of linear algebra
(``linalg``), torch.fft (``fft``) and torch.nn.functional's ops (``nn_*``: the public
namespaces ``ember.linalg``, ``ember.fft`` and ``ember.nn.functional`` import them).
"""

from . import shape, indexing, elementwise, reduction, linalg, sorting, inplace, random  # noqa: F401
from . import special  # noqa: F401
from . import complex  # noqa: F401
from . import nn_activation, nn_layers, nn_conv, nn_interp, nn_embedding, nn_norm  # noqa: F401
from . import nn_loss, nn_ctc, nn_attention, nn_rnn  # noqa: F401
from . import fft  # noqa: F401
from . import spectral  # noqa: F401
from . import sparse  # noqa: F401
from . import _core

_core.install(inplace.make_inplace)
