# An implicit neural representation with sine activations (SIREN): the paper's uniform initialisation written
# with nn.init under torch.no_grad(), fitting a 2-D signal on a coordinate grid, and the image gradient from
# torch.autograd.grad(create_graph=True) entering the loss (a gradient-matching term).
import math

import torch
from torch import nn


class SineLayer(nn.Module):
    def __init__(self, in_f, out_f, first=False, omega=30.0):
        super().__init__()
        self.omega = omega
        self.linear = nn.Linear(in_f, out_f)
        with torch.no_grad():
            bound = 1 / in_f if first else math.sqrt(6 / in_f) / omega
            self.linear.weight.uniform_(-bound, bound)

    def forward(self, x):
        return torch.sin(self.omega * self.linear(x))


class Siren(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.net = nn.Sequential(SineLayer(2, hidden, first=True), SineLayer(hidden, hidden), nn.Linear(hidden, 1))

    def forward(self, coords):
        return self.net(coords)


side = 12
lin = torch.linspace(-1, 1, side)
grid = torch.stack(torch.meshgrid(lin, lin, indexing="ij"), dim=-1).reshape(-1, 2)
signal = torch.sin(3 * grid[:, :1]) * torch.cos(2 * grid[:, 1:])
true_grad = torch.cat([3 * torch.cos(3 * grid[:, :1]) * torch.cos(2 * grid[:, 1:]),
                       -2 * torch.sin(3 * grid[:, :1]) * torch.sin(2 * grid[:, 1:])], dim=1)

torch.manual_seed(0)
model = Siren()
opt = torch.optim.Adam(model.parameters(), lr=1e-4)
for step in range(40):
    coords = grid.clone().requires_grad_(True)
    out = model(coords)
    (grad,) = torch.autograd.grad(out.sum(), coords, create_graph=True)
    fit = ((out - signal) ** 2).mean()
    grad_loss = ((grad - true_grad) ** 2).mean()
    loss = fit + 0.01 * grad_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 9:
        print(f"step {step + 1}: fit {fit.item():.5f} gradient term {grad_loss.item():.4f}")
with torch.no_grad():
    psnr = 10 * torch.log10(4 / ((model(grid) - signal) ** 2).mean())
print(f"PSNR {psnr.item():.3f} dB; first-layer weight range {model.net[0].linear.weight.abs().max().item():.4f}")
