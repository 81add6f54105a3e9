"""ember.optim.lr_scheduler against torch.optim.lr_scheduler: identical lr sequences."""

import warnings

import pytest
import torch

import ember
import ember.optim as eoptim


def _opt(lib, optim_mod, lrs=(0.1, 0.02)):
    groups = [{"params": [lib.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs]
    return optim_mod.SGD(groups, lr=1.0, momentum=0.9)


SCHEDULERS = [
    ("StepLR", {"step_size": 3}),
    ("StepLR", {"step_size": 4, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [2, 5, 5, 11], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 7}),
    ("CosineAnnealingLR", {"T_max": 5, "eta_min": 0.001}),
    ("LambdaLR", {"lr_lambda": lambda epoch: 0.95**epoch}),
    ("LambdaLR", {"lr_lambda": [lambda e: 1 / (1 + e), lambda e: e // 3 + 1]}),
]


def _ids(c):
    return c[0] + "-" + "-".join(f"{k}" for k in c[1])


def _sequence(lib, optim_mod, name, kwargs, epochs=30, epoch_arg=False):
    opt = _opt(lib, optim_mod)
    sched = getattr(optim_mod.lr_scheduler, name)(opt, **kwargs)
    seq = [list(sched.get_last_lr())]
    group_lrs = [[g["lr"] for g in opt.param_groups]]
    for epoch in range(1, epochs + 1):
        opt.step()
        if epoch_arg:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sched.step(epoch)
        else:
            sched.step()
        seq.append(list(sched.get_last_lr()))
        group_lrs.append([g["lr"] for g in opt.param_groups])
    return seq, group_lrs, sched


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[_ids(c) for c in SCHEDULERS])
def test_lr_sequence_matches_torch(name, kwargs):
    e_seq, e_groups, e_sched = _sequence(ember, eoptim, name, kwargs)
    t_seq, t_groups, t_sched = _sequence(torch, torch.optim, name, kwargs)
    assert e_seq == t_seq  # same Python float arithmetic: exactly equal
    assert e_groups == t_groups
    assert e_seq == e_groups
    e_sd, t_sd = e_sched.state_dict(), t_sched.state_dict()
    assert set(e_sd) == set(t_sd)
    for key in t_sd:
        if key != "lr_lambdas":
            assert e_sd[key] == pytest.approx(t_sd[key]), key


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[_ids(c) for c in SCHEDULERS])
def test_closed_form_with_epoch_argument_matches_torch(name, kwargs):
    e_seq, _, _ = _sequence(ember, eoptim, name, kwargs, epochs=12, epoch_arg=True)
    t_seq, _, _ = _sequence(torch, torch.optim, name, kwargs, epochs=12, epoch_arg=True)
    assert e_seq == t_seq  # same Python float arithmetic: exactly equal


def test_state_dict_round_trip_resumes_schedule():
    opt = _opt(ember, eoptim)
    sched = eoptim.lr_scheduler.CosineAnnealingLR(opt, T_max=6)
    for _ in range(4):
        opt.step()
        sched.step()
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 4

    opt2 = _opt(ember, eoptim)
    opt2.load_state_dict(opt.state_dict())
    sched2 = eoptim.lr_scheduler.CosineAnnealingLR(opt2, T_max=6)
    sched2.load_state_dict(sd)
    for _ in range(5):
        opt.step()
        sched.step()
        opt2.step()
        sched2.step()
        assert sched2.get_last_lr() == sched.get_last_lr()


def test_lambda_state_dict_saves_callable_objects_only():
    class Factor:
        def __init__(self):
            self.scale = 0.5

        def __call__(self, epoch):
            return self.scale**epoch

    opt = _opt(ember, eoptim)
    sched = eoptim.lr_scheduler.LambdaLR(opt, [Factor(), lambda e: 1.0])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [{"scale": 0.5}, None]
    sd["lr_lambdas"][0]["scale"] = 0.25
    sched.load_state_dict(sd)
    assert sched.lr_lambdas[0].scale == 0.25
    assert "lr_lambdas" in sd


def test_errors_and_warnings_match_torch():
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        eoptim.lr_scheduler.StepLR([], 3)
    opt = _opt(ember, eoptim)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        eoptim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0])
    with pytest.raises(KeyError, match="initial_lr"):
        eoptim.lr_scheduler.StepLR(opt, 3, last_epoch=5)
    sched = eoptim.lr_scheduler.StepLR(opt, 3)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()


def test_no_warning_when_used_in_order():
    opt = _opt(ember, eoptim)
    sched = eoptim.lr_scheduler.ExponentialLR(opt, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            opt.step()
            sched.step()
    assert sched.get_last_lr() == [0.1 * 0.125, 0.02 * 0.125]
    assert opt.param_groups[0]["initial_lr"] == 0.1
