"""Damaged or contradictory model files, each refused by ``load_pretrained`` with one
``ValueError`` naming the file and the tensor or config key: a Hugging Face folder (a tiny
random LLaMA checkpoint, ``conftest.write_tiny_folder``: d 16, 4 heads, 2 key-value heads,
2 layers, vocabulary 20) with one thing broken, its safetensors header rewritten byte by byte,
and a GGUF file with a NaN weight or impossible metadata."""

import json
import struct

import numpy as np
import pytest

from sia_theory.models import load_pretrained
from sia_theory.models.gguf_llama import check_llama_gguf, llama_tensor_shapes
from sia_theory.models.hf_folder import hf_config, read_safetensors
from sia_theory.models.llama import LlamaConfig

pytest.importorskip("safetensors.numpy")
K_PROJ = "model.layers.0.self_attn.k_proj.weight"
NORM = "model.norm.weight"


def _tensors(folder, change):
    from safetensors.numpy import load_file, save_file

    tensors = load_file(folder / "model.safetensors")
    change(tensors)
    save_file(tensors, str(folder / "model.safetensors"))


def _config(folder, change):
    config = json.loads((folder / "config.json").read_text())
    change(config)
    (folder / "config.json").write_text(json.dumps(config))


def _header(folder, change):
    """Rewrite the safetensors header (``change(header, body) -> (header, body)``)."""
    path = folder / "model.safetensors"
    data = path.read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header, body = change(json.loads(data[8:8 + size]), data[8 + size:])
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + body)


def _offsets(name, shift_start, shift_stop):
    def change(header, body):
        start, stop = header[name]["data_offsets"]
        header[name]["data_offsets"] = [start + shift_start, stop + shift_stop]
        return header, body
    return change


def _entry(name, **fields):
    def change(header, body):
        header[name] = {**header[name], **fields}
        return header, body
    return change


def _drop_field(name, field):
    def change(header, body):
        del header[name][field]
        return header, body
    return change


def _truncate(folder, n=100):
    path = folder / "model.safetensors"
    path.write_bytes(path.read_bytes()[:-n])


FILE = r"model\.safetensors"
CASES = {
    # tensors against config.json
    "k-proj-transposed": (lambda f: _tensors(f, lambda t: t.update(
        {K_PROJ: np.ascontiguousarray(t[K_PROJ].T)})),
        FILE + r": tensor 'model\.layers\.0\.self_attn\.k_proj\.weight' has shape \(16, 8\); "
        r"expected \(8, 16\)"),
    "vocab-size-disagrees": (lambda f: _config(f, lambda c: c.update(vocab_size=30)),
                             FILE + r": tensor 'model\.embed_tokens\.weight' has shape "
                             r"\(20, 16\); expected \(30, 16\) \(vocab_size 30"),
    "nan-in-final-norm": (lambda f: _tensors(f, lambda t: t[NORM].__setitem__(0, np.nan)),
                          FILE + r": tensor 'model\.norm\.weight' holds 1 non-finite values"),
    # the safetensors file itself
    "truncated": (_truncate, FILE + r": tensor '.*' has data_offsets \[\d+, \d+\] outside the "
                  r"file's \d+ bytes of data \(truncated\?\)"),
    "padded": (lambda f: (f / "model.safetensors").write_bytes(
        (f / "model.safetensors").read_bytes() + bytes(8)),
        FILE + r": the header's tensors need \d+ bytes of data, the file holds \d+ \(truncated "
        r"or padded\)"),
    "offsets-overlap": (lambda f: _header(f, _offsets(K_PROJ, -8, -8)),
                        FILE + r": tensor '.*' has data_offsets \[\d+, \d+\] that overlap "
                        r"or leave a gap"),
    "offsets-past-the-end": (lambda f: _header(f, _offsets(NORM, 10**6, 10**6)),
                             FILE + r": tensor 'model\.norm\.weight' has data_offsets "
                             r"\[\d+, \d+\] outside the file's \d+ bytes of data"),
    "offsets-reversed": (lambda f: _header(f, _offsets(NORM, 64, -64)),
                         FILE + r": tensor 'model\.norm\.weight' has data_offsets \[\d+, \d+\] "
                         r"outside|" + FILE + r": tensor 'model\.norm\.weight' has data_offsets"
                         r" \[\d+, \d+\], not \[start, stop\]"),
    "offsets-not-a-pair": (lambda f: _header(f, _entry(NORM, data_offsets=[0])),
                           FILE + r": tensor 'model\.norm\.weight' has data_offsets \[0\], not "
                           r"\[start, stop\]"),
    "shape-disagrees-with-bytes": (lambda f: _header(f, _entry(NORM, shape=[8])),
                                   FILE + r": tensor 'model\.norm\.weight' of shape \[8\] and "
                                   r"dtype F32 needs 32 bytes, its data_offsets give 64"),
    "negative-shape": (lambda f: _header(f, _entry(NORM, shape=[-16])),
                       FILE + r": tensor 'model\.norm\.weight' has shape \[-16\]; a shape is a "
                       r"list of integers >= 0"),
    "dtype-missing": (lambda f: _header(f, _drop_field(NORM, "dtype")),
                      FILE + r": tensor 'model\.norm\.weight' lacks dtype"),
    "header-a-list": (lambda f: _header(f, lambda h, b: ([1, 2], b)),
                      FILE + r": the header must be a JSON object \(tensor name -> entry\), "
                      r"got list"),
    "entry-a-string": (lambda f: _header(f, lambda h, b: ({**h, NORM: "x"}, b)),
                       FILE + r": tensor 'model\.norm\.weight' must have a header entry "
                       r"\{dtype, shape, data_offsets\}, got str"),
    "header-length-past-the-end": (
        lambda f: (f / "model.safetensors").write_bytes(
            struct.pack("<Q", 2**62) + (f / "model.safetensors").read_bytes()[8:]),
        FILE + r": its header length \d+ runs past the end of the file \(\d+ bytes\)"),
    # config.json keys
    "num-hidden-layers-missing": (lambda f: _config(f, lambda c: c.pop("num_hidden_layers")),
                                  r"config\.json: num_hidden_layers is missing \(an integer "
                                  r">= 1\)"),
    "hidden-size-missing": (lambda f: _config(f, lambda c: c.pop("hidden_size")),
                            r"config\.json: .*hidden_size"),
    "vocab-size-missing": (lambda f: _config(f, lambda c: c.pop("vocab_size")),
                           r"config\.json: vocab_size is missing"),
    "intermediate-size-missing": (lambda f: _config(f, lambda c: c.pop("intermediate_size")),
                                  r"config\.json: intermediate_size is missing"),
    "num-hidden-layers-string": (lambda f: _config(f, lambda c: c.update(num_hidden_layers="2")),
                                 r"config\.json: num_hidden_layers must be an integer >= 1"),
    "num-hidden-layers-fraction": (
        lambda f: _config(f, lambda c: c.update(num_hidden_layers=2.5)),
        r"config\.json: num_hidden_layers must be an integer >= 1"),
    "num-hidden-layers-negative": (
        lambda f: _config(f, lambda c: c.update(num_hidden_layers=-2)),
        r"config\.json: num_hidden_layers must be an integer >= 1"),
    "hidden-size-negative": (lambda f: _config(f, lambda c: c.update(hidden_size=-16)),
                             r"config\.json: hidden_size must be an integer >= 1"),
    "intermediate-size-zero": (lambda f: _config(f, lambda c: c.update(intermediate_size=0)),
                               r"config\.json: intermediate_size must be an integer >= 1"),
    "kv-heads-not-a-divisor": (lambda f: _config(f, lambda c: c.update(num_key_value_heads=3)),
                               r"config\.json: num_attention_heads 4 is not a multiple of "
                               r"num_key_value_heads 3"),
    "rms-norm-eps-string": (lambda f: _config(f, lambda c: c.update(rms_norm_eps="x")),
                            r"config\.json: rms_norm_eps must be a finite real number >= 0"),
    "rms-norm-eps-negative": (lambda f: _config(f, lambda c: c.update(rms_norm_eps=-1.0)),
                              r"config\.json: rms_norm_eps must be a finite real number >= 0"),
    "rms-norm-eps-nan": (lambda f: (f / "config.json").write_text(
        (f / "config.json").read_text().replace('"rms_norm_eps": 1e-05', '"rms_norm_eps": NaN')),
        r"config\.json: rms_norm_eps must be a finite real number >= 0"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_damaged_folder_is_refused_naming_the_file_and_the_tensor_or_key(tmp_path,
                                                                             tiny_folder, name):
    damage, match = CASES[name]
    folder = tiny_folder(tmp_path / "model")
    damage(folder)
    with pytest.raises(ValueError, match=match):
        load_pretrained(str(folder))


def test_the_undamaged_folder_loads(tmp_path, tiny_folder):
    """Negative control: the folder the cases damage loads as it is."""
    model, _ = load_pretrained(str(tiny_folder(tmp_path / "model")))
    assert model.config.n_layers == 2 and np.isfinite(model.logits([1, 2, 3])).all()


def test_read_safetensors_names_the_file_of_a_folder_given_in_its_place(tmp_path):
    (tmp_path / "weights.safetensors").mkdir()
    with pytest.raises(ValueError, match=r"weights\.safetensors cannot be read"):
        read_safetensors(tmp_path / "weights.safetensors")


def test_hf_config_names_the_key():
    base = {"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 48, "vocab_size": 50}
    assert hf_config(base).n_layers == 2
    for key in ("num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size",
                "vocab_size"):
        with pytest.raises(ValueError, match=rf"config\.json: {key} is missing"):
            hf_config({k: v for k, v in base.items() if k != key})
    with pytest.raises(ValueError, match=r"config\.json: hidden_size 30 is not a multiple of "
                       r"num_attention_heads 4"):
        hf_config({**base, "hidden_size": 30})


# --- GGUF -----------------------------------------------------------------------------------

CONFIG = LlamaConfig(n_layers=2, d_model=16, n_heads=4, n_kv_heads=2, ffn=24, rope_base=1e4,
                     rms_eps=1e-5, context_length=64, vocab_size=10)
META = {"general.architecture": "llama", "llama.block_count": 2, "llama.embedding_length": 16,
        "llama.attention.head_count": 4, "llama.attention.head_count_kv": 2,
        "llama.feed_forward_length": 24, "llama.rope.freq_base": 1e4,
        "llama.attention.layer_norm_rms_epsilon": 1e-5, "llama.context_length": 64,
        "tokenizer.ggml.tokens": [str(i) for i in range(10)]}


@pytest.mark.parametrize("key, value, match", [
    ("llama.attention.head_count", 0, r"llama\.attention\.head_count must be an integer >= 1"),
    ("llama.attention.head_count_kv", 0,
     r"llama\.attention\.head_count_kv must be an integer >= 1"),
    ("llama.attention.head_count", -4, r"llama\.attention\.head_count must be an integer >= 1"),
    ("llama.block_count", 0, r"llama\.block_count must be an integer >= 1"),
    ("llama.embedding_length", "16", r"llama\.embedding_length must be an integer >= 1"),
    ("llama.embedding_length", 16.5, r"llama\.embedding_length must be an integer >= 1"),
    ("llama.feed_forward_length", 0, r"llama\.feed_forward_length must be an integer >= 1"),
    ("llama.context_length", 0, r"llama\.context_length must be an integer >= 1"),
    ("llama.attention.layer_norm_rms_epsilon", float("nan"),
     r"llama\.attention\.layer_norm_rms_epsilon must be a finite real number >= 0"),
    ("llama.attention.layer_norm_rms_epsilon", -1.0,
     r"llama\.attention\.layer_norm_rms_epsilon must be a finite real number >= 0"),
    ("llama.rope.freq_base", float("nan"), r"llama\.rope\.freq_base must be a finite real "
     r"number > 1"),
    ("llama.rope.freq_base", 0.0, r"llama\.rope\.freq_base must be a finite real number > 1"),
    ("tokenizer.ggml.tokens", "abc", r"tokenizer\.ggml\.tokens must be a non-empty list"),
    ("tokenizer.ggml.tokens", [], r"tokenizer\.ggml\.tokens must be a non-empty list"),
], ids=["heads-0", "kv-heads-0", "heads-negative", "blocks-0", "width-string",
        "width-fraction", "ffn-0", "context-0", "eps-nan", "eps-negative", "base-nan",
        "base-0", "tokens-string", "tokens-empty"])
def test_gguf_metadata_out_of_range_is_refused_naming_the_key(key, value, match):
    """Before: ZeroDivisionError (0 heads), a shape mismatch naming a tensor rather than the key,
    or a model with a NaN epsilon, a zero base or no context accepted."""
    with pytest.raises(ValueError, match=r"the model file m\.gguf: metadata " + match):
        check_llama_gguf("m.gguf", {**META, key: value}, llama_tensor_shapes(CONFIG))


def test_a_gguf_weight_that_is_not_finite_is_refused_naming_the_file_and_tensor(tmp_path):
    """Before: loaded, every logit NaN."""
    gguf = pytest.importorskip("gguf")
    rng = np.random.default_rng(0)
    tensors = {name: rng.standard_normal(shape).astype(np.float32)
               for name, shape in llama_tensor_shapes(CONFIG).items()}
    tensors["output_norm.weight"][3] = np.inf
    path = tmp_path / "inf.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    for add, value in ((writer.add_block_count, 2), (writer.add_embedding_length, 16),
                       (writer.add_head_count, 4), (writer.add_head_count_kv, 2),
                       (writer.add_feed_forward_length, 24), (writer.add_rope_freq_base, 1e4),
                       (writer.add_layer_norm_rms_eps, 1e-5), (writer.add_context_length, 64),
                       (writer.add_tokenizer_model, "gpt2"),
                       (writer.add_token_list, [f"t{i}" for i in range(10)])):
        add(value)
    for name, array in tensors.items():
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ValueError, match=r"inf\.gguf: tensor 'output_norm\.weight' holds 1 "
                       r"non-finite values"):
        load_pretrained(str(path))
