"""One seeding rule for every experiment, study and claim.

A random quantity is identified by ``(seed, study, index)``: the user's seed, the name of the
study that draws it (``"cas.transition"``, ``"si.entropy_scaling"``, …) and an index tuple of
non-negative integers (sample number, grid cell, …). Its stream is
``numpy.random.SeedSequence([seed, key(study), *index])``, so

* the same triple gives the same numbers whatever the thread or worker count and whatever order
  the cells are computed in, and
* two studies never share a stream by accident, even with the same seed and index.

``key(study)`` is the first 8 bytes of the SHA-256 of the name (stable across processes and
Python versions, unlike ``hash``).
"""

from __future__ import annotations

import hashlib

# numpy and the validators load on first use: the command line imports MAX_SEED from here for
# its argument types, and `sia-theory --help` must not pay for numpy.

__all__ = ["MAX_SEED", "check_seed", "study_key", "seed_sequence", "rng_for", "seed_int"]

MAX_SEED = 2**63 - 1
"""The largest seed accepted anywhere (``check_seed``, the ``--seed`` flags): ``2**63 - 1``, the
largest signed 64-bit integer."""


def check_seed(seed) -> int:
    """``seed`` as an int in ``[0, 2**63 - 1]``, or ``ValueError`` naming ``seed``."""
    # start-up: validate loads numpy; sia_theory.cli imports this module without it
    from .validate import check_int

    return check_int("seed", seed, lo=0, hi=MAX_SEED)


def study_key(study: str) -> int:
    if not isinstance(study, str) or not study:
        raise ValueError(f"study must be a non-empty string, got {study!r}")
    return int.from_bytes(hashlib.sha256(study.encode()).digest()[:8], "little")


def seed_sequence(seed, study: str, *index):
    """The ``SeedSequence`` of ``(seed, study, index)``."""
    import numpy as np  # start-up: numpy (0.26 s); sia_theory.cli imports this module without it

    # start-up: validate loads numpy; sia_theory.cli imports this module without it
    from .validate import check_int

    entropy = [check_seed(seed), study_key(study)]
    entropy += [check_int("index", i, lo=0) for i in index]
    return np.random.SeedSequence(entropy)


def rng_for(seed, study: str, *index):
    """A fresh ``numpy.random.Generator`` on the stream of ``(seed, study, index)``."""
    import numpy as np  # start-up: numpy (0.26 s); sia_theory.cli imports this module without it

    return np.random.default_rng(seed_sequence(seed, study, *index))


def seed_int(seed, study: str, *index) -> int:
    """A 63-bit integer seed derived from ``(seed, study, index)``, for APIs that take an int
    (such as the Monte Carlo kernels, which derive one stream per sample from it)."""
    import numpy as np  # start-up: numpy (0.26 s); sia_theory.cli imports this module without it

    return int(seed_sequence(seed, study, *index).generate_state(2, np.uint64)[0] >> np.uint64(1))
