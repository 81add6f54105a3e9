"""GCN training epoch: ember vs torch eager vs hand-written NumPy/SciPy, same graph and weights.

One epoch of ``examples/gcn.py`` at its default size (2708 nodes, 1433 features, hidden 16,
7 classes, full graph): forward with dropout 0.5 on the input of each layer, two products with
the sparse ``A_hat``, cross-entropy on the 140 labelled nodes, backward and an ``Adam`` step
(weight decay 5e-4). Implementations:

- ``ember``: the example's own model and ``train_epoch`` (``import ember as torch``);
- ``torch``: the same source with its ember imports swapped for torch's, torch's default
  thread count; ``torch 1 thread``: the same with ``torch.set_num_threads(1)``;
- ``numpy``: the same GCN with its backward and Adam written by hand, ``A_hat`` a SciPy CSR
  array (the floor ember's NumPy/SciPy primitives can reach).

Before timing, every implementation's loss and gradients (dropout off) are checked against
the NumPy version in float64, and one Adam step is checked to move the parameters alike. Then
the implementations take turns, one epoch each per round (so machine noise hits them alike),
or with ``--alone`` run back to back (no torch threads spinning between ember's epochs).

Run: ``python benchmarks/gcn.py [--repeats 30] [--alone] [--profile]``. Prints a markdown
table of the median ms per epoch and the ratio to torch eager; ``--profile`` adds the top of
a cProfile of ember's epochs by cumulative time.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import math
import statistics
import time
import types
from pathlib import Path

import numpy as np
from workloads import print_profile  # (this folder: the scripts run as python benchmarks/...)

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "gcn.py"
TO_TORCH = (
    ("import ember as torch\n", "import torch\n"),
    ("import ember.nn.functional as F\n", "import torch.nn.functional as F\n"),
    ("from ember import nn\n", "from torch import nn\n"),
)
P, LR, WD, BETAS, EPS = 0.5, 0.01, 5e-4, (0.9, 0.999), 1e-8


def load_example(library: str) -> types.ModuleType:
    """examples/gcn.py as written (``"ember"``) or with its imports swapped (``"torch"``)."""
    if library == "ember":
        spec = importlib.util.spec_from_file_location("gcn_example", EXAMPLE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    source = EXAMPLE.read_text()
    for old, new in TO_TORCH:
        if source.count(old) != 1:
            raise RuntimeError(f"examples/gcn.py no longer has the line {old!r}")
        source = source.replace(old, new)
    module = types.ModuleType("gcn_example_torch")
    exec(compile(source, str(EXAMPLE), "exec"), module.__dict__)
    return module


def scipy_adjacency(edges: np.ndarray, nodes: int):
    """``D^-1/2 (A + I) D^-1/2`` as a SciPy CSR array, built apart from the example's."""
    import scipy.sparse

    a = scipy.sparse.coo_array((np.ones(edges.shape[1]), tuple(edges)), shape=(nodes, nodes))
    a = (a + a.T + scipy.sparse.eye_array(nodes)).tocsr()
    d = 1 / np.sqrt(a.sum(1))
    return (scipy.sparse.diags_array(d) @ a @ scipy.sparse.diags_array(d)).tocsr()


class NumpyGCN:
    """The example's GCN with the backward and Adam by hand: weights in torch's layout
    (``(out, in)``), ``A_hat`` a SciPy CSR array and its transpose (built once)."""

    def __init__(self, data: dict, dtype, dropout: float = P, seed: int = 0):
        self.weights = {k: v.astype(dtype) for k, v in data["weights"].items()}
        self.m = {k: np.zeros_like(v) for k, v in self.weights.items()}
        self.v = {k: np.zeros_like(v) for k, v in self.weights.items()}
        self.t = 0
        self.adj = data["adj"].astype(dtype)
        self.adj_t = self.adj.T.tocsr()
        self.x = data["x"].astype(dtype)
        self.labels, self.train_idx = data["labels"], data["train_idx"]
        self.dropout = dropout
        self.last_grads: dict = {}
        self.rng = np.random.default_rng(seed)
        self.dtype = np.dtype(dtype)

    def _mask(self, shape, p: float):
        if p == 0:
            return None
        keep = self.rng.random(shape, dtype=np.float32) >= p
        return keep.astype(self.dtype) * self.dtype.type(1 / (1 - p))

    def loss_and_grads(self, p: float) -> tuple[float, dict]:
        w = self.weights
        mask0 = self._mask(self.x.shape, p)
        x1 = self.x if mask0 is None else self.x * mask0
        h1 = self.adj @ (x1 @ w["conv1.linear.weight"].T) + w["conv1.bias"]
        r1 = np.maximum(h1, 0)
        mask1 = self._mask(r1.shape, p)
        d1 = r1 if mask1 is None else r1 * mask1
        out = self.adj @ (d1 @ w["conv2.linear.weight"].T) + w["conv2.bias"]

        logits = out[self.train_idx]
        shifted = logits - logits.max(1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
        rows = np.arange(len(self.train_idx))
        loss = -log_probs[rows, self.labels[self.train_idx]].mean()
        g_logits = np.exp(log_probs)
        g_logits[rows, self.labels[self.train_idx]] -= 1
        g_out = np.zeros_like(out)
        g_out[self.train_idx] = g_logits / len(self.train_idx)

        g_z2 = self.adj_t @ g_out
        g_d1 = g_z2 @ w["conv2.linear.weight"]
        g_h1 = (g_d1 if mask1 is None else g_d1 * mask1) * (h1 > 0)
        g_z1 = self.adj_t @ g_h1
        # (x1.T @ g).T rather than g.T @ x1: OpenBLAS's 2-thread sgemm takes the second
        # 5-50x longer on a busy 2-core machine (16 rows by 1433 columns).
        grads = {
            "conv1.linear.weight": (x1.T @ g_z1).T,
            "conv1.bias": g_h1.sum(0),
            "conv2.linear.weight": (d1.T @ g_z2).T,
            "conv2.bias": g_out.sum(0),
        }
        return float(loss), grads

    def grads(self) -> dict:
        return self.last_grads

    def params(self) -> dict:
        return self.weights

    def step(self) -> float:
        """One epoch: forward, backward and torch's Adam (L2 weight decay, not AdamW's)."""
        loss, grads = self.loss_and_grads(self.dropout)
        self.last_grads = grads
        self.t += 1
        b1, b2 = BETAS
        c1, c2 = 1 - b1**self.t, math.sqrt(1 - b2**self.t)
        for k, w in self.weights.items():
            g = grads[k] + WD * w
            self.m[k] = b1 * self.m[k] + (1 - b1) * g
            self.v[k] = b2 * self.v[k] + (1 - b2) * g * g
            w -= (LR / c1) * self.m[k] / (np.sqrt(self.v[k]) / c2 + EPS)
        return loss


def setup(nodes: int, seed: int = 0) -> dict:
    """The example's graph, split, normalised features and initial weights (NumPy)."""
    gcn = load_example("ember")
    edges, features, labels = gcn.make_graph(nodes, seed)
    train_idx, _, _ = gcn.split(labels, seed)
    gcn.torch.manual_seed(seed)
    model = gcn.GCN(gcn.FEATURES, 16, gcn.CLASSES)
    return {
        "edges": edges,
        "x": features / features.sum(1, keepdims=True),
        "labels": labels,
        "train_idx": train_idx,
        "weights": {k: v.detach().numpy().copy() for k, v in model.state_dict().items()},
        "adj": scipy_adjacency(edges, nodes),
        "nodes": nodes,
    }


class LibraryGCN:
    """The example's model, optimizer and data in ember or torch, from ``data``'s weights."""

    def __init__(self, library: str, data: dict, dropout: float = P, threads: int | None = None):
        self.gcn = gcn = load_example(library)
        lib = self.lib = gcn.torch
        self.threads = threads
        self.x = lib.from_numpy(data["x"].copy())
        self.adj = gcn.normalized_adjacency(data["edges"], data["nodes"])
        self.labels = lib.from_numpy(data["labels"])
        self.train_idx = lib.from_numpy(data["train_idx"])
        self.model = gcn.GCN(gcn.FEATURES, 16, gcn.CLASSES, dropout=dropout)
        self.model.load_state_dict(
            {k: lib.from_numpy(v.copy()) for k, v in data["weights"].items()}
        )
        self.optimizer = lib.optim.Adam(self.model.parameters(), lr=LR, weight_decay=WD)

    def step(self) -> float:
        if self.threads is not None:
            self.lib.set_num_threads(self.threads)
        return self.gcn.train_epoch(
            self.model, self.optimizer, self.x, self.adj, self.labels, self.train_idx
        )

    def grads(self) -> dict:
        return {k: p.grad.numpy().copy() for k, p in self.model.named_parameters()}

    def params(self) -> dict:
        return {k: p.detach().numpy().copy() for k, p in self.model.named_parameters()}


def check(data: dict, torch) -> None:
    """Loss, gradients (dropout off) and one Adam step of each implementation against the
    float64 NumPy version; raises on a mismatch."""
    ref = NumpyGCN(data, np.float64, dropout=0.0)
    ref_loss, ref_grads = ref.loss_and_grads(p=0.0)
    ref.step()
    impls = {
        "ember": LibraryGCN("ember", data, dropout=0.0),
        "torch": LibraryGCN("torch", data, dropout=0.0, threads=torch.get_num_threads()),
        "numpy": NumpyGCN(data, np.float32, dropout=0.0),
    }
    for name, impl in impls.items():
        loss = impl.step()
        if abs(loss - ref_loss) > 1e-5:
            raise AssertionError(f"{name}: loss {loss} != float64 reference {ref_loss}")
        for k, g in impl.grads().items():
            scale = np.abs(ref_grads[k]).max()  # about 1e-3: the inputs are normalised
            np.testing.assert_allclose(
                g, ref_grads[k], rtol=1e-4, atol=1e-4 * scale, err_msg=f"{name} d{k}"
            )
        for k, w in impl.params().items():
            np.testing.assert_allclose(w, ref.weights[k], rtol=0, atol=1e-5, err_msg=f"{name} {k}")


def time_epochs(impls: dict, warmup: int, repeats: int, alone: bool) -> dict:
    """Median seconds per epoch of each implementation, after ``warmup`` epochs."""
    times = {name: [] for name in impls}

    def one(name):
        gc.collect()
        t0 = time.perf_counter()
        impls[name].step()
        times[name].append(time.perf_counter() - t0)

    if alone:
        for name in impls:
            for _ in range(warmup + repeats):
                one(name)
    else:
        for _ in range(warmup + repeats):
            for name in impls:
                one(name)
    return {name: statistics.median(t[warmup:]) for name, t in times.items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2708)
    parser.add_argument("--repeats", type=int, default=30, help="timed epochs (default 30)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument(
        "--dropout", type=float, default=P, help="0 leaves the random masks out (default 0.5)"
    )
    parser.add_argument("--alone", action="store_true", help="time each library back to back")
    parser.add_argument("--profile", action="store_true", help="cProfile ember's epochs")
    args = parser.parse_args(argv)

    import torch

    threads = torch.get_num_threads()
    data = setup(args.nodes)
    check(data, torch)
    impls = {
        "ember eager": LibraryGCN("ember", data, args.dropout),
        "torch eager": LibraryGCN("torch", data, args.dropout, threads=threads),
        "torch 1 thread": LibraryGCN("torch", data, args.dropout, threads=1),
        "numpy + scipy (manual backward)": NumpyGCN(data, np.float32, args.dropout),
    }
    medians = time_epochs(impls, args.warmup, args.repeats, args.alone)
    how = "each back to back" if args.alone else "interleaved, one epoch each per round"
    print(
        f"GCN epoch (forward + backward + Adam), {args.nodes} nodes, {data['adj'].nnz} "
        f"nonzeros in A_hat, float32, dropout {args.dropout}; median of {args.repeats} after "
        f"{args.warmup} warm-up, {how}; torch default threads {threads}"
    )
    print("\n| implementation | ms / epoch | vs torch eager |\n| --- | --- | --- |")
    for name, s in medians.items():
        print(f"| {name} | {s * 1e3:.2f} | {s / medians['torch eager']:.2f}x |")
    if args.profile:
        print_profile(impls["ember eager"].step, args.repeats, top=25, sort="cumtime")


if __name__ == "__main__":
    main()
