"""The op database: one entry per op (and per notable variant), from which the generic tests
in ``tests/test_opdb.py`` are generated (in the spirit of PyTorch's OpInfo).

An entry is ``Op(name, fn, ins)``: ``fn(lib, *tensors)`` runs the op with ``lib`` being
``ember`` or ``torch``; ``ins`` describes each tensor input (shape and domain of values).
Every float input is differentiated. The generic tests check, in float64 unless said:
values, dtypes and ``grad_fn`` names against torch; gradients against central differences
(gradcheck); forward mode against reverse mode (``<u, J v> == <J^T u, v>``) and against
torch's forward AD; double backward (gradgradcheck); float32 results and gradient dtypes;
shapes drawn by hypothesis for entries marked ``broadcasts``. A test also fails when a
declared op (``autograd.opdef.defop``) is exercised by no entry.

Adding an op: its declaration in ``src/ember/_aten/<family>.py`` and an entry here, in the
family's module (``tests/opdb/<family>.py``).
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class In:
    """A tensor input: its shape and the domain of its values."""

    shape: tuple
    kind: str = "any"  # any | pos (> 0.2) | unit (|x| < 0.9) | gt1 (> 1.1)


def S(*shape) -> In:
    """Any real values."""
    return In(shape)


def P(*shape) -> In:
    """Positive values (> 0.2)."""
    return In(shape, "pos")


def U(*shape) -> In:
    """Values inside (-0.9, 0.9)."""
    return In(shape, "unit")


def G1(*shape) -> In:
    """Values above 1.1."""
    return In(shape, "gt1")


@dataclass(frozen=True)
class Op:
    """One op (or variant) and what the generic tests may check of it."""

    name: str
    fn: Callable  # fn(lib, *inputs) -> Tensor or tuple of Tensors
    ins: tuple
    torch: bool = True  # compare with torch (values, grad_fn names, gradients, tangents)
    grad: bool = True  # differentiable (False: only values and the graph are compared)
    reverse: bool = True  # forward mode must equal ember's reverse mode
    forward: bool = True  # has forward mode
    double: bool = True  # has double backward (gradgradcheck)
    float32: bool = True  # also compared with torch in float32
    broadcasts: bool = False  # elementwise on broadcastable shapes: hypothesis draws them
    family: str = ""


def values(spec: In, rng) -> np.ndarray:
    """float64 values for ``spec``, drawn from ``rng``."""
    a = rng.standard_normal(spec.shape)
    if spec.kind == "pos":
        a = np.abs(a) + 0.2
    elif spec.kind == "unit":
        a = np.tanh(a) * 0.9
    elif spec.kind == "gt1":
        a = np.abs(a) + 1.1
    return np.asarray(a, dtype=np.float64)


def case(op: Op, shapes=None):
    """Deterministic primal and tangent arrays for ``op`` (optionally other shapes)."""
    rng = np.random.default_rng(zlib.crc32(op.name.encode()))
    specs = op.ins if shapes is None else [In(s, i.kind) for s, i in zip(shapes, op.ins)]
    primals = [values(s, rng) for s in specs]
    tangents = [rng.standard_normal(s.shape) for s in specs]
    return primals, tangents


def as_tuple(out) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def run_with_grads(lib, op, inputs=None, context=None) -> tuple:
    """``op`` run by ``lib`` on its sample input, then differentiated: (its output tensors,
    their values and the gradients of the differentiable ones against seeded cotangents,
    as arrays). ``inputs`` makes the op's arguments from the leaves (default: the leaves);
    ``context`` is entered around the op's call."""
    primals, _ = case(op)
    xs = [lib.tensor(p, requires_grad=True) for p in primals]
    args = inputs(xs) if inputs else xs
    with context if context is not None else contextlib.nullcontext():
        outs = as_tuple(op.fn(lib, *args))
    tensors = [o for o in outs if isinstance(o, lib.Tensor)]
    values = [o.detach().numpy(force=True).copy() for o in tensors]
    diff = [o for o in tensors if o.requires_grad]
    grads = []
    if diff and op.grad:
        rng = np.random.default_rng(1)
        ws = [lib.tensor(rng.standard_normal(tuple(o.shape))) for o in diff]
        gs = lib.autograd.grad(diff, xs, ws, allow_unused=True)
        grads = [None if g is None else g.detach().numpy(force=True) for g in gs]
    return tensors, values, grads


FAMILIES = (
    "elementwise",
    "special",
    "reduction",
    "sorting",
    "shape",
    "indexing",
    "linalg",
    "linalg_namespace",
    "nn",
    "nn_activation",
    "nn_conv",
    "nn_family2",
    "complex",
    "fft",
    "nn_attention",
    "nn_rnn",
    "nn_ctc",
    "inplace",
    "random",
    "compositions",
    "sparse",
)


def all_ops() -> list:
    """Every entry of every family module, each tagged with its family."""
    import importlib
    from dataclasses import replace

    ops = []
    for family in FAMILIES:
        module = importlib.import_module(f"{__name__}.{family}")
        ops += [replace(op, family=family) for op in module.OPS]
    names = [op.name for op in ops]
    duplicated = {n for n in names if names.count(n) > 1}
    assert not duplicated, f"opdb names must be unique: {sorted(duplicated)}"
    return ops
