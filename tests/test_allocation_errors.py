"""Tensors too large to allocate raise torch's RuntimeError with torch's message (NumPy says
MemoryError or ValueError, which `except RuntimeError` in code written for torch misses).

The expected messages are torch 2.13's on this machine; test_torch_agrees checks them
against the torch installed. The sizes past the machine's memory fail in torch's allocator
under Linux's default overcommit (a single allocation over RAM + swap is refused at once),
and in NumPy's the same way; where the kernel overcommits always, both would hand out
address space (and fill it), so those cases skip there. Sizes past 2**47 bytes fail
everywhere: they exceed a process's address space.
"""

import os

import numpy as np
import pytest

import ember


def _overcommit_always() -> bool:
    try:
        with open("/proc/sys/vm/overcommit_memory") as f:
            return f.read().strip() == "1"
    except OSError:
        return False


_RAM = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
_ADDRESS_SPACE = 2**47


def _cant(nbytes: int) -> str:
    return (
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
        f"memory: you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)"
    )


def _overflow(*sizes) -> str:
    return f"Storage size calculation overflowed with sizes={list(sizes)}"


def _big(m):
    return m.zeros(1).expand(10**12)


# (id, f(module), exception type, message, bytes asked of the allocator or None)
CASES = [
    # the issue's cases
    ("empty(10**12)", lambda m: m.empty(10**12), RuntimeError, _cant(4 * 10**12), 4 * 10**12),
    ("zeros(10**6, 10**6)", lambda m: m.zeros(10**6, 10**6), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("randn(10**11)", lambda m: m.randn(10**11), RuntimeError, _cant(4 * 10**11), 4 * 10**11),
    ("ones(2**62)", lambda m: m.ones(2**62), RuntimeError, _overflow(2**62), None),
    # every factory that allocates from a size
    ("rand(10**11)", lambda m: m.rand(10**11), RuntimeError, _cant(4 * 10**11), 4 * 10**11),
    ("full(10**12)", lambda m: m.full((10**12,), 1.0), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("randint(10**12)", lambda m: m.randint(0, 10, (10**12,)), RuntimeError, _cant(8 * 10**12), 8 * 10**12),  # noqa: E501
    ("randperm(10**12)", lambda m: m.randperm(10**12), RuntimeError, _cant(8 * 10**12), 8 * 10**12),  # noqa: E501
    ("arange(10**12)", lambda m: m.arange(10**12), RuntimeError, _cant(8 * 10**12), 8 * 10**12),
    ("arange(0., 1e12)", lambda m: m.arange(0.0, 1e12), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("eye(10**6)", lambda m: m.eye(10**6), RuntimeError, _cant(4 * 10**12), 4 * 10**12),
    ("linspace(10**12)", lambda m: m.linspace(0, 1, 10**12), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("logspace(10**12)", lambda m: m.logspace(0, 1, 10**12), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("normal(size=10**12)", lambda m: m.normal(0.0, 1.0, size=(10**12,)), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("new_zeros(10**12)", lambda m: m.zeros(1).new_zeros(10**12), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("new_ones(10**12)", lambda m: m.zeros(1).new_ones(10**12), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("new_empty(10**12)", lambda m: m.zeros(1).new_empty(10**12), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("new_full(10**12)", lambda m: m.zeros(1).new_full((10**12,), 2.0), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("zeros_like(expanded)", lambda m: m.zeros_like(_big(m)), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("ones_like(expanded)", lambda m: m.ones_like(_big(m)), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("full_like(expanded)", lambda m: m.full_like(_big(m), 3.0), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("rand_like(expanded)", lambda m: m.rand_like(_big(m)), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("randn_like(expanded)", lambda m: m.randn_like(_big(m)), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("randint_like(expanded)", lambda m: m.randint_like(_big(m), 5), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    # copies of an expanded view, repeat, and the hottest ops' results
    ("expand().contiguous()", lambda m: _big(m).contiguous(), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("expand().clone()", lambda m: _big(m).clone(), RuntimeError, _cant(4 * 10**12), 4 * 10**12),
    ("repeat(10**12)", lambda m: m.zeros(1).repeat(10**12), RuntimeError, _cant(4 * 10**12), 4 * 10**12),  # noqa: E501
    ("repeat(10**6, 10**6)", lambda m: m.zeros(2, 3).repeat(10**6, 10**6), RuntimeError, _cant(24 * 10**12), 24 * 10**12),  # noqa: E501
    ("expand() + 1", lambda m: _big(m) + 1, RuntimeError, _cant(4 * 10**12), 4 * 10**12),
    ("expand() * 2", lambda m: _big(m) * 2, RuntimeError, _cant(4 * 10**12), 4 * 10**12),
    # past the address space: fails under any overcommit policy
    ("empty(2**46)", lambda m: m.empty(2**46), RuntimeError, _cant(2**48), 2**48),
    ("rand(2**60)", lambda m: m.rand(2**60), RuntimeError, _cant(2**62), 2**62),
    ("zeros(2**62, bool)", lambda m: m.zeros(2**62, dtype=m.bool), RuntimeError, _cant(2**62), 2**62),  # noqa: E501
    ("empty(2**61, uint8)", lambda m: m.empty(2**61, dtype=m.uint8), RuntimeError, _cant(2**61), 2**61),  # noqa: E501
    # sizes whose byte count overflows int64: torch's check before allocating
    ("ones(2**63 - 1)", lambda m: m.ones(2**63 - 1), RuntimeError, _overflow(2**63 - 1), None),
    ("empty(2**61)", lambda m: m.empty(2**61), RuntimeError, _overflow(2**61), None),
    ("empty(2**32, 2**32)", lambda m: m.empty(2**32, 2**32), RuntimeError, _overflow(2**32, 2**32), None),  # noqa: E501
    ("empty(2**31, 2**31, 4)", lambda m: m.empty(2**31, 2**31, 4), RuntimeError, _overflow(2**31, 2**31, 4), None),  # noqa: E501
    ("zeros(2**40, 2**40, 0)", lambda m: m.zeros(2**40, 2**40, 0), RuntimeError, _overflow(2**40, 2**40, 0), None),  # noqa: E501
    ("zeros(0, 2**40, 2**40)", lambda m: m.zeros(0, 2**40, 2**40), RuntimeError, "Stride calculation overflowed", None),  # noqa: E501
    ("randn(2**61)", lambda m: m.randn(2**61), RuntimeError, _overflow(2**61), None),
    ("randint(2**62)", lambda m: m.randint(0, 10, (2**62,)), RuntimeError, _overflow(2**62), None),
    ("full(2**62, int)", lambda m: m.full((2**62,), 1), RuntimeError, _overflow(2**62), None),
    ("arange(2**62)", lambda m: m.arange(2**62), RuntimeError, _overflow(2**62), None),
    ("linspace(2**62)", lambda m: m.linspace(0, 1, 2**62), RuntimeError, _overflow(2**62), None),
    ("eye(2**31, float64)", lambda m: m.eye(2**31, dtype=m.float64), RuntimeError, _overflow(2**31, 2**31), None),  # noqa: E501
    ("eye(2**32)", lambda m: m.eye(2**32), RuntimeError, "numel: integer multiplication overflow", None),  # noqa: E501
    ("new_full(2**62)", lambda m: m.zeros(1).new_full((2**62,), 2.0), RuntimeError, _overflow(2**62), None),  # noqa: E501
    ("repeat(2**62)", lambda m: m.zeros(1).repeat(2**62), RuntimeError, _overflow(2**62), None),
    # negative sizes: each factory's own message
    ("empty(2, -3)", lambda m: m.empty(2, -3), RuntimeError, "Trying to create tensor with negative dimension -3: [2, -3]", None),  # noqa: E501
    ("zeros(-1)", lambda m: m.zeros(-1), RuntimeError, "zeros: Dimension size must be non-negative.", None),  # noqa: E501
    ("new_zeros(2, -1)", lambda m: m.zeros(1).new_zeros(2, -1), RuntimeError, "Trying to create tensor with negative dimension -1: [2, -1]", None),  # noqa: E501
    ("randperm(-3)", lambda m: m.randperm(-3), RuntimeError, "Trying to create tensor with negative dimension -3: [-3]", None),  # noqa: E501
    ("eye(-2)", lambda m: m.eye(-2), RuntimeError, "n must be greater or equal to 0, got -2", None),
    ("eye(2, -3)", lambda m: m.eye(2, -3), RuntimeError, "m must be greater or equal to 0, got -3", None),  # noqa: E501
    ("linspace(0, 1, -2)", lambda m: m.linspace(0, 1, -2), RuntimeError, "number of steps must be non-negative", None),  # noqa: E501
    ("logspace(0, 1, -2)", lambda m: m.logspace(0, 1, -2), RuntimeError, "number of steps must be non-negative", None),  # noqa: E501
    ("arange(0, -5)", lambda m: m.arange(0, -5), RuntimeError, "upper bound and lower bound inconsistent with step sign", None),  # noqa: E501
    ("arange(0, 5, -1)", lambda m: m.arange(0, 5, -1), RuntimeError, "upper bound and lower bound inconsistent with step sign", None),  # noqa: E501
    ("arange(0, nan)", lambda m: m.arange(0, float("nan")), RuntimeError, "unsupported range: 0 -> nan", None),  # noqa: E501
    ("arange(0, 1, nan)", lambda m: m.arange(0, 1, float("nan")), RuntimeError, "step must be nonzero", None),  # noqa: E501
    ("arange(0, inf)", lambda m: m.arange(0, float("inf")), RuntimeError, "unsupported range: 0 -> inf", None),  # noqa: E501
    # a size torch cannot even read
    ("ones(2, 2**63)", lambda m: m.ones(2, 2**63), TypeError, "ones(): argument 'size' failed to unpack the object at pos 2 with error \"Overflow when unpacking long long", None),  # noqa: E501
]  # fmt: skip


def _skip_reason(nbytes):
    if nbytes is None or nbytes >= _ADDRESS_SPACE:
        return None
    if nbytes <= _RAM:
        return f"this machine has {_RAM} bytes: an allocation of {nbytes} may succeed"
    if _overcommit_always():
        return "vm.overcommit_memory=1: the kernel hands out any size (and the fill is killed)"
    return None


@pytest.mark.parametrize(
    ("f", "kind", "message", "nbytes"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)  # noqa: E501
def test_torch_error(f, kind, message, nbytes):
    reason = _skip_reason(nbytes)
    if reason:
        pytest.skip(reason)
    with pytest.raises(kind) as info:
        f(ember)
    got = str(info.value)
    # torch's TypeError goes on with a C++ trace: its first line is compared
    assert got == message or (kind is TypeError and got.startswith(message))


def test_except_runtime_error_catches_the_issue_cases():
    """Code written for torch: `except RuntimeError` sees an allocation failure."""
    for f in (lambda: ember.ones(2**62), lambda: ember.empty(2**46)):
        try:
            f()
        except RuntimeError:
            pass
        else:  # pragma: no cover
            raise AssertionError("no RuntimeError")


def test_large_allocations_that_fit_succeed():
    """4 GB (torch: succeeds here) is not refused: the translation only follows failures.
    empty is zero pages NumPy never touches, so this costs no memory."""
    t = ember.empty(10**9)
    assert t.shape == (10**9,) and t.dtype == ember.float32


def test_size_errors_that_are_not_about_size_stay_numpy_s():
    """A ValueError NumPy raises for another reason (a fill value it cannot convert) is
    not mistaken for an allocation failure."""
    with pytest.raises((TypeError, ValueError)):
        ember.full((2,), "x")
    with pytest.raises(ValueError):
        np.empty((2**62, 0))  # NumPy refuses this; ember.empty(2**62, 0) does too (see below)
    with pytest.raises(ValueError):
        ember.empty(2**62, 0)  # torch makes an empty (2**62, 0) tensor: NumPy cannot


def test_ordinary_factories_are_unchanged():
    ember.manual_seed(0)
    assert ember.zeros(2, 3).shape == (2, 3) and ember.ones(2).tolist() == [1.0, 1.0]
    assert ember.full((2,), 7).dtype == ember.int64
    assert ember.rand(3, dtype=ember.float64).dtype == ember.float64
    assert ember.randint(0, 5, (4,)).dtype == ember.int64
    assert ember.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert ember.arange(5, 0, -2).tolist() == [5, 3, 1]
    assert ember.arange(3, 3).shape == (0,)
    assert ember.eye(2, 3).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert ember.linspace(0, 1, 0).shape == (0,)
    assert ember.randperm(0).shape == (0,)
    assert ember.zeros(1).new_zeros(2, 2).shape == (2, 2)


@pytest.mark.parametrize(
    ("f", "kind", "message", "nbytes"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)  # noqa: E501
def test_torch_agrees(f, kind, message, nbytes):
    """The expected messages are the torch installed's."""
    torch = pytest.importorskip("torch")
    reason = _skip_reason(nbytes)
    if reason:
        pytest.skip(reason)
    with pytest.raises(kind) as info:
        f(torch)
    first = str(info.value).splitlines()[0]
    assert first.startswith(message) if kind is TypeError else first == message
