"""torch's float8 dtypes (``float8_e4m3fn``, ``float8_e5m2`` and the ``fnuz`` variants),
made from ml_dtypes' types on first use: storage and conversion as in torch (libraries such
as transformers name them at import), printing and ``finfo`` as torch's."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

NAMES = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
VALUES = [0.3, 2.0, -1.5, 100.0, 1e-3, -0.0]


@pytest.mark.parametrize("name", NAMES)
def test_conversion_and_printing_match_torch(name):
    e = ember.tensor(VALUES).to(getattr(ember, name))
    t = torch.tensor(VALUES).to(getattr(torch, name))
    assert repr(e) == repr(t) and str(e.dtype) == str(t.dtype)
    np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())
    np.testing.assert_array_equal(e.double().numpy(), t.double().numpy())
    assert e.dtype.is_floating_point and e.dtype.itemsize == 1 == t.element_size()
    assert e.element_size() == 1


@pytest.mark.parametrize("name", NAMES[:3])
def test_finfo_matches_torch(name):
    # (float8_e5m2fnuz is left out: torch gives it eps 0.125, half the type's real spacing)
    assert repr(ember.finfo(getattr(ember, name))) == repr(torch.finfo(getattr(torch, name)))


def test_float8_is_made_on_first_use():
    code = (
        "import sys, ember\n"
        "before = 'ml_dtypes' in sys.modules\n"
        "d = ember.float8_e4m3fn\n"
        "print(before, 'ml_dtypes' in sys.modules, d, 'float8_e5m2' in dir(ember))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "torch.float8_e4m3fn", "True"]
