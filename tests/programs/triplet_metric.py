# Metric learning: a TripletMarginLoss with online hard-negative mining from torch.cdist, a cosine
# embedding loss, pairwise_distance, and recall@1 evaluation with topk on a similarity matrix.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_cls, per = 5, 8
centers = torch.randn(n_cls, 6) * 2
X = torch.cat([centers[c] + 0.5 * torch.randn(per, 6) for c in range(n_cls)])
labels = torch.arange(n_cls).repeat_interleave(per)
net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))
crit = nn.TripletMarginLoss(margin=0.5, p=2)
cos_crit = nn.CosineEmbeddingLoss(margin=0.1)
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for epoch in range(25):
    emb = F.normalize(net(X), dim=1)
    d = torch.cdist(emb, emb)
    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    pos_d = d.masked_fill(~same | torch.eye(len(X), dtype=torch.bool), -1.0)
    neg_d = d.masked_fill(same, float("inf"))
    pos_idx = pos_d.argmax(1)
    neg_idx = neg_d.argmin(1)
    loss = crit(emb, emb[pos_idx], emb[neg_idx])
    target = torch.where(torch.rand(len(X)) < 0.5, 1, -1)
    partner = torch.where(target > 0, pos_idx, neg_idx)
    loss = loss + 0.5 * cos_crit(emb, emb[partner], target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 8 == 0:
        gap = (neg_d.min(1).values - pos_d.max(1).values).mean()
        print(f"epoch {epoch:2d} loss {loss.item():.4f} gap {gap.item():.4f}")
with torch.no_grad():
    emb = F.normalize(net(X), dim=1)
    sim = emb @ emb.T
    sim.fill_diagonal_(-2)
    nn1 = sim.topk(1, dim=1).indices.squeeze(1)
    print("recall@1", (labels[nn1] == labels).float().mean().item())
    print("pairwise", F.pairwise_distance(emb[:3], emb[3:6]).tolist())
