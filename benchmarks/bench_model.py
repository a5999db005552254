"""Benchmark of SmolLM2-135M through the reference, in a default process (no environment variables).

1. Loading: the first load (check the file, dequantize the GGUF, write the float32 cache, here
   into a temporary cache directory) against a load from the cache.
2. Prefill of 4096 tokens in float32 (``token_losses``: every layer plus the output head on every
   position): the FLOPs of every matrix product (q/k/v/o projections, attention QK^T and PV over
   the causal pairs, the SwiGLU MLP, the tied output head), counted, against this machine's
   float32 matmul rate measured in the same run (a large ``np.matmul`` with numpy's default
   threads, before and after; their mean is the reference, both ratios are printed, and the
   same per CPU second, which other processes on a shared machine disturb less).
   Target: >= 0.60 of the matmul rate.
3. In a fresh subprocess: peak memory of a 16,384-token prefill (the process's peak resident
   set over the prefill, weights included; ``/proc/self/clear_refs`` resets the peak after the
   load) and the time of one decoding step at that context. Targets: < 2 GiB, <= 0.5 s.

The machine may be shared: the load average is printed beside every section; compare ratios.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc

import numpy as np

from sia_theory.models import load_pretrained
from sia_theory.toolkit import available_workers, benchmark_parser

GIB = 2.0**30
TARGET_RATE, TARGET_BYTES, TARGET_DECODE = 0.60, 2 * GIB, 0.5


def load() -> str:
    return "load average {:.2f} / {:.2f} / {:.2f}".format(*os.getloadavg())


def forward_flops(config, n_new, start=0, head_rows=0) -> dict:
    """FLOPs (2 per multiply-add) of every product of ``n_new`` tokens after ``start`` cached
    ones, with the output head on ``head_rows`` positions."""
    d, dim, heads, kv = config.d_model, config.head_dim, config.n_heads, config.n_kv_heads
    pairs = n_new * start + n_new * (n_new + 1) // 2  # visible (query, key) pairs, causal
    layers = config.n_layers
    return {"projections": layers * n_new * 2 * d * (heads + 2 * kv + heads) * dim,
            "attention": layers * heads * pairs * 2 * 2 * dim,  # QK^T and PV
            "mlp": layers * n_new * 2 * 3 * d * config.ffn,
            "head": head_rows * 2 * d * config.vocab_size}


def matmul_rate(n=2048, repeats=3) -> tuple[float, float]:
    """float32 GFLOP/s of an (n, n) @ (n, n) product with numpy's default BLAS threads: per
    wall-clock second and per CPU second (best of ``repeats``)."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    wall = cpu = np.inf
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        a @ b
        wall = min(wall, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - started_cpu)
    return 2 * n**3 / wall / 1e9, 2 * n**3 / cpu / 1e9


def section_load():
    print(f"\n== 1. loading (first load into a temporary cache, then from it); {load()}")
    with tempfile.TemporaryDirectory() as cache_dir:
        times = []
        for _ in range(2):
            started = time.perf_counter()
            model, _ = load_pretrained("smollm2-135m", cache_dir=cache_dir)
            times.append(time.perf_counter() - started)
            assert model.load_info["from_cache"] == (len(times) == 2)
    print(f"first load {times[0]:.2f} s (dequantize + write the cache), from the cache "
          f"{times[1]:.2f} s: {times[0] / times[1]:.1f}x faster ({load()})")


def section_prefill(model, n_ctx, repeats):
    print(f"\n== 2. prefill of {n_ctx} tokens, float32, with the output head on every "
          f"position (token_losses); {available_workers()} workers; {load()}")
    ids = np.random.default_rng(1).integers(17, model.config.vocab_size, n_ctx)
    flops = forward_flops(model.config, n_ctx, head_rows=n_ctx - 1)
    total = sum(flops.values())
    before = matmul_rate()
    best = best_cpu = np.inf
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        model.token_losses(ids)
        best = min(best, time.perf_counter() - started)
        best_cpu = min(best_cpu, time.process_time() - started_cpu)
    after = matmul_rate()
    shares = ", ".join(f"{name} {value / total:.0%}" for name, value in flops.items())
    print(f"matmul FLOPs {total / 1e12:.3f} T ({shares})")
    achieved, achieved_cpu = total / best / 1e9, total / best_cpu / 1e9
    reference = (before[0] + after[0]) / 2
    print(f"time {best:.2f} s: {achieved:.1f} GFLOP/s; np.matmul float32 (2048^2, default "
          f"threads) {before[0]:.1f} before, {after[0]:.1f} after ({load()})")
    ratio = achieved / reference
    print(f"per CPU second (robust to other processes): {achieved_cpu:.1f} GFLOP/s against "
          f"np.matmul {before[1]:.1f} / {after[1]:.1f}: ratio "
          f"{achieved_cpu / ((before[1] + after[1]) / 2):.2f}")
    print(f"target: >= {TARGET_RATE:.0%} of the matmul rate (mean of before and after): "
          f"{ratio:.2f} ({'MET' if ratio >= TARGET_RATE else 'NOT MET'}; against each: "
          f"{achieved / before[0]:.2f}, {achieved / after[0]:.2f})")


def child(n_ctx):
    """Run in a fresh process: load, reset the peak RSS, prefill ``n_ctx`` tokens, decode."""
    model, _ = load_pretrained("smollm2-135m")
    ids = np.random.default_rng(2).integers(17, model.config.vocab_size, n_ctx)
    with open("/proc/self/clear_refs", "w") as fh:  # peak RSS := current RSS (the weights)
        fh.write("5")
    tracemalloc.start()
    started = time.perf_counter()
    cache = model.prefill(ids)
    prefill_s = time.perf_counter() - started
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    with open("/proc/self/status") as fh:
        status = dict(line.split(":", 1) for line in fh)
    peak = int(status["VmHWM"].split()[0]) * 1024
    steps = []
    for token in (5, 6, 7):
        started = time.perf_counter()
        model.continue_(cache, [token])
        steps.append(time.perf_counter() - started)
        cache.truncate(n_ctx)
    print(f"{n_ctx} {prefill_s:.3f} {peak} {traced} {min(steps):.4f} {cache.nbytes}")


def section_long(n_ctx, quick):
    print(f"\n== 3. a {n_ctx:,}-token prefill and one decoding step in a fresh process; "
          f"{load()}")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", str(n_ctx)],
                         capture_output=True, text=True, check=True)
    _, prefill_s, peak, traced, step, cache_bytes = out.stdout.split()[-6:]
    peak, traced, step = int(peak), int(traced), float(step)
    print(f"prefill {float(prefill_s):.1f} s; peak resident memory over the prefill "
          f"{peak / GIB:.2f} GiB (weights included; traced numpy allocations "
          f"{traced / GIB:.2f} GiB, KV cache {int(cache_bytes) / GIB:.2f} GiB); one decoding "
          f"step at context {n_ctx}: {step:.3f} s ({load()})")
    tag = "not evaluated (quick sizes)" if quick else None
    print(f"target: peak < 2 GiB: {tag or ('MET' if peak < TARGET_BYTES else 'NOT MET')}; "
          f"decoding step <= {TARGET_DECODE} s: "
          f"{tag or ('MET' if step <= TARGET_DECODE else 'NOT MET')}")


def main(quick=False, child_ctx=None):
    if child_ctx is not None:
        child(child_ctx)
        return 0
    print(f"numpy {np.__version__}; {os.cpu_count()} cores, {available_workers()} workers; "
          f"{load()}")
    section_load()
    model, _ = load_pretrained("smollm2-135m")
    section_prefill(model, 512 if quick else 4096, 1)
    del model
    section_long(1024 if quick else 16384, quick)
    print(f"\nend: {load()}")
    return 0


if __name__ == "__main__":
    parser = benchmark_parser(__doc__)
    parser.add_argument("--child", dest="child_ctx", type=int, default=None,
                        help=argparse.SUPPRESS)
    sys.exit(main(**vars(parser.parse_args())))
