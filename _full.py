import time, dataclasses, sys
from sia_theory.training import train, TrainSettings
kw = eval("dict(" + (sys.argv[1] if len(sys.argv) > 1 else "") + ")")
s = dataclasses.replace(TrainSettings.full(), **kw)
t = time.time()
r = train(kw.pop("scheme", "si-p-rope") if False else "si-p-rope", s, seed=0)
el = time.time() - t
st = r.seconds
print(kw, f"total {el:.1f}s compile {st['compile']:.1f} train {st['train']:.1f} eval {st['evaluate']:.1f} per-step {(st['train']-st['compile'])/(s.steps-1):.3f}s")
print({k: round(v, 4) for k, v in r.validation.items()}, r.validation_curve)
