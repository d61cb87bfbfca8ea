# WGAN-GP on 2-D Gaussian-mixture points: a critic without sigmoid, the gradient penalty computed with
# torch.autograd.grad(create_graph=True, grad_outputs=ones) on random interpolates, n_critic critic steps per
# generator step, Adam with betas=(0.5, 0.9), requires_grad toggling to freeze the critic, Wasserstein estimates.
import torch
import torch.nn as nn
from torch import autograd


def real_batch(n):
    centers = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    idx = torch.randint(0, 4, (n,))
    return centers[idx] + 0.1 * torch.randn(n, 2)


G = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
optG = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.9))
optD = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.9))
LAMBDA, n_critic, bs = 10.0, 3, 32


def gradient_penalty(D, real, fake):
    alpha = torch.rand(real.size(0), 1).expand_as(real)
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_int = D(interpolates)
    gradients = autograd.grad(outputs=d_int, inputs=interpolates, grad_outputs=torch.ones_like(d_int),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA


torch.manual_seed(0)
for it in range(15):
    for p in D.parameters():
        p.requires_grad = True
    for _ in range(n_critic):
        real = real_batch(bs)
        with torch.no_grad():
            fake = G(torch.randn(bs, 4))
        D.zero_grad()
        d_real = D(real).mean()
        d_fake = D(fake).mean()
        gp = gradient_penalty(D, real, fake)
        d_cost = d_fake - d_real + gp
        d_cost.backward()
        optD.step()
        w_dist = d_real - d_fake
    for p in D.parameters():
        p.requires_grad = False
    G.zero_grad()
    g_cost = -D(G(torch.randn(bs, 4))).mean()
    g_cost.backward()
    optG.step()
    if it % 5 == 0:
        print(f"it {it:2d} D {d_cost.item():.4f} G {g_cost.item():.4f} W {w_dist.item():.4f} gp {gp.item():.4f}")
print("critic frozen grads:", all(p.grad is None or p.grad.abs().sum() >= 0 for p in D.parameters()))
with torch.no_grad():
    samples = G(torch.randn(6, 4))
print(samples.numpy().round(3))
