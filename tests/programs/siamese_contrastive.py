# A siamese network for pair verification: one shared encoder applied to both inputs, the contrastive loss
# (Hadsell et al.) from F.pairwise_distance with a margin clamp, F.cosine_similarity scores, a threshold chosen
# on validation pairs with torch.linspace, and accuracy / ROC-style counts computed with boolean masks. The Linear
# before BatchNorm has no bias (BatchNorm removes it; its gradient is rounding noise that Adam would amplify).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 32, bias=False), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 8))

    def forward(self, x):
        return self.net(x)


class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    def forward(self, a, b):
        return self.encoder(a), self.encoder(b)


def contrastive_loss(za, zb, same, margin=2.0):
    d = F.pairwise_distance(za, zb)
    return (same * d.pow(2) + (1 - same) * torch.clamp(margin - d, min=0.0).pow(2)).mean()


def make_pairs(n):
    centers = torch.randn(4, 10) * 2
    ca, cb = torch.randint(0, 4, (n,)), torch.randint(0, 4, (n,))
    same = (ca == cb).float()
    a = centers[ca] + 0.5 * torch.randn(n, 10)
    b = centers[cb] + 0.5 * torch.randn(n, 10)
    return a, b, same


torch.manual_seed(0)
a, b, same = make_pairs(128)
va, vb, vsame = make_pairs(64)
model = Siamese()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(8):
    model.train()
    perm = torch.randperm(128)
    running = 0.0
    for i in range(0, 128, 32):
        idx = perm[i:i + 32]
        za, zb = model(a[idx], b[idx])
        loss = contrastive_loss(za, zb, same[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        running += loss.item()
    print(f"epoch {epoch} loss {running / 4:.4f}")
model.eval()
with torch.no_grad():
    za, zb = model(va, vb)
    dist = F.pairwise_distance(za, zb)
    cos = F.cosine_similarity(za, zb, dim=1)
best_acc, best_t = 0.0, 0.0
for t in torch.linspace(0.1, 3.0, 30):
    acc = ((dist < t).float() == vsame).float().mean().item()
    if acc > best_acc:
        best_acc, best_t = acc, t.item()
pred = dist < best_t
tp = (pred & (vsame == 1)).sum().item()
fp = (pred & (vsame == 0)).sum().item()
fn = (~pred & (vsame == 1)).sum().item()
print(f"threshold {best_t:.3f} acc {best_acc:.4f} tp {tp} fp {fp} fn {fn}")
print(f"mean cos same {cos[vsame == 1].mean():.4f} different {cos[vsame == 0].mean():.4f}")
print("running stats", model.encoder.net[1].running_mean[:3], model.encoder.net[1].num_batches_tracked.item())
