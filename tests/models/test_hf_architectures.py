"""``load_pretrained(folder)`` of Llama (with a head_dim of its own), Mistral, Qwen2, Qwen3,
Phi-3, OLMo-2, Granite, Gemma-2 and Gemma-3 (text) checkpoints that transformers itself writes
(tiny, random: every weight, bias and norm gain drawn, so none is 0 or 1), held against
transformers' own forward (``*ForCausalLM``, eager attention, float64), with negative controls
(a deliberately wrong variant misses by far more than the tolerance) and the settings the model
does not implement refused by key.

transformers is pinned in the ``test`` extra; without it (or torch) these tests skip, saying so.

The floor: transformers' float64 model still computes RoPE's cos and sin from float32
frequencies and positions (``*RotaryEmbedding.forward``: ``inv_freq.float()``, autocast off), its
RMSNorm in float32 (``hidden_states.to(torch.float32)``) and the eager softmax in float32
(``softmax(..., dtype=torch.float32)``), so its logits carry float32 rounding (1e-7 to 4e-6
relative here); the model here runs float64 throughout. The error is
``max |Δ logit| / max |logit|``, held to ``RTOL = 1e-5``; the checkpoints are saved in float32,
so both sides read the same weights. With those three float32 islands replaced by float64 in
transformers (:func:`test_float64_reference_agrees_to_rounding`), the two agree to 1e-12.
"""

import json

import numpy as np
import pytest

from sia_theory.models import load_pretrained
from sia_theory.models.hf_folder import hf_config
from tests.models.transformers_reference import TINY, reference, relative_error, saved_random_model

torch = pytest.importorskip("torch", reason="torch (the model extra) is needed for the "
                            "transformers reference")
transformers = pytest.importorskip("transformers", reason="transformers (pinned in the test "
                                   "extra) is the reference forward")

RTOL = 1e-5
CASES = {  # model_type -> (config class, model class, what it adds to TINY)
    "llama": ("LlamaConfig", "LlamaForCausalLM", {"head_dim": 32}),  # a head_dim of its own
    "mistral": ("MistralConfig", "MistralForCausalLM", {"sliding_window": 16}),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", {}),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", {"head_dim": 32}),  # 4·32 ≠ hidden 64
    "phi3": ("Phi3Config", "Phi3ForCausalLM", {}),
    "olmo2": ("Olmo2Config", "Olmo2ForCausalLM", {}),
    "granite": ("GraniteConfig", "GraniteForCausalLM", {
        "embedding_multiplier": 3.0, "residual_multiplier": 0.4, "logits_scaling": 2.5,
        "attention_multiplier": 0.07}),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", {  # layer 0 slides, layer 1 is full
        "head_dim": 32, "query_pre_attn_scalar": 24, "sliding_window": 6,
        "attn_logit_softcapping": 2.0, "final_logit_softcapping": 3.0,
        "tie_word_embeddings": True}),
    "gemma3_text": ("Gemma3TextConfig", "Gemma3ForCausalLM", {
        "head_dim": 32, "query_pre_attn_scalar": 24, "sliding_window": 6,
        "layer_types": ["sliding_attention", "full_attention"],
        "attn_logit_softcapping": 2.0,  # read by the config, not applied by Gemma3Attention
        "final_logit_softcapping": 3.0, "tie_word_embeddings": True,
        "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 500.0},
                            "sliding_attention": {"rope_type": "default", "rope_theta": 40.0}}}),
}


def checkpoint(folder, kind, seed=0, **change):
    """A random ``kind`` model saved by transformers into ``folder`` (float32 safetensors);
    returns the float64 eager model, the reference."""
    config_cls, model_cls, extra = CASES[kind]
    config = getattr(transformers, config_cls)(**{**TINY, **extra, **change})
    return saved_random_model(folder, config, getattr(transformers, model_cls), seed)


IDS = [int(i) for i in np.random.default_rng(1).integers(0, 128, 16)]
LONG = [int(i) for i in np.random.default_rng(2).integers(0, 128, 40)]


@pytest.mark.parametrize("kind", sorted(CASES))
def test_folder_logits_match_transformers_forward(tmp_path, kind):
    """Measured (transformers 5.24.0, torch CPU), relative, at 16 / 40 tokens: llama 2.1e-7 /
    3.9e-7, mistral 3.1e-7 / 4.0e-7, qwen2 1.4e-7 / 2.2e-7, qwen3 1.7e-7 / 4.8e-7, phi3 2.6e-7 /
    3.4e-7, olmo2 2.3e-7 / 6.0e-7, granite 1.1e-7 / 1.1e-7, gemma2 2.0e-6 / 1.2e-6, gemma3_text
    1.9e-6 / 4.3e-6: the float32 floor of transformers' RoPE, RMSNorm and softmax (module
    docstring); Gemma's is higher because its RMSNorm runs wholly in float32, gain included,
    on embeddings scaled by √d."""
    reference_model = checkpoint(tmp_path, kind)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    for ids in (IDS, LONG):  # LONG: 40 tokens, beyond Gemma's sliding window of 6
        assert relative_error(model.logits(ids), reference(reference_model, ids)) <= RTOL
    if kind == "qwen3":
        assert model.config.head_dim == 32 and model.config.d_model == 64


@pytest.mark.parametrize("kind", sorted(CASES))
def test_float64_reference_agrees_to_rounding(tmp_path, kind, monkeypatch):
    """transformers' forward with its float32 RMSNorm, RoPE tables and softmax computed in
    float64 instead (the same formulas; Gemma's gain ``1 + w`` is still formed in float32, as
    the model here forms it): measured 1.0e-15 (mistral), 9.4e-16 (qwen2), 1.4e-15 (qwen3),
    and at most 2e-15 for phi3, olmo2, granite, gemma2, gemma3_text relative (llama: held to
    the same 1e-12), so the 1e-7 to 4e-6 above is transformers' float32 rounding, not a
    difference of the model."""
    softmax = torch.nn.functional.softmax
    monkeypatch.setattr(torch.nn.functional, "softmax",
                        lambda x, dim=None, dtype=None, **kw: softmax(x, dim=dim))
    reference_model = checkpoint(tmp_path, kind)

    def norm64(self, x):
        eps = getattr(self, "variance_epsilon", getattr(self, "eps", None))
        gain = (1.0 + self.weight.float()).double() if type(self).__name__.startswith(
            "Gemma") else self.weight  # Gemma2RMSNorm: (1 + w) in float32
        return gain * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)

    def rope64(self, x, position_ids, layer_type=None):
        rope = self.config.rope_parameters
        theta = (rope[layer_type] if layer_type else rope)["rope_theta"]
        scaling = (getattr(self, f"{layer_type}_attention_scaling") if layer_type
                   else self.attention_scaling)
        dim = self.config.head_dim if layer_type else 2 * self.inv_freq.numel()
        angles = position_ids[0, :, None].double() * theta ** (
            -torch.arange(0, dim, 2, dtype=torch.float64) / dim)  # (T, D/2)
        emb = torch.cat([angles, angles], -1)[None]  # (1, T, D)
        return emb.cos() * scaling, emb.sin() * scaling

    for module in reference_model.modules():
        name = type(module).__name__
        if name.endswith("RMSNorm"):
            module.forward = norm64.__get__(module)
        elif name.endswith("RotaryEmbedding"):
            module.forward = rope64.__get__(module)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    for ids in (IDS, LONG):  # LONG: beyond the sliding windows
        assert relative_error(model.logits(ids), reference(reference_model, ids)) <= 1e-12


def test_qwen2_biases_and_qwen3_norms_are_used(tmp_path):
    """Negative controls: the model without Qwen2's q/k/v biases, or with Qwen3's q/k norm
    gains left in llama.cpp's interleaved order, misses transformers by far more than RTOL."""
    want = reference(checkpoint(tmp_path / "q2", "qwen2"), IDS)
    model, _ = load_pretrained(str(tmp_path / "q2"), np.float64)
    for layer in model.layers:
        layer.b_qkv = None
    assert relative_error(model.logits(IDS), want) > 1e-3
    want = reference(checkpoint(tmp_path / "q3", "qwen3"), IDS)
    model, _ = load_pretrained(str(tmp_path / "q3"), np.float64)
    for layer in model.layers:
        half = layer.q_norm.size // 2
        layer.q_norm = np.stack([layer.q_norm[:half], layer.q_norm[half:]], 1).ravel()
    assert relative_error(model.logits(IDS), want) > 1e-3


WINDOWS = {  # name -> (model_type, change, sliding window, the layers that slide)
    "mistral": ("mistral", {"sliding_window": 6}, 6, (0, 1)),
    "qwen2 max_window_layers": ("qwen2", {"use_sliding_window": True, "sliding_window": 7,
                                          "max_window_layers": 1}, 7, (1,)),
    "qwen3 layer_types": ("qwen3", {"use_sliding_window": True, "sliding_window": 5,
                                    "layer_types": ["sliding_attention", "full_attention"]},
                          5, (0,)),
}


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_sliding_window_beyond_the_window_matches_transformers(tmp_path, name):
    """40 tokens against windows of 5-7 (transformers keeps key j for query i when i − j <
    sliding_window: ``masking_utils.py``, ``sliding_window_overlay``), in the layers transformers
    makes sliding. Measured: mistral 5.3e-7, qwen2 2.2e-7, qwen3 4.8e-7 relative (the float32
    floor of the module docstring)."""
    kind, change, window, sliding = WINDOWS[name]
    want = reference(checkpoint(tmp_path, kind, **change), LONG)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    assert model.config.sliding_window == window
    assert tuple(i for i in range(2) if model.config.window_of(i)) == sliding
    assert relative_error(model.logits(LONG), want) <= RTOL


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_sliding_window_in_kv_cache_decoding(tmp_path, name):
    """A prefill of 9 tokens, then one token at a time against a longer cache up to 40: each
    step's logits match transformers' full forward at that position (≤ RTOL)."""
    kind, change, _, _ = WINDOWS[name]
    want = reference(checkpoint(tmp_path, kind, **change), LONG)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    cache = model.prefill(LONG[:9])
    got = [cache.last_logits]
    for token in LONG[9:]:
        got.append(model.continue_(cache, [token])[0])
    assert relative_error(np.array(got), want[8:]) <= RTOL


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_a_wrong_window_misses_transformers(tmp_path, name):
    """Negative controls: the same weights with no window, or with the window one wider,
    miss transformers by far more than RTOL at 40 tokens (measured 0.14 to 1.4 relative)."""
    import dataclasses

    kind, change, window, _ = WINDOWS[name]
    want = reference(checkpoint(tmp_path, kind, **change), LONG)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    for wrong in (None, window + 1):
        model.config = dataclasses.replace(model.config, sliding_window=wrong)
        assert relative_error(model.logits(LONG), want) > 1e-3


@pytest.mark.parametrize("change, window", [
    ({}, None),  # use_sliding_window false: transformers sets sliding_window to None
    ({"use_sliding_window": True, "sliding_window": 8, "max_window_layers": 1}, 8),
    ({"use_sliding_window": True, "sliding_window": 8, "max_window_layers": 2}, None),  # no layer
])
def test_qwen_sliding_window_read_as_transformers_sets_layer_types(change, window):
    config = transformers.Qwen2Config(**TINY, **change)
    assert ("sliding_attention" in config.layer_types) == (window is not None)
    assert hf_config(config.to_dict()).sliding_window == window


@pytest.mark.parametrize("kind, change, match", [
    ("qwen3", {"attention_bias": True}, "attention_bias=True"),
    ("qwen2", {"hidden_act": "gelu"}, "hidden_act 'gelu'"),
    ("qwen3", {"layer_types": ["full_attention", "chunked_attention"]}, "layer_types"),
])
def test_unimplemented_settings_are_refused_by_name(tmp_path, kind, change, match):
    config = getattr(transformers, CASES[kind][0])(**{**TINY, **CASES[kind][2]}).to_dict()
    with pytest.raises(ValueError, match=match):
        hf_config({**config, **change})


def test_mistral_ignores_layer_types_as_transformers_does():
    """MistralAttention takes config.sliding_window on every layer whatever layer_types says
    (transformers warns "Detected Mistral model with layer_types"): so does the reader."""
    config = transformers.MistralConfig(**{**TINY, **CASES["mistral"][2]}).to_dict()
    read = hf_config({**config, "layer_types": ["full_attention", "full_attention"]})
    assert read.sliding_window == 16 and read.layer_types is None
    assert [read.window_of(i) for i in range(2)] == [16, 16]


def test_qwen3_without_head_dim_and_misshapen_tensors_are_refused(tmp_path):
    checkpoint(tmp_path, "qwen3")
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "head_dim": None}))
    with pytest.raises(ValueError, match="lacks head_dim"):
        load_pretrained(str(tmp_path))
    (tmp_path / "config.json").write_text(json.dumps({**config, "head_dim": 16}))
    with pytest.raises(ValueError, match=r"model\.safetensors: tensor 'model\.layers\.0\.self_"
                       r"attn\.q_proj\.weight' has shape \(128, 64\); expected \(64, 64\) "
                       r"\(num_attention_heads 4 × head_dim 16"):
        load_pretrained(str(tmp_path))


def test_non_finite_weights_and_broken_json_are_refused_naming_the_file(tmp_path):
    """A NaN in one tensor is refused naming the file and the tensor (it would make every logit
    NaN); a config.json that is not JSON is refused naming its path, by the folder loader and by
    from_hf_config."""
    from safetensors.numpy import load_file, save_file

    from sia_theory.models.hf_config import from_hf_config

    checkpoint(tmp_path, "qwen2")
    weights = load_file(tmp_path / "model.safetensors")
    name = "model.layers.1.self_attn.k_proj.bias"
    weights[name] = weights[name].copy()
    weights[name][3] = np.nan
    save_file(weights, tmp_path / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ValueError, match=r"model\.safetensors: tensor 'model\.layers\.1\.self_"
                       r"attn\.k_proj\.bias' holds 1 non-finite"):
        load_pretrained(str(tmp_path))
    (tmp_path / "config.json").write_text('{"model_type": "qwen2", ')
    with pytest.raises(ValueError, match=r"config\.json is not valid JSON"):
        load_pretrained(str(tmp_path))
    with pytest.raises(ValueError, match=r"config .*config\.json is not valid JSON"):
        from_hf_config(tmp_path / "config.json")


def reference_steps(model, ids, prefix):
    """transformers' own KV-cache decoding: a forward of ``ids[:prefix]`` with ``use_cache``,
    then one token at a time with the returned cache; the logits at positions
    ``prefix − 1 ..``."""
    with torch.no_grad():
        out = model(torch.tensor([ids[:prefix]]), use_cache=True)
        logits, cache = [out.logits[0, -1].numpy()], out.cache
        for token in ids[prefix:]:
            out = model(torch.tensor([[token]]), cache=cache, use_cache=True)
            logits.append(out.logits[0, -1].numpy())
            cache = out.cache
    return np.array(logits)


def decode(model, ids, prefix):
    cache = model.prefill(ids[:prefix])
    return np.array([cache.last_logits] + [model.continue_(cache, [t])[0] for t in ids[prefix:]])


LONGROPE = {  # Phi-3's LongRoPE: short factors up to 16 positions, long ones beyond
    "rope_parameters": {"rope_type": "longrope", "rope_theta": 500.0,
                        "short_factor": [1.0, 1.1, 1.3, 1.6, 2.0, 2.5, 3.0, 3.5],
                        "long_factor": [1.0, 1.5, 2.5, 4.0, 6.0, 8.0, 11.0, 14.0]},
    "original_max_position_embeddings": 16}


@pytest.mark.parametrize("rope", ["default", "longrope"])
def test_phi3_with_and_without_longrope_beyond_the_original_context(tmp_path, rope):
    """Phi-3 (fused qkv_proj and gate_up_proj split at load) at 16 tokens (= the original
    context: short factors) and 40 (long factors, and transformers' attention factor
    √(1 + ln 4 / ln 16) on cos and sin, read as a logit temperature), prefill and KV-cache
    decoding across the switch (transformers recomputes the frequencies per forward call from
    its largest position, so the keys cached before the switch keep the short ones, here too).
    Measured: default 2.6e-7 / 3.4e-7, longrope 1.8e-7 / 6.1e-7 relative; decoding 3.3e-7
    (default), 7.2e-7 (longrope)."""
    change = LONGROPE if rope == "longrope" else {}
    reference_model = checkpoint(tmp_path, "phi3", **change)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    for ids in (IDS, LONG):
        assert relative_error(model.logits(ids), reference(reference_model, ids)) <= RTOL
    got, want = decode(model, LONG, 9), reference_steps(reference_model, LONG, 9)
    assert relative_error(got, want) <= RTOL
    if rope == "longrope":  # the wrong factors at 40 tokens: the short ones throughout
        from sia_theory.attention import LongRoPE

        params = LONGROPE["rope_parameters"]
        model.default_position = LongRoPE(params["short_factor"], params["short_factor"], 16,
                                          500.0)
        assert relative_error(model.logits(LONG), reference(reference_model, LONG)) > 1e-3


def test_phi3_fused_split_order_matters(tmp_path):
    """Negative control: gate and up swapped (``Phi3MLP``: ``gate, up = chunk(2)``) misses
    transformers by far more than RTOL (measured 0.49 relative)."""
    want = reference(checkpoint(tmp_path, "phi3"), IDS)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    ffn = model.config.ffn
    for layer in model.layers:
        layer.w_gate_up = np.ascontiguousarray(np.concatenate(
            [layer.w_gate_up[:, ffn:], layer.w_gate_up[:, :ffn]], axis=1))
    assert relative_error(model.logits(IDS), want) > 1e-3


def test_olmo2_norms_are_where_transformers_puts_them(tmp_path):
    """Negative controls: OLMo-2 without its post-norms, or with its q/k norm taken per head
    instead of over the whole projection (``Olmo2Attention``: ``q_norm`` over
    ``num_attention_heads × head_dim``), misses by far more than RTOL (measured 1.1 and 0.37
    relative)."""
    want = reference(checkpoint(tmp_path, "olmo2"), IDS)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    assert all(layer.attn_norm is None and layer.ffn_norm is None for layer in model.layers)
    saved = [(layer.post_attn_norm, layer.q_norm, layer.k_norm) for layer in model.layers]
    for layer in model.layers:
        layer.post_attn_norm = None
    assert relative_error(model.logits(IDS), want) > 1e-3
    dim = model.config.head_dim
    for layer, (post, q_norm, k_norm) in zip(model.layers, saved, strict=True):
        layer.post_attn_norm = post
        layer.q_norm, layer.k_norm = q_norm[:dim], k_norm[:dim]  # one head's gains, per head
    assert relative_error(model.logits(IDS), want) > 1e-3


def test_granite_multipliers_are_read(tmp_path):
    """Granite's attention_multiplier reaches the model through from_hf_config's transform: a
    temperature 0.07·√16 = 0.28 on S = q·k/√D. Negative controls: each multiplier left at 1
    misses by far more than RTOL (measured 0.35 to 1.5 relative)."""
    import dataclasses

    from sia_theory.zoo import Temperature

    want = reference(checkpoint(tmp_path, "granite"), IDS)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    assert isinstance(model.default_score_mod, Temperature)
    assert model.default_score_mod.c == pytest.approx(0.28, rel=1e-12)
    c = model.config
    assert (c.embedding_scale, c.residual_scale, c.logit_divisor) == (3.0, 0.4, 2.5)
    for change in ({"embedding_scale": 1.0}, {"residual_scale": 1.0}, {"logit_divisor": 1.0}):
        model.config = dataclasses.replace(c, **change)
        assert relative_error(model.logits(IDS), want) > 1e-3
    model.config = c
    assert relative_error(model.logits(IDS, score_mod=Temperature(1.0)), want) > 1e-3


@pytest.mark.parametrize("kind", ["gemma2", "gemma3_text"])
def test_gemma_kv_cache_decoding_matches_transformers_decoding(tmp_path, kind):
    """Prefill 9 tokens, then one at a time to 40 (the sliding layer's window of 6 moves):
    transformers' own cached decoding, ≤ RTOL (measured gemma2 1.2e-6, gemma3_text 4.4e-6)."""
    reference_model = checkpoint(tmp_path, kind)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    assert relative_error(decode(model, LONG, 9), reference_steps(reference_model, LONG, 9)) \
        <= RTOL


@pytest.mark.parametrize("kind, wrong", [
    ("gemma2", "norm without +1"), ("gemma2", "no attention softcap"),
    ("gemma2", "no final softcap"), ("gemma2", "no window"), ("gemma2", "embeddings unscaled"),
    ("gemma3_text", "norm without +1"), ("gemma3_text", "attention softcap applied"),
    ("gemma3_text", "one RoPE base"), ("gemma3_text", "no window"),
])
def test_gemma_wrong_variants_miss_transformers(tmp_path, kind, wrong):
    """Negative controls: each piece of Gemma removed or changed misses transformers by far
    more than RTOL at 40 tokens (measured 1.3 to 1.9 relative; so the comparisons above can
    fail)."""
    import dataclasses

    want = reference(checkpoint(tmp_path, kind), LONG)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    c = model.config
    if wrong == "norm without +1":
        for layer in model.layers:
            for name in ("attn_norm", "ffn_norm", "post_attn_norm", "post_ffn_norm"):
                setattr(layer, name, getattr(layer, name) - 1)
    elif wrong == "no attention softcap":
        model.config = dataclasses.replace(c, attn_softcap=None)
    elif wrong == "attention softcap applied":  # as Gemma-2 would, with the config's 2.0
        model.config = dataclasses.replace(c, attn_softcap=2.0)
    elif wrong == "no final softcap":
        model.config = dataclasses.replace(c, final_softcap=None)
    elif wrong == "no window":
        model.config = dataclasses.replace(c, sliding_window=None)
    elif wrong == "embeddings unscaled":
        model.config = dataclasses.replace(c, embedding_scale=1.0)
    elif wrong == "one RoPE base":  # the full layers' base 500 on the sliding layer too
        model.default_position = model.layer_defaults[1].position
    assert relative_error(model.logits(LONG), want) > 1e-3


def test_gemma3_layer_defaults_and_a_v4_config(tmp_path):
    """Gemma-3's sliding layer rotates with its own base (40 here), the full layer with 500;
    the same checkpoint with a transformers-4 style config (``rope_theta`` and
    ``rope_local_base_freq`` in place of the per-type ``rope_parameters``) loads to the same
    logits."""
    from sia_theory.attention import RoPE

    reference_model = checkpoint(tmp_path, "gemma3_text")
    want = reference(reference_model, LONG)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    assert [d.position for d in model.layer_defaults] == [RoPE(40.0), RoPE(500.0)]
    assert model.config.layer_types == ("sliding_attention", "full_attention")
    assert model.config.attn_softcap is None and model.config.final_softcap == 3.0
    config = json.loads((tmp_path / "config.json").read_text())
    config.pop("rope_parameters")
    config.update({"rope_theta": 500.0, "rope_local_base_freq": 40.0})
    (tmp_path / "config.json").write_text(json.dumps(config))
    model, _ = load_pretrained(str(tmp_path), np.float64)
    assert relative_error(model.logits(LONG), want) <= RTOL


@pytest.mark.parametrize("kind", sorted(CASES))
def test_hf_shapes_name_every_tensor_transformers_saves(tmp_path, kind):
    """hf_shapes lists exactly the tensors transformers' model has (``lm_head.weight`` besides
    when tied), each with its shape."""
    from sia_theory.models.hf_folder import hf_shapes

    reference_model = checkpoint(tmp_path, kind)
    state = {k: tuple(v.shape) for k, v in reference_model.state_dict().items()
             if not k.endswith("inv_freq") and "embed_scale" not in k}
    config = json.loads((tmp_path / "config.json").read_text())
    shapes = {k: shape for k, (_, shape, _) in hf_shapes(hf_config(config), kind).items()}
    if kind in ("gemma2", "gemma3_text"):  # tied: lm_head is the embedding
        assert "lm_head.weight" in state
    assert shapes == state


@pytest.mark.parametrize("kind, change, match", [
    ("phi3", {"rope_parameters": {"rope_type": "default", "rope_theta": 500.0,
                                  "partial_rotary_factor": 0.5}}, "partial_rotary_factor 0.5"),
    ("phi3", {"hidden_act": "gelu"}, "hidden_act 'gelu'"),
    ("olmo2", {"attention_bias": True}, "attention_bias=True"),
    ("granite", {"mlp_bias": True}, "mlp_bias=True"),
    ("granite", {"attention_bias": True}, "attention_bias=True"),
    ("granite", {"residual_multiplier": 0.0}, "residual_multiplier must be a finite real"),
    ("gemma2", {"hidden_activation": "gelu"}, "hidden_activation 'gelu'"),
    ("gemma2", {"attention_bias": True}, "attention_bias=True"),
    ("gemma2", {"head_dim": None}, "lacks head_dim .*takes 256"),
    ("gemma3_text", {"use_bidirectional_attention": True}, "use_bidirectional_attention=True"),
    ("gemma3_text", {"layer_types": ["sliding_attention", "chunked_attention"]}, "layer_types"),
])
def test_new_architectures_refuse_what_the_model_does_not_implement(kind, change, match):
    config = getattr(transformers, CASES[kind][0])(**{**TINY, **CASES[kind][2]}).to_dict()
    with pytest.raises(ValueError, match=match):
        hf_config({**config, **change})


@pytest.mark.parametrize("kind, edit, match", [
    ("phi3", "shape", r"tensor 'model\.layers\.0\.self_attn\.qkv_proj\.weight' has shape "
                      r"\(128, 64\); expected \(96, 64\)"),
    ("gemma3_text", "missing", r"lacks the tensor 'model\.layers\.1\.self_attn\.k_norm\.weight'"),
    ("olmo2", "extra", r"does not use: model\.layers\.0\.input_layernorm\.weight"),
    ("granite", "untied", r"lacks the tensor 'lm_head\.weight'.*untied head"),
])
def test_missing_extra_and_misshapen_tensors_are_refused_naming_them(tmp_path, kind, edit,
                                                                     match):
    from safetensors.numpy import load_file, save_file

    checkpoint(tmp_path, kind)
    path = tmp_path / "model.safetensors"
    weights = load_file(path)
    if edit == "shape":  # a config with 2 key-value heads of 16 for 4 written ones
        config = json.loads((tmp_path / "config.json").read_text())
        (tmp_path / "config.json").write_text(json.dumps({**config, "num_key_value_heads": 1}))
    elif edit == "missing":
        del weights["model.layers.1.self_attn.k_norm.weight"]
    elif edit == "extra":
        weights["model.layers.0.input_layernorm.weight"] = np.ones(64, np.float32)
    elif edit == "untied":
        del weights["lm_head.weight"]
    save_file(weights, path, metadata={"format": "pt"})
    with pytest.raises(ValueError, match=match):
        load_pretrained(str(tmp_path))


def test_an_explicit_score_mod_keeps_the_window_and_the_cap(tmp_path):
    """score_mod= replaces the logit law (Gemma's q·k scale included) in every layer, while the
    soft cap and the sliding window stay the architecture's: the default law passed back
    reproduces transformers; NoScale (1/√D in place of query_pre_attn_scalar^-1/2) does not."""
    import dataclasses

    from sia_theory.transforms import NoScale
    from sia_theory.zoo import Temperature

    want = reference(checkpoint(tmp_path, "gemma2"), LONG)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    law = model.default_score_mod
    assert isinstance(law, Temperature) and law.c == pytest.approx((32 / 24) ** 0.5, rel=1e-12)
    assert relative_error(model.logits(LONG, score_mod=law), want) <= RTOL
    assert relative_error(model.logits(LONG, score_mod=NoScale()), want) > 1e-3
    bare = model.logits(LONG, score_mod=law)
    model.config = dataclasses.replace(model.config, attn_softcap=None, sliding_window=None)
    assert relative_error(model.logits(LONG, score_mod=law), bare) > 1e-3


@pytest.mark.parametrize("kind", sorted(CASES))
def test_float32_model_against_the_float64_reference(tmp_path, kind):
    """The model computing in float32 (the default dtype) at 40 tokens, against transformers'
    float64 forward: measured 4.3e-7 (granite) to 9.4e-6 (gemma3_text) relative; held to
    3e-5."""
    want = reference(checkpoint(tmp_path, kind), LONG)
    model, _ = load_pretrained(str(tmp_path))
    got = model.logits(LONG)
    assert got.dtype == np.float32
    assert relative_error(got.astype(np.float64), want) <= 3e-5


def test_gemma3_linear_scaling_on_the_full_layers(tmp_path):
    """Gemma-3 as shipped (4B and up): linear RoPE scaling (factor 8) on the full layers only,
    the sliding layers unscaled with their own base. Measured 1.4e-6 / 4.2e-6 relative at 16 /
    40 tokens."""
    from sia_theory.attention import LinearRoPE, RoPE

    rope = {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 500.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 40.0}}
    reference_model = checkpoint(tmp_path, "gemma3_text", rope_parameters=rope)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    assert [d.position for d in model.layer_defaults] == [RoPE(40.0), LinearRoPE(8.0, 500.0)]
    for ids in (IDS, LONG):
        assert relative_error(model.logits(ids), reference(reference_model, ids)) <= RTOL
