# MAML on sine-wave regression: tasks with random amplitude and phase, an inner loop of SGD steps taken with
# torch.autograd.grad(create_graph=True) on a dict of fast weights, the query loss differentiated through the
# inner loop into the meta-parameters, and a meta-update with Adam; finally a few-shot adaptation to a new task.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call


def sample_task():
    amp = torch.rand(1) * 4 + 1
    phase = torch.rand(1) * 3.14

    def draw(n):
        x = torch.rand(n, 1) * 10 - 5
        return x, amp * torch.sin(x + phase)

    return draw


net = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
torch.manual_seed(0)
print(f"untrained output {net(torch.zeros(1, 1)).item():.5f}")
meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
inner_lr, inner_steps = 0.01, 2


def adapt(params, x, y, create_graph):
    fast = dict(params)
    for _ in range(inner_steps):
        loss = F.mse_loss(functional_call(net, fast, (x,)), y)
        grads = torch.autograd.grad(loss, list(fast.values()), create_graph=create_graph)
        fast = {name: w - inner_lr * g for (name, w), g in zip(fast.items(), grads)}
    return fast


for it in range(12):
    meta_opt.zero_grad()
    meta_loss = 0.0
    for _ in range(3):
        draw = sample_task()
        xs, ys = draw(10)
        xq, yq = draw(10)
        fast = adapt(dict(net.named_parameters()), xs, ys, create_graph=True)
        meta_loss = meta_loss + F.mse_loss(functional_call(net, fast, (xq,)), yq)
    meta_loss = meta_loss / 3
    meta_loss.backward()
    meta_opt.step()
    if it % 4 == 0:
        gnorm = torch.norm(torch.stack([p.grad.norm() for p in net.parameters()]))
        print(f"iter {it:2d} meta-loss {meta_loss.item():.4f} grad-norm {gnorm.item():.4f}")

draw = sample_task()
xs, ys = draw(10)
xq, yq = draw(20)
with torch.no_grad():
    before = F.mse_loss(net(xq), yq).item()
fast = adapt({k: v.detach().requires_grad_() for k, v in net.named_parameters()}, xs, ys, create_graph=False)
with torch.no_grad():
    after = F.mse_loss(functional_call(net, fast, (xq,)), yq).item()
print(f"few-shot: before {before:.4f} after {after:.4f}")
print("second-order grads kept:", all(p.grad is not None for p in net.parameters()))
