"""Monte Carlo of attention under Gaussian logits, and range statistics of given logits (SI §3).

Notation of SI eq. 6–8: for a row of logits ``L_t`` (``t`` = distance back from the query,
``t = 0 .. n-1``) and a range ``[t1, t2)``

* ``Z = Σ_{t1<=t<t2} e^{L_t}`` (total unnormalised attention),
* ``N = Σ e^{L_t} L_t`` (unnormalised negentropy),
* ``H = −N/Z + log Z`` (entropy of the attention restricted to the range),
* ``mass = Z / Z_{[0,n)}`` (share of the whole row's attention that falls in the range).

The Gaussian model (SI §3.2) draws base logits ``L̄_t ~ N(0, 1)`` iid and applies a transform,
``L_t = a_t L̄_t + m_t``. Sample ``i`` uses the normals
``sia_theory.gaussian.rng.normals(seed, i, n)``, so results are bit-identical for any number of
threads.

Entry points: :func:`range_statistics` (given logits), :func:`simulate_gaussian_logits` (one
context length, many ranges), :func:`context_length_sweep` (SI Fig. 1: global entropy and the
mass on the most recent tokens versus context length), :func:`summarize` (mean ± standard
error). The ``*_reference`` functions are the slow, obvious numpy versions the kernels are
tested against.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._infra.memory import check_memory
from .._infra.progress import progress_bar
from .._infra.seeding import check_seed
from .._infra.stats import mean_se
from .._infra.validate import check_finite_array, check_int
from ..transforms import Transform, declared_dependence
from . import _kernels as kernels
from .closed_forms import check_range
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

SUMMARY_COLUMNS = ["t1", "t2", "Z_mean", "Z_se", "N_mean", "N_se", "H_mean", "H_se",
                   "mass_mean", "mass_se", "log_Z_mean", "log_Z_se", "samples"]
SWEEP_COLUMNS = ["n_ctx", "quantity", "t1", "t2", "mean", "se", "samples"]
_QUANTITIES = ("Z", "N", "H", "mass", "log_Z")


@dataclass(frozen=True)
class RangeStatistics:
    """Per-row range statistics, each array shaped ``(rows, n_ranges)``.

    ``Z`` and ``N`` are the unshifted sums, so they overflow to ``inf`` once a logit exceeds
    ~709; ``log_Z`` never overflows, and ``H`` and ``mass`` are computed from sums shifted by the
    largest logit, so they stay accurate for logits of magnitude 1e4 and far beyond.

    Parameters
    ----------
    Z, N, H, mass, log_Z : numpy.ndarray
        2-D float64 arrays of one shape ``(rows, n_ranges)``.

    Raises
    ------
    ValueError
        If a field is not a 2-D float64 array or the shapes differ.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import RangeStatistics
    >>> one = np.ones((1, 1))
    >>> RangeStatistics(Z=one, N=0 * one, H=0 * one, mass=one, log_Z=0 * one).rows
    1
    """

    Z: np.ndarray
    N: np.ndarray
    H: np.ndarray
    mass: np.ndarray
    log_Z: np.ndarray

    def __post_init__(self):
        shape = None
        for name in ("Z", "N", "H", "mass", "log_Z"):
            value = getattr(self, name)
            if not isinstance(value, np.ndarray) or value.dtype != np.float64 or value.ndim != 2:
                raise ValueError(f"RangeStatistics.{name} must be a 2-D float64 array (rows, "
                                 f"ranges), got {type(value).__name__} "
                                 f"{getattr(value, 'shape', '')}")
            if shape is not None and value.shape != shape:
                raise ValueError(f"RangeStatistics.{name} must have the shape of Z {shape}, got "
                                 f"{value.shape}")
            shape = value.shape

    @property
    def rows(self) -> int:
        """The number of samples (rows)."""
        return self.Z.shape[0]


def _check_ranges(ranges, n_ctx: int, *, allow_empty=False) -> np.ndarray:
    """``ranges`` as an ``(R, 2)`` int64 array of valid ``[t1, t2)`` with ``t2 <= n_ctx``."""
    try:
        pairs = list(ranges)
    except TypeError:
        raise ValueError(f"ranges must be a sequence of (t1, t2) pairs, got {ranges!r}") from None
    if not pairs and not allow_empty:
        raise ValueError("ranges must contain at least one (t1, t2) pair")
    out = np.empty((len(pairs), 2), dtype=np.int64)
    for i, pair in enumerate(pairs):
        try:
            t1, t2 = pair
        except (TypeError, ValueError):
            raise ValueError(f"ranges[{i}] must be a (t1, t2) pair, got {pair!r}") from None
        try:
            out[i] = check_range(t1, t2, n_ctx)[:2]
        except ValueError as err:
            raise ValueError(f"ranges[{i}] = {tuple(pair)!r} must satisfy 0 <= t1 < t2 <= "
                             f"{n_ctx} (n_ctx): {err}") from None
    return out


def _segment_plan(ranges: np.ndarray, n: int):
    """Sorted unique boundaries (segments ``[b_s, b_{s+1})``) and each range's segment span."""
    bounds = np.unique(np.concatenate([[0, n], ranges.ravel()])).astype(np.int64)
    first_seg = np.searchsorted(bounds, ranges[:, 0]).astype(np.int64)
    stop_seg = np.searchsorted(bounds, ranges[:, 1]).astype(np.int64)
    return bounds, first_seg, stop_seg


def _with_total(ranges: np.ndarray, n: int):
    """Append the whole row ``[0, n)`` and point every range's mass at it."""
    full = np.vstack([ranges, [[0, n]]]).astype(np.int64)
    mass_ref = np.full(len(full), len(ranges), dtype=np.int64)
    return full, mass_ref


def _as_statistics(arrays, keep: int | None = None) -> RangeStatistics:
    if keep is not None:
        arrays = [x[:, :keep] for x in arrays]
    return RangeStatistics(*(np.ascontiguousarray(x) for x in arrays))


def range_statistics(logits, ranges) -> RangeStatistics:
    """``Z, N, H`` (SI eq. 6–8), ``mass`` and ``log Z`` of each range, for each row of ``logits``.

    ``logits`` is ``(rows, n)``: column ``t`` is the logit of the key at distance ``t``. ``mass``
    is relative to the whole row ``[0, n)``. Sums are shifted by running maxima, so ``H``,
    ``mass`` and ``log_Z`` are accurate for logits of magnitude 1e4 and beyond (``Z`` and ``N``
    overflow to ``inf`` above ~709, see :class:`RangeStatistics`).

    Parameters
    ----------
    logits : array_like, shape (rows, n)
        Finite logits, ``n >= 1``.
    ranges : sequence of (t1, t2)
        Distance ranges, ``0 <= t1 < t2 <= n``.

    Returns
    -------
    RangeStatistics
        Arrays ``(rows, len(ranges))``.

    Raises
    ------
    ValueError
        If ``logits`` is not a finite 2-d array with a column, a range is invalid, or the
        output would not fit in memory.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import range_statistics
    >>> stats = range_statistics(np.zeros((1, 4)), [(0, 2), (0, 4)])  # uniform attention
    >>> stats.Z, stats.H.round(6), stats.mass  # H = log(t2 − t1)
    (array([[2., 4.]]), array([[0.693147, 1.386294]]), array([[0.5, 1. ]]))
    """
    logits = check_finite_array("logits", logits, ndim=2, dtype=np.float64)
    if logits.shape[1] < 1:
        raise ValueError("logits must have at least one column (n >= 1)")
    ranges = _check_ranges(ranges, logits.shape[1])
    check_memory("ranges", f"<{len(ranges)} ranges>", 80 * logits.shape[0] * (len(ranges) + 1))
    full, mass_ref = _with_total(ranges, logits.shape[1])
    bounds, first_seg, stop_seg = _segment_plan(full, logits.shape[1])
    out = kernels.given_rows(np.ascontiguousarray(logits), bounds, first_seg, stop_seg, mass_ref)
    return _as_statistics(out, keep=len(ranges))


def summarize(stats: RangeStatistics, ranges) -> pd.DataFrame:
    """One row per range: mean and standard error over rows of ``Z, N, H, mass, log_Z``.

    Parameters
    ----------
    stats : RangeStatistics
        At least one row.
    ranges : array_like, shape (n_ranges, 2)
        The ``(t1, t2)`` integer pairs of the columns of ``stats``, ``0 <= t1 < t2``.

    Returns
    -------
    pandas.DataFrame
        Columns ``t1, t2, Z_mean, Z_se, N_mean, N_se, H_mean, H_se, mass_mean, mass_se,
        log_Z_mean, log_Z_se, samples``.

    Raises
    ------
    ValueError
        If ``stats`` is not a RangeStatistics with a row, or ``ranges`` is not such pairs, one
        per column.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import range_statistics, summarize
    >>> logits = np.log([[1.0, 1.0], [3.0, 1.0]])  # Z of [0, 1): 1 and 3
    >>> summarize(range_statistics(logits, [(0, 1)]), [(0, 1)])[["Z_mean", "Z_se", "samples"]]
       Z_mean  Z_se  samples
    0     2.0   1.0        2
    """
    if not isinstance(stats, RangeStatistics):
        raise ValueError(f"stats must be a RangeStatistics, got {type(stats).__name__}")
    if stats.rows < 1:
        raise ValueError("stats must hold at least one row (sample) to summarise, got 0")
    ranges = check_finite_array("ranges", ranges, ndim=2, lo=0, integer=True)
    if ranges.shape[1] != 2 or np.any(ranges[:, 0] >= ranges[:, 1]) or np.any(
            ranges > np.iinfo(np.int64).max):
        raise ValueError(f"ranges must be (t1, t2) integer pairs with 0 <= t1 < t2, got "
                         f"{ranges.tolist()}")
    ranges = ranges.astype(np.int64)
    if len(ranges) != stats.Z.shape[1]:
        raise ValueError(f"ranges must have one pair per column of stats ({stats.Z.shape[1]}), "
                         f"got {len(ranges)}")
    table = {"t1": ranges[:, 0], "t2": ranges[:, 1]}
    for name in _QUANTITIES:
        table[f"{name}_mean"], table[f"{name}_se"] = mean_se(getattr(stats, name))
    table["samples"] = np.full(len(ranges), stats.rows, dtype=np.int64)
    return pd.DataFrame(table, columns=SUMMARY_COLUMNS)


def simulation_memory(n_ctx: int, samples: int, n_ranges: int, *, dense: bool = False) -> int:
    """Estimated peak working memory in bytes of a Gaussian-logit simulation: ~48 bytes per
    distance (the distances, the coefficients and the transform's temporaries; 36 measured for
    the SI transform at n_ctx = 2e7) and 80 bytes per sample and range (five outputs,
    concatenated from chunks); the dense reference also holds ~4 ``(samples, n_ctx)`` float
    arrays."""
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
    bounds, first_seg, stop_seg = _segment_plan(ranges, a.size)
    chunk = samples if samples * a.size <= PROGRESS_LOGITS else max(1, CHUNK_LOGITS // a.size)
    starts = range(0, samples, chunk)
    if len(starts) > 1:
        starts = progress_bar(starts, desc=f"Gaussian logits (n_ctx={a.size:,})", unit="chunk",
                              leave=False)
    parts = [kernels.simulate_rows(a, m, bounds, first_seg, stop_seg, mass_ref,
                                   min(chunk, samples - start), np.uint64(seed),
                                   np.uint64(first_sample + start))
             for start in starts]
    return _as_statistics(tuple(np.concatenate(arrays) for arrays in zip(*parts)))


def simulate_gaussian_range_statistics(transform: Transform, n_ctx, ranges, samples, seed=0, *,
                                       first_sample=0) -> RangeStatistics:
    """Per-sample version of :func:`simulate_gaussian_logits`: a :class:`RangeStatistics` with
    one row per sample (row ``i`` uses the base logits ``rng.normals(seed, first_sample + i,
    n_ctx)``; a block of samples starting at ``first_sample`` gives exactly those rows of a
    larger run).

    Parameters
    ----------
    transform, n_ctx, ranges, samples, seed
        As for :func:`simulate_gaussian_logits`.
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
    ranges = _check_ranges(ranges, n_ctx)
    _check_simulation(transform, n_ctx, samples, seed, len(ranges))
    a, m = _coefficients(transform, n_ctx)
    full, mass_ref = _with_total(ranges, n_ctx)
    stats = _simulate(a, m, full, mass_ref, samples, seed, first_sample)
    return _as_statistics((stats.Z, stats.N, stats.H, stats.mass, stats.log_Z), keep=len(ranges))


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
    samples : int
        Monte Carlo samples, ``>= 2``.
    seed : int
        Seed of the base logits, ``0 <= seed < 2**63``.

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
    return summarize(stats, _check_ranges(ranges, check_int("n_ctx", n_ctx, lo=1)))


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
    transform, samples, seed
        As for :func:`simulate_gaussian_logits`.
    n_ctx_values : int or sequence of int
        Context lengths, each ``>= 1``.
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
    user_ranges = _check_ranges(ranges, n_max, allow_empty=True)
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

def range_statistics_reference(logits, ranges) -> RangeStatistics:
    """Dense textbook version of :func:`range_statistics`: SI eq. 6–8 with no shift at all, so
    only valid for moderate logits (``|L| < ~700``); the oracle the kernel is tested against."""
    logits = check_finite_array("logits", logits, ndim=2, dtype=np.float64)  # (rows, n)
    ranges = _check_ranges(ranges, logits.shape[1])
    weight = np.exp(logits)  # (rows, n)  Ã_t = e^{L_t}
    z = np.stack([weight[:, t1:t2].sum(axis=1) for t1, t2 in ranges], axis=1)  # (rows, R)
    n = np.stack([(weight[:, t1:t2] * logits[:, t1:t2]).sum(axis=1) for t1, t2 in ranges],
                 axis=1)  # (rows, R)
    total = weight.sum(axis=1, keepdims=True)  # (rows, 1)
    return RangeStatistics(Z=z, N=n, H=-n / z + np.log(z), mass=z / total, log_Z=np.log(z))


def gaussian_logits_reference(transform: Transform, n_ctx, samples, seed=0) -> np.ndarray:
    """The ``(samples, n_ctx)`` logit matrix the Monte Carlo uses (row ``i`` = stream ``i``)."""
    n_ctx, samples, seed = _check_simulation(transform, n_ctx, samples, seed, dense=True)
    a, m = _coefficients(transform, n_ctx)
    base = np.stack([normals(seed, i, n_ctx) for i in range(samples)])  # (samples, n_ctx)
    return a * base + m


def simulate_gaussian_logits_reference(transform: Transform, n_ctx, ranges, samples, seed=0
                                       ) -> pd.DataFrame:
    """Dense numpy version of :func:`simulate_gaussian_logits` (same random numbers)."""
    logits = gaussian_logits_reference(transform, n_ctx, samples, seed)
    return summarize(range_statistics_reference(logits, ranges), _check_ranges(ranges, n_ctx))
