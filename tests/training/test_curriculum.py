"""The copy curriculum (sia_theory.training.curriculum): which windows are rewritten, that each
holds one span of random ids in its first half and again in its second (found by brute force,
not by the draws), reproducibility, the settings field and its store key, and a run with it."""

import numpy as np
import pytest

from sia_theory.training.curriculum import SPAN_FRACTION, repeat_spans
from sia_theory.training.settings import TrainSettings

VOCAB, SEPARATOR = 50_000, 7


def _windows(batch=16, length=64, seed=0):
    return np.random.default_rng(seed).integers(0, VOCAB, size=(batch, length + 1))


def _repeated_span(row, span):
    """``(a, b)`` with ``row[a:a+span] == row[b:b+span]``, ``a`` in the first half and ``b``
    in the second, by brute force over every pair; ``None`` if none."""
    width, half = row.size, row.size // 2
    for a in range(0, half - span + 1):
        for b in range(half, width - span + 1):
            if np.array_equal(row[a:a + span], row[b:b + span]):
                return a, b
    return None


@pytest.mark.parametrize("fraction", [0.0, 0.25, 0.5, 1.0])
def test_a_fraction_of_the_windows_repeats_a_span_of_itself(fraction):
    w = _windows()
    out = repeat_spans(w, fraction, step=3, vocab_size=VOCAB, separator=SEPARATOR)
    changed = (out != w).any(axis=1)
    span = max(1, round(SPAN_FRACTION * 64))
    # random ids from 50,000 never repeat a span of 8 by chance: the rewritten rows are those
    # with a repeated span, and (nearly) all chosen rows change
    repeated = np.array([_repeated_span(row, span) is not None for row in out])
    assert repeated.sum() == round(fraction * 16)
    assert (changed <= repeated).all()
    assert np.array_equal(out[~repeated], w[~repeated])
    for row, orig in zip(out[repeated], w[repeated]):
        a, b = _repeated_span(row, span)
        outside = np.ones(row.size, bool)
        outside[a:a + span] = outside[b:b + span] = False
        assert np.array_equal(row[outside], orig[outside])  # only the two copies change
        assert SEPARATOR not in row[a:a + span] and row[a:a + span].max() < VOCAB


def test_the_random_ids_are_uniform_over_the_vocabulary_without_the_separator():
    """Windows of a token (99) outside the drawn range, so every drawn id is visible: 2,048
    windows × 8 ids, each of the 9 allowed ids within 5 standard errors of 1/9, never 3."""
    w = np.full((2048, 65), 99)
    out = repeat_spans(w, 1.0, step=0, vocab_size=10, separator=3)
    drawn = out[out != 99]
    span = max(1, round(SPAN_FRACTION * 64))
    assert drawn.size == 2 * span * 2048
    freq = np.bincount(drawn, minlength=10) / drawn.size
    assert freq[3] == 0
    se = np.sqrt((1 / 9) * (8 / 9) / (drawn.size / 2))  # the two copies are the same draws
    assert np.all(np.abs(np.delete(freq, 3) - 1 / 9) < 5 * se)


def test_the_draws_are_the_same_for_a_step_and_differ_between_steps():
    w = _windows()
    kw = {"vocab_size": VOCAB, "separator": SEPARATOR}
    assert np.array_equal(repeat_spans(w, 0.5, 7, **kw), repeat_spans(w, 0.5, 7, **kw))
    assert not np.array_equal(repeat_spans(w, 0.5, 7, **kw), repeat_spans(w, 0.5, 8, **kw))
    before = w.copy()
    repeat_spans(w, 1.0, 0, **kw)
    assert np.array_equal(w, before)  # the input is not modified


@pytest.mark.parametrize("kwargs, name", [({"fraction": 1.5}, "fraction"),
                                          ({"fraction": -0.1}, "fraction"),
                                          ({"windows": np.zeros((4, 3), int)}, "windows"),
                                          ({"vocab_size": 2}, "vocab_size"),
                                          ({"span_fraction": 0.7}, "span_fraction")])
def test_bad_input_names_the_parameter(kwargs, name):
    args = {"windows": _windows(), "fraction": 0.5, "step": 0, "vocab_size": VOCAB,
            "separator": SEPARATOR, **kwargs}
    with pytest.raises(ValueError, match=name):
        repeat_spans(**args)


def test_a_half_window_span_fills_the_second_half_with_the_first_half_s_ids():
    w = _windows(batch=8, length=64)
    out = repeat_spans(w, 1.0, 0, VOCAB, SEPARATOR, span_fraction=0.5)
    for row in out:
        assert _repeated_span(row, 32) is not None  # 32 random ids, then the same 32


def test_the_setting_is_checked_and_keeps_the_plain_runs_store_key():
    with pytest.raises(ValueError, match="copy_fraction"):
        TrainSettings(copy_fraction=1.5)
    for bad in (0.0, 0.6):
        with pytest.raises(ValueError, match="copy_span"):
            TrainSettings(copy_span=bad)
    assert "copy_span" not in TrainSettings(copy_fraction=0.25).to_dict()
    assert TrainSettings(copy_fraction=0.25, copy_span=0.5).to_dict()["copy_span"] == 0.5
    plain = TrainSettings.full()
    assert "copy_fraction" not in plain.to_dict()  # the stores' keys of the plain runs
    with_copy = TrainSettings(copy_fraction=0.25)
    assert with_copy.to_dict()["copy_fraction"] == 0.25
    assert TrainSettings.from_dict(with_copy.to_dict()) == with_copy


def test_a_quick_run_with_the_curriculum_trains_on_the_rewritten_windows():
    pytest.importorskip("jax")
    from sia_theory.training import train

    base = TrainSettings.quick()
    plain = train("si-p-rope", base, seed=0)
    copied = train("si-p-rope", TrainSettings(**{**base.to_dict(), "copy_fraction": 0.5,
                                                 "eval_multiples": (1, 4, 16)}), seed=0)
    # same initialisation and data order: the first loss is log(vocab) for both (the output
    # layer starts at 0), the later ones differ through the rewritten windows
    assert plain.train_losses[0] == pytest.approx(np.log(base.vocab_size), rel=1e-6)
    assert not np.allclose(plain.train_losses[1:], copied.train_losses[1:])
    assert np.isfinite(copied.train_losses).all()


def test_the_curriculum_pilot_script_writes_one_row_per_fraction(tmp_path):
    pytest.importorskip("jax")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "experiments" / "pilots" / "train_curriculum.py"
    spec = importlib.util.spec_from_file_location("train_curriculum_pilot", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = module.main(quick=True, out_dir=tmp_path)
    assert list(rows["copy_fraction"]) == [0.0, 0.5]
    assert (tmp_path / "train_curriculum_pilot.csv").is_file()
    # the copy test scored 32 sequences of 2 × 8 tokens for each run
    assert set(rows["copy_half"]) == {8} and rows["copy_random_drop"].notna().all()
