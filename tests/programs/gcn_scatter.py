# A two-layer graph convolution with message passing written by hand: degree normalisation with
# index_add_/bincount, gather of neighbour features, scatter_add for aggregation; node classification.
import torch
import torch.nn as nn
import torch.nn.functional as F

num_nodes, feat = 12, 6
src = torch.tensor([0, 1, 1, 2, 3, 4, 5, 5, 6, 7, 8, 9, 10, 11, 2, 7])
dst = torch.tensor([1, 0, 2, 1, 4, 3, 6, 7, 5, 5, 9, 8, 11, 10, 3, 8])
loops = torch.arange(num_nodes)
src, dst = torch.cat([src, loops]), torch.cat([dst, loops])
edge_index = torch.stack([src, dst])
print("edges", edge_index.shape, edge_index.dtype)

deg = torch.zeros(num_nodes).index_add_(0, dst, torch.ones(dst.numel()))
assert torch.equal(deg.long(), torch.bincount(dst, minlength=num_nodes))
norm = deg[src].rsqrt() * deg[dst].rsqrt()


class GCNLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out, bias=False)
        self.bias = nn.Parameter(torch.zeros(d_out))

    def forward(self, x, edge_index, norm):
        h = self.lin(x)
        msg = h[edge_index[0]] * norm.unsqueeze(-1)
        out = torch.zeros_like(h).scatter_add_(0, edge_index[1].unsqueeze(-1).expand_as(msg), msg)
        return out + self.bias


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = GCNLayer(feat, 16)
        self.l2 = GCNLayer(16, 3)

    def forward(self, x, ei, norm):
        return self.l2(F.dropout(F.relu(self.l1(x, ei, norm)), p=0.2, training=self.training), ei, norm)


x = torch.randn(num_nodes, feat)
labels = torch.tensor([0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 1, 2])
train_mask = torch.zeros(num_nodes, dtype=torch.bool)
train_mask[::2] = True
model = GCN()
opt = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=5e-4)
for epoch in range(30):
    model.train()
    out = model(x, edge_index, norm)
    loss = F.nll_loss(F.log_softmax(out, dim=1)[train_mask], labels[train_mask])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 10 == 0:
        print(f"epoch {epoch:02d} | loss {loss:.4f}")
model.eval()
pred = model(x, edge_index, norm).argmax(1)
correct = (pred[~train_mask] == labels[~train_mask]).sum()
print(f"test acc: {int(correct) / int((~train_mask).sum()):.3f}")
