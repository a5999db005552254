"""The zoo inside PyTorch FlexAttention: :func:`sia_theory.export.flex_score_mod` against the
package's numpy reference attention (``attention_dense``, float64 whatever the input), eager and
under ``torch.compile``, and :func:`flex_query_stats` against a dense softmax written out here.

Tolerances: float64 computed in float64 by torch (eager) within 1e-12 of the reference; float32
within a first-order rounding bound (:func:`tolerance`): a logit ``L`` computed in float32 is
off by about one rounding of its size, ``|ΔL| ≈ u·max|L|`` (``u = 2^-24``; the dot product's
roundings partly cancel), and a softmax turns logit errors into weight errors
``|Δp_j| <= 2 p_j max|ΔL|``, so the output is within ``2·max|ΔL|·max|v|`` plus its own
rounding ``u·max|v|`` (9.5e-6 for SI on these inputs, 3e-6 for standard attention). A fixed
2e-6 was exceeded (2.2e-6) by SI's larger logits on a loaded machine, where torch's float32
reductions take another order. torch 2.13's inductor compiles
FlexAttention on CPU for float32 only (``LoweringException: NotImplementedError: torch.float,
torch.float16 and torch.bfloat16 are supported in FlexAttention for CPU device``), so the
compiled checks run in float32.
"""

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
flex = pytest.importorskip("torch.nn.attention.flex_attention")

from sia_theory import ALiBi, ScaleInvariant  # noqa: E402
from sia_theory.attention import attention, attention_dense, attention_scores  # noqa: E402
from sia_theory.export import (  # noqa: E402
    causal_block_mask,
    flex_query_stats,
    flex_score_mod,
)
from sia_theory.zoo import ZOO  # noqa: E402

T = 256  # a multiple of FlexAttention's 128-row blocks
TOL64 = 1e-12
U32 = 2.0 ** -24  # float32 unit roundoff


def tolerance(q, k, v, transform):
    """1e-12 for float64 inputs; for float32 the first-order rounding bound of the module
    docstring, from these inputs' largest modified logit and value."""
    if q.dtype == np.float64:
        return TOL64
    logits = attention_scores(*(x.astype(np.float64) for x in (q, k)), score_mod=transform)
    max_logit = float(np.max(np.abs(logits[np.isfinite(logits)])))
    max_v = float(np.max(np.abs(v)))
    return 2 * (U32 * max_logit) * max_v + U32 * max_v


def qkv(dtype, n_heads=2, length=T, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((1, n_heads, length, 16)).astype(dtype) for _ in range(3))


def flex_out(q, k, v, mod, fn=None, **kwargs):
    fn = flex.flex_attention if fn is None else fn
    tensors = [torch.from_numpy(x) for x in (q, k, v)]
    return fn(*tensors, score_mod=mod, block_mask=causal_block_mask(q.shape[2]), **kwargs)


def reference(q, k, v, transform):
    """The float64 reference on the same (rounded) inputs."""
    return attention_dense(*(x.astype(np.float64) for x in (q, k, v)), score_mod=transform)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(ZOO))
def test_flex_score_mod_matches_reference_attention_eager(name, dtype):
    q, k, v = qkv(dtype)
    mod = flex_score_mod(ZOO[name], T, dtype=torch.float64 if dtype == np.float64 else None)
    out = flex_out(q, k, v, mod).numpy()
    assert out.dtype == dtype
    assert np.max(np.abs(out - reference(q, k, v, ZOO[name]))) <= tolerance(q, k, v, ZOO[name])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_flex_score_mod_past_a_context_threshold(dtype):
    """T = 256 stays below the context laws' thresholds; Grok-2's (p > 1024) is crossed at 1280:
    the last 255 queries are scaled by log2(p)/10 (up to 1.03)."""
    q, k, v = qkv(dtype, length=1280)
    transform = ZOO["grok2"]
    assert transform.multiplier(1280) > 1.03
    mod = flex_score_mod(transform, 1280, dtype=torch.float64 if dtype == np.float64 else None)
    out = flex_out(q, k, v, mod).numpy()
    assert np.max(np.abs(out - reference(q, k, v, transform))) <= tolerance(q, k, v, transform)
    assert np.max(np.abs(out - reference(q, k, v, ZOO["none"]))) > 1e-3  # the factor matters


def test_flex_score_mod_per_head_alibi_matches_reference():
    transform = ALiBi.standard(4)
    q, k, v = qkv(np.float64, n_heads=4)
    out = flex_out(q, k, v, flex_score_mod(transform, T, dtype=torch.float64)).numpy()
    assert np.max(np.abs(out - reference(q, k, v, transform))) <= 1e-12
    with pytest.raises(ValueError, match="n_heads must be 4"):
        flex_score_mod(transform, T, n_heads=3)


def test_flex_score_mod_is_si_eq16_on_index_grids():
    # SI eq. 16 with alpha = beta = e^{1/2}, typed out: a_t^2 = 1 + 2 log(1 + t/tau),
    # m_t = -2 log(1 + t/tau), on broadcast grids q_idx (Q, 1), kv_idx (1, K), keys <= query.
    tau = 10.0
    mod = flex_score_mod(ScaleInvariant(tau), 5000, dtype=torch.float64)
    q_idx = torch.tensor([0, 9, 10, 4999]).view(-1, 1)
    kv_idx = torch.tensor([0, 5, 9]).view(1, -1)
    score = torch.full((4, 3), 0.7, dtype=torch.float64)
    t = (q_idx - kv_idx).abs().double()
    ell = torch.log1p(t / tau)
    want = torch.sqrt(1 + 2 * ell) * 0.7 - 2 * ell
    got = mod(score, torch.tensor(0), torch.tensor(0), q_idx, kv_idx)
    assert torch.max(torch.abs(got - want)) <= 1e-14


def test_flex_score_mod_equals_transform_score_mod_on_numpy_grids():
    # the table route against Transform.score_mod (the reference's own callable route)
    q_idx, kv_idx = np.arange(300).reshape(-1, 1), np.arange(300).reshape(1, -1)
    score = np.random.default_rng(1).standard_normal((300, 300))
    for name, transform in ZOO.items():
        mod = flex_score_mod(transform, 300, dtype=torch.float64)
        got = mod(torch.from_numpy(score), 0, 0, torch.from_numpy(q_idx),
                  torch.from_numpy(kv_idx)).numpy()
        want = transform.score_mod(score, 0, 0, q_idx, kv_idx)
        assert np.max(np.abs(got - want)) <= 1e-13 * (1 + np.max(np.abs(want))), name


def compiled_errors(names):
    compiled = torch.compile(flex.flex_attention)
    q, k, v = qkv(np.float32)
    return {name: float(np.max(np.abs(flex_out(q, k, v, flex_score_mod(ZOO[name], T),
                                               fn=compiled).numpy()
                                      - reference(q, k, v, ZOO[name]))))
            for name in names}


@pytest.mark.slow  # one inductor compilation, about 20 s on 2 cores; eager runs in make test
def test_flex_score_mod_compiled_scale_invariant():
    errors = compiled_errors(["scale-invariant"])
    q, k, v = qkv(np.float32)
    assert errors["scale-invariant"] <= tolerance(q, k, v, ZOO["scale-invariant"]), errors


@pytest.mark.slow
def test_flex_score_mod_compiled_every_zoo_scheme():
    errors = compiled_errors(sorted(ZOO))  # one compilation per scheme, about 4 s each
    q, k, v = qkv(np.float32)
    assert all(error <= tolerance(q, k, v, ZOO[name]) for name, error in errors.items()), errors


@pytest.mark.parametrize("name", ["none", "logn", "scale-invariant", "alibi"])
def test_flex_query_stats_match_dense_softmax(name):
    transform = ZOO[name]
    q, k, v = qkv(np.float64, seed=2)
    mod = flex_score_mod(transform, T, dtype=torch.float64)
    _, aux = flex_out(q, k, v, mod, return_aux=flex.AuxRequest(lse=True))
    found = flex_query_stats(torch.from_numpy(q), torch.from_numpy(k), aux.lse, mod, block=100)
    # the dense softmax written out: p = e^{L - max} / sum, entropy -sum p log p, max p
    logits = attention_scores(q, k, score_mod=transform)  # (B, H, T, T), -inf after the query
    top = logits.max(axis=-1, keepdims=True)
    weights = np.exp(logits - top)
    p = weights / weights.sum(axis=-1, keepdims=True)
    log_p = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), 0.0)
    want = (np.log(weights.sum(axis=-1)) + top[..., 0], -(p * log_p).sum(axis=-1), p.max(-1))
    for got, expected in zip(found, want):
        assert np.max(np.abs(got.numpy() - expected)) <= 1e-12
    # and the same numbers as the reference's streaming statistics
    _, stats = attention(q, k, v, score_mod=transform, return_stats=True)
    for got, ours in zip(found, stats):
        assert np.max(np.abs(got.numpy() - ours)) <= 1e-12


def test_export_bad_input_is_refused_before_work():
    with pytest.raises(ValueError, match="transform must be a sia_theory Transform"):
        flex_score_mod(lambda s, b, h, q, kv: s, T)
    with pytest.raises(ValueError, match="max_len"):
        flex_score_mod(ScaleInvariant(), 0)
    with pytest.raises(ValueError, match="dtype must be a torch floating dtype"):
        flex_score_mod(ScaleInvariant(), T, dtype=torch.int32)
    with pytest.raises(ValueError, match="lse"):
        flex_query_stats(torch.zeros(1, 1, 4, 2), torch.zeros(1, 1, 4, 2), torch.zeros(1, 4))


def test_library_imports_without_torch_and_jax():
    code = ("import sys; sys.modules['torch'] = None; sys.modules['jax'] = None\n"
            "import sia_theory, sia_theory.export, sia_theory.transforms.score_mod\n"
            "from sia_theory.export import coefficient_tables, flex_score_mod\n"
            "t = coefficient_tables(sia_theory.ScaleInvariant(), 1, 4)\n"
            "try:\n    flex_score_mod(sia_theory.ScaleInvariant(), 4)\n"
            "except ImportError as e:\n    print('ImportError', e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "sia-theory[torch]" in done.stdout
