"""A guided tour of autograd, told with ember: ``python -m ember.tour``.

It replays the story of PyTorch's autograd tutorials step by step, printing each step's
code (as an interactive session would, ``>>>``) and what it shows: leaf tensors, grad_fn
and next_functions, ``out.backward()`` giving the 4.5 gradients, the vector-Jacobian
product, the error for non-scalar outputs, retain_graph and gradient accumulation, indexed
assignment (CopySlices), no_grad, detach and ``.data``, hooks and ``autograd.grad``,
Python control flow, and looking inside: ``autograd.explain``, anomaly detection and the
profiler. ``import ember as torch`` is all the code needs to run; it prints what
PyTorch prints. The output is deterministic: the random tensors come after
``torch.manual_seed(0)``, and object addresses are shown as ``0x...``.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import textwrap

# The public namespace, as the tutorial's reader imports it: the steps run against what a
# user's session sees (tests/test_structure.py allows this import of the package root).
import ember as torch

WIDTH = 100

# (title, what the section shows, the steps: code run in one shared namespace)
SECTIONS: list[tuple[str, str, list[str]]] = [
    (
        "Leaf tensors",
        "A tensor you create is a leaf; requires_grad=True makes autograd "
        "record the operations on it.",
        [
            "x = torch.ones(2, 2, requires_grad=True)",
            "x",
            "x.is_leaf, x.grad_fn, x.grad",
        ],
    ),
    (
        "Operations build the graph",
        "A result keeps the backward node that made it (grad_fn); "
        "next_functions link to its inputs.",
        [
            "y = x + 2",
            "y",
            "y.grad_fn",
            "y.grad_fn.next_functions",
            "z = y * y * 3\nout = z.mean()",
            "print(z, out)",
        ],
    ),
    (
        "Backpropagation",
        "out = 1/4 sum 3 (x_i + 2)^2, so d(out)/dx_i = 3/2 (x_i + 2) = 4.5 at x_i = 1.",
        [
            "out.backward()",
            "x.grad",
        ],
    ),
    (
        "Vector-Jacobian product",
        "For a non-scalar y, backward(v) gives v^T J; here y = x * 2**k, so x.grad = 2**k * v.",
        [
            "torch.manual_seed(0)\nx = torch.randn(3, requires_grad=True)",
            "y = x * 2\nwhile y.data.norm() < 1000:\n    y = y * 2",
            "y",
            "v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)\ny.backward(v)",
            "x.grad",
            "x.grad / v",
        ],
    ),
    (
        "Only scalars get an implicit gradient",
        "Without v, backward() needs a single-element output.",
        [
            "y.backward()",
        ],
    ),
    (
        "retain_graph and accumulation",
        "Gradients add up in .grad; backward() frees what the graph saved "
        "unless retain_graph=True.",
        [
            "w = torch.tensor([2.0], requires_grad=True)\nz = w * w",
            "z.backward(retain_graph=True)\nw.grad",
            "z.backward()\nw.grad",
            "z.backward()",
        ],
    ),
    (
        "Indexed assignment (CopySlices)",
        "Writing tracked values into a tensor records CopySlices; n = [m0^2, "
        "m1^3]: v^T J = v*[2m0, 3m1^2].",
        [
            "m = torch.tensor([[2., 3.]], requires_grad=True)\nn = torch.zeros((1, 2))",
            "n[0, 0] = m[0, 0] ** 2\nn[0, 1] = m[0, 1] ** 3",
            "n",
            "n.backward(m.data, retain_graph=True)\nm.grad",
            "n.backward(torch.tensor([[1., 1.]]))\nm.grad",
        ],
    ),
    (
        "Turning recording off: no_grad",
        "Inside torch.no_grad() nothing is recorded, so y2 contributes no gradient to y3.",
        [
            "x = torch.tensor(1.0, requires_grad=True)\ny1 = x ** 2",
            "with torch.no_grad():\n    y2 = x ** 3",
            "y3 = y1 + y2\ny1.requires_grad, y2.requires_grad, y3.requires_grad",
            "y3.backward()\nx.grad",
        ],
    ),
    (
        "detach and .data",
        "detach() steps out of the graph; editing .data goes unseen: y = x * x "
        "backpropagates with x = 100.",
        [
            "x = torch.arange(4.0, requires_grad=True)\nu = (x * x).detach()\n"
            "u.requires_grad, (u * x).sum().requires_grad",
            "x = torch.ones(1, requires_grad=True)\ny = x * x\nx.data *= 100",
            "y.backward()\nx, x.grad",
        ],
    ),
    (
        "Gradients of intermediate results: autograd.grad and hooks",
        "Only leaves keep .grad; autograd.grad returns any gradient, and a hook sees it flow past.",
        [
            "x = torch.ones(3, requires_grad=True)\nw = torch.ones(3, requires_grad=True)\n"
            "y = x * w\nz = y.sum()",
            "torch.autograd.grad(z, y)",
            'def hook(grad):\n    print("y\'s grad:\\n", grad)',
            "y = x * w\nhandle = y.register_hook(hook)\ny.sum().backward()\nhandle.remove()",
        ],
    ),
    (
        "Python control flow",
        "The graph is recorded as the code runs, loops and branches too: d = a "
        "* 2**k, so a.grad == d / a.",
        [
            "def f(a):\n    b = a * 2\n    while b.norm() < 1000:\n        b = b * 2\n"
            "    if b.sum() > 0:\n        c = b\n    else:\n        c = b * 100\n    return c",
            "a = torch.randn(size=(), requires_grad=True)\nd = f(a)\nd.backward()",
            "a, a.grad, a.grad == d / a",
        ],
    ),
]

# ember's own tools on the same example: torch has no explain, so these steps are not
# compared with torch (the sections above are).
EMBER_SECTIONS: list[tuple[str, str, list[str]]] = [
    (
        "Looking inside: explain, anomaly detection, the profiler",
        "autograd.explain walks the backward pass node by node with each op's rule; "
        "detect_anomaly names the forward line behind a NaN; the profiler times every op.",
        [
            "x = torch.ones(2, 2, requires_grad=True)\ny = x + 2\nz = y * y * 3\nout = z.mean()",
            "torch.autograd.explain(out)",
            "import warnings\nv = torch.tensor([0.0, 1.0], requires_grad=True)\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    with torch.autograd.detect_anomaly():\n"
            "        w = torch.sqrt(v)\n"
            "        try:\n"
            "            (w * 0).sum().backward()\n"
            "        except RuntimeError as error:\n"
            "            print(error)",
            "with torch.profiler.profile() as prof:\n"
            "    (torch.ones(64, 64, requires_grad=True) @ torch.ones(64, 64)).sum().backward()\n"
            "for key in sorted({e.key for e in prof.key_averages()}):\n    print(key)",
        ],
    ),
]

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def _echo(code: str) -> str:
    """The code as typed at an interactive prompt."""
    first, *rest = code.split("\n")
    return "\n".join([">>> " + first] + ["... " + line for line in rest])


def run_step(code: str, namespace: dict) -> str:
    """Run one step as an interactive session would and return what it shows: what it
    prints, then the repr of a final expression (unless None), or the error's last line."""
    tree = ast.parse(code)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            exec(compile(tree, "<tour>", "exec"), namespace)
            if last is not None:
                value = eval(compile(last, "<tour>", "eval"), namespace)
                if value is not None:
                    print(repr(value))
        except Exception as e:  # noqa: BLE001 - the tour shows errors, as a session does
            message = textwrap.fill(f"{type(e).__name__}: {e}", WIDTH, subsequent_indent="    ")
            print(message)
    return _ADDRESS.sub("0x...", buf.getvalue())


def main() -> None:
    """Print the tour: each section's explanation, then each step's code and result."""
    torch.manual_seed(0)
    namespace: dict = {"torch": torch, "__name__": "__tour__"}
    print("Autograd with ember, a guided tour (import ember as torch; addresses shown as 0x...)")
    for number, (title, text, steps) in enumerate(SECTIONS + EMBER_SECTIONS, 1):
        heading = f"== {number}. {title} "
        print()
        print(heading + "=" * max(0, WIDTH - len(heading)))
        print(textwrap.fill(text, WIDTH))
        for code in steps:
            print(_echo(code))
            print(run_step(code, namespace), end="")


if __name__ == "__main__":
    main()
