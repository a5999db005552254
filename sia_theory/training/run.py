"""A trained run: its parameters (numpy), loss curves, validation losses, and how to read it.

:class:`TrainedRun` needs no JAX except to compute a validation loss at a length that was not
computed during training. :meth:`TrainedRun.decoder` loads the parameters into the numpy
reference :class:`~sia_theory.attention.Decoder` (with the scheme's encoding for the chosen
length), from which attention statistics are read (SI Fig. 1, bottom row). Storage: the
parameters as safetensors with the run's record as metadata, the curves as a frame
(:meth:`curves`): ``split`` (``train``; ``validation``, pooled over the validation documents;
``validation:prose`` and ``validation:code``, each kind's documents), ``step``, ``length``,
``loss``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._infra.cli import check_output_dir
from .._infra.io import atomic_path, write_csv, write_text
from .._infra.validate import check_columns, check_int
from ..attention import Decoder, DecoderConfig
from ..schemes import resolve_scheme
from ._jax import NOT_RECORDED
from .data import settings_tokenizer
from .params import from_safetensors, parameter_count, to_decoder_layout, to_safetensors
from .settings import MAX_LENGTH, TrainSettings

__all__ = ["TrainedRun", "PARAMETERS_FILE", "CURVE_COLUMNS", "distinct_environments"]

PARAMETERS_FILE = "parameters.safetensors"
"""File name of a run's parameters (safetensors, the run's record as metadata) beside its
curves in a sweep store."""
CURVE_COLUMNS = ("split", "step", "length", "loss")
"""The columns of :meth:`TrainedRun.curves`."""


@dataclass(frozen=True, eq=False)
class TrainedRun:
    """One trained model (see :func:`~.trainer.train`).

    Parameters
    ----------
    scheme : str
        The scheme's name.
    tau : float or None
        ``None`` for schemes without τ.
    seed : int
        The initialisation's seed.
    settings : TrainSettings
    parameters : dict
        float32 numpy arrays, :mod:`.params` layout.
    train_losses : numpy.ndarray
        ``(steps,)``: the mean training loss of each step's batch before its update.
    validation_curve : tuple
        ``((step, loss at train_length), ...)``.
    validation : dict
        ``{length: loss}`` at the end, for every length of ``settings.eval_lengths``.
    seconds : dict
        Wall time of ``compile`` (the first step), ``train`` (all steps, the first included)
        and ``evaluate``, and the process's ``cpu`` time over the whole run (data preparation
        excluded).
    scheme_object : Scheme, optional
        The resolved scheme (resolved again from its name when ``None``).
    checkpoints : tuple
        ``((step, length, kind, loss), ...)`` at every point of the curve and every length,
        ``kind`` ``"all"`` (pooled), ``"prose"`` or ``"code"`` (empty for a run stored before
        0.4, which kept the curve at ``train_length`` only).
    environment : dict or str
        The training process (:func:`~._jax.environment`, recorded by :func:`~.trainer.train`
        when the run trained): package versions, devices, ``XLA_FLAGS`` and JAX's numeric
        flags; :data:`~._jax.NOT_RECORDED` (``"not recorded"``) for a run stored before runs
        recorded it.
    """

    scheme: str
    tau: float | None
    seed: int
    settings: TrainSettings
    parameters: dict = field(repr=False)
    train_losses: np.ndarray = field(repr=False)
    validation_curve: tuple = field(repr=False)
    validation: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict, repr=False)
    scheme_object: object = field(default=None, repr=False)
    checkpoints: tuple = field(default=(), repr=False)
    environment: dict | str = field(default=NOT_RECORDED, repr=False)
    _extra: dict = field(default_factory=dict, repr=False)

    def resolved_scheme(self):
        """The :class:`~.schemes.Scheme` (resolved again from its name after loading)."""
        if self.scheme_object is None:
            object.__setattr__(self, "scheme_object", resolve_scheme(self.scheme, self.tau))
        return self.scheme_object

    def validation_loss(self, length: int) -> float:
        """Mean validation loss (nats per token) at context ``length``: computed during
        training for ``settings.eval_lengths``, else now (needs JAX). ``ValueError`` naming
        ``length`` unless it is an integer from 1 to 2**17."""
        length = check_int("length", length, lo=1, hi=MAX_LENGTH)
        if length in self.validation:
            return float(self.validation[length])
        if length not in self._extra:
            from .evaluation import evaluate  # JAX: only when a new length is scored

            self._extra[length] = evaluate(self.parameters, self.resolved_scheme(),
                                           self.settings, length)
        return self._extra[length]

    def decoder(self, length: int | None = None):
        """The numpy reference decoder (float32) with these parameters, the scheme's transform
        and its position encoding for sequences of ``length`` tokens (default
        ``train_length``; RoPE + NTK scales its base beyond it)."""
        s = self.settings
        scheme = self.resolved_scheme()
        length = (s.train_length if length is None
                  else check_int("length", length, lo=1, hi=MAX_LENGTH))
        config = DecoderConfig(vocab_size=s.effective_vocab, d_model=s.d_model,
                               n_heads=s.n_heads, n_layers=s.n_layers, mlp_hidden=4 * s.d_model,
                               position=scheme.position_encoding(s.train_length, length),
                               transform=scheme.transform_for(s.n_heads, s.train_length, length),
                               qk_norm=True,
                               dtype="float32")
        return Decoder.from_parameters(config, to_decoder_layout(self.parameters))

    def tokenizer(self):
        """The run's tokenizer (rebuilt deterministically from the settings)."""
        return settings_tokenizer(self.settings)

    @property
    def parameter_count(self) -> int:
        """Number of trained parameters (every weight, the input embedding included)."""
        return parameter_count(self.parameters)

    @property
    def tokens_trained(self) -> int:
        """Training tokens seen: ``steps × batch_size × train_length``."""
        s = self.settings
        return s.steps * s.batch_size * s.train_length

    def curves(self) -> pd.DataFrame:
        """``split, step, length, loss``: the training loss of every step, then the validation
        at every checkpoint and length (``validation``: pooled; ``validation:<kind>``: the
        documents of one kind); a run without :attr:`checkpoints` gives the curve at
        ``train_length`` and the final validation at every length."""
        s = self.settings
        rows = [("train", i, s.train_length, float(v)) for i, v in enumerate(self.train_losses)]
        if self.checkpoints:
            rows += [("validation" if kind == "all" else f"validation:{kind}", int(step),
                      int(length), float(v)) for step, length, kind, v in self.checkpoints]
        else:
            rows += [("validation", step, s.train_length, float(v))
                     for step, v in self.validation_curve[:-1]]
            rows += [("validation", s.steps, length, float(v))
                     for length, v in sorted(self.validation.items())]
        return pd.DataFrame(rows, columns=list(CURVE_COLUMNS))

    def checkpoint_frame(self) -> pd.DataFrame:
        """:attr:`checkpoints` as a frame ``step, length, multiple, kind, loss``."""
        frame = pd.DataFrame(list(self.checkpoints), columns=["step", "length", "kind", "loss"])
        frame.insert(2, "multiple", frame["length"] // self.settings.train_length)
        return frame

    def record(self) -> dict:
        """The run's description (JSON-able): scheme, tau, seed, settings, validation,
        seconds, parameter count, tokens, the training environment."""
        return {"scheme": self.scheme, "tau": self.tau, "seed": self.seed,
                "settings": self.settings.to_dict(),
                "validation": {str(k): v for k, v in sorted(self.validation.items())},
                "seconds": self.seconds, "parameters": self.parameter_count,
                "tokens": self.tokens_trained, "environment": self.environment}

    def parameters_bytes(self) -> bytes:
        """The parameters as safetensors, with :meth:`record` as metadata."""
        return to_safetensors(self.parameters, self.record())

    @classmethod
    def from_stored(cls, frame: pd.DataFrame, data: bytes, scheme=None) -> TrainedRun:
        """The run back from :meth:`curves` and :meth:`parameters_bytes`; ``scheme``: its
        resolved :class:`~sia_theory.schemes.Scheme` when the caller holds it (else it is
        resolved again from its name when needed). ``ValueError`` naming ``frame`` or the
        parameters if either is not such output."""
        check_columns("frame", frame, CURVE_COLUMNS)
        params, meta = from_safetensors(data)
        settings = TrainSettings.from_dict(meta["settings"])
        train = frame[frame["split"] == "train"].sort_values("step")
        valid = frame[frame["split"] == "validation"]
        at_l = valid[valid["length"] == settings.train_length].sort_values("step")
        curve = tuple((int(st), float(v)) for st, v in zip(at_l["step"], at_l["loss"]))
        checkpoints = ()
        every = frame[frame["split"].str.startswith("validation")]
        if (every["split"] != "validation").any():  # stored with its checkpoints (0.4)
            checkpoints = tuple(
                (int(st), int(n), "all" if sp == "validation" else sp.split(":", 1)[1],
                 float(v)) for sp, st, n, v in zip(every["split"], every["step"],
                                                    every["length"], every["loss"]))
        validation = {int(k): float(v) for k, v in meta["validation"].items()}
        return cls(scheme=meta["scheme"], tau=meta["tau"], seed=int(meta["seed"]),
                   settings=settings, parameters=params,
                   train_losses=train["loss"].to_numpy(np.float64),
                   validation_curve=curve, validation=validation,
                   seconds=dict(meta.get("seconds", {})), checkpoints=checkpoints,
                   environment=meta.get("environment", NOT_RECORDED),
                   scheme_object=None if scheme is None else scheme.with_tau(meta["tau"]))

    def save(self, folder) -> dict:
        """Write ``parameters.safetensors``, ``curves.csv``, ``run.json`` (and
        ``tokenizer.json`` for BPE) into ``folder``, each atomically; returns the paths.
        ``ValueError`` naming ``folder`` if it is (or would be inside) a regular file or
        cannot be written; nothing is written then."""
        try:
            folder = check_output_dir(folder)
        except (TypeError, ValueError) as err:
            raise ValueError(f"folder: {err}") from None
        paths = {"parameters": folder / PARAMETERS_FILE, "curves": folder / "curves.csv",
                 "record": folder / "run.json"}
        with atomic_path(paths["parameters"]) as tmp:
            tmp.write_bytes(self.parameters_bytes())
        write_csv(paths["curves"], self.curves())
        text = self.tokenizer().to_json()
        if text is not None:
            paths["tokenizer"] = write_text(folder / "tokenizer.json", text)
        write_text(paths["record"], json.dumps(self.record(), indent=2) + "\n")
        return paths

    @classmethod
    def load(cls, folder) -> TrainedRun:
        """A run written by :meth:`save`; ``ValueError`` naming the file if its parameters
        file is damaged (empty, cut short, header overwritten)."""
        folder = Path(os.fspath(folder))
        curves, path = folder / "curves.csv", folder / PARAMETERS_FILE
        for needed in (curves, path):
            if not needed.is_file():
                raise ValueError(f"folder: {str(needed)!r} is missing (not a run written by "
                                 "TrainedRun.save)")
        try:
            frame = pd.read_csv(curves)
            check_columns("frame", frame, CURVE_COLUMNS)
        except (ValueError, pd.errors.ParserError) as err:  # EmptyDataError is a ValueError
            raise ValueError(f"{str(curves)!r}: not the curves of a run ({err})") from None
        try:
            return cls.from_stored(frame, path.read_bytes())
        except ValueError as err:
            raise ValueError(f"{str(path)!r}: {err}") from None


def distinct_environments(runs) -> list:
    """The distinct training environments of ``runs`` (``{key: TrainedRun}``, or an iterable of
    environments: dicts of :func:`~._jax.environment` or :data:`~._jax.NOT_RECORDED`), in the
    order first met: ``[{"environment": ..., "runs": count}, ...]`` (JSON-able; what a figure
    drawn from trained runs records beside the versions of the process that drew it)."""
    values = ([run.environment for run in runs.values()] if isinstance(runs, dict)
              else list(runs))
    out: dict = {}
    for env in values:
        key = json.dumps(env, sort_keys=True, default=str)
        if key not in out:
            out[key] = {"environment": env, "runs": 0}
        out[key]["runs"] += 1
    return list(out.values())
