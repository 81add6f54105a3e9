"""The README's Python examples run as written."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the training example writes a checkpoint
    exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})


def test_readme_names_the_two_commands():
    text = README.read_text()
    assert "make demo" in text and "make test" in text
