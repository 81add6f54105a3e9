"""nn.SyncBatchNorm: BatchNorm in one process (compared with torch), its conversion of a
model's BatchNorm layers, and, in two MPI processes, statistics and gradients equal to
torch's BatchNorm over the two ranks' batches concatenated."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

import ember

SRC = Path(__file__).resolve().parents[2] / "src"


def _x(shape=(6, 3, 4)):
    return np.sin(np.arange(np.prod(shape), dtype=np.float64) * 0.7).reshape(shape) * 2 + 0.5


@pytest.mark.parametrize("shape", [(6, 3), (6, 3, 4), (2, 3, 2, 2), (2, 3, 2, 1, 2)])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_single_process_is_batchnorm(shape, momentum):
    outs = []
    for lib in (torch, ember):
        bn = lib.nn.SyncBatchNorm(3, momentum=momentum).double()
        with lib.no_grad():
            bn.weight.copy_(lib.tensor([1.0, 2.0, -0.5], dtype=lib.float64))
            bn.bias.copy_(lib.tensor([0.1, 0.0, 0.3], dtype=lib.float64))
        x = lib.tensor(_x(shape), requires_grad=True)
        w = lib.tensor(np.cos(np.arange(np.prod(shape))).reshape(shape))
        y = bn(x)
        y = bn(x * 2)  # twice: the running statistics' update with momentum None too
        y.mul(w).sum().backward()
        bn.eval()
        z = bn(x)
        outs.append(
            [
                t.detach().numpy()
                for t in (y, z, x.grad, bn.weight.grad, bn.bias.grad, bn.running_mean)
            ]
            + [bn.running_var.numpy(), int(bn.num_batches_tracked)]
        )
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_repr_errors_and_signature():
    assert repr(ember.nn.SyncBatchNorm(4)) == repr(torch.nn.SyncBatchNorm(4))
    for lib in (torch, ember):
        with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
            lib.nn.SyncBatchNorm(3)(lib.zeros(3))
        with pytest.raises(ValueError, match="number of input channels should be non-zero"):
            lib.nn.SyncBatchNorm(0)(lib.zeros(2, 0))
    assert ember.nn.SyncBatchNorm(2, process_group="g").process_group == "g"


def test_convert_sync_batchnorm():
    results = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        model = lib.nn.Sequential(
            lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3), lib.nn.Sequential(lib.nn.BatchNorm2d(3))
        )
        model[1].weight.data.fill_(2.0)
        model[2][0].running_mean.fill_(1.5)
        model.eval()
        converted = lib.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        assert type(converted[1]).__name__ == "SyncBatchNorm"
        assert type(converted[2][0]).__name__ == "SyncBatchNorm"
        assert converted[1].weight is model[1].weight
        assert not converted[1].training
        results.append(
            (
                repr(converted),
                converted[1].weight.detach().numpy().tolist(),
                converted[2][0].running_mean.numpy().tolist(),
            )
        )
        top = lib.nn.SyncBatchNorm.convert_sync_batchnorm(lib.nn.BatchNorm1d(5))
        assert type(top).__name__ == "SyncBatchNorm" and top.num_features == 5
    assert results[0] == results[1]


_WORKER = """
import json, sys
import numpy as np
sys.path.insert(0, {src!r})
import ember
import ember.distributed as dist

dist.init_process_group("mpi")
rank = dist.get_rank()
full = np.sin(np.arange(8 * 3 * 4, dtype=np.float64) * 0.7).reshape(8, 3, 4) * 2 + 0.5
wfull = np.cos(np.arange(8 * 3 * 4, dtype=np.float64)).reshape(8, 3, 4)
part = slice(0, 3) if rank == 0 else slice(3, 8)  # unequal batches
bn = ember.nn.SyncBatchNorm(3).double()
with ember.no_grad():
    bn.weight.copy_(ember.tensor([1.0, 2.0, -0.5], dtype=ember.float64))
x = ember.tensor(full[part], requires_grad=True)
y = bn(x)
(y * ember.tensor(wfull[part])).sum().backward()
out = dict(
    y=y.detach().tolist(), gx=x.grad.tolist(), gw=bn.weight.grad.tolist(),
    gb=bn.bias.grad.tolist(), rm=bn.running_mean.tolist(), rv=bn.running_var.tolist(),
)
with open(sys.argv[1] + f"/rank{{rank}}.json", "w") as f:
    json.dump(out, f)
dist.destroy_process_group()
"""


def _mpirun():
    local = Path(sys.executable).with_name("mpirun")
    launcher = str(local) if local.exists() else shutil.which("mpirun")
    if not launcher:
        pytest.skip("no mpirun")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    version = subprocess.run([launcher, "--version"], capture_output=True, text=True, env=env)
    extra = ["--oversubscribe"] if "Open MPI" in version.stdout + version.stderr else []
    return [launcher, *extra, "-n", "2"], env


def test_two_processes_match_batchnorm_of_the_whole_batch(tmp_path):
    pytest.importorskip("mpi4py")
    script = tmp_path / "worker.py"
    script.write_text(textwrap.dedent(_WORKER.format(src=str(SRC))))
    cmd, env = _mpirun()
    proc = subprocess.run(
        [*cmd, sys.executable, str(script), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]

    full = _x((8, 3, 4))
    wfull = np.cos(np.arange(8 * 3 * 4, dtype=np.float64)).reshape(8, 3, 4)
    bn = torch.nn.BatchNorm1d(3).double()
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([1.0, 2.0, -0.5], dtype=torch.float64))
    x = torch.tensor(full, requires_grad=True)
    y = bn(x)
    (y * torch.tensor(wfull)).sum().backward()
    np.testing.assert_allclose(np.concatenate([r["y"] for r in ranks]), y.detach().numpy())
    np.testing.assert_allclose(np.concatenate([r["gx"] for r in ranks]), x.grad.numpy())
    np.testing.assert_allclose(np.sum([r["gw"] for r in ranks], 0), bn.weight.grad.numpy())
    np.testing.assert_allclose(np.sum([r["gb"] for r in ranks], 0), bn.bias.grad.numpy())
    for r in ranks:
        np.testing.assert_allclose(r["rm"], bn.running_mean.numpy())
        np.testing.assert_allclose(r["rv"], bn.running_var.numpy())
