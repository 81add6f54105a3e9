"""``torch.distributed.optim.post_localSGD_optimizer``: ``PostLocalSGDOptimizer``, which steps
a local optimizer and then lets a model averager average the parameters across processes
(post-local SGD: after a warm-up, every ``period`` steps).

Example:
    >>> import ember
    >>> from ember.distributed.optim import PostLocalSGDOptimizer
    >>> class Halver:  # an averager: any object with ``step`` and ``average_parameters``
    ...     step = 0
    ...     def average_parameters(self, params):
    ...         self.step += 1
    >>> w = ember.nn.Parameter(ember.ones(1))
    >>> opt = PostLocalSGDOptimizer(ember.optim.SGD([w], lr=0.5), Halver())
    >>> w.grad = ember.ones(1); opt.step()
    >>> w.item(), opt.state_dict()["step"]
    (0.5, 1)
"""

from __future__ import annotations

import warnings
from typing import Any

from ...optim.optimizer import Optimizer

__all__ = ["PostLocalSGDOptimizer"]


class PostLocalSGDOptimizer(Optimizer):
    """Wrap the local optimizer ``optim`` and the model averager ``averager`` (torch's
    ``PeriodicModelAverager`` or any object with a ``step`` counter and
    ``average_parameters(params)``): ``step()`` steps ``optim`` then calls
    ``averager.average_parameters(params=self.param_groups)``. ``param_groups`` and ``state``
    are ``optim``'s; the state dict adds the averager's ``"step"``.

    Example:
        >>> import ember
        >>> from ember.distributed.optim import PostLocalSGDOptimizer
        >>> class Averager:
        ...     step = 0
        ...     def average_parameters(self, params):
        ...         self.step += 1
        >>> w = ember.nn.Parameter(ember.ones(1))
        >>> opt = PostLocalSGDOptimizer(ember.optim.SGD([w], lr=0.1), Averager())
        >>> w.grad = ember.ones(1)
        >>> opt.step(); opt.step()
        >>> sd = opt.state_dict(); sd["step"]
        2
        >>> opt.load_state_dict(sd); opt.averager.step
        2
    """

    def __init__(self, optim: Optimizer, averager: Any) -> None:
        self.optim = optim
        self.param_groups = self.optim.param_groups
        self.averager = averager

    @property
    def state(self):  # type: ignore[override]
        """The local optimizer's per-parameter state."""
        return self.optim.state

    def __repr__(self) -> str:
        return self.optim.__repr__()

    def state_dict(self) -> dict[str, Any]:
        """The local optimizer's state dict plus the averager's step count (``"step"``), so
        that reloading does not repeat the warm-up.

        Example:
            >>> import ember
            >>> from ember.distributed.optim import PostLocalSGDOptimizer
            >>> class Averager:
            ...     step = 7
            ...     def average_parameters(self, params): ...
            >>> w = ember.nn.Parameter(ember.ones(1))
            >>> PostLocalSGDOptimizer(ember.optim.SGD([w], lr=0.1), Averager()).state_dict()["step"]
            7
        """
        optim_state_dict = self.optim.state_dict()
        optim_state_dict["step"] = self.averager.step
        return optim_state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load the local optimizer's state and the averager's step (0, with a warning, when
        ``state_dict`` has no ``"step"``).

        Example:
            >>> import ember, warnings
            >>> from ember.distributed.optim import PostLocalSGDOptimizer
            >>> class Averager:
            ...     step = 7
            ...     def average_parameters(self, params): ...
            >>> w = ember.nn.Parameter(ember.ones(1))
            >>> sgd = ember.optim.SGD([w], lr=0.1)
            >>> opt = PostLocalSGDOptimizer(sgd, Averager())
            >>> with warnings.catch_warnings(record=True):
            ...     opt.load_state_dict(sgd.state_dict())
            >>> opt.averager.step
            0
        """
        self.optim.load_state_dict(state_dict)
        if "step" in state_dict:
            self.averager.step = state_dict["step"]
        else:
            warnings.warn(
                "Loaded state dict does not contain a step counter for an averager. "
                "Setting step counter to 0.",
                stacklevel=2,
            )
            self.averager.step = 0

    def step(self) -> None:  # type: ignore[override]
        """Step the local optimizer, then let the averager average the parameters."""
        self.optim.step()
        self.averager.average_parameters(params=self.param_groups)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """The local optimizer's ``zero_grad``."""
        self.optim.zero_grad(set_to_none=set_to_none)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group to the local optimizer."""
        self.optim.add_param_group(param_group)
