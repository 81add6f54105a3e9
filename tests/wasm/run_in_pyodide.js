// Run a Python script inside Pyodide (CPython compiled to WebAssembly) under Node, with
// ember's wheel installed: the WebAssembly half of tests/wasm/test_wasm.py.
//
//   node run_in_pyodide.js <pyodide dir> <script.py> [wheel.whl | host dir=mount point]...
//
// The wheels (ember's, and the pure-Python ones pytest needs) are installed with micropip;
// the host directories are mounted into Pyodide's file system (the test suite), so nothing
// is copied. The script's stdout and stderr pass through; the exit status is 1 on an
// uncaught exception, else what the script put in the global EXIT_STATUS (default 0).
"use strict";
const fs = require("fs");
const path = require("path");

async function main() {
  const [pyodideDir, script, ...items] = process.argv.slice(2);
  const wheels = items.filter((item) => item.endsWith(".whl"));
  const mounts = items.filter((item) => item.includes("="));
  const { loadPyodide } = require(path.resolve(pyodideDir, "pyodide.js"));
  const started = Date.now();
  const py = await loadPyodide({ indexURL: path.resolve(pyodideDir) + "/" });
  await py.loadPackage(["numpy", "scipy", "micropip"], { messageCallback: () => {} });
  const urls = wheels.map((wheel) => {
    const name = path.basename(wheel);
    py.FS.writeFile("/tmp/" + name, fs.readFileSync(wheel));
    return `"emfs:/tmp/${name}"`;
  });
  await py.runPythonAsync(`import micropip\nawait micropip.install([${urls}], deps=False)`);
  for (const spec of mounts) {
    const [host, target] = spec.split("=");
    py.FS.mkdirTree(target);
    py.mountNodeFS(target, path.resolve(host));
  }
  const loaded = (Date.now() - started) / 1000;
  py.globals.set("PYODIDE_LOAD_SECONDS", loaded);
  let status = 0;
  try {
    await py.runPythonAsync(fs.readFileSync(script, "utf8"));
    status = py.globals.get("EXIT_STATUS") || 0;
  } catch (err) {
    console.error(String(err));
    status = 1;
  }
  process.exit(status);
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
