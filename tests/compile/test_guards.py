"""ember.compile guards on what a function reads besides its arguments.

Each test changes, between two calls, something a compiled function reads (a global, a
closure variable, an attribute, an item, a mode...) and checks the compiled call against
the eager function on the same inputs: values and gradients. Then the Python side
effects a replay would drop (writes to globals, attributes, containers; ``print``): the
function must run eagerly, so that repeated calls do what eager calls do.
"""

from __future__ import annotations

import functools
import sys
import types

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember._compile import GraphBreak


def _same(f, cf, *args):
    """The compiled call gives the eager call's values and input gradients."""
    want, got = f(*args), cf(*args)
    assert type(want) is type(got)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-9, atol=1e-12)
    tensors = [a for a in args if isinstance(a, ember.Tensor) and a.requires_grad]
    if tensors and want.requires_grad:
        gw = ember.autograd.grad(want.sum(), tensors)
        gg = ember.autograd.grad(got.sum(), tensors)
        for a, b in zip(gw, gg):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-9, atol=1e-12)


def _x():
    return ember.tensor([0.5, -1.0, 2.0], dtype=ember.float64, requires_grad=True)


def _compiled_entries(cf) -> int:
    compiled = getattr(cf, "_ember_compiled", None) or cf._compiled
    return sum(1 for e in compiled.entries if hasattr(e, "graph"))


# -- globals -------------------------------------------------------------------------------

SCALE = 2.0
OFFSET = 1
FLAG = True
MODE = "tanh"
PAIR = (1.0, 2.0)
W_GLOBAL = ember.ones(3, dtype=ember.float64)
ACT = ember.relu


def test_issue_example_a_rebound_global_float():
    global SCALE
    f = lambda x: x * SCALE + 1
    cf = ember.compile(f)
    x = ember.ones(1)
    assert cf(x).tolist() == [3.0]
    try:
        SCALE = 5.0
        assert cf(x).tolist() == [6.0]  # torch 6.0; was 3.0 (stale)
    finally:
        SCALE = 2.0


@pytest.mark.parametrize(
    "name, new",
    [
        ("SCALE", 3.5),
        ("SCALE", 2),  # same number, other type: int * tensor computes otherwise
        ("OFFSET", 4),
        ("OFFSET", 1.0),
        ("FLAG", False),
        ("MODE", "sigmoid"),
        ("PAIR", (1.0, 7.0)),
        ("W_GLOBAL", ember.full((3,), 3.0, dtype=ember.float64)),
        ("ACT", ember.tanh),
    ],
)
def test_a_rebound_global_recompiles(name, new):
    def f(x):
        y = ACT(x) * SCALE + OFFSET
        y = y + PAIR[1] * W_GLOBAL
        if FLAG:
            y = y * 2
        return getattr(ember, MODE)(y)

    cf = ember.compile(f)
    x = _x()
    _same(f, cf, x)
    g = globals()
    old = g[name]
    try:
        g[name] = new
        _same(f, cf, x)
        assert _compiled_entries(cf) == 2
        assert f"global {name!r}" in cf.explain()
        g[name] = old  # back: the first entry serves again
        _same(f, cf, x)
        assert _compiled_entries(cf) == 2
    finally:
        g[name] = old


def test_a_global_tensor_changed_in_place_is_read_at_each_call_without_recompiling():
    w = ember.ones(3, dtype=ember.float64)
    g = {"w": w}
    f = lambda x: x * g["w"]
    cf = ember.compile(f)
    x = _x()
    _same(f, cf, x)
    with ember.no_grad():
        w.mul_(3)
    _same(f, cf, x)
    assert _compiled_entries(cf) == 1


def test_a_global_tensor_whose_data_changes_shape_recompiles():
    global W_GLOBAL
    old = W_GLOBAL
    try:
        W_GLOBAL = ember.ones(3, dtype=ember.float64)
        f = lambda x: x * W_GLOBAL
        cf = ember.compile(f)
        x = _x()
        _same(f, cf, x)
        W_GLOBAL.data = ember.ones(1, dtype=ember.float64) * 4
        _same(f, cf, x)
    finally:
        W_GLOBAL = old


def test_a_rebound_global_tensor_issue_example():
    ns = {"torch": ember}
    exec("W = torch.ones(2)\nf = torch.compile(lambda x: x * W)", ns)
    x = ember.ones(2)
    assert ns["f"](x).tolist() == [1.0, 1.0]
    exec("W = torch.full((2,), 4.0)", ns)
    assert ns["f"](x).tolist() == [4.0, 4.0]


def test_a_shadowed_builtin_recompiles():
    ns = {"ember": ember}
    exec("def f(x):\n    return x * abs(-2)\n", ns)
    f = ns["f"]
    cf = ember.compile(f)
    x = _x()
    _same(f, cf, x)
    ns["abs"] = lambda v: 10  # a global now shadows the builtin
    _same(f, cf, x)


# -- objects and containers read from globals ---------------------------------------------


class _Config:
    pass


CFG = _Config()
CFG.model = _Config()
CFG.model.width = 1.5
TABLE = {"lr": 0.1, "weights": [1.0, 2.0], "tags": {"a"}}
ARRAY = np.ones(3)


def test_a_nested_attribute_of_a_global_object():
    f = lambda x: x * CFG.model.width
    cf = ember.compile(f)
    x = _x()
    _same(f, cf, x)
    CFG.model.width = 4.0
    try:
        _same(f, cf, x)
        CFG.model = _Config()  # a new object with the same value: no recompile needed
        CFG.model.width = 4.0
        _same(f, cf, x)
        assert "global 'CFG'.model.width" in cf.explain()
    finally:
        CFG.model.width = 1.5


def test_items_of_a_global_dict_and_list():
    f = lambda x: x * TABLE["lr"] + TABLE["weights"][1] + len(TABLE["tags"])
    cf = ember.compile(f)
    x = _x()
    _same(f, cf, x)
    try:
        TABLE["lr"] = 0.5
        _same(f, cf, x)
        TABLE["weights"][1] = 9.0
        _same(f, cf, x)
        TABLE["tags"].add("b")
        _same(f, cf, x)
    finally:
        TABLE.update(lr=0.1, weights=[1.0, 2.0], tags={"a"})


def test_a_global_list_iterated_and_grown():
    ns = {"ember": ember, "COEFS": [1.0, 2.0]}
    exec(
        "def f(x):\n    y = x\n    for c in COEFS:\n        y = y * c + 1\n    return y\n",
        ns,
    )
    f = ns["f"]
    cf = ember.compile(f)
    x = _x()
    _same(f, cf, x)
    ns["COEFS"].append(3.0)
    _same(f, cf, x)
    ns["COEFS"][0] = -1.0
    _same(f, cf, x)


def test_a_global_numpy_array_changed_in_place():
    f = lambda x: x * ember.as_tensor(ARRAY)
    cf = ember.compile(f)
    x = _x()
    _same(f, cf, x)
    ARRAY[1] = 7.0
    try:
        _same(f, cf, x)
    finally:
        ARRAY[1] = 1.0


# -- closures ------------------------------------------------------------------------------


def _closure():
    k = 2
    w = ember.ones(3, dtype=ember.float64)
    obj = _Config()
    obj.scale = 3.0

    def f(x):
        return x * k * w * obj.scale

    def set_k(v):
        nonlocal k
        k = v

    def set_w(v):
        nonlocal w
        w = v

    return f, set_k, set_w, obj


def test_a_closure_cell_rebound_by_the_enclosing_function():
    f, set_k, set_w, obj = _closure()
    cf = ember.compile(f)
    x = _x()
    _same(f, cf, x)
    set_k(7)  # the issue's int in a cell
    _same(f, cf, x)
    set_w(ember.full((3,), 2.0, dtype=ember.float64))
    _same(f, cf, x)
    obj.scale = -1.0
    _same(f, cf, x)
    assert "closure variable 'k'" in cf.explain()


def test_closures_defined_inside_the_function_and_comprehensions():
    f0, set_k, _, _ = _closure()
    k_cell_reader = f0  # reads cell k

    def f(x):
        inner = lambda y: k_cell_reader(y) + 1  # a closure made at each call
        return sum([inner(x) * i for i in range(2)])

    cf = ember.compile(f)
    x = _x()
    _same(f, cf, x)
    set_k(5)
    _same(f, cf, x)


def test_a_decorated_helper_and_a_partial():
    state = {"bias": 1.0}

    def traced(fn):
        @functools.wraps(fn)
        def wrapper(*a):
            return fn(*a) + state["bias"]

        return wrapper

    @traced
    def helper(x):
        return x * 2

    part = functools.partial(lambda x, s: x * s, s=3.0)

    def f(x):
        return helper(x) + part(x)

    cf = ember.compile(f)
    x = _x()
    _same(f, cf, x)
    state["bias"] = 5.0
    _same(f, cf, x)


def test_a_function_default_changed():
    def f(x, k=2.0):
        return x * k

    cf = ember.compile(f)
    x = _x()
    _same(f, cf, x)
    f.__defaults__ = (6.0,)
    _same(f, cf, x)


def test_a_helper_in_another_module_reads_its_own_globals():
    mod = types.ModuleType("_ember_guard_helper")
    exec("FACTOR = 2.0\ndef helper(x):\n    return x * FACTOR\n", mod.__dict__)
    sys.modules[mod.__name__] = mod
    try:
        f = lambda x: mod.helper(x) + 1
        cf = ember.compile(f)
        x = _x()
        _same(f, cf, x)
        mod.FACTOR = 3.0
        _same(f, cf, x)
        mod.helper = lambda x: x - 1  # the module's function rebound
        _same(f, cf, x)
    finally:
        del sys.modules[mod.__name__]


# -- modules and arguments -----------------------------------------------------------------


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3, dtype=ember.float64)
        self.scale = 1.0

    def forward(self, x):
        return self.lin(x) * self.scale


class _Model(nn.Module):
    SHIFT = 0.5

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([_Block(), _Block()])
        self.drop = nn.Dropout(0.0)
        self.scale = 2.0
        self.use_tanh = False
        self.cfg = _Config()
        self.cfg.alpha = 1.0

    @property
    def gain(self):
        return self.scale * 2

    def helper(self, x):
        return x + self.cfg.alpha

    def forward(self, x):
        for b in self.blocks:
            x = b(x) + b.scale
        x = self.drop(x) * self.scale * self.gain + self.SHIFT
        if self.use_tanh:
            x = x.tanh()
        return self.helper(x)


@pytest.mark.parametrize(
    "change",
    [
        "m.scale = 3.0",
        "m.use_tanh = True",
        "m.cfg.alpha = -2.0",
        "m.cfg = type(m.cfg)(); m.cfg.alpha = 4.0",
        "m.blocks[1].scale = 5.0",
        "type(m).SHIFT = 1.5",
        "m.SHIFT = 2.5",
        "m.drop.p = 0.0; m.drop.inplace = True",
        "m.blocks[0].lin = nn.Linear(3, 3, dtype=ember.float64)",
        "m.blocks.append(type(m.blocks[0])())",
        "m.helper = lambda x: x * 10",
        "m.eval()",
    ],
)
def test_module_attributes(change):
    m = _Model()
    cm = ember.compile(m)
    x = _x()
    _same(m, cm, x)
    try:
        exec(change, {"m": m, "nn": nn, "ember": ember})
        _same(m, cm, x)
    finally:
        _Model.SHIFT = 0.5


def test_dropout_probability_changed_after_compiling():
    m = nn.Sequential(nn.Linear(3, 3, dtype=ember.float64), nn.Dropout(0.0))
    cm = ember.compile(m)
    x = _x()
    _same(m, cm, x)
    m[1].p = 0.5
    ember.manual_seed(3)
    want = m(x)
    ember.manual_seed(3)
    got = cm(x)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    assert "Dropout object.p (was 0.0) changed" in cm.explain()


def test_a_module_read_from_a_global_by_a_compiled_function():
    ns = {"model": nn.Sequential(nn.Linear(3, 3, dtype=ember.float64), nn.ReLU())}
    f = lambda x: ns["model"](x)
    cf = ember.compile(f)
    x = _x()
    _same(f, cf, x)
    ns["model"][1] = nn.Tanh()  # a submodule swapped in the module the function reads
    _same(f, cf, x)
    ns["model"].eval()
    _same(f, cf, x)


def test_an_attribute_of_an_argument_object():
    cfg = _Config()
    cfg.k = 2.0
    f = lambda x, c: x * c.k
    cf = ember.compile(f)
    x = _x()
    _same(f, cf, x, cfg)
    cfg.k = -3.0
    _same(f, cf, x, cfg)


def test_the_grad_of_a_global_parameter_is_followed():
    w = ember.ones(3, dtype=ember.float64, requires_grad=True)
    holder = {"w": w}

    def sgd_step(x):
        with ember.no_grad():
            return x - 0.1 * holder["w"].grad

    cf = ember.compile(sgd_step)
    x = ember.zeros(3, dtype=ember.float64)
    (w * 2).sum().backward()
    _same(sgd_step, cf, x)
    w.grad = None
    (w * 5).sum().backward()  # a new grad tensor
    _same(sgd_step, cf, x)


# -- global modes ---------------------------------------------------------------------------


def test_the_default_dtype_is_part_of_the_key():
    f = lambda x: x + ember.ones(3)
    cf = ember.compile(f)
    x = ember.ones(3, dtype=ember.float64)
    _same(f, cf, x)
    old = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    try:
        _same(f, cf, ember.ones(3, dtype=ember.float32))
        assert cf(ember.ones(3)).dtype == f(ember.ones(3)).dtype
    finally:
        ember.set_default_dtype(old)


def test_autocast_is_part_of_the_key():
    f = lambda a: a @ a
    cf = ember.compile(f)
    a = ember.ones(2, 2)
    assert cf(a).dtype == ember.float32
    with ember.autocast("cpu"):
        assert cf(a).dtype == f(a).dtype == ember.bfloat16
    assert cf(a).dtype == ember.float32


# -- side effects a replay would drop: the function runs eagerly ---------------------------

COUNTER = 0
LOG: list = []


def _bump_global(x):
    global COUNTER
    COUNTER += 1
    return x * 2


def _append_global(x):
    LOG.append(1)
    return x * 2


class _Counting(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.seen: dict = {}

    def forward(self, x):
        self.calls += 1
        self.seen["last"] = 1
        return x * 2


def test_side_effects_run_at_every_call_as_eagerly(capsys):
    global COUNTER
    COUNTER = 0
    LOG.clear()
    x = _x()
    for fn in (_bump_global, _append_global):
        cf = ember.compile(fn)
        for _ in range(3):
            _same(lambda v: v * 2, cf, x)
        assert "a Python side effect" in cf.explain()
    assert COUNTER == 3 and len(LOG) == 3

    m = _Counting()
    cm = ember.compile(m)
    for _ in range(3):
        cm(x)
    assert m.calls == 3
    assert "a Python side effect" in cm.explain()

    def printing(x):
        print("step")
        return x * 2

    cp = ember.compile(printing)
    for _ in range(3):
        cp(x)
    assert capsys.readouterr().out == "step\n" * 3

    def make():
        total = 0

        def f(x):
            nonlocal total
            total += 1
            return x * total

        return f

    f = make()
    cf = ember.compile(make())
    for _ in range(3):
        _same(f, cf, x)


def test_fullgraph_raises_on_a_side_effect():
    cf = ember.compile(_append_global, fullgraph=True)
    with pytest.raises(GraphBreak, match="side effect"):
        cf(_x())


def test_fullgraph_still_raises_on_a_graph_break():
    cf = ember.compile(lambda x: x * x.sum().item(), fullgraph=True)
    with pytest.raises(GraphBreak, match="item"):
        cf(_x())


def test_local_objects_may_be_changed_freely():
    def f(x):
        acc = []
        box = _Config()
        box.v = x * 2
        acc.append(box.v)
        return acc[0] + 1

    cf = ember.compile(f)
    x = _x()
    _same(f, cf, x)
    assert "compiled" in cf.explain() and "eagerly" not in cf.explain()


# -- limits and costs -----------------------------------------------------------------------


def test_the_cache_limit_still_applies_to_recompiles():
    ns = {"K": 0.0}
    f = lambda x: x * ns["K"]
    cf = ember.compile(f)
    x = _x()
    for k in range(12):
        ns["K"] = float(k)
        _same(f, cf, x)
    assert "cache_size_limit (8) reached" in cf.explain()


def test_guards_are_few_and_cheap_for_a_model():
    m = _Model()
    cm = ember.compile(m)
    x = _x()
    cm(x)
    (entry,) = cm._compiled.entries
    assert len(entry.guards) < 80
    import timeit

    per_check = min(timeit.repeat(entry.guards.check, number=200, repeat=5)) / 200
    assert entry.guards.check() is True
    assert per_check < 200e-6  # generous: a few µs here, on a loaded machine far less than this


def test_guards_read_on_each_python_version_the_same_chains():
    from ember._compile.guards import _code_info

    def f(self, x):
        m = self.sub.mod
        for b in self.blocks:
            x = b.scale * x
        return x * CFG.model.width * TABLE["lr"] + m.w

    reads = set(_code_info(f.__code__).reads)
    assert (("global", "CFG"), (("attr", "model"), ("attr", "width"))) in reads
    assert (("global", "TABLE"), (("item", "lr"),)) in reads
    assert (("fast", "b"), (("attr", "scale"),)) in reads
    aliases = _code_info(f.__code__).aliases
    assert aliases["m"] == [(("fast", "self"), (("attr", "sub"), ("attr", "mod")))]
    assert aliases["b"] == [(("fast", "self"), (("attr", "blocks"), ("each", None)))]
