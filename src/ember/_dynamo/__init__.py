"""``torch._dynamo``: the names programs reach for around ``torch.compile`` (``reset``,
``config.cache_size_limit``, ``is_compiling``, ``disable``, ``mark_dynamic``).

Example:
    >>> import ember
    >>> ember._dynamo.config.cache_size_limit
    8
"""

from __future__ import annotations

from ..compiler import allow_in_graph, assume_constant_result, disable, is_compiling, reset

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "config",
    "disable",
    "is_compiling",
    "mark_dynamic",
    "mark_static",
    "maybe_mark_dynamic",
    "reset",
]


class _Config:
    """``torch._dynamo.config``: ``cache_size_limit`` (and its newer name
    ``recompile_limit``) is ember.compile's limit of captures per function; the other
    settings dynamo has are kept and have no effect here."""

    def __getattr__(self, name: str):
        if name in ("cache_size_limit", "recompile_limit"):
            from .. import _compile  # deferred: the compiler loads on first use

            return _compile.CACHE_SIZE_LIMIT
        raise AttributeError(f"torch._dynamo.config has no setting {name!r}")

    def __setattr__(self, name: str, value) -> None:
        if name in ("cache_size_limit", "recompile_limit"):
            from .. import _compile  # deferred: the compiler loads on first use

            _compile.CACHE_SIZE_LIMIT = int(value)
        else:
            object.__setattr__(self, name, value)


config = _Config()


def mark_dynamic(t, index, *, min=None, max=None) -> None:  # noqa: A002 - torch's names
    """Nothing to do: ember.compile captures each new shape on its own."""


def maybe_mark_dynamic(t, index) -> None:
    """Nothing to do (see mark_dynamic)."""


def mark_static(t, index=None) -> None:
    """Nothing to do (see mark_dynamic)."""


def __getattr__(name: str):
    # torch._dynamo.OptimizedModule (what torch.compile wraps a module in): ember.compile's,
    # loaded with the compiler on first use
    if name == "OptimizedModule":
        from .._compile import OptimizedModule  # deferred: the compiler loads on first use

        return OptimizedModule
    if name == "eval_frame":  # torch imports it with torch._dynamo
        import importlib  # deferred: the submodule loads on first use

        return importlib.import_module(__name__ + ".eval_frame")
    raise AttributeError(f"module 'torch._dynamo' has no attribute {name!r}")
