"""``model_report``: a model's own attention measured head by head, on tiny checkpoints whose
logits are known (zeroed queries or keys: every logit 0; one head's queries scaled up: a peaked
head), held against numpy computations from the captured queries and keys, the memory fallback,
the sliding-window cap and the report's files."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq

pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")

from sia_theory.analysis.model import (  # noqa: E402
    MIN_TOKENS,
    capture_bytes_per_token,
    model_report,
    report_rows,
)
from sia_theory.models import load_pretrained  # noqa: E402
from tests.analysis.tiny_models import LLAMA, QWEN2_WINDOWED, write_checkpoint  # noqa: E402

N = 256


@pytest.fixture(scope="module")
def uniform(tmp_path_factory):
    """Every ``q_proj`` zero: every logit of every head is exactly 0."""
    folder = write_checkpoint(tmp_path_factory.mktemp("zero_q") / "m", zero="q")
    return model_report(str(folder), N, quick=True, progress=False)


@pytest.fixture(scope="module")
def peaked_folder(tmp_path_factory):
    """Layer 1, head 0's queries × 40: its logits spread far beyond √(2 log M)."""
    return write_checkpoint(tmp_path_factory.mktemp("peaked") / "m", q_scale={(1, 0): 40.0})


@pytest.fixture(scope="module")
def peaked(peaked_folder):
    return model_report(str(peaked_folder), N, quick=True, progress=False)


def test_zeroed_queries_give_uniform_attention_exactly(uniform):
    h = uniform.heads
    assert len(h) == LLAMA["num_hidden_layers"] * LLAMA["num_attention_heads"]
    assert (h["sigma"] == 0).all() and (h["rem_ratio"] == 0).all()
    assert (h["rem_phase"] == "liquid").all() and h["rem_phase_sure"].all()
    assert np.isinf(h["beta_half"]).all() and (h["gap_phase"] == "liquid").all()  # tied top
    assert np.allclose(h["entropy_far"], 1.0, atol=1e-12)  # log M of log M
    c = uniform.curves
    assert np.allclose(c["H"], np.log(c["t"]), atol=1e-12)  # t keys, uniform: log t
    assert np.allclose(c["H_gaussian"], np.log(c["t"]), atol=1e-12)  # σ = 0 in every octave
    assert (h["law"] == "logarithmic").all() and np.allclose(h["exponent"], 0, atol=1e-9)
    assert (h["predicted_law"] == "logarithmic").all()
    assert (h["last_slope"].round(9) == 1).all()
    assert uniform.verdicts[0].startswith(f"full_attention layers (0–2; 12 heads) at N = {N} "
                                          "tokens: REM phase 12 liquid (12 of 12")
    assert "grows as log t in 12 of 12 heads" in uniform.verdicts[0]


def test_zeroed_keys_are_the_same_uniform_attention(tmp_path):
    folder = write_checkpoint(tmp_path / "m", zero="k")
    h = model_report(str(folder), N, quick=True, progress=False).heads
    assert (h["rem_ratio"] == 0).all() and (h["rem_phase"] == "liquid").all()
    assert np.allclose(h["entropy_far"], 1.0, atol=1e-12)


def test_a_peaked_head_is_frozen_and_the_others_liquid(peaked):
    h = peaked.heads.set_index(["layer", "head"])
    hot = h.loc[(1, 0)]
    assert hot["rem_ratio"] > 3 and hot["rem_phase"] == "frozen" and hot["rem_phase_sure"]
    assert hot["beta_half"] < 1 and hot["gap_phase"] == "frozen"
    assert hot["entropy_far"] < 0.3 and hot["law"] == "bounded"
    others = h.drop(index=(1, 0))
    assert (others["rem_phase"] == "liquid").all() and (others["rem_ratio"] < 0.6).all()
    assert (others["entropy_far"] > 0.75).all()
    assert "11 liquid, 1 frozen" in peaked.verdicts[0]


def _captured(model, ids):
    """Each layer's queries (H, T, D) and keys (Hkv, T, D) after RoPE, float64."""
    out = {}

    def capture(layer, q, k):
        out[layer] = (np.array(q, dtype=np.float64), np.array(k, dtype=np.float64))

    model.forward_hidden(ids, model.new_cache(capacity=len(ids)), capture=capture)
    return out


def _ids(model_tokenizer, n):
    from sia_theory.models.corpus import prose_documents

    _, tokenizer = model_tokenizer
    return prose_documents(lambda text: tokenizer.encode(text).ids, n, 1)[0].ids


@pytest.mark.parametrize("config, factor_of", [
    (LLAMA, lambda scheme, i: 1 / 4),  # 1/√D, D = 16
    # YaRN ×4: the model softmaxes (0.1 ln 4 + 1)² q·k/√D, the logit law the report applies
    (QWEN2_WINDOWED, lambda scheme, i: scheme.layer(1).logit_scale([i])[0])])
def test_rem_ratio_and_half_mass_point_match_numpy_from_the_captured_q_and_k(
        tmp_path, config, factor_of):
    from sia_theory.models.hf_config import from_hf_config

    folder = write_checkpoint(tmp_path / "m", config, q_scale={(1, 2): 3.0})
    report = model_report(str(folder), N, quick=True, progress=False)
    scheme = from_hf_config(folder / "config.json")
    loaded = load_pretrained(str(folder))
    q, k = _captured(loaded[0], _ids(loaded, N))[1]
    layer, head = 1, 2
    group = q.shape[0] // k.shape[0]
    rows = report_rows(N, 8)
    assert report.info["rows"].tolist() == rows.tolist()
    variances, betas, ms = [], [], []
    for i in rows:
        m = (int(i) + 1) // 2
        keys = k[head // group, i - np.arange(m, 2 * m)]  # distances [M, 2M)
        x = factor_of(scheme, i) * (keys @ q[head, i])  # the whole factor on q·k
        variances.append(x.var())
        ms.append(m)
        gaps = np.sort(x.max() - x)[1:]  # Σ_{j ≠ top} exp(−β Δ_j) = 1
        betas.append(brentq(lambda b, g=gaps: np.exp(-b * g).sum() - 1.0, 1e-9, 1e6,
                            xtol=1e-14))
    want = math.sqrt(np.mean(variances)) / math.sqrt(2 * math.log(min(ms)))
    row = report.heads.set_index(["layer", "head"]).loc[(layer, head)]
    assert row["rem_ratio"] == pytest.approx(want, rel=1e-9)
    assert row["beta_half"] == pytest.approx(float(np.median(betas)), rel=1e-8)
    assert row["rem_ratio_low"] <= row["rem_ratio"] <= row["rem_ratio_high"]


def test_point_estimates_are_head_measures_over_all_rows(peaked_folder, peaked):
    """The report's REM ratio, β_½ and entropies are ``head_measures`` of the captured logits
    over all the query rows at once (the bootstrap aggregates each row's own values)."""
    from sia_theory.models.runs import capture_scores
    from sia_theory.studies.head_phases import head_measures

    model, tokenizer = load_pretrained(str(peaked_folder))
    rows = peaked.info["rows"]
    frames = []
    capture_scores(model, _ids((model, tokenizer), N), rows,
                   lambda layer, s: frames.append(head_measures(s, rows, layer=layer)))
    want = pd.concat(frames, ignore_index=True)
    got = peaked.heads
    for column in ("M", "sigma", "beta_half", "entropy_far", "entropy_octaves"):
        assert np.allclose(got[column], want[column], rtol=1e-12, atol=0), column
    assert np.allclose(got["rem_ratio"], want["ratio"], rtol=1e-12)
    assert (got["rem_phase"] == want["rem_phase"]).all()
    assert (got["gap_phase"] == want["gap_phase"]).all()


def test_the_bootstrap_is_seeded(peaked_folder, peaked):
    again = model_report(str(peaked_folder), N, quick=True, progress=False)
    other = model_report(str(peaked_folder), N, quick=True, seed=1, progress=False)
    cols = ["rem_ratio_low", "rem_ratio_high", "beta_half_low", "beta_half_high"]
    pd.testing.assert_frame_equal(again.heads[cols], peaked.heads[cols])
    assert not np.allclose(other.heads[cols], peaked.heads[cols])
    assert np.allclose(other.heads["rem_ratio"], peaked.heads["rem_ratio"])  # the point: no


def test_memory_fallback_runs_the_largest_context_that_fits(peaked_folder):
    model, tokenizer = load_pretrained(str(peaked_folder))
    per_token = capture_bytes_per_token(model.config, 8)

    def fits(n, limit):
        model.max_bytes = limit
        try:
            model.check_fits(n, n, per_token)
            return True
        except ValueError:
            return False

    lo, hi = 1, 2**40  # the smallest limit at which 300 tokens fit
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(300, mid) else (mid + 1, hi)
    model.max_bytes = lo
    report = model_report((model, tokenizer), 512, quick=True, progress=False)
    assert report.n_ctx == 300 and report.info["n_requested"] == 512
    assert not fits(301, lo)
    note = next(n for n in report.notes if "fits" in n)
    assert re.search(r"n_ctx=512 needs about [\d.]+ [KM]iB of working memory, more than the "
                     r"limit of [\d.]+ [KM]iB \(max_bytes\)", note), note
    assert "the report runs at N = 300, the largest context that fits" in note
    assert "(asked for 512)" in report.notes[0]


def test_memory_too_small_for_the_fewest_tokens_is_refused(peaked_folder):
    model, tokenizer = load_pretrained(str(peaked_folder))
    model.max_bytes = 1000
    with pytest.raises(ValueError, match=f"even {MIN_TOKENS} tokens"):
        model_report((model, tokenizer), 512, quick=True, progress=False)


def test_a_short_text_is_used_whole_and_said(peaked_folder):
    text = "The grass is green. " * 12  # 240 bytes: 240 tokens of the byte tokenizer
    report = model_report(str(peaked_folder), 512, text=text, quick=True, progress=False)
    assert report.n_ctx == 240
    assert any("fewer than the 512 asked for" in n for n in report.notes)
    assert "the text given (240 characters, 240 tokens)" in report.notes[0]


def test_token_ids_serve_a_model_without_a_tokenizer(tmp_path):
    folder = write_checkpoint(tmp_path / "m", tokenizer=False)
    with pytest.raises(ValueError, match="the model has no tokenizer"):
        model_report(str(folder), N, quick=True, progress=False)
    with pytest.raises(ValueError, match="the model has no tokenizer, so the text given"):
        model_report(str(folder), N, text="words", quick=True, progress=False)
    ids = np.random.default_rng(0).integers(0, 256, N)
    report = model_report(str(folder), N, ids=ids, quick=True, progress=False)
    assert report.n_ctx == N and "the 256 token ids given" in report.notes[0]
    with pytest.raises(ValueError, match="at least 128"):
        model_report(str(folder), N, ids=ids[:100], quick=True, progress=False)


def test_a_sliding_layer_is_measured_on_the_keys_its_queries_see(tmp_path):
    """The window is masked, so N runs past it; a sliding layer's REM windows and octaves end
    at the window (a row's last 200 keys), a full layer's at N."""
    config = {**QWEN2_WINDOWED, "sliding_window": 200}
    folder = write_checkpoint(tmp_path / "m", config)
    report = model_report(str(folder), 512, quick=True, progress=False)
    assert report.n_ctx == 512 and not any("sliding window" in n for n in report.notes)
    full, sliding = report.verdicts
    assert full.startswith("full_attention layers (0–1; 8 heads) at N = 512")
    assert sliding.startswith("sliding_attention layers (2–3; 8 heads) at N = 512")
    assert "window 200: a query sees only its last 200 keys" in sliding
    assert "q·k × 0.3241 at N (1.296 × 1/√16, the same at every position), RoPE yarn" in full
    heads = report.heads
    assert set(heads["layer_type"]) == {"full_attention", "sliding_attention"}
    assert heads.loc[heads["layer_type"] == "sliding_attention", "M"].max() <= 100
    assert heads.loc[heads["layer_type"] == "full_attention", "M"].min() > 100
    assert np.allclose(heads["logit_factor"], (0.1 * math.log(4) + 1) ** 2 / 4)


def test_in_window_slices_each_row_as_its_query_sees_it():
    """Rows past the window keep their last keys (the query at the window's even end); rows
    inside it keep every key at their own position; checked against slicing by hand."""
    from sia_theory.analysis.model import _in_window

    logits = np.arange(2 * 3 * 20, dtype=float).reshape(2, 3, 20)
    rows = np.array([6, 12, 18])
    out, at = _in_window(logits, rows, 10)  # an even window: the last 9 keys
    assert out.shape == (2, 3, 9) and at.tolist() == [6, 8, 8]
    np.testing.assert_array_equal(out[:, 0], logits[:, 0, 0:9])  # row 6 sees keys 0 … 6
    np.testing.assert_array_equal(out[:, 1], logits[:, 1, 4:13])  # row 12: keys 4 … 12
    np.testing.assert_array_equal(out[:, 2], logits[:, 2, 10:19])
    odd, at = _in_window(logits, rows, 9)
    assert odd.shape == (2, 3, 9) and at.tolist() == [6, 8, 8]


def test_a_window_shorter_than_n_but_past_the_first_rows(tmp_path):
    """Window 200 at N = 256: the query rows (192 … 254) straddle the window's end."""
    folder = write_checkpoint(tmp_path / "m", {**QWEN2_WINDOWED, "sliding_window": 200})
    report = model_report(str(folder), 256, quick=True, progress=False)
    sliding = report.verdicts[1]
    assert "window 200: a query sees only its last 200 keys" in sliding
    heads = report.heads
    assert heads.loc[heads["layer_type"] == "sliding_attention", "M"].max() <= 100


def test_a_window_under_the_measures_floor_is_refused_by_layer(tmp_path):
    folder = write_checkpoint(tmp_path / "m", {**QWEN2_WINDOWED, "sliding_window": 64})
    with pytest.raises(ValueError, match="layer 2's sliding window 64 is under"):
        model_report(str(folder), 512, quick=True, progress=False)


def test_the_registry_scaling_line_is_the_plain_softmax_scale(peaked):
    assert "q·k × 0.25 at N (1 × 1/√16, the same at every position), RoPE plain base " \
           "10000" in peaked.verdicts[0]


def test_write_publishes_the_figure_tables_and_markdown_as_one_set(peaked, tmp_path):
    paths = peaked.write(tmp_path / "out", "model_report_tiny")
    names = {p.name for p in (tmp_path / "out").iterdir()}
    want = {"model_report_tiny.md", "model_report_tiny.png", "model_report_tiny.json",
            "model_report_tiny_heads.csv", "model_report_tiny_entropy.csv",
            "model_report_tiny_octaves.csv", "model_report_tiny.manifest.json"}
    assert want <= names and set(paths) <= names
    heads = pd.read_csv(tmp_path / "out/model_report_tiny_heads.csv")
    assert len(heads) == 12 and not heads.duplicated(["layer", "head"]).any()
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        pass
    else:
        assert pd.read_parquet(tmp_path / "out/model_report_tiny_heads.parquet").shape == \
            heads.shape
    text = (tmp_path / "out/model_report_tiny.md").read_text()
    assert peaked.verdicts[0] in text and "## Assumptions" in text and "bootstrap" in text
    assert (tmp_path / "out/model_report_tiny.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_arguments_are_refused_before_any_work():
    with pytest.raises(ValueError, match="n_ctx must be"):
        model_report("smollm2-135m", 64)
    with pytest.raises(ValueError, match="model .no-such-model. is neither a registry name"):
        model_report("no-such-model", 256)
    with pytest.raises(ValueError, match="model must be a model name"):
        model_report(3.5, 256)


def test_report_rows_are_even_and_in_the_last_quarter():
    rows = report_rows(8192, 32)
    assert rows.size == 32 and (rows % 2 == 0).all() and rows[-1] == 8190
    assert rows[0] >= 3 * 8192 / 4 and np.all(np.diff(rows) > 0)


def test_chosen_layers_are_the_full_reports_rows(peaked_folder, peaked):
    part = model_report(str(peaked_folder), N, quick=True, layers=[1, 0], progress=False)
    assert sorted(set(part.heads["layer"])) == [0, 1]
    full = peaked.heads[peaked.heads["layer"] <= 1].reset_index(drop=True)
    pd.testing.assert_frame_equal(part.heads, full)
    assert "only the layers 0, 1 of 3 were measured" in part.notes
    with pytest.raises(ValueError, match="layers must be"):
        model_report(str(peaked_folder), N, quick=True, layers=[3])


def test_default_text_shorter_than_n_is_all_the_topics_said(peaked_folder, monkeypatch):
    from sia_theory.models import corpus

    monkeypatch.setattr(corpus, "prose_topics", lambda: [("a", "word " * 40), ("b", "x" * 100)])
    report = model_report(str(peaked_folder), 512, quick=True, progress=False)
    assert report.n_ctx == 302  # 200 + "\n\n" + 100 byte tokens
    assert "all of pydoc_data.topics (302 tokens)" in report.notes[0]
    assert any("fewer than the 512 asked for" in n for n in report.notes)


def test_a_gemma2_checkpoint_is_measured_after_its_cap_and_within_its_window(tmp_path):
    """Gemma-2 (transformers writes the tiny checkpoint, its q and k scaled up so the logits
    spread past the cap): the logits are capped at ±cap before the measures (their spread stays
    under the cap, and the same weights without the cap spread several times wider) and the
    sliding layers are measured within their window."""
    import json
    import shutil

    torch = pytest.importorskip("torch", reason="transformers writes the Gemma-2 checkpoint")
    transformers = pytest.importorskip("transformers", reason="transformers writes the "
                                       "Gemma-2 checkpoint")
    config = transformers.Gemma2Config(
        hidden_size=64, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, vocab_size=64, max_position_embeddings=512,
        sliding_window=130, attn_logit_softcapping=0.5, query_pre_attn_scalar=16)
    torch.manual_seed(0)
    model = transformers.Gemma2ForCausalLM(config)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "q_proj" in name or "k_proj" in name:
                p.mul_(30.0)
    model.save_pretrained(tmp_path / "g")
    shutil.copytree(tmp_path / "g", tmp_path / "uncapped")
    raw = json.loads((tmp_path / "g" / "config.json").read_text())
    (tmp_path / "uncapped" / "config.json").write_text(
        json.dumps({**raw, "attn_logit_softcapping": None}))
    ids = np.random.default_rng(0).integers(0, 64, 512)
    report = model_report(str(tmp_path / "g"), 512, ids=ids, quick=True, progress=False)
    free = model_report(str(tmp_path / "uncapped"), 512, ids=ids, quick=True, progress=False)
    sliding, full = report.verdicts
    assert "window 130: a query sees only its last 130 keys" in sliding
    assert "soft-capped at ±0.5" in full and "soft-capped" not in free.verdicts[1]
    heads = report.heads
    assert heads.loc[heads["layer_type"] == "sliding_attention", "M"].max() <= 65
    assert heads["sigma"].max() < 0.5  # capped logits lie in (−0.5, 0.5)
    assert free.heads["sigma"].max() > 2 * heads["sigma"].max()
