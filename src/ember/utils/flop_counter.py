"""``torch.utils.flop_counter``: count the floating-point operations of the matrix products
and convolutions a block of code runs, in total and per module (the forward's modules).

Counted as torch counts them: ``mm``/``addmm`` ``2*m*k*n``, ``bmm``/``baddbmm``
``2*b*m*k*n``, a convolution ``2 * batch * out_channels * in_channels/groups * kernel size
* output positions``. Other ops count nothing (as in torch).

Example:
    >>> import ember
    >>> from ember.utils.flop_counter import FlopCounterMode
    >>> with FlopCounterMode(display=False) as counter:
    ...     _ = ember.nn.Linear(3, 2)(ember.ones(4, 3))
    >>> counter.get_total_flops()
    48
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from ..nn.modules.module import intercept_module_calls
from ..ops import aten
from ._python_dispatch import TorchDispatchMode

__all__ = ["FlopCounterMode", "register_flop_formula"]


def _mm_flop(a, b, out) -> int:
    m, k = a.shape
    return 2 * m * k * b.shape[-1]


def _addmm_flop(bias, a, b, out) -> int:
    return _mm_flop(a, b, out)


def _bmm_flop(a, b, out) -> int:
    n, m, k = a.shape
    return 2 * n * m * k * b.shape[-1]


def _baddbmm_flop(bias, a, b, out) -> int:
    return _bmm_flop(a, b, out)


def _conv_flop(x, w, *rest_and_out) -> int:
    out = rest_and_out[-1]
    c_out, c_in, *kernel = w.shape
    return 2 * x.shape[0] * c_out * c_in * math.prod(kernel) * math.prod(out.shape[2:])


# op packet -> formula(*args, out): flops
_FORMULAS: dict = {
    aten.mm: _mm_flop,
    aten.addmm: _addmm_flop,
    aten.bmm: _bmm_flop,
    aten.baddbmm: _baddbmm_flop,
    aten.convolution: _conv_flop,
}


def register_flop_formula(targets, get_raw: bool = False):
    """Register ``formula(*args, out_shape=..., **kwargs)`` as the flop count of the op
    packets ``targets`` (a decorator).

    Example:
        >>> import ember
        >>> from ember.ops import aten
        >>> from ember.utils.flop_counter import FlopCounterMode, register_flop_formula
        >>> @register_flop_formula(aten.dot)
        ... def dot_flop(a_shape, b_shape, *, out_shape=None, **kwargs):
        ...     return 2 * a_shape[0]
        >>> with FlopCounterMode(display=False) as c:
        ...     _ = ember.dot(ember.ones(5), ember.ones(5))
        >>> c.get_total_flops()
        10
    """

    def register(formula):
        def counted(*args_and_out) -> int:
            *args, out = args_and_out
            if get_raw:
                return formula(*args, out_val=out)
            shapes = [getattr(a, "shape", a) for a in args]
            return formula(*shapes, out_shape=getattr(out, "shape", None))

        for target in targets if isinstance(targets, (list, tuple)) else (targets,):
            _FORMULAS[getattr(target, "overloadpacket", target)] = counted
        return formula

    return register


class _ModuleNames:
    """Names the modules a forward runs through (the root by its class name, children
    ``Parent.child``) and keeps the stack of those currently running."""

    def __init__(self) -> None:
        self.known: dict[int, str] = {}
        self.stack: list[str] = []

    def module_call(self, module, forward, args, kwargs):
        name = self.known.get(id(module))
        if name is None:
            name = self.known[id(module)] = type(module).__name__
        for child_name, child in module.named_children():
            self.known.setdefault(id(child), f"{name}.{child_name}")
        self.stack.append(name)
        try:
            return forward(*args, **kwargs)
        finally:
            self.stack.pop()

    def module_getattr(self, module, name, value):
        return value


class FlopCounterMode:
    """Counts the flops of the ops run inside the block, in total (``'Global'``) and for
    each module of the forward that ran them (``get_flop_counts()``). ``display=True``
    prints the table when the block ends; ``mods`` is accepted and ignored (deprecated in
    torch).

    Example:
        >>> import ember
        >>> from ember.utils.flop_counter import FlopCounterMode
        >>> net = ember.nn.Sequential(ember.nn.Linear(3, 2))
        >>> with FlopCounterMode(display=False) as counter:
        ...     _ = net(ember.ones(4, 3))
        >>> for name, ops in counter.get_flop_counts().items():
        ...     print(name, {str(op): n for op, n in ops.items()})
        Global {'aten.addmm': 48}
        Sequential {'aten.addmm': 48}
        Sequential.0 {'aten.addmm': 48}
    """

    def __init__(
        self,
        mods=None,
        depth: int = 2,
        display: bool = True,
        custom_mapping: dict | None = None,
    ) -> None:
        self.flop_counts: dict[str, dict[Any, int]] = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mode: _FlopDispatch | None = None
        self.flop_registry = dict(_FORMULAS)
        if custom_mapping:
            for op, formula in custom_mapping.items():
                self.flop_registry[getattr(op, "overloadpacket", op)] = formula
        self._names = _ModuleNames()
        self._intercept: intercept_module_calls | None = None

    def get_total_flops(self) -> int:
        """The flops counted so far, all modules together."""
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[Any, int]]:
        """``{module name: {op packet: flops}}``, with ``'Global'`` for the whole block."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth: int | None = None) -> str:
        """The counts as a table: one row per module (down to ``depth``) and op."""
        depth = self.depth if depth is None else depth
        rows = [("Module", "FLOP", "% Total")]
        total = self.get_total_flops()
        for name, ops in self.flop_counts.items():
            if name != "Global" and name.count(".") + 1 > depth:
                continue
            flops = sum(ops.values())
            rows.append((name, str(flops), f"{100 * flops / max(total, 1):.2f}%"))
            rows.extend(
                (f" - {op}", str(n), f"{100 * n / max(total, 1):.2f}%") for op, n in ops.items()
            )
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows)

    def _count(self, func, args, out) -> None:
        packet = getattr(func, "overloadpacket", func)
        formula = self.flop_registry.get(packet)
        if formula is None:
            return
        flops = formula(*args, out)
        for name in dict.fromkeys(["Global", *self._names.stack]):
            self.flop_counts[name][packet] += flops

    def __enter__(self) -> FlopCounterMode:
        self.flop_counts.clear()
        self._intercept = intercept_module_calls(self._names)
        self._intercept.__enter__()
        self.mode = _FlopDispatch(self)
        self.mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.mode.__exit__(*exc)
        self.mode = None
        self._intercept.__exit__(*exc)
        self._intercept = None
        if self.display:
            print(self.get_table(self.depth))


class _FlopDispatch(TorchDispatchMode):
    def __init__(self, counter: FlopCounterMode) -> None:
        super().__init__()
        self.counter = counter

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.counter._count(func, args, out)
        return out
