"""Small pieces of torch's surface that real programs touch (the API census): each behaves
as torch's CPU build does."""

from __future__ import annotations

import warnings

import pytest

import ember

torch = pytest.importorskip("torch")


def _grouped(lib):
    a = [lib.ones(2), lib.ones(2, dtype=lib.float64), lib.zeros(1)]
    b = [lib.ones(2) * 2, None, lib.zeros(1) + 3]
    out = {}
    for flag in (True, False):
        groups = lib.optim.Optimizer._group_tensors_by_device_and_dtype([a, b], with_indices=flag)
        out[flag] = {
            (str(device), str(dtype)): (
                [[None if t is None else t.tolist() for t in ts] for ts in lists],
                indices,
            )
            for (device, dtype), (lists, indices) in groups.items()
        }
    return out


def test_optimizer_groups_tensors_as_torch():
    assert _grouped(ember) == _grouped(torch)


def test_set_default_tensor_type_as_torch():
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.set_default_tensor_type(lib.DoubleTensor)
            assert lib.get_default_dtype() == lib.float64
            lib.set_default_tensor_type("torch.FloatTensor")
            assert lib.get_default_dtype() == lib.float32
        assert "set_default_tensor_type() is deprecated as of PyTorch 2.1" in str(caught[0].message)
    for bad in ("lib.IntTensor", "lib.float64"):
        messages = []
        for lib in (ember, torch):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(TypeError) as info:
                    lib.set_default_tensor_type(eval(bad))
            messages.append(str(info.value))
        assert messages[0] == messages[1]


@pytest.mark.parametrize(
    "name", ["synchronize", "empty_cache", "current_allocated_memory", "driver_allocated_memory"]
)
def test_mps_without_the_backend_as_torch(name):
    messages = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            getattr(lib.mps, name)()
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert ember.mps.is_available() is torch.mps.is_available() is False
    assert ember.mps.device_count() == torch.mps.device_count() == 0


def test_compile_configuration_and_script_overloads_are_accepted():
    config = ember._inductor.config
    assert config.coordinate_descent_tuning is torch._inductor.config.coordinate_descent_tuning
    config.coordinate_descent_tuning = True  # a setting programs write: kept, no effect
    try:
        assert ember.compile(lambda x: x * 2)(ember.ones(2)).tolist() == [2.0, 2.0]
    finally:
        config.coordinate_descent_tuning = False

    def f(x):
        return x

    assert ember.jit._overload_method(f) is f and ember.jit._overload(f) is f
