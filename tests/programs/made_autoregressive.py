# MADE, a masked autoencoder for binary vectors: connectivity masks built from random degrees and held by
# register_buffer, a MaskedLinear module that multiplies its weight by the mask in F.linear, the negative
# log-likelihood from torch.distributions.Bernoulli, an order-agnostic resample of the masks, and exact
# sequential sampling.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Bernoulli


class MaskedLinear(nn.Linear):
    def __init__(self, in_features, out_features):
        super().__init__(in_features, out_features)
        self.register_buffer("mask", torch.ones(out_features, in_features))

    def set_mask(self, mask):
        self.mask.data.copy_(mask.float().T)

    def forward(self, x):
        return F.linear(x, self.weight * self.mask, self.bias)


class MADE(nn.Module):
    def __init__(self, d, hidden=24):
        super().__init__()
        self.d = d
        self.layers = nn.ModuleList([MaskedLinear(d, hidden), MaskedLinear(hidden, hidden), MaskedLinear(hidden, d)])
        self.update_masks(torch.arange(d))

    def update_masks(self, order):
        degrees = [order]
        for layer in self.layers[:-1]:
            degrees.append(torch.randint(int(degrees[-1].min()), self.d - 1, (layer.out_features,)))
        masks = [degrees[i][:, None] <= degrees[i + 1][None, :] for i in range(len(degrees) - 1)]
        masks.append(degrees[-1][:, None] < order[None, :])
        for layer, m in zip(self.layers, masks):
            layer.set_mask(m)

    def forward(self, x):
        h = x
        for layer in self.layers[:-1]:
            h = F.relu(layer(h))
        return self.layers[-1](h)


torch.manual_seed(0)
d = 8
proto = torch.tensor([[1, 1, 0, 0, 1, 1, 0, 0], [0, 0, 1, 1, 0, 0, 1, 1]]).float()
which = torch.randint(0, 2, (64,))
flips = torch.rand(64, d) < 0.1
data = (proto[which] + flips.float()) % 2

model = MADE(d)
print("mask sums:", [int(layer.mask.sum()) for layer in model.layers])
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(60):
    logits = model(data)
    nll = -Bernoulli(logits=logits).log_prob(data).sum(-1).mean()
    opt.zero_grad()
    nll.backward()
    opt.step()
    if epoch % 20 == 19:
        print(f"epoch {epoch + 1}: nll {nll.item():.4f} bits/dim {nll.item() / d / 0.6931:.4f}")

with torch.no_grad():
    # autoregressive check: output i must not depend on inputs at or after position i in the order
    x = data[:1].clone().requires_grad_(True)
with torch.enable_grad():
    out = model(x)
    jac = torch.stack([torch.autograd.grad(out[0, i], x, retain_graph=True)[0][0] for i in range(d)])
print("strictly lower-triangular dependence:", bool((jac.triu() == 0).all()))

model.eval()
with torch.no_grad():
    samples = torch.zeros(5, d)
    for i in range(d):
        p = torch.sigmoid(model(samples)[:, i])
        samples[:, i] = torch.bernoulli(p)
    print(samples.int())
    perm = torch.randperm(d)
    model.update_masks(perm)
    print("reordered:", perm.tolist(), "mask sums:", [int(layer.mask.sum()) for layer in model.layers])
