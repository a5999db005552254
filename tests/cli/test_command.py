"""The ``sia-theory`` command: bad input is one line on stderr, exit status 2, nothing written;
good input does the work. The command's ``main`` runs in this process (its exit status and
streams captured as a shell sees them), and one test runs the real console entry point in a
subprocess."""

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import sia_theory.cli as command
import sia_theory.cli.bench as cli_bench
import sia_theory.cli.figures as cli_figures
import sia_theory.cli.scripts as cli_scripts

ROOT = Path(__file__).resolve().parents[2]

USER_FILE = '''
from dataclasses import dataclass

import numpy as np
from sia_theory import Transform


@dataclass(frozen=True)
class PowerLawBias(Transform):
    c: float = 1.0
    depends_on = frozenset({"distance"})

    def affine(self, t, n, h):
        return np.ones_like(t), -self.c * np.log1p(t)


bias = PowerLawBias(0.5)
not_a_transform = 3
'''


def sia(*argv, cwd=ROOT):
    """``sia-theory ARGV`` in this process: ``returncode``, ``stdout``, ``stderr``."""
    out, err = io.StringIO(), io.StringIO()
    before = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = command.main(list(argv))
            except SystemExit as exit_info:  # argparse's usage errors
                code = exit_info.code
    finally:
        os.chdir(before)
    return SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def test_the_console_entry_point_exits_2_with_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "sia_theory", "analyze", "zoo:nope",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert_usage_error(proc, tmp_path / "out")
    version = subprocess.run([sys.executable, "-m", "sia_theory", "--version"],
                             capture_output=True, text=True, timeout=120,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert version.returncode == 0 and version.stdout.startswith("sia-theory ")


@pytest.fixture()
def small_analysis(monkeypatch):
    """``--quick`` with a tenth of its work: these tests follow the command's plumbing (the
    numbers of ``analyze`` are tested in tests/analysis/test_analysis.py)."""
    from sia_theory.studies.zoo_comparison import AnalysisSettings

    def tiny(cls, n_ctx=2**20, **kwargs):
        return cls(n_ctx=n_ctx, t_max=10**3, n_t=13, samples=256,
                   windows=((10, 100), (100, 1000)), n_sweep_max=300, n_points=4,
                   sweep_samples=64, label="quick", **kwargs)

    monkeypatch.setattr(AnalysisSettings, "quick", classmethod(tiny))


@pytest.fixture()
def user_file(tmp_path):
    path = tmp_path / "mytransform.py"
    path.write_text(USER_FILE)
    return path


def assert_usage_error(proc, out: Path):
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists() or not any(out.iterdir()), "bad input must not write anything"


@pytest.mark.parametrize("target", ["nocolon", "no_such_module_xyz:x", "{file}:not_a_transform",
                                    "{file}:missing", "{file}:np", "zoo:no-such-member",
                                    "sia_theory.zoo:ZOO_INFO", "/no/such/file.py:x",
                                    "sia_theory.transforms:ALiBi.standard"])
def test_analyze_bad_target_is_one_line_exit_2_nothing_written(target, user_file, tmp_path):
    out = tmp_path / "out"
    proc = sia("analyze", target.format(file=user_file), "--quick", "--out", str(out))
    assert_usage_error(proc, out)


@pytest.mark.parametrize("argv", [["analyze", "zoo:logn", "--n-ctx", "3"],
                                  ["analyze", "zoo:logn", "--seed", "-1"],
                                  ["analyze", "zoo:logn", "--bogus"], ["analyze"], [],
                                  ["frobnicate"], ["figures", "--only", "no_such_figure"],
                                  ["bench", "--only", "no_such_bench"],
                                  ["check", "--quick", "--only", "NO-SUCH-ID"]])
def test_bad_flags_are_one_line_exit_2_nothing_written(argv, tmp_path):
    out = tmp_path / "out"
    extra = ["--out", str(out)] if argv[:1] in (["figures"], ["check"]) else []
    proc = sia(*argv, *extra)
    assert_usage_error(proc, out)


def test_analyze_user_file_class_writes_the_report(user_file, tmp_path, small_analysis):
    out = tmp_path / "out"
    proc = sia("analyze", f"{user_file}:PowerLawBias", "--quick", "--no-zoo", "--n-ctx",
               "4096", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    names = {p.name for p in out.iterdir()}
    assert {"analysis_PowerLawBias.md", "analysis_PowerLawBias.png",
            "analysis_PowerLawBias.json", "analysis_PowerLawBias_summary.csv"} <= names
    # a = 1, m = −log(1+t): E[Z_t^{2t}] = e^{1/2} Σ 1/(1+s) → e^{1/2} log 2 = 1.1428.
    assert "1.14" in proc.stdout and "PowerLawBias" in proc.stdout


def test_analyze_module_object_from_the_current_folder_and_zoo_name(user_file, tmp_path,
                                                                   monkeypatch, small_analysis):
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "path", list(sys.path))  # the folder joins the path: undone after
    monkeypatch.delitem(sys.modules, "mytransform", raising=False)
    proc = sia("analyze", "mytransform:bias", "--quick", "--no-zoo", "--out", str(out),
               cwd=user_file.parent)
    sys.modules.pop("mytransform", None)
    assert proc.returncode == 0, proc.stderr
    assert (out / "analysis_bias.md").exists()
    proc = sia("analyze", "zoo:scale-invariant", "--quick", "--no-zoo", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "11.428" in proc.stdout  # e^{1/2}·10·log 2 = 11.4280


def test_check_wraps_paper_checks(tmp_path):
    proc = sia("check", "--quick", "--only", "SI-1", "SI-2", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    table = (tmp_path / "claims.md").read_text()
    assert "SI-1" in table and "SI-2" in table and "SI-3 " not in table


def test_figures_runs_the_named_experiment(tmp_path):
    proc = sia("figures", "--quick", "--only", "si_coefficients", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "si_coefficients.png").exists()


@pytest.mark.parametrize("name, family", [("ext_needle", "ext"), ("model_passkey", "model"),
                                          ("train_table1", "train"), ("training_notes", "core"),
                                          ("si_fig1_gaussian", "core"), ("extra_plot", "core"),
                                          ("modelling", "core")])
def test_figure_family_is_the_file_name_prefix(name, family):
    assert cli_scripts.figure_family(name) == family


def test_figures_family_selects_scripts_by_prefix(tmp_path, monkeypatch):
    """Each family runs exactly its own scripts (the runner is replaced, nothing is executed)."""
    repo = tmp_path / "repo"
    (repo / "sia_theory").mkdir(parents=True)
    (repo / "experiments").mkdir()
    for name in ("si_a", "ext_b", "model_c", "train_d", "_helpers"):
        (repo / "experiments" / f"{name}.py").write_text("")
    monkeypatch.setattr(cli_scripts, "repo_root", lambda: repo)
    ran = {}
    monkeypatch.setattr(cli_figures, "run_scripts",
                        lambda scripts, extra: ran.setdefault("names", [p.stem for p in scripts])
                        and 0)
    for family, expected in [("core", ["si_a"]), ("ext", ["ext_b"]), ("model", ["model_c"]),
                             ("train", ["train_d"]),
                             ("all", ["ext_b", "model_c", "si_a", "train_d"])]:
        ran.clear()
        assert command.main(["figures", "--quick", "--family", family, "--out",
                             str(tmp_path / "out")]) == 0
        assert ran["names"] == expected, family
    ran.clear()  # --only reaches every family
    assert command.main(["figures", "--only", "model_c", "--out", str(tmp_path / "out")]) == 0
    assert ran["names"] == ["model_c"]


def test_figures_without_a_checkout_is_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli_scripts, "_PACKAGE", tmp_path / "pkg" / "sia_theory")
    monkeypatch.delenv("SIA_THEORY_REPO", raising=False)
    monkeypatch.chdir(tmp_path)
    assert command.main(["figures", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "no sia-theory repository checkout" in err and len(err.strip().splitlines()) == 1
    monkeypatch.setenv("SIA_THEORY_REPO", str(ROOT))
    assert cli_scripts.repo_root() == ROOT


def test_figures_from_a_wheel_use_the_scripts_it_carries(tmp_path, monkeypatch):
    """Outside a checkout the package's own copies (sia_theory/_experiments, _benchmarks) run,
    and figures go to ./figures."""
    package = tmp_path / "site" / "sia_theory"
    (package / "_experiments").mkdir(parents=True)
    (package / "_benchmarks").mkdir()
    (package / "_experiments" / "si_a.py").write_text("")
    (package / "_benchmarks" / "bench_b.py").write_text("")
    monkeypatch.setattr(cli_scripts, "_PACKAGE", package)
    monkeypatch.delenv("SIA_THEORY_REPO", raising=False)
    monkeypatch.chdir(tmp_path)
    ran = []

    def record(scripts, extra):
        ran.append(([p.name for p in scripts], extra))
        return 0

    monkeypatch.setattr(cli_figures, "run_scripts", record)
    monkeypatch.setattr(cli_bench, "run_scripts", record)
    assert command.main(["figures", "--quick"]) == 0
    assert command.main(["bench", "--quick"]) == 0
    assert ran[0] == (["si_a.py"], ["--seed", "0", "--out", "figures", "--quick"])
    assert ran[1] == (["bench_b.py"], ["--quick"])


def test_every_subcommand_is_a_module_of_the_cli_package():
    """One module per subcommand, each imported normally (the import graph shows them)."""
    from sia_theory import cli

    names = {m.__name__.rsplit(".", 1)[1] for m in cli.SUBCOMMANDS}
    assert names == {"figures", "check", "analyze", "bench", "sweep", "train", "corpus"}
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == names
    assert command.main is cli.main


def test_console_script_is_declared():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'sia-theory = "sia_theory.cli:main"' in text


def test_sweep_lists_exactly_the_studies_on_the_sweep_engine(capsys):
    """The static list the parser offers (no study module is imported to parse) is the set of
    studies whose `sweepable` is true; the others are refused as choices."""
    from sia_theory.studies import STUDIES, SWEEPABLE, get_study

    assert set(SWEEPABLE) == {n for n in STUDIES if get_study(n).sweepable}
    with pytest.raises(SystemExit) as stop:
        command.main(["sweep", "zoo_comparison"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "invalid choice" in err and "train-grid" not in err


@pytest.mark.parametrize("argv", [["check", "--only", ""], ["check", "--only", "SI-1,"]])
def test_check_refuses_an_empty_claim_selection(argv, tmp_path, capsys):
    out = tmp_path / "claims"
    with pytest.raises(SystemExit) as stop:
        command.main([*argv, "--quick", "--out", str(out)])
    assert stop.value.code == 2 and not out.exists()
    assert capsys.readouterr().err.count("\n") == 1


def test_claims_module_refuses_an_empty_only(tmp_path):
    out = tmp_path / "claims"
    run = subprocess.run([sys.executable, "-m", "sia_theory.claims", "--quick", "--only", "",
                          "--out", str(out)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "--only" in run.stderr
    assert not out.exists()


BAD_TRANSFORMS = {
    "raises": "def rule(score, b, h, q_idx, kv_idx):\n    raise RuntimeError('boom')\n",
    "nan": "import numpy as np\n\ndef rule(score, b, h, q_idx, kv_idx):\n"
           "    return score * np.nan\n",
    "float32-overflow": "import numpy as np\n\ndef rule(score, b, h, q_idx, kv_idx):\n"
                        "    return score + 1e39 * (q_idx - kv_idx > 20)\n",
    # overrides the public coefficients(), so Transform's own finiteness check never runs
    "coefficients-nan": "from dataclasses import dataclass\n\nimport numpy as np\n"
                        "from sia_theory import Transform\n\n\n@dataclass(frozen=True)\n"
                        "class NanLaw(Transform):\n"
                        "    depends_on = frozenset({'distance'})\n\n"
                        "    def coefficients(self, t, n_ctx=None, h=None):\n"
                        "        t = np.asarray(t, dtype=np.float64)\n"
                        "        return np.ones_like(t), np.where(t > 20, np.nan, 0.0)\n\n\n"
                        "rule = NanLaw()\n",
}


@pytest.mark.parametrize("kind", sorted(BAD_TRANSFORMS))
def test_train_refuses_a_bad_transform_before_writing_anything(kind, tmp_path, capsys):
    """A user's transform that raises, is NaN, or overflows float32 only beyond the training
    length is one line and exit status 2, and the store is never created."""
    path = tmp_path / f"bad_{kind.replace('-', '_')}.py"
    path.write_text(BAD_TRANSFORMS[kind])
    out = tmp_path / "store"
    assert command.main(["train", "--scheme", f"{path}:rule", "--quick", "--out", str(out),
                         "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sia-theory train: error:" in err
    assert not out.exists()


@pytest.mark.slow  # a few seconds; make test-all and CI run it
@pytest.mark.parametrize("module, argv, prog, flag", [
    ("sia_theory.studies.command", ["jacobian", "--nope"], "sia-theory sweep jacobian", "--nope"),
    ("sia_theory.studies.train_command", ["--scheme", "rope", "--tau", "-1"], "sia-theory train",
     "--tau")])
def test_the_03_entry_points_still_run_their_subcommand(module, argv, prog, flag, tmp_path):
    """python -m of the 0.3 modules runs sweep / train (here: a bad flag, refused in one line
    with exit 2 by that subcommand's parser, nothing written)."""
    run = subprocess.run([sys.executable, "-m", module, *argv], cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                         text=True, timeout=120)
    lines = [ln for ln in run.stderr.splitlines() if "DeprecationWarning" not in ln
             and not ln.startswith("  ")]
    assert run.returncode == 2 and len(lines) == 1, run.stderr
    assert lines[0].startswith(prog) and flag in lines[0]
    assert not any(tmp_path.iterdir())


def test_the_03_train_main_puts_the_subcommand_in_front(capsys):
    from sia_theory.studies import train_command

    with pytest.warns(DeprecationWarning, match="sia_theory.cli"):
        main = train_command.main
    with pytest.raises(SystemExit) as stop:
        main(["--scheme", "rope", "--tau", "-1"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.startswith("sia-theory train: error: argument --tau")


@pytest.mark.parametrize("only", [["SI-7,CAS-3"], ["SI-7", "CAS-3"], ["SI-7, CAS-3"],
                                  ["SI-7", "CAS-3,SI-1"]])
@pytest.mark.parametrize("entry", ["sia-theory check", "python -m sia_theory.claims"])
def test_only_takes_claim_ids_separated_by_spaces_commas_or_both(only, entry, monkeypatch,
                                                                  tmp_path):
    """The documented ``sia-theory check --quick --only SI-7,CAS-3`` and the space-separated
    form select the same claims through both entry points (the selection reaches run_claims)."""
    import sia_theory.claims.__main__ as claims_main

    seen = []

    class Selected(Exception):
        pass

    def record(ids, **kwargs):
        seen.append(list(ids))
        raise Selected

    monkeypatch.setattr(claims_main, "run_claims", record)
    argv = ["--quick", "--only", *only, "--out", str(tmp_path / "out")]
    with pytest.raises(Selected):
        if entry == "sia-theory check":
            command.main(["check", *argv])
        else:
            claims_main.main(argv)
    expected = [i.strip() for token in only for i in token.split(",")]
    assert seen == [expected] and not (tmp_path / "out").exists()
