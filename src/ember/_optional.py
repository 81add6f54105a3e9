"""Optional packages, imported where a feature first needs them: a missing one raises an
error that names the feature and ember's extra that installs it."""

from __future__ import annotations

import importlib

# The extra of pyproject.toml that brings each optional package.
EXTRAS = {
    "graphviz": "viz",
    "mpi4py": "distributed",
    "onnx": "onnx",
    "onnxruntime": "onnx",
    "tensorboard": "tensorboard",
    "PIL": "tensorboard",
}


def missing_message(package: str, feature: str) -> str:
    """What to tell a user whose ``feature`` needs ``package``, which is not installed.

    Example:
        >>> from ember._optional import missing_message
        >>> print(missing_message("graphviz", "ember.viz.make_dot"))
        ember.viz.make_dot needs the 'graphviz' package, which is not installed:
        install ember's viz extra (pip install -e '.[viz]' in ember's checkout)
    """
    extra = EXTRAS[package]
    return (
        f"{feature} needs the '{package}' package, which is not installed: install ember's "
        f"{extra} extra (pip install -e '.[{extra}]' in ember's checkout)"
    )


def require(package: str, feature: str):
    """``import package`` for ``feature``, or ModuleNotFoundError naming the extra to install.

    Example:
        >>> from ember._optional import require
        >>> require("graphviz", "ember.viz.make_dot").__name__
        'graphviz'
    """
    try:
        return importlib.import_module(package)
    except ModuleNotFoundError as e:
        if not e.name or not (package == e.name or package.startswith(e.name + ".")):
            raise  # the package is there, one of its own imports failed
        message = missing_message(package.split(".")[0], feature)
        raise ModuleNotFoundError(message, name=e.name) from None
