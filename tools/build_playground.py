"""Build the browser playground in ``playground``: ember in Pyodide, in a web page.

PyTorch cannot run in a browser, but NumPy and SciPy can (Pyodide) and ember is pure
Python, so the page runs the seed tutorials live. It needs files that are built, not kept
in git (``playground/.gitignore`` lists them):

* ``wheels/``: ember's wheel, built from this checkout (so the page runs this tree's ember),
  and the ``graphviz`` package's wheel (pure Python; ``ember.viz.make_dot`` imports it);
* ``cells.json``: the notebooks: two playground cells (a graph, a training run with a live
  loss plot), then each seed tutorial's cells as the test suite lists them
  (``tests/seeds/test_seed_*.py``, with the same ``import ember as torch`` redirection),
  each with the text PyTorch 2.13 prints for it, so the page can mark every cell that
  shows the same;
* ``vendor/viz-global.js``: Graphviz compiled to WebAssembly (npm's ``@viz-js/viz``), which
  draws ``make_dot``'s graphs (Pyodide has no ``dot`` program).

Run it with the project's venv (``make playground``); it is idempotent: the wheels and
``cells.json`` are rebuilt each time, the npm package is fetched only once.
``--serve`` then serves the page with a local Pyodide folder (see ``docs/guides/playground.md``).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import importlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "playground"
SEEDS_TESTS = ROOT / "tests" / "seeds"
# Where npm installs @viz-js/viz (git-ignored); only its one standalone file is served.
NPM_PREFIX = SITE / ".npm"
VIZ_PACKAGE, VIZ_VERSION = "@viz-js/viz", "3.31.0"
VIZ_FILE = "dist/viz-global.js"  # the build that defines the global ``Viz``, wasm inlined
# The graphviz wheel the page installs; the version the viz extra installs here, else this.
GRAPHVIZ_FALLBACK_VERSION = "0.21"
# The tutorials' random cells print values drawn after ``manual_seed(SEED)``, as in the suite.
SEED = 0

INTRO_CELLS = [
    {
        "title": "The classic example, and its graph",
        "source": """\
# d(out)/dx is 4.5 everywhere. A cell whose last value is a graph draws it
# (or call show(graph) anywhere in a cell).
import ember as torch
from ember.viz import make_dot

x = torch.ones(2, 2, requires_grad=True)
y = x + 2
z = y * y * 3
out = z.mean()
out.backward()
print(x.grad)
make_dot(out, params={"x": x})""",
        "expect": "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n",
    },
    {
        "title": "Training a small MLP, with a live loss plot",
        "source": """\
# Fit y = sin(x) + noise with a 1-32-1 MLP. Every 5 steps the loop hands the loss
# to the page (plotLoss, a JavaScript function) and lets the page repaint.
import asyncio
import math

import ember as torch
from ember import nn
from js import plotLoss

torch.manual_seed(0)
x = torch.linspace(-math.pi, math.pi, 128).unsqueeze(1)
y = torch.sin(x) + 0.1 * torch.randn(128, 1)
model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.02)
for step in range(1, 101):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        plotLoss(step, loss.item())
        await asyncio.sleep(0)  # yield to the browser: it draws the new point
print(f"mse after {step} steps: {loss.item():.4f}")""",
        "expect": None,
    },
]


class BuildError(RuntimeError):
    """A build step failed or cannot run here (no npm); the message says why."""


def run(cmd: list[str], what: str) -> None:
    """Run ``cmd``; on failure raise with its output, which says what went wrong."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"{what} failed ({' '.join(cmd)}):\n{proc.stdout}{proc.stderr}")


def build_wheels(out: Path, offline: bool = False) -> list[str]:
    """Build ember's wheel and fetch graphviz's into ``out``; their paths relative to SITE.

    The wheels are made in a scratch folder and then moved, so a failed build leaves the
    previous ones in place and a version bump leaves no stale ember wheel behind.
    """
    out.mkdir(parents=True, exist_ok=True)
    try:
        graphviz_version = importlib.metadata.version("graphviz")
    except importlib.metadata.PackageNotFoundError:
        graphviz_version = GRAPHVIZ_FALLBACK_VERSION
    with tempfile.TemporaryDirectory() as tmp:
        run(
            [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", tmp],
            "building ember's wheel",
        )
        for old in out.glob("ember-*.whl"):
            old.unlink()
        ember_wheels = [
            Path(shutil.move(str(wheel), out / wheel.name)) for wheel in Path(tmp).glob("*.whl")
        ]
    graphviz_wheels = list(out.glob(f"graphviz-{graphviz_version}-*.whl"))
    if not graphviz_wheels:  # fetched once: later builds work offline
        if offline:
            raise BuildError(
                "the graphviz wheel is not downloaded yet: run `make playground` (or this "
                "script without --offline) once, with access to PyPI"
            )
        run(
            [sys.executable, "-m", "pip", "download", f"graphviz=={graphviz_version}"]
            + ["--no-deps", "--only-binary=:all:", "-q", "-d", str(out)],
            "downloading the graphviz wheel",
        )
        graphviz_wheels = list(out.glob(f"graphviz-{graphviz_version}-*.whl"))
    return [w.relative_to(SITE).as_posix() for w in ember_wheels + graphviz_wheels]


def install_viz(out: Path, offline: bool = False) -> str:
    """Copy Graphviz-in-WebAssembly (npm's @viz-js/viz) into ``out``; its path relative to
    SITE. npm runs only when the pinned version is not installed yet."""
    installed = NPM_PREFIX / "node_modules" / VIZ_PACKAGE
    manifest = installed / "package.json"
    current = json.loads(manifest.read_text())["version"] if manifest.is_file() else None
    if current != VIZ_VERSION:
        if offline:
            raise BuildError(
                f"{VIZ_PACKAGE} {VIZ_VERSION} is not installed yet: run `make playground` (or "
                "this script without --offline) once, with access to the npm registry"
            )
        npm = shutil.which("npm")
        if npm is None:
            raise BuildError(
                f"npm is not installed: the playground draws graphs with {VIZ_PACKAGE} from "
                "the npm registry. Install Node.js and npm (Debian: apt-get install npm), "
                "then run this again."
            )
        NPM_PREFIX.mkdir(parents=True, exist_ok=True)
        run(
            [npm, "install", "--prefix", str(NPM_PREFIX), "--no-audit", "--no-fund"]
            + ["--loglevel=error", f"{VIZ_PACKAGE}@{VIZ_VERSION}"],
            f"npm install {VIZ_PACKAGE}",
        )
    out.mkdir(parents=True, exist_ok=True)
    target = out / Path(VIZ_FILE).name
    shutil.copyfile(installed / VIZ_FILE, target)
    return target.relative_to(SITE).as_posix()


def _seed_modules() -> list:
    """The seed test modules (their ``CELLS`` and ``TRANSCRIPT``) and the suite's replay
    helpers, imported as the seed tests import them."""
    sys.path.insert(0, str(ROOT / "src"))  # the expectations come from this tree's ember
    sys.path.insert(0, str(SEEDS_TESTS))
    return [importlib.import_module(p.stem) for p in sorted(SEEDS_TESTS.glob("test_seed_*.py"))]


def _skip_reason(source: str) -> str:
    if "mxnet" in source:
        return "not run: MXNet code (needs MXNet, not PyTorch; it failed in the transcript too)"
    return "not run: the test suite skips this cell"


def seed_notebook(module) -> dict:
    """One tutorial: its cells as ember runs them, with what PyTorch 2.13 shows for each,
    and the transcript's text around them (old outputs, the tutorial's notes)."""
    import replay

    text = replay._rstrip_lines((replay.seeds_dir() / module.TRANSCRIPT).read_text("utf-8"))
    expected = replay.expectations(module.CELLS, SEED)
    spans = []  # (start, end) of each cell's "In [n]:" header and source in the text
    for cell in module.CELLS:
        head = f"In [{cell.n}]:\n{replay._rstrip_lines(cell.source)}\n\n"
        start = text.index(head)
        spans.append((start, start + len(head)))
    cells = []
    for i, cell in enumerate(module.CELLS):
        following = spans[i + 1][0] if i + 1 < len(spans) else len(text)
        exp = expected[cell.n]
        entry = {
            "label": f"In [{cell.n}]",
            "source": replay.to_ember(cell.source),
            "transcript": text[spans[i][1] : following].strip("\n"),
        }
        if exp is replay.SKIP:
            entry["skip"] = _skip_reason(cell.source)
        elif isinstance(exp, replay.Raises):
            entry["raises"] = f"{exp.exc.__name__}: {exp.message}"
            entry["expect"] = exp.output
        else:
            entry["expect"] = exp  # the exact text, or None: not checked
        cells.append(entry)
    doc = " ".join((module.__doc__ or "").split("\n\n")[0].split())
    return {
        "id": module.TRANSCRIPT.split("_")[0],
        "title": f"Seed tutorial {module.TRANSCRIPT.split('_')[0]}",
        "about": doc,
        "intro": text[: spans[0][0]].strip("\n"),
        "seed": SEED,
        "cells": cells,
    }


def build_cells(wheels: list[str], viz: str) -> dict:
    """The page's content: which files to load and the notebooks' cells."""
    intro = {
        "id": "playground",
        "title": "Playground",
        "about": "Two cells to start with: the classic example, its graph drawn, and a training "
        "loop plotting its loss as it runs. Edit any cell and run it (Shift+Enter).",
        "intro": "",
        "seed": None,
        "cells": [
            {"label": f"[{i + 1}] {c['title']}", "source": c["source"], "expect": c["expect"]}
            for i, c in enumerate(INTRO_CELLS)
        ],
    }
    return {
        "wheels": wheels,
        "viz": viz,
        "notebooks": [intro] + [seed_notebook(m) for m in _seed_modules()],
    }


def build(offline: bool = False) -> None:
    """Write every generated file into SITE (``offline``: fail rather than download the
    graphviz wheel or the npm package when they are not there yet: the tests' build)."""
    wheels = build_wheels(SITE / "wheels", offline)
    viz = install_viz(SITE / "vendor", offline)
    content = build_cells(wheels, viz)
    (SITE / "cells.json").write_text(json.dumps(content, ensure_ascii=False, indent=1) + "\n")


def _origin_checkout() -> Path | None:
    """The folder this checkout was cloned from, when that is a local path (a clean clone
    made for CI or a check sits elsewhere; the Pyodide folder sits beside its origin)."""
    try:
        url = subprocess.run(
            ["git", "-C", str(ROOT), "config", "--get", "remote.origin.url"],
            capture_output=True, text=True, timeout=30,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    path = Path(url.removeprefix("file://")) if url else None
    return path if path is not None and path.is_dir() else None


def find_pyodide() -> Path | None:
    """The local Pyodide distribution (tests/wasm, tests/browser and the benchmarks use
    this lookup): ``$EMBER_PYODIDE``, else a ``shared/pyodide`` folder in a parent directory
    of the checkout, or of the local checkout it was cloned from (where this machine keeps
    it)."""
    candidates = [os.environ.get("EMBER_PYODIDE", "")]
    candidates += [str(p / "shared" / "pyodide") for p in ROOT.parents]
    origin = _origin_checkout()
    if origin is not None:
        candidates += [str(p / "shared" / "pyodide") for p in origin.resolve().parents]
    for c in candidates:
        if c and Path(c, "pyodide.js").is_file():
            return Path(c)
    return None


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves SITE, and the Pyodide folder under /pyodide/; records what it could not find
    (a test reports those paths when the page fails)."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",  # Pyodide compiles it while it streams in
        ".mjs": "text/javascript",
        ".json": "application/json",
    }

    def __init__(self, *args, pyodide: Path | None, missing: list, **kwargs):
        self.pyodide = pyodide
        self.missing = missing
        super().__init__(*args, directory=str(SITE), **kwargs)

    def translate_path(self, path: str) -> str:
        # One handler serves one connection's requests: choose the folder per request.
        self.directory = str(SITE)
        if self.pyodide is not None and path.startswith("/pyodide/"):
            self.directory, path = str(self.pyodide), path[len("/pyodide") :]
        return super().translate_path(path)

    def send_error(self, code, message=None, explain=None):
        self.missing.append(f"{code} {self.path}")
        super().send_error(code, message, explain)

    def log_message(self, format, *args):  # quiet: a page load is some 30 requests
        pass


def make_server(pyodide: Path | None, port: int = 0) -> http.server.ThreadingHTTPServer:
    """An HTTP server on 127.0.0.1 (``port`` 0: a free one) for the page and Pyodide; its
    ``missing`` list collects the requests it answered with an error."""
    missing: list = []
    handler = functools.partial(_Handler, pyodide=pyodide, missing=missing)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.missing = missing
    return server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--serve",
        action="store_true",
        help="then serve the page on 127.0.0.1 (with the local Pyodide folder under /pyodide/)",
    )
    parser.add_argument("--port", type=int, default=8000, help="the port --serve listens on")
    parser.add_argument(
        "--offline",
        action="store_true",
        help="download nothing: fail if the graphviz wheel or the npm package is missing",
    )
    args = parser.parse_args()
    try:
        build(args.offline)
    except BuildError as e:
        print(f"build_playground: {e}", file=sys.stderr)
        return 1
    print(f"built {SITE.relative_to(ROOT)}")
    if args.serve:
        pyodide = find_pyodide()
        server = make_server(pyodide, args.port)
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        print(f"serving {url} (Pyodide from its CDN)", flush=True)
        if pyodide is not None:
            print(f"offline: {url}?pyodide=/pyodide/ (Pyodide from {pyodide})", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
