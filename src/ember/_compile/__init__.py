"""``ember.compile``: capture a function's ops once per input signature, run generated code.

The first call with a new signature (tensor shapes, dtypes and ``requires_grad``; other
arguments by value; grad mode; for a module its training flags and parameters) runs the
function eagerly while ``capture.Capture`` records the declared ops it applies; ``codegen``
turns that list into a forward and a backward function of arrays. Later calls with the
same signature run the generated forward while the Python values the function read besides
its arguments (globals, closure variables, attributes: ``guards``) are unchanged; a changed
one recompiles. The outputs hang on the eager graph through
one ``CompiledFunctionBackward`` node whose backward is the generated backward, so
``loss.backward()``, hooks on parameters and optimizers work unchanged.

A signature whose capture fails (a graph break: ``.item()``, data-dependent control flow,
an op that is not a declaration, an in-place change...) runs eagerly, and ``explain``
reports why; ``fullgraph=True`` raises the reason instead. The generated code of a
signature is checked against the eager result of the first call before it is used.
``autograd.grad`` inside the function is captured too: its backward runs as recorded ops.

Where gcc is available, runs of elementwise statements of the generated code (forward,
and backward rules) become fused C kernels (``kernels``), used once they agree with the
NumPy code on the call's values and on other values; ``explain`` says when they are not.
"""

from __future__ import annotations

import functools
import weakref

import numpy as np

from .. import _dtype
from .. import _mode
from .._creation import default_generator
from .._mode import state as _state
from .._tensor import Tensor
from ..autograd import recording as _recording
from ..autograd.engine import retaining_graph
from ..autograd.graph import SECOND_BACKWARD_MSG, Node, SavedValue, edge_of
from ..nn import Module
from ..nn.modules.module import intercept_module_calls
from .._aten._core import QUIET, quiet_reset, quiet_set
from .._aten.reduction import _StructSeq
from .capture import Capture, GraphBreak
from . import guards as _guards
from . import kernels
from .codegen import CompiledGraph, generate

__all__ = ["compile", "GraphBreak", "OptimizedModule"]

_new = object.__new__
CACHE_SIZE_LIMIT = 8  # torch._dynamo.config.cache_size_limit
DOUBLE_BACKWARD_MSG = "torch.compile with aot_autograd does not currently support double backward"


class _Fallback:
    """A signature that runs eagerly, and why."""

    __slots__ = ("reason", "where", "signature", "guards", "recompiled")

    def __init__(self, reason: str, where: str = "", signature: str = "") -> None:
        self.reason = reason
        self.where = where
        self.signature = signature
        self.guards = _ALWAYS
        self.recompiled = ""


def _describe(tensors: list) -> str:
    """The inputs of a signature and the grad mode, for reports."""
    shapes = ", ".join(f"{list(t._data.shape)}{' requires_grad' if t._rg else ''}" for t in tensors)
    return f"({shapes}){'' if _state.enabled else ' no_grad'}"


# -- the node joining compiled code to the eager graph --------------------------------------


class CompiledFunctionBackward(Node):
    """Backward of one compiled call: runs the generated backward on the saved values."""

    __slots__ = ()
    _multi_output = True
    _fast = False

    def backward(self, grads, ctx, *inputs):
        graph = ctx[0]
        if retaining_graph():
            saved = list(ctx[1])
        else:  # the generated code frees each array after its last use
            saved, ctx[1] = ctx[1], None
            if saved is None:
                raise RuntimeError(SECOND_BACKWARD_MSG)
        as_tensors = any(isinstance(g, Tensor) for g in grads)
        arrays = [g._data if isinstance(g, Tensor) else g for g in grads]
        token = quiet_set(QUIET)
        try:
            results = graph.backward(arrays, saved)
        finally:
            quiet_reset(token)
        if not as_tensors:
            return results
        # create_graph=True: first order works, a second backward raises (as torch's).
        grad_edges = tuple(edge_of(g) for g in grads if isinstance(g, Tensor))
        return _no_double_backward(self.next_functions + grad_edges, results)


class CompiledFunctionBackwardBackward(Node):
    """What a backward through a compiled backward meets: torch's error."""

    __slots__ = ()
    _multi_output = True
    _fast = False

    def backward(self, grads, *saved):
        raise RuntimeError(DOUBLE_BACKWARD_MSG)


def _no_double_backward(edges: tuple, results):
    """The gradients as Tensors that require grad (their inputs do) through a node whose
    backward raises torch's error."""
    tensors = [None if r is None else Tensor._wrap(np.asarray(r)) for r in results]
    edges = tuple(e for e in edges if e[0] is not None)
    if _state.enabled and edges:
        node = _new(CompiledFunctionBackwardBackward)
        node.next_functions = edges
        node._meta = tuple((t._data.shape, t._data.dtype) for t in tensors if t is not None)
        node._hooks = None
        node._params = ()
        node._saved = node._versions = ()
        nr = 0
        for t in tensors:
            if t is not None and t._data.dtype.kind in "fc":
                t.grad_fn, t._rg, t._output_nr = node, True, nr
                nr += 1
    return tuple(tensors)


# -- flattening calls -------------------------------------------------------------------


def _flatten(obj, tensors: list):
    """The structure of ``obj`` with its tensors replaced by their positions in ``tensors``."""
    if isinstance(obj, Tensor):
        tensors.append(obj)
        a = obj._data  # strides too: parameters may be views of an input's array
        return (Tensor, a.shape, a.dtype, a.strides, obj._rg)
    if isinstance(obj, (list, tuple)):
        return (type(obj), tuple(_flatten(x, tensors) for x in obj))
    if isinstance(obj, dict):
        return (dict, tuple((k, _flatten(v, tensors)) for k, v in obj.items()))
    hash(obj)  # TypeError: an unhashable argument (the call runs eagerly)
    return (type(obj), obj)


def _out_spec(obj, slots: list, cap: Capture):
    """The structure of a result with its tensors replaced by output indices."""
    if isinstance(obj, Tensor):
        k = cap.by_tensor.get(id(obj))
        if k is None:
            k = cap.slot_of(obj)
        slots.append(k)
        return ("T", len(slots) - 1)
    if type(obj) in (list, tuple) or _rebuildable_tuple(type(obj)):
        return (type(obj), [_out_spec(x, slots, cap) for x in obj])
    if isinstance(obj, dict):
        return (dict, [(k, _out_spec(v, slots, cap)) for k, v in obj.items()])
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return ("C", obj)
    raise GraphBreak(f"returning a {type(obj).__name__} from a compiled function")


def _rebuildable_tuple(kind) -> bool:
    """A named tuple (``_make``) or a ``torch.return_types`` result (``max(dim)``...)."""
    return issubclass(kind, tuple) and (hasattr(kind, "_make") or issubclass(kind, _StructSeq))


def _build(spec, outs):
    kind = spec[0]
    if kind == "T":
        return outs[spec[1]]
    if kind == "C":
        return spec[1]
    if kind is dict:
        return {k: _build(v, outs) for k, v in spec[1]}
    if hasattr(kind, "_make"):
        return kind._make(_build(s, outs) for s in spec[1])
    return kind(_build(s, outs) for s in spec[1])


class _Entry:
    """One signature's compiled graph, how to rebuild the result, and its guards."""

    __slots__ = ("graph", "spec", "attr_rg", "signature", "note", "guards", "recompiled")

    def __init__(self, graph: CompiledGraph, spec, signature: str = "") -> None:
        self.graph = graph
        self.spec = spec
        self.signature = signature
        self.attr_rg = tuple(t._rg for t in graph.attrs)
        self.note = ""  # why the code calls no fused kernels, when it could have
        self.guards = _ALWAYS
        self.recompiled = ""  # the guard whose failure made this entry


_ALWAYS = _guards.GuardSet()  # no reads to check


# -- fused kernels -------------------------------------------------------------------------


def _with_kernels(entry: _Entry, cap: Capture, slots: list, tensors: list) -> str:
    """Replace the entry's NumPy code by code with fused C kernels when they can be built
    and agree with it, forward and backward, on the call's values and on other values
    (within rounding: the kernels' libm is not NumPy's); else say why not."""
    why = kernels.available()
    if why:
        return f"no fused kernels: {why}"
    plain = entry.graph
    try:
        fused = generate(cap, slots, kernels=True)
    except Exception as exc:  # a C compiler error: the NumPy code stays
        return f"no fused kernels: {type(exc).__name__}: {str(exc)[:200]}"
    if not fused.kernels and not fused.lowered:
        return ""
    rng = np.random.default_rng(20261125)
    bits = default_generator._rng.bit_generator
    state = bits.state  # every run draws the same numbers (dropout), and the state stays
    try:
        for values in ("call", "other"):
            arrays = [tensors[i]._data for i in plain.arg_positions]
            arrays += [t._data for t in plain.attrs]
            if values == "other":
                arrays = [_perturbed(Tensor._wrap(a), rng)._data for a in arrays]
            if not _close_runs(plain, fused, arrays, rng, state):
                return "no fused kernels: they differ from the NumPy code beyond rounding"
    except Exception as exc:
        return f"no fused kernels: {type(exc).__name__} when checking them: {str(exc)[:200]}"
    finally:
        bits.state = state
    entry.graph = fused
    return ""


def _close_runs(plain: CompiledGraph, fused: CompiledGraph, arrays: list, rng, state) -> bool:
    """Do both graphs give the same outputs and gradients within rounding? Each runs on
    its own copies of the arrays (side effects, such as running statistics, write there),
    drawing random numbers from the generator ``state``."""

    def forward(graph):
        default_generator._rng.bit_generator.state = state
        return graph.forward(*[a.copy() for a in arrays])

    token = quiet_set(QUIET)
    try:
        outs_p, saved_p = forward(plain)
        outs_f, saved_f = forward(fused)
        if not all(_close(a, b) for a, b in zip(outs_p, outs_f)):
            return False
        if not plain.grad_inputs or not any(plain.out_rg):
            return True
        grads = []
        for rg, (shape, dtype) in zip(plain.out_rg, plain.out_meta):
            g = None
            if rg and dtype.kind == "f":
                g = rng.standard_normal(shape).astype(dtype)
            grads.append(g)
        gp = plain.backward(list(grads), list(saved_p))
        gf = fused.backward(list(grads), list(saved_f))
        # its fallback too (run when an output has no gradient), on another forward's values
        _, saved_n = forward(fused)
        gn = fused.backward_numpy(list(grads), list(saved_n))
        floor = _rounding_floor(gp)
        return all(
            _same_gradient(a, b, floor) and _same_gradient(a, c, floor)
            for a, b, c in zip(gp, gf, gn)
        )
    finally:
        quiet_reset(token)


def _rounding_floor(grads) -> dict:
    """Per float dtype, the absolute difference that counts as rounding in any of a graph's
    gradients: 64 units of the last place of its largest gradient value. A gradient that is
    zero in exact arithmetic (a convolution's bias before a BatchNorm) comes out as rounding
    noise of the terms it sums, which differs between loops that sum in another order; no
    relative tolerance of its own tiny values covers that."""
    floor: dict = {}
    for g in grads:
        if isinstance(g, np.ndarray) and g.dtype.kind == "f" and g.size:
            top = float(np.max(np.abs(g), initial=0.0, where=np.isfinite(g)))
            floor[g.dtype] = max(floor.get(g.dtype, 0.0), 64 * float(np.finfo(g.dtype).eps) * top)
    return floor


def _same_gradient(a, b, floor: dict) -> bool:
    """Equal within rounding (``floor``: see ``_rounding_floor``), None counting as zeros."""
    if a is None or b is None:
        return (a is None or not np.any(a)) and (b is None or not np.any(b))
    return _close(a, b, floor.get(np.asarray(a).dtype, 0.0))


def _close(a, b, atol: float = 0.0) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind not in "fc":
        return bool(np.array_equal(a, b))
    rtol = 1e-9 if a.dtype.itemsize >= 8 else 2e-4
    finite = np.isfinite(a)
    if not np.array_equal(finite, np.isfinite(b)) or not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    infinite = ~finite & ~np.isnan(a)
    if infinite.any() and not np.array_equal(a[infinite], b[infinite]):
        return False
    x, y = a[finite].astype(np.float64), b[finite].astype(np.float64)
    scale = float(np.max(np.abs(x))) if x.size else 0.0
    return bool(np.all(np.abs(x - y) <= rtol * (np.abs(x) + scale) + max(atol, 1e-300)))


# -- the compiled callable ----------------------------------------------------------------


def _parts(module) -> list:
    """(name, submodule) for the submodules ``module``'s forward calls: its children, and
    the members of containers without a forward of their own (ModuleList, ModuleDict)."""
    out = []
    for name, child in module.named_children():
        if type(child).forward is Module.forward:
            out += [(f"{name}.{n}", c) for n, c in _parts(child)]
        else:
            out.append((name, child))
    return out


# Every compiled function alive, for torch.compiler.reset() / torch._dynamo.reset()
_ALL: weakref.WeakSet = weakref.WeakSet()


def reset() -> None:
    """Forget every compiled function's captures (each captures again on its next call)."""
    for compiled in list(_ALL):
        compiled.cache.clear()
        compiled.parts.clear()
        compiled.n_entries = 0


class _CompiledFunction:
    """``fn`` compiled: a cache of captures keyed by call signature."""

    def __init__(self, fn, fullgraph: bool, module=None) -> None:
        _ALL.add(self)
        self.fn = fn
        self.fullgraph = fullgraph
        self.module = module
        self.cache: dict = {}  # call key -> [entry], tried in order: the first whose guards pass
        self.n_entries = 0
        self.parts: dict = {}  # id(submodule) -> (name, its compiled forward), see _eager

    def key(self, args, kwargs, tensors: list):
        try:
            structure = (_flatten(args, tensors), _flatten(kwargs, tensors))
        except TypeError:
            return None
        # Global modes the captured ops read: grad mode, the default dtype (factories),
        # autocast regions (casts before matmuls and convolutions).
        key = (structure, _state.enabled, _state.inference, _dtype._default[0])
        if _mode.autocast_active[0]:
            key += (tuple(_mode.autocast.enabled.items()), tuple(_mode.autocast.dtype.items()))
        if self.module is not None:
            key += (_guards.module_state(self.module),)
        return key

    def __call__(self, *args, **kwargs):
        # torch.compiler.is_compiling() is True for the whole call (the capture, the checks
        # that run the function again, an eager fallback): every call takes one branch
        _state.compiling += 1
        try:
            return self._call(*args, **kwargs)
        finally:
            _state.compiling -= 1

    def _call(self, *args, **kwargs):
        if _recording._on:  # forward AD, or an enclosing capture (which inlines this call)
            return self.fn(*args, **kwargs)
        tensors: list = []
        key = self.key(args, kwargs, tensors)
        if key is None:
            return self.fn(*args, **kwargs)
        entries = self.cache.get(key)
        if entries is None:
            return self._compile(key, args, kwargs, tensors)
        for entry in entries:
            if entry.guards.check():
                break
        else:  # a value the captures read changed: capture again
            return self._compile(key, args, kwargs, tensors, entries[-1].guards.failure())
        if type(entry) is _Fallback:
            return self._eager(args, kwargs)
        if entry.attr_rg != tuple(t._rg for t in entry.graph.attrs):
            return self._compile(key, args, kwargs, tensors)
        try:
            return self._run(entry, tensors)
        except Exception:  # bad values (a singular matrix...): eager raises torch's error
            return self.fn(*args, **kwargs)

    def _eager(self, args, kwargs):
        """A module's call that could not be captured whole: its forward runs eagerly, and
        the submodules it calls run compiled (each captured on its own, with the same rules
        down the tree), so a graph break costs only the part of the model around it. The
        calls are routed through ``Module.__call__``'s interceptor hook: nothing on the
        modules is replaced."""
        if self.module is None or self.fullgraph:
            return self.fn(*args, **kwargs)
        for name, child in _parts(self.module):
            entry = self.parts.get(id(child))
            if entry is None or entry[1].module is not child:
                self.parts[id(child)] = (name, _CompiledFunction(child.__call__, False, child))
        with intercept_module_calls(_PartsInterceptor(self.parts)):
            return self.fn(*args, **kwargs)

    def _run(self, entry: _Entry, tensors: list):
        graph = entry.graph
        arrays = [tensors[i]._data for i in graph.arg_positions]
        arrays += [t._data for t in graph.attrs]
        token = quiet_set(QUIET)
        try:
            outs, saved = graph.forward(*arrays)
        finally:
            quiet_reset(token)
        results = []
        inputs = [tensors[i] for i in graph.arg_positions] + graph.attrs
        for k, out in enumerate(outs):
            alias = graph.out_alias[k]
            if alias is not None:
                results.append(inputs[alias])
                continue
            if type(out) is not np.ndarray:
                out = np.asarray(out)
            results.append(Tensor._wrap(out))
        if _state.enabled and graph.grad_inputs and any(graph.out_rg):
            _attach(graph, saved, inputs, results)
        return _build(entry.spec, results)

    def _add(self, key, entry, recompiled: str) -> None:
        entry.recompiled = recompiled
        self.cache.setdefault(key, []).append(entry)
        self.n_entries += 1

    def _compile(self, key, args, kwargs, tensors: list, recompiled: str = ""):
        if self.n_entries >= CACHE_SIZE_LIMIT:
            self._add(key, _Fallback(f"cache_size_limit ({CACHE_SIZE_LIMIT}) reached"), recompiled)
            return self.fn(*args, **kwargs)
        rng_state = default_generator._rng.bit_generator.state
        cap = Capture(strict=self.fullgraph)
        for t in tensors:
            cap.add_input(t)
        reads = _guards.Reads()
        _recording.record_backward.append(True)  # autograd.grad inside: its ops captured
        try:
            with cap:
                with reads:
                    result = self.fn(*args, **kwargs)
                try:
                    slots: list = []
                    spec = _out_spec(result, slots, cap)
                except GraphBreak as e:
                    cap.fail(e.reason)
        finally:
            _recording.record_backward.pop()
        try:
            cap.check()
            covered = [self.module] if self.module is not None else []
            guards = _guards.build(self.fn, reads, _pinned((args, kwargs)), covered)
            graph = generate(cap, slots)
            entry = _Entry(graph, spec, _describe(tensors))
            entry.guards = guards
            default_generator._rng.bit_generator.state = rng_state
            cap.restore()  # side effects (running statistics): the generated code makes them
            try:
                compiled = self._run(entry, tensors)
            except Exception as exc:
                raise GraphBreak(f"the generated code failed: {type(exc).__name__}: {exc}") from exc
            after = default_generator._rng.bit_generator.state
            _same_result(result, compiled)
            self._validate(entry, args, kwargs, tensors, rng_state)
            default_generator._rng.bit_generator.state = after
        except GraphBreak as e:
            cap.redo()  # the eager result is returned: so are its side effects
            if self.fullgraph:
                raise
            self._add(key, _Fallback(e.reason, e.where, _describe(tensors)), recompiled)
            return result
        entry.note = _with_kernels(entry, cap, slots, tensors)
        self._add(key, entry, recompiled)
        return compiled

    def _validate(self, entry: _Entry, args, kwargs, tensors: list, rng_state) -> None:
        """Run the function and the generated code on other values of the same signature
        (floats perturbed, integers and booleans permuted): an array an op computed from a
        tensor's values outside the graph would be frozen in the code and differ here."""
        rng = np.random.default_rng(20261125)
        mapping = {id(t): _perturbed(t, rng) for t in tensors}
        other = [mapping[id(t)] for t in tensors]
        attrs = [(t, t._data) for t in entry.graph.attrs]  # parameters, buffers: swapped too
        for t, _ in attrs:
            t._data = _perturbed(t, rng)._data
        try:
            default_generator._rng.bit_generator.state = rng_state
            try:
                want = self.fn(*_replace(args, mapping), **_replace(kwargs, mapping))
            except Exception as exc:
                raise GraphBreak(
                    f"the capture could not be checked on other values ({type(exc).__name__})"
                ) from exc
            default_generator._rng.bit_generator.state = rng_state
            try:
                got = self._run(entry, other)
            except Exception as exc:
                raise GraphBreak("the generated code fails on other values") from exc
            try:
                _same_result(want, got)
            except GraphBreak:
                raise GraphBreak(
                    "the function depends on tensor values that ember could not trace "
                    "(an op read a tensor's data outside the declared ops)"
                ) from None
        finally:
            for t, a in attrs:
                t._data = a

    @property
    def entries(self) -> list:
        """Every compiled or eager entry, in the order they were made."""
        return [e for entries in self.cache.values() for e in entries]

    # -- reports ------------------------------------------------------------------------

    def explain(self) -> str:
        """What was compiled and what runs eagerly, with the reasons and source lines."""
        lines = []
        for n, entry in enumerate(self.entries):
            if type(entry) is _Fallback:
                lines.append(f"signature {n} {entry.signature}: runs eagerly: {entry.reason}")
                if entry.where:
                    lines.append(f"    at {entry.where}")
            else:
                g = entry.graph
                lines.append(
                    f"signature {n} {entry.signature}: compiled: {g.n_ops} ops, "
                    f"{len(g.out_slots)} outputs, "
                    f"{len(g.grad_inputs)} gradient inputs, {g.kernels} fused kernels"
                    + (f", C loops for {', '.join(g.lowered)}" if g.lowered else "")
                    + f", {len(entry.guards)} guards"
                )
                if entry.note:
                    lines.append(f"    {entry.note}")
            if entry.recompiled:
                lines.append(f"    recompiled: {entry.recompiled} changed")
        for name, part in self.parts.values():  # called by signatures that run eagerly
            if part.cache:
                lines.append(f"submodule {name}, compiled on its own:")
                lines += ["    " + ln for ln in part.explain().splitlines()]
        return "\n".join(lines) if lines else "nothing compiled yet"

    @property
    def code(self) -> str:
        """The generated source of the most recent compiled signature."""
        for entry in reversed(self.entries):
            if type(entry) is not _Fallback:
                return entry.graph.code
        return ""


def _pinned(obj) -> list:
    """The objects in a call's arguments that its key holds by identity (not tensors,
    containers or values): what the function reads from them is guarded."""
    if isinstance(obj, Tensor):
        return []
    if isinstance(obj, (list, tuple)):
        return [p for x in obj for p in _pinned(x)]
    if isinstance(obj, dict):
        return [p for x in obj.values() for p in _pinned(x)]
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
        return []
    return [obj]


class _PartsInterceptor:
    """Sends a call of one of a module's parts to its compiled form (``_eager``); the
    compiled form's own call of the part, and every other module call, run as usual."""

    def __init__(self, parts: dict) -> None:
        self.parts = parts
        self.running: set = set()

    def module_call(self, module, forward, args, kwargs):
        entry = self.parts.get(id(module))
        if entry is None or entry[1].module is not module or id(module) in self.running:
            return forward(*args, **kwargs)
        self.running.add(id(module))
        try:
            return entry[1](*args, **kwargs)
        finally:
            self.running.discard(id(module))

    def module_getattr(self, module, name, value):
        return value


def _perturbed(t: Tensor, rng) -> Tensor:
    """Other values for ``t``, in its domain: its elements permuted (so masks and indices
    computed from them move), floats also scaled by up to 10% (signs kept)."""
    a = t._data
    b = rng.permutation(a.reshape(-1)).reshape(a.shape) if a.size > 1 else a.copy()
    if a.dtype.kind in "fc" and a.size:
        b = (b * (1 + 0.1 * rng.uniform(-1, 1, a.shape))).astype(a.dtype)
    out = Tensor._wrap(b)
    out._rg = t._rg
    return out


def _replace(obj, mapping: dict):
    """``obj`` (args, kwargs) with its tensors replaced through ``mapping``."""
    if isinstance(obj, Tensor):
        return mapping.get(id(obj), obj)
    if type(obj) in (list, tuple):
        return type(obj)(_replace(x, mapping) for x in obj)
    if isinstance(obj, dict):
        return {k: _replace(v, mapping) for k, v in obj.items()}
    return obj


def _same_result(eager, compiled) -> None:
    """The generated code's first result must equal the eager run's (else: a fallback)."""
    if isinstance(eager, Tensor):
        a, b = eager._data, compiled._data
        if a.shape != b.shape or a.dtype != b.dtype or not np.array_equal(a, b, equal_nan=True):
            raise GraphBreak("the generated code does not reproduce the eager result")
        if eager._rg != compiled._rg:
            raise GraphBreak("the generated code does not reproduce requires_grad")
    elif isinstance(eager, (list, tuple)):
        for x, y in zip(eager, compiled):
            _same_result(x, y)
    elif isinstance(eager, dict):
        for k in eager:
            _same_result(eager[k], compiled[k])


def _attach(graph: CompiledGraph, saved, inputs: list, results: list) -> None:
    node = _new(CompiledFunctionBackward)
    node.next_functions = tuple(edge_of(inputs[i]) for i in graph.grad_inputs)
    node._meta = tuple(graph.out_meta)
    node._hooks = None
    node._params = ()
    # The inputs the backward reads are saved as tensors with their versions: an in-place
    # change before backward raises torch's error (the engine checks), as eagerly.
    read = [inputs[i] for i in graph.saved_inputs if inputs[i]._vc is not None]
    node._saved = (SavedValue([graph, list(saved)]), *read)
    node._versions = (0, *(t._vc[0] for t in read))
    for k, t in enumerate(results):
        if graph.out_rg[k] and graph.out_alias[k] is None:
            t.grad_fn, t._rg, t._output_nr = node, True, k


# -- the public API ----------------------------------------------------------------------


def compile(
    model=None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend="inductor",
    mode: str | None = None,
    options: dict | None = None,
    disable: bool = False,
):
    """Compile a function or module (torch.compile's API); also a decorator.

    Each new signature of a call is captured once (the declared ops it applies) and
    replaced by generated NumPy code; what cannot be captured runs eagerly (see
    ``explain``), or raises under ``fullgraph=True``. ``dynamic``, ``backend``, ``mode``
    and ``options`` are accepted for compatibility.

    Example:
        >>> import ember
        >>> f = ember.compile(lambda x: (x.sin() * 2).sum())
        >>> x = ember.ones(3, requires_grad=True)
        >>> f(x).backward()
        >>> x.grad
        tensor([1.0806, 1.0806, 1.0806])
    """
    if model is None:
        return functools.partial(
            compile,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
        )
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph)
    if not callable(model):
        raise RuntimeError("model must be a callable")
    compiled = _CompiledFunction(model, fullgraph)

    @functools.wraps(model)
    def compiled_fn(*args, **kwargs):
        return compiled(*args, **kwargs)

    compiled_fn._ember_compiled = compiled
    compiled_fn.explain = compiled.explain
    compiled_fn._torchdynamo_orig_callable = model
    return compiled_fn


class OptimizedModule(Module):
    """A module whose calls run compiled (torch's ``OptimizedModule``): its parameters,
    ``state_dict`` (under ``_orig_mod.``) and attributes are the original module's."""

    def __init__(self, mod, fullgraph: bool = False) -> None:
        super().__init__()
        self._orig_mod = mod
        self._compiled = _CompiledFunction(mod.__call__, fullgraph, module=mod)

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name in ("_orig_mod", "_compiled"):
                raise
            return getattr(self._orig_mod, name)

    def explain(self) -> str:
        """What was compiled and what runs eagerly (see ``compile``)."""
        return self._compiled.explain()
