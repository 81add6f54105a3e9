// ember playground: loads Pyodide (CPython in WebAssembly) with NumPy and SciPy, installs
// ember's wheel, and runs the notebooks of cells.json (written by tools/build_playground.py).
// Python-side cell running lives in playground.py; this file is the page: loading, cells,
// output, graphs (Graphviz in WebAssembly) and the loss plot.
"use strict";

const PYODIDE_VERSION = "0.27.7";
const params = new URLSearchParams(location.search);
// Pyodide's files come from its release on the CDN unless ?pyodide= names another folder
// (the browser test serves a local copy; so can an offline machine).
const PYODIDE_BASE = withSlash(
  params.get("pyodide") || `https://cdn.jsdelivr.net/pyodide/v${PYODIDE_VERSION}/full/`);
const AUTORUN = params.has("autorun") && params.get("autorun") !== "0";

// What the page is doing, read by the browser test (tests/browser/test_playground.py).
const state = { phase: "loading", timings: {}, error: null };
let content = null;      // cells.json
let pyodide = null;      // the Pyodide instance, once loaded
let glue = null;         // playground.py, imported in Pyodide
const notebooks = [];    // {data, el, cells, ns}: ns is the notebook's Python globals
let queue = Promise.resolve();  // cells run one at a time, in the order they were asked
let currentCell = null;  // the running cell: where prints, graphs and plot points go
let vizPromise = null;   // Graphviz (viz-js), loaded on the first graph
let loadedText = "";     // the status line's account of the loading, kept after runs

function withSlash(url) {
  return url.endsWith("/") ? url : url + "/";
}

// A new element with a class and text.
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function setStatus(text, isError = false) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.classList.toggle("error", isError);
}

function seconds(ms) {
  return (ms / 1000).toFixed(1) + " s";
}

function loadScript(src) {
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = src;
    script.onload = resolve;
    script.onerror = () => reject(new Error(`could not load ${src}`));
    document.head.append(script);
  });
}

// The transcripts' notes are Markdown-ish text: keep their lines, show `code` as code.
function prose(text, className = "prose") {
  const div = el("div", className);
  const escaped = text.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]);
  div.innerHTML = escaped.replace(/`{1,3}([^`]+?)`{1,3}/g, "<code>$1</code>");
  return div;
}

// Object addresses differ on every run (as the test suite's replay.normalize ignores them).
function normalize(text) {
  return text.replace(/0x[0-9a-fA-F]+/g, "0x...");
}

// -- the notebooks ---------------------------------------------------------------------

function renderNotebooks() {
  const root = document.getElementById("notebooks");
  const toc = document.getElementById("toc");
  for (const data of content.notebooks) {
    const nb = { data, el: el("section", "notebook"), cells: [], ns: null };
    nb.el.id = "nb-" + data.id;
    const heading = el("h2", "", data.title);
    const run = el("button", "run", "Run");
    run.title = "Restart this notebook and run all its cells";
    run.disabled = true;
    run.onclick = () => runNotebook(nb);
    heading.append(run);
    nb.runButton = run;
    nb.el.append(heading, prose(data.about, "about"));  // a docstring: ``code`` as code
    if (data.intro) nb.el.append(prose(data.intro));
    for (const cellData of data.cells) nb.cells.push(renderCell(nb, cellData));
    root.append(nb.el);
    const link = el("a", "", data.title.replace("Seed tutorial", "Seed"));
    link.href = "#" + nb.el.id;
    toc.append(link);
    notebooks.push(nb);
  }
}

function renderCell(nb, data) {
  const cell = { notebook: nb, data, result: null, plot: null };
  const box = el("div", "cell");
  const head = el("div", "cell-head");
  const label = el("span", "label", data.label);
  const run = el("button", "", "Run");
  run.disabled = true;
  run.title = "Run this cell (Shift+Enter)";
  run.onclick = () => runCell(cell);
  cell.badge = el("span", "badge");
  if (data.skip) {
    cell.badge.textContent = data.skip;
    cell.badge.classList.add("skip");
  }
  head.append(label, run, cell.badge);
  const source = el("textarea");
  source.value = data.source;
  source.spellcheck = false;
  source.rows = data.source.split("\n").length;
  source.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && event.shiftKey) {  // run, as in Jupyter
      event.preventDefault();
      runCell(cell);
    } else if (event.key === "Tab") {  // indent instead of leaving the box
      event.preventDefault();
      source.setRangeText("    ", source.selectionStart, source.selectionEnd, "end");
    }
  });
  source.addEventListener("input", () => {
    source.rows = source.value.split("\n").length;
  });
  cell.output = el("div", "output");
  box.append(head, source, cell.output);
  if (data.transcript) {  // the original notebook's text: old output and the tutorial's notes
    const details = el("details");
    details.append(el("summary", "", "the transcript after this cell"), prose(data.transcript));
    box.append(details);
  }
  Object.assign(cell, { box, source, runButton: run });
  nb.el.append(box);
  return cell;
}

// -- running cells ---------------------------------------------------------------------

function runCell(cell) {
  const job = queue.then(() => execute(cell));
  queue = job.catch(() => {});
  return job;
}

// Restart the notebook (fresh globals, the tutorial's manual_seed) and run every cell that
// is not skipped, in order.
async function runNotebook(nb) {
  await queue;
  if (nb.ns) nb.ns.destroy();
  nb.ns = null;
  for (const cell of nb.cells) {
    if (!cell.data.skip) await runCell(cell);
  }
}

async function runAll() {
  const started = performance.now();
  state.phase = "running";
  document.getElementById("run-all").disabled = true;
  for (const nb of notebooks) await runNotebook(nb);
  state.timings.runAll = performance.now() - started;
  state.phase = "done";
  document.getElementById("run-all").disabled = false;
  const all = report();
  const count = (pred) => all.filter(pred).length;
  setStatus(`${loadedText} · ran ${count((c) => c.status !== "not run")} cells in ` +
    `${seconds(state.timings.runAll)}: ` +
    `${count((c) => c.ok === true)} ✓, ${count((c) => c.ok === false)} ✗, ` +
    `${count((c) => c.skip)} skipped`);
}

// Run one cell: clear its output, hand its source to playground.py's run_cell, and show
// what it prints as it runs (emit), then whether it showed what it should.
async function execute(cell) {
  const nb = cell.notebook;
  if (!nb.ns) nb.ns = glue.new_namespace(nb.data.seed);
  const result = { shown: "", stderr: "", error: null, graphs: 0, losses: [], ms: 0 };
  const pending = [];  // graphs being drawn
  cell.result = result;
  cell.plot = null;
  cell.output.replaceChildren();
  cell.box.classList.remove("error");
  cell.box.classList.add("running");
  cell.badge.textContent = "running…";
  cell.badge.className = "badge";
  let stream = null;  // the <pre> the latest stdout/stderr text went to
  const emit = (kind, text) => {
    if (kind === "dot") {
      pending.push(drawGraph(cell, text));
    } else if (kind === "error") {
      cell.output.append(el("pre", "traceback", text));
      stream = null;
    } else {  // stdout (with the last expression's repr) or stderr (e.g. warnings)
      if (kind === "stdout") result.shown += text;
      else result.stderr += text;
      if (!stream || stream.dataset.kind !== kind) {
        stream = el("pre", kind);
        stream.dataset.kind = kind;
        cell.output.append(stream);
      }
      stream.textContent += text;
    }
  };
  currentCell = cell;
  const started = performance.now();
  try {
    const task = glue.run_cell(cell.source.value, nb.ns, `${nb.data.id} ${cell.data.label}`, emit);
    result.error = (await task) ?? null;
    task.destroy();
  } catch (error) {  // a failure of the page's own machinery, not of the cell's code
    result.error = String(error);
    emit("error", String(error));
  } finally {
    currentCell = null;
  }
  await Promise.all(pending);
  result.ms = performance.now() - started;
  cell.box.classList.remove("running");
  showVerdict(cell);
}

// Whether the cell showed what it should: true, false, or null when nothing is expected.
function verdict(cell) {
  const { data, result } = cell;
  if (data.raises !== undefined) {
    return result.error === data.raises && normalize(result.shown) === normalize(data.expect);
  }
  if (result.error) return false;
  if (data.expect === null || data.expect === undefined) return null;
  return normalize(result.shown) === normalize(data.expect);
}

function showVerdict(cell) {
  const ok = verdict(cell);
  const time = ` (${Math.round(cell.result.ms)} ms)`;
  cell.badge.className = "badge" + (ok === true ? " ok" : ok === false ? " bad" : "");
  if (ok === true) {
    cell.badge.textContent = (cell.data.raises ? "✓ raises as PyTorch 2.13 does" :
      "✓ shows what PyTorch 2.13 prints") + time;
  } else if (ok === false) {
    cell.box.classList.add("error");
    const expected = cell.data.raises ? `${cell.data.expect}${cell.data.raises}` : cell.data.expect;
    if (expected === null || expected === undefined) {
      cell.badge.textContent = "✗ raised" + time;
    } else {
      cell.badge.textContent = "✗ PyTorch 2.13 shows something else" + time;
      const details = el("details");
      details.open = true;
      details.append(el("summary", "", "what PyTorch 2.13 shows"), el("pre", "", expected));
      cell.output.append(details);
    }
  } else {
    cell.badge.textContent = "ran" + time;
  }
}

// -- graphs and the loss plot ----------------------------------------------------------

function getViz() {
  if (!vizPromise) vizPromise = loadScript(content.viz).then(() => Viz.instance());
  return vizPromise;
}

// Draw DOT text (from show(graph) or a cell ending in make_dot(...)) as an SVG.
async function drawGraph(cell, dot) {
  const box = el("div", "graph");
  cell.output.append(box);
  try {
    const viz = await getViz();
    box.append(viz.renderSVGElement(dot));
    cell.result.graphs += 1;
  } catch (error) {
    box.append(el("pre", "traceback", `could not draw the graph (${error}):\n${dot}`));
  }
}

// Called from Python (`from js import plotLoss`): add a point to the running cell's plot.
function plotLoss(step, loss) {
  const cell = currentCell;
  if (!cell) return;
  if (!cell.plot) {
    const canvas = el("canvas");
    const ratio = window.devicePixelRatio || 1;
    canvas.style.width = "560px";
    canvas.style.height = "220px";
    canvas.width = 560 * ratio;
    canvas.height = 220 * ratio;
    cell.output.prepend(canvas);
    cell.plot = { canvas, ratio };
  }
  cell.result.losses.push([step, loss]);
  drawPlot(cell.plot, cell.result.losses);
}
window.plotLoss = plotLoss;

// A line chart of [step, loss] points: x from 0 to the last step, y from 0 to the largest
// loss, with the axes' ends labelled.
function drawPlot(plot, points) {
  const { canvas, ratio } = plot;
  const ctx = canvas.getContext("2d");
  const width = canvas.width / ratio, height = canvas.height / ratio;
  const left = 52, right = 12, top = 14, bottom = 28;
  const maxStep = points[points.length - 1][0];
  const maxLoss = Math.max(...points.map((p) => p[1]));
  const x = (step) => left + (step / maxStep) * (width - left - right);
  const y = (loss) => top + (1 - loss / maxLoss) * (height - top - bottom);
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  ctx.strokeStyle = "#9aa4ae";
  ctx.beginPath();  // axes
  ctx.moveTo(left, top);
  ctx.lineTo(left, height - bottom);
  ctx.lineTo(width - right, height - bottom);
  ctx.stroke();
  ctx.fillStyle = "#5d6875";
  ctx.font = "11px system-ui, sans-serif";
  ctx.textAlign = "right";
  ctx.fillText(maxLoss.toPrecision(3), left - 6, top + 4);
  ctx.fillText("0", left - 6, height - bottom);
  ctx.textAlign = "center";
  ctx.fillText(`step ${maxStep}`, width - right - 24, height - 8);
  ctx.fillText("loss (MSE)", width - right - 30, top + 4);
  ctx.strokeStyle = "#c2410c";
  ctx.lineWidth = 2;
  ctx.beginPath();
  points.forEach(([step, loss], i) => (i ? ctx.lineTo(x(step), y(loss)) : ctx.moveTo(x(step), y(loss))));
  ctx.stroke();
  const [lastStep, lastLoss] = points[points.length - 1];
  ctx.textAlign = "right";
  ctx.fillStyle = "#c2410c";
  ctx.fillText(lastLoss.toFixed(4), x(lastStep) - 4, y(lastLoss) - 6);
}

// -- loading ---------------------------------------------------------------------------

// Every cell's outcome, as plain data (the browser test reads it as JSON).
function report() {
  const out = [];
  for (const nb of notebooks) {
    for (const cell of nb.cells) {
      const r = cell.result;
      out.push({
        notebook: nb.data.id, label: cell.data.label, skip: cell.data.skip || null,
        status: r ? (r.error ? "error" : "ok") : "not run",
        ok: r ? verdict(cell) : null,
        shown: r ? r.shown : "", stderr: r ? r.stderr : "", error: r ? r.error : null,
        expect: cell.data.expect ?? null, raises: cell.data.raises ?? null,
        graphs: r ? r.graphs : 0, losses: r ? r.losses : [], ms: r ? r.ms : 0,
      });
    }
  }
  return out;
}
window.playgroundReport = () => ({ ...state, cells: report() });

async function load() {
  const t0 = performance.now();
  const mark = (name, since) => (state.timings[name] = performance.now() - since);
  const contentPromise = fetch("cells.json").then((r) => {
    if (!r.ok) throw new Error("cells.json is missing: build the page first (make playground)");
    return r.json();
  });
  setStatus(`Loading Pyodide ${PYODIDE_VERSION} from ${PYODIDE_BASE}…`);
  const pyodidePromise = loadScript(PYODIDE_BASE + "pyodide.js")
    .catch(() => {
      throw new Error(`could not load Pyodide from ${PYODIDE_BASE} ` +
        "(offline? serve a Pyodide 0.27.7 folder and add ?pyodide=<its URL> to this page's URL)");
    })
    .then(() => loadPyodide({ indexURL: PYODIDE_BASE }));
  content = await contentPromise;
  renderNotebooks();
  pyodide = await pyodidePromise;
  mark("pyodide", t0);

  let t = performance.now();
  setStatus("Loading NumPy and SciPy…");
  await pyodide.loadPackage(["numpy", "scipy", "micropip"]);
  mark("packages", t);

  t = performance.now();
  setStatus("Installing ember…");
  const wheels = content.wheels.map((w) => new URL(w, location.href).href);
  const micropip = pyodide.pyimport("micropip");
  // deps=False: ember's requirements are here already, except ml_dtypes (bfloat16), which
  // does not exist for Pyodide and which ember imports only when bfloat16 is used.
  await micropip.install.callKwargs(pyodide.toPy(wheels), { deps: false });
  const glueSource = await (await fetch("playground.py")).text();
  pyodide.FS.writeFile("/home/pyodide/playground.py", glueSource);  // the cwd: importable
  glue = pyodide.pyimport("playground");
  setStatus("Importing ember…");
  // ember.__version__ is the torch version it presents; the package's own is in its metadata.
  const version = await pyodide.runPythonAsync(
    "import importlib.metadata, ember\nimportlib.metadata.version('ember')");
  mark("ember", t);
  mark("ready", t0);

  state.phase = "ready";
  const { pyodide: tp, packages: tn, ember: te, ready } = state.timings;
  loadedText = `ember ${version} on Pyodide ${pyodide.version}, loaded in ${seconds(ready)} ` +
    `(Pyodide ${seconds(tp)}, NumPy+SciPy ${seconds(tn)}, ember ${seconds(te)})`;
  setStatus("Ready: " + loadedText);
  for (const nb of notebooks) {
    nb.runButton.disabled = false;
    for (const cell of nb.cells) cell.runButton.disabled = false;
  }
  const runAllButton = document.getElementById("run-all");
  runAllButton.disabled = false;
  runAllButton.onclick = runAll;
  if (AUTORUN) await runAll();
}

load().catch((error) => {
  state.phase = "failed";
  state.error = String(error);
  setStatus("Failed: " + error.message, true);
  console.error(error);
});
