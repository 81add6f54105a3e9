"""Guards: the Python values a captured function read besides its arguments.

A capture replays ops, not Python: a global the function multiplied by, a closure variable,
an attribute of a module (``self.scale``) or of a configuration object are frozen into the
generated code at the values the first call saw. torch's dynamo guards on every such read;
so does ember. While the capture runs, ``Reads`` (a profile hook) notes each frame of user
code that ran (its code object, globals and argument values) and the builtin calls with
Python side effects. ``build`` then reads each frame's bytecode for the *chains* it loads::

    LOAD_GLOBAL cfg, LOAD_ATTR model, LOAD_ATTR width     ->  cfg.model.width in its globals
    LOAD_DEREF k                                          ->  the closure cell of k
    LOAD_FAST self, LOAD_ATTR scale                       ->  <that module>.scale

rooted where a later call finds the same thing (a module's globals, a closure cell of a
function whose identity is guarded, an object whose identity is guarded or keyed: the
module tree, an argument), evaluates each, and keeps a check by the kind of value found:

- Python scalars, strings, None, and tuples of them: by value (and exact type: 2 and 2.0
  compute in different dtypes);
- tensors: by identity, shape, dtype and requires_grad. Their values are read at each call
  (an in-place update is seen), so the version counter is not part of the guard: guarding
  it would recompile after every optimizer step;
- functions, classes, Python modules, other objects: by identity (the attributes read from
  an object are chains of their own); bound methods by function and instance;
- ``nn.Module`` values: identity and their tree's state (submodules, parameters, training);
- lists, dicts, sets: by their items, recursively; NumPy arrays: identity and contents.

All checks of an entry are one generated Python function (``GuardSet.check``). A failed
check recompiles, and ``explain()`` says which read changed.

The same pass finds writes the generated code would not repeat: assignments to globals, to
closure variables, to attributes or items of objects from outside the call, ``list.append``
and friends on such objects, and ``print``/``input``. Any of them makes the capture fail
(the function runs eagerly, as eager code repeats them at every call).

Frames of ember itself are not read for chains (its globals are not user state), except
``nn`` modules' methods for chains rooted at ``self``: ``Dropout.forward`` reads ``self.p``,
which a user may change.
"""

from __future__ import annotations

import collections
import dis
import functools
import os
import sys
import sysconfig
import types

import numpy as np

from .._tensor import Tensor
from ..nn import Module
from .capture import GraphBreak

__all__ = ["GuardSet", "Reads", "build", "module_state"]

_MISSING = object()  # a chain that cannot be read (an attribute not set, a key not there)

# -- which frames are read ---------------------------------------------------------------

_SKIP, _SELF, _FULL = 0, 1, 2
_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIBRARY_DIRS = tuple(
    {
        os.path.join(os.path.abspath(p), "")
        for p in (sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib"))
        if p
    }
    | {os.path.join(os.path.dirname(os.path.abspath(np.__file__)), "")}
)
_KIND: dict = {}  # code object -> _SKIP | _SELF | _FULL


def _code_kind(code, f_globals: dict) -> int:
    """How a frame of ``code`` is read: not at all (ember, the standard library, NumPy,
    generated code), for ``self``'s attributes (ember's ``nn`` modules), or fully."""
    kind = _KIND.get(code)
    if kind is None:
        module = f_globals.get("__name__")
        filename = code.co_filename
        if module == "ember" or (module or "").startswith("ember."):
            first_self = code.co_argcount and code.co_varnames[0] == "self"
            kind = _SELF if module.startswith("ember.nn") and first_self else _SKIP
        elif filename.startswith((_EMBER_DIR, "<frozen", "<ember.compile", *_LIBRARY_DIRS)):
            kind = _SKIP
        else:
            kind = _FULL
        if len(_KIND) > 100_000:
            _KIND.clear()
        _KIND[code] = kind
    return kind


# Builtins whose calls are effects a replay would drop (eager code repeats them).
_EFFECT_BUILTINS = {
    print: "print()",
    input: "input()",
    breakpoint: "breakpoint()",
    setattr: "setattr()",  # on an object from outside (the bytecode shows no STORE_ATTR)
    delattr: "delattr()",
}
# Methods that change a list, dict, set or deque in place.
_MUTATORS = frozenset(
    "append extend insert pop remove clear update setdefault popitem add discard "
    "difference_update intersection_update symmetric_difference_update appendleft "
    "extendleft popleft rotate sort reverse __setitem__ __delitem__ __iadd__".split()
)
_CONTAINERS = (list, dict, set, bytearray, collections.deque)


class Reads:
    """While active (a ``with`` block around the capture), notes the frames of user code
    that run and the calls with Python side effects (see the module docstring)."""

    def __init__(self) -> None:
        self.frames: list = []  # (code, globals, {argument or free variable: value})
        self.effects: list = []  # side effects a replay would drop
        self.mutated: list = []  # (container, method name) called from user code
        self._seen: set = set()
        self._previous = None

    def __enter__(self):
        self._previous = sys.getprofile()
        sys.setprofile(self._event)
        return self

    def __exit__(self, *exc) -> None:
        sys.setprofile(self._previous)

    def _event(self, frame, event, arg) -> None:
        if event == "call":
            code = frame.f_code
            kind = _code_kind(code, frame.f_globals)
            if kind:
                self._frame(frame, code, kind)
        elif event == "c_call":
            effect = _EFFECT_BUILTINS.get(arg) if type(arg) is types.BuiltinFunctionType else None
            owner = getattr(arg, "__self__", None)
            if (effect is not None or isinstance(owner, _CONTAINERS)) and _code_kind(
                frame.f_code, frame.f_globals
            ) == _FULL:
                if effect is not None:
                    self.effects.append(effect)
                elif arg.__name__ in _MUTATORS:
                    self.mutated.append((owner, arg.__name__))
        if self._previous is not None:
            self._previous(frame, event, arg)

    def _frame(self, frame, code, kind) -> None:
        if kind == _SELF:
            names = code.co_varnames[:1]
        else:
            n = code.co_argcount + code.co_kwonlyargcount
            n += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
            names = code.co_varnames[:n] + code.co_freevars
        f_locals = frame.f_locals
        params = {k: f_locals[k] for k in names if k in f_locals}
        if kind == _SELF and not isinstance(params.get("self"), Module):
            return
        key = (code, id(frame.f_globals), tuple(id(v) for v in params.values()))
        if key not in self._seen:
            self._seen.add(key)
            self.frames.append((code, frame.f_globals, params))


# -- what a code object loads ------------------------------------------------------------

_ROOT_GLOBAL = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_ROOT_DEREF = frozenset({"LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF"})
_ROOT_FAST = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"})
_ROOT_FAST_PAIR = frozenset({"LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"})
_ROOTS = _ROOT_GLOBAL | _ROOT_DEREF | _ROOT_FAST | _ROOT_FAST_PAIR
_LOAD_ATTR = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_ONE_LOAD = _ROOTS | {"LOAD_CONST", "LOAD_SMALL_INT"}  # a subscript's key in one instruction


class _CodeInfo:
    """The chains one code object loads and the writes it makes to places outside it."""

    __slots__ = ("reads", "aliases", "store_globals", "store_derefs", "writes", "nested")

    def __init__(self) -> None:
        self.reads: list = []  # (root, steps); root: ("global" | "deref" | "fast", name)
        self.aliases: dict = {}  # local name -> [(root, steps)] it was assigned from
        self.store_globals: list = []
        self.store_derefs: list = []
        self.writes: list = []  # (root, steps, what): an attribute or item stored on a chain
        self.nested: list = []  # code objects defined inside (closures, comprehensions)


_INFO: dict = {}


def _code_info(code) -> _CodeInfo:
    """Read ``code``'s bytecode once: the chains it loads, what it assigns from chains, and
    its writes. ``dis`` names the same loads the same way on Python 3.10 to 3.13."""
    info = _INFO.get(code)
    if info is not None:
        return info
    info = _CodeInfo()
    ins = list(dis.get_instructions(code))
    ends: list = [None] * len(ins)  # per instruction: the chain whose value it leaves on top
    for i, inst in enumerate(ins):
        op = inst.opname
        if op in _ROOT_GLOBAL:
            ends[i] = (("global", inst.argval), ())
        elif op in _ROOT_DEREF:
            ends[i] = (("deref", inst.argval), ())
        elif op in _ROOT_FAST:
            ends[i] = (("fast", inst.argval), ())
        elif op in _ROOT_FAST_PAIR:
            ends[i] = (("fast", inst.argval[1]), ())
        elif op in _LOAD_ATTR and i and ends[i - 1] is not None:
            root, steps = ends[i - 1]
            ends[i] = (root, steps + (("attr", inst.argval),))
        elif op == "BINARY_SUBSCR" and i >= 2 and ends[i - 2] is not None:
            key = ins[i - 1]
            if key.opname == "LOAD_CONST" and _plain_key(key.argval):  # cfg["lr"]
                root, steps = ends[i - 2]
                ends[i] = (root, steps + (("item", key.argval),))
        elif op in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            info.store_globals.append(inst.argval)
        elif op in ("STORE_DEREF", "DELETE_DEREF") and inst.argval in code.co_freevars:
            info.store_derefs.append(inst.argval)
        elif op in ("STORE_ATTR", "DELETE_ATTR") and i and ends[i - 1] is not None:
            info.writes.append((*ends[i - 1], f"attribute {inst.argval!r}"))
        elif op in ("STORE_SUBSCR", "DELETE_SUBSCR") and i >= 2 and ends[i - 2] is not None:
            if ins[i - 1].opname in _ONE_LOAD:
                info.writes.append((*ends[i - 2], "an item"))
        elif op in ("STORE_FAST", "STORE_FAST_MAYBE_NULL") and i:
            if ends[i - 1] is not None:  # m = self.sub
                info.aliases.setdefault(inst.argval, []).append(ends[i - 1])
            elif i >= 3 and ins[i - 1].opname == "FOR_ITER" and ins[i - 2].opname == "GET_ITER":
                if ends[i - 3] is not None:  # for b in self.blocks: b is each of its items
                    root, steps = ends[i - 3]
                    each = (root, steps + (("each", None),))
                    info.aliases.setdefault(inst.argval, []).append(each)
    for i, chain in enumerate(ends):
        if chain is None:
            continue
        longer = i + 1 < len(ins) and ends[i + 1] is not None and ends[i + 1][1][:-1] == chain[1]
        longer = longer and ends[i + 1][0] == chain[0] and len(ends[i + 1][1]) > len(chain[1])
        indexed = i + 2 < len(ins) and ends[i + 2] is not None and ends[i + 2][0] == chain[0]
        indexed = indexed and len(ends[i + 2][1]) == len(chain[1]) + 1
        indexed = indexed and ends[i + 2][1][:-1] == chain[1] and ends[i + 2][1][-1][0] == "item"
        if not longer and not indexed:  # only the longest chain: it reads what its start did
            info.reads.append(chain)
    info.nested = [c for c in code.co_consts if isinstance(c, types.CodeType)]
    if len(_INFO) > 20_000:
        _INFO.clear()
    _INFO[code] = info
    return info


def _plain_key(k) -> bool:
    return isinstance(k, (str, int, bytes)) and not isinstance(k, bool)


# -- sources: where a later call finds the value again ----------------------------------


class _Source:
    """A root (a globals dict and a name, a closure cell, or a pinned object) and steps:
    ``("attr", name)``, ``("item", key)``, ``("each", None)`` (every item of a list)."""

    __slots__ = ("kind", "root", "name", "steps")

    def __init__(self, kind: str, root, name=None, steps: tuple = ()) -> None:
        self.kind, self.root, self.name, self.steps = kind, root, name, steps

    def key(self) -> tuple:
        return (self.kind, id(self.root), self.name, self.steps)

    def describe(self) -> str:
        if self.kind == "global":
            text = f"global {self.name!r}"
        elif self.kind == "builtin":
            text = f"builtin {self.name!r} (not shadowed by a global)"
        elif self.kind == "cell":
            text = f"closure variable {self.name!r}"
        else:
            text = f"{type(self.root).__name__} object" if self.steps else "an argument"
        for step, arg in self.steps:
            text += f".{arg}" if step == "attr" else "[*]" if step == "each" else f"[{arg!r}]"
        return text

    def evaluate(self):
        """The value now (``_MISSING`` when it cannot be read); after an ``each`` step, a
        tuple of the rest's values over the items."""
        if self.kind == "global":
            value = self.root.get(self.name, _MISSING)
        elif self.kind == "builtin":
            return self.name in self.root
        elif self.kind == "cell":
            try:
                value = self.root.cell_contents
            except ValueError:  # an empty cell
                return _MISSING
        else:
            value = self.root
        return _walk(value, self.steps)


def _walk(value, steps: tuple):
    for n, (step, arg) in enumerate(steps):
        if value is _MISSING:
            break
        try:
            if step == "attr":
                value = getattr(value, arg)
            elif step == "item":
                value = value[arg]
            elif isinstance(value, (list, tuple, Module)):  # each
                return tuple(_walk(v, steps[n + 1 :]) for v in value)
            else:
                return _MISSING
        except Exception:
            return _MISSING
    return value


def _stable_prefix(source: _Source) -> _Source:
    """``source`` cut before ``__dict__`` (the object is guarded, not all it holds) and
    before a property that computes a new object at each read (``.T``, ``.data``): guarding
    that would always fail; the object it is computed from is guarded. Properties whose
    values are stable (``Tensor.grad``) stay."""
    if source.kind == "builtin":
        return source
    for n, (step, arg) in enumerate(source.steps):
        if step == "attr" and arg == "__dict__":
            source = _Source(source.kind, source.root, source.name, source.steps[:n])
            break
    for n in range(len(source.steps), -1, -1):
        shorter = _Source(source.kind, source.root, source.name, source.steps[:n])
        if _same_binding(shorter.evaluate(), shorter.evaluate()):
            return shorter
    return shorter


def _same_binding(a, b) -> bool:
    """Do two reads give the same thing (the same object, value or bound method)?"""
    if a is b or (_by_value(a) and _same_value(a, b)):
        return True
    return (
        type(a) is types.MethodType
        and type(b) is types.MethodType
        and a.__func__ is b.__func__
        and a.__self__ is b.__self__
    )


# -- the checks ---------------------------------------------------------------------------

_VALUE_TYPES = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis), slice, range)


def _by_value(v) -> bool:
    if isinstance(v, _VALUE_TYPES) or type(v) is np.dtype:
        return True
    if type(v) in (tuple, frozenset):
        return all(_by_value(x) for x in v)
    return False


def _same_value(a, b) -> bool:
    """Equal, of the same types all the way down; NaN equals NaN."""
    if type(a) is not type(b):
        return False
    if type(a) is float or type(a) is complex:
        return a == b or (a != a and b != b)
    if type(a) is tuple:
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    return a == b


def module_state(root) -> tuple:
    """What a module's compiled call depends on besides its arguments: each module's
    identity and training flag and the identity of every parameter and buffer (a new tensor
    or submodule assigned means a new capture). One walk over the tree's dicts, 2.5x faster
    than walking ``modules()``, ``parameters()`` and ``buffers()``."""
    state: list = []
    seen: set = set()
    stack = [root]
    while stack:
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        state += (id(m), m.training)
        state.extend(map(id, m._parameters.values()))
        state.append(None)  # parameters | buffers: a tensor moving between them changes the key
        state.extend(map(id, m._buffers.values()))
        stack.extend(c for c in m._modules.values() if c is not None)
    return tuple(state)


def _tree(module) -> list:
    """The modules of ``module``'s tree."""
    out, stack, seen = [], [module], set()
    while stack:
        m = stack.pop()
        if id(m) not in seen:
            seen.add(id(m))
            out.append(m)
            stack.extend(c for c in m._modules.values() if c is not None)
    return out


_STRUCT_BUDGET = 1000  # items a container guard may compare at each call


class _TooLarge(Exception):
    pass


def _snapshot(v, budget: list):
    """A comparable picture of a container: items by value, objects by identity."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge
    if _by_value(v):
        return ("=", v)
    if isinstance(v, Tensor):
        return ("t", id(v), v._data.shape, v._data.dtype, v._rg)
    if isinstance(v, (list, tuple, collections.deque)):
        return (type(v), tuple(_snapshot(x, budget) for x in v))
    if isinstance(v, dict):
        return (type(v), tuple((k, _snapshot(x, budget)) for k, x in v.items()))
    if isinstance(v, (set, frozenset)) and all(_by_value(x) for x in v):
        budget[0] -= len(v)
        return (type(v), frozenset(v))
    if isinstance(v, np.ndarray):
        return ("a", id(v), _ndarray_state(v))
    return ("is", id(v))


def _same_snapshot(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if type(a) is tuple:
        if len(a) != len(b):
            return False
        if len(a) == 2 and a[0] == "=":
            return b[0] == "=" and _same_value(a[1], b[1])
        return all(_same_snapshot(x, y) for x, y in zip(a, b))
    return a == b


def _contents_match(value, kind, snapshot) -> bool:
    """``value`` is a container of type ``kind`` whose snapshot equals ``snapshot``."""
    if type(value) is not kind:
        return False
    if not snapshot[1]:
        return not value
    try:
        return _same_snapshot(_snapshot(value, [_STRUCT_BUDGET]), snapshot)
    except _TooLarge:
        return False


def _items(v) -> list:
    """The objects inside a guarded container (its guard pins them)."""
    if isinstance(v, dict):
        return list(v.values())
    if isinstance(v, (list, tuple, set, frozenset, collections.deque)):
        return list(v)
    return []


def _ndarray_state(v):
    return (v.shape, v.dtype, v.strides, v.tobytes())


_GUARDED_CONTAINERS = (list, dict, set, tuple, frozenset, collections.deque)


def _always() -> bool:
    return True


class GuardSet:
    """The checks of one compiled entry: ``check()`` is True when every value the capture
    read still is what it saw; ``failure()`` describes the first that is not."""

    def __init__(self) -> None:
        self._tests: list = []  # (python expression, description)
        self._namespace: dict = {
            "_MISSING": _MISSING,
            "_same_value": _same_value,
            "_contents_match": _contents_match,
            "_module_state": module_state,
            "_ndarray_state": _ndarray_state,
        }
        self._keys: set = set()
        self.check = _always

    def __len__(self) -> int:
        return len(self._tests)

    def _bind(self, value) -> str:
        name = f"K{len(self._namespace)}"
        self._namespace[name] = value
        return name

    def _expr(self, source: _Source) -> str:
        """A Python expression that reads ``source`` (raising where it cannot be read)."""
        if source.kind == "global":
            expr = f"{self._bind(source.root)}[{source.name!r}]"
        elif source.kind == "cell":
            expr = f"{self._bind(source.root)}.cell_contents"
        else:
            expr = self._bind(source.root)
        if all(s == "attr" and a.isidentifier() for s, a in source.steps):
            return expr + "".join(f".{a}" for _, a in source.steps)
        return f"{self._bind(source)}.evaluate()"

    def add(self, source: _Source, value) -> None:
        """Keep ``value`` at ``source``: its value, identity or state, by its kind."""
        key = source.key()
        if key in self._keys:
            return
        self._keys.add(key)
        what = source.describe()
        if source.kind == "builtin":
            test = f"{source.name!r} not in {self._bind(source.root)}"
            self._tests.append((test, what))
            return
        if value is _MISSING or any(s == "each" for s, _ in source.steps):
            # Read through the general path: a chain that cannot be read now must stay so.
            k = self._bind(value)
            s = self._bind(source)
            if value is _MISSING:
                self._tests.append((f"{s}.evaluate() is _MISSING", f"{what} (not set)"))
            else:
                self._tests.append((f"_same_value({s}.evaluate(), {k})", f"{what} (was {value})"))
            return
        expr = self._expr(source)
        if _by_value(value):
            k = self._bind(value)
            if type(value) in (bool, str, type(None)) or (type(value) is int):
                test = f"(_v := {expr}) is {k} or (type(_v) is type({k}) and _v == {k})"
            else:
                test = f"_same_value({expr}, {k})"
            self._tests.append((test, f"{what} (was {value!r})"))
        elif isinstance(value, Tensor):
            k = self._bind(value)
            meta = self._bind((value._data.shape, value._data.dtype, value._rg))
            test = f"(_v := {expr}) is {k} and (_v._data.shape, _v._data.dtype, _v._rg) == {meta}"
            self._tests.append((test, f"{what} (a tensor)"))
        elif isinstance(value, types.MethodType):
            f, s = self._bind(value.__func__), self._bind(value.__self__)
            test = f"(_v := {expr}).__func__ is {f} and _v.__self__ is {s}"
            self._tests.append((test, f"{what} (a method)"))
        elif isinstance(value, np.ndarray):
            k, st = self._bind(value), self._bind(_ndarray_state(value))
            test = f"(_v := {expr}) is {k} and _ndarray_state(_v) == {st}"
            self._tests.append((test, f"{what} (an array)"))
        elif (
            isinstance(value, (list, dict, set, tuple, frozenset, collections.deque)) and not value
        ):
            test = f"type(_v := {expr}) is {self._bind(type(value))} and not _v"
            self._tests.append((test, f"{what} (empty)"))
        elif isinstance(value, _GUARDED_CONTAINERS):
            snapshot = _snapshot(value, [_STRUCT_BUDGET])  # _TooLarge: the caller breaks
            kind, snap = self._bind(type(value)), self._bind(snapshot)
            self._tests.append((f"_contents_match({expr}, {kind}, {snap})", f"{what} (contents)"))
        elif isinstance(value, Module):
            k, st = self._bind(value), self._bind(module_state(value))
            test = f"(_v := {expr}) is {k} and _module_state(_v) == {st}"
            self._tests.append((test, f"{what} (a module)"))
        else:
            self._tests.append((f"{expr} is {self._bind(value)}", f"{what} (identity)"))

    def finish(self) -> None:
        """Generate ``check``: every test in one function."""
        if not self._tests:
            self.check = _always
            return
        body = " and\n            ".join(f"({e})" for e, _ in self._tests)
        source = (
            "def check():\n    try:\n        return bool(\n            "
            + body
            + "\n        )\n    except Exception:\n        return False\n"
        )
        exec(compile(source, "<ember.compile guards>", "exec"), self._namespace)  # noqa: S102
        self.check = self._namespace["check"]

    def failure(self) -> str:
        """The first test that fails now, described (for ``explain``); '' if none."""
        for expr, what in self._tests:
            try:
                ok = eval(expr, self._namespace)  # noqa: S307 - our own expression
            except Exception:
                ok = False
            if not ok:
                return what
        return ""

    def describe(self) -> list:
        """What each test keeps, in words."""
        return [what for _, what in self._tests]


# -- building the guards of a capture ------------------------------------------------------


def build(fn, reads: Reads, pinned: list, covered_modules: list) -> GuardSet:
    """The guards of a capture of ``fn`` that made ``reads``. ``pinned``: objects whose
    identity the call's key fixes (non-tensor arguments); ``covered_modules``: modules
    whose tree state the key fixes (``OptimizedModule``'s). Raises ``GraphBreak`` for a
    side effect the generated code would not repeat."""
    if reads.effects:
        raise GraphBreak(f"{reads.effects[0]} inside the compiled region (a Python side effect)")
    builder = _Builder(reads, covered_modules)
    builder.learn(fn)
    builder.defaults(fn)
    for obj in pinned:
        builder.learn(obj)
    builder.run()
    for container, method in reads.mutated:
        if id(container) in builder.known:
            raise GraphBreak(
                f"{type(container).__name__}.{method}() on an object from outside the compiled "
                "region (a Python side effect)"
            )
    builder.guards.finish()
    return builder.guards


class _Builder:
    """The state of ``build``: the persistent objects known so far, the persistent closure
    cells of each code object, and the guards made."""

    def __init__(self, reads: Reads, covered_modules: list) -> None:
        self.reads = reads
        self.guards = GuardSet()
        self.known: dict = {}  # id -> object whose identity is guarded or keyed
        self.cells: dict = {}  # code -> {free variable: persistent cell}
        self.covered: set = set()  # ids of modules whose tree state the key holds
        for m in covered_modules:
            for sub in _tree(m):
                self.covered.add(id(sub))
                self.known[id(sub)] = sub

    def learn(self, value) -> None:
        """``value`` is reached from a guarded place: remember it and what it opens."""
        if value is None or isinstance(value, (Tensor, np.ndarray)) or _by_value(value):
            return
        if id(value) in self.known and not isinstance(value, types.FunctionType):
            return
        self.known[id(value)] = value
        if isinstance(value, types.FunctionType):
            self._learn_function(value)
        elif isinstance(value, types.MethodType):
            self.learn(value.__func__)
            self.learn(value.__self__)
        elif isinstance(value, Module):
            for sub in _tree(value):
                self.known[id(sub)] = sub
        elif isinstance(value, functools.partial):
            self.learn(value.func)
            for item in (*value.args, *value.keywords.values()):
                self.learn(item)
        else:
            for item in _items(value):
                self.learn(item)

    def defaults(self, fn) -> None:
        """Guard the default values of ``fn``'s parameters (a call that omits an argument
        reads them; ``fn.__defaults__`` may be reassigned)."""
        fn = getattr(fn, "__func__", fn)
        for name in ("__defaults__", "__kwdefaults__"):
            if isinstance(fn, types.FunctionType) and getattr(fn, name) is not None:
                source = _Source("object", fn, None, (("attr", name),))
                self.guards.add(source, source.evaluate())

    def _learn_function(self, f) -> None:
        code = f.__code__
        if f.__closure__:
            mine = self.cells.setdefault(code, {})
            if all(mine.get(k, c) is c for k, c in zip(code.co_freevars, f.__closure__)):
                mine.update(zip(code.co_freevars, f.__closure__))
        for nested in _code_info(code).nested:
            self._share_cells(code, nested)

    def _share_cells(self, parent, code) -> None:
        """``code`` is defined in ``parent``: its free variables that are ``parent``'s free
        variables are the same persistent cells (its others are ``parent``'s locals)."""
        mine = self.cells.get(parent)
        if not mine:
            return
        shared = {k: mine[k] for k in code.co_freevars if k in mine}
        if shared:
            self.cells.setdefault(code, {}).update(shared)
            for nested in _code_info(code).nested:
                self._share_cells(code, nested)

    def run(self) -> None:
        """Read every frame; again while that pins new objects (a frame's argument may be
        reached from a later frame's read)."""
        done_keys: set = set()
        while True:
            before = (len(self.known), len(self.guards))
            for code, f_globals, params in self.reads.frames:
                kind = _code_kind(code, f_globals)
                info = _code_info(code)
                for nested in info.nested:
                    self._share_cells(code, nested)
                self._frame(code, kind, info, f_globals, params, done_keys)
            if (len(self.known), len(self.guards)) == before:
                return

    def _roots(self, code, kind, info, f_globals, params, root, steps, depth=0) -> list:
        """Where a later call finds what ``root`` + ``steps`` read (none: this call's own
        values, which the arguments determine)."""
        where, name = root
        if where == "global":
            if kind != _FULL:
                return []
            if name in f_globals:
                return [_Source("global", f_globals, name, steps)]
            return [_Source("builtin", f_globals, name)]
        if where == "deref":
            if kind != _FULL or name not in code.co_freevars:
                return []  # a cell of this call's own
            cell = self.cells.get(code, {}).get(name)
            if cell is not None:
                return [_Source("cell", cell, name, steps)]
            value = params.get(name, _MISSING)  # a closure reached in a way not followed:
            if id(value) in self.known:  # its value, when that is pinned
                return [_Source("object", value, None, steps)]
            return []
        if kind == _SELF and name != "self":
            return []
        if name in params:
            value = params[name]
            if id(value) in self.known and steps:
                return [_Source("object", value, None, steps)]
            return []
        if depth < 4 and name in info.aliases:
            out = []
            for r, s in info.aliases[name]:
                out += self._roots(code, kind, info, f_globals, params, r, s + steps, depth + 1)
            return out
        return []

    def _frame(self, code, kind, info, f_globals, params, done_keys: set) -> None:
        """Guard the chains one frame read; raise ``GraphBreak`` for its writes outside."""
        for root, steps in info.reads:
            for source in self._roots(code, kind, info, f_globals, params, root, steps):
                if source.kind == "object" and id(source.root) in self.covered:
                    if len(source.steps) == 1 and _in_module_dicts(source.root, source.steps[0]):
                        continue  # a parameter, buffer or submodule: the key holds it
                source = _stable_prefix(source)
                if source.kind == "object" and not source.steps:
                    continue  # the object itself: pinned already
                if source.key() in done_keys:
                    continue
                done_keys.add(source.key())
                value = source.evaluate()
                try:
                    self.guards.add(source, value)
                except _TooLarge:
                    raise GraphBreak(
                        f"{source.describe()} is a container too large to guard"
                    ) from None
                if source.kind == "builtin":
                    continue
                if isinstance(value, tuple) and source.steps and source.steps[-1][0] == "each":
                    for v in value:
                        self.learn(v)
                self.learn(value)
        if kind != _FULL:
            return
        if info.store_globals:
            raise GraphBreak(
                f"an assignment to global {info.store_globals[0]!r} (a Python side effect)"
            )
        if info.store_derefs:
            raise GraphBreak(
                f"an assignment to closure variable {info.store_derefs[0]!r} (a Python side effect)"
            )
        for root, steps, what in info.writes:
            for source in self._roots(code, kind, info, f_globals, params, root, steps):
                if source.kind != "builtin":
                    raise GraphBreak(
                        f"an assignment to {what} of {source.describe()} (a Python side effect)"
                    )
            if not steps and root[0] == "fast" and id(params.get(root[1])) in self.known:
                raise GraphBreak(f"an assignment to {what} of {root[1]} (a Python side effect)")


def _in_module_dicts(module, step) -> bool:
    kind, name = step
    return kind == "attr" and (
        name in module._parameters or name in module._buffers or name in module._modules
    )
