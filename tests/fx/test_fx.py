"""ember.fx against torch.fx: traced graphs, generated code and printing match torch's
(with ``torch.`` spelled ``ember.``); traced modules compute and train like the originals;
graph editing, dead-code elimination, Interpreter and Transformer as in torch.fx's docs."""

from __future__ import annotations

import copy
import operator

import numpy as np
import pytest
import torch
import torch.fx

import ember
import ember.fx
import ember.nn as enn
import ember.nn.functional as EF
from ember import relu  # bound at import: the same dispatching function as ember.relu
from ember.fx.proxy import GraphAppendingTracer, TraceError
from ember.nn.functional import softmax


def _normalize(s: str) -> str:
    """torch's rendering with ember's module names."""
    s = s.replace("torch._C._nn.", "torch.nn.functional.").replace("torch.", "ember.")
    # torch's Python functionals record their defaults as kwargs (handle_torch_function)
    s = s.replace("kwargs = {inplace: False}", "kwargs = {}").replace(
        ", _stacklevel: 3, dtype: None", ""
    )
    return s.replace(", inplace = False)", ")").replace(", _stacklevel = 3, dtype = None)", ")")


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def _convnet(lib):
    nn, F = lib.nn, lib.nn.functional

    class ConvNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3, padding=1)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(4 * 4 * 4, 5)

        def forward(self, x):
            x = self.pool(F.relu(self.conv(x)))
            x = lib.flatten(x, 1)
            return F.log_softmax(self.fc(x), dim=1)

    return ConvNet()


def _custom(lib):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(6, 6)
            self.scale = nn.Parameter(lib.ones(6))

        def forward(self, x):
            h = lib.cat([x, x], dim=1)
            h = h.view(h.size(0), -1)[:, : x.shape[1]]
            h = lib.relu(self.lin(h)) * self.scale + x
            h = F.gelu(h) - h / 2
            h = (h @ h.T) ** 2
            return h.sum(dim=1) + x[:, 0]

    return Block()


def _same_params(em, tm):
    with torch.no_grad():
        for (n1, p1), (n2, p2) in zip(em.named_parameters(), tm.named_parameters()):
            assert n1 == n2
            p2.copy_(torch.from_numpy(p1.detach().numpy().copy()))


@pytest.mark.parametrize("make", [_mlp, _convnet, _custom])
def test_graph_and_code_match_torch(make):
    egm = ember.fx.symbolic_trace(make(ember))
    tgm = torch.fx.symbolic_trace(make(torch))
    assert str(egm.graph) == _normalize(str(tgm.graph))
    assert egm.code == _normalize(tgm.code)
    assert [(n.op, n.name) for n in egm.graph.nodes] == [(n.op, n.name) for n in tgm.graph.nodes]


@pytest.mark.parametrize(
    "make, shape", [(_mlp, (5, 4)), (_convnet, (2, 1, 8, 8)), (_custom, (3, 6))]
)
def test_traced_module_computes_and_trains_like_the_original(make, shape):
    net = make(ember)
    gm = ember.fx.symbolic_trace(net)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = net(ember.tensor(x))
    out.sum().backward()
    want = {n: p.grad.numpy().copy() for n, p in net.named_parameters()}
    net.zero_grad()
    got = gm(ember.tensor(x))
    np.testing.assert_array_equal(got.detach().numpy(), out.detach().numpy())
    got.sum().backward()
    for n, p in gm.named_parameters():
        np.testing.assert_array_equal(p.grad.numpy(), want[n])
    # parameters are shared with the traced module, so an optimizer step moves both
    assert set(gm.state_dict()) == set(net.state_dict())
    opt = ember.optim.SGD(gm.parameters(), lr=0.1)
    opt.step()
    np.testing.assert_array_equal(
        gm(ember.tensor(x)).detach().numpy(), net(ember.tensor(x)).detach().numpy()
    )

    # and the values agree with torch's traced module
    tnet = make(torch)
    _same_params(net, tnet)
    tgm = torch.fx.symbolic_trace(tnet)
    np.testing.assert_allclose(
        gm(ember.tensor(x)).detach().numpy(),
        tgm(torch.from_numpy(x)).detach().numpy(),
        rtol=1e-4,
        atol=1e-5,
    )


def test_print_tabular_and_readable(capsys):
    gm = ember.fx.symbolic_trace(_mlp(ember))
    gm.graph.print_tabular()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert lines[2].split() == ["placeholder", "input_1", "input", "()", "{}"]
    assert lines[3].split() == ["call_module", "_0", "0", "(input_1,)", "{}"]
    assert lines[-1].split() == ["output", "output", "output", "(_2,)", "{}"]
    text = gm.print_readable(print_output=False)
    assert text.startswith("class Sequential(ember.nn.Module):\n    def forward(self, input):\n")
    assert type(gm).__name__ == "Sequential"


def test_explicit_graph_with_graph_appending_tracer():
    # seed 003: c = 2*a + b, built by hand
    def build(fx, Tracer):
        g = fx.Graph()
        a = fx.Proxy(g.placeholder("a"), Tracer(g))
        b = fx.Proxy(g.placeholder("b"), Tracer(g))
        c = 2 * a + b
        g.output(c.node)
        return g

    eg = build(ember.fx, GraphAppendingTracer)
    tg = build(torch.fx, torch.fx.proxy.GraphAppendingTracer)
    assert str(eg) == str(tg)
    assert eg.python_code("self").src == tg.python_code("self").src
    gm = ember.fx.GraphModule(enn.Module(), eg)
    assert gm(ember.tensor(3.0), ember.tensor(1.0)).item() == 7.0


def test_functions_and_concrete_args():
    def f(x, y):
        return ember.relu(x) * y - EF.gelu(x)

    gm = ember.fx.symbolic_trace(f)
    assert type(gm).__name__ == "f"
    x, y = ember.randn(3), ember.randn(3)
    np.testing.assert_array_equal(gm(x, y).numpy(), f(x, y).numpy())

    def g(x, flag):
        return x + 1 if flag else x - 1

    with pytest.raises(
        TraceError, match="symbolically traced variables cannot be used as inputs to control flow"
    ):
        ember.fx.symbolic_trace(g)
    gm = ember.fx.symbolic_trace(g, concrete_args={"flag": False})
    assert gm(ember.tensor([1.0]), False).tolist() == [0.0]
    with pytest.raises(AssertionError, match="flag has been specialized to have value False"):
        gm(ember.tensor([1.0]), True)
    tgm = torch.fx.symbolic_trace(g, concrete_args={"flag": False})
    assert gm.code == _normalize(tgm.code).replace(
        "ember._assert(", "ember.fx._symbolic_trace._assert("
    )

    def h(x, y=None):
        return x if y is None else x + y

    for value in (None, ember.fx.PH):
        gm = ember.fx.symbolic_trace(h, concrete_args={"y": value})
        tgm = torch.fx.symbolic_trace(h, concrete_args={"y": torch.fx.PH if value else None})
        assert gm.code == _normalize(tgm.code)


def test_proxy_errors_match_torch():
    def errors(fx, Tracer):
        g = fx.Graph()
        p = fx.Proxy(g.placeholder("x"), Tracer(g))
        found = []
        for fn in (bool, iter, len):
            try:
                fn(p)
            except Exception as e:  # noqa: BLE001 (collected and compared)
                found.append((type(e).__name__, str(e)))
        return found

    assert errors(ember.fx, GraphAppendingTracer) == errors(
        torch.fx, torch.fx.proxy.GraphAppendingTracer
    )


def test_unpacking_tensor_constants_and_leaf_override():
    class M(enn.Module):
        def __init__(self):
            super().__init__()
            self.c = ember.tensor([1.0, 2.0])
            self.register_buffer("buf", ember.tensor([3.0, 4.0]))

        def forward(self, x):
            a, b = x.chunk(2)
            return self.c + a, b * self.buf, ember.tensor([5.0, 6.0]) - a

    m = M()
    gm = ember.fx.symbolic_trace(m)
    x = ember.tensor([1.0, 2.0, 3.0, 4.0])
    for got, want in zip(gm(x), m(x)):
        assert got.tolist() == want.tolist()
    ops = [(n.op, n.target) for n in gm.graph.nodes if n.op == "get_attr"]
    assert ops == [
        ("get_attr", "_tensor_constant0"),
        ("get_attr", "buf"),
        ("get_attr", "_tensor_constant1"),
    ]
    assert (
        "__add__" in vars(ember.Tensor)
        and ember.Tensor.__add__.__module__ != "ember.fx._symbolic_trace"
    )

    class NoLeaves(ember.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return False

    g = NoLeaves().trace(_mlp(ember))
    assert [n.target.__name__ for n in g.nodes if n.op == "call_function"] == [
        "linear",
        "relu",
        "linear",
    ]


def _double(x):
    return x * 2 if x.dim() > 0 else x


ember.fx.wrap(_double)


def test_wrap_records_a_leaf_call():
    def f(x):
        return _double(x) + 1

    gm = ember.fx.symbolic_trace(f)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert targets[0] is _double and targets[1] is operator.add
    assert gm(ember.tensor([1.0])).tolist() == [3.0]
    assert _double.__name__ == "_double" and globals()["_double"] is _double


# -- torch.fx documentation examples, as our own cells -------------------------------------


def test_docs_replace_add_with_mul():
    def f(x, y):
        return ember.add(x, y) + ember.add(y, y)

    gm = ember.fx.symbolic_trace(f)
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is ember.add:
            node.target = ember.mul
    gm.recompile()
    assert "ember.mul(x, y)" in gm.code
    assert gm(ember.tensor(2.0), ember.tensor(3.0)).item() == 6.0 + 9.0


def test_docs_graph_surgery_matches_torch():
    def edit(fx, lib, f):
        gm = fx.symbolic_trace(f)
        g = gm.graph
        assert g.eliminate_dead_code() is True
        for node in g.nodes:
            if node.op == "call_function" and node.target is operator.add:
                with g.inserting_after(node):
                    new = g.call_function(lib.relu, args=(node,))
                node.replace_all_uses_with(new)
                new.args = (node,)
        g.lint()
        gm.recompile()
        return gm

    def ef(x):
        unused = x * 3  # noqa: F841 (dead code)
        return ember.sigmoid(x) + 1

    def tf(x):
        unused = x * 3  # noqa: F841 (dead code)
        return torch.sigmoid(x) + 1

    egm, tgm = edit(ember.fx, ember, ef), edit(torch.fx, torch, tf)
    assert str(egm.graph) == _normalize(str(tgm.graph))
    assert egm.code == _normalize(tgm.code)
    np.testing.assert_allclose(
        egm(ember.tensor([-3.0])).numpy(), tgm(torch.tensor([-3.0])).numpy(), rtol=1e-6
    )


def test_docs_interpreter_and_transformer():
    def f(x):
        return ember.sigmoid(x).neg() + 1

    gm = ember.fx.symbolic_trace(f)

    class NegSigmSwap:  # torch.fx's documented example, for Interpreter and Transformer
        def call_function(self, target, args, kwargs):
            if target is ember.sigmoid:
                return ember.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            if target == "neg":
                call_self, *args_tail = args
                return call_self.sigmoid(*args_tail, **kwargs)
            return super().call_method(target, args, kwargs)

    class NegSigmSwapInterpreter(NegSigmSwap, ember.fx.Interpreter):
        pass

    x = ember.tensor([0.5, -1.0])
    want = ember.sigmoid(ember.neg(x)) + 1
    np.testing.assert_allclose(NegSigmSwapInterpreter(gm).run(x).numpy(), want.numpy())

    class NegSigmSwapXformer(NegSigmSwap, ember.fx.Transformer):
        pass

    new = NegSigmSwapXformer(gm).transform()
    assert isinstance(new, ember.fx.GraphModule) and new is not gm
    np.testing.assert_allclose(new(x).numpy(), want.numpy())
    assert [n.name for n in new.graph.nodes] == ["x", "neg", "sigmoid", "add", "output"]


def test_interpreter_runs_modules_and_reports_missing_inputs():
    net = _convnet(ember)
    gm = ember.fx.symbolic_trace(net)
    x = ember.randn(2, 1, 8, 8)
    np.testing.assert_array_equal(
        ember.fx.Interpreter(gm).run(x).detach().numpy(), net(x).detach().numpy()
    )
    with pytest.raises(
        RuntimeError,
        match="Expected positional argument for parameter x, but one was not passed in!",
    ):
        ember.fx.Interpreter(gm).run()


# -- Graph and Node API ------------------------------------------------------------------


def test_node_api():
    g = ember.fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(operator.add, (x, 1))
    m = g.call_method("relu", (a,))
    s = g.call_function(operator.add, (m, x))
    out = g.output((s, [a]))
    assert [n.name for n in g.nodes] == ["x", "add", "relu", "add_1", "output"]
    assert list(x.users) == [a, s] and s.all_input_nodes == [m, x]
    assert a.next is m and m.prev is a and repr(s) == "add_1"
    assert out.format_node() == "return (add_1, [add])"
    assert ember.fx.map_arg((x, [a, 3]), lambda n: n.name) == ("x", ["add", 3])
    with pytest.raises(
        RuntimeError, match=r"Tried to erase Node add but it still had 2 users in the graph"
    ):
        g.erase_node(a)
    s.replace_input_with(x, a)
    assert s.args == (m, a) and list(x.users) == [a]
    # moving a node: put relu first after x (now used before defined: lint objects)
    x.append(m)
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()
    a.append(m)
    g.lint()
    gm = ember.fx.GraphModule(enn.Module(), g)
    r = gm(ember.tensor([-3.0]))
    assert r[0].tolist() == [-2.0] and r[1][0].tolist() == [-2.0]
    g2 = copy.deepcopy(g)
    assert str(g2) == str(g)
    gm2 = copy.deepcopy(gm)
    assert gm2.code == gm.code and gm2(ember.tensor([1.0]))[0].tolist() == [4.0]


def test_graph_copy_and_inserting_before():
    def f(x):
        return ember.relu(x) * 2

    src = ember.fx.symbolic_trace(f).graph
    g = ember.fx.Graph()
    y = g.placeholder("y")
    out = g.graph_copy(src, {next(iter(src.nodes)): y})
    g.output(out)
    with g.inserting_before(out):
        extra = g.call_function(operator.neg, (out,))
    assert [n.name for n in g.nodes] == ["y", "relu", "neg", "mul", "output"]
    assert extra.next is out
    assert g.python_code("self").src.split("\n")[3] == "def forward(self, y):"


def test_insertion_order_and_erase_message_match_torch():
    def build(fx):
        g = fx.Graph()
        x = g.placeholder("x")
        with g.inserting_after(x):
            g.call_function(operator.neg, (x,))
            g.call_function(operator.pos, (x,))
        with g.inserting_before(None):
            g.placeholder("first")
        g.output(x)
        try:
            g.erase_node(x)
        except RuntimeError as e:
            return [n.name for n in g.nodes], str(e), str(g)

    assert build(ember.fx) == build(torch.fx)


def test_imported_names_and_wrapped_builtins_are_recorded():
    def f(x):
        return softmax(relu(x), dim=0) * 2

    gm = ember.fx.symbolic_trace(f)
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"][:2] == [relu, softmax]
    x = ember.tensor([1.0, -1.0])
    np.testing.assert_array_equal(gm(x).numpy(), f(x).numpy())
    assert relu is ember.relu and softmax is EF.softmax


def test_nested_modules_match_torch():
    def make(lib):
        nn = lib.nn

        class Inner(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Linear(3, 3)
                self.register_buffer("b", lib.zeros(3))

            def forward(self, x, scale=2.0):
                return self.conv(x) * scale + self.b

        class Outer(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([Inner(), Inner()])
                self.seq = nn.Sequential(Inner())

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x, scale=3.0)
                x = self.seq(x)
                y = x.to(lib.float64)
                z = lib.zeros_like(x) + x.shape[-1]
                x = x + self.layers[0].conv.weight[0]
                x += 1
                return y, z, x.float(), lib.stack([x, x]).mean(0, keepdim=True)

        return Outer()

    em, tm = make(ember), make(torch)
    _same_params(em, tm)
    egm, tgm = ember.fx.symbolic_trace(em), torch.fx.symbolic_trace(tm)
    assert str(egm.graph).replace("torch.float64", "ember.float64") == _normalize(str(tgm.graph))
    assert egm.code == _normalize(tgm.code)
    assert ember.fx.symbolic_trace(egm).code == egm.code  # retracing a GraphModule
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for a, b in zip(egm(ember.tensor(x)), tgm(torch.from_numpy(x))):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5)


def test_copy_pickle_and_identity_transform():
    import pickle

    net = _convnet(ember)
    gm = ember.fx.symbolic_trace(net)
    x = ember.randn(2, 1, 8, 8)
    want = gm(x).detach().numpy()
    restored = pickle.loads(pickle.dumps(gm))
    assert type(restored).__name__ == "ConvNet" and restored.code == gm.code
    np.testing.assert_array_equal(restored(x).detach().numpy(), want)
    deep = copy.deepcopy(gm)
    assert deep.conv.weight is not gm.conv.weight
    np.testing.assert_array_equal(deep(x).detach().numpy(), want)
    same = ember.fx.Transformer(gm).transform()
    assert same.code == gm.code and same.conv is gm.conv
    np.testing.assert_array_equal(same(x).detach().numpy(), want)
    gm.load_state_dict(_convnet(ember).state_dict())  # keys line up with the original's


def test_docs_fuse_pass_edits_modules_and_nodes():
    # a pass in the style of torch.fx's examples: drop every ReLU module from a traced MLP
    gm = ember.fx.symbolic_trace(_mlp(ember))
    modules = dict(gm.named_modules())
    for node in gm.graph.nodes:
        if node.op == "call_module" and isinstance(modules[node.target], enn.ReLU):
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)
    gm.delete_all_unused_submodules()
    gm.recompile()
    assert [n for n, _ in gm.named_children()] == ["0", "2"]
    x = ember.randn(3, 4)
    want = gm.get_submodule("2")(gm.get_submodule("0")(x))
    np.testing.assert_array_equal(gm(x).detach().numpy(), want.detach().numpy())
    assert gm.graph.find_nodes(op="call_module")[1].target == "2"


def test_docs_decomposition_with_proxies():
    # torch.fx docs, "Proxy/Retracing": rewrite F.relu as (x > 0) * x on a new graph
    def relu_decomposition(x):
        return (x > 0) * x

    rules = {EF.relu: relu_decomposition}

    class M(enn.Module):
        def forward(self, x):
            return EF.relu(x) + 1

    model = M()
    graph = ember.fx.Tracer().trace(model)
    new_graph = ember.fx.Graph()
    env = {}
    tracer = GraphAppendingTracer(new_graph)
    for node in graph.nodes:
        if node.op == "call_function" and node.target in rules:
            proxy_args = [
                ember.fx.Proxy(env[a.name], tracer) if isinstance(a, ember.fx.Node) else a
                for a in node.args
            ]
            env[node.name] = rules[node.target](*proxy_args).node
        else:
            env[node.name] = new_graph.node_copy(node, lambda a: env[a.name])
    gm = ember.fx.GraphModule(model, new_graph)
    assert [n.name for n in gm.graph.nodes] == ["x", "gt", "mul", "add", "output"]
    x = ember.tensor([-1.0, 2.0])
    assert gm(x).tolist() == model(x).tolist() == [1.0, 3.0]


def test_tracer_hooks_annotate_nodes():
    class Annotating(ember.fx.Tracer):
        def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
            node = super().create_node(kind, target, args, kwargs, name, type_expr)
            node.meta["kind"] = kind
            return node

    tracer = Annotating()
    graph = tracer.trace(_convnet(ember))
    assert all(n.meta["kind"] == n.op for n in graph.nodes)
    assert tracer.root is not None and isinstance(tracer.root, enn.Module)


def test_graph_module_from_dict_and_lint_of_targets():
    g = ember.fx.Graph()
    x = g.placeholder("x")
    w = g.get_attr("sub.w")
    y = g.call_module("lin", (x,))
    g.output(g.call_function(operator.add, (y, w)))
    lin = enn.Linear(2, 2)
    gm = ember.fx.GraphModule({"sub.w": ember.ones(2), "lin": lin}, g, "FromDict")
    assert type(gm).__name__ == "FromDict" and gm.lin is lin
    assert [n for n, _ in gm.named_buffers()] == ["sub.w"]
    x0 = ember.randn(3, 2)
    np.testing.assert_array_equal(gm(x0).detach().numpy(), (lin(x0) + 1).detach().numpy())
    y.target = "missing"
    with pytest.raises(RuntimeError, match="references nonexistent attribute missing"):
        gm.graph.lint()
    with pytest.raises(RuntimeError, match="Node referenced nonexistent target missing"):
        ember.fx.Interpreter(gm).run(x0)
    with pytest.raises(
        RuntimeError, match="referenced target lin but that target was not provided"
    ):
        ember.fx.GraphModule({"sub.w": ember.ones(2)}, ember.fx.symbolic_trace(gm).graph)
