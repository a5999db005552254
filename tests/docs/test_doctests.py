"""The ``Examples`` sections of the docstrings run as written (doctest), and the main entry points
have one.

Every module of ``sia_theory`` whose source holds ``>>>`` is collected, so a new example anywhere
is tested without being listed here. The examples print numbers computed by the code and check
them against independently known values (the coefficient identity ``m_t + a_t² = β/α``,
``ατ log 2``, ``1 − 1/d``, a dense reference, a closed form against a Monte Carlo within its
standard error).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import sia_theory

ROOT = Path(sia_theory.__file__).resolve().parent
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# The main entry points, each with a runnable Examples section.
ENTRY_POINTS = [
    ("sia_theory.analysis.report", "analyze"),
    ("sia_theory.transforms.standard", "ScaleInvariant"),
    ("sia_theory.transforms.standard", "LogN"),
    ("sia_theory.transforms.base", "Transform"),
    ("sia_theory.gaussian.montecarlo", "simulate_gaussian_logits"),
    ("sia_theory.gaussian.routes", "expectation"),
    ("sia_theory.sweeps.engine", "sweep"),
    ("sia_theory.studies", "get_study"),
    ("sia_theory.attention.core", "attention"),
    ("sia_theory.schemes.targets", "load_transform"),
    ("sia_theory.transforms.score_mod", "ScoreModTransform"),
    ("sia_theory.attention.yarn", "YaRNRoPE"),
]


def _modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages([str(ROOT)], prefix="sia_theory."):
        spec = importlib.util.find_spec(info.name)
        if spec and spec.origin and spec.origin.endswith(".py") and \
                ">>>" in Path(spec.origin).read_text():
            names.append(info.name)
    return sorted(names)


MODULES = _modules_with_examples()


def test_the_entry_points_have_examples():
    missing = [f"{m}.{n}" for m, n in ENTRY_POINTS
               if ">>>" not in (getattr(importlib.import_module(m), n).__doc__ or "")]
    assert not missing, missing
    assert {m for m, _ in ENTRY_POINTS} <= set(MODULES)


@pytest.mark.parametrize("module_name", MODULES)
def test_examples_run(module_name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes files writes them here
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    tests = [t for t in finder.find(module, module_name) if t.examples]
    assert tests, f"{module_name} has '>>>' but no doctest was found"
    for test in tests:
        runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert attempted and not failed, f"{failed} of {attempted} examples failed in {module_name}"
