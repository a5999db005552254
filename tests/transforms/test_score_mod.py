"""A bare FlexAttention ``score_mod(score, b, h, q_idx, kv_idx)`` read as a transform.

The functions below are written the way attention-gym writes its mods (one or two elementwise
lines on broadcast index grids); the expected coefficients are the papers' formulas typed out
here: SI eq. 16 with α = β = e^{1/2} (a_t² = 1 + 2 log(1 + t/τ), m_t = −2 log(1 + t/τ)), ALiBi's
slopes 2^(−8(h+1)/H) (Press et al. 2022; attention-gym ``generate_alibi_bias``: ``score +
(kv_idx − q_idx)·slope[h]``) and LogN (s·log n with n = q_idx + 1).
"""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sia_theory import ALiBi, ScaleInvariant, analyze
from sia_theory.attention import attention
from sia_theory.transforms.score_mod import ScoreModTransform

ROOT = Path(__file__).resolve().parents[2]
TAU = 10.0


def si_mod(score, b, h, q_idx, kv_idx):
    ell = np.log1p((q_idx - kv_idx) / TAU)
    return np.sqrt(1 + 2 * ell) * score - 2 * ell


ALIBI_SLOPES = 2.0 ** (-8.0 * (np.arange(8) + 1) / 8)


def alibi_mod(score, b, h, q_idx, kv_idx):
    return score + (kv_idx - q_idx) * ALIBI_SLOPES[h]


def logn_mod(score, b, h, q_idx, kv_idx):
    return score * 0.4 * np.log(q_idx + 1.0)


def squared(score, b, h, q_idx, kv_idx):
    return score * score


def late_square(score, b, h, q_idx, kv_idx):  # affine until distance 100 000
    return np.where(q_idx - kv_idx > 100_000, score * score, score)


def complex_mod(score, b, h, q_idx, kv_idx):
    return score * (1 + 0j)


def scalar_mod(score, b, h, q_idx, kv_idx):
    return 2.0


def nan_at_zero(score, b, h, q_idx, kv_idx):
    return score / (q_idx - kv_idx)


def raises(score, b, h, q_idx, kv_idx):
    raise KeyError("no table")


def test_bare_si_score_mod_has_si_coefficients():
    member = ScoreModTransform(si_mod)
    t = np.arange(0, 20_000, 3, dtype=np.float64)
    a, m = member.coefficients(t, 20_000)
    ell = np.log(1 + t / TAU)
    np.testing.assert_allclose(a, np.sqrt(1 + 2 * ell), rtol=1e-13)
    np.testing.assert_allclose(m, -2 * ell, rtol=1e-13, atol=1e-14)
    assert member.depends_on == frozenset({"distance", "context", "head"})  # the safe default


def test_bare_si_score_mod_gives_si_attention():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 2, 50, 8)) for _ in range(3))
    want = attention(q, k, v, score_mod=ScaleInvariant(TAU))
    np.testing.assert_allclose(attention(q, k, v, score_mod=ScoreModTransform(si_mod)), want,
                               rtol=0, atol=1e-12)


def test_bare_alibi_score_mod_is_head_dependent():
    member = ScoreModTransform(alibi_mod, n_heads=8)
    t = np.arange(0, 500, dtype=np.float64)
    for h in range(8):
        a, m = member.coefficients(t, 500, h)
        np.testing.assert_array_equal(a, 1.0)
        np.testing.assert_allclose(m, -(2.0 ** (-8.0 * (h + 1) / 8)) * t, rtol=1e-15)
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((1, 8, 30, 4)) for _ in range(3))
    np.testing.assert_allclose(attention(q, k, v, score_mod=member),
                               attention(q, k, v, score_mod=ALiBi.standard(8)),
                               rtol=0, atol=1e-12)


def test_bare_logn_score_mod_reads_n_from_q_idx():
    member = ScoreModTransform(logn_mod)
    n = np.array([1.0, 2.0, 100.0, 2.0**20])
    a, m = member.coefficients(np.zeros(4), n)
    np.testing.assert_allclose(a, 0.4 * np.log(n), rtol=1e-15)
    np.testing.assert_array_equal(m, 0.0)
    with pytest.raises(ValueError, match="n_ctx"):
        member.coefficients(np.arange(3.0))


@pytest.mark.parametrize("fn, match", [
    (squared, "squared is not affine in the score"),
    (complex_mod, "complex_mod returned complex"),
    (scalar_mod, "scalar_mod must return an array of the score's shape"),
    (nan_at_zero, "nan_at_zero returned non-finite"),
    (raises, "raises failed on numpy index grids.*KeyError"),
    (lambda t: t, "failed on numpy index grids.*TypeError"),
])
def test_refused_at_construction_naming_the_function_and_the_fault(fn, match):
    with pytest.raises(ValueError, match=match):
        ScoreModTransform(fn)


@pytest.mark.parametrize("obj", [ALiBi, 3, "si_mod", ALiBi(1.0)])
def test_only_plain_functions_are_wrapped(obj):
    with pytest.raises(ValueError, match="fn must be a function"):
        ScoreModTransform(obj)


def test_non_affinity_beyond_the_construction_probe_is_refused_where_it_is_evaluated():
    member = ScoreModTransform(late_square)  # passes the probe (distances up to 65 536)
    member.coefficients(np.arange(0.0, 1000.0), 2**20)
    with pytest.raises(ValueError, match="late_square is not affine.*kv_idx"):
        member.coefficients(np.array([10.0, 200_000.0]), 2**20)


def test_analyze_accepts_a_bare_score_mod_and_finds_the_si_limit():
    report = analyze(si_mod, quick=True, zoo=False)
    assert report.study.name == "si_mod"
    # ατ log 2 with α = e^{1/2}, τ = 10 (SI-4), as for ScaleInvariant(10)
    assert report.total_attention_limit == pytest.approx(math.exp(0.5) * TAU * math.log(2),
                                                         rel=1e-4)
    with pytest.raises(ValueError, match="squared is not affine"):
        analyze(squared, quick=True, zoo=False)


@pytest.mark.slow  # half a minute or more: make test-all
def test_command_analyzes_a_function_and_refuses_a_non_affine_one(tmp_path):
    (tmp_path / "mods.py").write_text(
        "import numpy as np\n\n"
        "def si(score, b, h, q_idx, kv_idx):\n"
        "    ell = np.log1p((q_idx - kv_idx) / 10.0)\n"
        "    return np.sqrt(1 + 2 * ell) * score - 2 * ell\n\n"
        "def square(score, b, h, q_idx, kv_idx):\n"
        "    return score ** 2\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT)}

    def sia(*argv):
        return subprocess.run([sys.executable, "-m", "sia_theory", *argv],
                              cwd=tmp_path, capture_output=True, text=True, env=env,
                              timeout=600)

    out = tmp_path / "out"
    bad = sia("analyze", "mods:square", "--quick", "--no-zoo", "--out", str(out))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "not affine in the score" in bad.stderr and not out.exists()
    good = sia("analyze", "mods:si", "--quick", "--no-zoo", "--out", str(out))
    assert good.returncode == 0, good.stderr
    assert "11.428" in good.stdout and (out / "analysis_si.md").exists()


# attention-gym's mods as written, for torch tensors (attn_gym/mods/alibi.py
# generate_alibi_bias; attn_gym/mods/softcapping.py generate_tanh_softcap): they fail on numpy
# arrays (torch.exp2 and torch.tanh take tensors only) and run on torch copies of the grids.
def gym_alibi(H):
    torch = pytest.importorskip("torch")

    def alibi_mod(score, b, h, q_idx, kv_idx):
        scale = torch.exp2(-((h + 1) * 8.0 / H))
        bias = (kv_idx - q_idx) * scale
        return score + bias

    return alibi_mod


def gym_softcap(soft_cap):
    torch = pytest.importorskip("torch")

    def soft_cap_mod(score, b, h, q_idx, kv_idx):
        return soft_cap * torch.tanh(score / soft_cap)

    return soft_cap_mod


def test_torch_alibi_of_attention_gym_is_alibi():
    transform = ScoreModTransform(gym_alibi(8), n_heads=8)
    t = np.array([0.0, 1.0, 5.0, 1000.0])
    for h in range(8):
        a, m = transform.coefficients(t, 2000, h)
        assert np.array_equal(a, np.ones(4))
        assert np.array_equal(m, -ALIBI_SLOPES[h] * t)  # exact: slopes are powers of two
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((1, 8, 96, 16)) for _ in range(3))
    got = attention(q, k, v, score_mod=transform)
    want = attention(q, k, v, score_mod=ALiBi.standard(8))
    assert np.max(np.abs(got - want)) <= 1e-12


def test_torch_softcap_of_attention_gym_is_refused_as_not_affine():
    with pytest.raises(ValueError, match="not affine in the score"):
        ScoreModTransform(gym_softcap(20.0))


def test_numpy_score_mod_stays_on_numpy():
    seen = set()

    def recording(score, b, h, q_idx, kv_idx):
        seen.add(type(q_idx))
        return alibi_mod(score, b, h, q_idx, kv_idx)

    a, m = ScoreModTransform(recording, n_heads=8).coefficients(np.array([3.0]), 10, 2)
    assert m.tolist() == [-3 * ALIBI_SLOPES[2]]
    assert seen == {np.ndarray}
