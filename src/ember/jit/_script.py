"""``torch.jit.ScriptModule``, the class of TorchScript modules: ember has no TorchScript
(``ember.jit.script`` gives back the module it was given), so a ``ScriptModule`` is a plain
module that runs eagerly; libraries test for it with ``isinstance``.

Example:
    >>> import ember
    >>> isinstance(ember.nn.Linear(1, 1), ember.jit.ScriptModule)
    False
"""

from __future__ import annotations

from ..nn.modules.module import Module

__all__ = ["ScriptModule"]


class ScriptModule(Module):
    """torch's TorchScript module class: subclass it for modules that run eagerly (ember
    compiles with ``ember.compile``); ``ember.jit.script`` returns modules unchanged, so
    no module becomes one.

    Example:
        >>> import ember
        >>> class Net(ember.jit.ScriptModule):
        ...     def forward(self, x):
        ...         return x * 2
        >>> Net()(ember.ones(1))
        tensor([2.])
    """
