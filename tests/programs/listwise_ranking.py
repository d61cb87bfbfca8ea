# Learning to rank: queries with graded relevance labels, a scoring MLP trained with the ListNet loss
# (softmax cross-entropy between label and score distributions over each list), a pairwise RankNet loss
# from all pairs via broadcasting and MarginRankingLoss, and NDCG@k computed with sort/argsort/gather and a
# log2 discount; padded lists handled with a mask and masked_fill(-inf).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
Q, L, D = 32, 10, 6
feats = torch.randn(Q, L, D)
w_true = torch.randn(D)
rel = torch.bucketize(feats @ w_true + 0.3 * torch.randn(Q, L), torch.tensor([-1.0, 0.0, 1.0]))
lengths = torch.randint(6, L + 1, (Q,))
mask = torch.arange(L).unsqueeze(0) < lengths.unsqueeze(1)
rel = rel.masked_fill(~mask, 0).float()
print(f"relevance counts {torch.bincount(rel[mask].long()).tolist()} mean length {lengths.float().mean():.2f}")


def ndcg_at_k(scores, rel, mask, k=5):
    scores = scores.masked_fill(~mask, float("-inf"))
    order = scores.argsort(dim=1, descending=True)
    gains = (2 ** rel.gather(1, order) - 1)[:, :k]
    disc = 1.0 / torch.log2(torch.arange(2, k + 2).float())
    dcg = (gains * disc).sum(1)
    ideal = (2 ** rel.sort(dim=1, descending=True).values - 1)[:, :k]
    idcg = (ideal * disc).sum(1)
    return (dcg / idcg.clamp(min=1e-9)).mean()


def listnet_loss(scores, rel, mask):
    s = scores.masked_fill(~mask, float("-inf"))
    t = rel.masked_fill(~mask, float("-inf"))
    return -(F.softmax(t, dim=1) * F.log_softmax(s, dim=1).masked_fill(~mask, 0)).sum(1).mean()


def ranknet_loss(scores, rel, mask):
    diff = scores.unsqueeze(2) - scores.unsqueeze(1)
    better = (rel.unsqueeze(2) > rel.unsqueeze(1)) & mask.unsqueeze(2) & mask.unsqueeze(1)
    return F.softplus(-diff[better]).mean()


for name in ("listnet", "ranknet"):
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(D, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    with torch.no_grad():
        print(f"{name}: NDCG@5 before {ndcg_at_k(model(feats).squeeze(-1), rel, mask):.4f}")
    for step in range(60):
        scores = model(feats).squeeze(-1)
        loss = listnet_loss(scores, rel, mask) if name == "listnet" else ranknet_loss(scores, rel, mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        scores = model(feats).squeeze(-1)
        print(f"{name}: loss {loss.item():.4f} NDCG@5 after {ndcg_at_k(scores, rel, mask):.4f} "
              f"NDCG@3 {ndcg_at_k(scores, rel, mask, k=3):.4f}")

crit = nn.MarginRankingLoss(margin=0.5)
a, b = scores[:, 0], scores[:, 1]
target = torch.sign(rel[:, 0] - rel[:, 1])
keep = target != 0
print(f"margin ranking loss on first pairs {crit(a[keep], b[keep], target[keep]).item():.4f} over {int(keep.sum())} pairs")
top = scores.masked_fill(~mask, float("-inf")).topk(3, dim=1)
print("top-3 of query 0", top.indices[0].tolist(), "relevance", rel[0, top.indices[0]].long().tolist())
