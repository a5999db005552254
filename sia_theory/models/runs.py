"""Shared machinery of the real-model experiments: the model and its documents, score capture,
losses of a continuation, the length-extrapolation schemes, exact prefix sharing and a FLOP
count for budgeting.

* :func:`pretrained` / :func:`documents`: SmolLM2-135M (float32) and the corpus documents
  (:mod:`.corpus`) tokenized by its tokenizer, loaded once per process.
* :func:`capture_scores`: one forward pass; for every layer, the raw scores ``q·k/√D``
  (float64, ``-inf`` after the query) of chosen query rows against all keys, handed to a
  callback and dropped, so a long prefill never holds all layers' scores.
* :func:`extend_losses`: extend a KV cache by tokens and return their next-token losses.
* :func:`schemes`: RoPE as trained, NTK-aware base scaling, YaRN, Qwen logn, Llama-4
  temperature and the post-hoc scale-invariant transform, each a position encoding plus a zoo
  score mod, for a target length; :func:`identical_prefix` says for how many leading query
  positions a score mod is exactly the identity, which is where schemes share a KV cache;
  :func:`family_definition` fingerprints a family's definitions for the studies' cell keys.
* :func:`prefill_flops`: matmul FLOPs of extending a cache from ``start`` to ``stop`` tokens.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from functools import cache

import numpy as np

from .._infra.validate import check_int
from ..schemes import SCHEMES, SI_EPSILON, BoundScheme, si_tau
from ..transforms import declared_dependence
from .corpus import CODE_MODULES, long_documents
from .loader import load_pretrained

__all__ = ["MODEL_NAME", "TRAIN_LENGTH", "pretrained", "documents", "score_capture",
           "capture_scores", "position_signature", "scheme_families",
           "extend_losses", "SCHEME_NAMES", "schemes", "si_tau", "SI_EPSILON",
           "identical_prefix", "prefill_flops", "check_documents", "document_cells",
           "cell_document", "model_families", "family_definition", "family_cache", "fork_for"]

MODEL_NAME = "smollm2-135m"
"""The pretrained model the model studies use."""
TRAIN_LENGTH = 8192  # SmolLM2's training context (GGUF llama.context_length)
"""SmolLM2's training context (GGUF ``llama.context_length``)."""


@cache
def pretrained():
    """``(model, tokenizer)`` of SmolLM2-135M-Instruct in float32, loaded once per process."""
    return load_pretrained(MODEL_NAME, dtype=np.float32)


@cache
def documents(n_tokens: int, n_prose: int, n_code: int) -> tuple:
    """The corpus documents (:func:`.corpus.long_documents`) in the model's tokens."""
    _, tokenizer = pretrained()
    return tuple(long_documents(tokenizer.encode, n_tokens, n_prose, n_code))


def _row_scores(q, keys, rows, q_start, scale):
    """Scores ``(H, Q, T)`` float64 of the query rows ``rows`` (absolute positions; ``q`` holds
    positions ``q_start..``) against ``keys`` ``(Hkv, T, D)``; ``-inf`` after each query."""
    heads, kv_heads = q.shape[0], keys.shape[0]
    group = heads // kv_heads
    picked = q[:, rows - q_start].astype(np.float64)  # (H, Q, D)
    picked = picked.reshape(kv_heads, group, rows.size, -1)
    k64 = keys.astype(np.float64)  # (Hkv, T, D)
    scores = np.einsum("hgqd,htd->hgqt", picked, k64).reshape(heads, rows.size, -1) * scale
    scores[:, np.arange(keys.shape[1])[None, :] > rows[:, None]] = -np.inf
    return scores  # (H, Q, T)


def score_capture(model, cache, query_positions, on_layer):
    """A ``capture(layer, q, k)`` callback for ``model.forward_hidden(ids, cache, capture=...)``
    that calls ``on_layer(layer, scores)`` with the raw scores ``(H, Q, T_total)`` of
    ``query_positions`` (absolute positions among the tokens about to be added to ``cache``)
    against every key (the cached ones and the new ones), after the position encoding and
    before any score mod; ``-inf`` after each query."""
    rows = np.asarray(query_positions, dtype=np.int64)
    start = cache.length
    scale = 1.0 / math.sqrt(model.config.head_dim)

    def capture(layer, q, k):
        if rows.size and (rows.min() < start or rows.max() >= start + q.shape[1]):
            raise ValueError(f"query_positions must lie among the new tokens [{start}, "
                             f"{start + q.shape[1] - 1}]")
        keys = k if start == 0 else np.concatenate([cache.kv.keys(layer)[0], k], axis=1)
        on_layer(layer, _row_scores(q, keys, rows, start, scale))

    return capture


def capture_scores(model, ids, query_positions, on_layer, *, cache=None, score_mod=None,
                   position=None):
    """Run ``ids`` (continuing ``cache`` if given, else a fresh prefill with ``score_mod`` and
    ``position``) with :func:`score_capture`; returns the final hidden states
    ``(T_new, d_model)``."""
    if cache is None:
        cache = model.new_cache(score_mod, position, capacity=len(ids))
    capture = score_capture(model, cache, query_positions, on_layer)
    return model.forward_hidden(ids, cache, capture=capture)


def extend_losses(model, cache, ids, next_id=None, capture=None) -> np.ndarray:
    """Extend ``cache`` by ``ids`` and return the next-token losses (nats, float64) of the new
    positions: ``−log p(ids[j+1])`` and, if ``next_id`` is given, of it after the last one
    (``len(ids)`` losses then, else ``len(ids) − 1``). ``capture`` is passed on to
    ``forward_hidden``; the output head is the model's ``head_losses`` (row blocks)."""
    ids = np.asarray(ids, dtype=np.int64)
    hidden = model.forward_hidden(ids, cache, capture=capture)  # (T, d)
    targets = ids[1:] if next_id is None else np.append(ids[1:], int(next_id))
    return model.head_losses(hidden[:targets.size], targets)


# --- schemes -----------------------------------------------------------------------------------

SCHEME_NAMES = ("rope", "rope-ntk", "yarn", "qwen-logn", "llama4", "si-rope-posthoc")
"""The length schemes of the model studies (names of :data:`sia_theory.schemes.SCHEMES`), in
table order."""


def schemes(target_length: int, base: float, train_length: int = TRAIN_LENGTH) -> list:
    """The schemes of :data:`SCHEME_NAMES` bound to contexts of ``target_length`` tokens
    (:meth:`sia_theory.schemes.Scheme.at`: NTK and YaRN are scaled for it,
    ``s = max(1, target/train)``; at ``s = 1`` both are RoPE)."""
    return [SCHEMES[name].at(target_length, train_length, base) for name in SCHEME_NAMES]


def __getattr__(name):
    if name == "Scheme":  # 0.3: the model studies' scheme at one length
        warnings.warn("sia_theory.models.runs.Scheme is deprecated; a scheme is "
                      "sia_theory.schemes.Scheme, bound to a length by Scheme.at() as a "
                      "sia_theory.schemes.BoundScheme", DeprecationWarning, stacklevel=2)
        return BoundScheme
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def identical_prefix(score_mod, n_max: int) -> int:
    """How many leading query positions ``0..k−1`` see ``score_mod`` as the identity
    (``a = 1, m = 0`` at every distance they can see), up to ``n_max``: the positions where a
    model with this score mod computes exactly what it computes without one. ``None`` → n_max;
    a distance-dependent transform → 1 (only the first query, distance 0, if ``a_0 = 1,
    m_0 = 0``)."""
    if score_mod is None:
        return n_max
    if "distance" in declared_dependence(score_mod) or "head" in declared_dependence(score_mod):
        a, m = score_mod.coefficients(np.zeros(1), np.ones(1), 0)
        return 1 if (a[0] == 1.0 and m[0] == 0.0) else 0
    n = np.arange(1, n_max + 1, dtype=np.float64)  # keys seen by query q_idx = n - 1
    a, m = score_mod.coefficients(np.zeros_like(n), n)
    differs = np.flatnonzero((a != 1.0) | (m != 0.0))
    return int(differs[0]) if differs.size else n_max


def position_signature(position, head_dim: int) -> bytes:
    """A fingerprint of a position encoding: its output on a fixed probe ``(1, 4, D)`` at
    positions ``0, 1, 1000, 100000`` (equal fingerprints: the encodings rotate alike)."""
    probe = np.linspace(-1.0, 1.0, 4 * head_dim).reshape(1, 4, head_dim)
    return np.asarray(position(probe, np.array([0, 1, 1000, 100_000]))).tobytes()


def scheme_families(scheme_list, n_ctx: int, head_dim: int, min_shared: int = 256,
                    alone=()) -> list:
    """Group schemes for computation at context ``n_ctx``: ``[(shared, members)]`` where the
    members share one position encoding and are each the identity on their first ``shared``
    query positions, so one KV cache of those positions (computed without a score mod) serves
    them all. ``members`` is a list of ``(scheme, aliases)``: schemes that are identical over
    the whole context (same encoding, identity score mod, e.g. NTK and YaRN at ``s = 1``) are
    computed once and reported under each alias. A member sharing fewer than ``min_shared``
    positions, and the schemes named in ``alone``, get a family of their own (``shared`` =
    ``n_ctx``: nothing to share; e.g. the baseline, so that it finishes on its own)."""
    groups: dict = {}
    for scheme in scheme_list:
        prefix = identical_prefix(scheme.score_mod, n_ctx)
        mod_key = "identity" if prefix >= n_ctx else repr(scheme.score_mod)
        key = (position_signature(scheme.position, head_dim), mod_key)
        groups.setdefault(key, []).append((scheme, prefix))
    families: dict = {}
    for (signature, _), members in groups.items():
        scheme, prefix = members[0]
        entry = (scheme, tuple(m[0].name for m in members))
        fam = signature if prefix >= min_shared and scheme.name not in alone else \
            (signature, scheme.name)
        families.setdefault(fam, []).append((entry, min(prefix, n_ctx)))
    out = []
    for members in families.values():
        shared = min(prefix for _, prefix in members) if len(members) > 1 else n_ctx
        out.append((shared, [entry for entry, _ in members]))
    return out


def prefill_flops(config, start: int, stop: int, head_rows: int = 0) -> float:
    """FLOPs of extending a cache of ``start`` tokens to ``stop``: the projections and MLP
    (``2·T·params``), the causal attention products ``q·k`` and ``A·v`` (``4·H·D`` per visible
    pair) and ``head_rows`` rows of the output head."""
    c = config
    per_token = 2 * c.d_model * ((c.n_heads + 2 * c.n_kv_heads) * c.head_dim  # q, k, v
                                 + c.n_heads * c.head_dim  # output projection
                                 + 3 * c.ffn)  # SwiGLU
    pairs = (stop * (stop + 1) - start * (start + 1)) / 2  # visible (query, key) pairs
    attention = 4 * c.n_heads * c.head_dim * pairs
    return c.n_layers * (per_token * (stop - start) + attention) + \
        2 * c.d_model * c.vocab_size * head_rows


def check_documents(n_tokens, n_prose, n_code) -> None:
    """``ValueError`` naming the parameter unless ``n_tokens >= 16`` and the document counts are
    non-negative with at least one document."""
    check_int("n_tokens", n_tokens, lo=16, hi=2**20)
    check_int("n_prose", n_prose, lo=0, hi=64)
    check_int("n_code", n_code, lo=0, hi=len(CODE_MODULES))
    if n_prose + n_code < 1:
        raise ValueError("n_prose + n_code must be at least 1 (one document)")


def document_cells(n_tokens, n_prose, n_code, **extra) -> list[dict]:
    """One sweep cell per corpus document (:func:`documents`), with ``extra`` settings in its
    key."""
    return [{"doc": i, "n_tokens": n_tokens, "n_prose": n_prose, "n_code": n_code, **extra}
            for i in range(n_prose + n_code)]


def cell_document(cell):
    """The document of a cell of :func:`document_cells`."""
    return documents(cell["n_tokens"], cell["n_prose"], cell["n_code"])[cell["doc"]]


def model_families(n_ctx, train_length, alone=()):
    """:func:`scheme_families` of the pretrained model's :func:`schemes` for a context of
    ``n_ctx`` tokens (schemes named in ``alone`` get a family of their own)."""
    model, _ = pretrained()
    c = model.config
    return scheme_families(schemes(n_ctx, c.rope_base, train_length), n_ctx, c.head_dim,
                           min_shared=min(256, train_length // 2), alone=alone)


def family_definition(members) -> str:
    """A fingerprint (16 hex digits) of a family's members as :func:`scheme_families` lists them:
    each scheme's name, position encoding and score mod. The model studies put it in their cell
    keys, so a stored cell computed under another definition of a scheme (YaRN's earlier ramp,
    say) is computed again instead of being reused."""
    text = ";".join(f"{scheme.name}={scheme.position!r}+{scheme.score_mod!r}"
                    for scheme, _ in members)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def family_cache(model, members, shared, n_ctx):
    """The base cache of a family: no score mod on the shared prefix of several members, the
    member's own score mod for a family of one."""
    scheme = members[0][0]
    mod = scheme.score_mod if len(members) == 1 else None
    return model.new_cache(mod, scheme.position, capacity=n_ctx + 8)


def fork_for(base, scheme):
    """A fork of a family's base cache that continues with ``scheme``'s score mod (exact: the
    shared prefix is where every member's score mod is the identity)."""
    twin = base.fork()
    twin.score_mod = scheme.score_mod
    return twin
