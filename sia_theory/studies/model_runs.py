"""The model studies' plumbing (SmolLM2-135M, the corpus documents, the length schemes and
the families of schemes that share a KV cache); the operations on a model they use (score
capture, the losses of a continuation, prefill FLOPs, where a score mod is the identity) are the
engine's, in :mod:`sia_theory.models.runs`.

* :func:`pretrained` / :func:`documents`: SmolLM2-135M (float32) and the corpus documents
  (:mod:`sia_theory.models.corpus`) tokenized by its tokenizer, loaded once per process;
  :func:`check_documents`, :func:`document_cells` and :func:`cell_document`: the studies' sweep
  cells, one per document.
* :func:`schemes`: RoPE as trained, NTK-aware base scaling, YaRN, Qwen logn, Llama-4
  temperature and the post-hoc scale-invariant transform (:data:`SCHEME_NAMES`), each a position
  encoding plus a zoo score mod, for a target length.
* :func:`scheme_families` / :func:`model_families`: schemes grouped where they share a KV cache
  (:func:`~sia_theory.models.runs.identical_prefix`); :func:`family_definition` fingerprints a
  family's definitions for the studies' cell keys; :func:`family_cache` and :func:`fork_for`
  build a family's base cache and each member's fork of it.
"""

from __future__ import annotations

import hashlib
from functools import cache

import numpy as np

from .._infra.validate import check_int
from ..models.corpus import CODE_MODULES, long_documents
from ..models.loader import load_pretrained
from ..models.runs import identical_prefix, position_signature
from ..schemes import SCHEMES

__all__ = ["MODEL_NAME", "TRAIN_LENGTH", "pretrained", "documents", "check_documents",
           "document_cells", "cell_document", "SCHEME_NAMES", "schemes", "scheme_families",
           "model_families", "family_definition", "family_cache", "fork_for"]

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
    """The corpus documents (:func:`sia_theory.models.corpus.long_documents`) in the model's
    tokens."""
    _, tokenizer = pretrained()
    return tuple(long_documents(tokenizer.encode, n_tokens, n_prose, n_code))


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


# --- schemes and their families ---------------------------------------------------------------

SCHEME_NAMES = ("rope", "rope-ntk", "yarn", "qwen-logn", "llama4", "si-rope-posthoc")
"""The length schemes of the model studies (names of :data:`sia_theory.schemes.SCHEMES`), in
table order."""


def schemes(target_length: int, base: float, train_length: int = TRAIN_LENGTH) -> list:
    """The schemes of :data:`SCHEME_NAMES` bound to contexts of ``target_length`` tokens
    (:meth:`sia_theory.schemes.Scheme.at`: NTK and YaRN are scaled for it,
    ``s = max(1, target/train)``; at ``s = 1`` both are RoPE)."""
    return [SCHEMES[name].at(target_length, train_length, base) for name in SCHEME_NAMES]


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
