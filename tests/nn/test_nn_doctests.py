"""The examples in ember.nn's docstrings run and print what they show."""

import doctest
import importlib
import pkgutil

import pytest

import ember.nn

MODULES = sorted(
    name for _, name, _ in pkgutil.walk_packages(ember.nn.__path__, prefix="ember.nn.")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest failure(s) in {name}"
