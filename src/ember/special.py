"""``ember.special``: torch.special's functions (error and gamma functions, Bessel functions,
xlogy, logit, the normal CDF, zeta, ...), defined in ``ember._aten.special`` and the other op
families, gathered here under torch's names.

Example:
    >>> import ember
    >>> ember.special.expit(ember.tensor([0.0]))
    tensor([0.5000])
"""

from __future__ import annotations

from . import _overrides
from ._aten import _core
from ._aten import elementwise as _ew
from ._aten import reduction as _red

globals().update(_core.namespace("special"))

# Functions torch.special shares with the torch namespace, under the same or another name.
expit = _ew.sigmoid
erf = _ew.erf
exp2 = _ew.exp2
expm1 = _ew.expm1
log1p = _ew.log1p
round = _ew.round  # noqa: A001 (torch's name)
sinc = _core.namespace("torch")["sinc"]
softmax = _red.softmax
log_softmax = _red.log_softmax
logsumexp = _red.logsumexp
polygamma = _core.namespace("torch")["polygamma"]
multigammaln = _core.namespace("torch")["mvlgamma"]
logit = _core.namespace("torch")["logit"]

__all__ = sorted(n for n in globals() if not n.startswith("_") and n not in ("annotations",))


# The public functions dispatch through __torch_function__ (ember._overrides), from here
# on: every module importing them gets the dispatching ones.
_overrides.install_namespace(globals(), __all__, "torch.special")
