"""Every documented command runs: each concrete ``sia-theory …`` line of README.md,
CONTRIBUTING.md and docs/ (as ``test_docs_commands._command_lines`` finds them) is executed here
in its quick form, or is named as long with its budget and the test that runs its quick form;
every ``make TARGET`` the pages name is run by CI (``.ci/run``) or has its budget and the test
that runs its quick form. A new documented line fails the first test until it is classified
here, and a line whose command breaks fails its run.

The quick form of a line is the line itself where it is quick already; otherwise the line with
``--quick`` (and, where it names a folder the reader has, the file it reads written first from
the page that defines it). Runs are in-process (``sia_theory.cli.main``) in an empty folder.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

import sia_theory.cli as command
from tests.docs.test_docs_commands import MAKE, ROOT, _command_lines, _named


@dataclass(frozen=True)
class Run:
    """Executed here: ``quick`` (the quick form; None: the line as written), the files it needs
    written first (``needs``), the exit status it must give (2: nothing written) and ``instead``,
    a word that stands for the reader's own (a new claim's ID) with the existing one run."""

    quick: str | None = None
    needs: tuple = ()
    exit: int = 0
    instead: tuple = ()  # (word, replacement): a placeholder of the page's example, replaced


@dataclass(frozen=True)
class Long:
    """Too long for the tests: its ``budget`` as the pages state it, and ``by``, the test (a
    ``path::name`` of tests/) or Makefile target that runs its quick form."""

    budget: str
    by: str


COMMANDS = {
    # analyze
    "sia-theory analyze --hf-config config.json": Run(needs=("config.json",)),
    "sia-theory analyze my_transform.py:bias --quick --out reports": Run(
        needs=("my_transform.py",)),
    "sia-theory analyze my_transform.py:oops --quick": Run(needs=("my_transform.py",), exit=2),
    "sia-theory analyze zoo:logn --quick --no-zoo --out reports": Run(),
    "sia-theory analyze --model smollm2-135m --n-ctx 2048 --quick --out smol2k": Run(),
    "sia-theory analyze --model smollm2-135m --n-ctx 8192 --out smol8k": Long(
        "warm 92 s, first run 118 s on 2 cores (docs/_data/command_times.csv)",
        "tests/cli/test_analyze_model.py::test_model_report_is_written_and_its_verdict_printed"),
    # check
    "sia-theory check": Long("about 37 CPU-minutes (the sum of the rows' seconds in "
                             "paper_checks/results/claims.csv)", "make test"),
    "sia-theory check --only SI-7 CAS-3 --seed 1": Run(
        "sia-theory check --quick --only SI-7 CAS-3 --seed 1"),
    "sia-theory check --quick": Long("about 160 s on 2 cores (make test runs it with --jobs 2)",
                                     "make test"),
    # CONTRIBUTING's new claim (the next free ID): the same line on the last EXT claim
    "sia-theory check --quick --only EXT-8": Run("sia-theory check --quick --only EXT-7",
                                                 instead=("EXT-8", "EXT-7")),
    "sia-theory check --quick --only SI-7 --seed 1": Run(),
    "sia-theory check --quick --only SI-7,CAS-3 --out build/checks": Run(),
    # corpus
    "sia-theory corpus build --registry --out build/corpus/registry": Long(
        "about 2 min on 2 cores once the 15 archives are downloaded (make corpus)",
        "tests/cli/test_corpus_command.py::test_registry_build_with_a_fake_download"),
    "sia-theory corpus build my_texts/ --out build/corpus/mine --vocab 2048": Run(
        needs=("my_texts",)),
    # figures
    "sia-theory figures --family all": Long(
        "about 5 h (make figures-all)",
        "tests/studies/test_experiments.py::"
        "test_experiment_quick_mode_writes_figure_data_and_metadata"),
    "sia-theory figures --family train": Long(
        "150 min on 2 cores (make figures-train)",
        "tests/studies/test_experiments.py::"
        "test_experiment_quick_mode_writes_figure_data_and_metadata"),
    "sia-theory figures --only nope": Run(exit=2),
    "sia-theory figures --only si_coefficients --out build/figs": Run(
        "sia-theory figures --only si_coefficients --quick --out build/figs"),
    "sia-theory figures --only si_fig2_entropy_scaling --quick --out build/figs": Run(),
    # sweep
    "sia-theory sweep phase-diagram --quick --rho 0.3": Run(),
    "sia-theory sweep si_entropy_scaling --t-max 100000 --samples 65536 --store sweeps/es": Run(
        "sia-theory sweep si_entropy_scaling --quick --store sweeps/es"),
    "sia-theory sweep train_needle --quick": Run(),
    # train
    "sia-theory train --scheme rope p-rope --workers 2": Run(
        "sia-theory train --scheme rope p-rope --workers 2 --quick"),
    "sia-theory train --scheme mymodule:MyRule@rope": Run(
        "sia-theory train --scheme mymodule:MyRule@rope --quick", needs=("mymodule.py",)),
    "sia-theory train --scheme p-rope --quick --corpus my_texts/ --out training-quick": Run(
        needs=("my_texts",)),
    "sia-theory train --scheme p-rope si-p-rope --corpus build/corpus/mine --out training-mine":
        Run("sia-theory train --scheme p-rope si-p-rope --quick --corpus build/corpus/mine "
            "--out training-mine", needs=("build/corpus/mine",)),
    "sia-theory train --scheme rope p-rope si-p-rope --seed 0 1 2 --scheduler tcp://host:8786":
        Long("a Dask scheduler the reader runs: the nine full runs spread over its workers",
             "tests/training/test_training_grid.py::"
             "test_grid_on_a_dask_cluster_gives_the_in_process_numbers"),
}

# every make target the pages name: run by CI (.ci/run), or its budget and what runs its quick
# form (the figure families' quick forms are the experiments' quick runs)
QUICK_FIGURES = ("tests/studies/test_experiments.py::"
                 "test_experiment_quick_mode_writes_figure_data_and_metadata")
MAKES = {  # "ci": .ci/run runs it (test: test-all runs its tests and the slow ones; venv:
    # every target's prerequisite; docs: docs-check's)
    "test": "ci", "test-all": "ci", "lint": "ci", "docs-check": "ci", "docs": "ci",
    "venv": "ci",
    "check": Long("about 37 CPU-minutes", "make test"),
    "bench": Long("not budgeted as a whole", "tests/studies/test_experiments.py::"
                  "test_benchmark_runs_in_quick_mode"),
    "corpus": Long("about 2 min on 2 cores once the archives are downloaded",
                   "tests/cli/test_corpus_command.py::test_registry_build_with_a_fake_download"),
    "figures": Long("about 12 min", QUICK_FIGURES),
    "figures-ext": Long("budget 20 min", QUICK_FIGURES),
    "figures-model": Long("budget 45 min", QUICK_FIGURES),
    "figures-train": Long("budget 150 min", QUICK_FIGURES),
    "figures-needle": Long("budget 75 min", QUICK_FIGURES),
    "figures-all": Long("about 5 h", QUICK_FIGURES),
}


def test_every_documented_command_line_is_run_or_budgeted():
    documented = set(_command_lines())
    assert documented - set(COMMANDS) == set(), "classify these documented lines here"
    assert set(COMMANDS) - documented == set(), "no page gives these lines any more"


def test_every_documented_make_target_is_run_by_ci_or_budgeted():
    assert set(_named(MAKE)) == set(MAKES)
    ci = (ROOT / ".ci" / "run").read_text()
    makefile = (ROOT / "Makefile").read_text()
    ran = set(re.findall(r"^make ([\w-]+)", ci, re.M))
    within = {"test": "test-all", "venv": "test-all", "docs": "docs-check"}
    for target, kind in MAKES.items():
        if kind == "ci":
            assert target in ran or within[target] in ran, target
    # test-all runs what test runs; docs-check depends on docs; every target on the venv
    assert re.search(r"^docs-check: docs$", makefile, re.M)
    assert makefile.split("\ntest:", 1)[1].split("\n\n")[0].replace('-m "not slow"', "") \
        .strip() == makefile.split("\ntest-all:", 1)[1].split("\n\n")[0].strip()


def _exists(by: str) -> bool:
    """``by`` names a Makefile target, a test file or a test function that exists."""
    if by.startswith("make "):
        return by[5:] in (ROOT / "Makefile").read_text()
    path, _, name = by.partition("::")
    file = ROOT / path
    return file.is_file() and (not name or f"def {name}(" in file.read_text())


@pytest.mark.parametrize("what", [*COMMANDS.values(), *MAKES.values()])
def test_a_long_line_names_its_budget_and_an_existing_quick_run(what):
    if isinstance(what, Long):
        assert what.budget and _exists(what.by), what


def test_a_long_budget_is_the_one_the_makefile_states():
    makefile = (ROOT / "Makefile").read_text()
    for target in ("figures-ext", "figures-model", "figures-train", "figures-needle"):
        assert f"{MAKES[target].budget}" in " ".join(makefile.split()), target


# ------------------------------------------------------------------ the files a line reads
def _page_block(page: str, first_line: str) -> str:
    """The fenced code block of ``page`` whose first line is ``first_line`` (the times tool's
    reader, so that both run the file the page gives)."""
    from tests.docs.test_command_times import _tool

    return _tool().page_block(page, first_line)


def _write_needs(needs, folder: Path) -> None:
    for need in needs:
        if need == "config.json":  # a model's config: the SmolLM2 fixture
            (folder / need).write_text(
                (ROOT / "tests/fixtures/hf_configs/smollm2-135m.json").read_text())
        elif need == "my_transform.py":  # Getting started's transform, as the page gives it
            (folder / need).write_text(_page_block("docs/getting-started.md",
                                                   "# my_transform.py"))
        elif need == "mymodule.py":  # a user's module defining a transform class
            _write_needs(("my_transform.py",), folder)
            (folder / need).write_text("from my_transform import PowerLawBias as MyRule\n")
        elif need == "my_texts":  # a folder of a reader's texts, enough for a quick corpus
            from tests.cli.test_corpus_command import _text_folder
            _text_folder(folder / need)
        elif need == "build/corpus/mine":  # the page's corpus line, run first
            _write_needs(("my_texts",), folder)
            assert command.main(shlex.split(
                "corpus build my_texts/ --out build/corpus/mine --vocab 2048 --no-progress")
            ) == 0
        else:  # pragma: no cover - a need this test does not know
            raise AssertionError(need)


RUNS = {line: how for line, how in COMMANDS.items() if isinstance(how, Run)}


@pytest.mark.slow
@pytest.mark.parametrize("line", sorted(RUNS))
def test_documented_command_runs_in_its_quick_form(line, tmp_path, monkeypatch, capsys):
    how = RUNS[line]
    quick = how.quick or line
    # the quick form is the documented line with --quick added (or the line itself)
    words = [dict([how.instead] if how.instead else []).get(w, w) for w in shlex.split(line)]
    assert set(words) - {"--t-max", "100000", "--samples", "65536"} <= set(shlex.split(quick)), \
        (line, quick)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    _write_needs(how.needs, tmp_path)
    before = {p for p in tmp_path.rglob("*")}
    code = command.main([*shlex.split(quick)[1:], "--no-progress"]
                        if _takes_no_progress(quick) else shlex.split(quick)[1:])
    out, err = capsys.readouterr()
    assert code == how.exit, (quick, out[-2000:], err[-2000:])
    if how.exit == 2:
        assert len(err.strip().splitlines()) == 1, err
        assert {p for p in tmp_path.rglob("*")} - before == {p for p in tmp_path.rglob(
            "__pycache__*")} | {p for p in tmp_path.rglob("__pycache__/*")}, "wrote files"


def _takes_no_progress(line: str) -> bool:
    """The command has ``--no-progress`` (the tests keep stderr to errors): every subcommand
    that runs long (``sweep``'s on each study's parser)."""
    return shlex.split(line)[1] in ("analyze", "check", "figures", "sweep", "train", "corpus")
