"""Library pieces of the real-model experiments: the schemes (YaRN as the reference code, the
cell keys' fingerprint), the corpus (deterministic, offline), passkey prompts and their scoring,
and the score statistics against independent numpy/scipy computations. YaRN's frequencies
themselves are held against the reference code in tests/attention/test_rope_scaling.py."""

import math
import socket

import numpy as np
import pytest
from scipy import special, stats

from sia_theory import ScaleInvariant
from sia_theory.attention import YaRNRoPE
from sia_theory.models import corpus, runs
from sia_theory.models import score_stats as ss
from sia_theory.studies import model_runs
from sia_theory.zoo import Llama4Temperature, QwenLogN, YaRNTemperature

# --- corpus ------------------------------------------------------------------------------------

def _bytes_encode(text):
    """An independent stand-in tokenizer: UTF-8 bytes."""
    return list(text.encode("utf-8"))


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the corpus must not open network connections")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_corpus_is_deterministic_offline_and_from_the_standard_library(no_network):
    from pydoc_data.topics import topics

    first = corpus.long_documents(_bytes_encode, 20_000, 2, 2)
    again = corpus.long_documents(_bytes_encode, 20_000, 2, 2)
    assert [d.name for d in first] == [d.name for d in again]
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a.ids, b.ids)
        assert a.ids.shape == (20_000,)
    prose, code = first[:2], first[2:]
    keys = sorted(topics)
    assert prose[0].parts[0] == keys[0]  # consecutive runs of the sorted topics
    assert keys.index(prose[1].parts[0]) == keys.index(prose[0].parts[-1]) + 1
    text = "\n\n".join(topics[k] for k in prose[0].parts).encode()
    assert bytes(prose[0].ids.astype(np.uint8)) == text[:20_000]
    module = code[0].parts[0]
    assert module == corpus.CODE_MODULES[0]
    import importlib.util
    from pathlib import Path
    source = Path(importlib.util.find_spec(module).origin).read_bytes()
    assert bytes(code[0].ids.astype(np.uint8)) == source[:20_000]


def test_corpus_says_when_python_has_too_little_text():
    with pytest.raises(ValueError, match="count"):
        corpus.prose_documents(_bytes_encode, 10**7, 1)
    with pytest.raises(ValueError, match="count"):
        corpus.code_documents(_bytes_encode, 10**7, 1)
    with pytest.raises(ValueError, match="n_prose"):
        corpus.long_documents(_bytes_encode, 100, 0, 0)


def test_passkey_prompt_hides_the_key_at_the_requested_depth():
    key = corpus.passkey_key(0, 3)
    assert key == corpus.passkey_key(0, 3) and 10_000 <= key <= 99_999
    keys = {corpus.passkey_key(0, t) for t in range(20)}
    assert len(keys) > 15  # different trials, different keys
    for depth in (0.0, 0.25, 0.5, 1.0):
        p = corpus.passkey_prompt(_bytes_encode, key, depth, 2000)
        text = bytes(p.ids.astype(np.uint8)).decode()
        assert len(p.ids) == 2000
        assert text.startswith(corpus.PASSKEY_INTRO) and text.endswith(corpus.QUESTION)
        needle = corpus.NEEDLE.format(key=key)
        assert text[p.needle_start:p.needle_start + len(needle)] == needle
        fill = 2000 - len(corpus.PASSKEY_INTRO) - len(needle) - len(corpus.QUESTION)
        assert p.needle_start - len(corpus.PASSKEY_INTRO) == round(depth * fill)
        assert bytes(p.answer.astype(np.uint8)).decode() == f" {key}"
        assert p.digit_start == 1  # one byte per token: the space is a token of its own
    # the prefix before the needle is the same for every key: a KV cache of it can be shared
    a = corpus.passkey_prompt(_bytes_encode, 12345, 0.5, 2000)
    b = corpus.passkey_prompt(_bytes_encode, 67890, 0.5, 2000)
    np.testing.assert_array_equal(a.ids[:a.prefix], b.ids[:b.prefix])
    with pytest.raises(ValueError, match="n_tokens"):
        corpus.passkey_prompt(_bytes_encode, key, 0.5, 100)


def test_score_passkey_is_greedy_decoding_by_teacher_forcing():
    rng = np.random.default_rng(0)
    answer = np.array([5, 1, 7, 2, 2, 9])  # a split-off space (5), then five digits
    logits = rng.standard_normal((6, 12))
    logits[np.arange(6), answer] += 10.0  # every position prefers the answer token
    result = corpus.score_passkey(logits, answer, digit_start=1)
    want = sum(logits[j, answer[j]] - np.log(np.exp(logits[j]).sum()) for j in range(6))
    assert result["correct"] and result["first_token_correct"]
    assert result["digits_correct"] == result["digits"] == 5
    assert result["log_likelihood"] == pytest.approx(want, rel=1e-12)
    first = logits[0, answer[0]] - np.log(np.exp(logits[0]).sum())
    assert result["digits_log_likelihood"] == pytest.approx(want - first, rel=1e-12)
    logits[3, answer[3]] -= 20.0  # the third digit is wrong: greedy decoding fails there
    result = corpus.score_passkey(logits, answer, digit_start=1)
    assert not result["correct"] and result["first_token_correct"]
    assert result["digits_correct"] == 2


def test_score_passkey_counts_the_digits_after_a_missed_first_token():
    """The model would begin with another token (" the") where the answer has its lone space,
    but given the space every digit is its top choice: not retrieved, first token missed, all
    five digits right (the first scoring counted the space as a digit and gave 0)."""
    rng = np.random.default_rng(1)
    answer = np.array([5, 1, 7, 2, 2, 9])
    logits = rng.standard_normal((6, 12))
    logits[np.arange(6), answer] += 10.0
    logits[0, 11] = logits[0, answer[0]] + 1.0  # token 11 (" the") beats the space
    result = corpus.score_passkey(logits, answer, digit_start=1)
    assert not result["correct"] and not result["first_token_correct"]
    assert result["digits_correct"] == 5
    whole = corpus.score_passkey(logits, answer)  # digit_start 0: every token a digit
    assert whole["digits_correct"] == 0 and whole["digits"] == 6
    with pytest.raises(ValueError, match="digit_start"):
        corpus.score_passkey(logits, answer, digit_start=6)


# --- score statistics ------------------------------------------------------------------------


def test_row_moments_and_neighbour_correlation_match_scipy_and_numpy():
    rng = np.random.default_rng(7)
    rows = rng.gamma(2.0, size=(4, 300))
    mom = ss.row_moments(rows)
    corr = ss.neighbour_correlation(rows)
    for j, row in enumerate(rows):
        assert mom["mean"][j] == pytest.approx(np.mean(row), rel=1e-12)
        assert mom["var"][j] == pytest.approx(np.var(row), rel=1e-12)
        assert mom["skew"][j] == pytest.approx(stats.skew(row), rel=1e-10)
        assert mom["excess_kurtosis"][j] == pytest.approx(stats.kurtosis(row), rel=1e-10)
        assert corr[j] == pytest.approx(np.corrcoef(row[:-1], row[1:])[0, 1], rel=1e-10)


def test_detrend_removes_the_centred_running_mean():
    rng = np.random.default_rng(11)
    row = rng.standard_normal(200) + np.linspace(0, 5, 200)
    got = ss.detrend(row[None], window=9)[0]
    inner = row[4:-4] - np.convolve(row, np.ones(9) / 9, mode="valid")
    np.testing.assert_allclose(got, inner, rtol=0, atol=1e-12)
    assert got[0] == pytest.approx(row[4] - row[:9].mean(), abs=1e-12)
    trend = np.linspace(0, 50, 400) + 0.1 * rng.standard_normal(400)  # a trend fakes ρ₁ ≈ 1
    assert ss.neighbour_correlation(trend) > 0.9
    assert abs(ss.neighbour_correlation(ss.detrend(trend))) < 0.2


def test_qq_points_are_normal_quantiles_against_sample_quantiles():
    z = np.random.default_rng(8).standard_normal(5000)
    theo, sample = ss.qq_points(z, 50)
    p = (np.arange(50) + 0.5) / 50
    np.testing.assert_allclose(theo, stats.norm.ppf(p), rtol=1e-12)
    np.testing.assert_allclose(sample, np.percentile(z, 100 * p), rtol=1e-12)


def test_gaussian_verdict_passes_iid_normal_and_names_what_breaks_it():
    rng = np.random.default_rng(9)
    normal = rng.standard_normal((20, 2000))
    heavy = stats.t.rvs(3, size=(20, 2000), random_state=rng)
    ar = np.zeros((20, 2000))
    for j in range(1, 2000):  # AR(1) with coefficient 0.9 along the keys
        ar[:, j] = 0.9 * ar[:, j - 1] + rng.standard_normal(20)
    for rows, passes, worst in ((normal, True, None), (heavy, False, "excess_kurtosis"),
                                (ar, False, "neighbour_corr")):
        mom = ss.row_moments(rows)
        v = ss.gaussian_verdict(np.median(mom["skew"]), np.median(mom["excess_kurtosis"]),
                                np.median(ss.neighbour_correlation(rows)))
        assert bool(v["gaussian"]) is passes
        if worst:
            assert v["worst"] == worst and v["violation"] > 1


def test_range_entropy_and_mass_match_softmax_written_out():
    rng = np.random.default_rng(10)
    scores = rng.standard_normal((3, 50)) * 2
    queries = np.array([20, 35, 49])
    for t1, t2 in ((0, 1), (2, 4), (4, 8), (8, 16)):
        h = ss.range_entropy(scores, queries, t1, t2)
        mass = ss.range_mass(scores, queries, t1, t2)
        for q, i in enumerate(queries):
            keys = [i - t for t in range(t1, t2)]
            h_ref = stats.entropy(special.softmax(scores[q, keys]))
            a = special.softmax(scores[q, :i + 1])
            assert h[q] == pytest.approx(h_ref, rel=1e-10, abs=1e-12)
            assert mass[q] == pytest.approx(a[keys].sum(), rel=1e-10)
    np.testing.assert_allclose(ss.recent_mass(scores, queries, 5),
                               ss.range_mass(scores, queries, 0, 5))
    with pytest.raises(ValueError, match="query_positions"):
        ss.range_entropy(scores, queries, 16, 32)


def test_measured_gaussian_is_piecewise_and_reduces_to_standard_attention():
    from sia_theory import NoScale
    from sia_theory.gaussian.montecarlo import simulate_gaussian_range_statistics

    tr = ss.MeasuredGaussian((0, 1, 4, 16), (1.0, 2.0, 3.0), (0.0, -1.0, 0.5))
    a, m = tr.coefficients(np.array([0, 1, 3, 4, 15, 16, 100]))
    np.testing.assert_array_equal(a, [1, 2, 2, 3, 3, 3, 3])
    np.testing.assert_array_equal(m, [0, -1, -1, 0.5, 0.5, 0.5, 0.5])
    flat = ss.MeasuredGaussian((0, 64), (1.0,), (0.0,))
    ranges = [(1, 2), (4, 8), (16, 32)]
    got = simulate_gaussian_range_statistics(flat, 64, ranges, 8, 3)
    want = simulate_gaussian_range_statistics(NoScale(), 64, ranges, 8, 3)
    np.testing.assert_array_equal(got.H, want.H)
    np.testing.assert_array_equal(got.mass, want.mass)


# --- schemes, sharing and budget ---------------------------------------------------------------


def test_identical_prefix_is_where_each_score_mod_is_the_identity():
    assert runs.identical_prefix(None, 20_000) == 20_000
    # Qwen: factor 1 while n = q_idx + 1 <= 8192; Llama-4: floor(n/8192) = 0 while n <= 8191
    assert QwenLogN(8192).multiplier(8192) == 1 and QwenLogN(8192).multiplier(8193) > 1
    assert runs.identical_prefix(QwenLogN(8192), 20_000) == 8192
    assert Llama4Temperature(8192.0, 0.1).multiplier(8191) == 1
    assert Llama4Temperature(8192.0, 0.1).multiplier(8192) > 1
    assert runs.identical_prefix(Llama4Temperature(8192.0, 0.1), 20_000) == 8191
    assert runs.identical_prefix(YaRNTemperature(1.0), 500) == 500
    assert runs.identical_prefix(ScaleInvariant(100.0), 500) == 1


def test_scheme_families_share_the_rope_prefix_and_alias_schemes_equal_to_rope():
    fams = model_runs.scheme_families(model_runs.schemes(16384, 1e5), 16384, 64)
    shared = {tuple(m[0].name for m in members): s for s, members in fams}
    assert shared[("rope", "qwen-logn", "llama4")] == 8191
    assert shared[("rope-ntk",)] == shared[("yarn",)] == shared[("si-rope-posthoc",)] == 16384
    fams = model_runs.scheme_families(model_runs.schemes(4096, 1e5), 4096, 64)
    aliases = [m[1] for _, members in fams for m in members]
    assert ("rope", "rope-ntk", "yarn", "qwen-logn", "llama4") in aliases  # s = 1: all are RoPE


def test_yarn_scheme_is_the_reference_code_and_cell_keys_see_its_definition():
    """The studies' YaRN is transformers' / the authors' (ramp in the dimension index), and a
    family's fingerprint (part of the cell keys) changes with any member's definition, so a
    store holding cells of the paper-text ramp is not reused."""
    by_name = {s.name: s for s in model_runs.schemes(16384, 1e5)}
    yarn = by_name["yarn"]
    assert yarn.position == YaRNRoPE(factor=2.0, original_max_position_embeddings=8192,
                                     rope_theta=1e5, beta_fast=32, beta_slow=1)
    assert yarn.position.ramp == "dimension" and yarn.score_mod == YaRNTemperature(2.0)
    family = [(yarn, ("yarn",))]
    text = [(yarn._replace(position=YaRNRoPE(8192, 16384, 1e5, ramp="rotations")), ("yarn",))]
    key = model_runs.family_definition(family)
    assert len(key) == 16 and key == model_runs.family_definition(list(family))
    assert key != model_runs.family_definition(text)
    assert key != model_runs.family_definition([(yarn._replace(score_mod=YaRNTemperature(3.0)),
                                           ("yarn",))])


def test_prefill_flops_counts_every_product():
    from sia_theory.models.llama import LlamaConfig

    c = LlamaConfig(2, 8, 2, 1, 12, 1e4, 1e-5, 64, 10)
    per_token = 2 * (8 * 8 + 8 * 4 + 8 * 4 + 8 * 8 + 8 * 12 * 3)  # q, k, v, o, gate/up/down
    want = sum(c.n_layers * (per_token + 4 * 2 * 4 * (i + 1)) for i in range(5, 11))
    assert runs.prefill_flops(c, 5, 11) == want
    assert runs.prefill_flops(c, 5, 11, head_rows=3) == want + 3 * 2 * 8 * 10


# --- with the real weights (small sizes) ------------------------------------------------------

@pytest.fixture(scope="module")
def smollm():
    return model_runs.pretrained()


def test_shared_prefix_then_fork_equals_the_schemes_own_forward(smollm):
    """RoPE's cache of the positions where Qwen logn is the identity, forked and continued
    with Qwen's score mod, gives Qwen's own losses; continuing one position too late does not."""
    model, tokenizer = smollm
    ids = np.asarray(tokenizer.encode(corpus.prose_topics()[0][1]))[:64]
    qwen = QwenLogN(24)
    shared = runs.identical_prefix(qwen, 64)
    assert shared == 24
    want = model.token_losses(ids, qwen)

    def shared_route(prefix):
        base = model.new_cache(None, None)
        head = runs.extend_losses(model, base, ids[:prefix], next_id=ids[prefix])
        twin = base.fork()
        twin.score_mod = qwen
        return np.concatenate([head, runs.extend_losses(model, twin, ids[prefix:])])

    np.testing.assert_allclose(shared_route(shared), want, rtol=0, atol=2e-4)
    assert np.max(np.abs(shared_route(shared + 6) - want)) > 1e-3  # the control


def test_teacher_forced_score_is_greedy_decoding(smollm):
    model, tokenizer = smollm
    for depth in (0.0, 1.0):
        prompt = corpus.passkey_prompt(tokenizer.encode, corpus.passkey_key(0, 1), depth, 90)
        cache = model.prefill(prompt.ids)
        forced = np.vstack([cache.last_logits[None],
                            model.continue_(cache, prompt.answer[:-1])])
        result = corpus.score_passkey(forced, prompt.answer, prompt.digit_start)
        greedy = model.generate(prompt.ids, prompt.answer.size)
        assert result["correct"] == (list(greedy) == prompt.answer.tolist())
        assert result["first_token_correct"] == (greedy[0] == prompt.answer[0])
        leading = next((j for j, (a, b) in enumerate(zip(greedy, prompt.answer, strict=True))
                        if a != b), prompt.answer.size)
        if leading >= prompt.digit_start:  # greedy reached the digits on the answer's path
            assert result["digits_correct"] == leading - prompt.digit_start


def test_smollm_writes_the_key_as_a_lone_space_then_one_token_per_digit(smollm):
    """The tokenizer splits every digit (its pre-tokenizer's Digits step), so " 60264" is the
    space alone, then 6, 0, 2, 6, 4: the answer's digits start at its second token."""
    _, tokenizer = smollm
    prompt = corpus.passkey_prompt(tokenizer.encode, 60264, 0.5, 90)
    assert prompt.answer.size == 6 and prompt.digit_start == 1
    assert [tokenizer.decode([int(t)]) for t in prompt.answer] == [" ", "6", "0", "2", "6", "4"]


def test_capture_scores_are_the_models_own_raw_scores(smollm):
    model, tokenizer = smollm
    ids = np.asarray(tokenizer.encode(corpus.prose_topics()[1][1]))[:40]
    rows = np.array([5, 20, 39])
    got = {}
    runs.capture_scores(model, ids, rows, lambda layer, s: got.__setitem__(layer, s))
    want = model.attention_scores(ids, [0, 7, 29], rows)  # the model helper's own route
    for n, layer in enumerate((0, 7, 29)):
        np.testing.assert_allclose(got[layer], want[n], rtol=1e-12, atol=1e-12)


def test_wilson_interval_is_wilsons_score_interval():
    """Wilson (1927): (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n), written out here."""
    from sia_theory._infra.stats import wilson_interval

    z = 1.959963984540054  # the 97.5 % normal quantile
    for k, n in ((0, 1), (0, 5), (3, 7), (6, 6), (12, 40)):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        assert wilson_interval(k, n) == pytest.approx((max(0.0, centre - half),
                                                       min(1.0, centre + half)), abs=1e-12)
    with pytest.raises(ValueError, match="trials"):
        wilson_interval(3, 2)


def test_the_entropy_law_figure_has_a_colour_for_every_law():
    """experiments/model_entropy_law.py draws one bar per law of ENTROPY_LAWS; a law without a
    colour would stop `make figures-model` with a KeyError."""
    import importlib.util
    from pathlib import Path

    from sia_theory.gaussian.laws import ENTROPY_LAWS

    path = Path(__file__).resolve().parents[2] / "experiments" / "model_entropy_law.py"
    spec = importlib.util.spec_from_file_location("model_entropy_law_script", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert set(script.COLOURS) == set(ENTROPY_LAWS)
