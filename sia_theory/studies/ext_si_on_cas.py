"""The SI transform on CAS tokens (claim EXT-6, THEORY.md §6).

Scores of a query ``i`` against the other tokens ``j`` of a CAS draw are cosines
``⟨y_i, y_j⟩``; in units of their within-query standard deviation ``σ̂`` (pooled over the
queries of the draw: the unit in which SI's base logits are ``N(0, 1)``) they are
``S_ij = ⟨y_i, y_j⟩/σ̂ = c_q + X_ij`` with a per-query mean ``c_q`` (``≈ ρ√(d/(1−ρ))`` for
Gaussian near-simplex tokens) and ``X`` of unit variance. The key ``j`` is placed at distance
``t ≥ 1`` (a random order: tokens are exchangeable), the query itself at ``t = 0``, and the SI
transform gives ``L_t = a_t S_t + m_t``. For Gaussian ``X``

    ``E[e^{a_t(c + X) + m_t}] = e^{a_t c}·e^{m_t + a_t²/2} = e^{a_t c}·α/(1 + t/τ)``,

so a mean ``c_q`` multiplies the expected attention at distance ``t`` by ``e^{c_q a_t} ≈
e^{c_q√(2 log t)}``: the total attention per octave is no longer constant (scale invariance broken)
and ``log Z_{[t, 2t)}`` grows with slope ``c_q`` in ``a_t``. Per-query centred scores
``S − c_q`` restore it. ``"raw"`` below means the standardised but uncentred ``S``.

Exact simplex tokens have no fluctuation at all (``X ≡ 0``); their scores use the scale
``σ = √((1−ρ)/d)`` of Gaussian tokens with the same ``(ρ, d)``.

The CAS phase is read off the self weight ``A_ii`` (distance 0) as the context grows: → 1
super-critical (tokens kept), → 0 sub-critical (collapse), a constant in between critical.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from .._infra.seeding import check_seed
from .._infra.settings import StudySettings
from .._infra.stats import mean_ci
from .._infra.validate import check_int, check_real, check_sequence
from ..cas.tokens import normalise_rows, sample_tokens, token_rng
from ..transforms import ScaleInvariant
from .base import study

__all__ = ["shifted_weight_mean", "octave_edges", "si_token_draw", "si_simplex_profile",
           "SI_ON_CAS_STUDY", "VARIANTS", "SIOnCASSettings", "si_on_cas_study", "si_on_cas_cell",
           "octave_slopes", "summarize_si_on_cas", "cas_phase"]

SI_ON_CAS_STUDY = "cas.si_on_cas"
"""The study key of the token draws' random streams."""
VARIANTS = ("raw", "centred", "iid")
"""Score variants of a draw: standardised token scores, the same centred per query, and iid
``N(0, 1)`` scores (SI's own assumption, the reference)."""


def shifted_weight_mean(transform, t, c) -> np.ndarray:
    """``E[e^{a_t(c + X) + m_t}] = e^{a_t c + m_t + a_t²/2}`` for ``X ~ N(0, 1)`` (elementwise in
    ``t``, ``c``)."""
    a, m = transform.coefficients(t)
    return np.exp(a * np.asarray(c, dtype=np.float64) + m + 0.5 * a * a)


def octave_edges(n: int) -> np.ndarray:
    """``[1, 2, 4, …, 2^K]`` with ``2^K <= n − 1``: octaves ``[2^k, 2^{k+1})`` of distances
    ``t >= 1`` inside ``n`` keys (``n − 1`` others plus the query at ``t = 0``)."""
    n = check_int("n", n, 4)
    return 2 ** np.arange(0, int(math.floor(math.log2(n))) + 1)


def _profile(L: np.ndarray, edges: np.ndarray, prefixes) -> dict:
    """Per row of logits ``L`` (``(m, n)``, column ``t`` = distance): ``log Z`` of each octave
    (``(m, K)``) and the self weight for each prefix length (``(m, P)``)."""
    log_oct = np.stack([logsumexp(L[:, lo:hi], axis=1) for lo, hi in
                        zip(edges[:-1], edges[1:], strict=True)], axis=1)  # (m, K)
    self_w = np.stack([np.exp(L[:, 0] - logsumexp(L[:, :p], axis=1)) for p in prefixes],
                      axis=1)  # (m, P)
    return {"log_octave": log_oct, "self_weight": self_w}


def si_token_draw(*, n, d, rho, queries, draw, seed, tau=10.0, prefixes=None) -> pd.DataFrame:
    """One Gaussian near-simplex draw (``token_rng(seed, SI_ON_CAS_STUDY, n, d, draw)``): for
    each of ``queries`` queries and each variant of :data:`VARIANTS`, ``log Z`` of each octave
    of distances, the self weight at each prefix length in ``prefixes`` (default: powers of 2
    from 2⁴ to ``n``) and ``c_q``. Long format: ``variant, query, c_q, quantity ("log_octave" |
    "self_weight"), index (octave start or prefix length), value``."""
    n, d, draw = check_int("n", n, 16), check_int("d", d, 1), check_int("draw", draw, 0)
    queries = min(check_int("queries", queries, 2), n)
    rho = check_real("rho", rho, 0.0, 1.0, lo_open=True, hi_open=True)
    rng = token_rng(check_seed(seed), SI_ON_CAS_STUDY, n, d, draw)
    X = sample_tokens(n=n, d=d, rho=rho, rng=rng)
    Y, _ = normalise_rows(X)  # (n, d)
    G = Y[:queries] @ Y.T  # (queries, n), self cosine 1 at column i
    order = np.empty((queries, n), dtype=np.int64)  # column t -> token: self first, others shuffled
    for i in range(queries):
        others = np.delete(np.arange(n), i)
        order[i] = np.concatenate([[i], rng.permutation(others)])
    C = np.take_along_axis(G, order, axis=1)  # (queries, n), column t = distance t
    sigma = float(np.sqrt(np.mean(np.var(C[:, 1:], axis=1))))
    S = C / sigma  # standardised raw scores
    c_q = S[:, 1:].mean(axis=1)  # (queries,)
    variants = {"raw": S, "centred": S - c_q[:, None],
                "iid": rng.standard_normal((queries, n))}
    a, m = ScaleInvariant(tau).coefficients(np.arange(n, dtype=np.float64))  # (n,) each
    edges = octave_edges(n)
    prefixes = ([int(p) for p in 2 ** np.arange(4, int(math.log2(n)) + 1)] if prefixes is None
                else [check_int("prefixes", p, 2, hi=n) for p in prefixes])
    frames = []
    for name, scores in variants.items():
        prof = _profile(a * scores + m, edges, prefixes)
        c = c_q if name == "raw" else np.zeros(queries)
        for quantity, index in (("log_octave", edges[:-1]), ("self_weight", prefixes)):
            values = prof[quantity]  # (queries, len(index))
            frames.append(pd.DataFrame({
                "variant": name, "query": np.repeat(np.arange(queries), len(index)),
                "c_q": np.repeat(c, len(index)), "quantity": quantity,
                "index": np.tile(np.asarray(index, dtype=np.int64), queries),
                "value": values.ravel()}))
    out = pd.concat(frames, ignore_index=True)
    out["draw"], out["sigma_hat"], out["n"], out["d"] = draw, sigma, n, d
    return out


def si_simplex_profile(*, n, d, rho, tau=10.0) -> pd.DataFrame:
    """Exact simplex tokens (no fluctuation): the same quantities as :func:`si_token_draw` for
    one query, scores in units ``σ = √((1−ρ)/d)`` (self ``1/σ``, others ``ρ/σ``; centred:
    ``(1−ρ)/σ`` and 0). Deterministic."""
    n, d = check_int("n", n, 16), check_int("d", d, 1)
    rho = check_real("rho", rho, 0.0, 1.0, lo_open=True, hi_open=True)
    sigma = math.sqrt((1 - rho) / d)
    a, m = ScaleInvariant(tau).coefficients(np.arange(n, dtype=np.float64))
    edges = octave_edges(n)
    prefixes = [int(p) for p in 2 ** np.arange(4, int(math.log2(n)) + 1)]
    frames = []
    for name, c in (("raw", rho / sigma), ("centred", 0.0)):
        scores = np.full((1, n), c)
        scores[0, 0] = c + (1 - rho) / sigma
        prof = _profile(a * scores + m, edges, prefixes)
        for quantity, index in (("log_octave", edges[:-1]), ("self_weight", prefixes)):
            frames.append(pd.DataFrame({"variant": name, "query": 0,
                                        "c_q": c if name == "raw" else 0.0,
                                        "quantity": quantity, "index": index,
                                        "value": prof[quantity][0]}))
    return pd.concat(frames, ignore_index=True).assign(draw=0, sigma_hat=sigma, n=n, d=d)


# ----------------------------------------------------------------------------- the study
@dataclass(frozen=True)
class SIOnCASSettings(StudySettings):
    """``draws`` Gaussian near-simplex draws of ``n`` tokens for each ``d`` in ``dims``
    (nominal cosine ``rho``), ``queries`` queries each; SI transform with ``tau``; the octave
    slope is fitted over octaves starting at ``t >= t_fit``.

    Attributes
    ----------
    n : int
        Tokens per draw (the context length).
    dims : tuple of int
        The token dimensions d.
    rho : float
        The nominal cosine of the near-simplex tokens, inside (0, 1).
    draws : int
        Seeded token draws per dimension d.
    queries : int
        Query rows per draw.
    tau : float
        Τ of the scale-invariant transform.
    t_fit : int
        The smallest octave start t of the fitted octave slope.
    """

    n: int = 2**14
    dims: tuple = (128, 512)
    rho: float = 0.5
    draws: int = 8
    queries: int = 128
    tau: float = 10.0
    t_fit: int = 8

    def __post_init__(self):
        check_int("n", self.n, lo=16, hi=2**20)
        object.__setattr__(self, "dims", tuple(check_int("dims", d, lo=1, hi=10**5)
                                               for d in check_sequence("dims", self.dims)))
        if not self.dims:
            raise ValueError("dims must hold at least one dimension d")
        check_real("rho", self.rho, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        check_int("draws", self.draws, lo=2)
        check_int("queries", self.queries, lo=1, hi=self.n)
        check_real("tau", self.tau, lo=0.0, lo_open=True)
        check_int("t_fit", self.t_fit, lo=1, hi=self.n // 4)

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(n=2**11, dims=(128,), draws=4, queries=48)


@study("ext_si_on_cas", SIOnCASSettings, sweepable=True)
def si_on_cas_study(settings: SIOnCASSettings, seed: int, execution):
    """Frames ``draws`` (:func:`si_token_draw` rows of every ``(d, draw)`` cell) and
    ``simplex`` (:func:`si_simplex_profile` for each ``d``); the draws are sweep cells (any
    scheduler, same numbers; resumable with a store)."""
    s = settings
    cells = [{"n": s.n, "d": int(d), "rho": s.rho, "queries": s.queries, "tau": s.tau,
              "draw": k} for d in s.dims for k in range(s.draws)]
    _, frames, _ = execution.run_cells(partial(si_on_cas_cell, seed), cells, seed=seed,
                                       study=SI_ON_CAS_STUDY)
    simplex = pd.concat([si_simplex_profile(n=s.n, d=int(d), rho=s.rho, tau=s.tau)
                         for d in s.dims], ignore_index=True)
    return {"draws": pd.concat(frames, ignore_index=True), "simplex": simplex}


def si_on_cas_cell(seed: int, cell: dict, rng_seed: int) -> pd.DataFrame:
    """Sweep cell: :func:`si_token_draw` seeded by ``(seed, SI_ON_CAS_STUDY, n, d, draw)``."""
    return si_token_draw(n=cell["n"], d=cell["d"], rho=cell["rho"], queries=cell["queries"],
                         draw=cell["draw"], seed=seed, tau=cell["tau"])


def octave_slopes(frame: pd.DataFrame, tau: float, t_fit: int) -> pd.DataFrame:
    """Per ``(d, variant, draw, query)``: the least-squares slope ``b`` of the octave
    ``log Z_{[t, 2t)}`` on the octave mean of ``a_t`` (octaves with ``t >= t_fit``), and
    ``c_q``."""
    rows = frame[(frame["quantity"] == "log_octave") & (frame["index"] >= t_fit)]
    starts = np.sort(rows["index"].unique())
    a_bar = {}
    for t in starts:
        a, _ = ScaleInvariant(tau).coefficients(np.arange(t, 2 * t, dtype=np.float64))
        a_bar[int(t)] = float(a.mean())
    x = rows["index"].map(a_bar).to_numpy()
    rows = rows.assign(x=x)
    out = []
    for key, sub in rows.groupby(["d", "variant", "draw", "query"], sort=False):
        slope = np.polyfit(sub["x"], sub["value"], 1)[0]
        out.append(dict(zip(["d", "variant", "draw", "query"], key, strict=True),
                        slope=float(slope), c_q=float(sub["c_q"].iloc[0])))
    return pd.DataFrame(out)


def summarize_si_on_cas(draws: pd.DataFrame, simplex: pd.DataFrame, tau: float,
                        t_fit: int) -> dict:
    """Per ``d``, with 95 % intervals over draws (per-draw means over queries): the octave slope
    ``b`` of each variant; ``(b_raw − b_centred)/c̄`` (the prediction: 1; the alternative, no
    dependence on ``c_q``: 0); ``b_centred − b_iid`` (0 if centring restores SI); the mean self
    weight per prefix length and variant with the CAS phase at the longest prefix. The simplex
    entries are exact (no interval)."""
    slopes = octave_slopes(draws, tau, t_fit)
    per_draw = slopes.groupby(["d", "variant", "draw"]).agg(slope=("slope", "mean"),
                                                            c=("c_q", "mean")).reset_index()
    out = {}
    for d, sub in per_draw.groupby("d"):
        wide = sub.pivot(index="draw", columns="variant", values="slope")
        c_bar = sub[sub["variant"] == "raw"].set_index("draw")["c"]
        ratio = (wide["raw"] - wide["centred"]) / c_bar
        self_w = (draws[(draws["d"] == d) & (draws["quantity"] == "self_weight")]
                  .groupby(["variant", "index"])["value"].mean().unstack("index"))
        out[int(d)] = {"slope": {v: mean_ci(wide[v]) for v in wide.columns},
                       "c_bar": mean_ci(c_bar), "ratio": mean_ci(ratio),
                       "restored": mean_ci(wide["centred"] - wide["iid"]),
                       "self_weight": self_w,
                       "phase": {v: cas_phase(self_w.loc[v].iloc[-1]) for v in self_w.index
                                 if v != "iid"}}
    simplex_slopes = octave_slopes(simplex, tau, t_fit)
    out["simplex"] = {}
    for d, sub in simplex_slopes.groupby("d"):
        w = (simplex[(simplex["d"] == d) & (simplex["quantity"] == "self_weight")]
             .groupby(["variant", "index"])["value"].mean().unstack("index"))
        out["simplex"][int(d)] = {"slope": dict(zip(sub["variant"], sub["slope"], strict=True)),
                                  "c": float(sub[sub["variant"] == "raw"]["c_q"].iloc[0]),
                                  "self_weight": w,
                                  "phase": {v: cas_phase(w.loc[v].iloc[-1]) for v in w.index}}
    return out


def cas_phase(self_weight: float) -> str:
    """CAS phase of a self weight at the longest context: above 0.9 super-critical (tokens
    kept), below 0.1 sub-critical (collapse), else critical."""
    return ("supercritical" if self_weight > 0.9 else "subcritical" if self_weight < 0.1
            else "critical")
