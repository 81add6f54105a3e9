"""ember.ops (torch.ops): the operator namespaces, their overloads and schemas, the mapping
from each declared op to its aten overload, and calls against torch's results.

The mapping is checked against torch three ways: every declaration's overload exists in
torch; where torch's own derivatives (torchgen's packaged derivatives.yaml) name the node,
the overload is the one torch pairs it with; and the aten calls torch makes when it runs
the op database give torch's results when replayed through ember.ops.
"""

from __future__ import annotations

import collections
import copy
import inspect
import pickle
import re
import threading
from pathlib import Path

import numpy as np
import pytest

import ember
from ember import ops as E
from ember.autograd.opdef import DECLARED
from ember.overrides import TorchFunctionMode

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch as the reference")


def _all_overloads():
    """(namespace, op name, overload name) of every overload ember.ops has."""
    return [
        (ns, name, ov)
        for ns, table in E._schemas().items()
        for name, overloads in table.items()
        for ov in overloads
    ]


def _overload(ns, name, ov):
    return getattr(getattr(getattr(E, ns), name), ov)


# -- the declaration <-> aten op mapping ------------------------------------------------------


@needs_torch
def test_every_declaration_maps_to_a_torch_overload():
    """Each declared op is an aten overload torch has (the same one ember.ops has), or is
    listed as ember-only with a reason."""
    missing = []
    for cls in DECLARED:
        op = E.aten_op(cls)
        if op is None:
            assert E.EMBER_ONLY.get(cls.__name__), cls.__name__
            continue
        packet = getattr(torch.ops.aten, op._opname, None)
        if packet is None or op._overloadname not in packet.overloads():
            missing.append(f"{E.declaration_key(cls)} -> {op}")
            continue
        assert str(getattr(packet, op._overloadname)) == str(op)
        assert op.name() == getattr(packet, op._overloadname).name()
    assert missing == []


def _derivatives_yaml():
    """torch's pairing of node names and overloads, from torchgen's packaged
    derivatives.yaml: {node name: "op.overload"} (torchgen's own naming, read without
    PyYAML: each entry's formulas name the inputs it differentiates)."""
    try:
        import torchgen
    except ImportError:
        pytest.skip("torchgen (with torch) has the derivatives")
    path = Path(torchgen.__file__).parent / "packaged" / "autograd" / "derivatives.yaml"
    if not path.exists():
        pytest.skip("this torch has no packaged derivatives.yaml")
    entries = []
    current = None
    for line in path.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith("- name:"):
            current = {"schema": line[len("- name:") :].strip(), "keys": {}}
            entries.append(current)
            key = "Default"
            continue
        if current is None:
            continue
        indent = len(line) - len(line.lstrip())
        body = line.strip()
        if indent == 2 and body == "dispatch:":
            continue
        if indent == 4 and body.endswith(":"):
            key = body[:-1]
            continue
        m = re.match(r"([\w, ]+):\s*(.*)", body)
        if m and indent in (2, 6):
            formulas = current["keys"].setdefault(key if indent == 6 else "Default", {})
            formulas[m.group(1)] = m.group(2)
    counter: collections.Counter = collections.Counter()
    pairs = {}
    for entry in entries:
        qualified = entry["schema"].split("(")[0]
        name, _, overload = qualified.partition(".")
        for key, formulas in entry["keys"].items():
            differentiates = any(
                not k.startswith("result")
                and k != "output_differentiability"
                and v.strip() != "non_differentiable"
                for k, v in formulas.items()
            )
            if not differentiates:
                continue
            prefix = "".join(p.title() for p in name.split("_")) + "Backward"
            prefix = prefix.replace("ForwardBackward", "Backward")
            if key != "Default":
                prefix += key
            node = f"{prefix}{counter[prefix]}"
            counter[prefix] += 1
            if key == "Default":
                pairs[node] = f"{name}.{overload or 'default'}"
    return pairs


@needs_torch
def test_mapping_is_torchs_pairing():
    """Where torch names a node after an op's derivative, ember maps the declaration of
    that name to that op (declarations told apart by their parameters are ember's)."""
    pairs = _derivatives_yaml()
    assert pairs["MulBackward0"] == "mul.Tensor"  # the reading is right
    assert pairs["SumBackward1"] == "sum.dim_IntList"
    wrong = []
    compared = 0
    for cls in DECLARED:
        if E.declaration_key(cls) in E._BY_DECLARATION or cls.__name__ not in pairs:
            continue
        compared += 1
        if E._qualified(cls) != pairs[cls.__name__]:
            wrong.append(f"{cls.__name__}: {E._qualified(cls)} (torch: {pairs[cls.__name__]})")
    assert wrong == []
    assert compared > 300


def test_mapping_counts():
    """How the mapping is made (for the record): the rule names most ops."""
    kinds = collections.Counter()
    for cls in DECLARED:
        name = cls.__name__
        if E.declaration_key(cls) in E._BY_DECLARATION:
            kinds["by declaration"] += 1
        elif name in E.EMBER_ONLY:
            kinds["ember-only"] += 1
        elif name in E._OP_NAME:
            kinds["op name from the table"] += 1
        elif name in E._OVERLOAD:
            kinds["rule, overload from the table"] += 1
        else:
            kinds["rule"] += 1
    assert sum(kinds.values()) == len(DECLARED)
    assert kinds["rule"] > kinds["op name from the table"] + kinds["by declaration"]


def test_aten_op_of_classes_and_nodes():
    x = ember.ones(2, 3, requires_grad=True)
    assert E.aten_op(type((x * x).grad_fn)) is E.aten.mul.Tensor
    assert E.aten_op((x * 2).grad_fn) is E.aten.mul.Tensor  # a grad_fn itself
    assert E.aten_op(x.sum(1).grad_fn) is E.aten.sum.dim_IntList
    assert E.aten_op(x.softmax(1).grad_fn) is E.aten._softmax.default
    assert str(E.aten_op((x @ x.T).grad_fn)) == "aten.mm.default"
    assert str(E.aten_op(ember.addmm(x[:, :2], x, x.T).grad_fn)) == "aten.addmm.default"
    bn = ember.nn.functional.batch_norm(x, None, None, training=True)
    assert str(E.aten_op(bn.grad_fn)) == "aten.native_batch_norm.default"
    assert str(E.aten_op(ember.einsum("ij,kj->ik", x, x).grad_fn)) == "aten.einsum.default"
    assert str(E.aten_op(x.square().grad_fn)) == "aten.square.default"
    # the dense declaration, then the sparse layouts' (sparse * number, * sparse, * dense)
    muls = E.declarations(E.aten.mul.Tensor)
    assert muls[0] is type((x * x).grad_fn)
    assert [c.__module__ for c in muls[1:]] == ["ember._aten.sparse"] * 3
    with pytest.raises(TypeError, match="not a declared op"):
        E.aten_op(int)


def test_aten_op_survives_a_move():
    """The lookup reads the declaration (name, inputs, parameters), not its module: a
    declaration moved to another module maps the same."""
    cls = type((ember.ones(2, requires_grad=True) * 2).grad_fn)
    moved = type(cls.__name__, (cls,), {"__module__": "ember._aten.elsewhere"})
    try:
        DECLARED.append(moved)
        assert E.aten_op(moved) is E.aten_op(cls)
    finally:
        DECLARED.remove(moved)


# -- schemas, names and reprs -----------------------------------------------------------------


@needs_torch
def test_schemas_and_overload_order_are_torchs():
    for ns, table in E._schemas().items():
        for name, overloads in table.items():
            packet = getattr(getattr(torch.ops, ns), name)
            order = [o for o in packet.overloads() if o in overloads]
            assert list(overloads) == order, name
            for ov, text in overloads.items():
                assert text == str(getattr(packet, ov)._schema)


@needs_torch
@pytest.mark.parametrize(
    "path",
    [
        "aten.add.Tensor",
        "aten.add.Scalar",
        "aten.mm.default",
        "aten.sum.dim_IntList",
        "aten._softmax.default",
        "aten.max.dim",
        "aten.view.default",
        "aten.add_.Tensor",
        "profiler._record_function_enter_new.default",
        "profiler._record_function_exit._RecordFunction",
    ],
)
def test_names_and_reprs_are_torchs(path):
    ns, name, ov = path.split(".")
    ours, theirs = _overload(ns, name, ov), getattr(getattr(getattr(torch.ops, ns), name), ov)
    assert str(ours) == str(theirs) == path
    assert repr(ours) == repr(theirs)
    assert ours.name() == theirs.name()
    assert ours.__name__ == theirs.__name__
    assert ours._overloadname == theirs._overloadname and ours.namespace == theirs.namespace
    assert ours.is_view == theirs.is_view
    assert str(ours._schema) == str(theirs._schema)
    assert ours._schema.name == theirs._schema.name
    assert ours._schema.overload_name == theirs._schema.overload_name
    assert [a.name for a in ours._schema.arguments] == [a.name for a in theirs._schema.arguments]
    assert [a.kwarg_only for a in ours._schema.arguments] == [
        a.kwarg_only for a in theirs._schema.arguments
    ]
    assert [r.name for r in ours._schema.returns] == [r.name for r in theirs._schema.returns]
    packet, their_packet = ours.overloadpacket, theirs.overloadpacket
    assert str(packet) == str(their_packet) and repr(packet) == repr(their_packet)
    assert packet.__name__ == their_packet.__name__
    assert packet._qualified_op_name == their_packet._qualified_op_name
    assert set(packet.overloads()) <= set(their_packet.overloads())


@needs_torch
def test_schema_defaults_are_torchs():
    for ns, name, ov in _all_overloads():
        ours = _overload(ns, name, ov)._schema
        theirs = getattr(getattr(getattr(torch.ops, ns), name), ov)._schema
        for a, b in zip(ours.arguments, theirs.arguments):
            if b.default_value is None or isinstance(b.default_value, (torch.dtype, torch.device)):
                continue
            expected = b.default_value
            if isinstance(expected, (list, tuple)):
                expected = list(expected)
            got = a.default_value
            if isinstance(expected, (int, float)) and not isinstance(expected, bool):
                assert got == pytest.approx(expected), (name, ov, a.name)
            elif not hasattr(expected, "name"):  # enums (memory formats) print as names
                assert got == expected, (name, ov, a.name)


def test_namespaces_and_unknown_names():
    assert type(ember.ops).__name__ == "_Ops"
    import ember.ops as module

    assert module is ember.ops and module.aten is ember.ops.aten
    assert ember.ops.prim is ember.ops.prim  # made on first use, then kept (as torch)
    with pytest.raises(AttributeError, match="'_OpNamespace' 'aten' object has no attribute 'x'"):
        ember.ops.aten.x  # noqa: B018
    with pytest.raises(AttributeError, match="'_OpNamespace' 'prim' object has no attribute"):
        ember.ops.prim.nosuch  # noqa: B018
    with pytest.raises(AttributeError, match="'_OpNamespace' '_ops' object has no attribute"):
        ember.ops._ops.nosuch  # noqa: B018
    with pytest.raises(
        AttributeError, match="The underlying op of 'aten.add' has no overload name 'nosuch'"
    ):
        ember.ops.aten.add.nosuch  # noqa: B018
    assert "mm" in list(ember.ops.aten) and ember.ops.aten.name == "aten"
    assert ember.ops.aten.add.Tensor is ember.ops.aten.add.Tensor


def test_pickle_and_copy_keep_identity():
    op = E.aten.add.Tensor
    assert pickle.loads(pickle.dumps(op)) is op
    assert pickle.loads(pickle.dumps(E.aten.add)) is E.aten.add
    assert copy.deepcopy(op) is op and copy.copy(op) is op


# -- calls ------------------------------------------------------------------------------------


def _pair(*arrays):
    """The same float64 arrays as ember and torch tensors (requiring grad)."""
    e = [ember.tensor(a, requires_grad=True) for a in arrays]
    t = [torch.tensor(a, requires_grad=True) for a in arrays]
    return e, t


def _close(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _close(a, b)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=1e-12)
    if theirs.grad_fn is not None:
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__


CALLS = [
    ("add.Tensor", lambda ns, a, b: ns.aten.add.Tensor(a, b)),
    ("add.Tensor alpha", lambda ns, a, b: ns.aten.add.Tensor(a, b, alpha=2)),
    ("add.Tensor self=", lambda ns, a, b: ns.aten.add.Tensor(self=a, other=b)),
    ("mul.Tensor", lambda ns, a, b: ns.aten.mul.Tensor(a, b)),
    ("mm.default", lambda ns, a, b: ns.aten.mm.default(a, b.T)),
    ("relu.default", lambda ns, a, b: ns.aten.relu.default(a)),
    ("sum.dim_IntList", lambda ns, a, b: ns.aten.sum.dim_IntList(a, [1])),
    ("sum.dim_IntList keepdim", lambda ns, a, b: ns.aten.sum.dim_IntList(a, [0, 1], True)),
    ("sum.default", lambda ns, a, b: ns.aten.sum.default(a)),
    ("mean.dim", lambda ns, a, b: ns.aten.mean.dim(a, [0])),
    ("_softmax.default", lambda ns, a, b: ns.aten._softmax.default(a, 1, False)),
    ("_log_softmax.default", lambda ns, a, b: ns.aten._log_softmax.default(a, 0, False)),
    ("addmm.default", lambda ns, a, b: ns.aten.addmm.default(a[:, :3], a, b.T[:, :3])),
    ("max.dim", lambda ns, a, b: ns.aten.max.dim(a, 1)),
    ("var.correction", lambda ns, a, b: ns.aten.var.correction(a, [1], correction=0)),
    ("transpose.int", lambda ns, a, b: ns.aten.transpose.int(a, 0, 1)),
    ("view.default", lambda ns, a, b: ns.aten.view.default(a, [4, 3])),
    ("where.self", lambda ns, a, b: ns.aten.where.self(a > 0, a, b)),
    ("pow.Tensor_Scalar", lambda ns, a, b: ns.aten.pow.Tensor_Scalar(a, 3)),
    ("div.Tensor_mode", lambda ns, a, b: ns.aten.div.Tensor_mode(a, b, rounding_mode="floor")),
    ("cat.default", lambda ns, a, b: ns.aten.cat.default([a, b], 1)),
    ("split.Tensor", lambda ns, a, b: ns.aten.split.Tensor(a, 2, 1)),
    ("native_layer_norm", lambda ns, a, b: ns.aten.native_layer_norm.default(
        a, [4], b[0], None, 1e-5)),
    ("convolution", lambda ns, a, b: ns.aten.convolution.default(
        a.reshape(1, 1, 3, 4), b.reshape(1, 1, 3, 4)[:, :, :2, :2], None, [1, 1], [0, 0], [1, 1],
        False, [0, 0], 1)),
    ("packet add", lambda ns, a, b: ns.aten.add(a, b)),
    ("packet add number", lambda ns, a, b: ns.aten.add(a, 2)),
    ("packet sum dims", lambda ns, a, b: ns.aten.sum(a, [1])),
    ("packet max dim", lambda ns, a, b: ns.aten.max(a, 0)),
]  # fmt: skip


@needs_torch
@pytest.mark.parametrize("name,call", CALLS, ids=[c[0] for c in CALLS])
def test_calls_match_torch(name, call):
    rng = np.random.default_rng(0)
    (a, b), (ta, tb) = _pair(rng.standard_normal((3, 4)), rng.standard_normal((3, 4)))
    ours, theirs = call(E, a, b), call(torch.ops, ta, tb)
    _close(ours, theirs)
    if isinstance(theirs, torch.Tensor) and theirs.requires_grad:  # and the gradients
        ours.sum().backward()
        theirs.sum().backward()
        for x, y in ((a, ta), (b, tb)):
            if y.grad is not None:
                np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), atol=1e-12)


def test_a_packet_picks_the_overload_torch_would():
    x = ember.ones(2, 3)
    assert E.aten.add._choose((x, x), {}) is E.aten.add.Tensor
    assert E.aten.add._choose((x, 2), {}) is E.aten.add.Scalar
    assert E.aten.sum._choose((x,), {}) is E.aten.sum.default
    assert E.aten.sum._choose((x, [0]), {}) is E.aten.sum.dim_IntList
    assert E.aten.max._choose((x,), {}) is E.aten.max.default
    assert E.aten.max._choose((x, 1), {}) is E.aten.max.dim
    assert E.aten.pow._choose((x, 2.0), {}) is E.aten.pow.Tensor_Scalar
    assert E.aten.pow._choose((2.0, x), {}) is E.aten.pow.Scalar
    with pytest.raises(RuntimeError, match="aten::add"):
        E.aten.add("a", x)


def _replayed_calls():
    """The aten calls torch makes running the op database (forward and first backward),
    with copies of their arguments and results, at most three per overload ember has."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten, tree_map

    from opdb import all_ops, as_tuple, case

    ours = {f"{name}.{ov}" for ns, name, ov in _all_overloads() if ns == "aten"}
    calls = collections.defaultdict(list)

    def snapshot(tree):
        return tree_map(lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x, tree)

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            key = f"{func._opname}.{func._overloadname}"
            keep = func.namespace == "aten" and key in ours and len(calls[key]) < 3
            # (sparse operands: ember.ops replays dense aten calls; tests/test_sparse.py)
            keep = keep and not any(
                isinstance(a, torch.Tensor) and a.layout != torch.strided
                for a in tree_flatten((args, kwargs))[0]
            )
            before = snapshot((args, kwargs)) if keep else None
            out = func(*args, **kwargs)
            if keep and torch.Tag.nondeterministic_seeded not in func.tags:
                calls[key].append((before, snapshot(out)))
            return out

    for op in all_ops():
        if not op.torch:
            continue
        primals, _ = case(op)
        xs = [torch.tensor(a, requires_grad=True) for a in primals]
        try:
            with Record():
                outs = [o for o in as_tuple(op.fn(torch, *xs)) if isinstance(o, torch.Tensor)]
                outs = [o for o in outs if o.requires_grad]
                if outs:
                    torch.autograd.grad(
                        outs, xs, [torch.ones_like(o) for o in outs], allow_unused=True
                    )
        except RuntimeError:  # entries torch refuses (ember's error tests)
            continue
    return calls


_DTYPES = {}


def _to_ember(x):
    if isinstance(x, torch.Tensor):
        return ember.tensor(x.numpy())
    if isinstance(x, torch.dtype):
        if not _DTYPES:
            for name in ("float16", "float32", "float64", "complex64", "complex128", "bool"):
                _DTYPES[getattr(torch, name)] = getattr(ember, name)
            for name in ("uint8", "int8", "int16", "int32", "int64"):
                _DTYPES[getattr(torch, name)] = getattr(ember, name)
        return _DTYPES[x]
    if isinstance(x, (torch.device, torch.layout, torch.memory_format)):
        return None  # ember is CPU-only and strided
    return x


def _assert_same(ours, theirs, up_to_sign: bool, shapes_only: bool = False):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b, up_to_sign, shapes_only)
        return
    if not isinstance(theirs, torch.Tensor):
        assert ours == theirs or theirs is None
        return
    assert isinstance(ours, ember.Tensor), type(ours)
    assert tuple(ours.shape) == tuple(theirs.shape)
    if shapes_only:
        return
    a, b = ours.detach().numpy(), theirs.numpy()
    if up_to_sign:  # eigenvectors and singular vectors: each is defined up to its sign
        a, b = np.abs(a), np.abs(b)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)


# Overloads whose results are defined up to the sign (or phase) of vectors.
_UP_TO_SIGN = {"_linalg_eigh.default", "_linalg_svd.default", "linalg_eig.default"}
# Overloads whose values are not defined (uninitialised memory).
_UNINITIALISED = {"empty.memory_format", "empty_like.default"}


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")  # the op database's deprecated calls
def test_torchs_aten_calls_replayed_through_ember_ops():
    """Each aten call torch makes running the op database (with torch's own arguments)
    gives torch's results through ember.ops, or is one ember lists as unimplemented."""
    calls = _replayed_calls()
    assert len(calls) > 250
    failed = []
    for key, recorded in sorted(calls.items()):
        name, ov = key.split(".")
        op = _overload("aten", name, ov)
        for (args, kwargs), out in recorded:
            args = [_to_ember(a) for a in args]
            args = [[_to_ember(x) for x in a] if isinstance(a, (list, tuple)) else a for a in args]
            kwargs = {k: _to_ember(v) for k, v in kwargs.items()}
            kwargs = {k: v for k, v in kwargs.items() if v is not None}
            if key in E.UNIMPLEMENTED:
                with pytest.raises(NotImplementedError):
                    op(*args, **kwargs)
                continue
            try:
                ours = op(*args, **kwargs)
                _assert_same(ours, out, key in _UP_TO_SIGN, key in _UNINITIALISED)
            except Exception as e:  # noqa: BLE001  (collected, reported together)
                failed.append(f"{key}: {type(e).__name__}: {str(e)[:200]}")
                break
    assert failed == []


@needs_torch
def test_every_overload_takes_atens_arguments():
    """Each overload runs an implementation that takes aten's positional arguments and
    keywords (the ones ember cannot run say why)."""
    wrong = []
    for ns, name, ov in _all_overloads():
        op = _overload(ns, name, ov)
        try:
            impl = E.implementation(op)
        except NotImplementedError:
            assert f"{name}.{ov}" in E.UNIMPLEMENTED
            continue
        params = list(inspect.signature(impl).parameters.values())
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        keywords = {p.name for p in params if p.kind != p.POSITIONAL_ONLY}
        star = any(p.kind == p.VAR_POSITIONAL for p in params)
        starstar = any(p.kind == p.VAR_KEYWORD for p in params)
        schema = op._schema
        n_positional = sum(not a.kwarg_only for a in schema.arguments)
        if n_positional > len(positional) and not star:
            wrong.append(f"{op}: {n_positional} positional arguments, takes {len(positional)}")
        for a in schema.arguments:
            if a.kwarg_only and a.name not in keywords and not starstar:
                wrong.append(f"{op}: no keyword {a.name}")
    assert wrong == []


def test_unimplemented_overloads_say_why():
    x = ember.ones(2, 3)
    with pytest.raises(NotImplementedError, match="as_strided"):
        E.aten.as_strided.default(x, [2], [1])


# -- the __torch_function__ protocol ----------------------------------------------------------


class _Seen(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.funcs = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.funcs.append(func)
        return func(*args, **(kwargs or {}))


def test_modes_see_overloads_and_packets_as_torch():
    """torch.ops calls go through __torch_function__ (torch 2.13: modes and overriding
    arguments see the OpOverload, or the packet when the packet is called)."""
    x = ember.ones(2)
    with _Seen() as mode:
        E.aten.add.Tensor(x, x)
        E.aten.add(x, 2)
    assert mode.funcs == [E.aten.add.Tensor, E.aten.add]


def test_subclasses_see_overloads():
    seen = []

    class Logged(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return super().__torch_function__(func, types, args, kwargs)

    x = ember.ones(2).as_subclass(Logged)
    out = E.aten.mul.Tensor(x, x)
    assert seen[0] is E.aten.mul.Tensor and type(out) is Logged


def test_record_function_calls_the_profiler_ops():
    """record_function enters and leaves through ops.profiler, as torch's does."""
    with _Seen() as mode:
        with ember.autograd.profiler.record_function("label"):
            pass
    assert [str(f) for f in mode.funcs] == [
        "profiler._record_function_enter_new",
        "profiler._record_function_exit._RecordFunction",
    ]


@needs_torch
def test_record_function_ops_as_torch_calls_them():
    from ember.profiler import profile

    with profile() as prof:
        handle = E.profiler._record_function_enter_new("range", None)
        ember.ones(2) * 2
        E.profiler._record_function_exit._RecordFunction(handle)
    events = {e.name: e for e in prof.events()}
    assert events["aten::mul"].cpu_parent is events["range"]
    assert events["range"].is_user_annotation
    h = E.profiler._record_function_enter_new("no profiler")  # a handle all the same
    E.profiler._record_function_exit._RecordFunction(h)


def test_ops_are_thread_safe_to_look_up():
    found = []

    def look():
        found.append(E.aten.hardtanh.default)

    threads = [threading.Thread(target=look) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(map(id, found))) == 1
