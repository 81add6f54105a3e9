"""The examples in ember._aten's docstrings (every op family, nn.functional's ops among them)
run and print what they show."""

import pytest

import ember._aten
from doctests import check_examples, package_modules


@pytest.mark.parametrize("name", package_modules(ember._aten))
def test_docstring_examples(name):
    check_examples(name)
