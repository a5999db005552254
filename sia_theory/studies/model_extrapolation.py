"""Experiments 3–4 of issue 11 on SmolLM2-135M (trained at 8k): loss by position up to 16k
tokens and passkey retrieval inside and beyond the training context, for the schemes of
:func:`.runs.schemes` (RoPE as trained, NTK, YaRN, Qwen logn, Llama-4, post-hoc SI).

Cells of :func:`sia_theory.sweeps.run_cells` (resumable through ``store``) are families of
schemes (:func:`.runs.scheme_families`): schemes that are exactly the identity on a common
prefix of query positions (RoPE, Qwen logn and Llama-4 below 8191 tokens) share one KV cache
of it, computed once without a score mod and forked for each (the cache's score mod is then set
to the member's: the cached keys and values are what the member itself computes there).
Schemes identical over the whole context (NTK and YaRN at ``s = 1``) are computed once.

* :func:`extrapolation_study`: per document, scheme and position the next-token loss; per
  position bucket the mean with a t interval over documents; per scheme the phase of every head
  at the end of the context (``σ`` of the scheme's logits over the distances ``[M, 2M)`` of the
  last queries, ``M = n/2``, against ``√(2 log M)``), against RoPE's at the training length.
* :func:`passkey_study`: a 5-digit key hidden at ``depths`` of prompts of ``contexts`` tokens
  (:func:`.corpus.passkey_prompt`), ``trials`` keys, scored by teacher-forced greedy decoding
  (:func:`.corpus.score_passkey`); accuracy with Wilson intervals. Prompts of a cell are run in
  order of their needle position, the shared intro and filler growing in one cache and forked
  at each needle.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from .._infra.settings import StudySettings
from .._infra.stats import mean_ci, wilson_interval
from ..analysis.quantities import freezing_point, phase_of_ratio
from ..models.corpus import passkey_key, passkey_prompt, score_passkey
from ..models.runs import (
    TRAIN_LENGTH,
    documents,
    extend_losses,
    pretrained,
    scheme_families,
    schemes,
    score_capture,
)

__all__ = ["ExtrapolationSettings", "extrapolation_study", "PasskeySettings", "passkey_study",
           "EXTRAPOLATION_STUDY", "PASSKEY_CELLS_STUDY", "phase_rows"]

EXTRAPOLATION_STUDY = "models.extrapolation"
PASSKEY_CELLS_STUDY = "models.passkey_cells"


def _families(n_ctx, train_length, alone=()):
    model, _ = pretrained()
    c = model.config
    return scheme_families(schemes(n_ctx, c.rope_base, train_length), n_ctx, c.head_dim,
                           min_shared=min(256, train_length // 2), alone=alone)


# RoPE's loss curve is computed on its own (not in the family sharing its prefix with Qwen and
# Llama-4): it costs one more 8k prefill and lets the baseline finish first.
EXTRAPOLATION_ALONE = ("rope",)
# Cells run in this order of their first member (a run cut short has the baseline first).
EXTRAPOLATION_ORDER = ("rope", "scale-invariant", "yarn", "ntk", "qwen-logn")


def _family_cache(model, members, shared, n_ctx):
    """The base cache of a family: no score mod on the shared prefix of several members, the
    member's own score mod for a family of one."""
    scheme = members[0][0]
    mod = scheme.score_mod if len(members) == 1 else None
    return model.new_cache(mod, scheme.position, capacity=n_ctx + 8)


def _fork_for(base, scheme):
    twin = base.fork()
    twin.score_mod = scheme.score_mod  # exact: the prefix is where the score mod is identity
    return twin


def phase_rows(scores, rows, score_mod, layer, tag):
    """Per head: ``σ`` of the logits ``L = a·S + m`` of each query ``i`` over the keys at
    distances ``[M, 2M)``, ``M = (i + 1)//2``, RMS over the queries, and ``r = σ/√(2 log M)``."""
    out = []
    for h in range(scores.shape[0]):
        sig2, ms = [], []
        for j, i in enumerate(rows):
            m = (int(i) + 1) // 2
            t = np.arange(m, 2 * m)  # distances
            s = scores[h, j, int(i) - t]  # (M,)
            if score_mod is not None:
                a, b = score_mod.coefficients(t.astype(float), float(i + 1), h)
                s = a * s + b
            sig2.append(s.var())
            ms.append(m)
        sigma, m = math.sqrt(float(np.mean(sig2))), int(np.min(ms))
        ratio = sigma / float(freezing_point(m))
        out.append({"layer": layer, "head": h, "which": tag, "M": m, "sigma": sigma,
                    "ratio": ratio, "phase": str(phase_of_ratio(ratio))})
    return out


# --- 3. Loss by position --------------------------------------------------------------------------

@dataclass(frozen=True)
class ExtrapolationSettings(StudySettings):
    """Documents of ``n_tokens`` (twice the ``train_length``), loss ``buckets`` (edges),
    ``phase_queries`` last queries (and as many ending at the training length) for phases."""

    n_tokens: int = 16384
    n_prose: int = 2
    n_code: int = 0
    train_length: int = TRAIN_LENGTH
    buckets: tuple = (0, 1024, 2048, 4096, 6144, 8192, 10240, 12288, 14336, 16384)
    phase_queries: int = 8

    @classmethod
    def quick(cls):
        return cls(n_tokens=96, n_prose=1, n_code=1, train_length=48,
                   buckets=(0, 24, 48, 72, 96), phase_queries=2)


def _extrapolation_cell(settings, cell, rng_seed):
    model, _ = pretrained()
    s, n = settings, settings.n_tokens
    doc = documents(n, s.n_prose, s.n_code)[cell["doc"]]
    shared, members = _families(n, s.train_length, EXTRAPOLATION_ALONE)[cell["family"]]
    train_rows = np.arange(s.train_length - s.phase_queries - 1, s.train_length - 1)
    end_rows = np.arange(n - s.phase_queries, n)
    base = _family_cache(model, members, shared, n)
    phases, frames = [], []

    def collect(schemes_here, tag):
        def on_layer(layer, scores):
            for scheme in schemes_here:
                rows = train_rows if tag == "train" else end_rows
                phases.extend(dict(r, scheme=scheme.name) for r in
                               phase_rows(scores, rows, scheme.score_mod, layer, tag))
        return on_layer

    def record(scheme, aliases, losses):
        for name in aliases:
            frames.append(pd.DataFrame({"scheme": name, "target": np.arange(1, n),
                                        "loss": losses}))

    if shared >= n:  # a family of one: the whole document in one pass
        (scheme, aliases), = members
        rows = np.concatenate([train_rows, end_rows])
        cap_train, cap_end = collect([scheme], "train"), collect([scheme], "end")

        def on_layer(layer, scores):
            cap_train(layer, scores[:, :train_rows.size])
            cap_end(layer, scores[:, train_rows.size:])
        capture = score_capture(model, base, rows, on_layer)
        losses = extend_losses(model, base, doc.ids, capture=capture)
        record(scheme, aliases, losses)
    else:
        capture = score_capture(model, base, train_rows,
                                collect([m[0] for m in members], "train"))
        head = extend_losses(model, base, doc.ids[:shared], next_id=doc.ids[shared],
                             capture=capture)
        for scheme, aliases in members:
            twin = _fork_for(base, scheme)
            capture = score_capture(model, twin, end_rows, collect([scheme], "end"))
            tail = extend_losses(model, twin, doc.ids[shared:], capture=capture)
            record(scheme, aliases, np.concatenate([head, tail]))
            del twin
    out = pd.concat(frames, ignore_index=True)
    out["kind"] = "loss"
    phase = pd.DataFrame(phases)
    phase["kind"] = "phase"
    result = pd.concat([out, phase], ignore_index=True)
    result["doc"] = cell["doc"]
    result["document"] = doc.name
    return result


BLOCK = 256  # tokens per block for the within-document interval


def _bucket_table(losses, buckets):
    """Per scheme and bucket: the mean loss, its t interval over documents (``ci_*``, NaN for
    one document) and over blocks of :data:`BLOCK` consecutive positions (``block_ci_*``;
    neighbouring blocks of one text are not independent, so this interval is optimistic)."""
    edges = np.asarray(buckets)
    losses = losses.assign(bucket=np.searchsorted(edges, losses["target"], side="right") - 1,
                           block=losses["target"] // BLOCK)
    per_doc = losses.groupby(["scheme", "bucket", "doc"])["loss"].mean().reset_index()
    per_block = losses.groupby(["scheme", "bucket", "doc", "block"])["loss"].mean()
    rows = []
    for (scheme, bucket), group in per_doc.groupby(["scheme", "bucket"]):
        mean, lo, hi = mean_ci(group["loss"])
        blocks = per_block.loc[(scheme, bucket)]
        _, block_lo, block_hi = mean_ci(blocks)
        rows.append({"scheme": scheme, "bucket_lo": int(edges[bucket]),
                     "bucket_hi": int(edges[bucket + 1]), "mean_loss": mean, "ci_low": lo,
                     "ci_high": hi, "block_ci_low": block_lo, "block_ci_high": block_hi,
                     "blocks": len(blocks), "documents": len(group),
                     **{f"loss_doc{int(d)}": v for d, v in zip(group["doc"], group["loss"],
                                                                strict=True)}})
    return pd.DataFrame(rows)


def _not_computed(cell, rng_seed):
    raise RuntimeError("cell not in the store (finished_only: nothing is computed)")


def _run(fn, cells, seed, store, scheduler, progress, study, finished_only):
    """run_cells, or with ``finished_only`` only the cells already in ``store`` (the others
    come back as ``None`` with their keys in the returned list of missing cells)."""
    from ..sweeps import run_cells

    if finished_only and store is None:
        raise ValueError("finished_only needs a store to read the finished cells from")
    _, frames, errors = run_cells(_not_computed if finished_only else fn, cells, seed=seed,
                                  store=store, scheduler="sync" if finished_only else scheduler,
                                  progress=progress, study=study,
                                  on_error="record" if finished_only else "raise")
    if all(f is None for f in frames):
        raise ValueError(f"store {store} holds no finished cell of this study yet")
    return frames, sorted(errors)


def extrapolation_study(settings: ExtrapolationSettings, seed: int = 0, *, store=None,
                        scheduler="sync", progress=True, finished_only=False) -> dict:
    """``{"buckets", "phases", "summary", "losses", "missing"}`` (see the module docstring);
    ``losses`` are the per-position losses averaged over documents. ``finished_only``: use the
    cells already in ``store`` and compute nothing (``missing`` lists the others)."""
    s = settings
    families = _families(s.n_tokens, s.train_length, EXTRAPOLATION_ALONE)
    cells = [{"doc": d, "family": f, "n_tokens": s.n_tokens, "train_length": s.train_length,
              "members": ",".join(m[0].name for m in families[f][1])}
             for d in range(s.n_prose + s.n_code) for f in range(len(families))]

    def priority(cell):
        name = families[cell["family"]][1][0][0].name
        rank = EXTRAPOLATION_ORDER.index(name) if name in EXTRAPOLATION_ORDER else 99
        return cell["doc"], rank

    cells.sort(key=priority)
    frames, missing = _run(partial(_extrapolation_cell, s), cells, seed, store, scheduler,
                           progress, EXTRAPOLATION_STUDY, finished_only)
    data = pd.concat(frames, ignore_index=True)
    losses = data[data["kind"] == "loss"][["scheme", "doc", "target", "loss"]]
    phases = data[data["kind"] == "phase"].dropna(axis=1, how="all")
    # phases are measured for computed schemes; aliases share their computation
    aliases = {m[0].name: m[1] for _, members in families for m in members}
    phases = pd.concat([phases[phases["scheme"] == name].assign(scheme=alias)
                        for name, names in aliases.items() for alias in names],
                       ignore_index=True)
    buckets = _bucket_table(losses, s.buckets)
    return {"buckets": buckets, "phases": _phase_summary(phases, buckets, s),
            "phase_heads": phases.drop(columns=["kind"], errors="ignore"),
            "losses": losses.groupby(["scheme", "target"])["loss"].mean().reset_index(),
            "missing": missing}


def _phase_summary(phases, buckets, s):
    """Per scheme: the share of heads in each phase at the end of the context, the share whose
    phase differs from RoPE's at the training length, the median ``|log r_end/r_train|``, and
    the loss change from ``[L/2, L)`` (RoPE) to ``[L, 2L)`` (the scheme)."""
    def per_head(frame):  # r averaged over documents, phase of the mean
        g = frame.groupby(["layer", "head"])["ratio"].mean().to_frame()
        g["phase"] = phase_of_ratio(g["ratio"].to_numpy())
        return g

    ref = phases[(phases["scheme"] == "rope") & (phases["which"] == "train")]
    if not len(ref):  # RoPE's cell is not finished: no reference phases
        return pd.DataFrame()
    ref = per_head(ref)
    inside = buckets[(buckets["scheme"] == "rope") & (buckets["bucket_lo"] >= s.train_length // 2)
                     & (buckets["bucket_hi"] <= s.train_length)]["mean_loss"].mean()
    rows = []
    for scheme, group in phases[phases["which"] == "end"].groupby("scheme"):
        g = per_head(group).join(ref.add_suffix("_train"))
        beyond = buckets[(buckets["scheme"] == scheme)
                         & (buckets["bucket_lo"] >= s.train_length)]["mean_loss"].mean()
        rows.append({"scheme": scheme, "frozen": float((g["phase"] == "frozen").mean()),
                     "critical": float((g["phase"] == "critical").mean()),
                     "spread": float((g["phase"] == "spread").mean()),
                     "phase_changed": float((g["phase"] != g["phase_train"]).mean()),
                     "median_abs_log_ratio_change": float(
                         np.median(np.abs(np.log(g["ratio"] / g["ratio_train"])))),
                     "median_ratio_end": float(g["ratio"].median()),
                     "median_ratio_train_rope": float(g["ratio_train"].median()),
                     "loss_inside": float(inside), "loss_beyond": float(beyond),
                     "loss_change": float(beyond - inside)})
    out = pd.DataFrame(rows)
    if len(out) > 2:
        from scipy.stats import spearmanr

        rho = spearmanr(out["median_abs_log_ratio_change"], out["loss_change"]).statistic
        out["spearman_phase_shift_vs_loss"] = float(rho)
    return out


# --- 4. Passkey retrieval -------------------------------------------------------------------------

@dataclass(frozen=True)
class PasskeySettings(StudySettings):
    """Prompts of ``contexts[k]`` tokens with the key at each of ``depths[k]``, ``trials[k]``
    keys per depth (key ``j`` is the same in every cell: paired comparisons). A prompt costs
    the forward pass after its needle plus, per scheme family, the filler before the deepest
    needle. At depth 0.1 of 9216 tokens the key is ≈ 8.3k tokens before the question, farther
    than the training context."""

    contexts: tuple = (4096, 9216)
    depths: tuple = ((0.1, 0.5, 0.9), (0.1, 0.5, 0.9))
    trials: tuple = (2, 2)
    train_length: int = TRAIN_LENGTH

    def __post_init__(self):
        if not len(self.trials) == len(self.depths) == len(self.contexts):
            raise ValueError("trials and depths must give one entry per context")

    @classmethod
    def quick(cls):
        return cls(contexts=(72, 120), depths=((0.5,), (0.2,)), trials=(1, 1),
                   train_length=96)


def _passkey_cell(settings, cell, rng_seed):
    model, tokenizer = pretrained()
    n = cell["n_ctx"]
    shared, members = _families(n, settings.train_length)[cell["family"]]
    prompts = sorted((passkey_prompt(tokenizer.encode, passkey_key(cell["seed"], trial), depth,
                                     n) for depth in json.loads(cell["depths"])
                      for trial in range(cell["trials"])), key=lambda p: p.needle_start)
    stream = prompts[-1].ids[:prompts[-1].needle_start]  # the intro and filler every prompt has
    base = _family_cache(model, members, shared, n)
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
                work = _fork_for(base, scheme)
            else:
                if scheme.name not in own:
                    own[scheme.name] = _fork_for(base, scheme)
                mine = own[scheme.name]
                if mine.length < p:
                    model.forward_hidden(stream[mine.length:p], mine)
                work = mine.fork()
            hidden = model.forward_hidden(prompt.ids[p:], work)  # needle, filler, question
            first = hidden[-1:] @ model.embedding.T  # (1, vocab)
            rest = model.continue_(work, prompt.answer[:-1]) if prompt.answer.size > 1 else \
                np.empty((0, first.shape[1]))
            result = score_passkey(np.vstack([first, rest]), prompt.answer)
            for name in aliases:
                rows.append({"scheme": name, "computed_as": scheme.name, "n_ctx": n,
                             "depth": prompt.depth, "key": prompt.key,
                             "needle_start": p, **result})
            del work
    return pd.DataFrame(rows)


def passkey_study(settings: PasskeySettings, seed: int = 0, *, store=None, scheduler="sync",
                  progress=True, finished_only=False) -> dict:
    """``{"trials", "cells", "contexts", "missing"}``: every prompt's result, accuracy per
    (scheme, context, depth) and per (scheme, context) with 95 % Wilson intervals;
    ``finished_only`` as in :func:`extrapolation_study`."""
    s = settings
    cells = [{"n_ctx": n, "family": f, "seed": seed, "train_length": s.train_length,
              "depths": json.dumps(list(depths)), "trials": trials}
             for n, depths, trials in zip(s.contexts, s.depths, s.trials, strict=True)
             for f in range(len(_families(n, s.train_length)))]
    frames, missing = _run(partial(_passkey_cell, s), cells, seed, store, scheduler, progress,
                           PASSKEY_CELLS_STUDY, finished_only)
    trials = pd.concat(frames, ignore_index=True)

    def accuracy(keys):
        rows = []
        for key, group in trials.groupby(keys):
            k, total = int(group["correct"].sum()), len(group)
            lo, hi = wilson_interval(k, total)
            rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,),
                                    strict=True)),
                         "correct": k, "trials": total, "accuracy": k / total, "ci_low": lo,
                         "ci_high": hi, "mean_log_likelihood": group["log_likelihood"].mean()})
        return pd.DataFrame(rows)

    return {"trials": trials, "cells": accuracy(["scheme", "n_ctx", "depth"]),
            "contexts": accuracy(["scheme", "n_ctx"]), "missing": missing}
