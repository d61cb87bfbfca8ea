# A RealNVP normalising flow on 2-D "two moons"-like points: affine coupling layers with alternating binary
# masks, scale through tanh, the log-determinant summed per sample, a MultivariateNormal base distribution,
# the negative log-likelihood trained with Adam, and sampling by running the flow backwards.
import math

import torch
import torch.nn as nn
from torch.distributions import MultivariateNormal


class Coupling(nn.Module):
    def __init__(self, mask, hidden=32):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 4))

    def forward(self, x):
        x_masked = x * self.mask
        s, t = self.net(x_masked).chunk(2, dim=1)
        s = torch.tanh(s) * (1 - self.mask)
        t = t * (1 - self.mask)
        y = x_masked + (1 - self.mask) * (x * torch.exp(s) + t)
        return y, s.sum(dim=1)

    def inverse(self, y):
        y_masked = y * self.mask
        s, t = self.net(y_masked).chunk(2, dim=1)
        s = torch.tanh(s) * (1 - self.mask)
        t = t * (1 - self.mask)
        return y_masked + (1 - self.mask) * ((y - t) * torch.exp(-s))


class RealNVP(nn.Module):
    def __init__(self, n_layers=4):
        super().__init__()
        masks = [torch.tensor([1.0, 0.0]) if i % 2 == 0 else torch.tensor([0.0, 1.0]) for i in range(n_layers)]
        self.layers = nn.ModuleList(Coupling(m) for m in masks)
        self.base = MultivariateNormal(torch.zeros(2), torch.eye(2))

    def forward(self, x):
        log_det = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        return x, log_det

    def log_prob(self, x):
        z, log_det = self(x)
        return self.base.log_prob(z) + log_det

    @torch.no_grad()
    def sample(self, n):
        z = torch.randn(n, 2)
        for layer in reversed(self.layers):
            z = layer.inverse(z)
        return z


def moons(n):
    theta = torch.rand(n) * math.pi
    upper = torch.rand(n) > 0.5
    x = torch.where(upper, torch.cos(theta), 1 - torch.cos(theta))
    y = torch.where(upper, torch.sin(theta), 0.5 - torch.sin(theta))
    return torch.stack([x, y], dim=1) + 0.05 * torch.randn(n, 2)


torch.manual_seed(0)
flow = RealNVP()
opt = torch.optim.Adam(flow.parameters(), lr=1e-3)
for step in range(30):
    x = moons(128)
    loss = -flow.log_prob(x).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step:3d} nll {loss.item():.4f}")
z, log_det = flow(moons(4))
print("latents", z)
print("log|det J|", log_det.detach())
samples = flow.sample(256)
print(f"samples mean {samples.mean(0).tolist()} std {samples.std(0).tolist()}")
x = moons(16)
print("round trip error", (flow.layers[0].inverse(flow.layers[0](x)[0]) - x).abs().max().item() < 1e-5)
