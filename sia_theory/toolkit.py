"""Public helpers for scripts: the repository's figure and benchmark scripts use these, and so
can a researcher's own.

* argument parsing that reports bad input as one line and exit status 2, before any work:
  :func:`experiment_parser` (``--quick``, ``--seed``, ``--out``), :func:`benchmark_parser`, the
  argument types (:func:`int_range`, :func:`positive_int`, :func:`positive_float`,
  :func:`seed`) and :func:`run` (parse, call ``main``, turn a ``ValueError`` into one line);
* :func:`save_experiment`: a figure, its data (CSV) and a manifest of its parameters, seed and
  package versions, written as one set (nothing half-written or mixed with another run's);
  :func:`write_text` (atomic);
* :func:`best_time` (the minimum of repeated timings), :func:`rng_for` and :data:`MAX_SEED`
  (seeded streams), :func:`progress_bar` (shown on a terminal only), and the worker helpers
  :func:`worker_count`, :func:`available_workers`, :func:`run_tasks` and
  :func:`single_threaded_blas`; :func:`log_spaced_integers` for context grids;
* :func:`mean_se` (one mean ± standard error) and :func:`wilson_interval` (a binomial
  proportion's interval).

They are defined in the package's private infrastructure (``sia_theory._infra``); this module is
the supported way to reach them.
"""

from ._infra.cli import (
    OneLineArgumentParser,
    benchmark_parser,
    experiment_parser,
    int_range,
    positive_float,
    positive_int,
    run,
    seed,
)
from ._infra.grids import log_spaced_integers
from ._infra.io import save_experiment, write_text
from ._infra.parallel import available_workers, run_tasks, single_threaded_blas, worker_count
from ._infra.progress import progress_bar
from ._infra.seeding import MAX_SEED, rng_for
from ._infra.stats import mean_se, wilson_interval
from ._infra.timing import best_time

__all__ = ["OneLineArgumentParser", "benchmark_parser", "experiment_parser", "int_range",
           "positive_float", "positive_int", "run", "seed", "log_spaced_integers",
           "save_experiment", "write_text", "available_workers", "run_tasks",
           "single_threaded_blas", "worker_count", "progress_bar", "MAX_SEED", "rng_for",
           "best_time", "mean_se", "wilson_interval"]
