"""sia_theory.models.readouts, exercised by its own name on a random checkpoint written here:
token losses are the log-softmax of the logits, greedy generation is the argmax chain, and the
row blocks cover the rows once."""

import json

import numpy as np
import pytest
from scipy.special import log_softmax

from sia_theory.models.loader import load_hf_folder
from sia_theory.models.readouts import row_blocks, run_rows

save_file = pytest.importorskip("safetensors.numpy").save_file


def _tiny_folder(folder, seed=0):
    """A random LLaMA checkpoint (config.json + safetensors): d 16, 4 heads, 2 key-value heads,
    2 layers, vocabulary 20."""
    rng = np.random.default_rng(seed)
    d, heads, kv, ffn, vocab, hd = 16, 4, 2, 24, 20, 4
    shapes = {"model.embed_tokens.weight": (vocab, d), "lm_head.weight": (vocab, d),
              "model.norm.weight": (d,)}
    for i in range(2):
        p = f"model.layers.{i}."
        shapes.update({p + "self_attn.q_proj.weight": (heads * hd, d),
                       p + "self_attn.k_proj.weight": (kv * hd, d),
                       p + "self_attn.v_proj.weight": (kv * hd, d),
                       p + "self_attn.o_proj.weight": (d, heads * hd),
                       p + "mlp.gate_proj.weight": (ffn, d), p + "mlp.up_proj.weight": (ffn, d),
                       p + "mlp.down_proj.weight": (d, ffn), p + "input_layernorm.weight": (d,),
                       p + "post_attention_layernorm.weight": (d,)})
    tensors = {k: (rng.standard_normal(s) / np.sqrt(s[-1]) if len(s) == 2
                   else 1 + 0.1 * rng.standard_normal(s)).astype(np.float32)
               for k, s in shapes.items()}
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps({
        "model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": d,
        "num_hidden_layers": 2, "num_attention_heads": heads, "num_key_value_heads": kv,
        "intermediate_size": ffn, "vocab_size": vocab, "rope_theta": 100.0,
        "rms_norm_eps": 1e-5, "max_position_embeddings": 64, "tie_word_embeddings": False}))
    save_file(tensors, str(folder / "model.safetensors"))
    return folder


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return load_hf_folder(_tiny_folder(tmp_path_factory.mktemp("tiny"), seed=1), np.float64)[0]


def test_token_losses_are_log_softmax(model):
    ids = np.array([2, 5, 9, 9, 1, 17])
    lp = log_softmax(model.logits(ids), axis=-1)
    expected = -lp[np.arange(5), ids[1:]]
    assert model.token_losses(ids) == pytest.approx(expected, abs=1e-12)


def test_generate_is_the_argmax_chain(model):
    ids = [4, 8, 15]
    out = model.generate(ids, 4)
    seq = list(ids)
    for _ in range(4):
        seq.append(int(np.argmax(model.logits(np.array(seq))[-1])))
    assert out == seq[3:]


def test_row_blocks_and_run_rows():
    assert row_blocks(10, 4) == [slice(0, 4), slice(4, 8), slice(8, 10)]
    seen = np.zeros(10, int)

    def mark(rows):
        seen[rows] += 1

    run_rows(mark, row_blocks(10, 3))
    assert np.all(seen == 1)


def test_bad_input_named(model):
    with pytest.raises(ValueError, match="max_new_tokens"):
        model.generate([1], 0)
    with pytest.raises(ValueError, match="at least 2 tokens"):
        model.token_losses([1])
