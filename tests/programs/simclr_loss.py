# SimCLR's NT-Xent loss on two augmented views: F.normalize, a similarity matrix, the diagonal masked with
# -inf, positives found by index arithmetic, cross_entropy; a projection head trained with SGD + momentum.
import torch
import torch.nn as nn
import torch.nn.functional as F


def nt_xent(z1, z2, temperature=0.5):
    n = z1.shape[0]
    z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    sim = z @ z.T / temperature
    mask = torch.eye(2 * n, dtype=torch.bool)
    sim = sim.masked_fill(mask, float("-inf"))
    targets = torch.arange(2 * n)
    targets = (targets + n) % (2 * n)
    return F.cross_entropy(sim, targets)


encoder = nn.Sequential(nn.Linear(12, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 16))
head = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 8))
params = list(encoder.parameters()) + list(head.parameters())
opt = torch.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)

data = torch.randn(24, 12)
history = []
for epoch in range(6):
    noise1 = 0.1 * torch.randn_like(data)
    noise2 = 0.1 * torch.randn_like(data)
    v1, v2 = data + noise1, data * (1 + noise2)
    loss = nt_xent(head(encoder(v1)), head(encoder(v2)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(loss.item())
    print(f"epoch {epoch} nt-xent {loss.item():.5f}")

encoder.eval()
with torch.no_grad():
    feats = F.normalize(encoder(data), dim=-1)
    sims = feats @ feats.t()
    top = sims.topk(3, dim=1)
print("nearest:", top.indices[:4].tolist())
print("mean self-sim", sims.diagonal().mean().item())
print("running_mean", encoder[1].running_mean[:4])
print("improved:", history[-1] < history[0])
