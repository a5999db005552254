"""The optimiser of SI App. G with optax: Muon on the block matrices, Adam on the rest.

* block matrices (``layers``): Muon (Jordan et al. 2024; ``optax.contrib.muon``: Nesterov
  momentum 0.95, Newton–Schulz orthogonalisation of each layer's matrix, no weight decay) at
  ``learning_rate``, or Adam with ``optimizer="adam"``;
* token embedding: Adam at ``embedding_learning_rate``; unembedding and a scheme's learned
  score scales (``layers["score_scale"]``): Adam at ``head_learning_rate`` (SI App. G: "For
  remaining parameters (unembedding and LogN scalings …) … Adam"); Adam's ``β = (0.9, 0.95)``.

Schedule (SI App. G: "constant learning rate … and linear cooldown", no warm-up in
pretraining): every rate rises linearly over the first ``warmup`` steps (0 by default; SI's
needle fine-tuning warms up for 100 of its 300 steps), is constant until ``(1 − cooldown)·steps``
and then falls linearly towards 0.
"""

from __future__ import annotations

from ._jax import require

jax, jnp, optax = require()

__all__ = ["schedule", "make_optimizer", "ADAM_BETAS", "MUON_MOMENTUM"]

ADAM_BETAS = (0.9, 0.95)
"""Adam's ``(β₁, β₂)`` for the embeddings and the output layer (SI App. G)."""
MUON_MOMENTUM = 0.95
"""Muon's (Nesterov) momentum for the block matrices (SI App. G)."""


def schedule(rate: float, steps: int, cooldown: float, warmup: int = 0):
    """``rate × min(1, (step + 1)/warmup, (steps − step)/(cooldown·steps))`` (the warm-up and
    cool-down terms only where ``warmup`` and ``cooldown`` are positive; constant without
    either)."""
    span = cooldown * steps
    if span <= 0 and warmup <= 0:
        return optax.constant_schedule(rate)

    def fn(step):
        factor = jnp.minimum(1.0, (steps - step) / span) if span > 0 else 1.0
        if warmup > 0:
            factor = jnp.minimum(factor, (step + 1.0) / warmup)
        return rate * factor

    return fn


def make_optimizer(settings):
    """The ``optax`` transformation for a parameter tree of :mod:`.params`' layout."""
    s = settings

    def adam(rate):
        return optax.adam(schedule(rate, s.steps, s.cooldown, s.warmup), b1=ADAM_BETAS[0],
                          b2=ADAM_BETAS[1])

    if s.optimizer == "muon":
        # optional dependency: optax (require() above names the extra); Muon only
        from optax.contrib import MuonDimensionNumbers, muon

        dims = MuonDimensionNumbers(reduction_axis=1, output_axis=2)  # (layer, in, out)
        matrices = muon(schedule(s.learning_rate, s.steps, s.cooldown, s.warmup),
                        beta=MUON_MOMENTUM, nesterov=True,
                        muon_weight_dimension_numbers=lambda tree: jax.tree.map(
                            lambda _: dims, tree))
    else:
        matrices = adam(s.learning_rate)

    def labels(params):
        return {"embedding": "embedding", "unembedding": "head",
                "layers": {k: "head" if k == "score_scale" else "matrix"
                           for k in params["layers"]}}

    return optax.multi_transform({"embedding": adam(s.embedding_learning_rate),
                                  "head": adam(s.head_learning_rate), "matrix": matrices},
                                 labels)
