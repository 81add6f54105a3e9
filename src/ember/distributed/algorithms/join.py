"""``torch.distributed.algorithms.join``: ``Join``, a context manager that lets processes
with fewer inputs than others shadow the collectives of those still running (through the
``JoinHook`` of each ``Joinable``), so that no process hangs.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from typing import Any, NamedTuple

from ... import _creation
from .. import distributed_c10d as dist

__all__ = ["Join", "JoinHook", "Joinable"]


class JoinHook:
    """What a joined process runs: ``main_hook()`` while some process has not joined (to
    shadow its collectives), then ``post_hook(is_last_joiner)`` once.

    Example:
        >>> from ember.distributed.algorithms.join import JoinHook
        >>> JoinHook().main_hook(), JoinHook().post_hook(True)
        (None, None)
    """

    def main_hook(self) -> None:
        """Shadow one iteration of the collectives of the processes still running."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Run once every process has joined."""


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config() -> _JoinConfig:
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Joinable(ABC):
    """What takes part in ``Join``: implements ``join_hook``, ``join_device`` and
    ``join_process_group``, and calls ``Joinable.__init__``.

    Example:
        >>> from ember.distributed.algorithms.join import Joinable
        >>> try:
        ...     Joinable()
        ... except TypeError as e:
        ...     print(str(e)[:40])
        Can't instantiate abstract class Joinabl
    """

    @abstractmethod
    def __init__(self) -> None:
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        """The hook this joinable runs after its process joins."""

    @property
    @abstractmethod
    def join_device(self):
        """The device of the join context manager's collectives."""

    @property
    @abstractmethod
    def join_process_group(self) -> Any:
        """The process group of the join context manager's collectives."""


class Join:
    """Run the ``joinables``' hooks after this process's inputs run out, until every
    process has joined (``enable=False`` turns it off; ``throw_on_early_termination=True``
    raises on all processes as soon as one runs out).

    Example:
        >>> from ember.distributed.algorithms.join import Join
        >>> try:
        ...     Join([])
        ... except ValueError as e:
        ...     print(e)
        The join context manager requires at least one joinable
    """

    def __init__(
        self,
        joinables: list,
        enable: bool = True,
        throw_on_early_termination: bool = False,
        **kwargs,
    ) -> None:
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [joinable.join_hook(**kwargs) for joinable in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        first = True
        for joinable in joinables:
            joinable._join_config = _JoinConfig(enable, throw_on_early_termination, first)
            first = False
        process_group = device = None
        for joinable in joinables:
            if process_group is None:
                process_group = joinable.join_process_group
            elif process_group != joinable.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
            if device is None:
                device = joinable.join_device
        self._process_group = process_group
        self._rank = dist.get_rank(process_group)
        self._device = device

    def __enter__(self) -> None: ...

    def __exit__(self, type, value, traceback) -> None:
        if not self._enable or type:
            return
        all_joined = False
        is_last_joiner = True
        i = 0
        while not all_joined:
            if i > 1000:
                warnings.warn(
                    f"Detected uneven input skew of greater than 1000. This means that rank "
                    f"{self._rank} has at least 1000 fewer inputs than other currently-active "
                    "ranks. This level of skew could lead to performance degradation during "
                    "training.",
                    stacklevel=2,
                )
            if self._get_num_nonjoined_procs() == 0:
                all_joined = True
            else:
                if self._throw_on_early_termination:
                    self._notify_procs_to_terminate()
                for hook in self._join_hooks:
                    hook.main_hook()
                is_last_joiner = False
                i += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    def _get_num_nonjoined_procs(self) -> float:
        count = _creation.zeros(1)
        dist.all_reduce(count, group=self._process_group)
        return count.item()

    def _notify_procs_to_terminate(self) -> None:
        dist.all_reduce(_creation.ones(1), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable: Joinable):
        """Tell the join context that this process has not joined yet (call before each
        iteration's collectives); returns the all-reduce's work for the first joinable."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(
                f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor"
            )
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        group = joinable.join_process_group
        work = dist.all_reduce(_creation.ones(1), group=group, async_op=True)
        if config.throw_on_early_termination:
            zeros = _creation.zeros(1)
            dist.all_reduce(zeros, group=group)
            if zeros.item():
                raise RuntimeError(
                    "Detected at least one rank that exhausted inputs. Throwing across all ranks."
                )
        return work
