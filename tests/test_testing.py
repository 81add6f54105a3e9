"""ember.testing against torch.testing: the same verdicts, exception types and reports."""

import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(fn, lib):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 (the outcome under test)
        return type(e).__name__, str(e)
    return "ok"


CASES = {
    "equal": lambda T: T.testing.assert_close(T.tensor([1.0, 2.0]), T.tensor([1.0, 2.0])),
    "within float32 tolerance": lambda T: T.testing.assert_close(
        T.tensor([1.0, 2.0]), T.tensor([1.0, 2.0 + 1e-7])
    ),
    "float mismatch": lambda T: T.testing.assert_close(
        T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.5, 3.0])
    ),
    "2-d index": lambda T: T.testing.assert_close(
        T.tensor([[1.0, 2.0], [3.0, 4.0]]), T.tensor([[1.0, 2.0], [3.0, 5.0]]), rtol=0, atol=0
    ),
    "float64": lambda T: T.testing.assert_close(
        T.tensor([1.0, 2.0], dtype=T.float64), T.tensor([1.0, 2.0001], dtype=T.float64)
    ),
    "large values": lambda T: T.testing.assert_close(
        T.tensor([1e10, 2e10]), T.tensor([1.0001e10, 2e10])
    ),
    "dtype": lambda T: T.testing.assert_close(
        T.tensor([1.0, 2.0]), T.tensor([1.0, 2.0], dtype=T.float64)
    ),
    "no dtype check": lambda T: T.testing.assert_close(
        T.tensor([1.0, 2.0]), T.tensor([1.0, 2.0], dtype=T.float64), check_dtype=False
    ),
    "shape": lambda T: T.testing.assert_close(T.tensor([1.0, 2.0]), T.tensor([1.0, 2.0, 3.0])),
    "0-d": lambda T: T.testing.assert_close(T.tensor(1.0), T.tensor(2.0)),
    "integers": lambda T: T.testing.assert_close(T.tensor([1, 2]), T.tensor([1, 3])),
    "bools": lambda T: T.testing.assert_close(T.tensor([True]), T.tensor([False])),
    "nan": lambda T: T.testing.assert_close(T.tensor([float("nan")]), T.tensor([float("nan")])),
    "equal_nan": lambda T: T.testing.assert_close(
        T.tensor([1.0, float("nan")]), T.tensor([1.0, float("nan")]), equal_nan=True
    ),
    "numbers": lambda T: T.testing.assert_close(1.0, 1.1),
    "number types": lambda T: T.testing.assert_close(1, 1.0),
    "booleans": lambda T: T.testing.assert_close(True, False),
    "none": lambda T: T.testing.assert_close(None, None),
    "none mismatch": lambda T: T.testing.assert_close(None, 1),
    "sequence": lambda T: T.testing.assert_close([T.tensor(1.0)], [T.tensor(1.5)]),
    "sequence length": lambda T: T.testing.assert_close([1, 2], [1, 2, 3]),
    "mapping": lambda T: T.testing.assert_close({"a": T.tensor(1.0)}, {"a": T.tensor(1.5)}),
    "mapping keys": lambda T: T.testing.assert_close({"a": 1}, {"b": 1}),
    "nested": lambda T: T.testing.assert_close(
        {"x": [T.tensor([1.0]), T.tensor([2.0])]}, {"x": [T.tensor([1.0]), T.tensor([3.0])]}
    ),
    "tensor and number": lambda T: T.testing.assert_close(T.tensor(1.0), 1.0),
    "tensor and list": lambda T: T.testing.assert_close(T.tensor([1.0, 2.0]), [1.0, 2.0]),
    "rtol without atol": lambda T: T.testing.assert_close(
        T.tensor([1.0]), T.tensor([1.0]), rtol=1e-5
    ),
    "msg string": lambda T: T.testing.assert_close(T.tensor([1.0]), T.tensor([2.0]), msg="custom"),
    "msg callable": lambda T: T.testing.assert_close(
        T.tensor([1.0]), T.tensor([2.0]), msg=lambda m: "X" + m[:10]
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_assert_close_matches_torch(name):
    assert _outcome(CASES[name], ember) == _outcome(CASES[name], torch)


@pytest.mark.parametrize(
    "dtype,low,high",
    [
        ("float32", None, None),
        ("float64", -1, 1),
        ("int64", 0, 5),
        ("uint8", None, None),
        ("bool", None, None),
    ],
)
def test_make_tensor_ranges_and_dtypes(dtype, low, high):
    t = ember.testing.make_tensor(4, 5, dtype=getattr(ember, dtype), low=low, high=high)
    assert tuple(t.shape) == (4, 5) and str(t.dtype) == f"torch.{dtype}"
    if dtype != "bool":
        lo = -9 if low is None and dtype != "uint8" else (low or 0)
        hi = 10 if dtype == "uint8" and high is None else (9 if high is None else high)
        assert float(t.min()) >= lo and float(t.max()) < hi


def test_make_tensor_options():
    t = ember.testing.make_tensor(
        (3, 4), dtype=ember.float64, requires_grad=True, exclude_zero=True
    )
    assert t.requires_grad and bool((t != 0).all())
    nc = ember.testing.make_tensor(3, 4, dtype=ember.float32, noncontiguous=True)
    assert not nc.is_contiguous() and tuple(nc.shape) == (3, 4)
