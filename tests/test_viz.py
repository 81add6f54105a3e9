"""ember.viz.make_dot: torchviz's DOT text for the seed graphs (expected text made by
torchviz 0.0.3 on PyTorch, node ids renumbered in order of appearance)."""

from __future__ import annotations

import re
import shutil

import pytest

import ember as torch
from ember.viz import make_dot

SEED_001 = """digraph {
\tgraph [size="12,12"]
\tnode [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 shape=box style=filled]
\t0 [label="
 ()" fillcolor=darkolivegreen1]
\t1 [label=MeanBackward0]
\t2 -> 1
\t2 [label=MulBackward0]
\t3 -> 2
\t3 [label=MulBackward0]
\t4 -> 3
\t4 [label=AddBackward0]
\t5 -> 4
\t6 [label="x
 (2, 2)" fillcolor=lightblue]
\t6 -> 5
\t5 [label=AccumulateGrad]
\t4 -> 3
\t1 -> 0
}
"""

VIEW_OUTPUTS = """digraph {
\tgraph [size="12,12"]
\tnode [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 shape=box style=filled]
\t0 [label="
 (2, 2)" fillcolor=darkolivegreen1]
\t1 [label=AddBackward0]
\t2 -> 1
\t3 [label="
 (2, 2)" fillcolor=lightblue]
\t3 -> 2
\t2 [label=AccumulateGrad]
\t1 -> 0
\t4 [label="
 (2)" fillcolor=darkolivegreen1]
\t5 [label=SelectBackward0]
\t6 -> 5
\t6 [label=MulBackward0]
\t7 -> 6
\t7 [label=MulBackward0]
\t1 -> 7
\t1 -> 7
\t5 -> 4
\t8 [label="
 (2, 2)" fillcolor=darkolivegreen3]
\t6 -> 8
\t8 -> 4 [style=dotted]
}
"""


def _renumber(source: str) -> str:
    ids: dict = {}
    return re.sub(r"\b\d{6,}\b", lambda m: ids.setdefault(m.group(), str(len(ids))), source)


def _seed_001():
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    return x, y, z, z.mean()


def test_seed_001_graph_matches_torchviz():
    x, _, _, out = _seed_001()
    assert _renumber(make_dot(out, params={"x": x}).source) == SEED_001


def test_several_outputs_and_a_view_output_match_torchviz():
    _, y, z, _ = _seed_001()
    assert _renumber(make_dot((y, z[0])).source) == VIEW_OUTPUTS


def test_show_attrs_and_saved_tensors():
    x, _, _, out = _seed_001()
    src = make_dot(out, params={"x": x}, show_attrs=True, show_saved=True).source
    # y * y saves both operands: orange nodes named after the saved slot, with shapes.
    assert 'label="self\n (2, 2)" fillcolor=orange' in src
    assert 'label="other\n (2, 2)" fillcolor=orange' in src
    assert "self_sym_numel:      4" in src  # MeanBackward0's attribute table
    assert "[dir=none]" in src


def test_named_parameters_of_a_model_and_truncated_attributes():
    lin = torch.nn.Linear(3, 2)
    out = torch.relu(lin(torch.ones(4, 3))).sum()
    src = make_dot(
        out, params=dict(lin.named_parameters()), show_attrs=True, max_attr_chars=5
    ).source
    assert 'label="weight\n (2, 3)" fillcolor=lightblue' in src
    assert 'label="bias\n (2)" fillcolor=lightblue' in src
    assert "AddmmBackward0" in src and "TBackward0" in src and "ReluBackward0" in src


def test_deep_graph_does_not_recurse():
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    assert make_dot(y).source.count("MulBackward0") == 3000


def test_params_must_be_tensors():
    with pytest.raises(TypeError):
        make_dot(_seed_001()[3], params={"x": 1.0})


def test_render_png(tmp_path):
    assert shutil.which("dot"), "Graphviz's dot program: `make test` installs it (apt)"
    x, _, _, out = _seed_001()
    path = make_dot(out, params={"x": x}).render(tmp_path / "g", format="png")
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
