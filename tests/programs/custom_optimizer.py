# Writing one's own optimizer: a torch.optim.Optimizer subclass (defaults dict, per-parameter state, a closure,
# @torch.no_grad() step), Lion and SGD-with-Nesterov written by hand, add_param_group, state_dict /
# load_state_dict round trip, and comparing a hand-written step with torch.optim.SGD.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Optimizer


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        defaults = dict(lr=lr, betas=betas, weight_decay=weight_decay)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.data.mul_(1 - group["lr"] * group["weight_decay"])
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p)
                exp_avg = state["exp_avg"]
                beta1, beta2 = group["betas"]
                update = exp_avg * beta1 + grad * (1 - beta1)
                p.add_(torch.sign(update), alpha=-group["lr"])
                exp_avg.mul_(beta2).add_(grad, alpha=1 - beta2)
        return loss


class NesterovSGD(Optimizer):
    def __init__(self, params, lr, momentum=0.9):
        super().__init__(params, {"lr": lr, "momentum": momentum})

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                d_p = p.grad
                state = self.state[p]
                if "momentum_buffer" not in state:
                    buf = state["momentum_buffer"] = torch.clone(d_p).detach()
                else:
                    buf = state["momentum_buffer"]
                    buf.mul_(group["momentum"]).add_(d_p)
                d_p = d_p.add(buf, alpha=group["momentum"])
                p.add_(d_p, alpha=-group["lr"])


torch.manual_seed(0)
X = torch.randn(64, 10)
y = (X[:, 0] - 2 * X[:, 1] > 0).long()
model = nn.Sequential(nn.Linear(10, 16), nn.GELU(), nn.Linear(16, 2))
model(X)
opt = Lion(model[0].parameters(), lr=1e-3, weight_decay=0.1)
opt.add_param_group({"params": model[2].parameters(), "lr": 3e-3})
print("groups", len(opt.param_groups), [g["lr"] for g in opt.param_groups], opt.param_groups[1]["betas"])


def closure():
    opt.zero_grad()
    loss = F.cross_entropy(model(X), y)
    loss.backward()
    return loss


for step in range(8):
    loss = opt.step(closure)
    print(f"lion step {step} loss {loss.item():.5f}")
sd = opt.state_dict()
print("state keys", sorted(sd["state"].keys()), sorted(sd["state"][0].keys()))
opt2 = Lion(model[0].parameters(), lr=1e-3, weight_decay=0.1)
opt2.add_param_group({"params": model[2].parameters(), "lr": 3e-3})
opt2.load_state_dict(copy.deepcopy(sd))
print("restored", torch.equal(opt2.state[model[0].weight]["exp_avg"], opt.state[model[0].weight]["exp_avg"]))

a = nn.Linear(10, 2)
a(X)
b = copy.deepcopy(a)
mine = NesterovSGD(a.parameters(), lr=0.05)
ref = torch.optim.SGD(b.parameters(), lr=0.05, momentum=0.9, nesterov=True)
for step in range(5):
    for net, o in ((a, mine), (b, ref)):
        o.zero_grad()
        F.mse_loss(net(X), torch.ones(64, 2)).backward()
        o.step()
print("matches torch.optim.SGD", torch.allclose(a.weight, b.weight, atol=1e-6), f"{a.weight.norm().item():.5f}")
try:
    Lion(model.parameters(), lr=-1.0)
except ValueError as e:
    print("refused:", e)
