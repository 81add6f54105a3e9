"""In-place ops: the ``op_`` variant of every registered op, ``zero_``, ``fill_``, ``copy_``,
the in-place shape changes (``t_``, ``squeeze_``, ``transpose_``, ``resize_`` ...) and
indexed assignment (``__setitem__``).

``op_`` runs the out-of-place op and stores its result into the tensor, which takes the op's
node as its history (``autograd.views.apply_inplace``: snapshots, version counters, views
and forward-AD tangents are handled there, once for all ops).
"""

from __future__ import annotations

import math

import numpy as np

from .._mode import state as _state
from .._tensor import Tensor, _legacy_type_name
from ..autograd.recording import (
    _on,
    edges_of,
    inplace_tangent,
    make_node,
    suspended,
    tangent_of,
)
from ..autograd.views import apply_inplace, check_writable, set_history
from ._core import LINEAR, broadcast_error, defop, normalize_dim, normalize_dims, record, register
from .indexing import index_np, index_put
from .reduction import SqueezeBackward4
from .shape import _squeeze_array, expanded_size

_wrap = Tensor._wrap


# -- the op_ methods ---------------------------------------------------------------------------

# The example of each ``op_`` method's docstring, composed by ``make_inplace`` as
#     >>> x = X
#     >>> x.op_(ARGS)
#     PRINTED
#     >>> x
#     PRINTED
# name: (X, ARGS, PRINTED), sorted by name; PRINTED is what ember (and torch) print.
INPLACE_EXAMPLES: dict[str, tuple[str, str, str]] = {
    "abs_": ("ember.tensor([-1.0, 2.0])", "", "tensor([1., 2.])"),
    "absolute_": ("ember.tensor([-1.0, 2.0])", "", "tensor([1., 2.])"),
    "acos_": ("ember.tensor([1.0, 0.0])", "", "tensor([0.0000, 1.5708])"),
    "acosh_": ("ember.tensor([1.0, 2.0])", "", "tensor([0.0000, 1.3170])"),
    "add_": ("ember.tensor([1.0, 2.0])", "10, alpha=2", "tensor([21., 22.])"),
    "addbmm_": (
        "ember.tensor([[1.0, 2.0], [3.0, 4.0]])",
        "ember.ones(2, 2, 1), ember.ones(2, 1, 2)",
        "tensor([[3., 4.],\n        [5., 6.]])",
    ),
    "addcdiv_": (
        "ember.tensor([1.0, 1.0])",
        "ember.tensor([1.0, 6.0]), ember.tensor([2.0, 4.0]), value=2",
        "tensor([2., 4.])",
    ),
    "addcmul_": (
        "ember.tensor([1.0, 1.0])",
        "ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]), value=0.5",
        "tensor([2.5000, 5.0000])",
    ),
    "addr_": (
        "ember.zeros(2, 2)",
        "ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0])",
        "tensor([[3., 4.],\n        [6., 8.]])",
    ),
    "arccos_": ("ember.tensor([1.0, 0.0])", "", "tensor([0.0000, 1.5708])"),
    "arccosh_": ("ember.tensor([1.0, 2.0])", "", "tensor([0.0000, 1.3170])"),
    "arcsin_": ("ember.tensor([0.0, 1.0])", "", "tensor([0.0000, 1.5708])"),
    "arcsinh_": ("ember.tensor([0.0, 1.0])", "", "tensor([0.0000, 0.8814])"),
    "arctan2_": (
        "ember.tensor([0.0, 1.0])",
        "ember.tensor([1.0, 0.0])",
        "tensor([0.0000, 1.5708])",
    ),
    "arctan_": ("ember.tensor([0.0, 1.0])", "", "tensor([0.0000, 0.7854])"),
    "arctanh_": ("ember.tensor([0.0, 0.5])", "", "tensor([0.0000, 0.5493])"),
    "asin_": ("ember.tensor([0.0, 1.0])", "", "tensor([0.0000, 1.5708])"),
    "asinh_": ("ember.tensor([0.0, 1.0])", "", "tensor([0.0000, 0.8814])"),
    "atan2_": ("ember.tensor([0.0, 1.0])", "ember.tensor([1.0, 0.0])", "tensor([0.0000, 1.5708])"),
    "atan_": ("ember.tensor([0.0, 1.0])", "", "tensor([0.0000, 0.7854])"),
    "atanh_": ("ember.tensor([0.0, 0.5])", "", "tensor([0.0000, 0.5493])"),
    "bitwise_and_": ("ember.tensor([12, 10])", "ember.tensor([10, 6])", "tensor([8, 2])"),
    "bitwise_left_shift_": (
        "ember.tensor([1, 2])",
        "2",
        "tensor([4, 8])",
    ),
    "bitwise_not_": ("ember.tensor([0, 5])", "", "tensor([-1, -6])"),
    "bitwise_or_": ("ember.tensor([12, 1])", "ember.tensor([10, 2])", "tensor([14,  3])"),
    "bitwise_right_shift_": (
        "ember.tensor([8, 16])",
        "2",
        "tensor([2, 4])",
    ),
    "bitwise_xor_": ("ember.tensor([12, 1])", "ember.tensor([10, 3])", "tensor([6, 2])"),
    "ceil_": ("ember.tensor([-1.5, 1.2])", "", "tensor([-1.,  2.])"),
    "clamp_": (
        "ember.tensor([-2.0, 0.5, 3.0])",
        "min=-1, max=1",
        "tensor([-1.0000,  0.5000,  1.0000])",
    ),
    "clamp_max_": ("ember.tensor([0.5, 3.0])", "1", "tensor([0.5000, 1.0000])"),
    "clamp_min_": ("ember.tensor([-2.0, 0.5])", "0", "tensor([0.0000, 0.5000])"),
    "clip_": ("ember.tensor([-2.0, 0.5, 3.0])", "-1, 1", "tensor([-1.0000,  0.5000,  1.0000])"),
    "conj_physical_": ("ember.tensor([1 + 2j, 3 - 1j])", "", "tensor([1.-2.j, 3.+1.j])"),
    "copysign_": ("ember.tensor([1.0, 2.0])", "ember.tensor([-1.0, 1.0])", "tensor([-1.,  2.])"),
    "cos_": ("ember.tensor([0.0, 1.0])", "", "tensor([1.0000, 0.5403])"),
    "cosh_": ("ember.tensor([0.0, 1.0])", "", "tensor([1.0000, 1.5431])"),
    "cumprod_": (
        "ember.tensor([1.0, 2.0, 3.0])",
        "0",
        "tensor([1., 2., 6.])",
    ),
    "cumsum_": (
        "ember.tensor([1.0, 2.0, 3.0])",
        "0",
        "tensor([1., 3., 6.])",
    ),
    "deg2rad_": ("ember.tensor([180.0, 90.0])", "", "tensor([3.1416, 1.5708])"),
    "digamma_": ("ember.tensor([1.0, 2.0])", "", "tensor([-0.5772,  0.4228])"),
    "div_": ("ember.tensor([4.0, 9.0])", "ember.tensor([2.0, 3.0])", "tensor([2., 3.])"),
    "divide_": ("ember.tensor([7.0, -7.0])", "2, rounding_mode='floor'", "tensor([ 3., -4.])"),
    "eq_": ("ember.tensor([1.0, 2.0])", "ember.tensor([1.0, 3.0])", "tensor([1., 0.])"),
    "erf_": ("ember.tensor([0.0, 1.0])", "", "tensor([0.0000, 0.8427])"),
    "erfc_": ("ember.tensor([0.0, 1.0])", "", "tensor([1.0000, 0.1573])"),
    "erfinv_": ("ember.tensor([0.0, 0.5])", "", "tensor([0.0000, 0.4769])"),
    "exp2_": ("ember.tensor([0.5, 3.0])", "", "tensor([1.4142, 8.0000])"),
    "exp_": ("ember.tensor([0.0, 1.0])", "", "tensor([1.0000, 2.7183])"),
    "expm1_": ("ember.tensor([0.0, 1.0])", "", "tensor([0.0000, 1.7183])"),
    "fix_": ("ember.tensor([-1.5, 1.5])", "", "tensor([-1.,  1.])"),
    "float_power_": (
        "ember.tensor([2.0, 3.0], dtype=ember.float64)",
        "2",
        "tensor([4., 9.], dtype=torch.float64)",
    ),
    "floor_": ("ember.tensor([-1.5, 1.5])", "", "tensor([-2.,  1.])"),
    "floor_divide_": ("ember.tensor([7.0, -7.0])", "2", "tensor([ 3., -4.])"),
    "fmod_": ("ember.tensor([-3.0, 3.0])", "2", "tensor([-1.,  1.])"),
    "frac_": ("ember.tensor([1.5, -2.25])", "", "tensor([ 0.5000, -0.2500])"),
    "gcd_": ("ember.tensor([12, 9])", "ember.tensor([8, 6])", "tensor([4, 3])"),
    "ge_": ("ember.tensor([1.0, 2.0])", "2", "tensor([0., 1.])"),
    "greater_": ("ember.tensor([1.0, 3.0])", "2", "tensor([0., 1.])"),
    "greater_equal_": ("ember.tensor([1.0, 2.0])", "2", "tensor([0., 1.])"),
    "gt_": ("ember.tensor([1.0, 3.0])", "2", "tensor([0., 1.])"),
    "heaviside_": (
        "ember.tensor([-1.0, 0.0, 2.0])",
        "ember.tensor([0.5])",
        "tensor([0.0000, 0.5000, 1.0000])",
    ),
    "hypot_": ("ember.tensor([3.0, 5.0])", "ember.tensor([4.0, 12.0])", "tensor([ 5., 13.])"),
    "i0_": ("ember.tensor([0.0, 1.0])", "", "tensor([1.0000, 1.2661])"),
    "igamma_": ("ember.tensor([1.0, 2.0])", "ember.tensor([1.0, 1.0])", "tensor([0.6321, 0.2642])"),
    "igammac_": (
        "ember.tensor([1.0, 2.0])",
        "ember.tensor([1.0, 1.0])",
        "tensor([0.3679, 0.7358])",
    ),
    "index_add_": (
        "ember.ones(3)",
        "0, ember.tensor([0, 2]), ember.tensor([5.0, 7.0])",
        "tensor([6., 1., 8.])",
    ),
    "index_copy_": (
        "ember.zeros(3)",
        "0, ember.tensor([2, 0]), ember.tensor([5.0, 7.0])",
        "tensor([7., 0., 5.])",
    ),
    "index_fill_": ("ember.ones(3)", "0, ember.tensor([1]), -1.0", "tensor([ 1., -1.,  1.])"),
    "index_put_": (
        "ember.zeros(3)",
        "(ember.tensor([0, 2]),), ember.tensor(5.0)",
        "tensor([5., 0., 5.])",
    ),
    "lcm_": ("ember.tensor([4, 3])", "ember.tensor([6, 5])", "tensor([12, 15])"),
    "ldexp_": ("ember.tensor([1.0, 3.0])", "ember.tensor([3, 1])", "tensor([8., 6.])"),
    "le_": ("ember.tensor([1.0, 3.0])", "2", "tensor([1., 0.])"),
    "lerp_": ("ember.tensor([0.0, 10.0])", "ember.tensor([10.0, 20.0]), 0.5", "tensor([ 5., 15.])"),
    "less_": ("ember.tensor([1.0, 3.0])", "2", "tensor([1., 0.])"),
    "less_equal_": ("ember.tensor([1.0, 3.0])", "2", "tensor([1., 0.])"),
    "lgamma_": ("ember.tensor([1.0, 3.0])", "", "tensor([0.0000, 0.6931])"),
    "log10_": ("ember.tensor([1.0, 2.0])", "", "tensor([0.0000, 0.3010])"),
    "log1p_": ("ember.tensor([0.0, 1.0])", "", "tensor([0.0000, 0.6931])"),
    "log2_": ("ember.tensor([2.0, 3.0])", "", "tensor([1.0000, 1.5850])"),
    "log_": ("ember.tensor([1.0, 2.0])", "", "tensor([0.0000, 0.6931])"),
    "logical_and_": (
        "ember.tensor([True, True, False])",
        "ember.tensor([True, False, False])",
        "tensor([ True, False, False])",
    ),
    "logical_not_": ("ember.tensor([True, False])", "", "tensor([False,  True])"),
    "logical_or_": (
        "ember.tensor([True, False, False])",
        "ember.tensor([False, True, False])",
        "tensor([ True,  True, False])",
    ),
    "logical_xor_": (
        "ember.tensor([True, True, False])",
        "ember.tensor([True, False, False])",
        "tensor([False,  True, False])",
    ),
    "logit_": ("ember.tensor([0.5, 0.75])", "", "tensor([0.0000, 1.0986])"),
    "lt_": ("ember.tensor([1.0, 3.0])", "2", "tensor([1., 0.])"),
    "masked_fill_": (
        "ember.zeros(3)",
        "ember.tensor([True, False, True]), 1.0",
        "tensor([1., 0., 1.])",
    ),
    "mul_": ("ember.tensor([1.0, 2.0])", "3", "tensor([3., 6.])"),
    "multiply_": ("ember.tensor([1.0, 2.0])", "ember.tensor([3.0, -1.0])", "tensor([ 3., -2.])"),
    "mvlgamma_": ("ember.tensor([2.5, 3.0])", "p=2", "tensor([0.8570, 1.5502])"),
    "nan_to_num_": ("ember.tensor([float('nan'), 1.0])", "", "tensor([0., 1.])"),
    "ne_": ("ember.tensor([1.0, 2.0])", "ember.tensor([1.0, 3.0])", "tensor([0., 1.])"),
    "neg_": ("ember.tensor([1.0, -2.0])", "", "tensor([-1.,  2.])"),
    "negative_": ("ember.tensor([1.0, -2.0])", "", "tensor([-1.,  2.])"),
    "nextafter_": (
        "ember.tensor([0.0, 1.0])",
        "ember.tensor([1.0, 1.0])",
        "tensor([1.4013e-45, 1.0000e+00])",
    ),
    "not_equal_": ("ember.tensor([1.0, 2.0])", "ember.tensor([1.0, 3.0])", "tensor([0., 1.])"),
    "polygamma_": ("ember.tensor([1.0, 2.0])", "1", "tensor([1.6449, 0.6449])"),
    "pow_": ("ember.tensor([2.0, 3.0])", "2", "tensor([4., 9.])"),
    "put_": (
        "ember.zeros(4)",
        "ember.tensor([0, 3]), ember.tensor([1.0, 2.0])",
        "tensor([1., 0., 0., 2.])",
    ),
    "rad2deg_": ("ember.tensor([0.0, 1.0])", "", "tensor([ 0.0000, 57.2958])"),
    "reciprocal_": ("ember.tensor([2.0, 4.0])", "", "tensor([0.5000, 0.2500])"),
    "relu_": ("ember.tensor([-1.0, 2.0])", "", "tensor([0., 2.])"),
    "remainder_": ("ember.tensor([-3.0, 3.0])", "2", "tensor([1., 1.])"),
    "renorm_": (
        "ember.tensor([[3.0, 4.0], [0.3, 0.4]])",
        "2, 0, 1.0",
        "tensor([[0.6000, 0.8000],\n        [0.3000, 0.4000]])",
    ),
    "round_": ("ember.tensor([0.5, 1.5, 2.6])", "", "tensor([0., 2., 3.])"),
    "rsqrt_": ("ember.tensor([1.0, 4.0])", "", "tensor([1.0000, 0.5000])"),
    "scatter_": (
        "ember.zeros(3)",
        "0, ember.tensor([2, 0]), ember.tensor([5.0, 7.0])",
        "tensor([7., 0., 5.])",
    ),
    "scatter_add_": (
        "ember.zeros(3)",
        "0, ember.tensor([0, 0, 2]), ember.tensor([1.0, 2.0, 3.0])",
        "tensor([3., 0., 3.])",
    ),
    "scatter_reduce_": (
        "ember.zeros(3)",
        "0, ember.tensor([0, 0, 2]), ember.tensor([2.0, 5.0, 3.0]), 'amax'",
        "tensor([5., 0., 3.])",
    ),
    "sgn_": (
        "ember.tensor([-2.0, 0.0, 3.0])",
        "",
        "tensor([-1.,  0.,  1.])",
    ),
    "sigmoid_": ("ember.tensor([0.0, 1.0])", "", "tensor([0.5000, 0.7311])"),
    "sign_": ("ember.tensor([-2.0, 0.0, 3.0])", "", "tensor([-1.,  0.,  1.])"),
    "sin_": ("ember.tensor([0.0, 1.0])", "", "tensor([0.0000, 0.8415])"),
    "sinc_": ("ember.tensor([0.0, 0.5])", "", "tensor([1.0000, 0.6366])"),
    "sinh_": ("ember.tensor([0.0, 1.0])", "", "tensor([0.0000, 1.1752])"),
    "sqrt_": ("ember.tensor([4.0, 9.0])", "", "tensor([2., 3.])"),
    "square_": ("ember.tensor([2.0, -3.0])", "", "tensor([4., 9.])"),
    "sub_": ("ember.tensor([5.0, 6.0])", "1, alpha=2", "tensor([3., 4.])"),
    "subtract_": ("ember.tensor([5.0, 6.0])", "ember.tensor([1.0, 2.0])", "tensor([4., 4.])"),
    "tan_": ("ember.tensor([0.0, 1.0])", "", "tensor([0.0000, 1.5574])"),
    "tanh_": ("ember.tensor([0.0, 1.0])", "", "tensor([0.0000, 0.7616])"),
    "tril_": ("ember.ones(2, 2)", "", "tensor([[1., 0.],\n        [1., 1.]])"),
    "triu_": ("ember.ones(2, 2)", "", "tensor([[1., 1.],\n        [0., 1.]])"),
    "true_divide_": ("ember.tensor([1.0, 3.0])", "2", "tensor([0.5000, 1.5000])"),
    "trunc_": ("ember.tensor([-1.5, 1.5])", "", "tensor([-1.,  1.])"),
    "xlogy_": ("ember.tensor([0.0, 2.0])", "ember.tensor([0.0, 4.0])", "tensor([0.0000, 2.7726])"),
}


def _inplace_doc(name: str) -> str:
    """The docstring of the in-place method ``name``, with its example from the table."""
    doc = f"In-place version of ``{name[:-1]}``: the result is written into this tensor."
    if name not in INPLACE_EXAMPLES:
        return doc
    x, args, printed = INPLACE_EXAMPLES[name]
    printed = printed.replace("\n", "\n    ")
    return (
        f"{doc}\n\nExample:\n    >>> import ember\n    >>> x = {x}\n"
        f"    >>> x.{name}({args})\n    {printed}\n    >>> x\n    {printed}\n"
    )


def make_inplace(op, name: str):
    """The in-place Tensor method ``name`` (``add_``) of the out-of-place ``op``."""

    def method(self, *args, **kwargs):
        return apply_inplace(self, op, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = _inplace_doc(name)
    return method


# -- zero_, fill_, copy_ ----------------------------------------------------------------------


def _overwritten(g):
    """The gradient of a value overwritten whole: torch's ``zeros_like(grad)`` (``g * 0``
    would be NaN where ``g`` is infinite or NaN), a constant in a recorded backward."""
    if isinstance(g, Tensor):
        return _wrap(np.zeros_like(g._data))
    return np.zeros_like(g)


ZeroBackward0 = defop(
    "ZeroBackward0",
    forward=np.zeros_like,
    vjp={"self": _overwritten},
    jvp=LINEAR,
)

FillBackward0 = defop(
    "FillBackward0",
    params=("value",),
    forward=lambda a, value: np.full_like(a, value),
    vjp={"self": _overwritten},
    jvp=lambda t_self: None,
)


@register("zero_", function=False, method=True)
def zero_(self: Tensor) -> Tensor:
    """Fill with zeros in place.

    Example:
        >>> import ember
        >>> ember.ones(2).zero_()
        tensor([0., 0.])
    """
    return apply_inplace(self, _new_value, ZeroBackward0, (), copy_old=False)


@register("fill_", function=False, method=True)
def fill_(self: Tensor, value) -> Tensor:
    """Fill with ``value`` in place.

    Example:
        >>> import ember
        >>> ember.zeros(2).fill_(3)
        tensor([3., 3.])
    """
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions."
            )
        value = value.item()
    return apply_inplace(self, _new_value, FillBackward0, (value,), copy_old=False)


def _new_value(self: Tensor, cls, params: tuple) -> Tensor:
    return record(cls, cls.forward(self._data, *params), (self,), params)


def fill_with(self: Tensor, values, cls) -> Tensor:
    """``self`` filled in place with ``values`` (random draws), recorded as ``cls``."""
    values = np.asarray(values).astype(self._data.dtype, copy=False)
    return apply_inplace(self, lambda s: record(cls, values, (s,)), copy_old=False)


def _copy_forward(a, src):
    return np.broadcast_to(src, a.shape).astype(a.dtype, copy=True)


CopyBackwards = defop(
    "CopyBackwards",
    inputs=("self", "src"),
    forward=_copy_forward,
    vjp={"self": _overwritten, "src": lambda g: g},
    jvp=LINEAR,
)


@register("copy_", function=False, method=True)
def copy_(self: Tensor, src, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, cast) into this tensor in place; gradients flow to ``src``.

    Example:
        >>> import ember
        >>> ember.zeros(2).copy_(ember.tensor([1, 2]))
        tensor([1., 2.])
    """
    if not isinstance(src, Tensor):
        src = _wrap(np.asarray(src))
    try:
        np.broadcast_to(src._data, self._data.shape)
    except ValueError:
        raise broadcast_error(self._data.shape, src._data.shape) from None
    return apply_inplace(self, _copied, src, copy_old=False)


def _copied(self: Tensor, src: Tensor) -> Tensor:
    return record(CopyBackwards, _copy_forward(self._data, src._data), (self, src))


# -- t_ ------------------------------------------------------------------------------------------

TBackward1 = defop(  # the in-place transpose t_()
    "TBackward1",
    forward=lambda a: a.T,
    vjp={"self": lambda g: g.T},
    jvp=LINEAR,
)


@register("t_", function=False, method=True)
def t_(self: Tensor) -> Tensor:
    """Transpose a tensor of at most 2 dims in place (the seed's ``y.t_()``).

    Example:
        >>> import ember
        >>> ember.zeros(2, 3).t_().shape
        torch.Size([3, 2])
    """
    if self._data.ndim > 2:
        raise RuntimeError(
            f"t_() expects a tensor with <= 2 dimensions, but self is {self._data.ndim}D"
        )
    return _reshaped_in_place(self, self._data.T, TBackward1, (), lambda t: t.t())


def _reshaped_in_place(self: Tensor, new, cls, params: tuple, tangent_fn) -> Tensor:
    """``self`` now sees its data as the array ``new`` (a view of the same memory with
    another shape or order), recorded as ``cls``; its tangent changes by ``tangent_fn``."""
    recording = _state.enabled and self._rg
    check_writable(self, recording, rebase=False)
    tangent = tangent_of(self) if _on else None
    node = None
    if recording:
        edges = edges_of((self,))
        self._data = new
        node = make_node(cls, edges, self, (self,), params)
    else:
        self._data = new
    self._bump()
    set_history(self, node, None)
    if tangent is not None:
        with suspended:
            self._aux.tangent = tangent_fn(tangent)
    return self


# -- squeeze_, unsqueeze_, transpose_ -----------------------------------------------------------
# The in-place shape changes: the tensor sees its memory with the new shape, and records the
# in-place node torch names (not a view node: the tensor is changed, nothing new is made).

SqueezeBackward3 = defop(  # squeeze_()
    "SqueezeBackward3",
    params=("self_sym_sizes",),
    forward=lambda a, self_sym_sizes: a.squeeze(),
    vjp={"self": lambda g, self_sym_sizes: g.reshape(tuple(self_sym_sizes))},
    jvp=LINEAR,
)

SqueezeBackward5 = defop(  # squeeze_(dims)
    "SqueezeBackward5",
    params=("dim", "self_sym_sizes"),
    forward=lambda a, dim, self_sym_sizes: _squeeze_array(a, dim),
    vjp={"self": lambda g, dim, self_sym_sizes: g.reshape(tuple(self_sym_sizes))},
    jvp=LINEAR,
)

UnsqueezeBackward1 = defop(  # unsqueeze_(dim)
    "UnsqueezeBackward1",
    params=("dim",),
    forward=lambda a, dim: a.reshape(a.shape[:dim] + (1,) + a.shape[dim:]),
    vjp={"self": lambda g, dim: g.squeeze(dim)},
    jvp=LINEAR,
)

TransposeBackward1 = defop(  # transpose_(dim0, dim1)
    "TransposeBackward1",
    params=("dim0", "dim1"),
    forward=lambda a, dim0, dim1: a.swapaxes(dim0, dim1) if a.ndim else a,
    vjp={"self": lambda g, dim0, dim1: g.swapaxes(dim0, dim1) if g.ndim else g},
    jvp=LINEAR,
)


@register("squeeze_", function=False, method=True)
def squeeze_(self: Tensor, dim=None) -> Tensor:
    """Remove dims of size 1 in place (all, or only those in ``dim``).

    Example:
        >>> import ember
        >>> x = ember.zeros(2, 1, 3)
        >>> x.squeeze_(1).shape
        torch.Size([2, 3])
        >>> x.shape
        torch.Size([2, 3])
    """
    a = self._data
    shape = a.shape
    if dim is None:
        return _reshaped_in_place(self, a.squeeze(), SqueezeBackward3, (shape,), _squeeze_t(None))
    if isinstance(dim, (tuple, list)):
        dims = normalize_dims(tuple(dim), a.ndim)
        new = _squeeze_array(a, dims)
        return _reshaped_in_place(self, new, SqueezeBackward5, (dims, shape), _squeeze_t(dims))
    d = normalize_dim(dim, a.ndim)
    new = _squeeze_array(a, (d,))
    return _reshaped_in_place(self, new, SqueezeBackward4, (d, shape), _squeeze_t(d))


def _squeeze_t(dim):
    return lambda t: t.squeeze() if dim is None else t.squeeze(dim)


@register("unsqueeze_", function=False, method=True)
def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """Insert a dim of size 1 at ``dim``, in place.

    Example:
        >>> import ember
        >>> x = ember.zeros(3)
        >>> x.unsqueeze_(0).shape
        torch.Size([1, 3])
    """
    a = self._data
    d = normalize_dim(dim, a.ndim + 1)
    new = a.reshape(a.shape[:d] + (1,) + a.shape[d:])
    return _reshaped_in_place(self, new, UnsqueezeBackward1, (d,), lambda t: t.unsqueeze(d))


@register("transpose_", function=False, method=True)
def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dims in place (``swapdims_`` and ``swapaxes_`` are the same method).

    Example:
        >>> import ember
        >>> x = ember.zeros(2, 3)
        >>> x.transpose_(0, 1).shape
        torch.Size([3, 2])
    """
    a = self._data
    d0 = normalize_dim(dim0, a.ndim)
    d1 = normalize_dim(dim1, a.ndim)
    new = a.swapaxes(d0, d1) if a.ndim else a
    return _reshaped_in_place(
        self, new, TransposeBackward1, (d0, d1), lambda t: t.transpose(d0, d1)
    )


@register("swapdims_", function=False, method=True)
def swapdims_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """``transpose_``: swap two dims in place.

    Example:
        >>> import ember
        >>> ember.zeros(2, 3, 4).swapdims_(0, 2).shape
        torch.Size([4, 3, 2])
    """
    return transpose_(self, dim0, dim1)


@register("swapaxes_", function=False, method=True)
def swapaxes_(self: Tensor, axis0: int, axis1: int) -> Tensor:
    """``transpose_``: swap two dims in place.

    Example:
        >>> import ember
        >>> ember.zeros(2, 3, 4).swapaxes_(0, 1).shape
        torch.Size([3, 2, 4])
    """
    return transpose_(self, axis0, axis1)


# -- resize_, resize_as_ -------------------------------------------------------------------------


def _resize_size(fname: str, args: tuple) -> tuple:
    """The sizes of ``resize_(*sizes)`` or ``resize_(sizes)``, with torch's errors."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, Tensor)):
        args = tuple(args[0].tolist() if isinstance(args[0], Tensor) else args[0])
    out = []
    for i, n in enumerate(args):
        if isinstance(n, Tensor) and n._data.ndim == 0 and n._data.dtype.kind in "iu":
            n = int(n._data)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(
                f"{fname}(): argument 'size' (position {i + 1}) must be tuple of ints, "
                f"not {type(n).__name__}"
            )
        if n < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {int(n)}: {list(args)}"
            )
        out.append(int(n))
    return tuple(out)


def _owner(a: np.ndarray) -> np.ndarray:
    """The array that owns ``a``'s memory (``a`` itself when it does)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _resized(a: np.ndarray, shape: tuple) -> np.ndarray:
    """torch's resize_ of the array ``a``: its memory from its first element on, seen as a
    contiguous array of ``shape``; where that memory is too short, a new array holding it
    as its prefix (the rest uninitialized, as torch's)."""
    n = math.prod(shape)
    item = a.itemsize
    owner = _owner(a)
    if a.size and owner.flags.c_contiguous and owner.flags.writeable:
        start = a.__array_interface__["data"][0]
        end = owner.__array_interface__["data"][0] + owner.nbytes
        available = (end - start) // item
        if n <= available:
            return np.lib.stride_tricks.as_strided(
                a, shape=shape, strides=_contiguous_strides(shape, item)
            )
        flat = np.lib.stride_tricks.as_strided(a, shape=(available,), strides=(item,))
    else:
        flat = a.reshape(-1)
    out = np.empty(shape, a.dtype)
    keep = min(n, flat.size)
    out.reshape(-1)[:keep] = flat[:keep]
    return out


def _contiguous_strides(shape: tuple, item: int) -> tuple:
    strides = []
    step = item
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _resize(self: Tensor, shape: tuple) -> Tensor:
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    check_writable(self, False)
    if shape != self._data.shape:
        self._data = _resized(self._data, shape)
    self._bump()
    return self


@register("resize_", function=False, method=True)
def resize_(self: Tensor, *sizes, memory_format=None) -> Tensor:
    """Give this tensor the shape ``sizes`` in place: its elements in memory order are kept
    (the first ``prod(sizes)`` of them); new elements are uninitialized, as torch's.

    Example:
        >>> import ember
        >>> x = ember.tensor([[1, 2, 3], [4, 5, 6]])
        >>> x.resize_(2, 2)
        tensor([[1, 2],
                [3, 4]])
        >>> x.resize_(5)[:4]
        tensor([1, 2, 3, 4])
    """
    if not sizes:
        raise TypeError('resize_() missing 1 required positional arguments: "size"')
    return _resize(self, _resize_size("resize_", sizes))


@register("resize_as_", method=True)
def resize_as_(input: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:
    """Give ``input`` the shape of ``the_template`` in place (``resize_`` to its shape).

    Example:
        >>> import ember
        >>> x = ember.tensor([1.0, 2.0, 3.0, 4.0])
        >>> x.resize_as_(ember.zeros(2, 2))
        tensor([[1., 2.],
                [3., 4.]])
    """
    if not isinstance(the_template, Tensor):
        raise TypeError(
            "resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
            f"{type(the_template).__name__}"
        )
    return _resize(input, tuple(the_template._data.shape))


# -- indexed assignment ------------------------------------------------------------------------


def _assign(a, src, index):
    out = a.copy()
    out[index] = src
    return out


def _cut_out(g, index):
    if isinstance(g, np.ndarray):
        g_self = g.copy()
        g_self[index] = 0
        return g_self
    return index_put(g, index, 0.0)


def _part(g, index):
    if isinstance(g, np.ndarray):
        return np.asarray(g[index])
    return index_np(g, index)  # NumPy's indexing semantics, as the forward used


CopySlices = defop(  # self[index] = src on a tensor in the graph
    "CopySlices",
    inputs=("self", "src"),
    params=("index",),
    forward=_assign,
    vjp={"self": _cut_out, "src": _part},
    jvp=LINEAR,
)


def _index_key(key):
    """Turn Tensors inside an index into arrays NumPy understands."""
    if isinstance(key, tuple):
        return tuple(_index_key(k) for k in key)
    if isinstance(key, Tensor):
        arr = key._data
        if arr.dtype.kind in "fV":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return arr
    if isinstance(key, list):
        return np.asarray([k._data if isinstance(k, Tensor) else k for k in key])
    return key


@register("__setitem__", function=False, method=True)
def setitem(self: Tensor, key, value) -> None:
    """``self[key] = value`` with torch's autograd semantics (CopySlices).

    Example:
        >>> import ember
        >>> m = ember.tensor([[2.0, 3.0]], requires_grad=True)
        >>> n = ember.zeros(1, 2)
        >>> n[0, 0] = m[0, 0] ** 2
        >>> n
        tensor([[4., 0.]], grad_fn=<CopySlices>)
    """
    idx = _index_key(key)
    if not isinstance(value, Tensor):
        if not isinstance(value, (int, float, bool, complex, np.generic)):
            kind = type(value)
            what = (
                kind.__name__
                if kind.__module__ == "builtins"
                else f"{kind.__module__}.{kind.__name__}"
            )
            raise TypeError(f"can't assign a {what} to a {_legacy_type_name(self._data.dtype)}")
        value = _wrap(np.asarray(value, dtype=self._data.dtype))
    recording = _state.enabled and (self._rg or value._rg)
    base = check_writable(self, recording)
    v = value._data
    try:
        target = self._data[idx]
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None
    if v.shape != np.shape(target):
        _check_assignable(v.shape, np.shape(target), key, v.dtype)
    tangents = (tangent_of(self), tangent_of(value)) if _on else (None, None)
    edges = edges_of((self, value)) if recording else None
    self._data[idx] = v  # written straight into self: no copy of the whole tensor
    self._bump()
    if recording:
        set_history(self, make_node(CopySlices, edges, self, (self, value), (idx,)), base)
    if tangents != (None, None) and self._data.dtype.kind in "fcV":
        ts, tv = tangents
        with suspended:
            new = (ts if ts is not None else self.new_zeros(self._data.shape)).clone()
            new._data[idx] = 0 if tv is None else tv._data
        inplace_tangent(self, new)


def _is_basic_key(key) -> bool:
    """True for an index of ints, slices, None and Ellipsis only (a view of the tensor)."""
    parts = key if isinstance(key, tuple) else (key,)
    return all(
        k is None
        or k is Ellipsis
        or isinstance(k, (slice, int, np.integer))
        or (isinstance(k, Tensor) and k._data.ndim == 0 and k._data.dtype.kind in "iu")
        for k in parts
    )


def _check_assignable(shape: tuple, target: tuple, key, np_dtype) -> None:
    """torch's error when a value of ``shape`` cannot be written to ``self[key]``."""
    if _is_basic_key(key):
        # torch drops the value's leading size-1 dims, then expands it to the target.
        while len(shape) > len(target) and shape[0] == 1:
            shape = shape[1:]
        expanded_size(shape, target, np_dtype)
        return
    try:
        np.broadcast_shapes(shape, target)
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(shape)} cannot be broadcast to "
            f"indexing result of shape {list(target)}"
        ) from None
