"""Seeded random programs over the op database, run by ember and by torch.

A *program* is a chain of 2-5 opdb entries (``torch=True`` and ``grad=True``); program ``i``
takes the next ops of a stream that cycles through seeded permutations of the entries, so
consecutive programs exercise every entry in turn (about 130 programs per cycle). Each input of
a step is either a fresh float64 leaf (drawn in the domain its ``In`` spec asks for) or an
output of an earlier step, *adapted*: ``take`` picks (and repeats) its elements into the
needed shape, an elementwise affine map with fixed random constants moves them off any
structural coincidence (ties, exact zeros, integers), and a smooth map puts them in the
needed domain (``0.9 tanh`` for unit, ``0.2 + 2.5 sigmoid`` for pos, ``1.1 + 2.5 sigmoid``
for gt1). Each step reads an output of the latest step that has a differentiable non-empty
one, so every op feeds the result; the loss is a random weighted sum of the last step's
differentiable outputs. The adapters use only elementwise and indexing ops, and, with
probability ``P_WRITE``, an in-place op on a view of the taken elements before the affine map
(a ``Write``: a slice, select, narrow, transposed slice, diagonal, flattened slice or nested
view, written by an op reading its operand or its own result, a masked or indexed
assignment, a copy or a fill), so that the graph holds ``CopySlices`` nodes fed by every
kind of op and feeding every kind of op, in first order, double backward and forward mode.

Everything is drawn from ``numpy.random.default_rng([SEED, index, attempt])`` (and the
opdb's contents); a program is rebuilt by index alone (``draw(index)``). A draw is rejected,
and drawn again with the next attempt, when torch's reference is ill-defined there: an error,
a value or derivative that is not finite or above ``LIMIT``/``DERIV_LIMIT``, or a point
within reach of a kink or a jump. The last is found by evaluating torch at ``x + d`` and
``x - d`` (``|d| ~ 1e-7``): for a smooth program every value, gradient and Hessian-vector
product has a second difference ``f(x+d) + f(x-d) - 2 f(x)`` of order ``|d|^2`` and a first
difference ``f(x+d) - f(x-d)`` of order ``|d|``, while a tie, a kink (abs, relu, clamp, max)
or a jump (floor, masks, where) within reach shows as an O(1) change of one or both. Ember is
only compared where torch's results are stable under such perturbations, so rounding
differences between the libraries (~1e-15) cannot put them on different sides of a kink.
Ember is never consulted to decide whether a program is compared.

Warnings: every warning ember issues while running a program must also be issued by torch
(same category and message): a NumPy warning never is, torch's own (e.g. mse_loss's target
size warning) may be repeated.

Reproduce a program by hand (from ``tests/``; the op names pin the program when entries are
added to the opdb, which changes the ops an index draws)::

    ../.venv/bin/python -m differential.programs 17:exp,matmul_2d,amax

prints the program, its mismatches and a shrunk program failing the same way (steps cut,
adapted inputs replaced by leaves holding the same values).
"""

from __future__ import annotations

import importlib
import sys
import traceback
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from opdb import In, all_ops, as_tuple
from opdb import values as draw_values

SEED = 0x5EED  # base of every program's seed
MAX_ATTEMPTS = 12  # draws per program index before it is counted as ill-defined
LIMIT = 1e6  # |values| above this: blown up
DERIV_LIMIT = 1e8  # |derivatives| above this: blown up
P_EARLIER = 0.3  # probability that an input reads an earlier step rather than a fresh leaf
P_WRITE = 0.4  # probability that an adapted input is written in place through a view

# Comparison ember vs torch: |e - t| <= RTOL |t| + ATOL * scale (+ TINY); scale is max|t| of the
# array for values, of all the leaves' gradients (and Hessian products) for derivatives, of all
# the tangents for forward mode.
RTOL = 1e-6
ATOL = 1e-8
TINY = 1e-15
# Stability of torch's reference: second differences above STABLE * max|f| mean a kink/jump.
STEP = 1e-7
STABLE = 1e-6
# ... and first differences f(x+d) - f(x-d) above JUMP * max|f| (symmetric kinks: abs at 0, where
# torch's derivative is the mean of both sides, and ties, which torch's max() shares evenly).
JUMP = 1e-3

OPS = [op for op in all_ops() if op.torch and op.grad]


def _length(index: int) -> int:
    """The number of ops of program ``index`` (2 to 5; the same in every attempt)."""
    return int(np.random.default_rng([SEED, 3, index]).integers(2, 6))


_STARTS = [0]


def _slot_ops(index: int) -> list:
    """The ops of program ``index``: the next slots of a stream that cycles through seeded
    permutations of OPS, so that consecutive programs exercise every op in turn."""
    while len(_STARTS) <= index:
        _STARTS.append(_STARTS[-1] + _length(len(_STARTS) - 1))
    ops = []
    for slot in range(_STARTS[index], _STARTS[index] + _length(index)):
        cycle, pos = divmod(slot, len(OPS))
        ops.append(OPS[np.random.default_rng([SEED, 7, cycle]).permutation(len(OPS))[pos]])
    return ops


# -- program structure -------------------------------------------------------------------


@dataclass(frozen=True)
class Leaf:
    index: int


@dataclass(frozen=True, eq=False)
class Write:
    """``t`` (an adapter's taken elements) written in place through its view ``view`` by
    ``op``. The op's operand is ``take(t.clone(), idx) * scale + shift`` (computed from ``t``
    before the write, so the write's derivative depends on ``t``), or ``const``; ``mask``
    selects masked writes, ``rows`` indexed ones."""

    view: tuple  # (kind, *arguments), see _view
    op: str
    idx: np.ndarray | None = None
    scale: np.ndarray | None = None
    shift: np.ndarray | None = None
    const: np.ndarray | None = None
    mask: np.ndarray | None = None
    rows: np.ndarray | None = None
    # a view of ``t`` taken before the write ("flat", "unsqueezed") through which ``t`` is
    # read after it: its history must include the write (torch regenerates it), or None
    early: str | None = None

    def describe(self) -> str:
        read = f", read through an earlier {self.early} view" if self.early else ""
        return f"{_view_text(self.view)}.{self.op}{read}"


@dataclass(frozen=True, eq=False)
class Adapted:
    """``domain(take(outs[step][out], idx) * scale + shift)``, the taken elements written in
    place through a view by ``write`` first."""

    step: int
    out: int
    idx: np.ndarray
    scale: np.ndarray
    shift: np.ndarray
    kind: str
    src_shape: tuple
    write: Write | None = None


@dataclass
class Step:
    op: object
    args: list


@dataclass
class Program:
    index: int
    attempt: int = 0
    leaves: list = field(default_factory=list)  # float64 arrays
    leaf_specs: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    finals: list = field(default_factory=list)  # differentiable outputs of the last step
    weights: list = field(default_factory=list)  # cotangents of the finals
    hvp_dirs: list = field(default_factory=list)  # v of d/dx <grad, v>
    tangents: list = field(default_factory=list)  # forward-mode tangents of the leaves
    perturbations: list = field(default_factory=list)  # d of the stability check
    ref: Result | None = None  # torch's results
    rejected: list = field(default_factory=list)  # reasons of the rejected attempts
    drawn_ops: list = field(default_factory=list)  # op names, in the order drawn

    @property
    def seed(self):
        return [SEED, self.index, self.attempt]

    @property
    def ok(self) -> bool:
        return self.ref is not None

    @property
    def op_names(self) -> list:
        return [s.op.name for s in self.steps]

    @property
    def double(self) -> bool:
        return all(s.op.double for s in self.steps)

    @property
    def forward(self) -> bool:
        return all(s.op.forward for s in self.steps)

    @property
    def writes_views(self) -> bool:
        """Whether the program writes in place through a view (its adapters or its ops)."""
        return any(
            isinstance(a, Adapted) and a.write is not None for s in self.steps for a in s.args
        ) or any(s.op.name.startswith(VIEW_WRITING_OPS) for s in self.steps)

    @property
    def reads_stale_views(self) -> bool:
        """Whether the program reads a tensor, after a write, through a view taken before."""
        return any(
            isinstance(a, Adapted) and a.write is not None and a.write.early
            for s in self.steps
            for a in s.args
        )

    def describe(self) -> str:
        lines = [
            f"program {self.index} attempt {self.attempt} "
            f"(rng: numpy.random.default_rng({self.seed})); ops {self.op_names}",
        ]
        for i, (a, spec) in enumerate(zip(self.leaves, self.leaf_specs)):
            lines.append(f"  x{i} = leaf {tuple(a.shape)} {spec.kind}")
        for k, step in enumerate(self.steps):
            args = []
            for a in step.args:
                if isinstance(a, Leaf):
                    args.append(f"x{a.index}")
                else:
                    written = "" if a.write is None else f" then {a.write.describe()}"
                    args.append(
                        f"adapt(s{a.step}[{a.out}] {a.src_shape} -> {tuple(a.idx.shape)}"
                        f"{written} {a.kind})"
                    )
            lines.append(f"  s{k} = {step.op.name}({', '.join(args)})   [{step.op.family}]")
        lines.append(f"  loss = weighted sum of s{len(self.steps) - 1}{self.finals}")
        lines.append(
            "  reproduce: cd tests && ../.venv/bin/python -m differential.programs "
            f"{self.index}:{','.join(self.drawn_ops)}"
        )
        return "\n".join(lines)


def _domain(lib, t, kind):
    if kind == "unit":
        return lib.tanh(t) * 0.9
    if kind == "pos":
        return lib.sigmoid(t) * 2.5 + 0.2
    if kind == "gt1":
        return lib.sigmoid(t) * 2.5 + 1.1
    return t


def adapt(lib, src, a: Adapted):
    t = lib.take(src, lib.tensor(a.idx))
    if a.write is not None:  # before the affine map, which moves what it writes off ties
        t = write(lib, t, a.write)
    return _domain(lib, t * lib.tensor(a.scale) + lib.tensor(a.shift), a.kind)


# -- in-place writes through views of taken elements --------------------------------------------

# opdb entries that write through views themselves (tests/opdb/inplace.py, circular padding).
VIEW_WRITING_OPS = ("view_", "pad_circular")

# Ops that write a view in place: those reading the operand (and the view's old value), those
# reading their own result, assignments and fills.
WRITE_OPS = (
    "mul_",
    "add_",
    "div_",
    "addcmul_",
    "copy_",
    "mul_const",
    "sigmoid_",
    "tanh_",
    "sin_",
    "pow_",
    "zero_",
    "masked_fill_",
    "masked_setitem",
    "index_iadd",
)


def _view(t, view: tuple):
    kind, *args = view
    if kind == "whole":  # no view: the tensor itself is written
        return t
    if kind == "slice":
        dim, start, stop, step = args
        return t[(slice(None),) * dim + (slice(start, stop, step),)]
    if kind == "select":
        return t.select(*args)
    if kind == "narrow":
        return t.narrow(*args)
    if kind == "transposed":
        d0, d1, start = args
        return t.transpose(d0, d1)[start:]
    if kind == "diagonal":
        return t.diagonal(*args)
    if kind == "flat":
        start, stop = args
        return t.view(-1)[start:stop]
    if kind == "nested":
        dim, index, start = args
        return t.select(dim, index)[start:]
    if kind == "unsqueezed":
        return t.unsqueeze(0)[0]
    raise ValueError(kind)


def _view_text(view: tuple) -> str:
    kind, *args = view
    return f"{kind}{tuple(args)}"


def write(lib, t, w: Write):
    """``t`` written in place through a view, as ``w`` says (t is not a leaf); ``t``, or a
    view of it taken before the write, shaped as ``t``."""
    early = None
    if w.early == "flat":
        early = t.view(-1)
    elif w.early == "unsqueezed":
        early = t.unsqueeze(0)
    other = None
    if w.idx is not None:
        # from a copy: take saves its input, which the write would change (torch's error)
        other = lib.take(t.clone(), lib.tensor(w.idx)) * lib.tensor(w.scale) + lib.tensor(w.shift)
    v = _view(t, w.view)
    op = w.op
    if op == "mul_":
        v.mul_(other)
    elif op == "add_":
        v.add_(other)
    elif op == "div_":
        v.div_(lib.sigmoid(other) + 0.5)
    elif op == "addcmul_":
        v.addcmul_(other, lib.tensor(w.const), value=0.5)
    elif op == "copy_":
        v.copy_(other)
    elif op == "mul_const":
        v.mul_(lib.tensor(w.const))
    elif op == "sigmoid_":
        v.sigmoid_()
    elif op == "tanh_":
        v.tanh_()
    elif op == "sin_":
        v.sin_()
    elif op == "pow_":
        v.pow_(2)
    elif op == "zero_":
        v.zero_()
    elif op == "masked_fill_":
        v.masked_fill_(lib.tensor(w.mask), float(w.const))
    elif op == "masked_setitem":
        v[lib.tensor(w.mask)] = other
    elif op == "index_iadd":
        v[lib.tensor(w.rows)] += other
    else:
        raise ValueError(op)
    if early is None:
        return t
    return early.view(t.shape) if w.early == "flat" else early[0]


def _draw_view(rng, shape: tuple):
    """A non-empty view of a tensor of ``shape``, described for ``_view``."""
    ndim = len(shape)
    kinds = ["unsqueezed", "flat", "whole"]
    dims = [d for d in range(ndim) if shape[d] >= 1]
    if dims:
        kinds += ["slice", "select", "narrow"]
    if ndim >= 2:
        kinds += ["transposed", "diagonal", "nested"]
    kind = kinds[int(rng.integers(len(kinds)))]
    if kind in ("unsqueezed", "whole"):
        return (kind,)
    if kind == "flat":
        n = int(np.prod(shape, dtype=np.int64))
        start = int(rng.integers(n))
        return (kind, start, int(rng.integers(start + 1, n + 1)))
    if kind in ("slice", "select", "narrow"):
        dim = dims[int(rng.integers(len(dims)))]
        n = shape[dim]
        start = int(rng.integers(n))
        if kind == "select":
            return (kind, dim, start)
        length = int(rng.integers(1, n - start + 1))
        if kind == "narrow":
            return (kind, dim, start, length)
        return (kind, dim, start, start + length, int(rng.integers(1, 3)))
    d0, d1 = (int(d) for d in rng.choice(ndim, 2, replace=False))
    if kind == "transposed":
        return (kind, d0, d1, int(rng.integers(shape[d1])))
    if kind == "diagonal":
        offset = int(rng.integers(-shape[d0] + 1, shape[d1]))
        return (kind, offset, d0, d1)
    rest = shape[:d0] + shape[d0 + 1 :]
    return (kind, d0, int(rng.integers(shape[d0])), int(rng.integers(rest[0])))  # nested


def _draw_write(rng, t_shape: tuple) -> Write | None:
    """A write through a view of a tensor of ``t_shape`` (None if the view is empty), read
    half the time through a view taken before it."""
    w = _draw_plain_write(rng, t_shape)
    if w is not None and rng.random() < 0.5:
        w = replace(w, early=("flat", "unsqueezed")[int(rng.integers(2))])
    return w


def _draw_plain_write(rng, t_shape: tuple) -> Write | None:
    import torch

    view = _draw_view(rng, t_shape)
    shape = tuple(_view(torch.zeros(t_shape), view).shape)
    if not all(shape):
        return None
    op = WRITE_OPS[int(rng.integers(len(WRITE_OPS)))]
    n = int(np.prod(t_shape, dtype=np.int64))

    def operand(out_shape):
        return {
            "idx": rng.integers(n, size=out_shape).astype(np.int64),
            "scale": rng.uniform(0.5, 1.5, out_shape) * rng.choice([-1.0, 1.0], out_shape),
            "shift": rng.uniform(-0.5, 0.5, out_shape),
        }

    if op in ("masked_fill_", "masked_setitem"):
        mask = rng.random(shape) < 0.5
        mask.reshape(-1)[int(rng.integers(mask.size))] = True  # at least one element
        if op == "masked_fill_":
            return Write(view, op, mask=mask, const=np.float64(rng.uniform(-1, 1)))
        return Write(view, op, mask=mask, **operand((int(mask.sum()),)))
    if op == "index_iadd":
        if not shape:
            return None
        k = int(rng.integers(1, shape[0] + 1))
        rows = rng.permutation(shape[0])[:k].astype(np.int64)  # distinct: no write is lost
        return Write(view, op, rows=rows, **operand((k,) + shape[1:]))
    if op == "mul_const":
        return Write(view, op, const=rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape))
    if op == "addcmul_":
        return Write(view, op, const=rng.standard_normal(shape), **operand(shape))
    if op in ("mul_", "add_", "div_", "copy_"):
        return Write(view, op, **operand(shape))
    return Write(view, op)


def run_step(lib, step: Step, leaves, outs) -> tuple:
    args = [
        leaves[a.index] if isinstance(a, Leaf) else adapt(lib, outs[a.step][a.out], a)
        for a in step.args
    ]
    return as_tuple(step.op.fn(lib, *args))


def run(lib, prog: Program, leaves) -> list:
    outs = []
    for step in prog.steps:
        outs.append(run_step(lib, step, leaves, outs))
    return outs


# -- evaluation ------------------------------------------------------------------------------


@dataclass
class Result:
    values: list | None = None  # per step, per output: array
    meta: list | None = None  # per step, per output: (shape, dtype, grad_fn name, requires_grad)
    grads: list | None = None  # per leaf
    hvp: list | None = None  # per leaf
    tangents: list | None = None  # per step, per output: array or None
    errors: dict = field(default_factory=dict)  # phase -> exception text
    warnings: list = field(default_factory=list)  # (category, message, where)


def _is_tensor(lib, t) -> bool:
    return isinstance(t, lib.Tensor)


def to_np(t):
    if t is None:
        return None
    if getattr(t, "_is_zerotensor", lambda: False)():
        return np.zeros(tuple(t.shape), dtype=np.dtype(str(t.dtype).replace("torch.", "")))
    return np.array(t.detach().numpy(), copy=True)


def _grad_fn_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def _exc(e: BaseException) -> str:
    """The exception and the innermost frames it came from (to see NumPy text escaping)."""
    frames = traceback.extract_tb(e.__traceback__)[-2:]
    where = "; ".join(f"{f.filename.split('/site-packages/')[-1]}:{f.lineno}" for f in frames)
    return f"{type(e).__name__}: {e} [at {where}]"


def _fw(lib):
    return importlib.import_module(lib.__name__ + ".autograd.forward_ad")


def _first_grads(lib, prog, xs, outs, create_graph=False):
    finals = [outs[-1][j] for j in prog.finals]
    ws = [lib.tensor(w) for w in prog.weights]
    return lib.autograd.grad(finals, xs, ws, allow_unused=True, create_graph=create_graph)


def evaluate(lib, prog: Program, arrays, *, double: bool, forward: bool) -> Result:
    """Values, gradients of the weighted loss, Hessian-vector products and tangents."""
    res = Result()
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    try:
        outs = run(lib, prog, xs)
        res.values = [[to_np(o) for o in step] for step in outs]
        res.meta = [
            [(tuple(o.shape), str(o.dtype), _grad_fn_name(o), o.requires_grad) for o in step]
            for step in outs
        ]
    except Exception as e:  # noqa: BLE001 (reported, or a rejection for torch)
        res.errors["values"] = _exc(e)
        return res
    try:
        grads = _first_grads(lib, prog, xs, outs)
        res.grads = [np.zeros(a.shape) if g is None else to_np(g) for a, g in zip(arrays, grads)]
    except Exception as e:  # noqa: BLE001
        res.errors["grads"] = _exc(e)
    if double:
        try:
            xs = [lib.tensor(a, requires_grad=True) for a in arrays]
            grads = _first_grads(lib, prog, xs, run(lib, prog, xs), create_graph=True)
            terms = [
                (g * lib.tensor(v)).sum()
                for g, v in zip(grads, prog.hvp_dirs)
                if g is not None and g.requires_grad
            ]
            if not terms:  # linear program: the second derivative is 0
                res.hvp = [np.zeros(a.shape) for a in arrays]
            else:
                total = terms[0]
                for t in terms[1:]:
                    total = total + t
                second = lib.autograd.grad(total, xs, allow_unused=True)
                res.hvp = [
                    np.zeros(a.shape) if g is None else to_np(g) for a, g in zip(arrays, second)
                ]
        except Exception as e:  # noqa: BLE001
            res.errors["double"] = _exc(e)
    if forward:
        fw = _fw(lib)
        try:
            with fw.dual_level():
                duals = [
                    fw.make_dual(lib.tensor(a), lib.tensor(t))
                    for a, t in zip(arrays, prog.tangents)
                ]
                outs = run(lib, prog, duals)
                res.tangents = [
                    [to_np(fw.unpack_dual(o).tangent) if _is_tensor(lib, o) else None for o in s]
                    for s in outs
                ]
        except Exception as e:  # noqa: BLE001
            res.errors["forward"] = _exc(e)
    return res


def _evaluate_recording(lib, prog: Program, arrays) -> Result:
    """``evaluate``, recording every warning issued (each time, not once per place)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = evaluate(
            lib,
            prog,
            prog.leaves if arrays is None else arrays,
            double=prog.double,
            forward=prog.forward,
        )
    res.warnings = [
        (w.category.__name__, str(w.message), f"{w.filename}:{w.lineno}")
        for w in caught
        if not str(w.message).startswith(_ONCE_PER_PROCESS)
    ]
    return res


# Warnings both libraries give once per process (torch's TORCH_WARN_ONCE): whether a program
# sees one depends on what ran before it in the process (a redrawn program's first attempt
# may have used the op in one library only), so they are not compared program by program.
_ONCE_PER_PROCESS = tuple(
    f"torch.{name} is deprecated in favor of torch.linalg."
    for name in ("cholesky", "lu", "lu_solve", "triangular_solve")
)


def evaluate_ember(prog: Program, arrays=None) -> Result:
    import ember

    return _evaluate_recording(ember, prog, arrays)


def evaluate_torch(prog: Program, arrays=None) -> Result:
    import torch

    return _evaluate_recording(torch, prog, arrays)


# -- drawing -----------------------------------------------------------------------------------


class Rejected(Exception):
    pass


def _usable(o) -> bool:
    return o.dtype.is_floating_point and o.requires_grad and o.numel() > 0


def _check_finite(arr, limit, what):
    if arr is None:
        return
    a = np.asarray(arr)
    if a.dtype.kind in "fc" and a.size:
        if not np.all(np.isfinite(a)):
            raise Rejected(f"{what}: not finite")
        if np.max(np.abs(a)) > limit:
            raise Rejected(f"{what}: blown up (|x| = {np.max(np.abs(a)):.3g})")


def _build(index: int, attempt: int, ops=None) -> Program:
    """Draws the structure, running torch step by step to learn the outputs' shapes."""
    import torch

    rng = np.random.default_rng([SEED, index, attempt])
    prog = Program(index, attempt)
    ops = _slot_ops(index) if ops is None else ops
    prog.drawn_ops = [op.name for op in ops]
    ops = [ops[i] for i in rng.permutation(len(ops))]

    leaves, outs = [], []  # torch tensors

    def leaf(spec: In):
        prog.leaf_specs.append(spec)
        prog.leaves.append(draw_values(spec, rng))
        leaves.append(torch.tensor(prog.leaves[-1], requires_grad=True))
        return Leaf(len(leaves) - 1)

    def adapted(step: int, spec: In):
        usable = [j for j, o in enumerate(outs[step]) if _is_tensor(torch, o) and _usable(o)]
        j = usable[int(rng.integers(len(usable)))]
        m, count = outs[step][j].numel(), int(np.prod(spec.shape, dtype=np.int64))
        perm = rng.permutation(m)
        idx = np.resize(perm, count).reshape(spec.shape).astype(np.int64)
        sign = rng.choice([-1.0, 1.0], spec.shape)
        scale = np.asarray(rng.uniform(0.5, 1.5, spec.shape) * sign, dtype=np.float64)
        shift = np.asarray(rng.uniform(-0.5, 0.5, spec.shape), dtype=np.float64)
        written = _draw_write(rng, spec.shape) if rng.random() < P_WRITE else None
        src_shape = tuple(outs[step][j].shape)
        return Adapted(step, j, idx, scale, shift, spec.kind, src_shape, written)

    for k, op in enumerate(ops):
        sources = [j for j in range(k) if any(_is_tensor(torch, o) and _usable(o) for o in outs[j])]
        forced = int(rng.integers(len(op.ins))) if sources else -1
        args = []
        for i, spec in enumerate(op.ins):
            if i == forced:  # the chain: the latest step with a usable output
                args.append(adapted(sources[-1], spec))
            elif sources and rng.random() < P_EARLIER:
                args.append(adapted(sources[int(rng.integers(len(sources)))], spec))
            else:
                args.append(leaf(spec))
        step = Step(op, args)
        prog.steps.append(step)
        outs.append(_run_torch_step(step, leaves, outs))
    return _finish(prog, outs)


def _run_torch_step(step, leaves, outs):
    import torch

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run_step(torch, step, leaves, outs)
    except Exception as e:  # noqa: BLE001
        raise Rejected(f"torch raised in {step.op.name}: {type(e).__name__}: {e}") from None
    for o in result:
        if _is_tensor(torch, o):
            _check_finite(to_np(o), LIMIT, f"values of {step.op.name}")
    return result


def _finish(prog: Program, outs) -> Program:
    """The loss (the differentiable outputs of the last step) and the random directions."""
    import torch

    prog.finals = [
        j
        for j, o in enumerate(outs[-1])
        if _is_tensor(torch, o) and o.dtype.is_floating_point and o.requires_grad
    ]
    if not prog.finals:
        raise Rejected(f"{prog.steps[-1].op.name}: no differentiable output")
    aux = np.random.default_rng([SEED, prog.index, prog.attempt, 1])
    prog.weights = [aux.standard_normal(tuple(outs[-1][j].shape)) for j in prog.finals]
    prog.hvp_dirs = [aux.standard_normal(a.shape) for a in prog.leaves]
    prog.tangents = [aux.standard_normal(a.shape) for a in prog.leaves]
    prog.perturbations = [
        STEP * aux.standard_normal(a.shape) * (1 + np.abs(a)) for a in prog.leaves
    ]
    return prog


def _arrays(res: Result) -> list:
    """Every array of a result, flattened in a fixed order, with a label."""
    out = []
    for k, step in enumerate(res.values or []):
        for j, v in enumerate(step):
            out.append((f"value s{k}[{j}]", v))
    for i, g in enumerate(res.grads or []):
        out.append((f"grad x{i}", g))
    for i, h in enumerate(res.hvp or []):
        out.append((f"hvp x{i}", h))
    for k, step in enumerate(res.tangents or []):
        for j, t in enumerate(step):
            out.append((f"tangent s{k}[{j}]", t))
    return out


def _reference(prog: Program) -> Result:
    """torch's results, or Rejected when they are ill-defined (see the module docstring)."""
    ref = evaluate_torch(prog)
    if ref.errors:
        phase, text = next(iter(ref.errors.items()))
        raise Rejected(f"torch raised ({phase}): {text}")
    for label, a in _arrays(ref):
        _check_finite(a, LIMIT if label.startswith("value") else DERIV_LIMIT, f"torch {label}")
    # Stability: second differences along +-d are O(|d|^2) unless a kink or jump is near.
    plus = evaluate_torch(prog, [a + d for a, d in zip(prog.leaves, prog.perturbations)])
    minus = evaluate_torch(prog, [a - d for a, d in zip(prog.leaves, prog.perturbations)])
    if plus.errors or minus.errors:
        raise Rejected("torch raised near the point")
    for (label, a0), (_, ap), (_, am) in zip(_arrays(ref), _arrays(plus), _arrays(minus)):
        if a0 is None or ap is None or am is None:
            if not (a0 is None and ap is None and am is None):
                raise Rejected(f"unstable {label}: tangent defined on one side only")
            continue
        if a0.shape != ap.shape or a0.shape != am.shape:
            raise Rejected(f"unstable {label}: shape changes near the point")
        if a0.dtype.kind not in "fc":
            if not (np.array_equal(a0, ap) and np.array_equal(a0, am)):
                raise Rejected(f"unstable {label}: integer output changes near the point")
            continue
        if a0.size == 0:
            continue
        a0, ap, am = (np.asarray(x, dtype=np.float64) for x in (a0, ap, am))
        first = np.max(np.abs(ap - am))
        second = np.max(np.abs(ap + am - 2 * a0))
        scale = np.max(np.abs(a0))
        if second > STABLE * scale + 1e-12 or first > JUMP * scale + 1e-9:
            raise Rejected(
                f"near a kink or jump: {label} differences {first:.3g}, {second:.3g} "
                f"(scale {scale:.3g})"
            )
    _check_derivatives(prog, ref, plus, minus)
    _check_tangents(prog, ref)
    return ref


def _check_tangents(prog: Program, ref: Result) -> None:
    """torch's forward-mode tangents are the derivatives of its steps along the leaves'
    tangents (central differences): not so where a torch formula loses them (its
    logcumsumexp tangent underflows to 0 where exp(x - max) does, and rounds off by 1e-6
    elsewhere), a reference not to compare with."""
    if ref.tangents is None:
        return
    h = STEP
    plus = evaluate_torch(prog, [a + h * t for a, t in zip(prog.leaves, prog.tangents)])
    minus = evaluate_torch(prog, [a - h * t for a, t in zip(prog.leaves, prog.tangents)])
    if plus.errors or minus.errors:
        raise Rejected("torch raised near the point")
    for k, step in enumerate(ref.tangents):
        for j, tangent in enumerate(step):
            if tangent is None or tangent.size == 0 or tangent.dtype.kind != "f":
                continue
            fd = (plus.values[k][j].astype(np.float64) - minus.values[k][j]) / (2 * h)
            # half the comparison's tolerance, plus the differences' rounding (eps |f| / h)
            value = np.abs(ref.values[k][j]).astype(np.float64)
            tol = RTOL / 2 * np.abs(tangent) + ATOL * np.max(np.abs(tangent)) + 4e-9 * value
            if np.any(np.abs(fd - tangent) > tol + TINY):
                raise Rejected(
                    f"torch's forward mode is not the derivative at step {k} "
                    f"({prog.steps[k].op.name})"
                )


def _check_derivatives(prog: Program, ref: Result, plus: Result, minus: Result) -> None:
    """torch's gradient and Hessian-vector product are the derivatives of its function
    (central differences along d): not so where torch regularizes a formula (e.g. the 1e-12
    clamp of binary_cross_entropy's backward), a convention, not a derivative to compare."""
    d = prog.perturbations

    def loss(res):
        return sum(float((w * res.values[-1][j]).sum()) for j, w in zip(prog.finals, prog.weights))

    fd = (loss(plus) - loss(minus)) / 2
    an = sum(float((g * di).sum()) for g, di in zip(ref.grads, d))
    size = sum(float((np.abs(g) * np.abs(di)).sum()) for g, di in zip(ref.grads, d))
    terms = sum(
        float(np.abs(w * ref.values[-1][j]).sum()) for j, w in zip(prog.finals, prog.weights)
    )
    if abs(fd - an) > 1e-4 * size + 1e-14 * terms:
        raise Rejected(f"torch's gradient is not the derivative here ({an:.6g} vs {fd:.6g})")
    if ref.hvp is not None:
        fd = sum(
            float((v * (gp - gm)).sum()) / 2
            for v, gp, gm in zip(prog.hvp_dirs, plus.grads, minus.grads)
        )
        an = sum(float((h * di).sum()) for h, di in zip(ref.hvp, d))
        size = sum(float((np.abs(h) * np.abs(di)).sum()) for h, di in zip(ref.hvp, d))
        terms = sum(float((np.abs(v) * np.abs(g)).sum()) for v, g in zip(prog.hvp_dirs, ref.grads))
        if abs(fd - an) > 1e-4 * size + 1e-13 * terms:
            raise Rejected(f"torch's Hessian product is not the derivative ({an:.6g} vs {fd:.6g})")


def draw(index: int, ops=None) -> Program:
    """Program ``index``: the first attempt whose torch reference is well-defined. ``ops``
    (opdb names) replaces the ops the index draws from the opdb, so that a program still
    reproduces when entries are added to the opdb."""
    if ops is not None:
        by_name = {op.name: op for op in OPS}
        ops = [by_name[name] for name in ops]
    rejected = []
    prog = None
    for attempt in range(MAX_ATTEMPTS):
        try:
            prog = _build(index, attempt, ops)
            prog.ref = _reference(prog)
            prog.rejected = rejected
            return prog
        except Rejected as r:
            rejected.append(f"attempt {attempt}: {r}")
    prog = prog or Program(index, MAX_ATTEMPTS - 1)
    prog.ref = None
    prog.rejected = rejected
    return prog


# -- comparison ----------------------------------------------------------------------------------


def _max_abs(arrays) -> float:
    return max(
        (
            float(np.max(np.abs(a)))
            for a in arrays
            if a is not None and a.size and a.dtype.kind == "f"
        ),
        default=0.0,
    )


def mismatch(e, t, scale=None) -> str | None:
    """None when ember's array ``e`` matches torch's ``t``, else what differs. The absolute
    tolerance is relative to ``scale`` (default ``max|t|``): derivatives are compared on the
    scale of all the leaves' (a zero second derivative comes out as rounding noise)."""
    if e is None or t is None:
        if e is None and t is None:
            return None
        return "ember gives None, torch an array" if e is None else "torch gives None, ember not"
    e, t = np.asarray(e), np.asarray(t)
    if e.shape != t.shape:
        return f"shape {e.shape} != torch {t.shape}"
    if t.dtype.kind not in "fc":
        return None if np.array_equal(e, t) else f"ember {e.ravel()[:6]} != torch {t.ravel()[:6]}"
    if t.size == 0:
        return None
    e64, t64 = e.astype(np.float64), t.astype(np.float64)
    err = np.abs(e64 - t64)
    scale = np.max(np.abs(t64)) if scale is None else max(scale, np.max(np.abs(t64)))
    tol = RTOL * np.abs(t64) + ATOL * scale + TINY
    bad = ~(err <= tol)
    if not bad.any():
        return None
    i = np.unravel_index(int(np.argmax(np.where(bad, err - tol, -np.inf))), t.shape)
    return (
        f"{int(bad.sum())}/{t.size} elements differ; worst at {tuple(int(v) for v in i)}: "
        f"ember {e64[i]!r} torch {t64[i]!r} (max |diff| {np.nanmax(err):.3g}, "
        f"max |torch| {np.max(np.abs(t64)):.3g})"
    )


CHECKS = ("values", "grads", "double", "forward", "warnings")


def compare(prog: Program, mine: Result) -> dict:
    """Per check (values, grads, double, forward): a list of failures ([] = passed);
    checks that do not apply to the program are left out."""
    ref = prog.ref
    fails = {"values": [], "grads": []}
    if prog.double:
        fails["double"] = []
    if prog.forward:
        fails["forward"] = []
    # No warning may reach the user unless torch gives the same one (NumPy's never).
    fails["warnings"] = []
    theirs = {(c, m) for c, m, _ in ref.warnings}
    for c, m, where in dict.fromkeys(mine.warnings):
        if (c, m) not in theirs:
            fails["warnings"].append(f"ember warned (torch did not): {c}: {m} [at {where}]")
    for phase, text in mine.errors.items():
        fails[phase].append(f"ember raised: {text}")
    if mine.values is not None:
        for k, (es, ts, em, tm) in enumerate(zip(mine.values, ref.values, mine.meta, ref.meta)):
            name = prog.steps[k].op.name
            if len(es) != len(ts):
                fails["values"].append(f"s{k} {name}: {len(es)} outputs, torch {len(ts)}")
                continue
            for j, (e, t, (_, edt, egf, erg), (_, tdt, tgf, trg)) in enumerate(zip(es, ts, em, tm)):
                where = f"s{k}[{j}] = {name}(...)"
                if edt != tdt:
                    fails["values"].append(f"{where}: dtype {edt}, torch {tdt}")
                if egf != tgf:
                    fails["values"].append(f"{where}: grad_fn {egf}, torch {tgf}")
                if erg != trg:
                    fails["values"].append(f"{where}: requires_grad {erg}, torch {trg}")
                m = mismatch(e, t)
                if m:
                    fails["values"].append(f"{where}: {m}")
    grad_scale = _max_abs(ref.grads)
    hvp_scale = max(grad_scale, _max_abs(ref.hvp or []))
    # Derivatives that are exactly zero in torch (a constant loss, corrcoef of a vector with
    # itself) come out of ember as rounding noise of the values: on the values' scale then.
    value_scale = _max_abs([v for vs in ref.values for v in vs])
    for check, mine_list, ref_list, label, scale in (
        ("grads", mine.grads, ref.grads, "grad", grad_scale or value_scale),
        ("double", mine.hvp, ref.hvp, "hvp", hvp_scale or value_scale),
    ):
        if check not in fails or mine_list is None:
            continue
        for i, (e, t) in enumerate(zip(mine_list, ref_list)):
            m = mismatch(e, t, scale)
            if m:
                fails[check].append(f"{label} of x{i}: {m}")
    if "forward" in fails and mine.tangents is not None:
        scale = _max_abs([t for ts in ref.tangents for t in ts])
        for k, (es, ts) in enumerate(zip(mine.tangents, ref.tangents)):
            for j, (e, t) in enumerate(zip(es, ts)):
                m = mismatch(e, t, scale)
                if m:
                    fails["forward"].append(f"tangent of s{k}[{j}] {prog.steps[k].op.name}: {m}")
    return fails


def report(prog: Program, fails: dict) -> str:
    lines = [prog.describe()]
    for check, items in fails.items():
        for item in items:
            lines.append(f"  [{check}] {item}")
    return "\n".join(lines)


# -- shrinking (for reproducing failures by hand) ---------------------------------------------


def _compact(prog: Program) -> Program:
    """Drops the steps the last one does not depend on, and the unused leaves."""
    live = {len(prog.steps) - 1}
    for k in range(len(prog.steps) - 1, -1, -1):
        if k in live:
            live |= {a.step for a in prog.steps[k].args if isinstance(a, Adapted)}
    steps_map = {k: i for i, k in enumerate(sorted(live))}
    used = sorted({a.index for k in live for a in prog.steps[k].args if isinstance(a, Leaf)})
    leaf_map = {k: i for i, k in enumerate(used)}
    steps = []
    for k in sorted(live):
        args = [
            Leaf(leaf_map[a.index]) if isinstance(a, Leaf) else replace(a, step=steps_map[a.step])
            for a in prog.steps[k].args
        ]
        steps.append(Step(prog.steps[k].op, args))
    return Program(
        prog.index,
        prog.attempt,
        leaves=[prog.leaves[i] for i in used],
        leaf_specs=[prog.leaf_specs[i] for i in used],
        steps=steps,
        drawn_ops=prog.drawn_ops,
    )


def _complete(prog: Program) -> Program:
    """A reference for a (shrunk) program, or Rejected."""
    import torch

    prog = _compact(prog)
    leaves = [torch.tensor(a, requires_grad=True) for a in prog.leaves]
    outs = []
    for step in prog.steps:
        outs.append(_run_torch_step(step, leaves, outs))
    _finish(prog, outs)
    prog.ref = _reference(prog)
    return prog


def _kinds(fails: dict) -> set:
    kinds = set()
    for check, items in fails.items():
        for item in items:
            if item.startswith("ember raised: "):
                kinds.add((check, item.split(":")[1].strip()))
            else:
                kinds.add((check, "mismatch"))
    return kinds


def _candidates(prog: Program):
    import torch

    for k in range(len(prog.steps) - 1):  # truncations
        yield Program(
            prog.index, prog.attempt, list(prog.leaves), list(prog.leaf_specs), prog.steps[: k + 1]
        )
    leaves = [torch.tensor(a) for a in prog.leaves]
    outs = run(torch, prog, leaves)
    for k, step in enumerate(prog.steps):  # an adapted input replaced by a leaf of its values
        for i, a in enumerate(step.args):
            if isinstance(a, Adapted):
                value = to_np(adapt(torch, outs[a.step][a.out], a))
                args = list(step.args)
                args[i] = Leaf(len(prog.leaves))
                steps = list(prog.steps)
                steps[k] = Step(step.op, args)
                yield Program(
                    prog.index,
                    prog.attempt,
                    [*prog.leaves, value],
                    [*prog.leaf_specs, In(value.shape, "any")],
                    steps,
                )


def shrink(prog: Program, fails: dict, max_tries: int = 60) -> tuple:
    """A smaller program failing the same way (same check, same exception or mismatch)."""
    kinds = _kinds(fails)
    target = sorted(kinds, key=lambda k: k[0] == "forward" and k[1] == "NotImplementedError")[0]
    tries, changed = 0, True
    while changed and tries < max_tries:
        changed = False
        for cand in _candidates(prog):
            tries += 1
            try:
                cand = _complete(cand)
            except Rejected:
                continue
            cand_fails = compare(cand, evaluate_ember(cand))
            if target in _kinds(cand_fails):
                prog, fails, changed = cand, cand_fails, True
                break
    return prog, fails


def main(argv=None) -> int:
    """``python -m differential.programs INDEX[:OP,OP...] ...``: each program, its failures
    and a shrunk program failing the same way."""
    argv = sys.argv[1:] if argv is None else argv
    np.set_printoptions(precision=17)
    status = 0
    for arg in argv:
        index, _, names = arg.partition(":")
        prog = draw(int(index), names.split(",") if names else None)
        if not prog.ok:
            print(f"program {arg}: ill-defined in torch, not compared:")
            print("\n".join("  " + r for r in prog.rejected))
            continue
        fails = compare(prog, evaluate_ember(prog))
        print(report(prog, fails))
        print("  checks:", {c: ("FAIL" if f else "ok") for c, f in fails.items()})
        if any(fails.values()):
            status = 1
            small, small_fails = shrink(prog, fails)
            print("shrunk:")
            print(report(small, small_fails))
            for i, a in enumerate(small.leaves):
                if a.size <= 24:
                    print(f"  x{i} = np.{np.array_repr(a)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
