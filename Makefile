# Quick start: `make demo` runs the main job, `make test` runs every check.
# Both create .venv on first use and install what they need into it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo demo-ddp tour test lint bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,oracle,viz,distributed,demo,bench,onnx,tensorboard]"
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

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

test: $(STAMP) lint
	@# gcc builds ember.compile's fused kernels (with Python's headers, which CPython has).
	@command -v gcc >/dev/null || (apt-get update -qq && apt-get install -y -qq gcc) \
		|| (sudo apt-get update -qq && sudo apt-get install -y -qq gcc)
	@# Graphviz's `dot` renders ember.viz pictures (a system package, not on PyPI).
	@command -v dot >/dev/null || (apt-get update -qq && apt-get install -y -qq graphviz) \
		|| (sudo apt-get update -qq && sudo apt-get install -y -qq graphviz)
	@# The torch oracle is installed above: without it, fail rather than skip its comparisons.
	EMBER_REQUIRE_ORACLE=1 $(PY) -m pytest

bench: $(STAMP)
	$(PY) -m pip install --quiet -e ".[bench]"
	$(PY) benchmarks/run.py --out benchmarks/last-run.md
	$(PY) benchmarks/w8_gpt.py
	$(PY) benchmarks/w9_lstm.py

clean:
	rm -rf $(VENV) .venv-min .pytest_cache .ruff_cache .hypothesis
