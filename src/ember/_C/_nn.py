"""``torch._C._nn``: the argument parser behind ``Tensor.to`` and ``Module.to``.

Example:
    >>> import ember
    >>> ember._C._nn._parse_to("cpu", ember.float16)
    (device(type='cpu'), torch.float16, False, None)
"""

from __future__ import annotations

from .._compat import memory_format
from .._dtype import dtype
from .._tensor import Tensor, device

__all__ = ["_parse_to"]

_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
)


def _invalid(args: tuple, kwargs: dict) -> TypeError:
    got = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    listed = ", ".join(got) + (", " if kwargs else "")
    return TypeError(
        f"to() received an invalid combination of arguments - got ({listed}), but expected "
        f"one of:\n{_SIGNATURES}"
    )


def _device(d) -> device | None:
    if d is None or isinstance(d, device):
        return d
    if isinstance(d, bool):
        raise TypeError
    if isinstance(d, int):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if isinstance(d, str):
        return device(d)
    raise TypeError


def _parse_to(*args, **kwargs) -> tuple:
    """Parse ``Tensor.to``'s arguments, as torch: ``(device, dtype, non_blocking,
    memory_format)``, from ``(device=None, dtype=None, non_blocking=False, copy=False)``,
    ``(dtype, non_blocking=False, copy=False)`` or ``(tensor, non_blocking=False,
    copy=False)``, each with a keyword ``memory_format``. ``copy=True`` is refused.

    Example:
        >>> import ember
        >>> ember._C._nn._parse_to(ember.zeros(1, dtype=ember.int32), True)
        (device(type='cpu'), torch.int32, True, None)
    """
    if args and isinstance(args[0], Tensor):
        names = ("tensor", "non_blocking", "copy")
    elif args and isinstance(args[0], dtype):
        names = ("dtype", "non_blocking", "copy")
    else:
        names = ("device", "dtype", "non_blocking", "copy")
    if len(args) > len(names):
        raise _invalid(args, kwargs)
    given = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in (*names, "memory_format") or key in given:
            raise _invalid(args, kwargs)
        given[key] = value
    fmt = given.get("memory_format")
    non_blocking = given.get("non_blocking", False)
    copy = given.get("copy", False)
    target = given.get("dtype")
    if (
        not isinstance(non_blocking, bool)
        or not isinstance(copy, bool)
        or not (fmt is None or isinstance(fmt, memory_format))
        or not (target is None or isinstance(target, dtype))
    ):
        raise _invalid(args, kwargs)
    if "tensor" in given:
        dev, target = given["tensor"].device, given["tensor"].dtype
    else:
        try:
            dev = _device(given.get("device"))
        except TypeError:
            raise _invalid(args, kwargs) from None
    if copy:
        raise RuntimeError(".to() does not accept copy argument")
    return dev, target, non_blocking, fmt
