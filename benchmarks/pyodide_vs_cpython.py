"""ember in WebAssembly (Pyodide under Node) against CPython on this machine: the seed
tutorial's classic example and a small training loop, each timed in the same way on both
sides (median of repeats after a warm-up, in one interpreter per side).

Run: ``python benchmarks/pyodide_vs_cpython.py`` (needs Node and the local Pyodide folder,
``../shared/pyodide`` or ``$EMBER_PYODIDE``). Prints a markdown table.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The workloads, as one program both interpreters run; it prints a JSON line of timings.
PROGRAM = r"""
import json, statistics, time
import ember as torch
from ember import nn

def seed_example():
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    out.backward()
    return x.grad

def training_loop():
    torch.manual_seed(0)
    x = torch.linspace(-3.0, 3.0, 128).unsqueeze(1)
    y = torch.sin(x)
    model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(100):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()

def median_ms(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3

result = {"seed_ms": median_ms(seed_example, 200), "train_ms": median_ms(training_loop, 7)}
print("TIMINGS " + json.dumps(result))
"""


def _pyodide_dir() -> Path:
    """tools/build_playground.py's lookup of the local Pyodide folder."""
    sys.path.insert(0, str(ROOT / "tools"))
    from build_playground import find_pyodide

    found = find_pyodide()
    if found is None:
        sys.exit("no local Pyodide: set EMBER_PYODIDE or put it in ../shared/pyodide")
    return found


def _timings(output: str) -> dict:
    line = next(ln for ln in output.splitlines() if ln.startswith("TIMINGS "))
    return json.loads(line[len("TIMINGS ") :])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-q", str(ROOT), "--no-deps",
             "--no-build-isolation", "-w", tmp],
            check=True,
        )  # fmt: skip
        wheel = next(Path(tmp).glob("ember-*.whl"))
        script = Path(tmp) / "program.py"
        script.write_text(PROGRAM)
        node = shutil.which("node") or shutil.which("nodejs")
        runner = ROOT / "tests" / "wasm" / "run_in_pyodide.js"
        wasm = subprocess.run(
            [node, str(runner), str(_pyodide_dir()), str(script), str(wheel)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        native = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, check=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
        )  # fmt: skip
    w, c = _timings(wasm.stdout), _timings(native.stdout)
    print("| workload | CPython | Pyodide (Node) | ratio |")
    print("| --- | ---: | ---: | ---: |")
    rows = [
        ("seed example (ones, +, *, mean, backward)", "seed_ms"),
        ("MLP 1-32-1, 100 Adam steps on 128 points", "train_ms"),
    ]
    for label, key in rows:
        print(f"| {label} | {c[key]:.3f} ms | {w[key]:.3f} ms | {w[key] / c[key]:.1f}x |")


if __name__ == "__main__":
    main()
