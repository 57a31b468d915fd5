# `make demo` and `make test` do everything on a fresh machine: venv, install, run.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean clean-cache

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e ".[test,bench,dask,spacy,serve]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/swvp demo

test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/synthetic.py

# drop every compiled kernel (the cache stamps already follow edits: this only frees the disk)
clean-cache:
	find src -name '*.nbi' -delete -o -name '*.nbc' -delete -o -name 'nrt-library.*.bin' -delete

clean: clean-cache
	rm -rf $(VENV) build *.egg-info src/*.egg-info
