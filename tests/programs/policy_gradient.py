# REINFORCE on a toy corridor: a policy network, torch.distributions.Categorical sampling, discounted
# returns normalized with mean/std, and the policy-gradient loss.
import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions import Categorical


class Corridor:
    def reset(self):
        self.pos = 0
        return self.obs()

    def obs(self):
        return [float(self.pos == i) for i in range(5)]

    def step(self, action):
        self.pos = max(0, min(4, self.pos + (1 if action == 1 else -1)))
        done = self.pos == 4
        return self.obs(), (1.0 if done else -0.1), done


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(5, 16)
        self.affine2 = nn.Linear(16, 2)

    def forward(self, x):
        return torch.softmax(self.affine2(torch.relu(self.affine1(x))), dim=1)


torch.manual_seed(543)
policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
eps = 1e-7
env = Corridor()
for episode in range(5):
    state, rewards, log_probs = env.reset(), [], []
    for t in range(12):
        probs = policy(torch.tensor(state).unsqueeze(0))
        m = Categorical(probs)
        action = m.sample()
        log_probs.append(m.log_prob(action))
        state, reward, done = env.step(action.item())
        rewards.append(reward)
        if done:
            break
    R, returns = 0, []
    for r in rewards[::-1]:
        R = r + 0.99 * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    policy_loss = []
    for log_prob, R in zip(log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    print(f"Episode {episode}\tsteps: {len(rewards)}\treturn: {sum(rewards):.2f}\tloss: {policy_loss.item():.4f}")
