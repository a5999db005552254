"""Real text no one here wrote: long documents that ship with Python, and passkey prompts.

Documents of real text no one here wrote, read through the standard library at run
time and never copied into the repository:

* **prose**: the language and library reference entries of ``pydoc_data.topics.topics`` (the
  text behind ``help("assert")``), concatenated in sorted key order and cut into consecutive
  documents of ``n_tokens`` tokens (:func:`prose_documents`);
* **code**: long standard-library modules, one module per document, read from the file named by
  ``importlib.util.find_spec(name).origin`` (:func:`code_documents`); the candidates are
  :data:`CODE_MODULES` in that fixed order, and a module shorter than ``n_tokens`` tokens is
  skipped.

The selection depends only on ``n_tokens``, ``count``, the tokenizer and the Python version's
files: it is deterministic and touches no network.

The texts come from :func:`prose_topics` joined into runs by :func:`prose_runs`, and from
:func:`code_source`; the trainer's corpus (:func:`sia_theory.training.data.texts`) takes its
texts from the same :func:`prose_runs` and from :func:`stdlib_sources`.

Passkey retrieval (Mohtashami & Jaggi 2023, "Landmark Attention", App. the passkey task): a
random 5-digit key (``rng_for(seed, PASSKEY_STUDY, trial)``) hidden in repeated filler at a
chosen depth of a prompt of a chosen token length, the question at the end
(:func:`passkey_prompt`). Scoring (:func:`score_passkey`): the key counts as retrieved when greedy
decoding after the question reproduces the key's tokens; this is checked by teacher forcing
(the argmax at every answer position equals the answer token given the correct preceding ones,
which is exactly when greedy decoding emits those tokens), and the key's log-likelihood is
reported beside it. A tokenizer that splits digits (SmolLM2's) writes the answer ``" 60264"``
as a lone space token and then one token per digit, so the first answer token carries no digit:
the score reports it apart (``first_token_correct``) from the digits (``digits_correct``,
counted over the digit tokens, each given the correct preceding tokens).
"""

from __future__ import annotations

import importlib.util
import pkgutil
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from pydoc_data.topics import topics

import numpy as np

from .._infra.seeding import rng_for
from .._infra.validate import check_int, check_real

__all__ = ["CODE_MODULES", "Document", "prose_topics", "prose_runs", "code_source",
           "stdlib_sources", "prose_documents",
           "code_documents", "long_documents", "PASSKEY_STUDY", "PASSKEY_INTRO", "FILLER",
           "NEEDLE", "QUESTION", "PasskeyPrompt", "passkey_key", "passkey_prompt",
           "filler_ids", "score_passkey"]

# Long pure-Python standard-library modules (CPython 3.10–3.13), tried in this order.
CODE_MODULES = ("_pydecimal", "inspect", "typing", "pydoc", "tarfile", "doctest", "argparse",
                "_pyio", "unittest.mock", "subprocess", "pickletools", "difflib", "enum",
                "locale", "mailbox", "logging", "email._header_value_parser", "urllib.request")
"""Long pure-Python standard-library modules (CPython 3.10–3.13) read as code documents, tried in
this order."""

PASSKEY_STUDY = "models.passkey"
"""The study key of the passkey prompts' random keys."""
PASSKEY_INTRO = ("There is an important info hidden inside a lot of irrelevant text. Find it and "
                 "memorize it. I will quiz you about the important information there.")
"""The instruction that opens a passkey prompt."""
# One filler block; it starts with a space so that repeated blocks tokenize as the repeated
# text does (a GPT-2 style pre-tokenizer splits before every space).
FILLER = (" The grass is green. The sky is blue. The sun is yellow. Here we go. There and back "
          "again.")
"""One block of filler text (it starts with a space, so repeated blocks tokenize as the repeated
text does)."""
NEEDLE = " The pass key is {key}. Remember it. {key} is the pass key."
"""The sentence hiding the key (``{key}`` is replaced)."""
QUESTION = " What is the pass key? The pass key is"
"""The question that ends a passkey prompt."""


@dataclass(frozen=True)
class Document:
    """One document: ``name``, ``kind`` (``"prose"`` or ``"code"``), ``parts`` (the topic keys
    or the module it was made of) and its first ``n_tokens`` token ids."""

    name: str
    kind: str
    parts: tuple
    ids: np.ndarray  # (n_tokens,) int64


def prose_topics() -> list[tuple[str, str]]:
    """``(key, text)`` of every ``pydoc_data.topics`` entry, sorted by key."""
    return sorted(topics.items())


def prose_runs(size, threshold):
    """Consecutive runs of the sorted ``pydoc_data.topics`` entries (:func:`prose_topics`)
    joined by blank lines, as ``(keys, text)``: a run closes as soon as ``size(entry text)``
    summed over its entries is at least ``threshold``; the last run holds the entries left
    (it may be shorter). Lazy: ``size`` is called only on the entries of the runs taken.

    The one rule behind the prose documents of the model studies (:func:`prose_documents`,
    sizes in tokens) and of the trainer's corpus (:func:`sia_theory.training.data.texts`,
    sizes in characters).

    Examples
    --------
    >>> keys, text = next(prose_runs(len, 1))
    >>> keys == (prose_topics()[0][0],) and text == prose_topics()[0][1]
    True
    """
    run, total = [], 0
    for key, text in prose_topics():
        run.append((key, text))
        total += size(text)
        if total >= threshold:
            yield tuple(k for k, _ in run), "\n\n".join(x for _, x in run)
            run, total = [], 0
    if run:
        yield tuple(k for k, _ in run), "\n\n".join(x for _, x in run)


def code_source(module: str) -> str:
    """The source text of a standard-library module, from the file its spec names (the module
    is not imported)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise ValueError(f"module must be a pure-Python standard-library module, got {module!r}")
    return Path(spec.origin).read_text(encoding="utf-8")


def stdlib_sources() -> list[tuple[str, str]]:
    """``(name, source)`` of every top-level pure-Python module of the standard library folder
    (``sysconfig``'s ``stdlib``, found with ``pkgutil.iter_modules``, nothing imported), in
    ``pkgutil``'s order, except the generated ``_sysconfigdata*``; undecodable bytes replaced.
    """
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    sources = []
    for info in pkgutil.iter_modules([str(stdlib)]):
        path = stdlib / f"{info.name}.py"
        if info.ispkg or info.name.startswith("_sysconfigdata") or not path.is_file():
            continue
        sources.append((info.name, path.read_text(encoding="utf-8", errors="replace")))
    return sources


def _check_request(n_tokens, count):
    return check_int("n_tokens", n_tokens, lo=2), check_int("count", count, lo=1)


def _as_ids(encode, text) -> np.ndarray:
    ids = np.asarray(encode(text), dtype=np.int64)
    if ids.ndim != 1:
        raise ValueError("encode must return a flat sequence of token ids")
    return ids


def prose_documents(encode, n_tokens: int, count: int) -> list[Document]:
    """``count`` prose documents of exactly ``n_tokens`` tokens: consecutive runs of the sorted
    ``pydoc_data.topics`` entries joined by blank lines, each run just long enough."""
    n_tokens, count = _check_request(n_tokens, count)
    docs = []
    # runs of n_tokens + 64 tokens counted per entry: a margin for the joins at boundaries
    runs = prose_runs(lambda text: len(_as_ids(encode, text)), n_tokens + 64)
    while len(docs) < count:
        keys, text = next(runs, ((), ""))
        ids = _as_ids(encode, text)
        if len(ids) < n_tokens:
            raise ValueError(f"count: the pydoc topics hold only {len(docs)} prose documents of "
                             f"{n_tokens} tokens, asked for {count}")
        docs.append(Document(f"prose:{keys[0]}..{keys[-1]}", "prose", keys, ids[:n_tokens]))
    return docs


def code_documents(encode, n_tokens: int, count: int) -> list[Document]:
    """``count`` code documents of exactly ``n_tokens`` tokens: the first modules of
    :data:`CODE_MODULES` whose source is at least that long (one module each)."""
    n_tokens, count = _check_request(n_tokens, count)
    docs = []
    for module in CODE_MODULES:
        if importlib.util.find_spec(module) is None:
            continue
        ids = _as_ids(encode, code_source(module))
        if len(ids) >= n_tokens:
            docs.append(Document(f"code:{module}", "code", (module,), ids[:n_tokens]))
        if len(docs) == count:
            return docs
    raise ValueError(f"count: only {len(docs)} standard-library modules have {n_tokens} tokens, "
                     f"asked for {count}")


def long_documents(encode, n_tokens: int, n_prose: int, n_code: int) -> list[Document]:
    """``n_prose`` prose then ``n_code`` code documents of ``n_tokens`` tokens each (either
    count may be 0, not both)."""
    n_prose = check_int("n_prose", n_prose, lo=0)
    n_code = check_int("n_code", n_code, lo=0)
    if n_prose + n_code == 0:
        raise ValueError("n_prose + n_code must be >= 1 (at least one document)")
    docs = prose_documents(encode, n_tokens, n_prose) if n_prose else []
    return docs + (code_documents(encode, n_tokens, n_code) if n_code else [])


# --- passkey retrieval -----------------------------------------------------------------------

@dataclass(frozen=True)
class PasskeyPrompt:
    """A passkey prompt: ``ids`` (the context, ``n_tokens`` long, ending with the question),
    ``answer`` (the key's tokens as they follow the question), ``key``, ``needle_start`` (the
    needle's first token), ``digit_start`` (the first answer token that carries a digit: 1
    when the space before the key is a token of its own, 0 when it shares a token with the
    first digit) and ``prefix`` (tokens before the needle: the intro and filler, the same for
    every key at this needle position, so a KV cache of them can be shared)."""

    ids: np.ndarray  # (n_tokens,)
    answer: np.ndarray  # (answer tokens,)
    key: int
    depth: float
    needle_start: int
    digit_start: int = 0

    @property
    def prefix(self) -> int:
        """Tokens before the needle (shared by every key at this needle position)."""
        return self.needle_start


def passkey_key(seed, trial) -> int:
    """The 5-digit key of ``trial``: uniform on ``[10000, 99999]`` from
    ``rng_for(seed, PASSKEY_STUDY, trial)`` (the same key in every cell of a study)."""
    return int(rng_for(seed, PASSKEY_STUDY, check_int("trial", trial, lo=0)).integers(
        10_000, 100_000))


def filler_ids(encode, n: int) -> np.ndarray:
    """The first ``n`` tokens of the repeated filler (the tokens of ``FILLER`` repeated)."""
    n = check_int("n", n, lo=0)
    block = _as_ids(encode, FILLER)
    return np.resize(block, n) if n else block[:0]


def passkey_prompt(encode, key: int, depth: float, n_tokens: int) -> PasskeyPrompt:
    """The prompt ``intro + filler[:a] + needle + filler[:b] + question`` of exactly
    ``n_tokens`` tokens with the needle after a fraction ``depth`` of the filler
    (``a = round(depth·(a + b))``, 0 = right after the intro, 1 = right before the question).
    ``answer`` is the tokens of ``" <key>"``, checked to be what follows the question when the
    prompt and the answer are tokenized as one text; its digits start after the tokens of the
    space if the answer ends with the tokens of ``"<key>"`` alone (``digit_start``)."""
    key = check_int("key", key, lo=10_000, hi=99_999)
    depth = check_real("depth", depth, lo=0, hi=1)
    n_tokens = check_int("n_tokens", n_tokens, lo=1)
    intro, needle = _as_ids(encode, PASSKEY_INTRO), _as_ids(encode, NEEDLE.format(key=key))
    question, answer = _as_ids(encode, QUESTION), _as_ids(encode, f" {key}")
    joint = _as_ids(encode, QUESTION + f" {key}")
    if not np.array_equal(joint, np.concatenate([question, answer])):
        raise ValueError("encode must tokenize the question and the answer ' <key>' apart "
                         "exactly as together (the answer tokens are what greedy decoding "
                         "must produce)")
    fill = n_tokens - len(intro) - len(needle) - len(question)
    if fill < 0:
        raise ValueError(f"n_tokens must be >= {n_tokens - fill} (intro, needle and question), "
                         f"got {n_tokens}")
    a = int(round(depth * fill))
    stream = filler_ids(encode, fill)  # the filler after the needle continues the stream
    ids = np.concatenate([intro, stream[:a], needle, stream[a:], question])
    digits = _as_ids(encode, str(key))
    split = digits.size < answer.size and np.array_equal(answer[-digits.size:], digits)
    return PasskeyPrompt(ids, answer, key, depth, len(intro) + a,
                         answer.size - digits.size if split else 0)


def score_passkey(logits, answer, digit_start: int = 0) -> dict:
    """Score an answer from the logits at the positions that predict it: ``logits`` ``(A, V)``
    where row ``j`` is the model's output after the question and the first ``j`` answer tokens
    (teacher forcing), ``answer`` ``(A,)``, its digits from token ``digit_start`` on
    (:attr:`PasskeyPrompt.digit_start`).

    ``correct``: every row's argmax is the answer token (greedy decoding reproduces the key);
    ``first_token_correct``: the first answer token is the argmax (for a split-off space: the
    model would start its answer with the key at all); ``digits_correct``: how many leading
    digit tokens are the argmax given the correct preceding tokens (``digits`` of them), so a
    model that would write ``" the"`` first but then every digit of the key scores
    ``digits_correct == digits`` with ``first_token_correct`` False; ``log_likelihood``:
    ``Σ log p(answer_j)``, ``digits_log_likelihood`` the same over the digit tokens."""
    logits = np.asarray(logits, dtype=np.float64)
    answer = np.asarray(answer, dtype=np.int64)
    if logits.ndim != 2 or logits.shape[0] != answer.size or answer.size == 0:
        raise ValueError(f"logits must be (len(answer), vocab), got {logits.shape} for "
                         f"{answer.size} answer tokens")
    digit_start = check_int("digit_start", digit_start, lo=0, hi=answer.size - 1)
    top = logits.max(axis=1, keepdims=True)  # (A, 1)
    log_z = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))  # (A,)
    log_p = logits[np.arange(answer.size), answer] - log_z  # (A,)
    hits = np.argmax(logits, axis=1) == answer  # (A,)
    digit_hits = hits[digit_start:]
    leading = int(np.argmin(digit_hits)) if not digit_hits.all() else int(digit_hits.size)
    return {"correct": bool(hits.all()), "first_token_correct": bool(hits[0]),
            "digits_correct": leading, "digits": int(digit_hits.size),
            "log_likelihood": float(log_p.sum()),
            "digits_log_likelihood": float(log_p[digit_start:].sum())}
