"""DataLoader throughput with worker processes: items per second with ``num_workers=0``
and ``num_workers=2``, and their ratio.

Usage: python benchmarks/dataloader_workers.py [--items N] [--ms MS] [--repeats R]

Each item costs about ``--ms`` milliseconds (2 by default) of Python and small-NumPy work
in ``__getitem__`` (single-threaded: no BLAS), batches are 16 items, and one timed epoch
includes starting (and stopping) the workers. Reports the best of ``--repeats`` epochs for
each setting. With 2 workers on 2 free cores the ratio should be about 1.7x or more.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import ember
from ember.utils.data import DataLoader, Dataset


def _work(seed: int, rounds: int) -> np.ndarray:
    """Some Python and small-NumPy work (elementwise ops on 64 numbers)."""
    x = np.linspace(0.0, 1.0, 64) + seed * 1e-3
    acc = 0.0
    for k in range(rounds):
        x = np.tanh(x * 1.01 + 0.1)
        acc += float(x[k % 64]) * 0.5
    return (x + acc).astype(np.float32)


def _calibrate(ms: float) -> int:
    """The number of rounds that take about ``ms`` milliseconds here."""
    rounds = 50
    while True:
        t0 = time.perf_counter()
        for i in range(5):
            _work(i, rounds)
        per_item = (time.perf_counter() - t0) / 5
        if per_item > 2e-4:
            return max(1, round(rounds * ms * 1e-3 / per_item))
        rounds *= 4


class SlowDataset(Dataset):
    """``n`` items, each a float32 vector of 64 and a label, costing ``rounds`` rounds."""

    def __init__(self, n: int, rounds: int) -> None:
        self.n, self.rounds = n, rounds

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        return ember.from_numpy(_work(i, self.rounds)), i % 10


def _epoch(dataset: Dataset, num_workers: int) -> float:
    """Seconds for one pass over ``dataset`` (workers started and stopped inside)."""
    t0 = time.perf_counter()
    n = 0
    for x, _y in DataLoader(dataset, batch_size=16, num_workers=num_workers):
        n += x.shape[0]
    elapsed = time.perf_counter() - t0
    assert n == len(dataset)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=480)
    parser.add_argument("--ms", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    rounds = _calibrate(args.ms)
    dataset = SlowDataset(args.items, rounds)
    t0 = time.perf_counter()
    for i in range(32):
        dataset[i]
    per_item_ms = (time.perf_counter() - t0) / 32 * 1e3
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"{args.items} items of ~{per_item_ms:.2f} ms each ({rounds} rounds), batch_size 16, "
        f"{cores} cores, best of {args.repeats}"
    )
    rates = {}
    for workers in (0, 2):
        best = min(_epoch(dataset, workers) for _ in range(args.repeats))
        rates[workers] = args.items / best
        print(f"num_workers={workers}: {rates[workers]:8.1f} items/s ({best * 1e3:.0f} ms/epoch)")
    print(f"ratio (2 workers / 0 workers): {rates[2] / rates[0]:.2f}x")


if __name__ == "__main__":
    main()
