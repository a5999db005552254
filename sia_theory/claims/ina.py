"""Claims of the attention reference: InAttention (INA-1, INA-2) and the reference's logits
(REF-1). All three are deterministic (random weights from a seed), so there is no interval."""

from __future__ import annotations

import numpy as np
import sympy as sp

from sia_theory._infra.seeding import rng_for
from sia_theory.attention import Decoder, DecoderConfig, PRoPESI, attention_scores, p_rope_si
from sia_theory.attention.positional import rms_norm
from sia_theory.symbolic import si
from sia_theory.transforms import ScaleInvariant

from .core import Measurement, claim, negative_control, verdict


def _model(inattention, n_layers, seed, cache="initial", kv_chunk=2048):
    return Decoder(DecoderConfig(vocab_size=64, d_model=32, n_heads=2, n_layers=n_layers,
                                 position=PRoPESI(), transform=ScaleInvariant(tau=10.0),
                                 inattention=inattention, inattention_cache=cache, seed=seed,
                                 kv_chunk=kv_chunk))


def decide_cache(lengths, sizes_standard, sizes_inattention) -> Measurement:
    """``sizes_*[L]``: cache bytes after each of ``lengths`` tokens for an ``L``-layer model.
    PASS iff the InAttention cache grows linearly in T (constant bytes per token) with no
    dependence on L, and is at least L times smaller than the standard KV cache."""
    lengths = np.asarray(lengths, float)
    per_token = {n: np.asarray(v, float) / lengths for n, v in sizes_inattention.items()}
    linear = all(np.all(v == v[0]) for v in per_token.values())
    flat_in_layers = len({float(v[0]) for v in per_token.values()}) == 1
    ratios = {n: sizes_standard[n][-1] / sizes_inattention[n][-1] for n in sizes_standard}
    value = min(r / n for n, r in ratios.items())  # (standard/INA ratio) / L
    return Measurement(verdict(linear and flat_in_layers and value >= 1.0),
                       f"INA bytes/token constant in T: {linear}, independent of L: "
                       f"{flat_in_layers}; standard/INA ratio "
                       + ", ".join(f"L={n}: {r:g}" for n, r in ratios.items()),
                       value=value, target=2.0, tolerance=1.0,
                       detail="value: (standard/INA cache ratio)/L, ≥ 1 required (2 with "
                              "d_k = d_v = d_model: K and V per layer against one Y).")


def _cache_sizes(quick, seed):
    lengths = (32, 64, 128) if quick else (128, 256, 512, 1024)
    layer_counts = (2, 4) if quick else (2, 4, 8)
    tokens = rng_for(seed, "ina.cache").integers(0, 64, (1, lengths[-1]))
    sizes = {False: {}, True: {}}
    for n_layers in layer_counts:
        for inattention in (False, True):
            model = _model(inattention, n_layers, seed)
            cache, done, per_length = model.new_cache(), 0, []
            for length in lengths:  # extend the same cache: prefill then continuation chunks
                model.forward(tokens[:, done:length], cache)
                done = length
                per_length.append(cache.nbytes)
            sizes[inattention][n_layers] = per_length
    return lengths, sizes[False], sizes[True]


@claim("INA-1", "During inference the per-layer hidden states need not be cached: only Y (or "
                "its projections) is kept, so the cache grows linearly with context length and "
                "is smaller than a standard KV cache by about the number of layers.",
       alternative="a cache that grows with L·T (per-layer states kept)")
def check_ina_1(quick: bool, seed: int) -> Measurement:
    """INA §3 (arXiv 2410.07063): "With InAttention, since we only attend initial states, we
    do not need to [cache the hidden states at each layer]". Measured: bytes held by the real
    decoding caches after a real prefill, standard KV cache vs InAttention's cache of Y."""
    return decide_cache(*_cache_sizes(quick, seed))


@negative_control("INA-1")
def ina_1_control():
    """INA-1's decision on a cache that keeps one state per layer (half the standard KV cache,
    growing with L·T): must FAIL."""
    lengths, standard, _ = _cache_sizes(True, 0)
    per_layer = {n: [s // 2 for s in v] for n, v in standard.items()}  # one state per layer
    return decide_cache(lengths, standard, per_layer)


@claim("INA-2", "Incremental decoding with that cache gives exactly the full-recompute result.",
       alternative="decoding that departs from the full pass (e.g. by 1e-6)")
def check_ina_2(quick: bool, seed: int) -> Measurement:
    """INA §3: the keys and values of every step are fixed by the initial states, so caching
    Y (or W_K Y, W_V Y) and decoding token by token must reproduce the full forward pass."""
    length, prefill = (24, 6) if quick else (96, 16)
    tokens = rng_for(seed, "ina.decode").integers(0, 64, (2, length))
    errors = {}
    modes = {"Y": ("initial", 2048), "Y, re-projected in chunks of 8": ("initial", 8),
             "W_K Y, W_V Y": ("projected", 2048)}
    for name, (cache_mode, kv_chunk) in modes.items():
        model = _model(True, 3, seed, cache=cache_mode, kv_chunk=kv_chunk)
        full = model.forward(tokens)
        cache = model.new_cache()
        steps = [model.forward(tokens[:, :prefill], cache)]
        steps += [model.decode_step(tokens[:, i], cache)[:, None] for i in range(prefill, length)]
        errors[name] = float(np.max(np.abs(np.concatenate(steps, axis=1) - full)))
    return decide_decode(errors)


def decide_decode(errors) -> Measurement:
    """PASS iff every cache mode reproduces the full forward pass to float64 rounding."""
    worst = max(errors.values())
    return Measurement(verdict(worst <= 1e-10), "max |decode − full|: " + ", ".join(
                           f"cache {k}: {v:.2e}" for k, v in errors.items()),
                       value=worst, target=0.0, tolerance=1e-10,
                       detail="3 layers, d_model 32, 2 heads, p-RoPE (SI) + ScaleInvariant(10), "
                              "QK-norm; prefill then single-token steps, batch 2 (float64; not "
                              "bitwise: the summation order differs).")


@negative_control("INA-2")
def ina_2_control():
    """INA-2's decision on decoding that departs from the full pass by 1e-6: must FAIL."""
    return decide_decode({"Y": 1e-6})


def _symbolic_coefficients(distances, tau):
    """``(a_t, m_t)`` of SI eq. 16 at ``α = β = e^{1/2}``, evaluated from the sympy solution at
    30 digits (independent of the lambdified numeric route the reference uses)."""
    solution = si.solve_coefficients()
    hyper = si.boundary_hyperparameters()
    a2_expr = solution[si.a2].subs(hyper).subs(si.tau, tau)
    m_expr = solution[si.m].subs(hyper).subs(si.tau, tau)
    a = [float(sp.sqrt(a2_expr.subs(si.t, int(d))).evalf(30)) for d in distances]
    m = [float(m_expr.subs(si.t, int(d)).evalf(30)) for d in distances]
    return np.array(a), np.array(m)


def decide_logits(logits, expected, causal) -> Measurement:
    """PASS iff the causal logits equal ``a S + m`` to float64 rounding (relative 1e-12) and
    every entry above the diagonal is ``-inf``."""
    error = float(np.max(np.abs(logits - expected)[..., causal]))
    scale = max(float(np.max(np.abs(expected[..., causal]))), 1.0)
    masked = bool(np.all(logits[..., ~causal] == -np.inf))
    return Measurement(verdict(error <= 1e-12 * scale and masked),
                       f"max |L_ref − (a S + m)| = {error:.2e} over {int(causal.sum())} causal "
                       f"entries per head (|L| ≤ {scale:.1f}); j > i masked: {masked}",
                       value=error / scale, target=0.0, tolerance=1e-12,
                       detail="a_t, m_t from the sympy solution at 30 digits; value relative to "
                              "max |L|.")


def _ref_logits(quick, seed, with_shift=True, a_scale=1.0, m_scale=1.0):
    n_pos, head_dim, tau = (64, 32, 10.0) if quick else (512, 64, 10.0)
    rng = rng_for(seed, "ref.logits")
    positions = np.arange(n_pos)
    q = p_rope_si(rms_norm(rng.standard_normal((1, 2, n_pos, head_dim))), positions)
    k = p_rope_si(rms_norm(rng.standard_normal((1, 2, n_pos, head_dim))), positions)
    logits = attention_scores(q, k, score_mod=ScaleInvariant(tau=tau))  # (1, 2, T, T)
    raw = np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(head_dim)  # S_ij, summed independently
    distance = positions[:, None] - positions[None, :]  # (T, T)
    a, m = _symbolic_coefficients(range(n_pos), tau)
    causal = distance >= 0
    d = np.where(causal, distance, 0)
    expected = a_scale * a[d] * raw + (m_scale * m[d] if with_shift else 0.0)
    return logits, expected, causal


@claim("REF-1", "In a real attention layer (QK-norm, p-RoPE) the reference's scale-invariant "
                "logits are L_ij = a_{i-j} S_ij + m_{i-j} with S = q.k/sqrt(d) (SI §3, eq. 16).",
       alternative="logits missing a term of eq. 16 (e.g. without the m_t shift)")
def check_ref_1(quick: bool, seed: int) -> Measurement:
    """SI §3: "we propose to scale the logits in real attention using a_t and m_t defined in
    Eq. (16)". The reference's logits (``attention_scores``, the same score path as
    ``attention``) are compared with ``a_{i-j} S_ij + m_{i-j}`` built from the sympy solution."""
    return decide_logits(*_ref_logits(quick, seed))


@negative_control("REF-1")
def ref_1_control():
    """REF-1's decision on the reference's logits compared without the ``m_t`` shift of eq. 16:
    must FAIL."""
    return decide_logits(*_ref_logits(True, 0, with_shift=False))


# --- the nearest alternatives: each claim's quantity 20 % off ----------------------------------

def cache_law(ratio_over_layers=2.0, growth=1.0):
    """Cache sizes following the claim: a standard KV cache of ``2·L·T`` units and an
    InAttention cache ``ratio_over_layers·L`` times smaller, its bytes per token multiplied by
    ``growth`` at the largest length (``growth ≠ 1``: not linear in T)."""
    lengths = (32, 64, 128)
    standard = {n: [2 * n * 64 * t for t in lengths] for n in (2, 4)}
    inattention = {n: [v / (ratio_over_layers * n) for v in sizes]
                   for n, sizes in standard.items()}
    for sizes in inattention.values():
        sizes[-1] *= growth
    return lengths, standard, inattention


negative_control("INA-1", "saving 0.8·L (−20 %)")(lambda: decide_cache(*cache_law(0.8)))
negative_control("INA-1", "bytes per token +20 % at the largest T")(
    lambda: decide_cache(*cache_law(2.0, growth=1.2)))
for _sign, _scale in (("+", 1.2), ("−", 0.8)):
    negative_control("REF-1", f"a_t {_sign}20 %")(
        lambda s=_scale: decide_logits(*_ref_logits(True, 0, a_scale=s)))
    negative_control("REF-1", f"m_t {_sign}20 %")(
        lambda s=_scale: decide_logits(*_ref_logits(True, 0, m_scale=s)))
