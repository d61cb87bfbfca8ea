# A graph attention network (GAT) on a synthetic two-community graph, message passing over an edge list the
# way PyG-free code writes it: self-loops added with torch.arange, per-edge attention logits with leaky_relu,
# a softmax over each node's incoming edges via scatter_reduce(reduce="amax", include_self=False) and
# index_add_ of the exponentials, multi-head outputs concatenated then averaged, dropout on attention,
# train/val masks, and accuracy per split; the attention weights are checked to sum to one per node.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N, C = 60, 2
labels = (torch.arange(N) >= N // 2).long()
src, dst = [], []
for i in range(N):
    for j in range(i + 1, N):
        same = labels[i] == labels[j]
        if (same and (i * 7 + j * 3) % 9 == 0) or (not same and (i + j) % 37 == 0):
            src += [i, j]
            dst += [j, i]
edge_index = torch.tensor([src, dst])
loops = torch.arange(N)
edge_index = torch.cat([edge_index, torch.stack([loops, loops])], dim=1)
x = F.one_hot(labels, C).float() @ torch.randn(C, 8) + 1.5 * torch.randn(N, 8)
perm = torch.randperm(N)
train_mask = torch.zeros(N, dtype=torch.bool)
train_mask[perm[:12]] = True
val_mask = ~train_mask
print(f"nodes {N} edges {edge_index.shape[1]} train {int(train_mask.sum())} val {int(val_mask.sum())}")


def edge_softmax(logits, index, n):
    # logits: (E, H); a softmax over the edges that share a destination
    H = logits.shape[1]
    idx = index.unsqueeze(1).expand(-1, H)
    m = torch.full((n, H), float("-inf")).scatter_reduce(0, idx, logits, reduce="amax", include_self=False)
    e = (logits - m[index]).exp()
    denom = torch.zeros(n, H).index_add_(0, index, e)
    return e / denom[index]


class GATLayer(nn.Module):
    def __init__(self, fin, fout, heads, concat=True):
        super().__init__()
        self.heads, self.fout, self.concat = heads, fout, concat
        self.lin = nn.Linear(fin, heads * fout, bias=False)
        self.att_src = nn.Parameter(torch.randn(1, heads, fout) * 0.1)
        self.att_dst = nn.Parameter(torch.randn(1, heads, fout) * 0.1)

    def forward(self, x, edge_index):
        s, d = edge_index
        h = self.lin(x).view(-1, self.heads, self.fout)
        logits = F.leaky_relu((h * self.att_src).sum(-1)[s] + (h * self.att_dst).sum(-1)[d], 0.2)
        alpha = edge_softmax(logits, d, x.shape[0])
        self.last_alpha = alpha
        alpha = F.dropout(alpha, p=0.2, training=self.training)
        out = torch.zeros(x.shape[0], self.heads, self.fout).index_add_(0, d, h[s] * alpha.unsqueeze(-1))
        return out.reshape(x.shape[0], -1) if self.concat else out.mean(1)


class GAT(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = GATLayer(8, 8, heads=4)
        self.l2 = GATLayer(32, C, heads=1, concat=False)

    def forward(self, x, edge_index):
        return self.l2(F.elu(self.l1(x, edge_index)), edge_index)


model = GAT()
opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
for epoch in range(80):
    model.train()
    out = model(x, edge_index)
    loss = F.cross_entropy(out[train_mask], labels[train_mask])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 20 == 19:
        model.eval()
        with torch.no_grad():
            pred = model(x, edge_index).argmax(1)
            tr = (pred[train_mask] == labels[train_mask]).float().mean()
            va = (pred[val_mask] == labels[val_mask]).float().mean()
        print(f"epoch {epoch + 1} loss {loss.item():.4f} train {tr:.3f} val {va:.3f}")

alpha = model.l1.last_alpha
sums = torch.zeros(N, 4).index_add_(0, edge_index[1], alpha)
print(f"attention sums to one: {torch.allclose(sums, torch.ones(N, 4), atol=1e-5)}")
deg = torch.bincount(edge_index[1], minlength=N)
print(f"max in-degree {deg.max().item()} min {deg.min().item()}, self-attention mean {alpha[-N:].mean():.4f}")
