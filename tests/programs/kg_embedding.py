# TransE knowledge-graph embeddings: nn.Embedding with max-norm renormalisation done by hand, L1 distances,
# corrupted triples by torch.randint, MarginRankingLoss, and hits@k with cdist and topk.
import torch
import torch.nn as nn
import torch.nn.functional as F

n_ent, n_rel, dim = 20, 3, 8
ent = nn.Embedding(n_ent, dim)
rel = nn.Embedding(n_rel, dim)
triples = torch.stack([torch.randint(0, n_ent, (40,)), torch.randint(0, n_rel, (40,)), torch.randint(0, n_ent, (40,))], 1)
crit = nn.MarginRankingLoss(margin=1.0)
opt = torch.optim.SGD(list(ent.parameters()) + list(rel.parameters()), lr=0.05)


def score(h, r, t):
    return (ent(h) + rel(r) - ent(t)).norm(p=1, dim=-1)


for epoch in range(15):
    with torch.no_grad():
        ent.weight.div_(ent.weight.norm(dim=1, keepdim=True).clamp(min=1.0))
    h, r, t = triples.unbind(1)
    t_bad = torch.randint(0, n_ent, t.shape)
    pos, neg = score(h, r, t), score(h, r, t_bad)
    loss = crit(neg, pos, torch.ones_like(pos))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 5 == 0:
        print(f"epoch {epoch} loss {loss.item():.4f}")
with torch.no_grad():
    h, r, t = triples[:5].unbind(1)
    q = ent(h) + rel(r)
    d = torch.cdist(q, ent.weight, p=1)
    top = d.topk(3, largest=False).indices
    hits = (top == t.unsqueeze(1)).any(1).float().mean()
print("hits@3", hits.item(), top.shape, F.normalize(ent.weight, dim=1).norm(dim=1)[:3])
