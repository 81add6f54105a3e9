"""Hooks on a leaf's AccumulateGrad node: pre- and post-hooks run as torch runs them, and
the node names itself as torch's C++ node does."""

from __future__ import annotations

import pytest

import ember

torch = pytest.importorskip("torch")


def _run(m):
    p = m.ones(2, requires_grad=True)
    node = p.view_as(p).grad_fn.next_functions[0][0]
    seen = []
    node.register_prehook(lambda grad_outputs: seen.append(("pre", grad_outputs[0].tolist())))
    node.register_hook(
        lambda grad_inputs, grad_outputs: seen.append(
            ("post", grad_inputs, grad_outputs[0].tolist(), p.grad.tolist())
        )
    )
    (p * 3).sum().backward()
    return node.name(), type(node).__name__, repr(node).split(" object")[0], seen


def test_accumulate_grad_hooks_and_name_match_torch():
    assert _run(ember) == _run(torch)
