"""Data-parallel speed-up of ember's DistributedDataParallel on one machine (MPI, loopback).

Usage: python benchmarks/ddp_bench.py [--steps 30] [--nproc 2]

W2's step (784-512-512-10 ReLU MLP, softmax cross-entropy, float32, SGD, global batch 128)
timed in 1 process x 1 thread on the whole batch and in ``--nproc`` MPI processes x 1
thread (``OPENBLAS_NUM_THREADS=OMP_NUM_THREADS=1``) on 128/nproc samples each, gradients
averaged by DDP. Also the ``all_reduce`` throughput of a 10 MB float32 gradient between the
processes. Prints a markdown table (medians). Needs ``pip install 'ember[distributed]'``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

THREADS = dict.fromkeys(("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"), "1")
GLOBAL_BATCH = 128
SIZES = (784, 512, 512, 10)


def _model(ember):
    nn = ember.nn
    ember.manual_seed(0)
    return nn.Sequential(
        nn.Linear(SIZES[0], SIZES[1]),
        nn.ReLU(),
        nn.Linear(SIZES[1], SIZES[2]),
        nn.ReLU(),
        nn.Linear(SIZES[2], SIZES[3]),
    )


def worker(steps: int, distributed: bool) -> dict:
    import ember
    import ember.nn.functional as F

    dist = None
    rank, world = 0, 1
    if distributed:
        import ember.distributed as dist
        from ember.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("mpi")
        rank, world = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((GLOBAL_BATCH, SIZES[0])).astype(np.float32))
    y = ember.tensor(rng.integers(0, SIZES[-1], GLOBAL_BATCH))
    share = slice(rank * GLOBAL_BATCH // world, (rank + 1) * GLOBAL_BATCH // world)
    x, y = x[share], y[share]
    model = _model(ember)
    if distributed:
        model = DDP(model)
    opt = ember.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    times = []
    for i in range(steps + 3):  # 3 warm-up steps
        if dist is not None:
            dist.barrier()  # every process starts the step together
        t0 = time.perf_counter()
        step()
        if dist is not None:
            dist.barrier()  # ... and the step ends when the slowest is done
        if i >= 3:
            times.append(time.perf_counter() - t0)
    out = {"step_s": statistics.median(times), "world": world}
    if dist is not None:
        grad = ember.ones(10 * 2**20 // 4, dtype=ember.float32)  # a 10 MB gradient
        ar = []
        for _ in range(12):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(grad)
            ar.append(time.perf_counter() - t0)
        out["allreduce_s"] = statistics.median(ar[2:])
        out["allreduce_bytes"] = grad._data.nbytes
        dist.destroy_process_group()
    return out if rank == 0 else {}


def _mpirun(nproc: int) -> list:
    local = Path(sys.executable).with_name("mpirun")
    launcher = str(local) if local.exists() else shutil.which("mpirun") or shutil.which("mpiexec")
    if not launcher:
        sys.exit("no mpirun: pip install 'ember[distributed]'")
    version = subprocess.run([launcher, "--version"], capture_output=True, text=True).stdout
    extra = ["--oversubscribe"] if "Open MPI" in version else []
    return [launcher, *extra, "-n", str(nproc)]


def _run(cmd: list) -> dict:
    env = dict(os.environ, **THREADS, OMPI_ALLOW_RUN_AS_ROOT="1")
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        sys.exit(proc.stdout + proc.stderr)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("{") and ln != "{}"][-1]
    return json.loads(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--worker", choices=["single", "mpi"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.steps, args.worker == "mpi")), flush=True)
        return
    me = [sys.executable, os.path.abspath(__file__), "--steps", str(args.steps)]
    single = _run([*me, "--worker", "single"])
    multi = _run([*_mpirun(args.nproc), *me, "--worker", "mpi"])
    n = multi["world"]
    speedup = single["step_s"] / multi["step_s"]
    mb_s = multi["allreduce_bytes"] / 2**20 / multi["allreduce_s"]
    print(f"W2 MLP step, global batch {GLOBAL_BATCH}, float32, 1 thread per process\n")
    print("| setup | median step (ms) | speed-up | parallel efficiency |")
    print("|---|---:|---:|---:|")
    print(f"| 1 process x 1 thread | {single['step_s'] * 1e3:.2f} | 1.00 | 100% |")
    print(
        f"| {n} processes x 1 thread (DDP, MPI) | {multi['step_s'] * 1e3:.2f} "
        f"| {speedup:.2f} | {speedup / n:.0%} |"
    )
    print(
        f"\nall_reduce of a {multi['allreduce_bytes'] / 2**20:.0f} MB float32 tensor, {n} "
        f"processes, loopback: {multi['allreduce_s'] * 1e3:.2f} ms median = {mb_s:.0f} MB/s"
    )


if __name__ == "__main__":
    main()
