# %% [markdown]
# # Contexts to 10³⁰: the exact route and the asymptotic sampler
#
# Brute-force Monte Carlo costs `O(t)` per sample, so SI's Fig. 2 stops at `t = 10⁵`. Two
# other routes reach `t = 10³⁰` at a cost that does not grow with `t`:
#
# * the **exact route** (`expected_entropy_exact`): `E[log Z]` by Frullani's integral over the
#   Laplace transform `Φ(s) = Π_t E[exp(−s e^{L_t})]`, `E[N/Z]` by the same factors, each a
#   one-dimensional Gaussian integral, the distances summed by quadrature (exact integers for
#   small `t`, Euler–Maclaurin on geometric bins beyond); it carries its numerical error;
# * the **asymptotic sampler** (`simulate_gaussian_logits_asymptotic`): the top ≈ K logits of a
#   range drawn exactly (Gaussian tail order statistics per bin of distances), the rest replaced
#   by its exact conditional mean plus a Gaussian with the exact covariance of `(Z, N)`.
#
# We hold them against each other and against brute force, then use them to see the entropy
# law of the SI family `a_t² = 1 + 2c log(1 + t/τ)` over thirty decades.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np

import sia_theory as st

si = st.ScaleInvariant(10.0)
for t in (1e10, 1e20, 1e30):
    start = time.perf_counter()
    r = st.expected_entropy_exact(si, t, 10 * t)
    print(f"E[H] on [{t:.0e}, {10 * t:.0e}): {r.value:.6f} ± {r.error:.1e} "
          f"({time.perf_counter() - start:.2f} s)")

# %% [markdown]
# ## Three routes, one number
#
# At `t = 10³` all three routes run: brute force (4000 samples), the sampler (4000 samples)
# and the exact route. `assert_agree` checks that two estimates agree within 4 combined errors.

# %%
from sia_theory.gaussian.estimate import assert_agree, disagreement  # noqa: E402
from sia_theory.gaussian.routes import expectation  # noqa: E402

estimates = {route: expectation("H", si, 1000, 10_000, route=route,
                                **({} if route == "exact" else {"samples": 4000, "seed": 0}))
             for route in ("exact", "monte_carlo", "asymptotic")}
for route, e in estimates.items():
    print(f"{route:>12}: {e.value:.5f} ± {e.error:.5f}")
assert_agree(estimates["exact"], estimates["monte_carlo"])
assert_agree(estimates["exact"], estimates["asymptotic"])
print(f"sampler vs exact: {disagreement(estimates['asymptotic'], estimates['exact']):.2f} se")

# %% [markdown]
# At `t = 10³⁰` brute force is out of reach (10³⁰ logits per sample); the sampler's cost is
# the same as at `10³`:

# %%
start = time.perf_counter()
table = st.simulate_gaussian_logits_asymptotic(si, [(1e30, 1e31)], samples=2000, seed=0)
row = table.iloc[0]
exact = st.expected_entropy_exact(si, 1e30, 1e31)
print(f"sampler: E[H] = {row.H_mean:.4f} ± {row.H_se:.4f} ({time.perf_counter() - start:.1f} s); "
      f"exact: {exact.value:.4f}")
assert abs(row.H_mean - exact.value) < 4 * row.H_se

# %% [markdown]
# ## The trichotomy over thirty decades
#
# `ScaleInvariantFamily(c)` keeps `E[Ã_t] = α/(t/τ + 1)` for every `c` (scale-invariant total
# attention) and changes only the spread `a_t`. By the exact route: for `c < 1` (liquid) the
# entropy grows like `(1 − c) log t` (EXT-1); at `c = 1` (critical, the SI transform) like
# `√(2/π)·a_t ∝ √(log t)` (EXT-2); for `c > 1` (frozen) it stays bounded (EXT-3).

# %%
ts = np.logspace(6, 30, 5)
fig, ax = plt.subplots(figsize=(6, 3.6))
for c in (0.5, 1.0, 2.0):
    family = st.ScaleInvariantFamily(c=c, tau=10.0)
    h = [st.expected_entropy_exact(family, t, 2 * t).value for t in ts]
    slope = (h[-1] - h[-2]) / np.log(ts[-1] / ts[-2])
    print(f"c = {c}: E[H] at t = 1e30: {h[-1]:.3f}; local slope on log t: {slope:.3f}")
    ax.plot(np.log10(ts), h, "o-", label=f"c = {c}")
a = si.coefficients(ts)[0]
ax.plot(np.log10(ts), np.sqrt(2 / np.pi) * a, "k:", label="√(2/π)·a_t (c = 1, up to O(1))")
ax.set_xlabel("log10 t")
ax.set_ylabel("E[H] on [t, 2t)")
ax.legend()
