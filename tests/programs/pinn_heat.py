# A physics-informed network for u'' = -pi^2 sin(pi x): derivatives by torch.autograd.grad with
# create_graph=True, a boundary loss, Adam, and the residual printed with f-strings.
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
x = torch.linspace(0, 1, 32).reshape(-1, 1).requires_grad_(True)
xb = torch.tensor([[0.0], [1.0]])


def residual(x):
    u = net(x)
    du = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]
    d2u = torch.autograd.grad(du, x, grad_outputs=torch.ones_like(du), create_graph=True)[0]
    return d2u + math.pi ** 2 * torch.sin(math.pi * x)


for it in range(40):
    opt.zero_grad()
    r = residual(x)
    loss = (r ** 2).mean() + (net(xb) ** 2).mean()
    loss.backward()
    opt.step()
    if it % 10 == 0:
        print(f"it {it:3d} loss {loss.item():.5f} |r|max {r.abs().max().item():.4f}")
with torch.no_grad():
    err = (net(x) - torch.sin(math.pi * x)).abs().max()
print(f"max error {err.item():.4f}")
