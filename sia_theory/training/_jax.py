"""JAX and optax, imported on first use with one CPU thread per process and a compilation cache.

``require()`` returns ``(jax, jax.numpy, optax)`` or raises ``ImportError`` naming the extra
that installs them. Before JAX is first imported it adds ``--xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1`` to ``XLA_FLAGS`` (unless ``XLA_FLAGS`` already sets them):
the project's rule is one thread per task with parallelism from independent tasks (the sweep
engine runs training cells in parallel processes), so numbers cannot depend on a thread count.
Measured on this project's 2-core machine, a second XLA thread made one training step only about
15 % faster, while two single-threaded runs side by side take the same time as one.

Compiling a training step takes seconds on CPU (about 5–8 s for the tiny test model on this
machine under load, 0.8 s from the cache), so JAX's persistent compilation cache is switched on
in ``$SIA_THEORY_JAX_CACHE`` (default ``$XDG_CACHE_HOME/sia-theory/jax``, i.e.
``~/.cache/sia-theory/jax``; set the variable to ``off`` to disable it) unless the process has
configured a cache of its own. A cached program is the same program: numbers do not change.
"""

from __future__ import annotations

import os
import sys

__all__ = ["require", "INSTALL_HINT", "XLA_THREAD_FLAGS", "CACHE_ENV", "cache_dir"]

INSTALL_HINT = "pip install 'sia-theory[train]'"
XLA_THREAD_FLAGS = ("--xla_cpu_multi_thread_eigen=false", "intra_op_parallelism_threads=1")
CACHE_ENV = "SIA_THEORY_JAX_CACHE"
_configured = []


def cache_dir() -> str | None:
    """The persistent compilation cache folder (``None`` when switched off)."""
    value = os.environ.get(CACHE_ENV, "").strip()
    if value.lower() == "off":
        return None
    if value:
        return value
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "sia-theory", "jax")


def _set_thread_flags() -> None:
    if "jax" in sys.modules:  # too late to change the backend's threads: leave them
        return
    flags = os.environ.get("XLA_FLAGS", "")
    extra = [f for f in XLA_THREAD_FLAGS if f.split("=")[0] not in flags]
    if extra:
        os.environ["XLA_FLAGS"] = " ".join([flags, *extra]).strip()


def require():
    """``(jax, jax.numpy, optax)``; ``ImportError`` with the install command if missing."""
    _set_thread_flags()
    try:
        import jax  # optional dependency: jax and optax (the train extra)
        import jax.numpy as jnp
        import optax
    except ImportError as err:
        raise ImportError(f"training needs JAX and optax ({err.name or err} is missing): "
                          f"{INSTALL_HINT}") from err
    if not _configured:
        _configured.append(True)
        folder = cache_dir()
        if folder is not None and not jax.config.jax_compilation_cache_dir:
            jax.config.update("jax_compilation_cache_dir", folder)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    return jax, jnp, optax
