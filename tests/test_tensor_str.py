"""Tests for ember._tensor_str: tensor reprs must match PyTorch 2.13 character for character."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ember import _tensor_str
from ember._tensor_str import (
    format_tensor,
    get_printoptions,
    printoptions,
    set_default_numpy_dtype,
    set_printoptions,
)

DTYPES = [
    np.float16,
    np.float32,
    np.float64,
    np.int8,
    np.uint8,
    np.int16,
    np.int32,
    np.int64,
    np.bool_,
    np.complex64,
    np.complex128,
]
FLOAT_DTYPES = [np.float16, np.float32, np.float64]

SUFFIX_MODES = ["plain", "requires_grad", "grad_fn"]


def _reset() -> None:
    set_printoptions(profile="default")
    set_default_numpy_dtype(np.float32)
    # torch is only the oracle: reset it if some test imported it, never import it here.
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_printoptions(profile="default")
        torch.set_default_dtype(torch.float32)


@pytest.fixture(autouse=True)
def reset_state():
    _reset()
    yield
    _reset()


def _torch():
    """The torch oracle; tests comparing against it are skipped when it is not installed."""
    return pytest.importorskip("torch")


def _set_default(dtype) -> None:
    """Switch the default float dtype in both ember and torch."""
    name = np.dtype(dtype).name
    set_default_numpy_dtype(dtype)
    torch = _torch()
    torch.set_default_dtype(getattr(torch, name))


def _set_options(**kwargs) -> None:
    set_printoptions(**kwargs)
    _torch().set_printoptions(**kwargs)


def _expected(arr: np.ndarray, mode: str = "plain") -> tuple[str, list[str]]:
    """Return (torch repr, suffixes to pass to format_tensor) for ``arr`` in ``mode``."""
    t = _torch().from_numpy(arr.copy(order="C"))
    if mode == "plain":
        return repr(t), []
    t.requires_grad_()
    if mode == "requires_grad":
        return repr(t), ["requires_grad=True"]
    return repr(t.clone()), ["grad_fn=<CloneBackward0>"]


def _check(arr: np.ndarray, mode: str = "plain") -> None:
    arr = np.asarray(arr)
    if mode != "plain" and arr.dtype.kind not in "fc":
        mode = "plain"  # only floating tensors can require grad
    expected, suffixes = _expected(arr, mode)
    assert format_tensor(arr, suffixes) == expected


# ---------------------------------------------------------------------------
# Golden strings: run without torch and document the expected look.
# ---------------------------------------------------------------------------

GOLDEN = [
    (np.array([2.4776, -0.6099, -0.4804], np.float32), [], "tensor([ 2.4776, -0.6099, -0.4804])"),
    (
        np.array([634.2777, -156.1231, -122.9805], np.float32),
        [],
        "tensor([ 634.2777, -156.1231, -122.9805])",
    ),
    (
        np.array([[-364.07, -26.150], [-0.28240, -13.064]], np.float32),
        [],
        "tensor([[-3.6407e+02, -2.6150e+01],\n        [-2.8240e-01, -1.3064e+01]])",
    ),
    (
        np.array([102.4, 1024.0, 0.1024], np.float32),
        [],
        "tensor([1.0240e+02, 1.0240e+03, 1.0240e-01])",
    ),
    (
        np.ones((2, 2), np.float32),
        ["requires_grad=True"],
        "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)",
    ),
    (np.ones(2, np.float32), [], "tensor([1., 1.])"),
    (np.array(27.0, np.float32), [], "tensor(27.)"),
    (np.array(True), [], "tensor(True)"),
    (np.array(4.1259, np.float32), [], "tensor(4.1259)"),
    (np.zeros((0, 3), np.float32), [], "tensor([], size=(0, 3))"),
    (np.zeros(0, np.int32), [], "tensor([], dtype=torch.int32)"),
    (np.zeros(0, np.int64), [], "tensor([], dtype=torch.int64)"),
    (np.array([1, 2], np.int32), [], "tensor([1, 2], dtype=torch.int32)"),
    (np.array([True, False]), [], "tensor([ True, False])"),
    (
        np.array([1.5], np.float64),
        ["grad_fn=<AddBackward0>"],
        "tensor([1.5000], dtype=torch.float64, grad_fn=<AddBackward0>)",
    ),
    (np.arange(10, dtype=np.int64), [], "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"),
]


@pytest.mark.parametrize("arr, suffixes, expected", GOLDEN)
def test_golden(arr, suffixes, expected):
    assert format_tensor(arr, suffixes) == expected


def test_golden_summarised():
    set_printoptions(threshold=5)
    # (int64: NumPy's default integer is 32 bits on 32-bit platforms, WebAssembly's)
    assert format_tensor(np.arange(10, dtype=np.int64), []) == "tensor([0, 1, 2,  ..., 7, 8, 9])"


def test_does_not_import_torch():
    code = "import sys, ember._tensor_str; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# ---------------------------------------------------------------------------
# Print option state
# ---------------------------------------------------------------------------


def test_printoption_defaults():
    assert get_printoptions() == {
        "precision": 4,
        "threshold": 1000,
        "edgeitems": 3,
        "linewidth": 80,
        "sci_mode": None,
    }


@pytest.mark.parametrize(
    "calls",
    [
        [{"precision": 2}],
        [{"profile": "short"}],
        [{"profile": "full"}],
        [{"profile": "full", "precision": 7}, {"linewidth": 40}],
        [{"sci_mode": True}, {"precision": 3}],  # sci_mode resets on every call
        [{"threshold": 5, "edgeitems": 1}, {"profile": "default"}],
        [{"profile": "nonsense"}],
    ],
)
def test_printoption_semantics_match_torch(calls):
    t = _torch()
    for kwargs in calls:
        set_printoptions(**kwargs)
        t.set_printoptions(**kwargs)
    assert get_printoptions() == t._tensor_str.get_printoptions()
    assert list(get_printoptions()) == list(t._tensor_str.get_printoptions())


def test_printoptions_context_manager_restores():
    set_printoptions(precision=6, sci_mode=True)
    before = get_printoptions()
    with printoptions(precision=1, edgeitems=1):
        assert get_printoptions()["precision"] == 1
        assert get_printoptions()["sci_mode"] is None
    assert get_printoptions() == before


def test_get_printoptions_returns_copy():
    opts = get_printoptions()
    opts["precision"] = 99
    assert get_printoptions()["precision"] == 4


def test_default_dtype_hook():
    assert _tensor_str.get_default_numpy_dtype() == np.float32
    set_default_numpy_dtype(np.float64)
    assert _tensor_str._default_dtype[0] == np.dtype(np.float64)
    assert format_tensor(np.array([1.0], np.float64), []) == "tensor([1.])"
    assert format_tensor(np.array([1.0], np.float32), []) == "tensor([1.], dtype=torch.float32)"


# ---------------------------------------------------------------------------
# Hand-written tricky cases against torch
# ---------------------------------------------------------------------------

_rng = np.random.default_rng(1234)
NAN, INF = np.nan, np.inf

TRICKY = {
    "seed_vector": np.array([634.2777, -156.1231, -122.9805], np.float32),
    "seed_matrix_sci": np.array([[-364.07, -26.150], [-0.28240, -13.064]], np.float32),
    "sci_ratio": np.array([102.4, 1024.0, 0.1024], np.float32),
    "aligned": np.array([2.4776, -0.6099, -0.4804], np.float32),
    "ones_2d": np.ones((2, 2), np.float32),
    "scalar_int_valued": np.array(27.0, np.float32),
    "scalar_frac": np.array(4.1259, np.float32),
    "scalar_neg": np.array(-0.5, np.float64),
    "scalar_nan": np.array(NAN, np.float32),
    "scalar_neg_zero": np.array(-0.0, np.float32),
    "scalar_bool": np.array(False),
    "scalar_int": np.array(-7, np.int64),
    "scalar_tiny": np.array(1e-30, np.float64),
    "scalar_huge": np.array(1e30, np.float64),
    "empty_1d_float": np.zeros(0, np.float32),
    "empty_1d_f64": np.zeros(0, np.float64),
    "empty_1d_int64": np.zeros(0, np.int64),
    "empty_1d_bool": np.zeros(0, np.bool_),
    "empty_2d": np.zeros((0, 3), np.float32),
    "empty_3d_int": np.zeros((2, 0, 4), np.int32),
    "empty_complex": np.zeros((0,), np.complex64),
    "nan_inf_mix": np.array([NAN, INF, -INF, 1.5, -2.25], np.float32),
    "nan_inf_int_valued": np.array([NAN, INF, -INF, 1.0, -2.0], np.float64),
    "only_nonfinite": np.array([NAN, INF, -INF], np.float32),
    "zeros": np.zeros(5, np.float32),
    "neg_zeros": np.array([0.0, -0.0], np.float32),
    "neg_zero_frac": np.array([-0.0, 1.5], np.float32),
    "neg_zero_sci": np.array([1e-5, -0.0], np.float32),
    "nan_frac": np.array([NAN, -1.5], np.float32),
    "tiny": np.array([1e-5, 2e-5, 3e-5], np.float64),
    "tiny_boundary": np.array([1e-4, 2e-4], np.float64),
    "huge": np.array([1e8, 2e8], np.float64),
    "huge_boundary": np.array([1e8, 99999999.0], np.float64),
    "huge_int_valued": np.array([1e10, 3e10, -5e10], np.float32),
    "ratio_1000": np.array([1.0, 1000.0], np.float64),
    "ratio_1001": np.array([1.0, 1001.0], np.float64),
    "ratio_1000_5": np.array([0.5, 1000.5], np.float64),
    "extreme_ratio": np.array([1e-300, 1e300], np.float64),
    "exp_3_digits": np.array([1e-150, 1e150, -3.5], np.float64),
    "rounding_up": np.array([9.99996, 0.5], np.float64),
    "rounding_sci": np.array([9.99996e-6, 1.0], np.float64),
    "subnormal": np.array([5e-324, 1.0], np.float64),
    "f16_max": np.array([65504.0, 1e-3, -0.5], np.float16),
    "f16_vals": np.array([0.1, 0.2, 0.3, 1.0 / 3], np.float16),
    "f16_subnormal": np.array([6e-8, 1.0], np.float16),
    "f16_2d": _rng.standard_normal((4, 5)).astype(np.float16),
    "int_mixed_width": np.array([1, -100, 10000], np.int32),
    "int8_range": np.arange(-128, 128, dtype=np.int8),
    "uint8_range": np.arange(256, dtype=np.uint8).reshape(16, 16),
    "int16": np.array([[-32768, 0], [1, 32767]], np.int16),
    "int64_extremes": np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max]),
    "bool_mix": np.array([[True, False, True], [False, False, True]]),
    "bool_all_true": np.ones(4, bool),
    "wrap_floats": _rng.standard_normal(40).astype(np.float32),
    "wrap_ints": np.arange(100, dtype=np.int64),
    "wrap_sci_2d": (_rng.standard_normal((3, 25)) * 1e5).astype(np.float64),
    "wide_rows_3d": _rng.standard_normal((2, 3, 20)),
    "three_d": _rng.standard_normal((2, 3, 4)).astype(np.float32),
    "four_d": _rng.standard_normal((2, 2, 3, 2)).astype(np.float32),
    "four_d_ints": _rng.integers(-50, 50, (3, 2, 2, 4)).astype(np.int32),
    "column": _rng.standard_normal((5, 1)).astype(np.float32),
    "singleton_dims": np.array([[[1.5]]], np.float32),
    "big_1d": _rng.standard_normal(5000).astype(np.float32),
    "big_1d_int": np.arange(1001, dtype=np.int64),
    "exactly_threshold": np.arange(1000, dtype=np.float32),
    "big_2d": _rng.standard_normal((100, 100)),
    "big_2d_short_rows": _rng.standard_normal((1001, 2)).astype(np.float32),
    "big_2d_short_cols": _rng.standard_normal((2, 1001)).astype(np.float32),
    "big_3d": _rng.standard_normal((20, 20, 20)).astype(np.float32),
    "big_4d": _rng.standard_normal((7, 6, 5, 10)).astype(np.float16),
    "big_hidden_outlier": np.concatenate([np.ones(500), [1e12], np.ones(500)]),
    "big_edges_nan": np.concatenate([[NAN], np.zeros(2000), [-INF]]),
    "big_bool": _rng.integers(0, 2, (40, 40)).astype(bool),
    "mixed_magnitudes": np.array([1e-8, -3.2e-2, 4.5e3, 7.1e7, -9.9e9], np.float64),
    "complex_basic": np.array([1 + 2j, -0.5 - 1e-3j], np.complex64),
    "complex_int_valued": np.array([1 + 2j, 3 - 4j], np.complex128),
    "complex_scalar": np.array(1 + 2j, np.complex64),
    "complex_neg_zero_imag": np.array([1 - 0.0j, 2 + 0.0j], np.complex128),
    "complex_nan": np.array([complex(NAN, 1), complex(1, INF)], np.complex128),
    "complex_2d": (_rng.standard_normal((3, 4)) + 1j * _rng.standard_normal((3, 4))).astype(
        np.complex64
    ),
    "complex_big": _rng.standard_normal(1200) + 1j * _rng.standard_normal(1200) * 1e6,
    "noncontiguous": _rng.standard_normal((6, 8)).astype(np.float32)[::2, ::3],
    "transposed": _rng.standard_normal((3, 5)).T,
}


@pytest.mark.parametrize("mode", SUFFIX_MODES)
@pytest.mark.parametrize("name", sorted(TRICKY))
def test_tricky_cases(name, mode):
    _check(TRICKY[name], mode)


OPTION_VARIANTS = [
    {"precision": 0},
    {"precision": 1},
    {"precision": 8},
    {"sci_mode": True},
    {"sci_mode": False},
    {"threshold": 5},
    {"threshold": 0},
    {"edgeitems": 0},
    {"edgeitems": 1, "threshold": 10},
    {"edgeitems": 0, "threshold": 10},
    {"linewidth": 1},
    {"linewidth": 30},
    {"linewidth": 200},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "full", "sci_mode": True, "precision": 2},
]
OPTION_ARRAYS = [
    "seed_vector",
    "seed_matrix_sci",
    "nan_inf_mix",
    "only_nonfinite",
    "zeros",
    "neg_zero_frac",
    "int_mixed_width",
    "bool_mix",
    "wrap_floats",
    "big_1d",
    "big_2d",
    "big_3d",
    "four_d",
    "complex_2d",
    "scalar_frac",
    "empty_2d",
    "empty_1d_int64",
    "huge_int_valued",
]


@pytest.mark.parametrize("options", OPTION_VARIANTS, ids=repr)
@pytest.mark.parametrize("name", OPTION_ARRAYS)
def test_print_option_variants(name, options):
    _set_options(**options)
    _check(TRICKY[name])
    _check(TRICKY[name], "grad_fn")


@pytest.mark.parametrize("default", FLOAT_DTYPES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("empty", [False, True])
def test_default_dtype_controls_dtype_suffix(default, dtype, empty):
    _set_default(default)
    arr = np.zeros(0, dtype) if empty else np.array([1.5, -2.0, 0.25]).astype(dtype)
    _check(arr)
    _check(arr, "requires_grad")


@pytest.mark.parametrize("name_len", [10, 40, 55, 60, 70, 90])
@pytest.mark.parametrize("name", ["seed_vector", "seed_matrix_sci", "wrap_floats", "scalar_frac"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_suffixes_wrap(name_len, name, dtype):
    """A grad_fn that does not fit on the last line moves to its own indented line."""
    t = _torch()
    fn = type(
        "F" * name_len,
        (t.autograd.Function,),
        {
            "forward": staticmethod(lambda ctx, x: x.clone()),
            "backward": staticmethod(lambda ctx, g: g),
        },
    )
    arr = TRICKY[name].astype(dtype)
    out = fn.apply(t.from_numpy(arr.copy()).requires_grad_())
    suffix = f"grad_fn=<{'F' * name_len}Backward>"
    assert format_tensor(arr, [suffix]) == repr(out)


@pytest.mark.parametrize("linewidth", [20, 40, 60])
def test_suffixes_wrap_with_narrow_linewidth(linewidth):
    _set_options(linewidth=linewidth)
    for name in ["seed_vector", "int_mixed_width", "empty_2d", "scalar_neg"]:
        arr = TRICKY[name].astype(np.float64)
        _check(arr, "requires_grad")
        _check(arr, "grad_fn")


def test_accepts_array_likes_and_views():
    torch = _torch()
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7
    for view in [base[:, ::-1], base.transpose(2, 0, 1), base[1], base[..., 0]]:
        assert format_tensor(view, []) == repr(torch.tensor(view.copy()))


# ---------------------------------------------------------------------------
# Property-based comparisons against torch
# ---------------------------------------------------------------------------

dtypes_st = st.sampled_from(DTYPES).map(np.dtype)
small_shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6)


@st.composite
def small_arrays(draw):
    dtype = draw(dtypes_st)
    shape = draw(small_shapes)
    return draw(hnp.arrays(dtype, shape))


@st.composite
def big_arrays(draw, max_size=20_000):
    """Arrays of any size (often > 1000 elements) built from a seeded NumPy generator.

    Drawing thousands of elements one by one through hypothesis would be far too slow, so
    hypothesis picks the recipe (shape, dtype, magnitude range, special values) instead.
    """
    dtype = draw(dtypes_st)
    ndim = draw(st.integers(1, 4))
    sides = st.sampled_from([1, 2, 3, 5, 6, 7, 13, 40, 250, 1001, 1500])
    shape = tuple(draw(st.lists(sides, min_size=ndim, max_size=ndim)))
    while math.prod(shape) > max_size:
        shape = shape[1:]
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    size = math.prod(shape)
    if dtype.kind == "b":
        return rng.random(size).reshape(shape) < draw(st.floats(0, 1))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        hi = min(draw(st.sampled_from([2, 10, 1000, int(info.max)])), int(info.max))
        lo = 0 if dtype.kind == "u" else -min(hi, -int(info.min))
        return rng.integers(lo, hi, size=size, endpoint=True, dtype=dtype).reshape(shape)
    lo_exp = draw(st.integers(-40, 40))
    hi_exp = lo_exp + draw(st.integers(0, 12))
    recipe = draw(st.sampled_from(["normal", "log", "integral"]))
    if recipe == "normal":
        values = rng.standard_normal(size) * 10.0**lo_exp
    elif recipe == "log":
        values = 10.0 ** rng.uniform(lo_exp, hi_exp, size) * rng.choice([-1, 1], size)
    else:
        values = np.round(rng.standard_normal(size) * 10.0 ** (lo_exp % 10))
    specials = draw(st.sampled_from([0.0, 0.001, 0.3]))
    if specials:
        mask = rng.random(size) < specials
        values[mask] = rng.choice([NAN, INF, -INF, 0.0, -0.0], int(mask.sum()))
    if dtype.kind == "c":
        # Assign parts separately: multiplying inf by 1j would turn real parts into nan.
        parts = values
        values = np.empty(size, np.complex128)
        values.real = parts
        values.imag = rng.permutation(parts)
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(dtype).reshape(shape)


options_st = st.fixed_dictionaries(
    {},
    optional={
        "precision": st.integers(0, 10),
        "threshold": st.sampled_from([0, 1, 6, 50, 1000, 5000, math.inf]),
        "edgeitems": st.integers(0, 5),
        "linewidth": st.integers(1, 200),
        "profile": st.sampled_from(["default", "short", "full"]),
        "sci_mode": st.sampled_from([None, True, False]),
    },
)

HYPO = settings(
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@settings(HYPO, max_examples=1500)
@given(arr=small_arrays(), mode=st.sampled_from(SUFFIX_MODES))
def test_hypothesis_small_arrays(arr, mode):
    _check(arr, mode)


@settings(HYPO, max_examples=400)
@given(arr=big_arrays(), mode=st.sampled_from(SUFFIX_MODES))
def test_hypothesis_big_arrays(arr, mode):
    _check(arr, mode)


@settings(HYPO, max_examples=600)
@given(
    arr=st.one_of(small_arrays(), big_arrays(max_size=3000)),
    options=options_st,
    default=st.sampled_from(FLOAT_DTYPES),
    mode=st.sampled_from(SUFFIX_MODES),
)
def test_hypothesis_with_print_options(arr, options, default, mode):
    _reset()
    try:
        _set_default(default)
        _set_options(**options)
        _check(arr, mode)
    finally:
        _reset()
