"""``ember.bfloat16`` (ml_dtypes' NumPy type, imported on first use) and CPU autocast,
compared with torch 2.13: dtype facts, promotion, printing, casting, arithmetic, reductions,
matmul, autograd, nn, checkpoints and ``torch.autocast("cpu")``."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(12)
BF16_ULP = 2.0**-7  # relative spacing of bfloat16 (8 significant bits)


def _vals(t):
    """A tensor of either library as float64 NumPy values (bfloat16 is exact in float32)."""
    return np.asarray(t.detach().float().numpy(), dtype=np.float64)


def _both(fn):
    """``fn(lib)`` for ember and torch."""
    return fn(ember), fn(torch)


def _same(e, t, ulps: float = 0):
    """Same dtype and shape; values equal, or within ``ulps`` bfloat16 (float16: float16)
    units of the largest value (sums may cancel, so the tolerance is not per element)."""
    assert str(e.dtype) == str(t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    if ulps:
        ulp = 2.0**-10 if str(t.dtype) == "torch.float16" else BF16_ULP
        tv = _vals(t)
        scale = np.abs(tv[np.isfinite(tv)]).max(initial=0.0)
        np.testing.assert_allclose(_vals(e), tv, rtol=0, atol=ulps * ulp * scale + 1e-30)
    else:
        np.testing.assert_array_equal(_vals(e), _vals(t))


def _bf(lib, a):
    return lib.tensor(np.asarray(a, dtype=np.float32)).to(lib.bfloat16)


# -- the dtype --------------------------------------------------------------------------------


def test_import_ember_leaves_ml_dtypes_until_bfloat16_is_asked_for():
    code = (
        "import sys, ember\n"
        "before = 'ml_dtypes' in sys.modules\n"
        "ember.ones(2).float().sum()\n"
        "mid = 'ml_dtypes' in sys.modules\n"
        "d = ember.bfloat16\n"
        "print(before, mid, 'ml_dtypes' in sys.modules, d)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.split() == ["False", "False", "True", "torch.bfloat16"]


def test_dtype_facts_match_torch():
    e, t = ember.bfloat16, torch.bfloat16
    assert repr(e) == repr(t) == str(e) == "torch.bfloat16"
    for attr in ("is_floating_point", "is_complex", "is_signed", "itemsize"):
        assert getattr(e, attr) == getattr(t, attr), attr
    assert ember.bfloat16 is ember.bfloat16
    fe, ft = ember.finfo(ember.bfloat16), torch.finfo(torch.bfloat16)
    for attr in ("eps", "max", "min", "tiny", "smallest_normal", "resolution", "bits"):
        assert getattr(fe, attr) == getattr(ft, attr), attr
    assert repr(fe) == repr(ft)
    assert ember.ones(2, dtype=ember.bfloat16).element_size() == 2
    assert ember.ones(2, dtype=ember.bfloat16).type() == "torch.BFloat16Tensor"


_DTYPES = ["bfloat16", "float16", "float32", "float64", "int64", "int32", "uint8", "bool"]
_DTYPES += ["complex64", "complex128"]


@pytest.mark.parametrize("other", _DTYPES)
def test_promote_types_matches_torch(other):
    for a, b in (("bfloat16", other), (other, "bfloat16")):
        e = ember.promote_types(getattr(ember, a), getattr(ember, b))
        t = torch.promote_types(getattr(torch, a), getattr(torch, b))
        assert str(e) == str(t), (a, b)


@pytest.mark.parametrize(
    "operand",
    [
        lambda L: 1,
        lambda L: 2.5,
        lambda L: True,
        lambda L: 1j,
        lambda L: L.tensor(1.0),
        lambda L: L.tensor(1.0, dtype=L.float16),
        lambda L: L.tensor(3),
        lambda L: L.ones(2),
        lambda L: L.ones(2, dtype=L.float16),
        lambda L: L.ones(2, dtype=L.int32),
        lambda L: L.ones(2, dtype=L.float64),
    ],
)
def test_result_type_and_binary_op_dtypes_match_torch(operand):
    for shape in ((2,), ()):
        e, t = _both(lambda L, s=shape: L.result_type(L.ones(s, dtype=L.bfloat16), operand(L)))
        assert str(e) == str(t)
        e, t = _both(lambda L, s=shape: L.ones(s, dtype=L.bfloat16) + operand(L))
        assert str(e.dtype) == str(t.dtype)


# -- making, casting, printing ---------------------------------------------------------------


def test_creation_functions_make_bfloat16():
    makers = [
        lambda L: L.zeros(2, 3, dtype=L.bfloat16),
        lambda L: L.ones(4, dtype=L.bfloat16),
        lambda L: L.full((2,), 1.3, dtype=L.bfloat16),
        lambda L: L.arange(10, dtype=L.bfloat16),
        lambda L: L.tensor([1.1, 2.2, 3.3], dtype=L.bfloat16),
        lambda L: L.tensor(1.7, dtype=L.bfloat16),
        lambda L: L.zeros_like(L.ones(3, dtype=L.bfloat16)),
        lambda L: L.eye(3, dtype=L.bfloat16),
        lambda L: L.ones(2, dtype=L.bfloat16).new_zeros(3),
    ]
    for make in makers:
        _same(*_both(make))
    for make in (ember.randn, ember.rand, ember.empty):
        assert make(3, dtype=ember.bfloat16).dtype == ember.bfloat16


def test_casts_round_to_nearest_even_like_torch():
    x = RNG.normal(size=400).astype(np.float32) * 10.0 ** RNG.integers(-6, 6, size=400)
    x[:4] = [1.00390625, 1.01171875, np.inf, -0.0]  # ties go to even; specials survive
    e = ember.tensor(x).bfloat16()
    t = torch.tensor(x).bfloat16()
    _same(e, t)
    _same(ember.tensor(x).to(ember.bfloat16), ember.tensor(x).bfloat16())
    _same(ember.tensor(x.astype(np.float64)).to(dtype=ember.bfloat16), t)
    _same(e.float(), t.float())
    _same(e.half(), t.half())
    _same(ember.tensor([1, 300, 257]).bfloat16(), torch.tensor([1, 300, 257]).bfloat16())
    assert e.tolist() == t.tolist()
    assert ember.tensor(1.5, dtype=ember.bfloat16).item() == 1.5


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.tensor([1.0, 2.0], dtype=L.bfloat16),
        lambda L: L.tensor([1.0, 2.5, 3.14159], dtype=L.bfloat16, requires_grad=True),
        lambda L: L.ones(2, 3, dtype=L.bfloat16) * 3.3,
        lambda L: L.zeros(2, dtype=L.bfloat16),
        lambda L: L.tensor([1e10, 1e-5], dtype=L.bfloat16),
        lambda L: L.tensor(1.5, dtype=L.bfloat16),
        lambda L: L.tensor([float("nan"), float("inf"), -1.0], dtype=L.bfloat16),
        lambda L: L.zeros(0, 3, dtype=L.bfloat16),
        lambda L: L.arange(2000, dtype=L.float32).bfloat16(),
        lambda L: (L.arange(12.0).reshape(3, 4) / 7).bfloat16(),
    ],
)
def test_printing_matches_torch(make):
    e, t = _both(make)
    assert repr(e) == repr(t)


# -- arithmetic, reductions, matmul ------------------------------------------------------------

A = RNG.normal(size=(4, 6)).astype(np.float32)
B = RNG.normal(size=(4, 6)).astype(np.float32)


@pytest.mark.parametrize(
    "fn",
    [
        lambda L, a, b: a + b,
        lambda L, a, b: a * b,
        lambda L, a, b: a / b,
        lambda L, a, b: a - 2 * b,
        lambda L, a, b: a * 0.5,
        lambda L, a, b: a**2,
        lambda L, a, b: a.exp(),
        lambda L, a, b: a.abs().sqrt(),
        lambda L, a, b: a.tanh(),
        lambda L, a, b: L.relu(a),
        lambda L, a, b: L.maximum(a, b),
        lambda L, a, b: L.where(a > 0, a, b),
        lambda L, a, b: a.max(),
        lambda L, a, b: a.max(dim=1).values,
        lambda L, a, b: L.cat([a, b]),
        lambda L, a, b: a.t().reshape(3, 8),
    ],
)
def test_elementwise_ops_match_torch_exactly(fn):
    e, t = (fn(L, _bf(L, A), _bf(L, B)) for L in (ember, torch))
    _same(e, t)


@pytest.mark.parametrize(
    "fn",
    [
        lambda L, a: a.sum(),
        lambda L, a: a.sum(dim=0),
        lambda L, a: a.mean(),
        lambda L, a: a.mean(dim=1, keepdim=True),
        lambda L, a: a.var(),
        lambda L, a: a.std(dim=0),
        lambda L, a: a.cumsum(0),
        lambda L, a: a.softmax(-1),
        lambda L, a: a.norm(),
    ],
)
def test_reductions_accumulate_in_float32_like_torch(fn):
    a = RNG.normal(size=(40, 30)).astype(np.float32) + 3
    e, t = (fn(L, _bf(L, a)) for L in (ember, torch))
    _same(e, t, ulps=1)


def test_long_sum_does_not_round_every_step():
    e, t = _both(lambda L: L.arange(1000, dtype=L.float32).bfloat16().sum())
    _same(e, t)  # 499712 (a bfloat16-accumulated sum would stall at 262144)
    e, t = _both(lambda L: L.tensor([0.1] * 10, dtype=L.bfloat16).sum())
    _same(e, t)


@pytest.mark.parametrize(
    "fn",
    [
        lambda L, a, b: a @ b.t(),
        lambda L, a, b: L.mm(a, b.t()),
        lambda L, a, b: L.matmul(a[0], b[0]),
        lambda L, a, b: L.bmm(a.reshape(2, 2, 6), b.reshape(2, 6, 2)),
        lambda L, a, b: L.addmm(a[:, 0], a, b.t()),
        lambda L, a, b: L.nn.functional.linear(a, b, b[:, 0]),
        lambda L, a, b: L.nn.functional.linear(a.reshape(2, 2, 6), b),
    ],
)
def test_matmul_family_computes_in_float32_and_rounds_once(fn):
    e, t = (fn(L, _bf(L, A), _bf(L, B)) for L in (ember, torch))
    _same(e, t, ulps=1)


def test_nn_layers_on_bfloat16_match_torch():
    x = RNG.normal(size=(2, 3, 8, 8)).astype(np.float32)
    w = RNG.normal(size=(4, 3, 3, 3)).astype(np.float32)
    e, t = (L.nn.functional.conv2d(_bf(L, x), _bf(L, w), padding=1) for L in (ember, torch))
    _same(e, t, ulps=1)
    a = RNG.normal(size=(3, 8)).astype(np.float32)
    for fn in (
        lambda L, a: L.nn.functional.layer_norm(a, (8,)),
        lambda L, a: L.nn.functional.gelu(a),
        lambda L, a: L.nn.functional.log_softmax(a, -1),
        lambda L, a: L.nn.functional.mse_loss(a, a * 0),
    ):
        e, t = (fn(L, _bf(L, a)) for L in (ember, torch))
        _same(e, t, ulps=2)
    q = RNG.normal(size=(1, 2, 5, 4)).astype(np.float32)
    e, t = (
        L.nn.functional.scaled_dot_product_attention(_bf(L, q), _bf(L, q), _bf(L, q))
        for L in (ember, torch)
    )
    _same(e, t, ulps=2)


# -- autograd and nn ---------------------------------------------------------------------------


def test_gradients_flow_in_bfloat16_like_torch():
    def run(L):
        a = _bf(L, A).requires_grad_()
        b = _bf(L, B).requires_grad_()
        loss = ((a * b).exp() / 3).mean() + (a @ b.t()).sum() * 0.25
        loss.backward()
        return loss, a.grad, b.grad

    for e, t in zip(*_both(run)):
        _same(e, t, ulps=2)

    def via_float(L):
        a = _bf(L, A).requires_grad_()
        (a.float() * 3.3).sum().backward()
        return a.grad

    _same(*_both(via_float))


def test_linear_in_bfloat16_forward_and_backward_match_torch():
    def run(L, convert):
        m = convert(L.nn.Linear(6, 3))
        with L.no_grad():
            m.weight.copy_(L.tensor(B[:3]))
            m.bias.fill_(0.1)
        x = _bf(L, A).requires_grad_()
        y = m(x)
        y.pow(2).sum().backward()
        return y, x.grad, m.weight.grad, m.bias.grad

    for convert in (lambda m: m.bfloat16(), lambda m: m.to(ember.bfloat16)):
        e = run(ember, convert)
        t = run(torch, lambda m: m.bfloat16())
        assert str(e[0].grad_fn.name()) == str(t[0].grad_fn.name())
        for a, b in zip(e, t):
            _same(a, b, ulps=2)


def test_optimizer_steps_bfloat16_parameters():
    def run(L):
        p = L.nn.Parameter(_bf(L, A[0]))
        opt = L.optim.SGD([p], lr=0.125, momentum=0.5)
        for _ in range(3):
            opt.zero_grad()
            (p * p).sum().backward()
            opt.step()
        return p

    _same(*_both(run), ulps=1)


# -- checkpoints -------------------------------------------------------------------------------


def test_torch_zip_checkpoints_round_trip_both_ways(tmp_path):
    x = torch.tensor(A).bfloat16()
    torch.save({"w": x, "dt": torch.bfloat16, "f": torch.ones(2)}, tmp_path / "t.pt")
    d = ember.load(tmp_path / "t.pt")
    assert d["dt"] is ember.bfloat16
    _same(d["w"], x)
    ember.save({"w": d["w"][1:] * 2, "dt": ember.bfloat16}, tmp_path / "e.pt")
    back = torch.load(tmp_path / "e.pt")
    assert back["dt"] is torch.bfloat16
    _same(d["w"][1:] * 2, back["w"])
    m = ember.nn.Linear(3, 2).bfloat16()
    ember.save(m.state_dict(), tmp_path / "m.pt")
    tm = torch.nn.Linear(3, 2).bfloat16()
    tm.load_state_dict(torch.load(tmp_path / "m.pt"))
    _same(m.weight, tm.weight)


def test_safetensors_bf16_round_trips_both_ways(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    x = torch.tensor(A).bfloat16()
    st.save_file({"w": x}, str(tmp_path / "t.safetensors"))
    e = ember.load(tmp_path / "t.safetensors")["w"]
    _same(e, x)
    ember.save({"w": e + 1}, tmp_path / "e.safetensors")
    _same(e + 1, st.load_file(str(tmp_path / "e.safetensors"))["w"])


# -- autocast ----------------------------------------------------------------------------------


def test_autocast_default_dtype_and_state_match_torch():
    assert str(ember.get_autocast_dtype("cpu")) == str(torch.get_autocast_dtype("cpu"))
    with ember.autocast("cpu"):
        assert ember.is_autocast_enabled("cpu")
        assert ember.get_autocast_dtype("cpu") is ember.bfloat16
    assert not ember.is_autocast_enabled("cpu")
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="target dtype is not supported"):
            with lib.autocast("cpu", dtype=lib.float32):
                assert not lib.is_autocast_enabled("cpu")


_AUTOCAST_OPS = [
    lambda L, a, b: a @ b.t(),
    lambda L, a, b: L.mm(a, b.t()),
    lambda L, a, b: L.matmul(a[0], b[0]),
    lambda L, a, b: L.bmm(a.reshape(2, 2, 6), b.reshape(2, 6, 2)),
    lambda L, a, b: L.addmm(a[:, 0], a, b.t()),
    lambda L, a, b: L.baddbmm(a[:2, :2].reshape(1, 2, 2), a.reshape(2, 2, 6), b.reshape(2, 6, 2)),
    lambda L, a, b: L.nn.functional.linear(a, b, b[:, 0]),
    lambda L, a, b: L.nn.functional.linear(a.reshape(2, 2, 6), b, b[:, 1]),
    lambda L, a, b: L.nn.functional.conv1d(a.reshape(1, 4, 6), b.reshape(1, 4, 6)[:, :, :3]),
    lambda L, a, b: L.nn.functional.prelu(a, b[0, :1]),
    lambda L, a, b: L.nn.functional.scaled_dot_product_attention(a[None], b[None], b[None]),
    lambda L, a, b: a.double() @ b.double().t(),  # float64 is left alone
    lambda L, a, b: a + b,  # not on a list: runs on the dtypes it is given
    lambda L, a, b: (a @ b.t()).softmax(-1),
    lambda L, a, b: L.nn.functional.mse_loss(a @ b.t(), a[:, :4]),  # the fp32 list
    lambda L, a, b: L.nn.functional.cross_entropy(a @ b.t(), L.tensor([0, 1, 2, 3])),
    lambda L, a, b: L.nn.functional.l1_loss(a @ b.t(), a[:, :4]),
    lambda L, a, b: L.nn.functional.binary_cross_entropy_with_logits(
        a @ b.t(), (a[:, :4] > 0).float()
    ),
]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("fn", _AUTOCAST_OPS)
def test_cpu_autocast_ops_match_torch(fn, dtype):
    res = []
    for L in (ember, torch):
        a, b = L.tensor(A), L.tensor(B)
        with L.autocast("cpu", dtype=getattr(L, dtype)):
            res.append(fn(L, a, b))
    e, t = res
    _same(e, t, ulps=2)


def test_cpu_autocast_training_step_matches_torch():
    def run(L):
        m = L.nn.Linear(6, 4)
        with L.no_grad():
            m.weight.copy_(L.tensor(B))
            m.bias.fill_(0.1)
        x = L.tensor(A)
        with L.autocast("cpu"):
            y = m(x)
            loss = L.nn.functional.mse_loss(y, L.zeros(4, 4))
        loss.backward()
        return y, loss, m.weight.grad, m.bias.grad

    e, t = _both(run)
    assert [str(v.dtype) for v in e] == [str(v.dtype) for v in t]
    assert [str(v.dtype) for v in e] == [
        "torch.bfloat16",
        "torch.float32",
        "torch.float32",
        "torch.float32",
    ]
    for a, b in zip(e, t):
        _same(a, b, ulps=2)


def test_custom_fwd_casts_inputs_inside_autocast():
    seen = []

    class Twice(ember.autograd.Function):
        @staticmethod
        @ember.amp.custom_fwd(device_type="cpu", cast_inputs=ember.float32)
        def forward(ctx, x):
            seen.append((x.dtype, ember.is_autocast_enabled("cpu")))
            return x * 2

        @staticmethod
        @ember.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            return g * 2

    x = ember.ones(2, dtype=ember.bfloat16)
    with ember.autocast("cpu"):
        Twice.apply(x)
    Twice.apply(x)
    assert seen == [(ember.float32, False), (ember.bfloat16, False)]


def test_autocast_region_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ember.autocast("cpu"):
            ember.ones(2, 2) @ ember.ones(2, 2)


def test_testing_helpers_take_bfloat16():
    a = ember.tensor([1.0, 2.0], dtype=ember.bfloat16)
    ember.testing.assert_close(a, a + 0.001)  # torch's bfloat16 tolerance (rtol 1.6e-2)
    with pytest.raises(AssertionError, match="not close"):
        ember.testing.assert_close(a, a + 0.5)
    t = ember.testing.make_tensor((5,), dtype=ember.bfloat16, exclude_zero=True)
    assert t.dtype == ember.bfloat16 and bool((t != 0).all())


def test_bfloat16_without_ml_dtypes_names_the_package():
    """Where ml_dtypes is missing (WebAssembly has no build of it) the error says so."""
    code = (
        "import sys\n"
        "sys.modules['ml_dtypes'] = None\n"
        "import ember\n"
        "try:\n"
        "    ember.bfloat16\n"
        "except ModuleNotFoundError as e:\n"
        "    print(e.name, 'pip install ml_dtypes' in str(e))\n"
        "print(ember.ones(2).dtype)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["ml_dtypes", "True", "torch.float32"]
