"""The public surface of ember.optim against torch.optim: names, module paths, __init__
signatures (names, kinds, order, defaults), docstring examples, and swa_utils."""

import doctest
import importlib
import inspect

import numpy as np
import pytest
import torch
import torch.optim.swa_utils as tswa

import ember
import ember.optim.swa_utils as eswa

OPTIMIZERS = [
    "SGD",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adagrad",
    "Adamax",
    "Adadelta",
    "Rprop",
    "ASGD",
    "NAdam",
    "RAdam",
    "SparseAdam",
    "LBFGS",
    "Adafactor",
]
SCHEDULERS = list(torch.optim.lr_scheduler.__all__)


def _params(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def _assert_same_signature(e_fn, t_fn):
    e, t = _params(e_fn), _params(t_fn)
    assert [x[:2] for x in e] == [x[:2] for x in t]
    for (name, _, e_default), (_, _, t_default) in zip(e, t):
        if isinstance(t_default, (int, float, str, bool, tuple, type(None))):
            assert e_default == t_default and type(e_default) is type(t_default), name
        else:
            assert repr(e_default) == repr(t_default), name


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_signature_matches_torch(name):
    e_cls, t_cls = getattr(ember.optim, name), getattr(torch.optim, name)
    _assert_same_signature(e_cls.__init__, t_cls.__init__)
    _assert_same_signature(e_cls.step, t_cls.step)


@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_signature_matches_torch(name):
    e_cls = getattr(ember.optim.lr_scheduler, name)
    t_cls = getattr(torch.optim.lr_scheduler, name)
    _assert_same_signature(e_cls.__init__, t_cls.__init__)
    _assert_same_signature(e_cls.step, t_cls.step)


@pytest.mark.parametrize(
    "name",
    [
        "AveragedModel",
        "SWALR",
        "update_bn",
        "get_ema_multi_avg_fn",
        "get_swa_multi_avg_fn",
        "get_ema_avg_fn",
        "get_swa_avg_fn",
    ],
)
def test_swa_utils_signature_matches_torch(name):
    e, t = getattr(eswa, name), getattr(tswa, name)
    if inspect.isclass(t):
        e, t = e.__init__, t.__init__
    _assert_same_signature(e, t)


def test_base_class_methods_match_torch():
    for method in (
        "zero_grad",
        "add_param_group",
        "state_dict",
        "load_state_dict",
        "register_step_pre_hook",
        "register_step_post_hook",
        "register_state_dict_pre_hook",
        "register_state_dict_post_hook",
        "register_load_state_dict_pre_hook",
        "register_load_state_dict_post_hook",
    ):
        e = getattr(ember.optim.Optimizer, method)
        t = getattr(torch.optim.Optimizer, method)
        assert [p[0] for p in _params(e)] == [p[0] for p in _params(t)], method


@pytest.mark.parametrize(
    "module,name",
    [
        ("lbfgs", "LBFGS"),
        ("nadam", "NAdam"),
        ("radam", "RAdam"),
        ("adamax", "Adamax"),
        ("adadelta", "Adadelta"),
        ("rprop", "Rprop"),
        ("asgd", "ASGD"),
        ("sparse_adam", "SparseAdam"),
        ("_adafactor", "Adafactor"),
        ("swa_utils", "AveragedModel"),
        ("swa_utils", "SWALR"),
        ("swa_utils", "update_bn"),
    ],
)
def test_module_paths_match_torch(module, name):
    e_mod = importlib.import_module(f"ember.optim.{module}")
    t_mod = importlib.import_module(f"torch.optim.{module}")
    assert hasattr(t_mod, name)
    obj = getattr(e_mod, name)
    if name in t_mod.__all__ if hasattr(t_mod, "__all__") else True:
        assert name in e_mod.__all__
    if module != "swa_utils":
        assert getattr(ember.optim, name) is obj


def test_public_optimizer_names_match_torch():
    missing = set(torch.optim.__all__) - set(ember.optim.__all__)
    # Muon and swap_in_optimizer_params_and_state are not part of ember yet
    assert missing == {"Muon", "swap_in_optimizer_params_and_state"}
    for name in OPTIMIZERS:
        cls = getattr(ember.optim, name)
        assert issubclass(cls, ember.optim.Optimizer)
        assert cls.__doc__ and "Example" in cls.__doc__


MODULES = [
    "ember.optim",
    "ember.optim.adamax",
    "ember.optim.adadelta",
    "ember.optim.rprop",
    "ember.optim.asgd",
    "ember.optim.nadam",
    "ember.optim.radam",
    "ember.optim.sparse_adam",
    "ember.optim.lbfgs",
    "ember.optim.lr_scheduler",
    "ember.optim.swa_utils",
]


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module):
    mod = importlib.import_module(module)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(mod, module) if t.examples]
    assert tests
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0


# -- swa_utils against torch ---------------------------------------------------------------


def _models(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
    return model


def _copy_weights(e_model, t_model):
    with torch.no_grad():
        for (_, tp), (_, ep) in zip(t_model.state_dict().items(), e_model.state_dict().items()):
            tp.copy_(torch.tensor(np.asarray(ep)))


@pytest.mark.parametrize("kind", ["swa", "ema", "ema_single", "buffers"])
def test_averaged_model_matches_torch(kind):
    def make(lib, swa_mod, model):
        if kind == "ema":
            return swa_mod.AveragedModel(model, multi_avg_fn=swa_mod.get_ema_multi_avg_fn(0.9))
        if kind == "ema_single":
            return swa_mod.AveragedModel(model, avg_fn=swa_mod.get_ema_avg_fn(0.8))
        return swa_mod.AveragedModel(model, use_buffers=(kind == "buffers"))

    e_model, t_model = _models(ember), _models(torch)
    _copy_weights(e_model, t_model)
    e_avg, t_avg = make(ember, eswa, e_model), make(torch, tswa, t_model)
    rng = np.random.default_rng(3)
    for _ in range(5):
        with torch.no_grad(), ember.no_grad():
            for ep, tp in zip(e_model.parameters(), t_model.parameters()):
                delta = rng.standard_normal(tuple(tp.shape))
                ep.add_(ember.tensor(delta, dtype=ember.float32))
                tp.add_(torch.tensor(delta, dtype=torch.float32))
        x = rng.standard_normal((6, 3))
        e_model(ember.tensor(x, dtype=ember.float32))  # train-mode BN updates the buffers
        t_model(torch.tensor(x, dtype=torch.float32))
        e_avg.update_parameters(e_model)
        t_avg.update_parameters(t_model)
    e_sd, t_sd = e_avg.state_dict(), t_avg.state_dict()
    assert list(e_sd) == list(t_sd)
    for key in t_sd:
        np.testing.assert_allclose(np.asarray(e_sd[key]), t_sd[key].numpy(), rtol=1e-5, atol=1e-6)
    assert e_avg.n_averaged.item() == 5
    x = rng.standard_normal((2, 3))
    e_avg.eval()
    t_avg.eval()
    np.testing.assert_allclose(
        np.asarray(e_avg(ember.tensor(x, dtype=ember.float32)).detach()),
        t_avg(torch.tensor(x, dtype=torch.float32)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


def test_update_bn_matches_torch():
    e_model, t_model = _models(ember), _models(torch)
    _copy_weights(e_model, t_model)
    rng = np.random.default_rng(4)
    batches = [rng.standard_normal((5, 3)) for _ in range(4)]
    e_model.eval()
    t_model.eval()
    eswa.update_bn([(ember.tensor(b, dtype=ember.float32), 0) for b in batches], e_model)
    tswa.update_bn([(torch.tensor(b, dtype=torch.float32), 0) for b in batches], t_model)
    assert not e_model.training
    assert e_model[1].momentum == 0.1
    for key, value in t_model.state_dict().items():
        np.testing.assert_allclose(
            np.asarray(e_model.state_dict()[key]), value.numpy(), rtol=1e-5, atol=1e-6
        )


@pytest.mark.parametrize("strategy,epochs", [("cos", 5), ("linear", 3), ("cos", 0)])
def test_swalr_matches_torch(strategy, epochs):
    def run(lib, swa_mod):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.5)
        sched = swa_mod.SWALR(opt, swa_lr=0.05, anneal_epochs=epochs, anneal_strategy=strategy)
        out = [sched.get_last_lr()]
        for i in range(12):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr())
            if i == 6:
                state = sched.state_dict()
                sched = swa_mod.SWALR(opt, swa_lr=0.05, anneal_strategy="linear")
                sched.load_state_dict(state)
        return out

    assert run(ember, eswa) == run(torch, tswa)
    with pytest.raises(ValueError, match="anneal_strategy must be one of"):
        eswa.SWALR(ember.optim.SGD([ember.zeros(1, requires_grad=True)]), 0.1, anneal_strategy="x")
    with pytest.raises(ValueError, match="Invalid decay value"):
        eswa.get_ema_avg_fn(1.5)
