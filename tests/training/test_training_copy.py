"""The copy test (sia_theory.training.copying), the fine-tuning warm-up, the checkpoint hook of
the trainer and the tokenized data's export/import (the GPU probe's building blocks)."""

import dataclasses

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("optax")

from sia_theory.training import TrainedRun, TrainSettings, train  # noqa: E402
from sia_theory.training import data as D  # noqa: E402
from sia_theory.training.copying import copy_sequences, copy_test  # noqa: E402
from sia_theory.training.needle import NeedleTuneSettings  # noqa: E402
from sia_theory.training.optim import schedule  # noqa: E402
from sia_theory.training.params import init_parameters  # noqa: E402

QUICK = TrainSettings.quick()  # 32-token windows: copies of 16 tokens


def untrained(settings=QUICK, scheme="p-rope"):
    return TrainedRun(scheme=scheme, tau=None, seed=0, settings=settings,
                      parameters=init_parameters(settings, 0), train_losses=np.zeros(1),
                      validation_curve=(), validation={})


@pytest.fixture(scope="module")
def trained():
    return train("si-p-rope", QUICK, seed=2)


def test_untrained_model_scores_both_copies_at_log_v():
    """The zero output layer predicts the uniform distribution: every token costs log V
    exactly, so both copies cost log V and the drop is 0."""
    out = copy_test(untrained(), sequences=3)
    log_v = np.log(QUICK.effective_vocab)
    for kind in ("random", "text"):
        assert out[f"{kind}_first"] == pytest.approx(log_v, abs=1e-5)
        assert out[f"{kind}_second"] == pytest.approx(log_v, abs=1e-5)
        assert abs(out[f"{kind}_drop"]) < 1e-5


def test_sequences_repeat_their_first_half_and_are_seeded():
    a = copy_sequences(QUICK, 16, 5, seed=3)
    b = copy_sequences(QUICK, 16, 5, seed=3)
    sep = D.corpus(QUICK).tokenizer.separator
    for kind in ("random", "text"):
        x = a[kind]
        assert x.shape == (5, 32)
        np.testing.assert_array_equal(x[:, :16], x[:, 16:])
        np.testing.assert_array_equal(x, b[kind])
    assert not (a["random"] == sep).any()
    assert not np.array_equal(a["random"], copy_sequences(QUICK, 16, 5, seed=4)["random"])


def test_copy_drop_equals_the_numpy_reference_decoders(trained):
    """The JAX path against the numpy reference decoder (:meth:`TrainedRun.decoder`): the
    per-token cross-entropy of the same sequences, averaged by hand over tokens 1 … n−1 of
    each copy."""
    half, n = 16, 4
    out = copy_test(trained, half=half, sequences=n, seed=5)
    for kind, x in copy_sequences(QUICK, half, n, seed=5).items():
        logits = trained.decoder(2 * half - 1).forward(x[:, :-1].astype(np.int64))
        logits = logits.astype(np.float64)
        log_z = np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) \
            + logits.max(-1)
        ce = log_z - np.take_along_axis(logits, x[:, 1:, None], -1)[..., 0]  # (n, 2·half − 1)
        first = ce[:, 0:half - 1].mean()  # predicts tokens 1 … half−1
        second = ce[:, half:2 * half - 1].mean()  # predicts tokens half+1 … 2·half−1
        assert out[f"{kind}_first"] == pytest.approx(first, abs=2e-4)
        assert out[f"{kind}_second"] == pytest.approx(second, abs=2e-4)
        assert out[f"{kind}_drop"] == pytest.approx(first - second, abs=3e-4)


@pytest.mark.parametrize("kwargs, name", [({"half": 1}, "half"), ({"half": 17}, "half"),
                                          ({"sequences": 0}, "sequences")])
def test_copy_test_rejects_bad_sizes(kwargs, name):
    with pytest.raises(ValueError, match=name):
        copy_test(untrained(), **kwargs)


def test_warmup_schedule_rises_then_holds_then_cools():
    """SI's fine-tuning: 100 warm-up, 100 constant, 100 cool-down steps (here 10/10/10)."""
    fn = schedule(0.3, 30, 1 / 3, warmup=10)
    got = np.array([float(fn(k)) for k in range(30)])
    expected = [0.3 * min(1.0, (k + 1) / 10, (30 - k) / 10) for k in range(30)]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert got[0] == pytest.approx(0.03) and got[15] == pytest.approx(0.3)


def test_warmup_settings_and_the_stores_keys():
    assert "warmup" not in TrainSettings().to_dict()  # keys of the stored runs unchanged
    assert "warmup" not in NeedleTuneSettings().to_dict()
    s = dataclasses.replace(QUICK, warmup=3)
    assert s.to_dict()["warmup"] == 3 and TrainSettings.from_dict(s.to_dict()) == s
    with pytest.raises(ValueError, match="warmup"):
        dataclasses.replace(QUICK, warmup=QUICK.steps)
    with pytest.raises(ValueError, match="warmup"):
        NeedleTuneSettings(steps=10, warmup=-1)
    assert NeedleTuneSettings(steps=12, warmup=4).tune_settings(QUICK).warmup == 4


def test_checkpoint_hook_sees_every_point_of_the_curve():
    seen = []
    run = train("p-rope", QUICK, seed=0, on_checkpoint=lambda step, p: seen.append(
        (step, float(np.asarray(p["unembedding"]).std()))))
    assert [s for s, _ in seen] == [s for s, _ in run.validation_curve] == [4, 8]
    assert seen[-1][1] == pytest.approx(float(run.parameters["unembedding"].std()), rel=1e-6)


def test_exported_tokens_are_the_same_after_import(tmp_path):
    key = ("bpe", QUICK.vocab_size, QUICK.max_train_documents)
    made = D._tokenize(*key)
    D.export_tokenized(QUICK, tmp_path)
    try:
        assert D.import_tokenized(tmp_path) == key
        held = D.tokenized(*key)
        assert held is not made
        np.testing.assert_array_equal(held[1], made[1])
        assert held[2] == made[2]
        for a, b in zip(held[3], made[3], strict=True):
            np.testing.assert_array_equal(a, b)
        text = " The special magic 1234 number is."
        np.testing.assert_array_equal(held[0].encode(text), made[0].encode(text))
    finally:
        D._IMPORTED.clear()


def test_figure_metadata_records_the_training_stack():
    """Every figure's ``versions`` (:func:`sia_theory._infra.io.package_versions`) carry JAX,
    jaxlib, optax, the XLA flags and the CPU model."""
    import jax
    import optax

    from sia_theory._infra.io import package_versions

    v = package_versions()
    assert v["jax"] == jax.__version__ and v["optax"] == optax.__version__
    assert v["jaxlib"] and v["cpu"] and "xla_flags" in v
