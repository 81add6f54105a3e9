"""The examples in ember.distributions' docstrings run and print what they show."""

import pytest

import ember
import ember.distributions
from doctests import check_examples, package_modules


@pytest.mark.parametrize("name", package_modules(ember.distributions))
def test_docstring_examples(name):
    check_examples(name, extraglobs={"ember": ember})


def test_public_classes_have_examples():
    for name in ember.distributions.__all__:
        obj = getattr(ember.distributions, name)
        if isinstance(obj, type) and not name.endswith("Transform") and name != "ExponentialFamily":
            assert obj.__doc__ and ">>>" in obj.__doc__, name
