"""The streaming kernel's speed paths hold their promises: float32 in float32 within 1e-5 of
float64 (and each row within 2e-6 at T = 2048), bit-identical results for any number of
workers, rows of very different scale, overflow recovered in float64, and decoding steps that
do not re-read the cache."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sia_theory import ALiBi, LogN, ScaleInvariant
from sia_theory.attention import (
    Decoder,
    DecoderConfig,
    PRoPESI,
    attention,
    attention_dense,
    core,
    kernel,
)

ROOT = Path(__file__).resolve().parents[2]


def _qkv(shape, n_keys=None, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    b, h, t, d = shape
    n_keys = n_keys or t
    return (rng.standard_normal(shape).astype(dtype),
            rng.standard_normal((b, h, n_keys, d)).astype(dtype),
            rng.standard_normal((b, h, n_keys, d)).astype(dtype))


MODS = [None, ScaleInvariant(tau=10.0), LogN(0.4), ALiBi.standard(2),
        lambda s, b, h, qi, ki: s - 0.01 * np.abs(qi - ki)]


@pytest.mark.parametrize("mod", MODS, ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("block_size", [None, 100])
def test_float32_within_1e5_relative_of_float64(mod, block_size):
    """Several key blocks, both task plans; error relative to the output's scale."""
    q, k, v = _qkv((1, 2, 1200, 32), seed=1)
    exact, exact_lse = attention(q, k, v, score_mod=mod, block_size=block_size,
                                 return_lse=True)
    single, single_lse = attention(*(x.astype(np.float32) for x in (q, k, v)), score_mod=mod,
                                   block_size=block_size, return_lse=True)
    assert single.dtype == single_lse.dtype == np.float32
    assert np.max(np.abs(single - exact)) <= 1e-5 * np.max(np.abs(exact))
    assert np.max(np.abs(single_lse - exact_lse)) <= 1e-5 * np.max(np.abs(exact_lse))


def test_float32_input_is_computed_in_float32():
    seen = set()

    def record(score, b, h, q_idx, kv_idx):
        seen.add(score.dtype)
        return score

    q, k, v = _qkv((1, 1, 40, 8), dtype=np.float32)
    attention(q, k, v, score_mod=record)
    assert seen == {np.dtype(np.float32)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mod", [None, ScaleInvariant(tau=10.0)], ids=["bare", "si"])
def test_result_is_bit_identical_for_any_worker_count(dtype, mod):
    q, k, v = _qkv((2, 2, 1100, 16), seed=2, dtype=dtype)
    assert 2 * 2 * 1100 * 1101 // 2 > core.SMALL_WORK  # split into (batch, head, rows) tasks
    runs = [attention(q, k, v, score_mod=mod, workers=w, return_lse=True) for w in (1, 2, 3)]
    for out, lse in runs[1:]:
        assert np.array_equal(out, runs[0][0]) and np.array_equal(lse, runs[0][1])


def _worst_row_error(out, reference):
    """max over rows of |out - reference| / |reference| (Euclidean norms over the head dim)."""
    out = out.astype(np.float64)
    return np.max(np.linalg.norm(out - reference, axis=-1)
                  / np.linalg.norm(reference, axis=-1))


@pytest.mark.parametrize("mod", [None, ScaleInvariant(tau=10.0)], ids=["bare", "si"])
def test_float32_error_against_float64_is_below_2e6_of_each_row(mod, monkeypatch):
    """T = 2048, D = 64: every row of the float32 result within 2e-6 of the float64 one (relative
    to the row's norm). ScaleInvariant multiplies the rounding of the float32 product q·k by
    a_t (3.2 at distance 2000); the float64 refinement of the largest weights is what keeps it
    under 2e-6: without it the same call is above (the negative control)."""
    q, k, v = _qkv((1, 2, 2048, 64), seed=11)
    reference = attention(q, k, v, score_mod=mod)
    single = [x.astype(np.float32) for x in (q, k, v)]
    error = _worst_row_error(attention(*single, score_mod=mod), reference)
    assert error <= 2e-6
    if mod is not None:
        monkeypatch.setattr(kernel, "REFINE", False)
        assert _worst_row_error(attention(*single, score_mod=mod), reference) > 2e-6 > error


@pytest.mark.slow
def test_float32_si_error_at_16k_is_below_2e6_on_the_benchmark_inputs():
    """The benchmark's case (bench_attention_peer: B = 1, H = 8, T = 16,384, D = 64, standard
    normal q, k, v from seed 0, cast to float32): ScaleInvariant(10)'s worst row within 2e-6 of
    float64 on the same numbers. With the refinement threshold at 1.5 nats it was 2.09e-6."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 8, 16384, 64)).astype(np.float32) for _ in range(3))
    mod = ScaleInvariant(tau=10.0)
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    reference = attention(q64, k64, v64, score_mod=mod)
    # the float64 streaming reference itself against the dense oracle on the last rows
    oracle = attention_dense(q64[:, :, -256:], k64, v64, score_mod=mod)
    assert _worst_row_error(reference[:, :, -256:], oracle) < 1e-12
    assert _worst_row_error(attention(q, k, v, score_mod=mod), reference) <= 2e-6


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_of_very_different_scale_fall_back_exactly(dtype):
    """Row maxima hundreds of nats apart defeat one shared shift; the per-row route takes over
    and matches the float64 dense reference."""
    q, k, v = _qkv((1, 1, 300, 8), seed=4)
    q[:, :, ::3] *= 60.0  # scores of every third row are ~60x larger
    out = attention(*(x.astype(dtype) for x in (q, k, v)), block_size=32)
    reference = attention_dense(q, k, v)
    tol = 1e-12 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(out, reference, rtol=0, atol=tol)


def test_float32_overflow_is_recomputed_in_float64():
    """q·k beyond float32's range: the task is redone in float64, not returned as NaN."""
    q, k, v = _qkv((1, 1, 50, 8), seed=5)
    q *= 1e19
    k *= 1e19
    out = attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32))
    reference = attention_dense(*(x.astype(np.float32).astype(np.float64) for x in (q, k, v)))
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, reference, rtol=0, atol=1e-6)


def test_decoding_step_checks_new_entries_only(monkeypatch):
    """The finiteness check sees O(new tokens) entries per step, whatever the context length
    (before the fix every step re-checked the whole cache), and bad entries are refused on
    entry."""
    model = Decoder(DecoderConfig(vocab_size=50, d_model=32, n_heads=2, n_layers=2,
                                  position=PRoPESI(), transform=ScaleInvariant(tau=10.0)))
    checked = []
    original = core.require_finite
    monkeypatch.setattr(core, "require_finite",
                        lambda name, x: (checked.append(x.size), original(name, x))[1])
    per_step = []
    for context in (20, 400):
        cache = model.new_cache()
        model.forward(np.arange(context)[None] % 50, cache)
        checked.clear()
        model.decode_step(np.array([7]), cache)
        per_step.append(sum(checked))
    assert per_step[0] == per_step[1] > 0
    assert per_step[1] < 400 * 32  # less than one layer's keys at context 400
    with pytest.raises(ValueError, match="keys must contain only finite"):
        cache.append_kv(0, np.full((1, 2, 1, 16), np.nan), np.zeros((1, 2, 1, 16)))


def test_nested_call_from_a_task_runs_inline():
    """A score_mod that itself calls attention (inside a worker task) must not deadlock."""
    small = _qkv((1, 1, 4, 4), seed=6)

    def nested(score, b, h, q_idx, kv_idx):
        attention(*small)
        return score

    q, k, v = _qkv((1, 2, 1500, 8), seed=7)
    out = attention(q, k, v, score_mod=nested, workers=2)
    np.testing.assert_allclose(out, attention(q, k, v, workers=1), rtol=0, atol=1e-13)


@pytest.mark.parametrize("flags", [["--workers", "0"], ["--workers", "-1"], ["--workers", "x"],
                                   ["--nope"]])
def test_benchmark_rejects_bad_flags_in_one_line(flags):
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_attention.py"),
                           "--quick", *flags], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_decoder_forward_is_bit_identical_for_any_worker_count(monkeypatch):
    """The decoder takes attention's default threads; its logits must not depend on them."""
    model = Decoder(DecoderConfig(vocab_size=50, d_model=32, n_heads=2, n_layers=2,
                                  position=PRoPESI(), transform=ScaleInvariant(tau=10.0)))
    tokens = np.random.default_rng(8).integers(0, 50, (2, 1100))
    logits = []
    for workers in (1, 2):
        monkeypatch.setattr(core, "available_workers", lambda workers=workers: workers)
        logits.append(model.forward(tokens))
    assert np.array_equal(logits[0], logits[1])


def _attention_in_child(queue):
    q, k, v = _qkv((1, 2, 1500, 8), seed=9)
    queue.put(float(attention(q, k, v, workers=2).sum()))


def test_worker_pool_survives_fork():
    """A process forked after attention ran on the thread pool gets a fresh pool (the
    parent's threads do not exist in the child: reusing the pool would wait forever)."""
    import multiprocessing

    q, k, v = _qkv((1, 2, 1500, 8), seed=9)
    expected = float(attention(q, k, v, workers=2).sum())
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_attention_in_child, args=(queue,))
    child.start()
    child.join(timeout=60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive and child.exitcode == 0
    assert queue.get(timeout=5) == expected


@pytest.mark.parametrize(("dtype", "shape", "kv_heads", "split", "expected"), [
    (np.float64, (1, 8, 4096, 64), 8, True, (128, 1024)),  # 1 MiB
    (np.float32, (1, 8, 4096, 64), 8, True, (256, 1024)),  # 1 MiB
    (np.float32, (1, 8, 1, 64), 8, True, (1, 2**18)),  # decoding: the context in 1 MiB blocks
    (np.float64, (1, 8, 1, 64), 8, True, (1, 2**17)),
    (np.float32, (1, 8, 4096, 64), 1, True, (256, 128)),  # GQA group 8: 256 KiB per head
    (np.float64, (1, 8, 4096, 64), 1, True, (128, 128)),
    (np.float32, (1, 8, 100, 64), 8, False, (100, 327)),  # one task for every head: 1 MiB
    (np.float32, (2, 8, 256, 64), 8, False, (256, 128)),  # the floor of 128 keys
])
def test_default_blocks_hold_about_one_mib_of_scores(dtype, shape, kv_heads, split, expected):
    """float64 tasks are 128 query rows × 1024 keys, float32 tasks 256 × 1024 (the same bytes;
    the measured choice in docs/theory/benchmarks.md); tasks holding several heads take fewer
    keys per block, never fewer than 128; a decoding step takes the whole context up to 1 MiB of
    scores per block."""
    from sia_theory.attention.core import _block_sizes, block_shape

    q = np.zeros(shape, dtype)
    k = np.zeros((shape[0], kv_heads, 4096, shape[3]), dtype)
    assert _block_sizes(q, k, None, split_heads=split) == expected
    assert block_shape(dtype) == {np.float64: (128, 1024), np.float32: (256, 1024)}[dtype]
    for bad in (np.float16, np.complex128, np.int64):
        with pytest.raises(ValueError, match="dtype must be float32 or float64"):
            block_shape(bad)
