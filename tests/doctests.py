"""Shared by the docstring-example tests: a package's modules, and running one's examples."""

from __future__ import annotations

import doctest
import importlib
import pkgutil


def package_modules(package, include_package: bool = True) -> list:
    """The package's module names (itself first, unless ``include_package`` is False)."""
    prefix = package.__name__ + "."
    inner = sorted(name for _, name, _ in pkgutil.walk_packages(package.__path__, prefix=prefix))
    return ([package.__name__] if include_package else []) + inner


def check_examples(name: str, extraglobs: dict | None = None) -> None:
    """Run the examples in module ``name``'s docstrings; fail with the count of failures."""
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, extraglobs=extraglobs, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0, f"{result.failed} doctest failure(s) in {name}"
