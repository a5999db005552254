import time, numpy as np
from sia_theory.models.runs import pretrained, schemes, TRAIN_LENGTH
from sia_theory.models.corpus import passkey_prompt, score_passkey
model, tok = pretrained()
base = model.default_position.base if hasattr(model.default_position, "base") else 1e5
sch = {s.name: s for s in schemes(9216, base)}
print("base", base, flush=True)
for name, depth in (("ntk", 0.1), ("rope", 0.9)):
    t0 = time.time()
    s = sch[name]
    p = passkey_prompt(tok.encode, 60264, depth, 9216)
    cache = model.prefill(p.ids, s.score_mod, s.position)
    first = cache.last_logits[None]
    rest = model.continue_(cache, p.answer[:-1])
    logits = np.vstack([first, rest])
    r = score_passkey(logits, p.answer, p.digit_start)
    top = np.argsort(first[0])[::-1][:3]
    lp = first[0] - (first[0].max() + np.log(np.exp(first[0] - first[0].max()).sum()))
    print(name, depth, r, [(tok.decode([int(i)]), round(float(lp[i]), 2)) for i in top], "space lp", round(float(lp[p.answer[0]]), 2), round(time.time() - t0), "s", flush=True)
