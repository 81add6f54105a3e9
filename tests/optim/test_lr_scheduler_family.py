"""Every torch.optim.lr_scheduler scheduler in ember against torch: 100-step lr (and
momentum) sequences, mid-run state-dict round trips, fractional epochs, warnings, errors."""

import copy
import math
import warnings

import pytest
import torch

import ember


class _Scale:
    """A callable object: LambdaLR/MultiplicativeLR save its ``__dict__``."""

    def __init__(self, base):
        self.base = base

    def __call__(self, epoch):
        return self.base ** (epoch % 7)


def _opt(lib, kind="sgd", lrs=(0.1, 0.02)):
    groups = [{"params": [lib.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs]
    if kind == "adam":
        return lib.optim.Adam(groups, lr=1.0)
    return lib.optim.SGD(groups, lr=1.0, momentum=0.9)


def _sched(lib, name, kwargs, opt):
    mod = lib.optim.lr_scheduler
    if name == "SequentialLR":
        subs = [
            mod.LinearLR(opt, start_factor=0.1, total_iters=10),
            mod.ExponentialLR(opt, gamma=0.97),
            mod.CosineAnnealingLR(opt, T_max=15, eta_min=0.001),
        ]
        return mod.SequentialLR(opt, subs, milestones=[10, 40])
    if name == "ChainedScheduler":
        subs = [
            mod.ConstantLR(opt, factor=0.5, total_iters=8),
            mod.ExponentialLR(opt, gamma=0.98),
            mod.MultiStepLR(opt, milestones=[30, 60], gamma=0.5),
        ]
        return mod.ChainedScheduler(subs, optimizer=kwargs.get("optimizer") and opt)
    kwargs = {
        k: (v() if k == "lr_lambda" and not isinstance(v, list) else v) for k, v in kwargs.items()
    }
    return getattr(mod, name)(opt, **kwargs)


SCHEDULERS = [
    ("LambdaLR", {"lr_lambda": lambda: _Scale(0.9)}),
    ("LambdaLR", {"lr_lambda": [lambda e: 1 / (1 + e), lambda e: 0.5 ** (e // 10)]}),
    ("MultiplicativeLR", {"lr_lambda": lambda: _Scale(0.99)}),
    ("MultiplicativeLR", {"lr_lambda": [lambda e: 0.97, lambda e: 1.0 if e % 5 else 0.5]}),
    ("StepLR", {"step_size": 7, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [10, 25, 25, 70], "gamma": 0.3}),
    ("ConstantLR", {}),
    ("ConstantLR", {"factor": 0.25, "total_iters": 30}),
    ("LinearLR", {}),
    ("LinearLR", {"start_factor": 0.05, "end_factor": 0.5, "total_iters": 60}),
    ("ExponentialLR", {"gamma": 0.95}),
    ("PolynomialLR", {}),
    ("PolynomialLR", {"total_iters": 80, "power": 2.5}),
    ("CosineAnnealingLR", {"T_max": 30, "eta_min": 1e-4}),
    ("CosineAnnealingWarmRestarts", {"T_0": 10}),
    ("CosineAnnealingWarmRestarts", {"T_0": 3, "T_mult": 2, "eta_min": 0.001}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 8}),
    (
        "CyclicLR",
        {
            "base_lr": [0.01, 0.001],
            "max_lr": 0.2,
            "step_size_up": 5,
            "step_size_down": 9,
            "mode": "triangular2",
        },
    ),
    (
        "CyclicLR",
        {
            "base_lr": 0.01,
            "max_lr": 0.1,
            "step_size_up": 6,
            "mode": "exp_range",
            "gamma": 0.97,
            "base_momentum": 0.7,
            "max_momentum": [0.95, 0.9],
        },
    ),
    (
        "CyclicLR",
        {
            "base_lr": 0.01,
            "max_lr": 0.1,
            "step_size_up": 4,
            "scale_fn": lambda x: 1 / (1 + 0.05 * x),
            "scale_mode": "iterations",
            "cycle_momentum": False,
        },
    ),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": 100}),
    (
        "OneCycleLR",
        {
            "max_lr": [0.5, 0.1],
            "epochs": 10,
            "steps_per_epoch": 10,
            "anneal_strategy": "linear",
            "pct_start": 0.25,
        },
    ),
    (
        "OneCycleLR",
        {
            "max_lr": 0.3,
            "total_steps": 100,
            "three_phase": True,
            "div_factor": 10.0,
            "final_div_factor": 100.0,
            "base_momentum": 0.8,
        },
    ),
    ("OneCycleLR", {"max_lr": 0.3, "total_steps": 120, "cycle_momentum": False}),
    ("SequentialLR", {}),
    ("ChainedScheduler", {}),
    ("ChainedScheduler", {"optimizer": True}),
]


def _ids(c):
    return c[0] + "-" + "-".join(f"{k}={v}" for k, v in c[1].items() if not callable(v))


def _snapshot(opt, sched):
    groups = opt.param_groups
    momentum = [g["betas"][0] if "betas" in g else g["momentum"] for g in groups]
    return list(sched.get_last_lr()), [g["lr"] for g in groups], momentum


def _sequence(lib, name, kwargs, kind, steps=100, restart_at=None):
    opt = _opt(lib, kind)
    sched = _sched(lib, name, kwargs, opt)
    seq = [_snapshot(opt, sched)]
    for i in range(1, steps + 1):
        opt.step()
        sched.step()
        seq.append(_snapshot(opt, sched))
        if i == restart_at:
            saved_opt = copy.deepcopy(opt.state_dict())
            saved_sched = copy.deepcopy(sched.state_dict())
            opt = _opt(lib, kind, lrs=(0.7, 0.3))
            sched = _sched(lib, name, kwargs, opt)
            opt.load_state_dict(saved_opt)
            sched.load_state_dict(saved_sched)
            assert _snapshot(opt, sched) == seq[-1]
    return seq, sched


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[_ids(c) for c in SCHEDULERS])
def test_100_step_sequence_matches_torch(name, kwargs, kind):
    e_seq, e_sched = _sequence(ember, name, kwargs, kind)
    t_seq, t_sched = _sequence(torch, name, kwargs, kind)
    assert e_seq == t_seq  # the same Python float arithmetic: exactly equal
    assert len({tuple(s[1]) for s in e_seq}) > 1  # the schedule does change the lr
    e_sd, t_sd = e_sched.state_dict(), t_sched.state_dict()
    assert sorted(e_sd) == sorted(t_sd)
    for key in ("last_epoch", "_step_count", "base_lrs", "_last_lr", "_milestones"):
        if key in t_sd:
            assert e_sd[key] == t_sd[key]


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[_ids(c) for c in SCHEDULERS])
def test_state_dict_round_trip_mid_run(name, kwargs):
    full, _ = _sequence(ember, name, kwargs, "sgd")
    resumed, _ = _sequence(ember, name, kwargs, "sgd", restart_at=50)
    assert resumed == full
    t_resumed, _ = _sequence(torch, name, kwargs, "sgd", restart_at=50)
    assert resumed == t_resumed


PLATEAU = [
    {},
    {"mode": "max", "factor": 0.5, "patience": 2},
    {"threshold_mode": "abs", "threshold": 0.05, "patience": 3, "cooldown": 4},
    {"mode": "max", "threshold_mode": "abs", "patience": 1, "min_lr": [1e-4, 0.005]},
    {"factor": 0.3, "patience": 0, "min_lr": 0.004, "eps": 1e-3},
]


def _metrics():
    """A fixed metric sequence with improvements, plateaus and noise."""
    values = []
    for i in range(100):
        base = 1.0 / (1 + i // 12)
        values.append(base + 0.01 * math.sin(1.7 * i) + (0.2 if i % 17 == 0 else 0.0))
    return values


def _plateau_sequence(lib, kwargs, restart_at=None):
    opt = _opt(lib)
    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
    seq = [list(sched.get_last_lr())]
    for i, metric in enumerate(_metrics(), start=1):
        opt.step()
        sched.step(metric if i % 2 else lib.tensor(metric))
        seq.append(list(sched.get_last_lr()) + [sched.num_bad_epochs, sched.cooldown_counter])
        if i == restart_at:
            saved_opt = copy.deepcopy(opt.state_dict())
            saved = copy.deepcopy(sched.state_dict())
            opt = _opt(lib)
            sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
            opt.load_state_dict(saved_opt)
            sched.load_state_dict(saved)
    return seq, sched


@pytest.mark.parametrize("kwargs", PLATEAU, ids=[str(k) for k in PLATEAU])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    e_seq, e_sched = _plateau_sequence(ember, kwargs)
    t_seq, t_sched = _plateau_sequence(torch, kwargs)
    assert e_seq == t_seq
    assert len({tuple(s[:2]) for s in e_seq}) > 2  # several reductions happened
    assert e_sched.state_dict() == t_sched.state_dict()
    assert _plateau_sequence(ember, kwargs, restart_at=40)[0] == e_seq


def test_cosine_warm_restarts_fractional_epochs_match_torch():
    def run(lib, T_mult):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=T_mult)
        out = []
        iters = 7
        for epoch in range(20):
            for i in range(iters):
                opt.step()
                sched.step(epoch + i / iters)
                out.append((list(sched.get_last_lr()), sched.T_cur, sched.T_i, sched.last_epoch))
        sched.step(2.5)  # going back in time restarts the first period
        out.append((list(sched.get_last_lr()), sched.T_cur, sched.T_i))
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for T_mult in (1, 2):
            assert run(ember, T_mult) == run(torch, T_mult)


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("StepLR", {"step_size": 3, "gamma": 0.5}),
        ("MultiStepLR", {"milestones": [2, 5], "gamma": 0.5}),
        ("ConstantLR", {"factor": 0.5, "total_iters": 4}),
        ("LinearLR", {"start_factor": 0.2, "total_iters": 6}),
        ("ExponentialLR", {"gamma": 0.9}),
        ("PolynomialLR", {"total_iters": 8, "power": 2.0}),
        ("CosineAnnealingLR", {"T_max": 5}),
        ("LambdaLR", {"lr_lambda": lambda: _Scale(0.8)}),
    ],
)
def test_step_with_epoch_uses_closed_form_and_warns_like_torch(name, kwargs):
    def run(lib):
        opt = _opt(lib)
        sched = _sched(lib, name, kwargs, opt)
        out = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for epoch in [1, 2, 5, 3, 9, 12]:
                opt.step()
                sched.step(epoch)
                out.append(list(sched.get_last_lr()))
        return out, [str(w.message) for w in caught]

    e_out, e_warn = run(ember)
    t_out, t_warn = run(torch)
    assert e_out == t_out
    assert e_warn == t_warn and len(e_warn) == 6


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in caught]


def test_scheduler_step_before_optimizer_step_warns_like_torch():
    def run(lib):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
        return _warnings_of(sched.step)

    e, t = run(ember), run(torch)
    assert e == t and len(e) == 1 and "before `optimizer.step()`" in e[0][1]

    def overridden(lib):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        opt.step = lambda: None  # replaced after the scheduler wrapped it
        return _warnings_of(sched.step)

    e, t = overridden(ember), overridden(torch)
    assert e == t and len(e) == 1 and "overridden" in e[0][1]

    def proper(lib):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10)
        opt.step()
        return _warnings_of(sched.step)

    assert proper(ember) == proper(torch) == []


def test_get_lr_outside_step_warns_like_torch():
    def run(lib):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=3)
        return _warnings_of(sched.get_lr)

    e, t = run(ember), run(torch)
    assert e == t and len(e) == 1


SCHED_ERRORS = [
    ("ConstantLR", {"factor": 1.5}),
    ("LinearLR", {"start_factor": 0.0}),
    ("LinearLR", {"end_factor": 2.0}),
    ("MultiplicativeLR", {"lr_lambda": 0.5}),
    ("MultiplicativeLR", {"lr_lambda": [lambda e: 1.0]}),
    ("LambdaLR", {"lr_lambda": [lambda e: 1.0] * 3}),
    ("ReduceLROnPlateau", {"factor": 1.0}),
    ("ReduceLROnPlateau", {"mode": "sideways"}),
    ("ReduceLROnPlateau", {"threshold_mode": "relative"}),
    ("ReduceLROnPlateau", {"min_lr": [0.1]}),
    ("CyclicLR", {"base_lr": 0.1, "max_lr": 1.0, "mode": "square"}),
    ("CyclicLR", {"base_lr": [0.1], "max_lr": 1.0}),
    ("CosineAnnealingWarmRestarts", {"T_0": 0}),
    ("CosineAnnealingWarmRestarts", {"T_0": 2, "T_mult": 0}),
    ("CosineAnnealingWarmRestarts", {"T_0": 2, "eta_min": "0"}),
    ("OneCycleLR", {"max_lr": 0.1}),
    ("OneCycleLR", {"max_lr": 0.1, "total_steps": 0}),
    ("OneCycleLR", {"max_lr": 0.1, "epochs": 0, "steps_per_epoch": 3}),
    ("OneCycleLR", {"max_lr": 0.1, "epochs": 2, "steps_per_epoch": -3}),
    ("OneCycleLR", {"max_lr": 0.1, "total_steps": 10, "pct_start": 1}),
    ("OneCycleLR", {"max_lr": 0.1, "total_steps": 10, "anneal_strategy": "exp"}),
    ("StepLR", {"step_size": 2, "last_epoch": 3}),
]


@pytest.mark.parametrize("name,kwargs", SCHED_ERRORS, ids=[_ids(c) for c in SCHED_ERRORS])
def test_scheduler_errors_match_torch(name, kwargs):
    def make(lib):
        return getattr(lib.optim.lr_scheduler, name)(_opt(lib), **kwargs)

    t_err = None
    try:
        make(torch)
    except Exception as exc:  # noqa: BLE001
        t_err = (type(exc), str(exc))
    assert t_err is not None
    with pytest.raises(t_err[0]) as info:
        make(ember)
    assert str(info.value) == t_err[1]


def test_composite_and_momentum_errors_match_torch():
    def errors(lib):
        mod = lib.optim.lr_scheduler
        opt, other = _opt(lib), _opt(lib)
        plateau = mod.ReduceLROnPlateau(opt)
        step = mod.StepLR(opt, 3)
        no_momentum = lib.optim.Rprop([lib.zeros(1, requires_grad=True)])
        attempts = [
            lambda: mod.SequentialLR(opt, [], milestones=[]),
            lambda: mod.SequentialLR(opt, [step, plateau], milestones=[3]),
            lambda: mod.SequentialLR(opt, [step], milestones=[3]),
            lambda: mod.SequentialLR(other, [step], milestones=[]),
            lambda: mod.ChainedScheduler([]),
            lambda: mod.ChainedScheduler([step, plateau]),
            lambda: mod.CyclicLR(no_momentum, 0.1, 1.0),
            lambda: mod.OneCycleLR(no_momentum, 0.1, total_steps=5),
            lambda: mod.StepLR(object(), 3),
        ]
        out = []
        for attempt in attempts:
            try:
                attempt()
                out.append(None)
            except Exception as exc:  # noqa: BLE001
                out.append((type(exc).__name__, str(exc).replace("ember", "torch")))
        return out

    e, t = errors(ember), errors(torch)
    # the optimizer repr inside one message differs (ember vs torch tensors): compare the rest
    assert [x[0] for x in e] == [x[0] for x in t]
    for (_, em), (_, tm) in zip(e, t):
        assert em.split(" has SGD (")[0] == tm.split(" has SGD (")[0]
    assert None not in e


def test_one_cycle_too_many_steps_raises_like_torch():
    def run(lib):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=3)
        for _ in range(3):
            opt.step()
            sched.step()
        with pytest.raises(ValueError) as info:
            sched.step()
        return str(info.value)

    assert (
        run(ember)
        == run(torch)
        == ("Tried to step 4 times. The specified number of total steps is 3")
    )


def test_public_names_match_torch():
    import torch.optim.lr_scheduler as tl

    import ember.optim.lr_scheduler as el

    assert el.__all__ == tl.__all__
    for name in tl.__all__:
        cls = getattr(el, name)
        assert cls.__module__ == "ember.optim.lr_scheduler"
        assert cls.__doc__ and "Example" in cls.__doc__
        if name != "LRScheduler":
            assert issubclass(cls, el.LRScheduler)
    assert issubclass(el._LRScheduler, el.LRScheduler)
