"""``python -m sia_theory``: the ``sia-theory`` command."""

import sys

from .cli import main

sys.exit(main())
