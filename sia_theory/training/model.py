"""The decoder of SI App. G in JAX: the numpy reference :class:`~sia_theory.attention.Decoder`'s
architecture, written once more only as far as JAX needs (layers, norms, matrix products); the
scheme arrives as arrays (:mod:`.tables`).

token embedding → RMSNorm → [RMSNorm → attention → residual → RMSNorm → ReLU² MLP → residual]
× n_layers → RMSNorm → unembedding; norms have no gain (modded-nanogpt's ``F.rms_norm``).
Attention: ``q, k`` RMS-normed over the head dimension (QK-norm), rotated by the encoding's
tables, ``q`` multiplied by ``1/√D`` (FlexAttention's default scale, the score ``S = q·k/√D``
of SI §3), then ``L = a·S + m`` and a causal softmax. The operations are in the reference's
order, in float32, so the two agree to float32 rounding.

Parameters (numpy or JAX arrays, float32): ``embedding`` ``(V, d)``, ``unembedding`` ``(d, V)``,
``layers`` a dict of the six block matrices stacked over layers: ``w_q, w_k, w_v, w_o``
``(n_layers, d, d)``, ``w_up`` ``(n_layers, d, 4d)``, ``w_down`` ``(n_layers, 4d, d)`` (the
model computes ``x @ w``), and ``score_scale`` ``(n_layers,)`` where the scheme learns one (the
scores of layer ``l`` multiplied by it). Long sequences run attention one block of query rows at
a time (``block``), so the score matrix held at once is ``(B, H, block, T)``.
"""

from __future__ import annotations

import numpy as np

from ._jax import require

jax, jnp, _ = require()

__all__ = ["EPS", "UNROLLED_BLOCKS", "rms_norm", "forward", "token_losses"]

EPS = float(np.finfo(np.float32).eps)  # as the reference's rms_norm on float32 (torch's default)
"""The ``ε`` of :func:`rms_norm`: float32's machine epsilon, as the numpy reference's RMSNorm."""


def rms_norm(x):
    """RMSNorm without a gain over the last axis: ``x / sqrt(mean(x²) + eps)``."""
    return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + EPS)


def rotate(x, cos, sin):
    """Rotate pair ``(k, k + D/2)`` of ``x`` ``(B, H, T, D)`` by the angles of ``cos, sin``
    ``(T, D/2)``, as the reference's ``rotate``."""
    half = cos.shape[-1]
    x1, x2 = x[..., :half], x[..., half:]  # (B, H, T, D/2) each
    return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


def _coefficients(tables, q0, n_q, n_k):
    """``(a, m)`` ``(H, n_q, n_k)`` for query rows ``q0 … q0 + n_q − 1`` and keys
    ``0 … n_k − 1`` (``m = −inf`` after the query)."""
    if "a_full" in tables:
        a = jax.lax.dynamic_slice_in_dim(tables["a_full"], q0, n_q, axis=1)[..., :n_k]
        m = jax.lax.dynamic_slice_in_dim(tables["m_full"], q0, n_q, axis=1)[..., :n_k]
        return a, m
    rows = q0 + jnp.arange(n_q)  # (Q,)
    t = rows[:, None] - jnp.arange(n_k)[None, :]  # (Q, K) distances
    tc = jnp.clip(t, 0, tables["a_dist"].shape[1] - 1)
    a = tables["a_row"][:, rows][:, :, None] * tables["a_dist"][:, tc]  # (H, Q, K)
    m = tables["m_row"][:, rows][:, :, None] + tables["m_dist"][:, tc]  # (H, Q, K)
    return a, jnp.where(t >= 0, m, -jnp.inf)


def _attend(q, k, v, a, m):
    """Softmax attention of ``q`` ``(B, H, Q, D)`` (already scaled) over ``k, v``
    ``(B, H, K, D)`` with logits ``a·S + m`` (``a, m``: ``(H, Q, K)``)."""
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k)  # (B, H, Q, K)
    s = s * a + m
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)  # (B, H, Q, D)


UNROLLED_BLOCKS = 32  # up to this many query blocks, each block skips the keys after it
"""Up to this many query blocks the blocked attention is written out block by block (each
block skips the keys after it: static shapes); beyond, one ``lax.map`` over the blocks, each
over every key, masked."""


def _attention(q, k, v, tables, block, coefficients):
    n_batch, n_heads, n_pos, head_dim = q.shape
    if block >= n_pos:
        return _attend(q, k, v, *coefficients)
    n_blocks = n_pos // block
    if n_blocks <= UNROLLED_BLOCKS:  # static shapes: block b sees keys 0 … (b + 1)·block − 1
        outs = []
        for b in range(n_blocks):
            q0, k1 = b * block, (b + 1) * block
            a, m = _coefficients(tables, q0, block, k1)
            outs.append(_attend(q[:, :, q0:k1], k[:, :, :k1], v[:, :, :k1], a, m))
        return jnp.concatenate(outs, axis=2)  # (B, H, T, Dh)
    blocks = q.reshape(n_batch, n_heads, n_blocks, block, head_dim).transpose(2, 0, 1, 3, 4)

    def one(args):  # every key, masked: one compiled block for any number of blocks
        index, qb = args  # qb (B, H, block, Dh)
        return _attend(qb, k, v, *_coefficients(tables, index * block, block, n_pos))

    out = jax.lax.map(one, (jnp.arange(n_blocks), blocks))  # (nb, B, H, block, Dh)
    return out.transpose(1, 2, 0, 3, 4).reshape(n_batch, n_heads, n_pos, head_dim)


def forward(params, tokens, tables, rotation, *, n_heads: int, block: int | None = None,
            unroll: bool = False):
    """Logits ``(B, T, V)`` of ``tokens`` ``(B, T)``; ``tables`` and ``rotation`` (``cos,
    sin``) for length ``T`` (:mod:`.tables`); attention in query blocks of ``block`` rows
    (``None``: all at once; ``T`` must be a multiple of ``block``). ``unroll`` writes the
    layers out instead of a loop: slower to compile, faster to train (measured about 15 %
    per step on CPU, where the loop's backward pass stacks and copies every layer's
    residuals)."""
    n_batch, n_pos = tokens.shape
    d_model = params["embedding"].shape[1]
    head_dim = d_model // n_heads
    block = n_pos if block is None else block
    cos, sin = rotation
    scale = np.float32(1.0 / np.sqrt(head_dim))
    coefficients = _coefficients(tables, 0, n_pos, n_pos) if block >= n_pos else None

    def heads(x):  # (B, T, d) -> (B, H, T, Dh)
        return x.reshape(n_batch, n_pos, n_heads, head_dim).transpose(0, 2, 1, 3)

    def layer(x, w):
        hidden = rms_norm(x)  # (B, T, d)
        q = rotate(rms_norm(heads(hidden @ w["w_q"])), cos, sin) * scale  # (B, H, T, Dh)
        if "score_scale" in w:  # a scheme's learned score scale λ_l: S = (λ_l q)·k/√D
            q = q * w["score_scale"]
        k = rotate(rms_norm(heads(hidden @ w["w_k"])), cos, sin)
        v = heads(hidden @ w["w_v"])
        mixed = _attention(q, k, v, tables, block, coefficients)  # (B, H, T, Dh)
        x = x + mixed.transpose(0, 2, 1, 3).reshape(n_batch, n_pos, d_model) @ w["w_o"]
        up = jax.nn.relu(rms_norm(x) @ w["w_up"])  # (B, T, 4d)
        return x + (up * up) @ w["w_down"], None

    x = rms_norm(params["embedding"][tokens])  # (B, T, d)
    x, _ = jax.lax.scan(layer, x, params["layers"], unroll=bool(unroll))
    return rms_norm(x) @ params["unembedding"]  # (B, T, V)


def token_losses(params, windows, tables, rotation, *, n_heads: int, block=None,
                 unroll=False):
    """Next-token cross-entropy (nats) of ``windows`` ``(B, T + 1)``: ``(B, T)``, position
    ``j`` the loss of token ``j + 1`` given tokens ``0 … j``."""
    logits = forward(params, windows[:, :-1], tables, rotation, n_heads=n_heads, block=block,
                     unroll=unroll)
    log_z = jax.nn.logsumexp(logits, axis=-1)  # (B, T)
    picked = jnp.take_along_axis(logits, windows[:, 1:, None], axis=-1)[..., 0]  # (B, T)
    return log_z - picked
