"""Progress bars: every bar of the package, its command and its scripts comes from here.

A bar is drawn on stderr only when stderr is a terminal: a log file, a pipe, CI or a notebook's
captured stream gets no bar (and none of the carriage returns a bar writes). A command's
``--no-progress`` hides every bar of the process while it runs (:func:`bars_hidden`).
"""

from __future__ import annotations

import contextlib
import sys

__all__ = ["progress_bar", "bars_shown", "bars_hidden"]

_HIDDEN = [False]  # True inside bars_hidden(): a command's --no-progress, for the whole process


@contextlib.contextmanager
def bars_hidden(hidden: bool = True):
    """Within the block, no progress bar is drawn (if ``hidden``), whatever a caller's
    ``progress`` option says: what a command's ``--no-progress`` does.

    Examples
    --------
    >>> with bars_hidden():
    ...     bars_shown()
    False
    """
    previous = _HIDDEN[0]
    _HIDDEN[0] = previous or bool(hidden)
    try:
        yield
    finally:
        _HIDDEN[0] = previous


def bars_shown(stream=None) -> bool:
    """Whether a progress bar would be drawn: ``stream`` (default ``sys.stderr``) is a
    terminal, outside :func:`bars_hidden`."""
    if _HIDDEN[0]:
        return False
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def progress_bar(iterable=None, *, enabled: bool = True, **options):
    """A progress bar on stderr, drawn only on a terminal.

    Parameters
    ----------
    iterable : iterable, optional
        What to iterate (``None``: a bar advanced by ``update``, with ``total=``).
    enabled : bool
        ``False`` hides the bar even on a terminal (a ``progress=False`` option).
    **options
        Passed to ``tqdm`` (``total``, ``desc``, ``unit``, ``leave``, ...).

    Returns
    -------
    tqdm.tqdm
        Disabled unless ``enabled`` and stderr is a terminal (:func:`bars_shown`); a disabled
        bar still iterates (``update`` does nothing).

    Examples
    --------
    >>> list(progress_bar(range(3), desc="demo"))  # stderr is not a terminal under doctest
    [0, 1, 2]
    """
    # start-up: tqdm (90 ms), only once a bar is made: the commands' parsers import this module
    from tqdm.auto import tqdm

    return tqdm(iterable, disable=not (enabled and bars_shown()), **options)
