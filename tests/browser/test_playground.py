"""The browser playground (playground) runs the seed tutorials in a real browser.

The page is built (``tools/build_playground.py``: this tree's ember wheel, the cells, Graphviz
in WebAssembly), served on 127.0.0.1 with the local Pyodide distribution under ``/pyodide/``,
and opened in headless Chromium with ``?pyodide=/pyodide/&autorun=1``: Pyodide, NumPy and
SciPy load, ember installs from its wheel, and every cell runs. The page then tells (its
``playgroundReport()``) what each cell showed; the checks here read that report and the page
itself: seed 001's 4.5 gradients, the ``grad_fn`` names, a drawn graph, the training loss
going down, every cell showing what PyTorch 2.13 prints (the texts the seed tests hold), and
no request leaving 127.0.0.1.

Chromium is driven through its DevTools protocol over a pipe (``--remote-debugging-pipe``):
standard library only, no websocket client and no debugging port. Set
``EMBER_PLAYGROUND_SCREENSHOT=docs/guides/playground.png`` to save the page after its run (the
README shows that picture). Needs Chromium, npm (for the build) and the Pyodide folder
(``$EMBER_PYODIDE`` or a ``shared/pyodide`` above the checkout): without one of them the
tests skip, or fail when ``EMBER_REQUIRE_ORACLE`` is set (``make test`` sets it).
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "build_playground.py"
REQUIRED = os.environ.get("EMBER_REQUIRE_ORACLE", "") not in ("", "0")
# Loading takes some 10 s (Pyodide, NumPy and SciPy, ember), running every cell as long.
PAGE_SECONDS = 75
VIEWPORT = {"width": 1200, "height": 1500, "deviceScaleFactor": 1, "mobile": False}
FOUR_AND_A_HALF = "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n"


def _unavailable(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"{reason} (EMBER_REQUIRE_ORACLE is set: the browser test must run)")
    pytest.skip(reason)


def _tool():
    """tools/build_playground.py as a module: its Pyodide lookup and HTTP server."""
    spec = importlib.util.spec_from_file_location("build_playground", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class DevTools:
    """Headless Chromium under its DevTools protocol, spoken over a pipe: JSON messages,
    each ended by a NUL byte, on the browser's file descriptors 3 (commands) and 4 (replies
    and events), as ``--remote-debugging-pipe`` sets up."""

    def __init__(self, chromium: str, profile: Path, log: Path) -> None:
        commands_r, self._commands = os.pipe()
        self._replies, replies_w = os.pipe()
        args = [
            chromium,
            "--headless",
            "--no-sandbox",  # as root in a container, Chromium's sandbox cannot start
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            # Host names resolve nowhere: no request can leave 127.0.0.1.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--no-first-run",
            "--no-default-browser-check",
            f"--user-data-dir={profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        # The pipe ends come in as stdin and stdout; the shell moves them to 3 and 4.
        script = 'exec "$@" 3<&0 4>&1 0</dev/null 1>&2'
        with open(log, "wb") as log_file:
            self.proc = subprocess.Popen(
                ["sh", "-c", script, "sh", *args],
                stdin=commands_r,
                stdout=replies_w,
                stderr=log_file,
            )
        os.close(commands_r)
        os.close(replies_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._replies], [], [], left)[0]:
                raise TimeoutError("no reply from Chromium")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe (crashed?)")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, session: str | None = None, timeout: float = 30, **params):
        """Send a command and wait for its reply (events on the way are kept in ``events``)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def evaluate(self, session: str, expression: str, timeout: float = 30):
        """The JSON-able value of a JavaScript expression in the page."""
        reply = self.call(
            "Runtime.evaluate",
            session,
            timeout,
            expression=expression,
            returnByValue=True,
            awaitPromise=True,
        )
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def messages(self) -> list[str]:
        """The page's console messages and uncaught errors so far (for failure reports)."""
        out = []
        for event in self.events:
            if event.get("method") == "Runtime.consoleAPICalled":
                args = event["params"]["args"]
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in args))
            elif event.get("method") == "Runtime.exceptionThrown":
                out.append(str(event["params"]["exceptionDetails"]))
        return out

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except (OSError, RuntimeError, TimeoutError):
            pass  # it is killed just below
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._commands)
        os.close(self._replies)


def _build() -> None:
    """Build the page now: it must run this tree's ember, not a wheel from an older build."""
    # offline: the downloads (graphviz's wheel, the npm package) are `make playground`'s,
    # which `make test` runs first; a test fetches nothing from the network
    cmd = [sys.executable, str(TOOL), "--offline"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"building the playground failed:\n{proc.stdout}{proc.stderr}"


@pytest.fixture(scope="module")
def server():
    """The freshly built page and the local Pyodide (``/pyodide/``) on 127.0.0.1."""
    tool = _tool()
    pyodide = tool.find_pyodide()
    if pyodide is None:
        _unavailable("no local Pyodide (set EMBER_PYODIDE, or put it in ../shared/pyodide)")
    _build()
    server = tool.make_server(pyodide)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}/"
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        _unavailable("no chromium (apt-get install chromium)")
    tmp = tmp_path_factory.mktemp("chromium")
    browser = DevTools(chromium, tmp / "profile", tmp / "chromium.log")
    yield browser
    browser.close()


def _open(browser: DevTools, url: str) -> tuple[str, float]:
    """Open ``url`` in a new tab; its DevTools session and when it started loading."""
    target = browser.call("Target.createTarget", url="about:blank")["targetId"]
    session = browser.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    for domain in ("Runtime", "Page", "Network"):
        browser.call(f"{domain}.enable", session)
    browser.call("Emulation.setDeviceMetricsOverride", session, **VIEWPORT)
    started = time.monotonic()
    browser.call("Page.navigate", session, url=url)
    return session, started


def _wait(browser: DevTools, session: str, started: float, seconds: float) -> str | None:
    """Wait until the page is done (or failed); its last phase."""
    phase = None
    while time.monotonic() - started < seconds:
        phase = browser.evaluate(
            session, "window.playgroundReport ? playgroundReport().phase : null", timeout=60
        )
        if phase in ("done", "failed"):
            break
        time.sleep(0.5)
    return phase


def _screenshot(browser: DevTools, session: str) -> bytes:
    """The page's top down to the loss plot: the status line, the graph, the training."""
    bottom = browser.evaluate(
        session,
        """(() => { const canvas = document.querySelector(".output canvas");
                    if (!canvas) return window.innerHeight;  // a failed run: its top
                    const box = canvas.closest(".cell").getBoundingClientRect();
                    return box.bottom + window.scrollY + 16; })()""",
    )
    clip = {"x": 0, "y": 0, "width": VIEWPORT["width"], "height": bottom, "scale": 1}
    shot = browser.call("Page.captureScreenshot", session, clip=clip, captureBeyondViewport=True)
    return base64.b64decode(shot["data"])


@pytest.fixture(scope="module")
def page(browser, server, tmp_path_factory) -> dict:
    """The playground after it ran every cell: ``report`` (the page's own, with timings),
    ``dom`` (what the page shows) and ``requests`` (every URL the page fetched)."""
    session, started = _open(browser, server.url + "?pyodide=/pyodide/&autorun=1")
    phase = _wait(browser, session, started, PAGE_SECONDS)
    wall = time.monotonic() - started
    report = browser.evaluate(session, "playgroundReport()")
    dom = browser.evaluate(
        session,
        """({svgs: document.querySelectorAll(".graph svg").length,
             graphText: [...document.querySelectorAll(".graph svg")]
                 .map((s) => s.textContent).join(" "),
             canvases: document.querySelectorAll(".output canvas").length,
             status: document.getElementById("status").textContent})""",
    )
    shot = _screenshot(browser, session)
    saved = tmp_path_factory.mktemp("screenshot") / "playground.png"
    saved.write_bytes(shot)
    if os.environ.get("EMBER_PLAYGROUND_SCREENSHOT"):
        Path(os.environ["EMBER_PLAYGROUND_SCREENSHOT"]).write_bytes(shot)
    requests = [
        e["params"]["request"]["url"]
        for e in browser.events
        if e.get("method") == "Network.requestWillBeSent" and e.get("sessionId") == session
    ]
    context = (
        f"phase {phase} after {wall:.1f} s; status: {dom['status']}\n"
        f"page error: {report['error']}\nHTTP errors: {server.missing}\n"
        f"console: {browser.messages()[-20:]}\nscreenshot: {saved}"
    )
    assert phase == "done", context
    return {"report": report, "dom": dom, "requests": requests, "context": context}


def _cell(page, notebook: str, label: str) -> dict:
    (cell,) = [
        c for c in page["report"]["cells"] if c["notebook"] == notebook and c["label"] == label
    ]
    return cell


def test_every_cell_shows_what_pytorch_prints(page):
    """Every cell ran (but seed 003's MXNet cells, which the page skips and says why) and
    showed the text PyTorch 2.13 prints for it, or raised its error, as the seed tests
    expect; no cell without an expected text raised."""
    cells = page["report"]["cells"]
    skipped = [(c["notebook"], c["label"]) for c in cells if c["skip"]]
    assert skipped == [("003", "In [2]"), ("003", "In [3]")]
    assert all("MXNet" in c["skip"] for c in cells if c["skip"])
    wrong = [
        f"{c['notebook']} {c['label']}: {c['status']}, showed\n{c['shown']}{c['error'] or ''}\n"
        f"expected\n{c['expect']}{c['raises'] or ''}"
        for c in cells
        if not c["skip"] and (c["status"] == "not run" or c["ok"] is False)
    ]
    assert not wrong, "\n".join(wrong) + "\n" + page["context"]
    checked = sum(c["ok"] is True for c in cells)
    assert checked >= 90, f"only {checked} cells were checked against PyTorch's texts"


def test_seed_001_gradients_are_four_and_a_half(page):
    cell = _cell(page, "001", "In [8]")
    assert cell["shown"] == FOUR_AND_A_HALF and cell["ok"] is True
    assert _cell(page, "playground", "[1] The classic example, and its graph")["shown"] == (
        FOUR_AND_A_HALF
    )


def test_grad_fn_names_print_as_in_the_tutorial(page):
    assert "grad_fn=<AddBackward0>" in _cell(page, "001", "In [3]")["shown"]
    assert _cell(page, "001", "In [4]")["shown"].startswith("<AddBackward0 object at 0x")
    shown = _cell(page, "001", "In [5]")["shown"]
    assert "grad_fn=<MulBackward0>" in shown and "grad_fn=<MeanBackward0>" in shown


def test_make_dot_graph_is_drawn_as_svg(page):
    """The classic example ends in ``make_dot(out, ...)``: Graphviz (WebAssembly) drew it."""
    assert _cell(page, "playground", "[1] The classic example, and its graph")["graphs"] == 1
    assert page["dom"]["svgs"] >= 1
    for node in ("MeanBackward0", "MulBackward0", "AddBackward0", "AccumulateGrad"):
        assert node in page["dom"]["graphText"]


def test_training_loss_goes_down_and_is_plotted(page):
    cell = _cell(page, "playground", "[2] Training a small MLP, with a live loss plot")
    losses = [loss for _, loss in cell["losses"]]
    assert [step for step, _ in cell["losses"]] == list(range(5, 101, 5))
    assert losses[-1] < 0.5 * losses[0], losses
    assert cell["shown"].startswith("mse after 100 steps: ")
    assert page["dom"]["canvases"] == 1


def test_the_page_fetches_only_from_127_0_0_1(page):
    """With ``?pyodide=``, Pyodide, its packages, the wheels and Graphviz all come from the
    local server: the page works offline (no CDN)."""
    outside = [
        u for u in page["requests"] if not u.startswith(("http://127.0.0.1:", "data:", "blob:"))
    ]
    assert page["requests"] and not outside


def test_load_and_run_times_are_reported(page):
    timings = page["report"]["timings"]
    assert set(timings) >= {"pyodide", "packages", "ember", "ready", "runAll"}
    assert "loaded in " in page["dom"]["status"] and " 0 ✗" in page["dom"]["status"]


def test_pyodide_comes_from_its_release_url_by_default(browser, server):
    """Without ``?pyodide=`` the page loads Pyodide 0.27.7 from the CDN, which this browser
    cannot reach (its host names resolve nowhere): the page says so, and how to go offline."""
    session, started = _open(browser, server.url)
    assert _wait(browser, session, started, 30) == "failed"
    error = browser.evaluate(session, "playgroundReport().error")
    assert "https://cdn.jsdelivr.net/pyodide/v0.27.7/full/" in error and "?pyodide=" in error
