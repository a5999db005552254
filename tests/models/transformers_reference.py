"""What the model tests share to hold the numpy model against transformers' own forward: a tiny
random checkpoint saved by transformers, its float64 logits, the relative error, and loading a
GGUF file written without a tokenizer. Imported by the test modules after their
``pytest.importorskip`` of torch and transformers."""

import warnings

import numpy as np

TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 128,
        "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "tie_word_embeddings": False,
        "rope_parameters": {"rope_type": "default", "rope_theta": 500.0},
        "pad_token_id": None, "bos_token_id": None, "eos_token_id": None}
"""The tiny config the architecture tests start from (2 layers, width 64, 4 query and 2
key-value heads, vocabulary 128; no special tokens, which the tiny vocabulary need not hold)."""


def saved_random_model(folder, config, model_cls, seed=0, gain_centre=1.0):
    """A ``model_cls`` of ``config`` (eager attention) with every weight drawn, so none is 0 or
    1: norm gains ``gain_centre + 0.2·N(0, 1)`` (Gemma stores ``w`` of its ``1 + w``: centre 0),
    biases ``0.5·N(0, 1)``, the rest ``N(0, 1)/√fan-in``; saved into ``folder`` (float32
    safetensors). Returns the float64 model, the reference."""
    import torch

    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = model_cls(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(gain_centre + 0.2 * torch.randn_like(p))
            elif name.endswith(".bias"):
                p.copy_(0.5 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) / p.shape[-1] ** 0.5)
    model.save_pretrained(folder)
    return model.to(torch.float64)


def reference(model, ids):
    """transformers' logits ``(T, vocab)`` of ``ids``."""
    import torch

    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0].numpy()


def relative_error(got, want):
    """``max |Δ logit| / max |logit|``."""
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


def load_without_tokenizer(path, dtype=np.float64):
    """``load_pretrained(path)`` of a GGUF file the tests write without a vocabulary: the model,
    after checking that the loader warned that it has no tokenizer."""
    from sia_theory.models import load_pretrained

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model, tokenizer = load_pretrained(path, dtype)
    assert tokenizer is None and any("tokenizer" in str(w.message) for w in caught)
    return model
