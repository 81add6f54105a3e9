"""torch's ``_foreach_*`` functions: one op over lists of tensors (optimizers' ``foreach``
code paths and the programs that copy them). Each runs the Tensor method per element, so
gradients, modes and in-place rules are the per-tensor op's; results are tuples, as torch's,
and the in-place forms return their list.

Example:
    >>> import ember
    >>> xs = [ember.ones(2), ember.zeros(1)]
    >>> ember._foreach_add(xs, 1.5)
    (tensor([2.5000, 2.5000]), tensor([1.5000]))
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Number

from ._aten.linalg import vector_norm
from ._tensor import Tensor

_UNARY = """abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10
log1p log2 neg reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc""".split()
# binary ops: the Tensor method each runs, and whether it takes alpha (with a tensor list)
_BINARY = {
    "add": ("add", True),
    "sub": ("sub", True),
    "mul": ("mul", False),
    "div": ("div", False),
    "maximum": ("clamp_min", False),  # (a scalar too, and in place: no Tensor.maximum_)
    "minimum": ("clamp_max", False),
    "clamp_min": ("clamp_min", False),
    "clamp_max": ("clamp_max", False),
    "pow": ("pow", False),
}


def _tensors(xs, position: int, name: str) -> list:
    if isinstance(xs, Tensor) or not isinstance(xs, Sequence):
        raise TypeError(
            f"_foreach_{name}(): argument 'self' (position {position}) must be tuple of "
            f"Tensors, not {type(xs).__name__}"
        )
    xs = list(xs)
    if not xs:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for i, x in enumerate(xs):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument {position - 1}, but got "
                f"{type(x).__name__}"
            )
    return xs


def _others(other, n: int, name: str, alpha) -> list:
    """``other`` per element: a scalar or a Tensor for all, or one per tensor."""
    if isinstance(other, (Number, Tensor)):
        if alpha is not None and isinstance(other, Number):
            raise TypeError(f"_foreach_{name}(): alpha is not accepted with a scalar")
        return [other] * n
    other = list(other)
    if all(isinstance(o, Tensor) for o in other):
        if len(other) != n:
            raise RuntimeError(
                f"Tensor lists must have the same number of tensors, got {n} and {len(other)}"
            )
        return other
    if len(other) != n:
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")
    if alpha is not None:
        raise TypeError(f"_foreach_{name}(): alpha is not accepted with a list of scalars")
    return other


def _make_unary(name: str):
    def outplace(self):
        return tuple(getattr(t, name)() for t in _tensors(self, 1, name))

    def inplace(self):
        for t in _tensors(self, 1, name + "_"):
            getattr(t, name + "_")()
        return self

    outplace.__name__ = f"_foreach_{name}"
    inplace.__name__ = f"_foreach_{name}_"
    outplace.__doc__ = f"``tuple(t.{name}() for t in self)``."
    inplace.__doc__ = f"``t.{name}_()`` for each tensor of ``self``; returns ``self``."
    return outplace, inplace


def _make_binary(name: str, method: str, takes_alpha: bool):
    def apply(fn_name, self, other, alpha, suffix):
        xs = _tensors(self, 1, fn_name)
        others = _others(other, len(xs), fn_name, alpha if takes_alpha else None)
        kw = {} if alpha is None else {"alpha": alpha}
        return [getattr(t, method + suffix)(o, **kw) for t, o in zip(xs, others)]

    if takes_alpha:

        def outplace(self, other, *, alpha=None):
            return tuple(apply(name, self, other, alpha, ""))

        def inplace(self, other, *, alpha=None):
            apply(name + "_", self, other, alpha, "_")
            return self

    else:

        def outplace(self, other):
            if isinstance(self, Number) and name == "pow":  # pow(scalar, exponents)
                return tuple(t.__rpow__(self) for t in _tensors(other, 2, name))
            return tuple(apply(name, self, other, None, ""))

        def inplace(self, other):
            apply(name + "_", self, other, None, "_")
            return self

    outplace.__name__ = f"_foreach_{name}"
    inplace.__name__ = f"_foreach_{name}_"
    outplace.__doc__ = f"``tuple(t.{method}(o) ...)`` over ``self`` and ``other``."
    inplace.__doc__ = f"``t.{method}_(o)`` over ``self`` and ``other``; returns ``self``."
    return outplace, inplace


def _make_pointwise(name: str, method: str):
    def apply(fn_name, self, tensor1, tensor2, value, suffix):
        xs = _tensors(self, 1, fn_name)
        t1, t2 = _tensors(tensor1, 2, fn_name), _tensors(tensor2, 3, fn_name)
        if not len(xs) == len(t1) == len(t2):
            raise RuntimeError(
                f"Tensor lists must have the same number of tensors, got {len(xs)} and "
                f"{len(t1) if len(t1) != len(xs) else len(t2)}"
            )
        values = _others(value, len(xs), fn_name, None)
        return [
            getattr(t, method + suffix)(a, b, value=float(v) if isinstance(v, Tensor) else v)
            for t, a, b, v in zip(xs, t1, t2, values)
        ]

    def outplace(self, tensor1, tensor2, value=1):
        return tuple(apply(name, self, tensor1, tensor2, value, ""))

    def inplace(self, tensor1, tensor2, value=1):
        apply(name + "_", self, tensor1, tensor2, value, "_")
        return self

    outplace.__name__ = f"_foreach_{name}"
    inplace.__name__ = f"_foreach_{name}_"
    outplace.__doc__ = f"``t.{method}(t1, t2, value=v)`` over the lists."
    inplace.__doc__ = f"``t.{method}_(t1, t2, value=v)`` over the lists; returns ``self``."
    return outplace, inplace


def _foreach_lerp(self, tensors1, weight):
    """``t.lerp(end, weight)`` over the lists."""
    xs, ends = _tensors(self, 1, "lerp"), _tensors(tensors1, 2, "lerp")
    weights = _others(weight, len(xs), "lerp", None)
    return tuple(t.lerp(e, w) for t, e, w in zip(xs, ends, weights))


def _foreach_lerp_(self, tensors1, weight):
    """``t.lerp_(end, weight)`` over the lists; returns ``self``."""
    xs, ends = _tensors(self, 1, "lerp_"), _tensors(tensors1, 2, "lerp_")
    for t, e, w in zip(xs, ends, _others(weight, len(xs), "lerp_", None)):
        t.lerp_(e, w)
    return self


def _foreach_norm(self, ord=2, dtype=None):  # noqa: A002 - torch's parameter name
    """The vector ``ord``-norm of each tensor (0-d tensors)."""
    return tuple(vector_norm(t, ord, dtype=dtype) for t in _tensors(self, 1, "norm"))


def _foreach_max(self):
    """The largest element of each tensor (0-d tensors)."""
    return tuple(t.max() for t in _tensors(self, 1, "max"))


def _foreach_clone(self):
    """A copy of each tensor."""
    return tuple(t.clone() for t in _tensors(self, 1, "clone"))


def _foreach_zero_(self):
    """``t.zero_()`` for each tensor; returns ``self``."""
    for t in _tensors(self, 1, "zero_"):
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    """``t.copy_(s)`` over the lists; returns ``self``."""
    xs, srcs = _tensors(self, 1, "copy_"), _tensors(src, 2, "copy_")
    if len(xs) != len(srcs):
        raise RuntimeError(
            f"Tensor lists must have the same number of tensors, got {len(xs)} and {len(srcs)}"
        )
    for t, s in zip(xs, srcs):
        t.copy_(s)
    return self


__all__ = [
    "_foreach_clone",
    "_foreach_copy_",
    "_foreach_lerp",
    "_foreach_lerp_",
    "_foreach_max",
    "_foreach_norm",
    "_foreach_zero_",
]
for _name in _UNARY:
    globals()[f"_foreach_{_name}"], globals()[f"_foreach_{_name}_"] = _make_unary(_name)
    __all__ += [f"_foreach_{_name}", f"_foreach_{_name}_"]
for _name, (_method, _alpha) in _BINARY.items():
    globals()[f"_foreach_{_name}"], globals()[f"_foreach_{_name}_"] = _make_binary(
        _name, _method, _alpha
    )
    __all__ += [f"_foreach_{_name}", f"_foreach_{_name}_"]
for _name in ("addcmul", "addcdiv"):
    globals()[f"_foreach_{_name}"], globals()[f"_foreach_{_name}_"] = _make_pointwise(_name, _name)
    __all__ += [f"_foreach_{_name}", f"_foreach_{_name}_"]
del _name
