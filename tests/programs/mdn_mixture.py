# A mixture-density network for a one-to-many curve: the network outputs mixture logits, means and log-scales,
# the likelihood is a torch.distributions.MixtureSameFamily(Categorical, Normal); NLL training with Adam,
# then the mixture's mean/stddev, the most likely component per input and a log_prob grid under no_grad.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, MixtureSameFamily, Normal


class MDN(nn.Module):
    def __init__(self, hidden=24, k=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, k)
        self.mu = nn.Linear(hidden, k)
        self.log_sigma = nn.Linear(hidden, k)

    def forward(self, x):
        h = self.body(x)
        sigma = F.softplus(self.log_sigma(h)) + 1e-3
        mix = Categorical(logits=self.pi(h))
        return MixtureSameFamily(mix, Normal(self.mu(h), sigma))


torch.manual_seed(0)
y = torch.rand(200, 1) * 2 - 1
x = y + 0.3 * torch.sin(2 * math.pi * y) + 0.05 * torch.randn(200, 1)   # inverse problem: x -> several y
model = MDN()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(60):
    dist = model(x)
    loss = -dist.log_prob(y.squeeze(-1)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 15 == 0:
        print(f"step {step:2d} nll {loss.item():.4f}")

with torch.no_grad():
    grid = torch.linspace(-1, 1, 5).unsqueeze(-1)
    dist = model(grid)
    print("mean", dist.mean.numpy().round(3))
    print("std", dist.stddev.numpy().round(3))
    print("top component", dist.mixture_distribution.probs.argmax(-1).tolist())
    ys = torch.linspace(-1, 1, 4)
    table = dist.log_prob(ys.view(-1, 1, 1).expand(-1, 5, 1).squeeze(-1))
    print("log_prob grid shape", tuple(table.shape))
    print(table.round(decimals=3))
    print("batch/event", dist.batch_shape, dist.event_shape)
