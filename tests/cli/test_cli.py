"""Command lines validate every argument before computing: a bad seed, an output folder that is
a file, lies inside one or cannot be written, or a bad benchmark flag gives one line on stderr,
exit status 2 and nothing written, before any computation or progress bar."""

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sia_theory._infra.cli import (
    check_output_dir,
    experiment_parser,
    int_range,
    output_dir,
    positive_int,
    run,
    seed,
)
from sia_theory._infra.seeding import MAX_SEED

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("text", ["-1", str(MAX_SEED + 1), str(2**64), "2**64", "x", "1.5", ""])
def test_seed_outside_0_to_2_63_minus_1_is_rejected(text):
    with pytest.raises(argparse.ArgumentTypeError, match=r"<= 9223372036854775807"):
        seed(text)


def test_seed_bounds_are_inclusive():
    assert seed("0") == 0 and seed(str(MAX_SEED)) == MAX_SEED == 2**63 - 1


@pytest.mark.parametrize("text", ["0", "-1", "2.0", "one"])
def test_positive_int_rejects_non_positive_and_non_integers(text):
    with pytest.raises(argparse.ArgumentTypeError, match=">= 1"):
        positive_int(text)


def test_int_range_enforces_both_bounds():
    threads = int_range(1, 4)
    assert threads("4") == 4
    with pytest.raises(argparse.ArgumentTypeError, match=r"expected an integer >= 1 and <= 4"):
        threads("5")


def test_output_dir_that_is_or_lies_inside_a_regular_file_is_rejected(tmp_path):
    plain = tmp_path / "file.txt"
    plain.write_text("x")
    with pytest.raises(ValueError, match="is the regular file"):
        check_output_dir(plain)
    with pytest.raises(ValueError, match="would be inside the regular file .* not a folder"):
        check_output_dir(plain / "a" / "b")
    nested = tmp_path / "new" / "deeper"
    assert check_output_dir(nested) == nested and not (tmp_path / "new").exists()
    with pytest.raises(argparse.ArgumentTypeError, match="non-empty"):
        output_dir("")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only-mode folder")
def test_output_dir_that_cannot_be_written_is_rejected(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    try:
        with pytest.raises(ValueError, match="not writable"):
            check_output_dir(locked)
        with pytest.raises(ValueError, match="would be created in .* not writable"):
            check_output_dir(locked / "sub")
    finally:
        locked.chmod(0o755)


def test_read_only_filesystem_is_rejected_even_for_root():
    read_only = next((p for p in ("/proc/sys", "/sys") if os.path.isdir(p)
                      and not os.access(p, os.W_OK)), None)
    if read_only is None:
        pytest.skip("no read-only folder on this machine")
    with pytest.raises(ValueError, match="not writable"):
        check_output_dir(Path(read_only) / "out")


@pytest.mark.parametrize("flags", [["--seed", str(2**63)], ["--seed", "-1"], ["--out", "FILE"],
                                   ["--out", "FILE/sub"], ["--bogus"]])
def test_run_rejects_bad_flags_before_main_starts(flags, tmp_path, capsys):
    (tmp_path / "FILE").write_text("x")
    calls = []
    argv = [f.replace("FILE", str(tmp_path / "FILE")) for f in flags]
    with pytest.raises(SystemExit) as exit_info:
        run(lambda **kw: calls.append(kw), "demo", argv=["--quick", *argv])
    assert exit_info.value.code == 2 and calls == []
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "error:" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]


def test_run_passes_the_validated_arguments(tmp_path):
    calls = []
    assert run(lambda **kw: calls.append(kw), "demo",
               argv=["--seed", str(MAX_SEED), "--out", str(tmp_path / "x")]) == 0
    assert calls == [{"quick": False, "seed": MAX_SEED, "out_dir": tmp_path / "x"}]
    assert experiment_parser("d").parse_args([]).out == Path("figures")


def one_line_failure(cmd, cwd=None):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=cwd)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-1000:])
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "%|" not in proc.stderr  # no progress bar
    return proc.stderr


@pytest.mark.parametrize("flags", [["--seed", str(2**64)]] + [  # 5 s each: the rest in test-all
    pytest.param(f, marks=pytest.mark.slow)
    for f in (["--out", "FILE"], ["--out", "FILE/figures"])])
def test_experiment_script_fails_fast_on_bad_seed_or_out(flags, tmp_path):
    (tmp_path / "FILE").write_text("x")
    argv = [f.replace("FILE", str(tmp_path / "FILE")) for f in flags]
    # Without --quick a late failure would first run the full computation (minutes).
    one_line_failure([sys.executable, str(ROOT / "experiments" / "cas_fig1_phase_diagram.py"),
                      *argv])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]


@pytest.mark.parametrize("script,flags", [
    ("bench_montecarlo.py", ["--repeats", "0"]), ("bench_montecarlo.py", ["--repeats", "-1"]),
    ("bench_import.py", ["--runs", "-1"]), ("bench_import.py", ["--runs", "x"]),
    ("bench_cas.py", ["--seed", str(2**63)])])
def test_benchmark_flags_are_validated(script, flags):
    err = one_line_failure([sys.executable, str(ROOT / "benchmarks" / script), "--quick",
                            *flags])
    assert flags[0] in err


@pytest.mark.parametrize("flags", [["--only", "NOPE-1"], ["--out", "FILE"]] + [  # rest: test-all
    pytest.param(f, marks=pytest.mark.slow) for f in (
        ["--seed", "-1"], ["--seed", str(2**63)], ["--out", "FILE/sub"], ["--bogus"])])
def test_paper_checks_usage_errors_exit_2_and_write_nothing(flags, tmp_path):
    (tmp_path / "FILE").write_text("x")
    argv = [f.replace("FILE", str(tmp_path / "FILE")) for f in flags]
    out = [] if flags[0] == "--out" else ["--out", str(tmp_path / "out")]
    one_line_failure([sys.executable, "-m", "paper_checks", "--quick", *out, *argv], cwd=ROOT)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]
