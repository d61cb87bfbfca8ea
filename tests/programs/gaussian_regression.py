# Heteroscedastic regression: a network predicting mean and log-variance, nn.GaussianNLLLoss against a
# hand-written NLL with torch.distributions.Normal, softplus, LBFGS fine-tuning with a closure, and
# a StepLR schedule on the first phase. (LBFGS with a fixed step of 0.5 and no line search oscillated on this
# ill-conditioned least-squares problem: float32 rounding grew to 2% within 30 steps, in torch as much as here.
# In float32 even strong-Wolfe LBFGS carries the BLAS kernels' rounding, which differs between CPUs, to 5e-4 of the
# loss by its third step, so the program runs in float64, as LBFGS users often do.)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.set_default_dtype(torch.float64)

x = torch.linspace(-2, 2, 64).unsqueeze(1)
y = torch.sin(2 * x) + 0.1 * (1 + x.abs()) * torch.randn_like(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
        self.mu = nn.Linear(32, 1)
        self.var = nn.Linear(32, 1)

    def forward(self, x):
        h = self.body(x)
        return self.mu(h), F.softplus(self.var(h)) + 1e-4


net = Net()
crit = nn.GaussianNLLLoss()
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
for epoch in range(30):
    mu, var = net(x)
    loss = crit(mu, y, var)
    manual = -Normal(mu, var.sqrt()).log_prob(y).mean() - 0.5 * math.log(2 * math.pi)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if epoch % 10 == 0:
        print(f"epoch {epoch} nll {loss.item():.4f} manual {manual.item():.4f} lr {sched.get_last_lr()[0]}")

lbfgs = torch.optim.LBFGS(net.mu.parameters(), lr=0.5, max_iter=10, history_size=5, line_search_fn="strong_wolfe")


def closure():
    lbfgs.zero_grad()
    mu, var = net(x)
    loss = crit(mu, y, var.detach())
    loss.backward()
    return loss


for i in range(3):
    l = lbfgs.step(closure)
    print(f"lbfgs {i} {l.item():.4f}")
with torch.no_grad():
    mu, var = net(x)
    inside = ((y - mu).abs() < 2 * var.sqrt()).float().mean()
print(f"coverage {inside.item():.3f}")
