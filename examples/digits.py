"""Train a small convolutional network on the 8x8 handwritten digits with ember.

    python examples/digits.py --epochs 30 --out-dir runs/digits

The script is written exactly as one would write it with PyTorch (``import ember as
torch``): a ``Dataset``/``DataLoader``, an ``nn.Sequential`` conv net, ``Adam`` and
``CrossEntropyLoss`` with a cosine learning-rate schedule, a checkpoint saved with
``torch.save(model.state_dict())`` and reloaded into a fresh model, and the loss/accuracy
curves drawn as an SVG file.

The data are the 1797 digits of UCI's optical-recognition set as scikit-learn ships them,
in ``examples/data/digits.csv.gz`` (nothing is downloaded), split 80/20 per class. The
``demo`` extra (``pip install -e ".[demo]"`` in the ember clone) brings tqdm for the progress
bar, which is optional.

Data-parallel over MPI (the ``distributed`` extra), as one would with torch's DDP::

    mpirun -n 2 python examples/digits.py --distributed --epochs 3

Each process trains a ``DistributedDataParallel`` replica on its ``DistributedSampler``
share of every epoch, with a per-process batch of ``batch_size // world_size`` (the
same global batch as a single process); rank 0 prints, saves and plots.

TensorBoard logs (the ``tensorboard`` extra), as with ``torch.utils.tensorboard``::

    python examples/digits.py --tensorboard runs/digits-tb && tensorboard --logdir runs/digits-tb

write the model's graph, then per epoch the training loss, the test accuracy and a
histogram of the first convolution's weights.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from _common import require, write_line_charts  # examples/_common.py (the script's folder)

import ember as torch
import ember.nn as nn
from ember.utils.data import DataLoader, TensorDataset

DATA = Path(__file__).resolve().parent / "data" / "digits.csv.gz"


def build_model() -> nn.Module:
    """Conv(1->16) - ReLU - MaxPool - Conv(16->32) - ReLU - MaxPool - Flatten - MLP."""
    return nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, padding=1),  # 16 x 8 x 8
        nn.ReLU(),
        nn.MaxPool2d(2),  # 16 x 4 x 4
        nn.Conv2d(16, 32, kernel_size=3, padding=1),  # 32 x 4 x 4
        nn.ReLU(),
        nn.MaxPool2d(2),  # 32 x 2 x 2
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


def load_data(seed: int, test_fraction: float = 0.2):
    """Digits as (N, 1, 8, 8) float32 tensors in [0, 1]: ``test_fraction`` of each digit's
    images, drawn at random from ``seed``, for testing, the rest for training."""
    table = np.loadtxt(DATA, delimiter=",", dtype=np.int64)  # 64 pixels (0..16), the label
    x = (table[:, :64] / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    y = table[:, 64]
    rng = np.random.default_rng(seed)
    test = np.zeros(len(y), dtype=bool)
    for digit in range(10):
        members = rng.permutation(np.flatnonzero(y == digit))
        test[members[: round(test_fraction * len(members))]] = True
    return (
        TensorDataset(torch.from_numpy(x[~test]), torch.from_numpy(y[~test])),
        TensorDataset(torch.from_numpy(x[test]), torch.from_numpy(y[test])),
    )


def evaluate(model: nn.Module, loader: DataLoader, loss_fn) -> tuple[float, float]:
    """Mean loss and accuracy of ``model`` over ``loader`` (eval mode, no grad)."""
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for xb, yb in loader:
            logits = model(xb)
            total_loss += loss_fn(logits, yb).item() * len(yb)
            correct += (logits.argmax(1) == yb).sum().item()
            count += len(yb)
    return total_loss / count, correct / count


def _progress(iterable, enabled: bool, desc: str):
    if not enabled:
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is optional: run without a bar
        return iterable
    return tqdm(iterable, desc=desc, leave=False, file=sys.stdout, dynamic_ncols=True)


def plot_curves(history: dict, path: Path) -> None:
    """Loss and accuracy per epoch, side by side, written as an SVG file."""
    epochs = list(range(1, len(history["train_loss"]) + 1))

    def percent(values):
        return [v * 100 for v in values]

    write_line_charts(
        path,
        [
            ("Loss", "epoch", "cross-entropy loss", [
                ("train", epochs, history["train_loss"], "dots"),
                ("test", epochs, history["test_loss"], "dots"),
            ]),
            ("Accuracy", "epoch", "accuracy (%)", [
                ("train", epochs, percent(history["train_acc"]), "dots"),
                ("test", epochs, percent(history["test_acc"]), "dots"),
            ], "bottom"),
        ],
    )  # fmt: skip


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog='The "demo" extra (pip install -e ".[demo]") brings tqdm for a progress bar; '
        '--tensorboard needs the "tensorboard" extra, --distributed the "distributed" extra '
        "and mpirun.",
    )
    p.add_argument("--epochs", type=int, default=30, help="training epochs (default 30)")
    p.add_argument("--batch-size", type=int, default=32, help="mini-batch size (default 32)")
    p.add_argument("--lr", type=float, default=5e-3, help="Adam learning rate (default 5e-3)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument(
        "--out-dir",
        type=Path,
        default=Path("runs/digits"),
        help="checkpoint, plot and summary directory (default runs/digits)",
    )
    p.add_argument("--no-progress", action="store_true", help="disable the tqdm progress bar")
    p.add_argument(
        "--compile",
        action="store_true",
        help="run the model through torch.compile (ember.compile: generated NumPy code)",
    )
    p.add_argument(
        "--distributed",
        action="store_true",
        help="data-parallel training over MPI: start with `mpirun -n N python ...`",
    )
    p.add_argument(
        "--tensorboard",
        type=Path,
        default=None,
        metavar="DIR",
        help="write TensorBoard logs (graph, loss, accuracy, weights) to DIR (default: off)",
    )
    return p.parse_args(argv)


def main(argv=None) -> dict:
    args = parse_args(argv)
    start = time.perf_counter()
    # Check the optional packages first: fail before training, not in the middle of it.
    if args.tensorboard is not None:
        require("digits.py", "tensorboard", "tensorboard", "tensorboard")
    if args.distributed:
        require("digits.py", "mpi4py", "mpi4py", "distributed")
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    rank, world = 0, 1
    if args.distributed:
        import ember.distributed as dist

        dist.init_process_group(backend="mpi")
        rank, world = dist.get_rank(), dist.get_world_size()
        if rank != 0:  # one process reports
            args.no_progress = True
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    args.out_dir.mkdir(parents=True, exist_ok=True)

    train_set, test_set = load_data(args.seed)
    if args.distributed:
        from ember.utils.data.distributed import DistributedSampler

        sampler = DistributedSampler(train_set, num_replicas=world, rank=rank, seed=args.seed)
        train_loader = DataLoader(
            train_set, batch_size=max(1, args.batch_size // world), sampler=sampler
        )
    else:
        train_loader = DataLoader(
            train_set,
            batch_size=args.batch_size,
            shuffle=True,
            generator=torch.Generator().manual_seed(args.seed),
        )
    train_eval_loader = DataLoader(train_set, batch_size=512)
    test_loader = DataLoader(test_set, batch_size=512)

    model = build_model()
    first_layer = model[0]
    writer = None
    if args.tensorboard is not None and rank == 0:
        # Deferred: TensorBoard is an optional extra, needed only with --tensorboard.
        from ember.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(args.tensorboard)
        writer.add_graph(model, train_set.tensors[0][:1])
    if args.distributed:
        from ember.nn.parallel import DistributedDataParallel

        model = DistributedDataParallel(model)  # rank 0's initial weights everywhere
    # The compiled module shares the model's parameters; it captures each input signature
    # (batch size, train/eval, grad mode) once and replays generated code afterwards.
    forward = torch.compile(model) if args.compile else model
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    # Cosine decay to zero: large steps early, a settled model at the end.
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()
    n_params = sum(p.numel() for p in model.parameters())
    print(model)
    print(
        f"{n_params} parameters; {len(train_set)} training and {len(test_set)} test images; "
        f"{args.epochs} epochs, batch size {args.batch_size}, lr {args.lr}, seed {args.seed}"
    )

    history = {"train_loss": [], "train_acc": [], "test_loss": [], "test_acc": []}
    for epoch in range(1, args.epochs + 1):
        if args.distributed:
            sampler.set_epoch(epoch)
        model.train()
        running, seen = 0.0, 0
        bar = _progress(train_loader, not args.no_progress, f"epoch {epoch}/{args.epochs}")
        for xb, yb in bar:
            optimizer.zero_grad()
            loss = loss_fn(forward(xb), yb)
            loss.backward()
            optimizer.step()
            running += loss.item() * len(yb)
            seen += len(yb)
            if bar is not train_loader:
                bar.set_postfix(loss=f"{running / seen:.4f}", refresh=False)
        scheduler.step()
        train_loss, train_acc = evaluate(forward, train_eval_loader, loss_fn)
        test_loss, test_acc = evaluate(forward, test_loader, loss_fn)
        for key, value in zip(history, (train_loss, train_acc, test_loss, test_acc)):
            history[key].append(value)
        if writer is not None:
            writer.add_scalar("loss/train", running / seen, epoch)
            writer.add_scalar("accuracy/test", test_acc, epoch)
            writer.add_histogram("weights/conv1", first_layer.weight, epoch)
        print(
            f"epoch {epoch:2d}/{args.epochs}  loss {running / seen:.4f}  "
            f"train acc {train_acc * 100:6.2f}%  test loss {test_loss:.4f}  "
            f"test acc {test_acc * 100:6.2f}%  ({time.perf_counter() - start:5.1f} s)"
        )

    if writer is not None:
        writer.close()
        print(f"tensorboard: {args.tensorboard} (tensorboard --logdir {args.tensorboard})")
    if args.compile:
        print("compiled signatures:\n" + forward.explain())
    if args.distributed:
        model = model.module
        # every replica applied the same averaged gradients: check they ended equal
        flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
        ref = flat.clone()
        dist.broadcast(ref, src=0)
        if not torch.equal(flat, ref):
            raise RuntimeError(f"rank {rank}'s replica drifted from rank 0's")
        if rank != 0:
            dist.destroy_process_group()
            return {"rank": rank}

    ckpt = args.out_dir / "digits_cnn.safetensors"
    torch.save(model.state_dict(), ckpt)
    reloaded = build_model()
    reloaded.load_state_dict(torch.load(ckpt))
    _, reloaded_acc = evaluate(reloaded, test_loader, loss_fn)
    if reloaded_acc != history["test_acc"][-1]:
        raise RuntimeError(
            f"reloaded checkpoint scores {reloaded_acc:.4f}, expected {history['test_acc'][-1]:.4f}"
        )
    print(f"checkpoint: {ckpt} (reloaded: test accuracy {reloaded_acc * 100:.2f}%)")

    plot = args.out_dir / "digits_curves.svg"
    plot_curves(history, plot)
    print(f"curves:     {plot}")

    elapsed = time.perf_counter() - start
    summary = {
        "epochs": args.epochs,
        "test_accuracy": history["test_acc"][-1],
        "train_accuracy": history["train_acc"][-1],
        "seconds": round(elapsed, 2),
        "checkpoint": str(ckpt),
        "plot": str(plot),
    }
    if args.distributed:
        summary["world_size"] = world
        dist.destroy_process_group()
    (args.out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"final test accuracy {history['test_acc'][-1] * 100:.2f}% in {elapsed:.1f} s")
    return summary


if __name__ == "__main__":
    main()
