"""The examples in ember.nn's docstrings run and print what they show."""

import pytest

import ember.nn
from doctests import check_examples, package_modules


@pytest.mark.parametrize("name", package_modules(ember.nn, include_package=False))
def test_docstring_examples(name):
    check_examples(name)
