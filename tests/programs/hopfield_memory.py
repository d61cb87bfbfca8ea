# Modern Hopfield networks as associative memory: store binary patterns, retrieve from corrupted queries
# with the update xi <- X softmax(beta X^T xi) (attention as memory retrieval), compare with the classical
# sign-update Hopfield net (outer-product weights with zeroed diagonal, fill_diagonal_), then a learnable
# memory layer trained to recall key -> value associations.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

d, n = 32, 6
patterns = torch.sign(torch.randn(n, d))
patterns[patterns == 0] = 1.0


def corrupt(x, k):
    x = x.clone()
    idx = torch.randperm(d)[:k]
    x[..., idx] *= -1
    return x


# classical Hopfield
W = patterns.T @ patterns / d
W.fill_diagonal_(0.0)
queries = torch.stack([corrupt(p, 5) for p in patterns])
state = queries.clone()
for sweep in range(5):
    state = torch.sign(state @ W)
    state[state == 0] = 1.0
overlap = (state * patterns).sum(1) / d
print("classical overlaps", [round(v, 3) for v in overlap.tolist()])

# modern Hopfield (softmax retrieval)
beta = 8.0
xi = queries.clone()
for step in range(3):
    attn = torch.softmax(beta * xi @ patterns.T / d ** 0.5, dim=-1)
    xi = attn @ patterns
print("modern overlaps", [round(v, 3) for v in ((xi * patterns).sum(1) / d).tolist()])
print(f"max attention per query {attn.max(dim=-1).values.min().item():.4f}")
energy = -torch.logsumexp(beta * queries @ patterns.T / d ** 0.5, dim=-1) / beta + 0.5 * (queries * queries).sum(-1)
print("energies", [round(v, 3) for v in energy.tolist()])


class HopfieldLayer(nn.Module):
    def __init__(self, dim, slots, beta=4.0):
        super().__init__()
        self.keys = nn.Parameter(torch.randn(slots, dim) * 0.1)
        self.values = nn.Parameter(torch.randn(slots, dim) * 0.1)
        self.beta = beta

    def forward(self, q):
        a = F.softmax(self.beta * q @ self.keys.t(), dim=-1)
        return a @ self.values, a


keys = F.normalize(torch.randn(10, 16), dim=-1)
values = torch.randn(10, 16)
layer = HopfieldLayer(16, 10)
opt = torch.optim.Adam(layer.parameters(), lr=0.05)
for epoch in range(60):
    out, a = layer(keys + 0.05 * torch.randn(10, 16))
    loss = F.mse_loss(out, values)
    entropy = -(a * a.clamp_min(1e-9).log()).sum(-1).mean()
    opt.zero_grad()
    (loss + 0.01 * entropy).backward()
    opt.step()
    if epoch % 20 == 0:
        print(f"epoch {epoch} recall mse {loss.item():.4f} attention entropy {entropy.item():.4f}")
with torch.no_grad():
    out, a = layer(keys)
print(f"final recall mse {F.mse_loss(out, values).item():.4f}; slots used {a.argmax(-1).unique().numel()}")
