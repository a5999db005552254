"""Training and validation: ``train(scheme, settings, seed=...) -> TrainedRun``.

One run: parameters from :func:`.params.init_parameters` (the seed's only use), the fixed data
order of :mod:`.data`, ``settings.steps`` optimiser steps of :mod:`.optim` on the mean
next-token cross-entropy of ``batch_size`` windows of ``train_length`` tokens, and every
``eval_every`` steps (and at the end) the validation loss at every length of
``settings.eval_lengths``, pooled and per document kind, prose and code (SI App. G validates at
4k, 16k and 64k every 125 steps; its Fig. 3b shows those curves).

Validation at length ``E`` scores the same tokens at every ``E`` (:meth:`.data.Corpus.
validation_windows`), a few windows per call, attention in blocks of query rows sized so that
one block's scores take at most :data:`SCORE_BYTES` (never the whole ``T × T`` matrix of a long
context). A scheme's tables are built in numpy per length (:mod:`.tables`): RoPE + NTK gets
its NTK base for ``E``, LogN its ``log n`` up to ``E``.
"""

from __future__ import annotations

import math
import time
from functools import lru_cache

import numpy as np

from .._infra.progress import progress_bar
from .._infra.seeding import check_seed
from ..schemes import resolve_scheme
from ._jax import environment, require
from .curriculum import repeat_spans
from .data import corpus as load_corpus
from .data import document_kind
from .evaluation import (
    EVAL_TOKENS,
    SCORE_BYTES,
    evaluate,
    evaluate_documents,
    logits,
    scheme_arrays,
)
from .model import token_losses
from .optim import make_optimizer
from .params import check_parameters, init_parameters
from .run import TrainedRun
from .schemes import check_trainable
from .settings import TrainSettings

jax, jnp, optax = require()

__all__ = ["train", "evaluate", "logits", "scheme_arrays", "SCORE_BYTES", "EVAL_TOKENS"]


@lru_cache(maxsize=8)
def _step_function(settings: TrainSettings, masked: bool = False):
    """``(optimizer, step)``; with ``masked`` the step takes a ``mask`` ``(B, T)`` after the
    rotation and minimises the mean loss over the masked positions only (needle
    fine-tuning: the answer tokens)."""
    optimizer = make_optimizer(settings)

    def step(params, state, windows, tables, rotation, mask=None):
        def mean_loss(p):
            losses = token_losses(p, windows, tables, rotation, n_heads=settings.n_heads,
                                  unroll=True)
            if mask is None:
                return losses.mean()
            return (losses * mask).sum() / jnp.maximum(mask.sum(), 1.0)

        loss, grads = jax.value_and_grad(mean_loss)(params)
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    return optimizer, jax.jit(step, donate_argnums=(0, 1))


def _checked_batch(batches, index: int, s: TrainSettings):
    """``batches(index)`` as ``(windows, mask)`` numpy arrays of the shapes and token ids
    :func:`train` needs; ``ValueError`` naming ``batches`` and the expected shape otherwise."""
    pair = batches(index)
    if not isinstance(pair, tuple | list) or len(pair) != 2:
        raise ValueError(f"batches({index}) must return a pair (windows, mask), got "
                         f"{type(pair).__name__}")
    windows, mask = np.asarray(pair[0]), np.asarray(pair[1])
    expected = {"windows": (s.batch_size, s.train_length + 1),
                "mask": (s.batch_size, s.train_length)}
    for name, array in (("windows", windows), ("mask", mask)):
        if array.shape != expected[name]:
            raise ValueError(f"batches({index}): {name} must have shape {expected[name]} "
                             f"(batch_size, train_length{' + 1' * (name == 'windows')}), got "
                             f"{array.shape}")
    if (windows.dtype.kind not in "iu" or windows.min() < 0
            or windows.max() >= s.effective_vocab):
        raise ValueError(f"batches({index}): windows must be integer token ids from 0 to "
                         f"{s.effective_vocab - 1} (vocabulary of {s.effective_vocab})")
    if mask.dtype.kind not in "biuf" or not np.isfinite(mask).all() or (mask < 0).any():
        raise ValueError(f"batches({index}): mask must hold finite weights >= 0 (1 where a "
                         f"position's loss counts)")
    return windows, mask


def _checked_inputs(scheme, settings, seed, tau, parameters, batches):
    """``(settings, seed, scheme, starting parameters)`` of :func:`train`, every argument
    checked (``ValueError`` naming it)."""
    s = TrainSettings.full() if settings is None else settings
    if not isinstance(s, TrainSettings):
        raise ValueError(f"settings must be a TrainSettings, got {type(s).__name__}")
    seed = check_seed(seed)
    resolved = resolve_scheme(scheme, tau)
    # a transform that cannot serve this model, raises, or overflows float32 up to the longest
    # length: the one check the command line makes too
    check_trainable(resolved, s)
    if parameters is None:
        start_from = init_parameters(s, seed, resolved.learned)
    else:
        start_from = check_parameters(parameters, s)
        held = {k for k in ("score_scale",) if k in start_from["layers"]}
        if held - set(resolved.learned):
            raise ValueError(f"parameters: layers.score_scale is learned only by a scheme that "
                             f"declares it (learned=('score_scale',)); scheme "
                             f"{resolved.name!r} does not")
        for name in set(resolved.learned) - held:  # a learned scale starts from 1
            start_from["layers"][name] = np.ones(s.n_layers, np.float32)
    if batches is not None and not callable(batches):
        raise ValueError(f"batches must be a function of the step returning (windows, mask), "
                         f"got {type(batches).__name__}")
    return s, seed, resolved, start_from


def train(scheme, settings: TrainSettings | None = None, *, seed: int = 0, tau=None,
          progress: bool = False, parameters=None, batches=None,
          on_checkpoint=None) -> TrainedRun:
    """Train one model of ``settings`` with ``scheme`` from ``seed``.

    Everything is checked before any work. The same ``(scheme, settings, seed, tau)`` gives
    bit-identical parameters and losses within one process (across processes on a CPU validation
    losses differ by about 1e-5 nats, on a GPU by up to 4e-4: ``docs/guide/reproducibility.md``).

    Parameters
    ----------
    scheme : str or Scheme
        A name of :data:`~.schemes.SCHEMES`, ``MODULE:OBJECT[@position]`` or a
        :class:`~.schemes.Scheme`.
    settings : TrainSettings, optional
        Default :meth:`TrainSettings.full`.
    seed : int
        Seeds the initialisation (and nothing else: the batches are in a fixed order).
    tau : float, optional
        Overrides an SI scheme's τ.
    progress : bool
        A progress bar over the steps.
    parameters : dict, optional
        Fine-tuning (:mod:`.needle`): start from these weights (the :mod:`.params` layout)
        instead of ``seed``'s initialisation, with a fresh optimiser state.
    batches : callable, optional
        ``batches(step) -> (windows, mask)`` replaces the corpus's batches: ``windows``
        ``(B, train_length + 1)`` token ids and ``mask`` ``(B, train_length)`` (1 where a
        position's next-token loss counts; the step minimises the mean over those). Validation
        is the corpus's, as without them.
    on_checkpoint : callable, optional
        ``on_checkpoint(step, params)``, called at every point of the validation curve with the
        JAX parameters of that step (for measurements beside the curve, e.g. validation at
        longer contexts or :func:`.copying.copy_test`; it must not modify them).

    Returns
    -------
    TrainedRun

    Raises
    ------
    ValueError
        Naming the parameter, for any input outside its range (a transform that is not finite
        or overflows float32 on the tables, parameters or batches of the wrong structure or
        shape), before any work; ``FloatingPointError`` if the training diverges.
    """
    s, seed, resolved, start_from = _checked_inputs(scheme, settings, seed, tau, parameters,
                                                    batches)
    recorded = environment()  # this process's, before any work (what trains the run)
    corpus = load_corpus(s)  # ValueError naming train_length if the data is too short
    optimizer, step = _step_function(s, batches is not None)
    tables, rotation = scheme_arrays(resolved, s, s.train_length)
    params = jax.tree.map(lambda x: jnp.array(x, jnp.float32), start_from)  # a copy: donated
    state = optimizer.init(params)
    train_losses, curve, checkpoints = [], [], []
    clock = {"compile": 0.0, "train": 0.0, "evaluate": 0.0}
    cpu_start = time.process_time()
    bar = (progress_bar(total=s.steps, desc=resolved.name, unit="step", leave=False)
           if progress else None)
    start = time.perf_counter()
    for index in range(s.steps):
        params, state, loss = _batch_step(step, params, state, index, s, corpus, batches,
                                          tables, rotation)
        train_losses.append(loss)
        if index == 0:
            loss.block_until_ready()
            clock["compile"] = time.perf_counter() - start
        done = index + 1
        if done % s.eval_every == 0 or done == s.steps:
            jax.block_until_ready(params)  # the steps run asynchronously: time them here
            t0 = time.perf_counter()
            clock["train"] += t0 - start
            rows = _checkpoint(params, resolved, s, corpus, done, seed)
            checkpoints.extend(rows)
            curve.append((done, rows[0][3]))
            if on_checkpoint is not None:
                on_checkpoint(done, params)
            start = time.perf_counter()
            clock["evaluate"] += start - t0
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    validation = {length: loss for step, length, kind, loss in checkpoints
                  if step == s.steps and kind == "all"}
    clock["cpu"] = time.process_time() - cpu_start  # less disturbed by other processes
    numpy_params = jax.tree.map(lambda x: np.asarray(x, np.float32), params)
    losses = np.asarray(jax.device_get(train_losses), np.float64)
    return TrainedRun(scheme=resolved.name, tau=resolved.tau, seed=seed, settings=s,
                      parameters=numpy_params, train_losses=losses,
                      validation_curve=tuple(curve), validation=validation,
                      seconds=dict(clock), scheme_object=resolved,
                      checkpoints=tuple(checkpoints), environment=recorded)


def _batch_step(step, params, state, index, s, corpus, batches, tables, rotation):
    """One optimiser step on batch ``index``: the corpus's, or ``batches(index)`` with its
    mask; returns ``(params, state, loss)``."""
    if batches is None:
        windows = corpus.batch(index, s.batch_size)
        if s.copy_fraction:
            windows = repeat_spans(windows, s.copy_fraction, index, s.effective_vocab,
                                   corpus.tokenizer.separator, s.copy_span)
        return step(params, state, jnp.asarray(windows), tables, rotation)
    windows, mask = _checked_batch(batches, index, s)  # the first before compiling
    return step(params, state, jnp.asarray(windows), tables, rotation,
                jnp.asarray(mask, jnp.float32))


def _checkpoint(params, resolved, s, corpus, done, seed) -> list:
    """The validation rows ``(step, length, kind, loss)`` after step ``done``: at every length
    of ``s.eval_lengths``, pooled (``kind="all"``) and per document kind (``"prose"``,
    ``"code"``), the pooled loss at ``train_length`` first; ``FloatingPointError`` if that one is
    not finite (training diverged)."""
    kinds = np.array([document_kind(n) for n in corpus.validation_names])
    rows = []
    for length in s.eval_lengths:
        per_document = evaluate_documents(params, resolved, s, length, corpus)
        value = float(np.mean(per_document))
        if length == s.train_length and not math.isfinite(value):
            raise FloatingPointError(f"training diverged: validation loss {value} at step "
                                     f"{done} (scheme {resolved.name}, seed {seed}); lower "
                                     "the learning rates")
        rows.append((done, length, "all", value))
        rows += [(done, length, kind, float(np.mean(per_document[kinds == kind])))
                 for kind in sorted(set(kinds))]
    return rows
