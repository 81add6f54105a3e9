"""Module API against torch.nn.Module: registration, iteration order, state_dict keys and
round trips through ember.save/load, load_state_dict errors, printing, modes, hooks,
dtype conversion, containers and Parameter."""

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as enn
from ember.nn import Parameter

torch = pytest.importorskip("torch")
tnn = torch.nn


class _Block:
    """The same nested model in both libraries (``nn`` is torch.nn or ember.nn)."""

    @staticmethod
    def build(nn, lib):
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(1, 4, 3, padding=1, bias=False)
                self.bn = nn.BatchNorm2d(4)
                self.register_buffer("scale", lib.ones(1))
                self.register_buffer("cache", lib.zeros(2), persistent=False)
                self.gain = nn.Parameter(lib.ones(4))

            def forward(self, x):
                return self.bn(self.conv(x)).relu() * self.scale

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.features = nn.Sequential(Block(), nn.MaxPool2d(2), nn.Flatten())
                self.heads = nn.ModuleDict(
                    {
                        "cls": nn.Sequential(
                            nn.Linear(16, 8), nn.GELU(), nn.Dropout(0.1), nn.Linear(8, 3)
                        ),
                        "aux": nn.ModuleList(
                            [nn.LayerNorm(16), nn.LayerNorm(16), nn.Linear(16, 1)]
                        ),
                    }
                )
                self.emb = nn.Embedding(5, 2, padding_idx=0)
                self.loss = nn.CrossEntropyLoss(label_smoothing=0.1)

            def forward(self, x):
                return self.heads["cls"](self.features(x))

        return Net()


@pytest.fixture
def nets():
    return _Block.build(tnn, torch), _Block.build(enn, ember)


def _copy(tm, em):
    em.load_state_dict({k: ember.tensor(v.numpy().copy()) for k, v in tm.state_dict().items()})


# -- printing and iteration ------------------------------------------------------------------


def test_nested_repr_matches_torch(nets):
    tm, em = nets
    assert repr(em) == repr(tm)
    assert str(em.features[0]) == str(tm.features[0])


def test_named_iterators_match_torch(nets):
    tm, em = nets
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in em.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert [n for n, _ in em.named_modules()] == [n for n, _ in tm.named_modules()]
    assert [n for n, _ in em.named_children()] == [n for n, _ in tm.named_children()]
    assert [type(m).__name__ for m in em.modules()] == [type(m).__name__ for m in tm.modules()]
    assert [n for n, _ in em.named_parameters(prefix="m", recurse=False)] == [
        n for n, _ in tm.named_parameters(prefix="m", recurse=False)
    ]
    assert [tuple(p.shape) for p in em.parameters()] == [tuple(p.shape) for p in tm.parameters()]
    assert all(isinstance(p, Parameter) and p.requires_grad for p in em.parameters())


def test_shared_modules_and_parameters_are_listed_once():
    for nn in (tnn, enn):
        lin = nn.Linear(2, 2)
        seq = nn.Sequential(lin, lin)
        assert len(list(seq.parameters())) == 2
        assert len(list(seq.modules())) == 2
        assert len(list(seq.named_parameters(remove_duplicate=False))) == 4


# -- state dict ------------------------------------------------------------------------------


def test_state_dict_keys_and_values(nets):
    tm, em = nets
    esd = em.state_dict()
    assert isinstance(esd, OrderedDict)
    assert list(esd) == list(tm.state_dict())
    assert "features.0.cache" not in esd
    for v in esd.values():
        assert type(v) is ember.Tensor and not v.requires_grad and v.grad_fn is None
    # Values share storage with the module's tensors.
    assert np.shares_memory(esd["features.0.gain"].numpy(), em.features[0].gain.detach().numpy())
    kv = em.state_dict(keep_vars=True)
    assert kv["features.0.gain"] is em.features[0].gain
    assert esd._metadata[""] == {"version": 1}
    assert esd._metadata["features.0.bn"] == {"version": 2}


def test_state_dict_round_trip_through_save_and_load(nets, tmp_path):
    tm, em = nets
    _copy(tm, em)
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    em.train()
    em(ember.tensor(x))  # update the BatchNorm running statistics
    path = tmp_path / "model.safetensors"
    ember.save(em.state_dict(), path)
    loaded = ember.load(path)
    assert list(loaded) == list(em.state_dict())
    fresh = _Block.build(enn, ember)
    assert repr(fresh.load_state_dict(loaded)) == "<All keys matched successfully>"
    em.eval()
    fresh.eval()
    np.testing.assert_array_equal(
        fresh(ember.tensor(x)).detach().numpy(), em(ember.tensor(x)).detach().numpy()
    )
    assert fresh.features[0].bn.num_batches_tracked.item() == 1
    assert fresh.features[0].bn.num_batches_tracked.dtype == ember.int64


def test_state_dict_loads_into_torch_and_back(nets):
    tm, em = nets
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in em.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((3, 1, 4, 4)).astype(np.float32)
    tm.eval()
    em.eval()
    np.testing.assert_allclose(
        em(ember.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(), atol=1e-5
    )


def _load_errors(tm, em, mutate):
    tsd = OrderedDict((k, v.clone()) for k, v in tm.state_dict().items())
    esd = OrderedDict((k, ember.tensor(v.numpy())) for k, v in tsd.items())
    mutate(tsd, torch)
    mutate(esd, ember)
    with pytest.raises(RuntimeError) as te:
        tm.load_state_dict(tsd)
    with pytest.raises(RuntimeError) as ee:
        em.load_state_dict(esd)
    return str(ee.value), str(te.value), tsd, esd


@pytest.mark.parametrize(
    "mutate",
    [
        lambda sd, lib: sd.pop("heads.cls.0.weight"),
        lambda sd, lib: sd.__setitem__("heads.cls.9.weight", lib.zeros(1)),
        lambda sd, lib: sd.__setitem__("extra", lib.zeros(1)),
        lambda sd, lib: sd.__setitem__("emb.weight", lib.zeros(4, 2)),
        lambda sd, lib: (
            sd.pop("features.0.bn.running_var"),
            sd.pop("emb.weight"),
            sd.__setitem__("features.0.gain", lib.zeros(5)),
            sd.__setitem__("heads.aux.1.foo", lib.zeros(1)),
        ),
    ],
    ids=["missing", "unexpected_child", "unexpected_top", "size", "several"],
)
def test_load_state_dict_errors_match_torch(nets, mutate):
    tm, em = nets
    emsg, tmsg, tsd, esd = _load_errors(tm, em, mutate)
    assert emsg == tmsg
    tres = tm.load_state_dict(
        {k: v for k, v in tsd.items() if v.shape == tm.state_dict().get(k, v).shape},
        strict=False,
    )
    eres = em.load_state_dict(
        {k: v for k, v in esd.items() if v.shape == em.state_dict().get(k, v).shape},
        strict=False,
    )
    assert eres.missing_keys == tres.missing_keys
    assert eres.unexpected_keys == tres.unexpected_keys
    assert repr(eres) == repr(tres)


def test_load_state_dict_non_tensor_and_missing_num_batches_tracked():
    tbn, ebn = tnn.BatchNorm1d(2), enn.BatchNorm1d(2)
    tsd = dict(tbn.state_dict())
    esd = dict(ebn.state_dict())
    del tsd["num_batches_tracked"], esd["num_batches_tracked"]
    tbn.load_state_dict(tsd)  # old checkpoints without the counter still load
    ebn.load_state_dict(esd)
    for sd in (tsd, esd):
        sd["weight"] = [1.0, 2.0]
    with pytest.raises(RuntimeError) as te:
        tbn.load_state_dict(tsd)
    with pytest.raises(RuntimeError) as ee:
        ebn.load_state_dict(esd)
    assert str(ee.value) == str(te.value)


def test_load_state_dict_assign_keeps_parameters():
    lin = enn.Linear(2, 2)
    w = ember.ones(2, 2)
    lin.load_state_dict({"weight": w, "bias": ember.zeros(2)}, assign=True)
    assert isinstance(lin.weight, Parameter) and lin.weight.requires_grad
    np.testing.assert_array_equal(lin.weight.detach().numpy(), 1.0)


# -- registration errors ----------------------------------------------------------------------


def _same_error(tcall, ecall):
    with pytest.raises(Exception) as te:
        tcall()
    with pytest.raises(Exception) as ee:
        ecall()
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize(
    "action",
    [
        lambda m, lib, nn: m.register_buffer("a.b", lib.zeros(1)),
        lambda m, lib, nn: m.register_buffer("", lib.zeros(1)),
        lambda m, lib, nn: m.register_buffer("training", lib.zeros(1)),
        lambda m, lib, nn: m.register_buffer("x", [1.0]),
        lambda m, lib, nn: m.register_parameter("w", lib.zeros(1)),
        lambda m, lib, nn: m.register_parameter("w", lib.zeros(1, requires_grad=True) * 2),
        lambda m, lib, nn: setattr(m, "weight", lib.zeros(1)),
        lambda m, lib, nn: setattr(m, "sub", lib.zeros(1)),
        lambda m, lib, nn: m.add_module("x.y", nn.ReLU()),
        lambda m, lib, nn: m.add_module("z", 3),
        lambda m, lib, nn: m.missing_attribute,
    ],
)
def test_registration_errors_match_torch(action):
    def make(nn):
        m = nn.Linear(1, 1)
        m.sub = nn.ReLU()
        return m

    _same_error(lambda: action(make(tnn), torch, tnn), lambda: action(make(enn), ember, enn))


def test_attribute_assignment_moves_between_registries():
    m = enn.Module()
    m.x = Parameter(ember.ones(1))
    assert "x" in m._parameters
    with pytest.raises(TypeError, match="cannot assign 'ember.nn.modules.activation.ReLU' as "):
        m.x = enn.ReLU()  # torch refuses too: the name is a parameter
    m.x = None
    assert m.x is None and "x" in m._parameters
    del m.x
    m.y = enn.ReLU()
    m.y = Parameter(ember.ones(1))  # a module name can be re-bound to a parameter
    assert "y" in m._parameters and "y" not in m._modules
    m.x = enn.Tanh()
    assert "x" in m._modules
    m.register_buffer("b", ember.ones(1))
    m.b = ember.zeros(2)
    assert m._buffers["b"].shape == (2,)
    m.plain = 3
    assert m.plain == 3 and "plain" in m.__dict__
    del m.x, m.b, m.y
    assert not m._modules and not m._buffers and not m._parameters
    m.bias = None
    assert m.bias is None


# -- modes, gradients, hooks, dtypes ----------------------------------------------------------


def test_train_eval_propagate(nets):
    _, em = nets
    assert all(m.training for m in em.modules())
    assert em.eval() is em
    assert not any(m.training for m in em.modules())
    em.train()
    assert all(m.training for m in em.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        em.train(1)


def test_zero_grad_and_requires_grad_():
    m = enn.Linear(3, 2)
    m(ember.ones(1, 3)).sum().backward()
    g = m.weight.grad
    m.zero_grad(set_to_none=False)
    assert m.weight.grad is g and float(g.abs().sum()) == 0.0
    m.zero_grad()
    assert m.weight.grad is None and m.bias.grad is None
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    assert not m(ember.ones(1, 3)).requires_grad


def test_apply_initialises_submodules():
    net = enn.Sequential(enn.Linear(2, 2), enn.ReLU(), enn.Linear(2, 1))
    seen = []

    def init(m):
        seen.append(type(m).__name__)
        if isinstance(m, enn.Linear):
            enn.init.zeros_(m.weight)

    assert net.apply(init) is net
    assert seen == ["Linear", "ReLU", "Linear", "Sequential"]
    assert all(float(m.weight.abs().sum()) == 0 for m in net if isinstance(m, enn.Linear))


def test_forward_hooks():
    m = enn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(out.shape) or out + 1)
    out = m(ember.ones(1, 2))
    np.testing.assert_allclose(out.detach().numpy(), m.bias.detach().numpy()[None] + 1)
    assert calls == [(1, 2)]
    h1.remove()
    h2.remove()
    assert m(ember.zeros(1, 2)).shape == (1, 2) and len(calls) == 1
    h3 = m.register_forward_hook(lambda mod, args, kwargs, out: out * 0, with_kwargs=True)
    assert float(m(ember.ones(1, 2)).abs().sum()) == 0
    h3.remove()


def test_forward_not_implemented_message():
    for nn in (tnn, enn):
        with pytest.raises(NotImplementedError) as e:
            nn.Module()(1)
        assert str(e.value) == 'Module [Module] is missing the required "forward" function'


def test_to_double_float_keep_parameter_objects():
    m = enn.Sequential(enn.Linear(2, 2), enn.BatchNorm1d(2))
    w = m[0].weight
    m(ember.ones(3, 2)).sum().backward()
    assert m.double() is m
    assert m[0].weight is w and w.dtype == ember.float64 and w.grad.dtype == ember.float64
    assert m[1].running_mean.dtype == ember.float64
    assert m[1].num_batches_tracked.dtype == ember.int64
    m.to(ember.float32)
    assert w.dtype == ember.float32
    m.to("cpu")
    m.to(ember.zeros(1, dtype=ember.float64))
    assert w.dtype == ember.float64
    m.float()
    assert w.dtype == ember.float32
    out = m(ember.ones(2, 2))
    assert out.dtype == ember.float32
    with pytest.raises(TypeError) as ee:
        m.to(ember.int64)
    with pytest.raises(TypeError) as te:
        tnn.Linear(1, 1).to(torch.int64)
    assert str(ee.value) == str(te.value)


def test_optimizer_keeps_working_after_double():
    m = enn.Linear(2, 1)
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    m.double()
    before = m.weight.detach().numpy().copy()
    m(ember.ones(1, 2, dtype=ember.float64)).sum().backward()
    opt.step()
    assert not np.array_equal(before, m.weight.detach().numpy())


def test_deepcopy_and_pickle_models(nets):
    _, em = nets
    flat = enn.Sequential(enn.Conv2d(1, 2, 3), enn.BatchNorm2d(2), enn.Flatten(), enn.Linear(2, 1))
    for model, clone in ((em, copy.deepcopy(em)), (flat, pickle.loads(pickle.dumps(flat)))):
        assert repr(clone) == repr(model)
        for (n1, p1), (n2, p2) in zip(model.named_parameters(), clone.named_parameters()):
            assert n1 == n2 and isinstance(p2, Parameter) and p2 is not p1
            np.testing.assert_array_equal(p1.detach().numpy(), p2.detach().numpy())
            assert not np.shares_memory(p1.detach().numpy(), p2.detach().numpy())


# -- containers ------------------------------------------------------------------------------


def test_sequential_api_matches_torch():
    def build(nn):
        return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))

    t, e = build(tnn), build(enn)
    assert len(e) == 3 and isinstance(e[-1], enn.Linear)
    assert repr(e[1:]) == repr(t[1:])
    e.append(enn.Sigmoid())
    t.append(tnn.Sigmoid())
    e.insert(1, enn.Tanh())
    t.insert(1, tnn.Tanh())
    del e[0]
    del t[0]
    assert repr(e) == repr(t)
    assert repr(e + e) == repr(t + t)
    assert [n for n, _ in e.named_children()] == [n for n, _ in t.named_children()]
    od = enn.Sequential(OrderedDict([("fc", enn.Linear(1, 1)), ("act", enn.ReLU())]))
    assert list(od.state_dict()) == ["fc.weight", "fc.bias"]
    _same_error(lambda: t[7], lambda: e[7])


def test_module_list_and_dict_match_torch():
    def build(nn):
        lst = nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Linear(1, 2), nn.Linear(1, 2)])
        lst.append(nn.Tanh())
        lst.extend([nn.Tanh(), nn.Sigmoid()])
        lst.insert(0, nn.Sigmoid())
        d = nn.ModuleDict({"b": nn.Linear(1, 1)})
        d["a"] = nn.ReLU()
        d.update([("c", nn.Tanh())])
        return lst, d

    (tl, td), (el, ed) = build(tnn), build(enn)
    assert repr(el) == repr(tl)
    assert repr(ed) == repr(td)
    assert list(ed.keys()) == list(td.keys()) and "a" in ed and len(ed) == 3
    assert repr(el[1:3]) == repr(tl[1:3])
    assert repr(enn.ModuleList()) == repr(tnn.ModuleList()) == "ModuleList()"
    assert ed.pop("a") is not None and list(ed) == ["b", "c"]
    _same_error(lambda: tl[20], lambda: el[20])


# -- Parameter -------------------------------------------------------------------------------


def test_parameter_basics():
    data = np.array([[1.0, -2.0], [3.5, 0.25]], dtype=np.float32)
    tp, ep = tnn.Parameter(torch.tensor(data)), Parameter(ember.tensor(data))
    assert repr(ep) == repr(tp)
    assert str(ep) == str(tp)
    tq = tnn.Parameter(torch.tensor(data), requires_grad=False)
    eq = Parameter(ember.tensor(data), requires_grad=False)
    assert repr(eq) == repr(tq)
    assert isinstance(ep, ember.Tensor) and ep.is_leaf and ep.requires_grad
    assert type(ep * 2) is ember.Tensor and type(ep.detach()) is ember.Tensor
    src = ember.zeros(3)
    p = Parameter(src)
    assert np.shares_memory(p.detach().numpy(), src.numpy())
    assert Parameter().shape == (0,)
    with pytest.raises(RuntimeError, match="floating point"):
        Parameter(ember.tensor([1, 2]))


def test_parameter_as_right_operand_gets_gradient():
    p = Parameter(ember.full((3,), 2.0))
    x = ember.ones(3, requires_grad=True)
    (x * p + x / p).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), 1 - 1 / 4)
    np.testing.assert_allclose(x.grad.numpy(), 2 + 1 / 2)


def test_uninitialized_parameters_are_in_nn_parameter_as_in_torch():
    from ember.nn.modules import lazy
    from ember.nn.parameter import UninitializedBuffer, UninitializedParameter

    assert UninitializedParameter is lazy.UninitializedParameter
    assert UninitializedBuffer is lazy.UninitializedBuffer
    layer = ember.nn.LazyLinear(3)
    assert isinstance(layer.weight, UninitializedParameter)
