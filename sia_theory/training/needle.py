"""Multi-needle retrieval (SI Table 2, App. G.2) in miniature: fine-tune a pretrained run on
the task of :mod:`.needle_task` at its training length ``L``, measure retrieval at ``L``,
``4L`` and ``16L``.

**Scoring** (teacher forcing, as :func:`sia_theory.models.corpus.score_passkey`): a needle is
retrieved when every token of its answer (the digits; in the list form
``" <word>: <digits>"``, SI's "output both the city and the associated number correctly") is
the model's argmax given the correct preceding tokens, i.e. greedy decoding writes it; each
needle counts separately (SI: "each needle contributing separately to the overall
accuracy"). Also reported: the share of digit tokens that are the argmax (per-token digit
accuracy), and where each needle sat: its ``position`` (first token), ``depth`` (that over the
haystack's length: 0 at the start of the context, towards 1 at the question) and ``distance``
(tokens from its number in the text to where the answer writes it; :mod:`.needle_task`).
:func:`depth_table` bins the needles by depth.

**Fine-tuning** reuses :func:`.trainer.train` (its step, optimiser and schedule) with
``parameters=`` the pretrained weights and ``batches=`` the task's windows and masks: the
pretraining's rates, constant then a linear cool-down over the last ``cooldown`` of the steps
(SI: 100 warm-up, 100 constant, 100 cool-down steps at the pretraining rate). The answer loss
of every step is the run's ``train_losses``; at ``checkpoints`` evenly spaced steps (the last
at the end) :func:`tune_and_evaluate` scores the needles and the trainer measures the loss on
held-out text at L, so a fine-tuning that goes on after the task is solved (and erases the
language model) shows in its own numbers (:func:`tuning_curves`).

**Seeds and intervals.** Fine-tuning prompts of step ``i`` come from ``rng_for(seed,
NEEDLE_TASK_STUDY, 0, i)`` with the run's seed (every scheme of a seed sees the same
prompts). Evaluation prompts of context ``E`` come from ``rng_for(seed, NEEDLE_TASK_STUDY, 1,
E)``; with ``prompts="per-seed"`` (the default) ``seed`` is the run's seed, so every seed is
scored on prompts of its own (haystack slices, needle positions, words, numbers), the same
for every scheme of that seed and every checkpoint; with ``prompts="shared"`` (the protocol
before) it is the study seed, so every scheme and seed is scored on the same prompts.
Fine-tuning haystacks come from the odd documents of the validation pool, evaluation
haystacks from the even ones.

Intervals: Wilson over the needles of one cell (:func:`accuracy_table`; the three needles of a
prompt share a haystack, so it is somewhat narrow), and Student's t over seeds of per-seed
values (:func:`seed_summary`). With per-seed prompts the t interval over seeds includes the
variation between pretraining initialisations, between fine-tuning prompt streams and between
evaluation prompt sets (which haystack text, where the needles sit, which words and numbers),
and on a GPU the run-to-run nondeterminism of its reductions; it does not include variation of
the corpus, the tokenizer, the pretraining data order (fixed for every seed) or the held-out
documents the haystacks are cut from (the same pool for every seed). With shared prompts it
leaves out the prompt-to-prompt variation: what the one prompt set happens to hold is common
to every seed, a bias the interval cannot show.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from functools import lru_cache, partial

import numpy as np
import pandas as pd

from .._deprecated import moved_names
from .._infra.seeding import check_seed
from .._infra.settings import StudySettings
from .._infra.stats import mean_ci, wilson_interval
from .._infra.validate import check_int, check_real
from .needle_task import (
    DIGITS,
    FORMS,
    NEEDLE_TASK_STUDY,
    NEEDLES,
    QUESTION,
    WORDS,
    NeedleExample,
    NeedleTask,
    needle_task,
)
from .params import check_parameters
from .run import TrainedRun
from .settings import TrainSettings, check_multiples

PROMPTS = ("per-seed", "shared")
"""Where the evaluation prompts come from (module docstring): the run's seed, or the study
seed (the protocol before per-seed prompts: every seed on the same prompts)."""
DEPTH_BINS = 5
"""Depth bins of :func:`depth_table` (equal widths over [0, 1])."""

__all__ = ["NeedleTuneSettings", "PROMPTS", "fine_tune", "evaluate_needles", "accuracy_table",
           "tune_and_evaluate", "prompt_seed", "depth_table", "retention_table",
           "seed_summary", "tuning_curves", "needle_rows", "DEPTH_BINS",
           # the task (:mod:`.needle_task`), importable from here as before
           "NEEDLE_TASK_STUDY", "WORDS", "DIGITS", "NEEDLES", "FORMS", "QUESTION", "NeedleTask",
           "NeedleExample", "needle_task"]


@dataclass(frozen=True)
class NeedleTuneSettings(StudySettings):
    """Needle fine-tuning and evaluation of one pretrained run (the settings of
    :func:`fine_tune` and :func:`evaluate_needles`; not :class:`sia_theory.NeedleSettings`, the
    Gaussian needle study's).

    ``steps`` optimiser steps of ``batch_size`` prompts of ``train_length + 1`` tokens (the
    run's training length), the run's optimiser and rates, a linear warm-up over the first
    ``warmup`` steps (SI: 100 of 300; default 0) and a linear cool-down over the last
    ``cooldown`` of the steps; then ``eval_examples`` prompts (three needles each) at every
    ``train_length × k``, ``k`` in ``eval_multiples``; ``eval_tokens`` bounds the tokens per
    evaluation call; ``form``: the answer's form, ``"query"`` or ``"list"``
    (:mod:`.needle_task`).

    ``full()``: 180 steps of 16 prompts of 256 tokens (0.75 of the pretraining's 240 steps;
    SI fine-tunes 300 steps after 4578, but a model this small needs more to learn the task:
    measured on si-p-rope, seed 0, 150 steps took the answer loss from 4.5 to 0.7 nats per
    token, still falling) and 32 prompts (96 needles) per length. Budget, measured on the
    full-size model in CPU seconds of the process (≈ the wall time on a quiet core; the machine
    was shared with the grid's training, load 5–8): a fine-tuning step 1.07–1.38 s (a
    pretraining step is 0.9–1.0 s on a quiet core, ``docs/training.md``), compiling 8 s; the
    evaluation of 32 prompts at 256, 1024 and 4096 tokens 47 s (0.94 s per prompt at 4096);
    data and tokenizer 9 s once per process. One (scheme, seed), quiet: 180 × 1.0 + 8 + 47 + 9
    ≈ 245 s ≈ 4.1 min of one core; Table 2's 4 schemes × 3 seeds, two at a time on 2 cores:
    6 × 4.1 ≈ 25 min. Scoring at 3 checkpoints instead of once adds 2 × 47 s per cell (the
    text loss at L at each checkpoint a few seconds): ≈ 5.7 min per cell, ≈ 34 min for the
    table (estimated from the timings above, not measured).
    """

    steps: int = 180
    batch_size: int = 16
    cooldown: float = 0.3
    warmup: int = 0
    eval_examples: int = 32
    eval_multiples: tuple = (1, 4, 16)
    eval_tokens: int = 8192
    form: str = "query"
    checkpoints: int = 3
    prompts: str = "per-seed"

    def __post_init__(self):
        set_ = object.__setattr__
        if self.form not in FORMS:
            raise ValueError(f"form must be one of {', '.join(FORMS)}, got {self.form!r}")
        if self.prompts not in PROMPTS:
            raise ValueError(f"prompts must be one of {', '.join(PROMPTS)}, got "
                             f"{self.prompts!r}")
        set_(self, "steps", check_int("steps", self.steps, lo=1, hi=10**6))
        set_(self, "batch_size", check_int("batch_size", self.batch_size, lo=1, hi=4096))
        set_(self, "cooldown", check_real("cooldown", self.cooldown, lo=0, hi=1))
        set_(self, "warmup", check_int("warmup", self.warmup, lo=0, hi=self.steps - 1))
        set_(self, "eval_examples", check_int("eval_examples", self.eval_examples, lo=1,
                                              hi=10**5))
        set_(self, "eval_multiples", check_multiples("eval_multiples", self.eval_multiples))
        set_(self, "eval_tokens", check_int("eval_tokens", self.eval_tokens, lo=1,
                                            hi=2**24))
        set_(self, "checkpoints", check_int("checkpoints", self.checkpoints, lo=1,
                                            hi=self.steps))
        if self.steps % self.checkpoints:
            raise ValueError(f"checkpoints must divide steps ({self.steps}), got "
                             f"{self.checkpoints}")

    @classmethod
    def quick(cls) -> NeedleTuneSettings:
        """Seconds: 12 steps of 4 prompts, 4 prompts per length, scored after 4, 8 and 12
        steps."""
        return cls(steps=12, batch_size=4, eval_examples=4)

    def tune_settings(self, train: TrainSettings) -> TrainSettings:
        """The :class:`TrainSettings` of the fine-tuning: the run's, with these ``steps``,
        ``batch_size``, ``cooldown`` and ``warmup``, validation at ``train_length`` only, at
        every checkpoint (``steps / checkpoints`` steps apart)."""
        if not isinstance(train, TrainSettings):
            raise ValueError(f"train must be a TrainSettings, got {type(train).__name__}")
        return dataclasses.replace(train, steps=self.steps, batch_size=self.batch_size,
                                   cooldown=self.cooldown, warmup=self.warmup,
                                   eval_every=self.steps // self.checkpoints,
                                   eval_multiples=(1,))

    def to_dict(self) -> dict:
        """The fields (tuples as lists); ``warmup`` only where it is not 0. ``checkpoints`` and
        ``prompts`` always: the protocol changed with them (per-seed prompts, scoring at
        checkpoints), so a store's cells of the protocol before are not read as this one's."""
        values = {k: list(v) if isinstance(v, tuple) else v
                  for k, v in dataclasses.asdict(self).items()}
        if not values["warmup"]:
            del values["warmup"]
        return values



def _check(run, settings, seed):
    if not isinstance(run, TrainedRun):
        raise ValueError(f"run must be a TrainedRun, got {type(run).__name__}")
    if not isinstance(settings, NeedleTuneSettings):
        raise ValueError(f"settings must be a NeedleTuneSettings, got "
                         f"{type(settings).__name__}")
    seed = check_seed(run.seed if seed is None else seed)
    task = needle_task(run.settings)
    need = task.overhead() + NEEDLES + 1
    if run.settings.train_length < need:
        raise ValueError(f"train_length: the run's training length {run.settings.train_length} "
                         f"cannot hold three needles, the question and the answer with text "
                         f"around them (needs >= {need})")
    longest = run.settings.train_length * max(settings.eval_multiples) + 1
    if task.haystacks["evaluate"].size < longest:
        raise ValueError(f"eval_multiples: prompts of {longest} tokens need more held-out text "
                         f"than the {task.haystacks['evaluate'].size} tokens there are")
    return task, seed


def fine_tune(run, settings: NeedleTuneSettings | None = None, *, seed: int | None = None,
              on_checkpoint=None):
    """The :class:`~.run.TrainedRun` of ``run`` fine-tuned on the needle task (``settings``
    default :meth:`NeedleTuneSettings.full`; prompts from ``seed``, default the run's seed):
    :func:`.trainer.train` from ``run.parameters`` with the task's batches; its
    ``train_losses`` are the mean answer losses of each step's batch, its ``checkpoints`` the
    text loss at L at every checkpoint; ``on_checkpoint(step, params)`` is called there
    (:func:`.trainer.train`)."""
    settings = NeedleTuneSettings.full() if settings is None else settings
    task, seed = _check(run, settings, seed)
    from .trainer import train  # JAX: only where a run is fine-tuned

    tune = settings.tune_settings(run.settings)
    length = tune.train_length
    return train(run.resolved_scheme(), tune, seed=run.seed, tau=run.tau,
                 parameters=run.parameters, on_checkpoint=on_checkpoint,
                 batches=lambda i: task.batch(seed, i, tune.batch_size, length, settings.form))


@lru_cache(maxsize=1)
def _scorer():

    # JAX: only where a run is scored
    from ._jax import require
    from .model import forward

    jax, jnp, _ = require()

    @partial(jax.jit, static_argnames=("n_heads", "block"))
    def score(params, windows, tables, rotation, *, n_heads, block):
        logits = forward(params, windows[:, :-1], tables, rotation, n_heads=n_heads,
                         block=block)
        top = jnp.argmax(logits, axis=-1)  # (B, T)
        log_z = jax.nn.logsumexp(logits, axis=-1)
        picked = jnp.take_along_axis(logits, windows[:, 1:, None], axis=-1)[..., 0]
        return top, picked - log_z  # argmax and log p of the next token

    return score


def needle_rows(example: NeedleExample, top, log_p) -> list:
    """One row per needle of ``example`` scored by ``top`` (the argmax of every position) and
    ``log_p`` (the log-probability of every next token): ``needle, word, key, position,
    depth, distance, correct, number_correct, digit_tokens, digit_tokens_correct,
    log_likelihood`` (:func:`evaluate_needles`)."""
    rows = []
    depths, distances = example.depths(), example.distances()
    for j, (a, d, b) in enumerate(example.segments):
        hits = top[a - 1:b - 1] == example.window[a:b]  # position p predicts p + 1
        rows.append({"needle": j, "word": example.words[j], "key": example.keys[j],
                     "position": int(example.starts[j]), "depth": float(depths[j]),
                     "distance": int(distances[j]), "correct": bool(hits.all()),
                     "number_correct": bool(hits[d - a:].all()), "digit_tokens": int(b - d),
                     "digit_tokens_correct": int(hits[d - a:].sum()),
                     "log_likelihood": float(log_p[a - 1:b - 1].sum())})
    return rows


def _score_needles(task, run, settings, seed, params) -> list:
    """The rows of :func:`evaluate_needles` for JAX ``params`` under ``run``'s scheme."""
    from ._jax import require  # JAX: only where a run is scored
    from .evaluation import block_for, scheme_arrays  # imports JAX: only where a run is scored

    jax, jnp, _ = require()
    s = run.settings
    scheme = run.resolved_scheme()
    score = _scorer()
    rows = []
    for k in settings.eval_multiples:
        length = s.train_length * k
        examples = task.evaluation(seed, length, settings.eval_examples, settings.form)
        per_call = max(1, min(len(examples), settings.eval_tokens // length))
        tables, rotation = scheme_arrays(scheme, s, length)
        for first in range(0, len(examples), per_call):
            chunk = examples[first:first + per_call]
            windows = np.stack([e.window for e in chunk])
            top, log_p = score(params, jnp.asarray(windows), tables, rotation,
                               n_heads=s.n_heads, block=block_for(s, len(chunk), length))
            top, log_p = np.asarray(top), np.asarray(log_p, np.float64)
            for i, e in enumerate(chunk):
                rows += [{"length": length, "multiple": k, "example": first + i, **r}
                         for r in needle_rows(e, top[i], log_p[i])]
    return rows


def evaluate_needles(run, settings: NeedleTuneSettings | None = None, *, seed: int = 0,
                     parameters=None) -> pd.DataFrame:
    """One row per needle of ``settings.eval_examples`` prompts at every ``train_length × k``:
    ``length, multiple, example, needle, word, key``, where the needle sat (``position``, its
    first token; ``depth``, that over the haystack's length, 0 at the start, towards 1 at the
    question; ``distance``, tokens from its number in the text to where the answer writes
    it), ``correct`` (word and number: every token the argmax), ``number_correct``,
    ``digit_tokens``, ``digit_tokens_correct``, ``log_likelihood`` (of the needle's answer
    tokens). ``parameters`` (default the run's) are scored under the run's scheme; prompts
    from ``seed`` (whatever ``settings.prompts`` says: :func:`tune_and_evaluate` chooses)."""
    settings = NeedleTuneSettings.full() if settings is None else settings
    task, seed = _check(run, settings, seed)
    from ._jax import require  # JAX: only where a run is scored

    jax, jnp, _ = require()
    params = jax.tree.map(jnp.asarray, run.parameters if parameters is None
                          else check_parameters(parameters, run.settings))
    return pd.DataFrame(_score_needles(task, run, settings, seed, params))


def _last_step(needles: pd.DataFrame, keys) -> pd.DataFrame:
    """The rows of the last checkpoint where ``needles`` has a ``step`` column that ``keys``
    does not name (pooling checkpoints would mix models)."""
    if "step" in needles and "step" not in keys and len(needles):
        return needles[needles["step"] == needles["step"].max()]
    return needles


def accuracy_table(needles: pd.DataFrame, keys=("length",)) -> pd.DataFrame:
    """Per group of ``keys``: ``correct``, ``needles``, ``accuracy`` with its 95 % Wilson
    interval (``ci_low``, ``ci_high``), ``number_accuracy`` and ``digit_token_accuracy`` (the
    share of digit tokens that are the argmax). A frame with a ``step`` column (scored at
    fine-tuning checkpoints) counts its last step only unless ``keys`` names ``step``."""
    keys = list(keys)
    needles = _last_step(needles, keys)
    rows = []
    for key, group in needles.groupby(keys, sort=True):
        k, n = int(group["correct"].sum()), len(group)
        lo, hi = wilson_interval(k, n)
        rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)),
                     "correct": k, "needles": n, "accuracy": k / n, "ci_low": lo,
                     "ci_high": hi, "number_accuracy": float(group["number_correct"].mean()),
                     "digit_token_accuracy": float(group["digit_tokens_correct"].sum()
                                                   / group["digit_tokens"].sum())})
    return pd.DataFrame(rows)


def depth_table(needles: pd.DataFrame, keys=("scheme", "seed", "step", "length"),
                bins: int = DEPTH_BINS) -> pd.DataFrame:
    """Accuracy by depth: per group of ``keys`` (those the frame has) and depth bin (``bins``
    equal bins over [0, 1], the last closed): ``depth_bin`` (0 … bins − 1), ``depth_low``,
    ``depth_high``, ``depth_mid``, ``needles``, ``correct``, ``accuracy`` (NaN for an empty bin,
    which is listed: every group has every bin) and ``mean_distance`` (tokens). Per seed when
    ``keys`` holds ``seed``, so :func:`seed_summary` can put intervals over seeds on it."""
    bins = check_int("bins", bins, lo=1, hi=1000)
    keys = [k for k in keys if k in needles]
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.searchsorted(edges, needles["depth"].to_numpy(float), side="right") - 1,
                    0, bins - 1)
    frame = needles.assign(depth_bin=which)
    rows = []
    groups = frame.groupby(keys, sort=True) if keys else [((), frame)]
    for key, group in groups:
        tag = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        for b in range(bins):
            g = group[group["depth_bin"] == b]
            n = len(g)
            rows.append({**tag, "depth_bin": b, "depth_low": edges[b], "depth_high": edges[b + 1],
                         "depth_mid": (edges[b] + edges[b + 1]) / 2, "needles": n,
                         "correct": int(g["correct"].sum()),
                         "accuracy": float(g["correct"].mean()) if n else np.nan,
                         "mean_distance": float(g["distance"].mean()) if n and "distance" in g
                         else np.nan})
    return pd.DataFrame(rows)


def retention_table(cells: pd.DataFrame) -> pd.DataFrame:
    """Per-seed retention: for each row of ``cells`` (``scheme, seed, length, accuracy`` and
    ``multiple`` or ``length`` over the shortest; ``step`` where scored at checkpoints), the
    ``accuracy_at_L`` of the same scheme, seed (and step) at L and ``retention`` = accuracy
    over it (NaN where nothing was retrieved at L)."""
    keys = [k for k in ("scheme", "seed", "step") if k in cells]
    frame = cells.copy()
    if "multiple" not in frame:
        frame["multiple"] = frame["length"] // frame["length"].min()
    at_l = frame[frame["multiple"] == 1].set_index(keys)["accuracy"].rename("accuracy_at_L")
    frame = frame.join(at_l, on=keys)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = frame["accuracy"] / frame["accuracy_at_L"]
    frame["retention"] = ratio.where(frame["accuracy_at_L"] > 0)
    columns = keys + ["length", "multiple", "accuracy", "accuracy_at_L", "retention"]
    return frame[columns].reset_index(drop=True)


def seed_summary(frame: pd.DataFrame, keys, value: str) -> pd.DataFrame:
    """Per group of ``keys``: the mean of ``value`` over the group's rows (one per seed) with
    its 95 % Student t interval (``ci_low``, ``ci_high``; NaN with fewer than two finite
    values) and ``seeds`` (the finite values counted). With per-seed prompts the interval
    includes the variation between evaluation prompt sets (module docstring)."""
    keys = list(keys)
    rows = []
    for key, group in frame.groupby(keys, sort=False):
        values = group[value].to_numpy(float)
        mean, lo, hi = mean_ci(values)
        rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)),
                     value: mean, "ci_low": lo, "ci_high": hi,
                     "seeds": int(np.isfinite(values).sum())})
    return pd.DataFrame(rows)


def tuning_curves(tuned, text_before: float | None = None) -> pd.DataFrame:
    """``step, split, loss`` of a fine-tuning (:func:`fine_tune`): ``"answer"``, the answer
    loss of every step's batch (step ``i``: the batch of update ``i + 1``, measured before it,
    i.e. of the model after ``i`` updates); ``"text"``, the loss on held-out text at L (the
    validation documents' first L tokens) after every checkpoint's steps, and at step 0
    ``text_before`` (the pretrained model's) if given."""
    rows = [("answer", i, float(v)) for i, v in enumerate(tuned.train_losses)]
    if text_before is not None:
        rows.append(("text", 0, float(text_before)))
    length = tuned.settings.train_length
    rows += [("text", int(step), float(loss)) for step, at, kind, loss in tuned.checkpoints
             if at == length and kind == "all"]
    return pd.DataFrame([{"step": st, "split": sp, "loss": v} for sp, st, v in rows])


def prompt_seed(run, settings: NeedleTuneSettings, seed: int = 0) -> int:
    """The seed of the evaluation prompts: the run's under ``prompts="per-seed"``, ``seed``
    (the study's) under ``"shared"``."""
    return check_seed(run.seed if settings.prompts == "per-seed" else seed)


def tune_and_evaluate(run, settings: NeedleTuneSettings | None = None, *, seed: int = 0):
    """Fine-tune ``run`` (prompts from the run's seed), scoring the needles at every
    checkpoint (``settings.checkpoints``; prompts from :func:`prompt_seed`: the run's seed,
    or ``seed`` under ``prompts="shared"``): ``(needles, fine-tuned run, seconds)``, the
    needles of :func:`evaluate_needles` with ``step`` (the checkpoint's), the wall time of
    fine-tuning and of scoring."""
    settings = NeedleTuneSettings.full() if settings is None else settings
    task, _ = _check(run, settings, seed)
    at = prompt_seed(run, settings, seed)
    frames, clock = [], {"evaluate": 0.0}

    def score(step, params):
        t0 = time.perf_counter()
        frames.append(pd.DataFrame(_score_needles(task, run, settings, at, params))
                      .assign(step=int(step)))
        clock["evaluate"] += time.perf_counter() - t0

    t0 = time.perf_counter()
    tuned = fine_tune(run, settings, on_checkpoint=score)
    total = time.perf_counter() - t0
    needles = pd.concat(frames, ignore_index=True)
    return needles, tuned, {"tune": total - clock["evaluate"], "evaluate": clock["evaluate"]}


__getattr__ = moved_names(__name__)  # NeedleSettings, TABLE2 (removed in 0.5)
