"""The zoo inside PyTorch FlexAttention: :func:`sia_theory.export.flex_score_mod` against the
package's numpy reference attention (``attention_dense``, float64 whatever the input), eager and
under ``torch.compile``, and :func:`flex_query_stats` against a dense softmax written out here.

Tolerances: float64 computed in float64 by torch (eager) within 1e-12 of the reference; float32
within a first-order rounding bound (:func:`tolerance`): a logit ``L`` computed in float32 is
off by about one rounding of its size, ``|ΔL| ≈ u·max|L|`` (``u = 2^-24``; the dot product's
roundings partly cancel), and a softmax turns logit errors into weight errors
``|Δp_j| <= 2 p_j max|ΔL|``, so the output is within ``2·max|ΔL|·max|v|`` plus its own
rounding ``u·max|v|`` (9.5e-6 for SI on these inputs, 3e-6 for standard attention). A fixed
2e-6 was exceeded (2.2e-6) by SI's larger logits on a loaded machine, where torch's float32
reductions take another order. torch 2.13's inductor compiles
FlexAttention on CPU for float32 only (``LoweringException: NotImplementedError: torch.float,
torch.float16 and torch.bfloat16 are supported in FlexAttention for CPU device``), so the
compiled checks run in float32.
"""

import math
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
flex = pytest.importorskip("torch.nn.attention.flex_attention")

from sia_theory import ALiBi, ScaleInvariant, Transform  # noqa: E402
from sia_theory.attention import attention, attention_dense, attention_scores  # noqa: E402
from sia_theory.export import (  # noqa: E402
    causal_block_mask,
    flex_query_stats,
    flex_score_mod,
)
from sia_theory.zoo import ZOO  # noqa: E402

T = 256  # a multiple of FlexAttention's 128-row blocks
TOL64 = 1e-12
U32 = 2.0 ** -24  # float32 unit roundoff


def tolerance(q, k, v, transform):
    """1e-12 for float64 inputs; for float32 the first-order rounding bound of the module
    docstring, from these inputs' largest modified logit and value."""
    if q.dtype == np.float64:
        return TOL64
    logits = attention_scores(*(x.astype(np.float64) for x in (q, k)), score_mod=transform)
    max_logit = float(np.max(np.abs(logits[np.isfinite(logits)])))
    max_v = float(np.max(np.abs(v)))
    return 2 * (U32 * max_logit) * max_v + U32 * max_v


def qkv(dtype, n_heads=2, length=T, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((1, n_heads, length, 16)).astype(dtype) for _ in range(3))


def flex_out(q, k, v, mod, fn=None, **kwargs):
    fn = flex.flex_attention if fn is None else fn
    tensors = [torch.from_numpy(x) for x in (q, k, v)]
    return fn(*tensors, score_mod=mod, block_mask=causal_block_mask(q.shape[2]), **kwargs)


def reference(q, k, v, transform):
    """The float64 reference on the same (rounded) inputs."""
    return attention_dense(*(x.astype(np.float64) for x in (q, k, v)), score_mod=transform)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(ZOO))
def test_flex_score_mod_matches_reference_attention_eager(name, dtype):
    q, k, v = qkv(dtype)
    mod = flex_score_mod(ZOO[name], T, dtype=torch.float64 if dtype == np.float64 else None)
    out = flex_out(q, k, v, mod).numpy()
    assert out.dtype == dtype
    assert np.max(np.abs(out - reference(q, k, v, ZOO[name]))) <= tolerance(q, k, v, ZOO[name])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_flex_score_mod_past_a_context_threshold(dtype):
    """T = 256 stays below the context laws' thresholds; Grok-2's (p > 1024) is crossed at 1280:
    the last 255 queries are scaled by log2(p)/10 (up to 1.03)."""
    q, k, v = qkv(dtype, length=1280)
    transform = ZOO["grok2"]
    assert transform.multiplier(1280) > 1.03
    mod = flex_score_mod(transform, 1280, dtype=torch.float64 if dtype == np.float64 else None)
    out = flex_out(q, k, v, mod).numpy()
    assert np.max(np.abs(out - reference(q, k, v, transform))) <= tolerance(q, k, v, transform)
    assert np.max(np.abs(out - reference(q, k, v, ZOO["none"]))) > 1e-3  # the factor matters


def test_flex_score_mod_per_head_alibi_matches_reference():
    transform = ALiBi.standard(4)
    q, k, v = qkv(np.float64, n_heads=4)
    out = flex_out(q, k, v, flex_score_mod(transform, T, dtype=torch.float64)).numpy()
    assert np.max(np.abs(out - reference(q, k, v, transform))) <= 1e-12
    with pytest.raises(ValueError, match="n_heads must be 4"):
        flex_score_mod(transform, T, n_heads=3)


def test_flex_score_mod_is_si_eq16_on_index_grids():
    # SI eq. 16 with alpha = beta = e^{1/2}, typed out: a_t^2 = 1 + 2 log(1 + t/tau),
    # m_t = -2 log(1 + t/tau), on broadcast grids q_idx (Q, 1), kv_idx (1, K), keys <= query.
    tau = 10.0
    mod = flex_score_mod(ScaleInvariant(tau), 5000, dtype=torch.float64)
    q_idx = torch.tensor([0, 9, 10, 4999]).view(-1, 1)
    kv_idx = torch.tensor([0, 5, 9]).view(1, -1)
    score = torch.full((4, 3), 0.7, dtype=torch.float64)
    t = (q_idx - kv_idx).abs().double()
    ell = torch.log1p(t / tau)
    want = torch.sqrt(1 + 2 * ell) * 0.7 - 2 * ell
    got = mod(score, torch.tensor(0), torch.tensor(0), q_idx, kv_idx)
    assert torch.max(torch.abs(got - want)) <= 1e-14


def test_flex_score_mod_equals_transform_score_mod_on_numpy_grids():
    # the table route against Transform.score_mod (the reference's own callable route)
    q_idx, kv_idx = np.arange(300).reshape(-1, 1), np.arange(300).reshape(1, -1)
    score = np.random.default_rng(1).standard_normal((300, 300))
    for name, transform in ZOO.items():
        mod = flex_score_mod(transform, 300, dtype=torch.float64)
        got = mod(torch.from_numpy(score), 0, 0, torch.from_numpy(q_idx),
                  torch.from_numpy(kv_idx)).numpy()
        want = transform.score_mod(score, 0, 0, q_idx, kv_idx)
        assert np.max(np.abs(got - want)) <= 1e-13 * (1 + np.max(np.abs(want))), name


def compiled_errors(names):
    compiled = torch.compile(flex.flex_attention)
    q, k, v = qkv(np.float32)
    return {name: float(np.max(np.abs(flex_out(q, k, v, flex_score_mod(ZOO[name], T),
                                               fn=compiled).numpy()
                                      - reference(q, k, v, ZOO[name]))))
            for name in names}


@pytest.mark.slow  # one inductor compilation, about 20 s on 2 cores; eager runs in make test
def test_flex_score_mod_compiled_scale_invariant():
    errors = compiled_errors(["scale-invariant"])
    q, k, v = qkv(np.float32)
    assert errors["scale-invariant"] <= tolerance(q, k, v, ZOO["scale-invariant"]), errors


@pytest.mark.slow
def test_flex_score_mod_compiled_every_zoo_scheme():
    errors = compiled_errors(sorted(ZOO))  # one compilation per scheme, about 4 s each
    q, k, v = qkv(np.float32)
    assert all(error <= tolerance(q, k, v, ZOO[name]) for name, error in errors.items()), errors


@pytest.mark.parametrize("name", ["none", "logn", "scale-invariant", "alibi"])
def test_flex_query_stats_match_dense_softmax(name):
    transform = ZOO[name]
    q, k, v = qkv(np.float64, seed=2)
    mod = flex_score_mod(transform, T, dtype=torch.float64)
    _, aux = flex_out(q, k, v, mod, return_aux=flex.AuxRequest(lse=True))
    found = flex_query_stats(torch.from_numpy(q), torch.from_numpy(k), aux.lse, mod, block=100)
    # the dense softmax written out: p = e^{L - max} / sum, entropy -sum p log p, max p
    logits = attention_scores(q, k, score_mod=transform)  # (B, H, T, T), -inf after the query
    top = logits.max(axis=-1, keepdims=True)
    weights = np.exp(logits - top)
    p = weights / weights.sum(axis=-1, keepdims=True)
    log_p = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), 0.0)
    want = (np.log(weights.sum(axis=-1)) + top[..., 0], -(p * log_p).sum(axis=-1), p.max(-1))
    for got, expected in zip(found, want):
        assert np.max(np.abs(got.numpy() - expected)) <= 1e-12
    # and the same numbers as the reference's streaming statistics
    _, stats = attention(q, k, v, score_mod=transform, return_stats=True)
    for got, ours in zip(found, stats):
        assert np.max(np.abs(got.numpy() - ours)) <= 1e-12


def test_flex_query_stats_do_not_inherit_an_error_in_lse():
    # compiled FlexAttention keeps lse in float32 (base 2): an lse off by up to 1e-6 (a float32
    # ulp at lse ~ 8) must not move the statistics by more than rounding
    q, k, v = qkv(np.float64, seed=3)
    mod = flex_score_mod(ZOO["scale-invariant"], T, dtype=torch.float64)
    _, aux = flex_out(q, k, v, mod, return_aux=flex.AuxRequest(lse=True))
    exact = flex_query_stats(torch.from_numpy(q), torch.from_numpy(k), aux.lse, mod)
    shift = 1e-6 * np.random.default_rng(4).uniform(-1, 1, aux.lse.shape)
    found = flex_query_stats(torch.from_numpy(q), torch.from_numpy(k),
                             aux.lse + torch.from_numpy(shift), mod)
    for got, want in zip(found, exact):
        assert np.max(np.abs(got.numpy() - want.numpy())) <= 1e-12
    # a formula that trusts lse (-Σ e^{L - lse} (L - lse)) would be off by ~|shift|
    logits = attention_scores(q, k, score_mod=ZOO["scale-invariant"])
    log_p = logits - (aux.lse.numpy() + shift)[..., None]
    trusting = -np.where(np.isfinite(log_p), np.exp(log_p) * log_p, 0.0).sum(-1)
    assert np.max(np.abs(trusting - exact.entropy.numpy())) > 1e-7


def test_export_bad_input_is_refused_before_work():
    with pytest.raises(ValueError, match="transform must be a sia_theory Transform"):
        flex_score_mod(lambda s, b, h, q, kv: s, T)
    with pytest.raises(ValueError, match="max_len"):
        flex_score_mod(ScaleInvariant(), 0)
    with pytest.raises(ValueError, match="dtype must be a torch floating dtype"):
        flex_score_mod(ScaleInvariant(), T, dtype=torch.int32)
    with pytest.raises(ValueError, match="lse"):
        flex_query_stats(torch.zeros(1, 1, 4, 2), torch.zeros(1, 1, 4, 2), torch.zeros(1, 4))


def test_library_imports_without_torch_and_jax():
    code = ("import sys; sys.modules['torch'] = None; sys.modules['jax'] = None\n"
            "import sia_theory, sia_theory.export, sia_theory.transforms.score_mod\n"
            "from sia_theory.export import coefficient_tables, flex_score_mod\n"
            "t = coefficient_tables(sia_theory.ScaleInvariant(), 1, 4)\n"
            "try:\n    flex_score_mod(sia_theory.ScaleInvariant(), 4)\n"
            "except ImportError as e:\n    print('ImportError', e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "sia-theory[torch]" in done.stdout


class DistanceAndContext(Transform):
    """a = 1 + t/n, m = −t/4: depends on both (the full (T, T) tables)."""

    depends_on = frozenset({"distance", "context"})

    def affine(self, t, n, h):
        return 1.0 + t / n, -t / 4


# Decoding: Tq new queries against a cache of Tk keys sit at positions Tk − Tq … Tk − 1 (the
# numpy reference's convention); FlexAttention numbers them from 0, so the mod takes q_offset.
DECODE = {"scale-invariant": ScaleInvariant(10), "logn": ZOO["logn"],
          "alibi-per-head": ALiBi.standard(4), "distance-and-context": DistanceAndContext()}


def decode_qkv(n_queries, n_keys=64, seed=5):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((1, 4, n_queries, 16))
    k, v = (rng.standard_normal((1, 4, n_keys, 16)) for _ in range(2))
    return q, k, v


@pytest.mark.parametrize("name", sorted(DECODE))
def test_flex_score_mod_decoding_one_query_with_q_offset(name):
    transform = DECODE[name]
    q, k, v = decode_qkv(1)
    want = attention(q, k, v, score_mod=transform)  # the query at position 63
    tensors = [torch.from_numpy(x) for x in (q, k, v)]
    mod = flex_score_mod(transform, 64, q_offset=63, dtype=torch.float64)
    out = flex.flex_attention(*tensors, score_mod=mod).numpy()
    assert np.max(np.abs(out - want)) <= TOL64
    # without the offset the query is read as position 0 (distances 0 … 63 to the keys)
    wrong = flex.flex_attention(*tensors, score_mod=flex_score_mod(transform, 64,
                                                                   dtype=torch.float64)).numpy()
    assert np.max(np.abs(wrong - want)) > 1e-2


@pytest.mark.parametrize("name", sorted(DECODE))
def test_flex_score_mod_decoding_a_few_queries_with_q_offset(name):
    # three new queries at positions 61, 62, 63; the causal mask takes the same offset
    transform = DECODE[name]
    q, k, v = decode_qkv(3)

    def causal(b, h, q_idx, kv_idx):
        return q_idx + 61 >= kv_idx

    mask = flex.create_block_mask(causal, None, None, 3, 64, device="cpu")
    out = flex.flex_attention(*(torch.from_numpy(x) for x in (q, k, v)), block_mask=mask,
                              score_mod=flex_score_mod(transform, 64, q_offset=61)).numpy()
    assert np.max(np.abs(out - attention(q, k, v, score_mod=transform))) <= TOL64


def test_flex_score_mod_q_offset_on_index_grids():
    # the mod at (q_idx, kv_idx) with q_offset = the transform's own score_mod at q_idx + q_offset
    q_idx, kv_idx = np.arange(4).reshape(-1, 1), np.arange(40).reshape(1, -1)
    score = np.random.default_rng(2).standard_normal((4, 40))
    for name, transform in ZOO.items():
        mod = flex_score_mod(transform, 40, q_offset=36)
        got = mod(torch.from_numpy(score), 0, 0, torch.from_numpy(q_idx),
                  torch.from_numpy(kv_idx)).numpy()
        want = transform.score_mod(score, 0, 0, q_idx + 36, kv_idx)
        assert np.max(np.abs(got - want)) <= 1e-13 * (1 + np.max(np.abs(want))), name
    with pytest.raises(ValueError, match="q_offset must be an integer >= 0"):
        flex_score_mod(ScaleInvariant(), T, q_offset=-1)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_flex_score_mod_default_dtype_follows_float64_scores(name):
    # dtype=None: float64 scores read float64 tables (float32 tables put SI 5e-7 off)
    q, k, v = qkv(np.float64)
    out = flex_out(q, k, v, flex_score_mod(ZOO[name], T)).numpy()
    assert np.max(np.abs(out - reference(q, k, v, ZOO[name]))) <= TOL64


def test_flex_score_mod_picks_tables_by_the_scores_dtype():
    # SI eq. 16 written out at distance t = 5: a² = 1 + 2 log(1.5), m = 1 − a²
    a2 = 1 + 2 * math.log1p(5 / 10)
    want = math.sqrt(a2) * 0.7 + 1 - a2
    one, five = torch.tensor(0), torch.tensor(5)
    default = flex_score_mod(ScaleInvariant(10), 8)
    for dtype in (torch.float64, torch.float32, torch.bfloat16):
        got = default(torch.tensor(0.7, dtype=dtype), one, one, five, one * 0)
        assert got.dtype == (torch.float64 if dtype == torch.float64 else torch.float32)
        if dtype == torch.float64:
            assert abs(float(got) - want) <= 1e-15
        else:  # float32 tables: a and m rounded to float32, as before
            a, m = np.float32(math.sqrt(a2)), np.float32(1 - a2)
            assert float(got) == float(torch.tensor(0.7, dtype=dtype).float() * a + m)
    # an explicit dtype is used for every call: float32 tables under float64 scores
    fixed = flex_score_mod(ScaleInvariant(10), 8, dtype=torch.float32)
    got = fixed(torch.tensor(0.7, dtype=torch.float64), one, one, five, one * 0)
    assert 1e-9 < abs(float(got) - want) < 1e-6


@pytest.mark.parametrize("name", ["scale-invariant", "logn", "alibi"])
def test_flex_score_mod_shorter_than_the_sequence_gives_nan(name):
    # a mod built for 128 positions on a 256-token sequence: every query row at or past 128
    # sees a key 128 or more positions back (or has context n > 128), so its output is NaN
    q, k, v = qkv(np.float64)
    out = flex_out(q, k, v, flex_score_mod(ZOO[name], 128)).numpy()
    assert np.all(np.isnan(out[:, :, 128:]))
    assert np.max(np.abs(out[:, :, :128] - reference(q, k, v, ZOO[name])[:, :, :128])) <= TOL64


def test_flex_score_mod_out_of_range_indices_read_nan():
    si, logn = flex_score_mod(ScaleInvariant(10), 8), flex_score_mod(ZOO["logn"], 8)
    score = torch.full((6,), 0.5, dtype=torch.float64)
    q_idx, zero = torch.tensor([-3, 0, 7, 8, 20, 30]), torch.zeros(6, dtype=torch.long)
    # LogN: 0.4·log(n)·score with n = q_idx + 1 for 0 <= q_idx < 8, NaN past the table and
    # for a negative index (it used to read the table from its end)
    got = logn(score, 0, 0, q_idx, zero).numpy()
    n = np.array([1.0, 8.0])
    assert np.all(np.isnan(got[[0, 3, 4, 5]]))
    assert np.max(np.abs(got[[1, 2]] - 0.4 * np.log(n) * 0.5)) <= 1e-15
    # SI reads the distance |q_idx − kv_idx|: NaN from distance 8 on, finite below it
    kv_idx = torch.tensor([0, 0, 0, 0, 13, 30])
    got = si(score, 0, 0, q_idx, kv_idx).numpy()  # distances 3, 0, 7, 8, 7, 0
    t = np.array([3.0, 0.0, 7.0, 7.0, 0.0])
    a2 = 1 + 2 * np.log1p(t / 10)
    assert np.isnan(got[3])
    assert np.max(np.abs(got[[0, 1, 2, 4, 5]] - (np.sqrt(a2) * 0.5 + 1 - a2))) <= 1e-15


def test_flex_score_mod_refuses_huge_tables_before_allocating():
    tracemalloc = pytest.importorskip("tracemalloc")
    from sia_theory._infra.memory import format_bytes

    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"max_len=1000000000000 needs about") as err:
            flex_score_mod(ScaleInvariant(10), 10**12)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20  # nothing of the tables was allocated
    # the estimate written out: a and m, 10**12 + 1 entries (the last the NaN) in float32 and
    # float64, their float64 values before rounding, and the float64 distances 0 … 10**12 − 1
    entries = 10**12 + 1
    estimate = 2 * entries * (4 + 8) + 2 * entries * 8 + 8 * 10**12
    assert format_bytes(estimate) in str(err.value) and "4 GiB" in str(err.value)
    with pytest.raises(ValueError, match="max_len=1000 needs about"):
        flex_score_mod(ScaleInvariant(10), 1000, max_bytes=1000)
    with pytest.raises(ValueError, match="max_len=20000 needs about"):  # (T+1)² tables, 9 GiB
        flex_score_mod(DistanceAndContext(), 20000)
    with pytest.raises(ValueError, match="max_bytes must be an integer >= 1"):
        flex_score_mod(ScaleInvariant(10), 1000, max_bytes=0)


def test_flex_score_mod_full_tables_read_no_nan_inside_max_len():
    # a = 1 + t/n, m = −t/4 for keys up to the query, m = −inf after it; no NaN below max_len
    q_idx, kv_idx = torch.arange(32).view(-1, 1), torch.arange(32).view(1, -1)
    got = flex_score_mod(DistanceAndContext(), 32)(torch.full((32, 32), 2.0, dtype=torch.float64),
                                                   0, 0, q_idx, kv_idx).numpy()
    t, n = (q_idx - kv_idx).numpy().astype(float), (q_idx + 1).numpy().astype(float)
    assert np.all(np.isneginf(got[t < 0]))
    assert np.max(np.abs(got[t >= 0] - (2 * (1 + t / n) - t / 4)[t >= 0])) <= 1e-14
