"""Benchmark of the JAX trainer (:mod:`sia_theory.training`): throughput against this machine's
float32 matmul rate on the model's own matmul shapes, measured in the same run.

1. Probe: steps per second of one training step (forward, backward, optimiser) for the
   configuration of ``TrainSettings.full()`` and a few neighbours (width, depth, batch,
   vocabulary), one process, one XLA thread (the trainer's setting): what sizes the grid.
2. Throughput of the full configuration: the FLOPs of a step counted as ``6 × matmul
   parameters × tokens`` (every linear layer and the output head; the input embedding is a
   lookup, not a product) plus the attention products ``q·k`` and ``A·v`` over the causal pairs
   (``3 × 2 × 2·H·D`` per visible pair and layer, forward and backward), divided by the
   step time, as a ratio to the reference rate: the same FLOPs at the rate JAX reaches on each
   of the model's matmul shapes alone (projections, MLP, output head in their forward and two
   backward orientations, the batched score and value products), measured before and after.
   Target: >= 0.35.
3. Validation at ``16 L`` in a fresh process: time and peak resident memory of one
   ``evaluate`` call (attention in query blocks; the score matrix held at once is at most
   :data:`~sia_theory.training.trainer.SCORE_BYTES`, never the whole ``T × T`` of every row).

The machine may be shared: the load average is printed beside every section; the ratio
compares two measurements of the same run.
"""

import argparse
import dataclasses
import os
import subprocess
import sys
import time

import numpy as np

from sia_theory.toolkit import benchmark_parser
from sia_theory.training import TrainSettings, resolve_scheme
from sia_theory.training.params import init_parameters, parameter_count

try:
    from sia_theory.training.trainer import _step_function, jax, jnp, scheme_arrays
except ImportError as missing:  # the train extra is not installed: say so, measure nothing
    MISSING = str(missing)
else:
    MISSING = None

TARGET = 0.35


def load() -> str:
    return "load average {:.2f} / {:.2f} / {:.2f}".format(*os.getloadavg())


def step_flops(s: TrainSettings) -> dict:
    """FLOPs of one training step by part (see the module docstring)."""
    tokens = s.batch_size * s.train_length
    d, hidden, vocab = s.d_model, 4 * s.d_model, s.effective_vocab
    pairs = s.batch_size * s.train_length * (s.train_length + 1) // 2
    return {"projections": 6 * tokens * s.n_layers * 4 * d * d,
            "mlp": 6 * tokens * s.n_layers * 2 * d * hidden,
            "head": 6 * tokens * d * vocab,
            "attention": 3 * s.n_layers * 2 * 2 * s.n_heads * s.head_dim * pairs}


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def _rate(fn, *args, repeats=5) -> np.ndarray:
    """Best ``(wall, CPU)`` seconds of one call of the jitted ``fn`` (compiled first)."""
    fn = jax.jit(fn)
    jax.block_until_ready(fn(*args))
    best = np.full(2, np.inf)
    for _ in range(repeats):
        started = np.array([clock() for clock in CLOCKS.values()])
        jax.block_until_ready(fn(*args))
        best = np.minimum(best, np.array([clock() for clock in CLOCKS.values()]) - started)
    return best


def reference_seconds(s: TrainSettings) -> dict:
    """Seconds the FLOPs of :func:`step_flops` take at JAX's rate on each shape alone."""
    rng = np.random.default_rng(0)

    def arr(*shape):
        return jnp.asarray(rng.standard_normal(shape, dtype=np.float32))

    tokens = s.batch_size * s.train_length
    d, hidden, vocab = s.d_model, 4 * s.d_model, s.effective_vocab
    flops = step_flops(s)

    def linear(n_in, n_out):  # forward, grad of the input, grad of the weight
        x, w, g = arr(tokens, n_in), arr(n_in, n_out), arr(tokens, n_out)
        seconds = (_rate(lambda a, b: a @ b, x, w) + _rate(lambda a, b: a @ b.T, g, w)
                   + _rate(lambda a, b: a.T @ b, x, g))
        return seconds / (3 * 2 * tokens * n_in * n_out)  # seconds per FLOP

    bh, t, dh = s.batch_size * s.n_heads, s.train_length, s.head_dim
    q, k, p = arr(bh, t, dh), arr(bh, t, dh), arr(bh, t, t)
    attention = (_rate(lambda a, b: jnp.einsum("bqd,bkd->bqk", a, b), q, k)
                 + _rate(lambda a, b: jnp.einsum("bqk,bkd->bqd", a, b), p, k)) / (
        2 * 2 * bh * t * t * dh)
    projections = linear(d, d)
    mlp = (linear(d, hidden) + linear(hidden, d)) / 2
    return {"projections": flops["projections"] * projections, "mlp": flops["mlp"] * mlp,
            "head": flops["head"] * linear(d, vocab), "attention": flops["attention"] * attention}


def time_steps(s: TrainSettings, n_steps: int) -> tuple[float, np.ndarray]:
    """``(compile seconds, best (wall, CPU) seconds per step over n_steps)`` of the trainer's
    own step on random tokens (throughput does not depend on the token values)."""
    optimizer, step = _step_function(s)
    tables, rotation = scheme_arrays(resolve_scheme("si-p-rope"), s, s.train_length)
    params = jax.tree.map(jnp.asarray, init_parameters(s, 0))
    state = optimizer.init(params)
    rng = np.random.default_rng(1)
    batches = [jnp.asarray(rng.integers(0, s.effective_vocab, (s.batch_size, s.train_length + 1),
                                        dtype=np.int32)) for _ in range(n_steps + 1)]
    started = time.perf_counter()
    params, state, loss = step(params, state, batches[0], tables, rotation)
    loss.block_until_ready()
    compile_s = time.perf_counter() - started
    best = np.full(2, np.inf)
    for batch in batches[1:]:
        started = np.array([clock() for clock in CLOCKS.values()])
        params, state, loss = step(params, state, batch, tables, rotation)
        loss.block_until_ready()
        best = np.minimum(best, np.array([clock() for clock in CLOCKS.values()]) - started)
    return compile_s, best


def section_probe(base: TrainSettings, quick: bool):
    print(f"\n== 1. probe: one training step, one XLA thread; {load()}")
    variants = [base] if quick else [
        base, dataclasses.replace(base, d_model=96, n_heads=3),
        dataclasses.replace(base, n_layers=3), dataclasses.replace(base, batch_size=8),
        dataclasses.replace(base, vocab_size=1024), dataclasses.replace(base, tokenizer="bytes")]
    for s in variants:
        compile_s, (seconds, _) = time_steps(s, 5)
        params = parameter_count(init_parameters(s, 0))
        tokens = s.batch_size * s.train_length
        print(f"layers {s.n_layers} width {s.d_model} heads {s.n_heads} batch {s.batch_size}x"
              f"{s.train_length} vocab {s.effective_vocab} ({params / 1e6:.2f} M parameters): "
              f"{seconds * 1e3:.0f} ms/step = {1 / seconds:.2f} steps/s, "
              f"{tokens / seconds / 1e3:.1f} k tokens/s (compile {compile_s:.1f} s; {load()})")


def section_throughput(s: TrainSettings, n_steps: int):
    print(f"\n== 2. throughput of this configuration; {load()}")
    flops = step_flops(s)
    total = sum(flops.values())
    before = reference_seconds(s)
    _, step = time_steps(s, n_steps)
    after = reference_seconds(s)
    reference = (sum(before.values()) + sum(after.values())) / 2  # (wall, CPU)
    shares = ", ".join(f"{k} {v / total:.0%}" for k, v in flops.items())
    print(f"step FLOPs {total / 1e9:.2f} G ({shares})")
    for i, clock in enumerate(CLOCKS):
        print(f"{clock}: step {step[i] * 1e3:.0f} ms = {total / step[i] / 1e9:.1f} GFLOP/s; the "
              f"same FLOPs at the rate of each matmul shape alone: "
              f"{sum(before.values())[i] * 1e3:.0f} ms before, "
              f"{sum(after.values())[i] * 1e3:.0f} ms after "
              f"({total / reference[i] / 1e9:.1f} GFLOP/s): ratio {reference[i] / step[i]:.2f}")
    parts = ", ".join(f"{k} {flops[k] / ((before[k][0] + after[k][0]) / 2) / 1e9:.0f}"
                      for k in flops)
    print(f"reference GFLOP/s by shape (wall): {parts} ({load()})")
    ratio = reference[0] / step[0]
    print(f"target: >= {TARGET:.2f} of the matmul rate on the model's shapes (wall clock): "
          f"{ratio:.2f} ({'MET' if ratio >= TARGET else 'NOT MET'}; per CPU second, which other "
          f"processes disturb less: {reference[1] / step[1]:.2f})")
    return ratio


def child_validation(quick: bool):
    """In a fresh process: peak memory (VmHWM after a reset) and time of validation at the
    longest length, on random parameters of the right shapes."""
    from sia_theory.training.data import corpus
    from sia_theory.training.evaluation import evaluate

    s = TrainSettings.quick() if quick else TrainSettings.full()
    data = corpus(s)
    params = init_parameters(s, 0)
    rng = np.random.default_rng(0)
    params["unembedding"] = rng.standard_normal(params["unembedding"].shape).astype(np.float32)
    scheme = resolve_scheme("si-p-rope")
    evaluate(params, scheme, s, s.max_length, data)  # compile

    def status():
        with open("/proc/self/status") as fh:
            return {k: int(v.split()[0]) * 1024 for k, v in
                    (line.split(":", 1) for line in fh) if k in ("VmRSS", "VmHWM")}

    rss = status()["VmRSS"]
    with open("/proc/self/clear_refs", "w") as fh:  # peak := current
        fh.write("5")
    started = time.perf_counter()
    loss = evaluate(params, scheme, s, s.max_length, data)
    seconds = time.perf_counter() - started
    peak = status()["VmHWM"]
    tokens = data.validation.shape[0] * s.max_length
    print(f"{s.max_length} {tokens} {seconds:.3f} {peak} {rss} {loss:.4f}")


def section_validation(quick: bool):
    print(f"\n== 3. validation at the longest length, fresh process; {load()}")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"]
                         + (["--quick"] if quick else []), capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    length, tokens, seconds, peak, rss, _ = out.stdout.split()[-6:]
    from sia_theory.training.evaluation import EVAL_TOKENS, _largest_divisor, block_for

    s = TrainSettings.quick() if quick else TrainSettings.full()
    length = int(length)
    rows = _largest_divisor(s.validation_documents * (s.max_length // length),
                            max(1, EVAL_TOKENS // length))
    block = block_for(s, rows, length)
    print(f"{int(tokens)} tokens at length {length}: {float(seconds):.1f} s "
          f"({int(tokens) / float(seconds) / 1e3:.1f} k tokens/s); peak resident memory "
          f"{int(peak) / 2**20:.0f} MiB (resident before the call {int(rss) / 2**20:.0f} MiB); "
          f"{rows} sequences per call, scores held per block {rows}x{s.n_heads}x{block}x{length} "
          f"= {4 * rows * s.n_heads * block * length / 2**20:.0f} MiB against "
          f"{4 * rows * s.n_heads * length**2 / 2**20:.0f} MiB for the whole matrix per layer "
          f"({load()})")


def main(quick=False, child=False):
    if child:
        child_validation(quick)
        return 0
    if MISSING is not None:
        print(f"{MISSING}\ntarget: not evaluated (no JAX)")
        return 0
    print(f"jax {jax.__version__}; {os.cpu_count()} cores; XLA_FLAGS="
          f"{os.environ.get('XLA_FLAGS', '')!r}; {load()}")
    settings = TrainSettings.quick() if quick else TrainSettings.full()
    section_probe(settings, quick)
    section_throughput(settings, 3 if quick else 8)
    section_validation(quick)
    print(f"\nend: {load()}")
    return 0


if __name__ == "__main__":
    parser = benchmark_parser(__doc__)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    sys.exit(main(**vars(parser.parse_args())))
