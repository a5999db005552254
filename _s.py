import pandas as pd, numpy as np
from sia_theory.studies.cas_depth import summarize_depth
from sia_theory.studies.cas_fig1_phase_diagram import summarize_phase_diagram
from sia_theory.studies.cas_fig2_jacobian import summarize_jacobian_sweep
g = pd.read_csv("figures/cas_depth_gaussian.csv")
s = summarize_depth(g); print({k: v for k, v in s.items()})
sup = g[(g.alpha==0)&(g.gamma_over_gc==g.gamma_over_gc.max())].pivot(index="sample", columns="layer", values="cos").to_numpy()
tot = sup[:,-1]-sup[:,0]; print(np.sort(tot).round(3), sup[:,0].round(2))
p = summarize_phase_diagram(pd.read_csv("figures/cas_fig1_phase_diagram_transition.csv"), pd.read_csv("figures/cas_fig1_phase_diagram_scaling.csv"))
print(p["by_d"])
print(pd.read_csv("figures/cas_fig2_jacobian_eta.csv").head())
print(pd.read_csv("figures/cas_transition_draws.csv").head(3).T)
