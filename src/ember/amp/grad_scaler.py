"""``torch.amp.GradScaler``: loss scaling for mixed-precision training.

On the CPU it works as torch's does (scale the loss, unscale the gradients, skip steps with
inf/NaN gradients, grow or back off the scale); for CUDA it is disabled with torch's warning,
and every method passes through, as on a CPU-only torch build.

Example:
    >>> import ember
    >>> w = ember.nn.Parameter(ember.ones(2))
    >>> opt = ember.optim.SGD([w], lr=0.1)
    >>> scaler = ember.amp.GradScaler("cpu")
    >>> scaler.scale((w * 3).sum()).backward()
    >>> scaler.step(opt); scaler.update()
    >>> w
    Parameter containing:
    tensor([0.7000, 0.7000], requires_grad=True)
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from .._overrides import warn as _warn
from .._tensor import Tensor

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


class GradScaler:
    """``torch.amp.GradScaler(device="cuda", init_scale=2.**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True)``.

    ``scale`` multiplies the loss by the scale; ``step`` unscales the gradients and steps
    unless they hold inf/NaN; ``update`` grows or backs off the scale.

    Example:
        >>> import ember
        >>> w = ember.nn.Parameter(ember.ones(2))
        >>> opt = ember.optim.SGD([w], lr=0.1)
        >>> scaler = ember.amp.GradScaler("cpu", init_scale=4.0)
        >>> scaler.scale((w * 3).sum()).backward()
        >>> w.grad
        tensor([12., 12.])
        >>> scaler.step(opt)
        >>> scaler.update()
        >>> w.detach(), scaler.get_scale()
        (tensor([0.7000, 0.7000]), 4.0)
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            _warn(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = float(init_scale)
            self._scale: float | None = None
            self._growth_factor = float(growth_factor)
            self._backoff_factor = float(backoff_factor)
            self._growth_interval = int(growth_interval)
            self._init_growth_tracker = 0
            self._growth_tracker: int | None = None
            self._per_optimizer_states: dict = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def _lazy_init(self) -> None:
        if self._scale is None:
            self._scale = self._init_scale
            self._growth_tracker = self._init_growth_tracker

    def _opt_state(self, optimizer) -> dict:
        return self._per_optimizer_states.setdefault(
            id(optimizer), {"stage": OptState.READY, "found_inf": False}
        )

    def scale(self, outputs):
        """``outputs`` (a Tensor or nested lists/tuples of them) times the current scale."""
        if not self._enabled:
            return outputs
        self._lazy_init()
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, tuple) else scaled
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place, noting any inf/NaN."""
        if not self._enabled:
            return
        self._check("unscale_")
        state = self._opt_state(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = np.float32(1.0 / self._scale)  # reciprocal in float64, as torch
        found_inf = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g._data.dtype == np.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                with np.errstate(all="ignore"):
                    g._data *= inv_scale.astype(g._data.dtype)
                g._bump()
                found_inf = found_inf or not bool(np.isfinite(g._data).all())
        state["found_inf"] = found_inf
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` on unscaled gradients, skipped if any is inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check("step")
        state = self._opt_state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        retval = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Grow the scale after ``growth_interval`` clean steps; back off after an inf/NaN."""
        if not self._enabled:
            return
        self._check("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise AssertionError("new_scale should be a float or a 1-element tensor.")
                new_scale = new_scale.item()
            self._scale = float(new_scale)
        else:
            if not self._per_optimizer_states:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(s["found_inf"] for s in self._per_optimizer_states.values()):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer_states = {}

    def _check(self, funcname: str) -> None:
        if self._scale is None:
            raise AssertionError(
                f"Attempted {funcname} but _scale is None.  This may indicate your script did "
                "not use scaler.scale(loss or outputs) earlier in the iteration."
            )

    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale)

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def state_dict(self) -> dict:
        """torch's keys: scale, growth_factor, backoff_factor, growth_interval, _growth_tracker."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker or 0,
        }

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = self._init_scale
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = self._init_growth_tracker
