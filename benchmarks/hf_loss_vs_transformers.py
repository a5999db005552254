"""SmolLM2-135M loaded by path (a Hugging Face folder) beside transformers' LlamaForCausalLM: the
mean next-token loss of both on the same fixed tokens, and their difference.

The folder (``config.json`` + ``model.safetensors``, what ``save_pretrained`` writes) is made
from the registry model's float32 weights (the dequantised GGUF file of ``load_pretrained
("smollm2-135m")``): tensors renamed to transformers' names and the ``q``/``k`` rows put back in
transformers' half-split RoPE order (:func:`sia_theory.models.llama.unpermute_rope_rows`, the
inverse of llama.cpp's converter permutation). Then

* ``sia_theory.load_pretrained(folder)`` (:mod:`sia_theory.models.hf_folder`, float32 and
  float64), and
* ``transformers.LlamaForCausalLM.from_pretrained(folder)`` (float32 and float64, eager
  attention, its ``loss`` from ``labels``)

score the same tokens: the first ``--tokens`` tokens of each of ``--docs`` prose documents of
the model studies (:func:`sia_theory.models.corpus.prose_documents`, the sorted
``pydoc_data.topics`` entries, encoded by the registry tokenizer). The registry (GGUF) route's
loss is recorded beside them.

Needs transformers (not a dependency of sia-theory; CI does not run this script). Run::

    PYTHONPATH=/path/to/transformers:$PWD python benchmarks/hf_loss_vs_transformers.py

It writes ``figures/hf_loss_vs_transformers.json`` (``--out``).
"""

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sia_theory import load_pretrained
from sia_theory.models.corpus import prose_documents
from sia_theory.models.hf_folder import tensor_names
from sia_theory.models.llama import LlamaConfig, unpermute_rope_rows
from sia_theory.models.loader import load_contents


def write_folder(folder: Path) -> LlamaConfig:
    """The registry model as a transformers LLaMA folder (module docstring)."""
    from safetensors.numpy import save_file  # optional dependency (the model extra)

    contents, _ = load_contents("smollm2-135m")
    config = LlamaConfig.from_metadata(contents.metadata)
    names = tensor_names(config.n_layers)
    tensors = {}
    for name, weight in contents.tensors.items():
        weight = np.asarray(weight, dtype=np.float32)
        if name.endswith(("attn_q.weight", "attn_k.weight")):
            heads = config.n_heads if "attn_q" in name else config.n_kv_heads
            weight = unpermute_rope_rows(weight, heads)
        tensors[names[name]] = np.ascontiguousarray(weight)
    tied = "lm_head.weight" not in tensors
    folder.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": config.d_model, "intermediate_size": config.ffn,
        "num_hidden_layers": config.n_layers, "num_attention_heads": config.n_heads,
        "num_key_value_heads": config.n_kv_heads, "rms_norm_eps": config.rms_eps,
        "rope_theta": config.rope_base, "rope_scaling": None,
        "max_position_embeddings": config.context_length, "vocab_size": config.vocab_size,
        "tie_word_embeddings": tied, "hidden_act": "silu", "attention_bias": False,
        "mlp_bias": False, "torch_dtype": "float32"}, indent=1))
    return config


def mean_loss(logits, ids) -> float:
    """Mean ``−log softmax(logits[t])[ids[t+1]]`` over ``t``, in float64."""
    z = np.asarray(logits[:-1], dtype=np.float64)
    z = z - z.max(-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return float(-log_p[np.arange(len(ids) - 1), ids[1:]].mean())


def float64_internals(torch, llama):
    """transformers 4.4x computes RoPE's angles (``inv_freq`` and ``position·inv_freq``) and
    RMSNorm in float32 even in a float64 model (``LlamaRotaryEmbedding.forward``,
    ``LlamaRMSNorm.forward``): the same two steps in the model's dtype, to see whether those
    roundings are the whole difference."""

    def rms_norm(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True)
                                              + self.variance_epsilon))

    def rotary(self, x, position_ids):
        dim = self.inv_freq.numel() * 2
        inv = 1.0 / self.config.rope_theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
        freqs = position_ids[..., None].to(torch.float64) * inv  # (B, T, D/2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return ((emb.cos() * self.attention_scaling).to(x.dtype),
                (emb.sin() * self.attention_scaling).to(x.dtype))

    llama.LlamaRMSNorm.forward = rms_norm
    llama.LlamaRotaryEmbedding.forward = rotary


def transformers_route(folder, docs, dtype_name):
    """transformers' loss (its ``labels`` route) and logits per document; ``"float64-exact"``
    is float64 with :func:`float64_internals`."""
    import torch  # optional dependency (the torch extra)
    from transformers import LlamaForCausalLM  # not a dependency of sia-theory
    from transformers.models.llama import modeling_llama

    if dtype_name == "float64-exact":
        float64_internals(torch, modeling_llama)
    dtype = {"float32": torch.float32, "float64": torch.float64,
             "float64-exact": torch.float64}[dtype_name]
    model = LlamaForCausalLM.from_pretrained(str(folder), torch_dtype=dtype,
                                             attn_implementation="eager").eval()
    out = []
    with torch.no_grad():
        for ids in docs:
            x = torch.tensor(ids[None], dtype=torch.long)
            res = model(input_ids=x, labels=x)
            out.append((float(res.loss), res.logits[0].double().numpy()))
    return out


def main(n_tokens=512, n_docs=2, out="figures/hf_loss_vs_transformers.json", folder=None):
    import torch
    import transformers

    torch.set_num_threads(1)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(folder or tmp) / "smollm2-135m-hf"
        write_folder(folder)
        registry, tokenizer = load_pretrained("smollm2-135m")
        docs = [d.ids for d in prose_documents(tokenizer.encode, n_tokens, n_docs)]
        rows = []
        for dtype_name, dtype in (("float32", np.float32), ("float64", np.float64),
                                  ("float64-exact", np.float64)):
            ours, _ = load_pretrained(str(folder), dtype)
            theirs = transformers_route(folder, docs, dtype_name)
            for i, ids in enumerate(docs):
                logits = ours.logits(ids)
                hf_loss, hf_logits = theirs[i]
                rows.append({"dtype": dtype_name, "document": i, "tokens": int(len(ids)),
                             "loss_sia_theory": mean_loss(logits, ids),
                             "loss_transformers": hf_loss,
                             "loss_transformers_float64_softmax": mean_loss(hf_logits, ids),
                             "max_abs_logit_difference": float(
                                 np.max(np.abs(logits.astype(np.float64) - hf_logits)))})
        registry_losses = [mean_loss(registry.logits(ids), ids) for ids in docs]
    for row in rows:
        row["loss_difference"] = row["loss_sia_theory"] - row["loss_transformers"]
        row["loss_registry_gguf_float32"] = registry_losses[row["document"]]
    summary = {"model": "smollm2-135m (the registry's GGUF weights as a Hugging Face folder)",
               "text": f"first {n_tokens} tokens of {n_docs} prose documents "
                       "(sia_theory.models.corpus.prose_documents, registry tokenizer)",
               "transformers": transformers.__version__, "torch": torch.__version__,
               "numpy": np.__version__, "python": platform.python_version(),
               "seconds": round(time.perf_counter() - started, 1), "rows": rows}
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(summary, indent=1) + "\n")
    for row in rows:
        print(f"{row['dtype']} doc {row['document']}: sia-theory {row['loss_sia_theory']:.6f}, "
              f"transformers {row['loss_transformers']:.6f}, difference "
              f"{row['loss_difference']:.2e}, max |Δ logit| {row['max_abs_logit_difference']:.2e}")
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--docs", type=int, default=2)
    parser.add_argument("--out", default="figures/hf_loss_vs_transformers.json")
    parser.add_argument("--folder", default=None, help="keep the folder under this directory")
    args = parser.parse_args()
    main(args.tokens, args.docs, args.out, args.folder)
    sys.exit(0)
