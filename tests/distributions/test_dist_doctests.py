"""The examples in ember.distributions' docstrings run and print what they show."""

import doctest
import importlib
import pkgutil

import pytest

import ember
import ember.distributions

MODULES = ["ember.distributions"] + sorted(
    name
    for _, name, _ in pkgutil.walk_packages(
        ember.distributions.__path__, prefix="ember.distributions."
    )
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(
        module,
        extraglobs={"ember": ember},
        optionflags=doctest.NORMALIZE_WHITESPACE,
        verbose=False,
    )
    assert result.failed == 0, f"{result.failed} doctest failure(s) in {name}"


def test_public_classes_have_examples():
    for name in ember.distributions.__all__:
        obj = getattr(ember.distributions, name)
        if isinstance(obj, type) and not name.endswith("Transform") and name != "ExponentialFamily":
            assert obj.__doc__ and ">>>" in obj.__doc__, name
