"""What the model tests share to hold the numpy model against transformers' own forward: a tiny
random checkpoint saved by transformers, its float64 logits, the relative error, and loading a
GGUF file written without a tokenizer. Imported by the test modules after their
``pytest.importorskip`` of torch and transformers."""

import warnings

import numpy as np


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
