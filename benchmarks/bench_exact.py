"""Benchmark: the exact route's cost is flat in t, brute force is O(t).

For the SI transform (τ = 10) and the range [t, 10t), it times ``expected_entropy_exact`` at
t = 1e3, 1e6, 1e10, 1e20, 1e30 (value and reported error printed beside), and beside it the
brute-force Monte Carlo ``simulate_gaussian_logits`` at the t it can reach (1e3, 1e4, 1e5 with
n_ctx = 10t), both per call. Target: the exact route at t = 1e30 costs at most
2x its cost at t = 1e3. Best of ``--repeats`` wall times; the load average is printed, since the
machine may be shared.
"""

from __future__ import annotations

import os
import sys

from sia_theory import ScaleInvariant, expected_entropy_exact, simulate_gaussian_logits
from sia_theory.toolkit import benchmark_parser, best_time, int_range

TARGET_FLAT = 2.0


def main(quick=False, repeats=3) -> int:
    transform = ScaleInvariant(10.0)
    exact_ts = (1e3, 1e30) if quick else (1e3, 1e6, 1e10, 1e20, 1e30)
    brute_ts = (1e3,) if quick else (1e3, 1e4, 1e5)
    samples = 64
    print(f"SI transform, range [t, 10t); load average {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} cores; best of {repeats}")
    expected_entropy_exact(transform, 10, 100)  # warm up / compile the kernels
    simulate_gaussian_logits(transform, 100, [(10, 100)], 2)
    print(f"\n{'route':34s} {'t':>7s} {'seconds':>9s} {'E[H]':>12s} {'± error / se':>13s}")
    exact = {}
    for t in exact_ts:
        timing = best_time(lambda t=t: expected_entropy_exact(transform, t, 10 * t), repeats)
        exact[t] = timing.seconds
        r = timing.result
        print(f"{'exact (Laplace/Frullani)':34s} {t:7.0e} {timing.seconds:9.3f} {r.value:12.6f} "
              f"{r.error:13.1e}")
    for t in brute_ts:
        n = int(10 * t)
        timing = best_time(lambda n=n, t=t: simulate_gaussian_logits(
            transform, n, [(int(t), n)], samples, seed=0), repeats)
        row = timing.result.iloc[0]
        print(f"{f'brute force, {samples} samples':34s} {t:7.0e} {timing.seconds:9.3f} "
              f"{row.H_mean:12.6f} {row.H_se:13.1e}")
    ratio = exact[max(exact_ts)] / exact[min(exact_ts)]
    met = ratio <= TARGET_FLAT
    print(f"\nexact route: cost(t = 1e30) / cost(t = 1e3) = {ratio:.2f}  target <= "
          f"{TARGET_FLAT}  {'MET' if met else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    parser = benchmark_parser(__doc__)
    parser.add_argument("--repeats", type=int_range(1, 1000), default=None,
                        help="timed repeats per point, 1 to 1000 (best is reported; default 3, "
                             "--quick 1)")
    args = parser.parse_args()
    sys.exit(main(quick=args.quick, repeats=args.repeats or (1 if args.quick else 3)))
