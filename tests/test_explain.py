"""ember.autograd.explain: the backward pass, node by node, without touching .grad."""

from __future__ import annotations

import io

import pytest

import ember as torch
from ember.autograd.explain import explain, explain_lines, rule_lines, rule_text

SEED_001 = """\
backward of tensor(27., grad_fn=<MeanBackward0>)
start: grad = tensor(1.)

[1] MeanBackward0
    grad      = tensor(1.)  (shape [], float32)
    rule      : grad_self = _expand(grad / self_sym_numel, self_sym_sizes)
    grad_self = tensor([[0.2500, 0.2500],
                        [0.2500, 0.2500]]) -> MulBackward0
[2] MulBackward0
    grad       = tensor([[0.2500, 0.2500],
                         [0.2500, 0.2500]])  (shape [2, 2], float32)
    rule       : grad_self = grad * other.conj()
                 grad_other = grad * self.conj()
    grad_self  = tensor([[0.7500, 0.7500],
                         [0.7500, 0.7500]]) -> MulBackward0
[3] MulBackward0
    grad       = tensor([[0.7500, 0.7500],
                         [0.7500, 0.7500]])  (shape [2, 2], float32)
    rule       : grad_self = grad * other.conj()
                 grad_other = grad * self.conj()
    grad_self  = tensor([[2.2500, 2.2500],
                         [2.2500, 2.2500]]) -> AddBackward0
    grad_other = tensor([[2.2500, 2.2500],
                         [2.2500, 2.2500]]) -> AddBackward0
[4] AddBackward0
    grad       = tensor([[4.5000, 4.5000],
                         [4.5000, 4.5000]])  (shape [2, 2], float32)
    rule       : grad_self = grad
                 grad_other = grad if alpha == 1 else grad * alpha
    grad_self  = tensor([[4.5000, 4.5000],
                         [4.5000, 4.5000]]) -> x (AccumulateGrad)
[5] AccumulateGrad
    x.grad += tensor([[4.5000, 4.5000],
                      [4.5000, 4.5000]])

x.grad += tensor([[4.5000, 4.5000],
                  [4.5000, 4.5000]])
"""


def _seed_001():
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    return x, z.mean()


def test_seed_001_derivation_line_by_line():
    # out = mean(z), z = 3 (x + 2)^2: 1/4 -> 3/4 -> 9/4 twice -> 4.5 per element.
    x, out = _seed_001()
    buf = io.StringIO()
    explain(out, inputs={"x": x}, file=buf)
    assert buf.getvalue().splitlines() == SEED_001.splitlines()


def test_explain_changes_no_grad_and_keeps_the_graph():
    x, out = _seed_001()
    x.grad = torch.zeros(2, 2)
    explain_lines(out, inputs={"x": x})
    assert x.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    out.backward()  # the graph is intact
    assert x.grad.tolist() == [[4.5, 4.5], [4.5, 4.5]]


def test_small_mlp_matches_backward():
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU(), torch.nn.Linear(2, 1))
    loss = mlp(torch.ones(2, 3)).sum()
    params = dict(mlp.named_parameters())
    lines = explain_lines(loss, inputs=params)
    names = [ln.split("] ")[1] for ln in lines if ln.startswith("[")]
    assert names == [
        "SumBackward0",
        "AddmmBackward0",
        "AccumulateGrad",
        "ReluBackward0",
        "AddmmBackward0",
        "AccumulateGrad",
        "TBackward0",
        "AccumulateGrad",
        "TBackward0",
        "AccumulateGrad",
    ]
    assert "    rule      : grad_self = grad * (result > 0)" in lines
    assert "    rule      : grad_self = _scale(grad, beta)" in lines
    assert "                grad_mat1 = _scale(grad @ _cj(mat2).mT, alpha)" in lines
    summary = lines[lines.index("", 3) + 1 :]
    assert [s.split(".grad")[0] for s in summary if ".grad +=" in s] == [
        "2.bias",
        "0.bias",
        "0.weight",
        "2.weight",
    ]
    loss.backward()
    assert f"2.bias.grad += {params['2.bias'].grad!r}" in summary
    assert summary[-1] == f"2.weight.grad += {params['2.weight'].grad!r}"


def test_rule_text():
    assert rule_text(lambda g, other: g * other) == "grad * other"
    assert rule_text(lambda grad, self: (grad, self)[0]) == "(grad, self)[0]"
    x = torch.ones(2, requires_grad=True)
    assert rule_lines((x * x).grad_fn) == [
        "grad_self = grad * other.conj()",
        "grad_other = grad * self.conj()",
    ]
    assert rule_lines(x.exp().grad_fn)[0].startswith("grad_self = ")


def test_errors():
    with pytest.raises(RuntimeError, match="does not require grad"):
        explain_lines(torch.ones(2))
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="scalar outputs"):
        explain_lines(x * 2)
    out = (x * x).sum()
    out.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        explain_lines(out)


def test_explicit_grad_output():
    x = torch.ones(2, requires_grad=True)
    lines = explain_lines(x * 3, inputs=[x], grad_output=torch.tensor([1.0, 2.0]))
    assert lines[-1] == "input0.grad += tensor([3., 6.])"
