"""Special functions (``torch.special`` and their ``torch.*`` names) and the elementwise
math torch has beside the basic ops: error and gamma functions, Bessel functions, xlogy,
logit, sinc, the normal CDF, zeta, incomplete gamma, logaddexp, copysign, fmax/fmin, ...

The kernels are SciPy's (vectorised C, exact), imported on first use so that
``import ember`` stays light. Derivatives follow torch's formulas, including its
conventions at the edges of the domains (0 * log 0 = 0, masks instead of NaN) and its
refusals (``the derivative for 'zeta' is not implemented.``).
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from ..autograd.opdef import cconj
from ._core import (
    ELEMENTWISE,
    QUIET,
    binary_operands,
    default_float,
    defop,
    float_operand,
    quiet_reset,
    quiet_set,
    register,
    require_tensor,
    run,
    scalar_or_tensor,
    write_out,
)
from .elementwise import _select, _zero_where, example_doc, unary_op
from .reduction import make_return_type

_wrap = Tensor._wrap
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)
_LN2 = math.log(2.0)


def _sp(name: str):
    """A ``scipy.special`` function (SciPy is imported here, on first use, so that
    ``import ember`` stays light)."""
    import scipy.special  # lazy: see the docstring

    return getattr(scipy.special, name)


def _kernel(name: str):
    """``scipy.special.<name>`` applied in the input's dtype (float16 through float32)."""

    def fn(*arrays):
        f = _sp(name)
        dt = np.result_type(*arrays)
        if dt == np.float16:
            return f(*(np.asarray(a, np.float32) for a in arrays)).astype(np.float16)
        return np.asarray(f(*arrays), dtype=dt)

    fn.__name__ = name
    return fn


def _not_implemented(what: str):
    raise RuntimeError(f"the derivative for '{what}' is not implemented.")


# -- one-input special functions -----------------------------------------------------------------


def _erfc_vjp(g, self):
    return g * (-2 / _SQRT_PI) * np.exp(-self * self)


def _erfinv_vjp(g, result):
    return g * (0.5 * _SQRT_PI) * np.exp(result * result)


def _erfcx_vjp(g, self, result):
    return g * (2 * self * result - 2 / _SQRT_PI)


def _lgamma_vjp(g, self):
    return g * _FN["digamma"](self) if isinstance(self, Tensor) else g * _sp("digamma")(self)


def _digamma_vjp(g, self):
    if isinstance(self, Tensor):
        return g * polygamma(1, self)
    return g * _sp("polygamma")(1, self)


def _i0_vjp(g, self):
    return g * (_FN["special_i1"](self) if isinstance(self, Tensor) else _sp("i1")(self))


def _i0e_vjp(g, self, result):
    i1e = _FN["special_i1e"](self) if isinstance(self, Tensor) else _sp("i1e")(self)
    return g * (i1e - np.sign(self) * result)


def _i1_vjp(g, self, result):
    # i1'(x) = i0(x) - i1(x) / x, and 1/2 at x = 0.
    i0 = _FN["i0"](self) if isinstance(self, Tensor) else _sp("i0")(self)
    safe = _select(self == 0, 1.0, self)
    return g * _select(self == 0, 0.5, i0 - result / safe)


def _i1e_vjp(g, self, result):
    # i1e'(x) = i0e(x) - i1e(x) (sign(x) + 1/x), and 1/2 at x = 0.
    i0e = _FN["special_i0e"](self) if isinstance(self, Tensor) else _sp("i0e")(self)
    safe = _select(self == 0, 1.0, self)
    return g * _select(self == 0, 0.5, i0e - result * (np.sign(self) + 1 / safe))


def _entr(a):
    out = -a * np.log(np.where(a > 0, a, 1))
    return np.where(a < 0, -np.inf, np.where(np.isnan(a), a, out)).astype(a.dtype)


def _sinc(a):
    return np.sinc(a).astype(a.dtype, copy=False)


def _sinc_vjp(g, self):
    pix = math.pi * self
    safe = _select(self == 0, 1.0, self)
    d = (pix * np.cos(pix) - np.sin(pix)) / (math.pi * safe * safe)
    return g * cconj(_select(self == 0, 0.0, d))


def _ndtr_vjp(g, self):
    return g * np.exp(-0.5 * self * self) / _SQRT_2PI


def _ndtri_vjp(g, result):
    return g * _SQRT_2PI * np.exp(0.5 * result * result)


def _log_ndtr_vjp(g, self, result):
    return g * np.exp(-0.5 * self * self - result) / _SQRT_2PI


_UNARY = [
    # name, node, forward, rule, torch.* name?, torch.special names
    ("erfc", "ErfcBackward0", _kernel("erfc"), _erfc_vjp, True, ("erfc",)),
    ("erfinv", "ErfinvBackward0", _kernel("erfinv"), _erfinv_vjp, True, ("erfinv",)),
    ("lgamma", "LgammaBackward0", _kernel("gammaln"), _lgamma_vjp, True, ("gammaln",)),
    ("digamma", "DigammaBackward0", _kernel("digamma"), _digamma_vjp, True, ("digamma", "psi")),
    ("i0", "I0Backward0", _kernel("i0"), _i0_vjp, True, ("i0",)),
    ("sinc", "SincBackward0", _sinc, _sinc_vjp, True, ("sinc",)),
    ("special_erfcx", "SpecialErfcxBackward0", _kernel("erfcx"), _erfcx_vjp, False, ("erfcx",)),
    ("special_i0e", "SpecialI0EBackward0", _kernel("i0e"), _i0e_vjp, False, ("i0e",)),
    ("special_i1", "SpecialI1Backward0", _kernel("i1"), _i1_vjp, False, ("i1",)),
    ("special_i1e", "SpecialI1EBackward0", _kernel("i1e"), _i1e_vjp, False, ("i1e",)),
    (
        "special_entr",
        "SpecialEntrBackward0",
        _entr,
        lambda g, self: -g * (np.log(self) + 1),
        False,
        ("entr",),
    ),
    ("special_ndtri", "SpecialNdtriBackward0", _kernel("ndtri"), _ndtri_vjp, False, ("ndtri",)),
    (
        "special_log_ndtr",
        "SpecialLogNdtrBackward0",
        _kernel("log_ndtr"),
        _log_ndtr_vjp,
        False,
        ("log_ndtr",),
    ),
    # torch computes ndtr as a composite whose last node is a multiplication by a number.
    ("special_ndtr", "MulBackward1", _kernel("ndtr"), _ndtr_vjp, False, ("ndtr",)),
]
# Each op's docstring, in the table's order: what it computes, an example input (the values
# of ``ember.tensor(...)``) and what ember prints for the op of that tensor (called by its
# torch.* name, else by its first torch.special name).
_UNARY_DOCS = {
    "erfc": (
        "The complementary error function ``1 - erf(input)``.",
        "[0.0, 1.0]",
        "tensor([1.0000, 0.1573])",
    ),
    "erfinv": (
        "The inverse error function, on ``(-1, 1)``.",
        "[0.0, 0.5]",
        "tensor([0.0000, 0.4769])",
    ),
    "lgamma": (
        "The natural logarithm of the absolute value of the gamma function.",
        "[1.0, 5.0]",
        "tensor([0.0000, 3.1781])",
    ),
    "digamma": (
        "The digamma function, the derivative of ``lgamma``.",
        "[1.0, 2.0]",
        "tensor([-0.5772,  0.4228])",
    ),
    "i0": (
        "The modified Bessel function of the first kind of order 0.",
        "[0.0, 1.0]",
        "tensor([1.0000, 1.2661])",
    ),
    "sinc": (
        "The normalized sinc ``sin(pi * input) / (pi * input)``, 1 at 0.",
        "[0.0, 0.5]",
        "tensor([1.0000, 0.6366])",
    ),
    "special_erfcx": (
        "The scaled complementary error function ``exp(input ** 2) * erfc(input)``.",
        "[0.0, 10.0]",
        "tensor([1.0000, 0.0561])",
    ),
    "special_i0e": (
        "The exponentially scaled modified Bessel function ``exp(-|input|) * i0(input)``.",
        "[0.0, 1.0]",
        "tensor([1.0000, 0.4658])",
    ),
    "special_i1": (
        "The modified Bessel function of the first kind of order 1.",
        "[0.0, 1.0]",
        "tensor([0.0000, 0.5652])",
    ),
    "special_i1e": (
        "The exponentially scaled modified Bessel function ``exp(-|input|) * i1(input)``.",
        "[0.0, 1.0]",
        "tensor([0.0000, 0.2079])",
    ),
    "special_entr": (
        "The entropy term ``-input * log(input)``: 0 at 0, ``-inf`` for negative input.",
        "[0.5, 2.0]",
        "tensor([ 0.3466, -1.3863])",
    ),
    "special_ndtri": (
        "The quantile function of the standard normal distribution (inverse of ``ndtr``).",
        "[0.5, 0.975]",
        "tensor([0.0000, 1.9600])",
    ),
    "special_log_ndtr": (
        "The log of the standard normal CDF, accurate far in the lower tail.",
        "[0.0, -10.0]",
        "tensor([ -0.6931, -53.2313])",
    ),
    "special_ndtr": (
        "The CDF of the standard normal distribution.",
        "[0.0, 1.0]",
        "tensor([0.5000, 0.8413])",
    ),
}


def _unary_doc(name: str, top: bool, special: tuple) -> str:
    summary, values, output = _UNARY_DOCS[name]
    names = ([f"ember.{name}"] if top else []) + [f"ember.special.{n}" for n in special]
    if len(names) > 1:
        summary += " Also ``" + "``, ``".join(names[1:]) + "``."
    return example_doc(summary, f"{names[0]}(ember.tensor({values}))", output)


UNARY_NODES = {}  # function name -> node class
_FN = {}  # function name -> function (the rules call each other through it)
for _name, _node, _forward, _rule, _top, _special in _UNARY:
    _cls, _fn = unary_op(
        _name,
        _node,
        _forward,
        _rule,
        method=_top,
        namespace="torch" if _top else "_special",
        doc=_unary_doc(_name, _top, _special),
    )
    register(*_special, namespace="special")(_fn)
    globals()[_name] = _fn
    UNARY_NODES[_name] = _cls
    _FN[_name] = _fn


# -- with an integer parameter -------------------------------------------------------------------


def _polygamma_vjp(g, self, n):
    if isinstance(self, Tensor):
        return g * polygamma(n + 1, self)
    return g * _sp("polygamma")(n + 1, self)


PolygammaBackward0 = defop(
    "PolygammaBackward0",
    params=("n",),
    forward=lambda a, n: np.asarray(_sp("polygamma")(n, a), dtype=a.dtype),
    vjp={"self": _polygamma_vjp},
    jvp=ELEMENTWISE,
)


@register("polygamma")
def polygamma(n: int, input, *, out=None):
    """The ``n``-th derivative of the digamma function.

    Example:
        >>> import ember
        >>> ember.polygamma(1, ember.tensor([1.0]))
        tensor([1.6449])
    """
    require_tensor(input, "polygamma", "input", 2)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    a = float_operand(input._data)
    return write_out("polygamma", run(PolygammaBackward0, (input,), (a,), (int(n),)), out)


def _polygamma_method(self, n: int):
    """``ember.polygamma(n, self)``: the ``n``-th derivative of the digamma function.

    Example:
        >>> import ember
        >>> ember.tensor([1.0]).polygamma(1)
        tensor([1.6449])
    """
    return polygamma(n, self)


register("polygamma", function=False, method=True, inplace=True)(_polygamma_method)


def _mvlgamma_forward(a, p):
    js = np.arange(p, dtype=a.dtype).reshape((p,) + (1,) * a.ndim)
    lg = _sp("gammaln")(a - js / 2).sum(0)
    return np.asarray(lg + p * (p - 1) / 4 * math.log(math.pi), dtype=a.dtype)


def _mvlgamma_vjp(g, self, p):
    total = 0
    for j in range(p):
        shifted = self - j / 2
        total = total + (
            _FN["digamma"](shifted) if isinstance(self, Tensor) else _sp("digamma")(shifted)
        )
    return g * total


MvlgammaBackward0 = defop(
    "MvlgammaBackward0",
    params=("p",),
    forward=_mvlgamma_forward,
    vjp={"self": _mvlgamma_vjp},
    jvp=ELEMENTWISE,
)


@register("mvlgamma", method=True, inplace=True)
def mvlgamma(input, p: int, *, out=None):
    """The log of the multivariate gamma function of dimension ``p``.

    Example:
        >>> import ember
        >>> ember.mvlgamma(ember.tensor([2.5]), 2)
        tensor([0.8570])
    """
    require_tensor(input, "mvlgamma")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    a = float_operand(input._data)
    return write_out("mvlgamma", run(MvlgammaBackward0, (input,), (a,), (int(p),)), out)


def _logit_forward(a, eps):
    if eps is not None:
        a = np.clip(a, eps, 1 - eps)
    return np.log(a / (np.ones((), a.dtype) - a))  # not 1: NumPy < 2.1.3 makes bfloat16 float32


def _logit_vjp(g, self, eps):
    d = g / (self * (1 - self))
    if eps is None:
        return d
    return _zero_where((self < eps) | (self > 1 - eps), d)


LogitBackward0 = defop(
    "LogitBackward0",
    params=("eps",),
    forward=_logit_forward,
    vjp={"self": _logit_vjp},
    jvp=ELEMENTWISE,
)


@register("logit", method=True, inplace=True)
def logit(input, eps=None, *, out=None):
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given.

    Example:
        >>> import ember
        >>> ember.logit(ember.tensor([0.5, 0.75]))
        tensor([0.0000, 1.0986])
    """
    require_tensor(input, "logit")
    a = float_operand(input._data)
    return write_out("logit", run(LogitBackward0, (input,), (a,), (eps,)), out)


# -- two inputs ----------------------------------------------------------------------------


def _xlogy_forward(a, b):
    out = a * np.log(np.where(a == 0, 1, b))
    return np.where(np.isnan(b), b, np.where(a == 0, 0, out))


def _xlogy_self(g, other, self):
    # torch's rule: xlogy(g, other), not g * log(other): 0 where g is 0 (log(0) * 0 is NaN)
    gl = xlogy(g, other) if isinstance(g, Tensor) else _xlogy_forward(g, _like(other, g))
    return _zero_where((self == 0) & (other <= 0), gl)


def _like(x, array):
    """A number operand as an array of ``array``'s dtype (NumPy would make it float64)."""
    return x if isinstance(x, (np.ndarray, Tensor)) else np.asarray(x, array.dtype)


XlogyBackward0 = defop(
    "XlogyBackward0",
    inputs=("self", "other"),
    forward=_xlogy_forward,
    vjp={"self": _xlogy_self, "other": lambda g, self, other: g * self / other},
    jvp=ELEMENTWISE,
)
XlogyBackward1 = defop(  # number ** self: xlogy(number, tensor)
    "XlogyBackward1",
    inputs=("other",),
    params=("self",),
    forward=lambda b, a: _xlogy_forward(np.asarray(a, b.dtype), b),
    vjp={"other": lambda g, self, other: g * self / other},
    jvp=ELEMENTWISE,
)


def _xlogy_self_number(g, other, self):
    # torch's rule for a number other: no gradient where self is 0 unless other > 0 (a NaN
    # other included, unlike the tensor rule's other <= 0)
    gl = xlogy(g, other) if isinstance(g, Tensor) else _xlogy_forward(g, _like(other, g))
    return gl if other > 0 else _zero_where(self == 0, gl)


XlogyBackward2 = defop(  # xlogy(tensor, number)
    "XlogyBackward2",
    params=("other",),
    forward=lambda a, b: _xlogy_forward(a, np.asarray(b, a.dtype)),
    vjp={"self": _xlogy_self_number},
    jvp=ELEMENTWISE,
)


def _two(fname: str, tensor_cls, scalar_self_cls, scalar_other_cls, floats: bool = True):
    """The function of a two-operand op with number overloads (torch's Scalar variants)."""

    def op(input, other, *, out=None):
        input, other = scalar_or_tensor(input), scalar_or_tensor(other)
        a, b = binary_operands(input, other)
        if floats:
            # A Python number takes the tensor's dtype (torch's wrapped number), not float64
            if isinstance(a, np.ndarray):
                b = _like(b, a)
            else:
                a = _like(a, b)
            a, b = float_operand(a), float_operand(b)
        if isinstance(input, Tensor) and isinstance(other, Tensor):
            t = run(tensor_cls, (input, other), (a, b))
        elif isinstance(other, Tensor):
            t = run(scalar_self_cls, (other,), (b,), (a,))
        else:
            t = run(scalar_other_cls, (input,), (a,), (b,))
        return write_out(fname, t, out)

    op.__name__ = op.__qualname__ = fname
    return op


xlogy = register("xlogy", method=True, inplace=True)(
    _two("xlogy", XlogyBackward0, XlogyBackward1, XlogyBackward2)
)
xlogy.__doc__ = """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN).

    Example:
        >>> import ember
        >>> ember.xlogy(ember.tensor([0.0, 2.0]), ember.tensor([0.0, 3.0]))
        tensor([0.0000, 2.1972])
    """
register("xlogy", namespace="special")(xlogy)


def _xlog1py_forward(a, b):
    out = a * np.log1p(np.where(a == 0, 0, b))
    return np.where(np.isnan(b), b, np.where(a == 0, 0, out))


SpecialXlog1PyBackward0 = defop(
    "SpecialXlog1PyBackward0",
    inputs=("self", "other"),
    forward=_xlog1py_forward,
    vjp={
        # torch's rule: xlog1py(g, other), 0 where g is 0 (not log1p(-1) * 0, NaN)
        "self": lambda g, self, other: _zero_where(
            (self == 0) & (other <= -1),
            special_xlog1py(g, other) if isinstance(g, Tensor) else _xlog1py_forward(g, other),
        ),
        "other": lambda g, self, other: g * self / (other + 1),
    },
    jvp=ELEMENTWISE,
)


@register("xlog1py", namespace="special")
def special_xlog1py(input, other, *, out=None):
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN).

    Example:
        >>> import ember
        >>> ember.special.xlog1py(ember.tensor([2.0]), ember.tensor([1.0]))
        tensor([1.3863])
    """
    input, other = scalar_or_tensor(input), scalar_or_tensor(other)
    a, b = binary_operands(input, other)
    # binary_operands leaves a Python number as it is: it takes the tensor's dtype here
    if isinstance(a, np.ndarray):
        b = _like(b, a)
    else:
        a = _like(a, b)
    a, b = float_operand(a), float_operand(b)
    return write_out("xlog1py", run(SpecialXlog1PyBackward0, (input, other), (a, b)), out)


def _logaddexp_forward(a, b):
    return np.logaddexp(a, b)


LogaddexpBackward0 = defop(
    "LogaddexpBackward0",
    inputs=("self", "other"),
    forward=np.logaddexp,
    vjp={
        "self": lambda g, self, other: g / (1 + np.exp(other - self)),
        "other": lambda g, self, other: g / (1 + np.exp(self - other)),
    },
    jvp=ELEMENTWISE,
)
Logaddexp2Backward0 = defop(
    "Logaddexp2Backward0",
    inputs=("self", "other"),
    forward=np.logaddexp2,
    vjp={
        "self": lambda g, self, other: g / (1 + np.exp2(other - self)),
        "other": lambda g, self, other: g / (1 + np.exp2(self - other)),
    },
    jvp=ELEMENTWISE,
)


def _binary(
    fname: str, cls, doc: str, floats: bool = True, namespaces=("torch",), inplace: bool = True
):
    def op(input, other, *, out=None):
        other = scalar_or_tensor(other)
        a, b = binary_operands(input, other)
        if floats:
            a, b = float_operand(np.asarray(a)), float_operand(np.asarray(b))
        return write_out(fname, run(cls, (input, other), (a, b)), out)

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = doc
    for ns in namespaces:
        register(fname, namespace=ns, method=ns == "torch", inplace=inplace and ns == "torch")(op)
    return op


logaddexp = _binary(
    "logaddexp",
    LogaddexpBackward0,
    """``log(exp(input) + exp(other))`` without overflow.

    Example:
        >>> import ember
        >>> ember.logaddexp(ember.tensor([0.0]), ember.tensor([0.0]))
        tensor([0.6931])
    """,
    inplace=False,  # torch has no Tensor.logaddexp_
)
logaddexp2 = _binary(
    "logaddexp2",
    Logaddexp2Backward0,
    """``log2(2**input + 2**other)`` without overflow.

    Example:
        >>> import ember
        >>> ember.logaddexp2(ember.tensor([1.0]), ember.tensor([1.0]))
        tensor([2.])
    """,
    inplace=False,  # torch has no Tensor.logaddexp2_
)


def _copysign_self(g, self, result):
    return g * _zero_where(self == 0, result / _select(self == 0, 1.0, self))


CopysignBackward0 = defop(
    "CopysignBackward0",
    inputs=("self", "other"),
    forward=np.copysign,
    vjp={"self": _copysign_self, "other": lambda g: g * 0},
    jvp=ELEMENTWISE,
)
CopysignBackward1 = defop(
    "CopysignBackward1",
    params=("other",),
    forward=np.copysign,
    vjp={"self": _copysign_self},
    jvp=ELEMENTWISE,
)


@register("copysign", method=True, inplace=True)
def copysign(input, other, *, out=None):
    """``input``'s magnitude with ``other``'s sign.

    Example:
        >>> import ember
        >>> ember.copysign(ember.tensor([1.0, -2.0]), -1.0)
        tensor([-1., -2.])
    """
    other = scalar_or_tensor(other)
    a, b = binary_operands(input, other)
    if isinstance(other, Tensor):
        a, b = float_operand(np.asarray(a)), float_operand(np.asarray(b))
        t = run(CopysignBackward0, (input, other), (a, b))
    else:  # a number keeps the tensor's float dtype
        t = run(CopysignBackward1, (input,), (float_operand(np.asarray(a)),), (b,))
    return write_out("copysign", t, out)


NextafterBackward0 = defop(
    "NextafterBackward0",
    inputs=("self", "other"),
    forward=np.nextafter,
    vjp={"self": lambda g, self, other: g * (self != other), "other": lambda g: g * 0},
    jvp=ELEMENTWISE,
)
nextafter = _binary(
    "nextafter",
    NextafterBackward0,
    """The next floating-point value after ``input`` toward ``other``.

    Example:
        >>> import ember
        >>> bool(ember.nextafter(ember.tensor([1.0]), ember.tensor([2.0])) > 1)
        True
    """,
    floats=False,
)


def _fmax_weight(self, other):
    return (self >= other) | np.isnan(other)


FmaxBackward0 = defop(
    "FmaxBackward0",
    inputs=("self", "other"),
    forward=np.fmax,
    vjp={
        "self": lambda g, self, other: g * _fmax_weight(self, other),
        "other": lambda g, self, other: g * ~_fmax_weight(self, other),
    },
    jvp=ELEMENTWISE,
)
FminBackward0 = defop(
    "FminBackward0",
    inputs=("self", "other"),
    forward=np.fmin,
    vjp={
        "self": lambda g, self, other: g * ((self <= other) | np.isnan(other)),
        "other": lambda g, self, other: g * ~((self <= other) | np.isnan(other)),
    },
    jvp=ELEMENTWISE,
)
fmax = _binary(
    "fmax",
    FmaxBackward0,
    """Elementwise maximum ignoring NaN (NaN only where both are NaN).

    Example:
        >>> import ember
        >>> ember.fmax(ember.tensor([1.0, float("nan")]), ember.tensor([0.0, 2.0]))
        tensor([1., 2.])
    """,
    floats=False,
    inplace=False,  # torch has no Tensor.fmax_ (nor fmin_)
)
fmin = _binary(
    "fmin",
    FminBackward0,
    """Elementwise minimum ignoring NaN (NaN only where both are NaN).

    Example:
        >>> import ember
        >>> ember.fmin(ember.tensor([1.0, float("nan")]), ember.tensor([0.0, 2.0]))
        tensor([0., 2.])
    """,
    floats=False,
    inplace=False,
)

LdexpBackward0 = defop(
    "LdexpBackward0",
    inputs=("self", "other"),
    forward=lambda a, e: a * np.exp2(e).astype(a.dtype if a.dtype.kind == "f" else default_float()),
    vjp={"self": lambda g, other: g * np.exp2(other)},
    jvp=ELEMENTWISE,
)


@register("ldexp", method=True, inplace=True)
def ldexp(input, other, *, out=None):
    """``input * 2**other``.

    Example:
        >>> import ember
        >>> ember.ldexp(ember.tensor([1.0, 2.0]), ember.tensor([3, 1]))
        tensor([8., 4.])
    """
    require_tensor(other, "ldexp", "other", 2)
    a = float_operand(input._data)
    return write_out("ldexp", run(LdexpBackward0, (input, other), (a, other._data)), out)


@register("float_power", method=True, inplace=True)
def float_power(input, exponent, *, out=None):
    """``input ** exponent`` computed in double precision (float64 or complex128).

    Example:
        >>> import ember
        >>> ember.float_power(ember.tensor([2]), 2)
        tensor([4.], dtype=torch.float64)
    """
    from .elementwise import pow as _pow  # pow of the same family module, named like a builtin

    def double(x):
        if isinstance(x, Tensor):
            return x.to(np.complex128 if x._data.dtype.kind == "c" else np.float64)
        return x

    if not isinstance(input, Tensor):
        return write_out("float_power", _pow(float(input), double(exponent)), out)
    return write_out("float_power", _pow(double(input), double(exponent)), out)


@register("heaviside", method=True, inplace=True)
def heaviside(input, values, *, out=None):
    """0 where ``input < 0``, 1 where ``input > 0``, ``values`` where it is 0 (not
    differentiable, as in torch).

    Example:
        >>> import ember
        >>> ember.heaviside(ember.tensor([-1.0, 0.0, 2.0]), ember.tensor([0.5]))
        tensor([0.0000, 0.5000, 1.0000])
    """
    require_tensor(values, "heaviside", "values", 2)
    a, b = binary_operands(input, values)
    return write_out("heaviside", run(HeavisideBackward, (input, values), (a, b)), out)


HeavisideBackward = defop(  # torch's heaviside has no derivative: a node that says so
    "NotImplemented",
    inputs=("self", "values"),
    forward=np.heaviside,
    vjp=lambda g: _raise("derivative for aten::heaviside is not implemented"),
    jvp=lambda t_self, t_values: _raise_fw("aten::heaviside"),
)


def _raise(msg: str):
    raise RuntimeError(msg)


def _raise_fw(op: str):
    raise NotImplementedError(f"Trying to use forward AD with {op} that does not support it.")


# -- zeta and the incomplete gamma functions (derivatives for the second argument only) -----------


def _zeta_other(g, self, other):
    if isinstance(other, Tensor):
        return g * -self * special_zeta(self + 1.0, other)
    return g * -self * _sp("zeta")(self + 1.0, other)


SpecialZetaBackward0 = defop(
    "SpecialZetaBackward0",
    inputs=("self", "other"),
    forward=_kernel("zeta"),
    vjp={"self": lambda g: _not_implemented("zeta"), "other": _zeta_other},
    jvp=None,  # torch has no forward mode for zeta
)
SpecialZetaBackward1 = defop(  # a number x
    "SpecialZetaBackward1",
    inputs=("other",),
    params=("self",),
    forward=lambda q, x: _kernel("zeta")(np.asarray(x, q.dtype), q),
    vjp={"other": _zeta_other},
    jvp=None,
)
SpecialZetaBackward2 = defop(  # a number q
    "SpecialZetaBackward2",
    params=("other",),
    forward=lambda x, q: _kernel("zeta")(x, np.asarray(q, x.dtype)),
    vjp={"self": lambda g: _not_implemented("zeta")},
    jvp=None,
)


special_zeta = register("zeta", namespace="special")(
    _two("special_zeta", SpecialZetaBackward0, SpecialZetaBackward1, SpecialZetaBackward2)
)
special_zeta.__doc__ = """The Hurwitz zeta function ``sum_k (k + other)**-input``.

    Example:
        >>> import ember
        >>> ember.special.zeta(ember.tensor([2.0]), ember.tensor([1.0]))
        tensor([1.6449])
    """


def _igamma_other(g, self, other):
    # d/dx P(a, x) = exp((a - 1) log x - x - lgamma(a)), and minus that for Q.
    lg = _FN["lgamma"](self) if isinstance(self, Tensor) else _sp("gammaln")(self)
    return g * np.exp((self - 1) * np.log(other) - other - lg)


IgammaBackward0 = defop(
    "IgammaBackward0",
    inputs=("self", "other"),
    forward=_kernel("gammainc"),
    vjp={"self": lambda g: _not_implemented("igamma: input"), "other": _igamma_other},
    jvp=None,  # torch has no forward mode for the incomplete gamma functions
)
IgammacBackward0 = defop(
    "IgammacBackward0",
    inputs=("self", "other"),
    forward=_kernel("gammaincc"),
    vjp={
        "self": lambda g: _not_implemented("igammac: input"),
        "other": lambda g, self, other: -_igamma_other(g, self, other),
    },
    jvp=None,
)


def _incomplete_gamma(fname: str, cls, doc: str, names: tuple):
    def op(input, other, *, out=None):
        a, b = binary_operands(input, other)
        a, b = float_operand(np.asarray(a)), float_operand(np.asarray(b))
        return write_out(fname, run(cls, (input, other), (a, b)), out)

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = doc
    for name, ns, method in names:
        register(name, namespace=ns, method=method, inplace=method)(op)
    return op


igamma = _incomplete_gamma(
    "igamma",
    IgammaBackward0,
    """The regularized lower incomplete gamma function ``P(input, other)``.

    Example:
        >>> import ember
        >>> ember.special.gammainc(ember.tensor([1.0]), ember.tensor([1.0]))
        tensor([0.6321])
    """,
    (("igamma", "torch", True), ("gammainc", "special", False)),
)
igammac = _incomplete_gamma(
    "igammac",
    IgammacBackward0,
    """The regularized upper incomplete gamma function ``Q(input, other)``.

    Example:
        >>> import ember
        >>> ember.special.gammaincc(ember.tensor([1.0]), ember.tensor([1.0]))
        tensor([0.3679])
    """,
    (("igammac", "torch", True), ("gammaincc", "special", False)),
)


# -- not differentiable --------------------------------------------------------------------


def _no_grad_unary(fname: str, kernel, doc: str):
    def op(input, *, out=None):
        require_tensor(input, fname)
        a = float_operand(input._data)
        token = quiet_set(QUIET)
        try:
            res = kernel(a)
        finally:
            quiet_reset(token)
        return write_out(fname, _wrap(np.asarray(res, dtype=a.dtype)), out)

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = doc
    return op


# torch.special's Bessel functions: the scipy.special kernel (None: sin(x)/x), and the
# docstring: what it computes, an example input (the values of ``ember.tensor(...)``) and what
# ember prints for ``ember.special.<name>(ember.tensor(<input>))``.
_BESSEL = {
    "bessel_j0": (
        "j0",
        "The Bessel function of the first kind of order 0.",
        "[0.0, 1.0]",
        "tensor([1.0000, 0.7652])",
    ),
    "bessel_j1": (
        "j1",
        "The Bessel function of the first kind of order 1.",
        "[0.0, 1.0]",
        "tensor([0.0000, 0.4401])",
    ),
    "bessel_y0": (
        "y0",
        "The Bessel function of the second kind of order 0.",
        "[1.0, 2.0]",
        "tensor([0.0883, 0.5104])",
    ),
    "bessel_y1": (
        "y1",
        "The Bessel function of the second kind of order 1.",
        "[1.0, 2.0]",
        "tensor([-0.7812, -0.1070])",
    ),
    "modified_bessel_i0": (
        "i0",
        "The modified Bessel function of the first kind of order 0.",
        "[0.0, 1.0]",
        "tensor([1.0000, 1.2661])",
    ),
    "modified_bessel_i1": (
        "i1",
        "The modified Bessel function of the first kind of order 1.",
        "[0.0, 1.0]",
        "tensor([0.0000, 0.5652])",
    ),
    "modified_bessel_k0": (
        "k0",
        "The modified Bessel function of the second kind of order 0.",
        "[1.0, 2.0]",
        "tensor([0.4210, 0.1139])",
    ),
    "modified_bessel_k1": (
        "k1",
        "The modified Bessel function of the second kind of order 1.",
        "[1.0, 2.0]",
        "tensor([0.6019, 0.1399])",
    ),
    "scaled_modified_bessel_k0": (
        "k0e",
        "The exponentially scaled ``exp(input) * modified_bessel_k0(input)``.",
        "[1.0, 2.0]",
        "tensor([1.1445, 0.8416])",
    ),
    "scaled_modified_bessel_k1": (
        "k1e",
        "The exponentially scaled ``exp(input) * modified_bessel_k1(input)``.",
        "[1.0, 2.0]",
        "tensor([1.6362, 1.0335])",
    ),
    "spherical_bessel_j0": (
        None,
        "The spherical Bessel function of the first kind of order 0, ``sin(x) / x``.",
        "[0.0, 1.0]",
        "tensor([1.0000, 0.8415])",
    ),
}
for _name, (_sp_name, _summary, _values, _output) in _BESSEL.items():
    _k = (
        _kernel(_sp_name)
        if _sp_name
        else (lambda a: np.where(a == 0, 1.0, np.sin(a) / np.where(a == 0, 1, a)))
    )
    register(_name, namespace="special")(
        _no_grad_unary(
            _name,
            _k,
            example_doc(
                f"{_summary} Not differentiable, as in torch.",
                f"ember.special.{_name}(ember.tensor({_values}))",
                _output,
            ),
        )
    )


@register("gcd", method=True, inplace=True)
def gcd(input, other, *, out=None):
    """Elementwise greatest common divisor of integer tensors.

    Example:
        >>> import ember
        >>> ember.gcd(ember.tensor([12, 9]), ember.tensor([8, 6]))
        tensor([4, 3])
    """
    return write_out("gcd", _integer_op("gcd", np.gcd, input, other), out)


@register("lcm", method=True, inplace=True)
def lcm(input, other, *, out=None):
    """Elementwise least common multiple of integer tensors.

    Example:
        >>> import ember
        >>> ember.lcm(ember.tensor([4, 6]), ember.tensor([6, 4]))
        tensor([12, 12])
    """
    return write_out("lcm", _integer_op("lcm", np.lcm, input, other), out)


def _integer_op(fname: str, fn, input, other):
    other = scalar_or_tensor(other)
    a, b = binary_operands(input, other)
    if np.asarray(a).dtype.kind not in "biu":
        from .._dtype import scalar_name  # only for this error message

        raise RuntimeError(
            f"\"{fname}_cpu\" not implemented for '{scalar_name(np.asarray(a).dtype)}'"
        )
    return _wrap(np.asarray(fn(a, b)))


# -- simple elementwise maps -----------------------------------------------------------------------

_D2R = math.pi / 180.0

Deg2RadBackward0 = defop(
    "Deg2RadBackward0",
    forward=lambda a: a * np.asarray(_D2R, a.dtype),
    vjp={"self": lambda g: g * _D2R},
    jvp=ELEMENTWISE,
)
Rad2DegBackward0 = defop(
    "Rad2DegBackward0",
    forward=lambda a: a * np.asarray(1 / _D2R, a.dtype),
    vjp={"self": lambda g: g * (1 / _D2R)},
    jvp=ELEMENTWISE,
)


@register("deg2rad", method=True, inplace=True)
def deg2rad(input, *, out=None):
    """Degrees to radians.

    Example:
        >>> import ember
        >>> ember.deg2rad(ember.tensor([180.0]))
        tensor([3.1416])
    """
    require_tensor(input, "deg2rad")
    return write_out("deg2rad", run(Deg2RadBackward0, (input,), (float_operand(input._data),)), out)


@register("rad2deg", method=True, inplace=True)
def rad2deg(input, *, out=None):
    """Radians to degrees.

    Example:
        >>> import ember
        >>> ember.rad2deg(ember.tensor([3.141592653589793]))
        tensor([180.])
    """
    require_tensor(input, "rad2deg")
    return write_out("rad2deg", run(Rad2DegBackward0, (input,), (float_operand(input._data),)), out)


def _nan_to_num_forward(a, nan, posinf, neginf):
    if a.dtype.kind not in "fc":
        return a.copy()
    info = np.finfo(a.dtype)
    return np.nan_to_num(
        a,
        nan=nan,
        posinf=info.max if posinf is None else posinf,
        neginf=info.min if neginf is None else neginf,
    )


NanToNumBackward0 = defop(
    "NanToNumBackward0",
    params=("nan", "posinf", "neginf"),
    forward=_nan_to_num_forward,
    vjp={"self": lambda g, self: g * np.isfinite(self)},
    jvp=ELEMENTWISE,
)


@register("nan_to_num", method=True, inplace=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default the
    dtype's largest and smallest finite values).

    Example:
        >>> import ember
        >>> ember.nan_to_num(ember.tensor([float("nan"), 1.0]))
        tensor([0., 1.])
    """
    require_tensor(input, "nan_to_num")
    t = run(NanToNumBackward0, (input,), (input._data,), (nan, posinf, neginf))
    return write_out("nan_to_num", t, out)


def _frexp_forward(a):
    mantissa, exponent = np.frexp(a)
    return mantissa, exponent.astype(np.int32), np.exp2(-exponent).astype(a.dtype)


FrexpBackward0 = defop(
    "FrexpBackward0",
    outputs=("mantissa", "exponent"),
    differentiable=(True, False),
    saves=("scale",),  # 2**-exponent: the mantissa's derivative
    forward=_frexp_forward,
    vjp=lambda grads, scale: grads[0] * scale,
    jvp=lambda t_self, scale: [t_self * scale, None],
)


@register("frexp", method=True)
def frexp(input, *, out=None):
    """``input = mantissa * 2**exponent`` with ``0.5 <= |mantissa| < 1``.

    Example:
        >>> import ember
        >>> ember.frexp(ember.tensor([8.0]))
        torch.return_types.frexp(
        mantissa=tensor([0.5000]),
        exponent=tensor([4], dtype=torch.int32))
    """
    require_tensor(input, "frexp")
    if input._data.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = run(FrexpBackward0, (input,), (input._data,))
    return frexp_type((mantissa, exponent))


frexp_type = make_return_type("frexp", ("mantissa", "exponent"))
