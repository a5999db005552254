# %% [markdown]
# # Your own scaling rule, through `analyze()` and beside the zoo
#
# A length-scaling rule is a map from the raw score `S_t` of the key at distance `t` to the
# logit `L_t = a_t S_t + m_t`. Here we write one — an ALiBi-like bias on a log scale,
# `L_t = S_t − c·log(1 + t)` — and ask the theory what it does to attention under Gaussian base
# logits: does the total attention per octave converge, how does the entropy in a scale range
# grow, and which phase (liquid, critical, frozen) is it in? Then we put it beside the
# published schemes of the zoo.

# %%
from dataclasses import dataclass

import numpy as np

import sia_theory as st
from sia_theory import Transform


@dataclass(frozen=True)
class PowerLawBias(Transform):
    """L_t = S_t − c·log(1 + t): an ALiBi-like bias on a log scale (a made-up example)."""

    c: float = 1.0
    depends_on = frozenset({"distance"})  # not on the context length or the head

    def affine(self, t, n, h):
        return np.ones_like(t), -self.c * np.log1p(t)


bias = PowerLawBias(0.5)
a, m = bias.coefficients(np.array([0, 1, 10, 100]))
print("a_t:", a, " m_t:", np.round(m, 4) + 0.0)  # + 0.0: print 0, not -0

# %% [markdown]
# ## The closed forms
#
# For Gaussian base logits, `E[e^{L_t}] = exp(m_t + a_t²/2)`, so the expected total attention
# on a range is a sum of lognormal moments. For our rule `E[Ã_t] = e^{1/2}(1 + t)^{−c}`: with
# `c = 1/2` the total over an octave `[t, 2t)` grows like `√t`, so it cannot converge (SI's
# scale-invariant total attention needs `E[Ã_t] ∝ 1/t`). The Monte Carlo agrees within its
# standard error.

# %%
exact = st.expected_total_attention(bias, 10, 100)
mc = st.simulate_gaussian_logits(bias, 100, [(10, 100)], samples=4000, seed=1).iloc[0]
print(f"E[Z_10^100]: closed form {exact:.4f}, Monte Carlo {mc.Z_mean:.4f} ± {mc.Z_se:.4f}")
assert abs(mc.Z_mean - exact) < 4 * mc.Z_se
octaves = [st.expected_total_attention(bias, t, 2 * t) for t in (2**4, 2**8, 2**12)]
print("E[Z_t^2t] at t = 2^4, 2^8, 2^12:", np.round(octaves, 2))

# %% [markdown]
# ## `analyze()`: the whole theory in one call
#
# `analyze` adds the Monte Carlo entropy in range and its growth law (decided by the same
# function as claim SI-7), the global entropy and recent-token attention against context
# length, and the phase. `quick=True` uses the seconds-long settings; `zoo=False` skips the
# side-by-side zoo (computed below from the closed forms, which is much cheaper).

# %%
report = st.analyze(bias, quick=True, zoo=False, n_ctx=2**14)
print("entropy law:", report.entropy_law)
print("total attention limit:", report.total_attention_limit)
print("phase:", report.phase)
print(report.summary.T.head(12).to_string())

# %%
fig = report.figure  # the one-page four-panel figure that report.write(DIR) publishes

# %% [markdown]
# The same from the command line, with every file written as one set:
# `sia-theory analyze my_transform.py:bias --quick --out reports`.
#
# ## Beside the zoo
#
# Every published rule is one transform object in `sia_theory.zoo`. The closed-form total
# attention per octave and the phase ratio `σ/√(2 log M)` (frozen above 1.1, liquid below 0.9)
# are cheap for all of them, at a context of `N = 2^14` keys.

# %%
import pandas as pd  # noqa: E402

from sia_theory.gaussian.phase import phase_table  # noqa: E402
from sia_theory.transforms import at_context  # noqa: E402

n_ctx = 2**14
schemes = {"power-law bias (ours)": bias, **st.ZOO}
rows = []
for name, scheme in schemes.items():
    frozen = at_context(scheme, n_ctx)  # context-dependent schemes read at N = n_ctx
    if "head" in getattr(frozen, "depends_on", ()):
        continue
    z = [st.expected_total_attention(frozen, t, 2 * t, n_ctx=n_ctx) for t in (2**10, 2**12)]
    last = phase_table(frozen, n_ctx, [2**12]).iloc[-1]
    rows.append({"scheme": name, "E[Z] octave 2^10": z[0], "E[Z] octave 2^12": z[1],
                 "ratio": last.ratio, "phase": last.phase})
table = pd.DataFrame(rows).set_index("scheme")
print(table.round(3).to_string())
assert table.loc["scale-invariant", "phase"] == "critical"

# %% [markdown]
# Only the scale-invariant transform keeps the octave totals constant (`ατ log 2 ≈ 11.43`) and
# sits at the freezing point; our bias spreads the attention more and more (liquid). The full
# zoo analysis, with the Monte Carlo entropy law of every scheme, is
# `figures/zoo_comparison.png` ([gallery](../gallery.md#zoo_comparison)).
