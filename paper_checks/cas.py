"""Claims CAS-1 … CAS-8: critical attention scaling (THEORY.md §2; Chen, Lin, Polyanskiy, Rigollet,
ICLR 2026, arXiv 2510.05554). Simplex claims are checked symbolically and against the exact
finite-n forms and a simulation of actual simplex tokens; near-simplex claims by seeded Monte Carlo
on Gaussian tokens (intervals are mean ± 1.96 standard errors over independent token draws)."""

from __future__ import annotations

import numpy as np
import sympy as sp

from sia_theory._infra.stats import mean_se
from sia_theory.cas.dynamics import (
    crossing_point,
    mean_cosine,
    sample_tokens,
    simulate_depth,
    simulate_token_step,
)
from sia_theory.cas.jacobian import jacobian_eta
from sia_theory.cas.simplex import (
    critical_eta_excess,
    critical_gamma,
    simplex_eta,
    simplex_inner_product,
    simplex_limit,
    simplex_sparsity,
    transition_width,
)
from sia_theory.symbolic import cas

from .core import Measurement, claim

RELATIVE = {"subcritical": 0.5, "critical": 1.0, "supercritical": 1.5}


def _ci(mean, se):
    return f"{mean:.4f} ± {1.96 * se:.4f}"


@claim("CAS-1", "Theorem 2.1 (α = 0): lim ⟨y_i', y_j'⟩ is 1 for γ < γ_c, 4ρ/(1+3ρ) at γ = γ_c, "
                "ρ for γ > γ_c, with γ_c = 1/(1−ρ)")
def cas_1(quick, seed):
    """CAS Theorem 2.1. Symbolic: the exponent balance gives γ_c and the limits by phase. Exact:
    the finite-n cosine at n = 10³ and 10⁹. Simulation of real simplex tokens vs the closed form."""
    limits = {k: sp.simplify(v.subs(cas.alpha, 0)) for k, v in cas.inner_product_limits().items()}
    rho = cas.rho
    symbolic_ok = (sp.simplify(cas.critical_exponent()[1] - 1 / (1 - rho)) == 0
                   and limits["subcritical"] == 1
                   and sp.simplify(limits["critical"] - 4 * rho / (1 + 3 * rho)) == 0
                   and sp.simplify(limits["supercritical"] - rho) == 0)
    n_sim = 200 if quick else 1000
    worst = 0.0
    finite = []
    for rho_v in (0.2, 0.5, 0.8):
        gc = critical_gamma(rho_v)
        gammas = np.array([RELATIVE[p] * gc for p in RELATIVE])
        sim = simulate_token_step(n_sim, n_sim, rho_v, gammas, tokens="simplex")
        worst = max(worst, float(np.max(np.abs(sim["cos_after_mean"] - simplex_inner_product(
            n_sim, gammas, rho_v)))))
        if rho_v == 0.5:
            for phase, g in zip(RELATIVE, gammas, strict=True):
                finite.append(f"{phase}: n=1e3 {float(simplex_inner_product(1e3, g, rho_v)):.4f}, "
                              f"n=1e9 {float(simplex_inner_product(1e9, g, rho_v)):.6f} "
                              f"(limit {simplex_limit(g, rho_v):.4f})")
    return Measurement(
        f"sympy limits: {limits['subcritical']}, {limits['critical']}, {limits['supercritical']};"
        f" γ_c = {cas.critical_exponent()[1]}; simplex tokens (n = d = {n_sim}) vs exact "
        f"finite-n form: max |diff| = {worst:.1e}",
        symbolic_ok and worst < 1e-10, "symbolic identity; simulation within 1e-10",
        "ρ = 0.5, γ/γ_c = 0.5, 1, 1.5: " + "; ".join(finite) + ". Convergence is like 1/n at γ_c, "
        "n^{2(γ/γ_c−1)} below and only n^{1−γ/γ_c} above (figures/cas_finite_n.png). The 10–90 % "
        f"width of the transition in γ/γ_c is c(ρ)/log n with c = "
        f"{transition_width(1000, 0.2) * np.log(1000):.3f}, "
        f"{transition_width(1000, 0.5) * np.log(1000):.3f}, "
        f"{transition_width(1000, 0.8) * np.log(1000):.3f} at ρ = 0.2, 0.5, 0.8 (sympy; "
        "THEORY.md: 3.46 at ρ = 0.5)"
        f", i.e. {transition_width(1e3, 0.5):.3f} at n = 10³.")


@claim("CAS-2", "With residual α > 0 the sub-critical and critical phases stay contractive "
                "(limit > ρ) while the residual prevents the one-step collapse to 1; "
                "super-critical tends to ρ")
def cas_2(quick, seed):
    """CAS Theorem 2.1 (residual version). Symbolic limit vs THEORY.md's closed form
    ρ(1+α√q)² / [ρ(1+α√q)² + (1−ρ)(w+α√q)²]; numeric phase values; exact simplex simulation."""
    rho, alpha, q, w = cas.rho, cas.alpha, cas.q, cas.w
    a = alpha * sp.sqrt(q)
    closed = rho * (1 + a) ** 2 / (rho * (1 + a) ** 2 + (1 - rho) * (w + a) ** 2)
    lim_w = cas.self_weight_limits()
    symbolic_ok = all(sp.simplify(cas.inner_product_limits()[p] - closed.subs(w, lim_w[p])) == 0
                      for p in RELATIVE)
    values, ok = [], symbolic_ok
    for rho_v, alpha_v, q_v in ((0.5, 0.5, 1.0), (0.3, 1.0, 2.0)):
        gc = critical_gamma(rho_v)
        lims = {p: simplex_limit(RELATIVE[p] * gc, rho_v, alpha_v, q_v) for p in RELATIVE}
        ok &= rho_v < lims["subcritical"] < 1 and rho_v < lims["critical"] < 1
        ok &= abs(lims["supercritical"] - rho_v) < 1e-15
        values.append(f"ρ={rho_v}, α={alpha_v}, q={q_v}: " + ", ".join(
            f"{p} {v:.4f}" for p, v in lims.items()))
    n_sim = 150 if quick else 600
    sim = simulate_token_step(n_sim, n_sim, 0.3, [1 / 0.7 * g for g in (0.5, 1, 1.5)], 1.0,
                              tokens="simplex", q=2.0)
    diff = float(np.max(np.abs(sim["cos_after_mean"] - simplex_inner_product(
        n_sim, sim["gamma"].to_numpy(), 0.3, 1.0, 2.0))))
    return Measurement("; ".join(values) + f"; simplex tokens vs exact form: {diff:.1e}",
                       ok and diff < 1e-10, "symbolic identity; simulation within 1e-10",
                       "sympy limit equals THEORY.md's closed form in every phase; sub-critical "
                       "and critical limits lie strictly between ρ and 1.")


@claim("CAS-3", "Theorem 2.4 (α = 0): η = |∂X'/∂X|_F²/(nd) tends to 0, (1/(4q))(1 − 1/d), "
                "(1/q)(1 − 1/d) in the three phases")
def cas_3(quick, seed):
    """CAS Theorem 2.4. The simplex η is derived exactly at finite (n, d) (sympy) and checked
    against jacobian_eta on real simplex tokens; its n → ∞ limit and finite-size excess."""
    lims = {k: sp.factor(v.subs(cas.alpha, 0)) for k, v in cas.jacobian_limits().items()}
    d, q = cas.d, cas.q
    symbolic_ok = (lims["subcritical"] == 0
                   and sp.simplify(lims["critical"] - (1 - 1 / d) / (4 * q)) == 0
                   and sp.simplify(lims["supercritical"] - (1 - 1 / d) / q) == 0)
    terms = cas.critical_excess_terms()
    n_tok = 128 if quick else 1024
    rho = 0.5
    gc = critical_gamma(rho)
    X = sample_tokens(n_tok, n_tok, rho, "simplex", 1.0)
    token_diff = max(abs(jacobian_eta(X, g * gc * np.log(n_tok)) / float(simplex_eta(
        n_tok, n_tok, g * gc, rho)) - 1) for g in RELATIVE.values())
    rows = []
    for n_v in (10**3, 10**6):
        values = [float(simplex_eta(n_v, n_v, g * gc, rho)) for g in RELATIVE.values()]
        rows.append(f"n = d = {n_v:g}: " + ", ".join(f"{v:.4f}" for v in values))
    ex = critical_eta_excess(1000, 1000, rho)
    exact_c = float(simplex_eta(1000, 1000, gc, rho))
    fixed_d = [float(simplex_eta(n_v, 64, gc, rho)) for n_v in (10**3, 10**6, 10**12)]
    # near-simplex (Gaussian) tokens with d ≪ n, at γ_c of each draw's realised cosine
    gaussian = []
    for n_v in ((256, 1024) if quick else (256, 1024, 4096)):
        X = sample_tokens(n_v, 64, rho, "gaussian", 1.0, np.random.default_rng(
            np.random.SeedSequence([seed, n_v])))
        gaussian.append(f"n={n_v}: {jacobian_eta(X, np.log(n_v) / (1 - mean_cosine(X))):.4f}")
    return Measurement(
        f"sympy limits {lims['subcritical']}, {lims['critical']}, {lims['supercritical']}; "
        f"exact simplex η (ρ = 0.5, γ/γ_c = 0.5, 1, 1.5): " + "; ".join(rows) +
        f"; jacobian_eta on simplex tokens (n = d = {n_tok}) vs exact form: rel {token_diff:.1e}",
        symbolic_ok and token_diff < 1e-10, "symbolic identity (limit needs β²/d → 0)",
        f"Finite size (derived): η_c = (1−1/d)/(4q) + [{terms['1/n']}]/n + [{terms['beta/d']}]β/d "
        f"+ [{terms['beta^2/d']}]β²/d + O(β²/(nd)) — the same three terms THEORY.md measured. At "
        f"n = d = 1000: η_c = {exact_c:.5f} vs limit {ex['limit']:.5f} (1/(2n) {ex['1/n']:.5f}, "
        f"β/d {ex['beta/d']:.5f}, β²/d {ex['beta^2/d']:.5f}). The theorem holds only if "
        f"d ≫ (log n)²: at fixed d = 64 the critical η grows with n ({fixed_d[0]:.3f}, "
        f"{fixed_d[1]:.3f}, {fixed_d[2]:.3f} at n = 1e3, 1e6, 1e12). At fixed n, d → ∞: "
        f"η → (w² + (1−w)²/(n−1))/q (sympy: {cas.eta_fixed_n_large_d()}). Gaussian "
        f"near-simplex tokens, d = 64 ≪ n, at γ_c of the realised cosine: η = "
        + ", ".join(gaussian) + " — close to 1/4 and not growing with log n: the β/d, β²/d "
        "terms belong to the exact simplex (which needs d ≥ n), not to near-simplex tokens.")


def _transition(n, d, rho, gammas, samples, seed):
    """γ_50 per sample: where the output cosine crosses (1 + realised ρ)/2, plus width 10–90 %."""
    mids, widths, realised = [], [], []
    for sample in range(samples):
        draw_seed = int(np.random.SeedSequence([seed, n, d, sample]).generate_state(1)[0])
        f = simulate_token_step(n, d, rho, gammas, samples=1, seed=draw_seed)
        before = f["cos_before_mean"].iloc[0]
        cos = f["cos_after_mean"].to_numpy()
        level = {frac: before + frac * (1 - before) for frac in (0.1, 0.5, 0.9)}
        mids.append(crossing_point(gammas, cos, level[0.5]))
        widths.append(crossing_point(gammas, cos, level[0.1])
                      - crossing_point(gammas, cos, level[0.9]))
        realised.append(before)
    return np.array(mids), np.array(widths), np.array(realised)


@claim("CAS-4", "Near-simplex: the transition stays at β ≍ log n (bounds in terms of ρ1, ρ2, "
                "q1, q2)")
def cas_4(quick, seed):
    """CAS near-simplex theorem: measured as the location of the collapse → preservation
    transition of Gaussian near-simplex tokens for growing n. If β ≍ log n, γ_50 = β_50/log n
    stays of order one while β_50 grows with log n."""
    rho, d = 0.5, (64 if quick else 512)
    ns = (128, 512) if quick else (256, 1024, 4096)
    gc = critical_gamma(rho)
    gammas = gc * np.linspace(0.3, 2.0, 12 if quick else 24)
    parts, ratios = [], []
    for n in ns:
        mids, _, _ = _transition(n, d, rho, gammas, 2, seed)
        m, se = mean_se(mids / gc)
        ratios.append(m)
        parts.append(f"n={n}: γ_50/γ_c = {_ci(m, se)}, β_50 = {m * gc * np.log(n):.2f}")
    ok = all(0.7 < r < 1.4 for r in ratios)
    return Measurement("; ".join(parts), ok, "γ_50/γ_c in (0.7, 1.4) for every n",
                       f"Gaussian tokens, d = {d}, nominal ρ = {rho}, 2 draws per n. β_50 grows "
                       "like log n while γ_50 = β_50/log n stays near γ_c.")


@claim("CAS-5", "Fig. 1: mean post-update inner product over a (γ, ρ) grid for d = 512 (sharp "
                "transition along γ = 1/(1−ρ)), d = 32 (smoothed), d = 2 (strongly smoothed; an "
                "intermediate phase appears)")
def cas_5(quick, seed):
    """CAS Fig. 1 (figures/cas_fig1_phase_diagram.png). Per d: realised cosine of Gaussian
    near-simplex tokens, transition midpoint γ_50/γ_c(realised ρ) and 10–90 % width, and for
    d = 2 the self weight and attention-weighted cosine where the cosine drops."""
    n = 300 if quick else 1000
    rho = 0.5
    samples = 2 if quick else 6
    gc = critical_gamma(rho)
    gammas = gc * np.geomspace(0.01, 3.0, 16 if quick else 40)
    summary, found = [], {}
    for d in (512, 32, 2):
        mids, widths, realised = _transition(n, d, rho, gammas, samples, seed)
        gc_real = 1 / (1 - realised)  # γ_c of the realised cosine of each draw
        rel_mid = mids / gc_real
        found[d] = (mean_se(rel_mid), mean_se(widths / gc_real), mean_se(realised),
                    float(np.std(realised)))
        (m, se), (w, wse), (r, rse), rsd = found[d]
        width_text = (_ci(w, wse) if np.isfinite(w) else
                      "undefined (already below the 90 % level at the smallest γ, 0.01 γ_c)")
        summary.append(f"d={d}: realised ρ {_ci(r, rse)} (sd over draws {rsd:.3f}); "
                       f"γ_50/γ_c(realised ρ) {_ci(m, se)}; 10–90 % width in γ/γ_c {width_text}")
    d2 = simulate_token_step(n, 2, rho, [gc], samples=samples, seed=seed).iloc[0]
    beta50 = []
    for n_v in ((200, 800) if quick else (250, 1000, 4000)):
        mids, _, _ = _transition(n_v, 2, rho, gammas, 2 if quick else 4, seed)
        beta50.append(f"n={n_v}: β_50 = {np.nanmean(mids) * np.log(n_v):.2f}")
    sharp = abs(found[512][0][0] - 1) < 0.2
    smoother = found[32][1][0] > found[512][1][0]
    return Measurement(
        "; ".join(summary), sharp and smoother,
        "d=512 midpoint within 20 % of γ_c; d=32 wider than d=512",
        f"d = 2 (n = {n}): at γ = γ_c the self weight is {d2['self_weight_mean']:.4f} and the "
        f"effective number of attended tokens {d2['effective_tokens_mean']:.0f}, yet the "
        f"attention-weighted cosine to the attended tokens is {d2['attended_cosine_mean']:.3f}: "
        "a query averages its angular neighbours, which leaves its direction (and the pairwise "
        "cosines) almost unchanged. The drop happens at β = O(1) with no growth in log n ("
        + ", ".join(beta50) + "; d = 512 needs β_50 ≈ γ_c log n, see CAS-4), i.e. far below γ_c "
        "and further below it as n grows. "
        "The data support THEORY.md's reading (neighbour averaging), not 'a smoothed version of "
        "the same transition'; the 'intermediate phase' is this neighbour-averaging regime.")


@claim("CAS-6", "Fig. 2: η ≈ 0 at small γ, η → 1 − 1/d at large γ (unit-norm tokens, q = 1), "
                "sharper jump at γ_c for larger d")
def cas_6(quick, seed):
    """CAS Fig. 2 (figures/cas_fig2_jacobian.png): jacobian_eta on unit-norm Gaussian
    near-simplex tokens, ρ = 0.5."""
    n = 200 if quick else 1000
    rho = 0.5
    gc = critical_gamma(rho)
    dims = (16, 128) if quick else (16, 64, 512)
    parts, ok, slopes = [], True, {}
    rng_seeds = np.random.SeedSequence([seed, 6]).generate_state(len(dims))
    for d, s in zip(dims, rng_seeds, strict=True):
        X = sample_tokens(n, d, rho, "gaussian", 1.0, np.random.default_rng(int(s)))
        low, high = (jacobian_eta(X, g * gc * np.log(n)) for g in (0.25, 4.0))
        around = [jacobian_eta(X, g * gc * np.log(n)) for g in (0.8, 1.2)]
        slopes[d] = (around[1] - around[0]) / (0.4 * gc)
        ok &= low < 0.05 and abs(high - (1 - 1 / d)) < 0.05
        parts.append(f"d={d}: η(γc/4) = {low:.4f}, η(4γc) = {high:.4f} vs 1−1/d = {1 - 1 / d:.4f}, "
                     f"dη/dγ at γ_c ≈ {slopes[d]:.3f}")
    ok &= slopes[dims[-1]] > slopes[dims[0]]
    return Measurement("; ".join(parts), ok,
                       "|η(4γc) − (1−1/d)| < 0.05, η(γc/4) < 0.05, slope grows with d",
                       f"n = {n}, one token draw per d (deterministic given the seed).")


@claim("CAS-7", "At criticality attention concentrates on a sub-linear but growing number of "
                "tokens (sparse, content-adaptive), unlike the uniform (sub-critical) and "
                "identity (super-critical) phases")
def cas_7(quick, seed):
    """CAS §2 / Theorem C.2 (figures/cas_sparsity.png): growth exponent in n of the effective
    number of attended tokens, measured as exp(entropy) and as 1/Σ_j A_ij²."""
    d = 64 if quick else 512
    ns = 2 ** np.arange(5, 9 if quick else 12)
    rho = 0.5
    gc = critical_gamma(rho)
    gammas = [0.5 * gc, gc, 1.5 * gc]
    frames = [simulate_token_step(int(n), d, rho, gammas, samples=1, seed=seed) for n in ns]
    slope = {}
    for idx, name in enumerate(RELATIVE):
        sub = [f.iloc[idx] for f in frames]
        slope[name] = (np.polyfit(np.log(ns), [s["entropy_mean"] for s in sub], 1)[0],
                       np.polyfit(np.log(ns), np.log([s["effective_tokens_mean"] for s in sub]),
                                  1)[0])
    ok = (0.2 < slope["critical"][0] < 0.8 and slope["subcritical"][0] > 0.85
          and slope["supercritical"][0] < 0.1)
    big_n = 1e8
    participation, perplexity = simplex_sparsity(big_n, gc, rho)
    return Measurement(
        ", ".join(f"{p}: exp(H) ~ n^{s[0]:.2f}, 1/ΣA² ~ n^{s[1]:.2f}" for p, s in slope.items()),
        ok, "critical exp(H) exponent in (0.2, 0.8); sub > 0.85; super < 0.1",
        f"Gaussian tokens d = {d}, n = {ns[0]}…{ns[-1]}. By entropy the critical phase attends to "
        f"~n^0.5 tokens (exact simplex at n = {big_n:.0e}: exp(H) = "
        f"{float(perplexity) / np.sqrt(big_n):.3f}·√n, participation ratio "
        f"{float(participation):.3f}); by participation ratio it attends to ~4 "
        "(half the mass stays on the query itself, the other half is spread thinly), so "
        "'sub-linear but growing' holds for the entropy measure only.")


@claim("CAS-8", "The analysis extends over several layers: iterating the map shows collapse "
                "(sub-critical) versus preservation across depth")
def cas_8(quick, seed):
    """CAS multi-layer extension (figures/cas_depth.png): mean cosine after L layers at fixed
    β = γ log n, Gaussian near-simplex tokens."""
    n, d = (256, 128) if quick else (1024, 128)
    layers = 4 if quick else 8
    samples = 3 if quick else 6
    rho = 0.5
    gc = critical_gamma(rho)
    frame = simulate_depth(n, d, rho, [0.5 * gc, gc, 2 * gc], layers, samples=samples, seed=seed)
    get = lambda g, layer: frame[np.isclose(frame["gamma"], g * gc)  # noqa: E731
                                 & (frame["layer"] == layer)].iloc[0]
    sub, crit, sup0, sup = get(0.5, layers), get(1.0, layers), get(2.0, 0), get(2.0, layers)
    ok = sub["cos_mean"] > 0.99 and sup["cos_mean"] - sup0["cos_mean"] < 0.15
    low_d = simulate_depth(n, 32, rho, 2 * gc, layers, samples=samples, seed=seed)
    low_d = low_d[low_d["layer"] == layers].iloc[0]
    return Measurement(
        f"after {layers} layers: sub-critical {_ci(sub['cos_mean'], sub['cos_se'])}, critical "
        f"{_ci(crit['cos_mean'], crit['cos_se'])}, super-critical (2γ_c) "
        f"{_ci(sup['cos_mean'], sup['cos_se'])} from {sup0['cos_mean']:.4f}", ok,
        "sub-critical > 0.99; super-critical drift < 0.15",
        f"n = {n}, d = {d}, {samples} draws. In d = 32 the same super-critical run ends at "
        f"{_ci(low_d['cos_mean'], low_d['cos_se'])} after {layers} layers (some draws collapse). "
        "At fixed β the critical point moves: contraction "
        "raises ρ and hence γ_c = 1/(1−ρ), so the critical layer also collapses within ~2 layers "
        "and super-critical tokens drift slowly upwards (the exact simplex drifts much less, "
        "figures/cas_depth.png). Preservation across depth is approximate, not exact.")
