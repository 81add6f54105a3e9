"""A feature whose optional package is missing says which of ember's extras installs it."""

from __future__ import annotations

import importlib
import sys

import pytest

import ember
from ember._optional import EXTRAS


def _hide(monkeypatch, *names):
    """Make ``import name`` fail as it does when the package is not installed."""
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def _names_extra(message: str, extra: str) -> bool:
    return f"{extra} extra" in message and f"pip install -e '.[{extra}]'" in message


def test_make_dot_without_graphviz_names_viz(monkeypatch):
    from ember.viz import make_dot

    _hide(monkeypatch, "graphviz")
    with pytest.raises(ModuleNotFoundError) as info:
        make_dot(ember.ones(2, requires_grad=True).sum())
    assert "ember.viz.make_dot needs the 'graphviz' package" in str(info.value)
    assert _names_extra(str(info.value), "viz")


def test_distributed_without_mpi4py_names_distributed(monkeypatch):
    from ember.distributed import distributed_c10d

    _hide(monkeypatch, "mpi4py", "mpi4py.MPI")
    with pytest.raises(ModuleNotFoundError) as info:
        distributed_c10d._mpi()
    assert _names_extra(str(info.value), "distributed")


def test_onnx_export_without_onnx_names_onnx(monkeypatch, tmp_path):
    _hide(monkeypatch, "onnx")
    with pytest.raises(ModuleNotFoundError) as info:
        ember.onnx.export(ember.nn.Linear(2, 1), (ember.ones(1, 2),), str(tmp_path / "m.onnx"))
    assert _names_extra(str(info.value), "onnx")


def test_tensorboard_without_tensorboard_names_the_extra(monkeypatch):
    _hide(monkeypatch, "tensorboard")
    for name in [m for m in sys.modules if m.startswith("ember.utils.tensorboard")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ImportError) as info:
        importlib.import_module("ember.utils.tensorboard")
    # torch's message, then where to get it
    assert "TensorBoard logging requires TensorBoard version 1.15 or above" in str(info.value)
    assert _names_extra(str(info.value), "tensorboard")


def test_an_import_failing_inside_the_package_is_not_blamed_on_the_extra(monkeypatch):
    from ember._optional import require

    _hide(monkeypatch, "graphviz.backend")  # graphviz is there; one of its modules fails
    monkeypatch.delitem(sys.modules, "graphviz", raising=False)
    with pytest.raises(ModuleNotFoundError) as info:
        require("graphviz", "ember.viz.make_dot")
    assert "extra" not in str(info.value)


def test_every_optional_package_maps_to_a_declared_extra():
    from pathlib import Path

    import tomllib

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    assert set(EXTRAS.values()) <= set(extras)
