"""Finding a pattern graph in a graph (``torch.fx.passes.utils.matcher_utils``): the
matching ``fx.subgraph_rewriter`` uses.

A match maps each pattern node to a graph node with the same op and target whose inputs
match the pattern node's inputs, walking up from the pattern's returned values (its
*anchors*); pattern placeholders match anything. Matched nodes other than the returned
ones must not be used outside the match.

Example:
    >>> import ember
    >>> import ember.fx
    >>> from ember.fx.passes.utils.matcher_utils import SubgraphMatcher
    >>> def pattern(x):
    ...     return ember.relu(x) + 1
    >>> def f(a, b):
    ...     return ember.relu(a) + 1, ember.relu(b) * 2
    >>> matcher = SubgraphMatcher(ember.fx.symbolic_trace(pattern).graph)
    >>> [m.placeholder_nodes for m in matcher.match(ember.fx.symbolic_trace(f).graph)]
    [[a]]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...._tensor import Tensor
from ...graph import Graph
from ...node import Node

__all__ = ["InternalMatch", "SubgraphMatcher"]


@dataclass
class InternalMatch:
    """One place a pattern was found: ``nodes_map`` maps pattern nodes to graph nodes (a
    placeholder to the value it matched), ``placeholder_nodes`` and ``returning_nodes`` are
    the graph nodes standing for the pattern's inputs and returned values."""

    anchors: list
    nodes_map: dict = field(default_factory=dict)
    placeholder_nodes: list = field(default_factory=list)
    returning_nodes: list = field(default_factory=list)
    name_node_map: dict = field(default_factory=dict)

    def __copy__(self) -> InternalMatch:
        return InternalMatch(
            anchors=self.anchors,
            nodes_map=self.nodes_map.copy(),
            placeholder_nodes=self.placeholder_nodes.copy(),
            returning_nodes=self.returning_nodes.copy(),
        )


def _fetch_attr(module, target: str) -> Any:
    obj = module
    for atom in target.split("."):
        obj = getattr(obj, atom)
    return obj


def _validate_partition(partition: list) -> bool:
    """False if fusing ``partition``'s nodes into one would make a cycle: a path leaves the
    partition and comes back into it."""
    inside = set(partition)
    queue = [user for node in inside for user in node.users if user not in inside]
    visited: set = set()
    while queue:
        current = queue.pop()
        if current in inside:
            return False
        visited.add(current)
        queue.extend(u for u in current.users if u not in visited)
    return True


class SubgraphMatcher:
    """Finds ``pattern`` (a Graph) in graphs.

    ``match_output``: the pattern's output node must match the graph's; ``match_placeholder``:
    its placeholders must match placeholders (else they match any value);
    ``remove_overlapping_matches``: of overlapping matches, keep the first;
    ``ignore_literals``: constants in arguments match any constant.

    Example:
        >>> import ember
        >>> import ember.fx
        >>> from ember.fx.passes.utils.matcher_utils import SubgraphMatcher
        >>> g = ember.fx.symbolic_trace(lambda x: ember.neg(x).sum()).graph
        >>> p = ember.fx.symbolic_trace(lambda y: ember.neg(y).sum()).graph
        >>> len(SubgraphMatcher(p).match(g))
        1
    """

    def __init__(
        self,
        pattern: Graph,
        match_output: bool = False,
        match_placeholder: bool = False,
        remove_overlapping_matches: bool = True,
        ignore_literals: bool = False,
    ) -> None:
        self.pattern = pattern
        self.match_output = match_output
        self.match_placeholder = match_placeholder
        self.remove_overlapping_matches = remove_overlapping_matches
        self.ignore_literals = ignore_literals
        if len(pattern.nodes) == 0:
            raise ValueError("SubgraphMatcher cannot be initialized with an empty pattern")
        for node in pattern.nodes:
            if node.op != "output" and not node.is_impure() and len(node.users) == 0:
                raise AssertionError(
                    "SubgraphMatcher cannot be initialized with an pattern with dead code"
                )
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == "placeholder"]
        output_node = next(iter(reversed(pattern.nodes)))
        self.pattern_returning_nodes: list = output_node.all_input_nodes
        if match_output:
            self.pattern_anchors = [output_node]
        else:
            # the pattern's sinks: returned values used by nothing else
            self.pattern_anchors = [n for n in output_node.all_input_nodes if len(n.users) == 1]

    # -- comparing one node ------------------------------------------------------------------

    def _match_attributes(self, pn: Node, gn: Node) -> bool:
        # constant tensors match any tensor (their values are not compared, as in torch)
        pn_value = _fetch_attr(pn.graph.owning_module, pn.target)
        gn_value = _fetch_attr(gn.graph.owning_module, gn.target)
        if type(pn_value) is not type(gn_value):
            return False
        if isinstance(pn_value, Tensor):
            return True
        raise RuntimeError(f"Unsupported type {pn_value} when matching attributes")

    def _nodes_are_equal(self, pn: Node, gn: Node, node_name_match: str = "") -> bool:
        if not self.match_placeholder and pn.op == "placeholder":
            return True
        if node_name_match and node_name_match in gn.name:
            return True
        if pn.op != gn.op:
            return False
        if pn.op in ("placeholder", "output"):
            return True
        if pn.op == "get_attr":
            return self._match_attributes(pn, gn)
        return pn.target == gn.target

    def _match_literals(self, pn: Any, gn: Any, match: InternalMatch) -> bool:
        if isinstance(pn, Node):
            if pn.op != "placeholder":
                return False
            # a pattern input bound to a constant of the graph
            if pn in match.nodes_map:
                return match.nodes_map[pn] == gn
            match.nodes_map[pn] = gn
            return True
        if isinstance(gn, Node):
            return False
        return type(gn) is type(pn) and gn == pn

    def _match_nodes(self, pn: Node, gn: Node, match: InternalMatch, node_name_match="") -> bool:
        if pn in match.nodes_map:
            return match.nodes_map[pn] is gn
        if any(gn is v for v in match.nodes_map.values()):
            return False
        if not self._nodes_are_equal(pn, gn, node_name_match):
            return False
        saved = dict(match.nodes_map)
        match.nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True
        if len(pn.args) == len(gn.args) and list(pn.kwargs) == list(gn.kwargs):
            pn_args = list(pn.args) + list(pn.kwargs.values())
            gn_args = list(gn.args) + list(gn.kwargs.values())
            if self._match_args(pn_args, gn_args, match):
                return True
        match.nodes_map.clear()
        match.nodes_map.update(saved)
        return False

    def _match_args(self, args1, args2, match: InternalMatch) -> bool:
        if len(args1) != len(args2):
            return False
        for a1, a2 in zip(args1, args2):
            if isinstance(a1, Node) and isinstance(a2, Node):
                matched = self._match_nodes(a1, a2, match)
            elif isinstance(a1, (list, tuple)) and isinstance(a2, (list, tuple)):
                matched = self._match_args(a1, a2, match)
            else:
                matched = self._match_literals(a1, a2, match) or self.ignore_literals
            if not matched:
                return False
        return True

    # -- the matches ---------------------------------------------------------------------------

    def _is_contained(self, nodes_map: dict) -> bool:
        """Only the returned values of a match may be used outside it."""
        lookup = {gn: pn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        for gn, pn in lookup.items():
            if pn in self.pattern_returning_nodes:
                continue
            if any(user not in lookup for user in gn.users):
                return False
        return True

    def _remove_overlapping_matches(self, matches: list) -> list:
        kept: list = []
        taken: set = set()
        for match in matches:
            nodes = [gn for pn, gn in match.nodes_map.items() if pn.op not in _IO]
            if any(gn in taken for gn in nodes):
                continue
            kept.append(match)
            taken.update(nodes)
        return kept

    def match(self, graph: Graph, node_name_match: str = "") -> list:
        """Every match of the pattern in ``graph`` (see the module docstring), in the order
        of the graph's nodes of the first anchor; non-overlapping unless told otherwise.

        Example:
            >>> import ember
            >>> import ember.fx
            >>> from ember.fx.passes.utils.matcher_utils import SubgraphMatcher
            >>> g = ember.fx.symbolic_trace(lambda x: ember.neg(ember.neg(x))).graph
            >>> p = ember.fx.symbolic_trace(lambda y: ember.neg(y)).graph
            >>> [m.placeholder_nodes for m in SubgraphMatcher(p).match(g)]
            [[x], [neg]]
        """
        candidates = [
            (anchor, [n for n in graph.nodes if self._nodes_are_equal(anchor, n, node_name_match)])
            for anchor in self.pattern_anchors
        ]
        if not all(c for _, c in candidates):
            return []  # an anchor matches no node
        matches: list = []

        def backtrack(i: int, match: InternalMatch) -> None:
            if i == len(candidates):
                match.placeholder_nodes = [
                    match.nodes_map[pn] for pn in self.pattern_placeholder_nodes
                ]
                match.returning_nodes = [match.nodes_map[pn] for pn in self.pattern_returning_nodes]
                matches.append(match)
                return
            anchor, nodes = candidates[i]
            for node in nodes:
                attempt = InternalMatch(anchors=self.pattern_anchors)
                attempt.nodes_map = dict(match.nodes_map)
                if self._match_nodes(anchor, node, attempt, node_name_match):
                    backtrack(i + 1, attempt)

        if candidates:
            backtrack(0, InternalMatch(anchors=self.pattern_anchors))
        matches = [m for m in matches if self._is_contained(m.nodes_map)]
        matches = [
            m
            for m in matches
            if _validate_partition([gn for pn, gn in m.nodes_map.items() if pn.op not in _IO])
        ]
        if self.remove_overlapping_matches:
            matches = self._remove_overlapping_matches(matches)
        return matches


_IO = ("placeholder", "output")
