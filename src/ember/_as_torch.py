"""``import torch`` as ember: ``torch`` and every ``torch.*`` module, and ``functorch``, are
ember's own modules in this interpreter (``import torch.nn as nn`` gives ``ember.nn``, the
same object), even where real torch is installed.

``python -m ember program.py`` turns this on before running the program; ``ember.as_torch()``
turns it on inside a running interpreter (a notebook); for a whole venv, a ``.pth`` file in
its site-packages with the line ``import ember; ember.as_torch()`` does it at every start
(and imports ember there, about 0.2 s).

Example:
    >>> import ember, sys
    >>> ember.as_torch()
    >>> import torch.nn as nn
    >>> nn is ember.nn and sys.modules["torch"] is ember
    True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import sys

from ._overrides import warn

__all__ = ["as_torch"]

# torch's top-level packages and the ember modules that stand for them
ALIASES = {"torch": "ember", "functorch": "ember.func"}


def _ember_name(fullname: str) -> str | None:
    """``"torch.nn.functional"`` -> ``"ember.nn.functional"``; None for other modules."""
    for alias, real in ALIASES.items():
        if fullname == alias or fullname.startswith(alias + "."):
            return real + fullname[len(alias) :]
    return None


class _AliasLoader(importlib.abc.Loader):
    """Loads ``torch.x`` as the module ``ember.x`` itself (imported under its own name)."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module) -> None:
        pass  # ember.x ran when it was imported as itself


class _TorchDistribution(importlib.metadata.Distribution):
    """The installed ``torch`` package as ``importlib.metadata`` describes it while ember is
    torch: torch's version that ember implements (libraries read it there, not from
    ``torch.__version__``, to decide what torch offers)."""

    def read_text(self, filename: str) -> str | None:
        if filename != "METADATA":
            return None
        from .version import __version__  # deferred: the version module imports nothing

        return (
            "Metadata-Version: 2.1\n"
            "Name: torch\n"
            f"Version: {__version__}\n"
            "Summary: ember, as torch (automatic differentiation with PyTorch's API on NumPy)\n"
            "Requires-Dist: numpy\n"
        )

    def locate_file(self, path):
        import pathlib  # deferred: only for tools that ask where the files are

        return pathlib.Path(__file__).parent / path


class _TorchFinder(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path``: answers for ``torch``, ``torch.*`` and ``functorch``
    before any installed torch could, and for the ``torch`` distribution's metadata."""

    def find_distributions(self, context=None):
        """``torch``'s distribution (ember's), found before an installed torch's."""
        name = getattr(context, "name", None)
        if name is None or name.replace("-", "_").lower() == "torch":
            yield _TorchDistribution()

    def find_spec(self, fullname, path=None, target=None):
        real = _ember_name(fullname)
        if real is None:
            return None
        try:
            found = importlib.util.find_spec(real) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ModuleNotFoundError(f"No module named '{fullname}'", name=fullname)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(real))


_FINDER = _TorchFinder()


def as_torch() -> None:
    """Make ``import torch`` (any ``torch.*`` module, and ``functorch``) give ember's
    modules in this interpreter from now on. Modules already imported from a real torch
    are dropped from ``sys.modules`` (with a warning): names bound to them stay real torch.

    Example:
        >>> import ember
        >>> ember.as_torch()
        >>> import torch
        >>> torch.tensor([1.0, 2.0]).sum()
        tensor(3.)
    """
    real = [
        name
        for name in list(sys.modules)
        if _ember_name(name) is not None
        and not getattr(sys.modules[name], "__name__", "").startswith("ember")
    ]
    for name in real:
        del sys.modules[name]
    if real:
        warn(
            "ember.as_torch(): torch was imported before; names already bound to it keep "
            "the real torch, later imports of torch get ember",
            stacklevel=2,
        )
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
