# Quick start: `make demo` runs the main job, `make test` runs every check.
# Both create .venv on first use and install what they need into it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo demo-ddp tour test lint bench clean playground

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,oracle,viz,distributed,demo,bench,onnx,tensorboard]"
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

# Pure-Python wheels of pytest and its dependencies, for the test that runs the suite in
# WebAssembly (tests/wasm; pip picks hypothesis's newest pure-Python release there).
WASM_WHEELS := $(VENV)/wasm-wheels/.downloaded
$(WASM_WHEELS): $(STAMP)
	$(PY) -m pip download --quiet --no-deps --only-binary=:all: --platform any \
		--python-version 3.12 --implementation py -d $(VENV)/wasm-wheels \
		pytest pluggy iniconfig packaging pygments hypothesis sortedcontainers
	touch $@

demo: $(STAMP)
	$(PY) -m pip install --quiet -e ".[demo]"
	$(PY) examples/digits.py --out-dir runs/digits

# Data-parallel training in 2 MPI processes (Open MPI from the `distributed` extra; the
# OMPI_* variables let it run as root, --oversubscribe on a machine with fewer cores).
demo-ddp: $(STAMP)
	$(PY) -m pip install --quiet -e ".[demo,distributed]"
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 $(VENV)/bin/mpirun --oversubscribe \
		-n 2 $(PY) examples/digits.py --distributed --epochs 5 --no-progress --out-dir runs/digits-ddp

tour: $(STAMP)
	$(PY) -m ember.tour

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/ruff format --check src tests benchmarks examples

test: $(STAMP) $(WASM_WHEELS) lint playground
	@# gcc builds ember.compile's fused kernels (with Python's headers, which CPython has).
	@command -v gcc >/dev/null || (apt-get update -qq && apt-get install -y -qq gcc) \
		|| (sudo apt-get update -qq && sudo apt-get install -y -qq gcc)
	@# Graphviz's `dot` renders ember.viz pictures (a system package, not on PyPI).
	@command -v dot >/dev/null || (apt-get update -qq && apt-get install -y -qq graphviz) \
		|| (sudo apt-get update -qq && sudo apt-get install -y -qq graphviz)
	@# Headless Chromium runs the browser playground (tests/browser builds the page itself).
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium) \
		|| (sudo apt-get update -qq && sudo apt-get install -y -qq chromium)
	@# Node.js runs Pyodide (../shared/pyodide) for the WebAssembly test (tests/wasm).
	@command -v node >/dev/null || (apt-get update -qq && apt-get install -y -qq nodejs) \
		|| (sudo apt-get update -qq && sudo apt-get install -y -qq nodejs)
	@# The torch oracle is installed above: without it, fail rather than skip its comparisons.
	EMBER_REQUIRE_ORACLE=1 $(PY) -m pytest

# The browser playground in site/playground (ember's wheel, the tutorials' cells, Graphviz in
# WebAssembly from npm); `.venv/bin/python tools/build_playground.py --serve` also serves it.
playground: $(STAMP)
	@# npm fetches Graphviz-in-WebAssembly (@viz-js/viz) for the page.
	@command -v npm >/dev/null || (apt-get update -qq && apt-get install -y -qq npm) \
		|| (sudo apt-get update -qq && sudo apt-get install -y -qq npm)
	$(PY) tools/build_playground.py

bench: $(STAMP)
	$(PY) -m pip install --quiet -e ".[bench]"
	$(PY) benchmarks/run.py --out benchmarks/last-run.md
	$(PY) benchmarks/w8_gpt.py
	$(PY) benchmarks/w9_lstm.py

clean:
	rm -rf $(VENV) .venv-min .pytest_cache .ruff_cache .hypothesis
