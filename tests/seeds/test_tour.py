"""``python -m ember.tour``: the autograd story runs, shows the tutorials' key results, and
every step shows what PyTorch 2.13 shows for the same code."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys

import numpy as np
import pytest
from replay import Draws, doublings, show

from ember import tour

KEY_LINES = [
    # leaves and the graph
    ">>> x = torch.ones(2, 2, requires_grad=True)",
    "(True, None, None)",
    "<AddBackward0 object at 0x...>",
    "((<AccumulateGrad object at 0x...>, 0), (None, 0))",
    "tensor(27., grad_fn=<MeanBackward0>)",
    # the 4.5 gradients
    ">>> out.backward()\n>>> x.grad\ntensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n",
    # the vector-Jacobian product: x.grad = 2**k * v (checked exactly below)
    ">>> x.grad / v\ntensor([2048., 2048., 2048.])\n",
    "RuntimeError: grad can be implicitly created only for scalar outputs",
    # retain_graph and accumulation
    "... w.grad\ntensor([4.])\n",
    "... w.grad\ntensor([8.])\n",
    "RuntimeError: Trying to backward through the graph a second time",
    # CopySlices
    "tensor([[ 4., 27.]], grad_fn=<CopySlices>)",
    "tensor([[ 8., 81.]])",
    "tensor([[ 12., 108.]])",
    # no_grad, detach, .data
    "(True, False, True)",
    "... x.grad\ntensor(2.)\n",
    "(False, True)",
    "(tensor([100.], requires_grad=True), tensor([200.]))",
    # autograd.grad and hooks
    "(tensor([1., 1., 1.]),)",
    "y's grad:\n tensor([1., 1., 1.])\n",
    # control flow
    ", tensor(True))\n",
]


def run_tour() -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        tour.main()
    return buf.getvalue()


@pytest.fixture(scope="module")
def output():
    return run_tour()


def test_vjp_is_2_to_the_k_times_v(output):
    """The doublings of manual_seed(0)'s first randn(3) decide k; x.grad is exactly 2**k v."""
    k = doublings(Draws(0).randn(3))
    v = np.array([0.1, 1.0, 0.0001], dtype=np.float32)
    assert f">>> x.grad\n{show(2.0**k * v)}\n" in output
    assert f">>> x.grad / v\n{show(np.full(3, 2.0**k))}\n" in output


@pytest.mark.parametrize("line", KEY_LINES, ids=lambda line: line.strip().splitlines()[-1][:50])
def test_key_line(output, line):
    assert line in output


def test_sections_in_order(output):
    titles = re.findall(r"^== \d+\. (.+?) =+$", output, re.M)
    assert titles == [title for title, _, _ in tour.SECTIONS + tour.EMBER_SECTIONS]


def test_only_the_intended_errors(output):
    errors = re.findall(r"^(\w+(?:Error|Exception)): ", output, re.M)
    assert errors == ["RuntimeError", "RuntimeError"]


def test_readable_and_deterministic(output):
    lines = output.splitlines()
    assert len(lines) < 260  # with ember's own tools (explain, anomaly, profiler) at the end
    assert max(map(len, lines)) <= tour.WIDTH
    assert "\x1b" not in output
    assert run_tour() == output


def test_steps_show_what_torch_shows():
    """Each step, run with real torch (its randn answering ember's draws), shows the same."""
    torch = pytest.importorskip("torch")
    import ember

    def ember_steps():
        ember.manual_seed(0)
        ns = {"torch": ember}
        return [tour.run_step(code, ns) for _, _, steps in tour.SECTIONS for code in steps]

    draws = [Draws(0)]
    originals = torch.randn, torch.manual_seed

    def randn(*size, requires_grad=False, **kwargs):
        values = draws[0].randn(*size, **kwargs)
        return torch.from_numpy(values.copy()).requires_grad_(requires_grad)

    def manual_seed(seed):
        draws[0] = Draws(seed)

    try:
        torch.randn, torch.manual_seed = randn, manual_seed
        ns = {"torch": torch}
        torch_steps = [tour.run_step(code, ns) for _, _, steps in tour.SECTIONS for code in steps]
    finally:
        torch.randn, torch.manual_seed = originals
    codes = [code for _, _, steps in tour.SECTIONS for code in steps]
    for code, ours, theirs in zip(codes, ember_steps(), torch_steps):
        assert ours == theirs, f"step:\n{code}\nember shows:\n{ours}\ntorch shows:\n{theirs}"


def test_runs_as_a_module():
    result = subprocess.run(
        [sys.executable, "-m", "ember.tour"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "tensor([[4.5000, 4.5000]," in result.stdout
