"""``torch._dynamo.eval_frame``: where torch defines ``OptimizedModule`` (libraries test
``isinstance(m, torch._dynamo.eval_frame.OptimizedModule)`` to spot compiled modules)."""

from __future__ import annotations


def __getattr__(name: str):
    if name == "OptimizedModule":
        from .._compile import OptimizedModule  # deferred: the compiler loads on first use

        return OptimizedModule
    raise AttributeError(f"module 'torch._dynamo.eval_frame' has no attribute {name!r}")
