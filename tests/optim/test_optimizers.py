"""ember.optim against torch.optim: 100 steps on the same problems, state dicts, errors."""

import copy
import warnings

import numpy as np
import pytest
import torch

import ember
import ember.optim as eoptim

# -- a small problem whose gradient comes from ember's autograd --------------------------
#
# f(x, y, z) = sum((1 - x)^2 + 10 (y - x^2)^2) + sum(exp(0.1 z) sin(z)) with a fourth
# parameter ``w`` that never receives a gradient (optimizers must skip it).


def _init_values(dtype=np.float64):
    rng = np.random.default_rng(1234)
    return {
        "x": rng.uniform(-1.5, 1.5, size=(5,)).astype(dtype),
        "y": rng.uniform(-1.0, 2.0, size=(5,)).astype(dtype),
        "z": rng.uniform(-2.0, 2.0, size=(2, 3)).astype(dtype),
        "w": rng.uniform(-1.0, 1.0, size=(4,)).astype(dtype),
    }


def _loss_terms(lib, x, y, z):
    rosen = (1 - x) ** 2 + 10 * (y - x**2) ** 2
    wave = lib.exp(0.1 * z) * lib.sin(z)
    return rosen, wave


def _backward(lib, params, sign=1.0):
    """Accumulate the gradient of ``sign * f`` (``sign=-1`` for ``maximize=True`` runs)."""
    x, y, z, _ = params
    rosen, wave = _loss_terms(lib, x, y, z)
    rosen.backward(gradient=lib.ones_like(rosen) * sign)
    wave.backward(gradient=lib.ones_like(wave) * sign)
    return rosen, wave


def _loss_value(rosen, wave):
    return float(np.sum(np.asarray(rosen.detach())) + np.sum(np.asarray(wave.detach())))


def _make_params(lib, dtype=np.float64):
    vals = _init_values(dtype)
    return [lib.tensor(vals[k].copy(), requires_grad=True) for k in ("x", "y", "z", "w")]


def _run(lib, optim_mod, name, kwargs, steps=100, dtype=np.float64, groups=None, closure=False):
    params = _make_params(lib, dtype)
    if groups is None:
        opt = getattr(optim_mod, name)(params, **kwargs)
    else:
        opt = getattr(optim_mod, name)(
            [{"params": params[:2], **groups}, {"params": params[2:]}], **kwargs
        )
    losses = []
    sign = -1.0 if kwargs.get("maximize") else 1.0
    for _ in range(steps):
        if closure:

            def closure_fn():
                opt.zero_grad()
                rosen, wave = _backward(lib, params, sign)
                return _loss_value(rosen, wave)

            losses.append(opt.step(closure_fn))
        else:
            opt.zero_grad()
            rosen, wave = _backward(lib, params, sign)
            losses.append(_loss_value(rosen, wave))
            opt.step()
    return params, opt, losses


CONFIGS = [
    ("SGD", {"lr": 1e-3}),
    ("SGD", {"lr": 1e-3, "momentum": 0.9}),
    ("SGD", {"lr": 1e-3, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.1}),
    ("SGD", {"lr": 1e-3, "momentum": 0.8, "nesterov": True}),
    ("SGD", {"lr": 1e-3, "momentum": 0.5, "maximize": True}),
    ("SGD", {"lr": 2e-3, "weight_decay": 0.05, "maximize": True}),
    ("Adam", {"lr": 1e-2}),
    ("Adam", {"lr": 1e-2, "amsgrad": True}),
    ("Adam", {"lr": 1e-2, "weight_decay": 0.1, "betas": (0.8, 0.99), "eps": 1e-6}),
    ("Adam", {"lr": 1e-2, "maximize": True, "amsgrad": True}),
    ("Adam", {"lr": 1e-2, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 1e-2}),
    ("AdamW", {"lr": 1e-2, "weight_decay": 0.3, "amsgrad": True}),
    ("AdamW", {"lr": 1e-2, "weight_decay": 0.1, "maximize": True}),
    ("RMSprop", {"lr": 1e-3}),
    ("RMSprop", {"lr": 1e-3, "alpha": 0.9, "centered": True}),
    ("RMSprop", {"lr": 1e-3, "momentum": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 1e-3, "momentum": 0.5, "centered": True, "eps": 1e-4}),
    ("RMSprop", {"lr": 1e-3, "maximize": True}),
    ("Adagrad", {"lr": 1e-1}),
    ("Adagrad", {"lr": 1e-1, "lr_decay": 0.01, "initial_accumulator_value": 0.1}),
    ("Adagrad", {"lr": 1e-1, "weight_decay": 0.1, "eps": 1e-6}),
    ("Adagrad", {"lr": 1e-2, "maximize": True}),
]


def _ids(c):
    return c[0] + "-" + "-".join(f"{k}={v}" for k, v in c[1].items())


def _assert_params_equal(e_params, t_params, atol):
    for ep, tp in zip(e_params, t_params):
        np.testing.assert_allclose(ep._data, tp.detach().numpy(), rtol=0, atol=atol)


def _assert_state_equal(e_opt, t_opt, atol):
    e_sd, t_sd = e_opt.state_dict(), t_opt.state_dict()
    assert list(e_sd["state"]) == list(t_sd["state"])
    for idx, t_state in t_sd["state"].items():
        e_state = e_sd["state"][idx]
        assert list(e_state) == list(t_state)
        for key, t_val in t_state.items():
            e_val = e_state[key]
            assert isinstance(e_val, ember.Tensor)
            assert str(e_val.dtype) == str(t_val.dtype)
            assert tuple(e_val.shape) == tuple(t_val.shape)
            np.testing.assert_allclose(e_val._data, t_val.numpy(), rtol=0, atol=atol)
    for e_group, t_group in zip(e_sd["param_groups"], t_sd["param_groups"]):
        assert e_group == t_group


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[_ids(c) for c in CONFIGS])
def test_100_steps_match_torch(name, kwargs):
    e_params, e_opt, e_losses = _run(ember, eoptim, name, kwargs)
    t_params, t_opt, t_losses = _run(torch, torch.optim, name, kwargs)
    _assert_params_equal(e_params, t_params, atol=1e-6)
    _assert_state_equal(e_opt, t_opt, atol=1e-6)
    np.testing.assert_allclose(e_losses, t_losses, rtol=1e-9, atol=1e-9)
    # the problem actually moved the parameters (and never touched the grad-less one)
    init = _init_values()
    assert not np.allclose(e_params[0]._data, init["x"])
    np.testing.assert_array_equal(e_params[3]._data, init["w"])
    assert e_params[3] not in e_opt.state or not e_opt.state[e_params[3]] or name == "Adagrad"


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("SGD", {"lr": 1e-3, "momentum": 0.9, "nesterov": True}),
        ("Adam", {"lr": 1e-2, "amsgrad": True, "weight_decay": 0.01}),
        ("AdamW", {"lr": 1e-2}),
        ("RMSprop", {"lr": 1e-3, "centered": True, "momentum": 0.3}),
        ("Adagrad", {"lr": 1e-1, "lr_decay": 0.05}),
    ],
)
def test_float32_closure_and_groups_match_torch(name, kwargs):
    groups = {"lr": kwargs["lr"] / 2}
    e_params, e_opt, e_losses = _run(
        ember, eoptim, name, kwargs, steps=60, dtype=np.float32, groups=groups, closure=True
    )
    t_params, t_opt, t_losses = _run(
        torch, torch.optim, name, kwargs, steps=60, dtype=np.float32, groups=groups, closure=True
    )
    for ep in e_params:
        assert ep.dtype == ember.float32
    _assert_params_equal(e_params, t_params, atol=1e-5)
    np.testing.assert_allclose(e_losses, t_losses, rtol=1e-5, atol=1e-5)
    assert str(e_opt) == str(t_opt)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_complex_params_match_torch(name):
    kwargs = {"lr": 1e-2}
    if name == "SGD":
        kwargs["momentum"] = 0.9
    if name == "RMSprop":
        kwargs["centered"] = True
    rng = np.random.default_rng(7)
    p0 = (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(np.complex128)
    grads = [(rng.standard_normal(4) + 1j * rng.standard_normal(4)) for _ in range(20)]
    ep = ember.tensor(p0.copy(), requires_grad=True)
    tp = torch.tensor(p0.copy(), requires_grad=True)
    eo = getattr(eoptim, name)([ep], **kwargs)
    to = getattr(torch.optim, name)([tp], **kwargs)
    for g in grads:
        ep.grad = ember.tensor(g)
        tp.grad = torch.tensor(g)
        eo.step()
        to.step()
    np.testing.assert_allclose(ep._data, tp.detach().numpy(), rtol=0, atol=1e-10)


@pytest.mark.parametrize("name,kwargs", CONFIGS[::3], ids=[_ids(c) for c in CONFIGS[::3]])
def test_state_dict_resume_equals_uninterrupted(name, kwargs):
    full_params, _, _ = _run(ember, eoptim, name, kwargs, steps=40)

    params = _make_params(ember)
    opt = getattr(eoptim, name)(params, **kwargs)
    sign = -1.0 if kwargs.get("maximize") else 1.0
    for _ in range(20):
        opt.zero_grad()
        _backward(ember, params, sign)
        opt.step()
    saved = copy.deepcopy(opt.state_dict())
    saved_params = [p._data.copy() for p in params]

    params2 = [ember.tensor(a, requires_grad=True) for a in saved_params]
    opt2 = getattr(eoptim, name)(params2, lr=123.0)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == kwargs["lr"]
    for _ in range(20):
        opt2.zero_grad()
        _backward(ember, params2, sign)
        opt2.step()
    for a, b in zip(params2, full_params):
        np.testing.assert_array_equal(a._data, b._data)


def test_state_dict_structure_matches_torch():
    e = ember.zeros(3, requires_grad=True, dtype=ember.float64)
    t = torch.zeros(3, requires_grad=True, dtype=torch.float64)
    e2 = ember.zeros(2, requires_grad=True)
    t2 = torch.zeros(2, requires_grad=True)
    eo = eoptim.Adam([{"params": [e]}, {"params": [e2], "lr": 0.5}], amsgrad=True)
    to = torch.optim.Adam([{"params": [t]}, {"params": [t2], "lr": 0.5}], amsgrad=True)
    assert eo.state_dict()["state"] == {} == to.state_dict()["state"]
    e.grad = ember.ones(3, dtype=ember.float64)
    t.grad = torch.ones(3, dtype=torch.float64)
    eo.step()
    to.step()
    esd, tsd = eo.state_dict(), to.state_dict()
    assert esd["param_groups"] == tsd["param_groups"]
    assert list(esd["state"]) == [0]
    assert esd["state"][0]["step"].dtype == ember.float32  # torch's scalar dtype
    assert esd["state"][0]["step"].item() == 1.0
    assert esd["state"][0]["exp_avg"].dtype == ember.float64
    _assert_state_equal(eo, to, atol=1e-12)


def test_load_state_dict_casts_state_to_param_dtype_and_validates():
    p = ember.zeros(2, requires_grad=True, dtype=ember.float64)
    opt = eoptim.SGD([p], lr=0.1, momentum=0.9)
    sd = {
        "state": {0: {"momentum_buffer": ember.ones(2)}},
        "param_groups": [dict(opt.state_dict()["param_groups"][0])],
    }
    opt.load_state_dict(sd)
    assert opt.state[p]["momentum_buffer"].dtype == ember.float64

    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    bad = opt.state_dict()
    bad["param_groups"][0]["params"] = [0, 1]
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict(bad)


def _torch_error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        return type(exc), str(exc)
    return None


BAD_ARGS = [
    ("SGD", {"lr": -1}),
    ("SGD", {"lr": 0.1, "momentum": -0.5}),
    ("SGD", {"lr": 0.1, "weight_decay": -1e-3}),
    ("SGD", {"lr": 0.1, "nesterov": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.1, "nesterov": True}),
    ("Adam", {"lr": -0.01}),
    ("Adam", {"eps": -1.0}),
    ("Adam", {"betas": (1.0, 0.9)}),
    ("Adam", {"betas": (0.9, -0.1)}),
    ("Adam", {"betas": (0, 0.9)}),
    ("Adam", {"weight_decay": -2}),
    ("AdamW", {"lr": -3}),
    ("AdamW", {"betas": (0.5, 1.5)}),
    ("RMSprop", {"lr": -1}),
    ("RMSprop", {"alpha": -0.1}),
    ("RMSprop", {"eps": -1e-8}),
    ("RMSprop", {"momentum": -1}),
    ("RMSprop", {"weight_decay": -1}),
    ("Adagrad", {"lr": -1}),
    ("Adagrad", {"lr_decay": -1}),
    ("Adagrad", {"weight_decay": -1}),
    ("Adagrad", {"initial_accumulator_value": -1}),
    ("Adagrad", {"eps": -1}),
]


@pytest.mark.parametrize("name,kwargs", BAD_ARGS, ids=[_ids(c) for c in BAD_ARGS])
def test_hyperparameter_errors_match_torch(name, kwargs):
    t_err = _torch_error(
        lambda: getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kwargs)
    )
    assert t_err is not None
    with pytest.raises(t_err[0]) as info:
        getattr(eoptim, name)([ember.zeros(1, requires_grad=True)], **kwargs)
    assert str(info.value) == t_err[1]


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.zeros(2, requires_grad=True),  # a tensor, not an iterable
        lambda lib: [],
        lambda lib: [1.0],
        lambda lib: [lib.zeros(2, requires_grad=True) * 2],
        lambda lib: [{"params": {lib.zeros(2, requires_grad=True)}}],
    ],
    ids=["tensor", "empty", "float", "non-leaf", "set"],
)
def test_param_errors_match_torch(make):
    t_err = _torch_error(lambda: torch.optim.SGD(make(torch), lr=0.1))
    assert t_err is not None
    with pytest.raises(t_err[0]) as info:
        eoptim.SGD(make(ember), lr=0.1)
    assert str(info.value) == t_err[1]


def test_param_group_errors():
    a = ember.zeros(2, requires_grad=True)
    b = ember.zeros(2, requires_grad=True)
    opt = eoptim.SGD([a], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([b])
    with pytest.warns(UserWarning, match="duplicate parameters"):
        eoptim.SGD([b, b], lr=0.1)
    with pytest.raises(ValueError, match="all optimizer param groups should be with/without"):
        opt.add_param_group({"params": [("b", b)]})
    named = eoptim.Adam([("a", a), ("b", b)])
    assert named.param_groups[0]["param_names"] == ["a", "b"]
    assert named.state_dict()["param_groups"][0]["param_names"] == ["a", "b"]


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("SGD", {"lr": 0.1}),
        ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-4}),
        ("Adam", {}),
        ("Adam", {"lr": 3e-4, "betas": (0.5, 0.9), "amsgrad": True}),
        ("AdamW", {}),
        ("RMSprop", {"centered": True}),
        ("Adagrad", {"lr_decay": 0.1}),
    ],
)
def test_repr_matches_torch(name, kwargs):
    eo = getattr(eoptim, name)([ember.zeros(1, requires_grad=True)], **kwargs)
    to = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kwargs)
    assert repr(eo) == repr(to)
    eo.add_param_group({"params": [ember.zeros(1, requires_grad=True)], "lr": 0.5})
    to.add_param_group({"params": [torch.zeros(1, requires_grad=True)], "lr": 0.5})
    assert repr(eo) == repr(to)


def test_zero_grad():
    p = ember.zeros(3, requires_grad=True)
    opt = eoptim.SGD([p], lr=0.1)
    p.grad = ember.ones(3)
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g
    np.testing.assert_array_equal(g._data, np.zeros(3))
    opt.zero_grad()
    assert p.grad is None


def test_in_place_update_bumps_version_and_keeps_storage():
    p = ember.ones(3, requires_grad=True)
    data = p._data
    opt = eoptim.Adam([p], lr=0.1)
    p.grad = ember.ones(3)
    v0 = p._version
    opt.step()
    assert p._data is data
    assert p._version > v0
    assert p.grad_fn is None and p.requires_grad


def test_saved_tensor_modified_by_step_raises_on_backward():
    p = ember.ones(3, requires_grad=True)
    out = p * p  # saves p for backward
    opt = eoptim.SGD([p], lr=0.1)
    p.grad = ember.ones(3)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward(ember.ones(3))


def test_no_grad_params_are_skipped_and_step_runs_without_graph():
    a = ember.ones(2, requires_grad=True)
    b = ember.ones(2, requires_grad=True)
    opt = eoptim.RMSprop([a, b], lr=0.1, momentum=0.9)
    a.grad = ember.ones(2)
    opt.step()
    assert b not in opt.state
    np.testing.assert_array_equal(b._data, np.ones(2))
    assert a.grad_fn is None


def test_closure_returns_loss_and_runs_with_grad_enabled():
    p = ember.tensor([2.0], requires_grad=True)
    opt = eoptim.SGD([p], lr=0.1)
    seen = []

    def closure():
        seen.append(ember.is_grad_enabled())
        opt.zero_grad()
        loss = p * p
        loss.backward(ember.ones(1))
        return loss

    with ember.no_grad():
        loss = opt.step(closure)
    assert seen == [True]
    assert loss.item() == 4.0
    np.testing.assert_allclose(p._data, [1.6])


def test_step_hooks():
    p = ember.zeros(1, requires_grad=True)
    opt = eoptim.SGD([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", o is opt)))
    h2 = opt.register_step_post_hook(lambda o, a, k: calls.append(("post", o is opt)))
    opt.step()
    assert calls == [("pre", True), ("post", True)]
    h1.remove()
    h2.remove()
    opt.step()
    assert len(calls) == 2


def test_state_dict_hooks():
    p = ember.zeros(1, requires_grad=True)
    opt = eoptim.SGD([p], lr=0.1)
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    assert opt.state_dict()["extra"] == 1
    loaded = []
    opt.register_load_state_dict_post_hook(lambda o: loaded.append(True))
    opt.load_state_dict(opt.state_dict())
    assert loaded == [True]


def test_lr_can_be_changed_through_param_groups():
    e = ember.tensor([1.0], dtype=ember.float64, requires_grad=True)
    opt = eoptim.SGD([e], lr=0.1)
    e.grad = ember.tensor([1.0], dtype=ember.float64)
    opt.step()
    opt.param_groups[0]["lr"] = 0.5
    opt.step()
    np.testing.assert_allclose(e._data, [0.4])


def test_no_warning_on_plain_use():
    p = ember.zeros(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt = eoptim.AdamW([p])
        p.grad = ember.ones(2)
        opt.step()
        opt.zero_grad()


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_differentiable_is_refused(name):
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        getattr(eoptim, name)([ember.zeros(1, requires_grad=True)], differentiable=True)
