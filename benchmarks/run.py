"""Run the benchmark workloads round-robin and print a markdown table of ratios.

Usage: python benchmarks/run.py [--workloads W1,W2] [--quick] [--alone] [--out results.md]

Each implementation is first checked against the float64 hand-written NumPy reference
(a wrong gradient is reported and not timed), then all implementations are timed in
turns on the same inputs, so machine noise hits them alike; with ``--alone`` each is timed
back to back instead (no other library's threads in between: torch's step is 2-3x faster so).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.metadata
import os
import platform
import statistics
import sys
import time
import tracemalloc
from datetime import date

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import workloads as wl  # noqa: E402

UNITS = {  # workload -> (unit, divisor applied to seconds)
    "W1": ("µs/op", 1e6 / wl.W1_OPS),
    "W2": ("ms", 1e3),
    "W3": ("ms", 1e3),
    "W4": ("ms", 1e3),
    "W5": ("µs/node", 1e6 / 5000),
    "W7": ("ms", 1e3),
}
PEERS = [
    "numpy",
    "ember",
    "ember-compiled",
    "torch",
    "torch-compiled",
    "autograd",
    "mygrad",
    "jax",
    "jax-jit",
]


def _available(name: str) -> bool:
    if name in ("numpy", "ember", "ember-compiled"):
        return True
    try:
        importlib.metadata.version({"jax-jit": "jax", "torch-compiled": "torch"}.get(name, name))
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


def _sync_threads():
    """Give torch as many threads as NumPy's BLAS uses, so matmuls compare fairly."""
    try:
        import torch
        from threadpoolctl import threadpool_info

        blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
        if blas:
            torch.set_num_threads(blas[0])
        return blas[0] if blas else None
    except Exception:
        return None


def _check(name, result, reference, rtol):
    value, grads = result
    ref_value, ref_grads = reference
    if not np.isclose(value, ref_value, rtol=rtol, atol=rtol):
        return f"value {value} != {ref_value}"
    for i, (g, r) in enumerate(zip(grads, ref_grads)):
        g = np.asarray(g, dtype=np.float64)
        if g.shape != np.shape(r) or not np.allclose(g, r, rtol=rtol, atol=rtol * 1e-1):
            err = np.max(np.abs(g - r)) if g.shape == np.shape(r) else "shape"
            return f"gradient {i} differs (max abs err {err})"
    return None


def _jit_impls():
    out = {}
    try:
        jax, jnp = wl._jax()
    except Exception:
        return out
    loss_fn = {}
    try:
        _, w2loss = wl._w2_jax_loss()
        vg = jax.jit(jax.value_and_grad(w2loss))
        loss_fn["W2"] = lambda inp: (lambda r: (float(r[0]), [np.asarray(t) for t in r[1]]))(
            vg([inp[k] for k in wl.W2_PARAMS], inp["x"], inp["y"])
        )

        def w3(x, w, b):
            return jnp.sum(jnp.tanh(x * w + b) * jax.nn.sigmoid(x))

        vg3 = jax.jit(jax.value_and_grad(w3, argnums=(1, 2)))
        loss_fn["W3"] = lambda inp: (lambda r: (float(r[0]), [np.asarray(t) for t in r[1]]))(
            vg3(inp["x"], inp["w"], inp["b"])
        )

        def w1(x0, n=wl.W1_OPS):
            return wl._w1_chain(x0, n, jnp.sin, jnp.tanh).sum()

        vg1 = jax.jit(jax.value_and_grad(w1))
        loss_fn["W1"] = lambda inp: (lambda r: (float(r[0]), [np.asarray(r[1])]))(vg1(inp["x0"]))
    except Exception:
        pass
    return loss_fn


def run_workload(name, quick=False, budget_s=20.0, alone=False):
    make = wl.MAKERS[name]
    inp = make(0)
    impls = dict(wl.implementations(name))
    jit = _jit_impls()
    if name in jit:
        impls["jax-jit"] = jit[name]
    # float64 reference from the hand-written NumPy floor
    ref_inp = {
        k: (v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v)
        for k, v in inp.items()
    }
    reference = wl.implementations(name)["numpy"](ref_inp)
    rtol = 1e-3 if name in ("W2", "W3", "W7") else 1e-6
    rows = {}
    live = {}
    for impl, fn in impls.items():
        if not _available(impl):
            rows[impl] = {"status": "not installed"}
            continue
        try:
            err = _check(impl, fn(inp), reference, rtol)
        except Exception as exc:  # a peer that cannot run the workload is reported
            err = f"error: {type(exc).__name__}: {exc}"[:120]
        if err:
            rows[impl] = {"status": err}
            continue
        live[impl] = fn
        rows[impl] = {"times": []}
    repeats = 3 if quick else 15
    if alone:
        # Each implementation back to back (after one warm-up call): no other library's
        # threads or caches in between, as a program using one library runs.
        for impl, fn in live.items():
            fn(inp)
            start = time.perf_counter()
            for _ in range(2 * repeats):
                gc.collect()
                t = time.perf_counter()
                fn(inp)
                rows[impl]["times"].append(time.perf_counter() - t)
                if time.perf_counter() - start > budget_s / len(live):
                    break
        return rows
    # Round-robin timing until the budget or the repeat count is reached.
    start = time.perf_counter()
    for _ in range(repeats):
        for impl, fn in live.items():
            gc.collect()
            t = time.perf_counter()
            fn(inp)
            rows[impl]["times"].append(time.perf_counter() - t)
        if time.perf_counter() - start > budget_s:
            break
    return rows


def peak_memory(name):
    """Peak traced allocation (MiB) of one run, for the NumPy-based implementations."""
    inp = wl.MAKERS[name](0)
    out = {}
    for impl, fn in wl.implementations(name).items():
        if impl in ("torch", "torch-compiled", "jax") or not _available(impl):
            continue
        if impl == "ember-compiled":
            fn(inp)  # the first call compiles (capture and checks): measure the steady state
        gc.collect()
        tracemalloc.start()
        fn(inp)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out[impl] = peak / 2**20
    return out


def format_table(all_rows):
    lines = [
        "| workload | implementation | median | min | vs numpy | vs torch | note |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, rows in all_rows.items():
        unit, scale = UNITS[name]
        med = {k: statistics.median(r["times"]) * scale for k, r in rows.items() if "times" in r}
        mins = {k: min(r["times"]) * scale for k, r in rows.items() if "times" in r}
        for impl in PEERS:
            if impl not in rows:
                continue
            r = rows[impl]
            if "times" not in r:
                lines.append(f"| {name} | {impl} | | | | | {r['status']} |")
                continue
            vs_np = f"{med[impl] / med['numpy']:.2f}x" if "numpy" in med else ""
            vs_t = f"{med[impl] / med['torch']:.2f}x" if "torch" in med else ""
            lines.append(
                f"| {name} | {impl} | {med[impl]:.3g} {unit} | {mins[impl]:.3g} "
                f"{unit} | {vs_np} | {vs_t} | n={len(r['times'])} |"
            )
    return "\n".join(lines)


def machine():
    import ember

    parts = [
        f"date {date.today().isoformat()}",
        platform.platform(),
        f"{os.cpu_count()} cpus",
        f"Python {platform.python_version()}",
        f"numpy {np.__version__}",
        f"ember {ember.__version__}",
    ]
    from importlib.metadata import PackageNotFoundError, version

    for peer in ("torch", "autograd", "mygrad", "jax"):
        try:
            parts.append(f"{peer} {version(peer)}")
        except PackageNotFoundError:
            parts.append(f"{peer} absent")
    return ", ".join(parts)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", default="W1,W2,W3,W4,W5,W7")
    p.add_argument("--quick", action="store_true", help="3 repeats (smoke test)")
    p.add_argument("--out", help="also write the markdown to this file")
    p.add_argument(
        "--alone", action="store_true", help="time each implementation back to back, 30 runs"
    )
    args = p.parse_args(argv)
    threads = _sync_threads()
    all_rows = {}
    for name in args.workloads.split(","):
        print(f"running {name} ...", file=sys.stderr, flush=True)
        all_rows[name] = run_workload(name, quick=args.quick, alone=args.alone)
    how = "each implementation timed alone" if args.alone else "round-robin"
    text = [f"Machine: {machine()}, BLAS threads {threads}, {how}", "", format_table(all_rows)]
    mem = {n: peak_memory(n) for n in ("W2", "W3") if n in all_rows}
    if mem:
        text += [
            "",
            "| workload | implementation | peak traced MiB | vs numpy |",
            "| --- | --- | --- | --- |",
        ]
        for n, m in mem.items():
            for impl, mib in m.items():
                text.append(f"| W6 ({n}) | {impl} | {mib:.1f} | {mib / m['numpy']:.2f}x |")
    out = "\n".join(text)
    print(out)
    if args.out:
        with open(args.out, "w") as f:
            f.write(out + "\n")


if __name__ == "__main__":
    main()
