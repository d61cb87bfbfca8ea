# A matrix-factorisation recommender trained with Bayesian personalised ranking: user/item nn.Embedding tables
# with item biases, sampled negatives with torch.randint, F.logsigmoid BPR loss plus L2 on the batch, and
# evaluation that masks seen items with masked_fill(-inf), takes topk, and scores recall@k with torch.isin.
import torch
import torch.nn as nn
import torch.nn.functional as F


class MF(nn.Module):
    def __init__(self, n_users, n_items, dim=8):
        super().__init__()
        self.user = nn.Embedding(n_users, dim)
        self.item = nn.Embedding(n_items, dim)
        self.item_bias = nn.Embedding(n_items, 1)
        nn.init.normal_(self.user.weight, std=0.1)
        nn.init.normal_(self.item.weight, std=0.1)
        nn.init.zeros_(self.item_bias.weight)

    def forward(self, u, i):
        return (self.user(u) * self.item(i)).sum(-1) + self.item_bias(i).squeeze(-1)

    def all_scores(self):
        return self.user.weight @ self.item.weight.T + self.item_bias.weight.T


torch.manual_seed(0)
n_users, n_items = 20, 30
taste = torch.randn(n_users, 3) @ torch.randn(3, n_items)
interactions = taste > 1.0
interactions[torch.arange(n_users), taste.argmax(1)] = True
users, items = interactions.nonzero(as_tuple=True)
held_out = torch.zeros_like(interactions)
held_out[users[::4], items[::4]] = True
train = interactions & ~held_out
tu, ti = train.nonzero(as_tuple=True)
print(f"{len(users)} interactions, {int(train.sum())} train, {int(held_out.sum())} held out")

model = MF(n_users, n_items)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(6):
    perm = torch.randperm(len(tu))
    epoch_loss = 0.0
    for start in range(0, len(tu), 32):
        idx = perm[start:start + 32]
        u, pos = tu[idx], ti[idx]
        neg = torch.randint(0, n_items, (len(idx),))
        diff = model(u, pos) - model(u, neg)
        reg = 1e-4 * (model.user(u).pow(2).sum() + model.item(pos).pow(2).sum() + model.item(neg).pow(2).sum())
        loss = -F.logsigmoid(diff).mean() + reg
        opt.zero_grad()
        loss.backward()
        opt.step()
        epoch_loss += loss.item()
    print(f"epoch {epoch} bpr {epoch_loss:.4f}")

with torch.no_grad():
    scores = model.all_scores().masked_fill(train, float("-inf"))
    top = scores.topk(5, dim=1).indices
recalls = []
for u in range(n_users):
    truth = held_out[u].nonzero().squeeze(1)
    if truth.numel() == 0:
        continue
    hits = torch.isin(top[u], truth).sum().item()
    recalls.append(hits / min(5, truth.numel()))
print(f"recall@5 {sum(recalls) / len(recalls):.4f} over {len(recalls)} users")
print("user 0 top-5", top[0].tolist(), "no seen item recommended:", not train[0, top[0]].any().item())
