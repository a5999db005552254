"""sia_theory.training._jax, exercised by its own name: the compilation-cache folder rules and
the lazy import of JAX and optax."""

import pytest

from sia_theory.training import _jax


def test_cache_dir_rules(monkeypatch):
    monkeypatch.setenv(_jax.CACHE_ENV, "off")
    assert _jax.cache_dir() is None
    monkeypatch.setenv(_jax.CACHE_ENV, "/tmp/jaxcache")
    assert _jax.cache_dir() == "/tmp/jaxcache"
    monkeypatch.delenv(_jax.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", "/c")
    assert _jax.cache_dir() == "/c/sia-theory/jax"


def test_require_returns_jax_numpy_and_optax():
    pytest.importorskip("jax")
    pytest.importorskip("optax")
    jax, jnp, optax = _jax.require()
    assert float(jnp.sum(jnp.arange(4))) == 6.0
    assert hasattr(optax, "adam") and hasattr(jax, "jit")
    assert "pip install" in _jax.INSTALL_HINT
