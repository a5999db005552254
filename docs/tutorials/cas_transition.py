# %% [markdown]
# # The CAS phase transition and the Jacobian
#
# Critical attention scaling (Chen, Lin, Polyanskiy, Rigollet): tokens on the sphere with
# pairwise cosine `ρ`, scores `β⟨y_i, y_j⟩`, `β = γ log n`. Below `γ_c = 1/(1 − ρ)` one layer
# collapses the tokens (cosine → 1), above it they keep their cosine `ρ`, and at `γ_c` the
# limit is `4ρ/(1 + 3ρ)` (Theorem 2.1, claim CAS-1). The normalised Jacobian norm `η` jumps at
# the same point (Theorem 2.4, CAS-3). We check both on the exact simplex (closed forms), on
# sampled Gaussian near-simplex tokens, and with the structured Jacobian against the dense one.

# %%
import matplotlib.pyplot as plt
import numpy as np

from sia_theory.cas.dynamics import simulate_token_step
from sia_theory.cas.jacobian import dense_jacobian, eta_from_jacobian, jacobian_eta
from sia_theory.cas.simplex import (
    critical_gamma,
    jacobian_limit,
    simplex_eta,
    simplex_inner_product,
    simplex_limit,
)

rho = 0.5
gc = critical_gamma(rho)
print(f"γ_c = 1/(1 − ρ) = {gc}")
for gamma in (gc / 2, gc, 2 * gc):
    print(f"γ = {gamma:4.1f}: limit of the cosine {simplex_limit(gamma=gamma, rho=rho):.4f}, "
          f"η limit (d = 512) {jacobian_limit(gamma=gamma, rho=rho, d=512):.4f}")
assert abs(simplex_limit(gamma=gc, rho=rho) - 4 * rho / (1 + 3 * rho)) < 1e-12

# %% [markdown]
# ## Finite `n`: the exact simplex converges slowly
#
# Physical parameters are keyword-only, so swapping `γ` and `ρ` cannot pass silently. At `γ_c`
# the cosine approaches its limit like `1/n`; above `γ_c` only like `n^{1 − γ/γ_c}`.

# %%
for n in (10**3, 10**6, 10**12):
    row = [simplex_inner_product(n=n, gamma=g * gc, rho=rho) for g in (0.5, 1.0, 1.5)]
    print(f"n = {n:.0e}: cosine at γ/γ_c = 0.5, 1, 1.5: " + ", ".join(f"{x:.5f}" for x in row))

# %% [markdown]
# ## Sampled tokens: the transition sharpens with `d`
#
# Gaussian near-simplex tokens `x_i = √ρ z_0 + √(1 − ρ) z_i` realise a cosine near `ρ` only
# when `d` is large. One layer, `n = 400`, a few draws per point (mean ± standard error).

# %%
gammas = gc * np.geomspace(0.25, 4, 13)
fig, ax = plt.subplots(figsize=(6, 3.5))
for d in (8, 64, 512):
    table = simulate_token_step(n=400, d=d, rho=rho, gamma=gammas, samples=3, seed=0)
    ax.errorbar(gammas / gc, table["cos_after_mean"], table["cos_after_se"], marker="o",
                ms=3, label=f"d = {d}")
    mid = table.iloc[6]
    print(f"d = {d:3d}: at γ_c cosine {mid.cos_after_mean:.3f} ± {mid.cos_after_se:.3f} "
          f"(realised input cosine {mid.cos_before_mean:.3f})")
exact = [simplex_inner_product(n=400, gamma=g, rho=rho) for g in gammas]
ax.plot(gammas / gc, exact, "k--", label="exact simplex, n = 400")
ax.set_xscale("log")
ax.set_xlabel("γ / γ_c")
ax.set_ylabel("mean cosine after one layer")
ax.legend()

# %% [markdown]
# ## The Jacobian: structured, exact, and dense
#
# `jacobian_eta` never forms the `nd × nd` matrix (cost `O(n²d + n² min(n, d²))`); the dense
# complex-step Jacobian is the slow obvious reference. On small random tokens they agree to
# rounding, with and without a residual.

# %%
X = np.random.default_rng(1).standard_normal((24, 6))
for alpha in (0.0, 0.6):
    beta = 3.0
    structured = jacobian_eta(X, beta=beta, alpha=alpha)
    dense = eta_from_jacobian(dense_jacobian(X, beta=beta, alpha=alpha), *X.shape)
    print(f"α = {alpha}: η structured {structured:.15f}, dense {dense:.15f}, "
          f"relative difference {abs(structured - dense) / dense:.1e}")
    assert abs(structured - dense) < 1e-10 * dense

# %% [markdown]
# On the simplex the exact finite-`n` `η` approaches the three limits of Theorem 2.4 —
# `0`, `(1 − 1/d)/(4q)`, `(1 − 1/d)/q` — when `β²/d → 0`; at fixed `d` the critical value keeps
# growing with `n` through its `β/d` and `β²/d` terms (see [CAS findings](../theory/cas.md)).

# %%
d = 1000
for n in (10**2, 10**3, 10**4):
    values = [simplex_eta(n=n, d=d, gamma=g * gc, rho=rho) for g in (0.5, 1.0, 2.0)]
    print(f"n = {n:>6}, d = {d}: η at γ/γ_c = 0.5, 1, 2: " + ", ".join(f"{v:.4f}" for v in values))
print("limits:", [round(jacobian_limit(gamma=g * gc, rho=rho, d=d), 4) for g in (0.5, 1.0, 2.0)])
