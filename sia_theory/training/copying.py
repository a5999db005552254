"""The copy test: can a trained model copy from its own context (the premise of in-context
retrieval, SI Table 2)?

A sequence of ``n`` tokens followed by the same ``n`` tokens again: a model that copies (an
induction head: attend to the token after the previous occurrence of the current one) predicts
the second copy almost perfectly, one that does not scores both copies alike. The measure is
the mean next-token loss on tokens ``1 … n−1`` of the first copy minus that on the same tokens
of the second copy (the second copy's first token has no earlier occurrence of its predecessor
to copy from and is left out of both): **the copy drop**, in nats per token. Two kinds of
sequence:

* **random**: ``n`` tokens drawn uniformly from the vocabulary (the separator excluded), so
  the first copy is unpredictable (loss near ``log V``) and every nat the second copy saves
  comes from copying;
* **text**: ``n`` consecutive tokens of the held-out validation documents, whose first copy
  the model already predicts from language statistics (a smaller drop means the same).

With ``n = train_length // 2`` the doubled sequence is one training window long, so no length
generalisation is involved. Sequences from ``rng_for(seed, COPY_STUDY)``.

Example (a run of :func:`sia_theory.training.train`)::

    from sia_theory.training import TrainSettings, train
    from sia_theory.training.copying import copy_test
    run = train("si-p-rope", TrainSettings.quick(), seed=0)
    copy_test(run, sequences=4)["random_drop"]  # near 0: 8 steps cannot copy
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .._infra.seeding import check_seed, rng_for
from .._infra.validate import check_int
from ._jax import require
from .data import corpus as load_corpus
from .evaluation import scheme_arrays
from .model import token_losses
from .params import OPTIONAL_LAYER, check_parameters
from .run import TrainedRun

jax, jnp, _ = require()

__all__ = ["COPY_STUDY", "copy_sequences", "copy_test"]

COPY_STUDY = "training.copy_test"
"""The seeding key of the copy test's sequences."""


@partial(jax.jit, static_argnames=("n_heads",))
def _losses(params, windows, tables, rotation, *, n_heads):
    return token_losses(params, windows, tables, rotation, n_heads=n_heads)


def copy_sequences(settings, half: int, sequences: int, seed: int = 0) -> dict:
    """``{"random": (sequences, 2·half), "text": (sequences, 2·half)}`` int32 token ids: each
    row a sequence of ``half`` tokens followed by itself (module docstring)."""
    s = settings
    data = load_corpus(s)
    rng = rng_for(seed, COPY_STUDY, half)
    low = 1 if data.tokenizer.separator == 0 else 0
    random = rng.integers(low, s.effective_vocab, (sequences, half))  # (S, half)
    if data.tokenizer.separator != 0:
        random = np.where(random == data.tokenizer.separator, (random + 1) % s.effective_vocab,
                          random)
    docs, total = data.validation.shape
    which = rng.integers(0, docs, sequences)  # (S,)
    start = rng.integers(0, total - half + 1, sequences)  # (S,)
    text = data.validation[which[:, None], start[:, None] + np.arange(half)]  # (S, half)
    return {kind: np.concatenate([x, x], axis=1).astype(np.int32)
            for kind, x in (("random", random), ("text", text))}


def copy_test(run, *, half: int | None = None, sequences: int = 32, seed: int = 0,
              parameters=None) -> dict:
    """The copy drop of a :class:`~.run.TrainedRun` (``parameters``: other weights of the
    same model, e.g. a checkpoint's, default the run's).

    Parameters
    ----------
    run : TrainedRun
        The trained model (its settings and scheme).
    half : int, optional
        Tokens per copy, 2 … ``train_length // 2`` (default ``train_length // 2``).
    sequences : int
        Sequences of each kind (1 … 4096).
    seed : int
        Seed of the sequences (the same for every run).
    parameters : dict, optional
        Weights to score instead of ``run.parameters``.

    Returns
    -------
    dict
        ``half``, ``sequences`` and, for ``kind`` in ``random`` and ``text``,
        ``{kind}_first`` and ``{kind}_second`` (mean loss in nats per token on tokens
        ``1 … half−1`` of each copy) and ``{kind}_drop`` (first minus second).

    Raises
    ------
    ValueError
        Before any work: ``run`` not a :class:`~.run.TrainedRun`; ``half`` or ``sequences``
        out of range, or a bad ``seed``; ``parameters`` (or the run's own) not the model of
        the run's settings and scheme, naming the entry (missing, unknown, of another shape,
        not finite, or a learned ``layers.score_scale`` the scheme does not declare or that a
        scheme declaring it lacks), as :func:`~.trainer.train` checks them.
    """
    if not isinstance(run, TrainedRun):
        raise ValueError(f"run must be a TrainedRun, got {type(run).__name__}")
    s = run.settings
    half = s.train_length // 2 if half is None else half
    half = check_int("half", half, lo=2, hi=max(2, s.train_length // 2))
    sequences = check_int("sequences", sequences, lo=1, hi=4096)
    seed = check_seed(seed)
    scheme = run.resolved_scheme()
    given = (run.parameters, "run.parameters") if parameters is None else (parameters,
                                                                           "parameters")
    checked = _checked_parameters(*given, s, scheme)
    tables, rotation = scheme_arrays(scheme, s, 2 * half - 1)
    params = jax.tree.map(jnp.asarray, checked)
    out = {"half": half, "sequences": sequences}
    for kind, windows in copy_sequences(s, half, sequences, seed).items():
        losses = np.asarray(_losses(params, jnp.asarray(windows), tables, rotation,
                                    n_heads=s.n_heads), np.float64)  # (S, 2·half − 1)
        # position j predicts token j + 1: tokens 1 … half−1 of the first copy are positions
        # 0 … half−2, those of the second copy positions half … 2·half−2
        first = float(losses[:, :half - 1].mean())
        second = float(losses[:, half:].mean())
        out.update({f"{kind}_first": first, f"{kind}_second": second,
                    f"{kind}_drop": first - second})
    return out


def _checked_parameters(params, name, settings, scheme) -> dict:
    """``params`` checked against the model of ``settings`` (:func:`~.params.check_parameters`)
    and ``scheme``'s learned entries: a ``layers.score_scale`` held exactly when the scheme
    learns one. ``ValueError`` naming ``name`` and the entry."""
    checked = check_parameters(params, settings, name)
    held = {key for key in OPTIONAL_LAYER if key in checked["layers"]}
    learned = set(getattr(scheme, "learned", ()))
    if held - learned:
        key = sorted(held - learned)[0]
        raise ValueError(f"{name}: layers.{key} is learned only by a scheme that declares it "
                         f"(learned=({key!r},)); scheme {scheme.name!r} does not")
    if learned - held:
        key = sorted(learned - held)[0]
        raise ValueError(f"{name}: layers.{key} is learned by scheme {scheme.name!r} and "
                         f"missing here (shape ({settings.n_layers},)): weights without it are "
                         f"not this run's model")
    return checked
