"""W10 CIFAR-size conv step: a batch of 64 3x32x32 float32 images through
conv3x3(3->32)+BN+ReLU+maxpool, conv3x3(32->64)+BN+ReLU+maxpool, linear 4096->10 and
cross-entropy, forward and backward, timed for ember and torch in the same run.

Run as a script: ``python benchmarks/w10_conv.py [--repeats 9] [--profile] [--no-compile]
[--separate]``.
Timed: ember eager, torch eager (as many threads as NumPy's BLAS), torch with one thread,
ember compiled (``ember.compile``) and ``torch.compile``. All start from the same weights and
batch; every variant's loss and gradients are checked against torch in float64 before the
timings are printed. Prints each median and its ratio to torch eager. ``--profile`` adds
cProfile's top functions of ember's eager step. With ``--separate`` each library is timed in
its own process (``workloads.timings_in_own_processes``), else both in this one.
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

N, C, S, CLASSES = 64, 3, 32, 10


def _data(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {
        "x": rng.standard_normal((N, C, S, S)).astype(np.float32),
        "y": rng.integers(0, CLASSES, N).astype(np.int64),
    }


def _model(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(C, 32, 3, padding=1),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * (S // 4) ** 2, CLASSES),
    )


def _setup(lib, state: dict, data: dict, dtype=None):
    model = _model(lib)
    model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    x, y = lib.tensor(data["x"]), lib.tensor(data["y"])
    if dtype is not None:
        model, x = model.to(dtype), x.to(dtype)
    return model, x, y


def _step(lib, model, x, y):
    model.zero_grad(set_to_none=True)
    loss = lib.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return loss


def _time(lib, model, x, y, repeats: int) -> float:
    for _ in range(3):  # warm-up (and, compiled, the captures)
        _step(lib, model, x, y)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        _step(lib, model, x, y)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _grads(module) -> list[np.ndarray]:
    return [p.grad.detach().numpy().astype(np.float64) for p in module.parameters()]


def _check(name: str, loss, grads, ref_loss, ref_grads) -> None:
    """float32 results against the float64 reference: the loss to 1e-4, each gradient to
    0.5% in norm (max pooling may pick the other of two nearly equal values in float32, so
    an elementwise bound would test rounding; a conv bias before BatchNorm has a gradient
    of zero up to rounding, hence the floor at 1e-3 of the largest element)."""
    np.testing.assert_allclose(float(loss.detach()), ref_loss, rtol=1e-4, err_msg=name)
    scale = max(np.abs(r).max() for r in ref_grads)
    for i, (g, r) in enumerate(zip(grads, ref_grads)):
        bound = 5e-3 * max(np.linalg.norm(r), 1e-3 * scale * np.sqrt(r.size))
        error = np.linalg.norm(g - r)
        assert error <= bound, f"{name}: gradient {i} off by {error:.3g} (bound {bound:.3g})"


def main(argv=None) -> None:
    args = step_script_args(__doc__.splitlines()[0], 9, argv)
    if args.separate:
        _report(timings_in_own_processes(__file__, args.forwarded), blas_threads(), True)
        return

    import torch

    import ember

    threads = blas_threads()
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    state = {k: v.numpy() for k, v in _model(torch).state_dict().items()}
    data = _data()

    # The float64 reference: torch, same weights and batch.
    ref_model, ref_x, ref_y = _setup(torch, state, data, torch.float64)
    ref_loss = float(_step(torch, ref_model, ref_x, ref_y).detach())
    ref_grads = _grads(ref_model)

    results = {}
    if args.only != "torch":
        eager = _time_ember(args, ember, state, data, ref_loss, ref_grads, results)
    if args.only != "ember":
        _time_torch(args, torch, threads, state, data, ref_loss, ref_grads, results)
    if args.only:
        print(json.dumps(results))
        return
    _report(results, threads, False)
    if args.profile:
        print_profile(lambda: _step(ember, *eager), args.repeats)


def _time_ember(args, ember, state, data, ref_loss, ref_grads, results):
    """ember's eager and compiled steps, checked, then timed; returns the eager (model, x,
    y)."""
    e_model, e_x, e_y = _setup(ember, state, data)
    _check("ember", _step(ember, e_model, e_x, e_y), _grads(e_model), ref_loss, ref_grads)
    results["ember eager"] = _time(ember, e_model, e_x, e_y, args.repeats)
    if not args.no_compile:
        c_model, c_x, c_y = _setup(ember, state, data)
        compiled = ember.compile(c_model)
        _check("ember compiled", _step(ember, compiled, c_x, c_y), _grads(c_model), ref_loss,
               ref_grads)  # fmt: skip
        results["ember compiled"] = _time(ember, compiled, c_x, c_y, args.repeats)
    return e_model, e_x, e_y


def _time_torch(args, torch, threads, state, data, ref_loss, ref_grads, results):
    """torch eager (its threads, then one), and torch.compile: checked, then timed."""
    t_model, t_x, t_y = _setup(torch, state, data)
    _check("torch", _step(torch, t_model, t_x, t_y), _grads(t_model), ref_loss, ref_grads)
    results["torch eager"] = _time(torch, t_model, t_x, t_y, args.repeats)
    torch.set_num_threads(1)
    results["torch eager, 1 thread"] = _time(torch, t_model, t_x, t_y, args.repeats)
    torch.set_num_threads(threads)
    if not args.no_compile:
        tc_model, tc_x, tc_y = _setup(torch, state, data)
        tcompiled = torch.compile(tc_model)
        _check("torch.compile", _step(torch, tcompiled, tc_x, tc_y), _grads(tc_model), ref_loss,
               ref_grads)  # fmt: skip
        results["torch.compile"] = _time(torch, tcompiled, tc_x, tc_y, args.repeats)


def _report(results: dict, threads: int, separate: bool) -> None:
    base = results["torch eager"]
    print(
        f"W10 conv step: batch {N} of {C}x{S}x{S} float32, forward + backward ({threads} threads)"
    )
    print("  (loss and gradients of every variant checked against torch in float64)")
    print("  (each library in its own process)" if separate else "  (both in this process)")
    for name, seconds in results.items():
        print(f"  {name:24s} {seconds * 1e3:8.2f} ms  {seconds / base:5.2f}x torch eager")


if __name__ == "__main__":
    main()
