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
``_TIGHT`` so that its interval resolves it.
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

__all__ = ["synthetic_frame", "synthetic_fig1", "resolution", "SEEDS"]

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


def synthetic_fig1(swap=False, si_recent_scale=None):
    """Fig. 1 feature tables ``(model, theory)``: the theory's pattern (no scaling highest
    entropy and growth, lowest recent attention; SI's recent attention 3× LogN's) with the model
    following it; ``swap`` exchanges SI's and LogN's measured rows; ``si_recent_scale`` sets
    SI's measured recent attention to that multiple of LogN's."""
    theory = pd.DataFrame({"entropy": [7.0, 4.0, 3.6], "growth": [2.7, 1.0, 0.8],
                           "recent": [0.02, 0.05, 0.15]}, index=list(SCHEMES5))
    for c in ("entropy", "growth", "recent"):
        theory[f"{c}_se"] = 0.001
    model = theory.copy()
    model[["entropy", "growth", "recent"]] *= 0.9
    if swap:
        model.loc[["logn-p-rope", "si-p-rope"]] = model.loc[["si-p-rope", "logn-p-rope"]].values
    if si_recent_scale is not None:
        model.loc["si-p-rope", "recent"] = si_recent_scale * model.loc["logn-p-rope", "recent"]
    return model, theory


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
