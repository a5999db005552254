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
    depth_table,
    evaluate_needles,
    fine_tune,
    needle_rows,
    prompt_seed,
    retention_table,
    seed_summary,
    tune_and_evaluate,
)
from sia_theory.training.needle_task import DIGITS, QUESTION, WORDS, needle_task  # noqa: E402
from sia_theory.training.params import init_parameters  # noqa: E402

TRAIN = TrainNeedleSettings.quick().train  # the quick model at 256 tokens
TINY = NeedleTuneSettings(steps=6, batch_size=2, eval_examples=2, eval_multiples=(1,))


def fresh_run(settings=TRAIN, scheme="si-p-rope", seed=0):
    """An untrained run (its zero output layer predicts the uniform distribution)."""
    return TrainedRun(scheme=scheme, tau=None, seed=seed, settings=settings,
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
    (lambda: NeedleTuneSettings(prompts="mine"), "prompts"),
    (lambda: NeedleTuneSettings(steps=10, checkpoints=3), "checkpoints"),
    (lambda: NeedleTuneSettings(steps=10, checkpoints=0), "checkpoints"),
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
    for name in result.frames:  # the curves file is read back from the store too
        pd.testing.assert_frame_equal(result[name], again[name], check_dtype=False)


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
        '{"batch_size": 16, "checkpoints": 3, "cooldown": 0.3, "eval_examples": 32, '
        '"eval_multiples": [1, 4, 16], "eval_tokens": 8192, "form": "query", "prompts": '
        '"per-seed", "steps": 180}')


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


def test_depth_and_distance_are_the_needles_token_positions(task):
    """Found independently in the token ids of a constructed prompt: each needle sentence's
    first token over the question's index (depth), and the answer's digits minus the needle's
    digits (distance); the rows of a perfect and of an empty scoring say so too."""
    tok = task.tokenizer
    length = 4 * TRAIN.train_length
    e = task.example(rng_for(11, "test"), length, "evaluate")
    w = e.window

    def find(ids, after=0):
        return next(i for i in range(after, w.size - ids.size + 1)
                    if np.array_equal(w[i:i + ids.size], ids))

    question = find(tok.encode(QUESTION))
    depths, distances = [], []
    for word, key in zip(e.words, e.keys, strict=True):
        head = np.concatenate([tok.encode(" The special magic"), tok.encode(" " + word),
                               tok.encode(" number is")])
        digits = tok.encode(" " + key)
        start = find(np.concatenate([head, digits, tok.encode(".")]))
        answer = find(np.concatenate([head, digits]), after=question) + head.size
        depths.append(start / question)
        distances.append(answer - (start + head.size))
    assert e.question == question and 0 < min(depths) and max(depths) < 1
    assert e.depths() == pytest.approx(depths) and list(e.distances()) == distances
    perfect = np.append(w[1:], 0)  # the argmax is every next token
    rows = needle_rows(e, perfect, np.zeros(w.size - 1))
    assert [r["depth"] for r in rows] == pytest.approx(depths)
    assert [r["distance"] for r in rows] == distances and all(r["correct"] for r in rows)
    assert [r["position"] for r in rows] == list(e.starts)
    assert not any(r["correct"] for r in needle_rows(e, np.full(w.size - 1, -1),
                                                     np.zeros(w.size - 1)))


def test_evaluation_prompts_are_drawn_per_seed_and_repeat_for_the_same_seed():
    """Per-seed prompts: two seeds' runs are scored on other prompts (other numbers, depths,
    haystacks), the same seed's on the same ones, and every checkpoint on the same ones;
    shared prompts (the protocol before) follow the study seed whatever the run's."""
    settings = dataclasses.replace(TINY, steps=4, checkpoints=2)
    runs = [fresh_run(seed=k) for k in (0, 1, 1)]
    assert [prompt_seed(r, settings, seed=7) for r in runs] == [0, 1, 1]
    shared = dataclasses.replace(settings, prompts="shared")
    assert [prompt_seed(r, shared, seed=7) for r in runs] == [7, 7, 7]
    frames = [tune_and_evaluate(r, settings, seed=7)[0] for r in runs]
    cols = ["step", "example", "needle", "key", "position", "depth", "distance"]
    assert sorted(frames[0]["step"].unique()) == [2, 4]
    pd.testing.assert_frame_equal(frames[1][cols], frames[2][cols])
    assert list(frames[0]["key"]) != list(frames[1]["key"])
    assert list(frames[0]["position"]) != list(frames[1]["position"])
    for f in frames:  # the same prompts at every checkpoint
        by_step = [g[["key", "position"]].to_numpy() for _, g in f.groupby("step")]
        assert np.array_equal(by_step[0], by_step[1])
    # the prompts of seed 1 are those of the task's stream for seed 1
    expected = needle_task(TRAIN).evaluation(1, TRAIN.train_length, TINY.eval_examples)
    assert list(frames[1].query("step == 4")["key"]) == [k for e in expected for k in e.keys]


def test_accuracy_by_depth_and_retention_on_a_hand_made_frame():
    """Five depth bins of width 0.2: needles at depths 0.05, 0.15 (bin 0), 0.5 (bin 2), 0.99
    and 1.0 (bin 4, the last closed); per seed and length; empty bins listed with NaN."""
    needles = pd.DataFrame({
        "scheme": ["a"] * 7, "seed": [0, 0, 0, 0, 0, 1, 1], "step": [5] * 7,
        "length": [8] * 5 + [8, 8], "depth": [0.05, 0.15, 0.5, 0.99, 1.0, 0.3, 0.31],
        "distance": [10, 20, 30, 40, 50, 60, 70],
        "correct": [True, False, True, True, True, False, True]})
    table = depth_table(needles)
    seed0 = table[table["seed"] == 0].set_index("depth_bin")
    assert list(seed0["needles"]) == [2, 0, 1, 0, 2]
    assert seed0["accuracy"].tolist()[0] == 0.5 and np.isnan(seed0.loc[1, "accuracy"])
    assert seed0.loc[4, "accuracy"] == 1.0 and seed0.loc[4, "mean_distance"] == 45
    assert seed0.loc[2, "depth_low"] == pytest.approx(0.4)
    seed1 = table[table["seed"] == 1].set_index("depth_bin")
    assert seed1.loc[1, "needles"] == 2 and seed1.loc[1, "accuracy"] == 0.5
    # over seeds: bin 1 has one finite value (seed 1), bin 0 one (seed 0)
    summary = seed_summary(table, ["scheme", "length", "depth_bin"], "accuracy")
    assert summary.set_index("depth_bin").loc[1, "seeds"] == 1
    cells = pd.DataFrame({"scheme": ["a"] * 4, "seed": [0, 0, 1, 1], "length": [8, 32] * 2,
                          "accuracy": [0.8, 0.4, 0.9, 0.9]})
    kept = retention_table(cells)
    assert kept["retention"].tolist() == pytest.approx([1.0, 0.5, 1.0, 1.0])
    assert kept["multiple"].tolist() == [1, 4, 1, 4]
    s = seed_summary(kept[kept["multiple"] == 4], ["scheme"], "retention").iloc[0]
    half = stats.t.ppf(0.975, 1) * np.std([0.5, 1.0], ddof=1) / np.sqrt(2)
    assert (s.retention, s.ci_low, s.ci_high) == pytest.approx((0.75, 0.75 - half,
                                                                 0.75 + half))
    nothing = retention_table(cells.assign(accuracy=[0.0, 0.0, 0.5, 0.5]))
    assert nothing["retention"].isna().tolist() == [True, True, False, False]


def test_the_quick_study_records_depths_checkpoints_and_curves():
    """The quick study end to end (2 schemes, 1 seed, scored after 4, 8 and 12 steps)."""
    settings = TrainNeedleSettings.quick()
    result = train_needle(settings, seed=0, execution=Execution(scheduler="sync"))
    needles = result["needles"]
    assert {"position", "depth", "distance", "step", "text_loss"} <= set(needles.columns)
    assert sorted(needles["step"].unique()) == [4, 8, 12]
    assert needles["depth"].between(0, 1).all() and (needles["distance"] > 0).all()
    longer = needles[needles["multiple"] == 4]["distance"].mean()
    assert longer > needles[needles["multiple"] == 1]["distance"].mean()
    assert {"checkpoints", "retention", "depth", "depth_summary", "curves"} <= set(
        result.frames)
    curves = result["curves"]
    answer = curves[curves["split"] == "answer"]
    text = curves[curves["split"] == "text"]
    assert len(answer) == 2 * settings.needle.steps
    assert sorted(text["step"].unique()) == [0, 4, 8, 12]
    assert set(result["checkpoints"]["step"]) == {4, 8, 12}
    assert set(result["depth"]["depth_bin"]) == set(range(5))
    assert {"seed_ci_low", "retention", "retention_ci_low"} <= set(result["table"].columns)
