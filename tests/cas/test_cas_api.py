"""The CAS public API: keyword-only physical parameters (a swapped γ and ρ cannot pass), one
phase vocabulary, seeds and generators checked, and the CAS layer tied to the attention
reference."""

import numpy as np
import pytest

import sia_theory
from sia_theory.attention import attention
from sia_theory.cas import config, dynamics, jacobian, simplex, tokens
from sia_theory.symbolic import cas as symbolic_cas

X4 = np.random.default_rng(0).standard_normal((4, 3))

POSITIONAL_CALLS = {  # each call passes physical parameters by position: must be refused
    "simplex_self_weight": lambda: sia_theory.simplex_self_weight(100, 2.0, 0.5),
    "simplex_inner_product": lambda: sia_theory.simplex_inner_product(100, 2.0, 0.5),
    "simplex_limit": lambda: sia_theory.simplex_limit(2.0, 0.5),
    "jacobian_limit": lambda: sia_theory.jacobian_limit(2.0, 0.5),
    "simplex_eta": lambda: sia_theory.simplex_eta(100, 64, 2.0, 0.5),
    "simplex_sparsity": lambda: sia_theory.simplex_sparsity(100, 2.0, 0.5),
    "critical_eta_excess": lambda: sia_theory.critical_eta_excess(100, 64, 0.5),
    "transition_width": lambda: sia_theory.transition_width(100, 0.5),
    "phase_of": lambda: simplex.phase_of(2.0, 0.5),
    "attention_step": lambda: sia_theory.attention_step(X4, 2.0),
    "jacobian_eta": lambda: sia_theory.jacobian_eta(X4, 2.0),
    "dense_jacobian": lambda: sia_theory.dense_jacobian(X4, 2.0),
    "sample_tokens": lambda: sia_theory.sample_tokens(8, 4, 0.5),
    "simulate_token_step": lambda: sia_theory.simulate_token_step(8, 4, 0.5, 2.0, seed=0),
    "simulate_depth": lambda: sia_theory.simulate_depth(8, 4, 0.5, 2.0, 2, seed=0),
}


@pytest.mark.parametrize("name", sorted(POSITIONAL_CALLS))
def test_physical_parameters_are_keyword_only(name):
    with pytest.raises(TypeError):
        POSITIONAL_CALLS[name]()


def test_swapped_gamma_and_rho_by_keyword_give_the_intended_numbers():
    # the keyword call means the same thing whatever the order of the keywords
    a = sia_theory.simplex_inner_product(n=1000, gamma=2.0, rho=0.5)
    b = sia_theory.simplex_inner_product(rho=0.5, n=1000, gamma=2.0)
    assert a == b
    assert sia_theory.simplex_limit(gamma=2.0, rho=0.5) == pytest.approx(0.8)  # 4ρ/(1+3ρ)


def test_one_phase_vocabulary():
    assert config.PHASES == ("subcritical", "critical", "supercritical")
    assert symbolic_cas.PHASES is config.PHASES and simplex.PHASES is config.PHASES
    assert tuple(symbolic_cas.self_weight_limits()) == config.PHASES
    gc = sia_theory.critical_gamma(0.5)
    assert [simplex.phase_of(gamma=g * gc, rho=0.5) for g in (0.5, 1.0, 1.5)] == list(
        config.PHASES)


@pytest.mark.parametrize("rng", [42, None, np.random.RandomState(0), "seed"])
def test_gaussian_tokens_need_a_generator(rng):
    with pytest.raises(ValueError, match=r"^rng must be a numpy.random.Generator"):
        tokens.sample_tokens(n=8, d=4, rho=0.5, rng=rng)


@pytest.mark.parametrize("seed", [-1, 2**63, 1.5, "0", None])
def test_simulations_reject_bad_seeds(seed):
    with pytest.raises(ValueError, match=r"^seed must"):
        dynamics.simulate_token_step(n=8, d=4, rho=0.5, gamma=1.0, seed=seed)


def test_simulations_have_no_default_seed():
    with pytest.raises(TypeError):
        dynamics.simulate_token_step(n=8, d=4, rho=0.5, gamma=1.0)


def test_token_rng_is_the_project_seeding_rule():
    from sia_theory._infra.seeding import rng_for

    a = tokens.token_rng(3, "cas.tokens", 5).standard_normal(4)
    np.testing.assert_array_equal(a, rng_for(3, "cas.tokens", 5).standard_normal(4))
    assert not np.array_equal(a, tokens.token_rng(3, "cas.tokens", 6).standard_normal(4))


@pytest.mark.parametrize("alpha", [0.0, 0.7])
@pytest.mark.parametrize("n,d,beta", [(7, 3, 2.5), (40, 16, 11.0), (64, 5, 0.3)])
def test_cas_layer_equals_reference_attention_plus_residual(n, d, beta, alpha):
    """CAS eq. 1 through two softmax implementations: ``attention_step(X, β, α)`` equals
    ``attention(Y, Y, Y, causal=False, scale=β) + αX`` with ``Y`` the normalised rows."""
    X = np.random.default_rng(n).standard_normal((n, d)) * np.random.default_rng(d).uniform(
        0.5, 3.0, (n, 1))
    Y = X / np.linalg.norm(X, axis=1, keepdims=True)  # (n, d)
    ref = attention(Y[None, None], Y[None, None], Y[None, None], causal=False,
                    scale=beta)[0, 0] + alpha * X  # (n, d)
    np.testing.assert_allclose(dynamics.attention_step(X, beta=beta, alpha=alpha), ref,
                               rtol=1e-12, atol=1e-12)


def test_private_helpers_are_promoted():
    # jacobian uses the public token helpers and softmax (no private cross-module import)
    assert jacobian.normalise_rows is tokens.normalise_rows
    assert jacobian.softmax_from_gram is dynamics.softmax_from_gram
    gram = np.array([[1.0, 0.2], [0.2, 1.0]])
    np.testing.assert_allclose(dynamics.softmax_from_gram(gram, 3.0).sum(axis=1), 1.0)
