"""Token dynamics of the CAS attention layer (CAS §2, eq. 1) on simplex and near-simplex tokens.

One layer: ``y_i = x_i/|x_i|``, scores ``β⟨y_i, y_j⟩`` for all ``j`` (including ``i``),
``A = softmax`` by rows, ``x_i' = Σ_j A_ij y_j + α x_i``. The work per layer is two ``n×n×d``
matrix products (BLAS) and ``n²`` exponentials; the mean off-diagonal cosine is ``O(nd)`` from
``|Σ_i y_i|²``. Each Monte Carlo sample draws its tokens from its own stream
``token_rng(seed, "cas.tokens", sample)``, so results do not depend on thread count, and a sample
index gives the same draws for every ``ρ`` and ``γ`` of a grid (common random numbers).

Every physical parameter is keyword-only (``simulate_token_step(n=..., d=..., rho=...,
gamma=...)``): swapping ``γ`` and ``ρ`` cannot pass silently.

Determinism across thread counts: OpenBLAS partitions a matrix product differently for different
thread counts, which changes the last bits (measured: ``(300×300)·(300×32)``). So every product
here runs with single-threaded BLAS, and parallelism comes from independent tasks (samples, grid
cells, row blocks) on ``NUMBA_NUM_THREADS`` worker threads, reduced in a fixed order. (A single
:func:`attention_step` therefore uses one core; simulations parallelise over their tasks.)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._infra.memory import check_memory
from .._infra.parallel import parallel_map, single_threaded_blas, worker_count
from .._infra.seeding import check_seed
from .._infra.stats import mean_se
from .._infra.validate import check_finite_array, check_int, check_real
from .config import check_token_kind
from .layer import attention_statistics, attention_step, softmax_from_gram, step_memory
from .tokens import (
    check_max_bytes,
    mean_cosine,
    normalise_rows,
    sample_tokens,
    token_memory,
    token_rng,
)

__all__ = ["attention_step", "softmax_from_gram", "simulate_token_step", "simulate_depth",
           "sample_tokens", "mean_cosine", "attention_statistics", "crossing_point",
           "TOKEN_STUDY"]

TOKEN_STUDY = "cas.tokens"
"""Seeding study name of the token draws of :func:`simulate_token_step` and
:func:`simulate_depth`: sample ``k`` under ``seed`` uses ``token_rng(seed, TOKEN_STUDY, k)``."""


def crossing_point(x, y, level) -> float:
    """First ``x`` at which ``y`` falls below ``level`` (linear interpolation in ``log x``, or in
    ``x`` next to ``x = 0``). Used to locate the collapse → preservation transition.

    Parameters
    ----------
    x : array_like
        ``(m,)`` increasing, ``>= 0``.
    y : array_like
        ``(m,)``.
    level : float

    Returns
    -------
    float
        ``nan`` if ``y`` never falls below ``level`` or already starts below.

    Raises
    ------
    ValueError
        If ``x`` or ``y`` is malformed or their lengths differ.
    """
    x = check_finite_array("x", x, ndim=1, dtype=np.float64, lo=0.0, min_size=1)
    y = check_finite_array("y", y, ndim=1, dtype=np.float64)
    level = check_real("level", level)
    if x.shape != y.shape:
        raise ValueError(f"y must have the length of x ({x.size}), got {y.size}")
    below = np.nonzero(y < level)[0]
    if below.size == 0 or below[0] == 0:
        return float("nan")
    k = below[0]
    fraction = (level - y[k - 1]) / (y[k] - y[k - 1])  # y[k] < level <= y[k-1]: no 0/0
    if x[k - 1] <= 0:
        return float(x[k - 1] + fraction * (x[k] - x[k - 1]))
    lx0, lx1 = np.log(x[k - 1]), np.log(x[k])
    return float(np.exp(lx0 + fraction * (lx1 - lx0)))


def _summary(values: np.ndarray, deterministic: bool = False) -> tuple[float, float]:
    """Mean and standard error over samples (0 for a deterministic configuration, ``nan`` when a
    random one has a single sample)."""
    if deterministic:
        return float(np.mean(values)), 0.0
    return mean_se(np.ravel(values))


def simulation_memory(n: int, d: int, tokens: str, tasks: int) -> int:
    """Working memory of a token simulation: one draw and one layer per concurrent task."""
    return min(tasks, worker_count()) * (token_memory(n, d, tokens) + step_memory(n, d))


def _check_common(n, d, rho, alpha, tokens, samples, seed, q):
    n, d = check_int("n", n, 2), check_int("d", d, 1)
    rho = check_real("rho", rho, 0.0, 1.0, lo_open=True, hi_open=True)
    alpha, q = check_real("alpha", alpha, 0.0), check_real("q", q, 0.0, lo_open=True)
    samples, seed = check_int("samples", samples, 1, hi=10**7), check_seed(seed)
    check_token_kind(tokens)
    if tokens == "simplex":
        if d < n:
            raise ValueError(f"d must be >= n for exact simplex tokens, got d={d}, n={n}")
        samples = 1  # deterministic configuration
    return n, d, rho, alpha, samples, seed, q


def _gammas(gamma) -> np.ndarray:
    try:
        scalar = np.ndim(gamma) == 0 and not isinstance(gamma, str)
    except ValueError:  # ragged nesting: check_finite_array names gamma
        scalar = False
    if scalar:
        return np.array([check_real("gamma", gamma, 0.0)])
    gammas = check_finite_array("gamma", gamma, ndim=1, dtype=np.float64, lo=0.0, min_size=1)
    return np.array([check_real("gamma", g, 0.0) for g in gammas.tolist()])


def _beta(gamma: float, n: int) -> float:
    r""":math:`\beta = \gamma \log n`, capped at the largest float (beyond it the softmax is one-hot
    anyway)."""
    with np.errstate(over="ignore"):
        return float(min(gamma * np.log(n), np.finfo(np.float64).max))


def simulate_token_step(*, n, d, rho, gamma, seed, alpha=0.0, tokens="gaussian", samples=8,
                        q=1.0, by_sample=False, max_bytes=None) -> pd.DataFrame:
    r"""One CAS layer on (near-)simplex tokens (CAS Theorem 2.1 / Fig. 1),
    :math:`\beta = \gamma \log n`.

    ``gamma`` may be a sequence: each sample's tokens are reused for every ``γ``. Exact simplex
    tokens are deterministic, so ``tokens="simplex"`` runs one sample (standard errors 0) whatever
    ``samples`` says. Returns one row per ``γ`` with mean and standard error over samples of the
    mean off-diagonal cosine after the step (``cos_after``) and before it (``cos_before``, the
    realised ``ρ``), the self weight, the effective number of attended tokens ``1/Σ_j A_ij²``, the
    attention entropy and the attention-weighted cosine ``Σ_j A_ij⟨y_i, y_j⟩``
    (``attended_cosine``). ``by_sample=True`` returns one row per ``(γ, sample)`` instead, with
    the per-sample values in columns without suffix (``cos_after``, ``entropy``, ...).

    Parameters
    ----------
    n, d : int
        Number of tokens ``n >= 2`` and their dimension ``d >= 1`` (``d >= n`` for the simplex).
    rho : float
        Pairwise cosine of the tokens, ``0 < rho < 1``.
    gamma : float or sequence of float
        ``γ >= 0`` (:math:`\beta = \gamma \log n`); a sequence gives one result per ``γ``.
    seed : int
        Seed of the token draws, ``0 <= seed < 2**63``.
    alpha, q : float
        Residual weight ``α >= 0`` and squared token norm ``q > 0``.
    tokens : {"gaussian", "simplex"}
        CAS's near-simplex draw or the exact simplex (deterministic: one sample).
    samples : int
        Monte Carlo samples, ``1 <= samples <= 1e7``.
    by_sample, max_bytes
        One row per sample; the limit the working memory (:func:`simulation_memory`) is checked
        against first (default: the memory available).

    Returns
    -------
    pandas.DataFrame
        The rows described above, with the settings (``n, d, rho, gamma, beta, ...``).

    Raises
    ------
    ValueError
        If an argument is outside the ranges above, ``d < n`` with exact simplex tokens, or the
        working memory exceeds ``max_bytes``.

    Examples
    --------
    >>> from sia_theory import simplex_self_weight, simulate_token_step
    >>> step = simulate_token_step(n=8, d=8, rho=0.5, gamma=[1.0, 3.0], seed=0, tokens="simplex")
    >>> step[["gamma", "self_weight_mean", "cos_after_mean"]].round(6)
       gamma  self_weight_mean  cos_after_mean
    0    1.0          0.287780        0.970043
    1    3.0          0.763732        0.665127
    >>> simplex_self_weight(n=8, gamma=[1.0, 3.0], rho=0.5).round(6)
    array([0.28778 , 0.763732])
    """
    n, d, rho, alpha, samples, seed, q = _check_common(n, d, rho, alpha, tokens, samples, seed, q)
    gammas = _gammas(gamma)
    check_memory("n", n, simulation_memory(n, d, tokens, samples * gammas.size),
                 check_max_bytes(max_bytes))
    # parallel over γ when there are enough of them (the Gram matrix is shared), else samples
    inner_parallel = gammas.size >= worker_count()

    def one_sample(sample: int) -> np.ndarray:  # (n_gamma, 6)
        X = sample_tokens(n=n, d=d, rho=rho, tokens=tokens, q=q,
                          rng=token_rng(seed, TOKEN_STUDY, sample))  # (n, d)
        Y, _ = normalise_rows(X)
        with single_threaded_blas():
            gram = Y @ Y.T  # (n, n), shared by every gamma
        before = mean_cosine(Y)

        def one_gamma(g: float) -> list:
            return _step_statistics(X, Y, gram, before, _beta(g, n), alpha)

        per_gamma = parallel_map(one_gamma, gammas) if inner_parallel else [
            one_gamma(g) for g in gammas]
        return np.array(per_gamma)

    if inner_parallel:
        per_sample = [one_sample(sample) for sample in range(samples)]
    else:
        per_sample = parallel_map(one_sample, range(samples))
    stacked = np.stack(per_sample, axis=-1)  # (n_gamma, 6, samples)
    common = {"n": n, "d": d, "rho": rho, "alpha": alpha, "q": q, "tokens": tokens,
              "samples": samples}
    return _token_step_frame(stacked, gammas, common, by_sample)


_STEP_KEYS = ("cos_after", "cos_before", "self_weight", "effective_tokens", "entropy",
              "attended_cosine")


def _step_statistics(X, Y, gram, before, beta, alpha) -> list:
    """The :data:`_STEP_KEYS` values of one CAS step at inverse temperature ``beta`` on tokens
    ``X`` (``(n, d)``), their normalised rows ``Y``, Gram matrix ``gram`` and mean cosine
    ``before``."""
    n = gram.shape[0]
    S = gram - gram.max(axis=1, keepdims=True)  # (n, n) scores minus the row max
    with np.errstate(over="ignore"):
        S *= beta  # no overflow for any finite β (softmax_from_gram)
    A = np.exp(S)  # (n, n)
    Z = A.sum(axis=1)  # (n,)
    A /= Z[:, None]
    if not np.all(np.isfinite(S)):  # weight 0 on a score of -inf contributes 0
        S = np.where(A > 0, S, 0.0)
    with single_threaded_blas():
        out = A @ Y + alpha * X if alpha else A @ Y  # (n, d)
    # entropy −Σ A log A = log Z − Σ_j A_ij S_ij (n logs, not n²: the same numbers as
    # attention_statistics to rounding, several times faster)
    entropy = float(np.mean(np.log(Z) - np.einsum("ij,ij->i", A, S)))
    # attention-weighted cosine between a token and what it attends to (1 = itself or
    # exact copies; near 1 with a small self weight = neighbour averaging)
    attended = float(np.einsum("ij,ij->", A, gram)) / n
    return [mean_cosine(out), before, float(np.mean(np.diag(A))),
            float(np.mean(1.0 / np.einsum("ij,ij->i", A, A))), entropy, attended]


def _token_step_frame(stacked, gammas, common, by_sample) -> pd.DataFrame:
    """:func:`simulate_token_step`'s rows from ``stacked`` (``(n_gamma, 6, samples)``):
    per ``γ`` the mean and standard error of each statistic, or per ``(γ, sample)`` its value."""
    n, samples, tokens = common["n"], common["samples"], common["tokens"]
    values = {k: stacked[:, idx, :] for idx, k in enumerate(_STEP_KEYS)}
    rows = []
    for g_idx, g in enumerate(gammas):
        row = {"n": n, "d": common["d"], "rho": common["rho"], "gamma": g, "beta": _beta(g, n),
               "alpha": common["alpha"], "q": common["q"], "tokens": tokens, "samples": samples}
        if by_sample:
            rows += [dict(row, sample=k, **{key: float(values[key][g_idx, k])
                                            for key in _STEP_KEYS})
                     for k in range(samples)]
            continue
        for k in _STEP_KEYS:
            row[f"{k}_mean"], row[f"{k}_se"] = _summary(values[k][g_idx], tokens == "simplex")
        rows.append(row)
    return pd.DataFrame(rows)


def simulate_depth(*, n, d, rho, gamma, layers, seed, alpha=0.0, tokens="gaussian", samples=4,
                   q=1.0, by_sample=False, max_bytes=None) -> pd.DataFrame:
    r"""Iterate the CAS layer ``layers`` times at fixed :math:`\beta = \gamma \log n` (CAS
    multi-layer extension, CAS-8). Returns one row per layer ``0..layers`` (and per ``γ`` if a
    sequence) with the mean off-diagonal cosine (mean and standard error over samples), or with
    ``by_sample=True`` one row per ``(γ, sample, layer)`` with its cosine ``cos``.

    Parameters
    ----------
    n, d, rho, gamma, seed, alpha, tokens, samples, q, by_sample, max_bytes
        As for :func:`simulate_token_step`.
    layers : int
        Number of layers, ``1 <= layers <= 1e6``.

    Returns
    -------
    pandas.DataFrame
        The rows described above, with the settings.

    Raises
    ------
    ValueError
        As :func:`simulate_token_step`, and for ``layers`` outside its range.

    Examples
    --------
    >>> from sia_theory import simulate_depth
    >>> depth = simulate_depth(n=8, d=8, rho=0.5, gamma=1.0, layers=3, seed=0, tokens="simplex")
    >>> depth["cos_mean"].round(6).tolist()  # γ = 1 < 1/(1 − ρ): they collapse
    [0.5, 0.970043, 0.999998, 1.0]
    """
    n, d, rho, alpha, samples, seed, q = _check_common(n, d, rho, alpha, tokens, samples, seed, q)
    layers = check_int("layers", layers, 1, hi=10**6)
    gammas = _gammas(gamma)
    check_memory("n", n, simulation_memory(n, d, tokens, samples * gammas.size),
                 check_max_bytes(max_bytes))

    def one_run(task) -> np.ndarray:  # (layers + 1,)
        sample, g = task
        X = sample_tokens(n=n, d=d, rho=rho, tokens=tokens, q=q,
                          rng=token_rng(seed, TOKEN_STUDY, sample))  # (n, d)
        out = [mean_cosine(X)]
        for _ in range(layers):
            X = attention_step(X, beta=_beta(g, n), alpha=alpha, max_bytes=2**62)
            out.append(mean_cosine(X))
        return np.array(out)

    tasks = [(sample, g) for g in gammas for sample in range(samples)]
    cos = np.array(parallel_map(one_run, tasks)).reshape(gammas.size, samples, layers + 1)
    cos = cos.transpose(0, 2, 1)  # (n_gamma, layers + 1, samples)
    rows = []
    for g_idx, g in enumerate(gammas):
        for layer in range(layers + 1):
            if by_sample:
                rows += [{"n": n, "d": d, "rho": rho, "gamma": g, "alpha": alpha, "q": q,
                          "tokens": tokens, "sample": k, "layer": layer,
                          "cos": float(cos[g_idx, layer, k])} for k in range(samples)]
                continue
            mean, se = _summary(cos[g_idx, layer], tokens == "simplex")
            rows.append({"n": n, "d": d, "rho": rho, "gamma": g, "alpha": alpha, "q": q,
                         "tokens": tokens, "samples": samples, "layer": layer,
                         "cos_mean": mean, "cos_se": se})
    return pd.DataFrame(rows)
