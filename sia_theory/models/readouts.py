"""What is read from a pretrained model: logits, losses, greedy text, caches, raw scores.

:class:`Readouts` is the half of :class:`~sia_theory.models.LlamaModel` built on its one
forward pass (:meth:`~sia_theory.models.LlamaModel.forward_hidden`, final hidden states of
tokens continuing a KV cache): the output head (``hidden @ W^T``, ``W`` the tied embedding
or an untied head) run ``HEAD_ROWS`` positions per task, so a long input never forms a
``(T, vocab)`` array unless the caller asks for the logits themselves; KV-cache prefill and
continuation; greedy generation; and the queries, keys and raw scores ``q·k/√D`` of chosen
layers (SI App. J on a real model).
"""

from __future__ import annotations

import numpy as np

from .._infra.memory import check_memory
from .._infra.parallel import available_workers, run_tasks
from .._infra.validate import check_int
from .kv_cache import ModelCache

__all__ = ["Readouts", "HEAD_ROWS", "row_blocks", "run_rows"]

# Positions per task of the output head: a (rows, vocab) block per worker.
HEAD_ROWS = 256
"""Positions per task of the output head (a ``(rows, vocab)`` block per worker)."""


def row_blocks(n_rows, size):
    """``[slice(0, size), slice(size, 2·size), ...]`` covering ``n_rows`` rows."""
    return [slice(r0, min(r0 + size, n_rows)) for r0 in range(0, n_rows, size)]


def run_rows(fn, blocks):
    """``fn(rows)`` for every block of rows, on the worker threads with single-threaded BLAS
    (as the attention kernel): on a shared machine a multi-threaded BLAS made small products
    (one decoding step) 10x slower. Blocks are fixed by the input, so results do not depend
    on the number of workers."""
    run_tasks(fn, blocks, available_workers())


class Readouts:
    """Readouts of a model with ``config``, ``dtype``, ``output_weight``, ``max_bytes``,
    ``check_ids``, ``new_cache``, ``forward_hidden`` and ``check_fits`` (LlamaModel)."""

    def _head(self, hidden):
        """Logits ``hidden @ W^T`` of the output head (the tied embedding or its own weight):
        ``(n, vocab)``, then the architecture's divisor and soft cap (:meth:`_finish_logits`)."""
        logits = np.empty((hidden.shape[0], self.config.vocab_size), self.dtype)

        def rows_of(rows):
            np.matmul(hidden[rows], self.output_weight.T, out=logits[rows])
            self._finish_logits(logits[rows])

        run_rows(rows_of, row_blocks(hidden.shape[0], HEAD_ROWS))
        return logits

    def _finish_logits(self, logits):
        """In place: ``logits / logit_divisor`` (Granite's ``logits_scaling``), then
        ``cap·tanh(logits/cap)`` (Gemma's ``final_logit_softcapping``), where the config sets
        them (transformers ``GraniteForCausalLM.forward``, ``Gemma2ForCausalLM.forward``)."""
        divisor = getattr(self.config, "logit_divisor", 1.0)
        cap = getattr(self.config, "final_softcap", None)
        if divisor != 1.0:
            logits /= self.dtype.type(divisor)
        if cap is not None:
            logits /= self.dtype.type(cap)
            np.tanh(logits, out=logits)
            logits *= self.dtype.type(cap)

    def prefill(self, ids, score_mod=None, position=None) -> ModelCache:
        """Process ``ids`` into a new :class:`ModelCache` (its ``last_logits`` are the logits
        after the last token). Continue it with :meth:`continue_`; to run several
        continuations of one shared prefix, :meth:`ModelCache.fork` it for each (or
        :meth:`ModelCache.truncate` it back to the prefix length after each)."""
        ids = self.check_ids(ids)
        cache = self.new_cache(score_mod, position, capacity=ids.size)
        hidden = self.forward_hidden(ids, cache)
        cache.last_logits = self._head(hidden[-1:])[0]  # (vocab,)
        return cache

    def continue_(self, cache: ModelCache, ids) -> np.ndarray:
        """Logits ``(len(ids), vocab)`` of ``ids`` continuing ``cache`` (which is extended, with
        the score_mod and position encoding it was made with)."""
        ids = self.check_ids(ids)
        self.check_fits(getattr(cache, "length", 0) + ids.size, ids.size,
                         self.config.vocab_size * self.dtype.itemsize)
        logits = self._head(self.forward_hidden(ids, cache))  # (T, vocab)
        cache.last_logits = logits[-1].copy()
        return logits

    def logits(self, ids, score_mod=None, position=None) -> np.ndarray:
        """Next-token logits ``(T, vocab)`` at every position of ``ids``."""
        ids = self.check_ids(ids)
        self.check_fits(ids.size, ids.size, self.config.vocab_size * self.dtype.itemsize)
        cache = self.new_cache(score_mod, position, capacity=ids.size)
        return self._head(self.forward_hidden(ids, cache))

    def token_losses(self, ids, score_mod=None, position=None) -> np.ndarray:
        """Per-token loss ``−log p(ids[t+1] | ids[:t+1])`` in nats, shape ``(T−1,)`` float64.
        The output head runs ``HEAD_ROWS`` positions at a time, so no ``(T, vocab)`` array is
        ever formed."""
        ids = self.check_ids(ids)
        if ids.size < 2:
            raise ValueError("ids must hold at least 2 tokens for a next-token loss")
        cache = self.new_cache(score_mod, position, capacity=ids.size)
        hidden = self.forward_hidden(ids, cache)[:-1]  # (T-1, d)
        del cache
        return self.head_losses(hidden, ids[1:])

    def head_losses(self, hidden, targets) -> np.ndarray:
        """``−log softmax(hidden[j] @ E^T)[targets[j]]`` in nats, ``(n,)`` float64, from final
        hidden states ``(n, d)`` (as :meth:`forward_hidden` returns them), ``HEAD_ROWS``
        positions per task on the worker threads."""
        targets = self.check_ids(targets, "targets")
        if hidden.ndim != 2 or hidden.shape != (targets.size, self.config.d_model):
            raise ValueError(f"hidden must have shape (len(targets), d_model) = "
                             f"({targets.size}, {self.config.d_model}), got {hidden.shape}")
        losses = np.empty(targets.size)

        def rows_of(rows):
            logits = hidden[rows] @ self.output_weight.T  # (n, vocab)
            self._finish_logits(logits)
            logits -= logits.max(axis=1, keepdims=True)
            picked = logits[np.arange(logits.shape[0]), targets[rows]].astype(np.float64)
            np.exp(logits, out=logits)
            losses[rows] = np.log(logits.sum(axis=1, dtype=np.float64)) - picked

        run_rows(rows_of, row_blocks(targets.size, HEAD_ROWS))
        return losses

    def generate(self, ids, max_new_tokens, score_mod=None, position=None, *, cache=None,
                 stop_ids=()) -> list[int]:
        """Greedy decoding: the ``max_new_tokens`` (or fewer, up to and including one of
        ``stop_ids``) most likely next tokens after ``ids``. With ``cache`` (from
        :meth:`prefill`), ``ids`` continue it (may be empty to continue from its last token)
        and ``cache`` is extended; its own score_mod and position encoding apply."""
        max_new_tokens = check_int("max_new_tokens", max_new_tokens, lo=1)
        if cache is not None and not isinstance(cache, ModelCache):
            raise ValueError(f"cache must be a ModelCache from model.prefill or model.new_cache, "
                             f"got {type(cache).__name__}")
        stop = {int(i) for i in stop_ids}
        # the whole continuation must fit in memory (its KV cache grows by one token a step):
        # refuse before the first token, not after hours
        held = 0 if cache is None else cache.length
        self.check_fits(held + len(ids) + max_new_tokens, max(len(ids), 1),
                        self.config.vocab_size * self.dtype.itemsize, name="max_new_tokens",
                        value=max_new_tokens)
        if cache is None:
            cache = self.prefill(ids, score_mod, position)
            last = cache.last_logits
        else:
            if score_mod is not None or position is not None:
                raise ValueError("score_mod and position come from the cache when a cache is "
                                 "given; pass them to model.prefill instead")
            if len(ids):
                last = self.continue_(cache, ids)[-1]
            elif cache.last_logits is None:
                raise ValueError("cache has no last logits (empty or truncated): pass ids")
            else:
                last = cache.last_logits
        out = []
        while True:
            token = int(np.argmax(last))
            out.append(token)
            if len(out) == max_new_tokens or token in stop:
                return out
            last = self.continue_(cache, [token])[-1]

    def queries_keys(self, ids, layers, score_mod=None, position=None) -> dict:
        """``{layer: (q, k)}``: queries ``(H, T, D)`` and keys ``(Hkv, T, D)`` of the given
        layers after the position encoding, exactly what the layer's attention sees (query
        head ``h`` reads key head ``h // (H/Hkv)``). Stops after the deepest layer asked."""
        layers = [check_int("layers", i, lo=0, hi=self.config.n_layers - 1) for i in layers]
        if not layers:
            raise ValueError("layers must name at least one layer")
        ids = self.check_ids(ids)
        wanted, captured = set(layers), {}

        def capture(i, q, k):
            if i in wanted:
                captured[i] = (np.array(q), np.array(k))

        cache = self.new_cache(score_mod, position, capacity=ids.size)
        self.forward_hidden(ids, cache, capture=capture, stop_layer=max(layers))
        return {i: captured[i] for i in layers}

    def attention_scores(self, ids, layers, query_positions, score_mod=None,
                         position=None) -> np.ndarray:
        """Raw attention scores ``q·k/√D`` (before any score_mod) of the given layers and query
        positions against every key: ``(len(layers), H, len(query_positions), T)`` float64,
        ``-inf`` for keys after the query (SI App. J's unmodified logits of a real model)."""
        ids = self.check_ids(ids)
        c = self.config
        rows = np.asarray(query_positions)
        if rows.ndim != 1 or rows.size == 0 or rows.dtype.kind not in "iu" or (
                rows.min() < 0 or rows.max() >= ids.size):
            raise ValueError(f"query_positions must be a non-empty 1-D sequence of integers "
                             f"in [0, {ids.size - 1}]")
        layers = list(layers)
        check_memory("query_positions", f"{rows.size} queries x {len(layers)} layers",
                     8 * 2 * len(layers) * c.n_heads * rows.size * ids.size, self.max_bytes)
        pairs = self.queries_keys(ids, layers, score_mod, position)
        group = c.n_heads // c.n_kv_heads
        out = np.empty((len(layers), c.n_heads, rows.size, ids.size))
        after = np.arange(ids.size)[None, :] > rows[:, None]  # (Q, T)
        for n, i in enumerate(layers):
            q, k = pairs[i]
            q = q[:, rows].astype(np.float64).reshape(c.n_kv_heads, group, rows.size, -1)
            scores = q @ k.astype(np.float64)[:, None].swapaxes(-1, -2)  # (Hkv, g, Q, T)
            out[n] = scores.reshape(c.n_heads, rows.size, ids.size) / np.sqrt(c.head_dim)
            out[n][:, after] = -np.inf
        return out
