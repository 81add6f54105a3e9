"""Train a character-level LSTM language model on Python's own standard library with ember.

    python examples/charlm.py --steps 200 --out-dir runs/charlm

The script is written as one would write it with PyTorch (``import ember as torch``):
an ``nn.Embedding`` -> ``nn.LSTM`` -> ``nn.Linear`` model, random contiguous windows of
the text as mini-batches, ``AdamW`` with a cosine learning-rate schedule and gradient
clipping, ``F.cross_entropy`` on the next character, and text sampled at the end with
``torch.multinomial`` on the temperature-scaled softmax of the logits.

The corpus ships with Python, nothing is downloaded: the source of the stdlib modules in
``STDLIB_FILES`` (read from ``sysconfig.get_paths()["stdlib"]``), concatenated in that
order and cut to the first ``MAX_CHARS`` characters, so it is fixed for a given Python
version (``summary.json`` records the version, the files and a SHA-256 of the text). The
first 90% trains, the last 10% validates.

The reference is the unigram baseline: the entropy (nats per character) of the training
text's character frequencies, i.e. the loss of the best model that ignores context. The
default run (200 steps, about a minute on 2 CPU cores) ends with a validation loss about
1 nat below it. Writes ``loss_curve.svg`` and ``summary.json`` to ``--out-dir``.

The ``demo`` extra (``pip install -e ".[demo]"`` in the ember clone) brings tqdm for the
progress bar, which is optional.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import platform
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path

from _common import write_line_charts  # examples/_common.py (the script's folder)

import ember as torch
import ember.nn.functional as F
from ember import nn

# Concatenated in this order, then cut to MAX_CHARS (all present since Python 3.8).
STDLIB_FILES = (
    "textwrap.py",
    "heapq.py",
    "functools.py",
    "contextlib.py",
    "random.py",
    "queue.py",
    "sched.py",
    "abc.py",
    "glob.py",
    "fnmatch.py",
)
MAX_CHARS = 150_000


def load_text() -> str:
    """The stdlib source corpus (deterministic for a given Python version)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    parts = [(stdlib / name).read_text(encoding="utf-8") for name in STDLIB_FILES]
    return "".join(parts)[:MAX_CHARS]


def unigram_entropy(text: str) -> float:
    """Entropy in nats per character of the character frequencies of ``text``."""
    n = len(text)
    return -sum(c / n * math.log(c / n) for c in Counter(text).values())


class CharLSTM(nn.Module):
    """Embedding -> LSTM -> Linear: the logits of the next character at every position."""

    def __init__(self, vocab_size: int, embed_dim: int = 64, hidden_size: int = 192):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, vocab_size)

    def forward(self, idx, state=None):
        out, state = self.lstm(self.embed(idx), state)
        return self.head(out), state


def get_batch(data, batch_size: int, seq_len: int, generator):
    """``batch_size`` random windows of ``data``: inputs and the next-character targets."""
    starts = torch.randint(0, len(data) - seq_len - 1, (batch_size,), generator=generator)
    x = torch.stack([data[i : i + seq_len] for i in starts.tolist()])
    y = torch.stack([data[i + 1 : i + seq_len + 1] for i in starts.tolist()])
    return x, y


@torch.no_grad()
def estimate_loss(model, data, batch_size: int, seq_len: int, batches: int, seed: int) -> float:
    """Mean cross-entropy over a fixed set of windows (the same ones at every evaluation)."""
    model.eval()
    generator = torch.Generator().manual_seed(seed)
    total = 0.0
    for _ in range(batches):
        x, y = get_batch(data, batch_size, seq_len, generator)
        logits, _ = model(x)
        total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)).item()
    model.train()
    return total / batches


@torch.no_grad()
def sample(model, prompt_ids, length: int, temperature: float, generator) -> list[int]:
    """Feed the prompt, then draw ``length`` characters one at a time, carrying the state."""
    model.eval()
    logits, state = model(torch.tensor([prompt_ids]))
    out = []
    for _ in range(length):
        probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)
        nxt = torch.multinomial(probs, num_samples=1, generator=generator)  # (1, 1)
        out.append(nxt.item())
        logits, state = model(nxt, state)
    model.train()
    return out


def plot_curves(history: dict, baseline: float, path: Path) -> None:
    """Training loss per step, validation loss per evaluation, and the unigram baseline,
    written as an SVG file."""
    steps = list(range(1, len(history["train_loss"]) + 1))
    write_line_charts(
        path,
        [
            ("character-level LSTM on stdlib source", "step", "cross-entropy (nats / char)", [
                ("train (per batch)", steps, history["train_loss"], "line"),
                ("validation", history["eval_step"], history["val_loss"], "dots"),
                (f"unigram baseline {baseline:.2f}", [steps[0], steps[-1]], [baseline] * 2,
                 "dashed"),
            ]),
        ],
    )  # fmt: skip


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is optional: run without a bar
        return None
    return tqdm(total=total, desc="train", file=sys.stdout, dynamic_ncols=True)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog='The "demo" extra (pip install -e ".[demo]") brings tqdm for a progress bar.',
    )
    p.add_argument("--steps", type=int, default=200, help="optimizer steps (default 200)")
    p.add_argument("--batch-size", type=int, default=32, help="windows per batch (default 32)")
    p.add_argument("--seq-len", type=int, default=64, help="characters per window (default 64)")
    p.add_argument("--lr", type=float, default=3e-3, help="AdamW peak learning rate (3e-3)")
    p.add_argument("--eval-every", type=int, default=25, help="steps between validations")
    p.add_argument("--eval-batches", type=int, default=4, help="batches per validation")
    p.add_argument("--sample-len", type=int, default=400, help="characters to sample")
    p.add_argument("--temperature", type=float, default=0.8, help="sampling temperature")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument(
        "--out-dir",
        type=Path,
        default=Path("runs/charlm"),
        help="plot and summary directory (default runs/charlm)",
    )
    p.add_argument("--no-progress", action="store_true", help="disable the tqdm progress bar")
    p.add_argument("--device", default="cpu", choices=["cpu"], help="ember runs on the CPU")
    return p.parse_args(argv)


def main(argv=None) -> dict:
    args = parse_args(argv)
    start = time.perf_counter()
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    args.out_dir.mkdir(parents=True, exist_ok=True)

    text = load_text()
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long, device=device)
    n_train = int(0.9 * len(data))
    train_data, val_data = data[:n_train], data[n_train:]
    baseline = unigram_entropy(text[:n_train])

    model = CharLSTM(len(chars)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(
        optimizer, T_max=args.steps, eta_min=args.lr / 10
    )
    n_params = sum(p.numel() for p in model.parameters())
    print(model)
    print(
        f"{len(text)} characters from {len(STDLIB_FILES)} stdlib files (Python "
        f"{platform.python_version()}), vocabulary {len(chars)}; {n_params} parameters; "
        f"{args.steps} steps of {args.batch_size}x{args.seq_len}, lr {args.lr}, seed {args.seed}"
    )
    print(f"unigram baseline: {baseline:.4f} nats/char (uniform: {math.log(len(chars)):.4f})")

    def evaluate(data_split, offset: int) -> float:
        return estimate_loss(
            model, data_split, args.batch_size, args.seq_len, args.eval_batches, args.seed + offset
        )

    history = {"train_loss": [], "eval_step": [0], "val_loss": [evaluate(val_data, 1)]}
    print(f"step {0:4d}  val {history['val_loss'][0]:.4f}")
    generator = torch.Generator().manual_seed(args.seed)
    bar = _progress(args.steps, not args.no_progress)
    for step in range(1, args.steps + 1):
        x, y = get_batch(train_data, args.batch_size, args.seq_len, generator)
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        history["train_loss"].append(loss.item())
        if bar is not None:
            bar.update()
            bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
        if step % args.eval_every == 0 or step == args.steps:
            val = evaluate(val_data, 1)
            history["eval_step"].append(step)
            history["val_loss"].append(val)
            msg = (
                f"step {step:4d}  train {loss.item():.4f}  val {val:.4f}  "
                f"({time.perf_counter() - start:5.1f} s)"
            )
            if bar is not None:
                bar.write(msg)
            else:
                print(msg)
    if bar is not None:
        bar.close()
    train_time = time.perf_counter() - start

    final_train = evaluate(train_data, 2)
    final_val = history["val_loss"][-1]
    plot = args.out_dir / "loss_curve.svg"
    plot_curves(history, baseline, plot)

    prompt = "def "
    ids = sample(
        model,
        [stoi[ch] for ch in prompt],
        args.sample_len,
        args.temperature,
        torch.Generator().manual_seed(args.seed),
    )
    text_out = prompt + "".join(chars[i] for i in ids)
    print(f"--- sample (temperature {args.temperature}) ---")
    print(text_out)
    print("--- end of sample ---")

    elapsed = time.perf_counter() - start
    summary = {
        "steps": args.steps,
        "seed": args.seed,
        "final_train_loss": round(final_train, 4),
        "final_val_loss": round(final_val, 4),
        "unigram_baseline": round(baseline, 4),
        "below_baseline": round(baseline - final_val, 4),
        "first_val_loss": round(history["val_loss"][0], 4),
        "train_seconds": round(train_time, 2),
        "wall_seconds": round(elapsed, 2),
        "parameters": n_params,
        "vocab_size": len(chars),
        "corpus": {
            "python": platform.python_version(),
            "files": list(STDLIB_FILES),
            "chars": len(text),
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        },
        "val_curve": dict(zip(history["eval_step"], [round(v, 4) for v in history["val_loss"]])),
        "plot": str(plot),
        "sample": text_out,
    }
    (args.out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"curve:   {plot}")
    print(
        f"final val loss {final_val:.4f} (train {final_train:.4f}) vs unigram baseline "
        f"{baseline:.4f}: {baseline - final_val:.4f} nats/char below, in {elapsed:.1f} s"
    )
    return summary


if __name__ == "__main__":
    main()
