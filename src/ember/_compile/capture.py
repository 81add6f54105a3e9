"""Capture: run a function once, eagerly, and record the declared ops it applies.

Every differentiable op is a declaration (``autograd.opdef.defop``) applied through
``recording.record``; while a capture runs, ``record`` reports each application here
(``Capture.op``): the node class, its operands, its parameters and its outputs. That list is
the graph the compiler generates code from, so the compiler never needs a table of ops of
its own: it calls each declaration's ``forward`` and its backward rules.

What the list cannot express makes the capture fail with the reason (the caller then runs
the function eagerly, or raises under ``fullgraph=True``):

- a value leaving the graph: ``.item()``, ``bool(t)``, ``.tolist()``, ``.numpy()``,
  printing (the captured code would freeze the value, or drop the side effect);
- a tensor made by an op that is not a declaration (``Tensor._wrap`` in op code), unless it is
  a deterministic factory (``zeros``, ``arange``, ...) whose result is a constant for the
  guarded shapes, or an alias of a captured value (``detach``);
- an index array passed as a parameter that is not exactly a captured tensor's array;
- an in-place change of a captured tensor (its version counter moved), a custom
  ``autograd.Function``, hooks on intermediate tensors.
"""

from __future__ import annotations

import copy
import sys
import threading
import traceback

import numpy as np

from .. import _overrides
from .. import _tensor as _tensor_module
from .._tensor import Tensor
from ..autograd import recording as _recording
from ..overrides import TorchFunctionMode

__all__ = [
    "Capture",
    "CallOp",
    "GraphBreak",
    "Op",
    "SideEffectOp",
    "CheckOp",
    "SlotRef",
    "Literal",
    "ViewOf",
    "view_of",
]


class GraphBreak(RuntimeError):
    """What stopped a capture: ``reason`` and the user's source line (``where``)."""

    def __init__(self, reason: str, where: str = "") -> None:
        super().__init__(reason + (f"\n  at {where}" if where else ""))
        self.reason = reason
        self.where = where


class SlotRef:
    """A reference to value slot ``k`` (an operand, or an array inside a parameter)."""

    __slots__ = ("k",)

    def __init__(self, k: int) -> None:
        self.k = k

    def __repr__(self) -> str:
        return f"v{self.k}"


class ViewOf:
    """A parameter that is a view of value slot ``k``'s array (rebuilt at each call)."""

    __slots__ = ("k", "offset", "shape", "strides")

    def __init__(self, k: int, offset: int, shape: tuple, strides: tuple) -> None:
        self.k, self.offset, self.shape, self.strides = k, offset, shape, strides


def view_of(a: np.ndarray, offset: int, shape: tuple, strides: tuple) -> np.ndarray:
    """The read-only view of C-contiguous ``a`` at byte ``offset`` with ``shape``/``strides``."""
    start = a.reshape(-1)[offset // a.itemsize :]
    return np.lib.stride_tricks.as_strided(start, shape, strides, writeable=False)


def has_slot(value) -> bool:
    """Does a parameter value hold (or is it) a reference to a captured array?"""
    if isinstance(value, (SlotRef, ViewOf)):
        return True
    if isinstance(value, (tuple, list)):
        return any(has_slot(v) for v in value)
    return False


class Literal:
    """A Python number or None operand."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value


class Op:
    """One captured application of a declared op (or an alias: ``cls`` None)."""

    __slots__ = ("cls", "args", "params", "outs", "out_rg", "n_saves", "edges", "meta", "casts")

    def __init__(self, cls, args, params, outs, out_rg, n_saves, edges, meta, casts=None):
        self.cls = cls  # the node class (None: outs[0] aliases args[0] with no gradient)
        self.args = args  # SlotRef | Literal per declared input (a list for variadic ops)
        self.params = params  # with SlotRef where an array is a captured tensor's array
        self.outs = outs  # value slots of the outputs
        self.out_rg = out_rg  # per output: does it require grad
        self.n_saves = n_saves  # arrays the forward returns after the outputs
        self.edges = edges  # per input: does it take a gradient
        self.meta = meta  # per output: (shape, dtype)
        # per input: the dtype its array was cast to before the forward (torch's type
        # promotion: int64 * 0.5 computes in float32), or None; None when nothing was cast.
        # Backward rules read the uncast array, as eager's saved tensors are uncast.
        self.casts = casts


class CallOp:
    """A call of a public function whose result is not a declared op's (comparisons,
    ``argmax``, bitwise ops: no gradient), replayed by calling it on the arrays' tensors."""

    __slots__ = ("fn", "args", "kwargs", "outs")

    def __init__(self, fn, args, kwargs, outs) -> None:
        self.fn, self.args, self.kwargs, self.outs = fn, args, kwargs, outs


class CheckOp:
    """A check of values (``recording.check_values``), replayed by calling ``fn`` on the
    arrays: it raises torch's error for values the op would read wrongly."""

    __slots__ = ("fn", "args", "outs")

    def __init__(self, fn, args) -> None:
        self.fn, self.args, self.outs = fn, args, []


class SideEffectOp:
    """An in-place update of tensors outside the graph (``recording.side_effect``),
    replayed by calling ``fn`` on tensors of the arrays."""

    __slots__ = ("fn", "args", "outs")

    def __init__(self, fn, args) -> None:
        self.fn, self.args, self.outs = fn, args, []


# Methods never logged as calls: the capture's own hooks, and what is not an op.
_NOT_CALLS = frozenset(
    "__init__ __repr__ __str__ __format__ __hash__ __reduce_ex__ __deepcopy__ __array__ "
    "__array_ufunc__ __len__ __iter__ __bool__ __float__ __int__ __complex__ __index__ "
    "__setitem__ __iadd__ __isub__ __imul__ __itruediv__ __ipow__ __contains__ _wrap _bump "
    "backward register_hook retain_grad requires_grad_ detach_ numpy tolist item".split()
)


# Parameter types the generated code may share between calls (immutable).
_PLAIN = (bool, int, float, complex, str, bytes, slice, range, np.dtype, np.generic, type)

# Ops whose output shape depends on the input's values, not only on its shape.
_VALUE_SHAPED = frozenset(
    {"MaskedSelectBackward0", "NonzeroBackward0", "Unique2Backward0", "UniqueDimBackward0"}
)

# Factories whose result is a constant once shapes are guarded (not random draws).
_CONSTANT_FACTORIES = frozenset(
    "tensor as_tensor from_numpy zeros ones empty full eye arange linspace logspace zeros_like "
    "ones_like empty_like full_like tril_indices triu_indices scalar_tensor new_tensor new_zeros "
    "new_ones new_full new_empty".split()
)
# Names of the registry's wrappers, not of ops: the op is the next frame in.
_WRAPPERS = frozenset({"method", "op", "wrapper", "inner", "wrapped", "decorate"})
# Tensor methods that hand a value to Python: captured code would freeze it.
_LEAKS = {
    "item": "Tensor.item() (a value leaves the graph)",
    "tolist": "Tensor.tolist() (values leave the graph)",
    "numpy": "Tensor.numpy() (values leave the graph)",
    "__array__": "converting a tensor to a NumPy array (values leave the graph)",
    "__bool__": "data-dependent control flow (bool() of a tensor)",
    "__float__": "float() of a tensor (a value leaves the graph)",
    "__int__": "int() of a tensor (a value leaves the graph)",
    "__index__": "using a tensor as a Python index (a value leaves the graph)",
    "__contains__": "`in` on a tensor (data-dependent)",
    "__repr__": "printing a tensor",
    "__str__": "printing a tensor",
    "__format__": "printing a tensor",
    "equal": "Tensor.equal() (a value leaves the graph)",
    "allclose": "Tensor.allclose() (a value leaves the graph)",
    "data_ptr": "Tensor.data_ptr()",
    "register_hook": "a hook on a tensor inside the compiled region",
    "retain_grad": "retain_grad() inside the compiled region",
    "_bump": "an in-place operation inside the compiled region",
}


def _user_line() -> str:
    """``file:line: code`` of the innermost frame outside ember (where the user's code is)."""
    for fs in reversed(traceback.extract_stack()):
        if "/ember/" not in fs.filename.replace("\\", "/"):
            return f"{fs.filename}:{fs.lineno}: {fs.line}"
    return ""


def _outermost_ember_function(frame) -> str:
    """The public ember function the user called, seen from a frame inside ember; a
    constant factory (``zeros_like``) on the way out names itself."""
    name = ""
    while frame is not None:
        if frame.f_code.co_name in _CONSTANT_FACTORIES:
            return frame.f_code.co_name
        module = frame.f_globals.get("__name__", "")
        if module == "ember" or module.startswith("ember."):
            code_name = frame.f_code.co_name
            if not module.startswith("ember._compile") and code_name not in _WRAPPERS:
                name = code_name
        elif name:
            break
        frame = frame.f_back
    return name


class Capture:
    """A context that records the declared ops a block applies (see the module docstring)."""

    def __init__(self, strict: bool = False) -> None:
        # strict (fullgraph=True): raise at the first break. Otherwise the block runs on,
        # eagerly and correctly, and the break is remembered (``check``).
        self.strict = strict
        self.ops: list[Op] = []
        self.values: list = []  # slot -> the Tensor captured there (kept alive: ids stay unique)
        self.kinds: list = []  # slot -> "input" | "attr" | "const" | "op"
        self.by_tensor: dict = {}  # id(tensor) -> slot
        self.by_array: dict = {}  # id(array) -> slot (arrays of captured tensors)
        self.made: dict = {}  # id(tensor) -> (tensor, name of the ember function that made it)
        self.made_arrays: dict = {}  # id(array) -> the tensor made around it
        self.versions: list = []  # slot -> version counter value when captured
        self.input_slots: list = []
        self._error: GraphBreak | None = None
        self._bumps_allowed = 0  # inside a side effect: its in-place updates are captured
        self.before: list = []  # (tensor, its array before a side effect changed it)
        self._keep: list = []  # tensors mapped to slots without one of their own
        # id(tensor) -> (tensor, dtype): operands the next op's eager code casts (note_cast)
        self._casts: dict = {}
        # The thread running the captured function: ops other threads run meanwhile reach
        # the same hooks (they are process-wide) and are not the capture's.
        self._thread = threading.get_ident()

    # -- slots --------------------------------------------------------------------------

    def _new_slot(self, t: Tensor, kind: str) -> int:
        k = len(self.values)
        self.values.append(t)
        self.kinds.append(kind)
        self.by_tensor[id(t)] = k
        self.by_array.setdefault(id(t._data), k)
        self.versions.append(t._vc[0] if t._vc is not None else 0)
        return k

    def add_input(self, t: Tensor) -> int:
        k = self.by_tensor.get(id(t))
        if k is None:
            k = self._new_slot(t, "input")
        self.input_slots.append(k)
        return k

    def slot_of(self, t: Tensor) -> int:
        """The slot of an operand: known, made during the capture, or from before it."""
        k = self.by_tensor.get(id(t))
        if k is not None:
            return k
        made = self.made.get(id(t))
        if made is None:
            return self._new_slot(t, "attr")  # a parameter, buffer or closure tensor
        src = self.by_array.get(id(t._data))
        if src is not None and self.values[src]._data is not t._data:
            src = None  # that array was replaced (its id reused)
        if src is not None and self.kinds[src] != "const":  # detach(), .data: an alias
            k = self._new_slot(t, "op")
            self.ops.append(Op(None, [SlotRef(src)], (), [k], [False], 0, (False,), None))
            return k
        if _recording._shape_constants.get(id(t._data)) is t._data:
            return self._new_slot(t, "const")  # its op declared it computed from shapes
        if made[1] not in _CONSTANT_FACTORIES:
            self.fail(f"ember.{made[1] or '<op>'} is not capturable (it is not a declared op)")
        return self._new_slot(t, "const")

    # -- what record reports ------------------------------------------------------------

    def _other_thread(self) -> bool:
        return threading.get_ident() != self._thread

    def note_cast(self, t: Tensor, dtype: np.dtype) -> None:
        """The op being run passes ``t``'s array to its forward cast to ``dtype``."""
        if not self._other_thread():
            self._casts[id(t)] = (t, dtype)

    def op(self, cls, inputs, params, outputs, extras) -> None:
        if self._other_thread():
            return
        casts, self._casts = self._casts, {}
        if self._error is None:
            self._op(cls, inputs, params, outputs, extras, casts)

    def _op(self, cls, inputs, params, outputs, extras, casts) -> None:
        if cls.__name__ in _VALUE_SHAPED:
            self.fail(f"{cls.__name__}'s output shape depends on the values")
            return
        if cls.forward is None:
            self.fail(f"{cls.__name__} declares no forward to replay")
            return
        args = [self._operand(x) for x in inputs]
        if cls._variadic:
            args = [args]
        edges = tuple(isinstance(x, Tensor) and x._rg for x in inputs)
        params = tuple(self._param(p, cls) for p in params)
        outs = []
        for t in outputs:
            self.made.pop(id(t), None)
            outs.append(self._new_slot(t, "op"))
        rg = [bool(t._rg) for t in outputs]
        meta = tuple((t._data.shape, t._data.dtype) for t in outputs)
        per_input = None
        if casts and not cls._variadic:  # (variadic forwards promote their inputs themselves)
            per_input = tuple(
                casts[id(x)][1] if id(x) in casts and casts[id(x)][0] is x else None for x in inputs
            )
            if not any(dt is not None for dt in per_input):
                per_input = None
        self.ops.append(Op(cls, args, params, outs, rg, len(extras), edges, meta, per_input))

    def _operand(self, x):
        if isinstance(x, Tensor):
            return SlotRef(self.slot_of(x))
        if x is None or isinstance(x, (bool, int, float, complex, np.number)):
            return Literal(x)
        self.fail(f"an operand of type {type(x).__name__} is not capturable")
        return Literal(x)

    def _param(self, p, cls):
        if isinstance(p, np.ndarray):
            k = self.by_array.get(id(p))
            if k is not None and self.values[k]._data is p:
                return SlotRef(k)
            t = self.made_arrays.get(id(p))
            if t is not None and t._data is p and id(t) in self.made:
                return SlotRef(self.slot_of(t))  # a factory's index (arange) or fails
            view = self._view_of_known(p)
            if view is not None:
                return view
            if _recording._shape_constants.get(id(p)) is p:
                return p  # declared by its op as computed from shapes alone
            if p.dtype.kind in "biu" and p.ndim:
                # An index or mask array no tensor holds: it may come from a tensor's values
                # (a boolean mask's nonzero()), which other values would change.
                self.fail(f"{cls.__name__} takes an index computed outside the graph")
            # A float constant (a divisor from shapes) or an array an op computed from a
            # tensor's values: the compiler's check on other values tells them apart.
            return p
        if isinstance(p, tuple):
            items = [self._param(q, cls) for q in p]
            return type(p)._make(items) if hasattr(type(p), "_make") else tuple(items)
        if isinstance(p, list):
            return [self._param(q, cls) for q in p]
        if isinstance(p, Tensor):
            return SlotRef(self.slot_of(p))
        if p is None or p is Ellipsis or isinstance(p, _PLAIN):
            return p
        if getattr(type(p), "_immutable_param", False):  # declared never changed
            return p
        # An object the op may change (a cache filled by its forward) would be shared by
        # every call of the generated code.
        self.fail(f"{cls.__name__} takes a {type(p).__name__} parameter")
        return p

    def _view_of_known(self, p: np.ndarray):
        """``p`` as a view (reshape, broadcast, slice) of a captured tensor's array, which
        the generated code rebuilds from that array at each call; None if it is not one."""
        root = p
        while isinstance(root.base, np.ndarray):
            root = root.base
        for k, t in enumerate(self.values):
            a = t._data
            if self.kinds[k] == "const" or a.dtype != p.dtype or not a.flags.c_contiguous:
                continue
            a_root = a
            while isinstance(a_root.base, np.ndarray):
                a_root = a_root.base
            if a_root is not root:
                continue
            offset = p.__array_interface__["data"][0] - a.__array_interface__["data"][0]
            if offset < 0 or offset % a.itemsize:
                continue
            return ViewOf(k, offset, p.shape, p.strides)
        return None

    def side_effect(self, fn, args, cached) -> None:
        """Run the update (eagerly, with ``cached``), allowing its version bumps, and log it
        to be replayed; the updated tensors' arrays before it are kept (``restore``)."""
        if self._other_thread():  # another thread's update: just made
            fn(*args, cached=cached)
            return
        refs = [SlotRef(self.slot_of(a)) if isinstance(a, Tensor) else a for a in args]
        tensors = [a for a in args if isinstance(a, Tensor)]
        self.before += [(t, t._data.copy()) for t in tensors]
        self._bumps_allowed += 1
        try:
            fn(*args, cached=cached)
        finally:
            self._bumps_allowed -= 1
        for t in tensors:  # the change is part of the graph now
            k = self.slot_of(t)
            self.versions[k] = t._vc[0] if t._vc is not None else 0
        if self._error is None:
            self.ops.append(SideEffectOp(fn, refs))

    def check_values(self, fn, args) -> None:
        """``fn(*args)`` checked values (``recording.check_values``): the code checks too."""
        if self._error is None and not self._other_thread():
            self.ops.append(CheckOp(fn, [self._param(a, fn) for a in args]))

    def untracked_call(self, fn, args, out: Tensor) -> None:
        """``out = fn(*args)`` (``recording.untracked_call``): the generated code calls it."""
        if not self._other_thread():
            self._call_op(fn, args, {}, out)

    def rebinds(self, t) -> bool:
        """Can an in-place op on ``t`` be captured as an op whose result ``t`` then names?
        Only for a value made inside the region (not an input, parameter or buffer)."""
        k = self.by_tensor.get(id(t))
        return k is not None and self.kinds[k] == "op" and self._error is None

    def same_value(self, copy, t) -> None:
        """``copy`` holds ``t``'s current value (a snapshot before an in-place op)."""
        self.made.pop(id(copy), None)
        self.by_tensor[id(copy)] = self.by_tensor[id(t)]
        self._keep.append(copy)  # its id must stay unique while the capture runs

    def rebind(self, t, result, store) -> None:
        """``t`` was changed in place to ``result``'s value (``store`` writes it, as eager
        code does); from now on ``t`` stands for ``result``'s slot."""
        k = self.by_tensor[id(t)]
        self._bumps_allowed += 1
        try:
            store()
        finally:
            self._bumps_allowed -= 1
        del k
        for j, v in enumerate(self.values):  # the slot ``t`` was captured in: its new version
            if v is t:
                self.versions[j] = t._vc[0] if t._vc is not None else 0
        kr = self.by_tensor.get(id(result))
        if kr is None:
            self.fail("an in-place operation whose result is not a declared op's")
            return
        self.by_tensor[id(t)] = kr

    def _outside(self, t) -> bool:
        """Is ``t`` a tensor from before the capture that takes no gradient (a buffer)?"""
        if not isinstance(t, Tensor) or t._rg or id(t) in self.made:
            return False
        k = self.by_tensor.get(id(t))
        return k is None or self.kinds[k] == "attr"

    def restore(self) -> None:
        """Undo the captured run's updates (the generated code will make them again)."""
        self.after = [(t, t._data.copy()) for t, _ in self.before]
        for t, a in reversed(self.before):
            np.copyto(t._data, a)

    def redo(self) -> None:
        """The captured (eager) run's updates back, when its result is the one returned."""
        for t, a in getattr(self, "after", ()):
            np.copyto(t._data, a)

    def unsupported(self, what: str) -> None:
        if not self._other_thread():
            self.fail(f"{what} is not capturable")

    def fail(self, reason: str) -> None:
        """Remember why the capture is unusable; raise it when strict."""
        if self._error is None:
            self._error = GraphBreak(reason, _user_line())
        if self.strict:
            raise self._error

    # -- the context --------------------------------------------------------------------

    def __enter__(self):
        if _recording._on or _recording._capture:
            raise GraphBreak("forward-mode AD or another capture is active")
        self._hook()
        _recording._capture[:] = [self]
        _recording.refresh_on()
        return self

    def __exit__(self, *exc) -> None:
        _recording._capture.clear()
        _recording.refresh_on()
        self._unhook()

    def check(self) -> None:
        """Raise the first reason the capture is unusable (also seen after the block ran)."""
        if self._error is not None:
            raise self._error
        for k, t in enumerate(self.values):
            now = t._vc[0] if t._vc is not None else 0
            if now != self.versions[k]:
                raise GraphBreak("an in-place operation changed a tensor inside the region")
            aux = t._aux
            if aux is not None and getattr(aux, "retains_grad", False) and self.kinds[k] == "op":
                raise GraphBreak("retain_grad() inside the compiled region is not capturable")

    def _hook(self) -> None:
        """Watch the block through hooks, not by replacing anything: Tensor's hooks for
        tensors made outside the declared ops and for in-place changes, and a
        TorchFunctionMode that sees each public call (this thread's only)."""
        made, made_arrays = self.made, self.made_arrays
        capture = self

        def on_wrap(t):
            if threading.get_ident() == capture._thread:
                made[id(t)] = (t, _outermost_ember_function(sys._getframe(2)))
                made_arrays[id(t._data)] = t

        def on_bump(t):
            if threading.get_ident() == capture._thread and not capture._bumps_allowed:
                capture.fail(f"{_LEAKS['_bump']} is not capturable")

        self._hooks = (on_wrap, on_bump)
        _tensor_module.WRAP_HOOKS.append(on_wrap)
        _tensor_module.BUMP_HOOKS.append(on_bump)
        self._mode = _CaptureMode(self)
        self._mode.__enter__()

    def _unhook(self) -> None:
        self._mode.__exit__(None, None, None)
        on_wrap, on_bump = self._hooks
        _tensor_module.WRAP_HOOKS.remove(on_wrap)
        _tensor_module.BUMP_HOOKS.remove(on_bump)

    def public_call(self, func, args, kwargs):
        """A public function or method called in the block (``_CaptureMode``): values that
        leave the graph fail the capture; an in-place update of a tensor from outside (a
        buffer) is a side effect; a tensor result no declared op made is a call the
        generated code makes again (comparisons, ``argmax``...)."""
        name = getattr(func, "__name__", "")
        reason = _LEAKS.get(name)
        if reason is not None:
            self.fail(f"{reason} is not capturable")
            return func(*args, **kwargs)
        if name in _NOT_CALLS:
            return func(*args, **kwargs)
        impl = getattr(func, "_ember_impl", None)
        if impl is not None and not _top_level(func):
            # nn.functional, linalg...: seen through, the calls they make are the ones
            # logged (the mode is back on the stack while their implementation runs)
            with self._mode:
                return impl(*args, **kwargs)
        if name.endswith("_") and not name.startswith("__") and args and self._outside(args[0]):
            # A buffer updated in place (num_batches_tracked += 1): a side effect.
            def update(*a, cached=None):
                func(*a, **kwargs)

            update.__name__ = name
            self.side_effect(update, args, None)
            return args[0]
        out = func(*args, **kwargs)
        if isinstance(out, Tensor) and id(out) in self.made and not out._rg:
            self._call_op(func, args, kwargs, out)
        return out

    def _call_op(self, fn, args, kwargs, out: Tensor) -> None:
        if self._error is not None:
            return
        src = self.by_array.get(id(out._data))
        if src is not None and self.values[src]._data is out._data:
            return  # an alias (detach): slot_of handles it
        call_args = [self._call_arg(a) for a in args]
        call_kwargs = {k: self._call_arg(v) for k, v in kwargs.items()}
        if self._error is not None:
            return
        self._casts.clear()  # the call replays its own promotion
        self.made.pop(id(out), None)
        k = self._new_slot(out, "op")
        self.ops.append(CallOp(fn, call_args, call_kwargs, [k]))

    def _call_arg(self, a):
        if isinstance(a, Tensor):
            return SlotRef(self.slot_of(a))
        if isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
            self.fail("a list of tensors passed to a function that is not a declared op")
        return copy.deepcopy(a)  # the caller may change a list it passed, later


def _top_level(func) -> bool:
    """A function of the torch namespace or a Tensor method (what the capture logs)."""
    if getattr(func, "__qualname__", "").startswith("Tensor."):
        return True
    for module, namespace in _overrides.NAMESPACES:
        if module == "torch":
            return namespace.get(getattr(func, "__name__", None)) is func
    return False


class _CaptureMode(TorchFunctionMode):
    """The capture's view of public calls: the outermost ones only (a mode is off its
    stack while it handles a call), in the capturing thread only (modes are per thread)."""

    def __init__(self, capture: Capture) -> None:
        super().__init__()
        self.capture = capture

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return self.capture.public_call(func, args, kwargs or {})
