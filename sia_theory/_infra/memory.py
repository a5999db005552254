"""Upfront memory bound for sizes a user chooses (context lengths, sample counts, ranges).

A size large enough to exhaust memory fails *before* any work, with one ``ValueError`` naming
the parameter, the estimated working memory and the limit, instead of a ``MemoryError`` minutes
later (or the machine swapping). The limit is the memory available now (``MemAvailable`` of
``/proc/meminfo``, else ``SC_AVPHYS_PAGES × SC_PAGE_SIZE``) unless ``max_bytes`` is given.
"""

from __future__ import annotations

import os

from .validate import check_int

__all__ = ["available_memory", "check_memory", "format_bytes"]


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation now, or ``None`` if unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def format_bytes(count) -> str:
    """``1.5 GiB``-style text for a byte count."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            return f"{value:.3g} {unit}" if unit != "B" else f"{int(value)} B"
        value /= 1024
    return f"{value:.3g} PiB"  # pragma: no cover


def check_max_bytes(max_bytes):
    """``None`` (the limit is the memory available) or a positive integer byte count.

    Parameters
    ----------
    max_bytes : int or None

    Returns
    -------
    int or None

    Raises
    ------
    ValueError
        If ``max_bytes`` is not None or an integer ``>= 1``.
    """
    return None if max_bytes is None else check_int("max_bytes", max_bytes, lo=1)


def check_memory(name: str, value, estimate_bytes, max_bytes=None) -> None:
    """Raise ``ValueError`` if ``estimate_bytes`` exceeds ``max_bytes`` (default: the memory
    available now). ``name``/``value`` are the parameter that sets the size, for the message."""
    if max_bytes is None:
        limit, source = available_memory(), "available memory"
        if limit is None:
            return
    else:
        limit, source = check_max_bytes(max_bytes), "max_bytes"
    if estimate_bytes > limit:
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:40] + "..."
        raise ValueError(f"{name}={shown} needs about {format_bytes(estimate_bytes)} of working "
                         f"memory, more than the limit of {format_bytes(limit)} ({source}); "
                         f"choose a smaller {name}")
