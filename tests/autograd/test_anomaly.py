"""Anomaly mode: torch's warning with the forward traceback of the failing node."""

from __future__ import annotations

import warnings

import pytest

import ember as torch


def _backward_warnings(out):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError) as err:
            out.backward()
    return str(err.value), [str(w.message) for w in caught]


def test_nan_names_the_node_and_quotes_the_forward_line():
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = torch.autograd.detect_anomaly()
    with mode:
        y = torch.sqrt(x)
        out = (y * 0).sum()
        err, messages = _backward_warnings(out)
    assert err == "Function 'SqrtBackward0' returned nan values in its 0th output."
    [msg] = messages
    head, *stack = msg.split("\n")
    assert (
        head == "Error detected in SqrtBackward0. Traceback of forward call that caused the error:"
    )
    assert stack[-2].startswith('  File "') and __file__ in stack[-2]
    assert stack[-1] == "    y = torch.sqrt(x)"
    assert "traceback_" in y.grad_fn.metadata


def test_check_nan_false_lets_nan_through():
    x = torch.tensor([0.0], requires_grad=True)
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        (torch.sqrt(x) * 0).sum().backward()
    assert torch.isnan(x.grad).all()


def test_other_errors_in_backward_get_the_traceback_too():
    x = torch.ones(2, requires_grad=True)
    with torch.autograd.set_detect_anomaly(True):
        y = x.exp()
        y.add_(1)  # exp saved its result: backward must fail
        err, messages = _backward_warnings(y.sum())
    assert "modified by an inplace operation" in err
    assert messages[0].startswith("Error detected in ExpBackward0.")
    assert messages[0].endswith("    y = x.exp()")


def test_no_capture_when_off():
    x = torch.ones(2, requires_grad=True)
    assert not torch.autograd.is_anomaly_enabled()
    assert "traceback_" not in (x * 2).grad_fn.metadata
    from ember.autograd import recording

    assert recording._observe == []
