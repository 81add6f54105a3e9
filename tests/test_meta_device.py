"""Tensors on the ``meta`` device: shape and dtype without data, as torch's (what
``from_pretrained`` builds models on). Each check runs the same code on ember and on real
torch and compares what they print or raise."""

import numpy as np
import pytest

import ember
from ember._meta import MetaArray

torch = pytest.importorskip("torch")


def _outcome(fn, lib):
    """What ``fn(lib)`` gives: its repr, or the type and message of what it raises."""
    try:
        return repr(fn(lib))
    except Exception as e:  # noqa: BLE001 (the error is the outcome compared)
        return f"{type(e).__name__}: {e}"


def _same(fn):
    ours, theirs = _outcome(fn, ember), _outcome(fn, torch)
    assert ours == theirs


FACTORIES = [
    lambda t: t.empty(2, 3, device="meta"),
    lambda t: t.zeros(4, device="meta", dtype=t.float64),
    lambda t: t.ones((), device="meta"),
    lambda t: t.empty(0, 5, device="meta", dtype=t.int32),
    lambda t: t.full((2,), 3, device="meta"),
    lambda t: t.arange(0, 8, 2, device="meta"),
    lambda t: t.arange(5.0, device="meta"),
    lambda t: t.linspace(0, 1, 5, device="meta"),
    lambda t: t.eye(3, device="meta"),
    lambda t: t.rand(2, 2, device="meta"),
    lambda t: t.randn(3, device="meta", dtype=t.float16),
    lambda t: t.randint(0, 10, (3,), device="meta"),
    lambda t: t.randperm(5, device="meta"),
    lambda t: t.tensor([1.0, 2.0], device="meta"),
    lambda t: t.tensor([[1, 2]], device=t.device("meta")),
    lambda t: t.empty(2, device="meta", requires_grad=True),
    lambda t: t.empty(2, 3, device="meta").new_empty(4),
    lambda t: t.empty(2, 3, device="meta").new_zeros(2, dtype=t.int64),
    lambda t: t.empty(2, 3, device="meta").new_full((2,), 7.0),
    lambda t: t.empty(2, 3, device="meta").new_ones(1).device,
    lambda t: t.empty(2, 3, device="meta").new_empty(2, device="cpu").shape,
    lambda t: t.zeros_like(t.empty(2, 3, device="meta")),
    lambda t: t.empty_like(t.empty(2, 3, device="meta"), device="cpu").shape,
    lambda t: t.empty_like(t.empty(2, 3, device="meta"), device="cpu").device,
    lambda t: t.rand_like(t.empty(2, 3, device="meta")),
]


@pytest.mark.parametrize("fn", FACTORIES, ids=range(len(FACTORIES)))
def test_factories_on_meta(fn):
    _same(fn)


def test_the_default_device_context():
    def run(t):
        with t.device("meta"):
            made = (t.ones(2), t.arange(3), t.tensor([1.0]), t.empty_like(t.ones(1, device="cpu")))
        return [(x.device, x.shape, x.dtype) for x in made]

    assert repr(run(ember)) == repr(run(torch))


def _x(t):
    return t.empty(2, 3, device="meta")


OPS = [
    lambda t: _x(t).device,
    lambda t: (_x(t).is_meta, _x(t).is_cpu, t.ones(1).is_meta),
    lambda t: (_x(t).shape, _x(t).dtype, _x(t).numel(), _x(t).dim(), _x(t).element_size()),
    lambda t: (_x(t).stride(), _x(t).t().stride(), _x(t).is_contiguous(), _x(t).data_ptr()),
    lambda t: _x(t) + 1,
    lambda t: _x(t) * t.tensor(2.0),
    lambda t: (_x(t).long() + 1) / 4,
    lambda t: 1.0 / (10000 ** (t.arange(0, 8, 2, device="meta").float() / 8)),
    lambda t: _x(t).pow(2).reciprocal(),
    lambda t: _x(t) @ t.empty(3, 5, device="meta"),
    lambda t: t.empty(4, 2, 3, device="meta") @ _x(t).t(),
    lambda t: _x(t).sum(),
    lambda t: _x(t).sum(0, keepdim=True),
    lambda t: _x(t).mean(-1),
    lambda t: _x(t).max(1),
    lambda t: _x(t).argmax(),
    lambda t: _x(t) > 0,
    lambda t: (_x(t) == _x(t)).any(),
    lambda t: _x(t).softmax(-1),
    lambda t: _x(t).exp().sigmoid().tanh(),
    lambda t: _x(t).clone(),
    lambda t: _x(t).detach(),
    lambda t: _x(t).t().contiguous().stride(),
    lambda t: _x(t).view(3, 2),
    lambda t: _x(t).reshape(-1),
    lambda t: _x(t)[0],
    lambda t: _x(t)[:, 1:],
    lambda t: _x(t).unsqueeze(0).expand(4, 2, 3).shape,
    lambda t: t.cat([_x(t), _x(t)]),
    lambda t: t.stack([_x(t), _x(t)], 1),
    lambda t: _x(t).split(1),
    lambda t: _x(t).sort(),
    lambda t: _x(t).to(t.float16),
    lambda t: _x(t).double(),
    lambda t: _x(t).to("meta").device,
    lambda t: t.ones(2).to("meta"),
    lambda t: t.ones(2, requires_grad=True).to("meta"),
    lambda t: t.ones(2).to(_x(t)).device,
    lambda t: t.nn.functional.linear(_x(t), t.empty(4, 3, device="meta")),
    lambda t: t.nn.functional.embedding(t.zeros(2, dtype=t.long, device="meta"), _x(t)),
    lambda t: _x(t) + t.ones(4, device="meta"),
]


@pytest.mark.parametrize("fn", OPS, ids=range(len(OPS)))
def test_ops_give_meta_results(fn):
    _same(fn)


READS = [
    lambda t: t.empty(1, device="meta").item(),
    lambda t: t.empty(3, device="meta").item(),
    lambda t: float(t.empty(1, device="meta")),
    lambda t: bool(t.empty(1, device="meta")),
    lambda t: _x(t).tolist(),
    lambda t: _x(t).numpy(),
    lambda t: np.asarray(_x(t)),
    lambda t: _x(t).cpu(),
    lambda t: _x(t).to("cpu"),
    lambda t: _x(t).to(t.ones(1)),
    lambda t: t.ones(2, 3).copy_(_x(t)),
]


@pytest.mark.parametrize("fn", READS, ids=range(len(READS)))
def test_reading_data_out_fails_as_in_torch(fn):
    _same(fn)


INPLACE = [
    lambda t: _x(t).fill_(3),
    lambda t: _x(t).zero_(),
    lambda t: _x(t).uniform_(-1, 1),
    lambda t: _x(t).normal_(0, 0.02),
    lambda t: _x(t).add_(1),
    lambda t: _x(t).mul_(t.ones(3, device="meta")),
    lambda t: _x(t).copy_(t.ones(2, 3)),
    lambda t: t.nn.init.trunc_normal_(_x(t), std=0.02),
    lambda t: t.nn.init.kaiming_uniform_(_x(t)),
    lambda t: t.nn.init.xavier_normal_(_x(t)),
    lambda t: t.nn.init.constant_(_x(t), 0.5),
    lambda t: t.nn.init.orthogonal_(_x(t)),
]


@pytest.mark.parametrize("fn", INPLACE, ids=range(len(INPLACE)))
def test_in_place_writes_are_no_ops(fn):
    _same(fn)


def test_setitem_checks_shapes_and_writes_nothing():
    x = ember.empty(2, 3, device="meta")
    x[0] = 5.0
    x[:, 1] = ember.ones(2, device="meta")
    assert x.is_meta and type(x._data) is MetaArray

    def too_long(t):
        x = t.empty(2, 3, device="meta")
        x[0] = t.ones(5, device="meta")

    _same(too_long)


def test_meta_init_draws_nothing():
    """Filling meta tensors with random values leaves the generator where it was (torch's
    meta kernels never touch the CPU generator)."""

    def run(t, meta: bool):
        t.manual_seed(0)
        if meta:
            with t.device("meta"):
                t.nn.Linear(50, 40)
            t.empty(30, device="meta").normal_()
            t.randn(4, device="meta")
        return t.rand(3).tolist()

    for t in (ember, torch):
        assert run(t, True) == run(t, False)


def test_meta_tensors_cost_no_memory():
    x = ember.empty(10**6, 10**6, device="meta")  # 4 TB, were it real
    y = (x * 2).sum(0)
    assert y.shape == (10**6,) and y.is_meta


def _linear_on_meta(t):
    t.manual_seed(0)
    with t.device("meta"):
        layer = t.nn.Linear(3, 2)
    return layer


def test_module_built_on_meta_then_to_empty():
    def run(t):
        layer = _linear_on_meta(t)
        before = (repr(layer.weight), layer.bias.device)
        layer.to_empty(device="cpu")
        return before, layer.weight.device, layer.weight.shape, type(layer.weight).__name__

    assert repr(run(ember)) == repr(run(torch))


def test_module_to_from_meta_fails_with_torchs_hint():
    _same(lambda t: _linear_on_meta(t).to("cpu"))
    _same(lambda t: _linear_on_meta(t).to(t.float64).weight)
    _same(lambda t: t.nn.Linear(2, 2).to("meta").weight)


def test_load_state_dict_with_assign():
    def run(t):
        layer = _linear_on_meta(t)
        state = {"weight": t.arange(6.0).reshape(2, 3), "bias": t.tensor([1.0, -1.0])}
        layer.load_state_dict(state, assign=True)
        out = layer(t.ones(1, 3))
        return layer.weight.device, type(layer.weight).__name__, out.tolist()

    assert repr(run(ember)) == repr(run(torch))


def test_parameter_of_a_meta_tensor():
    _same(lambda t: t.nn.Parameter(t.empty(2, 3, device="meta")))
    _same(lambda t: t.nn.Parameter(t.empty(2, device="meta")).device)


def test_backward_on_meta_gives_meta_gradients():
    def run(t):
        w = t.empty(3, 2, device="meta", requires_grad=True)
        (t.ones(4, 3, device="meta") @ w).sum().backward()
        return w.grad

    _same(run)


def test_reprs():
    _same(lambda t: t.empty(2, 3, device="meta", dtype=t.float64, requires_grad=True) * 3)
    _same(lambda t: str(t.empty(2, device="meta", dtype=t.bfloat16)))
    _same(lambda t: f"{t.empty((), device='meta')}")


# Ops written with NumPy routines that see a meta array as a plain one: the recorder still
# gives a meta result of the op's shape (before, they returned CPU tensors of zeros).
_NUMPY_ROUTINE_OPS = {
    "layer_norm": lambda m, x: m.nn.functional.layer_norm(x, (4,)),
    "silu": lambda m, x: m.nn.functional.silu(x),
    "repeat": lambda m, x: x.repeat(2, 1, 1, 1),
    "pad": lambda m, x: m.nn.functional.pad(x, (1, 1)),
    "einsum": lambda m, x: m.einsum("nchw->nhwc", x),
    "index": lambda m, x: x[m.tensor([0, 1])],
    "mse_loss": lambda m, x: m.nn.functional.mse_loss(x, x),
    "tile": lambda m, x: x.tile(2),
    "unfold": lambda m, x: x.unfold(3, 2, 1),
    "cdist": lambda m, x: m.cdist(x[0, 0], x[0, 0]),
}


@pytest.mark.parametrize("name", sorted(_NUMPY_ROUTINE_OPS))
def test_ops_of_numpy_routines_keep_meta_as_torch(name):
    def run(m):
        x = m.empty(2, 3, 4, 4, device="meta", requires_grad=True)
        out = _NUMPY_ROUTINE_OPS[name](m, x)
        return str(out.device), tuple(out.shape), str(out.dtype), out.requires_grad

    assert run(ember) == run(torch)
