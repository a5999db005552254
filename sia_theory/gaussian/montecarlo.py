"""Monte Carlo of attention under Gaussian logits (SI §3.2): range statistics by sampling.

The Gaussian model (SI §3.2) draws base logits ``L̄_t ~ N(0, 1)`` iid and applies a transform,
``L_t = a_t L̄_t + m_t`` (``t`` = distance back from the query, ``t = 0 .. n-1``). Sample ``i``
uses the normals ``sia_theory.gaussian.rng.normals(seed, i, n)``, so results are bit-identical
for any number of threads. The statistics of a range (``Z, N, H, mass, log Z``, SI eq. 6–8) and
their summaries are those of :mod:`sia_theory.gaussian.range_stats`, whose names
(:class:`RangeStatistics`, :func:`range_statistics`, :func:`summarize`,
:func:`range_statistics_reference`, ``SUMMARY_COLUMNS``) are importable from here as well.

Entry points: :func:`simulate_gaussian_logits` (one context length, many ranges),
:func:`context_length_sweep` (SI Fig. 1: global entropy and the mass on the most recent tokens
versus context length), :func:`simulate_gaussian_range_statistics` (per sample). The
``*_reference`` functions are the slow, obvious numpy versions the kernels are tested against.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._infra.docstrings import shared_parameters
from .._infra.memory import check_memory
from .._infra.progress import progress_bar
from .._infra.seeding import check_seed
from .._infra.stats import mean_se
from .._infra.validate import check_int
from ..transforms import Transform, declared_dependence
from . import _kernels as kernels
from ._parameters import MONTE_CARLO
from .range_stats import (
    SUMMARY_COLUMNS,  # noqa: F401  (re-exported: the summary table's columns)
    RangeStatistics,
    as_statistics,
    check_range_pairs,
    range_statistics,
    range_statistics_reference,
    segment_plan,
    summarize,
    with_total,
)
from .rng import normals

__all__ = [
    "RangeStatistics",
    "range_statistics",
    "summarize",
    "simulate_gaussian_logits",
    "simulate_gaussian_range_statistics",
    "context_length_sweep",
    "simulation_memory",
    "range_statistics_reference",
    "gaussian_logits_reference",
    "simulate_gaussian_logits_reference",
]

SWEEP_COLUMNS = ["n_ctx", "quantity", "t1", "t2", "mean", "se", "samples"]


@shared_parameters(MONTE_CARLO)
def simulation_memory(n_ctx: int, samples: int, n_ranges: int, *, dense: bool = False) -> int:
    """Estimated peak working memory in bytes of a Gaussian-logit simulation: ~48 bytes per
    distance (the distances, the coefficients and the transform's temporaries; 36 measured for
    the SI transform at n_ctx = 2e7) and 80 bytes per sample and range (five outputs,
    concatenated from chunks); the dense reference also holds ~4 ``(samples, n_ctx)`` float
    arrays.

    Parameters
    ----------
    n_ctx : int
        Keys the query sees.
    {samples}
    n_ranges : int
        Ranges measured.
    dense : bool
        The dense reference.

    Returns
    -------
    int
    """
    estimate = 48 * n_ctx + 80 * samples * (n_ranges + 1)
    return estimate + (32 * samples * n_ctx if dense else 0)


def _check_simulation(transform, n_ctx, samples, seed, n_ranges=1, *, dense=False,
                      name="n_ctx"):
    """Validated ``(n_ctx, samples, seed)``; ``ValueError`` naming ``name`` (the parameter that
    sets the context length) or ``samples`` if the run would not fit in memory."""
    if not isinstance(transform, Transform):
        raise ValueError(f"transform must be a sia_theory Transform, got {transform!r}")
    n_ctx = check_int("n_ctx", n_ctx, lo=1)
    samples = check_int("samples", samples, lo=2)
    seed = check_seed(seed)
    check_memory(name, n_ctx, simulation_memory(n_ctx, 2, n_ranges, dense=dense))
    check_memory("samples", samples, simulation_memory(n_ctx, samples, n_ranges, dense=dense))
    return n_ctx, samples, seed


# |L̄| never exceeds this for the ziggurat's output in practice (P(|L̄| > 40) ~ 1e-349).
_MAX_NORMAL = 40.0


def _coefficients(transform: Transform, n_ctx: int) -> tuple[np.ndarray, np.ndarray]:
    a, m = transform.coefficients(np.arange(n_ctx), n_ctx)  # (n_ctx,), (n_ctx,)
    a = np.ascontiguousarray(a, dtype=np.float64)
    m = np.ascontiguousarray(m, dtype=np.float64)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(m))):
        raise ValueError(f"transform {transform!r} gives non-finite coefficients for n_ctx={n_ctx}")
    with np.errstate(over="ignore"):
        largest = np.max(np.abs(a) * _MAX_NORMAL + np.abs(m))
    if not np.isfinite(largest):
        raise ValueError(f"transform {transform!r} gives coefficients so large that the logits "
                         f"a*L + m overflow float64 for n_ctx={n_ctx}")
    return a, m


# Above this many logits a simulation runs in chunks of samples behind a progress bar; a chunk
# is still large enough (~0.1 s) for the parallel kernel to be efficient.
PROGRESS_LOGITS = 2**28
CHUNK_LOGITS = 2**25


def _simulate(a, m, ranges, mass_ref, samples, seed, first_sample=0) -> RangeStatistics:
    """Per-sample statistics of ``ranges``; ``mass`` of range r is relative to ``mass_ref[r]``.

    Sample ``i`` always uses stream ``first_sample + i``, so chunking (for the progress bar, or
    into sweep cells) changes nothing.
    """
    bounds, first_seg, stop_seg = segment_plan(ranges, a.size)
    chunk = samples if samples * a.size <= PROGRESS_LOGITS else max(1, CHUNK_LOGITS // a.size)
    starts = range(0, samples, chunk)
    if len(starts) > 1:
        starts = progress_bar(starts, desc=f"Gaussian logits (n_ctx={a.size:,})", unit="chunk",
                              leave=False)
    parts = [kernels.simulate_rows(a, m, bounds, first_seg, stop_seg, mass_ref,
                                   min(chunk, samples - start), np.uint64(seed),
                                   np.uint64(first_sample + start))
             for start in starts]
    return as_statistics(tuple(np.concatenate(arrays) for arrays in zip(*parts)))


@shared_parameters(MONTE_CARLO)
def simulate_gaussian_range_statistics(transform: Transform, n_ctx, ranges, samples, seed=0, *,
                                       first_sample=0) -> RangeStatistics:
    """Per-sample version of :func:`simulate_gaussian_logits`: a :class:`RangeStatistics` with
    one row per sample (row ``i`` uses the base logits ``rng.normals(seed, first_sample + i,
    n_ctx)``; a block of samples starting at ``first_sample`` gives exactly those rows of a
    larger run).

    Parameters
    ----------
    transform, n_ctx, ranges
        As for :func:`simulate_gaussian_logits`.
    {samples, seed}
    first_sample : int
        Index of the first sample's stream, ``>= 0``.

    Returns
    -------
    RangeStatistics
        Arrays ``(samples, len(ranges))``.

    Raises
    ------
    ValueError
        As :func:`simulate_gaussian_logits`, and for ``first_sample < 0``.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import NoScale, simulate_gaussian_range_statistics
    >>> run = simulate_gaussian_range_statistics(NoScale(), 50, [(0, 10)], 6, seed=3)
    >>> block = simulate_gaussian_range_statistics(NoScale(), 50, [(0, 10)], 2, seed=3,
    ...                                            first_sample=4)
    >>> run.H.shape, bool(np.array_equal(block.H, run.H[4:]))
    ((6, 1), True)
    """
    n_ctx, samples, seed = _check_simulation(transform, n_ctx, samples, seed)
    first_sample = check_int("first_sample", first_sample, lo=0, hi=2**63 - 1)
    ranges = check_range_pairs(ranges, n_ctx)
    _check_simulation(transform, n_ctx, samples, seed, len(ranges))
    a, m = _coefficients(transform, n_ctx)
    full, mass_ref = with_total(ranges, n_ctx)
    stats = _simulate(a, m, full, mass_ref, samples, seed, first_sample)
    return as_statistics((stats.Z, stats.N, stats.H, stats.mass, stats.log_Z), keep=len(ranges))


@shared_parameters(MONTE_CARLO)
def simulate_gaussian_logits(transform: Transform, n_ctx, ranges, samples, seed=0
                             ) -> pd.DataFrame:
    """Monte Carlo of ``Z, N, H, mass, log Z`` per range, Gaussian logits (SI §3.2, Fig. 1/2/6).

    Base logits ``L̄_t ~ N(0, 1)`` iid, ``L_t = a_t L̄_t + m_t`` with
    ``(a, m) = transform.coefficients(arange(n_ctx), n_ctx)``: the query at position
    ``n_ctx − 1`` sees distances ``t = 0 .. n_ctx−1``. Returns one row per range with columns
    ``t1, t2, Z_mean, Z_se, N_mean, N_se, H_mean, H_se, mass_mean, mass_se, log_Z_mean,
    log_Z_se, samples``; ``mass`` is relative to the whole context. Every range of a sample costs
    one pass over the tokens; samples run in parallel and give the same numbers on any number of
    threads. Note that ``Z`` has a heavy right tail (its variance grows like ``e²·(t2−t1)`` for
    the scale-invariant transform), so its standard error converges slowly.

    Parameters
    ----------
    transform : Transform
        The scheme.
    n_ctx : int
        Keys the query sees, ``>= 1``.
    ranges : sequence of (t1, t2)
        Distance ranges, ``0 <= t1 < t2 <= n_ctx``.
    {samples, seed}

    Returns
    -------
    pandas.DataFrame
        One row per range, the columns above.

    Raises
    ------
    ValueError
        If an argument is outside the ranges above, the transform's coefficients are not finite
        or make the logits overflow, or the run would not fit in memory.

    Examples
    --------
    >>> from sia_theory import ScaleInvariant, expected_total_attention, simulate_gaussian_logits
    >>> si = ScaleInvariant(10)
    >>> row = simulate_gaussian_logits(si, 100, [(10, 100)], samples=4000, seed=0).iloc[0]
    >>> exact = expected_total_attention(si, 10, 100)  # Σ exp(m_t + a_t²/2), lognormal moments
    >>> round(exact, 4)
    28.4471
    >>> bool(abs(row.Z_mean - exact) < 4 * row.Z_se)  # the Monte Carlo within 4 standard errors
    True
    >>> int(row.samples), bool(0 < row.mass_mean < 1)
    (4000, True)
    """
    stats = simulate_gaussian_range_statistics(transform, n_ctx, ranges, samples, seed)
    return summarize(stats, check_range_pairs(ranges, check_int("n_ctx", n_ctx, lo=1)))


def _sweep_plan(lengths, recent: int, user_ranges: np.ndarray):
    """Ranges for a sweep: per context length its prefix ``[0, N)`` (the mass reference) and its
    recent window ``[0, min(recent, N))``, then the user ranges (their mass is not used)."""
    pairs, refs = [], []
    for n in lengths:
        pairs += [(0, n), (0, min(recent, n))]
        refs += [len(pairs) - 2] * 2
    pairs += [tuple(r) for r in user_ranges]
    refs += [0] * len(user_ranges)
    return np.asarray(pairs, dtype=np.int64).reshape(-1, 2), np.asarray(refs, dtype=np.int64)


def _sweep_records(stats: RangeStatistics, lengths, recent: int, user_ranges: np.ndarray):
    """Long-format rows for statistics laid out by :func:`_sweep_plan`."""
    records = []
    first_user = 2 * len(lengths)
    for k, n in enumerate(lengths):
        for quantity, column, values, t2 in (("global_entropy", 2 * k, stats.H, n),
                                             ("recent_mass", 2 * k + 1, stats.mass,
                                              min(recent, n))):
            mean, se = mean_se(values[:, column])
            records.append((n, quantity, 0, t2, mean, se, stats.rows))
        for j, (t1, t2) in enumerate(user_ranges):
            if t2 <= n:
                mean, se = mean_se(stats.H[:, first_user + j])
                records.append((n, "range_entropy", int(t1), int(t2), mean, se, stats.rows))
    return records


@shared_parameters(MONTE_CARLO)
def context_length_sweep(transform: Transform, n_ctx_values, *, samples, seed=0, recent=100,
                         ranges=()) -> pd.DataFrame:
    """Global entropy, mass on the ``recent`` newest tokens and range entropies versus context
    length (SI Fig. 1 top row), as a long table ``n_ctx, quantity, t1, t2, mean, se, samples``.

    ``quantity`` is ``"global_entropy"`` (``H`` of ``[0, n_ctx)``), ``"recent_mass"`` (attention
    share of ``[0, min(recent, n_ctx))``) or ``"range_entropy"`` (``H`` of each given range with
    ``t2 <= n_ctx``); rows come in increasing ``n_ctx`` (duplicates in ``n_ctx_values`` are
    dropped). For transforms whose ``depends_on`` does not contain ``"context"``, one
    simulation at the largest context serves every context length: the query at position
    ``N − 1`` sees exactly the distances ``0 .. N−1``, so context ``N`` is the prefix ``[0, N)``
    of the same samples. Context-dependent transforms (LogN) run one simulation per length, all
    with the same seed (common random numbers, so the curves are smooth in ``N``).

    Parameters
    ----------
    transform : Transform
        As for :func:`simulate_gaussian_logits`.
    n_ctx_values : int or sequence of int
        Context lengths, each ``>= 1``.
    {samples, seed}
    recent : int
        Newest tokens of ``recent_mass``, ``>= 1``.
    ranges : sequence of (t1, t2)
        Ranges of ``range_entropy``, ``0 <= t1 < t2 <= max(n_ctx_values)``.

    Returns
    -------
    pandas.DataFrame
        The long table above.

    Raises
    ------
    ValueError
        If an argument is outside the ranges above or ``n_ctx_values`` is empty, the
        transform's coefficients are not finite or make the logits overflow, or the run would
        not fit in memory.

    Examples
    --------
    >>> from sia_theory import NoScale, context_length_sweep
    >>> table = context_length_sweep(NoScale(), [10, 100], samples=2000, seed=0, recent=10)
    >>> mass = table[table["quantity"] == "recent_mass"]  # exchangeable keys: 10/N
    >>> mass[["n_ctx", "mean", "se"]].round(4).to_dict("list")
    {'n_ctx': [10, 100], 'mean': [1.0, 0.0997], 'se': [0.0, 0.0008]}
    """
    if not isinstance(transform, Transform):
        raise ValueError(f"transform must be a sia_theory Transform, got {transform!r}")
    raw_values = np.atleast_1d(np.asarray(n_ctx_values, dtype=object)).ravel().tolist()
    if not raw_values:
        raise ValueError("n_ctx_values must contain at least one context length (integers >= 1)")
    values = sorted({check_int("n_ctx_values", v, lo=1) for v in raw_values})
    recent = check_int("recent", recent, lo=1)
    n_max, samples, seed = _check_simulation(transform, values[-1], samples, seed,
                                             name="n_ctx_values")
    user_ranges = check_range_pairs(ranges, n_max, allow_empty=True)
    _check_simulation(transform, n_max, samples, seed, 2 * len(values) + len(user_ranges),
                      name="n_ctx_values")

    if "context" not in declared_dependence(transform):
        a, m = _coefficients(transform, n_max)
        pairs, refs = _sweep_plan(values, recent, user_ranges)
        records = _sweep_records(_simulate(a, m, pairs, refs, samples, seed), values, recent,
                                 user_ranges)
    else:
        records = []
        for n in progress_bar(values, desc=f"context sweep ({type(transform).__name__})",
                              enabled=len(values) >= 2):
            a, m = _coefficients(transform, n)
            kept = user_ranges[user_ranges[:, 1] <= n]
            pairs, refs = _sweep_plan([n], recent, kept)
            records += _sweep_records(_simulate(a, m, pairs, refs, samples, seed), [n], recent,
                                      kept)
    table = pd.DataFrame.from_records(records, columns=SWEEP_COLUMNS)
    return table.astype({"n_ctx": np.int64, "t1": np.int64, "t2": np.int64,
                         "samples": np.int64})


# --- slow, obvious numpy versions (the oracles the kernels are tested against) -------------
# (range_statistics_reference, the oracle of given logits, lives in range_stats)

@shared_parameters(MONTE_CARLO)
def gaussian_logits_reference(transform: Transform, n_ctx, samples, seed=0) -> np.ndarray:
    """The logit matrix the Monte Carlo uses (row ``i`` = stream ``i``).

    Parameters
    ----------
    transform, n_ctx
        As for :func:`simulate_gaussian_logits`.
    {samples, seed}

    Returns
    -------
    numpy.ndarray
        ``(samples, n_ctx)``.

    Raises
    ------
    ValueError
        As :func:`simulate_gaussian_logits`, or if the dense matrix would not fit in memory.
    """
    n_ctx, samples, seed = _check_simulation(transform, n_ctx, samples, seed, dense=True)
    a, m = _coefficients(transform, n_ctx)
    base = np.stack([normals(seed, i, n_ctx) for i in range(samples)])  # (samples, n_ctx)
    return a * base + m


@shared_parameters(MONTE_CARLO)
def simulate_gaussian_logits_reference(transform: Transform, n_ctx, ranges, samples, seed=0
                                       ) -> pd.DataFrame:
    """Dense numpy version of :func:`simulate_gaussian_logits` (same random numbers).

    Parameters
    ----------
    transform, n_ctx, ranges
        As for :func:`simulate_gaussian_logits`.
    {samples, seed}

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        As :func:`simulate_gaussian_logits`, or if the dense matrix would not fit in memory.
    """
    logits = gaussian_logits_reference(transform, n_ctx, samples, seed)
    return summarize(range_statistics_reference(logits, ranges), check_range_pairs(ranges, n_ctx))
