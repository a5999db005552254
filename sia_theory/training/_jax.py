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

``environment()`` is what a training run records about the process that trained it (stored with
the run, :attr:`~.run.TrainedRun.environment`): the package's version, JAX's, jaxlib's and
optax's, the devices, ``XLA_FLAGS`` and the JAX settings that change the numbers.
"""

from __future__ import annotations

import os
import sys

__all__ = ["require", "INSTALL_HINT", "XLA_THREAD_FLAGS", "CACHE_ENV", "cache_dir",
           "environment", "NUMERIC_FLAGS", "NOT_RECORDED"]

INSTALL_HINT = "pip install 'sia-theory[train]'"
XLA_THREAD_FLAGS = ("--xla_cpu_multi_thread_eigen=false", "intra_op_parallelism_threads=1")
CACHE_ENV = "SIA_THEORY_JAX_CACHE"
_configured = []
NUMERIC_FLAGS = ("jax_enable_x64", "jax_default_matmul_precision", "jax_default_prng_impl",
                 "jax_numpy_dtype_promotion")
"""JAX configuration flags whose values change a run's numbers (recorded by
:func:`environment`)."""
NOT_RECORDED = "not recorded"
"""The environment of a run stored before runs recorded theirs."""


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


def environment() -> dict:
    """The training process as a run records it: ``sia-theory`` (:data:`sia_theory.__version__`
    of the code running), ``python``, ``jax``, ``jaxlib``, ``optax``, ``backend``,
    ``device_kind`` and ``device_count`` (of ``jax.devices()``), ``xla_flags`` (this process's
    ``XLA_FLAGS``, after :func:`require` added its thread flags) and each of
    :data:`NUMERIC_FLAGS` as JAX's configuration holds it now (as text). Imports JAX
    (:func:`require`)."""
    import platform

    import sia_theory

    jax, _, optax = require()
    import jaxlib  # installed with jax

    devices = jax.devices()
    out = {"sia-theory": sia_theory.__version__, "python": sys.version.split()[0],
           "platform": platform.platform(), "jax": jax.__version__,
           "jaxlib": getattr(jaxlib, "__version__", None) or _distribution_version("jaxlib"),
           "optax": optax.__version__, "backend": jax.default_backend(),
           "device_kind": devices[0].device_kind, "device_count": len(devices),
           "xla_flags": os.environ.get("XLA_FLAGS", "")}
    for name in NUMERIC_FLAGS:
        value = getattr(jax.config, name, None)
        out[name] = None if value is None else str(value)
    return out


def _distribution_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None
