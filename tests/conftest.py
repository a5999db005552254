import os

import matplotlib

matplotlib.use("Agg")
# Tests must not depend on the developer's thread settings; determinism tests set their own.
os.environ.setdefault("NUMBA_NUM_THREADS", "2")

# Figure scripts share helpers as experiments/_*.py; a script run directly finds them beside
# itself, and tests that load a script by path need the folder on sys.path too.
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
