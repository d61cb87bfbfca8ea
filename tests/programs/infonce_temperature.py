# Contrastive learning with a learnable temperature: a pairwise cosine-similarity matrix from
# F.cosine_similarity with broadcasting, InfoNCE written with torch.logsumexp, the log-temperature clamped in
# place under torch.no_grad(), alignment/uniformity metrics with torch.pdist, and similarity histograms from
# torch.histc and torch.bucketize.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n, d = 24, 8
base = torch.randn(n, d)
view_a = base + 0.1 * torch.randn(n, d)
view_b = base + 0.1 * torch.randn(n, d)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 16), nn.GELU(), nn.Linear(16, 8))
        self.log_temp = nn.Parameter(torch.tensor(0.07).log())

    def forward(self, x):
        return F.normalize(self.net(x), dim=-1)


def info_nce(za, zb, log_temp):
    sim = F.cosine_similarity(za.unsqueeze(1), zb.unsqueeze(0), dim=-1) / log_temp.exp()
    pos = sim.diagonal()
    return (torch.logsumexp(sim, dim=1) - pos).mean(), sim


model = Encoder()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(30):
    za, zb = model(view_a), model(view_b)
    loss_ab, sim = info_nce(za, zb, model.log_temp)
    loss_ba, _ = info_nce(zb, za, model.log_temp)
    loss = (loss_ab + loss_ba) / 2
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        model.log_temp.clamp_(max=torch.tensor(100.0).log().item())
    if step % 10 == 9:
        top1 = (sim.argmax(dim=1) == torch.arange(n)).float().mean()
        print(f"step {step + 1}: loss {loss.item():.4f} temp {model.log_temp.exp().item():.4f} top1 {top1.item():.3f}")

with torch.no_grad():
    za, zb = model(view_a), model(view_b)
    align = (za - zb).norm(dim=1).pow(2).mean()
    uniform = torch.pdist(za, p=2).pow(2).mul(-2).exp().mean().log()
    print(f"alignment {align.item():.4f} uniformity {uniform.item():.4f}")
    sims = F.cosine_similarity(za.unsqueeze(1), za.unsqueeze(0), dim=-1)
    off = sims[~torch.eye(n, dtype=torch.bool)]
    print("histogram:", torch.histc(off, bins=5, min=-1, max=1).tolist())
    edges = torch.tensor([-0.5, 0.0, 0.5])
    print("buckets:", torch.bincount(torch.bucketize(off, edges), minlength=4).tolist())
