"""W9 LSTM: a 1-layer LSTM (input 64, hidden 128) over a (50, 32, 64) float32 sequence,
forward and backward, timed for ember and for torch eager in the same run.

Run as a script: ``python benchmarks/w9_lstm.py [--repeats 15] [--profile]``. Both
libraries start from the same weights and inputs; their outputs and gradients are checked
against each other after timing. torch gets as many threads as NumPy's BLAS uses. Prints
the median time of each and the ratio ember / torch (target: at most 1.5). ``--profile``
adds cProfile's top functions of ember's run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from workloads import print_profile  # (this folder: the scripts run as python benchmarks/...)

T, B, I, H = 50, 32, 64, 128


def _make(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    k = 1 / np.sqrt(H)
    shapes = {
        "weight_ih_l0": (4 * H, I),
        "weight_hh_l0": (4 * H, H),
        "bias_ih_l0": (4 * H,),
        "bias_hh_l0": (4 * H,),
    }
    weights = {n: rng.uniform(-k, k, s).astype(np.float32) for n, s in shapes.items()}
    return {"x": rng.standard_normal((T, B, I)).astype(np.float32), "weights": weights}


def _setup(lib, lstm_cls, data):
    model = lstm_cls(I, H)
    model.load_state_dict({n: lib.tensor(w) for n, w in data["weights"].items()})
    x = lib.tensor(data["x"], requires_grad=True)
    return model, x


def _step(model, x):
    model.zero_grad()
    x.grad = None
    out, (h, c) = model(x)
    (out.sum() + h.sum()).backward()
    return out


def _time(model, x, repeats: int) -> float:
    for _ in range(3):  # warm-up
        _step(model, x)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        _step(model, x)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _sync_threads(torch) -> int:
    """Give torch as many threads as NumPy's BLAS uses (threadpoolctl, else the usual
    environment variables), so the matmuls compare fairly."""
    try:
        from threadpoolctl import threadpool_info

        blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
    except ImportError:
        env = [os.environ.get(v) for v in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")]
        blas = [int(v) for v in env + [os.environ.get("OMP_NUM_THREADS")] if v]
    if blas:
        torch.set_num_threads(blas[0])
    return torch.get_num_threads()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)

    import torch

    import ember
    from ember.nn.modules.rnn import LSTM

    threads = _sync_threads(torch)
    data = _make()
    e_model, e_x = _setup(ember, LSTM, data)
    t_model, t_x = _setup(torch, torch.nn.LSTM, data)
    # ember is timed before torch runs at all: torch's idle OpenMP workers keep spinning after
    # its ops and would slow NumPy's BLAS threads on a small machine.
    e_out = _step(e_model, e_x)
    ember_s = _time(e_model, e_x, args.repeats)
    t_out = _step(t_model, t_x)
    torch_s = _time(t_model, t_x, args.repeats)
    e_out, t_out = _step(e_model, e_x), _step(t_model, t_x)
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), atol=1e-4)
    np.testing.assert_allclose(e_x.grad.numpy(), t_x.grad.numpy(), rtol=1e-3, atol=1e-4)
    for (n, p), q in zip(e_model.named_parameters(), t_model.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-3, atol=1e-3, err_msg=n)
    print(f"W9 LSTM T={T} B={B} I={I} H={H} float32, forward + backward ({threads} threads)")
    print(f"  ember       {ember_s * 1e3:8.2f} ms (median of {args.repeats})")
    print(f"  torch eager {torch_s * 1e3:8.2f} ms (median of {args.repeats})")
    print(f"  ratio ember / torch: {ember_s / torch_s:.2f} (target <= 1.5)")
    if args.profile:
        print_profile(lambda: _step(e_model, e_x), args.repeats, top=12)


if __name__ == "__main__":
    main()
