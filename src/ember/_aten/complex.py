"""Complex numbers: the parts of a complex tensor (``real``, ``imag``, ``view_as_real``,
``view_as_complex``), its conjugate and phase (``conj``, ``conj_physical``, ``angle``), and
complex tensors built from real ones (``complex``, ``polar``).

Gradients follow torch's convention for complex tensors: the gradient of a real loss ``L``
with respect to ``z = x + iy`` is ``dL/dx + i dL/dy`` (the conjugate Wirtinger derivative,
times two), so a rule for a holomorphic ``w = f(z)`` reads ``g * conj(f'(z))`` and a linear
map's rule is its adjoint. ``|z|`` then has the gradient ``g * z / |z|``.

Views: ``view_as_real``, ``view_as_complex``, ``real`` and ``imag`` are views, as in torch
(``real``/``imag`` are ``view_as_real(z)[..., 0]`` / ``[..., 1]``, torch's own graph).
``conj`` returns a copy (torch returns a lazy view with the conjugate bit set, which ember
does not have): the values, the graph (``ConjBackward0``) and the gradients are torch's, but
writing into the result does not change the input, and ``is_conj()`` is always False.

Example:
    >>> import ember
    >>> z = ember.complex(ember.tensor([3.0]), ember.tensor([4.0]))
    >>> z.abs(), z.real, z.imag
    (tensor([5.]), tensor([3.]), tensor([4.]))
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._overrides import warn as _warn
from ._core import (
    LINEAR,
    apply,
    broadcast_shapes,
    defop,
    is_raw,
    register,
    register_methods,
    require_tensor,
    run,
    write_out,
)
from .shape import transpose as _transpose

__all__ = [
    "adjoint",
    "angle",
    "complex",
    "conj",
    "conj_physical",
    "imag",
    "is_neg",
    "polar",
    "real",
    "resolve_conj",
    "resolve_neg",
    "view_as_complex",
    "view_as_real",
]

_REAL_OF = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}
_COMPLEX_OF = {
    np.dtype(np.float32): np.complex64,
    np.dtype(np.float64): np.complex128,
    np.dtype(np.float16): np.complex64,  # (torch's complex32 has no NumPy counterpart)
}


def _is_complex(x) -> bool:
    return (x.dtype if is_raw(x) else x._data.dtype).kind == "c"


def cj(x):
    """The complex conjugate, for rules on arrays and Tensors alike (reals unchanged)."""
    if not _is_complex(x):
        return x
    return np.conjugate(x) if is_raw(x) else conj_physical(x)


def re(x):
    """The real part, for rules on arrays and Tensors alike."""
    if is_raw(x):
        return np.real(x)
    return real(x) if x._data.dtype.kind == "c" else x


def im(x):
    """The imaginary part, for rules on arrays and Tensors alike (zeros for reals)."""
    if is_raw(x):
        return np.imag(x)
    return imag(x) if x._data.dtype.kind == "c" else x * 0


# -- views ---------------------------------------------------------------------------------------


def _as_real_array(a: np.ndarray) -> np.ndarray:
    # a trailing axis of length 1 is contiguous whatever a's strides: the dtype view splits it
    return a[..., None].view(_REAL_OF[a.dtype])


def _as_complex_array(a: np.ndarray) -> np.ndarray:
    return a.view(_COMPLEX_OF[a.dtype])[..., 0]


def _contiguous_array(g: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(g)


ViewAsRealBackward0 = defop(
    "ViewAsRealBackward0",
    forward=_as_real_array,
    vjp={
        "self": lambda g: (
            _as_complex_array(_contiguous_array(g))
            if is_raw(g)
            else view_as_complex(g.contiguous())
        )
    },
    jvp=LINEAR,
    view=True,
)

ViewAsComplexBackward0 = defop(
    "ViewAsComplexBackward0",
    forward=_as_complex_array,
    vjp={"self": lambda g: _as_real_array(g) if is_raw(g) else view_as_real(g)},
    jvp=LINEAR,
    view=True,
)


@register("view_as_real")
def view_as_real(input):
    """A real view of a complex tensor: a trailing dimension of size 2 holds (real, imag).

    Example:
        >>> import ember
        >>> ember.view_as_real(ember.tensor([1 + 2j]))
        tensor([[1., 2.]])
    """
    require_tensor(input, "view_as_real")
    if input._data.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return apply(ViewAsRealBackward0, (input,), (input._data,))


@register("view_as_complex")
def view_as_complex(input):
    """A complex view of a real tensor whose last dimension (of size 2, stride 1) holds
    (real, imag).

    Example:
        >>> import ember
        >>> ember.view_as_complex(ember.tensor([[1.0, 2.0]]))
        tensor([1.+2.j])
    """
    require_tensor(input, "view_as_complex")
    a = input._data
    if a.dtype not in _COMPLEX_OF or a.dtype == np.float16:
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a "
            f"tensor of scalar type: {_dtype.scalar_name(a.dtype)}"
        )
    if a.ndim == 0 or a.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if a.strides[-1] != a.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * a.itemsize) for s in a.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    return apply(ViewAsComplexBackward0, (input,), (a,))


def _part(input, index: int, name: str):
    require_tensor(input, name)
    if input._data.dtype.kind != "c":
        if index == 0:
            return input
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(input).select(-1, index)


@register("real")
def real(input):
    """The real part: a view of a complex tensor (``input`` itself for a real one).

    Example:
        >>> import ember
        >>> ember.real(ember.tensor([1 + 2j]))
        tensor([1.])
    """
    return _part(input, 0, "real")


@register("imag")
def imag(input):
    """The imaginary part, a view of a complex tensor (an error for real ones, as torch).

    Example:
        >>> import ember
        >>> ember.imag(ember.tensor([1 + 2j]))
        tensor([2.])
    """
    return _part(input, 1, "imag")


register_methods({"real": property(real), "imag": property(imag)})


# -- conjugate and phase ---------------------------------------------------------------------------

ConjBackward0 = defop(
    "ConjBackward0",
    forward=np.conjugate,
    vjp={"self": lambda g: cj(g)},
    jvp=LINEAR,
)

ConjPhysicalBackward0 = defop(
    "ConjPhysicalBackward0",
    forward=np.conjugate,
    vjp={"self": lambda g: cj(g)},
    jvp=LINEAR,
)


@register("conj", method=True)
def conj(input):
    """The complex conjugate (``input`` itself for a real tensor).

    A copy, where torch returns a lazy view (see the module docstring).

    Example:
        >>> import ember
        >>> ember.conj(ember.tensor([1 + 2j]))
        tensor([1.-2.j])
    """
    require_tensor(input, "conj")
    if input._data.dtype.kind != "c":
        return input
    return run(ConjBackward0, (input,), (input._data,))


@register("conj_physical", method=True, inplace=True)
def conj_physical(input, *, out=None):
    """The complex conjugate, always materialized (a real input is returned as it is).

    Example:
        >>> import ember
        >>> ember.conj_physical(ember.tensor([1 - 1j]))
        tensor([1.+1.j])
    """
    require_tensor(input, "conj_physical")
    if input._data.dtype.kind != "c":
        return input
    res = run(ConjPhysicalBackward0, (input,), (input._data,))
    if out is not None:
        return write_out("conj_physical", res, out)
    return res


@register("resolve_conj", method=True)
def resolve_conj(input):
    """``input`` itself: ember's conjugates are never lazy, so there is nothing to resolve.

    Example:
        >>> import ember
        >>> x = ember.tensor([1 + 1j])
        >>> ember.resolve_conj(x) is x
        True
    """
    return input


@register("is_conj", method=True)
def is_conj(input):
    """False: ember's conjugates are materialized (torch's ``conj()`` views say True).

    Example:
        >>> import ember
        >>> ember.is_conj(ember.tensor([1 + 1j]).conj())
        False
    """
    return False


def _angle_vjp(g, self):
    if not _is_complex(self):
        return g * 0
    if is_raw(self):
        with np.errstate(all="ignore"):
            r = g * self / (self.real**2 + self.imag**2) * 1j
        return np.where(self == 0, 0, r)
    r2 = real(self) ** 2 + imag(self) ** 2
    safe = r2 + (r2 == 0)
    return (g * 1j) * self / safe * (r2 != 0)


def _angle_jvp(t_self, self):
    if not _is_complex(self):
        return t_self * 0
    r2 = real(self) ** 2 + imag(self) ** 2
    num = real(self) * imag(t_self) - imag(self) * real(t_self)
    return num / (r2 + (r2 == 0)) * (r2 != 0)


AngleBackward0 = defop(
    "AngleBackward0",
    forward=lambda a: np.angle(a).astype(_REAL_OF.get(a.dtype, a.dtype), copy=False),
    vjp={"self": _angle_vjp},
    jvp=_angle_jvp,
)


@register("angle", method=True)
def angle(input, *, out=None):
    """The argument (phase) of each element, in radians; for reals 0 or pi (nan stays nan).

    Example:
        >>> import ember
        >>> ember.angle(ember.tensor([1j, -1.0]))
        tensor([1.5708, 3.1416])
    """
    require_tensor(input, "angle")
    a = input._data
    if a.dtype.kind in "biu":
        a = a.astype(_dtype._default[0].np)
    res = run(AngleBackward0, (input,), (a,))
    if out is not None:
        return write_out("angle", res, out)
    return res


# -- complex tensors from real ones ----------------------------------------------------------------

_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _complex_forward(a, b):
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), _COMPLEX_OF[a.dtype])
    out.real = a
    out.imag = b
    return out


ComplexBackward0 = defop(
    "ComplexBackward0",
    inputs=("real", "imag"),
    forward=_complex_forward,
    vjp={"real": lambda g: re(g), "imag": lambda g: im(g)},
    jvp=LINEAR,
)


def _check_pair(fname, a, b, first, second):
    require_tensor(a, fname, first, 1)
    require_tensor(b, fname, second, 2)
    da, db = a._data.dtype, b._data.dtype
    if da not in _FLOATS or db not in _FLOATS:
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{_dtype.scalar_name(da)} and {_dtype.scalar_name(db)}"
        )
    if da != db:
        raise RuntimeError(
            f"Expected object of scalar type {_dtype.scalar_name(da)} but got scalar type "
            f"{_dtype.scalar_name(db)} for second argument"
        )
    broadcast_shapes(a._data.shape, b._data.shape)


@register("complex")
def complex(real, imag, *, out=None):
    """The complex tensor ``real + i * imag`` (same float dtype, broadcast).

    Example:
        >>> import ember
        >>> ember.complex(ember.tensor([1.0]), ember.tensor([2.0]))
        tensor([1.+2.j])
    """
    _check_pair("complex", real, imag, "real", "imag")
    res = run(ComplexBackward0, (real, imag), (real._data, imag._data))
    if out is not None:
        return write_out("complex", res, out)
    return res


def _polar_forward(r, theta):
    return _complex_forward(r * np.cos(theta), r * np.sin(theta))


def _polar_vjp(g, result):
    # torch's polar_backward: d|.| = Re(conj(g) sgn(result)), d angle = Re(conj(g) i result)
    if is_raw(g):
        with np.errstate(all="ignore"):
            a = np.abs(result)
            sgn = np.where(a == 0, 0, result / np.where(a == 0, 1, a))
        gc = np.conjugate(g)
        return np.real(gc * sgn), np.real(gc * result * 1j)
    a = result.abs()
    sgn = result / (a + (a == 0)) * (a != 0)
    gc = cj(g)
    return re(gc * sgn), re(gc * (result * 1j))


def _polar_jvp(t_abs, t_angle, abs, angle, result):
    out = None
    if t_abs is not None:
        out = complex(t_abs * angle.cos(), t_abs * angle.sin())
    if t_angle is not None:
        term = complex(-(t_angle * abs * angle.sin()), t_angle * abs * angle.cos())
        out = term if out is None else out + term
    return out


PolarBackward0 = defop(
    "PolarBackward0",
    inputs=("abs", "angle"),
    forward=_polar_forward,
    vjp=_polar_vjp,
    jvp=_polar_jvp,
)


@register("polar")
def polar(abs, angle, *, out=None):
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``.

    Example:
        >>> import ember
        >>> ember.polar(ember.tensor([2.0]), ember.tensor([0.0]))
        tensor([2.+0.j])
    """
    _check_pair("polar", abs, angle, "abs", "angle")
    res = run(PolarBackward0, (abs, angle), (abs._data, angle._data))
    if out is not None:
        return write_out("polar", res, out)
    return res


# -- adjoint, mH, H; is_neg, resolve_neg ------------------------------------------------------


def _deprecated_on_0d(what: str, line: int) -> None:
    _warn(
        f"{what} is deprecated on 0-D tensors. Consider using x.conj(). (Triggered internally "
        f"at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:{line}.)",
        UserWarning,
        stacklevel=3,
    )


def _adjoint_of(x):
    """The last two dims swapped, conjugated (``conj`` of the transpose, as torch)."""
    return conj(_transpose(x, -2, -1))


@register("adjoint", method=True)
def adjoint(input):
    """The conjugate transpose of each matrix: the last two dims swapped and conjugated.

    Example:
        >>> import ember
        >>> ember.adjoint(ember.tensor([[1 + 1j, 2 + 0j]]))
        tensor([[1.-1.j],
                [2.-0.j]])
    """
    require_tensor(input, "adjoint")
    return _checked_adjoint(input, "adjoint()", "tensor.adjoint()", 4390)


def _checked_adjoint(x, what: str, where: str, line: int):
    """The adjoint of a batch of matrices ``x``, with torch's deprecation warning for 0-d
    (``what``, torch's source ``line``) and its error for 1-d (``where``)."""
    nd = x._data.ndim
    if nd == 0:
        _deprecated_on_0d(what, line)
        return conj(x)
    if nd == 1:
        raise RuntimeError(
            f"{where} is only supported on matrices or batches of matrices. Got 1-D tensor."
        )
    return _adjoint_of(x)


def _mH(self):
    """The conjugate transpose of each matrix of a batch (``adjoint()``).

    Example:
        >>> import ember
        >>> ember.zeros(2, 3, 4).mH.shape
        torch.Size([2, 4, 3])
    """
    return _checked_adjoint(self, "Tensor.mH", "tensor.mH", 4382)


def _H(self):
    """The conjugate transpose of a matrix.

    Example:
        >>> import ember
        >>> ember.tensor([[1j, 2]]).H
        tensor([[0.-1.j],
                [2.-0.j]])
    """
    nd = self._data.ndim
    if nd == 0:
        _deprecated_on_0d("Tensor.H", 4335)
        return conj(self)
    if nd != 2:
        hint = " For batches of matrices, consider using tensor.mH" if nd > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {nd}-D tensor.{hint}"
        )
    return _adjoint_of(self)


@register("is_neg", method=True)
def is_neg(input) -> bool:
    """False: ember has no lazy negation (torch's negative bit), so nothing is pending.

    Example:
        >>> import ember
        >>> ember.is_neg(ember.tensor([1.0]))
        False
    """
    require_tensor(input, "is_neg")
    return False


@register("resolve_neg", method=True)
def resolve_neg(input):
    """``input`` itself: ember's negations are never lazy, so there is nothing to resolve.

    Example:
        >>> import ember
        >>> x = ember.tensor([1.0])
        >>> ember.resolve_neg(x) is x
        True
    """
    require_tensor(input, "resolve_neg")
    return input


register_methods({"mH": property(_mH), "H": property(_H)})
