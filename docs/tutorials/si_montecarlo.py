# %% [markdown]
# # The SI closed forms against Monte Carlo
#
# SI's transform `a_t² = 1 + 2 log(1 + t/τ)`, `m_t = −2 log(1 + t/τ)` is solved from two
# conditions on Gaussian base logits: `E[Ã_t] = α/(t/τ + 1)` and
# `E[Ã_t log Ã_t] = β/(t/τ + 1)` with `α = β = e^{1/2}` (claims SI-1, SI-2). Here we check the
# closed forms three ways — the identity they satisfy, an independent digamma route, and a
# seeded Monte Carlo judged by its standard error — and see where the Monte Carlo is
# trustworthy and where it is not.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

import sia_theory as st

si = st.ScaleInvariant(tau=10.0)
t = np.array([0, 1, 10, 100, 10**4, 10**8])
a, m = si.coefficients(t)
print("a_t² :", np.round(a**2, 4))
print("m_t  :", np.round(m, 4))
# the coefficient identity m_t + a_t² = β/α (= 1 with α = β = e^{1/2}), and the boundary values
print("m_t + a_t²:", np.round(m + a**2, 12))
assert np.allclose(m + a**2, si.beta / si.alpha) and a[0] == 1 and m[0] == 0
assert np.isclose(a[2] ** 2, 1 + 2 * math.log(2))  # a_τ² = 1 + 2 log 2

# %% [markdown]
# ## Total attention: two closed forms and a Monte Carlo
#
# `expected_total_attention` sums the lognormal moments `exp(m_t + a_t²/2)` over the range;
# `scale_invariant_total_attention` uses the digamma sum `ατ[ψ(t2 + τ) − ψ(t1 + τ)]`, a
# different formula for the same number. The Monte Carlo returns a mean, its standard error
# and the sample count; we ask that it lies within 4 standard errors.

# %%
for t1, t2 in [(0, 10), (10, 100), (100, 1000)]:
    z_sum = st.expected_total_attention(si, t1, t2)
    z_psi = st.scale_invariant_total_attention(si, t1, t2)
    mc = st.simulate_gaussian_logits(si, t2, [(t1, t2)], samples=8000, seed=0).iloc[0]
    z = (mc.Z_mean - z_sum) / mc.Z_se
    print(f"[{t1:>4}, {t2:>5}): sum {z_sum:9.5f}  digamma {z_psi:9.5f}  "
          f"MC {mc.Z_mean:9.5f} ± {mc.Z_se:.5f}  ({z:+.2f} se)")
    assert abs(z_sum - z_psi) < 1e-9 * z_sum and abs(z) < 4

# %% [markdown]
# ## Scale invariance: `E[Z_t^{tΔ}] → ατ log Δ`
#
# The expected total attention on `[t, tΔ)` tends to `ατ log Δ` for every `Δ` (SI-4), the
# negentropy to `βτ log Δ` (SI-5); with `α = β = e^{1/2}` the two coincide.

# %%
limit_z, limit_n = st.scale_invariant_limits(si, 2)
print(f"limits for Δ = 2: ατ log 2 = {limit_z:.6f}, βτ log 2 = {limit_n:.6f}")
for t1 in (10, 10**3, 10**5, 10**7):
    print(f"t = {t1:>8}: E[Z] = {st.expected_total_attention(si, t1, 2 * t1):.6f}  "
          f"E[N] = {st.expected_negentropy(si, t1, 2 * t1):.6f}")
assert abs(st.expected_total_attention(si, 10**7, 2 * 10**7) - limit_z) < 1e-4

# %% [markdown]
# ## The Monte Carlo error shrinks as `1/√samples` — for some quantities
#
# Under the transform every `e^{L_t}` has variance tending to `e²`, so `Z` over a long range is
# heavy-tailed: its sample standard error is large and itself underestimated. The entropy in
# the range and the attention mass are well conditioned. Below, the entropy `E[H]` of
# `[100, 1000)` by the exact Laplace/Frullani route (no sampling) against Monte Carlo runs of
# growing size: the error falls like `1/√samples` and stays within a few standard errors.

# %%
exact = st.expected_entropy_exact(si, 100, 1000)
print(f"exact route: E[H] = {exact.value:.6f} (numerical error {exact.error:.1e})")
sizes, errors, ses = [250, 1000, 4000, 16000], [], []
for n in sizes:
    mc = st.simulate_gaussian_logits(si, 1000, [(100, 1000)], samples=n, seed=3).iloc[0]
    errors.append(abs(mc.H_mean - exact.value))
    ses.append(mc.H_se)
    print(f"{n:>6} samples: {mc.H_mean:.5f} ± {mc.H_se:.5f}  "
          f"|MC − exact| = {errors[-1]:.5f} ({errors[-1] / mc.H_se:.2f} se)")
    assert errors[-1] < 4 * mc.H_se
assert ses[-1] < ses[0] / 5  # 64 times the samples: about 8 times smaller

fig, ax = plt.subplots(figsize=(5, 3.2))
ax.loglog(sizes, ses, "o-", label="standard error")
ax.loglog(sizes, errors, "s--", label="|MC − exact|")
ax.loglog(sizes, ses[0] * np.sqrt(sizes[0] / np.array(sizes)), ":", label="1/√samples")
ax.set_xlabel("samples")
ax.set_ylabel("E[H] error, range [100, 1000)")
ax.legend()

# %% [markdown]
# ## The plug-in entropy is not the entropy
#
# `log E[Z] − E[N]/E[Z]` (the plug-in) saturates at about `log(ατ log Δ) − 1`, while the true
# `E[H]` keeps growing like `√(log t)` (SI-7): the heavy tails keep the law of large numbers
# the plug-in assumes from ever taking hold.

# %%
for t1 in (10, 10**3, 10**5):
    plug = st.plug_in_entropy(si, t1, 10 * t1)
    true = st.expected_entropy_exact(si, t1, 10 * t1).value
    print(f"[{t1}, {10 * t1}): plug-in {plug:.4f}   exact E[H] {true:.4f}")
