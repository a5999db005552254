"""sia_theory.training.evaluation, exercised by its own name: the validation loss of an untrained
model is log V exactly (its output layer starts at zero: a uniform prediction), and the logits
entry point refuses bad tokens."""

import math

import numpy as np
import pytest

pytest.importorskip("jax")

from sia_theory.schemes import resolve_scheme  # noqa: E402
from sia_theory.training.evaluation import block_for, evaluate, logits  # noqa: E402
from sia_theory.training.params import init_parameters  # noqa: E402
from sia_theory.training.settings import TrainSettings  # noqa: E402

S = TrainSettings(train_length=16, n_layers=1, d_model=16, n_heads=2, tokenizer="bytes",
                  batch_size=2, steps=2, eval_multiples=(1, 2), validation_documents=2,
                  max_train_documents=3)


def test_untrained_model_scores_log_vocabulary():
    params = init_parameters(S, seed=0)
    for length in (16, 32):
        assert evaluate(params, resolve_scheme("rope"), S, length) == pytest.approx(
            math.log(S.effective_vocab), rel=1e-6)
    out = logits(params, "si-rope", S, np.zeros((1, 8), np.int64))
    assert out.shape == (1, 8, S.effective_vocab) and not np.any(out)


def test_bad_input_named():
    params = init_parameters(S, seed=0)
    with pytest.raises(ValueError, match="length"):
        evaluate(params, resolve_scheme("rope"), S, 33)
    with pytest.raises(ValueError, match="tokens"):
        logits(params, "rope", S, np.zeros(8, np.int64))
    assert 32 % block_for(S, 1, 32) == 0


def test_per_document_losses_are_each_documents_own_windows():
    """evaluate_documents against the obvious path: each document's windows scored alone
    through the model's token losses, averaged per document; evaluate is their mean."""
    from sia_theory.training import model as jax_model
    from sia_theory.training.data import corpus
    from sia_theory.training.evaluation import evaluate_documents, scheme_arrays

    params = init_parameters(S, seed=4)
    params["unembedding"] = np.random.default_rng(0).standard_normal(
        params["unembedding"].shape).astype(np.float32) * 0.3  # off uniform: documents differ
    data = corpus(S)
    scheme = resolve_scheme("p-rope")
    per_doc = evaluate_documents(params, scheme, S, 16, data)
    tables, rotation = scheme_arrays(scheme, S, 16)
    docs, total = data.validation.shape
    by_hand = []
    for d in range(docs):
        windows = np.stack([data.validation[d, k * 16:k * 16 + 17]
                            for k in range((total - 1) // 16)])
        by_hand.append(float(np.mean(np.asarray(jax_model.token_losses(
            params, windows, tables, rotation, n_heads=S.n_heads)), dtype=np.float64)))
    np.testing.assert_allclose(per_doc, by_hand, rtol=1e-6)
    assert abs(per_doc[0] - per_doc[1]) > 1e-3
    assert evaluate(params, scheme, S, 16, data) == pytest.approx(float(np.mean(by_hand)),
                                                                  rel=1e-6)
