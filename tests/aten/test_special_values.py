"""pow, float_power, div, floor_divide, remainder, fmod, xlogy and xlog1py at special values
(+-0.0, +-inf, NaN, +-1, integer and half-integer exponents, tiny and huge numbers), forward
and backward, against torch: the same NaNs, infinities, signs of zero and errors.

Finite non-zero values are compared to a few units in the last place: torch's pow is
SLEEF's, NumPy's is libm's, and their last bits differ where nothing special happens.
"""

# check() runs each lambda at once, inside the loop that binds its variables
# ruff: noqa: B023, E731

import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

INF, NAN = math.inf, math.nan
SPECIAL = [0.0, -0.0, 1.0, -1.0, INF, -INF, NAN, -2.0, -0.5, 0.5, 2.0, 3.0, -3.0, 2.5, -2.5,
           1e30, -1e30, 1e-30, -1e-30, 0.3, 1e-45, 100.0, -100.0]  # fmt: skip
# Number exponents: torch's pow kernel takes sqrt, 1/sqrt, 1/x and products for some
NUMBERS = [*SPECIAL, 0, 1, 2, 3, -1, -2, -3, 5]
FLOATS = ["float32", "float64"]
GRADS = [1.0, INF, NAN, 0.0, -2.0]  # incoming gradients: torch's rules order * and where
INTS = [0, 1, -1, 2, -2, 3, -3, 7, 62, 63, 64, 100]
COMPLEX = [0j, complex(-0.0, 0.0), complex(0.0, -0.0), 1 + 0j, -1 + 0j, 1j, -1j, 2 + 1j,
           -2 - 0.5j, 0.5 + 0.5j, complex(INF, 0), complex(0, INF), complex(NAN, 0),
           complex(NAN, NAN), 3 + 0j]  # fmt: skip

# relative tolerance for finite non-zero values (SLEEF vs libm); specials are exact
RTOL = {"float32": 1e-5, "float64": 1e-13, "complex64": 1e-4, "complex128": 1e-12}


def _outcome(mod, fn):
    try:
        return "ok", fn(mod)
    except Exception as e:  # the error is part of what is compared
        return "error", (type(e).__name__, str(e))


def _array(t) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def _same_values(got: np.ndarray, want: np.ndarray, where: str, rtol=None) -> None:
    assert str(got.dtype) == str(want.dtype) and got.shape == want.shape, (
        f"{where}: {got.dtype}{got.shape} vs torch's {want.dtype}{want.shape}"
    )
    if got.dtype.kind == "c":
        rtol = RTOL[str(got.dtype)]
        _same_values(got.real, want.real, where + " (real)", rtol)
        _same_values(got.imag, want.imag, where + " (imag)", rtol)
        return
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=where)
        return
    rtol = rtol or RTOL[str(got.dtype)]
    with np.errstate(all="ignore"):
        ordinary = np.isfinite(want) & (want != 0) & np.isfinite(got) & (got != 0)
        close = np.abs(got - want) <= rtol * np.abs(want)
    exact = (got == want) & (np.signbit(got) == np.signbit(want))
    ok = (np.isnan(got) & np.isnan(want)) | exact | (ordinary & close)
    bad = np.argwhere(~ok)
    assert not bad.size, f"{where}: " + "; ".join(
        f"at {tuple(i)} ember {got[tuple(i)]!r}, torch {want[tuple(i)]!r}" for i in bad[:8]
    )


def check(fn, where: str = "", labels=None) -> None:
    """``fn(module)`` under ember and torch: the same values, or the same error."""
    got, want = _outcome(ember, fn), _outcome(torch, fn)
    assert got[0] == want[0], f"{where}: ember {got}, torch {want}"
    if got[0] == "error":
        assert got[1] == want[1], where
        return
    gots = got[1] if isinstance(got[1], (tuple, list)) else [got[1]]
    wants = want[1] if isinstance(want[1], (tuple, list)) else [want[1]]
    for i, (g, w) in enumerate(zip(gots, wants)):
        _same_values(_array(g), _array(w), f"{where} [{i}]" + (f" {labels}" if labels else ""))


def _dt(m, name):
    return getattr(m, name)


def _col(m, values, dtype):
    return m.tensor(values, dtype=_dt(m, dtype)).reshape(-1, 1)


def _row(m, values, dtype):
    return m.tensor(values, dtype=_dt(m, dtype)).reshape(1, -1)


def _grads(m, f, leaves, dtype, gout):
    xs = [m.tensor(v, dtype=_dt(m, dtype), requires_grad=True) for v in leaves]
    out = f(m, *xs)
    out.backward(m.full(out.shape, gout, dtype=out.dtype))
    return [x.grad for x in xs]


# -- pow forward --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_pow_tensor_tensor(dtype):
    check(lambda m: m.pow(_col(m, SPECIAL, dtype), _row(m, SPECIAL, dtype)), "pow")
    check(lambda m: _col(m, SPECIAL, dtype) ** _row(m, SPECIAL, dtype), "**")
    check(lambda m: m.float_power(_col(m, SPECIAL, dtype), _row(m, SPECIAL, dtype)), "fp")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("e", NUMBERS, ids=repr)
def test_pow_number_exponent(dtype, e):
    """torch's kernel: x**-0.5 is 1/sqrt(x) (-inf at -0.0, NaN at -inf), x**3 is x*x*x."""
    x = lambda m: m.tensor(SPECIAL, dtype=_dt(m, dtype))
    check(lambda m: m.pow(x(m), e), "pow(t, e)")
    check(lambda m: x(m) ** e, "t ** e")
    check(lambda m: m.float_power(x(m), e), "float_power(t, e)")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("e", [0.5, -0.5, 2.0, -1.0, 3.0, 0.0], ids=repr)
def test_pow_broadcast_exponent_tensor(dtype, e):
    """A 0-dim or broadcast exponent tensor is still pow (NumPy takes sqrt for 0.5 there:
    -0.0 and NaN at -0.0 and -inf, where torch gives 0.0 and inf)."""
    x = lambda m: m.tensor(SPECIAL, dtype=_dt(m, dtype))
    check(lambda m: m.pow(x(m), m.tensor(e, dtype=_dt(m, dtype))), "0-dim exponent")
    check(lambda m: x(m).reshape(1, -1) ** m.full((2, 1), e, dtype=_dt(m, dtype)), "broadcast")
    check(lambda m: x(m) ** m.tensor([e], dtype=_dt(m, dtype)).expand(len(SPECIAL)), "expanded")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("base", NUMBERS, ids=repr)
def test_pow_number_base(dtype, base):
    x = lambda m: m.tensor(SPECIAL, dtype=_dt(m, dtype))
    check(lambda m: m.pow(base, x(m)), "pow(b, t)")
    check(lambda m: base ** x(m), "b ** t")
    check(lambda m: m.float_power(base, x(m)), "float_power(b, t)")


INT_DTYPES = ["int64", "int32", "int16", "int8", "uint8"]


def _int_values(dtype):
    return [abs(v) % 256 for v in INTS] if dtype == "uint8" else INTS


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_pow_integers(dtype):
    """torch's integer pow: 1 and -1 to negative powers are +-1, every other base gives 0
    (0 ** -1 included); NumPy refuses negative integer exponents."""
    v = _int_values(dtype)
    it = lambda m: m.tensor(v, dtype=_dt(m, dtype))
    check(lambda m: m.pow(it(m).reshape(-1, 1), it(m).reshape(1, -1)), "int ** int")
    for b in [*INTS, 300, -300, 2**40, 0.0, -0.0, 2.0, -2.0, 0.5, INF, NAN, True, False]:
        check(lambda m: m.pow(b, it(m)), f"{b!r} ** t")
    for e in [*INTS, 300, 2**40, 0.5, -0.5, -1.0, INF, NAN, True, False]:
        check(lambda m: m.pow(it(m), e), f"t ** {e!r}")  # negative ints and overflow: errors
        check(lambda m: m.float_power(it(m), e), f"float_power(t, {e!r})")
    for fdt in FLOATS:
        ft = lambda m: m.tensor(SPECIAL, dtype=_dt(m, fdt))
        check(lambda m: m.pow(ft(m).reshape(-1, 1), it(m).reshape(1, -1)), f"{fdt} ** int")
        check(lambda m: m.pow(it(m).reshape(-1, 1), ft(m).reshape(1, -1)), f"int ** {fdt}")
        check(lambda m: m.pow(m.tensor(-0.0, dtype=_dt(m, fdt)), it(m)), f"-0.0 {fdt} ** int")


def test_pow_bool():
    b = lambda m: m.tensor([True, False])
    for e in [True, False, 2, -1, 0.5, 0]:
        check(lambda m: b(m) ** e, f"bool ** {e!r}")
    for base in [True, False, 2, 0.5]:
        check(lambda m: m.pow(base, b(m)), f"{base!r} ** bool")
    check(lambda m: b(m) ** b(m), "bool ** bool")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_pow_complex(dtype):
    """torch's complex pow is C's cpow (exp(e * log(z))): 0 ** -1 is inf+nanj, 0 ** 0j NaN."""
    z = lambda m: m.tensor(COMPLEX, dtype=_dt(m, dtype))
    for e in [2, 3, -1, -2, 0.5, -0.5, 1.5, -1.5, 0, 1, 2 + 1j, -1 + 0j, 0.5j]:
        check(lambda m: m.pow(z(m), e), f"z ** {e!r}")
        check(lambda m: m.pow(e, z(m)), f"{e!r} ** z")
    check(lambda m: m.pow(z(m).reshape(-1, 1), z(m).reshape(1, -1)), "z ** z")
    check(lambda m: m.div(z(m).reshape(-1, 1), z(m).reshape(1, -1)), "z / z")


# -- pow backward -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("gout", GRADS, ids=repr)
def test_pow_tensor_tensor_grad(dtype, gout):
    """d/de 0 ** e is result * log(0): -inf (or inf) where e < 0, NaN where e is NaN; torch
    zeroes it only where e >= 0, and zeroes d/dx x ** 0 whatever the gradient."""
    n = len(SPECIAL)
    base = [[b] * n for b in SPECIAL]
    exp = [list(SPECIAL) for _ in SPECIAL]
    check(lambda m: _grads(m, lambda m, x, y: m.pow(x, y), [base, exp], dtype, gout), "grads")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("gout", GRADS, ids=repr)
def test_pow_number_grad(dtype, gout):
    for e in NUMBERS:
        check(
            lambda m: _grads(m, lambda m, x: m.pow(x, e), [SPECIAL], dtype, gout),
            f"d/dx x ** {e!r}",
        )
        check(
            lambda m: _grads(m, lambda m, x: m.pow(e, x), [SPECIAL], dtype, gout),
            f"d/dx {e!r} ** x",
        )
        check(
            lambda m: _grads(m, lambda m, x: m.float_power(x, e), [SPECIAL], dtype, gout),
            f"d/dx float_power(x, {e!r})",
        )


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_pow_complex_grad(dtype):
    vals = [0j, 1 + 0j, -1 + 0j, 1j, 2 + 1j, -2 - 0.5j, 0.5 + 0.5j, complex(INF, 0), 3 + 0j]
    n = len(vals)
    for e in [2, 3, -1, -2, 0.5, -0.5, 1.5, 0, 1, 2 + 1j]:
        check(lambda m: _grads(m, lambda m, x: m.pow(x, e), [vals], dtype, 1.0), f"z ** {e!r}")
        check(lambda m: _grads(m, lambda m, x: m.pow(e, x), [vals], dtype, 1.0), f"{e!r} ** z")
    zs, es = [[v] * n for v in vals], [list(vals) for _ in vals]
    check(lambda m: _grads(m, lambda m, x, y: m.pow(x, y), [zs, es], dtype, 1.0), "z ** z")


def test_pow_double_backward_at_zero():
    """The rules run recorded (create_graph) through the same kernels."""

    def f(m):
        x = m.tensor([0.0, -0.0, 2.0, -1.0], requires_grad=True)
        (g,) = m.autograd.grad((x**0.5).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        e = m.tensor([-1.0, 0.0, 2.0, NAN], requires_grad=True)
        (ge,) = m.autograd.grad((m.pow(m.tensor([0.0, 0.0, 0.0, 0.0]), e)).sum(), e)
        return g, gg, ge

    check(f, "create_graph")


# -- division -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_floats(dtype, mode):
    """floor is fmod based, as torch's (and Python's): inf // 2 is NaN, 1 // -inf is -1."""
    check(lambda m: m.div(_col(m, SPECIAL, dtype), _row(m, SPECIAL, dtype), rounding_mode=mode))
    for s in [*SPECIAL, 0, 2, -2]:
        x = lambda m: m.tensor(SPECIAL, dtype=_dt(m, dtype))
        check(lambda m: m.div(x(m), s, rounding_mode=mode), f"t / {s!r}")
        check(lambda m: m.div(m.tensor(s, dtype=_dt(m, dtype)), x(m), rounding_mode=mode))
    if mode == "floor":
        check(lambda m: _col(m, SPECIAL, dtype) // _row(m, SPECIAL, dtype), "//")
        check(lambda m: m.floor_divide(_col(m, SPECIAL, dtype), _row(m, SPECIAL, dtype)))
        check(lambda m: 1.0 // m.tensor(SPECIAL, dtype=_dt(m, dtype)), "1.0 // t")


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_div_integers(dtype, mode):
    """Integer division by zero raises torch's RuntimeError('ZeroDivisionError') (NumPy:
    0); true division gives inf/NaN."""
    big = {"int64": [2**62, -(2**62)], "int32": [2**31 - 1, -(2**31) + 1]}.get(dtype, [])
    v = [x for x in [0, 1, -1, 2, -2, 3, -3, 7, -7, 127, -127, *big] if dtype != "uint8" or x >= 0]
    nz = [x for x in v if x != 0]
    a = lambda m: m.tensor(v, dtype=_dt(m, dtype)).reshape(-1, 1)
    check(lambda m: m.div(a(m), m.tensor(nz, dtype=_dt(m, dtype)), rounding_mode=mode))
    check(lambda m: m.div(a(m), m.zeros(1, dtype=_dt(m, dtype)), rounding_mode=mode), "/ 0")
    check(lambda m: m.div(a(m), 0, rounding_mode=mode), "/ number 0")
    check(lambda m: m.div(a(m), 0.0, rounding_mode=mode), "/ 0.0")
    zeros = lambda m: m.tensor([0, 0], dtype=_dt(m, dtype))
    check(lambda m: m.div(zeros(m), m.tensor([0, 1], dtype=_dt(m, dtype)), rounding_mode=mode))
    if dtype != "uint8":
        check(lambda m: m.div(a(m), -1, rounding_mode=mode), "/ -1")
    if mode == "floor":
        check(lambda m: a(m) // m.zeros(1, dtype=_dt(m, dtype)), "// 0")
        check(lambda m: a(m) % m.zeros(1, dtype=_dt(m, dtype)), "% 0")
        check(lambda m: m.fmod(a(m), 0), "fmod 0")
        check(lambda m: m.remainder(5, m.zeros(1, dtype=_dt(m, dtype))), "5 % 0")
        check(lambda m: 5 % m.tensor([3, 2], dtype=_dt(m, dtype)), "5 % t")


def test_integer_division_of_bools_has_no_kernel():
    b = lambda m: m.tensor([True, False])
    check(lambda m: m.div(b(m), b(m), rounding_mode="trunc"), "trunc")
    check(lambda m: m.div(b(m), b(m), rounding_mode="floor"), "floor")
    check(lambda m: b(m) // b(m), "//")
    check(lambda m: b(m) % b(m), "%")
    check(lambda m: m.fmod(b(m), b(m)), "fmod")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("gout", GRADS, ids=repr)
def test_div_grad(dtype, gout):
    """torch's d/dy x / y is -g * (x / y / y) (not x / y**2, which underflows and
    overflows), and a rounded division's gradients are zeros whatever the gradient."""
    n = len(SPECIAL)
    xs, ys = [[v] * n for v in SPECIAL], [list(SPECIAL) for _ in SPECIAL]
    for mode in [None, "trunc", "floor"]:
        check(
            lambda m: _grads(
                m, lambda m, x, y: m.div(x, y, rounding_mode=mode), [xs, ys], dtype, gout
            ),
            f"div {mode}",
        )
    for s in [*SPECIAL, 0, 2]:
        check(lambda m: _grads(m, lambda m, x: s / x, [SPECIAL], dtype, gout), f"{s!r} / x")
        check(lambda m: _grads(m, lambda m, x: x / s, [SPECIAL], dtype, gout), f"x / {s!r}")


# -- xlogy, xlog1py -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_xlogy_xlog1py(dtype):
    """xlogy(0, y) is 0 unless y is NaN; a number operand takes the tensor's dtype."""
    for f in ["xlogy", "xlog1py"]:
        op = lambda m: getattr(m.special, f)
        check(lambda m: op(m)(_col(m, SPECIAL, dtype), _row(m, SPECIAL, dtype)), f)
        x = lambda m: m.tensor(SPECIAL, dtype=_dt(m, dtype))
        for s in [*SPECIAL, 0, 2]:
            check(lambda m: op(m)(x(m), s), f"{f}(t, {s!r})")
            check(lambda m: op(m)(s, x(m)), f"{f}({s!r}, t)")
    check(lambda m: m.xlogy(_col(m, SPECIAL, dtype), _row(m, SPECIAL, dtype)), "xlogy")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("gout", GRADS, ids=repr)
def test_xlogy_xlog1py_grad(dtype, gout):
    """torch's d/dx xlogy(x, y) is xlogy(g, y) (0 for a 0 gradient, not 0 * log(0)), zeroed
    where x == 0 and y <= 0 (y <= -1 for xlog1py); with a number y, zeroed where x == 0
    unless y > 0 (a NaN y included)."""
    n = len(SPECIAL)
    xs, ys = [[v] * n for v in SPECIAL], [list(SPECIAL) for _ in SPECIAL]
    for f in ["xlogy", "xlog1py"]:
        op = lambda m: getattr(m.special, f)
        check(lambda m: _grads(m, lambda m, x, y: op(m)(x, y), [xs, ys], dtype, gout), f)
    for s in [*SPECIAL, 0, 2]:
        check(
            lambda m: _grads(m, lambda m, x: m.xlogy(x, s), [SPECIAL], dtype, gout), f"(t, {s!r})"
        )
        check(
            lambda m: _grads(m, lambda m, y: m.xlogy(s, y), [SPECIAL], dtype, gout), f"({s!r}, t)"
        )
