# Quick start: `make demo` runs the main job, `make test` runs every check.
# Both create .venv on first use and install what they need into it, again only when
# pyproject.toml changes: `make demo` only ember[demo], `make test` every extra.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PYPROJECT_SUM := $(shell cat pyproject.toml | cksum | cut -d' ' -f1)
STAMP := $(VENV)/.installed-$(PYPROJECT_SUM)
DEMO_STAMP := $(VENV)/.demo-$(PYPROJECT_SUM)
DOCS_STAMP := $(VENV)/.docs-$(PYPROJECT_SUM)
ALL_EXTRAS := dev,oracle,viz,distributed,demo,bench,onnx,tensorboard,docs,ecosystem

# $(call system_package,COMMAND,DEBIAN_PACKAGE): install the package with apt (as root, else
# through sudo) when COMMAND is missing.
system_package = command -v $(1) >/dev/null || (apt-get update -qq && apt-get install -y -qq $(2)) \
	|| (sudo apt-get update -qq && sudo apt-get install -y -qq $(2))

.PHONY: demo demo-ddp tour test lint bench clean playground docs

$(PY):
	$(PYTHON) -m venv $(VENV)

# torchvision and timm for tests/ecosystem, kept out of site-packages: the only torchvision
# wheel for torch 2.13 on the index is a CUDA build whose operators cannot load into torch's
# CPU build, and installed beside it, it stops real torch's imports of transformers and
# diffusers (tests/ecosystem/programs/oracle_io.py: use_vision_packages).
VISION_PACKAGES := torchvision==0.28.0 timm==1.0.31

# Every extra (make test); it includes what demo and docs need, so their stamps come too.
$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[$(ALL_EXTRAS)]"
	$(PY) -m pip install --quiet --no-deps --upgrade --target $(VENV)/vision-packages \
		$(VISION_PACKAGES)
	rm -f $(VENV)/.installed-* $(VENV)/.demo-* $(VENV)/.docs-*
	touch $(STAMP) $(DEMO_STAMP) $(DOCS_STAMP)

$(DEMO_STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet -e ".[demo]"
	rm -f $(VENV)/.demo-*
	touch $@

$(DOCS_STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet -e ".[docs]"
	rm -f $(VENV)/.docs-*
	touch $@

# Pure-Python wheels of pytest and its dependencies, for the test that runs the suite in
# WebAssembly (tests/wasm; pip picks hypothesis's newest pure-Python release there).
WASM_WHEELS := $(VENV)/wasm-wheels/.downloaded
$(WASM_WHEELS): $(STAMP)
	$(PY) -m pip download --quiet --no-deps --only-binary=:all: --platform any \
		--python-version 3.12 --implementation py -d $(VENV)/wasm-wheels \
		pytest pluggy iniconfig packaging pygments hypothesis sortedcontainers
	touch $@

demo: $(DEMO_STAMP)
	$(PY) examples/digits.py --out-dir runs/digits

# Data-parallel training in 2 MPI processes (Open MPI from the `distributed` extra; the
# OMPI_* variables let it run as root, --oversubscribe on a machine with fewer cores).
demo-ddp: $(STAMP)
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 $(VENV)/bin/mpirun --oversubscribe \
		-n 2 $(PY) examples/digits.py --distributed --epochs 5 --no-progress --out-dir runs/digits-ddp

tour: $(STAMP)
	$(PY) -m ember.tour

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks examples tools
	$(VENV)/bin/ruff format --check src tests benchmarks examples tools

test: $(STAMP) $(WASM_WHEELS) lint playground docs
	@# gcc builds ember.compile's fused kernels (with Python's headers, which CPython has).
	@$(call system_package,gcc,gcc)
	@# Headless Chromium runs the browser playground (tests/browser builds the page itself).
	@$(call system_package,chromium,chromium)
	@# Node.js runs Pyodide (../shared/pyodide) for the WebAssembly test (tests/wasm).
	@$(call system_package,node,nodejs)
	@# The torch oracle is installed above: without it, fail rather than skip its comparisons.
	EMBER_REQUIRE_ORACLE=1 $(PY) -m pytest

# The documentation site, built into site/ (mkdocs.yml; strict: any warning fails). Its pages
# run code at build time, make_dot pictures included: Graphviz's `dot` is a system package.
docs: $(DOCS_STAMP)
	@$(call system_package,dot,graphviz)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --quiet

# The browser playground in playground (ember's wheel, the tutorials' cells, Graphviz in
# WebAssembly from npm); `.venv/bin/python tools/build_playground.py --serve` also serves it.
playground: $(STAMP)
	@# npm fetches Graphviz-in-WebAssembly (@viz-js/viz) for the page.
	@$(call system_package,npm,npm)
	$(PY) tools/build_playground.py

bench: $(STAMP)
	$(PY) benchmarks/run.py --out benchmarks/last-run.md
	$(PY) benchmarks/w8_gpt.py
	$(PY) benchmarks/w9_lstm.py
	$(PY) benchmarks/w10_conv.py

clean:
	rm -rf $(VENV) .venv-min .pytest_cache .ruff_cache .hypothesis site
