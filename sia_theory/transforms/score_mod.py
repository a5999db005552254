"""A bare FlexAttention ``score_mod`` as a :class:`~sia_theory.transforms.Transform`.

PyTorch's FlexAttention writes a logit modification as ``score_mod(score, b, h, q_idx, kv_idx)``
(Dong et al. 2024); attention-gym's mods are such functions. :class:`ScoreModTransform` takes one
written for numpy (elementwise on broadcast arrays) and reads its affine coefficients off it:
with ``q_idx = n − 1`` and ``kv_idx = n − 1 − t`` (the package's causal convention),

    ``m(t, n) = f(0)``,  ``a(t, n) = f(1) − f(0)``,

checked to be affine at the scores :data:`PROBE_SCORES` (``|f(s) − (a·s + m)| <= 1e-9·scale``)
on every grid it is evaluated on, and once at construction on a small grid of causal pairs up to
``q_idx = 65 536``, so a function that is not affine in the score is refused before any work. A
function that raises, returns complex, non-finite or wrongly shaped values is refused the same
way: one ``ValueError`` naming the function and what is wrong. Its declared dependence is the
safe default (distance, context and head); ``h = None`` is read as head 0 and ``b`` is 0.

A function written for torch tensors (attention-gym's mods as written, e.g. ALiBi's
``score + (kv_idx − q_idx)·torch.exp2(−(h + 1)·8/H)``) fails on numpy arrays; when torch is
installed it is then evaluated on torch copies of the same grids, in float64 scores and int64
indices, and its result read back as numpy. A function that works on numpy arrays is evaluated
on them, as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._infra.validate import check_int
from .base import Transform

__all__ = ["ScoreModTransform", "PROBE_SCORES", "AFFINE_RTOL", "as_transform"]

PROBE_SCORES = (-3.0, 0.5, 7.0)
"""The extra scores at which a score_mod is checked affine."""
AFFINE_RTOL = 1e-9
"""Relative tolerance of that affinity check."""
# Causal (q_idx, kv_idx) pairs of the construction-time probe: short and long distances, query
# positions on both sides of common training lengths.
_PROBE_Q = np.array([0, 1, 2, 3, 7, 64, 1000, 4095, 4096, 8191, 8192, 65_536])


def _name(fn) -> str:
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None) or type(fn).__name__
    return f"{module}.{qualname}" if module else qualname


@dataclass(frozen=True, eq=False)
class ScoreModTransform(Transform):
    """``fn(score, b, h, q_idx, kv_idx)`` (numpy or torch, elementwise) as a transform (module
    docstring).

    ``n_heads``: how many heads ``fn`` supports (``None``: any; the construction probe then
    uses head 0 only). Equality is identity of ``fn`` and ``n_heads``.

    Parameters
    ----------
    fn : callable
        ``score_mod(score, b, h, q_idx, kv_idx)``, affine in the score.
    n_heads : int, optional
        The number of heads ``fn`` supports, >= 1 (None: any).

    Raises
    ------
    ValueError
        If ``fn`` is not a function (a Transform or a class is refused), ``n_heads`` is not
        an integer >= 1, or the probe on index grids fails: ``fn`` raises, returns complex,
        non-real, wrongly shaped or non-finite values, or is not affine in the score.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import ScoreModTransform
    >>> def alibi(score, b, h, q_idx, kv_idx):  # FlexAttention's signature, on numpy arrays
    ...     return score - 0.25 * (q_idx - kv_idx)
    >>> a, m = ScoreModTransform(alibi).coefficients(np.array([0.0, 4.0]), 16)
    >>> a.tolist(), m.tolist()  # a = f(1) − f(0) and m = f(0) at distance t: 1 and −t/4
    ([1.0, 1.0], [0.0, -1.0])
    >>> ScoreModTransform(lambda score, b, h, q, kv: score**2)
    Traceback (most recent call last):
    ...
    ValueError: ...not affine in the score...
    """

    fn: object
    n_heads: int | None = None

    def __post_init__(self):
        fn = self.fn
        if isinstance(fn, Transform) or isinstance(fn, type) or not callable(fn):
            raise ValueError(f"fn must be a function score_mod(score, b, h, q_idx, kv_idx), got "
                             f"{fn!r}")
        if self.n_heads is not None:
            object.__setattr__(self, "n_heads", check_int("n_heads", self.n_heads, lo=1))
        q = np.repeat(_PROBE_Q, 4)
        kv = np.maximum(q - np.tile([0, 1, 2, 0], _PROBE_Q.size), 0)
        kv[3::4] = q[3::4] // 2
        heads = np.arange(self.n_heads or 1)[:, None]  # (H, 1)
        self._probe(np.zeros(1, np.int64), heads, q[None, :], kv[None, :])  # (H, 4·Q) pairs

    def __eq__(self, other):
        return (type(other) is type(self) and other.fn is self.fn
                and other.n_heads == self.n_heads)

    def __hash__(self):
        return hash((type(self), id(self.fn), self.n_heads))

    def __repr__(self):
        return f"ScoreModTransform({_name(self.fn)}, n_heads={self.n_heads})"

    def _apply(self, *args):
        """``fn(*args)`` on numpy arrays, or on torch tensors for a function written for torch
        (decided by the first evaluation, see :meth:`_evaluate`)."""
        return _call_torch(self.fn, args) if getattr(self, "_on_torch", False) else self.fn(*args)

    def _evaluate(self, s, b, h, q_idx, kv_idx, shape):
        where = f"score_mod {_name(self.fn)}"
        args = (np.full(shape, s), b, h, q_idx, kv_idx)
        try:
            with np.errstate(all="ignore"):  # non-finite results are refused below
                out = self._apply(*args)
        except Exception as err:  # the user's function can raise anything
            out = self._try_torch(args)
            if out is None:
                raise ValueError(f"{where} failed on numpy index grids (FlexAttention signature "
                                 f"score_mod(score, b, h, q_idx, kv_idx), elementwise"
                                 f"{'' if _torch() is None else ', and on torch tensors'}): "
                                 f"{type(err).__name__}: {err}") from None
        out = np.asarray(out)
        if out.dtype.kind == "c":
            raise ValueError(f"{where} returned complex values (dtype {out.dtype}); a logit "
                             "must be real")
        if out.dtype.kind not in "fiu":
            raise ValueError(f"{where} must return real numbers, got dtype {out.dtype}")
        if out.shape != shape:
            raise ValueError(f"{where} must return an array of the score's shape {shape}, "
                             f"got shape {out.shape}")
        out = out.astype(np.float64)
        if not np.all(np.isfinite(out)):
            raise ValueError(f"{where} returned non-finite values at score {s:g} (e.g. at "
                             f"{self._first(~np.isfinite(out), h, q_idx, kv_idx)})")
        return out

    @staticmethod
    def _first(bad, h, q_idx, kv_idx):
        i = np.unravel_index(np.argmax(bad), bad.shape)
        pick = [np.broadcast_to(x, bad.shape)[i] for x in (h, q_idx, kv_idx)]
        return "h={}, q_idx={}, kv_idx={}".format(*(int(x) for x in pick))

    def _probe(self, b, h, q_idx, kv_idx):
        """``(a, m)`` on the grid, after checking affinity at :data:`PROBE_SCORES`."""
        shape = np.broadcast_shapes(np.shape(b), np.shape(h), np.shape(q_idx), np.shape(kv_idx))
        m = self._evaluate(0.0, b, h, q_idx, kv_idx, shape)
        a = self._evaluate(1.0, b, h, q_idx, kv_idx, shape) - m
        for s in PROBE_SCORES:
            got = self._evaluate(s, b, h, q_idx, kv_idx, shape)
            want = a * s + m
            scale = np.maximum(np.abs(got), np.abs(a * s) + np.abs(m))
            bad = np.abs(got - want) > AFFINE_RTOL * scale
            if np.any(bad):
                i = np.unravel_index(np.argmax(bad), shape)
                raise ValueError(
                    f"score_mod {_name(self.fn)} is not affine in the score (sia_theory "
                    f"transforms are L = a·S + m): f({s:g}) = {float(got[i])!r} but f(0) + "
                    f"{s:g}·(f(1) − f(0)) = {float(want[i])!r} at "
                    f"{self._first(bad, h, q_idx, kv_idx)}")
        return a, m

    def affine(self, t, n, h):
        """``(f(1) − f(0), f(0))`` of the wrapped function at ``q_idx = n − 1``,
        ``kv_idx = n − 1 − t``, checked affine at :data:`PROBE_SCORES`."""
        if n is None:
            raise ValueError(f"n_ctx is required for {self!r} (a bare score_mod may depend on "
                             "the query position q_idx = n_ctx − 1)")
        t, n = np.broadcast_arrays(np.asarray(t, np.float64), np.asarray(n, np.float64))
        q_idx = n - 1.0
        kv_idx = q_idx - t
        if np.all(q_idx == np.round(q_idx)) and np.all(kv_idx == np.round(kv_idx)):
            q_idx, kv_idx = q_idx.astype(np.int64), kv_idx.astype(np.int64)
        return self._probe(np.zeros(1, np.int64), 0 if h is None else np.asarray(h), q_idx,
                           kv_idx)

    def _try_torch(self, args):
        """``fn`` on torch tensors after it failed on numpy arrays (a mod written for torch,
        such as attention-gym's): the result, from now on the way ``fn`` is called, or ``None``
        when torch is not installed, is already in use, or fails too."""
        if getattr(self, "_on_torch", False) or _torch() is None:
            return None
        try:
            out = _call_torch(self.fn, args)
        except Exception:  # the numpy failure is the one reported
            return None
        object.__setattr__(self, "_on_torch", True)
        return out

    def score_mod(self, score, b, h, q_idx, kv_idx):
        """``fn`` itself (one evaluation per score; its affinity was probed on construction),
        on torch tensors for a function written for torch. Floating-point warnings are
        silenced: attention evaluates it on keys after the query too, which the causal mask
        then drops (a mod written for ``kv_idx <= q_idx`` may give ``nan`` there)."""
        with np.errstate(all="ignore"):
            out = np.asarray(self._apply(score, b, h, q_idx, kv_idx))
        if out.dtype.kind not in "fiu":
            raise ValueError(f"score_mod {_name(self.fn)} must return real numbers, got dtype "
                             f"{out.dtype}")
        return out


def _torch():
    """``torch`` if it is installed, else ``None`` (an optional dependency, imported here)."""
    try:
        import torch  # optional: only for score mods written for torch
    except ImportError:
        return None
    return torch


def _call_torch(fn, args):
    """``fn`` on torch copies of the numpy ``args``; the result as a numpy array."""
    torch = _torch()
    with torch.no_grad():
        out = fn(*(torch.from_numpy(np.array(x)) for x in args))
    return out.numpy(force=True) if isinstance(out, torch.Tensor) else out


def as_transform(obj, what: str = "transform"):
    """``obj`` if it is a Transform, a :class:`ScoreModTransform` of it if it is a plain
    function (any callable that is neither a Transform nor a class), else ``ValueError``."""
    if isinstance(obj, Transform):
        return obj
    if callable(obj) and not isinstance(obj, type):
        return ScoreModTransform(obj)
    raise ValueError(f"{what} must be a sia_theory Transform or a function score_mod(score, b, "
                     f"h, q_idx, kv_idx), got {obj!r}")
