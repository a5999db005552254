"""``sia-theory analyze --model``: a tiny checkpoint's report written and its verdict printed;
bad input (flags that do not go together, a path that is not a checkpoint, a text file that
cannot be read, a model without a tokenizer, too little text) is one line on stderr, exit status
2, nothing written."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.cli.test_command import assert_usage_error, sia

pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")

from tests.analysis.tiny_models import write_checkpoint  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_checkpoint(tmp_path_factory.mktemp("tiny") / "tiny-llama",
                            q_scale={(1, 0): 40.0})


def test_model_report_is_written_and_its_verdict_printed(tiny, tmp_path):
    out = tmp_path / "out"
    proc = sia("analyze", "--model", str(tiny), "--n-ctx", "256", "--quick", "--out", str(out),
               "--no-progress")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("full_attention layers (0–2; 12 heads) at N = 256 tokens: REM "
                               "phase 11 liquid, 1 frozen")
    assert lines[1].startswith("note: read 256 tokens of the first prose document")
    assert lines[-1].startswith(f"written: {out / 'model_report_tiny-llama.md'} (+ ")
    heads = pd.read_csv(out / "model_report_tiny-llama_heads.csv")
    assert len(heads) == 12
    assert heads.set_index(["layer", "head"]).loc[(1, 0), "rem_phase"] == "frozen"
    assert {"model_report_tiny-llama.png", "model_report_tiny-llama.md"} <= {
        p.name for p in out.iterdir()}


def test_text_file_is_read_and_a_short_one_said(tiny, tmp_path):
    (tmp_path / "notes.txt").write_text("The grass is green. " * 10)  # 200 byte tokens
    out = tmp_path / "out"
    proc = sia("analyze", "--model", str(tiny), "--text", str(tmp_path / "notes.txt"),
               "--n-ctx", "256", "--quick", "--out", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "at N = 200 tokens" in proc.stdout
    assert "note: the text has 200 tokens, fewer than the 256 asked for" in proc.stdout


@pytest.mark.parametrize("argv", [
    ["zoo:logn", "--model", "{tiny}"],
    ["--hf-config", "{tiny}/config.json", "--model", "{tiny}"],
    ["zoo:logn", "--text", "{text}"],
    ["--model", "{tiny}", "--head", "0"],
    ["--model", "/no/such/checkpoint"],
    ["--model", "{bare}"],  # a folder without tokenizer.json: no text can be read
    ["--model", "{tiny}", "--text", "/no/such/file.txt"],
    ["--model", "{tiny}", "--text", "{binary}"],
    ["--model", "{tiny}", "--text", "{empty}"],
    ["--model", "{tiny}", "--text", "{tiny}"],  # a folder
    ["--model", "{tiny}", "--text", "{text}"],  # 50 tokens: fewer than a report needs
    ["--model", "{tiny}", "--n-ctx", "100"],
])
def test_bad_model_input_is_one_line_exit_2_nothing_written(argv, tiny, tmp_path):
    files = {"tiny": tiny, "bare": write_checkpoint(tmp_path / "bare", tokenizer=False),
             "text": tmp_path / "short.txt", "binary": tmp_path / "binary.txt",
             "empty": tmp_path / "empty.txt"}
    files["text"].write_text("x" * 50)
    files["binary"].write_bytes(b"\xff\xfe\x00text")
    files["empty"].write_text("  \n")
    out = tmp_path / "out"
    proc = sia("analyze", *[a.format(**files) for a in argv], "--quick", "--out", str(out))
    assert_usage_error(proc, out)
