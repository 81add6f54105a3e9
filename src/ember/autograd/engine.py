"""The backward pass: an iterative walk over the recorded graph.

1. ``_dependencies``: discover every node reachable from the roots and count, for each,
   how many edges point at it (its consumers).
2. ``_execute``: run nodes whose consumers have all delivered their gradients (count
   reached zero), summing gradients that arrive for the same output in a per-node buffer,
   and release each node's saved values after it ran, unless ``retain_graph``.
3. ``_run_special``: what only some nodes need (hooks, leaves, ``autograd.grad``'s
   captured edges, multi-output nodes, anomaly checks), kept off the fast path that plain
   single-output op nodes take.

Where gcc is present, the package's compiled core (``ember._compile.core``) puts a C
version of ``_execute`` (and of ``recording.record``) in place on the first backward pass:
the same loop on the same objects, handing every node off the fast path to
``_run_special`` here. This Python code stays, and runs wherever C cannot.

No recursion, so graph depth is bounded only by memory. The engine knows no op: it calls
``node.backward`` and reduces each incoming gradient to the recorded output shape/dtype,
which is where gradients of broadcast operands are summed back.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from .._mode import dispatch_count, dispatch_state
from .._mode import state as _mode
from .._tensor import DATA_CLASSES, Tensor, _legacy_type_name, wrap_data
from . import anomaly_mode
from .graph import (
    _FREED,
    AccumulateGrad,
    GraphRoot,
    Node,
    _raise_modified,
    init_node,
    sum_to_shape,
)

# References to a gradient array held by the engine itself when it reaches a leaf: the
# buffer list, _accumulate's argument, and getrefcount's own argument.
_STEAL_REFS = 3

# The profiler's hook on backward nodes: ``[observer]`` while one is on (its ``enter(node)``
# and ``exit(node, results)`` bracket each node run), else empty. Checked once per backward
# call (``_Job.plain``): with it empty, the fast path is untouched.
_observer: list = []

# What the package does once, on the first backward pass (``ember._first_backward``: the
# compiled core, which may put C functions in the place of ``_execute`` and of
# ``recording.record``, and malloc's settings for training). This layer only calls it.
_first_backward_hook: list = []


def set_first_backward_hook(fn) -> None:
    """Have the first backward pass call ``fn()`` before it runs."""
    _first_backward_hook[:] = [fn]


def run_backward(
    roots: list,
    root_grads: list,
    retain_graph: bool,
    create_graph: bool,
    capture: list | None = None,
    accumulate_into: set | None = None,
):
    """Propagate ``root_grads`` from the edges ``roots`` back through the graph.

    roots: ``(node, output_nr)`` edges of the output tensors.
    capture: ``(node, output_nr)`` edges whose total incoming gradient is returned
        instead of accumulated (``autograd.grad``); None means accumulate into leaves.
    accumulate_into: when given (``backward(inputs=...)``), only these AccumulateGrad
        nodes write ``.grad``.
    Returns the captured gradients (None where nothing arrived).
    """
    if _first_backward_hook:
        try:
            hook = _first_backward_hook.pop()
        except IndexError:  # another thread's backward took it first
            hook = None
        if hook is not None:
            hook()
    root = init_node(GraphRoot.__new__(GraphRoot), tuple(roots), ())
    # Under a dispatch mode the rules run on Tensors (as for create_graph, but recording
    # nothing), so that the mode sees the ops the backward runs, as torch's does.
    on_tensors = create_graph or bool(dispatch_count[0] and dispatch_state.modes)
    if on_tensors and not create_graph:
        root_grads = [Tensor._wrap(g) if isinstance(g, np.ndarray) else g for g in root_grads]
    job = _Job(root, retain_graph, on_tensors, capture, accumulate_into)
    deps = _dependencies(root)
    prev_mode = _mode.enabled
    _mode.enabled = create_graph
    # torch computes 0/0, log(0) and overflow silently (nan/inf); so do the rules, without
    # NumPy's warnings. Once per pass, not per node.
    quiet = np.errstate(all="ignore")
    quiet.__enter__()
    retaining = _retaining.stack
    retaining.append(retain_graph)
    try:
        _execute(job, deps, root_grads)
    finally:
        retaining.pop()
        _mode.enabled = prev_mode
        quiet.__exit__(None, None, None)
    return job.captured


class _Retaining(threading.local):
    """retain_graph of each backward pass running in this thread (innermost last): a node
    that frees what it saved while it runs reads it. Per thread: another thread's pass may
    begin and end inside this one's."""

    def __init__(self) -> None:
        self.stack: list = []


_retaining = _Retaining()


def retaining_graph() -> bool:
    """Whether the backward pass now running keeps saved values (``retain_graph``)."""
    stack = _retaining.stack
    return bool(stack) and stack[-1]


def _dependencies(root: Node) -> dict:
    """For every node reachable from ``root``, the number of edges pointing at it."""
    deps: dict = {}
    stack = [root]
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is None:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                stack.append(nxt)
    return deps


class _Job:
    """What one backward pass was asked to do, for the nodes off the fast path."""

    __slots__ = (
        "root",
        "retain_graph",
        "create_graph",
        "capture",
        "capture_at",
        "captured",
        "needed",
        "accumulate_into",
        "plain",
    )

    def __init__(self, root, retain_graph, create_graph, capture, accumulate_into) -> None:
        self.root = root
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.capture = capture
        self.accumulate_into = accumulate_into
        self.captured = None
        self.capture_at: dict = {}
        self.needed = None
        if capture is not None:
            self.captured = [None] * len(capture)
            for i, (node, nr) in enumerate(capture):
                self.capture_at.setdefault(node, []).append((nr, i))
            self.needed = _needed_nodes(root, set(self.capture_at))
        elif accumulate_into is not None:
            self.needed = _needed_nodes(root, accumulate_into)
        # Plain backward() runs every ordinary node on the fast path in _execute.
        self.plain = (
            capture is None
            and accumulate_into is None
            and not create_graph
            and not anomaly_mode.state.enabled
            and not _observer
        )


def _needed_nodes(root: Node, targets: set) -> set:
    """Nodes from which some target node can be reached (only these need to run)."""
    needed: set = set()
    visited: set = {root}
    # Iterative post-order DFS: a node is needed if it is a target or any child is needed.
    stack = [(root, iter(root.next_functions))]
    while stack:
        node, it = stack[-1]
        advanced = False
        for nxt, _ in it:
            if nxt is None:
                continue
            if nxt not in visited:
                visited.add(nxt)
                stack.append((nxt, iter(nxt.next_functions)))
                advanced = True
                break
            if nxt in needed:
                needed.add(node)
        if advanced:
            continue
        stack.pop()
        if node in targets:
            needed.add(node)
        if node in needed and stack:
            needed.add(stack[-1][0])
    return needed


def _execute(job: _Job, deps: dict, root_grads: list) -> None:
    """The main loop: run ready nodes, deliver their gradients to the next ones."""
    plain = job.plain
    retain_graph = job.retain_graph
    as_tensors = job.create_graph
    buffers: dict = {}
    ready = [(job.root, root_grads)]
    pop = ready.pop
    push = ready.append
    while ready:
        node, grads = pop()
        if plain and node._fast and node._hooks is None:
            # The fast path: a plain op node, its saved arrays unpacked inline.
            g0 = grads[0]
            saved = node._saved
            if g0 is None:
                results = ()
            elif not saved:
                results = node.backward(g0)
            elif saved is _FREED or len(saved) > 2:
                results = node.backward(g0, *node._unpack_saved(False))
            elif len(saved) == 1:
                item = saved[0]
                if item._vc[0] != node._versions[0]:
                    _raise_modified(node, item, node._versions[0])
                results = node.backward(g0, item._data)
            else:
                item, item2 = saved
                v, v2 = node._versions
                if item._vc[0] != v or item2._vc[0] != v2:
                    node._unpack_saved(False)  # raises torch's error for the changed one
                results = node.backward(g0, item._data, item2._data)
            if type(results) is not tuple:
                results = (results,)
            if saved and not retain_graph:
                node._saved = _FREED
        else:
            results = _run_special(job, node, grads)
        edges = node.next_functions
        if len(results) != len(edges):
            results = (tuple(results) + (None,) * len(edges))[: len(edges)]
        # Deliver in reverse so the first input's node runs first (LIFO): a leaf fed by
        # the same array as its sibling then sees it unshared and can adopt it.
        for (nxt, nr), g in zip(reversed(edges), reversed(results)):
            if nxt is None:
                continue
            d = deps[nxt] - 1
            if g is not None:
                meta = nxt._meta
                shape, dt = meta[nr]
                if as_tensors:
                    g = _fit(g, shape, dt, True)
                else:  # _fit for arrays, inlined: this runs for every edge
                    if g.shape != shape:
                        g = sum_to_shape(g, shape)
                    if not shape and type(g) is not np.ndarray:
                        g = np.asarray(g)  # NumPy gives scalars for 0-d results
                    if g.dtype != dt:
                        g = _cast(g, dt)
                if d == 0 and len(meta) == 1 and nxt not in buffers:
                    # Sole (or last) consumer of a single-output node: no buffer needed.
                    deps[nxt] = 0
                    push((nxt, [g]))
                    continue
                buf = buffers.get(nxt)
                if buf is None:
                    buffers[nxt] = buf = [None] * len(meta)
                    buf[nr] = g
                elif buf[nr] is None:
                    buf[nr] = g
                else:
                    buf[nr] = _add(buf[nr], g)
            deps[nxt] = d
            if d == 0:
                buf = buffers.pop(nxt, None)
                # A node nothing reached still runs (as a no-op) so its inputs are released.
                push((nxt, buf if buf is not None else [None] * len(nxt._meta)))
        # Drop the loop's own references so a leaf can adopt its gradient unshared.
        g = g0 = results = buf = None


def _fit(g, shape: tuple, np_dtype, as_tensors: bool):
    """Reduce a gradient to the shape and dtype its destination recorded."""
    if g.shape != shape:
        g = sum_to_shape(g, shape)
    if as_tensors:
        if g._data.dtype != np_dtype:
            if g._data.dtype.kind == "c" and np_dtype.kind != "c":
                g = g.real  # torch keeps the real part of a real input's gradient
            g = g.to(np_dtype)
        return g
    if not shape and type(g) is not np.ndarray:
        g = np.asarray(g)  # NumPy gives scalars for 0-d results
    if g.dtype != np_dtype:
        g = _cast(g, np_dtype)
    return g


def _cast(g: np.ndarray, np_dtype) -> np.ndarray:
    """``g`` in its destination's dtype; a complex gradient of a real input keeps its real
    part (torch's rule), without NumPy's ComplexWarning."""
    if g.dtype.kind == "c" and np_dtype.kind != "c":
        g = g.real
    return g.astype(np_dtype, copy=False)


def _run_special(job: _Job, node, grads):
    """Run one node that is not a plain single-output op; return its input gradients."""
    as_tensors = job.create_graph
    hooks = node._hooks
    if hooks is not None:
        grads = _run_pre_hooks(hooks, grads, as_tensors)
    if job.capture_at and node in job.capture_at:
        for nr, i in job.capture_at[node]:
            job.captured[i] = _as_tensor(grads[nr])
    if job.needed is not None and node not in job.needed:
        return ()
    if type(node) is AccumulateGrad:
        if job.capture is None and (job.accumulate_into is None or node in job.accumulate_into):
            if _observer:
                _observer[0].enter(node)
                try:
                    _accumulate(node.variable, grads[0], as_tensors)
                finally:
                    _observer[0].exit(node, ())
            else:
                _accumulate(node.variable, grads[0], as_tensors)
            if hooks is not None and hooks.post:  # a leaf's node has no inputs: ()
                _run_post_hooks(hooks, (), grads, as_tensors)
        return ()
    if node is job.root:
        return grads
    if _observer:  # profiling: bracket the node's run
        _observer[0].enter(node)
        results = ()
        try:
            results = _run_node(node, grads, as_tensors)
        finally:
            _observer[0].exit(node, results)
    else:
        results = _run_node(node, grads, as_tensors)
    if hooks is not None and hooks.post:
        results = _run_post_hooks(hooks, results, grads, as_tensors)
    if not job.retain_graph and node._saved:
        node._saved = _FREED
    return results


def _run_node(node: Node, grads: list, as_tensors: bool):
    """``_call_node``, with anomaly mode's NaN check and forward traceback when it is on."""
    if not anomaly_mode.state.enabled:
        return _call_node(node, grads, as_tensors)
    try:
        results = _call_node(node, grads, as_tensors)
        if anomaly_mode.state.check_nan:
            anomaly_mode.check_results(node, results)
    except Exception:
        anomaly_mode.print_stack(node)
        raise
    return results


def _call_node(node: Node, grads: list, as_tensors: bool):
    if all(g is None for g in grads):
        return ()
    saved = node._unpack_saved(as_tensors)
    if node._multi_output:
        result = node.backward(grads, *saved)
    else:
        result = node.backward(grads[0], *saved)
    return result if type(result) is tuple else (result,)


# -- hooks ------------------------------------------------------------------------------------


def _as_tensor(g):
    if g is None or isinstance(g, Tensor):
        return g
    return wrap_data(g) if type(g) in DATA_CLASSES else Tensor._wrap(np.asarray(g))


def _as_raw(g, as_tensors: bool):
    if g is None or as_tensors:
        return g
    return g._data if isinstance(g, Tensor) else g


def _hook_name(fn) -> str:
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


def _checked(fn, old, new):
    """A hook's replacement for gradient ``old``, refused (torch's errors) when it is not a
    Tensor of the same size and dtype."""
    if new is None:
        return None
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if old is None:
        raise RuntimeError("can't replace a empty gradient with a non-empty value")
    old_data = old._data if isinstance(old, Tensor) else old
    if new._data.dtype != old_data.dtype:
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' has changed the type of value (was "
            f"{_legacy_type_name(old_data.dtype)} got {_legacy_type_name(new._data.dtype)})"
        )
    if new._data.shape != old_data.shape:
        raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the size of value")
    return new


def _checked_all(fn, old: tuple, new) -> list:
    new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
    if len(new) != len(old):
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' has returned an incorrect number of values (got "
            f"{len(new)}, but expected {len(old)})"
        )
    return [g if n is None else _checked(fn, g, n) for g, n in zip(old, new)]


def _run_pre_hooks(hooks, grads, as_tensors: bool):
    grads = list(grads)
    for nr, fn in list(hooks.tensor.values()):
        if grads[nr] is None:
            continue
        new = _checked(fn, grads[nr], fn(_as_tensor(grads[nr])))
        if new is not None:
            grads[nr] = _as_raw(new, as_tensors)
    for nr, ref in list(hooks.retain.items()):
        t = ref()
        if t is not None and grads[nr] is not None:
            _store_retained_grad(t, grads[nr], as_tensors)
    for fn in list(hooks.pre.values()):
        wrapped = tuple(_as_tensor(g) for g in grads)
        new = fn(wrapped)
        if new is not None:
            grads = [_as_raw(g, as_tensors) for g in _checked_all(fn, wrapped, new)]
    return grads


def _run_post_hooks(hooks, results, grads, as_tensors: bool):
    for fn in list(hooks.post.values()):
        wrapped = tuple(_as_tensor(g) for g in results)
        new = fn(wrapped, tuple(_as_tensor(g) for g in grads))
        if new is not None:
            results = tuple(_as_raw(g, as_tensors) for g in _checked_all(fn, wrapped, new))
    return results


def _add(a, b):
    """``a + b`` for gradients: raw sums stay arrays (NumPy returns a scalar for 0-d ones)."""
    s = a + b
    if type(s) is not np.ndarray and not isinstance(s, Tensor) and type(s) not in DATA_CLASSES:
        s = np.asarray(s)
    return s


def _store_retained_grad(t, g, as_tensors: bool) -> None:
    if as_tensors:
        t._grad = g if t._grad is None else t._grad + g
    elif t._grad is None:
        t._grad = Tensor._wrap(np.array(g, copy=True))
    else:
        t._grad = Tensor._wrap(_add(t._grad._data, g))


def _accumulate(var, g, create_graph: bool) -> None:
    """AccumulateGrad: run the leaf's hooks, then add ``g`` into ``var.grad``."""
    if g is None:
        return
    aux = var._aux
    if aux is not None and aux.hooks:
        for fn in list(aux.hooks.values()):
            new = _checked(fn, g, fn(_as_tensor(g)))
            if new is not None:
                g = _as_raw(new, create_graph)
    old = var._grad
    if create_graph:
        g = _as_tensor(g)
        # A recorded copy: .grad must not alias the caller's gradient tensor.
        var._grad = g.clone() if old is None else old + g
    elif old is None:
        # Adopt the array when nothing else can see it (only this call and the engine's
        # buffer hold it); otherwise copy: it may alias a user tensor or another gradient.
        if (
            type(g) is np.ndarray
            and sys.getrefcount(g) <= _STEAL_REFS
            and g.flags.owndata
            and g.flags.writeable
        ):
            var._grad = Tensor._wrap(g)
        elif type(g) in DATA_CLASSES:  # a sparse gradient: its arrays are not shared
            var._grad = wrap_data(g)
        else:
            var._grad = Tensor._wrap(np.array(g, copy=True))
    elif (
        old.grad_fn is not None
        or old._rg
        or type(old._data) is not np.ndarray
        or (type(g) is not np.ndarray and type(g) in DATA_CLASSES)
    ):  # a new tensor (a sparse sum may be dense, a dense plus a sparse one is dense)
        var._grad = wrap_data(_add(old._data, g))
    else:
        old._data += g
        old._bump()
    if aux is not None and aux.post_accumulate_hooks:
        for fn in list(aux.post_accumulate_hooks.values()):
            fn(var)
