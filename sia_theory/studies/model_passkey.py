"""Passkey retrieval by SmolLM2-135M inside and beyond its training context, for the
length-extrapolation schemes of :func:`sia_theory.studies.model_runs.schemes`: a 5-digit key
hidden at ``depths`` of prompts of ``contexts`` tokens
(:func:`sia_theory.models.corpus.passkey_prompt`),
``trials`` keys, scored by teacher-forced greedy decoding
(:func:`~sia_theory.models.corpus.score_passkey`); accuracy with Wilson intervals, of the whole
answer (greedy decoding writes the key) and of its digits alone (every digit is the top choice
once the answer has begun with the split-off space), with the share of first answer tokens
right beside them. Prompts of a
cell are run in order of their needle position, the shared intro and filler growing in one
cache and forked at each needle. Sweep cells are the scheme families of
:mod:`sia_theory.studies.model_extrapolation`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from .._infra.settings import StudySettings
from .._infra.stats import wilson_interval
from .._infra.validate import check_int, check_real, check_sequence
from ..models.corpus import passkey_key, passkey_prompt, score_passkey
from .base import study
from .model_runs import (
    TRAIN_LENGTH,
    family_cache,
    family_definition,
    fork_for,
    model_families,
    pretrained,
)

__all__ = ["PasskeySettings", "passkey_study", "PASSKEY_CELLS_STUDY"]

PASSKEY_CELLS_STUDY = "models.passkey_cells"
"""The study key of the passkey cells."""


@dataclass(frozen=True)
class PasskeySettings(StudySettings):
    """Prompts of ``contexts[k]`` tokens with the key at each of ``depths[k]``, ``trials[k]``
    keys per depth (key ``j`` is the same in every cell: paired comparisons). A prompt costs
    the forward pass after its needle plus, per scheme family, the filler before the deepest
    needle. At depth 0.1 of 9216 tokens the key is ≈ 8.3k tokens before the question, farther
    than the training context.

    Attributes
    ----------
    contexts : tuple of int
        The prompt lengths in tokens.
    depths : tuple of tuple of float
        For each prompt length, the relative depths of the key.
    trials : tuple of int
        For each prompt length, keys per depth.
    train_length : int
        The model's training context length.
    """

    contexts: tuple = (4096, 9216)
    depths: tuple = ((0.1, 0.5, 0.9), (0.1, 0.5, 0.9))
    trials: tuple = (2, 2)
    train_length: int = TRAIN_LENGTH

    def __post_init__(self):
        contexts = tuple(check_int("contexts", n, lo=48, hi=2**17)
                         for n in check_sequence("contexts", self.contexts))
        depths = tuple(tuple(check_real("depths", x, lo=0.0, hi=1.0)
                             for x in check_sequence("depths", row))
                       for row in check_sequence("depths", self.depths))
        trials = tuple(check_int("trials", k, lo=1, hi=10**4)
                       for k in check_sequence("trials", self.trials))
        if not len(trials) == len(depths) == len(contexts):
            raise ValueError("trials and depths must give one entry per context")
        check_int("train_length", self.train_length, lo=8)
        for name, value in (("contexts", contexts), ("depths", depths), ("trials", trials)):
            object.__setattr__(self, name, value)

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(contexts=(72, 120), depths=((0.5,), (0.2,)), trials=(1, 1),
                   train_length=96)


def _passkey_cell(settings, cell, rng_seed):
    model, tokenizer = pretrained()
    n = cell["n_ctx"]
    shared, members = model_families(n, settings.train_length)[cell["family"]]
    prompts = sorted((passkey_prompt(tokenizer.encode, passkey_key(cell["seed"], trial), depth,
                                     n) for depth in json.loads(cell["depths"])
                      for trial in range(cell["trials"])), key=lambda p: p.needle_start)
    stream = prompts[-1].ids[:prompts[-1].needle_start]  # the intro and filler every prompt has
    base = family_cache(model, members, shared, n)
    own = {}  # member caches past the shared prefix
    rows = []
    for prompt in prompts:
        p = prompt.needle_start
        if not np.array_equal(prompt.ids[:p], stream[:p]):
            raise RuntimeError("passkey prompts must share their intro and filler")
        stop = min(p, shared)
        if base.length < stop:
            model.forward_hidden(stream[base.length:stop], base)
        for scheme, aliases in members:
            if p <= shared:
                work = fork_for(base, scheme)
            else:
                if scheme.name not in own:
                    own[scheme.name] = fork_for(base, scheme)
                mine = own[scheme.name]
                if mine.length < p:
                    model.forward_hidden(stream[mine.length:p], mine)
                work = mine.fork()
            hidden = model.forward_hidden(prompt.ids[p:], work)  # needle, filler, question
            first = hidden[-1:] @ model.embedding.T  # (1, vocab)
            rest = model.continue_(work, prompt.answer[:-1]) if prompt.answer.size > 1 else \
                np.empty((0, first.shape[1]))
            result = score_passkey(np.vstack([first, rest]), prompt.answer, prompt.digit_start)
            for name in aliases:
                rows.append({"scheme": name, "computed_as": scheme.name, "n_ctx": n,
                             "depth": prompt.depth, "key": prompt.key,
                             "needle_start": p, **result})
            del work
    return pd.DataFrame(rows)


@study("model_passkey", PasskeySettings, sweepable=True, partial=True)
def passkey_study(settings: PasskeySettings, seed: int, execution):
    """Frames ``trials`` (every prompt's result), ``cells`` (accuracy per (scheme, context,
    depth)) and ``contexts`` (per (scheme, context)): ``accuracy`` (the whole answer) and
    ``digits_accuracy`` (every digit right), with 95 % Wilson intervals, and
    ``first_token_accuracy``; metadata
    ``missing`` as in :func:`~sia_theory.studies.model_extrapolation.extrapolation_study`."""
    s = settings
    # "scoring" names the scoring's version in the cell key, so that a store holding cells
    # scored before the digits were scored apart from the first answer token is not reused.
    cells = [{"n_ctx": n, "family": f, "seed": seed, "train_length": s.train_length,
              "depths": json.dumps(list(depths)), "trials": trials,
              "definition": family_definition(members), "scoring": "digits-apart"}
             for n, depths, trials in zip(s.contexts, s.depths, s.trials, strict=True)
             for f, (_, members) in enumerate(model_families(n, s.train_length))]
    _, frames, missing = execution.run_cells(partial(_passkey_cell, s), cells, seed=seed,
                                             study=PASSKEY_CELLS_STUDY)
    trials = pd.concat(frames, ignore_index=True)

    def accuracy(keys):
        rows = []
        for key, group in trials.groupby(keys):
            k, total = int(group["correct"].sum()), len(group)
            lo, hi = wilson_interval(k, total)
            d = int((group["digits_correct"] == group["digits"]).sum())
            d_lo, d_hi = wilson_interval(d, total)
            rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,),
                                    strict=True)),
                         "correct": k, "trials": total, "accuracy": k / total, "ci_low": lo,
                         "ci_high": hi, "digits_all_correct": d, "digits_accuracy": d / total,
                         "digits_ci_low": d_lo, "digits_ci_high": d_hi,
                         "first_token_accuracy": float(group["first_token_correct"].mean()),
                         "mean_log_likelihood": group["log_likelihood"].mean(),
                         "mean_digits_log_likelihood": group["digits_log_likelihood"].mean()})
        return pd.DataFrame(rows)

    return ({"trials": trials, "cells": accuracy(["scheme", "n_ctx", "depth"]),
             "contexts": accuracy(["scheme", "n_ctx"])}, {"missing": missing})
