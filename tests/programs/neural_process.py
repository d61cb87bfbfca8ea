# A conditional neural process on random sine functions: encode (x, y) context pairs with an MLP, mean-pool
# into a representation, decode target x into a Normal (softplus-bounded scale), train by maximising the
# log-likelihood of targets with random context/target splits drawn by torch.randperm.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.manual_seed(0)


def sample_tasks(batch, n_points):
    amp = torch.rand(batch, 1, 1) * 2 + 0.5
    phase = torch.rand(batch, 1, 1) * 3.14
    x = torch.rand(batch, n_points, 1) * 8 - 4
    return x, amp * torch.sin(x + phase)


class CNP(nn.Module):
    def __init__(self, r_dim=32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, r_dim))
        self.decoder = nn.Sequential(nn.Linear(r_dim + 1, 32), nn.ReLU(), nn.Linear(32, 2))

    def forward(self, xc, yc, xt):
        r = self.encoder(torch.cat([xc, yc], dim=-1)).mean(dim=1, keepdim=True)
        r = r.expand(-1, xt.size(1), -1)
        out = self.decoder(torch.cat([r, xt], dim=-1))
        mu, raw = out.chunk(2, dim=-1)
        sigma = 0.1 + 0.9 * F.softplus(raw)
        return Normal(mu, sigma)


model = CNP()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
history = []
for it in range(60):
    x, y = sample_tasks(8, 20)
    perm = torch.randperm(20)
    n_ctx = 5 + it % 10
    ctx, _ = perm[:n_ctx], perm[n_ctx:]
    dist = model(x[:, ctx], y[:, ctx], x)
    loss = -dist.log_prob(y).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(loss.item())
    if it % 15 == 0:
        print(f"iter {it:2d} ctx {n_ctx:2d} nll {loss.item():.4f} mean sigma {dist.stddev.mean().item():.4f}")
print(f"first-10 mean nll {sum(history[:10]) / 10:.4f}, last-10 {sum(history[-10:]) / 10:.4f}")

model.eval()
with torch.no_grad():
    x, y = sample_tasks(1, 30)
    for k in (3, 10, 25):
        d = model(x[:, :k], y[:, :k], x[:, k:])
        mse = F.mse_loss(d.mean, y[:, k:]).item()
        cover = ((y[:, k:] - d.mean).abs() < 2 * d.stddev).float().mean().item()
        print(f"context {k:2d}: mse {mse:.4f} 2-sigma coverage {cover:.3f} nll {-d.log_prob(y[:, k:]).mean().item():.4f}")
