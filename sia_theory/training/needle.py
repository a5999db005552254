"""Multi-needle retrieval (SI Table 2, App. G.2) in miniature: fine-tune a pretrained run on
the task of :mod:`.needle_task` at its training length ``L``, measure retrieval at ``L``,
``4L`` and ``16L``.

**Scoring** (teacher forcing, as :func:`sia_theory.models.corpus.score_passkey`): a needle is
retrieved when every token of its answer (the digits; in the list form
``" <word>: <digits>"``, SI's "output both the city and the associated number correctly") is
the model's argmax given the correct preceding tokens, i.e. greedy decoding writes it; each
needle counts separately (SI: "each needle contributing separately to the overall
accuracy"). Also reported: the share of digit tokens that are the
argmax (per-token digit accuracy). Intervals: Wilson over needles
(:func:`sia_theory._infra.stats.wilson_interval`); the three needles of one prompt share a
haystack, so the interval is somewhat narrow.

**Fine-tuning** reuses :func:`.trainer.train` (its step, optimiser and schedule) with
``parameters=`` the pretrained weights and ``batches=`` the task's windows and masks: the
pretraining's rates, constant then a linear cool-down over the last ``cooldown`` of the steps
(SI: 100 warm-up, 100 constant, 100 cool-down steps at the pretraining rate).

Seeds: fine-tuning prompts of step ``i`` come from ``rng_for(seed, NEEDLE_TASK_STUDY, 0,
i)`` (the run's seed: every scheme sees the same prompts), evaluation prompts from
``rng_for(seed, NEEDLE_TASK_STUDY, 1, E)`` (the study seed: every scheme and seed is
scored on the same prompts). Fine-tuning haystacks come from the odd documents of the
validation pool, evaluation haystacks from the even ones.
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
from .._infra.stats import wilson_interval
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

__all__ = ["NeedleTuneSettings", "fine_tune", "evaluate_needles", "accuracy_table",
           "tune_and_evaluate",
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
    6 × 4.1 ≈ 25 min.
    """

    steps: int = 180
    batch_size: int = 16
    cooldown: float = 0.3
    warmup: int = 0
    eval_examples: int = 32
    eval_multiples: tuple = (1, 4, 16)
    eval_tokens: int = 8192
    form: str = "query"

    def __post_init__(self):
        set_ = object.__setattr__
        if self.form not in FORMS:
            raise ValueError(f"form must be one of {', '.join(FORMS)}, got {self.form!r}")
        set_(self, "steps", check_int("steps", self.steps, lo=1, hi=10**6))
        set_(self, "batch_size", check_int("batch_size", self.batch_size, lo=1, hi=4096))
        set_(self, "cooldown", check_real("cooldown", self.cooldown, lo=0, hi=1))
        set_(self, "warmup", check_int("warmup", self.warmup, lo=0, hi=self.steps - 1))
        set_(self, "eval_examples", check_int("eval_examples", self.eval_examples, lo=1,
                                              hi=10**5))
        set_(self, "eval_multiples", check_multiples("eval_multiples", self.eval_multiples))
        set_(self, "eval_tokens", check_int("eval_tokens", self.eval_tokens, lo=1,
                                            hi=2**24))

    @classmethod
    def quick(cls) -> NeedleTuneSettings:
        """Seconds: 12 steps of 4 prompts, 4 prompts per length."""
        return cls(steps=12, batch_size=4, eval_examples=4)

    def tune_settings(self, train: TrainSettings) -> TrainSettings:
        """The :class:`TrainSettings` of the fine-tuning: the run's, with these ``steps``,
        ``batch_size``, ``cooldown`` and ``warmup``, validation at ``train_length`` only, once
        at the end."""
        if not isinstance(train, TrainSettings):
            raise ValueError(f"train must be a TrainSettings, got {type(train).__name__}")
        return dataclasses.replace(train, steps=self.steps, batch_size=self.batch_size,
                                   cooldown=self.cooldown, warmup=self.warmup,
                                   eval_every=self.steps, eval_multiples=(1,))

    def to_dict(self) -> dict:
        """The fields (tuples as lists); ``warmup`` only where it is not 0, so that the
        stores' keys of the fine-tunings without one stay as they were."""
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


def fine_tune(run, settings: NeedleTuneSettings | None = None, *, seed: int | None = None):
    """The :class:`~.run.TrainedRun` of ``run`` fine-tuned on the needle task (``settings``
    default :meth:`NeedleTuneSettings.full`; prompts from ``seed``, default the run's seed):
    :func:`.trainer.train` from ``run.parameters`` with the task's batches; its
    ``train_losses`` are the mean answer losses of each step's batch."""
    settings = NeedleTuneSettings.full() if settings is None else settings
    task, seed = _check(run, settings, seed)
    from .trainer import train  # JAX: only where a run is fine-tuned

    tune = settings.tune_settings(run.settings)
    length = tune.train_length
    return train(run.resolved_scheme(), tune, seed=run.seed, tau=run.tau,
                 parameters=run.parameters,
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


def evaluate_needles(run, settings: NeedleTuneSettings | None = None, *, seed: int = 0,
                     parameters=None) -> pd.DataFrame:
    """One row per needle of ``settings.eval_examples`` prompts at every ``train_length × k``:
    ``length, multiple, example, needle, word, key, depth`` (the needle's start over the
    context), ``correct`` (word and number: every token the argmax), ``number_correct``,
    ``digit_tokens``, ``digit_tokens_correct``, ``log_likelihood`` (of the needle's answer
    tokens). ``parameters`` (default the run's) are scored under the run's scheme; prompts
    from ``seed``."""
    settings = NeedleTuneSettings.full() if settings is None else settings
    task, seed = _check(run, settings, seed)
    from ._jax import require  # JAX: only where a run is scored
    from .evaluation import block_for, scheme_arrays  # imports JAX: only where a run is scored

    jax, jnp, _ = require()
    s = run.settings
    scheme = run.resolved_scheme()
    params = jax.tree.map(jnp.asarray, run.parameters if parameters is None
                          else check_parameters(parameters, s))
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
                for j, (a, d, b) in enumerate(e.segments):
                    hits = top[i, a - 1:b - 1] == e.window[a:b]  # position p predicts p + 1
                    rows.append({"length": length, "multiple": k, "example": first + i,
                                 "needle": j, "word": e.words[j], "key": e.keys[j],
                                 "depth": e.starts[j] / length, "correct": bool(hits.all()),
                                 "number_correct": bool(hits[d - a:].all()),
                                 "digit_tokens": int(b - d),
                                 "digit_tokens_correct": int(hits[d - a:].sum()),
                                 "log_likelihood": float(log_p[i, a - 1:b - 1].sum())})
    return pd.DataFrame(rows)


def accuracy_table(needles: pd.DataFrame, keys=("length",)) -> pd.DataFrame:
    """Per group of ``keys``: ``correct``, ``needles``, ``accuracy`` with its 95 % Wilson
    interval (``ci_low``, ``ci_high``), ``number_accuracy`` and ``digit_token_accuracy`` (the
    share of digit tokens that are the argmax)."""
    keys = list(keys)
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


def tune_and_evaluate(run, settings: NeedleTuneSettings | None = None, *, seed: int = 0):
    """Fine-tune ``run`` (prompts from the run's seed) and evaluate it (prompts from
    ``seed``): ``(needles frame, fine-tuned run, seconds)`` with the wall time of each
    part."""
    settings = NeedleTuneSettings.full() if settings is None else settings
    _check(run, settings, seed)
    t0 = time.perf_counter()
    tuned = fine_tune(run, settings)
    t1 = time.perf_counter()
    needles = evaluate_needles(tuned, settings, seed=seed)
    t2 = time.perf_counter()
    return needles, tuned, {"tune": t1 - t0, "evaluate": t2 - t1}


__getattr__ = moved_names(__name__)  # NeedleSettings, TABLE2 (removed in 0.5)
