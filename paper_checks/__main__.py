"""``python -m paper_checks``: ``python -m sia_theory.claims`` (``sia-theory check``)."""

import sys

from sia_theory.claims.__main__ import main

sys.exit(main())
