"""Every public name of the reference has a docstring with an example, and the example runs.

The names are the reference's own (``tools/docs_reference.py``: the pages the docs site
builds), so a name added to a public namespace without documentation fails here.
"""

from __future__ import annotations

import doctest
import importlib.util
import inspect
import sys
from pathlib import Path

import pytest

import ember

ROOT = Path(__file__).resolve().parent.parent


def _tool():
    spec = importlib.util.spec_from_file_location(
        "docs_reference", ROOT / "tools" / "docs_reference.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_reference"] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


REFERENCE = _tool()


def _docstring(obj) -> str:
    """The object's own docstring (a class's is not inherited from its base)."""
    doc = obj.__doc__ if isinstance(obj, type) else inspect.getdoc(obj)
    return inspect.cleandoc(doc) if doc else ""


def _restore_imports(modules: dict, finders: list) -> None:
    """Undo an example's ``ember.as_torch()``: ``import torch`` is real torch again for the
    tests after it (the modules it dropped come back, the aliases it made go)."""
    sys.meta_path[:] = finders
    for name in [n for n in sys.modules if n not in modules]:
        if name.split(".")[0] in ("torch", "functorch"):
            del sys.modules[name]
    for name, module in modules.items():
        if sys.modules.get(name) is not module:
            sys.modules[name] = module


def _run_examples(qualname: str, doc: str) -> str | None:
    """None when every example in ``doc`` prints what it shows, else doctest's report."""
    test = doctest.DocTestParser().get_doctest(doc, {}, qualname, qualname, 0)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    dtype, grad = ember.get_default_dtype(), ember.is_grad_enabled()
    modules, finders = dict(sys.modules), list(sys.meta_path)
    try:
        runner.run(test, out=report.append, clear_globs=True)
    finally:
        ember.set_default_dtype(dtype)
        ember.set_grad_enabled(grad)
        _restore_imports(modules, finders)
    return "".join(report) if runner.failures else None


@pytest.mark.parametrize("page", REFERENCE.PAGES, ids=[p.slug for p in REFERENCE.PAGES])
def test_every_public_callable_has_a_running_example(page):
    undocumented, without_example, failing = [], [], []
    seen = set()
    for name in REFERENCE.public_names(page):
        obj = REFERENCE.documented_object(page, name)
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        qualname = f"{page.module}.{name}"
        doc = _docstring(obj)
        if not doc:
            undocumented.append(qualname)
        elif ">>>" not in doc:
            without_example.append(qualname)
        else:
            report = _run_examples(qualname, doc)
            if report:
                failing.append(report)
    assert not undocumented, f"{len(undocumented)} without a docstring: {undocumented}"
    assert not without_example, f"{len(without_example)} without an example: {without_example}"
    assert not failing, f"{len(failing)} examples fail:\n" + "\n".join(failing)


def test_pages_cover_each_public_namespace_once():
    modules = [p.module for p in REFERENCE.PAGES]
    assert len(modules) == len(set(modules))
    assert len({p.slug for p in REFERENCE.PAGES}) == len(REFERENCE.PAGES)


def _hooks():
    spec = importlib.util.spec_from_file_location(
        "mkdocs_hooks", ROOT / "tools" / "mkdocs_hooks.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("page", REFERENCE.PAGES, ids=[p.slug for p in REFERENCE.PAGES])
def test_every_public_name_has_a_reference_entry(page):
    """The page the docs build writes has an anchored entry (or a constants-table row) for
    each public name of its namespace."""
    text = _hooks().reference_page(page)
    prefix = "Tensor" if page.module == "ember.Tensor" else page.module
    missing = [
        name
        for name in REFERENCE.public_names(page)
        if f"{{ #{prefix}.{name} }}" not in text and f'<a id="{prefix}.{name}"></a>' not in text
    ]
    assert not missing, f"no reference entry for {missing}"
