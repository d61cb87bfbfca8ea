# Deep Sets on variable-size point sets stored flat with a set-index vector: per-element phi, per-set sum
# and mean pooling with index_add_ and scatter_add_, max pooling with scatter_reduce (amax), rho on the
# pooled vector; trained to predict each set's sum of squares and its max; permutation-invariance checked.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_batch(n_sets):
    sizes = torch.randint(2, 9, (n_sets,))
    set_idx = torch.repeat_interleave(torch.arange(n_sets), sizes)
    x = torch.randn(int(sizes.sum()), 2)
    sq = torch.zeros(n_sets).index_add_(0, set_idx, (x ** 2).sum(1))
    mx = torch.full((n_sets,), -1e9).scatter_reduce(0, set_idx, x[:, 0], reduce="amax")
    return x, set_idx, sizes, torch.stack([sq, mx], dim=1)


class DeepSet(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.rho = nn.Sequential(nn.Linear(3 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, 2))

    def forward(self, x, set_idx, n_sets):
        h = self.phi(x)
        summed = torch.zeros(n_sets, h.size(1)).index_add_(0, set_idx, h)
        counts = torch.zeros(n_sets).scatter_add_(0, set_idx, torch.ones_like(set_idx, dtype=torch.float))
        mean = summed / counts.unsqueeze(1)
        index = set_idx.unsqueeze(1).expand_as(h)
        maxed = torch.full((n_sets, h.size(1)), float("-inf")).scatter_reduce(0, index, h, reduce="amax", include_self=True)
        return self.rho(torch.cat([summed, mean, maxed], dim=1))


model = DeepSet()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[40, 60], gamma=0.3)
for it in range(80):
    x, set_idx, sizes, target = make_batch(16)
    pred = model(x, set_idx, 16)
    loss = F.mse_loss(pred, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if it % 20 == 0:
        print(f"iter {it:2d} loss {loss.item():.4f} sets {len(sizes)} points {len(x)}")

model.eval()
with torch.no_grad():
    x, set_idx, sizes, target = make_batch(6)
    pred = model(x, set_idx, 6)
    perm = torch.randperm(len(x))
    pred_perm = model(x[perm], set_idx[perm], 6)
    print(f"permutation invariant: {torch.allclose(pred, pred_perm, atol=1e-5)}")
    print("pred sumsq", [round(v, 2) for v in pred[:, 0].tolist()])
    print("true sumsq", [round(v, 2) for v in target[:, 0].tolist()])
    one_hot = F.one_hot(set_idx, 6).float()
    print(f"scatter sum == one-hot matmul: {torch.allclose(one_hot.T @ x, torch.zeros(6, 2).index_add(0, set_idx, x), atol=1e-6)}")
    print("counts via bincount", torch.bincount(set_idx, minlength=6).tolist(), "sizes", sizes.tolist())
