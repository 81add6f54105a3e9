"""The factories' long tail, against torch: ``tensor``/``as_tensor`` of every sequence torch
reads (deques, ranges, arrays, memoryviews, NumPy scalars) with its dtype inference and its
errors; ``requires_grad=`` on every factory; ``torch.normal``'s four overloads; the device
predicates; Tensor.multinomial / bernoulli / logit."""

from __future__ import annotations

import array
import collections
import warnings

import numpy as np
import pytest
import torch

import ember


class _WithArray:
    def __array__(self, dtype=None, copy=None):
        return np.arange(3, dtype=np.int32)


class _Floaty:
    def __float__(self):
        return 2.5

    def __index__(self):
        return 2


DATA = {
    "deque": lambda m: collections.deque([1, 2, 3]),
    "range": lambda m: range(3),
    "range_and_tuple": lambda m: [range(3), (1, 2, 3)],
    "deque_in_list": lambda m: [collections.deque([1.0, 2]), [3, 4]],
    "tuple_of_deque": lambda m: (collections.deque([1, 2]),),
    "nested_ranges": lambda m: [[range(2)], [range(2)]],
    "array_f": lambda m: array.array("f", [1, 2]),
    "array_d": lambda m: array.array("d", [1, 2]),
    "array_i": lambda m: array.array("i", [1, 2]),
    "memoryview": lambda m: memoryview(b"ab"),
    "memoryview_d": lambda m: memoryview(array.array("d", [1, 2])),
    "bytearray": lambda m: bytearray(b"ab"),
    "bytes": lambda m: b"ab",
    "np_float32": lambda m: np.float32(1.5),
    "np_int16": lambda m: np.int16(3),
    "np_bool": lambda m: np.bool_(True),
    "np_complex64": lambda m: np.complex64(1 + 2j),
    "list_np_int16": lambda m: [np.int16(3)],
    "list_np_float32": lambda m: [np.float32(1.5), 2],
    "list_np_float16": lambda m: [np.float16(1.5)],
    "list_np_int32": lambda m: [np.int32(1), 2],
    "list_np_float64": lambda m: [np.float64(1.5), 2],
    "list_np_mixed_ints": lambda m: [np.uint8(1), np.int8(2)],
    "list_np_bools": lambda m: [np.bool_(True), True],
    "list_np_bool_int": lambda m: [np.bool_(True), 1],
    "list_np_0d": lambda m: [np.array(1.5), 2],
    "list_of_arrays": lambda m: [np.array([1, 2]), np.array([3, 4])],
    "list_of_f32_arrays": lambda m: [np.array([1, 2], np.float32), np.array([3, 4], np.float32)],
    "list_of_tensors": lambda m: [m.tensor([1, 2]), m.tensor([3, 4])],
    "list_of_float_tensors": lambda m: [m.tensor([1.0, 2]), m.tensor([3.0, 4])],
    "list_scalar_tensor": lambda m: [m.tensor(1.0), 2],
    "list_f64_scalar_tensor": lambda m: [m.tensor(1.0, dtype=m.float64), 2],
    "set": lambda m: {1, 2},
    "dict": lambda m: {1: 2},
    "ragged": lambda m: [[1, 2], [3]],
    "ragged_scalar_then_list": lambda m: [1, [2]],
    "ragged_list_then_scalar": lambda m: [[1], 2],
    "ragged_floats": lambda m: [[1.0], [2.0, 3.0]],
    "ragged_tuple_range": lambda m: [(1, 2), range(3)],
    "ragged_deep": lambda m: [[1, 2], [3, [4]]],
    "set_inside": lambda m: [[1, 2], {3, 4}],
    "object": lambda m: object(),
    "list_object": lambda m: [object()],
    "str": lambda m: "ab",
    "list_str": lambda m: ["ab"],
    "list_bytes": lambda m: [b"ab"],
    "none": lambda m: None,
    "list_none": lambda m: [None],
    "iterator": lambda m: iter([1, 2]),
    "with_array": lambda m: _WithArray(),
    "list_with_float": lambda m: [_Floaty()],
    "empty_range": lambda m: range(0),
    "empty_deque": lambda m: collections.deque(),
    "empty_nested": lambda m: [[], []],
    "int_past_int64": lambda m: [2**63],
    "int_below_int64": lambda m: [-(2**63) - 1],
    "inf": lambda m: [float("inf"), 1],
    "bool_int": lambda m: [True, 2],
    "complex_float": lambda m: [1 + 2j, 0.5],
    "wide_float": lambda m: [1e300],
    "nan_float": lambda m: [float("nan")],
    "int_and_negative": lambda m: [-1, 3.9],
    "big_int": lambda m: [2**40],
}
DTYPES = [None, "float64", "float32", "int64", "int32", "uint8", "bool", "complex64"]


def _outcome(lib, fn, data, dtype):
    kwargs = {} if dtype is None else {"dtype": getattr(lib, dtype)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = getattr(lib, fn)(data(lib), **kwargs)
        except Exception as e:  # noqa: BLE001  (the error is what is compared)
            return type(e).__name__, str(e).split("\n")[0]
    values = r.numpy()
    return str(r.dtype), tuple(r.shape), values.tolist()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", ["tensor", "as_tensor"])
@pytest.mark.parametrize("name", list(DATA))
def test_from_data_matches_torch(name, fn, dtype):
    want = _outcome(torch, fn, DATA[name], dtype)
    got = _outcome(ember, fn, DATA[name], dtype)
    if len(want) == 3 and got[:2] == want[:2]:  # values: NaN equal to NaN
        np.testing.assert_array_equal(np.array(got[2]), np.array(want[2]))
    else:
        assert got == want


def test_large_lists_stay_fast_and_exact():
    data = [float(i) / 7 for i in range(10_000)]
    np.testing.assert_array_equal(ember.tensor(data).numpy(), torch.tensor(data).numpy())
    ints = [[i, -i] for i in range(5_000)]
    np.testing.assert_array_equal(ember.tensor(ints).numpy(), torch.tensor(ints).numpy())


FACTORIES = {
    "zeros": lambda m, **k: m.zeros(2, 3, **k),
    "ones": lambda m, **k: m.ones((2,), **k),
    "empty": lambda m, **k: m.empty(2, **k),
    "full": lambda m, **k: m.full((2,), 1.5, **k),
    "full_int": lambda m, **k: m.full((2,), 3, **k),
    "eye": lambda m, **k: m.eye(2, 3, **k),
    "arange": lambda m, **k: m.arange(0.0, 2.0, 0.5, **k),
    "arange_int": lambda m, **k: m.arange(3, **k),
    "linspace": lambda m, **k: m.linspace(0, 1, 5, **k),
    "logspace": lambda m, **k: m.logspace(0, 1, 3, **k),
    "rand": lambda m, **k: m.rand(2, **k),
    "randn": lambda m, **k: m.randn(2, **k),
    "randint": lambda m, **k: m.randint(0, 3, (2,), **k),
    "randperm": lambda m, **k: m.randperm(3, **k),
    "normal": lambda m, **k: m.normal(0.0, 1.0, (2,), **k),
    "tensor": lambda m, **k: m.tensor([1.0, 2.0], **k),
    "tensor_int": lambda m, **k: m.tensor([1, 2], **k),
    "zeros_like": lambda m, **k: m.zeros_like(m.ones(2), **k),
    "ones_like": lambda m, **k: m.ones_like(m.ones(2), **k),
    "empty_like": lambda m, **k: m.empty_like(m.ones(2), **k),
    "full_like": lambda m, **k: m.full_like(m.ones(2), 2.0, **k),
    "rand_like": lambda m, **k: m.rand_like(m.ones(2), **k),
    "randn_like": lambda m, **k: m.randn_like(m.ones(2), **k),
    "randint_like": lambda m, **k: m.randint_like(m.ones(2), 3, **k),
}


@pytest.mark.parametrize("dtype", [None, "float64", "int64"])
@pytest.mark.parametrize("name", list(FACTORIES))
def test_requires_grad_on_every_factory(name, dtype):
    outcomes = []
    for lib in (torch, ember):
        kwargs = {"requires_grad": True}
        if dtype is not None:
            kwargs["dtype"] = getattr(lib, dtype)
        try:
            r = FACTORIES[name](lib, **kwargs)
            outcomes.append((str(r.dtype), tuple(r.shape), r.requires_grad, r.is_leaf))
        except Exception as e:  # noqa: BLE001
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] == outcomes[1]


def test_generator_keywords():
    for fn in ("rand_like", "randn_like"):
        a = getattr(ember, fn)(ember.zeros(3), generator=ember.Generator().manual_seed(4))
        b = getattr(ember, fn)(ember.zeros(3), generator=ember.Generator().manual_seed(4))
        assert a.tolist() == b.tolist()
    g = ember.Generator().manual_seed(2)
    assert ember.randint_like(ember.zeros(4), 2, 5, generator=g).min() >= 2


def _normal_outcome(lib, call):
    m = lib.zeros(2, 3, requires_grad=True)
    s = lib.ones(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = call(lib, m, s)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
    out = [str(r.dtype), tuple(r.shape), r.requires_grad]
    if r.grad_fn is not None:
        out.append(type(r.grad_fn).__name__)
        leaves = [t for t in (m, s) if t.requires_grad]
        grads = lib.autograd.grad(r.sum(), leaves, allow_unused=True)
        out.append([None if g is None else g.tolist() for g in grads])
    return out


NORMAL_CALLS = {
    "tensor_tensor": lambda m, x, s: m.normal(x, s),
    "tensor_tensor_f64_std": lambda m, x, s: m.normal(x.detach(), s.double()),
    "tensor_f64_mean": lambda m, x, s: m.normal(x.double(), s),
    "tensor_float": lambda m, x, s: m.normal(x, 2.0),
    "tensor_default_std": lambda m, x, s: m.normal(x),
    "mean_keyword": lambda m, x, s: m.normal(mean=x),
    "float_tensor": lambda m, x, s: m.normal(1.0, s),
    "float_float_size": lambda m, x, s: m.normal(1.0, 2.0, (2, 2)),
    "float_float_size_keyword": lambda m, x, s: m.normal(1.0, 2.0, size=(3,)),
    "float_float_f64": lambda m, x, s: m.normal(0.0, 1.0, (2,), dtype=m.float64),
    "float_float_requires_grad": lambda m, x, s: m.normal(0.0, 1.0, (2,), requires_grad=True),
    "float_float_generator": lambda m, x, s: m.normal(0, 1, (2,), generator=m.Generator()),
    "float_float_no_size": lambda m, x, s: m.normal(0.0, 1.0),
    "tensor_tensor_requires_grad": lambda m, x, s: m.normal(x, s, requires_grad=True),
    "tensor_float_dtype": lambda m, x, s: m.normal(x, 1.0, dtype=m.float64),
    "float_tensor_requires_grad": lambda m, x, s: m.normal(0.0, s, requires_grad=True),
    "int_mean": lambda m, x, s: m.normal(m.zeros(2, dtype=m.int64), 1.0),
    "int_dtype": lambda m, x, s: m.normal(0.0, 1.0, (2,), dtype=m.int64),
    "negative_std": lambda m, x, s: m.normal(x, -1.0),
    "negative_std_float": lambda m, x, s: m.normal(0.0, -1.0, (2,)),
    "negative_std_tensor": lambda m, x, s: m.normal(x, -s),
    "negative_std_tensor_float_mean": lambda m, x, s: m.normal(0.0, -s),
    "shapes_mismatch": lambda m, x, s: m.normal(x, m.ones(4)),
    "broadcast": lambda m, x, s: m.normal(x[0], m.ones(2, 1)),
}


@pytest.mark.parametrize("name", list(NORMAL_CALLS))
def test_normal_overloads_match_torch(name):
    assert _normal_outcome(ember, NORMAL_CALLS[name]) == _normal_outcome(torch, NORMAL_CALLS[name])


def test_normal_values_follow_mean_and_std():
    g = ember.Generator().manual_seed(0)
    mean = ember.tensor([0.0, 100.0, -100.0]).repeat(2000)
    out = ember.normal(mean, ember.tensor([1.0, 0.1, 0.0]).repeat(2000), generator=g)
    out = out.reshape(2000, 3)
    np.testing.assert_allclose(out.mean(0).numpy(), [0.0, 100.0, -100.0], atol=0.1)
    np.testing.assert_allclose(out.std(0).numpy(), [1.0, 0.1, 0.0], atol=0.05)
    fixed = ember.normal(3.0, 0.0, (4,), out=ember.empty(4))
    assert fixed.tolist() == [3.0] * 4


PREDICATES = [n for n in dir(torch.Tensor) if n.startswith("is_") and not n.startswith("is_s")]


@pytest.mark.parametrize(
    "name",
    [
        "is_cpu",
        "is_cuda",
        "is_xpu",
        "is_mps",
        "is_meta",
        "is_ipu",
        "is_mkldnn",
        "is_vulkan",
        "is_maia",
        "is_mtia",
        "is_xla",
        "is_nested",
        "is_quantized",
        "is_sparse",
        "is_sparse_csr",
        "is_pinned",
        "is_distributed",
    ],
)
def test_device_predicates(name):
    kind = type(getattr(torch.Tensor, name)).__name__
    expected = getattr(torch.zeros(2), name)
    got = getattr(ember.zeros(2), name)
    if kind == "getset_descriptor":  # a property in torch: a property here
        assert isinstance(getattr(ember.Tensor, name), property)
        assert got is expected
    else:
        assert callable(got) and got() is expected()


def test_multinomial_and_bernoulli_methods():
    g = ember.Generator().manual_seed(0)
    probs = ember.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert probs.multinomial(2, replacement=True, generator=g).tolist() == [[1, 1], [2, 2]]
    assert probs[0].multinomial(1).tolist() == [1]
    x = ember.tensor([0.0, 1.0, 1.0, 0.0], requires_grad=True)
    b = x.bernoulli(generator=g)
    assert b.tolist() == [0.0, 1.0, 1.0, 0.0] and type(b.grad_fn).__name__ == "BernoulliBackward0"
    assert ember.autograd.grad(b.sum(), x)[0].tolist() == [0.0] * 4
    assert ember.ones(3).bernoulli(0.0).tolist() == [0.0] * 3
    assert ember.bernoulli(ember.ones(2, dtype=ember.float64)).dtype == ember.float64
    for lib in (torch, ember):
        with pytest.raises(NotImplementedError, match="bernoulli_tensor_cpu_p_"):
            lib.tensor([1]).bernoulli()
        with pytest.raises(RuntimeError, match="Expected p_in >= 0 && p_in <= 1"):
            lib.tensor([2.0]).bernoulli()


@pytest.mark.parametrize("eps", [None, 0.2])
def test_logit_method_and_inplace(eps):
    p = np.array([0.1, 0.3, 0.5, 0.85, 0.95])
    results = []
    for lib in (torch, ember):
        x = lib.tensor(p, requires_grad=True)
        y = x.logit(eps)
        (g,) = lib.autograd.grad((y * lib.tensor(p[::-1].copy())).sum(), x)
        z = lib.tensor(p).logit_(eps=eps)
        results.append((y.detach().numpy(), g.numpy(), z.numpy(), type(y.grad_fn).__name__))
    for a, b in zip(*results[:1], *results[1:]):
        if isinstance(a, str):
            assert a == b
        else:
            np.testing.assert_allclose(b, a, rtol=1e-12)
