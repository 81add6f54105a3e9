"""What an ecosystem program (tests/ecosystem/programs) uses to be run twice, first under real
torch and then under ``python -m ember``, by tests/ecosystem/test_libraries.py.

A program is plain ``import torch`` code built on a library. Its first run (torch) builds its
models and saves their weights with torch; its second run (ember) loads those weights, so
both compute from the same numbers. Each run records named results with :func:`record`;
the test compares the two sets.

    python PROGRAM WORKDIR            # under torch: writes weights and torch.npz
    python -m ember PROGRAM WORKDIR   # under ember: loads the weights, writes ember.npz
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch

WORKDIR = Path(sys.argv[1])
RUNNER = "ember" if torch.__name__ == "ember" else "torch"
_results: dict[str, np.ndarray] = {}
_tolerances: dict[str, list[float]] = {}


def under_torch() -> bool:
    """True on the first run (real torch), which makes the weights the ember run loads."""
    return RUNNER == "torch"


def weights(name: str) -> Path:
    """Where the torch run saves (and the ember run finds) the file ``name``."""
    return WORKDIR / name


def save_or_load(module: torch.nn.Module, name: str) -> torch.nn.Module:
    """Under torch save ``module``'s state_dict with ``torch.save``; under ember load it
    from that file (``weights_only=True``, as a careful program does). Returns the module."""
    path = weights(name)
    if under_torch():
        torch.save(module.state_dict(), path)
    else:
        module.load_state_dict(torch.load(path, weights_only=True))
    return module


def shared_tensor(name: str, make) -> torch.Tensor:
    """A tensor both runs use: made by ``make()`` under torch (random draws differ between
    the libraries) and saved, loaded under ember."""
    path = weights(f"{name}.pt")
    if under_torch():
        value = make()
        torch.save(value, path)
        return value
    return torch.load(path, weights_only=True)


def record(name: str, value, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    """Keep ``value`` (a tensor, number, or nested list of them) under ``name`` for the
    comparison; integer and boolean results must match exactly, floats within tolerance."""
    if isinstance(value, torch.Tensor):
        value = value.detach()
        if value.dtype in (torch.bfloat16, torch.float16):
            value = value.float()
        value = value.numpy()
    if name in _results:
        raise KeyError(f"result {name!r} recorded twice")
    _results[name] = np.asarray(value)
    _tolerances[name] = [rtol, atol]


def record_grads(prefix: str, module: torch.nn.Module, **tolerance) -> None:
    """Record every parameter's gradient of ``module`` as ``prefix.<parameter name>``."""
    for pname, param in module.named_parameters():
        if param.grad is not None:
            record(f"{prefix}.{pname}", param.grad, **tolerance)


_VISION_LIBRARIES: list = []


def use_vision_packages() -> None:
    """Make torchvision and timm importable (call before importing them). They live apart
    from the test venv's site-packages (`make test` installs them into
    ``<venv>/vision-packages``): the only torchvision wheel for torch 2.13 on the package
    index is a CUDA build whose compiled operators cannot load into torch's CPU build, and
    installed beside it, it would stop real torch's imports of transformers and diffusers.

    Under real torch its import would still fail registering shape functions for two of
    those operators (nms, qnms): their schemas are declared first, so its Python code
    imports as under ember, where its operators cannot load either. The programs use none
    of its compiled operators."""
    sys.path.insert(0, str(Path(sys.prefix) / "vision-packages"))
    if RUNNER == "torch" and not _VISION_LIBRARIES:
        library = torch.library.Library("torchvision", "DEF")
        library.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        library.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        _VISION_LIBRARIES.append(library)  # kept alive: dropping it removes the schemas


def _real_torch_modules() -> list[str]:
    """Modules loaded from an installed real torch (there must be none under ember)."""
    loaded = []
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None) or ""
        if "/site-packages/torch/" in origin or "/site-packages/functorch/" in origin:
            loaded.append(name)
    return loaded


def finish() -> None:
    """Write the recorded results (call last). Under ember, first check that no module of an
    installed real torch was imported on the way."""
    if RUNNER == "ember":
        real = _real_torch_modules()
        if real:
            raise AssertionError(f"real torch modules were imported under ember: {real[:5]}")
    np.savez(WORKDIR / f"{RUNNER}.npz", **_results)
    (WORKDIR / f"{RUNNER}-tolerances.json").write_text(json.dumps(_tolerances))
