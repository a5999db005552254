"""Claim TRAIN-6: SI Table 2 (needle retrieval after fine-tuning at L) in miniature, on the
needle study ``train_needle`` (full: its store ``build/sweeps/train_needle-seed<seed>`` beside
the grid's). Its premise is retrieval learned at L in every seed; a scheme that did not learn is
left out and named, and the row is ``UNTESTED`` when the comparison cannot be made.

The decision reads per-seed values: each seed's accuracy at L and 16L and its retention (16L
accuracy over its own L accuracy), and judges the retention on its 95 % Student t interval over
seeds (:func:`.seeds.t_interval`) with the sub-check rules of :mod:`.seeds` (:func:`.seeds.
at_least`, :func:`.seeds.at_most`, :func:`.seeds.combined`). The needle study scores every seed
on evaluation prompts of its own (``prompts="per-seed"``), so that interval includes the
prompt-to-prompt variation (haystack text, needle depths, words, numbers) besides the
initialisation's and the fine-tuning prompts'; on a table scored on shared prompts (the GPU
probes', the committed CPU run's) it does not."""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import numpy as np
import pandas as pd

from sia_theory.studies.train_needle import TABLE2, TrainNeedleSettings, train_needle

from .core import Measurement, claim, negative_control
from .seeds import at_least, at_most, combined, t_interval, with_seed_checks
from .train import execution_for, judged, sweep_store_for

__all__ = ["decide_train6", "needle_frames", "per_seed_needles", "synthetic_needles",
           "PAPER_TABLE2", "LEARNED", "HOLD", "LOSE", "NEEDLE_HOLD", "NEEDLE_LOSE"]

LEARNED = 0.8  # TRAIN-6's premise: the needle task is learned at L when every seed is at least this
"""TRAIN-6's premise: the needle task counts as learned at L when every seed retrieves at least
this share of the needles there (SI's models: 0.965); a scheme that did not is left out."""
HOLD = 0.8  # TRAIN-6: a scheme holds when its 16L retention is at least HOLD (t interval)
"""TRAIN-6: a scheme holds the needles when the t interval over seeds of its retention (16L
accuracy over its L accuracy, per seed) lies at or above ``HOLD``; contradicted when it lies
wholly below."""
LOSE = 0.5  # TRAIN-6: a scheme loses the needles when its 16L retention is at most LOSE
"""TRAIN-6: a scheme loses the needles when the t interval over seeds of its retention lies at
or below ``LOSE``; contradicted when it lies wholly above."""

NEEDLE_HOLD = ("si-p-rope", "logn-p-rope")
"""SI Table 2: the schemes that keep retrieving at 4× and 16× the fine-tuning length."""
NEEDLE_LOSE = ("p-rope", "nope")
"""SI Table 2: the schemes that lose the needles beyond it."""
PAPER_TABLE2 = TABLE2
"""SI Table 2: accuracy at 4k / 16k / 64k after fine-tuning at 4k (the study's
:data:`~sia_theory.studies.train_needle.TABLE2`; the decision's own test)."""


def per_seed_needles(frame: pd.DataFrame) -> pd.DataFrame:
    """``scheme, seed, multiple, accuracy`` (and ``digit_token_accuracy`` where given) of a
    per-seed needle frame: the study's ``cells`` (``length`` instead of ``multiple``: the
    multiple is the length over the shortest) or a GPU probe's ``needles.csv``. ``ValueError``
    for a frame without ``seed`` (a pooled table cannot give intervals over seeds)."""
    needed = {"scheme", "seed", "accuracy"}
    if not needed <= set(frame.columns) or not ({"multiple", "length"} & set(frame.columns)):
        raise ValueError("TRAIN-6 decides on per-seed accuracies: a frame of scheme, seed, "
                         f"multiple (or length) and accuracy, got columns {list(frame.columns)}")
    out = frame.copy()
    if "multiple" not in out:
        out["multiple"] = out["length"] // out["length"].min()
    keep = ["scheme", "seed", "multiple", "accuracy"]
    keep += [c for c in ("digit_token_accuracy",) if c in out]
    return out[keep].reset_index(drop=True)


def _seeds_of(frame, scheme, multiple) -> pd.Series:
    g = frame[(frame["scheme"] == scheme) & (frame["multiple"] == multiple)]
    return g.groupby("seed")["accuracy"].mean()


def _shown(iv) -> str:
    if not np.isfinite(iv.half):
        return f"{iv.mean:.2f} (n = {iv.n}, no interval)"
    return f"{iv.mean:.2f} [{iv.low:.2f}, {iv.high:.2f}]"


def decide_train6(frame: pd.DataFrame) -> Measurement:
    """TRAIN-6 on per-seed needle accuracies (``frame``: :func:`per_seed_needles`' input, one
    row per scheme, seed and length).

    The premise first: a scheme of SI Table 2 learned the needle task at L when every seed
    retrieves ``≥ LEARNED`` of the needles there (SI's models: 0.965). A scheme that did not is
    left out of the comparison (named in the row, with its worst seed, not counted as a loss);
    without SI + p-RoPE or without any of p-RoPE and NoPE the claim cannot be judged:
    UNTESTED, with the numbers. Otherwise one sub-check per learned scheme on the 95 % t
    interval over seeds of its retention (each seed's 16L accuracy over its own L accuracy):
    SI + p-RoPE and LogN + p-RoPE keep the needles (:func:`.seeds.at_least` ``HOLD``), p-RoPE
    and NoPE lose them (:func:`.seeds.at_most` ``LOSE``); :func:`.seeds.combined` makes the row
    FAIL on a contradiction, PASS when all held, UNTESTED when one is unresolved. A scheme
    missing from the frame (or without its L or 16L rows) is a contradicted sub-check.

    What the interval includes is what differs between the seeds' rows: with the study's
    per-seed prompts, the initialisation, the fine-tuning prompts and the evaluation prompts
    (haystack text, needle depths, words and numbers). Value: SI + p-RoPE's mean retention with
    its t interval."""
    f = per_seed_needles(frame)
    schemes = NEEDLE_HOLD + NEEDLE_LOSE
    acc = {s: (_seeds_of(f, s, 1), _seeds_of(f, s, 16)) for s in schemes}
    missing = [s for s in schemes if not (len(acc[s][0]) and len(acc[s][1]))]
    worst = {s: float(acc[s][0].min()) for s in schemes if s not in missing}
    unlearned = {s: a for s, a in worst.items() if not a >= LEARNED}
    judged = [s for s in schemes if s not in missing and s not in unlearned]
    retention, checks = {}, {}
    for s in schemes:
        if s in missing:
            checks[f"{s} in the frame (L and 16L)"] = "contradicted"
            continue
        a1, a16 = acc[s]
        seeds = a1.index.intersection(a16.index)
        ratio = (a16.loc[seeds] / a1.loc[seeds]).to_numpy(float)
        if len(ratio) and np.isfinite(ratio).all():
            retention[s] = t_interval(ratio)
        if s not in judged:
            continue
        if s in NEEDLE_HOLD:
            checks[f"{s} keeps ≥ {HOLD} of its L accuracy at 16L"] = at_least(retention[s], HOLD)
        else:
            checks[f"{s} keeps ≤ {LOSE} of its L accuracy at 16L"] = at_most(retention[s], LOSE)
    si = retention.get("si-p-rope")
    value, low, high = (si.mean, si.low, si.high) if si is not None else (np.nan,) * 3
    shown = "; ".join(f"{s} {_shown(iv)}" + (" (left out)" if s in unlearned else "")
                      for s, iv in retention.items())
    levels = "; ".join(f"{s} {acc[s][0].mean():.3f} → {acc[s][1].mean():.3f}"
                       for s in schemes if s not in missing)
    n_seeds = sorted({len(acc[s][0]) for s in schemes if s not in missing})
    measured = (f"retention at 16L (16L over L accuracy per seed; mean [95 % t interval] over "
                f"{'/'.join(map(str, n_seeds)) or 'no'} seeds): {shown or 'none'}; accuracy "
                f"at L → 16L (mean over seeds): {levels or 'none'}")
    digits = ""
    if "digit_token_accuracy" in f and len(missing) < len(schemes):
        d = f.groupby(["scheme", "multiple"])["digit_token_accuracy"].mean()
        digits = " Digit tokens right at L → 16L: " + "; ".join(
            f"{s} {d.get((s, 1), np.nan):.2f} → {d.get((s, 16), np.nan):.2f}"
            for s in schemes if s not in missing) + "."
    short = ", ".join(f"{s} (worst seed {a:.3f})" for s, a in unlearned.items())
    left_out = (f" Left out, not learned at L (every seed ≥ {LEARNED}): {short}."
                if unlearned else "")
    testable = "si-p-rope" in judged and any(s in judged for s in NEEDLE_LOSE)
    if not testable and not missing:
        would = (combined(checks)[1] if checks else
                 "no sub-check can be evaluated (no scheme learned the task at L).")
        return Measurement("UNTESTED", measured, value, low, high, target=1.0,
                           tolerance=1 - HOLD,
                           detail=f"premise unmet: retrieval not learned at L (every seed ≥ "
                                  f"{LEARNED}) by {short}, so what they keep beyond L says "
                                  "nothing about the claim. The sub-checks on the schemes that "
                                  f"learned would say: {would}" + digits)
    verdict, text = combined(checks)
    return Measurement(verdict, measured, value, low, high, target=1.0, tolerance=1 - HOLD,
                       detail=text + left_out + digits)


@lru_cache(maxsize=4)
def needle_frames(quick: bool, seed: int) -> dict:
    """The needle study's frames (full: its store beside the grid's; quick: in memory)."""
    s = TrainNeedleSettings.of(quick)
    if not quick:
        s = dataclasses.replace(s, grid_store=sweep_store_for("train_grid", seed))
    result = train_needle(s, seed=seed, execution=execution_for(quick, seed, "train_needle"))
    return dict(result.frames)


def _earlier(frames: dict):
    """The per-seed accuracies at the checkpoint before the last (``None`` with one)."""
    steps = sorted(frames["checkpoints"]["step"].unique())
    if len(steps) < 2:
        return None
    c = frames["checkpoints"]
    return c[c["step"] == steps[-2]].drop(columns="step")


@claim("TRAIN-6", "Table 2: after needle fine-tuning at L every scheme retrieves at L; SI + "
                  "p-RoPE and LogN + p-RoPE keep retrieving at 16L while p-RoPE and NoPE lose "
                  f"the needles (in miniature: a scheme not learned at L, ≥ {LEARNED} in every "
                  "seed, is left out, and without SI or without p-RoPE and NoPE the row is "
                  "UNTESTED; on the 95 % t interval over seeds of each seed's retention, its 16L "
                  f"over its L accuracy: hold ≥ {HOLD}, lose ≤ {LOSE})",
       alternative="SI + p-RoPE loses the needles beyond L like p-RoPE")
def train_6(quick, seed):
    """SI Table 2 (figures/train_needle): decided on the per-seed accuracies at the last
    checkpoint, with each seed left out and at the checkpoint before (:func:`.seeds.
    with_seed_checks`)."""
    frames = needle_frames(bool(quick), seed)
    cells = frames["cells"]
    m = with_seed_checks(decide_train6(cells), cells, decide_train6, _earlier(frames))
    return judged(m, quick)


def synthetic_needles(worst_seed=None, seeds: int = 3, spread: float = 0.005,
                      **accuracy) -> pd.DataFrame:
    """Per-seed needle accuracies (``scheme, seed, multiple, accuracy``) following SI Table 2
    (:data:`PAPER_TABLE2`); ``accuracy`` overrides a scheme's ``(L, 4L, 16L)``. Seed ``k`` of
    ``seeds`` is moved by ``spread × (k − (seeds − 1) / 2)`` at L and by the opposite at 4L
    and 16L (clipped to [0, 1]), so the retention varies between seeds; ``worst_seed`` sets a
    scheme's seed-0 accuracy at L (its worst seed)."""
    rows = []
    worst_seed = worst_seed or {}
    for scheme, values in {**PAPER_TABLE2, **accuracy}.items():
        for k in range(seeds):
            shift = spread * (k - (seeds - 1) / 2)
            for multiple, a in zip((1, 4, 16), values, strict=True):
                moved = a + shift if multiple == 1 else a - shift
                if multiple == 1 and k == 0 and scheme in worst_seed:
                    moved = worst_seed[scheme]
                rows.append({"scheme": scheme, "seed": k, "multiple": multiple,
                             "accuracy": float(np.clip(moved, 0.0, 1.0))})
    return pd.DataFrame(rows)


negative_control("TRAIN-6")(lambda: decide_train6(synthetic_needles(
    **{"si-p-rope": (0.965, 0.250, 0.000)})))
negative_control("TRAIN-6", "SI's 16L retention 20 % beyond the hold tolerance")(
    lambda: decide_train6(synthetic_needles(
        **{"si-p-rope": (0.965, 0.9, 0.965 * (1 - 1.2 * (1 - HOLD)))})))
negative_control("TRAIN-6", "p-RoPE's 16L retention 20 % above the lose bound")(
    lambda: decide_train6(synthetic_needles(**{"p-rope": (0.966, 0.8, 0.966 * 1.2 * LOSE)})))
negative_control("TRAIN-6", "SI's 16L retention 20 % beyond the hold tolerance, premise just met")(
    lambda: decide_train6(synthetic_needles(
        worst_seed=dict.fromkeys(NEEDLE_HOLD + NEEDLE_LOSE, LEARNED),
        **{"si-p-rope": (LEARNED, 0.7, LEARNED * (1 - 1.2 * (1 - HOLD)))})))
negative_control("TRAIN-6", "SI's 16L retention 15 % below the hold level")(
    lambda: decide_train6(synthetic_needles(**{"si-p-rope": (0.965, 0.9, 0.965 * 0.85 * HOLD)})))
