"""W9 LSTM: a 1-layer LSTM (input 64, hidden 128) over a (50, 32, 64) float32 sequence,
forward and backward (loss ``out.sum() + h.sum()``), timed for ember and torch in one run.

Run as a script: ``python benchmarks/w9_lstm.py [--repeats 15] [--profile] [--no-compile]
[--separate]``.
Timed: ember eager, torch eager (as many threads as NumPy's BLAS), torch with one thread,
ember compiled (``ember.compile``) and ``torch.compile``. All start from the same weights and
sequence; every variant's output and gradients are checked against torch in float64 before
the timings are printed. Prints each median and its ratio to torch eager (targets: eager
<= 1.2x, compiled <= 0.8x). ``--profile`` adds cProfile's top functions of ember's eager step.
With ``--separate`` each library is timed in its own process, else both in this one.
"""

from __future__ import annotations

import json
import statistics
import time

import numpy as np

# (this folder: the scripts run as python benchmarks/...)
from workloads import (
    blas_threads,
    print_profile,
    step_script_args,
    timings_in_own_processes,
)

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


def _setup(lib, data: dict, dtype=None):
    model = lib.nn.LSTM(I, H)
    model.load_state_dict({n: lib.tensor(w) for n, w in data["weights"].items()})
    x = lib.tensor(data["x"])
    if dtype is not None:
        model, x = model.to(dtype), x.to(dtype)
    return model, x.requires_grad_()


def _step(model, x):
    model.zero_grad(set_to_none=True)
    x.grad = None
    out, (h, c) = model(x)
    (out.sum() + h.sum()).backward()
    return out


def _time(model, x, repeats: int) -> float:
    for _ in range(3):  # warm-up (and, compiled, the captures)
        _step(model, x)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        _step(model, x)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _results(model, x, out) -> list[np.ndarray]:
    """The output, the input's gradient and each parameter's, in float64."""
    arrays = [out, x.grad] + [p.grad for p in model.parameters()]
    return [a.detach().numpy().astype(np.float64) for a in arrays]


def _check(name: str, results: list, reference: list) -> None:
    """float32 results against the float64 reference, each to 1e-4 of its norm (an LSTM has
    no ties or kinks, so the only difference is float32 rounding over 50 steps)."""
    for i, (got, ref) in enumerate(zip(results, reference)):
        error, bound = np.linalg.norm(got - ref), 1e-4 * np.linalg.norm(ref)
        assert error <= bound, f"{name}: result {i} off by {error:.3g} (bound {bound:.3g})"


def main(argv=None) -> None:
    args = step_script_args(__doc__.splitlines()[0], 15, argv)
    if args.separate:
        _report(timings_in_own_processes(__file__, args.forwarded), blas_threads(), True)
        return

    import torch

    import ember

    threads = blas_threads()
    torch.set_num_threads(threads)
    data = _make()

    # The float64 reference: torch, same weights and sequence.
    ref_model, ref_x = _setup(torch, data, torch.float64)
    reference = _results(ref_model, ref_x, _step(ref_model, ref_x))

    results = {}
    if args.only != "torch":
        # ember first: torch's idle OpenMP workers keep spinning after its ops and would slow
        # NumPy's BLAS threads on a small machine.
        e_model, e_x = _setup(ember, data)
        _check("ember", _results(e_model, e_x, _step(e_model, e_x)), reference)
        results["ember eager"] = _time(e_model, e_x, args.repeats)
        if not args.no_compile:
            c_model, c_x = _setup(ember, data)
            compiled = ember.compile(c_model)
            _check("ember compiled", _results(c_model, c_x, _step(compiled, c_x)), reference)
            results["ember compiled"] = _time(compiled, c_x, args.repeats)
    if args.only != "ember":
        _time_torch(args, torch, threads, data, reference, results)
    if args.only:
        print(json.dumps(results))
        return
    _report(results, threads, False)
    if args.profile:
        print_profile(lambda: _step(e_model, e_x), args.repeats, top=12)


def _time_torch(args, torch, threads, data, reference, results) -> None:
    """torch eager (its threads, then one), and torch.compile: checked, then timed."""
    t_model, t_x = _setup(torch, data)
    _check("torch", _results(t_model, t_x, _step(t_model, t_x)), reference)
    results["torch eager"] = _time(t_model, t_x, args.repeats)
    torch.set_num_threads(1)
    results["torch eager, 1 thread"] = _time(t_model, t_x, args.repeats)
    torch.set_num_threads(threads)
    if not args.no_compile:
        tc_model, tc_x = _setup(torch, data)
        tcompiled = torch.compile(tc_model)
        _check("torch.compile", _results(tc_model, tc_x, _step(tcompiled, tc_x)), reference)
        results["torch.compile"] = _time(tcompiled, tc_x, args.repeats)


def _report(results: dict, threads: int, separate: bool) -> None:
    base = results["torch eager"]
    print(f"W9 LSTM T={T} B={B} I={I} H={H} float32, forward + backward ({threads} threads)")
    print("  (output and gradients of every variant checked against torch in float64)")
    print("  (each library in its own process)" if separate else "  (both in this process)")
    for name, seconds in results.items():
        print(f"  {name:24s} {seconds * 1e3:8.2f} ms  {seconds / base:5.2f}x torch eager")


if __name__ == "__main__":
    main()
