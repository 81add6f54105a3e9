"""One way to define an op: a declaration that becomes the op's graph node class.

Every differentiable op is declared once, in its family's module::

    MulBackward0 = defop(
        "MulBackward0",                 # the grad_fn name torch gives the op
        inputs=("self", "other"),       # tensor operands, in next_functions order
        forward=np.multiply,            # the op on arrays: forward(*arrays, *params)
        vjp={                           # one derivative per differentiable input
            "self": lambda g, other: g * other,
            "other": lambda g, self: g * self,
        },
        jvp=ELEMENTWISE,                # forward mode derived from the rules above
    )

A rule's first argument is the incoming gradient; its other arguments are named after
what it reads: the op's ``inputs``, its ``outputs`` (``result`` for a single output),
values its forward computed (``saves``), its non-tensor ``params``, or
``needs_input_grad``. From those names the declaration derives what to save, and saves
only what the inputs that need a gradient need (as torch does). Rules are written with
operators, NumPy ufuncs and the methods arrays and Tensors share, so the same line runs on
arrays in a plain backward and on Tensors in a recorded one (``create_graph=True``), which
gives every higher order. An op whose rules only run on arrays declares ``composite``, the
op written with differentiable ops, and is differentiated through it in higher order.

Forward mode follows from the kind of function the op is:

- ``ELEMENTWISE``: each input's Jacobian is diagonal (up to broadcasting), so the tangent
  is the sum of the rules applied to the inputs' tangents. Complex gradients follow torch's
  convention, ``g * conj(f'(z))`` (rules conjugate with ``cconj``, free for reals), so the
  tangent is ``conj(rule(conj(t)))`` = ``f'(z) * t``: exact for holomorphic rules;
- ``LINEAR``: the op applied to the tangents (recorded with this same node class);
- ``BILINEAR`` (multilinear): the product rule, the op with one tangent at a time;
- ``COMPOSITE``: the tangent of the declared ``composite`` (the op written with other ops);
- a function of ``t_<input>`` tangents (None where an input has none) and the names above;
- None: no forward mode (torch's NotImplementedError when a tangent reaches it).

``view=True`` marks results that share memory with ``inputs[0]``. The class keeps the
declaration (``forward``, ``_rules``) for tools that read ops: explain, tracing, compiling.
"""

from __future__ import annotations

import functools
import inspect
import types

import numpy as np

from .._mode import state as _state
from .._tensor import Tensor
from .engine import run_backward
from .graph import UNSAVED, Node, SavedOutput, SavedValue, edge_of, unpack_as_tensor
from .recording import record, record_multi, resumed, tangent_of

ELEMENTWISE = "elementwise"
LINEAR = "linear"
BILINEAR = "bilinear"
COMPOSITE = "composite"

_KINDS = (ELEMENTWISE, LINEAR, BILINEAR, COMPOSITE)
_RECORDED_GRAD = "needs_input_grad"

__all__ = ["defop", "cconj", "ELEMENTWISE", "LINEAR", "BILINEAR", "COMPOSITE", "apply", "DECLARED"]


def cconj(x):
    """``x`` conjugated if it is complex, else ``x`` itself: no copy and no ufunc call for
    real values (the hot path). For rules on arrays, Tensors (recorded, differentiable) and
    numbers alike: torch's complex gradient of ``f`` holomorphic is ``g * conj(f'(z))``.

    Example:
        >>> import numpy as np
        >>> from ember.autograd.opdef import cconj
        >>> a = np.ones(2)
        >>> cconj(a) is a, cconj(np.array([1j]))
        (True, array([0.-1.j]))
    """
    if type(x) is np.ndarray or isinstance(x, np.generic):
        return np.conjugate(x) if x.dtype.kind == "c" else x
    if isinstance(x, Tensor):
        return x.conj_physical() if x._data.dtype.kind == "c" else x
    return x.conjugate() if isinstance(x, complex) else x


# Every declared op's node class, in declaration order (for tools and the op database test).
DECLARED: list = []


def defop(
    name: str,
    *,
    inputs: tuple = ("self",),
    outputs: tuple = ("result",),
    params: tuple = (),
    saves: tuple = (),
    forward=None,
    vjp=None,
    jvp=None,
    composite=None,
    differentiable: tuple | None = None,
    view: bool = False,
    batch=None,
) -> type[Node]:
    """Declare an op; returns its node class, named ``name`` (see the module docstring).

    Args:
        name: the node's name, exactly ``type(t.grad_fn).__name__`` in torch.
        inputs: names of the tensor operands (``next_functions`` order); ``("*name",)``
            declares a variable number of them (cat, stack, einsum): its rules read
            ``name``, the list of operands.
        outputs: names of the outputs; more than one makes a multi-output node whose rules
            receive the list of output gradients (None where none arrived).
        params: names of the non-tensor parameters passed to ``record`` (a leading ``_``:
            read by the forward alone, not a ``grad_fn._saved_`` attribute as in torch).
        saves: names of arrays the forward computes for the rules (``record``'s extras).
        forward: the op on arrays, ``forward(*input_arrays, *params)`` (with variadic
            inputs ``forward(list_of_arrays, *params)``), returning the output (a tuple for
            several) followed by the ``saves``.
        vjp: ``{input name: rule}`` (inputs without a rule get no gradient), or one
            function returning a gradient per input.
        jvp: ``ELEMENTWISE``, ``LINEAR``, ``BILINEAR``, ``COMPOSITE``, a rule of
            ``t_<input>``, or None.
        composite: the op written with differentiable ops, ``composite(*inputs, *params)``:
            differentiated instead of the rules when the backward is recorded.
        differentiable: per output, whether it gets a gradient (indices do not).
        view: the outputs are views of ``inputs[0]``.
        batch: the op's batching rule for ``vmap``: ``batch(*inputs, *params)`` on inputs
            with a leading batch dimension (unbatched tensor inputs arrive expanded to it),
            written with ember ops, returning the batched output(s). Elementwise ops need
            none: broadcasting batches them (``ELEMENTWISE`` in ``_batch``).

    Example:
        >>> import numpy as np
        >>> from ember.autograd.opdef import defop, ELEMENTWISE
        >>> CubeBackward0 = defop(
        ...     "CubeBackward0",
        ...     forward=lambda a: a**3,
        ...     vjp={"self": lambda g, self: 3 * g * self**2},
        ...     jvp=ELEMENTWISE,
        ... )
        >>> CubeBackward0.__name__
        'CubeBackward0'
    """
    decl = _Declaration(name, inputs, outputs, params, saves, forward, vjp, jvp, composite)
    n_out = len(outputs)
    attrs = {
        "__slots__": (),
        "__module__": _caller_module(),
        "__doc__": _describe(decl),
        "_multi_output": n_out > 1,
        "_variadic": decl.variadic,
        "_view": bool(view),
        "_differentiable": tuple(differentiable or (True,) * n_out),
        "_inputs": tuple(inputs),
        "_outputs": tuple(outputs),
        "_param_names": tuple(params),
        "_saves": tuple(saves),
        "_slots": decl.slots,
        "_rules": decl.rules,
        "_jvp_kind": jvp if isinstance(jvp, str) or jvp is None else "explicit",
        "_batch": batch if batch is not None else (ELEMENTWISE if jvp == ELEMENTWISE else None),
        "forward": staticmethod(forward) if forward is not None else None,
        "composite": staticmethod(composite) if composite is not None else None,
    }
    cls = type(name, (Node,), attrs)
    cls.backward = decl.make_backward()
    cls._save = decl.make_save()
    cls._plan = decl.save_plan()
    cls._jvp = decl.make_jvp(cls)
    for prop_name, prop in decl.saved_properties():
        setattr(cls, prop_name, prop)
    DECLARED.append(cls)
    return cls


def call_forward(cls, arrays, params: tuple):
    """``cls.forward`` on input arrays (a list for variadic ops) and parameters."""
    if cls._variadic:
        return cls.forward(list(arrays), *params)
    return cls.forward(*arrays, *params)


def apply(cls, inputs: tuple, arrays: tuple, params: tuple = ()):
    """Run ``cls.forward`` on ``arrays`` and record the result(s) for ``inputs``.

    Example:
        >>> import ember
        >>> from ember.autograd.opdef import apply
        >>> x = ember.zeros(2, requires_grad=True)
        >>> ExpBackward0 = type(ember.exp(x).grad_fn)
        >>> apply(ExpBackward0, (x,), (x._data,))
        tensor([1., 1.], grad_fn=<ExpBackward0>)
    """
    return record_result(cls, call_forward(cls, arrays, params), tuple(inputs), params)


def record_result(cls, res, inputs: tuple, params: tuple):
    """Record what ``forward`` returned: the output(s), then the arrays to save."""
    n_saves = len(cls._saves)
    if cls._multi_output:
        n_out = len(cls._outputs)
        outs, extras = (res[:n_out], tuple(res[n_out:])) if n_saves else (res, ())
        return record_multi(cls, outs, inputs, params, extras)
    if n_saves:
        return record(cls, res[0], inputs, params, tuple(res[1:]))
    return record(cls, res, inputs, params)


# -- the declaration ----------------------------------------------------------------------------


def _caller_module() -> str:
    frame = inspect.currentframe()
    try:
        return frame.f_back.f_back.f_globals.get("__name__", __name__)
    finally:
        del frame


class _Declaration:
    """Parses a declaration and generates the node class's backward, JVP and saving."""

    def __init__(self, name, inputs, outputs, params, saves, forward, vjp, jvp, composite):
        self.name = name
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.params = tuple(params)
        self.saves = tuple(saves)
        self.forward = forward
        self.composite = composite
        self.jvp = jvp
        self.variadic = len(self.inputs) == 1 and self.inputs[0].startswith("*")
        if self.variadic:
            self.inputs = (self.inputs[0][1:],)
            if not callable(vjp) and vjp is not None:
                raise TypeError(f"{name}: an op of variadic inputs takes one vjp function")
            if saves:
                raise TypeError(f"{name}: an op of variadic inputs saves only its operands")
        known = self.inputs + self.outputs + self.params + self.saves
        if len(set(known)) != len(known):
            raise TypeError(f"{name}: a name is declared twice in {known}")
        self.known = set(known) | {_RECORDED_GRAD}
        # rules: per input, (function, argument names after the gradient) or None
        if vjp is None:
            self.combined = None
            self.rules = dict.fromkeys(self.inputs)
        elif callable(vjp):
            self.combined = (vjp, self._args(vjp, "vjp"))
            self.rules = dict.fromkeys(self.inputs)
        else:
            unknown = set(vjp) - set(self.inputs)
            if unknown:
                raise TypeError(f"{name}: rules for unknown inputs {sorted(unknown)}")
            self.combined = None
            self.rules = {
                k: (None if vjp.get(k) is None else (vjp[k], self._args(vjp[k], k)))
                for k in self.inputs
            }
        if isinstance(jvp, str) and jvp not in _KINDS:
            raise TypeError(f"{name}: jvp must be one of {_KINDS}, a function or None")
        if jvp in (LINEAR, BILINEAR) and forward is None:
            raise TypeError(f"{name}: a {jvp} op needs its forward")
        if jvp == COMPOSITE and composite is None:
            raise TypeError(f"{name}: a composite JVP needs the op's composite")
        if jvp == ELEMENTWISE and self.combined is not None:
            raise TypeError(f"{name}: an elementwise JVP needs one rule per input")
        self.slots = self._plan_slots()

    def _args(self, fn, what: str) -> tuple:
        names = _parameter_names(fn)
        if not names:
            raise TypeError(f"{self.name}: the {what} rule must take the gradient first")
        for a in names[1:]:
            if a not in self.known:
                raise TypeError(f"{self.name}: the {what} rule reads unknown name {a!r}")
        return tuple(names[1:])

    def _referenced(self) -> list:
        used = []
        if self.combined is not None:
            used += self.combined[1]
        for rule in self.rules.values():
            if rule is not None:
                used += rule[1]
        return used

    def _plan_slots(self) -> tuple:
        """Saved slots in order: inputs read by rules (all, with a composite), outputs read
        by rules, then the forward's saved arrays."""
        used = set(self._referenced())
        if self.variadic:
            if used & set(self.outputs):
                raise TypeError(f"{self.name}: an op of variadic inputs cannot save its result")
            return ()
        inputs = [x for x in self.inputs if x in used or self.composite is not None]
        outputs = [o for o in self.outputs if o in used]
        return tuple(inputs + outputs + list(self.saves))

    # -- saving -----------------------------------------------------------------------------

    def _needed_by(self, slot: str):
        """Indices of the inputs whose rule reads ``slot``; None means unconditionally."""
        if slot in self.saves or self.combined is not None or self.composite is not None:
            return None
        if len(self.inputs) == 1:
            return None
        users = [i for i, k in enumerate(self.inputs) if self.rules[k] and slot in self.rules[k][1]]
        return None if len(users) == len(self.inputs) else users

    def save_plan(self) -> int:
        """How ``record`` saves, inlined for the common cases (see ``recording.record``):
        0 nothing, 1 the one input, 2 the one output, 3 the other operand for each of two
        inputs (``mul``), 4 anything else (``_save``)."""
        if self.variadic:
            return 4 if self.make_save() is not None else 0
        if not self.slots:
            return 0
        single_in = len(self.inputs) == 1 and self.composite is None
        if single_in and self.slots == self.inputs:
            return 1
        if single_in and len(self.outputs) == 1 and self.slots == self.outputs:
            return 2
        if (
            len(self.inputs) == 2
            and self.slots == self.inputs
            and self._needed_by(self.inputs[0]) == [1]
            and self._needed_by(self.inputs[1]) == [0]
        ):
            return 3
        return 4

    def make_save(self):
        """``_save(inputs, edges, out, extras)``: the saved tuple for a recorded node."""
        if self.variadic:
            if self.inputs[0] not in self._referenced() and self.composite is None:
                return None
            return _save_operands
        if not self.slots:
            return None
        multi = len(self.outputs) > 1
        lines = ["def _save(inputs, edges, out, extras):"]
        if any(s in self.inputs for s in self.slots):
            lines.append(f"    ({', '.join(f'x{i}' for i in range(len(self.inputs)))},) = inputs")
        items = []
        for slot in self.slots:
            if slot in self.inputs:
                i = self.inputs.index(slot)
                value = f"(x{i} if isinstance(x{i}, Tensor) else SavedValue(x{i}))"
            elif slot in self.outputs:
                k = self.outputs.index(slot)
                value = f"SavedOutput(out[{k}])" if multi else "SavedOutput(out)"
            else:
                value = f"SavedValue(extras[{self.saves.index(slot)}])"
            users = self._needed_by(slot)
            if users is not None:
                cond = " or ".join(f"edges[{i}][0] is not None" for i in users)
                value = f"({value} if {cond} else UNSAVED)"
            items.append(value)
        lines.append(f"    return ({', '.join(items)},)")
        env = {"Tensor": Tensor, "SavedValue": SavedValue, "SavedOutput": SavedOutput}
        env["UNSAVED"] = UNSAVED
        return _compile(lines, "_save", env, self.name)

    # -- backward ---------------------------------------------------------------------------

    def _arg_expr(self, arg: str, slot_var, param_var) -> str:
        if arg == _RECORDED_GRAD:
            return "tuple(e[0] is not None for e in self.next_functions)"
        if arg in self.params:
            return param_var(self.params.index(arg))
        return slot_var(self.slots.index(arg))

    def make_backward(self):
        """``backward(self, grad, *saved)``: each input's rule, skipped for an input that
        takes no gradient."""
        if self.variadic:
            return self._variadic_backward()
        slot_vars = [f"s{i}" for i in range(len(self.slots))]
        head = f"def backward(self, g{''.join(', ' + v for v in slot_vars)}):"
        env = {"np": np, "Tensor": Tensor}
        lines = [head]
        if self.composite is not None:
            env["composite_vjp"] = _composite_vjp
            first = "g" if len(self.outputs) == 1 else "next((x for x in g if x is not None), None)"
            lines.append(f"    if isinstance({first}, Tensor):")
            inputs = ", ".join(f"s{self.slots.index(x)}" for x in self.inputs)
            lines.append(f"        return composite_vjp(self, g, ({inputs},))")
        if self.params:
            lines.append(
                f"    ({', '.join(f'p{i}' for i in range(len(self.params)))},) = self._params"
            )

        def call(fn_var, args):
            exprs = [self._arg_expr(a, lambda i: f"s{i}", lambda i: f"p{i}") for a in args]
            return f"{fn_var}(g{''.join(', ' + e for e in exprs)})"

        if self.combined is not None:
            env["R"] = self.combined[0]
            lines.append(f"    return {call('R', self.combined[1])}")
            return _compile(lines, "backward", env, self.name)
        terms = []
        for i, k in enumerate(self.inputs):
            rule = self.rules[k]
            if rule is None:
                terms.append("None")
                continue
            env[f"R{i}"] = rule[0]
            term = call(f"R{i}", rule[1])
            if len(self.inputs) > 1:
                term = f"(None if e[{i}][0] is None else {term})"
            terms.append(term)
        if len(self.inputs) == 1:
            rule = self.rules[self.inputs[0]]
            if (
                rule is not None
                and self.composite is None
                and not self.params
                and rule[1] == self.slots
                and len(self.outputs) == 1
            ):
                return staticmethod(rule[0])  # the rule is the backward: one call less
            lines.append(f"    return {terms[0]}")
        else:
            lines.append("    e = self.next_functions")
            lines.append(f"    return ({', '.join(terms)},)")
        return _compile(lines, "backward", env, self.name)

    def _variadic_backward(self):
        env = {"np": np, "Tensor": Tensor}
        lines = ["def backward(self, g, *operands):"]
        if self.composite is not None:
            env["composite_vjp"] = _composite_vjp
            lines.append("    if isinstance(g, Tensor):")
            lines.append("        return composite_vjp(self, g, operands)")
        if self.params:
            lines.append(
                f"    ({', '.join(f'p{i}' for i in range(len(self.params)))},) = self._params"
            )
        if self.combined is None:
            lines.append("    return None")
            return _compile(lines, "backward", env, self.name)
        env["R"] = self.combined[0]
        exprs = []
        for a in self.combined[1]:
            if a == self.inputs[0]:
                exprs.append("list(operands)")
            elif a == _RECORDED_GRAD:
                exprs.append("tuple(e[0] is not None for e in self.next_functions)")
            else:
                exprs.append(f"p{self.params.index(a)}")
        lines.append(f"    return R(g{''.join(', ' + e for e in exprs)})")
        return _compile(lines, "backward", env, self.name)

    # -- forward mode -------------------------------------------------------------------------

    def _jvp_env_expr(self, arg: str) -> str:
        if self.variadic and arg == self.inputs[0]:
            return "list(inputs)"
        if self.variadic and arg == "t_" + self.inputs[0]:
            return "list(tangents)"
        if arg in self.inputs:
            return f"inputs[{self.inputs.index(arg)}]"
        if arg in self.outputs:
            return f"outputs[{self.outputs.index(arg)}]"
        if arg in self.saves:
            return f"extras[{self.saves.index(arg)}]"
        if arg in self.params:
            return f"params[{self.params.index(arg)}]"
        if arg.startswith("t_") and arg[2:] in self.inputs:
            return f"tangents[{self.inputs.index(arg[2:])}]"
        if arg == _RECORDED_GRAD:
            return "tuple(t is not None for t in tangents)"
        raise TypeError(f"{self.name}: the jvp rule reads unknown name {arg!r}")

    def make_jvp(self, cls):
        """``_jvp(tangents, inputs, outputs, extras, params)``: the outputs' tangents."""
        jvp = self.jvp
        if jvp is None:
            return None
        if jvp == LINEAR:
            return _linear_jvp(cls)
        if jvp == BILINEAR:
            return _multilinear_jvp(cls)
        if jvp == COMPOSITE:
            return _composite_jvp(cls)
        env = {}
        lines = ["def _jvp(tangents, inputs, outputs, extras, params):"]
        if jvp == ELEMENTWISE and self.variadic:
            raise TypeError(f"{self.name}: an op of variadic inputs has no elementwise JVP")
        if jvp == ELEMENTWISE:
            # conj(rule(conj(t))): rules conjugate f'(z) for complex (see cconj).
            env["cj"] = cconj
            lines.append("    res = None")
            for i, k in enumerate(self.inputs):
                rule = self.rules[k]
                if rule is None:
                    continue
                env[f"R{i}"] = rule[0]
                args = "".join(", " + self._jvp_env_expr(a) for a in rule[1])
                lines.append(f"    t = tangents[{i}]")
                lines.append("    if t is not None:")
                lines.append(f"        d = cj(R{i}(cj(t){args}))")
                lines.append("        res = d if res is None else res + d")
            lines.append("    return res")
        else:
            env["J"] = jvp
            names = _parameter_names(jvp)
            lines.append(f"    return J({', '.join(self._jvp_env_expr(a) for a in names)})")
        return _compile(lines, "_jvp", env, self.name)

    # -- introspection ----------------------------------------------------------------------

    def saved_properties(self):
        """torch's ``grad_fn._saved_<name>`` attributes for saved values and parameters."""
        for k, slot in enumerate(self.slots):
            yield f"_saved_{slot}", property(lambda node, k=k: _saved_value(node, k))
        for k, p in enumerate(self.params):
            if not p.startswith("_"):  # "_name": read by the forward only, not torch's
                yield f"_saved_{p}", property(lambda node, k=k: node._params[k])


def _parameter_names(fn) -> list:
    """The parameter names of a rule (from its code object for plain functions: fast at
    import; ``inspect.signature`` for other callables). A wrapper made with
    ``functools.wraps`` reads as the rule it wraps."""
    fn = getattr(fn, "__wrapped__", fn)
    code = getattr(fn, "__code__", None)
    if isinstance(code, types.CodeType) and not isinstance(fn, functools.partial):
        names = code.co_varnames
        n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount
        out = list(names[:n_pos])
        extra = n_pos + n_kw
        if code.co_flags & inspect.CO_VARARGS:
            out.append(names[extra])
            extra += 1
        out += names[n_pos : n_pos + n_kw]
        if code.co_flags & inspect.CO_VARKEYWORDS:
            out.append(names[extra])
        return out
    return list(inspect.signature(fn).parameters)


def _save_operands(inputs, edges, out, extras) -> tuple:
    return tuple(x if isinstance(x, Tensor) else SavedValue(x) for x in inputs)


def _saved_value(node, k: int):
    node._unpack_saved(True)  # raises if freed or modified in place
    return unpack_as_tensor(node, node._saved[k])


# Compiled code per distinct generated source: ~800 declarations share a few hundred
# shapes of backward, _save and _jvp (compiling each was most of ``import ember``).
_CODE: dict = {}


def _compile(lines: list, fn_name: str, env: dict, op: str):
    source = "\n".join(lines) + "\n"
    code = _CODE.get(source)
    if code is None:
        scratch: dict = {}
        exec(compile(source, f"<{fn_name}>", "exec"), scratch)  # noqa: S102 (our own source)
        code = _CODE[source] = scratch[fn_name].__code__
    namespace = dict(env)
    namespace["__name__"] = __name__  # ember's code (ember.compile's guards do not read it)
    # the op's name in tracebacks (the code object is shared)
    code = code.replace(co_filename=f"<{op}.{fn_name}>")
    fn = types.FunctionType(code, namespace, fn_name)
    fn.__qualname__ = f"{op}.{fn_name}"
    fn.__source__ = source
    return fn


def _describe(decl: _Declaration) -> str:
    """The declaration in words, as the class docstring (shown by ``help(grad_fn)``)."""
    # The rules' source is not read here (inspect at import costs 0.1 s for all ops):
    # ``rule_text`` and ``ember.autograd.explain`` show it on demand.
    lines = [f"Backward node of an op on ({', '.join(decl.inputs)})."]
    kind = decl.jvp if isinstance(decl.jvp, str) or decl.jvp is None else "explicit rule"
    lines.append(f"forward mode: {kind}")
    return "\n".join(lines)


def rule_text(node_cls, input_name: str) -> str | None:
    """The source of the rule for ``input_name`` (for explaining a backward pass)."""
    rule = node_cls._rules.get(input_name)
    return None if rule is None else _rule_text(rule[0])


def _rule_text(fn) -> str:
    formula = getattr(fn, "formula", None)  # (see explain.rule_text)
    if formula is not None:
        return formula
    try:
        src = inspect.getsource(fn).strip()
    except (OSError, TypeError):
        return getattr(fn, "__name__", repr(fn))
    if "lambda" in src:
        src = src[src.index("lambda") :].rstrip(",)")
    return " ".join(src.split())


# -- forward mode of linear and multilinear ops ------------------------------------------------


def _zero_tangent(x):
    """The tangent of an operand without one: zeros for a Tensor, 0 for a number."""
    if isinstance(x, Tensor):
        return Tensor._wrap(np.zeros(x._data.shape, x._data.dtype))
    if x is None or isinstance(x, (bool, np.bool_)):
        return x
    return type(x)(0)


def _apply_to(cls, operands: list, params: tuple):
    """The op itself on ``operands`` (tangents or primals), recorded with its node class."""
    arrays = [x._data if isinstance(x, Tensor) else x for x in operands]
    return record_result(cls, call_forward(cls, arrays, params), tuple(operands), params)


def _linear_jvp(cls):
    def _jvp(tangents, inputs, outputs, extras, params):
        operands = [_zero_tangent(x) if t is None else t for x, t in zip(inputs, tangents)]
        return _apply_to(cls, operands, params)

    return _jvp


def _multilinear_jvp(cls):
    def _jvp(tangents, inputs, outputs, extras, params):
        res = None
        for i, t in enumerate(tangents):
            if t is None:
                continue
            operands = list(inputs)
            operands[i] = t
            term = _apply_to(cls, operands, params)
            if cls._multi_output:
                res = term if res is None else [a + b for a, b in zip(res, term)]
            else:
                res = term if res is None else res + term
        return res

    return _jvp


def _composite_jvp(cls):
    def _jvp(tangents, inputs, outputs, extras, params):
        # The inputs carry their tangents: run the composite with forward AD back on.
        with resumed():
            out = cls.composite(*inputs, *params)
            if cls._multi_output:
                return [tangent_of(o) for o in out]
            return tangent_of(out)

    return _jvp


# -- higher order through a composite ---------------------------------------------------------


def _composite_vjp(node, grad, inputs: tuple):
    """The recorded VJP of ``node``: its ``composite`` re-run on the saved inputs and
    differentiated (``create_graph``), so higher orders come from the composed ops."""
    wanted = []
    call_args = list(inputs)
    prev = _state.enabled
    _state.enabled = True
    try:
        for i, (a, edge) in enumerate(zip(inputs, node.next_functions)):
            if not isinstance(a, Tensor):
                continue
            if edge[0] is not None and a._rg:
                # A fresh alias per slot: the same tensor passed twice (mse_loss(x, x))
                # gets one partial derivative per argument, as the engine expects.
                call_args[i] = a.view_as(a)
                wanted.append(i)
            else:
                call_args[i] = a.detach()
        out = node.composite(*call_args, *node._params)
    finally:
        _state.enabled = prev
    result = [None] * len(inputs)
    if wanted:
        outs = list(out) if node._multi_output else [out]
        grads = list(grad) if node._multi_output else [grad]
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None and o._rg]
        captured = run_backward(
            [edge_of(o) for o, _ in pairs],
            [g for _, g in pairs],
            retain_graph=True,
            create_graph=True,
            capture=[edge_of(call_args[i]) for i in wanted],
        )
        for i, g in zip(wanted, captured):
            result[i] = g
    return tuple(result) if len(result) > 1 else result[0]
