"""Settings of one training run (SI App. G in miniature): model shape, data, optimiser.

:class:`TrainSettings` is frozen and checked in ``__post_init__`` (``ValueError`` naming the
field and its range, before any work). ``full()`` is the run the experiments use, sized from a
measured probe of steps per second on this project's 2-core machine (see the README's training
note); ``quick()`` trains in a few seconds for the tests.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .._infra.settings import StudySettings
from .._infra.validate import check_int, check_real
from .curriculum import SPAN_FRACTION

__all__ = ["TrainSettings", "TOKENIZERS", "OPTIMIZERS", "check_multiples"]

TOKENIZERS = ("bpe", "bytes")
"""Accepted ``tokenizer`` values: byte-level BPE or raw bytes."""
OPTIMIZERS = ("muon", "adam")
"""Accepted ``optimizer`` values for the block matrices (embeddings and output layer: Adam)."""
MAX_LENGTH = 2**17  # longest validation context (16 × 8192)


def check_multiples(name: str, value) -> tuple:
    """Context multiples (of a training length) as a sorted tuple of distinct integers.

    Parameters
    ----------
    name : str
        The field's name in the error message.
    value : int or sequence of int
        Each from 1 to 1024 (integral floats accepted).

    Returns
    -------
    tuple of int

    Raises
    ------
    ValueError
        Naming ``name`` for a string, a dict, an empty sequence or an entry out of range.

    Examples
    --------
    >>> check_multiples("eval_multiples", [16, 1, 4, 4])
    (1, 4, 16)
    """
    values = (value,) if isinstance(value, int | float) else value
    if isinstance(values, str | dict) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name} must be an integer or a sequence of integers from 1 to 1024, "
                         f"got {value!r}")
    out = tuple(sorted({check_int(name, k, lo=1, hi=1024) for k in values}))
    if not out:
        raise ValueError(f"{name} must hold at least one integer from 1 to 1024, got {value!r}")
    return out


@dataclass(frozen=True)
class TrainSettings(StudySettings):
    """One training run.

    Model (modded-nanogpt, SI App. G): pre-RMSNorm blocks with QK-norm, scores ``q·k/√D``, a
    ReLU² MLP of width ``4·d_model``, RMSNorm on the embeddings and before the untied output
    layer, no learned gains. Optimiser (SI App. G): Muon (momentum 0.95, Nesterov) on the block
    matrices, Adam (β = 0.9, 0.95) on the embeddings and the output layer; the rate rises
    linearly over the first ``warmup`` steps, is constant, then falls linearly to 0 over the last
    ``cooldown`` fraction of ``steps``.

    Defaults (``full()``): SI's rates except the output layer's, 0.008 instead of 0.002 (the
    zero-initialised output layer is the bottleneck of a 240-step run: measured 4.01 against
    4.39 nats at 150 steps); 4 layers of width 128 with 2 heads of 64, 16 windows of 256 BPE
    tokens per step, 240 steps (0.98M tokens): the probe and the budget are in
    ``docs/training.md``.

    Parameters
    ----------
    train_length : int
        Tokens per training window, ``4 … 131072``.
    eval_multiples : tuple of int
        Distinct ``k >= 1`` including 1: validation at every ``train_length × k`` (at most
        131072), on the same tokens at every length.
    n_layers : int
        Blocks, ``1 … 64``.
    d_model : int
        Width, ``n_heads`` × a multiple of 4 (SI's p-RoPE rotates a quarter of a head).
    n_heads : int
        Attention heads, ``1 … 256``.
    tokenizer : str
        ``"bpe"`` (a byte-level BPE of ``vocab_size`` tokens trained on the training split) or
        ``"bytes"``.
    vocab_size : int
        BPE vocabulary, ``258 … 65536``.
    batch_size : int
        Windows per step (in a fixed order), ``1 … 4096``.
    steps : int
        Optimiser steps, ``>= 1``.
    optimizer : str
        ``"muon"``, or ``"adam"`` (Adam on the matrices too).
    learning_rate : float
        Muon's rate on the block matrices, in ``(0, 1]``.
    embedding_learning_rate : float
        Adam's rate on the embeddings, in ``(0, 10]``.
    head_learning_rate : float
        Adam's rate on the output layer, in ``(0, 1]``.
    cooldown : float
        Fraction of ``steps`` over which the rate falls to 0, in ``[0, 1]``.
    eval_every : int
        Steps between points of the validation curve, ``>= 1``.
    warmup : int
        Steps of linear warm-up, ``0 … steps − 1`` (default 0: none, as SI's pretraining).
    validation_documents : int
        Held-out documents, each cut to ``train_length × max(eval_multiples)`` tokens,
        ``1 … 10000``.
    max_train_documents : int or None
        Caps the training split (``None``: all of it).
    copy_fraction : float
        The copy curriculum (:mod:`.curriculum`): the fraction of each batch's windows that
        repeat a span of themselves, in ``[0, 1]`` (default 0: plain pretraining).
    copy_span : float
        The curriculum's span as a fraction of ``train_length``, in ``(0, 0.5]`` (default
        :data:`.curriculum.SPAN_FRACTION`, 0.125).
    corpus : str or None
        A shard folder of :mod:`.shards` to train on (its BPE, its split) instead of the
        built-in corpus (``None``), or ``"registry"``: the registry corpus
        (:mod:`.registry_corpus`, ``make corpus``), whose data the committed manifest pins, so
        that these settings need no folder until a run reads it
        (:func:`.registry_corpus.registry_folder`); needs ``tokenizer="bpe"``, ``vocab_size``
        equal to the folder's and ``max_train_documents=None`` (:meth:`with_corpus` sets them). Its
        manifest's checksum (:attr:`corpus_checksum`) is part of :meth:`to_dict`, the key of
        a store.

    Raises
    ------
    ValueError
        Naming the field, if one is outside its range.
    """

    train_length: int = 256
    eval_multiples: tuple = (1, 4, 16)
    n_layers: int = 4
    d_model: int = 128
    n_heads: int = 2
    tokenizer: str = "bpe"
    vocab_size: int = 2048
    batch_size: int = 16
    steps: int = 240
    optimizer: str = "muon"
    learning_rate: float = 0.02
    embedding_learning_rate: float = 0.3
    head_learning_rate: float = 0.008
    cooldown: float = 0.3
    eval_every: int = 60
    warmup: int = 0
    validation_documents: int = 4
    max_train_documents: int | None = None
    copy_fraction: float = 0.0
    copy_span: float = SPAN_FRACTION
    corpus: str | None = None

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "train_length", check_int("train_length", self.train_length, lo=4,
                                             hi=MAX_LENGTH))
        multiples = check_multiples("eval_multiples", self.eval_multiples)
        if multiples[0] != 1:
            raise ValueError(f"eval_multiples must be distinct integers >= 1 including 1 (the "
                             f"training length), got {self.eval_multiples!r}")
        set_(self, "eval_multiples", multiples)
        if self.max_length > MAX_LENGTH:
            raise ValueError(f"eval_multiples: train_length × {multiples[-1]} = "
                             f"{self.max_length} must be <= {MAX_LENGTH}")
        for name, lo, hi in (("n_layers", 1, 64), ("d_model", 4, 8192), ("n_heads", 1, 256),
                             ("batch_size", 1, 4096), ("steps", 1, 10**7),
                             ("eval_every", 1, 10**7), ("validation_documents", 1, 10**4)):
            set_(self, name, check_int(name, getattr(self, name), lo=lo, hi=hi))
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 4:
            raise ValueError(f"d_model must be n_heads × a multiple of 4 (the head dimension; "
                             f"SI's p-RoPE rotates a quarter of it), got d_model={self.d_model},"
                             f" n_heads={self.n_heads}")
        if self.tokenizer not in TOKENIZERS:
            raise ValueError(f"tokenizer must be one of {', '.join(TOKENIZERS)}, got "
                             f"{self.tokenizer!r}")
        set_(self, "vocab_size", check_int("vocab_size", self.vocab_size, lo=258, hi=2**16))
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}, got "
                             f"{self.optimizer!r}")
        set_(self, "learning_rate", check_real("learning_rate", self.learning_rate, lo=0,
                                               hi=1, lo_open=True))
        set_(self, "embedding_learning_rate", check_real(
            "embedding_learning_rate", self.embedding_learning_rate, lo=0, hi=10, lo_open=True))
        set_(self, "head_learning_rate", check_real("head_learning_rate",
                                                    self.head_learning_rate, lo=0, hi=1,
                                                    lo_open=True))
        set_(self, "cooldown", check_real("cooldown", self.cooldown, lo=0, hi=1))
        set_(self, "warmup", check_int("warmup", self.warmup, lo=0, hi=self.steps - 1))
        set_(self, "copy_fraction", check_real("copy_fraction", self.copy_fraction, lo=0, hi=1))
        set_(self, "copy_span", check_real("copy_span", self.copy_span, lo=0, hi=0.5,
                                           lo_open=True))
        if self.max_train_documents is not None:
            set_(self, "max_train_documents",
                 check_int("max_train_documents", self.max_train_documents, lo=1))
        set_(self, "_corpus_checksum", None)
        if self.corpus is not None:
            self._check_corpus()

    def _check_corpus(self):
        """``corpus`` as a string naming a valid shard folder whose BPE these settings use;
        its manifest's checksum kept for :attr:`corpus_checksum`."""
        import os

        from .shards import manifest_checksum

        if not isinstance(self.corpus, str | os.PathLike):
            raise ValueError(f"corpus must be the path of a shard folder or None, got "
                             f"{self.corpus!r}")
        object.__setattr__(self, "corpus", os.fspath(self.corpus))
        manifest = corpus_manifest(self.corpus)  # ValueError naming corpus
        vocab = int(manifest["tokenizer"]["vocab_size"])
        if self.tokenizer != "bpe":
            raise ValueError(f"tokenizer must be 'bpe' with a corpus (the shard folder's BPE), "
                             f"got {self.tokenizer!r}")
        if self.vocab_size != vocab:
            raise ValueError(f"vocab_size must be {vocab}, the BPE of corpus {self.corpus!r}, "
                             f"got {self.vocab_size}")
        if self.max_train_documents is not None:
            raise ValueError(f"max_train_documents must be None with a corpus (the shard "
                             f"folder is the training split), got {self.max_train_documents}")
        object.__setattr__(self, "_corpus_checksum", manifest_checksum(manifest))

    @property
    def corpus_checksum(self) -> str | None:
        """SHA-256 of the ``corpus`` folder's manifest when these settings were made
        (:func:`.shards.manifest_checksum`), ``None`` without one."""
        return self._corpus_checksum

    def with_corpus(self, corpus) -> TrainSettings:
        """These settings on the shard folder ``corpus``: its vocabulary, no cap on the
        training documents (``ValueError`` naming ``corpus`` if it is not a valid folder)."""
        vocab = int(corpus_manifest(corpus)["tokenizer"]["vocab_size"])
        return dataclasses.replace(self, corpus=corpus, vocab_size=vocab, tokenizer="bpe",
                                   max_train_documents=None)

    @property
    def head_dim(self) -> int:
        """Dimension of one attention head, ``d_model // n_heads``."""
        return self.d_model // self.n_heads

    @property
    def eval_lengths(self) -> tuple:
        """The validation context lengths ``train_length × k``."""
        return tuple(self.train_length * k for k in self.eval_multiples)

    @property
    def max_length(self) -> int:
        """The longest validation context, ``train_length × max(eval_multiples)``."""
        return self.train_length * max(self.eval_multiples)

    @property
    def effective_vocab(self) -> int:
        """Token ids the model embeds: ``vocab_size`` (BPE) or 257 (bytes + separator)."""
        return 257 if self.tokenizer == "bytes" else self.vocab_size

    def to_dict(self) -> dict:
        """The fields as JSON-able values (tuples as lists); ``warmup`` and ``copy_fraction``
        only where they are not 0, ``copy_span`` only where a curriculum uses another span than
        the default, and ``corpus`` (with ``corpus_checksum``, which pins its data)
        only where it is set, so that the stores' keys of the runs without them stay as they
        were."""
        values = {k: list(v) if isinstance(v, tuple) else v
                  for k, v in dataclasses.asdict(self).items()}
        for name in ("warmup", "copy_fraction"):
            if not values[name]:
                del values[name]
        if values["copy_span"] == SPAN_FRACTION or "copy_fraction" not in values:
            del values["copy_span"]  # the default span, or no curriculum to use it
        if values["corpus"] is None:
            del values["corpus"]
        else:
            values["corpus_checksum"] = self.corpus_checksum
        return values

    @classmethod
    def from_dict(cls, values: dict) -> TrainSettings:
        """The settings of :meth:`to_dict`'s output (lists back to tuples); ``ValueError``
        naming unknown fields."""
        if not isinstance(values, dict):
            raise ValueError(f"settings must be a dict of TrainSettings fields, got "
                             f"{type(values).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        values = dict(values)
        checksum = values.pop("corpus_checksum", None)
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(f"settings: unknown fields {', '.join(unknown)}")
        out = cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})
        if checksum is not None and out.corpus_checksum != checksum:
            raise ValueError(f"corpus: the folder {out.corpus!r} holds other data than these "
                             f"settings were made with (manifest checksum "
                             f"{out.corpus_checksum}, not {checksum})")
        return out

    @classmethod
    def quick(cls) -> TrainSettings:
        """A few seconds: 2 layers of width 32, 32-token windows, 8 steps, a small BPE (a
        larger head rate than the full run's, so that 8 steps move the logits measurably)."""
        return cls(train_length=32, n_layers=2, d_model=32, n_heads=2, vocab_size=320,
                   batch_size=4, steps=8, head_learning_rate=0.05, eval_every=4,
                   validation_documents=2, max_train_documents=6)


def corpus_manifest(corpus) -> dict:
    """The manifest of ``corpus`` (:attr:`TrainSettings.corpus`): the committed one of the
    registry corpus for ``"registry"`` (:data:`.registry_corpus.EXPECTED_MANIFEST`), else the
    shard folder's, checked (:func:`.shards.read_manifest`; ``ValueError`` naming ``corpus``)."""
    import os

    from .registry_corpus import REGISTRY, expected_manifest
    from .shards import read_manifest

    if os.fspath(corpus) == REGISTRY:
        manifest = expected_manifest()
        if manifest is None:
            raise ValueError(f"corpus {REGISTRY!r}: this installation has no registry manifest")
        return manifest
    return read_manifest(corpus, "corpus")


def corpus_folder(corpus) -> str:
    """The shard folder a run of ``corpus`` reads: :func:`.registry_corpus.registry_folder`
    for ``"registry"``, else ``corpus`` itself."""
    import os

    from .registry_corpus import REGISTRY, registry_folder

    return os.fspath(registry_folder()) if os.fspath(corpus) == REGISTRY else os.fspath(corpus)
