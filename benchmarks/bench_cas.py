"""Benchmark of the CAS routines: structured jacobian_eta against the dense nd×nd Jacobian
(n = 128, d = 64), jacobian_eta at n = 4096, d = 512, and the cost of one phase-diagram cell."""

import sys

import numpy as np

from sia_theory.cas.dynamics import simulate_token_step
from sia_theory.cas.jacobian import dense_jacobian, eta_from_jacobian, jacobian_eta
from sia_theory.cas.tokens import sample_tokens, token_rng
from sia_theory.toolkit import benchmark_parser, best_time, worker_count


def main(quick=False, seed=0):
    rng = token_rng(seed, "bench.cas")
    print(f"worker threads (NUMBA_NUM_THREADS): {worker_count()}")
    n, d = (64, 32) if quick else (128, 64)
    X = sample_tokens(n=n, d=d, rho=0.5, tokens="gaussian", q=1.0, rng=rng)
    beta = 2.0 * np.log(n)
    jacobian_eta(X, beta=beta)  # lambdify once outside the timing
    t_fast, _, eta_fast = best_time(lambda: jacobian_eta(X, beta=beta, alpha=0.3), 5)
    t_blocks, _, J = best_time(lambda: dense_jacobian(X, beta=beta, alpha=0.3, method="blocks"), 1)
    eta_blocks = eta_from_jacobian(J, n, d)
    del J
    t_cs, _, J = best_time(lambda: dense_jacobian(X, beta=beta, alpha=0.3), 1)
    eta_cs = eta_from_jacobian(J, n, d)
    del J
    print(f"\njacobian_eta vs dense Jacobian, n = {n}, d = {d}, beta = 2 log n, alpha = 0.3")
    print(f"  structured jacobian_eta        {t_fast * 1e3:10.2f} ms   eta = {eta_fast:.15f}")
    print(f"  dense, assembled blocks        {t_blocks * 1e3:10.2f} ms   eta = {eta_blocks:.15f}"
          f"   ratio {t_blocks / t_fast:8.0f}x   rel diff {abs(eta_blocks / eta_fast - 1):.1e}")
    print(f"  dense, complex-step columns    {t_cs * 1e3:10.2f} ms   eta = {eta_cs:.15f}"
          f"   ratio {t_cs / t_fast:8.0f}x   rel diff {abs(eta_cs / eta_fast - 1):.1e}")
    print(f"  target >= 100x faster than dense: {'met' if t_blocks / t_fast >= 100 else 'NOT met'}")

    n, d = (512, 128) if quick else (4096, 512)
    X = sample_tokens(n=n, d=d, rho=0.5, tokens="gaussian", q=1.0, rng=rng)
    t_big, _, eta_big = best_time(lambda: jacobian_eta(X, beta=2.0 * np.log(n)), 1 if quick else 2)
    print(f"\njacobian_eta at n = {n}, d = {d}: {t_big:.2f} s (eta = {eta_big:.6g}); "
          f"target <= 10 s: {'met' if t_big <= 10 else 'NOT met'}")

    n = 300 if quick else 1000
    print(f"\nphase-diagram cell (one gamma, one token draw reused across gamma), n = {n}")
    for d in (512, 32, 2):
        gammas = np.linspace(0.0, 10.0, 40)
        t_row, _, _ = best_time(lambda d=d, gammas=gammas: simulate_token_step(
            n=n, d=d, rho=0.5, gamma=gammas, samples=1, seed=seed), 1)
        print(f"  d = {d:4d}: {t_row / gammas.size * 1e3:7.2f} ms per cell "
              f"({t_row:.2f} s per 40-cell row; 40x40 grid ~ {40 * t_row:.0f} s)")


if __name__ == "__main__":
    sys.exit(main(**vars(benchmark_parser(__doc__, seed_flag=True).parse_args())))
