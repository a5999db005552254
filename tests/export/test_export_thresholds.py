"""The context laws past their thresholds, in every framework. The zoo's defaults switch on at
8192–16384 tokens (Qwen-1's logn, Llama 4's and Mistral's staircases, dynamic YaRN, Grok-2 at
1024), beyond the short contexts of the export tests, where they are the identity. The same
classes with thresholds of 32–64 tokens cross them several times inside 192–256 tokens, so the
exported tables' position dependence is exercised: torch FlexAttention eager (float64, float32)
and compiled (float32), ``jax_attention`` (float64, float32) and the inputs of
``jax.nn.dot_product_attention`` (float32), each against the float64 numpy reference within the
export tests' tolerances (float64 1e-12, float32 2e-6), and each law shown to matter (the output
differs from unscaled attention by more than 1e-3)."""

import numpy as np
import pytest

from sia_theory import (
    DeepSeekMScale,
    DynamicYaRNTemperature,
    Grok2Temperature,
    Llama4Temperature,
    MultiplierProduct,
    QwenLogN,
)
from sia_theory.attention import attention_dense

SHORT = {
    "qwen-logn@32": QwenLogN(32),
    "yarn-dynamic@32": DynamicYaRNTemperature(32),
    "llama4@32": Llama4Temperature(32, 0.1),
    "mistral@32": Llama4Temperature(32, 0.1, offset=0),
    "grok2@64": Grok2Temperature(64),
    "mistral4@32": MultiplierProduct((DeepSeekMScale(128.0, 1.0), Llama4Temperature(32, 0.1,
                                                                                     offset=0))),
}
TOL = {np.float64: 1e-12, np.float32: 2e-6}


def qkv(dtype, length, n_heads=2, seed=3):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((1, n_heads, length, 16)).astype(dtype) for _ in range(3))


def reference(q, k, v, transform):
    return attention_dense(*(x.astype(np.float64) for x in (q, k, v)), score_mod=transform)


@pytest.mark.parametrize("name", sorted(SHORT))
def test_short_thresholds_are_crossed_and_matter(name):
    transform = SHORT[name]
    m = transform.multiplier(np.arange(1, 257))
    assert len(np.unique(np.round(m, 12))) >= 3, name  # several steps inside 256 tokens
    q, k, v = qkv(np.float64, 256)
    assert np.max(np.abs(reference(q, k, v, transform) - reference(q, k, v, None))) > 1e-3


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(SHORT))
def test_flex_eager_past_the_threshold(name, dtype):
    torch = pytest.importorskip("torch")
    flex = pytest.importorskip("torch.nn.attention.flex_attention")
    from sia_theory.export import causal_block_mask, flex_score_mod

    q, k, v = qkv(dtype, 256)
    mod = flex_score_mod(SHORT[name], 256, dtype=torch.float64 if dtype == np.float64 else None)
    out = flex.flex_attention(*(torch.from_numpy(x) for x in (q, k, v)), score_mod=mod,
                              block_mask=causal_block_mask(256)).numpy()
    assert np.max(np.abs(out - reference(q, k, v, SHORT[name]))) <= TOL[dtype]


@pytest.mark.slow
def test_flex_compiled_past_the_threshold():
    torch = pytest.importorskip("torch")
    flex = pytest.importorskip("torch.nn.attention.flex_attention")
    from sia_theory.export import causal_block_mask, flex_score_mod

    compiled = torch.compile(flex.flex_attention)  # float32: inductor's CPU FlexAttention
    q, k, v = qkv(np.float32, 256)
    for name, transform in SHORT.items():
        out = compiled(*(torch.from_numpy(x) for x in (q, k, v)),
                       score_mod=flex_score_mod(transform, 256),
                       block_mask=causal_block_mask(256)).numpy()
        assert np.max(np.abs(out - reference(q, k, v, transform))) <= TOL[np.float32], name


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(SHORT))
def test_jax_attention_past_the_threshold(name, dtype):
    jax = pytest.importorskip("jax")
    from sia_theory.export import jax_attention

    q, k, v = qkv(dtype, 192)
    with jax.enable_x64(dtype == np.float64):
        out = np.asarray(jax.jit(lambda q, k, v: jax_attention(q, k, v, SHORT[name]))(q, k, v))
    assert np.max(np.abs(out - reference(q, k, v, SHORT[name]))) <= TOL[dtype]


@pytest.mark.parametrize("name", sorted(SHORT))
def test_dot_product_attention_inputs_past_the_threshold(name):
    jax = pytest.importorskip("jax")
    from sia_theory.export import dot_product_attention_inputs

    q, k, v = qkv(np.float32, 192)
    scale, bias = dot_product_attention_inputs(SHORT[name], n_heads=2, length=192)
    layout = [jax.numpy.asarray(x).transpose(0, 2, 1, 3) for x in (q, k, v)]  # (B, T, N, D)
    out = jax.nn.dot_product_attention(layout[0] * scale, *layout[1:], bias=bias,
                                       is_causal=True)
    out = np.asarray(out).transpose(0, 2, 1, 3)
    assert np.max(np.abs(out - reference(q, k, v, SHORT[name]))) <= TOL[np.float32]
