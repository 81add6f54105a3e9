"""The examples in ember.fx's docstrings run and print what they show."""

import doctest
import importlib
import pkgutil

import pytest

import ember.fx

MODULES = ["ember.fx"] + sorted(
    name for _, name, _ in pkgutil.walk_packages(ember.fx.__path__, prefix="ember.fx.")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest failure(s) in {name}"
