"""Replacing every occurrence of a pattern in a traced graph (``torch.fx.subgraph_rewriter``).

Example:
    >>> import ember
    >>> import ember.fx
    >>> def f(x, w1, w2):
    ...     return x + ember.cat([w1, w2]).sum()
    >>> def pattern(a, b):
    ...     return ember.cat([a, b])
    >>> def replacement(a, b):
    ...     return ember.stack([a, b])
    >>> gm = ember.fx.symbolic_trace(f)
    >>> matches = ember.fx.subgraph_rewriter.replace_pattern(gm, pattern, replacement)
    >>> print(gm.code.strip())
    def forward(self, x, w1, w2):
        stack = ember.stack([w1, w2]);  w1 = w2 = None
        sum_1 = stack.sum();  stack = None
        add = x + sum_1;  x = sum_1 = None
        return add
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from .. import nn
from ._symbolic_trace import symbolic_trace
from .graph import Graph
from .graph_module import GraphModule
from .node import Node
from .passes.utils.matcher_utils import InternalMatch, SubgraphMatcher

__all__ = ["Match", "ReplacedPatterns", "replace_pattern", "replace_pattern_with_filters"]


class Match(NamedTuple):
    """Where a pattern was replaced: ``anchor``, the graph node the match was found from,
    and ``nodes_map``, pattern nodes to the graph nodes they matched."""

    anchor: Node
    nodes_map: dict


@dataclass
class ReplacedPatterns:
    """A ``Match`` and the nodes the replacement added (``replacements``)."""

    anchor: Node
    nodes_map: dict
    replacements: list


def _try_get_attr(module: nn.Module, target: str) -> Any:
    path, _, name = target.rpartition(".")
    try:
        owner = module.get_submodule(path)
    except AttributeError:
        return None
    return getattr(owner, name, None)


def _replace_attributes(gm: GraphModule, replacement: nn.Module) -> None:
    """Copy the submodules and attributes the replacement's nodes use into ``gm``."""
    gm.delete_all_unused_submodules()
    if isinstance(replacement, GraphModule):
        replacement.graph.lint()
    for node in gm.graph.nodes:
        if node.op not in ("call_module", "get_attr"):
            continue
        if _try_get_attr(gm, node.target) is not None:
            continue  # gm's own attribute wins
        value = _try_get_attr(replacement, node.target)
        if value is None:
            raise RuntimeError(
                'Attempted to create a "',
                node.op,
                '" node during subgraph rewriting '
                f"with target {node.target}, but "
                "the referenced attribute does not "
                "exist in the replacement GraphModule",
            )
        value = copy.deepcopy(value)
        if isinstance(value, nn.Module):
            gm.add_submodule(node.target, value)
        else:
            setattr(gm, node.target, value)
    gm.graph.lint()


def replace_pattern(
    gm: GraphModule,
    pattern: Callable | GraphModule,
    replacement: Callable | GraphModule,
) -> list:
    """Find every non-overlapping occurrence of ``pattern`` (a function, traced, or a
    GraphModule) in ``gm``'s graph and replace it with ``replacement`` (same rules); returns
    the ``Match``es. Matching follows data dependencies, not names: the pattern's parameters
    are wildcards bound to whatever values feed the match (each must be used in the
    pattern), and ``replacement`` takes the same parameters in the same order. Only the
    pattern's returned values may be used outside a match; overlapping matches keep the
    first found. ``gm`` is recompiled.

    Example:
        >>> import ember
        >>> import ember.fx
        >>> def f(x):
        ...     return ember.neg(x) + ember.neg(x * 2)
        >>> gm = ember.fx.symbolic_trace(f)
        >>> matches = ember.fx.replace_pattern(gm, lambda a: ember.neg(a), lambda a: a * -1)
        >>> len(matches), gm(ember.tensor([1.0])).tolist()
        (2, [-3.0])
    """
    return [
        Match(anchor=m.anchor, nodes_map=m.nodes_map)
        for m in _replace_pattern(gm, pattern, replacement)
    ]


def replace_pattern_with_filters(
    gm: GraphModule,
    pattern: Callable | Graph | GraphModule,
    replacement: Callable | Graph | GraphModule | None = None,
    match_filters: list | None = None,
    ignore_literals: bool = False,
    replacement_callback: Callable | None = None,
    node_name_match: str = "",
) -> list:
    """``replace_pattern`` with more control; returns ``ReplacedPatterns``.

    ``match_filters``: functions ``(match: InternalMatch, original_graph, pattern_graph) ->
    bool`` that must all accept a match; ``ignore_literals``: constants match any constant;
    ``replacement_callback(match, original_graph, pattern_graph) -> Graph``: a replacement
    per match (instead of ``replacement``); ``node_name_match``: a graph node whose name
    contains it matches any pattern node.

    Example:
        >>> import ember
        >>> import ember.fx
        >>> from ember.fx.subgraph_rewriter import replace_pattern_with_filters
        >>> gm = ember.fx.symbolic_trace(lambda x: ember.relu(x) + ember.relu(x + 1))
        >>> first_only = lambda m, g, p: m.placeholder_nodes[0].op == "placeholder"
        >>> done = replace_pattern_with_filters(
        ...     gm, lambda a: ember.relu(a), lambda a: ember.sigmoid(a), [first_only]
        ... )
        >>> [n.name for n in gm.graph.nodes]
        ['x', 'add', 'relu_1', 'sigmoid', 'add_1', 'output']
    """
    return _replace_pattern(
        gm,
        pattern,
        replacement,
        match_filters,
        ignore_literals,
        replacement_callback,
        node_name_match,
    )


def _graph_of(obj: Callable | Graph | GraphModule) -> Graph:
    if isinstance(obj, GraphModule):
        return obj.graph
    if isinstance(obj, Graph):
        return obj
    return symbolic_trace(obj).graph


def _replace_pattern(
    gm: GraphModule,
    pattern: Callable | Graph | GraphModule,
    replacement: Callable | Graph | GraphModule | None = None,
    match_filters: list | None = None,
    ignore_literals: bool = False,
    replacement_callback: Callable | None = None,
    node_name_match: str = "",
) -> list:
    original_graph: Graph = gm.graph
    pattern_graph = _graph_of(pattern)
    matcher = SubgraphMatcher(
        pattern_graph,
        match_output=False,
        match_placeholder=False,
        remove_overlapping_matches=True,
        ignore_literals=ignore_literals,
    )
    matches: list[InternalMatch] = matcher.match(original_graph, node_name_match=node_name_match)
    matches = [
        m for m in matches if all(f(m, original_graph, pattern_graph) for f in match_filters or [])
    ]
    if replacement is not None:
        common_replacement = _graph_of(replacement)
    elif replacement_callback is None:
        raise AssertionError(
            "Must provide either a replacement GraphModule or a replacement callback"
        )
    else:
        common_replacement = None

    # a returned node an earlier replacement removed -> the node that replaced it
    changed: dict = {}
    done: list = []
    for match in matches:
        if replacement_callback is not None:
            replacement_graph = replacement_callback(match, original_graph, pattern_graph)
        else:
            replacement_graph = common_replacement
        placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
        if len(match.placeholder_nodes) != len(placeholders):
            raise AssertionError(
                f"Placeholder count mismatch: {len(match.placeholder_nodes)} vs {len(placeholders)}"
            )
        val_map: dict = {}
        for rn, gn in zip(placeholders, match.placeholder_nodes):
            if isinstance(gn, Node):
                val_map[rn] = changed.get(gn, gn)
                if val_map[rn] is not gn:  # the match's input was replaced meanwhile
                    i = match.placeholder_nodes.index(gn)
                    match.placeholder_nodes[i] = val_map[rn]
                    for pn, mapped in match.nodes_map.items():
                        if mapped is gn:
                            match.nodes_map[pn] = val_map[rn]
                            break
            else:
                val_map[rn] = gn

        # the replacement goes before the first user of the match's results (or, unused,
        # after the last of them)
        users: set = set()
        for n in match.returning_nodes:
            users.update(n.users)
        insert_point = next((n for n in original_graph.nodes if n in users), None)
        if insert_point is None:
            following = None
            for n in reversed(original_graph.nodes):
                if n in match.returning_nodes:
                    insert_point = following
                    break
                following = n
        if insert_point is None:
            raise AssertionError("The insert point can't be None")
        with original_graph.inserting_before(insert_point):
            copied = original_graph.graph_copy(replacement_graph, val_map)
        if isinstance(copied, Node):
            copied = (copied,)
        added = [v for v in val_map.values() if v not in match.placeholder_nodes]
        if len(match.returning_nodes) != len(copied):
            raise AssertionError(
                f"Returning nodes count mismatch: {len(match.returning_nodes)} vs {len(copied)}"
            )
        for gn, new in zip(match.returning_nodes, copied):
            gn.replace_all_uses_with(new)
            changed[gn] = new
        for pn in reversed(pattern_graph.nodes):
            if pn.op not in ("placeholder", "output"):
                original_graph.erase_node(match.nodes_map[pn])
        done.append(
            ReplacedPatterns(anchor=match.anchors[0], nodes_map=match.nodes_map, replacements=added)
        )
    gm.recompile()
    if isinstance(replacement, nn.Module):
        _replace_attributes(gm, replacement)
    return done
