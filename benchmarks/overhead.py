"""Per-op overhead of ember on small tensors: forward vs backward, and the GC's share.

Usage: python benchmarks/overhead.py

Builds 2000-op chains of one op each on a 3-element float64 leaf and reports the best of
15 runs in microseconds per op, with NumPy's time for the same ufunc calls alongside.
"""

from __future__ import annotations

import gc
import time

import numpy as np

import ember

OPS = {
    "mul by number": (lambda y, x: y * 1.001, lambda a: a * 1.001, lambda g, a: g * 1.001),
    "mul by tensor": (lambda y, x: y * x, lambda a: a * a, lambda g, a: (g * a, g * a)),
    "sin": (lambda y, x: y.sin(), np.sin, lambda g, a: g * np.cos(a)),
    "tanh": (lambda y, x: y.tanh(), np.tanh, lambda g, t: g * (1 - t * t)),
    "add number": (lambda y, x: y + 0.01, lambda a: a + 0.01, lambda g, a: g),
}


def _best(fn, reps=15):
    best = float("inf")
    for _ in range(reps):
        best = min(best, fn())
    return best


def _chain(op, n):
    x = ember.tensor([0.1, 0.2, 0.3], dtype=ember.float64, requires_grad=True)
    y = x
    for _ in range(n):
        y = op(y, x)
    return y


def measure(op, np_fwd, np_bwd, n=2000):
    def fwd():
        t = time.perf_counter()
        _chain(op, n)
        return time.perf_counter() - t

    def bwd():
        y = _chain(op, n)
        g = ember.ones(3, dtype=ember.float64)
        t = time.perf_counter()
        y.backward(g)
        return time.perf_counter() - t

    a = np.array([0.1, 0.2, 0.3])

    def numpy_only():
        t = time.perf_counter()
        for _ in range(n):
            np_bwd(np_fwd(a), a)
        return time.perf_counter() - t

    scale = 1e6 / n
    return _best(fwd) * scale, _best(bwd) * scale, _best(numpy_only) * scale


def main():
    print("| op | forward µs/op | backward µs/op | NumPy fwd+bwd µs/op |")
    print("| --- | --- | --- | --- |")
    for name, (op, f, b) in OPS.items():
        fw, bw, npt = measure(op, f, b)
        print(f"| {name} | {fw:.2f} | {bw:.2f} | {npt:.2f} |")
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        fw, bw, _ = measure(*OPS["mul by number"])
        print(f"gc {'on ' if enabled else 'off'}: mul by number {fw + bw:.2f} µs/op fwd+bwd")
    gc.enable()


if __name__ == "__main__":
    main()
