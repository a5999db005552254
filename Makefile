# Every target creates .venv (and installs the package) when it is missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

# Figure scripts: every experiments/*.py except shared helpers (_*); benchmarks live in benchmarks/.
FIGURE_SCRIPTS := $(filter-out experiments/_%,$(sort $(wildcard experiments/*.py)))
BENCH_SCRIPTS  := $(sort $(wildcard benchmarks/bench_*.py))

.PHONY: venv figures test check bench lint clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	@touch $(STAMP)

figures: $(STAMP)
	@set -e; for script in $(FIGURE_SCRIPTS); do \
		echo "== $$script"; $(BIN)/python $$script --out figures; done

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile
	$(BIN)/python -m paper_checks --quick --out build/paper_checks_quick

check: $(STAMP)
	$(BIN)/python -m paper_checks --out paper_checks/results

bench: $(STAMP)
	@set -e; for script in $(BENCH_SCRIPTS); do \
		echo "== $$script"; $(BIN)/python $$script; done

lint: $(STAMP)
	$(BIN)/ruff check sia_theory paper_checks experiments benchmarks tests

clean:
	rm -rf build .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -prune -not -path './.venv/*' -exec rm -rf {} +
