"""sia-theory: executable theory of long-context attention scaling.

The transforms are the shared vocabulary: the closed forms, the Monte Carlo, the figures and the
attention reference all take a transform object.
"""

from . import attention
from .transforms import ALiBi, LogN, NoScale, ScaleInvariant, Transform

__all__ = [
    "attention",
    "ALiBi", "LogN", "NoScale", "ScaleInvariant", "Transform"]
__version__ = "0.1.0"
