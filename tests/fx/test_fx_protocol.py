"""ember.fx on the ``__torch_function__`` protocol: Proxies reach the tracer through ember's
functions, methods and operators (graphs built by hand record what torch records), module
calls through ``nn.Module``'s interceptor hook, and nothing public is replaced while tracing
(so traces in two threads at once each get their own graph)."""

from __future__ import annotations

import functools
import math
import operator
import sys
import threading
import time

import numpy as np
import pytest
import torch
import torch.fx

import ember
import ember.fx
import ember.nn as enn
import ember.nn.functional as EF
from ember.fx.proxy import GraphAppendingTracer
from ember.nn.modules import module as module_mod


def _normalize(s: str) -> str:
    s = s.replace("torch._C._nn.", "torch.nn.functional.").replace("torch.", "ember.")
    # torch's Python functionals pass their defaults on as keywords (handle_torch_function)
    return s.replace(", _stacklevel: 3, dtype: None", "").replace(
        ", _stacklevel = 3, dtype = None", ""
    )


def _hand_built(lib, fx, Tracer):
    F = lib.nn.functional
    g = fx.Graph()
    tracer = Tracer(g)
    p = fx.Proxy(g.placeholder("x"), tracer)
    w = fx.Proxy(g.placeholder("w"), tracer)
    t = lib.ones(3)
    a = lib.relu(p)
    b = lib.cat([a, p])
    c = F.linear(b, w)
    d = c.add(1)
    e = t + d  # Tensor.__add__ hands the Proxy over: call_method add, as in torch
    f = t.add(e)
    h = lib.add(f, t, alpha=2)
    i = lib.sum(h, 1) * lib.sum(h, dim=1, keepdim=True) - lib.sum(h)
    j = F.softmax(i, dim=-1) / t
    k = lib.cat((j, j), dim=0).mean(0)
    g.output(tuple(v.node for v in (k, t - p, t * p, t.mul(p), t < p)))
    return g


def test_hand_built_proxy_graph_matches_torch():
    eg = _hand_built(ember, ember.fx, GraphAppendingTracer)
    tg = _hand_built(torch, torch.fx, torch.fx.proxy.GraphAppendingTracer)
    assert str(eg) == _normalize(str(tg))
    assert eg.python_code("self").src == _normalize(tg.python_code("self").src)
    assert "add_1 = ember.Tensor(size=[3], dtype=float32).add(add)" in str(
        eg.python_code("self").src
    )


def test_calls_recorded_as_written_or_equivalently():
    # the call site tells positional from keyword arguments; calls made through *args or
    # functools.partial record the arguments that differ from the defaults
    g = ember.fx.Graph()
    tracer = GraphAppendingTracer(g)
    p = ember.fx.Proxy(g.placeholder("x"), tracer)
    t = ember.fx.Proxy(g.placeholder("t"), tracer)
    outs = [
        ember.sum(p, 1, True),
        ember.sum(p, dim=1),
        functools.partial(ember.sum, dim=1)(p),
        ember.sum(*[p], **{"keepdim": True, "dim": 0}),
        ember.Tensor.add(t, p, alpha=3),
        list(map(ember.neg, [p]))[0],
        EF.gelu(p, approximate="tanh"),
    ]
    g.output(tuple(o.node for o in outs))
    recorded = [(n.target, n.args[1:], n.kwargs) for n in g.nodes if n.op.startswith("call")]
    assert recorded == [
        (ember.sum, (1, True), {}),
        (ember.sum, (), {"dim": 1}),
        (ember.sum, (1,), {}),  # partial: what differs from the defaults, positionally
        (ember.sum, (0, True), {}),  # ``*`` and ``**`` alike
        ("add", (p.node,), {"alpha": 3}),  # Tensor.add(t, p): t is self
        (ember.neg, (), {}),
        (EF.gelu, (), {"approximate": "tanh"}),
    ]
    gm = ember.fx.GraphModule(enn.Module(), g)
    x = ember.arange(6.0).reshape(2, 3) - 2
    t = ember.ones(2, 3)
    want = [
        ember.sum(x, 1, True),
        ember.sum(x, dim=1),
        ember.sum(x, dim=1),
        ember.sum(x, dim=0, keepdim=True),
        t.add(x, alpha=3),
        ember.neg(x),
        EF.gelu(x, approximate="tanh"),
    ]
    for got, w in zip(gm(x, t), want):
        np.testing.assert_allclose(got.numpy(), w.numpy(), rtol=1e-6)


def _snapshot() -> dict:
    spaces = {
        "ember": vars(ember),
        "ember.nn.functional": vars(EF),
        "ember.Tensor": vars(ember.Tensor),
        "ember.nn.Module": vars(enn.Module),
        "math": vars(math),
        "builtins": vars(sys.modules["builtins"]),
        "this module": globals(),
    }
    return {(space, k): id(v) for space, d in spaces.items() for k, v in list(d.items())}


def test_tracing_changes_no_public_attribute():
    before = _snapshot()
    seen = []

    class Net(enn.Module):
        def __init__(self):
            super().__init__()
            self.fc = enn.Linear(3, 3)
            self.inner = enn.Sequential(enn.ReLU(), enn.Linear(3, 3))

        def forward(self, x):
            seen.append(_snapshot())  # while the trace runs
            h = ember.relu(self.fc(x)) + EF.gelu(x) * self.fc.weight.sum()
            return self.inner(h).softmax(-1) + math.floor(x.size(0))

    gm = ember.fx.symbolic_trace(Net())
    assert [n.op for n in gm.graph.nodes].count("call_module") == 3
    (during,) = seen
    assert during == before
    assert _snapshot() == before


def test_tracing_in_two_threads_at_once():
    # each thread traces its own module many times while the other does (and a third runs
    # modules eagerly): every graph is the one a lone trace gives, eager calls are untouched
    def make(kind):
        class Net(enn.Module):
            def __init__(self):
                super().__init__()
                self.fc = enn.Linear(4, 4)

            def forward(self, x):
                time.sleep(0)  # let the other threads run in the middle of the trace
                if kind == "a":
                    y = ember.relu(self.fc(x))
                    time.sleep(0)
                    return ember.cat([y, x], dim=1).sum(1)
                y = EF.gelu(x) * self.fc.weight[0]
                time.sleep(0)
                return self.fc(y).tanh()

        return Net()

    nets = {k: make(k) for k in "ab"}
    want = {k: ember.fx.symbolic_trace(net).code for k, net in nets.items()}
    assert want["a"] != want["b"]
    got: dict = {"a": [], "b": []}
    eager: list = []
    errors: list = []
    barrier = threading.Barrier(3)

    def trace(kind):
        try:
            barrier.wait()
            for _ in range(25):
                got[kind].append(ember.fx.symbolic_trace(nets[kind]).code)
        except Exception as e:  # noqa: BLE001 (reported by the assertion below)
            errors.append(e)

    def run_eagerly():
        try:
            barrier.wait()
            net = make("a")
            for _ in range(200):
                out = net(ember.ones(2, 4))
                eager.append(type(out).__name__)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=trace, args=(k,)) for k in "ab"]
    threads.append(threading.Thread(target=run_eagerly))
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert got["a"] == [want["a"]] * 25 and got["b"] == [want["b"]] * 25
    assert eager == ["Tensor"] * 200
    assert module_mod._INTERCEPTING == 0


def test_module_hooks_and_nested_traces():
    # traced-through modules run their hooks (torch calls the original __call__ too); a
    # tracer may trace again while tracing (each trace has its own interceptor)
    def make(lib):
        nn = lib.nn

        class Inner(nn.Module):
            def forward(self, x):
                return x - 1

        class Outer(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = Inner()
                self.inner.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
                self.lin = nn.Linear(2, 2)

            def forward(self, x):
                return self.lin(self.inner(x))

        return Outer()

    egm, tgm = ember.fx.symbolic_trace(make(ember)), torch.fx.symbolic_trace(make(torch))
    assert egm.code == _normalize(tgm.code)
    assert "mul = x * 2" in egm.code

    inner_codes = []

    class Nesting(ember.fx.Tracer):
        def call_module(self, m, forward, args, kwargs):
            if isinstance(m, enn.Linear):
                inner_codes.append(ember.fx.symbolic_trace(m).code)
            return super().call_module(m, forward, args, kwargs)

    graph = Nesting().trace(make(ember))
    assert [n.op for n in graph.nodes] == [
        "placeholder",
        "call_function",
        "call_function",
        "call_module",
        "output",
    ]
    assert "ember.nn.functional.linear(input_1, weight, bias)" in inner_codes[0]
    assert module_mod._INTERCEPTING == 0


def test_interceptor_removed_after_a_failed_trace():
    def bad(x):
        return x + 1 if x.sum() > 0 else x

    with pytest.raises(ember.fx.proxy.TraceError):
        ember.fx.symbolic_trace(bad)
    assert module_mod._INTERCEPTING == 0 and module_mod._interceptors.stack == []
    assert not ember.fx._symbolic_trace.is_fx_tracing()
    net = enn.Linear(2, 2)
    assert isinstance(net(ember.ones(1, 2)), ember.Tensor)


def test_is_fx_tracing_and_wrap_dispatch_only_while_tracing():
    flags = []

    def f(x):
        flags.append(ember.fx._symbolic_trace.is_fx_tracing())
        return _scaled(x) + 1

    gm = ember.fx.symbolic_trace(f)
    assert flags == [True] and not ember.fx._symbolic_trace.is_fx_tracing()
    assert [n.name for n in gm.graph.nodes] == ["x", "_scaled", "add", "output"]
    assert gm.graph.find_nodes(op="call_function")[0].meta["is_wrapped"]
    assert gm(ember.tensor([1.0])).tolist() == [4.0]
    # outside a trace a wrapped function runs its body, on Proxies too (torch's inlining)
    g = ember.fx.Graph()
    out = _scaled(ember.fx.Proxy(g.placeholder("x")))
    assert out.node.op == "call_function" and out.node.target is operator.mul
    # retracing the generated code records the wrapped call again
    assert ember.fx.symbolic_trace(gm).code == gm.code


@ember.fx.wrap
def _scaled(x):
    return x * 3


def test_wrap_errors():
    with pytest.raises(NotImplementedError, match="wrap must be called at the top level"):
        ember.fx.wrap("len")
    globs = {"__name__": "somewhere", "ember": ember}
    with pytest.raises(NameError, match="call it after the definition"):
        exec("ember.fx.wrap('not_defined_yet')", globs)  # noqa: S102
    with pytest.raises(RuntimeError, match="Unsupported type for global function"):
        exec("ember.fx.wrap(3)", globs)  # noqa: S102


# -- fx.replace_pattern / subgraph_rewriter against torch ---------------------------------------


def test_replace_pattern_docs_example_matches_torch():
    def run(lib, fx):
        class M(lib.nn.Module):
            def forward(self, x, w1, w2):
                m1 = lib.cat([w1, w2]).sum()
                m2 = lib.cat([w1, w2]).sum()
                return x + lib.max(m1) + lib.max(m2)

        def pattern(w1, w2):
            return lib.cat([w1, w2])

        def replacement(w1, w2):
            return lib.stack([w1, w2])

        gm = fx.symbolic_trace(M())
        matches = fx.subgraph_rewriter.replace_pattern(gm, pattern, replacement)
        out = gm(lib.ones(2), lib.ones(2) * 2, lib.ones(2) * 3)
        return gm, matches, out

    egm, em, eout = run(ember, ember.fx)
    tgm, tm, tout = run(torch, torch.fx)
    # torch's code inlines nothing here: the overlapping cat of m2 is a separate match
    assert egm.code == _normalize(tgm.code)
    assert str(egm.graph) == _normalize(str(tgm.graph))
    assert [type(m).__name__ for m in em] == ["Match", "Match"]
    assert [m.anchor.name for m in em] == [m.anchor.name for m in tm]
    np.testing.assert_array_equal(eout.numpy(), tout.numpy())


def test_replace_pattern_rules_match_torch():
    # a pattern whose inner value leaks out is not replaced; literals must be equal unless
    # ignored; filters and per-match replacement graphs (replace_pattern_with_filters)
    def run(lib, fx):
        def f(x, y):
            a = lib.relu(x) * 2
            b = lib.relu(y) * 3
            leak = lib.relu(x + y)
            c = leak * 2
            return a + b + c + leak

        def pattern(v):
            return lib.relu(v) * 2

        def replacement(v):
            return lib.sigmoid(v)

        results = {}
        gm = fx.symbolic_trace(f)
        results["plain"] = [len(fx.replace_pattern(gm, pattern, replacement)), gm.code]
        gm = fx.symbolic_trace(f)
        done = fx.subgraph_rewriter.replace_pattern_with_filters(
            gm, pattern, replacement, ignore_literals=True
        )
        results["ignore_literals"] = [len(done), [n.name for n in done[0].replacements], gm.code]
        gm = fx.symbolic_trace(f)

        def only_y(match, original, pattern_graph):
            return match.placeholder_nodes[0].name == "y"

        done = fx.subgraph_rewriter.replace_pattern_with_filters(
            gm, pattern, replacement, match_filters=[only_y], ignore_literals=True
        )
        results["filtered"] = [len(done), gm.code]
        gm = fx.symbolic_trace(f)
        neg = fx.symbolic_trace(lambda v: lib.neg(v)).graph
        done = fx.subgraph_rewriter.replace_pattern_with_filters(
            gm, pattern, None, ignore_literals=True, replacement_callback=lambda m, o, p: neg
        )
        results["callback"] = [len(done), gm.code, gm(lib.ones(1), lib.ones(1)).tolist()]
        return results

    e, t = run(ember, ember.fx), run(torch, torch.fx)
    for key in t:
        assert e[key] == [_normalize(v) if isinstance(v, str) else v for v in t[key]], key
    assert e["plain"][0] == 1 and e["ignore_literals"][0] == 2


def test_replace_pattern_with_a_module_replacement():
    # the replacement's submodules are copied into the rewritten module
    def run(lib, fx):
        class Scale(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(2, 2)
                with lib.no_grad():
                    self.lin.weight.fill_(1.0)
                    self.lin.bias.zero_()

            def forward(self, v):
                return self.lin(v)

        gm = fx.symbolic_trace(lambda x: lib.tanh(x) + 1)
        fx.replace_pattern(gm, lambda v: lib.tanh(v), fx.symbolic_trace(Scale()))
        return gm.code, sorted(n for n, _ in gm.named_parameters()), gm(lib.ones(1, 2)).tolist()

    e, t = run(ember, ember.fx), run(torch, torch.fx)
    assert e == (_normalize(t[0]), t[1], t[2])
    assert e[1] == ["lin.bias", "lin.weight"]
