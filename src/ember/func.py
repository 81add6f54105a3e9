"""``torch.func``: function transforms (``grad``, ``grad_and_value``, ``vjp``, ``jvp``,
``jacrev``, ``jacfwd``, ``hessian``, ``vmap``, ``functional_call``) with torch's names,
signatures, results and errors for common misuse.

They are built on ember's autograd rather than on functorch's levels:

- reverse mode (``grad``, ``vjp``, ``jacrev``) runs the function on aliases of the inputs
  that require grad (``x + 0`` with a leaf zero: the alias keeps any outer graph and forward
  tangent of ``x``) and calls ``ember.autograd.grad``; the backward is recorded
  (``create_graph=True``) whenever an outer transform or outer autograd may differentiate the
  result, so transforms nest (``grad(grad(f))``, ``jacrev(jacfwd(f))``, ``hessian``);
- forward mode (``jvp``, ``jacfwd``) uses ``ember.autograd.forward_ad`` (one dual level);
  inside an active level (forward over forward) ``jvp`` is computed by the double-vjp trick
  (``J v`` is the gradient of ``<J^T u, v>`` with respect to ``u``), which is exact;
- ``vmap`` is a Python loop over the mapped dimension, calling the function on each slice and
  stacking the results: correct, not fast. ``randomness="same"`` replays the random state for
  every slice, ``"different"`` draws anew, ``"error"`` (the default) raises torch's error when
  the function draws random numbers. ``chunk_size`` is accepted and has no effect.

Inputs and outputs may be pytrees of tuples, lists and dicts of Tensors.

Example:
    >>> import ember, ember.func
    >>> x = ember.tensor([1.0, 2.0], dtype=ember.float64)
    >>> ember.func.grad(lambda x: (x**3).sum())(x)
    tensor([ 3., 12.], dtype=torch.float64)
    >>> ember.func.vmap(ember.func.grad(lambda x: (x**2).sum()))(ember.ones(3, 2))
    tensor([[2., 2.],
            [2., 2.],
            [2., 2.]])
"""

from __future__ import annotations

import functools

import numpy as np

from . import autograd as _autograd
from ._aten._core import QUIET, quiet_reset, quiet_set
from ._aten.shape import stack
from ._compile.capture import (
    CallOp,
    Capture,
    CheckOp,
    GraphBreak,
    Literal,
    SideEffectOp,
    SlotRef,
    ViewOf,
)
from ._creation import get_rng_state, set_rng_state, zeros, zeros_like
from ._tensor import DATA_CLASSES, Tensor
from .autograd import forward_ad as _fwad
from .autograd.opdef import ELEMENTWISE, apply
from .autograd.recording import fw as _fw
from .autograd.recording import record_backward as _record_backward
from .nn.utils.stateless import functional_call as _functional_call

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "vjp",
    "vmap",
]

_depth = [0]  # how many transforms are running (nested ones must record their backward)


# -- pytrees -------------------------------------------------------------------------------------


def _flatten(tree):
    """(leaves, rebuild): the leaves of nested tuples/lists/dicts and how to rebuild them."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(t) for t in tree]
        leaves = [leaf for p in parts for leaf in p[0]]
        kind = type(tree)

        def rebuild(vals):
            out, i = [], 0
            for p in parts:
                n = len(p[0])
                out.append(p[1](vals[i : i + n]))
                i += n
            if kind in (tuple, list):
                return kind(out)
            if hasattr(kind, "_make"):  # a namedtuple
                return kind._make(out)
            return kind(out)  # torch.return_types.*

        return leaves, rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        sub_leaves, sub_rebuild = _flatten([tree[k] for k in keys])
        return sub_leaves, lambda vals: dict(zip(keys, sub_rebuild(vals)))
    return [tree], lambda vals: vals[0]


def _check_tensors(leaves, what="Thing passed to transform API"):
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise ValueError(f"{what} must be Tensor, got {type(leaf)}")


def _argnums(argnums, n_args):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if isinstance(argnums, tuple) and len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError("argnums must be int or Tuple[int, ...], got: " + str(type(argnums)))
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnum={a}, but only {n_args} positional inputs")
    nums = tuple(a % n_args for a in nums)
    if len(set(nums)) != len(nums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return nums


def _alias(x: Tensor) -> Tensor:
    """``x`` seen through a tensor that requires grad, keeping x's graph and tangent."""
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError("only Tensors of floating point dtype can require gradients")

    return x + zeros_like(x).detach().requires_grad_(True)


def _recording(leaves) -> bool:
    """Whether the result of a transform may itself be differentiated."""
    return (
        _depth[0] > 1
        or _fw.level >= 0
        or any(isinstance(t, Tensor) and t.requires_grad for t in leaves)
    )


def _grads(outputs, inputs, grad_outputs, create_graph):

    gs = _autograd.grad(
        outputs,
        inputs,
        grad_outputs,
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
    )
    return [zeros_like(x) if g is None else g for g, x in zip(gs, inputs)]


def _detach_tree(tree, keep: bool):
    if keep:
        return tree
    leaves, rebuild = _flatten(tree)
    return rebuild([t.detach() if isinstance(t, Tensor) else t for t in leaves])


class _Transform:
    def __enter__(self):
        _depth[0] += 1

    def __exit__(self, *exc):
        _depth[0] -= 1


def _prepare(args, argnums):
    """Alias the differentiated arguments: (new args, per argnum (leaves, rebuild), flat)."""
    nums = _argnums(argnums, len(args))
    args = list(args)
    trees, flat = [], []
    for a in nums:
        leaves, rebuild = _flatten(args[a])
        _check_tensors(leaves)
        aliased = [_alias(t) for t in leaves]
        args[a] = rebuild(aliased)
        trees.append((aliased, rebuild))
        flat.extend(aliased)
    return args, nums, trees, flat


def _regroup(grads, trees, argnums):
    out, i = [], 0
    for leaves, rebuild in trees:
        out.append(rebuild(grads[i : i + len(leaves)]))
        i += len(leaves)
    return tuple(out) if isinstance(argnums, tuple) else out[0]


# -- reverse mode --------------------------------------------------------------------------------


def grad_and_value(func, argnums=0, has_aux=False):
    """``grad`` that also returns the function's value: ``(grad, value)``, or
    ``(grad, (value, aux))`` with ``has_aux``.

    Example:
        >>> import ember, ember.func
        >>> ember.func.grad_and_value(lambda x: (x**2).sum())(ember.tensor([3.0]))
        (tensor([6.]), tensor(9.))
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _Transform(), _autograd.enable_grad():
            outer = _flatten(list(args))[0]
            keep = _recording(outer)
            args2, nums, trees, flat = _prepare(args, argnums)
            out = func(*args2, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f should be a tuple: "
                        "(output, aux) if has_aux is True"
                    )
                out, aux = out
            if not isinstance(out, Tensor):
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                    f"got {type(out)}"
                )
            if out.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got tensor with {out.dim()} dims. Maybe you wanted to use the vjp or "
                    "jacrev APIs instead?"
                )
            if out.requires_grad:
                gs = _grads([out], flat, None, keep)
            else:
                gs = [zeros_like(x) for x in flat]
            g = _detach_tree(
                _regroup([t if keep else t.detach() for t in gs], trees, argnums), keep
            )
            value = out if keep else out.detach()
            if has_aux:
                return g, (value, _detach_tree(aux, keep))
            return g, value

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar function with respect to the arguments ``argnums`` (an int,
    or a tuple: a tuple of gradients). ``has_aux``: ``func`` returns ``(output, aux)`` and
    ``grad`` returns ``(gradient, aux)``.

    Example:
        >>> import ember, ember.func
        >>> f = lambda x, y: (x * y).sum()
        >>> ember.func.grad(f, argnums=(0, 1))(ember.tensor([1.0]), ember.tensor([2.0]))
        (tensor([2.]), tensor([1.]))
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = grad_and_value(func, argnums, has_aux)(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` returns, as a tuple, the
    vector-Jacobian product for each primal (and ``(output, vjp_fn, aux)`` with ``has_aux``).

    Example:
        >>> import ember, ember.func
        >>> out, fn = ember.func.vjp(lambda x: x * 3, ember.tensor([1.0, 2.0]))
        >>> fn(ember.tensor([1.0, 1.0]))
        (tensor([3., 3.]),)
    """
    with _Transform(), _autograd.enable_grad():
        leaves0 = _flatten(list(primals))[0]
        keep = _recording(leaves0)
        args2, _, trees, flat = _prepare(primals, tuple(range(len(primals))) or (0,))
        out = func(*args2)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(
                    "vjp(f, *primals): output of function f should be a tuple: (output, aux) "
                    "if has_aux is True"
                )
            out, aux = out
        out_leaves, _ = _flatten(out)
        _check_tensors(
            out_leaves,
            "vjp(f, *primals): Expected f to be a function that has "
            "only Tensors as outputs; output",
        )

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        ct_leaves, _ = _flatten(cotangents)
        if len(ct_leaves) != len(out_leaves):
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure "
                "of outputs to the function"
            )
        for c, o in zip(ct_leaves, out_leaves):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and "
                    f"output[0] has a shape of {o.shape}."
                )
        with _Transform(), _autograd.enable_grad():
            cg = keep or _recording(ct_leaves) if create_graph is None else create_graph
            pairs = [(o, c) for o, c in zip(out_leaves, ct_leaves) if o.requires_grad]
            if pairs:
                gs = _grads([p[0] for p in pairs], flat, [p[1] for p in pairs], cg)
            else:
                gs = [zeros_like(x) for x in flat]
            if not cg:
                gs = [g.detach() for g in gs]
            return tuple(_regroup(gs, trees, tuple(range(len(primals)))))

    result = _detach_tree(out, keep)
    if has_aux:
        return result, vjp_fn, _detach_tree(aux, keep)
    return result, vjp_fn


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian by reverse mode: one vector-Jacobian product per output element. The
    result has the output's shape followed by the input's (a tuple over ``argnums`` tuples,
    a pytree over pytree outputs).

    Example:
        >>> import ember, ember.func
        >>> ember.func.jacrev(lambda x: x**2)(ember.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):

        with _Transform(), _autograd.enable_grad():
            keep = _recording(_flatten(list(args))[0])
            args2, nums, trees, flat = _prepare(args, argnums)
            out = func(*args2, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(
                        "jacrev(f, ...)(*args): output of function f should be a tuple: "
                        "(output, aux) if has_aux is True"
                    )
                out, aux = out
            out_leaves, out_rebuild = _flatten(out)
            _check_tensors(
                out_leaves,
                "jacrev(f, ...)(*args): Expected f to be a function "
                "that has only Tensors as outputs; output",
            )
            per_out = []
            for o in out_leaves:
                rows = []
                flat_o = o.reshape(-1)
                for i in range(flat_o.shape[0]):
                    if o.requires_grad:
                        rows.append(_grads([flat_o[i]], flat, None, keep))
                    else:
                        rows.append([zeros(tuple(x.shape), dtype=x.dtype) for x in flat])
                jacs = []
                for k, x in enumerate(flat):
                    if rows:
                        j = stack([r[k] for r in rows]).reshape(tuple(o.shape) + tuple(x.shape))
                    else:
                        j = zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype)
                    jacs.append(j if keep else j.detach())
                per_out.append(_regroup(jacs, trees, argnums))
            res = out_rebuild(per_out)
            if has_aux:
                return res, _detach_tree(aux, keep)
            return res

    return wrapper


# -- forward mode --------------------------------------------------------------------------------


def _jvp_by_vjp(func, primals, tangents):
    """J v as the gradient of <J^T u, v> with respect to u (no dual level needed)."""

    with _autograd.enable_grad():
        xs = [_alias(p) for p in primals]
        out = func(*xs)
        out_leaves, rebuild = _flatten(out)
        us = [zeros_like(o).detach().requires_grad_(True) for o in out_leaves]
        pairs = [(o, u) for o, u in zip(out_leaves, us) if o.requires_grad]
        if pairs:
            g = _grads([p[0] for p in pairs], xs, [p[1] for p in pairs], True)
            inner = sum(((gi * ti).sum() for gi, ti in zip(g, tangents)), 0)
            if isinstance(inner, Tensor) and inner.requires_grad:
                jv = _grads([inner], us, None, True)
            else:
                jv = [zeros_like(o) for o in out_leaves]
        else:
            jv = [zeros_like(o) for o in out_leaves]
    return out, rebuild(jv)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product by forward mode.

    Example:
        >>> import ember, ember.func
        >>> x = ember.tensor([1.0, 2.0])
        >>> ember.func.jvp(lambda x: x**2, (x,), (ember.ones(2),))
        (tensor([1., 4.]), tensor([2., 4.]))
    """
    if not isinstance(primals, tuple):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be "
            "valid to call f(*primals)."
        )
    if not isinstance(tangents, tuple):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected tangents to be a tuple. E.g. it should be "
            "valid to call f(*primals)."
        )
    p_leaves, p_rebuild = _flatten(list(primals))
    t_leaves, _ = _flatten(list(tangents))
    if len(p_leaves) != len(t_leaves):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same "
            "python structure."
        )
    _check_tensors(p_leaves)
    _check_tensors(t_leaves)
    for p, t in zip(p_leaves, t_leaves):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {list(p.shape)} "
                f"while the given forward gradient is of size {list(t.shape)}."
            )
    aux_box = []

    def call(*xs):
        out = func(*p_rebuild(list(xs)))
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(
                    "jvp(f, primals, tangents): output of function f should be a tuple: "
                    "(output, aux) if has_aux is True"
                )
            out, aux = out
            aux_box.append(aux)
        _check_tensors(
            _flatten(out)[0],
            "jvp(f, primals, tangents): Expected f(*primals) "
            "to return only tensors, got unsupported type; output",
        )
        return out

    with _Transform():
        keep = _recording(p_leaves + t_leaves)
        if _fw.level >= 0:  # forward over forward: by reverse mode
            out, jv = _jvp_by_vjp(call, p_leaves, t_leaves)
        else:
            with _fwad.dual_level():
                duals = [_fwad.make_dual(p, t) for p, t in zip(p_leaves, t_leaves)]
                res = call(*duals)
                leaves, rebuild = _flatten(res)
                unpacked = [_fwad.unpack_dual(o) for o in leaves]

                out = rebuild([u.primal for u in unpacked])
                jv = rebuild(
                    [zeros_like(u.primal) if u.tangent is None else u.tangent for u in unpacked]
                )
        out, jv = _detach_tree(out, keep), _detach_tree(jv, keep)
        if has_aux:
            return out, jv, _detach_tree(aux_box[0], keep)
        return out, jv


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian by forward mode: one Jacobian-vector product per input element (the
    output's shape followed by the input's).

    Example:
        >>> import ember, ember.func
        >>> ember.func.jacfwd(lambda x: x.sin())(ember.zeros(2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )

    @functools.wraps(func)
    def wrapper(*args, **kwargs):

        nums = _argnums(argnums, len(args))
        sel_leaves, sel_rebuilds = [], []
        for a in nums:
            leaves, rebuild = _flatten(args[a])
            _check_tensors(leaves)
            sel_leaves.append(leaves)
            sel_rebuilds.append(rebuild)
        flat = [x for ls in sel_leaves for x in ls]
        aux_box = []

        def f(*xs):
            new, i = list(args), 0
            for a, ls, rb in zip(nums, sel_leaves, sel_rebuilds):
                new[a] = rb(list(xs[i : i + len(ls)]))
                i += len(ls)
            out = func(*new, **kwargs)
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(
                        "jacfwd(f, ...)(*args): output of function f should be a tuple: "
                        "(output, aux) if has_aux is True"
                    )
                out, aux = out
                aux_box[:] = [aux]
            return out

        columns = []  # per input leaf: list over its elements of flat output-leaf tangents
        out = None
        for k, x in enumerate(flat):
            cols = []
            for i in range(x.numel()):
                ts = [zeros_like(y).detach() for y in flat]
                basis = zeros(x.numel(), dtype=x.dtype)
                basis[i] = 1
                ts[k] = basis.reshape(tuple(x.shape))
                out, jv = jvp(f, tuple(flat), tuple(ts))
                cols.append(_flatten(jv)[0])
            columns.append(cols)
        if out is None:  # no input element: still run once for the output's structure
            out = f(*flat)
        out_leaves, out_rebuild = _flatten(out)
        per_out = []
        for j, o in enumerate(out_leaves):
            jacs = []
            for k, x in enumerate(flat):
                cols = columns[k]
                if cols:
                    jm = stack([c[j].reshape(-1) for c in cols], -1)
                    jacs.append(jm.reshape(tuple(o.shape) + tuple(x.shape)))
                else:
                    jacs.append(zeros(tuple(o.shape) + tuple(x.shape), dtype=o.dtype))
            i, grouped = 0, []
            for ls, rb in zip(sel_leaves, sel_rebuilds):
                grouped.append(rb(jacs[i : i + len(ls)]))
                i += len(ls)
            per_out.append(tuple(grouped) if isinstance(argnums, tuple) else grouped[0])
        res = out_rebuild(per_out)
        if has_aux:
            return res, aux_box[0]
        return res

    return wrapper


def hessian(func, argnums=0):
    """The Hessian: ``jacfwd(jacrev(func, argnums), argnums)``.

    Example:
        >>> import ember, ember.func
        >>> ember.func.hessian(lambda x: (x**3).sum())(ember.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


# -- vmap ------------------------------------------------------------------------------------------


def _fname(func) -> str:
    return getattr(func, "__name__", repr(func))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over a dimension of its inputs (``in_dims``: an int, None for an
    unmapped input, or a pytree matching the inputs), the results stacked along ``out_dims``.

    The function's declared ops are captured once on one slice and applied to the whole
    batch by each op's batching rule (``defop(batch=...)``; elementwise ops by
    broadcasting); an op without a rule loops over the batch by itself, as torch's
    fallback does. A function that cannot be captured (data-dependent Python control flow,
    random draws, values read outside the declared ops) runs once per slice instead.
    ``randomness`` as torch's: ``"error"`` raises if ``func`` draws random numbers,
    ``"same"`` gives every slice the same draws, ``"different"`` independent ones.
    ``chunk_size`` has no effect.

    Example:
        >>> import ember, ember.func
        >>> ember.func.vmap(ember.dot)(ember.ones(3, 2), ember.ones(3, 2))
        tensor([2., 2., 2.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )
    name = _fname(func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):

        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible "
                "with the structure of `inputs`."
            )
        mapped = []  # (arg index, leaf index, leaf, dim)
        flat_args = []
        for ai, (a, d) in enumerate(zip(args, dims)):
            leaves, rebuild = _flatten(a)
            if isinstance(d, (tuple, list, dict)):
                d_leaves = _flatten(d)[0]
                if len(d_leaves) != len(leaves):
                    raise ValueError(
                        f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                        "compatible with the structure of `inputs`."
                    )
            else:
                d_leaves = [d] * len(leaves)
            for li, (leaf, dl) in enumerate(zip(leaves, d_leaves)):
                if dl is None:
                    continue
                if not isinstance(dl, int):
                    raise ValueError(
                        f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims must be "
                        f"int or None, got {type(dl)}"
                    )
                if not isinstance(leaf, Tensor):
                    raise ValueError(
                        f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dl} for "
                        f"an input but the input is of type {type(leaf)}. We cannot vmap over "
                        "non-Tensor arguments, please use None as the respective in_dim"
                    )
                nd = leaf.dim()
                if not -nd <= dl < nd:
                    raise ValueError(
                        f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dl} for "
                        f"some input, but that input is a Tensor of dimensionality {nd} so "
                        f"expected in_dim to satisfy {-max(nd, 1)} <= in_dim < {max(nd, 1)}."
                    )
                mapped.append((ai, li, leaf, dl % nd))
            flat_args.append((leaves, rebuild))
        if not mapped:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): at least one input must be "
                "a Tensor mapped by in_dims (got in_dims all None or no Tensor inputs)."
            )
        sizes = [leaf.shape[d] for _, _, leaf, d in mapped]
        if len(set(sizes)) != 1:
            raise ValueError(
                "vmap: Expected all tensors to have the same size in the mapped dimension, "
                f"got sizes {sizes} for the mapped dimension"
            )
        batched = _vmap_by_rules(func, flat_args, mapped, kwargs, sizes[0], out_dims, name)
        if batched is not None:
            return batched
        results = []
        state = get_rng_state()
        for b in range(sizes[0]):
            if randomness == "same":
                set_rng_state(state)
            new_leaves = [list(ls) for ls, _ in flat_args]
            for ai, li, leaf, d in mapped:
                new_leaves[ai][li] = leaf.select(d, b)
            new_args = [rb(nl) for nl, (_, rb) in zip(new_leaves, flat_args)]
            before = get_rng_state() if randomness == "error" else None
            out = func(*new_args, **kwargs)
            if randomness == "error" and not bool((get_rng_state() == before).all()):
                raise RuntimeError(
                    "vmap: called random operation while in randomness error mode. Please "
                    "either use the 'same' or 'different' randomness flags on vmap or perform "
                    "the randomness operation out of vmap"
                )
            results.append(out)
        out_leaves0, out_rebuild = _flatten(results[0])
        o_dims = _out_dims(name, out_dims, len(out_leaves0))
        per_b = [_flatten(r)[0] for r in results]
        stacked = []
        for j, od in enumerate(o_dims):
            col = [leaves[j] for leaves in per_b]
            if od is None:
                stacked.append(col[0])
                continue
            _check_out_dim(name, col[0], od, col[0].dim() + 1 if isinstance(col[0], Tensor) else 0)
            stacked.append(stack(col, od))
        return out_rebuild(stacked)

    return wrapper


# -- vmap by the ops' batching rules ------------------------------------------------------------


def _vmap_by_rules(func, flat_args, mapped, kwargs, size: int, out_dims, name: str):
    """``func`` run once on batched tensors: its declared ops are captured on one slice
    (``ember.compile``'s capture), then applied to whole batches, each by its declared
    batching rule (``defop(batch=...)``; elementwise ops by broadcasting) or, lacking one, by
    a loop over the batch for that op alone. Recorded with ember ops, so the result is
    differentiable. None when the function cannot be captured (data-dependent Python,
    random draws, an op reading values outside the graph): the caller loops over slices."""
    batch_of = {}  # slot -> (tensor, batched)
    moved = {}
    samples = [list(ls) for ls, _ in flat_args]
    for ai, li, leaf, d in mapped:
        bt = leaf.movedim(d, 0) if d else leaf
        sample = Tensor._wrap(bt._data[0])
        samples[ai][li] = sample
        moved[id(sample)] = bt
    sample_args = [rb(nl) for nl, (_, rb) in zip(samples, flat_args)]
    cap = Capture()
    for nl in samples:
        for leaf in nl:
            if isinstance(leaf, Tensor):
                cap.add_input(leaf)
    state = get_rng_state()
    _record_backward.append(True)  # autograd.grad inside func: its rules' ops are captured
    try:
        with cap:
            out = func(*sample_args, **kwargs)
        cap.check()
    except GraphBreak:
        cap.restore()
        return None
    finally:
        _record_backward.pop()
    if not bool((get_rng_state() == state).all()):  # random draws: randomness= decides
        set_rng_state(state)
        return None
    for k, kind in enumerate(cap.kinds):
        t = cap.values[k]
        if kind == "input":
            bt = moved.get(id(t))
            batch_of[k] = (bt, True) if bt is not None else (t, False)
        elif kind in ("attr", "const"):
            batch_of[k] = (t, False)
    if cap.before:  # buffers updated in place: the per-slice loop makes those updates
        cap.restore()
        return None
    token = quiet_set(QUIET)  # the declared forwards run bare: NumPy's warnings off, as in ops
    try:
        for op in cap.ops:
            if not _apply_batched(op, batch_of, size):
                return None
    finally:
        quiet_reset(token)
    out_leaves, rebuild = _flatten(out)
    if not _rows_match(func, flat_args, mapped, kwargs, size, out_leaves, cap, batch_of):
        return None
    o_dims = _out_dims(name, out_dims, len(out_leaves))
    results = []
    for leaf, od in zip(out_leaves, o_dims):
        if not isinstance(leaf, Tensor):
            if od is not None:
                _check_out_dim(name, leaf, od, 0)
            results.append(leaf)
            continue
        k = cap.by_tensor.get(id(leaf))
        if k is None or k not in batch_of:
            return None
        t, is_batched = batch_of[k]
        if od is None:
            if is_batched:
                return None  # the loop raises torch's error for a batched output
            results.append(t)
            continue
        if not is_batched:
            t = t.expand((size,) + tuple(t.shape))
        nd = t.dim()
        _check_out_dim(name, t, od, nd)
        results.append(t.movedim(0, od) if od % nd else t)
    return rebuild(results)


def _out_dims(name: str, out_dims, n: int) -> list:
    """``out_dims`` per output leaf, with torch's error when the structures differ."""
    o_dims = _flatten(out_dims)[0] if isinstance(out_dims, (tuple, list)) else [out_dims] * n
    if len(o_dims) != n:
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            "compatible with the structure of `outputs`."
        )
    return o_dims


def _check_out_dim(name: str, leaf, od: int, nd: int) -> None:
    """torch's errors for an output placed at ``od`` of a stacked result of ``nd`` dims."""
    if not isinstance(leaf, Tensor):
        raise ValueError(
            f"vmap({name}, ...): `{name}` must only return Tensors, got type "
            f"{type(leaf)}. Did you mean to set out_dims= to None for output?"
        )
    if not -nd <= od < nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {od})"
        )


def _rows_match(func, flat_args, mapped, kwargs, size, out_leaves, cap, batch_of) -> bool:
    """The batched results' first and last rows equal ``func`` on the first and last slices
    (the first was the capture's run): an op that read a slice's values outside the graph
    would have frozen them into the replay."""
    leaves = [list(ls) for ls, _ in flat_args]
    for ai, li, leaf, d in mapped:
        leaves[ai][li] = leaf.detach().select(d, size - 1)
    with _autograd.no_grad():
        last = _flatten(func(*[rb(nl) for nl, (_, rb) in zip(leaves, flat_args)], **kwargs))[0]
    for first, other in zip(out_leaves, last):
        if not isinstance(first, Tensor):
            continue
        k = cap.by_tensor.get(id(first))
        if k is None or k not in batch_of:
            return False
        t, is_batched = batch_of[k]
        rows = (t[0], t[size - 1]) if is_batched else (t, t)
        for want, got in zip((first, other), rows):
            a, b = want.detach()._data, got.detach()._data
            if a.shape != b.shape or not np.allclose(a, b, rtol=1e-6, atol=1e-7, equal_nan=True):
                return False
    return True


def _apply_batched(op, batch_of: dict, size: int) -> bool:
    """One captured op on batched values (see ``_vmap_by_rules``); False if it cannot be."""

    def value(a):
        if isinstance(a, SlotRef):
            return batch_of[a.k]
        return (a.value if isinstance(a, Literal) else a), False

    if type(op) is CallOp:  # a function without a declaration: call it per slice
        args = [value(a) for a in op.args]
        kwargs = {k: value(v) for k, v in op.kwargs.items()}
        if not any(b for _, b in args) and not any(b for _, b in kwargs.values()):
            res = op.fn(*[v for v, _ in args], **{k: v for k, (v, _) in kwargs.items()})
            batch_of[op.outs[0]] = (res, False)
            return True
        rows = [
            op.fn(
                *[v[i] if b else v for v, b in args],
                **{k: (v[i] if b else v) for k, (v, b) in kwargs.items()},
            )
            for i in range(size)
        ]
        batch_of[op.outs[0]] = (stack(rows), True)
        return True
    if type(op) is SideEffectOp:  # an in-place update of a buffer: per slice, as torch's
        return False
    if type(op) is CheckOp:  # a check of values (indices in range): every slice at once
        if any(isinstance(a, ViewOf) for a in op.args):
            return False
        values = [value(a)[0] for a in op.args]
        op.fn(*[v._data if isinstance(v, Tensor) else v for v in values])
        return True
    if op.cls is None:  # an alias (detach)
        t, b = value(op.args[0])
        batch_of[op.outs[0]] = (t.detach(), b)
        return True
    if _holds_arrays(op.params):
        return False  # a parameter computed from one slice's values
    cls = op.cls
    variadic = cls._variadic
    args = [value(a) for a in (op.args[0] if variadic else op.args)]
    is_batched = [b for _, b in args]
    inputs = [v for v, _ in args]
    if not any(is_batched):
        arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
        res = apply(cls, [inputs] if variadic else tuple(inputs), arrays, op.params)
        _store(op, batch_of, res, False)
        return True
    rule = cls._batch
    if rule == ELEMENTWISE:  # broadcasting: batched operands get the result's rank
        rank = max(len(m[0]) for m in op.meta)
        aligned = []
        for x, b in args:
            if b and x.dim() - 1 < rank:
                x = x.reshape((size,) + (1,) * (rank - x.dim() + 1) + tuple(x.shape[1:]))
            aligned.append(x)
        arrays = [x._data if isinstance(x, Tensor) else x for x in aligned]
        _store(op, batch_of, apply(cls, tuple(aligned), arrays, op.params), True)
        return True
    if rule is not None:
        full = [
            x.expand((size,) + tuple(x.shape)) if isinstance(x, Tensor) and not b else x
            for x, b in args
        ]
        res = rule(full, *op.params) if variadic else rule(*full, *op.params)
        _store(op, batch_of, res, True)
        return True
    # No rule: this op alone loops over the batch (torch's fallback).
    rows = []
    for i in range(size):
        xs = [x[i] if b else x for x, b in args]
        arrays = [x._data if isinstance(x, Tensor) else x for x in xs]
        rows.append(apply(cls, [xs] if variadic else tuple(xs), arrays, op.params))
        first = rows[0] if cls._multi_output else [rows[0]]
        if i == 0 and any(type(r._data) in DATA_CLASSES for r in first if isinstance(r, Tensor)):
            return False  # sparse results do not stack: the whole function runs per slice
    if cls._multi_output:
        res = [stack([r[j] for r in rows]) for j in range(len(op.outs))]
    else:
        res = stack(rows)
    _store(op, batch_of, res, True)
    return True


def _store(op, batch_of: dict, res, batched: bool) -> None:
    outs = res if isinstance(res, (list, tuple)) else [res]
    for k, t in zip(op.outs, outs):
        batch_of[k] = (t, batched)


def _holds_arrays(value) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_holds_arrays(v) for v in value)
    return isinstance(value, (np.ndarray, Tensor, SlotRef, ViewOf))


# -- functional_call -------------------------------------------------------------------------------


def functional_call(
    module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    """``module(*args, **kwargs)`` with its parameters and buffers replaced by the given
    tensors (a dict, or a tuple of dicts with distinct keys), the module left unchanged.

    Example:
        >>> import ember, ember.func
        >>> lin = ember.nn.Linear(2, 1)
        >>> params = {"weight": ember.ones(1, 2), "bias": ember.zeros(1)}
        >>> ember.func.functional_call(lin, params, (ember.ones(1, 2),))
        tensor([[2.]])
    """

    if isinstance(parameter_and_buffer_dicts, dict):
        merged = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        merged = {}
        seen = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                seen[k] = seen.get(k, 0) + 1
        dup = [k for k, c in seen.items() if c > 1]
        if dup:
            raise ValueError(
                f"{dup} appeared in multiple dictionaries; behavior of functional call is ambiguous"
            )
        for d in parameter_and_buffer_dicts:
            merged.update(d)
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but "
            f"got {type(parameter_and_buffer_dicts)}"
        )
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    return _functional_call(module, merged, args, kwargs, tie_weights=tie_weights, strict=strict)
