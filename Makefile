# Quick start: `make demo` runs the main job, `make test` runs every check.
# Both create .venv on first use and install what they need into it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo tour test lint bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev,oracle]"
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m pip install --quiet -e ".[demo]"
	$(PY) examples/digits.py --out-dir runs/digits

tour: $(STAMP)
	$(PY) -m ember.tour

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/ruff format --check src tests benchmarks examples

test: $(STAMP) lint
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m pip install --quiet -e ".[bench]"
	$(PY) benchmarks/run.py --out benchmarks/last-run.md

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
