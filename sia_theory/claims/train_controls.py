"""Negative controls of TRAIN-1 … TRAIN-5 (:mod:`.train`): synthetic per-seed tables that follow
each claim except for the alternative it rejects, the near ones (20 % beyond a tolerance or a
margin) included, each fed to the row's decision function, which must say ``FAIL``. Every
alternative is resolved (its interval decides the sub-check the wrong way); an alternative the
intervals cannot decide makes the row ``UNTESTED``, which the tests check separately.

:func:`synthetic_frame` builds the per-seed table: every scheme at 3.90 at L, the claims' rises
from L to 16L, a shared seed effect (the same for every scheme of a seed, as a common
initialisation would give) and a scheme's own seed noise of ``noise`` nats (a fixed pattern over
the four seeds, its own per scheme and at L and beyond), so paired differences and
rises have a finite spread; each near alternative is placed 20 % beyond the margin or
tolerance of its sub-check (:data:`.train.MARGIN` and the others), with a seed noise of
``_TIGHT`` so that its interval resolves it. :func:`synthetic_fig1` builds TRAIN-5's per-seed
Fig. 1 features the same way (four seeds, a relative seed noise of :data:`FIG1_NOISE`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .core import negative_control
from .seeds import losses, paired
from .train import (
    BLOWUP,
    FLAT_TOL,
    MARGIN,
    NEAR_TOL,
    SCHEMES5,
    decide_train1,
    decide_train2,
    decide_train3,
    decide_train4,
    decide_train5,
)

__all__ = ["synthetic_frame", "synthetic_fig1", "resolution", "SEEDS", "FIG1_NOISE"]

SEEDS = (0, 1, 2, 3)
"""The synthetic table's seeds."""


def _pattern(k: int) -> np.ndarray:
    """A fixed noise pattern over :data:`SEEDS`, mean 0 and sample sd 1 (pattern ``k``)."""
    z = np.random.default_rng(k).standard_normal(len(SEEDS))
    return (z - z.mean()) / z.std(ddof=1)

_SHARED = np.array([0.03, -0.01, 0.02, -0.04])  # a seed's shared effect (nats)


def _rises() -> dict:
    return {("si-p-rope", 10.0): 0.0, ("logn-p-rope", None): 0.02,
            ("logn-p-rope-learned", None): 0.02, ("alibi", None): 0.01, ("rope", None): 0.5,
            ("p-rope", None): 0.5, ("nope", None): 1.5, ("rope-ntk", None): 0.2,
            ("si-rope", 10.0): 0.3, ("si-nope", 10.0): 0.0, ("si-p-rope", 0.1): 0.1,
            ("si-p-rope", 1.0): 0.1, ("si-p-rope", 100.0): 0.1, ("si-p-rope", 0.625): 0.1}


def synthetic_frame(rise=None, at_l=None, noise=0.01) -> pd.DataFrame:
    """A per-seed table (``scheme, seed, tau, length, multiple, loss``) following the claims
    (module docstring); ``rise`` / ``at_l`` override per ``(scheme, tau)`` (``tau`` None for
    non-SI) the rise from L to 16L and the loss at L."""
    rises = _rises()
    base = dict.fromkeys(rises, 3.9)
    base[("si-nope", 10.0)] = 4.1
    rises.update(rise or {})
    base.update(at_l or {})
    rows = []
    for h, ((scheme, tau), r) in enumerate(rises.items()):
        at_l, beyond = noise * _pattern(2 * h), noise * _pattern(2 * h + 1)
        for k in SEEDS:
            for multiple in (1, 4, 16):
                loss = (base[(scheme, tau)] + r * np.log2(multiple) / 4 + _SHARED[k]
                        + (at_l[k] if multiple == 1 else beyond[k]))
                rows.append({"scheme": scheme, "seed": k, "tau": np.nan if tau is None else tau,
                             "length": 256 * multiple, "multiple": multiple, "loss": loss})
    return pd.DataFrame(rows)


def resolution(frame, a, b, multiple, tau_a=10.0, tau_b=10.0) -> float:
    """The half-width of the paired interval of ``a − b`` at ``multiple`` in ``frame``: the
    smallest difference that comparison resolves."""
    return paired(losses(frame, a, multiple, tau_a), losses(frame, b, multiple, tau_b)).half


FIG1_NOISE = 0.01
"""The synthetic Fig. 1 models' seed noise: a fraction of each feature's value (1 %)."""


def synthetic_fig1(swap=False, si_recent_scale=None, si_recent_gap=None, noise=FIG1_NOISE):
    """Fig. 1 feature tables ``(model, theory)``: the theory's pattern (no scaling highest
    entropy and growth, lowest recent attention; SI's recent attention 3× LogN's) and a model
    of 0.9 × the theory's values over :data:`SEEDS` (index ``seed, scheme``, as
    :func:`~.train.fig1_features` gives per seed), each feature with its own seed noise of
    ``noise`` × its value (a fixed pattern of mean 0 over the seeds, so that the means do not
    depend on ``noise``). ``swap`` exchanges SI's and LogN's measured rows; ``si_recent_scale``
    sets SI's measured recent attention to that multiple of LogN's; ``si_recent_gap`` sets it to
    LogN's plus that fraction of the theory's gap between them (at
    :data:`~.train.ORDER_FRACTION` the mean lies on the sub-check's margin)."""
    theory = pd.DataFrame({"entropy": [7.0, 4.0, 3.6], "growth": [2.7, 1.0, 0.8],
                           "recent": [0.02, 0.05, 0.15]}, index=list(SCHEMES5))
    for c in ("entropy", "growth", "recent"):
        theory[f"{c}_se"] = 0.001
    theory.index.name = "scheme"
    mean = theory.copy()
    mean[["entropy", "growth", "recent"]] *= 0.9
    if swap:
        mean.loc[["logn-p-rope", "si-p-rope"]] = mean.loc[["si-p-rope", "logn-p-rope"]].values
    if si_recent_scale is not None:
        mean.loc["si-p-rope", "recent"] = si_recent_scale * mean.loc["logn-p-rope", "recent"]
    if si_recent_gap is not None:
        gap = theory.loc["si-p-rope", "recent"] - theory.loc["logn-p-rope", "recent"]
        mean.loc["si-p-rope", "recent"] = mean.loc["logn-p-rope", "recent"] + si_recent_gap * gap
    parts = {}
    for k, seed in enumerate(SEEDS):
        part = mean.copy()
        for h, (scheme, q) in enumerate((s, q) for s in SCHEMES5
                                        for q in ("entropy", "growth", "recent")):
            part.loc[scheme, q] = mean.loc[scheme, q] * (1 + noise * _pattern(100 + h)[k])
        parts[seed] = part
    return pd.concat(parts, names=["seed", "scheme"]), theory


_BASE = synthetic_frame()
_TIGHT = 0.001  # nats: seed noise of the "20 % beyond a tolerance" tables (a narrow interval)



negative_control("TRAIN-1")(lambda: decide_train1(synthetic_frame(
    rise={("si-p-rope", 10.0): 0.5})))
negative_control("TRAIN-1", "SI rise 20 % beyond the flat tolerance")(
    lambda: decide_train1(synthetic_frame(rise={("si-p-rope", 10.0): 1.2 * FLAT_TOL},
                                          noise=_TIGHT)))
negative_control("TRAIN-1", "p-RoPE rise 20 % short of a blow-up")(
    lambda: decide_train1(synthetic_frame(rise={("p-rope", None): 0.8 * BLOWUP}, noise=_TIGHT)))
negative_control("TRAIN-1", "NoPE rise 20 % short of a blow-up")(
    lambda: decide_train1(synthetic_frame(rise={("nope", None): 0.8 * BLOWUP}, noise=_TIGHT)))
negative_control("TRAIN-2")(lambda: decide_train2(synthetic_frame(
    rise={("logn-p-rope", None): -0.1})))
negative_control("TRAIN-2", "the learned LogN 20 % beyond the margin below SI at 16L")(
    lambda: decide_train2(synthetic_frame(rise={("logn-p-rope-learned", None): -1.2 * MARGIN},
                                          noise=_TIGHT)))
negative_control("TRAIN-2", "SI 20 % beyond the margin above p-RoPE at L")(
    # SI raised at L only (its 16L loss unchanged: the rise lowered by the same amount)
    lambda: decide_train2(synthetic_frame(at_l={("si-p-rope", 10.0): 3.9 + 1.2 * MARGIN},
                                          rise={("si-p-rope", 10.0): -1.2 * MARGIN},
                                          noise=_TIGHT)))
negative_control("TRAIN-3")(lambda: decide_train3(synthetic_frame(
    rise={("si-rope", 10.0): 0.0})))
negative_control("TRAIN-3", "SI + RoPE worse than SI + p-RoPE at 16L by only 80 % of the margin")(
    lambda: decide_train3(synthetic_frame(rise={("si-rope", 10.0): 0.8 * MARGIN},
                                          noise=_TIGHT)))
negative_control("TRAIN-3", "SI + RoPE 20 % beyond the near tolerance at L")(
    lambda: decide_train3(synthetic_frame(at_l={("si-rope", 10.0): 3.9 + 1.2 * NEAR_TOL},
                                          noise=_TIGHT)))
negative_control("TRAIN-3", "SI + NoPE worse than SI + p-RoPE at L by only 80 % of the margin")(
    lambda: decide_train3(synthetic_frame(at_l={("si-nope", 10.0): 3.9 + 0.8 * MARGIN},
                                          noise=_TIGHT)))
negative_control("TRAIN-3", "SI + NoPE rising 20 % beyond the flat tolerance")(
    lambda: decide_train3(synthetic_frame(rise={("si-nope", 10.0): 1.2 * FLAT_TOL},
                                          noise=_TIGHT)))
negative_control("TRAIN-4")(lambda: decide_train4(synthetic_frame(
    rise={("si-p-rope", 1.0): -0.1})))
negative_control("TRAIN-4", "τ = 1 20 % beyond the margin below τ = 10 at 16L")(
    lambda: decide_train4(synthetic_frame(rise={("si-p-rope", 10.0): 0.0,
                                                ("si-p-rope", 1.0): -1.2 * MARGIN},
                                          noise=_TIGHT)))
negative_control("TRAIN-5")(lambda: decide_train5(*synthetic_fig1(swap=True)))
negative_control("TRAIN-5", "SI's recent-token attention 20 % below LogN's")(
    lambda: decide_train5(*synthetic_fig1(si_recent_scale=0.8)))
