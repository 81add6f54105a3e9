"""The examples in ember.fx's docstrings run and print what they show."""

import pytest

import ember.fx
from doctests import check_examples, package_modules


@pytest.mark.parametrize("name", package_modules(ember.fx))
def test_docstring_examples(name):
    check_examples(name)
