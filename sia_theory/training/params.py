"""Parameters of a trained model: seeded initialisation, the reference's layout, safetensors.

Layout (the JAX forward's, :mod:`.model`): ``embedding`` ``(V, d)``, ``unembedding`` ``(d, V)``
and ``layers`` = the six block matrices stacked over layers. Initialisation (modded-nanogpt,
the SI code base): embedding ``N(0, 1)``; ``w_q, w_k, w_v, w_up`` ``N(0, 1/fan_in)``; the
output projections ``w_o, w_down`` and the unembedding zero, so an untrained model predicts the
uniform distribution (loss ``log V``) and every residual block starts as the identity. Every
number comes from ``rng_for(seed, "training.init")``. A scheme that learns a score scale
(:data:`sia_theory.schemes.LEARNED`) adds ``layers["score_scale"]`` ``(n_layers,)``, ones at the
start (drawn after every weight, so the weights are those of the same seed without it).
"""

from __future__ import annotations

import json

import numpy as np

from .._infra.seeding import rng_for
from ..attention.model import Decoder, DecoderConfig, parameter_shapes

__all__ = ["INIT_STUDY", "LAYER_WEIGHTS", "OPTIONAL_LAYER", "init_parameters", "shapes_for",
           "check_parameters",
           "to_decoder_layout", "parameter_count", "to_safetensors", "from_safetensors"]

INIT_STUDY = "training.init"
"""Study name of the initialisation's random stream (``rng_for(seed, INIT_STUDY)``)."""
LAYER_WEIGHTS = Decoder.LAYER_WEIGHTS
"""The per-layer weight names, in the numpy reference's order
(:attr:`sia_theory.attention.Decoder.LAYER_WEIGHTS`)."""
OPTIONAL_LAYER = ("score_scale",)
"""Per-layer entries a model may hold beside :data:`LAYER_WEIGHTS` (shape ``(n_layers,)``):
the learned score scale of a scheme with ``learned=("score_scale",)``."""
_ZERO = ("w_o", "w_down")


def shapes_for(settings) -> dict:
    """The parameter shapes of a model of ``settings``: ``{"embedding": (V, d), "unembedding":
    (d, V), "layers": {name: (n_layers, fan_in, fan_out)}}``."""
    s = settings
    shapes = parameter_shapes(DecoderConfig(vocab_size=s.effective_vocab, d_model=s.d_model,
                                            n_heads=s.n_heads, n_layers=s.n_layers,
                                            mlp_hidden=4 * s.d_model))
    return {"embedding": tuple(shapes["embedding"]), "unembedding": tuple(shapes["unembedding"]),
            "layers": {name: (s.n_layers, *shapes[name]) for name in LAYER_WEIGHTS}}


def init_parameters(settings, seed: int, learned=()) -> dict:
    """Float32 numpy parameters of a fresh model of ``settings`` (module docstring);
    ``learned``: the scheme's learned parameters (``("score_scale",)`` adds ones per layer)."""
    rng = rng_for(seed, INIT_STUDY)
    shapes = shapes_for(settings)
    embedding = rng.standard_normal(shapes["embedding"]).astype(np.float32)
    layers = {}
    for name, shape in shapes["layers"].items():
        if name in _ZERO:
            layers[name] = np.zeros(shape, np.float32)
        else:
            layers[name] = (rng.standard_normal(shape) / np.sqrt(shape[1])).astype(np.float32)
    for name in learned:
        layers[name] = np.ones(settings.n_layers, np.float32)
    return {"embedding": embedding, "unembedding": np.zeros(shapes["unembedding"], np.float32),
            "layers": layers}


def check_parameters(params, settings, name: str = "parameters") -> dict:
    """Check trained or starting parameters against the model of ``settings``.

    Parameters
    ----------
    params : dict
        ``embedding``, ``unembedding`` and ``layers`` (a dict of the
        :data:`LAYER_WEIGHTS`, each stacked over layers), as :func:`init_parameters` makes.
    settings : TrainSettings
        The model they must fit (shapes from :func:`shapes_for`).
    name : str
        The argument's name in the error message.

    Returns
    -------
    dict
        The same layout with float32 numpy copies.

    Raises
    ------
    ValueError
        Naming ``name``, the entry and its expected shape, if an entry is missing, unknown,
        of another shape or not finite.

    Examples
    --------
    >>> from sia_theory.training import TrainSettings
    >>> s = TrainSettings.quick()
    >>> check_parameters(init_parameters(s, 0), s)["layers"]["w_q"].shape
    (2, 32, 32)
    """
    shapes = shapes_for(settings)
    layers = params.get("layers") if isinstance(params, dict) else None
    if not isinstance(layers, dict):
        raise ValueError(f"{name} must be a dict with 'embedding', 'unembedding' and 'layers' "
                         f"(a dict of {', '.join(LAYER_WEIGHTS)}), got "
                         f"{type(params).__name__} without 'layers'")
    pairs = [(key, params.get(key), shapes[key]) for key in ("embedding", "unembedding")]
    pairs += [(f"layers.{key}", layers.get(key), shape)
              for key, shape in shapes["layers"].items()]
    pairs += [(f"layers.{key}", layers[key], (settings.n_layers,))
              for key in OPTIONAL_LAYER if key in layers]
    extra = sorted(set(layers) - set(LAYER_WEIGHTS) - set(OPTIONAL_LAYER)) + sorted(
        set(params) - {"embedding", "unembedding", "layers"})
    if extra:
        raise ValueError(f"{name}: unknown entries {', '.join(map(str, extra))}")
    out = {"layers": {}}
    for key, value, shape in pairs:
        array = _checked_array(name, key, value, shape)
        if key.startswith("layers."):
            out["layers"][key[7:]] = array
        else:
            out[key] = array
    return out


def _checked_array(name, key, value, shape) -> np.ndarray:
    """``value`` as a float32 array of ``shape`` with finite entries, else ``ValueError`` naming
    ``name`` and ``key``."""
    try:
        array = None if value is None else np.asarray(value, np.float32)
    except (TypeError, ValueError):
        array = None
    if array is None or array.shape != shape:
        got = "nothing" if value is None else f"shape {np.shape(value)}"
        raise ValueError(f"{name}: {key} must have shape {shape} (the model of these "
                         f"settings), got {got}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name}: {key} must hold finite numbers only")
    return array


def parameter_count(params, *, matmul_only=False) -> int:
    """Number of parameters; ``matmul_only`` leaves out the input embedding (a lookup, not a
    matrix product: the count behind the ``6 × parameters × tokens`` FLOP estimate)."""
    total = sum(int(np.size(w)) for w in params["layers"].values())
    total += int(np.size(params["unembedding"]))
    return total if matmul_only else total + int(np.size(params["embedding"]))


def to_decoder_layout(params) -> dict:
    """The parameters as :meth:`sia_theory.attention.Decoder.from_parameters` takes them
    (a list of per-layer dicts; a learned ``score_scale`` as a 0-d array per layer)."""
    layers = params["layers"]
    n_layers = np.shape(layers["w_q"])[0]
    names = LAYER_WEIGHTS + tuple(k for k in OPTIONAL_LAYER if k in layers)
    return {"embedding": np.asarray(params["embedding"]),
            "unembedding": np.asarray(params["unembedding"]),
            "layers": [{name: np.asarray(layers[name][i]) for name in names}
                       for i in range(n_layers)]}


def to_safetensors(params, metadata: dict | None = None) -> bytes:
    """The parameters as safetensors bytes (``layers.w_q`` etc.), ``metadata`` as JSON text."""
    from safetensors.numpy import save  # optional dependency: safetensors (the train extra)

    flat = {"embedding": np.asarray(params["embedding"], np.float32),
            "unembedding": np.asarray(params["unembedding"], np.float32)}
    flat.update({f"layers.{k}": np.asarray(v, np.float32) for k, v in params["layers"].items()})
    meta = {k: json.dumps(v) for k, v in (metadata or {}).items()}
    return save(flat, metadata=meta)


def from_safetensors(data: bytes) -> tuple[dict, dict]:
    """``(params, metadata)`` from :func:`to_safetensors` bytes (the metadata is read from the
    file's JSON header: 8 bytes of length, then the header with its ``__metadata__``).
    ``ValueError`` if ``data`` is not such a file (empty, cut short, header overwritten)."""
    from safetensors import SafetensorError  # optional dependency: safetensors (the train extra)
    from safetensors.numpy import load

    try:
        flat = load(bytes(data))
        params = {"embedding": flat.pop("embedding"), "unembedding": flat.pop("unembedding"),
                  "layers": {k.split(".", 1)[1]: v for k, v in flat.items()}}
        size = int.from_bytes(data[:8], "little")
        raw = json.loads(bytes(data[8:8 + size])).get("__metadata__", {})
        return params, {k: json.loads(v) for k, v in raw.items()}
    except (SafetensorError, ValueError, KeyError, IndexError, TypeError,
            AttributeError) as err:
        raise ValueError(f"not a readable safetensors file of trained parameters "
                         f"({type(err).__name__}: {err})") from None
