"""A minimal pre-norm decoder (modded-nanogpt style, SI App. G) with an InAttention variant.

token embedding → RMSNorm → [RMSNorm → multi-head attention (QK-norm, position encoding, logit
transform) → residual → RMSNorm → MLP with ReLU² → residual] × L → RMSNorm → unembedding.
Weights are random (seeded), or given (:meth:`Decoder.from_parameters`: the trained weights of
:mod:`sia_theory.training` load here). Norms have no learned gain (as in modded-nanogpt's
``F.rms_norm``).

InAttention (INA, arXiv 2410.07063, §3): the queries of every layer come from that layer's
hidden state, ``Q = W_Q X``, but keys and values come from the RMS-normed initial embeddings,
``K = W_K Y``, ``V = W_V Y``. Its decoding cache is either ``Y`` itself (``"initial"``, the
default: shared by all layers, ``2·L`` times smaller than a standard KV cache; each step
re-projects it ``kv_chunk`` positions at a time, so the working memory stays small but the time
per step is ``O(L·T·d²)``) or the per-layer projections (``"projected"``: as fast as a standard
KV cache and exactly as large).

``Decoder.forward(tokens, cache)`` processes ``tokens`` as the continuation of whatever
``cache`` already holds (prefill when it is empty, one decoding step for a single token); the
result equals the full forward pass over the whole sequence (tests check 1e-10 in float64).
"""

from __future__ import annotations

import numpy as np

from .._infra.memory import check_memory
from .._infra.parallel import single_threaded_blas
from .._infra.validate import check_int
from .cache import DecodingCache
from .core import attention_scores, cached_attention, cached_attention_partial, merge_partials
from .decoder_config import DecoderConfig, parameter_shapes
from .positional import rms_norm

__all__ = ["DecoderConfig", "Decoder", "parameter_shapes"]


class Decoder:
    """Decoder of :class:`DecoderConfig` with random (seeded) weights, or given ones through
    :meth:`from_parameters`; see the module docstring.

    Parameters
    ----------
    config : DecoderConfig

    Raises
    ------
    ValueError
        If ``config`` is not a :class:`DecoderConfig` or its weights would not fit in memory.
    """

    def __init__(self, config: DecoderConfig):
        if not isinstance(config, DecoderConfig):
            raise ValueError(f"config must be a DecoderConfig, got {config!r}")
        self.config = c = config
        dtype = np.dtype(c.dtype)
        n_params = 2 * c.vocab_size * c.d_model + c.n_layers * (4 * c.d_model**2
                                                                 + 2 * c.d_model * c.hidden)
        # the weights in their dtype plus the float64 draw of the largest matrix
        check_memory("vocab_size/d_model/n_layers", (c.vocab_size, c.d_model, c.n_layers),
                     n_params * dtype.itemsize + 8 * max(c.vocab_size, c.hidden) * c.d_model)
        rng = np.random.default_rng(c.seed)

        def weight(fan_in, fan_out):  # variance 1/fan_in keeps activations O(1)
            return (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(dtype)

        self.embedding = rng.standard_normal((c.vocab_size, c.d_model)).astype(dtype)
        self.layers = [dict(w_q=weight(c.d_model, c.d_model), w_k=weight(c.d_model, c.d_model),
                            w_v=weight(c.d_model, c.d_model), w_o=weight(c.d_model, c.d_model),
                            w_up=weight(c.d_model, c.hidden), w_down=weight(c.hidden, c.d_model))
                       for _ in range(c.n_layers)]
        self.unembedding = weight(c.d_model, c.vocab_size)

    LAYER_WEIGHTS = ("w_q", "w_k", "w_v", "w_o", "w_up", "w_down")

    def parameter_shapes(self) -> dict:
        """Shapes of the weights: ``embedding``, ``unembedding`` and, per layer, the
        :data:`LAYER_WEIGHTS` (each ``(fan_in, fan_out)``: the model computes ``x @ w``)."""
        return parameter_shapes(self.config)

    @classmethod
    def from_parameters(cls, config: DecoderConfig, parameters) -> Decoder:
        """A decoder of ``config`` with the given weights instead of random ones (a trained
        model, e.g. from :mod:`sia_theory.training`).

        ``parameters`` maps ``embedding`` ``(V, d)``, ``unembedding`` ``(d, V)`` and ``layers``,
        a sequence of ``n_layers`` mappings with ``w_q, w_k, w_v, w_o`` ``(d, d)``, ``w_up``
        ``(d, hidden)`` and ``w_down`` ``(hidden, d)``, and optionally ``score_scale`` (a scalar:
        the layer's learned multiplier ``λ`` of the score, ``S = (λ q)·k/√D``, as the trainer's
        ``logn-p-rope-learned`` learns it). Arrays are copied in the config's
        dtype; a missing weight, a wrong shape or a non-finite entry is a ``ValueError``.
        """
        if not isinstance(config, DecoderConfig):
            raise ValueError(f"config must be a DecoderConfig, got {config!r}")
        shapes = parameter_shapes(config)
        dtype = np.dtype(config.dtype)

        def take(name, value, shape):
            array = np.asarray(value)
            if array.dtype.kind not in "fiu" or array.shape != shape:
                raise ValueError(f"parameters[{name}] must be a real array of shape {shape} for "
                                 f"this config, got {array.dtype} {array.shape}")
            if not np.all(np.isfinite(array)):
                raise ValueError(f"parameters[{name}] must contain only finite numbers")
            return array.astype(dtype, copy=True)

        try:
            layers = list(parameters["layers"])
            embedding, unembedding = parameters["embedding"], parameters["unembedding"]
        except (KeyError, TypeError):
            raise ValueError("parameters must map 'embedding', 'unembedding' and 'layers' (a "
                             "sequence of per-layer mappings)") from None
        if len(layers) != config.n_layers:
            raise ValueError(f"parameters['layers'] must hold n_layers={config.n_layers} layers, "
                             f"got {len(layers)}")
        self = cls.__new__(cls)
        self.config = config
        self.embedding = take("'embedding'", embedding, shapes["embedding"])
        self.unembedding = take("'unembedding'", unembedding, shapes["unembedding"])
        self.layers = []
        for i, layer in enumerate(layers):
            missing = [n for n in cls.LAYER_WEIGHTS if n not in layer]
            if missing:
                raise ValueError(f"parameters['layers'][{i}] lacks {', '.join(missing)}")
            taken = {n: take(f"'layers'][{i}][{n!r}", layer[n], shapes[n])
                     for n in cls.LAYER_WEIGHTS}
            if "score_scale" in layer:  # a learned inverse temperature of the layer's scores
                taken["score_scale"] = take(f"'layers'][{i}]['score_scale'",
                                            layer["score_scale"], ())
            self.layers.append(taken)
        return self

    def new_cache(self, capacity=None) -> DecodingCache:
        """An empty decoding cache of this model's layout (``capacity`` preallocates)."""
        return DecodingCache(self.config.n_layers, self.config.cache_mode, capacity)

    def _split_heads(self, x):  # (B, T, d_model) -> (B, H, T, Dh)
        n_batch, n_pos, _ = x.shape
        c = self.config
        return x.reshape(n_batch, n_pos, c.n_heads, c.head_dim).transpose(0, 2, 1, 3)

    def _keys_values(self, layer, source, positions):
        """Position-encoded, QK-normed keys and values of ``source`` (B, T, d_model)."""
        keys = self._split_heads(source @ layer["w_k"])  # (B, H, T, Dh)
        values = self._split_heads(source @ layer["w_v"])  # (B, H, T, Dh)
        if self.config.qk_norm:
            keys = rms_norm(keys)
        return self.config.position(keys, positions), values

    def _check_tokens(self, tokens):
        tokens = np.asarray(tokens)
        if tokens.ndim != 2 or tokens.dtype.kind not in "iu" or 0 in tokens.shape:
            raise ValueError(f"tokens must be a non-empty 2-D integer array (B, T), got "
                             f"shape {tokens.shape} and dtype {tokens.dtype}")
        if tokens.min() < 0 or tokens.max() >= self.config.vocab_size:
            raise ValueError(f"tokens must lie in [0, vocab_size - 1 = "
                             f"{self.config.vocab_size - 1}]")
        return tokens

    def forward(self, tokens, cache: DecodingCache | None = None):
        """Logits ``(B, T, vocab)`` for ``tokens`` ``(B, T)`` continuing ``cache`` (if given).

        With ``cache=None`` this is the full (prefill) forward pass. With a cache, the tokens
        sit at positions ``cache.length .. cache.length + T - 1`` and the cache is extended.
        """
        return self._run(tokens, cache)

    def attention_inputs(self, tokens, layer, last=1):
        """Queries of the last ``last`` positions and all keys and values of ``layer``:
        ``(B, H, last, Dh)``, ``(B, H, T, Dh)``, ``(B, H, T, Dh)``, after QK-norm and the
        position encoding, i.e. exactly what the layer passes to :func:`attention`. Layers
        before ``layer`` run in full (``O(T²)`` each); ``layer=0`` costs ``O(T)``."""
        c = self.config
        layer = check_int("layer", layer, lo=0, hi=c.n_layers - 1)
        tokens = self._check_tokens(tokens)
        last = check_int("last", last, lo=1, hi=tokens.shape[1])
        return self._run(tokens, None, stop=(layer, last))

    def attention_logits(self, tokens, layer, last=1, transformed=True):
        """Attention logits of ``layer`` for the last ``last`` positions, ``(B, H, last, T)``:
        ``L = a S + m`` (``transformed=True``) or the raw ``S = q·k/sqrt(Dh)`` after QK-norm
        and the position encoding (SI App. J's "unmodified logits"). Keys after a query are
        ``-inf``."""
        queries, keys, _ = self.attention_inputs(tokens, layer, last)
        return attention_scores(queries, keys, causal=True,
                                score_mod=self.config.transform if transformed else None)

    def _run(self, tokens, cache, stop=None):
        c = self.config
        tokens = self._check_tokens(tokens)
        if cache is None:
            cache = self.new_cache()
        elif (not isinstance(cache, DecodingCache) or cache.mode != c.cache_mode
              or (cache.mode == "kv" and cache.n_layers != c.n_layers)):
            raise ValueError(f"cache must be a DecodingCache of mode {c.cache_mode!r} for "
                             f"this model's {c.n_layers} layers (from Decoder.new_cache)")
        start = cache.length
        if start:
            self._check_cache_fits(cache, tokens.shape[0])
        try:
            # Products here are small per call; attention parallelises over its own tasks.
            with single_threaded_blas():
                return self._run_layers(tokens, cache, start, stop)
        except BaseException:
            cache.truncate(start)  # all or nothing: a failed call leaves the cache as it was
            raise

    def _check_cache_fits(self, cache, n_batch):
        """The cached entries must have this model's batch, widths and dtype (O(1) checks)."""
        c = self.config
        cached = cache.keys(0) if cache.mode == "kv" else cache.initial()
        if cached.shape[0] != n_batch:
            raise ValueError(f"tokens must have the cache's batch size {cached.shape[0]}, "
                             f"got {n_batch}")
        expected = ((n_batch, c.n_heads, cache.length, c.head_dim) if cache.mode == "kv"
                    else (n_batch, cache.length, c.d_model))
        if cached.shape != expected or cached.dtype != np.dtype(c.dtype):
            raise ValueError(f"cache must hold entries of shape {expected} and dtype {c.dtype} "
                             f"for these tokens and this model, got {cached.shape} "
                             f"{cached.dtype}")

    def _run_layers(self, tokens, cache, start, stop):
        c = self.config
        positions = np.arange(start, start + tokens.shape[1])  # (T,)
        initial = rms_norm(self.embedding[tokens])  # (B, T, d_model): Y, the initial states
        if cache.mode == "initial":
            cache.append_initial(initial)
            all_initial = cache.initial()  # (B, start + T, d_model)
            all_positions = np.arange(all_initial.shape[1])
        x = initial
        for index, layer in enumerate(self.layers):
            hidden = rms_norm(x)  # (B, T, d_model)
            queries = self._split_heads(hidden @ layer["w_q"])  # (B, H, T, Dh)
            if c.qk_norm:
                queries = rms_norm(queries)
            queries = c.position(queries, positions)
            if "score_scale" in layer:  # S = (λ q)·k/√D: the layer's learned score scale
                queries = queries * layer["score_scale"]
            if cache.mode == "initial":  # InAttention: re-project the shared Y in chunks
                if stop is not None and index == stop[0]:
                    keys, values = self._keys_values(layer, all_initial, all_positions)
                    return queries[:, :, -stop[1]:], keys, values
                mixed = self._attend_initial(layer, queries, all_initial, start)
            else:
                source = initial if c.inattention else hidden
                new_keys, new_values = self._keys_values(layer, source, positions)
                cache.append_kv(index, new_keys, new_values)
                keys, values = cache.keys(index), cache.values(index)
                if stop is not None and index == stop[0]:
                    return queries[:, :, -stop[1]:], keys, values
                # The cache was validated entry by entry: no pass over it here.
                mixed = cached_attention(queries, keys, values, score_mod=c.transform,
                                         causal=True, block_size=c.block_size)  # (B, H, T, Dh)
            n_batch, _, n_pos, _ = mixed.shape
            x = x + mixed.transpose(0, 2, 1, 3).reshape(n_batch, n_pos, c.d_model) @ layer["w_o"]
            up = np.maximum(rms_norm(x) @ layer["w_up"], 0.0)  # (B, T, hidden)
            x = x + (up * up) @ layer["w_down"]  # ReLU² MLP
        return rms_norm(x) @ self.unembedding  # (B, T, vocab)

    def _attend_initial(self, layer, queries, all_initial, q_start):
        """InAttention over the cached ``Y`` without materialising ``W_K Y, W_V Y`` for the
        whole context: keys and values are projected ``kv_chunk`` positions at a time and the
        per-chunk results are merged by their log-sum-exp, so the working memory is
        ``O(kv_chunk · d_model)`` on top of the cache, not ``O(T · d_model)``."""
        c = self.config
        n_known, q_end = all_initial.shape[1], q_start + queries.shape[2]
        merged = None
        for k0 in range(0, min(n_known, q_end), c.kv_chunk):
            k1 = min(k0 + c.kv_chunk, n_known)
            keys, values = self._keys_values(layer, all_initial[:, k0:k1], np.arange(k0, k1))
            part = cached_attention_partial(queries, keys, values, q_start=q_start,
                                            kv_start=k0, score_mod=c.transform,
                                            block_size=c.block_size)
            merged = part if merged is None else merge_partials([merged, part])
        return merged[0].astype(queries.dtype, copy=False)  # (B, H, T, Dh)

    def inattention_cache(self, tokens, capacity=None) -> DecodingCache:
        """InAttention's decoding cache for ``tokens`` built directly from the embeddings.

        INA's keys and values depend only on ``Y = RMSNorm(embedding[tokens])``, so its cache
        (``Y``, or the per-layer ``W_K Y, W_V Y``) needs no forward pass; decoding from it
        equals decoding from a prefilled cache. Standard decoders have no such shortcut.
        """
        c = self.config
        if not c.inattention:
            raise ValueError("inattention_cache needs a config with inattention=True (a "
                             "standard KV cache depends on every layer's hidden states)")
        tokens = self._check_tokens(tokens)
        cache = self.new_cache(capacity)
        initial = rms_norm(self.embedding[tokens])  # (B, T, d_model)
        if cache.mode == "initial":
            cache.append_initial(initial)
        else:
            positions = np.arange(tokens.shape[1])
            for index, layer in enumerate(self.layers):
                cache.append_kv(index, *self._keys_values(layer, initial, positions))
        return cache

    def decode_step(self, token, cache: DecodingCache):
        """Logits ``(B, vocab)`` after appending one token per sequence (``token`` shape (B,))."""
        token = np.asarray(token)
        if token.ndim != 1:
            raise ValueError(f"token must be a 1-D integer array (B,), got shape {token.shape}")
        if cache is None:
            raise ValueError("cache must be a DecodingCache (from Decoder.new_cache)")
        return self.forward(token[:, None], cache)[:, -1]
