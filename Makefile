# The two commands of the README: `make demo` and `make test`. Everything else is a helper of those.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# Reinstall whenever pyproject.toml changes.
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=
# make test runs the suite over this many processes (pytest-xdist; each has its own test database, Redis
# database and data directory: leaderboard/config/settings.py). PYTEST_WORKERS=0: one process.
PYTEST_WORKERS ?= 2

.PHONY: demo test lint types unit install serve migrate bench load slow clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required, found " + sys.version' 
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

migrate: install
	$(BIN)/python manage.py migrate --no-input

## make demo: install, migrate, load the demo challenges built from real data, score them, serve the site.
demo: migrate
	$(BIN)/python manage.py demo_load
	@echo "Serving on http://$(HOST):$(PORT)/  (Ctrl-C to stop)"
	$(BIN)/python manage.py runserver --noreload $(HOST):$(PORT)

serve: migrate
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

## make test: install, lint (ruff), types (mypy), then the whole pytest suite (slow simulations excluded)
## and the docstring examples.
test: install lint types unit

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

types: install
	$(BIN)/mypy stats leaderboard tests/benchmarks

## unit: the pytest suite (over PYTEST_WORKERS processes; beside them the fault tests, one after another in one process), then the docstring examples of stats/ and of docs/stats-api.md (doctests).
unit: install
	@mkdir -p test-output
	@$(BIN)/python -m pytest -m "faults and not slow" -p no:cacheprovider --durations=10 $(PYTEST_ARGS) \
	  > test-output/faults.log 2>&1 & faults=$$!; \
	trap 'kill -TERM $$faults 2>/dev/null' INT TERM; \
	echo "the fault tests run beside the rest, in one process of their own (output below when done)"; \
	$(BIN)/python -m pytest -m "not slow and not faults" -n $(PYTEST_WORKERS) --durations=25 $(PYTEST_ARGS); \
	rest=$$?; wait $$faults; status=$$?; \
	echo "--- the fault tests (marker faults: one after another, in one process, beside the rest) ---"; \
	cat test-output/faults.log; \
	for code in $$rest $$status; do [ $$code -eq 0 ] || [ $$code -eq 5 ] || exit $$code; done  # 5: none selected
	$(BIN)/python -m pytest -q -p no:cacheprovider --doctest-modules --doctest-glob=stats-api.md stats docs/stats-api.md

## The slow calibration simulations (coverage, type I error), whose figures are in docs/.
slow: install
	$(BIN)/python -m pytest -m slow $(PYTEST_ARGS)

bench: install
	$(BIN)/python -m tests.benchmarks.bench
	$(BIN)/python -m tests.benchmarks.bench_compare
	$(BIN)/python -m tests.benchmarks.bench_board_service
	$(BIN)/python -m tests.benchmarks.bench_jackknife
	$(BIN)/python -m tests.benchmarks.bench_vision
	$(BIN)/python -m tests.benchmarks.bench_fanout
	$(BIN)/python -m tests.benchmarks.bench_io
	$(BIN)/python -m tests.benchmarks.bench_scale

## The load test (PostgreSQL and Redis on 127.0.0.1; figures in docs/reliability.md, "Load").
load: install
	$(BIN)/python deploy/loadtest.py $(LOAD_ARGS)

clean:
	rm -rf $(VENV) var .mypy_cache .ruff_cache .pytest_cache .hypothesis test-output *.egg-info
