"""Progress bars: every bar of the package, its command and its scripts comes from here.

A bar is drawn on stderr only when stderr is a terminal. A log file, a pipe, CI or a
notebook's captured stream gets no bar (and none of the carriage returns a bar writes); a
command (``sia-theory …`` and the ``experiments/`` scripts, which run inside
:func:`bars_hidden`) writes plain lines there instead, so that a long run shows signs of
life: one line once a stage has run :data:`LOG_FIRST` seconds, then at most one every
:data:`LOG_EVERY` seconds, and one when it ends (``paper checks: 12/40 claims (30 %), 1 min
05 s``); a stage shorter than :data:`LOG_FIRST` seconds writes nothing. A library call outside
a command writes no lines. A command's ``--no-progress`` hides both, bars and lines, for the
whole process while it runs (:func:`bars_hidden`).
"""

from __future__ import annotations

import contextlib
import sys
import time

__all__ = ["progress_bar", "bars_shown", "bars_hidden", "LOG_FIRST", "LOG_EVERY"]

LOG_FIRST = 10.0
"""Seconds a stage runs before its first log line on a non-terminal (shorter stages: none)."""
LOG_EVERY = 30.0
"""Seconds between two log lines of one stage on a non-terminal."""

_HIDDEN = [False]  # True inside bars_hidden(): a command's --no-progress, for the whole process
_COMMAND = [False]  # True inside bars_hidden(False): a command runs, which logs on a non-terminal


@contextlib.contextmanager
def bars_hidden(hidden: bool = True):
    """The block is a command's run (its long stages log lines on a non-terminal); with
    ``hidden``, no progress bar and no line is drawn, whatever a caller's ``progress`` option
    says: what a command's ``--no-progress`` does.

    Examples
    --------
    >>> with bars_hidden():
    ...     bars_shown()
    False
    """
    previous, command = _HIDDEN[0], _COMMAND[0]
    _HIDDEN[0] = previous or bool(hidden)
    _COMMAND[0] = True
    try:
        yield
    finally:
        _HIDDEN[0], _COMMAND[0] = previous, command


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


def _elapsed(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min" if h else (f"{m} min {s:02d} s" if m else f"{s} s")


class LogLines:
    """A progress bar's stand-in on a non-terminal (module docstring): iterates like the bar,
    ``update(n)``, ``close()``, and writes plain lines to ``stream`` (default stderr at each
    write): what (``desc``), how many of how many (``unit``), elapsed."""

    def __init__(self, iterable=None, *, total=None, desc="", unit="it", initial=0,
                 stream=None, clock=time.monotonic, **_):
        if total is None and iterable is not None:
            try:
                total = len(iterable)
            except TypeError:
                total = None
        self.iterable, self.total, self.desc, self.unit = iterable, total, desc, unit
        self.n, self.start, self.clock, self.stream = int(initial), clock(), clock, stream
        self.last = None  # when the last line was written (None: none yet)
        self.closed = False

    def _line(self) -> None:
        now = self.clock()
        done = f"{self.n}/{self.total} {self.unit}s ({self.n / self.total:.0%})" if self.total \
            else f"{self.n} {self.unit}s"
        stream = sys.stderr if self.stream is None else self.stream
        print(f"{self.desc or 'progress'}: {done}, {_elapsed(now - self.start)}", file=stream,
              flush=True)
        self.last = now

    def update(self, n: int = 1) -> None:
        self.n += n
        now = self.clock()
        if now - self.start >= LOG_FIRST and (self.last is None or now - self.last >= LOG_EVERY):
            self._line()

    def close(self) -> None:
        if not self.closed and self.last is not None:  # only a stage that logged says it ended
            self._line()
        self.closed = True

    def __iter__(self):
        try:
            for item in self.iterable:
                yield item
                self.update()
        finally:
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def progress_bar(iterable=None, *, enabled: bool = True, **options):
    """A progress bar on stderr, drawn only on a terminal; on a non-terminal, plain log lines
    for a long stage (:class:`LogLines`; module docstring).

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
    tqdm.tqdm or LogLines
        A bar when ``enabled`` and stderr is a terminal (:func:`bars_shown`); log lines when
        ``enabled`` on a non-terminal inside a command's :func:`bars_hidden` block that does
        not hide; else a disabled bar, which still iterates (``update`` does nothing).

    Examples
    --------
    >>> list(progress_bar(range(3), desc="demo"))  # stderr is not a terminal under doctest
    [0, 1, 2]
    """
    # start-up: tqdm (90 ms), only once a bar is made: the commands' parsers import this module
    from tqdm.auto import tqdm

    if enabled and _COMMAND[0] and not _HIDDEN[0] and not bars_shown():
        return LogLines(iterable, **options)
    return tqdm(iterable, disable=not (enabled and bars_shown()), **options)
