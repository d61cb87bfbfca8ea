# Graph-level classification with GraphSAGE-style message passing written by hand: a batch of small graphs
# packed into one edge list, neighbour max and mean aggregation with scatter_reduce and index_add_, a graph
# readout over a batch vector, and BCE-with-logits training.
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_graph(n, dense):
    src = torch.randint(0, n, (3 * n if dense else n,))
    dst = torch.randint(0, n, (3 * n if dense else n,))
    keep = src != dst
    edges = torch.stack([src[keep], dst[keep]])
    return torch.cat([edges, edges.flip(0)], dim=1)


def collate(graphs):
    xs, edge_list, batch, offset = [], [], [], 0
    for i, (x, e) in enumerate(graphs):
        xs.append(x)
        edge_list.append(e + offset)
        batch.append(torch.full((x.size(0),), i, dtype=torch.long))
        offset += x.size(0)
    return torch.cat(xs), torch.cat(edge_list, dim=1), torch.cat(batch)


class SAGELayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.self_lin = nn.Linear(d_in, d_out)
        self.mean_lin = nn.Linear(d_in, d_out, bias=False)
        self.max_lin = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index
        msg = x[src]
        n = x.size(0)
        summed = torch.zeros(n, x.size(1)).index_add_(0, dst, msg)
        deg = torch.zeros(n).index_add_(0, dst, torch.ones(dst.numel())).clamp(min=1)
        mean = summed / deg.unsqueeze(-1)
        mx = torch.zeros(n, x.size(1)).scatter_reduce(0, dst.unsqueeze(-1).expand_as(msg), msg, reduce="amax",
                                                      include_self=False)
        return F.relu(self.self_lin(x) + self.mean_lin(mean) + self.max_lin(mx))


class GraphNet(nn.Module):
    def __init__(self, d_in=4, hidden=16):
        super().__init__()
        self.layers = nn.ModuleList([SAGELayer(d_in, hidden), SAGELayer(hidden, hidden)])
        self.head = nn.Linear(2 * hidden, 1)

    def forward(self, x, edge_index, batch, num_graphs):
        for layer in self.layers:
            x = layer(x, edge_index)
        counts = torch.bincount(batch, minlength=num_graphs).clamp(min=1).unsqueeze(-1)
        mean_pool = torch.zeros(num_graphs, x.size(1)).index_add_(0, batch, x) / counts
        max_pool = torch.zeros(num_graphs, x.size(1)).scatter_reduce(
            0, batch.unsqueeze(-1).expand_as(x), x, reduce="amax", include_self=False)
        return self.head(torch.cat([mean_pool, max_pool], dim=-1)).squeeze(-1)


torch.manual_seed(0)
graphs, labels = [], []
for i in range(24):
    n = 5 + i % 4
    dense = i % 2 == 0
    graphs.append((torch.randn(n, 4), make_graph(n, dense)))
    labels.append(float(dense))
labels = torch.tensor(labels)
x, edge_index, batch = collate(graphs)
print(f"nodes {x.shape[0]}, edges {edge_index.shape[1]}, graphs {int(batch.max()) + 1}")

model = GraphNet()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(40):
    model.train()
    opt.zero_grad()
    logits = model(x, edge_index, batch, len(graphs))
    loss = F.binary_cross_entropy_with_logits(logits, labels)
    loss.backward()
    opt.step()
    if epoch % 10 == 9:
        with torch.no_grad():
            acc = ((logits > 0).float() == labels).float().mean()
        print(f"epoch {epoch + 1}: loss {loss.item():.4f} acc {acc.item():.3f}")
model.eval()
with torch.no_grad():
    probs = torch.sigmoid(model(x, edge_index, batch, len(graphs)))
print("probabilities:", [round(p, 3) for p in probs[:6].tolist()])
