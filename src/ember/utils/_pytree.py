"""``torch.utils._pytree``: nested containers (tuples, lists, dicts, named tuples, ordered
and default dicts, deques, and the types registered here) flattened to a list of leaves and
a ``TreeSpec`` that rebuilds them, as libraries built on torch use it.

Example:
    >>> from ember.utils import _pytree as pytree
    >>> leaves, spec = pytree.tree_flatten({"a": [1, (2, 3)], "b": 4})
    >>> leaves
    [1, 2, 3, 4]
    >>> pytree.tree_unflatten([x * 10 for x in leaves], spec)
    {'a': [10, (20, 30)], 'b': 40}
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = [
    "GetAttrKey",
    "KeyEntry",
    "LeafSpec",
    "MappingKey",
    "SequenceKey",
    "keystr",
    "tree_flatten_with_path",
    "tree_leaves_with_path",
    "tree_map_with_path",
    "SUPPORTED_NODES",
    "TreeSpec",
    "is_namedtuple",
    "is_namedtuple_class",
    "is_namedtuple_instance",
    "register_pytree_node",
    "tree_all",
    "tree_all_only",
    "tree_any",
    "tree_any_only",
    "tree_flatten",
    "tree_is_leaf",
    "tree_iter",
    "tree_leaves",
    "tree_map",
    "tree_map_",
    "tree_map_only",
    "tree_map_only_",
    "tree_structure",
    "tree_unflatten",
    "treespec_dict",
    "treespec_leaf",
    "treespec_tuple",
]

PyTree = Any
Context = Any


class NodeDef(NamedTuple):
    """How a container type splits into (children, context) and is rebuilt."""

    type: type
    flatten_fn: Callable
    unflatten_fn: Callable
    flatten_with_keys_fn: Callable | None = None  # obj -> ([(key, child)...], context)


SUPPORTED_NODES: dict = {}


def register_pytree_node(
    cls: type,
    flatten_fn: Callable,
    unflatten_fn: Callable,
    *,
    serialized_type_name: str | None = None,
    to_dumpable_context: Callable | None = None,
    from_dumpable_context: Callable | None = None,
    flatten_with_keys_fn: Callable | None = None,
) -> None:
    """Make ``cls`` a container: ``flatten_fn(obj) -> (children, context)`` and
    ``unflatten_fn(children, context) -> obj``.

    Example:
        >>> from ember.utils import _pytree as pytree
        >>> class Pair:
        ...     def __init__(self, a, b):
        ...         self.a, self.b = a, b
        >>> pytree.register_pytree_node(
        ...     Pair, lambda p: ([p.a, p.b], None), lambda xs, _: Pair(*xs))
        >>> pytree.tree_leaves(Pair(1, [2, 3]))
        [1, 2, 3]
    """
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def is_namedtuple_class(cls) -> bool:
    """Is ``cls`` a named tuple class (``collections.namedtuple`` or ``typing.NamedTuple``)?"""
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def is_namedtuple_instance(obj) -> bool:
    return is_namedtuple_class(type(obj))


is_namedtuple = is_namedtuple_instance


def _node_type(tree) -> type | None:
    kind = type(tree)
    if kind in SUPPORTED_NODES:
        return kind
    if is_namedtuple_class(kind):
        return collections.namedtuple  # torch's marker for every named tuple class
    return None


def tree_is_leaf(tree: PyTree, is_leaf: Callable | None = None) -> bool:
    """Is ``tree`` a leaf (not a registered container, or one ``is_leaf`` says is)?"""
    return (is_leaf is not None and is_leaf(tree)) or _node_type(tree) is None


@dataclass(eq=False)
class TreeSpec:
    """The structure of a pytree: its container ``type``, the ``context`` that rebuilds it
    (dict keys...) and one spec per child."""

    type: Any
    context: Context
    children_specs: list

    def __post_init__(self) -> None:
        self.num_children = len(self.children_specs)
        self.num_leaves = sum(c.num_leaves for c in self.children_specs)
        self.num_nodes = 1 + sum(c.num_nodes for c in self.children_specs)

    def is_leaf(self) -> bool:
        return False

    def children(self) -> list:
        return list(self.children_specs)

    def child(self, index: int) -> TreeSpec:
        return self.children_specs[index]

    def __repr__(self, indent: int = 0) -> str:
        # torch's layout: the first child on the line, the others each on a line of its own
        children = ""
        if self.children_specs:
            indent += 2
            children = self.children_specs[0].__repr__(indent)
            children += "," if len(self.children_specs) > 1 else ""
            children += ",".join(
                "\n" + " " * indent + c.__repr__(indent) for c in self.children_specs[1:]
            )
        return f"TreeSpec({self.type.__name__}, {self.context}, [{children}])"

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if type(other) is not type(self):
            return NotImplemented
        return (
            self.type == other.type
            and self.context == other.context
            and self.children_specs == other.children_specs
        )

    __hash__ = None  # type: ignore[assignment]

    def flatten_up_to(self, tree: PyTree) -> list:
        """The subtrees of ``tree`` at this spec's leaves."""
        out: list = []
        _flatten_up_to(self, tree, out)
        return out

    def unflatten(self, leaves: Iterable) -> PyTree:
        return tree_unflatten(leaves, self)


class LeafSpec(TreeSpec):
    """The spec of a leaf (printed ``*``)."""

    def __init__(self) -> None:
        super().__init__(None, None, [])
        self.num_leaves, self.num_nodes = 1, 1

    def is_leaf(self) -> bool:
        return True

    def __repr__(self, indent: int = 0) -> str:
        return "*"

    def __eq__(self, other) -> bool:
        return isinstance(other, LeafSpec)

    __hash__ = None  # type: ignore[assignment]


_LEAF = LeafSpec()


def treespec_leaf() -> LeafSpec:
    return _LEAF


def treespec_tuple(iterable: Iterable = ()) -> TreeSpec:
    return TreeSpec(tuple, None, list(iterable))


def treespec_dict(mapping: dict | None = None, **kwargs) -> TreeSpec:
    items = dict(mapping or {}, **kwargs)
    return TreeSpec(dict, list(items), list(items.values()))


def _split(tree, node: type):
    if node is collections.namedtuple:
        return list(tree), type(tree)
    return SUPPORTED_NODES[node].flatten_fn(tree)


def _build(node: type, children: list, context):
    if node is collections.namedtuple:
        return context(*children)
    return SUPPORTED_NODES[node].unflatten_fn(children, context)


def _flatten(tree, leaves: list, is_leaf) -> TreeSpec:
    node = None if (is_leaf is not None and is_leaf(tree)) else _node_type(tree)
    if node is None:
        leaves.append(tree)
        return _LEAF
    children, context = _split(tree, node)
    return TreeSpec(node, context, [_flatten(c, leaves, is_leaf) for c in children])


def tree_flatten(tree: PyTree, is_leaf: Callable | None = None) -> tuple:
    """``(leaves, spec)``: the leaves left to right and the structure that rebuilds the
    tree from them (``tree_unflatten``)."""
    leaves: list = []
    spec = _flatten(tree, leaves, is_leaf)
    return leaves, spec


def tree_unflatten(leaves: Iterable, treespec: TreeSpec) -> PyTree:
    """The tree of ``treespec`` with ``leaves`` in its leaves' places."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(
            f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of "
            f"TreeSpec but got item of type {type(treespec)}."
        )
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(
            f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
            f"refers to a pytree that holds {treespec.num_leaves} items ({treespec})."
        )
    it = iter(leaves)

    def build(spec: TreeSpec):
        if spec.is_leaf():
            return next(it)
        return _build(spec.type, [build(c) for c in spec.children_specs], spec.context)

    return build(treespec)


def _flatten_up_to(spec: TreeSpec, tree, out: list) -> None:
    if spec.is_leaf():
        out.append(tree)
        return
    node = _node_type(tree)
    if node != spec.type:
        raise ValueError(f"Node type mismatch; expected {spec.type!r}, but got {type(tree)!r}.")
    children, context = _split(tree, node)
    if len(children) != spec.num_children:
        raise ValueError(
            f"Node arity mismatch; expected {spec.num_children}, but got {len(children)}."
        )
    if context != spec.context:
        raise ValueError(f"Node context mismatch for custom node type {spec.type!r}.")
    for c, s in zip(children, spec.children_specs):
        _flatten_up_to(s, c, out)


def tree_leaves(tree: PyTree, is_leaf: Callable | None = None) -> list:
    """The leaves of ``tree``, left to right."""
    return tree_flatten(tree, is_leaf)[0]


def tree_iter(tree: PyTree, is_leaf: Callable | None = None):
    """An iterator over the leaves of ``tree``."""
    return iter(tree_leaves(tree, is_leaf))


def tree_structure(tree: PyTree, is_leaf: Callable | None = None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable, tree: PyTree, *rests: PyTree, is_leaf: Callable | None = None):
    """The tree of ``func`` applied to each leaf (and the leaves at the same places in
    ``rests``, which have ``tree``'s structure).

    Example:
        >>> from ember.utils import _pytree as pytree
        >>> pytree.tree_map(lambda x, y: x + y, (1, [2]), (10, [20]))
        (11, [22])
    """
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(func: Callable, tree: PyTree, *rests: PyTree, is_leaf: Callable | None = None):
    """``func`` on each leaf for its effect; returns ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _only(types_or_pred, func: Callable) -> Callable:
    if isinstance(types_or_pred, (type, tuple)):
        pred = lambda x: isinstance(x, types_or_pred)  # noqa: E731
    else:
        pred = types_or_pred
    return lambda x: func(x) if pred(x) else x


def tree_map_only(types_or_pred, func: Callable, tree: PyTree, is_leaf=None):
    """``tree_map`` on the leaves of the given type(s) (or that a predicate accepts)."""
    return tree_map(_only(types_or_pred, func), tree, is_leaf=is_leaf)


def tree_map_only_(types_or_pred, func: Callable, tree: PyTree, is_leaf=None):
    return tree_map_(_only(types_or_pred, func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable, tree: PyTree, is_leaf=None) -> bool:
    return all(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_any(pred: Callable, tree: PyTree, is_leaf=None) -> bool:
    return any(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_all_only(types, pred: Callable, tree: PyTree, is_leaf=None) -> bool:
    return all(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, types))


def tree_any_only(types, pred: Callable, tree: PyTree, is_leaf=None) -> bool:
    return any(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, types))


def _dict_flatten(d: dict):
    return list(d.values()), list(d.keys())


def _dict_unflatten(values: list, keys: list) -> dict:
    return dict(zip(keys, values))


# -- key paths: where each leaf sits (torch's ``tree_flatten_with_path``) ---------------------


@dataclass(frozen=True)
class SequenceKey:
    """A position in a list or tuple: prints as ``[0]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclass(frozen=True)
class MappingKey:
    """A key of a dict: prints as ``['a']``."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclass(frozen=True)
class GetAttrKey:
    """An attribute (a named tuple's field): prints as ``.name``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


KeyEntry = Any
KeyPath = tuple


def keystr(kp: KeyPath) -> str:
    """A key path as text, e.g. ``['a'][1]``.

    Example:
        >>> from ember.utils import _pytree as pytree
        >>> [pytree.keystr(p) for p, _ in pytree.tree_flatten_with_path({"a": [1, 2]})[0]]
        ["['a'][0]", "['a'][1]"]
    """
    return "".join(str(k) for k in kp)


def _dict_flatten_with_keys(d: dict):
    values, context = _dict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context, values)], context


def _seq_flatten_with_keys(flatten_fn: Callable) -> Callable:
    def flatten_with_keys(obj):
        children, context = flatten_fn(obj)
        return [(SequenceKey(i), c) for i, c in enumerate(children)], context

    return flatten_with_keys


def _keyed_children(tree, node: type) -> tuple:
    """``([(key, child)...], context)`` for one container."""
    if node is collections.namedtuple:
        return [(GetAttrKey(f), getattr(tree, f)) for f in tree._fields], type(tree)
    nodedef = SUPPORTED_NODES[node]
    if nodedef.flatten_with_keys_fn is None:
        raise ValueError(
            f"Did not find a flatten_with_keys_fn for type: {node}. Please pass a "
            "flatten_with_keys_fn argument to register_pytree_node."
        )
    return nodedef.flatten_with_keys_fn(tree)


def _flatten_with_path(tree, path: tuple, out: list, is_leaf) -> None:
    node = None if (is_leaf is not None and is_leaf(tree)) else _node_type(tree)
    if node is None:
        out.append((path, tree))
        return
    children, _ = _keyed_children(tree, node)
    for key, child in children:
        _flatten_with_path(child, (*path, key), out, is_leaf)


def tree_flatten_with_path(tree: PyTree, is_leaf: Callable | None = None) -> tuple:
    """``([(key path, leaf)...], spec)``: each leaf with the keys that lead to it.

    Example:
        >>> from ember.utils import _pytree as pytree
        >>> pairs, _ = pytree.tree_flatten_with_path({"a": (1, 2)})
        >>> [(pytree.keystr(p), leaf) for p, leaf in pairs]
        [("['a'][0]", 1), ("['a'][1]", 2)]
    """
    out: list = []
    _flatten_with_path(tree, (), out, is_leaf)
    return out, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree: PyTree, is_leaf: Callable | None = None) -> list:
    """``[(key path, leaf)...]`` (``tree_flatten_with_path`` without the spec)."""
    out: list = []
    _flatten_with_path(tree, (), out, is_leaf)
    return out


def tree_map_with_path(
    func: Callable, tree: PyTree, *rests: PyTree, is_leaf: Callable | None = None
) -> PyTree:
    """``tree`` with each leaf ``x`` replaced by ``func(path, x, *matching leaves of rests)``.

    Example:
        >>> from ember.utils import _pytree as pytree
        >>> pytree.tree_map_with_path(lambda p, x: f"{pytree.keystr(p)}={x}", {"a": 1})
        {'a': "['a']=1"}
    """
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return tree_unflatten(
        [func(p, x, *(o[i] for o in others)) for i, (p, x) in enumerate(pairs)], spec
    )


_list_like = lambda t: (list(t), None)  # noqa: E731 (the shared flatten of list and tuple)
register_pytree_node(
    tuple,
    _list_like,
    lambda xs, _: tuple(xs),
    flatten_with_keys_fn=_seq_flatten_with_keys(_list_like),
)
register_pytree_node(
    list,
    _list_like,
    lambda xs, _: list(xs),
    flatten_with_keys_fn=_seq_flatten_with_keys(_list_like),
)
register_pytree_node(
    dict, _dict_flatten, _dict_unflatten, flatten_with_keys_fn=_dict_flatten_with_keys
)
register_pytree_node(
    collections.OrderedDict,
    _dict_flatten,
    lambda values, keys: collections.OrderedDict(zip(keys, values)),
    flatten_with_keys_fn=_dict_flatten_with_keys,
)


def _defaultdict_flatten(d):
    return list(d.values()), [d.default_factory, list(d.keys())]


register_pytree_node(
    collections.defaultdict,
    _defaultdict_flatten,
    lambda values, ctx: collections.defaultdict(ctx[0], zip(ctx[1], values)),
    flatten_with_keys_fn=lambda d: (
        [(MappingKey(k), v) for k, v in d.items()],
        [d.default_factory, list(d.keys())],
    ),
)
register_pytree_node(
    collections.deque,
    lambda d: (list(d), d.maxlen),
    lambda values, maxlen: collections.deque(values, maxlen=maxlen),
    flatten_with_keys_fn=_seq_flatten_with_keys(lambda d: (list(d), d.maxlen)),
)
# Every named tuple class is a node under torch's marker (its flatten keeps the class as
# the context), looked up by ``_get_node_type``.
register_pytree_node(
    collections.namedtuple,  # type: ignore[arg-type]
    lambda t: (list(t), type(t)),
    lambda values, cls: cls(*values),
    flatten_with_keys_fn=lambda t: (
        [(GetAttrKey(f), v) for f, v in zip(t._fields, t)],
        type(t),
    ),
)


def _get_node_type(tree) -> Any:
    """The key of ``tree``'s node in ``SUPPORTED_NODES``: its type, or
    ``collections.namedtuple`` for any named tuple (torch's helper)."""
    kind = type(tree)
    return collections.namedtuple if is_namedtuple_class(kind) else kind
