"""torch.quasirandom.SobolEngine: unscrambled points equal torch's; scrambled ones are
well-spread points in [0, 1) (torch's scrambling draws from its own generator)."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dimension", [1, 3, 40])
def test_unscrambled_points_equal_torchs(dimension):
    mine, theirs = (
        ember.quasirandom.SobolEngine(dimension),
        torch.quasirandom.SobolEngine(dimension),
    )
    for step in (5, 3, 8):
        a, b = mine.draw(step), theirs.draw(step)
        assert a.dtype == ember.float32 and a.shape == tuple(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    mine.fast_forward(7), theirs.fast_forward(7)
    np.testing.assert_array_equal(
        mine.draw(4, dtype=ember.float64).numpy(), theirs.draw(4, dtype=torch.float64).numpy()
    )
    assert mine.num_generated == theirs.num_generated
    mine.reset(), theirs.reset()
    np.testing.assert_array_equal(mine.draw_base2(3).numpy(), theirs.draw_base2(3).numpy())


def test_errors_and_repr_as_torch():
    for lib in (ember, torch):
        with pytest.raises(ValueError, match=r"Supported range of dimensionality .* \[1, 21201\]"):
            lib.quasirandom.SobolEngine(0)
        e = lib.quasirandom.SobolEngine(2)
        e.draw(3)
        with pytest.raises(ValueError, match=r"n=3\+2\*\*2=7"):
            e.draw_base2(2)
    assert repr(ember.quasirandom.SobolEngine(3, scramble=True, seed=1)) == repr(
        torch.quasirandom.SobolEngine(3, scramble=True, seed=1)
    )


def test_scrambled_points_are_seeded_and_spread():
    a = ember.quasirandom.SobolEngine(2, scramble=True, seed=7).draw(256)
    b = ember.quasirandom.SobolEngine(2, scramble=True, seed=7).draw(256)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    x = a.numpy()
    assert ((x >= 0) & (x < 1)).all()
    # Low discrepancy: each of the 16 x 16 cells of the unit square holds exactly one point.
    cells = (x * 16).astype(int)
    assert len({(i, j) for i, j in cells}) == 256
    out = ember.empty(0)
    assert ember.quasirandom.SobolEngine(2).draw(4, out=out) is out and out.shape == (4, 2)
