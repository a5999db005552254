"""A pretrained LLaMA-style decoder through the reference's own attention.

Architecture (Touvron et al. 2023, LLaMA; SmolLM2 follows it): token embedding → [RMSNorm →
grouped-query attention with RoPE → residual → RMSNorm → SwiGLU MLP → residual] × L → RMSNorm →
tied output embedding (or the file's own ``output.weight``, an untied head). RMSNorm is
``x / sqrt(mean(x²) + eps) · g`` (Zhang & Sennrich 2019);
SwiGLU is ``W_down (silu(W_gate h) ⊙ W_up h)`` (Shazeer 2020); attention is
:func:`sia_theory.attention.core.cached_attention` (streaming, causal, GQA without repeating the
key-value heads), with an optional ``score_mod`` (any :class:`~sia_theory.transforms.Transform`
or FlexAttention callable) on the logits ``q·k/√D``.

The variants of the Hugging Face architectures :mod:`.hf_folder` reads are data, not code
(the tensors present and :class:`LlamaConfig`'s fields; transformers 5.24.0
``models/<type>/modeling_<type>.py``):

* optional tensors (:class:`_Layer`): Qwen2's ``q``/``k``/``v`` biases; RMSNorm on ``q`` and
  ``k`` before RoPE, per head (Qwen3, Gemma-3) or over the whole projection (OLMo-2, its gain's
  shape says which); the pre-norms (absent in OLMo-2) and the post-norms on the attention and
  MLP outputs (OLMo-2, Gemma-2/3: ``post_attention_norm``, ``post_ffw_norm``);
* config fields: ``embedding_scale`` (Gemma's ``√d``, Granite's ``embedding_multiplier``),
  ``residual_scale`` (Granite's ``residual_multiplier``), ``logit_divisor`` (Granite's
  ``logits_scaling``), ``final_softcap`` (Gemma's ``cap·tanh(logits/cap)`` on the output),
  ``activation`` (GeGLU with tanh-approximated GELU for Gemma), and per layer the sliding window
  (``sliding_window`` with ``layer_types``) and the attention soft cap ``attn_softcap``
  (Gemma-2), which enter the attention as one :class:`~sia_theory.attention.LayerScoreMod`
  (transform, then ``cap·tanh(x/cap)``, then ``-inf`` where ``i - j >= window``);
* per-layer defaults (:attr:`LlamaModel.layer_defaults`): each layer's position encoding and
  logit law (Gemma-3's sliding layers rotate with their own base; the ``q·k`` scale of Granite
  and Gemma is a temperature on ``S``). Without a window or cap a layer's attention gets the
  transform itself, the kernel's table path, so a LLaMA model runs as before.

**RoPE pairing.** llama.cpp's converter permutes the rows of each head of the Hugging Face
``W_q`` and ``W_k`` (``reshape(n_head, 2, D/2, d).swapaxes(1, 2)``) so that GGML's "normal"
rope, which rotates *interleaved* pairs ``(2i, 2i+1)`` by ``θ_i = base^(−2i/D)``, reproduces the
Hugging Face model, which rotates *half-split* pairs ``(i, i + D/2)``. We undo that permutation
when the weights are loaded (:func:`unpermute_rope_rows`), so the reference's own
:func:`~sia_theory.attention.rope` (half-split pairs ``(k, k + D/2)``) applies, and so does any
position encoding of the reference (``RoPE``, ``NTKRoPE``, or any callable
``encoding(x, positions)`` on ``(heads, T, D)`` arrays). Tests check both that un-permuted
weights with half-split RoPE equal the raw weights with interleaved RoPE, and that the wrong
pairing destroys the model.

One code path, :meth:`LlamaModel.forward_hidden`, serves prefill and KV-cache decoding: tokens
continue whatever the cache holds (empty for a prefill).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._infra.memory import check_memory
from .._infra.parallel import available_workers
from ..attention.cache import DecodingCache
from ..attention.core import cached_attention
from ..attention.layer_mod import layer_score_mod
from ..attention.positional import RoPE
from .kv_cache import ModelCache, same
from .readouts import HEAD_ROWS, Readouts, row_blocks, run_rows

__all__ = ["LlamaConfig", "LlamaModel", "LayerDefault", "unpermute_rope_rows", "ROWS",
           "LAYER_TYPES", "ACTIVATIONS"]

LAYER_TYPES = ("full_attention", "sliding_attention")
"""The ``layer_types`` entries the model runs (transformers' names)."""
ACTIVATIONS = ("silu", "gelu_tanh")
"""The MLP gate activations: SwiGLU's ``silu`` and GeGLU's tanh-approximated ``gelu``."""


class LayerDefault(NamedTuple):
    """What one layer runs when a call passes no ``position`` / ``score_mod``: its position
    encoding and its logit law (``None``: ``q·k/√D`` as is). The layer's soft cap and sliding
    window are the architecture's (:class:`LlamaConfig`) and apply whatever the call passes."""

    position: object
    score_mod: object = None

# Token rows per task of the projections and MLP: bounds the temporaries of a long prefill
# ((rows, 2·ffn) per worker) while keeping the products large enough for BLAS.
ROWS = 256
"""Token rows per task of the projections and MLP (bounds the temporaries of a long prefill)."""


@dataclass(frozen=True)
class LlamaConfig:
    """Shapes and constants of a LLaMA-style decoder, read from a GGUF file's ``<arch>.*`` keys.

    Parameters
    ----------
    n_layers, d_model, n_heads, n_kv_heads : int
        Blocks, width, query heads and key-value heads (grouped-query attention).
    ffn : int
        Hidden width of the gated MLP.
    rope_base : float
        RoPE's base.
    rms_eps : float
        RMSNorm's epsilon.
    context_length : int
        The training context.
    vocab_size : int
        Tokens of the vocabulary.
    head_dim : int, optional
        Dimension of one head (default ``d_model // n_heads``; Qwen3 sets its own).
    sliding_window : int, optional
        The sliding-window span of the layers that slide (Mistral, Phi-3: every layer; Qwen2/
        Qwen3 with ``use_sliding_window``, Gemma-2/3: the layers ``layer_types`` marks
        ``sliding_attention``): key ``j`` is kept for query ``i`` when ``i - j <
        sliding_window`` (transformers ``masking_utils.py``, ``sliding_window_overlay``),
        in prefill and KV-cache decoding alike. ``None``: no window.
    layer_types : tuple of str, optional
        One entry per layer, ``"full_attention"`` or ``"sliding_attention"``; ``None``: every
        layer slides when ``sliding_window`` is set (:meth:`window_of`).
    attn_softcap : float, optional
        Gemma-2's ``attn_logit_softcapping``: the scaled logits become ``cap·tanh(x/cap)``
        before the mask, in every layer; ``None``: no cap.
    final_softcap : float, optional
        Gemma-2/3's ``final_logit_softcapping`` on the output logits; ``None``: no cap.
    embedding_scale : float
        Multiplier of the token embeddings, in the compute dtype (Gemma's ``√hidden_size``,
        Granite's ``embedding_multiplier``; default 1).
    residual_scale : float
        Multiplier of each block's attention and MLP outputs before they join the residual
        stream (Granite's ``residual_multiplier``; default 1).
    logit_divisor : float
        The output logits are divided by it (Granite's ``logits_scaling``; default 1).
    activation : str
        The gate's activation: ``"silu"`` (SwiGLU, default) or ``"gelu_tanh"`` (GeGLU with
        the tanh approximation of GELU, transformers' ``gelu_pytorch_tanh``: Gemma).

    Raises
    ------
    ValueError
        For ``layer_types`` that is not ``n_layers`` entries of :data:`LAYER_TYPES`, or an
        ``activation`` not in :data:`ACTIVATIONS`.
    """

    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    ffn: int
    rope_base: float
    rms_eps: float
    context_length: int
    vocab_size: int
    head_dim: int | None = None
    sliding_window: int | None = None
    layer_types: tuple | None = None
    attn_softcap: float | None = None
    final_softcap: float | None = None
    embedding_scale: float = 1.0
    residual_scale: float = 1.0
    logit_divisor: float = 1.0
    activation: str = "silu"

    def __post_init__(self):
        if self.head_dim is None:
            object.__setattr__(self, "head_dim", self.d_model // self.n_heads)
        if self.layer_types is not None:
            types = tuple(self.layer_types)
            if len(types) != self.n_layers or not set(types) <= set(LAYER_TYPES):
                raise ValueError(f"layer_types must hold n_layers = {self.n_layers} entries of "
                                 f"{' or '.join(map(repr, LAYER_TYPES))}, got {types!r}")
            object.__setattr__(self, "layer_types", types)
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(map(repr, ACTIVATIONS))}, "
                             f"got {self.activation!r}")

    def window_of(self, layer: int) -> int | None:
        """The sliding window of layer ``layer`` (``None``: it attends to the whole context)."""
        if self.layer_types is not None and self.layer_types[layer] != "sliding_attention":
            return None
        return self.sliding_window

    @classmethod
    def from_metadata(cls, meta: dict, architectures=("llama",)) -> LlamaConfig:
        """The configuration read from a GGUF file's metadata: the ``<arch>.*`` keys of its
        ``general.architecture``, which must be one of ``architectures`` (``ValueError``
        otherwise). As in llama.cpp, a file without ``head_count_kv`` has as many key-value heads
        as query heads, one without ``rope.freq_base`` has base 10000, and one without
        ``attention.key_length`` has a head dimension of ``d_model / heads``."""
        arch = meta.get("general.architecture")
        if arch not in architectures:
            raise ValueError(f"the model file's architecture is {arch!r}; supported: "
                             f"{', '.join(map(repr, architectures))}")
        heads, d_model = int(meta[f"{arch}.attention.head_count"]), int(
            meta[f"{arch}.embedding_length"])
        return cls(n_layers=int(meta[f"{arch}.block_count"]), d_model=d_model, n_heads=heads,
                   n_kv_heads=int(meta.get(f"{arch}.attention.head_count_kv", heads)),
                   ffn=int(meta[f"{arch}.feed_forward_length"]),
                   rope_base=float(meta.get(f"{arch}.rope.freq_base", 10000.0)),
                   rms_eps=float(meta[f"{arch}.attention.layer_norm_rms_epsilon"]),
                   context_length=int(meta[f"{arch}.context_length"]),
                   vocab_size=len(meta["tokenizer.ggml.tokens"]),
                   head_dim=int(meta.get(f"{arch}.attention.key_length", d_model // heads)))


def unpermute_rope_rows(weight: np.ndarray, n_heads: int) -> np.ndarray:
    """Undo llama.cpp's q/k row permutation: GGUF row ``2i + j`` of a head becomes row
    ``j·D/2 + i`` (``j ∈ {0, 1}``), turning interleaved RoPE pairs into half-split ones.

    Parameters
    ----------
    weight : numpy.ndarray
        ``(n_heads·D, d_model)``.
    n_heads : int
        Heads in ``weight``.

    Returns
    -------
    numpy.ndarray
        Same shape, rows reordered.

    Examples
    --------
    >>> import numpy as np
    >>> unpermute_rope_rows(np.arange(4.0)[:, None], 1)[:, 0].tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    rows, cols = weight.shape
    head_dim = rows // n_heads
    return np.ascontiguousarray(
        weight.reshape(n_heads, head_dim // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols))


class _Layer:
    """One decoder block's weights, stored ``(in, out)`` and fused for fewer, larger products.

    Optional tensors, used when present (llama.cpp's names): the ``q``/``k``/``v`` biases
    ``blk.<i>.attn_{q,k,v}.bias`` (Qwen2), added to the projections; the RMSNorm gains
    ``blk.<i>.attn_{q,k}_norm.weight`` on ``q`` and ``k`` before the position encoding, either
    ``(D,)`` over each head (Qwen3, Gemma-3) or ``(H·D,)`` / ``(Hkv·D,)`` over the whole
    projection (OLMo-2); and the four block norms: ``attn_norm`` before attention and
    ``ffn_norm`` before the MLP (absent in OLMo-2), ``post_attention_norm`` and ``post_ffw_norm``
    on the attention and MLP outputs before they join the residual stream (OLMo-2, Gemma-2/3).
    Like the ``q``/``k`` rows, the ``q``/``k`` biases and norm gains are in llama.cpp's
    interleaved order and are un-permuted here."""

    def __init__(self, tensors, i, config, dtype):
        def get(name, kind="weight"):
            return tensors[f"blk.{i}.{name}.{kind}"]

        def optional(name):
            key = f"blk.{i}.{name}.weight"
            return tensors[key].astype(dtype) if key in tensors else None

        def half_split(vector, heads):  # a q/k bias or norm gain: rows of one column
            return unpermute_rope_rows(vector[:, None], heads)[:, 0].astype(dtype)

        w_q = unpermute_rope_rows(get("attn_q"), config.n_heads)  # (H·D, d)
        w_k = unpermute_rope_rows(get("attn_k"), config.n_kv_heads)  # (Hkv·D, d)
        self.b_qkv = None  # ((H + 2Hkv)·D,)
        if f"blk.{i}.attn_q.bias" in tensors:
            self.b_qkv = np.concatenate([half_split(get("attn_q", "bias"), config.n_heads),
                                         half_split(get("attn_k", "bias"), config.n_kv_heads),
                                         get("attn_v", "bias").astype(dtype)])
        self.q_norm = self.k_norm = None  # (D,) each, or (H·D,) and (Hkv·D,)
        if f"blk.{i}.attn_q_norm.weight" in tensors:
            q_gain, k_gain = get("attn_q_norm"), get("attn_k_norm")
            whole = q_gain.size != config.head_dim  # over the whole projection (OLMo-2)
            self.q_norm = half_split(q_gain, config.n_heads if whole else 1)
            self.k_norm = half_split(k_gain, config.n_kv_heads if whole else 1)
        self.attn_norm = optional("attn_norm")  # (d,) or None
        self.ffn_norm = optional("ffn_norm")  # (d,) or None
        self.post_attn_norm = optional("post_attention_norm")  # (d,) or None
        self.post_ffn_norm = optional("post_ffw_norm")  # (d,) or None
        self.w_qkv = np.ascontiguousarray(
            np.concatenate([w_q, w_k, get("attn_v")]).T, dtype=dtype)  # (d, (H + 2Hkv)·D)
        self.w_o = np.ascontiguousarray(get("attn_output").T, dtype=dtype)  # (H·D, d)
        self.w_gate_up = np.ascontiguousarray(
            np.concatenate([get("ffn_gate"), get("ffn_up")]).T, dtype=dtype)  # (d, 2·ffn)
        self.w_down = np.ascontiguousarray(get("ffn_down").T, dtype=dtype)  # (ffn, d)


class LlamaModel(Readouts):
    """A LLaMA-style decoder with pretrained weights (see the module docstring).

    Token ids are integer sequences (lists or 1-D arrays) in ``[0, vocab_size)``. Every method
    accepts ``score_mod`` (``None``, a Transform such as a zoo member, or a FlexAttention
    callable) and ``position`` (any ``encoding(x, positions)`` of the reference such as
    ``RoPE(base)``, ``NTKRoPE(...)``). ``None`` = as trained, layer by layer:
    :attr:`layer_defaults` holds each layer's :class:`LayerDefault` ``(position, score_mod)``
    (RoPE of base ``config.rope_base`` and no logit law for a GGUF file; for a Hugging Face
    folder, the encoding and logit law its config gives that layer's type: the scaled RoPE,
    YaRN's attention factor, Gemma's ``query_pre_attn_scalar``, Gemma-3's local RoPE base on
    its sliding layers). A value given replaces the default in every layer. The soft cap and
    the sliding window of a layer (``config.attn_softcap``, :meth:`LlamaConfig.window_of`) are
    the architecture's: they apply after whichever logit law runs
    (:func:`~sia_theory.attention.layer_score_mod`).
    ``max_bytes`` (default ``None``: the memory available) bounds the working memory a call may
    plan for; a longer input raises ``ValueError`` before any work.

    Parameters
    ----------
    config : LlamaConfig
    tensors : dict
        The GGUF tensors by name (``token_embd.weight``, ``output_norm.weight``, per layer
        ``blk.<i>.*``; ``output.weight`` for an untied head), as
        :func:`~sia_theory.models.gguf_file.read_gguf` returns them.
    dtype : numpy dtype
        The compute dtype.
    """

    def __init__(self, config: LlamaConfig, tensors: dict, dtype=np.float32):
        self.config = config
        self.dtype = np.dtype(dtype)
        self.embedding = np.ascontiguousarray(tensors["token_embd.weight"], dtype=self.dtype)
        # the output head: the tied embedding, or a file's own output.weight (an untied head)
        self.output_weight = (np.ascontiguousarray(tensors["output.weight"], dtype=self.dtype)
                              if "output.weight" in tensors else self.embedding)  # (V, d)
        self.output_norm = tensors["output_norm.weight"].astype(self.dtype)  # (d,)
        self.layers = [_Layer(tensors, i, config, self.dtype) for i in range(config.n_layers)]
        self.layer_defaults = (LayerDefault(RoPE(config.rope_base)),) * config.n_layers
        self.max_bytes = None

    @property
    def default_position(self):
        """The position encoding of every layer when they share one (``ValueError`` when the
        layers differ: read :attr:`layer_defaults`); setting it sets every layer's."""
        return self._shared_default("position")

    @default_position.setter
    def default_position(self, position):
        self.layer_defaults = tuple(d._replace(position=position) for d in self.layer_defaults)

    @property
    def default_score_mod(self):
        """The logit law of every layer when they share one (``ValueError`` when the layers
        differ: read :attr:`layer_defaults`); setting it sets every layer's."""
        return self._shared_default("score_mod")

    @default_score_mod.setter
    def default_score_mod(self, score_mod):
        self.layer_defaults = tuple(d._replace(score_mod=score_mod) for d in self.layer_defaults)

    def _shared_default(self, name):
        values = [getattr(d, name) for d in self.layer_defaults]
        if not all(same(v, values[0]) for v in values[1:]):
            raise ValueError(f"the layers' default {name} differ (per-layer defaults): read "
                             f"model.layer_defaults[i].{name}")
        return values[0]

    # ---- inputs -----------------------------------------------------------------------------
    def check_ids(self, ids, name="ids") -> np.ndarray:
        """``ids`` as a 1-D int64 array, or ``ValueError`` (empty, not integers, out of range)."""
        array = np.asarray(ids)
        if array.ndim != 1 or array.size == 0 or (array.dtype.kind not in "iu"
                                                  and not (array.dtype == object)):
            raise ValueError(f"{name} must be a non-empty 1-D sequence of integer token ids, "
                             f"got shape {array.shape} and dtype {array.dtype}")
        if array.dtype == object:
            if not all(isinstance(i, int | np.integer) and not isinstance(i, bool)
                       for i in array):
                raise ValueError(f"{name} must hold integer token ids")
            bad = next((int(i) for i in array if not 0 <= int(i) < self.config.vocab_size),
                       None)  # before the cast: 2**70 does not fit int64
            if bad is not None:
                raise ValueError(f"{name} must lie in [0, vocab_size - 1 = "
                                 f"{self.config.vocab_size - 1}], got {bad}")
            array = array.astype(np.int64)
        low, high = int(array.min()), int(array.max())
        if low < 0 or high >= self.config.vocab_size:
            bad = low if low < 0 else high
            raise ValueError(f"{name} must lie in [0, vocab_size - 1 = "
                             f"{self.config.vocab_size - 1}], got {bad}")
        return array.astype(np.int64, copy=False)

    def check_fits(self, n_total, n_new, output_per_token=0, name="ids", value=None):
        """Working memory of processing ``n_new`` tokens up to context ``n_total``: a
        ``ValueError`` naming ``name`` (and its ``value``, default the token counts) if it exceeds
        what this machine can hold."""
        c, item = self.config, self.dtype.itemsize
        kv = 2 * c.n_layers * c.n_kv_heads * c.head_dim * n_total * item
        # per new token: residual, norm, qkv, rotated q/k (float64 temporaries), attention out
        activations = n_new * (6 * c.d_model * item + 4 * c.n_heads * c.head_dim * 8)
        fixed = available_workers() * (3 * ROWS * 2 * c.ffn * item
                                       + 2 * HEAD_ROWS * c.vocab_size * 8)
        check_memory(name, f"{n_new} tokens (context {n_total})" if value is None else value,
                     kv + activations + fixed + n_new * output_per_token, self.max_bytes)

    def new_cache(self, score_mod=None, position=None, capacity=None) -> ModelCache:
        """An empty KV cache for this model, tied to one ``score_mod`` and ``position`` (each
        ``None``: every layer's own default, :attr:`layer_defaults`); each layer's soft cap and
        sliding window are composed in (:func:`~sia_theory.attention.layer_score_mod`)."""
        if len(self.layer_defaults) != self.config.n_layers:
            raise ValueError(f"model.layer_defaults must hold n_layers = {self.config.n_layers} "
                             f"entries, got {len(self.layer_defaults)}")
        kv = DecodingCache(self.config.n_layers, "kv", capacity)
        layers = [(d.position if position is None else position,
                   d.score_mod if score_mod is None else score_mod) for d in self.layer_defaults]
        structure = [(self.config.attn_softcap, self.config.window_of(i))
                     for i in range(self.config.n_layers)]
        for i, (_, law) in enumerate(layers):  # a bad score_mod refused here, by name
            layer_score_mod(law, softcap=structure[i][0], window=structure[i][1])
        return ModelCache(kv, None, None, self.dtype, layers, structure)

    # ---- the forward pass -------------------------------------------------------------------
    def _norm(self, x, gain):
        """RMSNorm ``x / sqrt(mean(x²) + eps) · g`` over the last axis, in the working dtype."""
        mean_square = np.einsum("td,td->t", x, x)[:, None] / x.shape[1]  # (T, 1)
        return x * (gain / np.sqrt(mean_square + self.dtype.type(self.config.rms_eps)))

    def forward_hidden(self, ids, cache: ModelCache, capture=None, stop_layer=None):
        """Final hidden states ``(T, d_model)`` (after the output RMSNorm) of ``ids`` continuing
        ``cache``, which is extended by them (all or nothing: a failure leaves it unchanged).

        ``capture(layer, q, k)`` is called with each layer's queries ``(H, T, D)`` and keys
        ``(Hkv, T, D)`` after the position encoding; with ``stop_layer`` the pass stops after
        that layer and returns ``None`` (the cache is then incomplete: discard it)."""
        ids = self.check_ids(ids)
        if not isinstance(cache, ModelCache) or cache.dtype != self.dtype:
            raise ValueError(f"cache must be a ModelCache of this model (dtype {self.dtype}), "
                             f"from model.prefill or model.new_cache")
        start = cache.length
        self.check_fits(start + ids.size, ids.size)
        try:
            return self._layers(ids, cache, start, capture, stop_layer)
        except BaseException:
            cache.truncate(start)
            raise

    def _layers(self, ids, cache, start, capture, stop_layer):
        c = self.config
        n_new, heads, kv_heads, dim = ids.size, c.n_heads, c.n_kv_heads, c.head_dim
        positions = np.arange(start, start + n_new)
        blocks = row_blocks(n_new, ROWS)
        x = self.embedding[ids]  # (T, d)
        if c.embedding_scale != 1.0:  # Gemma's √d, Granite's embedding_multiplier
            x *= self.dtype.type(c.embedding_scale)
        residual_scale = self.dtype.type(c.residual_scale)
        qkv = np.empty((n_new, (heads + 2 * kv_heads) * dim), self.dtype)  # (T, (H + 2Hkv)·D)
        for i, layer in enumerate(self.layers):
            position, score_mod = cache.layer(i)

            def project(rows, layer=layer):
                h = x[rows] if layer.attn_norm is None else self._norm(x[rows], layer.attn_norm)
                np.matmul(h, layer.w_qkv, out=qkv[rows])
                if layer.b_qkv is not None:
                    qkv[rows] += layer.b_qkv

            run_rows(project, blocks)
            q = qkv[:, :heads * dim].reshape(n_new, heads, dim).transpose(1, 0, 2)  # (H, T, D)
            k = qkv[:, heads * dim:(heads + kv_heads) * dim].reshape(
                n_new, kv_heads, dim).transpose(1, 0, 2)  # (Hkv, T, D)
            v = qkv[:, (heads + kv_heads) * dim:].reshape(
                n_new, kv_heads, dim).transpose(1, 0, 2)  # (Hkv, T, D)
            if layer.q_norm is not None and layer.q_norm.size == dim:  # over each head's D
                q = self._norm(q.reshape(-1, dim), layer.q_norm).reshape(heads, n_new, dim)
                k = self._norm(k.reshape(-1, dim), layer.k_norm).reshape(kv_heads, n_new, dim)
            elif layer.q_norm is not None:  # over the whole projection (OLMo-2), then split
                q = self._norm(qkv[:, :heads * dim], layer.q_norm).reshape(
                    n_new, heads, dim).transpose(1, 0, 2)
                k = self._norm(qkv[:, heads * dim:(heads + kv_heads) * dim],
                               layer.k_norm).reshape(n_new, kv_heads, dim).transpose(1, 0, 2)
            q = _encode(position, q, positions, self.dtype)
            k = _encode(position, k, positions, self.dtype)
            if capture is not None:
                capture(i, q, k)
            cache.kv.append_kv(i, k[None], v[None])  # (1, Hkv, T, D) each
            if stop_layer is not None and i == stop_layer:
                return None
            out = cached_attention(np.ascontiguousarray(q)[None], cache.kv.keys(i),
                                   cache.kv.values(i), score_mod=score_mod)[0]  # (H, T, D)

            def finish(rows, layer=layer, out=out):
                n_rows = rows.stop - rows.start
                mixed = out[:, rows].transpose(1, 0, 2).reshape(n_rows, heads * dim)  # (n, HD)
                self._residual(x, rows, mixed @ layer.w_o, layer.post_attn_norm, residual_scale)
                h = x[rows] if layer.ffn_norm is None else self._norm(x[rows], layer.ffn_norm)
                self._residual(x, rows, self._mlp(h, layer), layer.post_ffn_norm, residual_scale)

            run_rows(finish, blocks)
        return self._norm(x, self.output_norm)

    def _residual(self, x, rows, update, post_norm, scale):
        """``x[rows] += scale · post_norm(update)`` (the norm and the scale where the
        architecture has them: OLMo-2 and Gemma's post-norms, Granite's residual_multiplier)."""
        if post_norm is not None:
            update = self._norm(update, post_norm)
        if scale != 1:
            update *= scale
        x[rows] += update

    def _mlp(self, h, layer):
        """The gated MLP ``(act(h W_gate) ⊙ h W_up) W_down``, in place on the (rows, 2·ffn)
        block: SwiGLU (``act = silu``) or GeGLU with tanh-approximated GELU
        (``0.5·g·(1 + tanh(√(2/π)(g + 0.044715 g³)))``, transformers' ``gelu_pytorch_tanh``)."""
        gate_up = h @ layer.w_gate_up  # (n, 2·ffn)
        gate, up = gate_up[:, :self.config.ffn], gate_up[:, self.config.ffn:]
        if self.config.activation == "gelu_tanh":
            inner = gate * gate  # (n, ffn)
            inner *= self.dtype.type(0.044715)
            inner += 1
            inner *= gate
            inner *= self.dtype.type(np.sqrt(2.0 / np.pi))
            np.tanh(inner, out=inner)
            inner += 1
            inner *= gate
            inner *= self.dtype.type(0.5)
            inner *= up
            return inner @ layer.w_down  # (n, d)
        silu = np.negative(gate)  # (n, ffn)
        with np.errstate(over="ignore"):  # exp(-g) = inf for g << 0 gives silu = -0
            np.exp(silu, out=silu)
        silu += 1
        np.divide(gate, silu, out=silu)
        silu *= up
        return silu @ layer.w_down  # (n, d)


def _encode(position, x, positions, dtype):
    """Apply a position encoding ``position(x, positions)`` to ``x`` ``(heads, T, D)``."""
    out = np.asarray(position(x, positions))
    if out.shape != x.shape:
        raise ValueError(f"position must return an array of the shape it was given "
                         f"{x.shape}, got {out.shape}")
    return out.astype(dtype, copy=False)
