# Matrix factorisation of a ratings matrix with repeated (user, item) pairs: the ratings and their counts summed
# with index_put_(accumulate=True), the observed entries from nonzero(), user/item biases as nn.Embedding, an MSE
# on the observed entries with weight decay only on the factors (parameter groups), and top-k recommendations
# that exclude seen items.
import torch
import torch.nn as nn

torch.manual_seed(0)
n_users, n_items, k = 12, 10, 4
U = torch.randn(n_users, 2)
V = torch.randn(n_items, 2)
full = U @ V.T + 3.0
users = torch.randint(0, n_users, (60,))
items = torch.randint(0, n_items, (60,))
ratings = full[users, items] + 0.1 * torch.randn(60)
R = torch.zeros(n_users, n_items).index_put_((users, items), ratings, accumulate=True)
counts = torch.zeros(n_users, n_items).index_put_((users, items), torch.ones(60), accumulate=True)
observed = counts > 0
print(f"observed entries {int(observed.sum())} of {users.numel()} pairs; most repeated {int(counts.max())}")
# duplicate (user, item) pairs were summed: average them
idx = observed.nonzero().T
vals = (R / counts.clamp(min=1))[observed]
dense_mean = R.sum(dim=1) / counts.sum(dim=1).clamp(min=1)
print("user means:", [round(v, 3) for v in dense_mean[:4].tolist()])
item_profile = counts.t() @ torch.eye(n_users)[:, :3]
print("item profile rows:", item_profile[:3].tolist())


class MF(nn.Module):
    def __init__(self):
        super().__init__()
        self.P = nn.Embedding(n_users, k)
        self.Q = nn.Embedding(n_items, k)
        self.bu = nn.Embedding(n_users, 1)
        self.bi = nn.Embedding(n_items, 1)
        self.mu = nn.Parameter(torch.tensor(vals.mean().item()))
        nn.init.zeros_(self.bu.weight)
        nn.init.zeros_(self.bi.weight)

    def forward(self, u, i):
        return (self.P(u) * self.Q(i)).sum(-1) + self.bu(u).squeeze(-1) + self.bi(i).squeeze(-1) + self.mu


model = MF()
decay = [model.P.weight, model.Q.weight]
rest = [p for n, p in model.named_parameters() if n not in ("P.weight", "Q.weight")]
opt = torch.optim.Adam([{"params": decay, "weight_decay": 1e-3}, {"params": rest, "weight_decay": 0.0}], lr=0.05)
for epoch in range(50):
    pred = model(idx[0], idx[1])
    loss = ((pred - vals) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1}: rmse {loss.sqrt().item():.4f}")

with torch.no_grad():
    scores = model.P.weight @ model.Q.weight.T + model.bu.weight + model.bi.weight.T + model.mu
    seen = observed
    scores = scores.masked_fill(seen, float("-inf"))
    top = scores.topk(3, dim=1)
    print("recommendations for user 0:", top.indices[0].tolist(), [round(v, 3) for v in top.values[0].tolist()])
    print(f"held-out rmse {((scores[~seen] - full[~seen]) ** 2).mean().sqrt().item():.4f}")
