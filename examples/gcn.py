"""Train a two-layer graph convolutional network (Kipf & Welling 2017) on a synthetic
citation-like graph with ember.

    python examples/gcn.py [--nodes 2708] [--epochs 200] [--no-graph]

The script is written as one would write it with PyTorch (``import ember as torch``; change
its three ``ember`` imports to ``torch`` and it runs under PyTorch): the model is
``H = A_hat relu(A_hat X W1) W2`` with ``A_hat = D^-1/2 (A + I) D^-1/2`` a sparse COO tensor,
multiplied through ``torch.sparse.mm``; dropout 0.5 on the input of each layer, hidden size
16, ``Adam`` (lr 0.01, weight decay 5e-4) and ``F.cross_entropy`` on the labelled nodes only,
full-batch. The test accuracy reported is the one at the epoch of best validation accuracy.

No data set is downloaded: the graph is a stochastic block model drawn with NumPy from
``--seed``, shaped like Cora (2708 nodes, 7 classes, average degree about 4.5, 70% of it
within the class), and each node has a noisy bag of words (1433 binary features, about 18
words per node, 35% of them from its class's 204 preferred words, the rest uniform
over the vocabulary; rows normalised to sum to 1). The split is Planetoid's: 20 labelled
nodes per class for training, 500 for validation, 1000 for testing.

The words alone are too noisy to classify well from 140 labels: ``--no-graph`` trains the
same network with ``A_hat = I`` (an MLP) as the baseline. Measured with the defaults (seed 0)
on a 2-core machine shared with other jobs:

    GCN         test accuracy 86.1%  (best validation 90.2%), 11 s
    --no-graph  test accuracy 50.0%  (best validation 51.2%), 11 s

(seeds 1 and 2: 85.4% vs 53.5%, 90.1% vs 57.0%; under PyTorch, whose random streams differ,
87.6% vs 51.4%). The 11 s are 200 training epochs of about 35 ms, 60% of it drawing the
dropout masks, plus an evaluation pass per epoch; with one BLAS thread
(``OPENBLAS_NUM_THREADS=1``) the run takes 6.4 s there. ``benchmarks/gcn.py`` times the
epoch against torch.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ember as torch
import ember.nn.functional as F
from ember import nn

CLASSES = 7
FEATURES = 1433
DEGREE = 4.5  # expected average degree (Cora's is 3.9 + the self-loop)
HOMOPHILY = 0.7  # expected share of a node's edges within its class (Cora's is 0.81)
WORDS = 18  # expected words per node (Cora's is 18)
SIGNAL = 0.35  # share of a node's words drawn from its class's preferred words


def make_graph(nodes: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A stochastic block model with bag-of-words features: ``(edges, features, labels)``,
    ``edges`` int64 (2, E) with each undirected edge once, ``features`` float32 binary
    (nodes, FEATURES), ``labels`` int64 (nodes,).

    The edge probabilities are set from the expected degrees rather than fixed, so a smaller
    graph (as in the tests) keeps Cora's sparsity.
    """
    rng = np.random.default_rng(seed)
    labels = rng.integers(CLASSES, size=nodes)
    members = [np.flatnonzero(labels == c) for c in range(CLASSES)]
    p_in = DEGREE * HOMOPHILY / (nodes / CLASSES - 1)
    p_out = DEGREE * (1 - HOMOPHILY) / (nodes - nodes / CLASSES)
    src, dst = [], []
    for a in range(CLASSES):
        for b in range(a, CLASSES):
            pairs = len(members[a]) * (len(members[b]) - (a == b))
            count = rng.binomial(pairs // (1 + (a == b)), p_in if a == b else p_out)
            src.append(rng.choice(members[a], count))
            dst.append(rng.choice(members[b], count))
    src, dst = np.concatenate(src), np.concatenate(dst)
    keep = src != dst  # a block's pairs drawn with replacement: drop loops and repeats
    pairs = np.unique(np.sort(np.stack([src[keep], dst[keep]]), axis=0), axis=1)

    # Each class prefers its own slice of a shuffled vocabulary.
    vocab = rng.permutation(FEATURES)[: FEATURES // CLASSES * CLASSES].reshape(CLASSES, -1)
    counts = 1 + rng.poisson(WORDS - 1, nodes)
    node = np.repeat(np.arange(nodes), counts)
    from_class = rng.random(len(node)) < SIGNAL
    words = rng.integers(FEATURES, size=len(node))
    words[from_class] = vocab[
        labels[node[from_class]], rng.integers(vocab.shape[1], size=from_class.sum())
    ]
    features = np.zeros((nodes, FEATURES), np.float32)
    features[node, words] = 1.0
    return pairs.astype(np.int64), features, labels.astype(np.int64)


def split(labels: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Planetoid's split: 20 training nodes per class, then 500 validation and 1000 test
    nodes among the rest (fewer on a small graph: a third and the remainder)."""
    rng = np.random.default_rng(seed + 1)
    order = rng.permutation(len(labels))
    train = np.concatenate([order[labels[order] == c][:20] for c in range(CLASSES)])
    rest = order[~np.isin(order, train)]
    n_val = min(500, len(rest) // 3)
    return train, rest[:n_val], rest[n_val : n_val + 1000]


def normalized_adjacency(edges: np.ndarray, nodes: int, graph: bool = True):
    """``D^-1/2 (A + I) D^-1/2`` as a sparse COO tensor (``graph=False``: the identity, which
    turns the GCN into an MLP on the node features alone)."""
    loops = np.arange(nodes)
    if graph:
        rows = np.concatenate([edges[0], edges[1], loops])
        cols = np.concatenate([edges[1], edges[0], loops])
    else:
        rows = cols = loops
    degree = np.bincount(rows, minlength=nodes).astype(np.float32)
    values = (degree[rows] * degree[cols]) ** -0.5
    indices = torch.from_numpy(np.stack([rows, cols]))
    return torch.sparse_coo_tensor(
        indices, torch.from_numpy(values), (nodes, nodes), check_invariants=True
    ).coalesce()


class GraphConv(nn.Module):
    """One graph convolution ``A_hat (X W) + b``: the features are projected first, so the
    sparse product runs on ``out_features`` columns rather than ``in_features``."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_features))
        nn.init.xavier_uniform_(self.linear.weight)  # Glorot, as in Kipf & Welling

    def forward(self, x, adj):
        return torch.sparse.mm(adj, self.linear(x)) + self.bias


class GCN(nn.Module):
    """Two graph convolutions with ReLU and dropout: ``A_hat relu(A_hat X W1) W2``."""

    def __init__(self, in_features: int, hidden: int, classes: int, dropout: float = 0.5):
        super().__init__()
        self.conv1 = GraphConv(in_features, hidden)
        self.conv2 = GraphConv(hidden, classes)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.dropout(x, self.dropout, self.training)
        x = F.relu(self.conv1(x, adj))
        x = F.dropout(x, self.dropout, self.training)
        return self.conv2(x, adj)


def train_epoch(model, optimizer, x, adj, labels, train_idx) -> float:
    """One full-batch step on the labelled nodes; returns the loss."""
    model.train()
    optimizer.zero_grad()
    out = model(x, adj)
    loss = F.cross_entropy(out[train_idx], labels[train_idx])
    loss.backward()
    optimizer.step()
    return loss.item()


@torch.no_grad()
def accuracies(model, x, adj, labels, *index_sets) -> list[float]:
    """The accuracy on each set of nodes, from one forward pass without dropout."""
    model.eval()
    pred = model(x, adj).argmax(1)
    return [(pred[idx] == labels[idx]).float().mean().item() for idx in index_sets]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Needs no optional package (ember and NumPy only); writes no files.",
    )
    p.add_argument("--nodes", type=int, default=2708, help="graph size (default 2708, Cora's)")
    p.add_argument("--epochs", type=int, default=200, help="full-batch steps (default 200)")
    p.add_argument("--seed", type=int, default=0, help="seed of the graph and weights (0)")
    p.add_argument("--hidden", type=int, default=16, help="hidden units (default 16)")
    p.add_argument("--lr", type=float, default=0.01, help="Adam learning rate (default 0.01)")
    p.add_argument("--no-graph", action="store_true", help="baseline MLP: A_hat = I")
    p.add_argument("--quiet", action="store_true", help="print only the final result")
    return p.parse_args(argv)


def main(argv=None) -> dict:
    args = parse_args(argv)
    start = time.perf_counter()
    torch.manual_seed(args.seed)
    edges, features, labels_np = make_graph(args.nodes, args.seed)
    train_idx, val_idx, test_idx = (torch.from_numpy(i) for i in split(labels_np, args.seed))
    x = torch.from_numpy(features)
    x = x / x.sum(1, keepdim=True)  # every node has at least one word
    labels = torch.from_numpy(labels_np)
    adj = normalized_adjacency(edges, args.nodes, graph=not args.no_graph)

    model = GCN(FEATURES, args.hidden, CLASSES)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)
    name = "MLP (A_hat = I)" if args.no_graph else "GCN"
    if not args.quiet:
        print(
            f"{name}: {args.nodes} nodes, {edges.shape[1]} edges, {FEATURES} features, "
            f"{CLASSES} classes; {len(train_idx)} training, {len(val_idx)} validation, "
            f"{len(test_idx)} test nodes"
        )
    best_val, best_test, best_epoch = -1.0, 0.0, 0
    for epoch in range(1, args.epochs + 1):
        loss = train_epoch(model, optimizer, x, adj, labels, train_idx)
        train_acc, val_acc, test_acc = accuracies(
            model, x, adj, labels, train_idx, val_idx, test_idx
        )
        if val_acc > best_val:
            best_val, best_test, best_epoch = val_acc, test_acc, epoch
        if not args.quiet and (epoch % 10 == 0 or epoch == 1):
            print(
                f"epoch {epoch:3d}  loss {loss:.4f}  train acc {train_acc:6.1%}  "
                f"val acc {val_acc:6.1%}  ({time.perf_counter() - start:4.1f} s)"
            )
    seconds = time.perf_counter() - start
    print(
        f"{name}: test accuracy {best_test:.1%} at epoch {best_epoch} (best validation "
        f"{best_val:.1%}; last epoch {test_acc:.1%}), {seconds:.1f} s"
    )
    return {
        "test_acc": best_test,
        "val_acc": best_val,
        "best_epoch": best_epoch,
        "final_test_acc": test_acc,
        "final_loss": loss,
        "seconds": seconds,
    }


if __name__ == "__main__":
    main()
