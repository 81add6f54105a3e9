"""Seed 003's two ways to get a computation graph, then the compiler that needs the first.

1. Recorded (define-by-run): run ``c = 2*a + b`` on tensors that require grad; the graph
   is what ``c.grad_fn`` points to, built as the code ran.
2. Explicit (symbolic, MXNet's ``sym.var()``): placeholders, then ``c = 2*a + b`` on
   proxies builds an ``ember.fx.Graph`` without computing anything; it prints as a table and
   as generated code, and runs like a function.
3. Compiled: ``ember.compile`` captures the declared ops of ``y = 2 * dot(x, x)`` (the seed's
   next example) once and replays them as generated NumPy code with its backward.

Run: ``python examples/graphs.py`` (no options; it writes no files).
"""

from __future__ import annotations

import argparse
import time

import ember
import ember.fx as fx


def recorded() -> None:
    print("== 1. the recorded graph (define-by-run) ==")
    a = ember.ones(2, 1, requires_grad=True)
    b = ember.ones(2, 1, requires_grad=True)
    c = 2 * a + b
    print("c =", c)
    node, depth = c.grad_fn, 0
    stack = [(node, 0)]
    while stack:
        node, depth = stack.pop()
        print("  " * depth + node.name())
        stack += [(n, depth + 1) for n, _ in reversed(node.next_functions) if n is not None]
    c.sum().backward()
    print("dc/da =", a.grad.flatten().tolist(), " dc/db =", b.grad.flatten().tolist())


def explicit() -> None:
    print("\n== 2. the explicit graph (sym.var() in MXNet, ember.fx here) ==")
    graph = fx.Graph()
    tracer = fx.proxy.GraphAppendingTracer(graph)
    a = fx.Proxy(graph.placeholder("a"), tracer)
    b = fx.Proxy(graph.placeholder("b"), tracer)
    c = 2 * a + b  # nothing is computed: two nodes are added to the graph
    graph.output(c.node)
    graph.print_tabular()
    module = fx.GraphModule(ember.nn.Module(), graph)
    print(module.code.strip())
    print("run it: c(a=1, b=1) =", module(ember.ones(2, 1), ember.ones(2, 1)).flatten().tolist())


def compiled() -> None:
    print("\n== 3. compiled: y = 2 * dot(x, x) and its gradient 4x ==")

    def f(x):
        return 2 * ember.dot(x, x)

    fc = ember.compile(f)
    x = ember.arange(4.0, requires_grad=True)
    y = fc(x)
    y.backward()
    print("y =", y, " x.grad =", x.grad)
    print(fc._ember_compiled.code)

    def chain(x):  # 300 tiny ops: where per-op overhead dominates
        for _ in range(100):
            x = (x * 1.001 + 0.01).sin()
        return x.sum()

    chain_c = ember.compile(chain)
    x = ember.rand(3, requires_grad=True)
    chain_c(x).backward()  # the first call captures and checks the generated code
    for name, fn in (("eager", chain), ("compiled", chain_c)):
        start = time.perf_counter()
        for _ in range(20):
            fn(x).backward()
        print(
            f"{name:9s} 300 ops forward+backward: {(time.perf_counter() - start) / 20 * 1e3:.2f} ms"
        )
    print(chain_c.explain())


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    return p.parse_args(argv)


def main(argv=None) -> None:
    parse_args(argv)  # --help, and an error for any other argument
    recorded()
    explicit()
    compiled()


if __name__ == "__main__":
    main()
