"""torch's ``__torch_function__`` protocol and its modes, as torch's documentation shows them,
and every op-database entry run through them: under a pass-through TorchFunctionMode, a
pass-through TorchDispatchMode, and on a Tensor subclass, each must give the same values
and gradients as plainly (the subclass keeping its type)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ember
from ember.overrides import (
    TorchFunctionMode,
    get_default_nowrap_functions,
    handle_torch_function,
    has_torch_function,
    is_tensor_like,
)
from ember.utils._python_dispatch import TorchDispatchMode
from opdb import all_ops, run_with_grads

torch = pytest.importorskip("torch")


# -- torch's documented examples ----------------------------------------------------------------


def _logging_subclass(lib):
    """torch's docs: a subclass that logs every function called on it."""
    calls = []

    class LoggingTensor(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    t = lib.tensor([1.0, 2.0]).as_subclass(LoggingTensor)
    u = (t + 1) * lib.tensor([3.0, 4.0])
    v = lib.nn.functional.relu(u).sum()
    return calls, type(u).__name__, type(v).__name__, v.item(), repr(t)


def test_a_logging_subclass_as_in_torch():
    got, want = _logging_subclass(ember), _logging_subclass(torch)
    assert got[1:] == want[1:]
    assert got[0] == want[0]


def _counting_mode(lib, overrides):
    names = []

    class Count(overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            names.append(getattr(func, "__name__", "?"))
            return func(*args, **(kwargs or {}))

    x = lib.ones(2, 3, requires_grad=True)
    with Count():
        y = lib.nn.functional.linear(x, lib.ones(4, 3)).relu()
        z = lib.cat([y, y]).sum()
    z.backward()
    return names, z.item(), x.grad.tolist()


def test_a_torch_function_mode_sees_every_call_as_in_torch():
    import torch.overrides as tov

    got = _counting_mode(ember, ember.overrides)
    want = _counting_mode(torch, tov)
    assert got[1:] == want[1:]
    assert got[0] == want[0]


class _Diagonal:
    """torch's docs: a non-Tensor type that implements ``torch.mean`` and ``torch.add``."""

    HANDLED: dict = {}

    def __init__(self, n: int, value: float) -> None:
        self.n, self.value = n, value

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        fn = cls.HANDLED.get(func.__name__)
        if fn is None or not all(issubclass(t, (_Diagonal,)) for t in types):
            return NotImplemented
        return fn(*args, **(kwargs or {}))


_Diagonal.HANDLED["mean"] = lambda d, *a, **k: float(d.value) / d.n
_Diagonal.HANDLED["add"] = lambda a, b, **k: _Diagonal(a.n, a.value + getattr(b, "value", 0))


def test_a_non_tensor_type_overriding_functions():
    d = _Diagonal(5, 2.0)
    assert ember.mean(d) == 0.4
    assert ember.add(d, d).value == 4.0
    with pytest.raises(TypeError, match="no implementation found for 'ember.*sum'"):
        ember.sum(d)
    assert has_torch_function((d,)) and not has_torch_function((ember.ones(1), 2))
    assert is_tensor_like(d) and is_tensor_like(ember.ones(1)) and not is_tensor_like(1)


def test_handle_torch_function_in_a_user_function():
    def scaled(x, k=2):
        if has_torch_function((x,)):
            return handle_torch_function(scaled, (x,), x, k=k)
        return x * k

    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    x = ember.ones(2)
    with Spy():
        out = scaled(x)
    assert seen[0] is scaled and out.tolist() == [2.0, 2.0]


def test_default_nowrap_and_parameters_stay_plain():
    assert ember.Tensor.grad.__get__ in get_default_nowrap_functions()
    p = ember.nn.Parameter(ember.ones(2))
    assert type(p * 2) is ember.Tensor and type(p.detach()) is ember.Tensor


def test_modes_are_per_thread():
    seen = []
    started, done = threading.Event(), threading.Event()

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(threading.current_thread().name)
            return func(*args, **(kwargs or {}))

    def other():
        started.wait()
        ember.ones(2) + 1
        done.set()

    t = threading.Thread(target=other, name="other")
    t.start()
    with Spy():
        started.set()
        done.wait(10)
        ember.ones(2) * 2
    t.join()
    assert seen and set(seen) == {"MainThread"}


_OPERATORS = """__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__
__floordiv__ __rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __matmul__ __rmatmul__ __eq__
__ne__ __lt__ __le__ __gt__ __ge__ __and__ __rand__ __or__ __ror__ __xor__ __rxor__ __neg__
__pos__ __abs__ __invert__ __iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__
__ipow__ __iand__ __ior__ __ixor__""".split()


def _operator_names(lib, overrides):
    """What a mode receives as ``func`` for each operator (torch names most after the
    method that shares their dispatch: ``t + u`` is ``Tensor.add``, ``t //= 2``
    ``Tensor.floor_divide_``)."""
    names: list = []

    class Names(overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    got = {}
    for op in _OPERATORS:
        unary = op in ("__neg__", "__pos__", "__abs__", "__invert__")
        bits = op.strip("_") in "and rand iand or ror ior xor rxor ixor invert".split()
        a = lib.tensor([3, 5]) if bits else lib.tensor([2.0, 3.0])
        b = lib.tensor([6, 1]) if bits else lib.tensor([1.5, 4.0])
        names.clear()
        with Names():
            result = getattr(a, op)() if unary else getattr(a, op)(b)
        got[op] = (names[0], result.tolist(), a.tolist())
    return got


def test_operators_reach_modes_by_torch_names_and_work_in_place():
    import torch.overrides as tov

    assert _operator_names(ember, ember.overrides) == _operator_names(torch, tov)


_NUMPY_NAMES = [
    "lib.cat([x, x], axis=1)",
    "lib.stack([x, x], axis=1)",
    "lib.squeeze(x[None], axis=0)",
    "x.sum(axis=1, keepdims=True)",
    "x.std(axis=0, keepdims=True)",
    "x.cumsum(axis=0)",
    "lib.count_nonzero(x, axis=0)",
    "lib.topk(x, 1, axis=0).values",
    "x.unbind(axis=1)[0]",
    "lib.chunk(x, 2, axis=1)[1]",
    "lib.linalg.norm(x, axis=0)",
    "lib.fft.fft(x, axis=0).real",
    "lib.special.logsumexp(x, axis=0)",
    "lib.cat([x, x], dim=1, axis=0)",
    "lib.nn.functional.softmax(x, axis=0)",
]


def test_numpy_names_for_dim_and_keepdim_as_torch_accepts_them():
    """torch's argument parser takes ``axis`` for ``dim`` and ``keepdims`` for ``keepdim``
    (not in nn.functional's Python functions); a name given twice is an error."""

    def run(lib, call):
        x = lib.tensor([[1.0, 4.0, 2.0, 0.5], [3.0, 0.0, 5.0, 1.0]])
        try:
            return eval(call, {"lib": lib, "x": x}).tolist()
        except TypeError as e:
            return str(e)

    for call in _NUMPY_NAMES:
        assert run(ember, call) == run(torch, call), call


# -- the check's fast path ---------------------------------------------------------------------


def test_the_hot_operators_are_one_frame():
    """The public functions in _overrides.FUSED run their implementation's own body after
    the check (no wrapper frame): all of them could be made, and an error's traceback
    shows the implementation's file and lines."""
    from ember import _overrides

    made = _overrides._FUSED_CODE
    assert None not in made.values() and len(made) >= 20
    for public in (ember.Tensor.__add__, ember.Tensor.__mul__, ember.tanh, ember.Tensor.sum):
        assert public.__code__.co_filename == public._ember_impl.__code__.co_filename
    try:
        ember.ones(2) + ember.ones(3)
    except RuntimeError as e:
        frames = [f.tb_frame.f_code.co_filename for f in _walk(e.__traceback__)]
    assert not any(name.endswith("<public function>") for name in frames)
    assert any(name.endswith("elementwise.py") for name in frames)


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_a_function_without_source_keeps_its_wrapper():
    from ember import _overrides

    namespace: dict = {}
    exec("def add(input, other, *, alpha=1, out=None):\n    return input", namespace)
    impl = namespace["add"]
    assert _overrides._fused_code(impl, _overrides._parameters(impl)) is None
    public = _overrides.wrap_function(impl)
    assert public.__code__.co_filename.endswith("<public function>")
    t = ember.ones(1)
    assert public(t, t) is t and public(t, t, alpha=2) is t


def test_keyword_arguments_away_from_their_defaults_are_checked():
    """Fused functions and wrappers skip a keyword-only parameter's check at its default
    only: an overriding ``out`` or ``alpha`` is still found."""
    seen = []

    class Spy(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    x, y = ember.ones(2), ember.full((2,), 2.0)
    out = ember.zeros(2).as_subclass(Spy)
    ember.add(x, y, out=out)
    ember.mul(x, y, out=out)
    ember.tanh(x, out=out)
    ember.sub(x, y, alpha=ember.tensor(2.0).as_subclass(Spy))
    assert seen == ["add", "mul", "tanh", "sub"]
    assert out.tolist() == pytest.approx([np.tanh(1.0)] * 2)


def test_no_mode_check_while_no_mode_is_entered():
    """While a mode is entered in any thread, the types the check lets through are none
    (every call goes to dispatch, which finds this thread's modes); after, all plain types
    again."""
    from ember import _overrides

    plain = set(_overrides.PLAIN)
    assert _overrides.UNCHECKED == plain
    entered = threading.Event()
    leave = threading.Event()

    def other():
        with _PassThrough():
            entered.set()
            leave.wait(10)

    t = threading.Thread(target=other)
    t.start()
    entered.wait(10)
    try:
        assert _overrides.UNCHECKED == set() and _overrides.MODES[0] == 1
        # this thread has no mode: its calls are dispatched and find nothing to call
        assert (ember.ones(2) + 1).tolist() == [2.0, 2.0]
    finally:
        leave.set()
        t.join()
    assert _overrides.UNCHECKED == plain and _overrides.MODES[0] == 0


# -- TorchDispatchMode ----------------------------------------------------------------------------


def _dispatch_log(lib, dispatch):
    seen = []

    class Log(dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x = lib.ones(2, 3, requires_grad=True)
    w = lib.ones(4, 3, requires_grad=True)
    with Log():
        loss = (lib.nn.functional.linear(x, w).tanh() * 2).sum()
        forward = list(seen)
        loss.backward()
    return forward, seen[len(forward) :], x.grad.tolist(), w.grad.tolist()


def test_a_dispatch_mode_sees_the_ops_of_the_forward_and_the_backward():
    import torch.utils._python_dispatch as tpd

    from ember.utils import _python_dispatch as epd

    fw, bw, gx, gw = _dispatch_log(ember, epd)
    tfw, tbw, tgx, tgw = _dispatch_log(torch, tpd)
    # (torch's autograd detaches the outputs it saves, an op of its own: ember saves arrays)
    assert fw == [op for op in tfw if op != "aten.detach.default"]
    np.testing.assert_allclose(gx, tgx, rtol=1e-5)
    np.testing.assert_allclose(gw, tgw, rtol=1e-5)
    # the backward's ops: torch's gradient formulas and ember's rules name the same ops
    # for tanh and mul; the seed and the accumulation differ in kind
    for op in ("aten.mul.Tensor", "aten.mm.default"):
        assert op in bw and op in tbw
    assert any("tanh_backward" in o or "aten.mul.Tensor" in o for o in bw)


def test_a_dispatch_mode_can_change_results():
    class Double(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out * 2 if str(func) == "aten.exp.default" else out

    with Double():
        y = ember.zeros(2).exp() + 1
    assert y.tolist() == [3.0, 3.0]


# -- every op-database entry through the protocol ------------------------------------------------

OPS = all_ops()


class _PassThrough(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class _PassThroughDispatch(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class _Sub(ember.Tensor):
    pass


def _values_and_grads(op, wrap=None, mode=None):
    ember.manual_seed(0)
    subclass = (lambda xs: [x.as_subclass(_Sub) for x in xs]) if wrap else None
    tensors, values, grads = run_with_grads(
        ember, op, subclass, mode() if mode is not None else None
    )
    return values, grads, [type(t) for t in tensors]


# Entries whose results are plain Tensors in torch too, or that ember cannot run on a
# subclass instance: results of autograd.grad, values written into a plain tensor, t_()
# and the other in-place shape changes on a view of a graph tensor (an alias, as
# as_subclass makes; ember's known limitation).
# (``sparse.``: a sparse result has ember's sparse class, which dispatches the sparse ops,
# whatever the class of the dense tensor it was made from; torch keeps the subclass)
_PLAIN_RESULTS = {
    "binary_cross_entropy_gradient",
    "view_plain_base",
    "t_",
    "squeeze_",
    "squeeze__dim",
    "squeeze__dims",
    "unsqueeze_",
    "transpose_",
    "swapdims_",
    "sparse.",
}


def _public(op) -> bool:
    """Does the entry call ember's public API only? (Some test an implementation directly:
    ``m._aten...``, ember's ATen-level RNN functions, an ``_ember_forward`` variant.)"""
    if op.name.startswith(tuple(_PLAIN_RESULTS)) or "ember_forward" in op.name:
        return False
    seen, todo = set(), [op.fn]
    while todo:
        fn = todo.pop()
        code = getattr(fn, "__code__", None)
        if code is None or code in seen:
            continue
        seen.add(code)
        names = set(code.co_names) | {
            n for c in code.co_consts if hasattr(c, "co_names") for n in c.co_names
        }
        if names & {"_aten", "_attention", "_ember_rnn", "nn_ctc"}:
            return False
        todo += [fn.__globals__[n] for n in names if callable(fn.__globals__.get(n))]
    return True


def _same(a, b) -> bool:
    for x, y in [*zip(a[0], b[0]), *zip(a[1], b[1])]:
        if (x is None) != (y is None):
            return False
        if x is not None and (
            x.shape != y.shape or not np.allclose(x, y, rtol=1e-12, atol=1e-12, equal_nan=True)
        ):
            return False
    return len(a[0]) == len(b[0]) and len(a[1]) == len(b[1])


@pytest.mark.parametrize("how", ["function_mode", "dispatch_mode", "subclass"])
def test_every_opdb_entry_through_the_protocol(how):
    problems = []
    for op in OPS:
        try:
            plain = _values_and_grads(op)
            if how == "function_mode":
                got = _values_and_grads(op, mode=_PassThrough)
            elif how == "dispatch_mode":
                got = _values_and_grads(op, mode=_PassThroughDispatch)
            else:
                got = _values_and_grads(op, wrap=True)
        except Exception as e:  # noqa: BLE001 (collected: every entry is reported)
            if not (how == "subclass" and op.name in _PLAIN_RESULTS):
                problems.append(f"{op.name}: {type(e).__name__}: {e}"[:300])
            continue
        if not _same(plain, got):
            problems.append(f"{op.name}: different values or gradients")
        elif how == "subclass" and _public(op) and any(k is ember.Tensor for k in got[2]):
            problems.append(f"{op.name}: a result lost the subclass")
    assert not problems, f"{len(problems)} of {len(OPS)} entries:\n" + "\n".join(problems)
