"""The torch namespace's functions as the distributions call them: ``_torch.lgamma(x)`` here
is ``torch.lgamma(x)`` in torch's source.

They are the public, dispatching functions (``ember.lgamma``), not the implementations
behind them, so that what a distribution computes reaches ``__torch_function__`` as torch's
does: a TorchFunctionMode and the profiler see each call, fx traces through, and a Tensor
subclass given as a parameter stays one. The package root makes them (``ember/__init__``
wraps the torch namespace once it is complete) and is the only module that holds them, so
this module reads them there, when used: the one place the distributions depend on the
package root (an exception that tests/test_structure.py lists), until the wrapped namespace
has a module of its own below the root. The distributions import everything else from the
module that defines it.
"""

from __future__ import annotations

import ember  # the package root: the only holder of the wrapped torch namespace (see above)


def __getattr__(name: str):
    # Read at each use, as ``ember.<name>`` was: the root wraps its namespace only after
    # importing the distributions (and a user may patch a public function).
    return getattr(ember, name)
