"""Declared dependence (``depends_on``): attention's fast paths equal the transform's own law.

Every built-in transform and a user transform for each of the 8 subsets of
{distance, context, head} is run through ``attention`` / ``attention_scores`` (whose route is
chosen from ``depends_on``: per-head distance tables, per-row multipliers or the transform's
``score_mod``) and compared, to 1e-12, with a dense float64 construction written here from the
formula (attention-gym style) and with the generic callable route (a plain lambda wrapping
``score_mod``, which attention cannot recognise as a transform). Causal and non-causal, offset
queries (Tq < Tk), several heads, streaming blocks, and key chunks merged by log-sum-exp.
"""

import itertools
import math

import numpy as np
import pytest

from sia_theory import ALiBi, LogN, NoScale, ScaleInvariant, Transform
from sia_theory.attention import (
    Decoder,
    DecoderConfig,
    attention,
    attention_dense,
    attention_partial,
    attention_scores,
    merge_partials,
)
from sia_theory.transforms import DEPENDENCES

N_HEADS = 3
SUBSETS = [frozenset(c) for r in range(4) for c in itertools.combinations(sorted(DEPENDENCES), r)]


def _head_factor(h, uses_head):
    # h is an int (coefficients), an index grid (score_mod) or None. A user transform that
    # silently treats h=None as head 0 is exactly the case the declared dependence must catch.
    if not uses_head:
        return 1.0
    return 1.0 + 0.25 * np.asarray(0 if h is None else h, dtype=np.float64)


def make_user_transform(deps: frozenset):
    """A user subclass (not a built-in) whose coefficients depend on exactly ``deps``."""
    uses_t, uses_n, uses_h = ("distance" in deps), ("context" in deps), ("head" in deps)

    class UserTransform(Transform):
        depends_on = deps
        n_heads = N_HEADS if uses_h else None

        def affine(self, t, n, h):
            c = _head_factor(h, uses_h)
            a = c * (1.0 + (0.3 * np.log1p(t) if uses_t else 0.0)) * np.ones_like(t)
            m = -c * (0.4 * np.sqrt(t) if uses_t else 0.0) * np.ones_like(t) + 0.1
            if uses_n:
                if n is None:
                    raise ValueError("n_ctx is required")
                a = a * (1.0 + 0.2 * np.log(n))
                m = m - 0.05 * np.log(n)
            return a, m

        def __repr__(self):
            return f"UserTransform({sorted(deps)})"

    return UserTransform()


def user_logit(deps):
    """The same law written out on index grids: ``(s, t, n, h) -> logit``."""
    def logit(s, t, n, h):
        c = 1.0 + 0.25 * h if "head" in deps else 1.0
        a = c * (1.0 + (0.3 * np.log1p(t) if "distance" in deps else 0.0))
        m = -c * (0.4 * np.sqrt(t) if "distance" in deps else 0.0) + 0.1
        if "context" in deps:
            a, m = a * (1.0 + 0.2 * np.log(n)), m - 0.05 * np.log(n)
        return a * s + m
    return logit


def _si_logit(tau, alpha, beta):  # SI eq. 16: a^2 = 2[log(t/tau+1) - log alpha + beta/alpha]
    def logit(s, t, n, h):
        a2 = 2 * (np.log(t / tau + 1) - math.log(alpha) + beta / alpha)
        return np.sqrt(a2) * s + (beta / alpha - a2)
    return logit


ALIBI_SLOPES = (0.5, 0.25, 0.125)
BUILT_INS = {
    "NoScale": (NoScale(), lambda s, t, n, h: s + 0 * t),
    "LogN": (LogN(0.4), lambda s, t, n, h: 0.4 * np.log(n) * s),
    "ScaleInvariant(10)": (ScaleInvariant(10.0), _si_logit(10.0, math.exp(0.5), math.exp(0.5))),
    "ScaleInvariant(0.5,2,3)": (ScaleInvariant(0.5, 2.0, 3.0), _si_logit(0.5, 2.0, 3.0)),
    "ALiBi(0.25)": (ALiBi(0.25), lambda s, t, n, h: s - 0.25 * t),
    "ALiBi per head": (ALiBi(ALIBI_SLOPES),
                       lambda s, t, n, h: s - np.asarray(ALIBI_SLOPES)[h] * t),
}
CASES = {**BUILT_INS, **{f"user{sorted(d)}": (make_user_transform(d), user_logit(d))
                         for d in SUBSETS}}


def dense_reference(q, k, v, logit, causal):
    """Softmax of the law applied on dense index grids, float64: ``(scores, out, lse)``."""
    n_q, n_k = q.shape[2], k.shape[2]
    offset = n_k - n_q if causal else 0  # queries are the last Tq positions when causal
    q_idx = (offset + np.arange(n_q))[:, None]  # (Tq, 1)
    kv_idx = np.arange(n_k)[None, :]  # (1, Tk)
    h = np.arange(q.shape[1])[:, None, None]  # (H, 1, 1)
    raw = np.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.shape[3])  # (B, H, Tq, Tk)
    scores = logit(raw, np.abs(q_idx - kv_idx).astype(float), q_idx + 1.0, h)
    scores = np.broadcast_to(scores, raw.shape).copy()
    if causal:
        scores[..., kv_idx > q_idx] = -np.inf
    top = scores.max(axis=-1, keepdims=True)  # (B, H, Tq, 1)
    weight = np.exp(scores - top)  # (B, H, Tq, Tk)
    total = weight.sum(axis=-1, keepdims=True)  # (B, H, Tq, 1)
    return scores, (weight / total) @ v, (top + np.log(total))[..., 0]


def _qkv(n_q, n_k, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((2, N_HEADS, n_q, 8))
    k, v = (rng.standard_normal((2, N_HEADS, n_k, 8)) for _ in range(2))
    return q, k, v


SHAPES = [(13, 13), (5, 17), (1, 9)]  # (Tq, Tk): full, offset queries, one decoding query


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("n_q, n_k", SHAPES)
def test_fast_path_equals_dense_law_and_callable_route(name, causal, n_q, n_k):
    transform, logit = CASES[name]
    q, k, v = _qkv(n_q, n_k)
    scores, out, lse = dense_reference(q, k, v, logit, causal)
    generic = lambda s, b, h, qi, ki: transform.score_mod(s, b, h, qi, ki)  # noqa: E731

    for mod in (transform, generic):
        got_scores = attention_scores(q, k, score_mod=mod, causal=causal)
        finite = np.isfinite(scores)
        np.testing.assert_array_equal(np.isfinite(got_scores), finite)
        np.testing.assert_allclose(got_scores[finite], scores[finite], rtol=0, atol=1e-12)
        for block_size in (None, 4):
            got, got_lse = attention(q, k, v, score_mod=mod, causal=causal,
                                     block_size=block_size, return_lse=True)
            np.testing.assert_allclose(got, out, rtol=0, atol=1e-12)
            np.testing.assert_allclose(got_lse, lse, rtol=0, atol=1e-12)
        np.testing.assert_allclose(attention_dense(q, k, v, score_mod=mod, causal=causal), out,
                                   rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", list(CASES))
def test_key_chunks_merged_equal_dense_law(name):
    """Chunks at absolute key positions (the Toeplitz tables with a key offset)."""
    transform, logit = CASES[name]
    q, k, v = _qkv(6, 20, seed=3)
    _, out, lse = dense_reference(q, k, v, logit, causal=True)
    parts = [attention_partial(q, k[:, :, a:b], v[:, :, a:b], q_start=14, kv_start=a,
                               score_mod=transform, block_size=3)
             for a, b in ((0, 7), (7, 15), (15, 20))]
    merged, merged_lse = merge_partials(parts)
    np.testing.assert_allclose(merged, out, rtol=0, atol=1e-12)
    np.testing.assert_allclose(merged_lse, lse, rtol=0, atol=1e-12)


def test_head_dependent_user_transform_gets_per_head_tables():
    """The issue's bug: a user transform declaring {distance, head} used to get h=None on the
    fast path (one table for all heads). Its heads must differ, as its law says."""
    transform = make_user_transform(frozenset({"distance", "head"}))
    q, k, _ = _qkv(9, 9)
    # Same raw scores on every head, so any difference comes from the head factor alone.
    same_raw = attention_scores(np.broadcast_to(q[:, :1], q.shape),
                                np.broadcast_to(k[:, :1], k.shape), score_mod=transform)
    causal = np.tril(np.ones((9, 9), bool))
    assert np.abs(same_raw[:, 2][..., causal] - same_raw[:, 0][..., causal]).max() > 0.25


def test_declared_dependence_of_built_ins():
    assert NoScale().depends_on == frozenset()
    assert LogN().depends_on == {"context"}
    assert ScaleInvariant().depends_on == {"distance"}
    assert ALiBi(0.5).depends_on == {"distance"}
    assert ALiBi((0.5, 0.25)).depends_on == {"distance", "head"}
    assert ALiBi((0.5, 0.25)).n_heads == 2 and Transform.n_heads is None
    assert Transform.depends_on == DEPENDENCES  # the safe default: evaluate score_mod


def test_head_count_is_validated_from_the_declaration():
    transform = make_user_transform(frozenset({"distance", "head"}))  # n_heads = 3
    q, k, v = (x[:, :2] for x in _qkv(4, 4))
    with pytest.raises(ValueError, match="^score_mod: .* supports 3 heads but q has 2 heads"):
        attention(q, k, v, score_mod=transform)
    with pytest.raises(ValueError, match="supports 3 heads but the model has n_heads=2"):
        DecoderConfig(d_model=16, n_heads=2, transform=transform)
    # The same law without "head" declared supports any head count.
    Decoder(DecoderConfig(d_model=16, n_heads=2, transform=make_user_transform(
        frozenset({"distance"}))))
