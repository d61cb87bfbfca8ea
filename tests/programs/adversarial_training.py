# Adversarial robustness habits: FGSM with x.requires_grad_(), loss.backward() and x.grad.sign(), a PGD attack
# with projection by torch.min/torch.max onto the eps-ball and clamp to [0, 1], adversarial training mixing
# clean and adversarial losses, and clean/robust accuracy under torch.no_grad with model.eval().
import torch
import torch.nn as nn
import torch.nn.functional as F


def fgsm(model, x, y, eps):
    x = x.clone().detach().requires_grad_(True)
    loss = F.cross_entropy(model(x), y)
    model.zero_grad()
    loss.backward()
    return (x + eps * x.grad.sign()).clamp(0, 1).detach()


def pgd(model, x, y, eps, alpha, steps):
    x_adv = x.clone().detach()
    for _ in range(steps):
        x_adv.requires_grad_(True)
        loss = F.cross_entropy(model(x_adv), y)
        grad, = torch.autograd.grad(loss, [x_adv])
        x_adv = x_adv.detach() + alpha * grad.sign()
        x_adv = torch.min(torch.max(x_adv, x - eps), x + eps).clamp(0.0, 1.0)
    return x_adv


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    model.train()
    return acc


torch.manual_seed(0)
x = torch.rand(64, 1, 6, 6)
y = (x[:, 0, :3].mean((1, 2)) > x[:, 0, 3:].mean((1, 2))).long()
model = nn.Sequential(nn.Flatten(), nn.Linear(36, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
print(f"clean acc before {accuracy(model, x, y):.4f}")
for epoch in range(6):
    x_adv = fgsm(model, x, y, eps=0.03)
    opt.zero_grad()
    loss = 0.5 * F.cross_entropy(model(x), y) + 0.5 * F.cross_entropy(model(x_adv), y)
    loss.backward()
    opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
model.eval()
x_pgd = pgd(model, x, y, eps=0.05, alpha=0.02, steps=5)
print(f"max perturbation {(x_pgd - x).abs().max().item():.4f}")
print(f"clean acc {accuracy(model, x, y):.4f} robust acc {accuracy(model, x_pgd, y):.4f}")
print("in range", bool(((x_pgd >= 0) & (x_pgd <= 1)).all()))
