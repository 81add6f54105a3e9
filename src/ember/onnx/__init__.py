"""``torch.onnx``: export an ember model to an ONNX file.

``export`` traces the model with ``ember.fx`` (an ``ember.fx.Tracer`` subclass), runs the
graph once on the example inputs while translating every node to ONNX operators
(parameters and buffers become initializers named like ``fc1.weight``), writes the file with
the ``onnx`` package and checks it with ``onnx.checker.check_model``. ``onnx`` is imported
only when exporting (install the ``onnx`` extra: ``pip install ember[onnx]``).

Example:
    >>> import ember
    >>> ember.onnx.is_in_onnx_export()
    False
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from .._optional import require
from .._overrides import warn as _warn
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import errors
from .errors import OnnxExporterError, UnsupportedOperatorError

__all__ = [
    "OnnxExporterError",
    "TrainingMode",
    "UnsupportedOperatorError",
    "errors",
    "export",
    "is_in_onnx_export",
    "register_custom_op_symbolic",
    "unregister_custom_op_symbolic",
]

_IN_EXPORT = False
_DEFAULT_OPSET = 20  # torch 2.13's ONNX_DEFAULT_OPSET
_MIN_OPSET, _MAX_OPSET = 13, 20


class TrainingMode:
    """``torch.onnx.TrainingMode``: EVAL (the default), PRESERVE or TRAINING. ember always
    exports the eval-mode graph (dropout is the identity, batch norm uses running stats).

    Example:
        >>> import inspect, ember
        >>> from ember.onnx import TrainingMode
        >>> inspect.signature(ember.onnx.export).parameters["training"].default == TrainingMode.EVAL
        True
    """

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def is_in_onnx_export() -> bool:
    """True while ``ember.onnx.export`` is running (e.g. inside the model's ``forward``).

    Example:
        >>> import ember
        >>> ember.onnx.is_in_onnx_export()
        False
    """
    return _IN_EXPORT


def export(
    model: Any,
    args: tuple[Any, ...] | Any = (),
    f: str | os.PathLike | io.IOBase | None = None,
    *,
    kwargs: dict[str, Any] | None = None,
    verbose: bool | None = None,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset_version: int | None = None,
    dynamo: bool = True,
    external_data: bool = True,
    dynamic_shapes: dict[str, Any] | tuple[Any, ...] | list[Any] | None = None,
    custom_translation_table: dict[Callable, Callable] | None = None,
    report: bool = False,
    optimize: bool = True,
    verify: bool = False,
    profile: bool = False,
    dump_exported_program: bool = False,
    artifacts_dir: str | os.PathLike = ".",
    export_params: bool = True,
    keep_initializers_as_inputs: bool = False,
    dynamic_axes: Mapping[str, Mapping[int, str]] | Mapping[str, Sequence[int]] | None = None,
    training: int = TrainingMode.EVAL,
    operator_export_type: Any = None,
    do_constant_folding: bool = True,
    custom_opsets: Mapping[str, int] | None = None,
    export_modules_as_functions: bool | Collection[type] = False,
    autograd_inlining: bool = True,
) -> Any:
    """Export ``model`` (an ``nn.Module``) run on ``args`` to the ONNX file ``f``.

    ``args`` is a tuple of example inputs (a single tensor is accepted); ``kwargs`` holds
    more keyword inputs. Tensors (and tuples of tensors, such as an LSTM state, one input
    per tensor) become graph inputs; other values and unspecified arguments with defaults
    are fixed at their values. Inputs are named by ``input_names`` (default: ``forward``'s
    parameter names, ``state_0``/``state_1`` inside tuples) and outputs by ``output_names``
    (default ``output`` or ``output_<i>``). ``dynamic_axes`` marks axes as symbolic
    (``{"x": {0: "batch"}}``, or ``{"x": [0]}`` which names it ``x_dynamic_axes_1`` like
    torch); sizes read in ``forward`` (``x.size(0)``, ``x.shape[1]``) stay ``Shape``/
    ``Gather`` computations for dynamic axes, and ``do_constant_folding`` folds the static
    ones to constants. ``opset_version`` is 13 to 20 (default 20, torch's). The model is
    exported in eval mode (dropout is the identity, batch norm uses its running statistics)
    and its training flags are restored. ``export_params=False`` leaves the parameters out
    (they become inputs); ``keep_initializers_as_inputs`` lists them as inputs too. ``f``
    is a path or a writable binary file; if it is None the ``onnx.ModelProto`` is returned.
    The file is checked with ``onnx.checker.check_model``. The other arguments of
    ``torch.onnx.export`` are accepted and ignored (``dynamic_shapes`` given as
    ``{"x": {0: "batch"}}`` is read as ``dynamic_axes``).

    Raises ``ember.onnx.errors.UnsupportedOperatorError`` naming an operation with no ONNX
    translation.

    Example:
        >>> import ember, ember.nn as nn
        >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        >>> ember.onnx.export(model, (ember.randn(1, 4),), "mlp.onnx",
        ...                   input_names=["x"], dynamic_axes={"x": {0: "batch"}})  # doctest: +SKIP
    """
    global _IN_EXPORT
    onnx = require("onnx", "ember.onnx.export")  # deferred: an optional extra, slow to import
    from ._exporter import build_model  # deferred: it imports onnx

    opset = _DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not _MIN_OPSET <= opset <= _MAX_OPSET:
        raise ValueError(
            f"Unsupported ONNX opset version: {opset}; ember exports opsets "
            f"{_MIN_OPSET} to {_MAX_OPSET}"
        )
    if isinstance(args, Tensor):
        args = (args,)
    elif not isinstance(args, tuple):
        args = tuple(args) if isinstance(args, list) else (args,)
    if args and isinstance(args[-1], dict) and kwargs is None:
        args, kwargs = args[:-1], args[-1]  # torch's legacy "(x, {'kw': v})" form
    if dynamic_axes is None and isinstance(dynamic_shapes, dict):
        dynamic_axes = {
            k: {int(a): getattr(n, "__name__", str(n)) for a, n in v.items()}
            for k, v in dynamic_shapes.items()
            if isinstance(v, dict)
        }

    if training not in (TrainingMode.EVAL, TrainingMode.PRESERVE) and training is not None:
        _warn(
            "ember.onnx.export exports the eval-mode graph; training=TRAINING is ignored",
            errors.OnnxExporterWarning,
            stacklevel=2,
        )
    modes = [(m, m.training) for m in model.modules()] if hasattr(model, "modules") else []
    prev = _IN_EXPORT
    _IN_EXPORT = True
    try:
        if hasattr(model, "eval"):
            model.eval()
        with no_grad():
            proto = build_model(
                model,
                args,
                kwargs or {},
                opset,
                input_names,
                output_names,
                dynamic_axes,
                export_params,
                keep_initializers_as_inputs,
                do_constant_folding,
            )
    finally:
        _IN_EXPORT = prev
        for m, t in modes:
            m.training = t
    onnx.checker.check_model(proto)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    if f is None:
        return proto
    if isinstance(f, (str, os.PathLike)):
        onnx.save(proto, os.fspath(f))
    else:
        f.write(proto.SerializeToString())
    return None


# -- TorchScript-exporter symbolics ------------------------------------------------------------
# torch's TorchScript-based exporter translates a custom op with the symbolic function
# registered for it. ember exports from its own graphs (each node by its own translation,
# an op without one raising UnsupportedOperatorError) and never runs these functions: a
# registration is kept (libraries such as torchvision register theirs at import) and can be
# undone, with torch's checks of the name.
_CUSTOM_SYMBOLICS: dict[tuple[str, int], Callable] = {}
_SYMBOLIC_NAME = re.compile(r"^[a-zA-Z0-9-_]+::[a-zA-Z-_]+[a-zA-Z0-9-_]*$")


def _symbolic_name(symbolic_name: str) -> str:
    if symbolic_name.startswith("::"):
        symbolic_name = f"aten{symbolic_name}"
    if not _SYMBOLIC_NAME.match(symbolic_name):
        raise OnnxExporterError(
            f"Failed to register operator {symbolic_name}. The symbolic name must match the "
            "format domain::name, and should start with a letter and contain only "
            "alphanumeric characters"
        )
    return symbolic_name


def register_custom_op_symbolic(
    symbolic_name: str, symbolic_fn: Callable, opset_version: int
) -> None:
    """Register ``symbolic_fn`` as the TorchScript exporter's translation of the custom op
    ``symbolic_name`` (``"domain::name"``) at ``opset_version``. ember's exporter does not run
    such functions (see the module); the registration is kept and checked as torch's.

    Example:
        >>> import ember
        >>> ember.onnx.register_custom_op_symbolic("mylib::op", lambda g, x: x, 17)
        >>> ember.onnx.unregister_custom_op_symbolic("mylib::op", 17)
    """
    _CUSTOM_SYMBOLICS[(_symbolic_name(symbolic_name), int(opset_version))] = symbolic_fn


def unregister_custom_op_symbolic(symbolic_name: str, opset_version: int) -> None:
    """Remove the registration of :func:`register_custom_op_symbolic`.

    Example:
        >>> import ember
        >>> ember.onnx.register_custom_op_symbolic("::relu", lambda g, x: x, 17)
        >>> ember.onnx.unregister_custom_op_symbolic("aten::relu", 17)
    """
    _CUSTOM_SYMBOLICS.pop((_symbolic_name(symbolic_name), int(opset_version)), None)
