"""The multi-needle retrieval task of SI Table 2 (App. G.2) in token space: the prompts that
:mod:`.needle` fine-tunes on and scores.

**Task** (SI App. G.2, in token space). Held-out text (the validation pool of :mod:`.data`,
never training text) is cut to a haystack; three needles ``" The special magic <word> number
is <digits>."`` are inserted at seeded depths (uniform, distinct, in order), the words three
distinct entries of :data:`WORDS`, the digits a seeded :data:`DIGITS`-digit number. The
question ``"\nWhat are the special magic numbers?\n"`` follows, then the answer, in one of
two forms (:data:`FORMS`):

* ``"query"`` (default): for each needle, in a seeded order, ``" The special magic <word>
  number is"`` is given and ``" <digits>."`` is the answer: each query asks for one needle by
  its word, and the digits must be retrieved from the haystack (the retrieval that SI's task
  measures, without asking the model to recall the words in order);
* ``"list"`` (SI's ``city1=needle1;city2=needle2;city3=needle3``): ``" <word1>: <digits1>;
  <word2>: <digits2>; <word3>: <digits3>."``, the needles in their order in the text; the
  model writes the words too.

Every piece is tokenized on its own and the pieces are joined as token ids, so the word and
digit tokens of the answer are exactly those of its needle. One example is a window of
``E + 1`` tokens (``E`` the context); the loss mask marks the positions that predict the
answer tokens (the digits and the ``.`` after them; in the list form also the words, ``:`` and
``;``), and only those count in fine-tuning (SI: "Only the expected response tokens are
included in the loss").

**Why 4 digits.** The BPE of :mod:`.data` is trained on Python source and merges few digit
pairs: a number takes about one token per digit (measured on the 2048-token BPE: 3.8 tokens
for 4 digits, 6.4 for SI's 7). Four digits keep the answer to a few tokens per needle (the
words of :data:`WORDS` are single tokens of that BPE) inside a 256-token training window that
also holds a haystack, while a guess is right with probability 1/9000.

**Where a needle sits.** Its *depth* is the index of its first token over the haystack's
length (the index where the question begins): 0 at the start of the context, towards 1 just
before the question, whatever the context's length. Its *distance* is the number of tokens
from its number in the haystack to the position where the answer writes that number (the
answer's first digit token minus the needle's): how far back the model must look.

Seeds: fine-tuning prompts of step ``i`` come from ``rng_for(seed, NEEDLE_TASK_STUDY, 0,
i)``, evaluation prompts of context ``E`` from ``rng_for(seed, NEEDLE_TASK_STUDY, 1, E)``
(:mod:`.needle` passes the run's seed for both, so each seed has prompts of its own).
Fine-tuning haystacks come from the odd documents of the validation pool, evaluation
haystacks from the even ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .._infra.seeding import rng_for
from .data import settings_data
from .settings import TrainSettings

__all__ = ["NEEDLE_TASK_STUDY", "WORDS", "DIGITS", "NEEDLES", "FORMS", "QUESTION",
           "NeedleExample", "NeedleTask", "needle_task"]

NEEDLE_TASK_STUDY = "training.needle_task"
"""The seeding key of the task's prompts."""

WORDS = ("field", "line", "state", "point", "group", "order", "level", "message", "server",
         "block", "event", "time", "count", "frame", "table", "house")
"""The needles' words (SI: cities); all but the last two are single tokens of the 2048 BPE."""

DIGITS = 4
"""Digits of a needle's number (module docstring: why 4)."""

NEEDLES = 3
"""Needles per prompt (SI: three)."""
FORMS = ("query", "list")
"""The answer's forms (module docstring): one query per needle, or SI's list of the three."""
QUESTION = "\nWhat are the special magic numbers?\n"
"""The question after the haystack."""


@dataclass(frozen=True)
class NeedleExample:
    """One prompt: ``window`` ``(E + 1,)`` token ids, ``mask`` ``(E,)`` (1 where position
    ``j`` predicts answer token ``j + 1``), the needles' ``words``, ``keys`` (digit strings)
    and ``starts`` (token index of each needle), and per needle its answer ``segments``:
    ``(start, digit_start, stop)`` token indices into ``window``; ``question``: the token
    index where the question begins (the end of the haystack); ``digit_starts``: the token
    index of each needle's number in the haystack.

    :meth:`depths` and :meth:`distances` place each needle (module docstring)."""

    window: np.ndarray
    mask: np.ndarray
    words: tuple
    keys: tuple
    starts: tuple
    segments: tuple
    question: int = 0
    digit_starts: tuple = ()

    def depths(self) -> tuple:
        """Each needle's depth: its first token's index over the haystack's length (the
        question's index), 0 at the start of the context, towards 1 at the question."""
        return tuple(start / self.question for start in self.starts)

    def distances(self) -> tuple:
        """Each needle's distance in tokens: from its number in the haystack to where the
        answer writes that number (the answer's first digit token minus the needle's)."""
        return tuple(int(d - n) for (_, d, _), n in zip(self.segments, self.digit_starts,
                                                          strict=True))


class NeedleTask:
    """The prompts of a tokenizer (``TrainSettings``' ``tokenizer``, ``vocab_size``,
    ``max_train_documents``): :meth:`example` builds one, :meth:`batch` a fine-tuning batch."""

    def __init__(self, settings: TrainSettings):
        s = settings
        tok, _, _, pool_ids = settings_data(s)
        self.tokenizer = tok

        def stream(docs):
            return np.concatenate([np.append(d, np.int32(tok.separator)) for d in docs])

        self.haystacks = {"evaluate": stream(pool_ids[0::2]), "tune": stream(pool_ids[1::2])}
        enc = tok.encode
        self.prefix, self.is_ = enc(" The special magic"), enc(" number is")
        self.dot, self.colon, self.semi = enc("."), enc(":"), enc(";")
        self.question = enc(QUESTION)
        self.words = [enc(" " + w) for w in WORDS]
        self.digit_ids = {}

    def _digits(self, key: str) -> np.ndarray:
        if key not in self.digit_ids:
            self.digit_ids[key] = self.tokenizer.encode(" " + key)
        return self.digit_ids[key]

    def overhead(self) -> int:
        """The most tokens needles, question and answer can take (longest words, digits; the
        longer of the two answer forms)."""
        word = max(w.size for w in self.words)
        digits = max(self._digits("9" * DIGITS).size, self._digits("1" * DIGITS).size) + 2
        needle = self.prefix.size + word + self.is_.size + digits + self.dot.size
        listed = NEEDLES * (word + self.colon.size + digits) + NEEDLES * self.semi.size
        return NEEDLES * needle + self.question.size + max(listed, NEEDLES * needle)

    def _answer(self, rng, pick, keys, form):
        """``(tokens, scored, segments)``: the answer's tokens, the indices of those in the loss
        and one ``(start, digit_start, stop)`` per needle (in needle order), relative."""
        pieces, scored, segments, at = [], [], [None] * NEEDLES, 0
        order = range(NEEDLES) if form == "list" else rng.permutation(NEEDLES)
        for n, j in enumerate(order):
            w, digits = self.words[pick[j]], self._digits(keys[j])
            if form == "list":  # " word: digits;" … the last with "."
                head = np.concatenate([w, self.colon])
                tail = self.semi if n < NEEDLES - 1 else self.dot
                segments[j] = (at, at + head.size, at + head.size + digits.size)
                scored += range(at, at + head.size + digits.size + tail.size)
            else:  # " The special magic word number is" given, " digits." asked
                head = np.concatenate([self.prefix, w, self.is_])
                tail = self.dot
                d = at + head.size
                segments[j] = (d, d, d + digits.size)
                scored += range(d, d + digits.size + tail.size)
            pieces += [head, digits, tail]
            at += head.size + digits.size + tail.size
        return np.concatenate(pieces), np.asarray(scored), tuple(segments)

    def example(self, rng, length: int, split: str = "evaluate",
                form: str = "query") -> NeedleExample:
        """One prompt of context ``length`` from ``split``'s haystack (``"evaluate"`` or
        ``"tune"``), answer ``form`` ``"query"`` or ``"list"`` (module docstring), drawn with
        ``rng``."""
        if form not in FORMS:
            raise ValueError(f"form must be one of {', '.join(FORMS)}, got {form!r}")
        pick = rng.choice(len(WORDS), NEEDLES, replace=False)
        keys = tuple(str(k) for k in rng.integers(10 ** (DIGITS - 1), 10 ** DIGITS, NEEDLES))
        needles = [np.concatenate([self.prefix, self.words[w], self.is_, self._digits(k),
                                   self.dot]) for w, k in zip(pick, keys, strict=True)]
        answer, scored, segments_rel = self._answer(rng, pick, keys, form)
        total = length + 1
        fill = total - self.question.size - answer.size - sum(n.size for n in needles)
        if fill < NEEDLES + 1:
            raise ValueError(f"train_length: a prompt of {length} tokens cannot hold three "
                             f"needles, the question and the answer ({total - fill} tokens) "
                             "with text around them; use a longer training length")
        stack = self.haystacks[split]
        offset = int(rng.integers(0, stack.size - fill + 1))
        text = stack[offset:offset + fill]
        cuts = np.sort(rng.choice(np.arange(1, fill), NEEDLES, replace=False))  # distinct
        parts, starts, digit_starts, pos, prev = [], [], [], 0, 0
        for cut, needle, key in zip(cuts, needles, keys, strict=True):
            parts.append(text[prev:cut])
            pos += cut - prev
            starts.append(pos)
            digit_starts.append(pos + needle.size - self.dot.size - self._digits(key).size)
            parts.append(needle)
            pos += needle.size
            prev = cut
        parts += [text[prev:], self.question]
        body = np.concatenate(parts)
        window = np.concatenate([body, answer]).astype(np.int32)
        a0 = body.size
        mask = np.zeros(length, np.float32)
        mask[a0 + scored - 1] = 1.0  # position p predicts token p + 1
        segments = tuple((a0 + s0, a0 + s1, a0 + s2) for s0, s1, s2 in segments_rel)
        return NeedleExample(window, mask, tuple(WORDS[w] for w in pick), keys, tuple(starts),
                             segments, int(a0 - self.question.size), tuple(digit_starts))

    def batch(self, seed: int, step: int, batch_size: int, length: int, form: str = "query"):
        """Fine-tuning batch ``step``: ``(windows (B, length + 1), masks (B, length))``."""
        rng = rng_for(seed, NEEDLE_TASK_STUDY, 0, step)
        examples = [self.example(rng, length, "tune", form) for _ in range(batch_size)]
        return (np.stack([e.window for e in examples]), np.stack([e.mask for e in examples]))

    def evaluation(self, seed: int, length: int, count: int, form: str = "query") -> list:
        """The ``count`` evaluation prompts of context ``length`` drawn from ``seed``'s stream
        (haystack slices, needle positions, words, numbers, query order): the same for every
        scheme, and for every checkpoint of a fine-tuning; another ``seed``, other prompts."""
        rng = rng_for(seed, NEEDLE_TASK_STUDY, 1, length)
        return [self.example(rng, length, "evaluate", form) for _ in range(count)]


@lru_cache(maxsize=4)
def needle_task(settings: TrainSettings) -> NeedleTask:
    """The :class:`NeedleTask` of ``settings``' tokenizer (cached)."""
    return NeedleTask(settings)
