"""``torch.quasirandom``: the Sobol low-discrepancy sequence.

Unscrambled, the points are torch's exactly (the same Joe-Kuo direction numbers, through
SciPy's generator, imported on first use). Scrambled sequences use SciPy's scrambling
seeded from ``seed`` (or ember's generator): the same distribution as torch's, other points.

Example:
    >>> import ember
    >>> ember.quasirandom.SobolEngine(2).draw(4)
    tensor([[0.0000, 0.0000],
            [0.5000, 0.5000],
            [0.7500, 0.2500],
            [0.2500, 0.7500]])
"""

from __future__ import annotations

import warnings

import numpy as np

from . import _creation, _dtype
from ._tensor import Tensor

__all__ = ["SobolEngine"]


class SobolEngine:
    """``torch.quasirandom.SobolEngine(dimension, scramble=False, seed=None)``."""

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension: int, scramble: bool = False, seed: int | None = None) -> None:
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(
                f"Supported range of dimensionality for SobolEngine is [1, {self.MAXDIM}]"
            )
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self.num_generated = 0
        self._engine = self._make()

    def _make(self):
        # SciPy is imported on first use so that `import ember` stays light.
        from scipy.stats import qmc

        if not self.scramble:
            return qmc.Sobol(self.dimension, scramble=False)
        seed = self.seed
        if seed is None:
            seed = int(_creation.default_generator._rng.integers(2**62))
        return qmc.Sobol(self.dimension, scramble=True, seed=np.random.default_rng(seed))

    def draw(self, n: int = 1, out: Tensor | None = None, dtype=None) -> Tensor:
        """The next ``n`` points, an ``(n, dimension)`` tensor (default dtype float)."""
        with warnings.catch_warnings():
            # SciPy warns when n is not a power of 2; torch does not.
            warnings.simplefilter("ignore")
            points = self._engine.random(n)
        self.num_generated += n
        np_dtype = _dtype.to_numpy_dtype(dtype) if dtype is not None else None
        result = _creation.tensor(points, dtype=dtype if np_dtype is not None else None)
        if np_dtype is None:
            result = result.to(_dtype.get_default_dtype())
        if out is not None:
            out._data = result._data.astype(out._data.dtype)  # torch resizes `out` silently
            out._bump()
            return out
        return result

    def draw_base2(self, m: int, out: Tensor | None = None, dtype=None) -> Tensor:
        """The next ``2**m`` points; the total drawn must stay a power of 2."""
        n = 2**m
        total_n = self.num_generated + n
        if total_n & (total_n - 1) != 0:
            raise ValueError(
                "The balance properties of Sobol' points require n to be a power of 2. "
                f"{self.num_generated} points have been previously generated, then: "
                f"n={self.num_generated}+2**{m}={total_n}. If you still want to do this, "
                "please use 'SobolEngine.draw()' instead."
            )
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self) -> SobolEngine:
        """Start the sequence again (the same scrambling)."""
        self._engine.reset()
        self.num_generated = 0
        return self

    def fast_forward(self, n: int) -> SobolEngine:
        """Skip the next ``n`` points."""
        self._engine.fast_forward(n)
        self.num_generated += n
        return self

    def __repr__(self) -> str:
        fmt = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt += ["scramble=True"]
        if self.seed is not None:
            fmt += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fmt) + ")"
