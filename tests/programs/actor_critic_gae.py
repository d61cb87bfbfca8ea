# Actor-critic on a toy 1-D reaching task with continuous actions: a shared trunk with policy and value heads,
# torch.distributions.Normal with a learned log_std Parameter, log_prob(...).sum(-1), entropy bonus,
# generalised advantage estimation (GAE) over a rollout, and advantage normalisation.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=2, act_dim=1, hidden=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.mu = nn.Linear(hidden, act_dim)
        self.value = nn.Linear(hidden, 1)
        self.log_std = nn.Parameter(torch.zeros(act_dim) - 0.5)

    def forward(self, obs):
        h = self.trunk(obs)
        return Normal(self.mu(h), self.log_std.exp()), self.value(h).squeeze(-1)


def env_step(pos, target, action):
    pos = pos + 0.1 * action.clamp(-1.0, 1.0)
    reward = -(pos - target).abs()
    return pos, reward


torch.manual_seed(0)
model = ActorCritic()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
gamma, lam = 0.99, 0.95
for update in range(6):
    pos, target = torch.zeros(8), torch.rand(8) * 2 - 1
    obs_buf, act_buf, logp_buf, rew_buf, val_buf = [], [], [], [], []
    with torch.no_grad():
        for t in range(10):
            obs = torch.stack([pos, target], dim=-1)
            dist, v = model(obs)
            a = dist.sample()
            obs_buf.append(obs)
            act_buf.append(a)
            logp_buf.append(dist.log_prob(a).sum(-1))
            val_buf.append(v)
            pos, r = env_step(pos, target, a.squeeze(-1))
            rew_buf.append(r)
        _, last_v = model(torch.stack([pos, target], dim=-1))
    rewards, values = torch.stack(rew_buf), torch.stack(val_buf)
    advantages = torch.zeros_like(rewards)
    gae = torch.zeros(8)
    for t in reversed(range(10)):
        next_v = last_v if t == 9 else values[t + 1]
        delta = rewards[t] + gamma * next_v - values[t]
        gae = delta + gamma * lam * gae
        advantages[t] = gae
    returns = advantages + values
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    obs = torch.cat(obs_buf)
    acts = torch.cat(act_buf)
    old_logp = torch.cat(logp_buf)
    for epoch in range(2):
        dist, v = model(obs)
        logp = dist.log_prob(acts).sum(-1)
        ratio = torch.exp(logp - old_logp)
        adv = advantages.flatten()
        clipped = torch.clamp(ratio, 0.8, 1.2) * adv
        policy_loss = -torch.min(ratio * adv, clipped).mean()
        value_loss = F.mse_loss(v, returns.flatten())
        entropy = dist.entropy().sum(-1).mean()
        loss = policy_loss + 0.5 * value_loss - 0.01 * entropy
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
    print(f"update {update}: return {rewards.sum(0).mean().item():.4f} policy {policy_loss.item():.4f} "
          f"value {value_loss.item():.4f} entropy {entropy.item():.4f} std {model.log_std.exp().item():.4f}")
