"""torch.utils._pytree: ember's gives torch's leaves, specs (and their printed form),
rebuilt trees and maps."""

from __future__ import annotations

import collections

import pytest

from ember.utils import _pytree as ours

torch = pytest.importorskip("torch")
theirs = pytest.importorskip("torch.utils._pytree")

Point = collections.namedtuple("Point", "x y")

TREES = [
    5,
    None,
    [],
    (1, 2.0, "a"),
    {"a": [1, (2, 3)], "b": None, "c": collections.OrderedDict(x=4, y=[5])},
    Point(1, [2, {"k": 3}]),
    collections.deque([1, (2,)]),
    collections.defaultdict(int, a=1, b=[2, 3]),
    [{"w": (1, 2)}, [[3]], ()],
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_and_unflatten_as_torch(tree):
    leaves, spec = ours.tree_flatten(tree)
    want_leaves, want_spec = theirs.tree_flatten(tree)
    assert leaves == want_leaves
    assert repr(spec) == repr(want_spec)
    assert (spec.num_leaves, spec.num_nodes) == (want_spec.num_leaves, want_spec.num_nodes)
    mapped = [("leaf", x) for x in leaves]
    assert ours.tree_unflatten(mapped, spec) == theirs.tree_unflatten(mapped, want_spec)
    assert ours.tree_structure(tree) == spec and ours.tree_leaves(tree) == leaves


def test_maps_as_torch():
    tree = {"a": [1, (2, 3.5)], "b": Point(4, "s")}
    other = {"a": [10, (20, 30)], "b": Point(40, "t")}
    for fn in (ours, theirs):
        assert fn.tree_map(lambda x, y: (x, y), tree, other) == ours.tree_map(
            lambda x, y: (x, y), tree, other
        )
    assert ours.tree_map_only(int, lambda x: -x, tree) == theirs.tree_map_only(
        int, lambda x: -x, tree
    )
    assert ours.tree_any(lambda x: x == "s", tree) and not ours.tree_all(
        lambda x: isinstance(x, int), tree
    )
    seen = []
    assert ours.tree_map_(seen.append, tree) is tree and seen == theirs.tree_leaves(tree)
    leaf_lists = ours.tree_leaves(tree, is_leaf=lambda x: isinstance(x, list))
    assert leaf_lists == theirs.tree_leaves(tree, is_leaf=lambda x: isinstance(x, list))


def test_a_registered_container_and_errors():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    ours.register_pytree_node(Pair, lambda p: ([p.a, p.b], "pair"), lambda xs, c: Pair(*xs))
    leaves, spec = ours.tree_flatten([Pair(1, (2, 3))])
    assert leaves == [1, 2, 3] and repr(spec).startswith("TreeSpec(list, None, [TreeSpec(Pair")
    rebuilt = ours.tree_unflatten([7, 8, 9], spec)[0]
    assert (rebuilt.a, rebuilt.b) == (7, (8, 9))
    with pytest.raises(ValueError, match="already registered"):
        ours.register_pytree_node(Pair, lambda p: ([], None), lambda xs, c: None)
    with pytest.raises(ValueError, match="has length 2 but the spec refers to a pytree"):
        ours.tree_unflatten([1, 2], spec)
    with pytest.raises(ValueError, match="Node arity mismatch"):
        ours.tree_map(lambda x, y: x, [1, 2], [1])
    import ember

    assert ember.utils._pytree is ours


def test_key_paths_match_torch():
    """``tree_flatten_with_path``, ``keystr``, ``tree_map_with_path`` and a type registered
    with ``flatten_with_keys_fn`` (as transformers registers its model outputs)."""
    import collections

    from ember.utils import _pytree as ep

    tp = pytest.importorskip("torch.utils._pytree")
    point = collections.namedtuple("point", "x y")
    tree = {"a": [1, (2, 3)], "b": point(4, {"c": 5}), "d": collections.OrderedDict(e=6)}
    for lib in (ep, tp):
        assert [lib.keystr(p) for p, _ in lib.tree_flatten_with_path(tree)[0]] == [
            "['a'][0]", "['a'][1][0]", "['a'][1][1]", "['b'].x", "['b'].y['c']", "['d']['e']"
        ]  # fmt: skip
    assert ep.tree_map_with_path(lambda p, x: ep.keystr(p), tree) == tp.tree_map_with_path(
        lambda p, x: tp.keystr(p), tree
    )

    class Output(dict):
        pass

    ep.register_pytree_node(
        Output,
        ep._dict_flatten,
        lambda values, keys: Output(zip(keys, values)),
        flatten_with_keys_fn=ep._dict_flatten_with_keys,
    )
    pairs = ep.tree_leaves_with_path(Output(loss=1, logits=[2, 3]))
    assert [(ep.keystr(p), x) for p, x in pairs] == [
        ("['loss']", 1), ("['logits'][0]", 2), ("['logits'][1]", 3)
    ]  # fmt: skip
