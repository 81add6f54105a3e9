"""ember.fx: torch.fx's program capture and transformation for ember modules.

``symbolic_trace`` records a module's ``forward`` as a ``Graph`` of ``Node``s (ember's
functions reach the tracer through ``__torch_function__``: nothing is patched while tracing);
a ``GraphModule`` runs (and trains) the graph through generated Python code;
``Interpreter`` and ``Transformer`` run or rewrite a graph node by node; ``replace_pattern``
rewrites every occurrence of a subgraph.

Example:
    >>> import ember
    >>> import ember.nn as nn
    >>> import ember.fx
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = nn.Linear(4, 4)
    ...     def forward(self, x):
    ...         return ember.relu(self.fc(x)) + x
    >>> gm = ember.fx.symbolic_trace(Net())
    >>> print(gm.code.strip())
    def forward(self, x):
        fc = self.fc(x)
        relu = ember.relu(fc);  fc = None
        add = relu + x;  relu = x = None
        return add
"""

from . import graph, graph_module, interpreter, node, passes, proxy, subgraph_rewriter
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = [
    "Graph",
    "GraphModule",
    "Interpreter",
    "Node",
    "PH",
    "Proxy",
    "Tracer",
    "Transformer",
    "graph",
    "graph_module",
    "interpreter",
    "map_arg",
    "node",
    "passes",
    "proxy",
    "replace_pattern",
    "subgraph_rewriter",
    "symbolic_trace",
    "wrap",
]
