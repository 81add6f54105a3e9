"""ember.autograd: reverse-mode automatic differentiation with torch.autograd's API."""

from __future__ import annotations

from . import grad_mode, graph
from . import _tensor_methods  # noqa: F401  (attaches backward, register_hook, ...)
from .api import Variable, backward, grad
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from . import forward_ad, functional, opdef
from .anomaly_mode import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from .function import Function, FunctionCtx, InplaceFunction, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .graph import Node
from . import profiler  # noqa: E402  (torch.autograd.profiler)
from .explain import explain

__all__ = [
    "explain",
    "backward",
    "grad",
    "Variable",
    "Node",
    "gradcheck",
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "gradgradcheck",
    "Function",
    "FunctionCtx",
    "InplaceFunction",
    "once_differentiable",
    "functional",
    "GradcheckError",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "graph",
    "grad_mode",
]
