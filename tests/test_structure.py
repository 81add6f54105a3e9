"""The shape of the package: layers with arrows one way, no import cycles, deferred imports
only with a reason, and ``dir(ember)`` holding torch's namespace.

Layers, bottom up: the tensor core (``_tensor``, ``_dtype``, ``_mode``, ``_hooks``,
``_tensor_str``) -> ``autograd`` -> ``_aten`` (the ops) -> everything else (``nn``, ``optim``,
``utils``, ...). A module may import only from its own layer or those below it. Checked from
the source (the import statements), so a cycle hidden by the package's import order still
fails. Every op is declared in ``_aten``, one module per family.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import ember

SRC = Path(ember.__file__).parent


def _layers_tool():
    """tools/layers_graph.py, which draws these layers: its ``CORE`` is the one list."""
    spec = importlib.util.spec_from_file_location(
        "layers_graph", SRC.parent.parent / "tools" / "layers_graph.py"
    )
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


CORE = _layers_tool().CORE


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in SRC.rglob("*.py")}


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level:
        base = base[: len(base) - (level - 1)] if level > 1 else base
        return ".".join(base + ([target] if target else []))
    return target or ""


def _imports(module: str, path: Path):
    """(imported ember module, line, deferred?) for every import statement of ``module``."""
    tree = ast.parse(path.read_text())
    is_package = path.name == "__init__.py"
    top_level = {id(n) for n in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.split(".")[0] == "ember"]
            targets = names
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node.level, node.module)
            if base.split(".")[0] != "ember":
                continue
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        else:
            continue
        deferred = id(node) not in top_level and not _in_type_checking(tree, node)
        for t in dict.fromkeys(targets):
            found.append((t, node.lineno, deferred))
    return found


def _in_type_checking(tree, target) -> bool:
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            if any(n is target for n in ast.walk(node)):
                return True
    return False


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return 3  # the package root re-exports everything
    head = parts[1]
    if head in CORE:
        return 0
    if head == "autograd":
        return 1
    if head == "_aten":
        return 2
    return 3


IMPORTS = {m: _imports(m, p) for m, p in MODULES.items()}


def test_layers_import_downwards_only():
    wrong = []
    for module, imports in IMPORTS.items():
        for target, line, _ in imports:
            if target in MODULES and _layer(target) > _layer(module):
                wrong.append(f"{module}:{line} imports {target}")
    assert wrong == []


def test_autograd_imports_nothing_from_ops():
    wrong = [
        f"{m}:{line} imports {t}"
        for m, imports in IMPORTS.items()
        if m.startswith("ember.autograd")
        for t, line, _ in imports
        if t.startswith(("ember._aten", "ember.nn", "ember.linalg"))
    ]
    assert wrong == []


def test_top_level_imports_form_no_cycle():
    graph = {
        m: {t for t, _, deferred in imports if not deferred and t in MODULES and t != m}
        for m, imports in IMPORTS.items()
    }
    # A submodule importing its own package's __init__ is Python's normal loading order.
    for m in graph:
        graph[m] = {t for t in graph[m] if not m.startswith(t + ".")}
    cycle = _find_cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


def _find_cycle(graph: dict):
    state: dict = {}
    for start in graph:
        if state.get(start):
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                path.pop()
                state[node] = 2
                continue
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(sorted(graph.get(nxt, ())))))
                path.append(nxt)
    return None


def test_deferred_imports_say_why():
    """An import inside a function is allowed only with a comment giving the reason."""
    silent = []
    for module, imports in IMPORTS.items():
        lines = MODULES[module].read_text().splitlines()
        for _target, line, deferred in imports:
            if not deferred:
                continue
            here = lines[line - 1]
            above = lines[line - 2].strip() if line > 1 else ""
            if "#" not in here and not above.startswith("#"):
                silent.append(f"{module}:{line}: {here.strip()}")
    assert silent == []


# Where a deferred import may not close a cycle: the layers below ``nn``, ``nn`` itself and
# the namespaces over ``_aten``.
_ACYCLIC = ("ember._aten", "ember.nn", "ember.linalg", "ember.fft", "ember.special")


def _reaches(graph: dict, start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        if m == goal:
            return True
        if m not in seen:
            seen.add(m)
            todo.extend(graph.get(m, ()))
    return False


def test_deferred_imports_close_no_cycle():
    """A deferred import in ``_aten`` or ``nn`` is for cost (SciPy on first use), never to
    get around a cycle: its target does not import the importing module back, even
    through other deferred imports."""
    graph = {
        m: {t for t, _, _ in imports if t in MODULES and t != m and not m.startswith(t + ".")}
        for m, imports in IMPORTS.items()
    }
    cycles = [
        f"{m}:{line} imports {t}, which imports {m} back"
        for m, imports in IMPORTS.items()
        if m.startswith(_ACYCLIC) or _layer(m) <= 1
        for t, line, deferred in imports
        if deferred and t in graph.get(m, ()) and _reaches(graph, t, m)
    ]
    assert cycles == []


# The modules that import the package root, each with the reason; every other module
# imports what it uses from the module that defines it.
_ROOT_IMPORTERS = {
    "ember.tour": "the tutorial's steps run against the public namespace, imported as a "
    "user's session imports it (import ember as torch)",
}


def _absolute_imports(path: Path) -> list:
    """The lines where ``path`` imports the package by its absolute name (``import ember``,
    ``import ember.nn as nn``, ``from ember.nn import functional``)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            absolute = any(a.name.split(".")[0] == "ember" for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            absolute = node.level == 0 and (node.module or "").split(".")[0] == "ember"
        else:
            continue
        if absolute:
            lines.append(node.lineno)
    return lines


def test_no_import_of_the_package_root():
    """No module imports the package root, which imports everything: neither ``import
    ember`` nor ``from .. import tensor`` (a name the root binds), deferred or not, nor the
    package by its absolute name (``import ember.nn as nn``): a relative import names the
    module used (``from ..nn import functional as F``). The exceptions are listed with their
    reasons, and each must still be one."""
    wrong, excepted = [], set()
    for m, imports in IMPORTS.items():
        if m == "ember":
            continue
        lines = {line for t, line, _ in imports if t == "ember"}
        lines.update(_absolute_imports(MODULES[m]))
        if lines and m in _ROOT_IMPORTERS:
            excepted.add(m)
        else:
            wrong += [f"{m}:{line}" for line in sorted(lines)]
    assert wrong == []
    assert excepted == set(_ROOT_IMPORTERS)


def test_every_op_is_declared_in_aten():
    """One registry: every ``defop`` declaration is in a family module of ``ember._aten``
    (the autograd machinery's own nodes, which ``_aten`` builds on, excepted)."""
    from ember.autograd.opdef import DECLARED

    machinery = ("ember.autograd.views", "ember.autograd.forward_ad")
    elsewhere = sorted(
        f"{cls.__module__}.{cls.__name__}"
        for cls in DECLARED
        if not cls.__module__.startswith("ember._aten.") and cls.__module__ not in machinery
    )
    assert elsewhere == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) <= 2))
def test_each_lower_module_imports_alone(module):
    """Each module of the core, autograd and ops layers imports in a fresh interpreter."""
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True, timeout=60)


# -- the public namespace ------------------------------------------------------------------------

# Names in dir(ember) that are not ops registered by a family, each a torch name.
_EXTRAS = {
    # submodules and packages torch has
    "autograd",
    "nn",
    "optim",
    "utils",
    "linalg",
    "ops",
    "testing",
    "fft",
    "special",
    # ember's own, asked for by its users: pictures of the graph (torch needs torchviz)
    "viz",
    # types, dtypes and modes
    "Tensor",
    "Size",
    "device",
    "dtype",
    "Generator",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
}


def test_no_internals_in_the_namespace():
    leaked = {"np", "math", "record", "Node", "register_methods", "sum_to_shape", "defop"}
    assert leaked & set(dir(ember)) == set()


def test_import_ember_stays_light():
    """``import ember`` loads NumPy only: SciPy (special functions), mpi4py (distributed),
    graphviz (viz), ml_dtypes (bfloat16) and torch are imported when first used, never at
    import."""
    code = (
        "import sys, ember\n"
        "heavy = ('scipy', 'mpi4py', 'graphviz', 'torch', 'ml_dtypes')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == ""


def test_import_is_light_and_the_rest_loads_on_first_use():
    """``import ember`` loads the core, autograd and the ops; the compiler, nn, onnx, fx,
    distributions, the profiler, distributed and testing load when first used."""
    code = (
        "import sys, ember\n"
        "mods = [m for m in sys.modules if m == 'ember' or m.startswith('ember.')]\n"
        "print(len(mods))\n"
        "lazy = ['ember.nn', 'ember.optim', 'ember._compile', 'ember.onnx', 'ember.fx',\n"
        "        'ember.distributions', 'ember.profiler', 'ember.distributed', 'ember.testing']\n"
        "print(sorted(m for m in lazy if m in sys.modules))\n"
        "print('scipy' in sys.modules, 'ml_dtypes' in sys.modules)\n"
        "print(ember.nn.Linear.__module__, callable(ember.compile), ember.save.__module__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout.splitlines()
    assert int(out[0]) <= 80
    assert out[1] == "[]"
    assert out[2] == "False False"
    assert out[3] == "ember.nn.modules.linear True ember.serialization"


def test_the_layer_picture_is_up_to_date():
    """docs/developers/layers.dot (design.md's picture) is what tools/layers_graph.py draws."""
    tool = SRC.parent.parent / "tools" / "layers_graph.py"
    done = subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
