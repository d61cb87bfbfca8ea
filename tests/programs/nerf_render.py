# NeRF-style volume rendering of a 1-D "scene" along rays: Fourier-feature positional encoding, an MLP giving
# density (softplus) and colour (sigmoid), stratified samples from torch.linspace plus jitter, alpha
# compositing with an exclusive cumulative product of transmittance (torch.cumprod over a cat'ed ones column),
# hierarchical importance sampling by inverse-CDF with torch.searchsorted(right=True), torch.sort of the
# merged samples, and an MSE photometric loss with a PSNR report.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
near, far, n_coarse, n_fine = 0.0, 4.0, 16, 16


def encode(x, n_freq=4):
    freqs = 2.0 ** torch.arange(n_freq) * math.pi
    ang = x.unsqueeze(-1) * freqs
    return torch.cat([x.unsqueeze(-1), torch.sin(ang), torch.cos(ang)], dim=-1)


class Field(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2 + 2 * 8, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))

    def forward(self, pos, offset):
        h = self.net(torch.cat([encode(pos), encode(offset.expand_as(pos))], dim=-1))
        return F.softplus(h[..., 0]), torch.sigmoid(h[..., 1:])


def render(field, t, offset):
    sigma, rgb = field(t, offset)
    delta = torch.cat([t[..., 1:] - t[..., :-1], torch.full_like(t[..., :1], 1e10)], dim=-1)
    alpha = 1 - torch.exp(-sigma * delta)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[..., :1]), 1 - alpha + 1e-10], dim=-1), dim=-1)[..., :-1]
    w = alpha * trans
    return (w.unsqueeze(-1) * rgb).sum(-2), w


def sample_pdf(bins, weights, n):
    pdf = (weights + 1e-5) / (weights + 1e-5).sum(-1, keepdim=True)
    cdf = torch.cat([torch.zeros_like(pdf[..., :1]), torch.cumsum(pdf, -1)], dim=-1)
    u = torch.linspace(0.0, 1.0, n).expand(cdf.shape[0], n).contiguous()
    idx = torch.searchsorted(cdf, u, right=True).clamp(1, cdf.shape[-1] - 1)
    lo, hi = cdf.gather(-1, idx - 1), cdf.gather(-1, idx)
    b_lo, b_hi = bins.gather(-1, idx - 1), bins.gather(-1, idx)
    frac = (u - lo) / (hi - lo).clamp(min=1e-5)
    return b_lo + frac * (b_hi - b_lo)


def target_colour(offset):
    # a surface at depth 2 + offset, red in front, blue behind (what a ray sees is the front colour)
    return torch.stack([0.9 - 0.3 * offset, 0.2 + 0.2 * offset, 0.1 + 0 * offset], dim=-1).squeeze(1)


field = Field()
opt = torch.optim.Adam(field.parameters(), lr=5e-3)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=40)
for step in range(40):
    offset = torch.rand(32, 1) - 0.5
    t = torch.linspace(near, far, n_coarse).expand(32, n_coarse)
    t = t + (torch.rand(32, n_coarse) - 0.5) * (far - near) / n_coarse
    colour, w = render(field, t, offset)
    with torch.no_grad():
        t_fine = sample_pdf(t, w[..., 1:], n_fine)  # one weight per interval between the coarse samples
    t_all, _ = torch.sort(torch.cat([t, t_fine], dim=-1), dim=-1)
    colour_fine, _ = render(field, t_all, offset)
    loss = F.mse_loss(colour, target_colour(offset)) + F.mse_loss(colour_fine, target_colour(offset))
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if step % 10 == 9:
        psnr = -10 * torch.log10(F.mse_loss(colour_fine, target_colour(offset)))
        print(f"step {step + 1} loss {loss.item():.5f} psnr {psnr.item():.2f} lr {sched.get_last_lr()[0]:.5f}")

with torch.no_grad():
    offset = torch.linspace(-0.5, 0.5, 5).unsqueeze(1)
    t = torch.linspace(near, far, 64).expand(5, 64)
    colour, w = render(field, t, offset)
    depth = (w * t).sum(-1)
    print("rendered", [[round(c, 3) for c in row] for row in colour.tolist()])
    print("expected", [[round(c, 3) for c in row] for row in target_colour(offset).tolist()])
    print(f"weights sum {w.sum(-1).min():.4f}..{w.sum(-1).max():.4f} depth {[round(d, 3) for d in depth.tolist()]}")
