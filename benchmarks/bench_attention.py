"""Benchmark of the attention reference in a default process (no environment variables).

1. Streaming causal attention, B = 1, H = 8, D = 64, T = 4096, ScaleInvariant(10): useful
   GFLOP/s (2·T²·D·H: QKᵀ and PV over the causal half) against this machine's matmul rate on
   the kernel's own block shapes, measured in the same run, interleaved, on as many threads.
   Targets: >= 60 % in float32, >= 70 % in float64; the score mod costs <= 1.15x bare attention.
2. Threads: 1 -> default workers at T = 16,384 (target >= 1.7x on a quiet machine), and the
   default process with one other process keeping a core busy against one pinned thread
   (target: at most 1.1x slower).
3. Decoding steps at growing context, float32 and float64 (O(context) per step).
4. T = 65,536, ScaleInvariant(10) + SI p-RoPE + QK-norm, float64: <= 20 s, < 512 MiB peak.

The library chooses its own threads (tasks on worker threads, BLAS pinned to one thread inside
them); ``--workers N`` overrides the default for the whole run. Timings are best-of-N wall times
on a machine that may be shared: the load average is printed beside every section.
"""

import os
import subprocess
import sys
import time
import tracemalloc

import numpy as np

from sia_theory import NoScale, ScaleInvariant
from sia_theory.attention import (
    Decoder,
    DecoderConfig,
    PRoPESI,
    attention,
    attention_dense,
    p_rope_si,
    rms_norm,
)
from sia_theory.attention.core import block_shape
from sia_theory.toolkit import available_workers, benchmark_parser, positive_int, run_tasks

MIB = 2.0**20
TARGET_RATE = {"float32": 0.60, "float64": 0.70}
TARGET_MOD_COST, TARGET_SPEEDUP, TARGET_BUSY = 1.15, 1.7, 1.1
TARGET_LONG_SECONDS, TARGET_LONG_BYTES = 20.0, 512 * MIB
HEAD_DIM = 64


def load() -> str:
    return "load average {:.2f} / {:.2f} / {:.2f}".format(*os.getloadavg())


def inputs(n_heads, n_ctx, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((1, n_heads, n_ctx, HEAD_DIM)).astype(dtype)
                 for _ in range(3))


def causal_flops(n_heads, n_ctx):
    """2·T²·D·H: QKᵀ and PV (2 flops per multiply-add) over the T²/2 causal pairs."""
    return 2 * n_ctx * n_ctx * HEAD_DIM * n_heads


def interleaved_best(fns, repeats, cpu=None):
    """Best wall time of each function, the runs interleaved so that all see the same load;
    with a list ``cpu``, also append each one's best process CPU time to it."""
    best, best_cpu = [float("inf")] * len(fns), [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
            best_cpu[i] = min(best_cpu[i], time.process_time() - start_cpu)
    if cpu is not None:
        cpu.extend(best_cpu)
    return best


def block_products(n_heads, dtype, workers):
    """``fn, flops``: the kernel's two block products (q_blk·k_blkᵀ, p·v) for H heads and 8
    blocks each, run as tasks on ``workers`` threads with single-threaded BLAS, exactly as
    attention runs them: the matmul rate attention is measured against."""
    q_block, k_block = block_shape(dtype)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((q_block, HEAD_DIM)).astype(dtype)
    k, v = (rng.standard_normal((k_block, HEAD_DIM)).astype(dtype) for _ in range(2))
    scores = [np.empty((q_block, k_block), dtype) for _ in range(max(workers, 1) * 2)]
    n_blocks = 8

    def task(head):
        s = scores[head % len(scores)]
        for _ in range(n_blocks):
            np.matmul(q, k.T, out=s)
            s @ v  # noqa: B018 (the product is the work)

    def fn():
        run_tasks(task, range(n_heads * 4), workers)

    return fn, 4 * q_block * k_block * HEAD_DIM * n_blocks * n_heads * 4


def own_products(q, k, v, workers):
    """``fn, flops``: exactly the block products attention performs on these inputs (causal,
    its task plan and key blocks, keys and values streamed from the full arrays), nothing
    else: the matmul rate with attention's own data movement."""
    n_heads, n_ctx = q.shape[1], q.shape[2]
    q_block, k_block = block_shape(q.dtype)
    tasks = [(h, q0) for h in range(n_heads) for q0 in range(0, n_ctx, q_block)][::-1]

    def task(item):
        h, q0 = item
        q1 = min(q0 + q_block, n_ctx)
        for k0 in range(0, q1, k_block):
            k1 = min(k0 + k_block, q1)
            (q[0, h, q0:q1] @ k[0, h, k0:k1].T) @ v[0, h, k0:k1]

    flops = sum(4 * HEAD_DIM * (min(q0 + q_block, n_ctx) - q0) * min(q0 + q_block, n_ctx)
                for _, q0 in tasks)
    return (lambda: run_tasks(task, tasks, workers)), flops


def section_rate(n_ctx, repeats, workers):
    n_heads = 8
    (r32, k32), (r64, k64) = block_shape(np.float32), block_shape(np.float64)
    print(f"\n== 1. T = {n_ctx}, B = 1, H = {n_heads}, D = 64, causal: useful GFLOP/s vs "
          f"matmul on the block shapes (float32 {r32}x64 @ 64x{k32}, float64 {r64}x64 @ "
          f"64x{k64}, and back); {load()}")
    print("matmul: the two block products on one block in a loop (operands in cache); own: "
          "exactly attention's block products with its data movement, nothing else")
    print(f"{'dtype':<9}{'threads':>8}{'score_mod':>16}{'time s':>9}{'GFLOP/s':>9}"
          f"{'matmul':>9}{'ratio':>7}{'own':>9}{'ratio':>7}")
    verdicts = {}
    for dtype in ("float32", "float64"):
        q, k, v = inputs(n_heads, n_ctx, dtype)
        attention(q[:, :, :8], k[:, :, :8], v[:, :, :8], score_mod=ScaleInvariant(10.0))
        for threads in sorted({1, workers}):
            products, mm_flops = block_products(n_heads, dtype, threads)
            own, own_flops = own_products(q, k, v, threads)
            runs = {name: (lambda mod=mod, threads=threads, q=q, k=k, v=v: attention(
                q, k, v, score_mod=mod, workers=threads))
                for name, mod in (("none", None), ("ScaleInvariant", ScaleInvariant(10.0)))}
            cpu = []
            times = interleaved_best([products, *runs.values(), own], repeats, cpu)
            rate, own_rate = mm_flops / times[0] / 1e9, own_flops / times[-1] / 1e9
            for name, seconds in zip(runs, times[1:-1], strict=True):
                gflops = causal_flops(n_heads, n_ctx) / seconds / 1e9
                print(f"{dtype:<9}{threads:>8}{name:>16}{seconds:>9.3f}{gflops:>9.1f}"
                      f"{rate:>9.1f}{gflops / rate:>7.0%}{own_rate:>9.1f}{gflops / own_rate:>7.0%}")
            si_ratio = causal_flops(n_heads, n_ctx) / times[2] / 1e9 / rate
            verdicts[(dtype, threads)] = (si_ratio, times[2] / times[1],
                                          cpu[0] / mm_flops * causal_flops(n_heads, n_ctx)
                                          / cpu[2], causal_flops(n_heads, n_ctx) / times[2]
                                          / 1e9 / own_rate)
    for dtype in ("float32", "float64"):
        ratio, cost, cpu_ratio, own_ratio = verdicts[(dtype, 1)]
        ok = ratio >= TARGET_RATE[dtype]
        print(f"target {dtype}: ScaleInvariant attention >= {TARGET_RATE[dtype]:.0%} of matmul "
              f"(one thread vs one thread): {ratio:.0%} {'MET' if ok else 'NOT MET'}; in CPU "
              f"time (less sensitive to other processes) {cpu_ratio:.0%}; with {workers} "
              f"threads: {verdicts[(dtype, workers)][0]:.0%}; of its own products alone: "
              f"{own_ratio:.0%}")
        cost_ok = cost <= TARGET_MOD_COST
        print(f"target {dtype}: score mod <= {TARGET_MOD_COST}x bare attention: {cost:.2f}x "
              f"{'MET' if cost_ok else 'NOT MET'}")
    return verdicts


def section_threads(n_ctx, repeats, workers, quick):
    print(f"\n== 2. threads: T = {n_ctx}, B = H = 1, float64, ScaleInvariant(10); {load()}")
    q, k, v = inputs(1, n_ctx, "float64", seed=2)
    mod = ScaleInvariant(10.0)
    cpu = []
    pinned, default = interleaved_best([lambda: attention(q, k, v, score_mod=mod, workers=1),
                                        lambda: attention(q, k, v, score_mod=mod,
                                                          workers=workers)], repeats, cpu)
    speedup = pinned / default
    print(f"as the machine is now: 1 thread {pinned:.3f} s, {workers} threads {default:.3f} s: "
          f"{speedup:.2f}x ({load()}); CPU time {cpu[0]:.3f} s vs {cpu[1]:.3f} s (work added by "
          f"threading {cpu[1] / cpu[0]:.2f}x, so on {workers} idle cores the speedup is at "
          f"most {workers * cpu[0] / cpu[1]:.2f}x)")
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        pinned_busy, default_busy = interleaved_best(
            [lambda: attention(q, k, v, score_mod=mod, workers=1),
             lambda: attention(q, k, v, score_mod=mod, workers=workers)], repeats)
    finally:
        busy.kill()
        busy.wait()
    slowdown = default_busy / pinned_busy
    print(f"one core kept busy by another process: 1 thread {pinned_busy:.3f} s, default "
          f"({workers} threads) {default_busy:.3f} s: default/pinned = {slowdown:.2f}")
    label = "not evaluated (quick sizes)" if quick else None
    print(f"target: 1 -> {workers} threads >= {TARGET_SPEEDUP}x on a quiet machine: "
          f"{label or ('MET' if speedup >= TARGET_SPEEDUP else 'NOT MET (see load average)')}")
    print(f"target: default <= {TARGET_BUSY}x the pinned run with one core busy: "
          f"{label or ('MET' if slowdown <= TARGET_BUSY else 'NOT MET')}")


def section_decode(contexts, repeats):
    print(f"\n== 3. decoding one token (d_model 256, 4 heads, 2 layers, SI p-RoPE, "
          f"ScaleInvariant); {load()}")
    times = {}
    for dtype in ("float32", "float64"):
        model = Decoder(DecoderConfig(d_model=256, n_heads=4, n_layers=2, position=PRoPESI(),
                                      transform=ScaleInvariant(10.0), dtype=dtype))
        for context in contexts:
            cache = model.new_cache(capacity=context + 1)
            rng = np.random.default_rng(context)
            for layer in range(2):  # cached keys and values of the right shape (prefill is O(T²))
                cache.append_kv(layer, *(rng.standard_normal((1, 4, context, 64)).astype(dtype)
                                         for _ in range(2)))

            def step(model=model, cache=cache, context=context):
                model.decode_step(np.array([3]), cache)
                cache.truncate(context)

            times[(dtype, context)] = interleaved_best([step], repeats)[0]
    for context in contexts:
        f32, f64 = times[("float32", context)], times[("float64", context)]
        print(f"context {context:>6}: float32 {f32 * 1e3:7.2f} ms, float64 {f64 * 1e3:7.2f} ms, "
              f"float64/float32 {f64 / f32:.2f}")
    growth = times[("float32", contexts[-1])] / times[("float32", contexts[0])]
    print(f"target: a step is O(context) (float32 step grows {growth:.2f}x for "
          f"{contexts[-1] // contexts[0]}x the context; finiteness is checked on entry only)")


def section_dense(n_ctx, repeats):
    print(f"\n== dense reference vs streaming at T = {n_ctx}, B = H = 1, float64; {load()}")
    q, k, v = inputs(1, n_ctx, "float64", seed=3)
    mod = ScaleInvariant(10.0)
    dense_s, stream_s = interleaved_best([lambda: attention_dense(q, k, v, score_mod=mod),
                                          lambda: attention(q, k, v, score_mod=mod)], repeats)
    peaks = []
    for fn in (attention_dense, attention):
        tracemalloc.start()
        fn(q, k, v, score_mod=mod)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    print(f"dense {dense_s:.3f} s, {peaks[0] / MIB:.1f} MiB; streaming {stream_s:.3f} s, "
          f"{peaks[1] / MIB:.1f} MiB (ratios {stream_s / dense_s:.2f}, "
          f"{peaks[1] / peaks[0]:.3f}); NoScale equals no score_mod: "
          f"{np.array_equal(attention(q, k, v, score_mod=NoScale()), attention(q, k, v))}")


def section_long(n_ctx, quick):
    print(f"\n== 4. T = {n_ctx:,}: ScaleInvariant(tau=10) + SI p-RoPE + QK-norm, float64, "
          f"default threads; {load()}")
    q, k, v = inputs(1, n_ctx, "float64", seed=1)
    positions = np.arange(n_ctx)
    tracemalloc.start()  # one run, timed and traced (few allocations: cheap)
    start, start_cpu = time.perf_counter(), time.process_time()
    out = attention(p_rope_si(rms_norm(q), positions), p_rope_si(rms_norm(k), positions), v,
                    score_mod=ScaleInvariant(10.0))
    seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert np.all(np.isfinite(out))
    print(f"time {seconds:.1f} s (CPU {cpu:.1f} s over {available_workers()} workers), "
          f"tracemalloc peak {peak / MIB:.0f} MiB, useful "
          f"{causal_flops(1, n_ctx) / seconds / 1e9:.1f} GFLOP/s ({load()})")
    met = seconds <= TARGET_LONG_SECONDS and peak < TARGET_LONG_BYTES
    verdict = "not evaluated (quick sizes)" if quick else "MET" if met else "NOT MET"
    print(f"target: <= {TARGET_LONG_SECONDS:.0f} s and < 512 MiB: {verdict}")


def main(quick=False, workers=None):
    workers = workers or available_workers()
    repeats = 2 if quick else 5
    print(f"numpy {np.__version__}; {os.cpu_count()} cores, default workers "
          f"{available_workers()}, this run {workers}; blocks (rows x keys) "
          f"{'x'.join(map(str, block_shape(np.float64)))} in float64, "
          f"{'x'.join(map(str, block_shape(np.float32)))} in float32; {load()}")
    section_rate(1024 if quick else 4096, repeats, workers)
    section_threads(2048 if quick else 16384, 2 if quick else 5, workers, quick)
    section_decode((512, 1024) if quick else (4096, 8192, 16384), 3 if quick else 20)
    section_dense(1024 if quick else 4096, repeats)
    section_long(8192 if quick else 65536, quick)
    print(f"\nend: {load()}")
    return 0


if __name__ == "__main__":
    parser = benchmark_parser(__doc__)
    parser.add_argument("--workers", type=positive_int, default=None,
                        help="worker threads for the whole run (default: the library's)")
    sys.exit(main(**vars(parser.parse_args())))
