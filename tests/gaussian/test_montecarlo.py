"""Monte Carlo of Gaussian logits and range statistics (sia_theory.gaussian.montecarlo): the numba
kernels against the dense numpy oracles, lognormal moments, stability, determinism, validation."""

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sia_theory import ALiBi, LogN, NoScale, ScaleInvariant, Transform
from sia_theory.gaussian import montecarlo as mc
from sia_theory.gaussian._kernels import _block_sums, exp_nonpositive

K_SIGMA = 4.0
STAT_COLUMNS = ["Z_mean", "Z_se", "N_mean", "N_se", "H_mean", "H_se", "mass_mean", "mass_se",
                "log_Z_mean", "log_Z_se"]


class ConstantAffine(Transform):
    """``L = a·L̄ + m`` with the same ``a, m`` at every distance (huge values for stability)."""

    def __init__(self, a, m):
        self.a, self.m = a, m

    def affine(self, t, n, h):
        return np.full_like(t, self.a), np.full_like(t, self.m)


TRANSFORMS = [NoScale(), LogN(0.4), ScaleInvariant(tau=10.0),
              ScaleInvariant(tau=0.5, alpha=2.0, beta=3.0), ALiBi(0.01)]
# Overlapping, nested, duplicated, single-token and block-straddling ranges (BLOCK = 512);
# the segment [1300, 3000) spans several blocks, so the running-maximum rescaling is exercised.
RANGES = [(0, 1), (0, 1300), (100, 1200), (100, 1200), (50, 700), (511, 513), (1299, 1300),
          (0, 10), (3, 17), (1300, 3000)]


def _assert_frames_match(fast, slow, rtol=1e-12, atol=1e-13):
    np.testing.assert_array_equal(fast[["t1", "t2", "samples"]].to_numpy(),
                                  slow[["t1", "t2", "samples"]].to_numpy())
    for column in STAT_COLUMNS:
        np.testing.assert_allclose(fast[column], slow[column], rtol=rtol, atol=atol,
                                   err_msg=column)


@pytest.mark.parametrize("transform", TRANSFORMS, ids=repr)
def test_kernel_matches_numpy_oracle(transform):
    fast = mc.simulate_gaussian_logits(transform, 3000, RANGES, samples=5, seed=17)
    slow = mc.simulate_gaussian_logits_reference(transform, 3000, RANGES, samples=5, seed=17)
    assert list(fast.columns) == mc.SUMMARY_COLUMNS
    _assert_frames_match(fast, slow)


def test_polynomial_exp_matches_numpy_exp():
    d = np.concatenate([-np.logspace(-18, np.log10(708), 1500), np.linspace(-708, 0, 1501)])
    np.testing.assert_allclose([exp_nonpositive(x) for x in d], np.exp(d), rtol=4e-16, atol=0)
    # Also as compiled inside the fast-math block loop the kernel uses: a one-token block's
    # sum is exp(d). (numba passes a caller's fast-math flags on to callees that set none.)
    inside_kernel = [_block_sums(np.array([x]), 1, 0.0)[0] for x in d]
    np.testing.assert_allclose(inside_kernel, np.exp(d), rtol=4e-16, atol=0)
    # Below -708 the value is clamped to e^-708 (~3e-308) instead of underflowing.
    assert 0 < exp_nonpositive(-1e4) <= np.exp(-708) * (1 + 1e-15)


def test_per_sample_statistics_equal_range_statistics_of_the_same_logits():
    transform, ranges = ScaleInvariant(tau=4.0), [(0, 3), (2, 900), (600, 1000)]
    sampled = mc.simulate_gaussian_range_statistics(transform, 1000, ranges, samples=6, seed=8)
    logits = mc.gaussian_logits_reference(transform, 1000, samples=6, seed=8)  # (6, 1000)
    given = mc.range_statistics(logits, ranges)
    for name in ("Z", "N", "H", "mass", "log_Z"):
        np.testing.assert_allclose(getattr(sampled, name), getattr(given, name), rtol=1e-13,
                                   atol=1e-15, err_msg=name)


def _shifted_oracle(logits, ranges):
    """H, mass and log Z of each range via the textbook formulas on logits shifted by the
    range's own maximum (for H, log Z) and the row maximum (for mass)."""
    row_max = logits.max(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):  # Z underflows to 0 far below the max
        mass = mc.range_statistics_reference(logits - row_max, ranges).mass
    h, log_z = [], []
    for t1, t2 in ranges:
        part = logits[:, t1:t2]
        top = part.max(axis=1, keepdims=True)
        ref = mc.range_statistics_reference(part - top, [(0, t2 - t1)])
        h.append(ref.H[:, 0])
        log_z.append(top[:, 0] + ref.log_Z[:, 0])
    return np.stack(h, axis=1), mass, np.stack(log_z, axis=1)


def test_range_statistics_is_stable_for_logits_of_magnitude_1e4():
    logits = np.random.default_rng(5).uniform(-1e4, 1e4, size=(4, 900))  # (rows, n)
    logits[:, 300:310] = 1e4 - np.arange(10)  # a range that holds the row maximum
    ranges = [(0, 900), (300, 310), (0, 300), (700, 900), (5, 6)]
    stats = mc.range_statistics(logits, ranges)
    h, mass, log_z = _shifted_oracle(logits, ranges)
    assert np.all(np.isfinite(stats.H)) and np.all(np.isfinite(stats.mass))
    np.testing.assert_allclose(stats.H, h, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stats.mass, mass, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(stats.log_Z, log_z, rtol=1e-14)
    assert np.all(np.isinf(stats.Z[:, 1]))  # documented: unshifted Z overflows, log_Z does not


def test_shifting_all_logits_by_1e4_changes_only_z_and_n():
    logits = np.random.default_rng(8).normal(scale=3.0, size=(3, 800))
    ranges = [(0, 800), (10, 100), (100, 799)]
    base = mc.range_statistics(logits, ranges)
    for shift in (1e4, -1e4):
        moved = mc.range_statistics(logits + shift, ranges)
        np.testing.assert_allclose(moved.H, base.H, rtol=0, atol=1e-9)
        np.testing.assert_allclose(moved.mass, base.mass, rtol=1e-9)
        np.testing.assert_allclose(moved.log_Z - shift, base.log_Z, rtol=0, atol=1e-9)


def test_simulation_is_stable_for_logits_of_magnitude_1e4():
    transform = ConstantAffine(3000.0, -1e4)  # L in about [-2.5e4, 5e3]
    ranges = [(0, 1), (0, 700), (100, 600), (650, 700)]
    fast = mc.simulate_gaussian_logits(transform, 700, ranges, samples=4, seed=1)
    logits = mc.gaussian_logits_reference(transform, 700, samples=4, seed=1)
    h, mass, log_z = _shifted_oracle(logits, ranges)
    for column, values in (("H_mean", h), ("mass_mean", mass), ("log_Z_mean", log_z)):
        assert np.all(np.isfinite(fast[column]))
        np.testing.assert_allclose(fast[column], values.mean(axis=0), rtol=1e-12, atol=1e-12,
                                   err_msg=column)


def _lognormal_moments(a, m):
    """E[e^L] and E[L e^L] for L ~ N(m, a²), written out by hand (SI App. B)."""
    return np.exp(m + a * a / 2), (m + a * a) * np.exp(m + a * a / 2)


@pytest.mark.parametrize(("transform", "n_ctx", "t1", "t2"), [
    (NoScale(), 200, 0, 50), (LogN(0.4), 30, 5, 25), (ScaleInvariant(tau=10.0), 400, 5, 40),
    (ScaleInvariant(tau=10.0), 400, 100, 400)])
def test_monte_carlo_means_match_lognormal_moments(transform, n_ctx, t1, t2):
    a, m = transform.coefficients(np.arange(t1, t2), n_ctx)
    weight, negentropy = (x.sum() for x in _lognormal_moments(a, m))
    for samples in (250, 4000):
        row = mc.simulate_gaussian_logits(transform, n_ctx, [(t1, t2)], samples, seed=9).iloc[0]
        assert abs(row.Z_mean - weight) < K_SIGMA * row.Z_se
        assert abs(row.N_mean - negentropy) < K_SIGMA * row.N_se


def test_monte_carlo_error_shrinks_with_samples():
    # NoScale over 50 tokens: Z is a sum of 50 lognormals (σ = 1), light enough tails that the
    # standard error itself is well estimated. Exact: E[Z] = 50 e^{1/2}, sd(Z) = sqrt(50 e (e−1)).
    exact_mean, exact_sd = 50 * math.exp(0.5), math.sqrt(50 * math.e * (math.e - 1))
    errors, ses = [], []
    for samples in (100, 1600, 25600):
        row = mc.simulate_gaussian_logits(NoScale(), 50, [(0, 50)], samples, seed=21).iloc[0]
        errors.append(abs(row.Z_mean - exact_mean))
        ses.append(row.Z_se)
        assert row.Z_se == pytest.approx(exact_sd / math.sqrt(samples), rel=0.2)
    # 256x the samples: the actual error must shrink (expected 16x; allow a lot of luck).
    assert errors[2] < errors[0] / 2
    assert ses[2] < ses[1] < ses[0]


def test_scale_invariant_means_match_the_design_equations():
    # SI eq. 15a/15b: E[e^{L_t}] = α/(t/τ+1) and E[L_t e^{L_t}] = β/(t/τ+1), α = β = e^{1/2}.
    tau, t1, t2 = 10.0, 30, 90
    t = np.arange(t1, t2)
    design = math.exp(0.5) * np.sum(1.0 / (t / tau + 1.0))
    row = mc.simulate_gaussian_logits(ScaleInvariant(tau=tau), t2, [(t1, t2)], 3000, seed=4)
    assert abs(row.Z_mean[0] - design) < K_SIGMA * row.Z_se[0]
    assert abs(row.N_mean[0] - design) < K_SIGMA * row.N_se[0]


@pytest.mark.parametrize("transform", [ScaleInvariant(tau=10.0), LogN(0.4)], ids=repr)
def test_context_sweep_matches_direct_simulation_per_length(transform):
    lengths, recent, ranges = [1, 50, 300, 1000], 100, [(10, 100), (100, 1000)]
    sweep = mc.context_length_sweep(transform, lengths, samples=6, seed=2, recent=recent,
                                    ranges=ranges)
    assert list(sweep.columns) == mc.SWEEP_COLUMNS
    for n in lengths:
        kept = [r for r in ranges if r[1] <= n]
        direct = mc.simulate_gaussian_logits(transform, n, [(0, n), (0, min(recent, n))] + kept,
                                             samples=6, seed=2)
        rows = sweep[sweep.n_ctx == n].reset_index(drop=True)
        assert list(rows.quantity) == ["global_entropy", "recent_mass"] + ["range_entropy"] * len(
            kept)
        expected_mean = [direct.H_mean[0], direct.mass_mean[1], *direct.H_mean[2:]]
        expected_se = [direct.H_se[0], direct.mass_se[1], *direct.H_se[2:]]
        np.testing.assert_allclose(rows["mean"], expected_mean, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(rows["se"], expected_se, rtol=1e-9, atol=1e-14)
        np.testing.assert_array_equal(rows[["t1", "t2"]].to_numpy(),
                                      direct[["t1", "t2"]].to_numpy())
        assert (rows.samples == 6).all()


DETERMINISM_SCRIPT = textwrap.dedent("""
    import hashlib, numba, numpy as np
    from sia_theory import LogN, ScaleInvariant
    from sia_theory.gaussian import montecarlo as mc
    parts = [mc.simulate_gaussian_logits(ScaleInvariant(), 3000, [(0, 100), (10, 2000)], 37,
                                         seed=5).to_numpy(),
             mc.context_length_sweep(ScaleInvariant(), [10, 200, 3000], samples=9,
                                     ranges=[(10, 100)])[["mean", "se"]].to_numpy(),
             mc.context_length_sweep(LogN(), [10, 200], samples=9)[["mean", "se"]].to_numpy(),
             mc.range_statistics(np.random.default_rng(0).normal(size=(13, 900)),
                                 [(0, 5), (3, 800)]).H]
    digest = hashlib.sha256(b"".join(np.ascontiguousarray(p, dtype=float).tobytes()
                                     for p in parts)).hexdigest()
    print(numba.get_num_threads(), digest)
""")


@pytest.mark.slow  # a few seconds; make test-all and CI run it
def test_results_are_bit_identical_for_one_and_two_threads():
    outputs = {}
    for threads in ("1", "2"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads, OMP_NUM_THREADS="1")
        done = subprocess.run([sys.executable, "-c", DETERMINISM_SCRIPT], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        used, digest = done.stdout.split()
        assert used == threads
        outputs[threads] = digest
    assert outputs["1"] == outputs["2"]


@st.composite
def logits_and_ranges(draw, max_abs=1e4):
    rows = draw(st.integers(1, 3))
    n = draw(st.integers(1, 40))
    logits = draw(hnp.arrays(np.float64, (rows, n), elements=st.floats(
        -max_abs, max_abs, allow_nan=False, allow_infinity=False)))
    t1 = draw(st.integers(0, n - 1))
    t2 = draw(st.integers(t1 + 1, n))
    return logits, (t1, t2)


@settings(max_examples=150, deadline=None)
@given(logits_and_ranges())
def test_entropy_in_range_lies_between_zero_and_log_length(case):
    logits, (t1, t2) = case
    h = mc.range_statistics(logits, [(t1, t2)]).H[:, 0]
    assert np.all(h >= -1e-12)
    assert np.all(h <= math.log(t2 - t1) + 1e-12)


@settings(max_examples=150, deadline=None)
@given(logits_and_ranges(), st.lists(st.integers(1, 39), max_size=6))
def test_masses_over_a_partition_sum_to_one(case, cuts):
    logits, _ = case
    n = logits.shape[1]
    edges = sorted({0, n, *(c for c in cuts if c < n)})
    stats = mc.range_statistics(logits, list(zip(edges[:-1], edges[1:], strict=True)))
    np.testing.assert_allclose(stats.mass.sum(axis=1), 1.0, rtol=0, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(logits_and_ranges(max_abs=50.0), st.floats(-1e4, 1e4))
def test_entropy_and_mass_are_invariant_to_adding_a_constant(case, constant):
    logits, pair = case
    ranges = [pair, (0, logits.shape[1])]
    base = mc.range_statistics(logits, ranges)
    moved = mc.range_statistics(logits + constant, ranges)
    # Adding c rounds each logit by up to ulp(c) ~ 2e-12; H moves by at most ~100 times that.
    np.testing.assert_allclose(moved.H, base.H, rtol=0, atol=1e-9)
    np.testing.assert_allclose(moved.mass, base.mass, rtol=1e-9, atol=1e-12)


BAD_SIMULATIONS = [
    ({"transform": "logn"}, "transform"),
    ({"n_ctx": 0}, "n_ctx"),
    ({"n_ctx": 2.5}, "n_ctx"),
    ({"samples": 1}, "samples"),
    ({"samples": 3.5}, "samples"),
    ({"seed": -1}, "seed"),
    ({"ranges": []}, "ranges"),
    ({"ranges": [(5, 5)]}, "ranges"),
    ({"ranges": [(6, 2)]}, "ranges"),
    ({"ranges": [(-1, 3)]}, "ranges"),
    ({"ranges": [(0, 11)]}, "ranges"),
    ({"ranges": [(0.5, 3)]}, "ranges"),
    ({"ranges": [(1, 2, 3)]}, "ranges"),
    ({"ranges": 7}, "ranges"),
]


@pytest.mark.parametrize(("change", "name"), BAD_SIMULATIONS)
def test_simulation_validation_errors_name_the_parameter(change, name):
    kwargs = {"transform": NoScale(), "n_ctx": 10, "ranges": [(0, 5)], "samples": 4, "seed": 0}
    kwargs.update(change)
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        mc.simulate_gaussian_logits(**kwargs)


@pytest.mark.parametrize(("change", "name"), [
    ({"n_ctx_values": []}, "n_ctx_values"),
    ({"n_ctx_values": [10, 0]}, "n_ctx_values"),
    ({"n_ctx_values": [10.5]}, "n_ctx_values"),
    ({"recent": 0}, "recent"),
    ({"samples": 1}, "samples"),
    ({"seed": 1.5}, "seed"),
    ({"ranges": [(0, 11)]}, "ranges"),
    ({"transform": None}, "transform"),
])
def test_sweep_validation_errors_name_the_parameter(change, name):
    kwargs = {"transform": NoScale(), "n_ctx_values": [5, 10], "samples": 4}
    kwargs.update(change)
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        mc.context_length_sweep(**kwargs)


def test_chunked_simulation_behind_progress_bar_is_bit_identical(monkeypatch):
    """Large runs are split into chunks of samples for the progress bar; sample i keeps stream i,
    so the chunking must not change a single bit."""
    from sia_theory.gaussian import montecarlo

    args = (ScaleInvariant(10.0), 500, [(0, 10), (10, 500)])
    whole = montecarlo.simulate_gaussian_range_statistics(*args, samples=37, seed=4)
    monkeypatch.setattr(montecarlo, "PROGRESS_LOGITS", 1000)
    monkeypatch.setattr(montecarlo, "CHUNK_LOGITS", 3000)  # 6 samples per chunk, last one short
    chunked = montecarlo.simulate_gaussian_range_statistics(*args, samples=37, seed=4)
    for name in ("Z", "N", "H", "mass", "log_Z"):
        np.testing.assert_array_equal(getattr(chunked, name), getattr(whole, name))
