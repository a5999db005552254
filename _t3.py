import pandas as pd
from paper_checks.ext_trichotomy import decide_ext3, decide_ext2, frozen_gap
from paper_checks.core import NEGATIVE_CONTROLS
from sia_theory.studies.ext_trichotomy import TrichotomySettings, prefactor_estimates
f = pd.read_csv("figures/ext_trichotomy_entropy.csv")
m = decide_ext3(f, TrichotomySettings.full()); print(m.verdict, m.value); print(m.measured); print(m.detail)
est = pd.concat([prefactor_estimates(f, d) for d in (2,5,10)])
m = decide_ext2(est, 1.57); print(m.verdict, m.value, m.ci_low, m.ci_high); print(m.measured)
for cid in ("EXT-2", "EXT-3"):
    for name, fn in NEGATIVE_CONTROLS[cid].items():
        r = fn(); print(cid, name, r.verdict, r.value, r.measured[:150])
