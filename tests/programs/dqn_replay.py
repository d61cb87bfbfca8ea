# DQN on a toy chain environment: a deque replay buffer, epsilon-greedy actions, gather of Q-values,
# a target network synced with load_state_dict, smooth_l1_loss and Huber-style clipping.
import random
from collections import deque, namedtuple
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)
Transition = namedtuple("Transition", ["s", "a", "r", "s2", "done"])
N_STATES, N_ACTIONS = 6, 2


def step_env(s, a):
    s2 = min(s + 1, N_STATES - 1) if a == 1 else max(s - 1, 0)
    r = 1.0 if s2 == N_STATES - 1 else -0.01
    return s2, r, s2 == N_STATES - 1


def one_hot(s):
    v = torch.zeros(N_STATES)
    v[s] = 1.0
    return v


policy = nn.Sequential(nn.Linear(N_STATES, 32), nn.ReLU(), nn.Linear(32, N_ACTIONS))
target = nn.Sequential(nn.Linear(N_STATES, 32), nn.ReLU(), nn.Linear(32, N_ACTIONS))
target.load_state_dict(policy.state_dict())
target.eval()
opt = torch.optim.RMSprop(policy.parameters(), lr=1e-2)
memory = deque(maxlen=500)
eps = 1.0
total_steps = 0
for episode in range(12):
    s = 0
    ret = 0.0
    for t in range(20):
        if random.random() < eps:
            a = random.randrange(N_ACTIONS)
        else:
            with torch.no_grad():
                a = policy(one_hot(s).unsqueeze(0)).argmax(dim=1).item()
        s2, r, done = step_env(s, a)
        memory.append(Transition(s, a, r, s2, done))
        ret += r
        s = s2
        total_steps += 1
        if len(memory) >= 32:
            batch = Transition(*zip(*random.sample(memory, 32)))
            S = torch.stack([one_hot(x) for x in batch.s])
            A = torch.tensor(batch.a).unsqueeze(1)
            R = torch.tensor(batch.r, dtype=torch.float32)
            S2 = torch.stack([one_hot(x) for x in batch.s2])
            D = torch.tensor(batch.done, dtype=torch.bool)
            q = policy(S).gather(1, A).squeeze(1)
            with torch.no_grad():
                next_q = target(S2).max(1).values
                next_q[D] = 0.0
            loss = F.smooth_l1_loss(q, R + 0.9 * next_q)
            opt.zero_grad()
            loss.backward()
            for p in policy.parameters():
                p.grad.data.clamp_(-1, 1)
            opt.step()
        if done:
            break
    eps = max(0.05, eps * 0.7)
    if episode % 4 == 3:
        target.load_state_dict(policy.state_dict())
    print(f"episode {episode:2d} return {ret:+.2f} eps {eps:.2f} steps {total_steps}")
with torch.no_grad():
    qs = policy(torch.eye(N_STATES))
print("greedy actions", qs.argmax(1).tolist())
