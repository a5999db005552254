"""sia_theory.training.shards, exercised by its own name: a small corpus in each input format
(a folder of .txt files, .jsonl with its own text field, Parquet with several row groups)
built into shards with a small BPE, every count checked against an independent encoding, the
windows against the independently concatenated stream, rebuilds byte-identical, damaged
folders refused or rebuilt, bad input refused by name; a quick training run and the command
line on a shard folder."""

import hashlib
import json
import random

import numpy as np
import pytest

from sia_theory.training.data import VALIDATION_MIN_CHARS, VALIDATION_POOL, corpus
from sia_theory.training.settings import TrainSettings
from sia_theory.training.shards import (
    MANIFEST,
    TOKENIZER_FILE,
    ShardStream,
    build_from_documents,
    build_shards,
    manifest_checksum,
    read_manifest,
    shard_data,
    text_documents,
    verify_shards,
)

WORDS = ("the of and to in is was for on that with as by at from it an be this are have "
         "which one had not but what all were when we there can said each").split()
VOCAB = 300


def _documents(n=24, seed=0):
    """``n`` documents of random words; every fourth long enough to be held out."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        chars = VALIDATION_MIN_CHARS + 500 if i % 4 == 0 else rng.randint(300, 4000)
        words = []
        while sum(len(w) + 1 for w in words) < chars:
            words.append(rng.choice(WORDS))
        docs.append(f"Document {i}.\n" + " ".join(words))
    return docs


def _write(fmt, folder, docs):
    """Write ``docs`` in format ``fmt`` under ``folder``; returns ``(source, text_field,
    names)`` with the names the builder gives."""
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "txt":
        names = []
        for i, doc in enumerate(docs):
            (folder / f"doc{i:03d}.txt").write_text(doc)
            names.append(f"text:doc{i:03d}.txt")
        (folder / "notes.csv").write_text("ignored,file\n")
        return folder, "text", names
    if fmt == "jsonl":
        path = folder / "docs.jsonl"
        path.write_text("".join(json.dumps({"id": i, "body": d}) + "\n"
                                for i, d in enumerate(docs)))
        return path, "body", [f"text:docs.jsonl:{i + 1}" for i in range(len(docs))]
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / "docs.parquet"
    pq.write_table(pa.table({"id": list(range(len(docs))), "text": docs}), path,
                   row_group_size=5)
    assert pq.ParquetFile(path).num_row_groups == -(-len(docs) // 5) > 1
    return path, "text", [f"text:docs.parquet:{i}" for i in range(len(docs))]


def _files(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A txt-folder corpus built with small shards (so windows cross shard boundaries)."""
    root = tmp_path_factory.mktemp("shards")
    docs = _documents()
    source, field, names = _write("txt", root / "text", docs)
    out = root / "out"
    manifest = build_from_documents(lambda: text_documents(source, field), out,
                                    vocab_size=VOCAB, recipe={"test": 1}, shard_tokens=4096)
    return docs, names, out, manifest


@pytest.mark.parametrize("fmt", ["txt", "jsonl", "parquet"])
def test_each_format_builds_the_counts_of_an_independent_encoding(fmt, tmp_path):
    from tokenizers import Tokenizer

    docs = _documents(16, seed=1)
    source, field, names = _write(fmt, tmp_path / "in", docs)
    manifest = build_shards(source, tmp_path / "out", vocab_size=VOCAB, text_field=field)
    tok = Tokenizer.from_file(str(tmp_path / "out" / TOKENIZER_FILE))
    assert tok.get_vocab_size() == VOCAB and tok.token_to_id("<|endoftext|>") == 0
    lengths = [len(tok.encode(d).ids) for d in docs]
    # held out: the first VALIDATION_POOL long documents in the order of the names' SHA-256
    order = sorted(range(len(docs)), key=lambda i: hashlib.sha256(names[i].encode()).digest())
    pool = [i for i in order if len(docs[i]) >= VALIDATION_MIN_CHARS][:VALIDATION_POOL]
    train = [i for i in range(len(docs)) if i not in pool]
    assert [d["name"] for d in manifest["validation"]["documents"]] == [names[i] for i in pool]
    assert manifest["tokens"]["train"] == sum(lengths[i] + 1 for i in train)
    assert manifest["tokens"]["validation"] == sum(lengths[i] for i in pool)
    assert manifest["documents"] == {"total": 16, "train": 16 - len(pool),
                                     "validation": len(pool)}
    assert manifest["tokens"]["by_kind"] == {"text": {
        "documents": 16, "train": manifest["tokens"]["train"],
        "validation": manifest["tokens"]["validation"]}}
    stream = np.fromfile(tmp_path / "out" / "train-00000.bin", np.uint16)
    expected = np.concatenate([np.append(tok.encode(docs[i]).ids, 0) for i in train])
    assert np.array_equal(stream, expected)
    assert manifest["dtype"] == "uint16" and manifest["tokenizer"]["vocab_size"] == VOCAB
    assert [s["path"] for s in manifest["recipe"]["sources"]] == (
        [f"doc{i:03d}.txt" for i in range(16)] if fmt == "txt" else [source.name])
    entry = manifest["recipe"]["sources"][0]
    first = source if fmt != "txt" else source / "doc000.txt"
    assert entry["sha256"] == hashlib.sha256(first.read_bytes()).hexdigest()
    assert entry["bytes"] == first.stat().st_size


def test_windows_read_from_the_memory_maps_equal_the_concatenated_stream(built):
    docs, names, out, manifest = built
    assert len(manifest["train_shards"]) > 2  # windows cross shard boundaries
    assert all(s["tokens"] == 4096 for s in manifest["train_shards"][:-1])
    whole = np.concatenate([np.fromfile(out / s["file"], np.uint16)
                            for s in manifest["train_shards"]]).astype(np.int32)
    stream = ShardStream(out, manifest)
    assert stream.size == whole.size == manifest["tokens"]["train"]
    idx = np.array([[0, 1, 2], [4094, 4095, 4096], [whole.size - 3, whole.size - 2,
                                                     whole.size - 1]])
    assert np.array_equal(stream[idx], whole[idx]) and stream[idx].dtype == np.int32
    assert np.array_equal(stream[4090:4100], whole[4090:4100])
    settings = TrainSettings.quick().with_corpus(out)
    data = corpus(settings)
    assert data.stream.size == whole.size
    for step in (0, 3):
        starts = data.order[step * 4 + np.arange(4)] * settings.train_length
        assert np.array_equal(data.batch(step, 4),
                              whole[starts[:, None] + np.arange(settings.train_length + 1)])
    assert data.order.size == (whole.size - 1) // settings.train_length
    _, _, pool_names, pool_ids = shard_data(out, settings.corpus_checksum)
    assert data.validation.shape == (2, settings.max_length + 1)
    assert np.array_equal(data.validation[0], pool_ids[0][:settings.max_length + 1])
    assert data.validation_names == pool_names[:2]


def test_split_is_by_document_and_deterministic(built, tmp_path):
    docs, names, out, manifest = built
    held = {d["name"] for d in manifest["validation"]["documents"]}
    assert held and all(len(docs[names.index(n)]) >= VALIDATION_MIN_CHARS for n in held)
    # the same documents in another input order: the same held-out documents, in that order
    reordered = build_from_documents(lambda: iter(list(zip(names, docs))[::-1]),
                                     tmp_path / "again", vocab_size=VOCAB,
                                     recipe={"test": 2}, shard_tokens=4096)
    assert reordered["validation"]["documents"] == manifest["validation"]["documents"]


def test_rebuild_is_byte_identical_and_reuses_a_finished_folder(tmp_path):
    docs = _documents(12, seed=2)
    source, field, _ = _write("jsonl", tmp_path / "in", docs)
    first = build_shards(source, tmp_path / "a", vocab_size=VOCAB, text_field=field)
    second = build_shards(source, tmp_path / "b", vocab_size=VOCAB, text_field=field)
    assert first == second and _files(tmp_path / "a") == _files(tmp_path / "b")
    stamp = (tmp_path / "a" / MANIFEST).stat().st_mtime_ns
    assert build_shards(source, tmp_path / "a", vocab_size=VOCAB, text_field=field) == first
    assert (tmp_path / "a" / MANIFEST).stat().st_mtime_ns == stamp  # reused, not rewritten
    # other sources: rebuilt in place
    source.write_text(source.read_text() + json.dumps({"body": "one more document"}) + "\n")
    third = build_shards(source, tmp_path / "a", vocab_size=VOCAB, text_field=field)
    assert third["documents"]["total"] == 13 and verify_shards(tmp_path / "a") == third
    assert manifest_checksum(third) != manifest_checksum(first)


def test_a_damaged_folder_is_refused_then_rebuilt(tmp_path):
    docs = _documents(12, seed=3)
    source, field, _ = _write("txt", tmp_path / "in", docs)
    out = tmp_path / "out"
    good = build_shards(source, out, vocab_size=VOCAB)
    files = _files(out)
    shard = out / "train-00000.bin"
    shard.write_bytes(shard.read_bytes()[:-6])  # half written
    with pytest.raises(ValueError, match="corpus: .*train-00000.bin holds"):
        read_manifest(out)
    with pytest.raises(ValueError, match="corpus"):
        TrainSettings.quick().with_corpus(out)
    assert build_shards(source, out, vocab_size=VOCAB) == good and _files(out) == files
    data = bytearray(shard.read_bytes())
    data[0] ^= 1  # same size, other bytes
    shard.write_bytes(bytes(data))
    read_manifest(out)  # sizes match: only the checksums tell
    with pytest.raises(ValueError, match="checksum"):
        verify_shards(out)
    assert build_shards(source, out, vocab_size=VOCAB) == good and _files(out) == files
    (out / MANIFEST).unlink()  # a build that stopped before its manifest
    with pytest.raises(ValueError, match="corpus: .*no manifest.json"):
        read_manifest(out)
    assert build_shards(source, out, vocab_size=VOCAB) == good and _files(out) == files


def test_bad_input_is_refused_by_name_with_nothing_written(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "out"
    with pytest.raises(ValueError, match="^source"):
        build_shards(tmp_path / "missing", out)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="^source.*holds no"):
        build_shards(tmp_path / "empty", out)
    (tmp_path / "blank").mkdir()
    (tmp_path / "blank" / "a.txt").write_text("  \n")
    with pytest.raises(ValueError, match="^source holds no document"):
        build_shards(tmp_path / "blank", out)
    pq.write_table(pa.table({"body": ["some text"]}), tmp_path / "p.parquet")
    with pytest.raises(ValueError, match="^text_field.*no column 'text'"):
        build_shards(tmp_path / "p.parquet", out)
    pq.write_table(pa.table({"text": [1, 2]}), tmp_path / "n.parquet")
    with pytest.raises(ValueError, match="^text_field.*not strings"):
        build_shards(tmp_path / "n.parquet", out)
    (tmp_path / "d.jsonl").write_text('{"text": "a"}\n{"body": "b"}\n')
    with pytest.raises(ValueError, match="^text_field: d.jsonl:2 has no field 'text'"):
        build_shards(tmp_path / "d.jsonl", out)
    with pytest.raises(ValueError, match="^text_field"):
        build_shards(tmp_path / "d.jsonl", out, text_field="")
    with pytest.raises(ValueError, match="^vocab_size"):
        build_shards(tmp_path / "d.jsonl", out, vocab_size=100)
    assert not out.exists()


def test_settings_check_the_corpus_and_pin_it_in_their_key(built, tmp_path):
    _, _, out, manifest = built
    quick = TrainSettings.quick()
    with pytest.raises(ValueError, match="^corpus"):
        TrainSettings(corpus=str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="^vocab_size must be 300"):
        TrainSettings(corpus=str(out), vocab_size=512)
    with pytest.raises(ValueError, match="^max_train_documents"):
        TrainSettings(corpus=str(out), vocab_size=VOCAB, max_train_documents=3)
    with pytest.raises(ValueError, match="^tokenizer"):
        TrainSettings(corpus=str(out), vocab_size=VOCAB, tokenizer="bytes")
    s = quick.with_corpus(out)
    key = s.to_dict()
    assert key["corpus"] == str(out) and key["corpus_checksum"] == manifest_checksum(manifest)
    assert TrainSettings.from_dict(key) == s
    assert "corpus" not in quick.to_dict() and "corpus_checksum" not in quick.to_dict()
    with pytest.raises(ValueError, match="^corpus: the folder"):
        TrainSettings.from_dict({**key, "corpus_checksum": "0" * 64})


def test_quick_training_run_on_a_shard_folder(built):
    pytest.importorskip("jax")
    from sia_theory.training.trainer import train

    _, _, out, _ = built
    run = train("p-rope", TrainSettings.quick().with_corpus(out), seed=0)
    assert run.train_losses.shape == (8,) and np.isfinite(run.train_losses).all()
    assert set(run.validation) == {32, 128, 512}
    assert {kind for _, _, kind, _ in run.checkpoints} == {"all", "text"}
    assert run.tokenizer().vocab_size == VOCAB
