"""The logit soft cap of the exports (Gemma-2's ``attn_logit_softcapping``) held against the
cap written out here on numpy logits, ``cap·tanh(L/cap)`` after the transform (transformers
``gemma2/modeling_gemma2.py``, ``eager_attention_forward``: ``attn_weights / softcap``, ``tanh``,
``* softcap``, after ``scaling``), and against leaving it out or capping before the transform."""

import numpy as np
import pytest

from sia_theory import ScaleInvariant
from sia_theory.zoo import Temperature

CAP = 2.0
RNG = np.random.default_rng(3)
Q, K, V = (RNG.standard_normal((1, 2, 24, 8)) * 2.5 for _ in range(3))


def reference(transform, cap, q=Q, k=K, v=V, cap_first=False):
    """Causal softmax attention on numpy logits, the cap applied after the transform."""
    n = q.shape[2]
    s = np.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[3])
    t = np.arange(n)[:, None] - np.arange(n)[None, :]
    a, m = transform.coefficients(np.abs(t), n_ctx=np.arange(1, n + 1)[:, None])
    if cap_first and cap is not None:
        s = cap * np.tanh(s / cap)
    logits = a * s + m
    if cap is not None and not cap_first:
        logits = cap * np.tanh(logits / cap)
    logits = np.where(t < 0, -np.inf, logits)
    w = np.exp(logits - logits.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("transform", [Temperature(3.0), ScaleInvariant(tau=10)],
                         ids=["temperature", "scale-invariant"])
def test_flex_softcap_equals_the_written_out_cap(transform):
    torch = pytest.importorskip("torch", reason="torch (the torch extra) runs FlexAttention")
    from torch.nn.attention.flex_attention import flex_attention

    from sia_theory.export import causal_block_mask, flex_score_mod

    mod = flex_score_mod(transform, 24, softcap=CAP)
    got = flex_attention(*(torch.tensor(x) for x in (Q, K, V)), score_mod=mod,
                         block_mask=causal_block_mask(24)).numpy()
    want = reference(transform, CAP)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    for wrong in (reference(transform, None), reference(transform, CAP, cap_first=True),
                  reference(transform, CAP * 1.1)):
        assert np.max(np.abs(got - wrong)) > 1e-3


def test_jax_softcap_equals_the_written_out_cap():
    jax = pytest.importorskip("jax", reason="jax (the training extra) runs the JAX export")
    from sia_theory.export import jax_attention, jax_score_mod

    with jax.enable_x64(True):
        got = np.asarray(jax_attention(Q, K, V, Temperature(3.0), softcap=CAP))
        mod = jax_score_mod(Temperature(3.0), 24, softcap=CAP, dtype=np.float64)
        s = np.full((1, 1, 1, 1), 10.0)
        zero = jax.numpy.zeros((1, 1, 1, 1), dtype=jax.numpy.int32)
        capped = float(np.asarray(mod(jax.numpy.asarray(s), zero, zero, zero, zero)).ravel()[0])
    np.testing.assert_allclose(got, reference(Temperature(3.0), CAP), rtol=0, atol=1e-12)
    assert capped == pytest.approx(CAP * np.tanh(30.0 / CAP), rel=1e-15)
    assert np.max(np.abs(got - reference(Temperature(3.0), None))) > 1e-3


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "2"])
def test_a_bad_softcap_is_refused_by_name(bad):
    from sia_theory.transforms.tables import check_softcap

    with pytest.raises(ValueError, match="softcap"):
        check_softcap(bad)
