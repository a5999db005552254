"""Command line and sweep store shared by the real-model experiments (experiments/model_*.py).

Full runs keep their cells in ``build/sweeps/<stem>-seed<seed>`` of the checkout (of the current
folder when the scripts run from an installed wheel; a Parquet
sweep store): an interrupted ``make figures-model`` resumes from the finished cells. ``--quick``
runs keep nothing (store ``None``) unless ``--store`` is given; ``--store none`` turns the store
off for a full run."""

from __future__ import annotations

from pathlib import Path

from sia_theory.studies import sweep_store
from sia_theory.toolkit import experiment_parser

# The checkout (build/sweeps lives there); run from an installed wheel, the current folder.
ROOT = Path(__file__).resolve().parents[1]
if not (ROOT / "experiments").is_dir():
    ROOT = Path.cwd()


def model_parser(description: str, finished_only: str | None = None):
    """The experiment parser with ``--store`` and, when ``finished_only`` (its help text) is
    given, ``--finished-only``."""
    parser = experiment_parser(description)
    parser.add_argument("--store", default="auto",
                        help="sweep store folder for resuming ('auto': build/sweeps/<stem>-seed<S> "
                             "for full runs, none for --quick; 'none': no store)")
    if finished_only:
        parser.add_argument("--finished-only", action="store_true", help=finished_only)
    return parser


FINISHED_ONLY = ("plot the cells already in the store, compute nothing (the missing ones are "
                 "listed in the JSON)")


def resolve_store(store, stem: str, seed: int, quick: bool):
    if store is None or store == "none" or (store == "auto" and quick):
        return None
    if store == "auto":
        return sweep_store(stem, seed, ROOT / "build" / "sweeps")
    return Path(store)
