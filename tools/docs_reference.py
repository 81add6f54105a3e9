"""What the API reference documents: its pages, and every public name on each.

One list (``PAGES``) says which namespaces are public and how the reference is organised
(torch's reference order). The docs build (``docs/hooks.py``) writes one page per entry
from it, and ``tests/test_docs_reference.py`` checks from the same list that every public
callable has a docstring with an example that runs.
"""

from __future__ import annotations

import importlib
import inspect
import types
from dataclasses import dataclass


@dataclass(frozen=True)
class Page:
    """One reference page: the module it documents and where it sits in the site."""

    slug: str  # the page's file name under docs/reference/
    module: str  # the namespace documented ("ember.Tensor" for the Tensor class)
    summary: str  # one line under the title


PAGES = (
    Page("torch", "ember", "Tensors, creation, math, random sampling, modes and utilities."),
    Page("tensor", "ember.Tensor", "The Tensor class: attributes and methods."),
    Page("nn", "ember.nn", "Layers (Modules), containers and parameters."),
    Page("nn.functional", "ember.nn.functional", "The layers as functions."),
    Page("nn.init", "ember.nn.init", "Initialising parameters in place."),
    Page("nn.utils", "ember.nn.utils", "Gradient clipping, weight norm, parameters as vectors."),
    Page("nn.utils.rnn", "ember.nn.utils.rnn", "Packed and padded sequences for RNNs."),
    Page("nn.utils.parametrize", "ember.nn.utils.parametrize", "Parametrizations of tensors."),
    Page(
        "nn.attention.flex_attention",
        "ember.nn.attention.flex_attention",
        "FlexAttention: attention with score and mask functions (computed in full).",
    ),
    Page("optim", "ember.optim", "Optimizers."),
    Page("optim.lr_scheduler", "ember.optim.lr_scheduler", "Learning-rate schedules."),
    Page("autograd", "ember.autograd", "Reverse-mode differentiation and custom Functions."),
    Page("autograd.functional", "ember.autograd.functional", "Jacobians, Hessians, VJPs."),
    Page("autograd.forward_ad", "ember.autograd.forward_ad", "Forward-mode (dual numbers)."),
    Page("autograd.graph", "ember.autograd.graph", "The recorded graph's nodes and hooks."),
    Page("library", "ember.library", "Custom ops: torch.library.custom_op and its autograd."),
    Page("func", "ember.func", "Function transforms: grad, vmap, jacrev, jacfwd."),
    Page("linalg", "ember.linalg", "Linear algebra."),
    Page("fft", "ember.fft", "Discrete Fourier transforms."),
    Page("special", "ember.special", "Special functions."),
    Page("sparse", "ember.sparse", "Sparse COO and CSR tensors."),
    Page("distributions", "ember.distributions", "Probability distributions."),
    Page("utils.data", "ember.utils.data", "Datasets, samplers and the DataLoader."),
    Page("utils.checkpoint", "ember.utils.checkpoint", "Activation checkpointing."),
    Page("amp", "ember.amp", "Automatic mixed precision (bfloat16 / float16 on CPU)."),
    Page("distributed", "ember.distributed", "Data-parallel training over MPI."),
    Page(
        "distributed.device_mesh",
        "ember.distributed.device_mesh",
        "Device meshes: process groups arranged in named dimensions.",
    ),
    Page(
        "distributed.optim",
        "ember.distributed.optim",
        "ZeroRedundancyOptimizer: optimizer state sharded across ranks.",
    ),
    Page(
        "distributed.tensor",
        "ember.distributed.tensor",
        "DTensor's module surface: placements, and torch's errors without a device mesh.",
    ),
    Page("storage", "ember.storage", "Untyped and typed storages: the bytes under tensors."),
    Page("profiler", "ember.profiler", "Timing ops and modules."),
    Page("fx", "ember.fx", "Explicit graphs: symbolic tracing and graph modules."),
    Page("onnx", "ember.onnx", "Exporting to ONNX."),
    Page("viz", "ember.viz", "Pictures of the autograd graph (ember only)."),
    Page("testing", "ember.testing", "Comparing tensors in tests."),
)


def _module(name: str):
    if name == "ember.Tensor":
        import ember

        return ember.Tensor
    return importlib.import_module(name)


def _is_submodule(obj) -> bool:
    return isinstance(obj, types.ModuleType)


def public_names(page: Page) -> list[str]:
    """The page's public names, sorted: ``__all__`` when the module declares one, else its
    attributes without a leading underscore; submodules are pages of their own."""
    owner = _module(page.module)
    if page.module == "ember.Tensor":
        return sorted(n for n in dir(owner) if not n.startswith("_"))
    names = getattr(owner, "__all__", None)
    if names is None:
        names = [n for n in dir(owner) if not n.startswith("_")]
    return sorted(n for n in set(names) if not _is_submodule(getattr(owner, n, None)))


def documented_object(page: Page, name: str):
    """What documents ``page``'s ``name``: the function or class, a property's getter, a
    method's function; None for data (dtypes, constants), which the page describes."""
    owner = _module(page.module)
    if page.module == "ember.Tensor":
        attr = inspect.getattr_static(owner, name)
        if isinstance(attr, property) or hasattr(attr, "fget"):
            return attr.fget
        if isinstance(attr, (staticmethod, classmethod)):
            return attr.__func__
        if type(attr).__name__ in ("member_descriptor", "getset_descriptor"):
            return attr
        return attr if callable(attr) else None
    obj = getattr(owner, name)
    return obj if callable(obj) else None


def entries():
    """Every (page, name, object) of the reference, in page order."""
    for page in PAGES:
        for name in public_names(page):
            yield page, name, documented_object(page, name)
