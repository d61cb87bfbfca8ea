# A soft actor-critic style update on a 1-step continuous bandit: a tanh-squashed Gaussian policy written as
# TransformedDistribution(Normal, TanhTransform(cache_size=1)) so log_prob of the sampled action reuses the
# pre-tanh value, twin Q networks with torch.min, a learned temperature (log_alpha), Polyak-averaged target
# networks via copy.deepcopy and lerp_ under torch.no_grad().
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, TanhTransform, TransformedDistribution

torch.manual_seed(0)
obs_dim, act_dim = 3, 2


def reward(s, a):
    best = torch.tanh(s[:, :act_dim])
    return -((a - best) ** 2).sum(-1)


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU())
        self.mu = nn.Linear(32, act_dim)
        self.log_std = nn.Linear(32, act_dim)

    def forward(self, s):
        h = self.body(s)
        log_std = self.log_std(h).clamp(-5, 2)
        dist = TransformedDistribution(Normal(self.mu(h), log_std.exp()), [TanhTransform(cache_size=1)])
        a = dist.rsample()
        return a, dist.log_prob(a).sum(-1)


def q_net():
    return nn.Sequential(nn.Linear(obs_dim + act_dim, 32), nn.ReLU(), nn.Linear(32, 1))


actor, q1, q2 = Actor(), q_net(), q_net()
q1_targ, q2_targ = copy.deepcopy(q1), copy.deepcopy(q2)
for p in list(q1_targ.parameters()) + list(q2_targ.parameters()):
    p.requires_grad_(False)
log_alpha = torch.zeros(1, requires_grad=True)
target_entropy = -float(act_dim)
pi_opt = torch.optim.Adam(actor.parameters(), lr=3e-3)
q_opt = torch.optim.Adam(list(q1.parameters()) + list(q2.parameters()), lr=3e-3)
a_opt = torch.optim.Adam([log_alpha], lr=3e-3)

for step in range(60):
    s = torch.randn(32, obs_dim)
    with torch.no_grad():
        a, _ = actor(s)
    r = reward(s, a)
    sa = torch.cat([s, a], dim=1)
    q_loss = F.mse_loss(q1(sa).squeeze(-1), r) + F.mse_loss(q2(sa).squeeze(-1), r)
    q_opt.zero_grad()
    q_loss.backward()
    q_opt.step()

    a_new, logp = actor(s)
    sa_new = torch.cat([s, a_new], dim=1)
    q_min = torch.min(q1(sa_new), q2(sa_new)).squeeze(-1)
    alpha = log_alpha.exp().detach()
    pi_loss = (alpha * logp - q_min).mean()
    pi_opt.zero_grad()
    pi_loss.backward()
    pi_opt.step()

    alpha_loss = -(log_alpha * (logp.detach() + target_entropy)).mean()
    a_opt.zero_grad()
    alpha_loss.backward()
    a_opt.step()

    with torch.no_grad():
        for p, pt in zip(q1.parameters(), q1_targ.parameters()):
            pt.lerp_(p, 0.05)
        for p, pt in zip(q2.parameters(), q2_targ.parameters()):
            pt.mul_(0.95).add_(0.05 * p)
        q_targ = torch.min(q1_targ(sa), q2_targ(sa)).mean()
    if step % 15 == 0 or step == 59:
        print(f"step {step:2d} q_loss {q_loss.item():.4f} pi_loss {pi_loss.item():.4f} "
              f"alpha {log_alpha.exp().item():.4f} reward {r.mean().item():.4f} logp {logp.mean().item():.3f} "
              f"target q {q_targ.item():.4f}")

with torch.no_grad():
    s = torch.randn(256, obs_dim)
    h = actor.body(s)
    greedy = torch.tanh(actor.mu(h))
    print(f"greedy reward {reward(s, greedy).mean().item():.4f}; actions in (-1, 1): {bool((greedy.abs() < 1).all())}")
    gap = sum((p - pt).abs().sum() for p, pt in zip(q1.parameters(), q1_targ.parameters()))
    print(f"target gap {gap.item():.4f}")
