# Entropic optimal transport by hand: a squared-distance cost from cdist, log-domain Sinkhorn iterations with
# logsumexp, the transport plan and its marginals, then a point cloud moved by gradient descent on the
# Sinkhorn cost (the autograd goes through all the iterations), logged with .item().
import math

import torch


def sinkhorn(x, y, eps=0.1, iters=50):
    n, m = x.shape[0], y.shape[0]
    C = torch.cdist(x, y) ** 2
    log_a = torch.full((n,), -math.log(n))
    log_b = torch.full((m,), -math.log(m))
    f = torch.zeros(n)
    g = torch.zeros(m)
    for _ in range(iters):
        f = -eps * torch.logsumexp((g[None, :] - C) / eps + log_b[None, :], dim=1)
        g = -eps * torch.logsumexp((f[:, None] - C) / eps + log_a[:, None], dim=0)
    log_P = (f[:, None] + g[None, :] - C) / eps + log_a[:, None] + log_b[None, :]
    P = log_P.exp()
    return (P * C).sum(), P


torch.manual_seed(0)
x = torch.randn(12, 2)
y = torch.randn(10, 2) * 0.5 + torch.tensor([2.0, 1.0])
cost, P = sinkhorn(x, y)
print(f"cost {cost.item():.5f}")
print("row sums", P.sum(1).numpy().round(4))
print("col sums", P.sum(0).numpy().round(4))
print("argmax plan", P.argmax(dim=1).tolist())

x = x.clone().requires_grad_(True)
opt = torch.optim.SGD([x], lr=2.0)
for step in range(25):
    cost, _ = sinkhorn(x, y, iters=30)
    opt.zero_grad()
    cost.backward()
    opt.step()
    if step % 6 == 0:
        print(f"step {step:2d} cost {cost.item():.5f} grad {x.grad.norm().item():.5f}")
print("moved mean", x.detach().mean(0).numpy().round(3), "target mean", y.mean(0).numpy().round(3))
