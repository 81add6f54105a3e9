"""Every ember.optim optimizer against torch.optim: 50-step float64 trajectories over an
option grid (rtol/atol 1e-10), L-BFGS with both line searches, state dicts (layout key by
key, mid-run round trips), hooks, and torch's errors."""

import copy
import warnings

import numpy as np
import pytest
import torch

import ember
import ember.optim as eoptim

# -- the problem: Rosenbrock in (x, y), a damped wave plus a quadratic in z -------------
#
# Each library computes the gradient with its own autograd; ``w`` never gets a gradient.


def _init_values():
    rng = np.random.default_rng(2024)
    return [
        rng.uniform(-1.5, 1.5, size=(5,)),
        rng.uniform(-1.0, 2.0, size=(5,)),
        rng.uniform(-2.0, 2.0, size=(2, 3)),
        rng.uniform(-1.0, 1.0, size=(3,)),
    ]


def _loss(lib, x, y, z):
    rosen = ((1 - x) ** 2 + 10 * (y - x**2) ** 2).sum()
    return rosen + (lib.exp(0.1 * z) * lib.sin(z)).sum() + 0.5 * (z * z).sum()


def _params(lib, values=None):
    values = _init_values() if values is None else values
    return [lib.tensor(v.copy(), requires_grad=True) for v in values]


def _flat(params):
    return np.concatenate([np.asarray(p.detach()).ravel() for p in params])


def _make(lib, name, params, kwargs):
    return getattr(lib.optim, name)(params, **kwargs)


def _steps(lib, opt, params, n, sign):
    traj, losses = [], []
    for _ in range(n):
        opt.zero_grad()
        loss = sign * _loss(lib, *params[:3])
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        traj.append(_flat(params))
    return traj, losses


def _run(lib, name, kwargs, n=50):
    params = _params(lib)
    opt = _make(lib, name, params, kwargs)
    sign = -1.0 if kwargs.get("maximize") else 1.0
    traj, losses = _steps(lib, opt, params, n, sign)
    return np.array(traj), np.array(losses), params, opt


GRID = [
    ("SGD", {"lr": 1e-3}),
    ("SGD", {"lr": 1e-3, "momentum": 0.9, "dampening": 0.2, "weight_decay": 0.1}),
    ("SGD", {"lr": 1e-3, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("Adam", {"lr": 1e-2}),
    ("Adam", {"lr": 1e-2, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 1e-2, "maximize": True, "decoupled_weight_decay": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 1e-2, "amsgrad": True}),
    ("AdamW", {"lr": 1e-2, "weight_decay": 0.3, "maximize": True, "foreach": True}),
    ("RMSprop", {"lr": 1e-3, "centered": True, "momentum": 0.5}),
    ("RMSprop", {"lr": 1e-3, "weight_decay": 0.1, "maximize": True}),
    ("Adagrad", {"lr": 1e-1, "lr_decay": 0.01, "initial_accumulator_value": 0.1}),
    ("Adagrad", {"lr": 1e-1, "weight_decay": 0.1, "maximize": True}),
    ("Adamax", {"lr": 2e-2}),
    ("Adamax", {"lr": 2e-2, "betas": (0.8, 0.99), "weight_decay": 0.1}),
    ("Adamax", {"lr": 2e-2, "eps": 1e-3, "maximize": True, "foreach": False}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-4, "weight_decay": 0.05}),
    ("Adadelta", {"maximize": True, "foreach": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-4, 0.2)}),
    ("Rprop", {"maximize": True}),
    ("ASGD", {"lr": 1e-3}),
    ("ASGD", {"lr": 2e-3, "lambd": 1e-3, "alpha": 0.5, "t0": 10, "weight_decay": 0.1}),
    ("ASGD", {"lr": 1e-3, "t0": 5, "maximize": True}),
    ("NAdam", {"lr": 1e-2}),
    ("NAdam", {"lr": 1e-2, "momentum_decay": 1e-2, "weight_decay": 0.1}),
    ("NAdam", {"lr": 1e-2, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 1e-2, "betas": (0.8, 0.95), "maximize": True}),
    ("RAdam", {"lr": 1e-2}),
    ("RAdam", {"lr": 1e-2, "weight_decay": 0.1}),
    ("RAdam", {"lr": 1e-2, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 1e-2, "betas": (0.5, 0.9), "maximize": True}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.05, "weight_decay": 0.1, "beta2_decay": -0.5}),
    ("Adafactor", {"eps": (1e-5, 1e-2), "d": 1.5, "maximize": True}),
]


def _ids(c):
    return c[0] + "-" + "-".join(f"{k}={v}" for k, v in c[1].items())


def _assert_state_matches(e_value, t_value, key=""):
    """One optimizer-state value of ember against torch's: same kind, dtype, shape, values."""
    if isinstance(t_value, torch.Tensor):
        assert isinstance(e_value, ember.Tensor), key
        assert str(e_value.dtype) == str(t_value.dtype), key
        assert tuple(e_value.shape) == tuple(t_value.shape), key
        np.testing.assert_allclose(
            np.asarray(e_value), t_value.numpy(), rtol=1e-10, atol=1e-10, err_msg=key
        )
    elif isinstance(t_value, (list, tuple)):
        assert type(e_value) is type(t_value) and len(e_value) == len(t_value), key
        for i, (e_v, t_v) in enumerate(zip(e_value, t_value)):
            _assert_state_matches(e_v, t_v, f"{key}[{i}]")
    elif isinstance(t_value, float):
        assert isinstance(e_value, float), key
        np.testing.assert_allclose(e_value, t_value, rtol=1e-10, atol=1e-10, err_msg=key)
    else:
        assert e_value == t_value, key


def _assert_state_dicts_match(e_opt, t_opt):
    e_sd, t_sd = e_opt.state_dict(), t_opt.state_dict()
    assert list(e_sd) == list(t_sd) == ["state", "param_groups"]
    assert list(e_sd["state"]) == list(t_sd["state"])
    for idx, t_state in t_sd["state"].items():
        assert list(e_sd["state"][idx]) == list(t_state)
        for key, t_val in t_state.items():
            _assert_state_matches(e_sd["state"][idx][key], t_val, f"state[{idx}][{key}]")
    assert e_sd["param_groups"] == t_sd["param_groups"]


@pytest.mark.parametrize("name,kwargs", GRID, ids=[_ids(c) for c in GRID])
def test_50_step_trajectory_matches_torch(name, kwargs):
    e_traj, e_losses, e_params, e_opt = _run(ember, name, kwargs)
    t_traj, t_losses, t_params, t_opt = _run(torch, name, kwargs)
    np.testing.assert_allclose(e_traj, t_traj, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(e_losses, t_losses, rtol=1e-10, atol=1e-10)
    _assert_state_dicts_match(e_opt, t_opt)
    # the parameters really moved; the one without a gradient did not, and has no state
    assert np.abs(e_traj[-1] - e_traj[0]).max() > 1e-2
    np.testing.assert_array_equal(np.asarray(e_params[3]), _init_values()[3])
    assert e_params[3] not in e_opt.state or name == "Adagrad"


ROUND_TRIP = [c for c in GRID if c[0] not in ("SGD", "Adagrad")][::2] + [
    ("SGD", {"lr": 1e-3, "momentum": 0.9}),
    ("Adagrad", {"lr": 1e-1}),
    ("NAdam", {"lr": 1e-2, "momentum_decay": 1e-2}),
    ("ASGD", {"lr": 2e-3, "t0": 10}),
]


def _resumed_run(lib, name, kwargs, first=20, rest=30):
    """``first`` steps, a state dict saved (deep copy) and loaded into a fresh optimizer on
    fresh parameters holding the saved values, then ``rest`` more steps."""
    sign = -1.0 if kwargs.get("maximize") else 1.0
    params = _params(lib)
    opt = _make(lib, name, params, kwargs)
    _steps(lib, opt, params, first, sign)
    saved = copy.deepcopy(opt.state_dict())
    values = [np.asarray(p.detach()).copy() for p in params]

    params2 = _params(lib, values)
    opt2 = _make(lib, name, params2, {**kwargs, "lr": 0.123})
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == kwargs.get("lr", opt.defaults["lr"])
    traj, _ = _steps(lib, opt2, params2, rest, sign)
    return np.array(traj), opt2


@pytest.mark.parametrize("name,kwargs", ROUND_TRIP, ids=[_ids(c) for c in ROUND_TRIP])
def test_state_dict_round_trip_mid_run(name, kwargs):
    full, _, _, _ = _run(ember, name, kwargs)
    e_traj, e_opt = _resumed_run(ember, name, kwargs)
    t_traj, t_opt = _resumed_run(torch, name, kwargs)
    # the resumed run is torch's resumed run ...
    np.testing.assert_allclose(e_traj, t_traj, rtol=1e-10, atol=1e-10)
    _assert_state_dicts_match(e_opt, t_opt)
    if name == "NAdam":
        # ... and NAdam's float32 ``mu_product`` comes back as float64 (the parameters'
        # dtype) from load_state_dict, as in torch, so the continuation differs slightly
        assert e_opt.state_dict()["state"][0]["mu_product"].dtype == ember.float64
        np.testing.assert_allclose(e_traj, full[20:], rtol=1e-6, atol=1e-8)
    else:
        # ... and equal to the uninterrupted run
        np.testing.assert_allclose(e_traj, full[20:], rtol=1e-12, atol=1e-12)


# -- L-BFGS -------------------------------------------------------------------------------

LBFGS_CONFIGS = [
    ({"lr": 0.1, "max_iter": 5}, 5),
    ({"lr": 0.5, "history_size": 3, "max_iter": 4}, 8),
    ({"line_search_fn": "strong_wolfe", "max_iter": 4}, 8),
    ({"line_search_fn": "strong_wolfe", "history_size": 2, "max_iter": 5, "max_eval": 6}, 5),
    ({"line_search_fn": "strong_wolfe", "tolerance_change": 1e-3, "max_iter": 10}, 4),
]


def _lbfgs_run(lib, kwargs, steps, params=None, opt=None):
    params = _params(lib) if params is None else params
    opt = lib.optim.LBFGS(params, **kwargs) if opt is None else opt

    def closure():
        opt.zero_grad()
        loss = _loss(lib, *params[:3])
        loss.backward()
        return loss

    losses, traj = [], []
    for _ in range(steps):
        losses.append(float(opt.step(closure).detach()))
        traj.append(_flat(params))
    return np.array(traj), np.array(losses), params, opt


@pytest.mark.parametrize(
    "kwargs,steps", LBFGS_CONFIGS, ids=[_ids(("LBFGS", c[0])) for c in LBFGS_CONFIGS]
)
def test_lbfgs_matches_torch(kwargs, steps):
    e_traj, e_losses, _, e_opt = _lbfgs_run(ember, kwargs, steps)
    t_traj, t_losses, _, t_opt = _lbfgs_run(torch, kwargs, steps)
    np.testing.assert_allclose(e_traj, t_traj, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(e_losses, t_losses, rtol=1e-10, atol=1e-10)
    _assert_state_dicts_match(e_opt, t_opt)
    e_state = e_opt.state_dict()["state"][0]
    assert e_state["func_evals"] > steps and e_state["n_iter"] >= steps
    assert e_losses[-1] < e_losses[0]


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_state_dict_round_trip(line_search_fn):
    kwargs = {"line_search_fn": line_search_fn, "history_size": 4, "max_iter": 3, "lr": 0.5}
    full, _, _, _ = _lbfgs_run(ember, kwargs, 6)
    _, _, params, opt = _lbfgs_run(ember, kwargs, 3)
    saved = copy.deepcopy(opt.state_dict())
    params2 = _params(ember, [np.asarray(p.detach()).copy() for p in params])
    opt2 = eoptim.LBFGS(params2, **kwargs)
    opt2.load_state_dict(saved)
    resumed, _, _, _ = _lbfgs_run(ember, kwargs, 3, params2, opt2)
    np.testing.assert_allclose(resumed, full[3:], rtol=1e-12, atol=1e-12)


def test_lbfgs_errors_and_early_exit():
    a, b = ember.zeros(2, requires_grad=True), ember.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        eoptim.LBFGS([{"params": [a]}, {"params": [b]}])
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        eoptim.LBFGS([a], lr=-1)
    assert eoptim.LBFGS([a], max_iter=8).defaults["max_eval"] == 10

    opt = eoptim.LBFGS([a], line_search_fn="bogus")

    def closure():
        opt.zero_grad()
        loss = ((a - 1.0) ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)

    # at a stationary point the first gradient check returns at once
    c = ember.ones(2, requires_grad=True)
    opt = eoptim.LBFGS([c])
    calls = []

    def flat():
        calls.append(1)
        opt.zero_grad()
        loss = ((c - 1.0) ** 2).sum()
        loss.backward()
        return loss

    assert opt.step(flat).item() == 0.0
    assert calls == [1] and opt.state[c] == {"func_evals": 1, "n_iter": 0}


# -- SparseAdam, capturable, differentiable, errors ------------------------------------


def _torch_error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        return type(exc), str(exc)
    return None


def test_sparse_adam_constructs_and_refuses_dense_gradients():
    e = ember.zeros(3, requires_grad=True)
    t = torch.zeros(3, requires_grad=True)
    eo, to = eoptim.SparseAdam([e], lr=0.1), torch.optim.SparseAdam([t], lr=0.1)
    assert eo.state_dict() == to.state_dict()
    assert eo.step() is None  # no gradients: nothing to do
    e.grad, t.grad = ember.ones(3), torch.ones(3)
    t_err = _torch_error(to.step)
    with pytest.raises(t_err[0]) as info:
        eo.step()
    assert str(info.value) == t_err[1]
    t_err = _torch_error(
        lambda: torch.optim.SparseAdam([torch.zeros(2, dtype=torch.complex64, requires_grad=True)])
    )
    with pytest.raises(t_err[0]) as info:
        eoptim.SparseAdam([ember.zeros(2, dtype=ember.complex64, requires_grad=True)])
    assert str(info.value) == t_err[1]


CAPTURABLE = ["Adam", "AdamW", "RMSprop", "Adamax", "Adadelta", "Rprop", "ASGD", "NAdam", "RAdam"]


@pytest.mark.parametrize("name", CAPTURABLE)
def test_capturable_step_raises_like_torch_on_cpu(name):
    t = torch.ones(2, requires_grad=True)
    t.grad = torch.ones(2)
    t_err = _torch_error(getattr(torch.optim, name)([t], capturable=True).step)
    assert t_err is not None
    e = ember.ones(2, requires_grad=True)
    e.grad = ember.ones(2)
    with pytest.raises(t_err[0]) as info:
        getattr(eoptim, name)([e], capturable=True).step()
    assert str(info.value) == t_err[1]


NEW = ["Adamax", "Adadelta", "Rprop", "ASGD", "NAdam", "RAdam"]


@pytest.mark.parametrize("name", NEW)
def test_differentiable_is_refused_clearly(name):
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        getattr(eoptim, name)([ember.zeros(1, requires_grad=True)], differentiable=True)


BAD_ARGS = [
    ("Adamax", {"lr": -1}),
    ("Adamax", {"eps": -1}),
    ("Adamax", {"betas": (1.0, 0.9)}),
    ("Adamax", {"betas": (0.9, -0.1)}),
    ("Adamax", {"weight_decay": -1}),
    ("Adadelta", {"lr": -1}),
    ("Adadelta", {"rho": 1.5}),
    ("Adadelta", {"eps": -1}),
    ("Adadelta", {"weight_decay": -1}),
    ("Rprop", {"lr": -1}),
    ("Rprop", {"etas": (1.5, 2.0)}),
    ("Rprop", {"etas": (0.5, 0.9)}),
    ("ASGD", {"lr": -1}),
    ("ASGD", {"weight_decay": -1}),
    ("NAdam", {"lr": -1}),
    ("NAdam", {"eps": -1}),
    ("NAdam", {"betas": (1.0, 0.9)}),
    ("NAdam", {"weight_decay": -1}),
    ("NAdam", {"momentum_decay": -1}),
    ("RAdam", {"lr": -1}),
    ("RAdam", {"eps": -1}),
    ("RAdam", {"betas": (0.9, 1.0)}),
    ("RAdam", {"weight_decay": -1}),
    ("SparseAdam", {"lr": 0.0}),
    ("SparseAdam", {"eps": 0.0}),
    ("SparseAdam", {"betas": (0.9, 1.0)}),
    ("Adafactor", {"lr": -1}),
    ("Adafactor", {"beta2_decay": 0.5}),
    ("Adafactor", {"eps": (-1.0, 1e-3)}),
    ("Adafactor", {"eps": (None, -1.0)}),
    ("Adafactor", {"d": 0.5}),
    ("Adafactor", {"weight_decay": -1}),
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


@pytest.mark.parametrize("name", NEW + ["SparseAdam", "LBFGS", "Adafactor"])
def test_repr_and_fresh_state_dict_match_torch(name):
    eo = getattr(eoptim, name)([ember.zeros(1, requires_grad=True)])
    to = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)])
    assert repr(eo) == repr(to)
    assert eo.state_dict() == to.state_dict()


@pytest.mark.parametrize("name", ["Adamax", "Adadelta", "Rprop", "ASGD", "NAdam", "RAdam"])
def test_complex_params_match_torch(name):
    rng = np.random.default_rng(5)
    p0 = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    grads = [rng.standard_normal(4) + 1j * rng.standard_normal(4) for _ in range(15)]
    ep, tp = (
        ember.tensor(p0.copy(), requires_grad=True),
        torch.tensor(p0.copy(), requires_grad=True),
    )
    eo, to = getattr(eoptim, name)([ep]), getattr(torch.optim, name)([tp])
    for g in grads:
        ep.grad, tp.grad = ember.tensor(g), torch.tensor(g)
        eo.step()
        to.step()
    np.testing.assert_allclose(np.asarray(ep.detach()), tp.detach().numpy(), rtol=1e-10, atol=1e-12)


# -- the base class: groups, zero_grad, hooks -------------------------------------------


def test_add_param_group_and_duplicates_match_torch():
    def build(lib):
        a, b = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
        opt = lib.optim.NAdam([a], lr=0.1)
        opt.add_param_group({"params": b, "lr": 0.01, "betas": (0.5, 0.6)})
        return opt, a, b

    eo, ea, _ = build(ember)
    to, ta, _ = build(torch)
    assert eo.state_dict()["param_groups"] == to.state_dict()["param_groups"]
    t_err = _torch_error(lambda: to.add_param_group({"params": [ta]}))
    with pytest.raises(t_err[0]) as info:
        eo.add_param_group({"params": [ea]})
    assert str(info.value) == t_err[1]
    with pytest.warns(UserWarning, match="duplicate parameters"):
        eoptim.Rprop([ea, ea])


def test_zero_grad_set_to_none_and_zeros():
    p = ember.ones(3, requires_grad=True)
    opt = eoptim.RAdam([p])
    p.grad = ember.ones(3)
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g
    np.testing.assert_array_equal(np.asarray(g), np.zeros(3))
    opt.zero_grad()
    assert p.grad is None


def test_hooks_run_in_order_and_handles_remove():
    p = ember.ones(2, requires_grad=True)
    opt = eoptim.Adamax([p], lr=0.1)
    calls = []
    handles = [
        opt.register_step_pre_hook(lambda o, a, k: calls.append("pre")),
        opt.register_step_post_hook(lambda o, a, k: calls.append("post")),
        opt.register_state_dict_pre_hook(lambda o: calls.append("sd_pre")),
        opt.register_state_dict_post_hook(lambda o, sd: calls.append("sd_post")),
        opt.register_load_state_dict_pre_hook(lambda o, sd: calls.append("load_pre")),
        opt.register_load_state_dict_post_hook(lambda o: calls.append("load_post")),
    ]
    p.grad = ember.ones(2)
    opt.step()
    opt.load_state_dict(opt.state_dict())
    assert calls == ["pre", "post", "sd_pre", "sd_post", "load_pre", "load_post"]
    for h in handles:
        h.remove()
    opt.step()
    opt.load_state_dict(opt.state_dict())
    assert len(calls) == 6

    # a pre-hook may replace the step's arguments (here: the LBFGS closure)
    q = ember.tensor([3.0], requires_grad=True)
    lbfgs = eoptim.LBFGS([q], line_search_fn="strong_wolfe")

    def closure():
        lbfgs.zero_grad()
        loss = ((q - 2.0) ** 2).sum()
        loss.backward()
        return loss

    lbfgs.register_step_pre_hook(lambda o, args, kwargs: ((closure,), {}))
    lbfgs.step(None)
    np.testing.assert_allclose(np.asarray(q.detach()), [2.0], atol=1e-8)


def test_closure_returns_loss_for_every_optimizer():
    for name in NEW:
        p = ember.tensor([2.0], requires_grad=True)
        opt = getattr(eoptim, name)([p])

        def closure(opt=opt, p=p):
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert opt.step(closure).item() == 4.0
        assert p.item() < 2.0
