"""The needle task of SI Table 2 in miniature: prompts built as documented from held-out text
only, an answer mask over exactly the answer, the same numbers from the same seed, one clear
error for bad input, Wilson intervals as scipy computes them, a fine-tune that lowers the
answer loss, and the study's store read back unchanged."""

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

pytest.importorskip("jax")
pytest.importorskip("optax")

import sia_theory  # noqa: E402
from sia_theory._infra.seeding import rng_for  # noqa: E402
from sia_theory.studies import Execution, ext_needle  # noqa: E402
from sia_theory.studies.train_needle import TABLE2, TrainNeedleSettings, train_needle  # noqa: E402
from sia_theory.training import TrainedRun, TrainSettings, needle  # noqa: E402
from sia_theory.training import needle_task as task_module  # noqa: E402
from sia_theory.training.data import split, tokenized  # noqa: E402
from sia_theory.training.needle import (  # noqa: E402
    NeedleTuneSettings,
    accuracy_table,
    evaluate_needles,
    fine_tune,
)
from sia_theory.training.needle_task import DIGITS, QUESTION, WORDS, needle_task  # noqa: E402
from sia_theory.training.params import init_parameters  # noqa: E402

TRAIN = TrainNeedleSettings.quick().train  # the quick model at 256 tokens
TINY = NeedleTuneSettings(steps=6, batch_size=2, eval_examples=2, eval_multiples=(1,))


def fresh_run(settings=TRAIN, scheme="si-p-rope"):
    """An untrained run (its zero output layer predicts the uniform distribution)."""
    return TrainedRun(scheme=scheme, tau=None, seed=0, settings=settings,
                      parameters=init_parameters(settings, 0), train_losses=np.zeros(1),
                      validation_curve=(), validation={})


@pytest.fixture(scope="module")
def task():
    return needle_task(TRAIN)


@pytest.mark.parametrize("form", ["query", "list"])
def test_prompt_holds_three_needles_in_place_and_the_answer_under_the_mask(task, form):
    tok = task.tokenizer
    length = TRAIN.train_length
    e = task.example(rng_for(3, "test"), length, "evaluate", form)
    assert e.window.shape == (length + 1,) and e.mask.shape == (length,)
    assert len(set(e.words)) == 3 and set(e.words) <= set(WORDS)
    assert all(len(k) == DIGITS and k[0] != "0" for k in e.keys)
    assert list(e.starts) == sorted(e.starts)
    for start, word, key in zip(e.starts, e.words, e.keys, strict=True):
        needle = np.concatenate([tok.encode(" The special magic"), tok.encode(" " + word),
                                 tok.encode(" number is"), tok.encode(" " + key),
                                 tok.encode(".")])
        assert np.array_equal(e.window[start:start + needle.size], needle)
    question = tok.encode(QUESTION)
    q = int(np.flatnonzero([np.array_equal(e.window[i:i + question.size], question)
                            for i in range(length + 2 - question.size)])[-1])
    answer = tok.decode(e.window[q + question.size:])
    dot = tok.encode(".").size
    scored = set()
    for (a, d, b), word, key in zip(e.segments, e.words, e.keys, strict=True):
        assert tok.decode(e.window[d:b]) == f" {key}"
        if form == "list":
            assert tok.decode(e.window[a:d]) == f" {word}:"
        else:  # the word is given: " The special magic <word> number is" before the digits
            assert tok.decode(e.window[:d]).endswith(f" The special magic {word} number is")
        scored |= set(range(a, b + dot))  # the needle's answer and the ';' or '.' after it
    # the mask marks exactly the positions that predict the answer's scored tokens
    assert sorted(np.flatnonzero(e.mask) + 1) == sorted(scored)
    if form == "list":
        expected = "".join(f" {w}: {k};" for w, k in zip(e.words, e.keys, strict=True))
        assert answer == expected[:-1] + "."
    else:
        assert sorted(answer.split(".")[:-1]) == sorted(
            f" The special magic {w} number is {k}" for w, k in zip(e.words, e.keys,
                                                                  strict=True))


def test_haystack_is_held_out_text_only(task):
    length = TRAIN.train_length
    _, _, names, pool = tokenized(TRAIN.tokenizer, TRAIN.vocab_size, TRAIN.max_train_documents)
    train_docs, pool_docs = split(TRAIN.max_train_documents)
    assert {n for n, _ in pool_docs} == set(names)
    assert not {n for n, _ in pool_docs} & {n for n, _ in train_docs}
    sep = np.int32(task.tokenizer.separator)
    for part, docs in (("evaluate", pool[0::2]), ("tune", pool[1::2])):
        expected = np.concatenate([np.append(d, sep) for d in docs])
        assert np.array_equal(task.haystacks[part], expected)
    # the prompt without its needles, question and answer is one slice of held-out text
    tok = task.tokenizer
    e = task.example(rng_for(5, "test"), length, "evaluate")
    keep = np.ones(length + 1, bool)
    question = tok.encode(QUESTION)
    q = [i for i in range(length + 2 - question.size)
         if np.array_equal(e.window[i:i + question.size], question)][-1]
    keep[q:] = False
    for start, word, key in zip(e.starts, e.words, e.keys, strict=True):
        size = sum(tok.encode(t).size for t in (" The special magic", " " + word, " number is",
                                                 " " + key, "."))
        keep[start:start + size] = False
    text, stack = e.window[keep], task.haystacks["evaluate"]
    found = [i for i in np.flatnonzero(stack[:stack.size - text.size + 1] == text[0])
             if np.array_equal(stack[i:i + text.size], text)]
    assert found, "the haystack is not a slice of the held-out text"


def test_same_seed_same_numbers_other_seed_other_prompts():
    run = fresh_run()
    first = fine_tune(run, TINY)
    again = fine_tune(run, TINY)
    assert np.array_equal(first.train_losses, again.train_losses)
    a = evaluate_needles(first, TINY, seed=0)
    b = evaluate_needles(again, TINY, seed=0)
    pd.testing.assert_frame_equal(a, b)
    other = evaluate_needles(first, TINY, seed=1)
    assert list(other["key"]) != list(a["key"])


def test_fine_tuning_lowers_the_answer_loss():
    run = fresh_run()
    settings = dataclasses.replace(TINY, steps=12, batch_size=4, eval_examples=4)
    tuned = fine_tune(run, settings)
    losses = tuned.train_losses
    assert losses[0] == pytest.approx(np.log(TRAIN.vocab_size), rel=1e-3)  # untrained: uniform
    assert losses[-3:].mean() < 0.7 * losses[0]
    before = evaluate_needles(run, settings)["log_likelihood"].mean()
    after = evaluate_needles(tuned, settings)["log_likelihood"].mean()
    assert after > before + 5.0  # nats per needle answer, on held-out prompts


def test_accuracy_intervals_are_scipys_wilson_intervals():
    frame = pd.DataFrame({"length": [8] * 7 + [16] * 5,
                          "correct": [True] * 5 + [False] * 2 + [False] * 5,
                          "number_correct": [True] * 12, "digit_tokens": [4] * 12,
                          "digit_tokens_correct": [4] * 6 + [1] * 6})
    table = accuracy_table(frame)
    for row, (k, n) in zip(table.itertuples(), [(5, 7), (0, 5)], strict=True):
        ci = stats.binomtest(k, n).proportion_ci(method="wilson")
        assert (row.correct, row.needles) == (k, n)
        assert row.ci_low == pytest.approx(ci.low) and row.ci_high == pytest.approx(ci.high)
    assert table["digit_token_accuracy"].tolist() == pytest.approx([(6 * 4 + 1) / 28, 5 / 20])


@pytest.mark.parametrize("make, name", [
    (lambda: NeedleTuneSettings(steps=0), "steps"),
    (lambda: NeedleTuneSettings(batch_size=-1), "batch_size"),
    (lambda: NeedleTuneSettings(eval_multiples=()), "eval_multiples"),
    (lambda: NeedleTuneSettings(eval_examples=0), "eval_examples"),
    (lambda: NeedleTuneSettings(cooldown=2.0), "cooldown"),
    (lambda: NeedleTuneSettings(form="essay"), "form"),
    (lambda: TrainNeedleSettings(schemes=("bogus",)), "schemes"),
    (lambda: TrainNeedleSettings(seeds=(-1,)), "seeds"),
    (lambda: TrainNeedleSettings(needle="x"), "needle"),
    (lambda: fine_tune("run", TINY), "run"),
    (lambda: fine_tune(fresh_run(), "fast"), "settings"),
    (lambda: fine_tune(fresh_run(), TINY, seed=-2), "seed"),
    (lambda: fine_tune(fresh_run(TrainSettings.quick()), TINY), "train_length"),
    (lambda: evaluate_needles(fresh_run(), dataclasses.replace(TINY, eval_multiples=(1024,))),
     "eval_multiples"),
])
def test_bad_input_is_one_value_error_naming_the_parameter(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_study_reads_the_grids_runs_stores_its_cells_and_reads_them_back(tmp_path,
                                                                         monkeypatch):
    from sia_theory.studies import train_grid as grid_module

    settings = dataclasses.replace(TrainNeedleSettings.quick(), needle=TINY,
                                   schemes=("p-rope",))
    grid = grid_module.TrainGridSettings(train=TRAIN, runs=(("p-rope", 0, None),
                                                            ("nope", 0, None)))
    grid_module.train_grid(grid, seed=0,
                           execution=Execution(store=tmp_path / "train_grid-seed0"))

    def no_training(*args, **kwargs):
        raise AssertionError("the needle study trained a run the grid's store holds")

    monkeypatch.setattr(grid_module, "train_cell", no_training)
    store = tmp_path / "train_needle-seed0"
    result = train_needle(settings, seed=0, execution=Execution(store=store))
    assert result.metadata["grid_store"] == str(tmp_path / "train_grid-seed0")
    assert json.loads((tmp_path / "train_grid-seed0" / "sweep.json").read_text())["study"] \
        == "training.grid"
    cells, table = result["cells"], result["table"]
    assert list(cells["length"]) == [TRAIN.train_length]
    assert int(cells["needles"].iloc[0]) == 3 * TINY.eval_examples
    assert table["paper_accuracy"].iloc[0] == pytest.approx(0.966)
    again = train_needle(settings, seed=0, execution=Execution(store=store,
                                                               finished_only=True))
    pd.testing.assert_frame_equal(result["needles"], again["needles"])


def test_the_settings_renamed_keep_the_old_name_one_release_and_the_stores_keys():
    with pytest.warns(DeprecationWarning, match="NeedleTuneSettings"):
        old = needle.NeedleSettings
    assert old is NeedleTuneSettings
    assert sia_theory.NeedleSettings is ext_needle.NeedleSettings is not NeedleTuneSettings
    for name in task_module.__all__:  # the task's names, importable from needle as before
        assert getattr(needle, name) is getattr(task_module, name)
    with pytest.warns(DeprecationWarning, match="sia_theory.studies.train_needle.TABLE2"):
        assert needle.TABLE2 is TABLE2
    assert TABLE2["si-p-rope"] == (0.965, 0.969, 0.969)  # SI Table 2, si-p-rope row
    # the cell key's text as the stores hold it (written out; no class name in it)
    assert json.dumps(NeedleTuneSettings.full().to_dict(), sort_keys=True) == (
        '{"batch_size": 16, "cooldown": 0.3, "eval_examples": 32, "eval_multiples": [1, 4, '
        '16], "eval_tokens": 8192, "form": "query", "steps": 180}')


@pytest.mark.parametrize("kind", ["file", "under-a-file", "other-settings"])
def test_a_bad_grid_store_is_refused_before_any_cell_runs(kind, tmp_path):
    """The needle study checks the grid store it reads its pretrained runs from before any
    cell runs (a regular file, a folder under a file, a store of other training settings):
    one ValueError naming grid_store, and the needle study's own store is never written."""
    import dataclasses
    import json

    from sia_theory.studies import Execution
    from sia_theory.studies.train_needle import TrainNeedleSettings, train_needle

    settings = TrainNeedleSettings.quick()
    blocker = tmp_path / "blocker"
    blocker.write_text("not a store")
    grid = {"file": blocker, "under-a-file": blocker / "grid",
            "other-settings": tmp_path / "grid"}[kind]
    if kind == "other-settings":
        grid.mkdir()
        other = dataclasses.replace(settings.train, steps=settings.train.steps + 1)
        (grid / "training.json").write_text(json.dumps({"train": other.to_dict(),
                                                        "format": 2}))
    own = tmp_path / "needles"
    with pytest.raises(ValueError, match="grid_store"):
        train_needle(dataclasses.replace(settings, grid_store=str(grid)), seed=0,
                     execution=Execution(store=own))
    assert not own.exists()
