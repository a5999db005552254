"""CAS token dynamics: exact simplex against the closed form, invariances, determinism."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from sia_theory.cas import dynamics as D
from sia_theory.cas import simplex as S


def slow_attention_step(X, beta, alpha):
    """The obvious loop over queries and keys (CAS eq. 1)."""
    n, _ = X.shape
    Y = [x / np.sqrt(sum(v * v for v in x)) for x in X]
    out = []
    for i in range(n):
        scores = [beta * float(np.dot(Y[i], Y[j])) for j in range(n)]
        top = max(scores)
        weights = [np.exp(s - top) for s in scores]
        total = sum(weights)
        out.append(sum(wj / total * Y[j] for j, wj in enumerate(weights)) + alpha * X[i])
    return np.array(out)


@pytest.mark.parametrize("alpha", [0.0, 0.8])
def test_attention_step_matches_slow_loop(alpha):
    X = np.random.default_rng(3).standard_normal((9, 4))
    np.testing.assert_allclose(D.attention_step(X, beta=2.5, alpha=alpha),
                               slow_attention_step(X, 2.5, alpha),
                               rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("n,rho,alpha,q", [(40, 0.5, 0.0, 1.0), (200, 0.2, 0.5, 2.0),
                                           (150, 0.8, 1.5, 0.3)])
def test_exact_simplex_simulation_matches_closed_form(n, rho, alpha, q):
    gc = S.critical_gamma(rho)
    gammas = np.array([0.0, 0.5 * gc, gc, 1.5 * gc, 3 * gc])
    frame = D.simulate_token_step(n=n, d=n + 3, rho=rho, gamma=gammas, alpha=alpha,
                                  tokens="simplex", q=q, seed=0)
    np.testing.assert_allclose(frame["cos_before_mean"], rho, atol=1e-12)
    np.testing.assert_allclose(frame["cos_after_mean"],
                               S.simplex_inner_product(n=n, gamma=gammas, rho=rho, alpha=alpha,
                                                       q=q), atol=1e-10)
    np.testing.assert_allclose(frame["self_weight_mean"],
                               S.simplex_self_weight(n=n, gamma=gammas, rho=rho),
                               atol=1e-12)


def test_crossing_point_interpolates_the_first_downward_crossing():
    x = np.array([0.0, 1.0, 2.0, 4.0])
    y = np.array([1.0, 0.8, 0.4, 0.1])
    assert D.crossing_point(x, y, 0.9) == pytest.approx(0.5)  # linear next to x = 0
    assert D.crossing_point(x, y, 0.6) == pytest.approx(2 ** 0.5)  # geometric in log x
    assert np.isnan(D.crossing_point(x, y, 0.05)) and np.isnan(D.crossing_point(x, y, 1.5))


def test_mean_cosine_matches_pairwise_average():
    X = np.random.default_rng(4).standard_normal((30, 5))
    Y = X / np.linalg.norm(X, axis=1, keepdims=True)
    G = Y @ Y.T
    expected = (G.sum() - np.trace(G)) / (30 * 29)
    assert D.mean_cosine(X) == pytest.approx(expected, rel=1e-12)


def test_effective_tokens_and_entropy_of_known_attention():
    A = np.array([[0.5, 0.25, 0.25], [1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3]])
    stats = D.attention_statistics(A)
    assert stats["self_weight"] == pytest.approx((0.5 + 0 + 1 / 3) / 3)
    assert stats["effective_tokens"] == pytest.approx((1 / 0.375 + 1 + 3) / 3)
    assert stats["entropy"] == pytest.approx((1.5 * np.log(2) + 0 + np.log(3)) / 3)


def test_attention_step_invariances():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((20, 6))
    perm = rng.permutation(20)
    rot, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    for alpha in (0.0, 0.7):
        out = D.attention_step(X, beta=3.0, alpha=alpha)
        np.testing.assert_allclose(D.attention_step(X[perm], beta=3.0, alpha=alpha), out[perm],
                                   atol=1e-13)
        np.testing.assert_allclose(D.attention_step(X @ rot, beta=3.0, alpha=alpha), out @ rot,
                                   atol=1e-13)
    # without residual the layer sees only directions: scaling each token changes nothing
    scales = rng.uniform(0.1, 10, (20, 1))
    np.testing.assert_allclose(D.attention_step(X * scales, beta=3.0),
                               D.attention_step(X, beta=3.0),
                               atol=1e-13)


def test_supercritical_step_keeps_gaussian_cosine_and_subcritical_collapses():
    frame = D.simulate_token_step(n=400, d=64, rho=0.5, gamma=[0.2, 20.0], samples=3, seed=1)
    sub, sup = frame.iloc[0], frame.iloc[1]
    assert sub["cos_after_mean"] > 0.99
    assert abs(sup["cos_after_mean"] - sup["cos_before_mean"]) < 1e-3
    assert sup["effective_tokens_mean"] == pytest.approx(1.0, abs=1e-3)


def test_depth_iteration_layer_zero_is_input_and_matches_repeated_steps():
    frame = D.simulate_depth(n=60, d=8, rho=0.4, gamma=2.0, layers=3, samples=2, seed=2)

    def cosines_by_layer(sample):  # the slow obvious route: draw, then step three times
        X = D.sample_tokens(n=60, d=8, rho=0.4, tokens="gaussian", q=1.0, rng=D.token_rng(
            2, D.TOKEN_STUDY, sample))
        cos = [D.mean_cosine(X)]
        for _ in range(3):
            X = D.attention_step(X, beta=2.0 * np.log(60))
            cos.append(D.mean_cosine(X))
        return np.array(cos)

    by_layer = frame.sort_values("layer")["cos_mean"].to_numpy()
    assert by_layer.shape == (4,)
    expected = (cosines_by_layer(0) + cosines_by_layer(1)) / 2
    np.testing.assert_allclose(by_layer, expected, rtol=1e-12)


def test_standard_error_shrinks_like_one_over_root_samples():
    few = D.simulate_token_step(n=100, d=8, rho=0.5, gamma=1.0, samples=4, seed=3)
    many = D.simulate_token_step(n=100, d=8, rho=0.5, gamma=1.0, samples=64, seed=3)
    ratio = few["cos_before_se"][0] / many["cos_before_se"][0]
    assert 2.0 < ratio < 8.0  # sqrt(64/4) = 4 up to the noise of a 4-sample estimate
    # the 64-sample mean lies within 4 standard errors of the first 4 samples' mean
    assert abs(few["cos_before_mean"][0] - many["cos_before_mean"][0]) < 4 * few["cos_before_se"][0]


def test_same_seed_same_numbers_and_different_seed_differs():
    a = D.simulate_token_step(n=100, d=16, rho=0.5, gamma=1.5, samples=3, seed=7)
    b = D.simulate_token_step(n=100, d=16, rho=0.5, gamma=1.5, samples=3, seed=7)
    c = D.simulate_token_step(n=100, d=16, rho=0.5, gamma=1.5, samples=3, seed=8)
    assert a.equals(b)
    assert a["cos_after_mean"][0] != c["cos_after_mean"][0]


@pytest.mark.slow  # a few seconds; make test-all and CI run it
def test_results_identical_across_thread_counts():
    code = textwrap.dedent("""
        import json, numpy as np
        from sia_theory.cas.dynamics import simulate_token_step, simulate_depth, sample_tokens
        from sia_theory.cas.jacobian import jacobian_eta
        f = simulate_token_step(n=600, d=96, rho=0.5, gamma=[1.0, 2.0, 3.0], samples=2, seed=11)
        g = simulate_depth(n=300, d=32, rho=0.5, gamma=2.0, layers=2, samples=2, seed=11)
        X = sample_tokens(n=700, d=64, rho=0.5, rng=np.random.default_rng(0))
        out = f.select_dtypes("number").to_numpy().ravel().tolist()
        out += g["cos_mean"].tolist() + [jacobian_eta(X, beta=6.0, alpha=0.3)]
        print(json.dumps([float(v).hex() for v in out]))
    """)
    results = []
    for threads in ("1", "2"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads, OMP_NUM_THREADS=threads,
                   OPENBLAS_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=120, check=True)
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert results[0] == results[1]


@pytest.mark.parametrize("call,name", [
    (lambda: D.attention_step(np.ones(3), beta=1.0), "X"),
    (lambda: D.attention_step(np.array([[1.0, 0.0], [0.0, 0.0]]), beta=1.0), "X"),
    (lambda: D.attention_step(np.ones((2, 2)), beta=1.0, alpha=-1.0), "alpha"),
    (lambda: D.attention_step(np.ones((2, 2)), beta=-1.0), "beta"),
    (lambda: D.simulate_token_step(n=1, d=4, rho=0.5, gamma=1.0, seed=0), "n"),
    (lambda: D.simulate_token_step(n=4, d=0, rho=0.5, gamma=1.0, seed=0), "d"),
    (lambda: D.simulate_token_step(n=4, d=4, rho=1.0, gamma=1.0, seed=0), "rho"),
    (lambda: D.simulate_token_step(n=4, d=4, rho=0.5, gamma=-1.0, seed=0), "gamma"),
    (lambda: D.simulate_token_step(n=4, d=4, rho=0.5, gamma=1.0, q=0.0, seed=0), "q"),
    (lambda: D.simulate_token_step(n=8, d=4, rho=0.5, gamma=1.0, tokens="simplex", seed=0), "d"),
    (lambda: D.simulate_token_step(n=8, d=4, rho=0.5, gamma=1.0, tokens="uniform", seed=0),
     "tokens"),
    (lambda: D.simulate_depth(n=8, d=4, rho=0.5, gamma=1.0, layers=0, seed=0), "layers"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call()


def test_simulation_statistics_match_attention_statistics_of_the_attention_matrix():
    """The simulation's fast entropy (log Z − Σ A S) against the plain −Σ A log A."""
    for d, gamma in ((2, 0.7), (16, 2.0), (64, 6.0)):
        frame = D.simulate_token_step(n=90, d=d, rho=0.5, gamma=gamma, samples=1, seed=4,
                                      by_sample=True).iloc[0]
        X = D.sample_tokens(n=90, d=d, rho=0.5, rng=D.token_rng(4, D.TOKEN_STUDY, 0))
        _, A = D.attention_step(X, beta=gamma * np.log(90), return_attention=True)
        stats = D.attention_statistics(A)
        for key in ("self_weight", "effective_tokens", "entropy"):
            assert frame[key] == pytest.approx(stats[key], rel=1e-12, abs=1e-12)
