"""Benchmark of the attention reference: streaming (blockwise) vs dense at T = 4096 (time,
tracemalloc peak, GFLOP/s against the machine's numpy matmul), block-size sweep, and the
streaming path at T = 65,536 with ScaleInvariant(tau=10) + SI p-RoPE + QK-norm.

BLAS runs single-threaded unless OPENBLAS_NUM_THREADS / OMP_NUM_THREADS are set (or
``--blas-threads N``): on the shared 2-core machine a threaded OpenBLAS oversubscribed the cores
and made the 512×64 block products 4–6× slower (T = 16,384: 1.4–2.4 s with one thread, 9.6–13.7 s
with two). The matmul reference is measured with the same setting.
"""

import os
import sys
import time
import tracemalloc


def _blas_threads(argv):
    """Set the BLAS thread count before numpy is imported (it is read once, at load)."""
    threads = "1"
    if "--blas-threads" in argv[:-1]:
        threads = argv[argv.index("--blas-threads") + 1]
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ.setdefault(name, threads)


if __name__ == "__main__":
    _blas_threads(sys.argv)

import numpy as np  # noqa: E402

from sia_theory import NoScale, ScaleInvariant  # noqa: E402
from sia_theory._infra.cli import OneLineArgumentParser  # noqa: E402
from sia_theory._infra.timing import best_time, traced_peak  # noqa: E402
from sia_theory.attention import (  # noqa: E402
    DEFAULT_BLOCK_SIZE,
    attention,
    attention_dense,
    p_rope_si,
    rms_norm,
)

MIB = 2.0**20
TARGET_TIME_RATIO, TARGET_MEMORY_RATIO = 1.5, 0.1
TARGET_LONG_SECONDS, TARGET_LONG_BYTES = 180.0, 2.0**30



def best_seconds(fn, repeats):
    return best_time(fn, repeats).seconds

def matmul_gflops(n, repeats):
    """Measured numpy (BLAS) float64 GFLOP/s: a square n×n product, and the QKᵀ shape."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    square = 2 * n**3 / best_seconds(lambda: a @ b, repeats) / 1e9
    q, k = rng.standard_normal((4096, 64)), rng.standard_normal((4096, 64))
    qk = 2 * 4096 * 4096 * 64 / best_seconds(lambda: q @ k.T, repeats) / 1e9
    return square, qk


def inputs(n_ctx, seed=0, head_dim=64):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((1, 1, n_ctx, head_dim)) for _ in range(3))


def causal_flops(n_ctx, head_dim):
    """Useful flops of causal attention: q·k and p·v over the T(T+1)/2 visible pairs."""
    return 2 * 2 * head_dim * n_ctx * (n_ctx + 1) / 2


def main(quick=False, blas_threads=None):
    repeats = 2 if quick else 5
    n_ctx = 1024 if quick else 4096
    long_ctx = 8192 if quick else 65536
    print(f"numpy {np.__version__}; float64; B = H = 1, D = 64; best of {repeats}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    square, qk = matmul_gflops(1024 if quick else 2048, repeats)
    print(f"machine matmul: {square:.1f} GFLOP/s (square {1024 if quick else 2048}^3), "
          f"{qk:.1f} GFLOP/s (QK^T shape 4096x64 @ 64x4096)")

    q, k, v = inputs(n_ctx)
    flops = causal_flops(n_ctx, 64)
    print(f"\n== T = {n_ctx}: dense vs blockwise (block {DEFAULT_BLOCK_SIZE}), causal")
    print(f"{'score_mod':<22}{'dense s':>9}{'block s':>9}{'ratio':>7}{'dense MiB':>11}"
          f"{'block MiB':>11}{'ratio':>7}{'GFLOP/s':>9}{'of mm':>7}")
    results = {}
    for name, mod in (("NoScale", NoScale()), ("ScaleInvariant(10)", ScaleInvariant(10.0))):
        attention(q[:, :, :8], k[:, :, :8], v[:, :, :8], score_mod=mod)  # warm-up (lambdify)
        dense_s = best_seconds(lambda mod=mod: attention_dense(q, k, v, score_mod=mod), repeats)
        block_s = best_seconds(lambda mod=mod: attention(q, k, v, score_mod=mod,
                                              block_size=DEFAULT_BLOCK_SIZE), repeats)
        dense_b = traced_peak(lambda mod=mod: attention_dense(q, k, v, score_mod=mod))
        block_b = traced_peak(lambda mod=mod: attention(q, k, v, score_mod=mod,
                                                block_size=DEFAULT_BLOCK_SIZE))
        gflops = flops / block_s / 1e9
        results[name] = (block_s / dense_s, block_b / dense_b)
        print(f"{name:<22}{dense_s:>9.3f}{block_s:>9.3f}{block_s / dense_s:>7.2f}"
              f"{dense_b / MIB:>11.1f}{block_b / MIB:>11.1f}{block_b / dense_b:>7.3f}"
              f"{gflops:>9.1f}{gflops / square:>7.0%}")
    worst_time = max(r[0] for r in results.values())
    worst_memory = max(r[1] for r in results.values())
    met = worst_time <= TARGET_TIME_RATIO and worst_memory <= TARGET_MEMORY_RATIO
    verdict = "not evaluated (quick sizes)" if quick else "MET" if met else "NOT MET"
    print(f"target at T = 4096: blockwise time <= {TARGET_TIME_RATIO}x dense and peak <= "
          f"{TARGET_MEMORY_RATIO:.0%} of dense: {verdict} "
          f"(worst time ratio {worst_time:.2f}, worst memory ratio {worst_memory:.3f})")

    print(f"\n== T = {n_ctx}: cost of the transform, blockwise (block {DEFAULT_BLOCK_SIZE})")
    transform = ScaleInvariant(10.0)

    def generic(score, b, h, q_idx, kv_idx):  # the same transform through the broadcast path
        return transform.score_mod(score, b, h, q_idx, kv_idx)

    routes = {"no score_mod": None, "ScaleInvariant, distance tables (fast path)": transform,
              "ScaleInvariant, generic score_mod callable": generic}
    route_times = {name: best_seconds(lambda mod=mod: attention(q, k, v, score_mod=mod), repeats)
                   for name, mod in routes.items()}
    for name, seconds in route_times.items():
        print(f"{name:<46}{seconds:>8.3f} s  ({seconds / route_times['no score_mod']:.2f}x)")

    print(f"\n== block-size sweep at T = {n_ctx}, ScaleInvariant(10)")
    mod = ScaleInvariant(10.0)
    for block in (128, 256, 512, 1024, 2048):
        seconds = best_seconds(lambda block=block: attention(q, k, v, score_mod=mod,
                                                              block_size=block),
                            repeats)
        print(f"block {block:>5}: {seconds:.3f} s"
              f"{'  (default)' if block == DEFAULT_BLOCK_SIZE else ''}")

    print(f"\n== T = {long_ctx:,}: ScaleInvariant(tau=10) + SI p-RoPE + QK-norm, streaming")
    q, k, v = inputs(long_ctx, seed=1)
    positions = np.arange(long_ctx)

    def long_run():
        q_enc = p_rope_si(rms_norm(q), positions)  # (1, 1, T, 64)
        k_enc = p_rope_si(rms_norm(k), positions)
        return attention(q_enc, k_enc, v, score_mod=ScaleInvariant(10.0))

    tracemalloc.start()  # one run, timed and traced (a few thousand allocations: cheap)
    start = time.perf_counter()
    out = long_run()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert np.all(np.isfinite(out))
    print(f"time {seconds:.1f} s, tracemalloc peak {peak / MIB:.1f} MiB, useful "
          f"{causal_flops(long_ctx, 64) / seconds / 1e9:.1f} GFLOP/s; a dense score matrix "
          f"would need {long_ctx**2 * 8 / 2**30:.1f} GiB")
    if not quick:
        met = seconds <= TARGET_LONG_SECONDS and peak < TARGET_LONG_BYTES
        print(f"target: <= {TARGET_LONG_SECONDS:.0f} s and < 1 GiB: {'MET' if met else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    parser = OneLineArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--blas-threads", type=int, default=None,
                        help="BLAS threads if OPENBLAS_NUM_THREADS is unset (default 1)")
    sys.exit(main(**vars(parser.parse_args())))
