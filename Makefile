# Every target creates .venv (and installs the package) when it is missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

# The targets call the sia-theory command (sia_theory/command.py): `figures` runs every
# experiments/*.py except shared helpers (_*), `bench` every benchmarks/bench_*.py.

.PHONY: venv figures test check bench lint clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	@touch $(STAMP)

figures: $(STAMP)
	$(BIN)/sia-theory figures --out figures

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile
	$(BIN)/sia-theory check --quick --out build/paper_checks_quick

check: $(STAMP)
	$(BIN)/sia-theory check --out paper_checks/results

bench: $(STAMP)
	$(BIN)/sia-theory bench

lint: $(STAMP)
	$(BIN)/ruff check sia_theory paper_checks experiments benchmarks tests

clean:
	rm -rf build .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -prune -not -path './.venv/*' -exec rm -rf {} +
