"""W8 tiny-GPT training step: ember vs torch eager, same weights, same batch.

A minGPT-style model (2 layers, 4 heads, n_embd 64, block 32, vocab 65, batch 16, float32):
token + position embeddings, pre-LayerNorm blocks of causal self-attention and an exact-GELU
MLP, a final LayerNorm, an untied head and cross-entropy. One step is forward + backward
(gradients reset to None). Two attention variants, as GPT programs write them:
``sdpa`` (``F.scaled_dot_product_attention(q, k, v, is_causal=True)``, nanoGPT) and
``explicit`` (scores, ``masked_fill`` with a tril buffer, softmax, ``@ v``, minGPT).

Run: ``python benchmarks/w8_gpt.py [--repeats 15] [--profile] [--compiled] [--separate]``.
Prints the median step time of each library, the ratio ember / torch, with ``--compiled``
the same for ``ember.compile`` and ``torch.compile``, and with ``--profile`` the top of a
cProfile of ember's steps (by tottime). Both libraries run in this process, or with
``--separate`` each in its own.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import pstats
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from workloads import add_process_options, timings_in_own_processes  # noqa: E402

import ember  # noqa: E402

VOCAB, BLOCK, N_EMBD, N_HEAD, N_LAYER, BATCH = 65, 32, 64, 4, 2, 16


def _sdpa(lib):
    F = lib.nn.functional
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention
    # ember before nn.functional re-exports it: the same function from its module.
    from ember._aten.nn_attention import scaled_dot_product_attention

    return scaled_dot_product_attention


def build_gpt(lib, attention: str):
    """The model class written once against ``lib`` (``torch`` or ``ember``)."""
    nn, F = lib.nn, lib.nn.functional
    sdpa = _sdpa(lib)

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(N_EMBD, 3 * N_EMBD)
            self.c_proj = nn.Linear(N_EMBD, N_EMBD)
            tril = lib.tril(lib.ones(BLOCK, BLOCK)).view(1, 1, BLOCK, BLOCK)
            self.register_buffer("bias", tril)

        def forward(self, x):
            b, t, c = x.size()
            q, k, v = self.c_attn(x).split(N_EMBD, dim=2)
            hs = c // N_HEAD
            k = k.view(b, t, N_HEAD, hs).transpose(1, 2)
            q = q.view(b, t, N_HEAD, hs).transpose(1, 2)
            v = v.view(b, t, N_HEAD, hs).transpose(1, 2)
            if attention == "sdpa":
                y = sdpa(q, k, v, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
                att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
                att = F.softmax(att, dim=-1)
                y = att @ v
            y = y.transpose(1, 2).contiguous().view(b, t, c)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(N_EMBD, 4 * N_EMBD)
            self.c_proj = nn.Linear(4 * N_EMBD, N_EMBD)

        def forward(self, x):
            return self.c_proj(F.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(N_EMBD)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(N_EMBD)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(VOCAB, N_EMBD)
            self.wpe = nn.Embedding(BLOCK, N_EMBD)
            self.h = nn.ModuleList([Block() for _ in range(N_LAYER)])
            self.ln_f = nn.LayerNorm(N_EMBD)
            self.lm_head = nn.Linear(N_EMBD, VOCAB, bias=False)

        def forward(self, idx, targets):
            t = idx.size(1)
            pos = lib.arange(0, t, dtype=lib.long)
            x = self.wte(idx) + self.wpe(pos)
            for block in self.h:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))

    return GPT()


def make_pair(attention: str):
    """torch's and ember's models with the same weights, and one batch of tokens."""
    import torch

    torch.manual_seed(0)
    tm = build_gpt(torch, attention)
    em = build_gpt(ember, attention)
    em.load_state_dict({k: ember.tensor(v.numpy().copy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(0)
    idx = rng.integers(0, VOCAB, (BATCH, BLOCK))
    tgt = rng.integers(0, VOCAB, (BATCH, BLOCK))
    return (tm, torch.tensor(idx), torch.tensor(tgt)), (em, ember.tensor(idx), ember.tensor(tgt))


def step(model, idx, tgt) -> float:
    for p in model.parameters():
        p.grad = None
    loss = model(idx, tgt)
    loss.backward()
    return float(loss.item())


def median_time(model, idx, tgt, repeats: int) -> float:
    for _ in range(3):
        step(model, idx, tgt)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step(model, idx, tgt)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--profile", action="store_true", help="cProfile ember's steps")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument(
        "--compiled", action="store_true", help="also ember.compile and torch.compile rows"
    )
    add_process_options(parser)
    args = parser.parse_args(argv)
    import torch

    print(f"W8 tiny GPT: {N_LAYER} layers, {N_HEAD} heads, n_embd {N_EMBD}, block {BLOCK}, ")
    print(f"batch {BATCH}, vocab {VOCAB}, float32, forward + backward; torch threads:")
    print(f"{torch.get_num_threads()}; median of {args.repeats}")
    if args.separate:
        passed = [f"--repeats={args.repeats}"] + (["--compiled"] if args.compiled else [])
        times = timings_in_own_processes(__file__, passed)
        print("  (each library in its own process)")
        for attention in ("sdpa", "explicit"):
            t_torch, t_ember = times[f"{attention} torch"], times[f"{attention} ember"]
            print(
                f"  {attention:8s} torch {t_torch * 1e3:7.2f} ms   ember {t_ember * 1e3:7.2f} ms"
                f"   ratio {t_ember / t_torch:5.2f}x"
            )
            if args.compiled:
                t_tc, t_ec = (times[f"{attention} {lib} compiled"] for lib in ("torch", "ember"))
                print(
                    f"  {'':8s} compiled: torch {t_tc * 1e3:7.2f} ms   ember {t_ec * 1e3:7.2f} "
                    f"ms   ember-compiled / torch eager {t_ec / t_torch:5.2f}x"
                )
        return
    times = {}
    for attention in ("sdpa", "explicit"):
        (tm, ti, tt), (em, ei, et) = make_pair(attention)
        if args.only:  # one library's steps (for --separate), printed as JSON
            model, idx, tgt = (em, ei, et) if args.only == "ember" else (tm, ti, tt)
            step(model, idx, tgt)
            times[f"{attention} {args.only}"] = median_time(model, idx, tgt, args.repeats)
            if args.compiled:
                compiled = (ember.compile if args.only == "ember" else torch.compile)(model)
                step(compiled, idx, tgt)
                times[f"{attention} {args.only} compiled"] = median_time(
                    compiled, idx, tgt, args.repeats
                )
            continue
        lt, le = step(tm, ti, tt), step(em, ei, et)
        gt = dict(tm.named_parameters())
        gmax = max(
            float(np.abs(p.grad.numpy() - gt[n].grad.numpy()).max())
            for n, p in em.named_parameters()
        )
        t_torch = median_time(tm, ti, tt, args.repeats)
        t_ember = median_time(em, ei, et, args.repeats)
        print(
            f"  {attention:8s} torch {t_torch * 1e3:7.2f} ms   ember {t_ember * 1e3:7.2f} ms   "
            f"ratio {t_ember / t_torch:5.2f}x   (loss {le:.5f} vs {lt:.5f}, "
            f"max grad diff {gmax:.1e})"
        )
        if args.compiled:
            ec, tc = ember.compile(em), torch.compile(tm)
            t0 = time.perf_counter()
            lec = step(ec, ei, et)
            first_e = time.perf_counter() - t0
            t0 = time.perf_counter()
            step(tc, ti, tt)
            first_t = time.perf_counter() - t0
            t_ec = median_time(ec, ei, et, args.repeats)
            t_tc = median_time(tc, ti, tt, args.repeats)
            print(
                f"  {'':8s} compiled: torch {t_tc * 1e3:7.2f} ms (first call {first_t:.1f} s)   "
                f"ember {t_ec * 1e3:7.2f} ms (first call {first_e:.2f} s)   ember-compiled / "
                f"torch eager {t_ec / t_torch:5.2f}x   (loss {lec:.5f})"
            )
            print("  " + ec.explain().replace("\n", "\n  "))
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(args.repeats):
                step(em, ei, et)
            prof.disable()
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.top)
            print("\n".join(out.getvalue().splitlines()[: args.top + 12]))
    if args.only:
        print(json.dumps(times))


if __name__ == "__main__":
    main()
