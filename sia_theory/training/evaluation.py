"""Validation and logits of trained parameters: :func:`evaluate`, :func:`logits`.

Validation at length ``E`` scores the same tokens at every ``E`` (:meth:`.data.Corpus.
validation_windows`), a few windows per call, attention in blocks of query rows sized so that
one block's scores take at most :data:`SCORE_BYTES` (never the whole ``T × T`` matrix of a long
context). A scheme's tables are built in numpy per length (the public
:func:`sia_theory.export.coefficient_tables`; rotations in :mod:`.tables`): RoPE + NTK gets its
NTK base for ``E``, LogN its ``log n`` up to ``E``. Used by the trainer during and after
training, and by :meth:`.run.TrainedRun.validation_loss` afterwards.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..schemes import resolve_scheme
from ..transforms.tables import coefficient_tables
from ._jax import require
from .data import corpus as load_corpus
from .model import forward, token_losses
from .schemes import trainable_transform
from .settings import TrainSettings
from .tables import rotation_tables

jax, jnp, _ = require()

__all__ = ["evaluate", "evaluate_documents", "logits", "scheme_arrays", "block_for",
           "SCORE_BYTES", "EVAL_TOKENS"]

SCORE_BYTES = 64 * 2**20  # scores of one attention block (float32) during validation
"""Bytes of attention scores held at once during validation: sets the query block size."""
EVAL_TOKENS = 8192  # tokens per validation call (bounds the (B, T, V) logits too)
"""Tokens per validation call (sequences per call × length; bounds the ``(B, T, V)`` logits)."""


def scheme_arrays(scheme, settings: TrainSettings, length: int):
    """``(tables, (cos, sin))`` of ``scheme`` for sequences of ``length`` tokens, as JAX
    arrays."""
    s = settings
    transform = trainable_transform(scheme, s.n_heads, s.train_length, length)
    tables = coefficient_tables(transform, s.n_heads, length)
    position = scheme.position_encoding(s.train_length, length)
    cos, sin = rotation_tables(position, s.head_dim, length)
    return ({k: jnp.asarray(v) for k, v in tables.items()}, (jnp.asarray(cos), jnp.asarray(sin)))


@partial(jax.jit, static_argnames=("n_heads", "block"))
def _window_losses(params, windows, tables, rotation, *, n_heads, block):
    losses = token_losses(params, windows, tables, rotation, n_heads=n_heads, block=block)
    return losses.astype(jnp.float32).sum(axis=1)  # (B,)


def _largest_divisor(n: int, limit: int) -> int:
    limit = max(1, min(n, limit))
    return max(d for d in range(1, limit + 1) if n % d == 0)


@partial(jax.jit, static_argnames=("n_heads", "block"))
def _logits(params, tokens, tables, rotation, *, n_heads, block):
    return forward(params, tokens, tables, rotation, n_heads=n_heads, block=block)


def block_for(settings, rows, length):
    """Query rows per attention block: the largest divisor of ``length`` whose scores
    ``(rows, H, block, length)`` fit in :data:`SCORE_BYTES`."""
    return _largest_divisor(length, max(1, SCORE_BYTES // (4 * rows * settings.n_heads * length)))


def logits(params, scheme, settings: TrainSettings, tokens) -> np.ndarray:
    """The JAX forward's logits ``(B, T, V)`` (float32 numpy) of ``tokens`` ``(B, T)`` under
    ``scheme`` (tables and encoding for length ``T``), attention in blocks as in
    validation."""
    tokens = np.asarray(tokens)
    if tokens.ndim != 2 or tokens.dtype.kind not in "iu":
        raise ValueError(f"tokens must be a 2-D integer array (B, T), got {tokens.shape} "
                         f"{tokens.dtype}")
    scheme = resolve_scheme(scheme)
    n_batch, length = tokens.shape
    tables, rotation = scheme_arrays(scheme, settings, length)
    out = _logits(jax.tree.map(jnp.asarray, params), jnp.asarray(tokens, jnp.int32), tables,
                  rotation, n_heads=settings.n_heads,
                  block=block_for(settings, n_batch, length))
    return np.asarray(out)


def evaluate(params, scheme, settings: TrainSettings, length: int, corpus=None) -> float:
    """Mean validation loss (nats per token) at context ``length``, over every validation
    document (each holds the same number of scored tokens).

    Parameters
    ----------
    params : dict
        Model parameters (the :mod:`.params` layout), numpy or JAX.
    scheme : str or Scheme
        As for :func:`~.trainer.train`.
    settings : TrainSettings
        The settings the parameters were trained with.
    length : int
        Context length, ``2 … settings.max_length``.
    corpus : optional
        The loaded corpus (default: loaded from ``settings``).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``length`` is outside ``[2, max_length]``.
    """
    return float(np.mean(evaluate_documents(params, scheme, settings, length, corpus)))


def evaluate_documents(params, scheme, settings: TrainSettings, length: int,
                       corpus=None) -> np.ndarray:
    """Mean validation loss (nats per token) of each validation document at context ``length``
    (2 … ``max_length``): ``(validation_documents,)`` float64, in the order of
    ``corpus.validation_names`` (:func:`.data.document_kind` gives each one's kind)."""
    s = settings
    length = int(length)
    if not 2 <= length <= s.max_length:
        raise ValueError(f"length must be an integer in [2, {s.max_length}] (train_length × "
                         f"max(eval_multiples)), got {length}")
    corpus = load_corpus(s) if corpus is None else corpus
    windows = corpus.validation_windows(length)  # (N·k, length + 1), document-major
    rows = _largest_divisor(windows.shape[0], max(1, EVAL_TOKENS // length))
    block = block_for(s, rows, length)
    tables, rotation = scheme_arrays(scheme, s, length)
    jparams = jax.tree.map(jnp.asarray, params)
    sums = []
    for start in range(0, windows.shape[0], rows):
        batch = jnp.asarray(windows[start:start + rows])
        out = _window_losses(jparams, batch, tables, rotation, n_heads=s.n_heads, block=block)
        sums.append(np.asarray(out, np.float64))
    per_window = np.concatenate(sums)  # (N·k,)
    n_docs = corpus.validation.shape[0]
    return per_window.reshape(n_docs, -1).sum(axis=1) / (per_window.size // n_docs * length)
