"""The JAX trainer against independent constructions: the numpy reference decoder (same
parameters, same scheme objects), a hand-computed cross-entropy, the uniform prediction of an
untrained model, and itself (same seed, chunked vs whole validation, stored vs fresh)."""

import dataclasses

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("optax")

from sia_theory.attention import Decoder, DecoderConfig  # noqa: E402
from sia_theory.training import (  # noqa: E402
    SCHEMES,
    Scheme,
    TrainedRun,
    TrainSettings,
    train,
    trainer,  # noqa: E402
)
from sia_theory.training import model as jax_model  # noqa: E402
from sia_theory.training.data import corpus  # noqa: E402
from sia_theory.training.params import (  # noqa: E402
    init_parameters,
    to_decoder_layout,
)
from sia_theory.transforms import Transform  # noqa: E402

QUICK = TrainSettings.quick()
token_losses = trainer.jax.jit(jax_model.token_losses, static_argnames=("n_heads",))
PARITY = 1e-4  # max |logit difference|, float32 (the tolerance)


@dataclasses.dataclass(frozen=True)
class DistanceAndContext(Transform):
    """A transform depending on distance and context together (the full-table route)."""

    c: float = 0.3
    depends_on = frozenset({"distance", "context"})

    def affine(self, t, n, h):
        return 1.0 + self.c * np.log(n) / (1.0 + t), -0.1 * np.log1p(t)


@pytest.fixture(scope="module")
def data():
    return corpus(QUICK)


@pytest.fixture(scope="module")
def runs():
    return {name: train(name, QUICK, seed=1) for name in SCHEMES}


def numpy_logits(run, tokens):
    return run.decoder(tokens.shape[1]).forward(tokens.astype(np.int64))


def test_untrained_model_predicts_uniform_distribution(data):
    params = init_parameters(QUICK, 3)
    windows = data.validation_windows(QUICK.train_length)
    tables, rotation = trainer.scheme_arrays(SCHEMES["si-p-rope"], QUICK, QUICK.train_length)
    losses = np.asarray(token_losses(params, windows, tables, rotation,
                                               n_heads=QUICK.n_heads))
    np.testing.assert_allclose(losses, np.log(QUICK.effective_vocab), rtol=1e-6)


def test_training_loss_equals_hand_computed_cross_entropy(runs, data):
    run = runs["si-p-rope"]
    windows = data.validation_windows(QUICK.train_length)[:3]  # (3, L + 1)
    logits = numpy_logits(run, windows[:, :-1]).astype(np.float64)  # (3, L, V)
    top = logits.max(axis=-1, keepdims=True)
    log_p = logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))
    by_hand = -np.take_along_axis(log_p, windows[:, 1:, None], axis=-1)[..., 0]  # (3, L)
    tables, rotation = trainer.scheme_arrays(run.resolved_scheme(), QUICK, QUICK.train_length)
    losses = np.asarray(token_losses(run.parameters, windows, tables, rotation,
                                               n_heads=QUICK.n_heads))
    np.testing.assert_allclose(losses, by_hand, atol=1e-5)
    assert by_hand.mean() < np.log(QUICK.effective_vocab) - 0.05  # the model learnt something


@pytest.mark.parametrize("name", list(SCHEMES))
def test_jax_logits_equal_numpy_reference_at_training_length_and_16x(name, runs, data):
    run = runs[name]
    for length in (QUICK.train_length, QUICK.max_length):
        tokens = data.validation[:, :length]
        ours = trainer.logits(run.parameters, run.resolved_scheme(), QUICK, tokens)
        reference = numpy_logits(run, tokens)
        assert np.abs(reference).max() > 1.0  # logits of a model that moved off uniform
        assert np.abs(ours - reference).max() <= PARITY, (name, length)


def test_full_table_transform_trains_and_matches_reference(data):
    scheme = Scheme("distance-and-context", "p-rope", DistanceAndContext())
    run = train(scheme, QUICK, seed=2)
    for length in (QUICK.train_length, QUICK.max_length):
        tokens = data.validation[:, :length]
        ours = trainer.logits(run.parameters, scheme, QUICK, tokens)
        assert np.abs(ours - numpy_logits(run, tokens)).max() <= PARITY


def test_reference_decoder_random_weights_give_reference_logits(data):
    """The reference's own seeded weights (non-zero output projections: every block mixes)
    through the JAX forward, with RoPE + NTK at 16x and per-head ALiBi slopes."""
    for name in ("rope-ntk", "alibi", "logn-p-rope"):
        scheme = SCHEMES[name]
        length = QUICK.max_length
        config = DecoderConfig(vocab_size=QUICK.effective_vocab, d_model=QUICK.d_model,
                               n_heads=QUICK.n_heads, n_layers=QUICK.n_layers,
                               position=scheme.position_encoding(QUICK.train_length, length),
                               transform=scheme.transform_for(QUICK.n_heads), dtype="float32",
                               seed=5)
        decoder = Decoder(config)
        params = {"embedding": decoder.embedding, "unembedding": decoder.unembedding,
                  "layers": {k: np.stack([layer[k] for layer in decoder.layers])
                             for k in Decoder.LAYER_WEIGHTS}}
        tokens = data.validation[:, :length]
        ours = trainer.logits(params, scheme, QUICK, tokens)
        reference = decoder.forward(tokens.astype(np.int64))
        assert np.abs(ours - reference).max() <= PARITY * max(1.0, np.abs(reference).max() / 10)


def test_from_parameters_round_trips_the_reference_weights():
    config = DecoderConfig(vocab_size=40, d_model=16, n_heads=2, n_layers=2, dtype="float32")
    original = Decoder(config)
    copy = Decoder.from_parameters(config, {"embedding": original.embedding,
                                            "unembedding": original.unembedding,
                                            "layers": original.layers})
    tokens = np.arange(12).reshape(2, 6)
    np.testing.assert_array_equal(copy.forward(tokens), original.forward(tokens))
    with pytest.raises(ValueError, match="w_up"):
        Decoder.from_parameters(config, {"embedding": original.embedding,
                                         "unembedding": original.unembedding,
                                         "layers": [{**original.layers[0], "w_up": np.ones(3)},
                                                    original.layers[1]]})


def test_same_seed_same_numbers_other_seed_other_numbers(runs):
    first = runs["p-rope"]
    again = train("p-rope", QUICK, seed=1)
    np.testing.assert_array_equal(again.train_losses, first.train_losses)
    assert again.validation == first.validation
    for key, value in to_decoder_layout(first.parameters)["layers"][1].items():
        np.testing.assert_array_equal(to_decoder_layout(again.parameters)["layers"][1][key],
                                      value)
    other = train("p-rope", QUICK, seed=2)
    assert not np.array_equal(other.train_losses, first.train_losses)


def test_validation_scores_the_same_tokens_at_every_length(data):
    targets = {length: data.validation_windows(length)[:, 1:].reshape(
        data.validation.shape[0], -1) for length in QUICK.eval_lengths}
    for value in targets.values():
        np.testing.assert_array_equal(value, data.validation[:, 1:])


def test_chunked_validation_equals_one_block(runs, data, monkeypatch):
    run = runs["si-p-rope"]
    length = QUICK.max_length
    whole = trainer.evaluate(run.parameters, run.resolved_scheme(), QUICK, length, data)
    monkeypatch.setattr(trainer, "SCORE_BYTES", 4 * QUICK.n_heads * length * 64)  # 64 rows
    unrolled = trainer.evaluate(run.parameters, run.resolved_scheme(), QUICK, length, data)
    monkeypatch.setattr(jax_model, "UNROLLED_BLOCKS", 2)  # the lax.map route (all keys)
    mapped = trainer.evaluate(run.parameters, run.resolved_scheme(), QUICK, length, data)
    assert abs(unrolled - whole) < 1e-5 and abs(mapped - whole) < 1e-5
    assert whole == run.validation[length]


def test_validation_loss_at_another_length_is_computed_on_demand(runs, data):
    run = runs["alibi"]
    length = 2 * QUICK.train_length
    assert length not in run.validation
    value = run.validation_loss(length)
    assert value == trainer.evaluate(run.parameters, run.resolved_scheme(), QUICK, length, data)
    assert run.validation_loss(QUICK.train_length) == run.validation[QUICK.train_length]
    with pytest.raises(ValueError, match="length"):
        run.validation_loss(QUICK.max_length + 1)


def test_saved_run_loads_back_identical(runs, tmp_path):
    run = runs["si-rope"]
    paths = run.save(tmp_path / "run")
    assert {"parameters", "curves", "record", "tokenizer"} <= set(paths)
    back = TrainedRun.load(tmp_path / "run")
    assert (back.scheme, back.tau, back.seed, back.settings) == (run.scheme, 10.0, 1, QUICK)
    np.testing.assert_array_equal(back.train_losses, run.train_losses)
    assert back.validation == run.validation
    assert back.validation_curve == run.validation_curve
    np.testing.assert_array_equal(back.parameters["layers"]["w_q"],
                                  run.parameters["layers"]["w_q"])


def test_tau_reaches_the_transform(data):
    run = train("si-p-rope", QUICK, seed=1, tau=0.1)
    assert run.tau == 0.1 and run.resolved_scheme().transform.tau == 0.1
    default = train("si-p-rope", QUICK, seed=1)
    assert run.validation != default.validation


def test_the_learned_logn_scale_trains_with_adam_and_scales_the_scores(runs, data):
    """logn-p-rope-learned: one score scale per layer from 1, moved by Adam at the output
    layer's rate (not orthogonalised by Muon: each entry moves on its own); its logits are those
    of LogN with s_l = 0.4 λ_l, i.e. the fixed scheme's forward with q multiplied by λ_l."""
    run = runs["logn-p-rope-learned"]
    scales = run.parameters["layers"]["score_scale"]
    assert scales.shape == (QUICK.n_layers,) and np.all(np.abs(scales - 1) > 1e-3)
    assert abs(scales[0] - scales[1]) > 1e-4
    tokens = data.validation[:, :QUICK.train_length]
    ours = trainer.logits(run.parameters, run.resolved_scheme(), QUICK, tokens)
    plain = {**run.parameters, "layers": {k: v for k, v in run.parameters["layers"].items()
                                          if k != "score_scale"}}
    unscaled = trainer.logits(plain, "logn-p-rope", QUICK, tokens)
    assert np.abs(ours - unscaled).max() > 1e-3  # the scale is used
    assert np.abs(ours - numpy_logits(run, tokens)).max() <= PARITY


def test_a_learned_scale_under_a_scheme_that_learns_none_is_refused():
    params = init_parameters(QUICK, 0, ("score_scale",))
    with pytest.raises(ValueError, match="score_scale"):
        train("logn-p-rope", QUICK, parameters=params)
