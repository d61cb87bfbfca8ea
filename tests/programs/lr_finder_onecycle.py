# A learning-rate range test (exponentially growing lr, smoothed loss, stop on divergence, weights restored
# from a deepcopy of the state_dict), then training with OneCycleLR from the lr it suggests, and
# evaluation with torch.no_grad() and argmax accuracy.
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
X = torch.randn(256, 10)
w_true = torch.randn(10, 3)
y = (X @ w_true + 0.1 * torch.randn(256, 3)).argmax(dim=1)

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
with torch.no_grad():
    print(f"initial loss {F.cross_entropy(model(X), y).item():.4f}")
initial = copy.deepcopy(model.state_dict())
opt_state = copy.deepcopy(optimizer.state_dict())

start_lr, end_lr, num_iter = 1e-4, 10.0, 40
gamma = (end_lr / start_lr) ** (1 / num_iter)
lrs, losses = [], []
avg, best = 0.0, math.inf
for i in range(num_iter):
    lr = start_lr * gamma ** i
    for group in optimizer.param_groups:
        group["lr"] = lr
    idx = torch.randint(0, 256, (32,))
    loss = F.cross_entropy(model(X[idx]), y[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    avg = 0.7 * avg + 0.3 * loss.item()
    smoothed = avg / (1 - 0.7 ** (i + 1))
    lrs.append(lr)
    losses.append(smoothed)
    best = min(best, smoothed)
    if smoothed > 4 * best or math.isnan(smoothed):
        print(f"diverged at iteration {i}, lr {lr:.4g}")
        break
steepest = min(range(1, len(losses)), key=lambda j: losses[j] - losses[j - 1])
suggested = lrs[steepest]
print(f"tested {len(lrs)} lrs, steepest descent at lr {suggested:.4g}, min smoothed loss {best:.4f}")

model.load_state_dict(initial)
optimizer.load_state_dict(opt_state)
print("weights restored:", torch.equal(model[0].weight, initial["0.weight"]))
epochs, steps_per_epoch = 4, 8
sched = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=min(suggested, 1.0), epochs=epochs,
                                            steps_per_epoch=steps_per_epoch)
for epoch in range(epochs):
    model.train()
    perm = torch.randperm(256)
    for b in range(steps_per_epoch):
        idx = perm[b * 32 : (b + 1) * 32]
        loss = F.cross_entropy(model(X[idx]), y[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        sched.step()
    model.eval()
    with torch.no_grad():
        acc = (model(X).argmax(dim=1) == y).float().mean().item()
    print(f"epoch {epoch}: lr {sched.get_last_lr()[0]:.5f} momentum {optimizer.param_groups[0]['momentum']:.4f} "
          f"loss {loss.item():.4f} acc {acc:.3f}")
