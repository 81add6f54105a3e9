"""torch API compatibility surface (ember._compat and the in-place random fills), checked
against torch: values, dtypes, errors and warnings."""

import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def outcome(fn, mod):
    """(kind, value) of running ``fn(mod)``: the result, or the exception type and text."""
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = fn(mod)
    except Exception as exc:  # noqa: BLE001
        return ("raise", type(exc).__name__, str(exc))
    return ("ok", r, [(x.category.__name__, str(x.message)) for x in w])


def ver(t):
    """The version counter as an int (ember keeps it in a list shared with views)."""
    v = t._version
    return v[0] if isinstance(v, list) else v


def same(fn):
    """``fn`` gives equal results (or the same error) under ember and torch."""
    e, t = outcome(fn, ember), outcome(fn, torch)
    assert e[0] == t[0], (e, t)
    if e[0] == "raise":
        assert e[1:] == t[1:]
        return None
    assert e[2] == t[2]
    re_, rt = e[1], t[1]
    if isinstance(rt, torch.Tensor):
        assert str(re_.dtype) == str(rt.dtype)
        assert tuple(re_.shape) == tuple(rt.shape)
        np.testing.assert_array_equal(re_.detach().numpy(), rt.detach().numpy())
        assert re_.requires_grad == rt.requires_grad
    elif isinstance(rt, tuple) and rt and isinstance(rt[0], torch.Tensor):
        for a, b in zip(re_, rt):
            assert str(a.dtype) == str(b.dtype)
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    elif isinstance(rt, torch.dtype):
        assert repr(re_) == repr(rt)
    else:
        assert re_ == rt
    return re_, rt


# -- cuda / backends ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.cuda.is_available(),
        lambda m: m.cuda.device_count(),
        lambda m: m.cuda.manual_seed(1),
        lambda m: m.cuda.manual_seed_all(1),
        lambda m: m.cuda.is_initialized(),
        lambda m: m.cuda.synchronize(),
        lambda m: m.cuda.current_device(),
        lambda m: m.cuda.empty_cache(),
        lambda m: m.tensor([1.0]).cuda(),
        lambda m: m.backends.cudnn.deterministic,
        lambda m: m.backends.cudnn.benchmark,
        lambda m: m.backends.cudnn.enabled,
        lambda m: m.backends.cudnn.is_available(),
        lambda m: m.backends.mps.is_available(),
        lambda m: m.backends.mps.is_built(),
    ],
)
def test_cuda_and_backends(fn):
    same(fn)


def test_backend_flags_settable():
    import ember.backends.cudnn as cudnn

    old = cudnn.deterministic, cudnn.benchmark
    try:
        ember.backends.cudnn.deterministic = True
        ember.backends.cudnn.benchmark = True
        assert cudnn.deterministic and ember.backends.cudnn.benchmark
    finally:
        cudnn.deterministic, cudnn.benchmark = old


# -- threads and determinism ----------------------------------------------------------------------


def test_num_threads():
    n = ember.get_num_threads()
    assert isinstance(n, int) and n >= 1
    try:
        assert ember.set_num_threads(1) is None
        assert ember.get_num_threads() == 1
    finally:
        ember.set_num_threads(n)
    for bad in (0, -1, 1.5):
        same(lambda m, bad=bad: m.set_num_threads(bad))


def test_deterministic_algorithms():
    try:
        for mode, warn_only in [(True, False), (True, True), (False, False)]:
            for m in (ember, torch):
                assert m.use_deterministic_algorithms(mode, warn_only=warn_only) is None
            same(lambda m: m.are_deterministic_algorithms_enabled())
            same(lambda m: m.is_deterministic_algorithms_warn_only_enabled())
        same(lambda m: m.use_deterministic_algorithms(1))
        same(lambda m: m.use_deterministic_algorithms(True, warn_only="x"))
    finally:
        torch.use_deterministic_algorithms(False)
        ember.use_deterministic_algorithms(False)


# -- finfo / iinfo / constants ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "complex64", "complex128"])
def test_finfo(name):
    fe, ft = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for field in ("eps", "max", "min", "tiny", "smallest_normal", "resolution", "bits", "dtype"):
        assert getattr(fe, field) == getattr(ft, field), field
        assert type(getattr(fe, field)) is type(getattr(ft, field)), field
    assert repr(fe) == repr(ft)
    assert str(fe) == str(ft)
    assert fe == ember.finfo(getattr(ember, name))


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo(name):
    ie, it = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
    for field in ("bits", "min", "max", "dtype"):
        assert getattr(ie, field) == getattr(it, field)
        assert type(getattr(ie, field)) is type(getattr(it, field))
    assert repr(ie) == repr(it)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.finfo(m.int32),
        lambda m: m.finfo(m.bool),
        lambda m: m.iinfo(m.float32),
        lambda m: m.iinfo(m.bool),
        lambda m: m.finfo().dtype,
        lambda m: (m.pi, m.e, m.inf),
        lambda m: np.isnan(m.nan),
    ],
)
def test_info_errors_and_constants(fn):
    same(fn)


# -- legacy tensor types ------------------------------------------------------------------------

LEGACY = [
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
    "BoolTensor",
]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_types(name):
    same(lambda m: getattr(m, name)([1, 0, 1]))
    same(lambda m: getattr(m, name)((1, 0)))  # a tuple is data, as in torch
    same(lambda m: getattr(m, name)())
    same(lambda m: getattr(m, name)(2, 3).shape)
    same(lambda m: getattr(m, name)(m.Size([2, 3])).shape)
    same(lambda m: getattr(m, name)(2, 3).dtype)
    same(lambda m: repr(getattr(m, name)))
    same(lambda m: m.zeros(2, dtype=getattr(m, name).dtype).type())
    for other in LEGACY:
        same(lambda m, other=other: isinstance(getattr(m, other)(2), getattr(m, name)))
    same(lambda m: isinstance(getattr(m, name)(2), m.Tensor))
    same(lambda m: isinstance(3, getattr(m, name)))


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.FloatTensor([[1, 2], [3, 4]]),
        lambda m: m.LongTensor([1.5, 2.7]),
        lambda m: m.FloatTensor(np.array([1, 2])),
        lambda m: m.FloatTensor(m.tensor([1.0, 2.0])),
        lambda m: m.FloatTensor(m.tensor([1, 2])),
        lambda m: m.DoubleTensor(m.tensor([1, 2], dtype=m.uint8)),
        lambda m: m.FloatTensor(2.5),
        lambda m: m.FloatTensor(2, 3.0),
        lambda m: m.FloatTensor(-1),
        lambda m: m.FloatTensor("a"),
        lambda m: m.zeros(2).type(m.DoubleTensor),
        lambda m: m.zeros(2).type("torch.IntTensor"),
        lambda m: m.FloatTensor.dtype,
        lambda m: m.FloatTensor.is_cuda,
        lambda m: issubclass(m.FloatTensor, m.Tensor),
    ],
)
def test_legacy_cases(fn):
    same(fn)


# -- Tensor.new_* ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: x.new_zeros(2, 3),
        lambda m, x: x.new_zeros((2, 3)),
        lambda m, x: x.new_zeros([2, 3], dtype=m.float32, requires_grad=True),
        lambda m, x: x.new_zeros(2, requires_grad=True),
        lambda m, x: x.new_ones(2),
        lambda m, x: x.new_ones(m.Size([1, 2]), dtype=m.float64),
        lambda m, x: x.new_full((2,), 3.7),
        lambda m, x: x.new_full([2, 1], 3, dtype=m.float64),
        lambda m, x: x.new_full(2, 3),
        lambda m, x: x.new_empty((0,)),
        lambda m, x: x.new_empty(2, 3).shape,
        lambda m, x: x.new_tensor([1.5, 2]),
        lambda m, x: x.new_tensor([1.5, 2], requires_grad=True),
        lambda m, x: x.new_tensor([1.5, 2], dtype=m.float64, requires_grad=True),
        lambda m, x: x.new_tensor(m.tensor([1.5, 2])),
        lambda m, x: x.float().new_full((2,), 3),
        lambda m, x: x.float().new_tensor(True),
        lambda m, x: x.float().new_ones(2, requires_grad=True),
    ],
)
def test_new_factories(fn):
    same(lambda m: fn(m, m.tensor([1, 2], dtype=m.int32)))


# -- in-place random fills -----------------------------------------------------------------------

FILLS = [
    lambda t: t.uniform_(),
    lambda t: t.normal_(),
    lambda t: t.random_(0, 5),
    lambda t: t.random_(),
    lambda t: t.bernoulli_(0.3),
    lambda t: t.bernoulli_(t.detach() * 0 + 0.5),
    lambda t: t.exponential_(),
]


@pytest.mark.parametrize("fill", FILLS)
def test_random_fill_autograd(fill):
    # a leaf that requires grad is refused under grad mode, fine under no_grad
    same(lambda m: fill(m.zeros(3, requires_grad=True)))
    same(lambda m: fill(m.zeros(4, requires_grad=True)[1:]))

    def under_no_grad(m):
        x = m.zeros(3, requires_grad=True)
        with m.no_grad():
            fill(x)
        return ver(x), x.requires_grad, x.grad_fn

    same(under_no_grad)

    def in_graph(m):
        y = m.ones(3, requires_grad=True)
        z = y * 2
        assert fill(z) is z
        z.sum().backward()
        return type(z.grad_fn).__name__, ver(z), y.grad.tolist()

    same(in_graph)


def test_random_fill_values():
    x = ember.empty(2000).uniform_(-2, 3)
    assert x.dtype == ember.float32 and -2 <= x.min().item() and x.max().item() < 3
    x = ember.empty(4000, dtype=ember.float64).normal_(1.0, 0.5)
    assert x.dtype == ember.float64 and abs(x.mean().item() - 1) < 0.05
    assert abs(x.std().item() - 0.5) < 0.05
    x = ember.empty(4000).exponential_(2.0)
    assert x.min().item() >= 0 and abs(x.mean().item() - 0.5) < 0.05
    x = ember.empty(4000).bernoulli_(0.25)
    assert set(x.unique().tolist()) == {0.0, 1.0} and abs(x.mean().item() - 0.25) < 0.05
    x = ember.zeros(500, dtype=ember.int64).random_(3, 6)
    assert set(x.unique().tolist()) == {3, 4, 5}
    x = ember.zeros(500).random_(4)
    assert set(x.unique().tolist()) == {0.0, 1.0, 2.0, 3.0}
    x = ember.zeros(500, dtype=ember.uint8).random_()
    assert x.dtype == ember.uint8 and x.max().item() > 200
    x = ember.zeros(50, dtype=ember.bool).random_()
    assert set(x.tolist()) == {True, False}
    x = ember.zeros(3).random_(to=3)
    assert x.max().item() < 3
    x = ember.zeros(30).random_(**{"from": 1, "to": 3})
    assert set(x.tolist()) == {1.0, 2.0}
    # the global generator, or an explicit one, makes them reproducible
    ember.manual_seed(3)
    a = ember.empty(5).normal_()
    ember.manual_seed(3)
    assert ember.equal(a, ember.empty(5).normal_())
    g1, g2 = ember.Generator().manual_seed(1), ember.Generator().manual_seed(1)
    assert ember.equal(ember.empty(4).uniform_(generator=g1), ember.empty(4).uniform_(generator=g2))
    # version counter
    x = ember.zeros(3)
    x.uniform_()
    x.normal_()
    assert ver(x) == 2


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(3, dtype=m.int64).uniform_(),
        lambda m: m.zeros(3, dtype=m.bool).uniform_(),
        lambda m: m.zeros(3, dtype=m.uint8).normal_(),
        lambda m: m.zeros(3, dtype=m.int64).exponential_(),
        lambda m: m.zeros(3).random_(5, 2),
        lambda m: m.zeros(3).random_(3.0),
        lambda m: m.zeros(3).normal_(0, -1),
        lambda m: m.zeros(3).uniform_(2, 1),
        lambda m: m.zeros(3).uniform_(2.5, 1),
        lambda m: m.zeros(3).exponential_(-1),
        lambda m: m.zeros(3).exponential_(0),
        lambda m: m.zeros(3).bernoulli_(1.5),
        lambda m: m.zeros(3).bernoulli_(m.tensor([0.0, 1, 1])),
        lambda m: m.zeros(3, dtype=m.bool).bernoulli_(1.0),
        lambda m: m.zeros(3, dtype=m.int64).bernoulli_(1.0),
        lambda m: m.zeros(3).uniform_(5, 5),
        lambda m: m.zeros(3).normal_(2, 0),
    ],
)
def test_random_fill_errors_and_edges(fn):
    same(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.zeros(3, 4).fill_diagonal_(5),
        lambda m: m.zeros(4, 3).fill_diagonal_(5),
        lambda m: m.zeros(7, 3).fill_diagonal_(5, wrap=True),
        lambda m: m.zeros(7, 3).fill_diagonal_(5),
        lambda m: m.zeros(3, 7).fill_diagonal_(5, wrap=True),
        lambda m: m.zeros(3, 3, 3).fill_diagonal_(5),
        lambda m: m.zeros(3, 3, dtype=m.int64).fill_diagonal_(2.7),
        lambda m: m.zeros(3).fill_diagonal_(5),
        lambda m: m.zeros(3, 4, 3).fill_diagonal_(5),
        lambda m: m.zeros(3, 3, requires_grad=True).fill_diagonal_(1),
        lambda m: m.zeros(3, 3).fill_diagonal_(m.tensor(2.0)),
    ],
)
def test_fill_diagonal(fn):
    same(fn)


def test_fill_diagonal_graph():
    def fn(m):
        y = m.ones(3, 3, requires_grad=True)
        z = (y * 2).fill_diagonal_(7)
        z.sum().backward()
        return type(z.grad_fn).__name__, z.tolist(), y.grad.tolist()

    same(fn)


# -- meshgrid --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, a, b: m.meshgrid(a, b),
        lambda m, a, b: m.meshgrid(a, b, indexing="ij"),
        lambda m, a, b: m.meshgrid([a, b], indexing="xy"),
        lambda m, a, b: m.meshgrid((a, b, a), indexing="xy"),
        lambda m, a, b: m.meshgrid(a, indexing="xy"),
        lambda m, a, b: m.meshgrid(a[0], b, indexing="ij"),
        lambda m, a, b: m.meshgrid(indexing="ij"),
        lambda m, a, b: m.meshgrid(a, b, indexing="foo"),
        lambda m, a, b: m.meshgrid(a, b.long(), indexing="ij"),
    ],
)
def test_meshgrid(fn):
    def run(m):
        a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = m.tensor([4.0, 5.0])
        out = fn(m, a, b)
        assert isinstance(out, tuple)
        if out[0].requires_grad:
            assert type(out[0].grad_fn).__name__ == "ExpandBackward0"
            sum(o.sum() for o in out if o.requires_grad).backward()
            return out + (a.grad,)
        return out

    same(run)


def test_meshgrid_rejects_2d():
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor in the tensor list"):
        ember.meshgrid(ember.zeros(2, 2), indexing="ij")
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor in the tensor list"):
        torch.meshgrid(torch.zeros(2, 2), indexing="ij")


# -- bucketize / searchsorted ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.bucketize(m.tensor([[3, 6, 9], [3, 6, 9]]), m.tensor([1, 3, 5, 7, 9])),
        lambda m: m.bucketize(m.tensor([3, 6, 9]), m.tensor([1, 3, 5, 7, 9]), right=True),
        lambda m: m.bucketize(m.tensor([3, 6, 9]), m.tensor([1, 3, 5, 7, 9]), out_int32=True),
        lambda m: m.bucketize(3, m.tensor([1, 3, 5, 7, 9])),
        lambda m: m.bucketize(m.tensor([1.5, 3.0]), m.tensor([1, 3, 5])),
        lambda m: m.bucketize(m.tensor([1.0, 2.0]), m.zeros(2, 2)),
        lambda m: (
            m.bucketize(m.tensor([1.0, 2.0], requires_grad=True), m.tensor([1.5])).requires_grad
        ),
    ],
)
def test_bucketize(fn):
    same(fn)


SS = [[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]]
VV = [[3, 6, 9], [3, 6, 9]]


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.searchsorted(m.tensor(SS), m.tensor(VV)),
        lambda m: m.searchsorted(m.tensor(SS), m.tensor(VV), right=True),
        lambda m: m.searchsorted(m.tensor(SS), m.tensor(VV), side="right"),
        lambda m: m.searchsorted(m.tensor(SS), m.tensor(VV), side="left"),
        lambda m: m.searchsorted(m.tensor(SS), m.tensor(VV), side="left", right=True),
        lambda m: m.searchsorted(m.tensor(SS), m.tensor(VV), side="foo"),
        lambda m: m.searchsorted(m.tensor(SS[0]), m.tensor(VV)),
        lambda m: m.searchsorted(m.tensor(SS[0]), 5),
        lambda m: m.searchsorted(m.tensor(SS), m.tensor([1, 2])),
        lambda m: m.searchsorted(m.tensor(SS), m.tensor([[1, 2]])),
        lambda m: m.searchsorted(m.tensor(SS), 5),
        lambda m: m.searchsorted(m.tensor(SS[0]), m.tensor([1.5, 9.5])),
        lambda m: m.searchsorted(m.tensor(SS[0]), m.tensor(VV), out_int32=True),
        lambda m: m.searchsorted(m.tensor(1), m.tensor(VV)),
        lambda m: m.searchsorted(m.tensor([3, 1, 2]), m.tensor([2]), sorter=m.tensor([1, 2, 0])),
        lambda m: (
            m.searchsorted(m.tensor([0.0, 1.0], requires_grad=True), m.tensor([0.5])).requires_grad
        ),
        lambda m: m.searchsorted(m.zeros(2, 3, 4).cumsum(-1), m.ones(2, 3, 1)),
    ],
)
def test_searchsorted(fn):
    same(fn)


def test_devices_behave_like_a_cpu_only_torch_build():
    import torch as real

    for spec in ("cpu", "cuda", "cuda:1", "mps"):
        assert repr(ember.device(spec)) == repr(real.device(spec))
        assert str(ember.device(spec)) == str(real.device(spec))
    assert ember.device("cpu") != "cpu" and ember.device("cpu") == ember.device("cpu")
    assert ember.ones(2).device == ember.device("cpu")
    for make in (
        lambda m: m.ones(2).to("cuda"),
        lambda m: m.zeros(2, device="cuda"),
        lambda m: m.tensor([1.0], device=m.device("cuda")),
    ):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            make(ember)
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            make(real)
    assert ember.zeros(2, device="cpu").tolist() == [0.0, 0.0]


def test_is_complex_and_is_floating_point_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (ember, torch):
        assert lib.is_complex(lib.ones(1, dtype=lib.complex64))
        assert not lib.is_complex(lib.ones(1)) and lib.is_floating_point(lib.ones(1))
    for name in ("is_complex", "is_floating_point"):
        messages = []
        for lib in (ember, torch):
            with pytest.raises(TypeError) as info:
                getattr(lib, name)(1.0)
            messages.append(str(info.value))
        assert messages[0] == messages[1]


@pytest.mark.parametrize(
    "call",
    [
        "lib.isin(x, lib.tensor([2, 3]))",
        "lib.isin(x, 2)",
        "lib.isin(3, x)",
        "lib.isin(x, lib.tensor([2, 3]), invert=True)",
        "lib.isin(x.float(), lib.tensor([2]))",
        "lib.isin(x, lib.tensor([4, 1]), assume_unique=True)",
    ],
)
def test_isin_as_torch(call):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (ember, torch):
        r = eval(call, {"lib": lib, "x": lib.tensor([[1, 2], [3, 4]])})
        results.append((r.tolist(), str(r.dtype), r.requires_grad))
    assert results[0] == results[1]
