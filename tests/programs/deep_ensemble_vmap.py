# A deep ensemble trained and evaluated the torch.func way (the "model ensembling" tutorial): several copies of
# one MLP, their parameters stacked with torch.func.stack_module_state, a stateless base model (the tutorial
# moves it to the "meta" device; a CPU copy here, as shapetorch has no meta device), functional_call vmapped over
# the ensemble dimension, one optimizer over the stacked tensors, and the predictive mean, the spread between
# members, and an accuracy / disagreement report on held-out data.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap

torch.manual_seed(0)
n_models = 4
X = torch.randn(256, 2)
y = ((X[:, 0] * X[:, 1]) > 0).long()
Xt = torch.randn(128, 2)
yt = ((Xt[:, 0] * Xt[:, 1]) > 0).long()

models = [nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 2)) for _ in range(n_models)]
with torch.no_grad():
    for i, m in enumerate(models):
        print(f"member {i} initial loss {F.cross_entropy(m(X), y).item():.4f}")

params, buffers = stack_module_state(models)
print({k: tuple(v.shape) for k, v in params.items()})
base = copy.deepcopy(models[0])  # the tutorial moves it to "meta"; shapetorch has no meta device


def fmodel(p, b, x):
    return functional_call(base, (p, b), (x,))


ensemble = vmap(fmodel, in_dims=(0, 0, None))
opt = torch.optim.Adam(params.values(), lr=1e-2)
for step in range(100):
    logits = ensemble(params, buffers, X)  # (models, batch, classes)
    loss = F.cross_entropy(logits.reshape(-1, 2), y.repeat(n_models))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 25 == 0:
        print(f"step {step} loss {loss.item():.4f}")

with torch.no_grad():
    probs = ensemble(params, buffers, Xt).softmax(-1)
    member_acc = (probs.argmax(-1) == yt).float().mean(dim=1)
    mean = probs.mean(0)
    ens_acc = (mean.argmax(-1) == yt).float().mean()
    disagree = (probs.argmax(-1) != mean.argmax(-1)).float().mean()
    entropy = -(mean * mean.clamp_min(1e-12).log()).sum(-1)
    print("member accuracy", [f"{a:.3f}" for a in member_acc.tolist()])
    print(f"ensemble accuracy {ens_acc:.3f} disagreement {disagree:.3f} mean entropy {entropy.mean():.4f}")
    print(f"spread of p(class 1) {probs[..., 1].std(0).mean():.4f}")
