"""examples/gcn.py: the GCN learns from the graph (it beats the same network without it), and
the program, run under real torch by changing its imports, computes the same losses and
gradients as under ember."""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "gcn.py"
# The example's imports of ember: swapped for torch's, it runs under PyTorch (its docstring says).
TO_TORCH = (
    ("import ember as torch\n", "import torch\n"),
    ("import ember.nn.functional as F\n", "import torch.nn.functional as F\n"),
    ("from ember import nn\n", "from torch import nn\n"),
)


def _load_ember() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("gcn_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_torch() -> types.ModuleType:
    """The example's source with its ember imports replaced by torch's."""
    source = EXAMPLE.read_text()
    for old, new in TO_TORCH:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    module = types.ModuleType("gcn_example_torch")
    module.__file__ = str(EXAMPLE)
    exec(compile(source, str(EXAMPLE), "exec"), module.__dict__)
    return module


def test_help_lists_the_options(capsys):
    with pytest.raises(SystemExit) as done:
        _load_ember().main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for option in ("--nodes", "--epochs", "--seed", "--hidden", "--lr", "--no-graph", "--quiet"):
        assert option in out


def test_gcn_beats_the_no_graph_baseline(capsys):
    gcn = _load_ember()
    short = ["--nodes", "600", "--epochs", "60", "--seed", "0"]
    with_graph = gcn.main(short)
    out = capsys.readouterr().out
    assert "epoch  60" in out and "GCN: test accuracy" in out
    without = gcn.main([*short, "--no-graph", "--quiet"])
    out = capsys.readouterr().out
    assert out.startswith("MLP (A_hat = I): test accuracy") and out.count("\n") == 1
    # measured: GCN 81.4%, MLP 52.4% on these 307 test nodes
    assert with_graph["test_acc"] > 0.78
    assert without["test_acc"] < with_graph["test_acc"] - 0.2
    assert with_graph["final_loss"] < 1.5


def test_three_steps_match_torch():
    """Three Adam steps from the same weights and data, without dropout (the two libraries'
    random streams differ): the losses and the weights' gradients agree at every step."""
    torch = pytest.importorskip("torch")
    runs = {}
    for name, gcn in (("ember", _load_ember()), ("torch", _load_torch())):
        lib = gcn.torch
        assert lib is torch if name == "torch" else lib.__name__ == "ember"
        edges, features, labels = gcn.make_graph(300, seed=3)
        train_idx, _, _ = gcn.split(labels, seed=3)
        x = lib.from_numpy(features)
        x = x / x.sum(1, keepdim=True)
        adj = gcn.normalized_adjacency(edges, 300)
        assert adj.layout == lib.sparse_coo and adj.is_coalesced()
        model = gcn.GCN(gcn.FEATURES, 16, gcn.CLASSES, dropout=0.0)
        if name == "ember":
            weights = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
        model.load_state_dict({k: lib.from_numpy(v.copy()) for k, v in weights.items()})
        optimizer = lib.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
        steps = []
        for _ in range(3):
            loss = gcn.train_epoch(
                model, optimizer, x, adj, lib.from_numpy(labels), lib.from_numpy(train_idx)
            )
            grads = [c.linear.weight.grad.numpy().copy() for c in (model.conv1, model.conv2)]
            steps.append((loss, grads))
        runs[name] = steps
    for step, ((e_loss, e_grads), (t_loss, t_grads)) in enumerate(zip(*runs.values())):
        assert abs(e_loss - t_loss) < 1e-5, step
        for layer, (e, t) in enumerate(zip(e_grads, t_grads), 1):
            assert e.dtype == t.dtype == np.float32
            # the gradients are about 1e-3 (normalised inputs): atol is 1e-5 of their scale
            scale = np.abs(t).max()
            np.testing.assert_allclose(
                e, t, rtol=1e-5, atol=1e-5 * scale, err_msg=f"step {step} W{layer}"
            )
    assert runs["ember"][2][0] < runs["ember"][0][0]  # it learns
