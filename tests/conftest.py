import os

import matplotlib

matplotlib.use("Agg")
# Tests must not depend on the developer's thread settings; determinism tests set their own.
os.environ.setdefault("NUMBA_NUM_THREADS", "2")
