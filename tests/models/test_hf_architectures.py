"""``load_pretrained(folder)`` of Llama (with a head_dim of its own), Mistral, Qwen2 and Qwen3
checkpoints that transformers itself writes (tiny, random: every weight, bias and norm gain
drawn, so none is 0 or 1), held against transformers' own forward (``*ForCausalLM``, eager
attention, float64).

transformers is pinned in the ``test`` extra; without it (or torch) these tests skip, saying so.

The floor: transformers' float64 model still computes RoPE's cos and sin from float32
frequencies and positions (``*RotaryEmbedding.forward``: ``inv_freq.float()``, autocast off), its
RMSNorm in float32 (``hidden_states.to(torch.float32)``) and the eager softmax in float32
(``softmax(..., dtype=torch.float32)``), so its logits carry float32 rounding (about 3e-7
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

torch = pytest.importorskip("torch", reason="torch (the model extra) is needed for the "
                            "transformers reference")
transformers = pytest.importorskip("transformers", reason="transformers (pinned in the test "
                                   "extra) is the reference forward")

RTOL = 1e-5
TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 128,
        "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "tie_word_embeddings": False,
        "rope_parameters": {"rope_type": "default", "rope_theta": 500.0}}
CASES = {  # model_type -> (config class, model class, what it adds to TINY)
    "llama": ("LlamaConfig", "LlamaForCausalLM", {"head_dim": 32}),  # a head_dim of its own
    "mistral": ("MistralConfig", "MistralForCausalLM", {"sliding_window": 16}),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", {}),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", {"head_dim": 32}),  # 4·32 ≠ hidden 64
}


def checkpoint(folder, kind, seed=0, **change):
    """A random ``kind`` model saved by transformers into ``folder`` (float32 safetensors);
    returns the float64 eager model, the reference."""
    config_cls, model_cls, extra = CASES[kind]
    config = getattr(transformers, config_cls)(**{**TINY, **extra, **change})
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = getattr(transformers, model_cls)(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):  # gains near 1, not 1
                p.copy_(1 + 0.2 * torch.randn_like(p))
            elif name.endswith(".bias"):
                p.copy_(0.5 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) / p.shape[-1] ** 0.5)
    model.save_pretrained(folder)
    return model.to(torch.float64)


def reference(model, ids):
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0].numpy()


def relative_error(got, want):
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


IDS = [int(i) for i in np.random.default_rng(1).integers(0, 128, 16)]


@pytest.mark.parametrize("kind", sorted(CASES))
def test_folder_logits_match_transformers_forward(tmp_path, kind):
    """Measured (transformers 5.24.0, torch CPU): llama 2.1e-7, mistral 3.1e-7, qwen2 1.4e-7,
    qwen3 1.7e-7 relative, the float32 floor of transformers' RoPE, RMSNorm and softmax (module
    docstring)."""
    want = reference(checkpoint(tmp_path, kind), IDS)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    assert relative_error(model.logits(IDS), want) <= RTOL
    if kind == "qwen3":
        assert model.config.head_dim == 32 and model.config.d_model == 64


@pytest.mark.parametrize("kind", sorted(CASES))
def test_float64_reference_agrees_to_rounding(tmp_path, kind, monkeypatch):
    """transformers' forward with its float32 RMSNorm, RoPE tables and softmax computed in
    float64 instead (the same formulas): measured 1.0e-15 (mistral), 9.4e-16 (qwen2), 1.4e-15
    (qwen3) relative (llama: held to the same 1e-12), so the 3e-7 above is transformers'
    float32 rounding, not a difference of the model."""
    softmax = torch.nn.functional.softmax
    monkeypatch.setattr(torch.nn.functional, "softmax",
                        lambda x, dim=None, dtype=None, **kw: softmax(x, dim=dim))
    reference_model = checkpoint(tmp_path, kind)
    theta = TINY["rope_parameters"]["rope_theta"]

    def norm64(self, x):
        return self.weight * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True)
                                            + self.variance_epsilon)

    def rope64(self, x, position_ids):
        dim = 2 * self.inv_freq.numel()
        angles = position_ids[0, :, None].double() * theta ** (
            -torch.arange(0, dim, 2, dtype=torch.float64) / dim)  # (T, D/2)
        emb = torch.cat([angles, angles], -1)[None]  # (1, T, D)
        return emb.cos() * self.attention_scaling, emb.sin() * self.attention_scaling

    for module in reference_model.modules():
        name = type(module).__name__
        if name.endswith("RMSNorm"):
            module.forward = norm64.__get__(module)
        elif name.endswith("RotaryEmbedding"):
            module.forward = rope64.__get__(module)
    model, _ = load_pretrained(str(tmp_path), np.float64)
    assert relative_error(model.logits(IDS), reference(reference_model, IDS)) <= 1e-12


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


LONG = [int(i) for i in np.random.default_rng(2).integers(0, 128, 40)]
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
    miss transformers by far more than RTOL at 40 tokens."""
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
    ("mistral", {"layer_types": ["full_attention", "sliding_attention"]},
     "sliding_attention in layer_types"),
    ("qwen3", {"layer_types": ["full_attention", "chunked_attention"]}, "layer_types"),
])
def test_unimplemented_settings_are_refused_by_name(tmp_path, kind, change, match):
    config = getattr(transformers, CASES[kind][0])(**{**TINY, **CASES[kind][2]}).to_dict()
    with pytest.raises(ValueError, match=match):
        hf_config({**config, **change})


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
